// RUN: zeroc-opt %s --zero-train-pipeline='stage=1 world-size=2 target=cuda' | FileCheck %s --check-prefix=IR
// RUN: zeroc-opt %s --zero-train-pipeline='stage=1 world-size=2 target=cuda' | zeroc-translate --emit-cuda | FileCheck %s
// RUN: zeroc-opt %s --zero-train-pipeline='stage=1 world-size=2 precision=bf16 target=cuda' | zeroc-translate --emit-cuda | FileCheck %s --check-prefix=BF16
// RUN: zeroc-opt %s --zero-train-pipeline='stage=1 world-size=2 target=cuda fuse-elementwise=false' | FileCheck %s --check-prefix=OFF

// Tests the CUDA pipeline's softmax fusion (zero-fuse-softmax) and its
// kernels, on a softmax along the first axis (rows at a stride): the
// scaling before the softmax is its prologue, the scaling of the softmax's
// gradient after softmax_grad its epilogue. Each prints as a kernel of the
// program's own that runs zeroc_rt_cuda/rows.h's softmax rows over the
// static rows (6 rows of 2 elements at stride 6) with the chain in its
// element reads or writes, every value rounded to the storage type; the
// gradient is rounded as softmax_grad stores it before the epilogue reads
// it. fuse-elementwise=false keeps one op per kernel.
graph.param trainable @w = dense<0.5> : tensor<4x6xf32>
func.func @forward(%x: tensor<2x4xf32> {graph.input = "x"}, %t: tensor<2x6xf32> {graph.input = "t"}) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<4x6xf32>
  %k = graph.constant dense<0.125> : tensor<f32>
  %y = graph.matmul %x, %w : tensor<2x4xf32>, tensor<4x6xf32> -> tensor<2x6xf32>
  %s = graph.mul %y, %k : tensor<2x6xf32>, tensor<f32> -> tensor<2x6xf32>
  %p = graph.softmax %s {axis = 0 : i64} : tensor<2x6xf32>
  %q = graph.mul %p, %t : tensor<2x6xf32>, tensor<2x6xf32> -> tensor<2x6xf32>
  %l = graph.reduce_mean %q {axes = [0, 1], keepdims = false} : tensor<2x6xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// IR-LABEL: func.func @train_micro_step
// IR: %[[P:.*]] = graph.fused_softmax %{{.*}}, %{{.*}} {axis = 0 : i64, log = false, zero.arena_offsets = [{{.*}}]} : (tensor<2x6xf32>, tensor<f32>) -> tensor<2x6xf32> {
// IR-NEXT: ^bb0
// IR-NEXT: graph.mul
// IR-NEXT: graph.yield
// IR: graph.fused_softmax_grad %[[P]], %{{.*}} epilogue(%{{.*}} : tensor<f32>) {axis = 0 : i64, log = false, zero.arena_offsets = [{{.*}}]} : tensor<2x6xf32> {
// IR-NEXT: ^bb0
// IR-NEXT: graph.mul
// IR-NEXT: graph.yield
// IR-LABEL: func.func @train_step

// CHECK: // graph.fused_softmax: a softmax with an elementwise prologue
// CHECK-NEXT: ZRT_GLOBAL void [[K:fused[0-9]+]](const float *in0, const float *in1, float *out) {
// CHECK-NEXT: namespace z = zeroc_rt::cuda;
// CHECK-NEXT: using zc = z::Compute<float>::type;
// CHECK-NEXT: const zc in1_0 = z::load(in1[0]);
// CHECK-NEXT: z::softmaxRows<zc>(z::Rows{6, 2, 6}, 0,
// CHECK-NEXT: [&](int64_t i) -> zc {
// CHECK-NEXT: const zc a0 = z::load(in0[i]);
// CHECK-NEXT: const zc a1 = in1_0;
// CHECK-NEXT: const zc v0 = z::roundTo<float>(z::binaryOf(ZEROC_RT_BINARY_MUL, a0, a1));
// CHECK-NEXT: return v0;
// CHECK-NEXT: },
// CHECK-NEXT: [&](int64_t i, zc v) { out[i] = z::storeD<float>(v); });
// CHECK-NEXT: }
// CHECK: // graph.fused_softmax_grad: a softmax gradient with an elementwise epilogue
// CHECK-NEXT: ZRT_GLOBAL void [[G:fused[0-9]+]](const float *y, const float *gy, const float *in1, float *out) {
// CHECK: const zc in1_0 = z::load(in1[0]);
// CHECK-NEXT: z::softmaxGradRows<zc>(z::Rows{6, 2, 6}, 0,
// CHECK-NEXT: [&](int64_t i) -> zc { return z::load(y[i]); },
// CHECK-NEXT: [&](int64_t i) -> zc { return z::load(gy[i]); },
// CHECK-NEXT: [&](int64_t i, zc gx) {
// CHECK-NEXT: const zc a0 = z::roundTo<float>(gx);
// CHECK-NEXT: const zc a1 = in1_0;
// CHECK-NEXT: const zc v0 = z::roundTo<float>(z::binaryOf(ZEROC_RT_BINARY_MUL, a0, a1));
// CHECK-NEXT: out[i] = z::storeD<float>(v0);
// CHECK-NEXT: });
// CHECK: ZRT_TRY(zeroc_rt_cuda_launch_status((int)zeroc_rt::cuda::launch([[K]], zeroc_rt::cuda::rowBlocks(6), zeroc_rt::cuda::kBlock, (const float *)({{.*}}), (const float *)({{.*}}), (float *)({{.*}})), "[[K]]"));
// CHECK: ZRT_TRY(zeroc_rt_cuda_launch_status((int)zeroc_rt::cuda::launch([[G]], zeroc_rt::cuda::rowBlocks(6), zeroc_rt::cuda::kBlock, (const float *)({{.*}}), (const float *)({{.*}}), (const float *)({{.*}}), (float *)({{.*}})), "[[G]]"));

// BF16: ZRT_GLOBAL void fused{{[0-9]+}}(const zeroc_rt::cuda::BF16 *in0, const zeroc_rt::cuda::BF16 *in1, zeroc_rt::cuda::BF16 *out) {
// BF16: const zc v0 = z::roundTo<zeroc_rt::cuda::BF16>(z::binaryOf(ZEROC_RT_BINARY_MUL, a0, a1));
// BF16: [&](int64_t i, zc v) { out[i] = z::storeD<zeroc_rt::cuda::BF16>(v); });
// BF16: const zc a0 = z::roundTo<zeroc_rt::cuda::BF16>(gx);

// OFF-LABEL: func.func @train_micro_step
// OFF-NOT: graph.fused
// OFF: graph.softmax
// OFF: graph.softmax_grad
// OFF-LABEL: func.func @train_step
