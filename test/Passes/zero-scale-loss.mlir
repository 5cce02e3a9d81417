// RUN: zeroc-opt %s -split-input-file -zero-autodiff -zero-scale-loss -verify-diagnostics | FileCheck %s

// Tests that the reverse sweep is seeded with the loss scale instead of 1,
// so every gradient is scaled (DeepSpeed's backward(loss * scale)).
graph.param trainable @w = dense<0.5> : tensor<3xf32>
func.func @forward(%x: tensor<3xf32>) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<3xf32>
  %y = graph.mul %x, %w : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  %l = graph.reduce_sum %y {axes = [0], keepdims = false} : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[S:.*]] = zero.loss_scale : tensor<f32>
// CHECK-NOT: graph.loss_seed
// CHECK: graph.reshape %[[S]] : tensor<f32> -> tensor<1xf32>
