// RUN: zeroc-opt %s -split-input-file -zero-autodiff | FileCheck %s

// Tests that a broadcast bias gets its gradient summed back to its shape, a
// tied parameter (used twice) accumulates, and integer inputs carry no
// gradient.
graph.param trainable @w = dense<0.5> : tensor<4x3xf32>
graph.param trainable @b = dense<0.0> : tensor<3xf32>
graph.param trainable @unused = dense<1.0> : tensor<2xf32>
func.func @forward(%x: tensor<2x4xf32>, %i: tensor<2xi64>) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<4x3xf32>
  %b = graph.load_param @b : tensor<3xf32>
  %y = graph.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %z = graph.add %y, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %e = graph.gather %w, %i {axis = 0 : i64} : tensor<4x3xf32>, tensor<2xi64> -> tensor<2x3xf32>
  %s = graph.mul %z, %e : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  %l = graph.reduce_mean %s {axes = [0, 1], keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK-SAME: -> (tensor<f32> {graph.loss}, tensor<4x3xf32> {graph.grad_of = @w}, tensor<3xf32> {graph.grad_of = @b}, tensor<2xf32> {graph.grad_of = @unused})
// CHECK: %[[ONE:.*]] = graph.constant {graph.loss_seed} dense<1.000000e+00> : tensor<f32>
// CHECK: %[[DS:.*]] = graph.expand
// CHECK: %[[DZ:.*]] = graph.mul %[[DS]], %{{.*}}
// CHECK: %[[DE:.*]] = graph.mul %[[DS]], %{{.*}}
// CHECK: %[[DG:.*]] = graph.gather_grad %[[DE]], %arg1 {axis = 0 : i64} : tensor<2x3xf32>, tensor<2xi64> -> tensor<4x3xf32>
// CHECK: %[[DB:.*]] = graph.sum_to %[[DZ]] : tensor<2x3xf32> -> tensor<3xf32>
// CHECK: %[[T:.*]] = graph.transpose %arg0 {perm = [1, 0]}
// CHECK: %[[MM:.*]] = graph.matmul %[[T]], %[[DZ]] : tensor<4x2xf32>, tensor<2x3xf32> -> tensor<4x3xf32>
// CHECK: %[[DW:.*]] = graph.add %[[DG]], %[[MM]] : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: %[[ZERO:.*]] = graph.constant dense<0.000000e+00> : tensor<2xf32>
// CHECK: return %{{.*}}, %[[DW]], %[[DB]], %[[ZERO]]

// -----

// Tests that dropout gets a seed and its gradient replays the same mask.
graph.param trainable @w = dense<0.5> : tensor<4xf32>
func.func @forward(%x: tensor<4xf32>) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<4xf32>
  %y = graph.mul %x, %w : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %d = graph.dropout %y {ratio = 0.1 : f64, training = true} : tensor<4xf32>
  %l = graph.reduce_sum %d {axes = [0], keepdims = false} : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: graph.dropout %{{.*}} {ratio = 1.000000e-01 : f64, seed = 1 : i64, training = true}
// CHECK: graph.dropout %{{.*}} {ratio = 1.000000e-01 : f64, seed = 1 : i64, training = true}
