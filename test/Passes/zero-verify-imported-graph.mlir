// RUN: zeroc-opt %s -split-input-file -allow-unregistered-dialect -zero-verify-imported-graph -verify-diagnostics | FileCheck %s

// Tests that a well-formed imported graph passes unchanged and is counted.
// CHECK-LABEL: func.func @forward
graph.param trainable @w = dense<0.5> : tensor<3x4xf32>
graph.param trainable @b = dense<0.0> : tensor<3xf32>
graph.param @mask = dense<true> : tensor<3xi1>
func.func @forward(%x: tensor<2x4xf32>) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<3x4xf32>
  %b = graph.load_param @b : tensor<3xf32>
  %y = graph.gemm %x, %w, %b {transB = true} : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %l = graph.reduce_mean %y {axes = [0, 1], keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Tests that the module must define @forward.
// expected-error @+1 {{module has no func.func @forward with a body}}
module {
  func.func @other() {
    return
  }
}

// -----

// Tests that @forward's arguments have static shapes.
// expected-error @+1 {{argument 0 must be a statically shaped tensor, got 'tensor<?x4xf32>'}}
func.func @forward(%x: tensor<?x4xf32>) -> (tensor<f32> {graph.loss}) {
  %c = graph.constant dense<1.0> : tensor<f32>
  return %c : tensor<f32>
}

// -----

// Tests that @forward's results have static shapes.
// expected-error @+1 {{result 0 must be a statically shaped tensor, got 'tensor<*xf32>'}}
func.func @forward() -> (tensor<*xf32> {graph.loss}) {
  %x = "test.opaque"() : () -> tensor<*xf32>
  return %x : tensor<*xf32>
}

// -----

// Tests that the loss is a floating-point scalar.
// expected-error @+1 {{loss result 0 must be a floating-point scalar, got 'tensor<2xf32>'}}
func.func @forward(%x: tensor<2xf32>) -> (tensor<2xf32> {graph.loss}) {
  return %x : tensor<2xf32>
}

// -----

// Tests that exactly one result is the loss.
// expected-error @+1 {{must mark exactly one result with graph.loss, found 0}}
func.func @forward(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}

// -----

// Tests that @forward holds only graph ops.
func.func @forward(%x: tensor<f32>) -> (tensor<f32> {graph.loss}) {
  // expected-error @+1 {{is not a graph dialect op; @forward may only hold graph ops after import}}
  %y = "zero.scale_loss"(%x, %x) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %y : tensor<f32>
}
