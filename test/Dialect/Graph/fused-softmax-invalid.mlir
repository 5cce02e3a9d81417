// RUN: zeroc-opt %s -split-input-file -verify-diagnostics

// Tests the verifiers of graph.fused_softmax and graph.fused_softmax_grad:
// the axis within the result's rank, and a body as graph.fused_elementwise
// has (fused-elementwise-invalid.mlir), whose first argument is the
// gradient in fused_softmax_grad, and which yields one value.

func.func @axis(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'graph.fused_softmax' op axis 2 is out of range for rank 2}}
  %y = graph.fused_softmax %x {axis = 2 : i64, log = false} : (tensor<2x4xf32>) -> tensor<2x4xf32> {
  ^bb0(%a: tensor<2x4xf32>):
    %n = graph.neg %a : tensor<2x4xf32>
    graph.yield %n : tensor<2x4xf32>
  }
  return %y : tensor<2x4xf32>
}

// -----

func.func @two_yields(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'graph.fused_softmax' op yields 2 values but has 1 result}}
  %y = graph.fused_softmax %x {axis = 1 : i64, log = false} : (tensor<2x4xf32>) -> tensor<2x4xf32> {
  ^bb0(%a: tensor<2x4xf32>):
    %n = graph.neg %a : tensor<2x4xf32>
    graph.yield %n, %a : tensor<2x4xf32>, tensor<2x4xf32>
  }
  return %y : tensor<2x4xf32>
}

// -----

func.func @not_elementwise(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'graph.fused_softmax' op body holds 'graph.softmax', which is no fusable elementwise op}}
  %y = graph.fused_softmax %x {axis = 1 : i64, log = false} : (tensor<2x4xf32>) -> tensor<2x4xf32> {
  ^bb0(%a: tensor<2x4xf32>):
    // expected-note @+1 {{here}}
    %n = graph.softmax %a {axis = 1 : i64} : tensor<2x4xf32>
    graph.yield %n : tensor<2x4xf32>
  }
  return %y : tensor<2x4xf32>
}

// -----

func.func @grad_axis(%y: tensor<2x4xf32>, %g: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'graph.fused_softmax_grad' op axis -1 is out of range for rank 2}}
  %r = graph.fused_softmax_grad %y, %g {axis = -1 : i64, log = false} : tensor<2x4xf32> {
  ^bb0(%gx: tensor<2x4xf32>):
    %n = graph.neg %gx : tensor<2x4xf32>
    graph.yield %n : tensor<2x4xf32>
  }
  return %r : tensor<2x4xf32>
}

// -----

func.func @grad_no_gradient_argument(%y: tensor<2x4xf32>, %g: tensor<2x4xf32>, %k: tensor<f32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'graph.fused_softmax_grad' op body has 1 arguments; expected 2 (the gradient, then one per input)}}
  %r = graph.fused_softmax_grad %y, %g epilogue(%k : tensor<f32>) {axis = 1 : i64, log = false} : tensor<2x4xf32> {
  ^bb0(%a: tensor<f32>):
    %n = graph.neg %a : tensor<f32>
    graph.yield %n : tensor<f32>
  }
  return %r : tensor<2x4xf32>
}

// -----

func.func @grad_argument_type(%y: tensor<2x4xf32>, %g: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'graph.fused_softmax_grad' op body argument 0 has type 'tensor<4xf32>', not the result type 'tensor<2x4xf32>'}}
  %r = graph.fused_softmax_grad %y, %g {axis = 1 : i64, log = false} : tensor<2x4xf32> {
  ^bb0(%gx: tensor<4xf32>):
    %n = graph.neg %gx : tensor<4xf32>
    graph.yield %n : tensor<4xf32>
  }
  return %r : tensor<2x4xf32>
}

// -----

func.func @grad_input_broadcast(%y: tensor<2x4xf32>, %g: tensor<2x4xf32>, %b: tensor<3xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'graph.fused_softmax_grad' op input 0 of type 'tensor<3xf32>' does not broadcast to the result type 'tensor<2x4xf32>'}}
  %r = graph.fused_softmax_grad %y, %g epilogue(%b : tensor<3xf32>) {axis = 1 : i64, log = false} : tensor<2x4xf32> {
  ^bb0(%gx: tensor<2x4xf32>, %c: tensor<3xf32>):
    %n = graph.neg %gx : tensor<2x4xf32>
    graph.yield %n : tensor<2x4xf32>
  }
  return %r : tensor<2x4xf32>
}
