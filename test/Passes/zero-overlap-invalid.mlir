// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=3 world-size=2 persistence-threshold=0' --zero-overlap='prefetch-bucket-size=-2' -verify-diagnostics
// RUN: sed 's/got 1000000000 and -2/got 0/; s/max-live-parameters and prefetch-bucket-size must be >= 0,/compute-gflops must be a positive number,/' %s > %t.mlir
// RUN: zeroc-opt %t.mlir --zero-autodiff --zero-partition='stage=3 world-size=2 persistence-threshold=0' --zero-overlap='compute-gflops=0' -verify-diagnostics

// Tests that zero-overlap refuses a negative prefetch bound and a cost
// model constant that is not a positive number.

graph.param trainable @w = dense<0.5> : tensor<3xf32>
// expected-error @below {{zero-overlap: max-live-parameters and prefetch-bucket-size must be >= 0, got 1000000000 and -2}}
func.func @forward(%x: tensor<3xf32>) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<3xf32>
  %y = graph.mul %x, %w : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  %l = graph.reduce_sum %y {axes = [0], keepdims = false} : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
