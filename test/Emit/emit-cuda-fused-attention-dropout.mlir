// RUN: zeroc-opt %s --zero-train-pipeline='stage=1 world-size=2 precision=bf16 target=cuda' | FileCheck %s --check-prefix=IR
// RUN: zeroc-opt %s --zero-train-pipeline='stage=1 world-size=2 precision=bf16 target=cuda' | zeroc-translate --emit-cuda | FileCheck %s

// Tests an attention with a dropout on its probabilities (GPT-2's
// attn_pdrop) in one kernel: zero-fuse-attention takes the dropout after
// the softmax and, in the backward pass, the same dropout (its seed) of
// the probabilities' gradient into the fused ops; each kernel takes the
// mask's key as a parameter, made at the launch from the seed and the
// micro-step's dropout counter as a dropout call makes it, and passes the
// ratio to the templates.
graph.param trainable @w = dense<0.01> : tensor<16x48xf32>
func.func @forward(%x: tensor<2x8x16xf32> {graph.input = "x"}, %t: tensor<2x8x16xf32> {graph.input = "t"}) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<16x48xf32>
  %qkv = graph.matmul %x, %w : tensor<2x8x16xf32>, tensor<16x48xf32> -> tensor<2x8x48xf32>
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
  %p = graph.softmax %ss {axis = 3 : i64} : tensor<2x1x8x8xf32>
  %pd = graph.dropout %p {ratio = 0.1 : f64, seed = 5 : i64, training = true} : tensor<2x1x8x8xf32>
  %o = graph.matmul %pd, %v : tensor<2x1x8x8xf32>, tensor<2x1x8x16xf32> -> tensor<2x1x8x16xf32>
  %ot = graph.transpose %o {perm = [0, 2, 1, 3]} : tensor<2x1x8x16xf32> -> tensor<2x8x1x16xf32>
  %or = graph.reshape %ot : tensor<2x8x1x16xf32> -> tensor<2x8x16xf32>
  %y = graph.mul %or, %t : tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<2x8x16xf32>
  %l = graph.reduce_mean %y {axes = [0, 1, 2], keepdims = false} : tensor<2x8x16xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// IR-LABEL: func.func @train_micro_step
// IR-NOT: graph.dropout
// IR: %[[O:.*]], %[[LSE:.*]] = graph.fused_attention %{{.*}}, %{{.*}}, %{{.*}} prologue(%{{.*}} : tensor<bf16>) {dropout_ratio = 1.000000e-01 : f64, dropout_seed = [[SEED:[0-9]+]] : i64,
// IR-NOT: graph.dropout
// IR: graph.fused_attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %[[O]], %[[LSE]], %{{.*}} prologue(%{{.*}} : tensor<bf16>) epilogue(%{{.*}} : tensor<bf16>) {dropout_ratio = 1.000000e-01 : f64, dropout_seed = [[SEED]] : i64,
// IR-NOT: graph.dropout
// IR-LABEL: func.func @train_step

// CHECK: // graph.fused_attention: softmax(prologue(q kt)) v, scores [2, 1, 8, 8]
// CHECK-NEXT: ZRT_GLOBAL void [[F:fused[0-9]+]](const zeroc_rt::cuda::BF16 *q, const zeroc_rt::cuda::BF16 *kt, const zeroc_rt::cuda::BF16 *v, const zeroc_rt::cuda::BF16 *in1, uint64_t dropKey, zeroc_rt::cuda::BF16 *out, float *lse) {
// CHECK: z::attentionForward<zeroc_rt::cuda::BF16, 16>(z::AttentionShape{2, 1, 8, 8, 0}, z::AttentionDropout{0.10000000000000001, dropKey}, z::AttnIn<zeroc_rt::cuda::BF16>{q,
// CHECK: ZRT_GLOBAL void [[G:fused[0-9]+]]_kv({{.*}}, const zeroc_rt::cuda::BF16 *ep1, uint64_t dropKey, zeroc_rt::cuda::BF16 *dkt, zeroc_rt::cuda::BF16 *dv, float *dqacc) {
// CHECK: z::attentionGradKVQ<zeroc_rt::cuda::BF16, 16>(z::AttentionShape{2, 1, 8, 8, 0}, z::AttentionDropout{0.10000000000000001, dropKey}, z::AttnIn<zeroc_rt::cuda::BF16>{q,
// CHECK: launchWarps([[F]], {{.*}}, (const zeroc_rt::cuda::BF16 *)(V[{{[0-9]+}}]), zeroc_rt::cuda::dropoutKey([[SEED:[0-9]+]]ull, zeroc_rt_engine_dropout_counter(e)), (zeroc_rt::cuda::BF16 *)(V[{{[0-9]+}}]), (float *)(V[{{[0-9]+}}])), "[[F]]"));
// CHECK: launchWarps([[G]]_kv, {{.*}}, zeroc_rt::cuda::dropoutKey([[SEED]]ull, zeroc_rt_engine_dropout_counter(e)), (zeroc_rt::cuda::BF16 *)(V[{{[0-9]+}}]), (zeroc_rt::cuda::BF16 *)(V[{{[0-9]+}}]), dqacc), "[[G]]_kv"));
