// RUN: zeroc-opt %s --zero-train-pipeline='stage=0 world-size=1' | zeroc-translate --emit-cpu | FileCheck %s
// RUN: zeroc-opt %s --zero-train-pipeline='stage=0 world-size=1 target=cuda' | zeroc-translate --emit-cuda | FileCheck %s --check-prefix=CUDA
// RUN: zeroc-opt %s --zero-train-pipeline='stage=0 world-size=1 target=cuda fuse-elementwise=false' | zeroc-translate --emit-cuda | FileCheck %s --check-prefix=UNFUSED

// Tests that a cross-entropy's ignore_index (PyTorch's -100) is printed as
// a signed C++ integer of its value: the attribute reads back unsigned,
// whose digits, 2^64 - 100, fit no long long. On the CUDA target the loss
// and its gradient are one call (zero-fuse-cross-entropy), two without the
// fusion passes.
graph.param trainable @w = dense<0.5> : tensor<4x5xf32>
func.func @forward(%x: tensor<2x4xf32> {graph.input = "x"}, %t: tensor<2xi64> {graph.input = "t"}) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<4x5xf32>
  %y = graph.matmul %x, %w : tensor<2x4xf32>, tensor<4x5xf32> -> tensor<2x5xf32>
  %l = graph.softmax_cross_entropy_loss %y, %t {reduction = "mean", ignore_index = -100 : i64} : tensor<2x5xf32>, tensor<2xi64> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK: zeroc_rt_k_softmax_cross_entropy({{.*}}, ZEROC_RT_LOSS_MEAN, 1, (-100ll), P(T(
// CHECK: zeroc_rt_k_softmax_cross_entropy_grad({{.*}}, ZEROC_RT_LOSS_MEAN, 1, (-100ll), P(T(
// CHECK-NOT: 18446744073709551516
// CUDA: zeroc_rt_cuda_k_softmax_cross_entropy_with_grad({{.*}}, ZEROC_RT_LOSS_MEAN, 1, (-100ll), P(T({{.*}}), P(T({{.*}}), P(T(
// CUDA-NOT: zeroc_rt_cuda_k_softmax_cross_entropy_grad(
// UNFUSED: zeroc_rt_cuda_k_softmax_cross_entropy({{.*}}, ZEROC_RT_LOSS_MEAN, 1, (-100ll), P(T(
// UNFUSED: zeroc_rt_cuda_k_softmax_cross_entropy_grad({{.*}}, ZEROC_RT_LOSS_MEAN, 1, (-100ll), P(T(
