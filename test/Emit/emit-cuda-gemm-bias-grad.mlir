// RUN: zeroc-opt %s --zero-train-pipeline='stage=0 world-size=1 target=cuda' | FileCheck %s --check-prefix=IR
// RUN: zeroc-opt %s --zero-train-pipeline='stage=0 world-size=1 target=cuda' | zeroc-translate --emit-cuda | FileCheck %s
// RUN: zeroc-opt %s --zero-train-pipeline='stage=0 world-size=1 target=cuda fuse-elementwise=false' | zeroc-translate --emit-cuda | FileCheck %s --check-prefix=UNFUSED
// RUN: zeroc-opt %s --zero-train-pipeline='stage=0 world-size=1 target=cuda' | not zeroc-translate --emit-cpu 2>&1 | FileCheck %s --check-prefix=CPU

// Tests two linear layers, y = (x w1^T + b1) w2^T + b2 over a [2, 4]
// batch of sequences, on the CUDA target: each bias gradient is summed by
// its weight gradient's GEMM, one call with two results
// (zero-fold-gemm-bias-grad), and no sum_to is left; without the fusion
// passes the two are calls of their own. The CPU runtime has no such
// kernel, and its emitter says so.
graph.param trainable @w1 = dense<0.25> : tensor<6x5xf32>
graph.param trainable @b1 = dense<0.5> : tensor<6xf32>
graph.param trainable @w2 = dense<0.125> : tensor<3x6xf32>
graph.param trainable @b2 = dense<0.0> : tensor<3xf32>
func.func @forward(%x: tensor<2x4x5xf32> {graph.input = "x"}) -> (tensor<f32> {graph.loss}) {
  %w1 = graph.load_param @w1 : tensor<6x5xf32>
  %b1 = graph.load_param @b1 : tensor<6xf32>
  %w2 = graph.load_param @w2 : tensor<3x6xf32>
  %b2 = graph.load_param @b2 : tensor<3xf32>
  %t1 = graph.transpose %w1 {perm = [1, 0]} : tensor<6x5xf32> -> tensor<5x6xf32>
  %m1 = graph.matmul %x, %t1 : tensor<2x4x5xf32>, tensor<5x6xf32> -> tensor<2x4x6xf32>
  %h = graph.add %m1, %b1 : tensor<2x4x6xf32>, tensor<6xf32> -> tensor<2x4x6xf32>
  %t2 = graph.transpose %w2 {perm = [1, 0]} : tensor<3x6xf32> -> tensor<6x3xf32>
  %m2 = graph.matmul %h, %t2 : tensor<2x4x6xf32>, tensor<6x3xf32> -> tensor<2x4x3xf32>
  %y = graph.add %m2, %b2 : tensor<2x4x3xf32>, tensor<3xf32> -> tensor<2x4x3xf32>
  %l = graph.reduce_mean %y {axes = [0, 1, 2], keepdims = false} : tensor<2x4x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// IR-LABEL: func.func @train_micro_step
// IR-COUNT-2: graph.fused_gemm_bias_grad
// IR-NOT: graph.sum_to
// IR-LABEL: func.func @train_step

// CHECK-COUNT-2: ZRT_TRY(zeroc_rt_cuda_k_gemm_bias_grad(
// CHECK-NOT: zeroc_rt_cuda_k_sum_to(
// UNFUSED: ZRT_TRY(zeroc_rt_cuda_k_sum_to(
// UNFUSED-NOT: gemm_bias_grad
// CPU: error: 'graph.fused_gemm_bias_grad' op is not supported by the CPU target yet: its runtime has no gemm_bias_grad kernel
