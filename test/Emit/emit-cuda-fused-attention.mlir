// RUN: zeroc-opt %s --zero-train-pipeline='stage=1 world-size=2 precision=bf16 target=cuda' | FileCheck %s --check-prefix=IR
// RUN: zeroc-opt %s --zero-train-pipeline='stage=1 world-size=2 precision=bf16 target=cuda' | zeroc-translate --emit-cuda | FileCheck %s
// RUN: zeroc-opt %s --zero-train-pipeline='stage=1 world-size=2 precision=bf16 target=cuda fuse-attention=false' | FileCheck %s --check-prefix=OFF
// RUN: zeroc-opt %s --zero-train-pipeline='stage=1 world-size=2 target=cuda' | FileCheck %s --check-prefix=OFF

// Tests the CUDA pipeline's attention in one kernel (zero-fuse-attention)
// and its kernels, on a one-head attention (B=2, T=8, D=16) in bf16: q, k
// and v read from the QKV projection at their strides (k's d and t strides
// swapped from kt's view), the output and the gradients written at the
// strides of the [B, T, H, D] their matmuls stored, the softmax's scale and
// causal mask the prologue and its gradient's the epilogue, each score
// rounded to bf16 as the product's matmul stores it. The mask is a
// constant that drops exactly the keys after each query, so the kernels
// are causal: they mask those keys themselves (the where and its
// gradient's leave the prologue and the epilogue, which read only the
// scale) and skip the tiles above the diagonal. The gradient walks the
// scores once (a head of 16): delta and a zeroed float accumulator of dq
// in the kernels' scratch, dk and dv with dq added into it, then dq
// rounded to bf16 (emit-cuda-fused-attention-two-walks.mlir: heads of
// 128). fuse-attention=false, and f32, keep the matmuls.
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
// IR: %[[O:.*]], %[[LSE:.*]] = graph.fused_attention %{{.*}}, %{{.*}}, %{{.*}} prologue(%{{.*}} : tensor<bf16>) {causal, out_perm = array<i64: 0, 2, 1, 3>, zero.arena_offsets = [{{.*}}]} : (tensor<2x1x8x16xbf16>, tensor<2x1x16x8xbf16>, tensor<2x1x8x16xbf16>) -> (tensor<2x8x1x16xbf16>, tensor<2x1x8xf32>)
// zero-plan-buffers has the gradients of q, k and v written where their
// concat (the gradient of the QKV projection's [2, 8, 48] result) wants
// them, 16 elements apart in its rows, and the concat copies nothing.
// IR: graph.fused_attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %[[O]], %[[LSE]], %{{.*}} prologue(%{{.*}} : tensor<bf16>) epilogue(%{{.*}} : tensor<bf16>) {causal,
// IR-SAME: zero.arena_offsets = [[[C:[0-9]+]], {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}], zero.result_strides = [array<i64: 384, 48, 16, 1>, array<i64: 384, 48, 16, 1>, array<i64: 384, 48, 16, 1>, array<i64>]}
// IR: graph.concat {{.*}} {axis = 2 : i64, zero.arena_offsets = [[[C]]], zero.operands_in_place}
// IR-NOT: graph.matmul
// IR-LABEL: func.func @train_step

// CHECK: // graph.fused_attention: softmax(prologue(q kt)) v, scores [2, 1, 8, 8]
// CHECK-NEXT: ZRT_GLOBAL void [[F:fused[0-9]+]](const zeroc_rt::cuda::BF16 *q, const zeroc_rt::cuda::BF16 *kt, const zeroc_rt::cuda::BF16 *v, const zeroc_rt::cuda::BF16 *in1, zeroc_rt::cuda::BF16 *out, float *lse) {
// CHECK-NEXT: namespace z = zeroc_rt::cuda;
// CHECK-NEXT: using zc = z::Compute<zeroc_rt::cuda::BF16>::type;
// CHECK-NEXT: const zc in1_0 = z::load(in1[0]);
// CHECK-NEXT: z::attentionForward<zeroc_rt::cuda::BF16, 16>(z::AttentionShape{2, 1, 8, 8, 1}, z::AttentionDropout{}, z::AttnIn<zeroc_rt::cuda::BF16>{q, z::Strides4{384, 0, 48, 1}}, z::AttnIn<zeroc_rt::cuda::BF16>{kt, z::Strides4{384, 0, 48, 1}}, z::AttnIn<zeroc_rt::cuda::BF16>{v, z::Strides4{384, 0, 48, 1}}, out, z::Strides4{128, 16, 16, 1}, lse,
// CHECK-NEXT: [&](int64_t i, zc s) -> zc {
// CHECK-NEXT: const zc a0 = z::roundTo<zeroc_rt::cuda::BF16>(s);
// CHECK-NEXT: const zc a1 = in1_0;
// CHECK-NEXT: const zc v0 = z::roundTo<zeroc_rt::cuda::BF16>(z::binaryOf(ZEROC_RT_BINARY_MUL, a0, a1));
// CHECK-NEXT: return v0;
// CHECK-NEXT: });
// CHECK: // graph.fused_attention_grad: delta, and dq's accumulator zeroed
// CHECK-NEXT: ZRT_GLOBAL void [[G:fused[0-9]+]]_delta(const zeroc_rt::cuda::BF16 *o, const zeroc_rt::cuda::BF16 *dout, float *delta, float *dqacc) {
// CHECK: z::attentionGradDelta<zeroc_rt::cuda::BF16, 16>(z::AttentionShape{2, 1, 8, 8, 1}, o, z::Strides4{128, 16, 16, 1}, dout, z::Strides4{128, 0, 16, 1}, delta, dqacc);
// CHECK: // graph.fused_attention_grad: dk and dv, dq added into its accumulator
// CHECK-NEXT: ZRT_GLOBAL void [[G]]_kv(const zeroc_rt::cuda::BF16 *q, const zeroc_rt::cuda::BF16 *kt, const zeroc_rt::cuda::BF16 *v, const zeroc_rt::cuda::BF16 *dout, const float *lse, const float *delta, const zeroc_rt::cuda::BF16 *in1, const zeroc_rt::cuda::BF16 *ep1, zeroc_rt::cuda::BF16 *dkt, zeroc_rt::cuda::BF16 *dv, float *dqacc) {
// CHECK: const zc in1_0 = z::load(in1[0]);
// CHECK-NEXT: const zc ep1_0 = z::load(ep1[0]);
// CHECK-NEXT: z::attentionGradKVQ<zeroc_rt::cuda::BF16, 16>(z::AttentionShape{2, 1, 8, 8, 1}, z::AttentionDropout{}, z::AttnIn<zeroc_rt::cuda::BF16>{q, z::Strides4{384, 0, 48, 1}}, z::AttnIn<zeroc_rt::cuda::BF16>{kt, z::Strides4{384, 0, 48, 1}}, z::AttnIn<zeroc_rt::cuda::BF16>{v, z::Strides4{384, 0, 48, 1}}, dout, z::Strides4{128, 0, 16, 1}, lse, delta, dkt, z::Strides4{384, 16, 48, 1}, dv, z::Strides4{384, 16, 48, 1}, dqacc,
// CHECK: [&](int64_t i, zc g) -> zc {
// CHECK-NEXT: const zc a0 = z::roundTo<zeroc_rt::cuda::BF16>(g);
// CHECK-NEXT: const zc a1 = ep1_0;
// CHECK-NEXT: const zc v0 = z::roundTo<zeroc_rt::cuda::BF16>(z::binaryOf(ZEROC_RT_BINARY_MUL, a0, a1));
// CHECK-NEXT: return v0;
// CHECK: // graph.fused_attention_grad: dq from its accumulator
// CHECK-NEXT: ZRT_GLOBAL void [[G]]_q(const float *dqacc, zeroc_rt::cuda::BF16 *dq) {
// CHECK: z::attentionGradStoreQ<zeroc_rt::cuda::BF16, 16>(z::AttentionShape{2, 1, 8, 8, 1}, dqacc, dq, z::Strides4{384, 16, 48, 1});
// CHECK: ZRT_TRY(zeroc_rt_cuda_launch_status((int)zeroc_rt::cuda::launchWarps([[F]], zeroc_rt::cuda::attentionBlocks(zeroc_rt::cuda::AttentionShape{2, 1, 8, 8, 1}, 8), zeroc_rt::cuda::kAttnThreads, {{.*}}), "[[F]]"));
// CHECK: { float *dqacc = nullptr;
// CHECK-NEXT: ZRT_TRY(zeroc_rt_cuda_kernel_scratch(256ull * sizeof(float), (void **)&dqacc));
// CHECK-NEXT: ZRT_TRY(zeroc_rt_cuda_launch_status((int)zeroc_rt::cuda::launchWarps([[G]]_delta, {{.*}}, dqacc), "[[G]]_delta"));
// CHECK-NEXT: ZRT_TRY(zeroc_rt_cuda_launch_status((int)zeroc_rt::cuda::launchWarps([[G]]_kv, {{.*}}, dqacc), "[[G]]_kv"));
// CHECK-NEXT: ZRT_TRY(zeroc_rt_cuda_launch_status((int)zeroc_rt::cuda::launchWarps([[G]]_q, {{.*}}, dqacc, {{.*}}), "[[G]]_q"));
// CHECK-NEXT: }
// CHECK-NOT: zeroc_rt_k_concat
// CHECK: // graph.concat: its operands were written in place

// OFF-LABEL: func.func @train_micro_step
// OFF-NOT: graph.fused_attention
// OFF: graph.matmul
// OFF-LABEL: func.func @train_step
