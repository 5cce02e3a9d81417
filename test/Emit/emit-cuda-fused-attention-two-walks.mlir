// RUN: zeroc-opt %s --zero-train-pipeline='stage=1 world-size=2 precision=bf16 target=cuda' | zeroc-translate --emit-cuda | FileCheck %s

// Tests the attention gradient's kernels for a head of 128 (B=2, T=8, one
// head, bf16; emit-cuda-fused-attention.mlir has the same attention with
// a head of 16): its key tile and the scores' gradient would not fit in a
// block's shared memory beside the query tiles, so the gradient walks the
// scores twice, the dq kernel (which writes delta) first, then dk and dv,
// with no dq accumulator.
graph.param trainable @w = dense<0.01> : tensor<128x384xf32>
func.func @forward(%x: tensor<2x8x128xf32> {graph.input = "x"}, %t: tensor<2x8x128xf32> {graph.input = "t"}) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<128x384xf32>
  %qkv = graph.matmul %x, %w : tensor<2x8x128xf32>, tensor<128x384xf32> -> tensor<2x8x384xf32>
  %q0 = graph.slice %qkv {starts = [0, 0, 0], ends = [2, 8, 128], steps = [1, 1, 1]} : tensor<2x8x384xf32> -> tensor<2x8x128xf32>
  %k0 = graph.slice %qkv {starts = [0, 0, 128], ends = [2, 8, 256], steps = [1, 1, 1]} : tensor<2x8x384xf32> -> tensor<2x8x128xf32>
  %v0 = graph.slice %qkv {starts = [0, 0, 256], ends = [2, 8, 384], steps = [1, 1, 1]} : tensor<2x8x384xf32> -> tensor<2x8x128xf32>
  %q1 = graph.reshape %q0 : tensor<2x8x128xf32> -> tensor<2x8x1x128xf32>
  %k1 = graph.reshape %k0 : tensor<2x8x128xf32> -> tensor<2x8x1x128xf32>
  %v1 = graph.reshape %v0 : tensor<2x8x128xf32> -> tensor<2x8x1x128xf32>
  %q = graph.transpose %q1 {perm = [0, 2, 1, 3]} : tensor<2x8x1x128xf32> -> tensor<2x1x8x128xf32>
  %k = graph.transpose %k1 {perm = [0, 2, 3, 1]} : tensor<2x8x1x128xf32> -> tensor<2x1x128x8xf32>
  %v = graph.transpose %v1 {perm = [0, 2, 1, 3]} : tensor<2x8x1x128xf32> -> tensor<2x1x8x128xf32>
  %s = graph.matmul %q, %k : tensor<2x1x8x128xf32>, tensor<2x1x128x8xf32> -> tensor<2x1x8x8xf32>
  %c = graph.constant dense<0.25> : tensor<f32>
  %ss = graph.mul %s, %c : tensor<2x1x8x8xf32>, tensor<f32> -> tensor<2x1x8x8xf32>
  %mask = graph.constant dense<[[[[false, true, true, true, true, true, true, true], [false, false, true, true, true, true, true, true], [false, false, false, true, true, true, true, true], [false, false, false, false, true, true, true, true], [false, false, false, false, false, true, true, true], [false, false, false, false, false, false, true, true], [false, false, false, false, false, false, false, true], [false, false, false, false, false, false, false, false]]]]> : tensor<1x1x8x8xi1>
  %ninf = graph.constant dense<0xFF800000> : tensor<f32>
  %sm = graph.where %mask, %ninf, %ss : tensor<1x1x8x8xi1>, tensor<f32>, tensor<2x1x8x8xf32> -> tensor<2x1x8x8xf32>
  %p = graph.softmax %sm {axis = 3 : i64} : tensor<2x1x8x8xf32>
  %o = graph.matmul %p, %v : tensor<2x1x8x8xf32>, tensor<2x1x8x128xf32> -> tensor<2x1x8x128xf32>
  %ot = graph.transpose %o {perm = [0, 2, 1, 3]} : tensor<2x1x8x128xf32> -> tensor<2x8x1x128xf32>
  %or = graph.reshape %ot : tensor<2x8x1x128xf32> -> tensor<2x8x128xf32>
  %y = graph.mul %or, %t : tensor<2x8x128xf32>, tensor<2x8x128xf32> -> tensor<2x8x128xf32>
  %l = graph.reduce_mean %y {axes = [0, 1, 2], keepdims = false} : tensor<2x8x128xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK: // graph.fused_attention_grad: dq and delta
// CHECK-NEXT: ZRT_GLOBAL void [[G:fused[0-9]+]]_q(const zeroc_rt::cuda::BF16 *q, const zeroc_rt::cuda::BF16 *kt, const zeroc_rt::cuda::BF16 *v, const zeroc_rt::cuda::BF16 *o, const zeroc_rt::cuda::BF16 *dout, const float *lse, float *delta, const zeroc_rt::cuda::BF16 *in1, const zeroc_rt::cuda::BF16 *ep1, zeroc_rt::cuda::BF16 *dq) {
// CHECK: z::attentionGradQ<zeroc_rt::cuda::BF16, 128>(z::AttentionShape{2, 1, 8, 8, 1}, z::AttentionDropout{}, z::AttnIn<zeroc_rt::cuda::BF16>{q, z::Strides4{3072, 0, 384, 1}}, z::AttnIn<zeroc_rt::cuda::BF16>{kt, z::Strides4{3072, 0, 384, 1}}, z::AttnIn<zeroc_rt::cuda::BF16>{v, z::Strides4{3072, 0, 384, 1}}, o, z::Strides4{1024, 128, 128, 1}, dout, z::Strides4{1024, 0, 128, 1}, lse, delta, dq, z::Strides4{3072, 128, 384, 1},
// CHECK: // graph.fused_attention_grad: dk and dv
// CHECK-NEXT: ZRT_GLOBAL void [[G]]_kv(const zeroc_rt::cuda::BF16 *q, const zeroc_rt::cuda::BF16 *kt, const zeroc_rt::cuda::BF16 *v, const zeroc_rt::cuda::BF16 *dout, const float *lse, const float *delta, const zeroc_rt::cuda::BF16 *in1, const zeroc_rt::cuda::BF16 *ep1, zeroc_rt::cuda::BF16 *dkt, zeroc_rt::cuda::BF16 *dv) {
// CHECK: z::attentionGradKV<zeroc_rt::cuda::BF16, 128>(z::AttentionShape{2, 1, 8, 8, 1}, z::AttentionDropout{}, z::AttnIn<zeroc_rt::cuda::BF16>{q, z::Strides4{3072, 0, 384, 1}}, z::AttnIn<zeroc_rt::cuda::BF16>{kt, z::Strides4{3072, 0, 384, 1}}, z::AttnIn<zeroc_rt::cuda::BF16>{v, z::Strides4{3072, 0, 384, 1}}, dout, z::Strides4{1024, 0, 128, 1}, lse, delta, dkt, z::Strides4{3072, 128, 384, 1}, dv, z::Strides4{3072, 128, 384, 1},
// CHECK-NOT: attentionGradStoreQ
// CHECK-NOT: zeroc_rt_cuda_kernel_scratch
// CHECK: ZRT_TRY(zeroc_rt_cuda_launch_status((int)zeroc_rt::cuda::launchWarps([[G]]_q, {{.*}}), "[[G]]_q"));
// CHECK-NEXT: ZRT_TRY(zeroc_rt_cuda_launch_status((int)zeroc_rt::cuda::launchWarps([[G]]_kv, {{.*}}), "[[G]]_kv"));
