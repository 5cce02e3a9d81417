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

// -----

// Tests that a matmul storing its product transposed (result_perm, which
// only zero-fold-matmul-views sets, after autodiff) is refused.
graph.param trainable @w = dense<0.5> : tensor<4x5xf32>
func.func @forward(%x: tensor<2x3x4xf32>) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<4x5xf32>
  // expected-error @+1 {{has no gradient rule with result_perm (only zero-fold-matmul-views sets it, after autodiff)}}
  %y = graph.matmul %x, %w {result_perm = array<i64: 1, 0, 2>} : tensor<2x3x4xf32>, tensor<4x5xf32> -> tensor<3x2x5xf32>
  %l = graph.reduce_sum %y {axes = [0, 1, 2], keepdims = false} : tensor<3x2x5xf32> -> tensor<f32>
  return %l : tensor<f32>
}
