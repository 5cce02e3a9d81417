// RUN: zeroc-opt %s --zero-train-pipeline='stage=1 world-size=2 precision=bf16 target=cuda' | FileCheck %s --check-prefix=IR
// RUN: zeroc-opt %s --zero-train-pipeline='stage=1 world-size=2 precision=bf16 target=cuda' | zeroc-translate --emit-cuda | FileCheck %s
// RUN: zeroc-opt %s --zero-train-pipeline='stage=1 world-size=2 precision=bf16 target=cuda fuse-elementwise=false' | FileCheck %s --check-prefix=OFF

// Tests zero-fuse-attention-bias in the CUDA pipeline: emit-cuda-fused-attention.mlir's
// attention with a bias on its QKV projection. The add goes; the attention
// and its gradient read q, k and v from the product and add the bias,
// viewed with strides 0 along batch and time, as they load (AttnIn's
// addends qb, ktb and vb). Without elementwise fusion nothing is fused.
graph.param trainable @w = dense<0.01> : tensor<16x48xf32>
graph.param trainable @b = dense<0.5> : tensor<48xf32>
func.func @forward(%x: tensor<2x8x16xf32> {graph.input = "x"}, %t: tensor<2x8x16xf32> {graph.input = "t"}) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<16x48xf32>
  %b = graph.load_param @b : tensor<48xf32>
  %xw = graph.matmul %x, %w : tensor<2x8x16xf32>, tensor<16x48xf32> -> tensor<2x8x48xf32>
  %qkv = graph.add %xw, %b : tensor<2x8x48xf32>, tensor<48xf32> -> tensor<2x8x48xf32>
  %q0 = graph.slice %qkv {starts = [0, 0, 0], ends = [2, 8, 16], steps = [1, 1, 1]} : tensor<2x8x48xf32> -> tensor<2x8x16xf32>
  %k0 = graph.slice %qkv {starts = [0, 0, 16], ends = [2, 8, 32], steps = [1, 1, 1]} : tensor<2x8x48xf32> -> tensor<2x8x16xf32>
  %v0 = graph.slice %qkv {starts = [0, 0, 32], ends = [2, 8, 48], steps = [1, 1, 1]} : tensor<2x8x48xf32> -> tensor<2x8x16xf32>
  %q1 = graph.reshape %q0 : tensor<2x8x16xf32> -> tensor<2x8x1x16xf32>
  %k1 = graph.reshape %k0 : tensor<2x8x16xf32> -> tensor<2x8x1x16xf32>
  %v1 = graph.reshape %v0 : tensor<2x8x16xf32> -> tensor<2x8x1x16xf32>
  %q = graph.transpose %q1 {perm = [0, 2, 1, 3]} : tensor<2x8x1x16xf32> -> tensor<2x1x8x16xf32>
  %k = graph.transpose %k1 {perm = [0, 2, 3, 1]} : tensor<2x8x1x16xf32> -> tensor<2x1x16x8xf32>
  %v = graph.transpose %v1 {perm = [0, 2, 1, 3]} : tensor<2x8x1x16xf32> -> tensor<2x1x8x16xf32>
  %s = graph.matmul %q, %k : tensor<2x1x8x16xf32>, tensor<2x1x16x8xf32> -> tensor<2x1x8x8xf32>
  %c = graph.constant dense<0.25> : tensor<f32>
  %ss = graph.mul %s, %c : tensor<2x1x8x8xf32>, tensor<f32> -> tensor<2x1x8x8xf32>
  %mask = graph.constant dense<[[[[false, true, true, true, true, true, true, true], [false, false, true, true, true, true, true, true], [false, false, false, true, true, true, true, true], [false, false, false, false, true, true, true, true], [false, false, false, false, false, true, true, true], [false, false, false, false, false, false, true, true], [false, false, false, false, false, false, false, true], [false, false, false, false, false, false, false, false]]]]> : tensor<1x1x8x8xi1>
  %ninf = graph.constant dense<0xFF800000> : tensor<f32>
  %sm = graph.where %mask, %ninf, %ss : tensor<1x1x8x8xi1>, tensor<f32>, tensor<2x1x8x8xf32> -> tensor<2x1x8x8xf32>
  %p = graph.softmax %sm {axis = 3 : i64} : tensor<2x1x8x8xf32>
  %o = graph.matmul %p, %v : tensor<2x1x8x8xf32>, tensor<2x1x8x16xf32> -> tensor<2x1x8x16xf32>
  %ot = graph.transpose %o {perm = [0, 2, 1, 3]} : tensor<2x1x8x16xf32> -> tensor<2x8x1x16xf32>
  %or = graph.reshape %ot : tensor<2x8x1x16xf32> -> tensor<2x8x16xf32>
  %y = graph.mul %or, %t : tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  %l = graph.reduce_mean %y {axes = [0, 1, 2], keepdims = false} : tensor<2x8x16xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// IR-LABEL: func.func @train_micro_step
// IR-NOT: graph.add {{.*}} -> tensor<2x8x48xbf16>
// IR: %[[QB:.*]] = graph.strided_view %{{.*}} {offset = 0 : i64, strides = array<i64: 0, 0, 0, 1>} : tensor<48xbf16> -> tensor<2x1x8x16xbf16>
// IR: graph.fused_attention %{{.*}}, %{{.*}}, %{{.*}} q_bias(%[[QB]] : tensor<2x1x8x16xbf16>) kt_bias(%{{.*}} : tensor<2x1x16x8xbf16>) v_bias(%{{.*}} : tensor<2x1x8x16xbf16>)
// IR: graph.fused_attention_grad {{.*}} q_bias(%[[QB]] : tensor<2x1x8x16xbf16>) kt_bias(%{{.*}} : tensor<2x1x16x8xbf16>) v_bias(%{{.*}} : tensor<2x1x8x16xbf16>)
// IR-LABEL: func.func @train_step

// CHECK: ZRT_GLOBAL void [[F:fused[0-9]+]](const zeroc_rt::cuda::BF16 *q, const zeroc_rt::cuda::BF16 *kt, const zeroc_rt::cuda::BF16 *v, const zeroc_rt::cuda::BF16 *qb, const zeroc_rt::cuda::BF16 *ktb, const zeroc_rt::cuda::BF16 *vb, const zeroc_rt::cuda::BF16 *in1,
// CHECK: z::attentionForward<zeroc_rt::cuda::BF16, 16>(z::AttentionShape{2, 1, 8, 8, 1}, z::AttentionDropout{}, z::AttnIn<zeroc_rt::cuda::BF16>{q, z::Strides4{384, 0, 48, 1}, qb, z::Strides4{0, 0, 0, 1}}, z::AttnIn<zeroc_rt::cuda::BF16>{kt, z::Strides4{384, 0, 48, 1}, ktb, z::Strides4{0, 0, 0, 1}}, z::AttnIn<zeroc_rt::cuda::BF16>{v, z::Strides4{384, 0, 48, 1}, vb, z::Strides4{0, 0, 0, 1}}, out,
// CHECK: ZRT_GLOBAL void [[G:fused[0-9]+]]_kv(const zeroc_rt::cuda::BF16 *q, const zeroc_rt::cuda::BF16 *kt, const zeroc_rt::cuda::BF16 *v, const zeroc_rt::cuda::BF16 *dout, const float *lse, const float *delta, const zeroc_rt::cuda::BF16 *qb, const zeroc_rt::cuda::BF16 *ktb, const zeroc_rt::cuda::BF16 *vb, const zeroc_rt::cuda::BF16 *in1,
// CHECK: z::attentionGradKVQ<zeroc_rt::cuda::BF16, 16>({{.*}}z::AttnIn<zeroc_rt::cuda::BF16>{q, z::Strides4{384, 0, 48, 1}, qb, z::Strides4{0, 0, 0, 1}}, z::AttnIn<zeroc_rt::cuda::BF16>{kt, z::Strides4{384, 0, 48, 1}, ktb, z::Strides4{0, 0, 0, 1}}, z::AttnIn<zeroc_rt::cuda::BF16>{v, z::Strides4{384, 0, 48, 1}, vb, z::Strides4{0, 0, 0, 1}}
// The launches pass q, kt, v, then their biases, in the kernels' order.
// CHECK: launchWarps([[F]], {{.*}}, zeroc_rt::cuda::kAttnThreads, (const zeroc_rt::cuda::BF16 *)(V[[[Q:[0-9]+]]]), (const zeroc_rt::cuda::BF16 *)(V[[[K:[0-9]+]]]), (const zeroc_rt::cuda::BF16 *)(V[[[V:[0-9]+]]]), (const zeroc_rt::cuda::BF16 *)(V[[[QB:[0-9]+]]]), (const zeroc_rt::cuda::BF16 *)(V[[[KB:[0-9]+]]]), (const zeroc_rt::cuda::BF16 *)(V[[[VB:[0-9]+]]]),
// CHECK: launchWarps([[G]]_kv, {{.*}}, zeroc_rt::cuda::kAttnThreads, (const zeroc_rt::cuda::BF16 *)(V[[[Q]]]), {{.*}}, (const zeroc_rt::cuda::BF16 *)(V[[[QB]]]), (const zeroc_rt::cuda::BF16 *)(V[[[KB]]]), (const zeroc_rt::cuda::BF16 *)(V[[[VB]]]),

// OFF-LABEL: func.func @train_micro_step
// OFF-NOT: q_bias
// OFF: graph.add
// OFF-LABEL: func.func @train_step
