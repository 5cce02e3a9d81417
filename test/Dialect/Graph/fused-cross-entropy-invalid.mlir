// RUN: zeroc-opt %s -split-input-file -verify-diagnostics

// Tests the verifier of graph.fused_softmax_cross_entropy: the loss's shapes
// and reduction as graph.softmax_cross_entropy_loss takes them, and a loss
// gradient of the loss's type (which the loss result has).

func.func @labels(%s: tensor<4x5xf32>, %t: tensor<3xi64>, %g: tensor<f32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{'graph.fused_softmax_cross_entropy' op labels shape [3] does not match scores [4, 5] (expected [4])}}
  %l, %gs = graph.fused_softmax_cross_entropy %s, %t, %g {reduction = "mean"} : tensor<4x5xf32>, tensor<3xi64>, tensor<f32>
  return %gs : tensor<4x5xf32>
}

// -----

func.func @reduction(%s: tensor<4x5xf32>, %t: tensor<4xi64>, %g: tensor<f32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{'graph.fused_softmax_cross_entropy' op reduction must be 'mean', 'sum' or 'none', got 'max'}}
  %l, %gs = graph.fused_softmax_cross_entropy %s, %t, %g {reduction = "max"} : tensor<4x5xf32>, tensor<4xi64>, tensor<f32>
  return %gs : tensor<4x5xf32>
}

// -----

func.func @loss_type(%s: tensor<4x5xf32>, %t: tensor<4xi64>, %g: tensor<f32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{'graph.fused_softmax_cross_entropy' op loss has type 'tensor<f32>'; expected 'tensor<4xf32>'}}
  %l, %gs = graph.fused_softmax_cross_entropy %s, %t, %g {reduction = "none"} : tensor<4x5xf32>, tensor<4xi64>, tensor<f32>
  return %gs : tensor<4x5xf32>
}
