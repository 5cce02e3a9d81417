// RUN: zeroc-opt %s --zero-train-pipeline='stage=0 world-size=1 target=cuda' | FileCheck %s --check-prefix=IR
// RUN: zeroc-opt %s --zero-train-pipeline='stage=0 world-size=1 target=cuda' | zeroc-translate --emit-cuda | FileCheck %s
// RUN: zeroc-opt %s --zero-train-pipeline='stage=0 world-size=1' | FileCheck %s --check-prefix=CPU
// RUN: zeroc-opt %s --zero-train-pipeline='stage=0 world-size=1 target=cuda' | not zeroc-translate --emit-cpu 2>&1 | FileCheck %s --check-prefix=CPU-EMIT
// RUN: zeroc-opt %s --zero-train-pipeline='stage=0 world-size=1 target=cuda' | sed 's/{transB = true, zero.arena_offsets = \[0\], zero.result_strides/{alpha = 2.0 : f64, transB = true, zero.arena_offsets = [0], zero.result_strides/' | not zeroc-translate --emit-cuda 2>&1 | FileCheck %s --check-prefix=SCALED
// RUN: zeroc-opt %s --zero-train-pipeline='stage=0 world-size=1 target=cuda' | sed 's/array<i64>, array<i64: 64, 1>/array<i64>, array<i64: 72, 1>/' | not zeroc-translate --emit-cuda 2>&1 | FileCheck %s --check-prefix=TWO-PITCHES

// Tests a head's scores stored at a row pitch in the CUDA pipeline
// (zero-plan-buffers' row-pitch-alignment, 16 bytes there): rows of 61 f32
// (244 bytes) are 64 elements apart. The head's GEMM writes them at that
// leading dimension, the loss and its gradient (one fused call) read and
// write them at that pitch, and the weight's gradient GEMM reads the
// gradient at it. The CPU pipeline keeps the rows dense, and the CPU
// emitter refuses padded rows (its runtime's GEMMs read dense tensors).
graph.param trainable @w = dense<0.25> : tensor<61x16xf32>
func.func @forward(%x: tensor<8x16xf32> {graph.input = "x"}, %t: tensor<8xi64> {graph.input = "t"}) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<61x16xf32>
  %s = graph.gemm %x, %w {transB = true} : (tensor<8x16xf32>, tensor<61x16xf32>) -> tensor<8x61xf32>
  %l = graph.softmax_cross_entropy_loss %s, %t {reduction = "mean"} : tensor<8x61xf32>, tensor<8xi64> -> tensor<f32>
  return %l : tensor<f32>
}

// IR-LABEL: func.func @train_micro_step
// IR: graph.gemm {{.*}} {transB = true, zero.arena_offsets = [0], zero.result_strides = [array<i64: 64, 1>]}
// IR: graph.fused_softmax_cross_entropy {{.*}} zero.result_strides = [array<i64>, array<i64: 64, 1>]
// IR: graph.gemm %grad_scores

// CHECK-LABEL: part0(
// CHECK: { static const int64_t out_strides[] = {64, 1};
// CHECK-NEXT: ZRT_TRY(zeroc_rt_cuda_k_matmul_strided(P(T({{.*}}, ZEROC_RT_DTYPE_F32, 2, {8, 16})), nullptr, P(T({{.*}}, ZEROC_RT_DTYPE_F32, 2, {61, 16})), nullptr, 0, 1, P(T(V{{\[}}[[S:[0-9]+]]{{\]}}, ZEROC_RT_DTYPE_F32, 2, {8, 61})), out_strides));
// CHECK: ZRT_TRY(zeroc_rt_cuda_k_softmax_cross_entropy_pitched(P(T(V{{\[}}[[S]]{{\]}}, ZEROC_RT_DTYPE_F32, 2, {8, 61})), {{.*}}, ZEROC_RT_LOSS_MEAN, 0, 0ll, {{.*}}, P(T(V{{\[}}[[G:[0-9]+]]{{\]}}, ZEROC_RT_DTYPE_F32, 2, {8, 61})), 64ll));
// CHECK: { static const int64_t lhs_strides[] = {64, 1};
// CHECK-NEXT: ZRT_TRY(zeroc_rt_cuda_k_matmul_strided(P(T(V{{\[}}[[G]]{{\]}}, ZEROC_RT_DTYPE_F32, 2, {8, 61})), lhs_strides, {{.*}}, nullptr, 1, 0, P(T({{.*}}, ZEROC_RT_DTYPE_F32, 2, {61, 16})), nullptr));

// CPU-LABEL: func.func @train_micro_step
// CPU-NOT: zero.result_strides

// CPU-EMIT: error: 'graph.gemm' op is not supported by the CPU target yet: its runtime has no matmul_strided kernel

// Prepared IR that zero-plan-buffers would not write is refused: a padded
// GEMM that scales its product, and a loss whose scores and gradient have
// rows at two pitches.
// SCALED: error: 'graph.gemm' op reads or writes rows at a pitch but scales or adds to its product (zero-plan-buffers pads only plain products)
// TWO-PITCHES: error: 'graph.fused_softmax_cross_entropy' op has scores and a gradient stored at different strides; only one row pitch for both is supported
