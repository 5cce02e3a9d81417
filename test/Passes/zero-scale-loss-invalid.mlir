// RUN: zeroc-opt %s -zero-autodiff -zero-scale-loss="grad-accum-steps=0" -verify-diagnostics

// Tests that the number of micro-steps per optimizer step is positive.
// expected-error @below {{zero-scale-loss: grad-accum-steps must be >= 1, got 0}}
module {
  graph.param trainable @w = dense<0.5> : tensor<3xf32>
  func.func @forward(%x: tensor<3xf32>) -> (tensor<f32> {graph.loss}) {
    %w = graph.load_param @w : tensor<3xf32>
    %y = graph.mul %x, %w : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
    %l = graph.reduce_sum %y {axes = [0], keepdims = false} : tensor<3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
