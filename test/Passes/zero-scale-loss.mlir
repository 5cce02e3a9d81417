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

// -----

// Tests that with gradient accumulation the seed is divided by the steps
// (DeepSpeed's scale_wrt_gas): loss_scale * 1/4.
// RUN: zeroc-opt %s -split-input-file -zero-autodiff -zero-scale-loss="grad-accum-steps=4" | FileCheck %s --check-prefix=GAS
graph.param trainable @w = dense<0.5> : tensor<3xf32>
func.func @forward(%x: tensor<3xf32>) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<3xf32>
  %y = graph.mul %x, %w : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  %l = graph.reduce_sum %y {axes = [0], keepdims = false} : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// GAS-LABEL: func.func @forward_backward
// GAS: %[[S:.*]] = zero.loss_scale : tensor<f32>
// GAS: %[[G:.*]] = graph.constant dense<2.500000e-01> : tensor<f32>
// GAS: %[[SEED:.*]] = graph.mul %[[S]], %[[G]] : tensor<f32>, tensor<f32> -> tensor<f32>
// GAS: graph.reshape %[[SEED]] : tensor<f32> -> tensor<1xf32>

// -----

// Tests that without loss scaling the seed constant becomes 1/steps, in the
// loss's own type (f32 here).
// RUN: zeroc-opt %s -split-input-file -zero-autodiff -zero-scale-loss="dynamic=false grad-accum-steps=3" | FileCheck %s --check-prefix=STATIC
graph.param trainable @v = dense<0.5> : tensor<3xf32>
func.func @forward(%x: tensor<3xf32>) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @v : tensor<3xf32>
  %y = graph.mul %x, %w : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  %l = graph.reduce_sum %y {axes = [0], keepdims = false} : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// STATIC-LABEL: func.func @forward_backward
// STATIC-NOT: zero.loss_scale
// STATIC: graph.constant {graph.loss_seed} dense<0.333333343> : tensor<f32>
