// RUN: zeroc-opt %s -split-input-file -zero-autodiff -verify-diagnostics

// Tests that a trained scatter_nd with reduction mul is refused (it has no
// gradient rule).
graph.param trainable @d = dense<0.5> : tensor<4x3xf32>
func.func @forward(%i: tensor<2x1xi64>, %u: tensor<2x3xf32>) -> (tensor<f32> {graph.loss}) {
  %d = graph.load_param @d : tensor<4x3xf32>
  // expected-error @+1 {{has no gradient rule for reduction 'mul'}}
  %y = graph.scatter_nd %d, %i, %u {reduction = "mul"} : tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>
  %l = graph.reduce_sum %y {axes = [0, 1], keepdims = false} : tensor<4x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Tests that a trained scatter_elements with reduction mul is refused (it has
// no gradient rule), for updates as for data.
graph.param trainable @u = dense<0.5> : tensor<2x3xf32>
func.func @forward(%d: tensor<2x5xf32>, %i: tensor<2x3xi64>) -> (tensor<f32> {graph.loss}) {
  %u = graph.load_param @u : tensor<2x3xf32>
  // expected-error @+1 {{has no gradient rule for reduction 'mul'}}
  %y = graph.scatter_elements %d, %i, %u {axis = 1 : i64, reduction = "mul"} : tensor<2x5xf32>, tensor<2x3xi64>, tensor<2x3xf32>
  %l = graph.reduce_sum %y {axes = [0, 1], keepdims = false} : tensor<2x5xf32> -> tensor<f32>
  return %l : tensor<f32>
}
