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
  %y = "zero.all_reduce"(%x) {reduction = #zero<reduction sum>} : (tensor<f32>) -> tensor<f32>
  return %y : tensor<f32>
}

// -----

// Tests that a buffer update (a BatchNormalization's running statistic)
// passes.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: graph.buffer_update = @rm
graph.buffer @rm = dense<0.0> : tensor<3xf32>
func.func @forward(%x: tensor<3xf32>) -> (tensor<f32> {graph.loss}, tensor<3xf32> {graph.buffer_update = @rm}) {
  %m = graph.load_buffer @rm : tensor<3xf32>
  %n = graph.add %m, %x : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  %l = graph.reduce_mean %x {axes = [0], keepdims = false} : tensor<3xf32> -> tensor<f32>
  return %l, %n : tensor<f32>, tensor<3xf32>
}

// -----

// Tests that a buffer update names a graph.buffer.
graph.param @p = dense<0.0> : tensor<3xf32>
// expected-error @+1 {{result 1 updates @p, which is not a graph.buffer}}
func.func @forward(%x: tensor<3xf32>) -> (tensor<f32> {graph.loss}, tensor<3xf32> {graph.buffer_update = @p}) {
  %l = graph.reduce_mean %x {axes = [0], keepdims = false} : tensor<3xf32> -> tensor<f32>
  return %l, %x : tensor<f32>, tensor<3xf32>
}

// -----

// Tests that a buffer update has the buffer's type.
graph.buffer @rm = dense<0.0> : tensor<4xf32>
// expected-error @+1 {{result 1 of type 'tensor<3xf32>' updates @rm of type 'tensor<4xf32>'}}
func.func @forward(%x: tensor<3xf32>) -> (tensor<f32> {graph.loss}, tensor<3xf32> {graph.buffer_update = @rm}) {
  %l = graph.reduce_mean %x {axes = [0], keepdims = false} : tensor<3xf32> -> tensor<f32>
  return %l, %x : tensor<f32>, tensor<3xf32>
}

// -----

// Tests that a buffer is updated at most once.
graph.buffer @rm = dense<0.0> : tensor<3xf32>
// expected-error @+1 {{result 2 updates @rm a second time}}
func.func @forward(%x: tensor<3xf32>) -> (tensor<f32> {graph.loss}, tensor<3xf32> {graph.buffer_update = @rm}, tensor<3xf32> {graph.buffer_update = @rm}) {
  %l = graph.reduce_mean %x {axes = [0], keepdims = false} : tensor<3xf32> -> tensor<f32>
  return %l, %x, %x : tensor<f32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// Tests that the loss does not update a buffer.
graph.buffer @s = dense<0.0> : tensor<f32>
// expected-error @+1 {{loss result 0 cannot update a buffer}}
func.func @forward(%x: tensor<f32>) -> (tensor<f32> {graph.loss, graph.buffer_update = @s}) {
  return %x : tensor<f32>
}

// -----

// Tests that a buffer update is a symbol reference.
// expected-error @+1 {{result 1 has a graph.buffer_update that is not a symbol reference}}
func.func @forward(%x: tensor<f32>) -> (tensor<f32> {graph.loss}, tensor<f32> {graph.buffer_update = "s"}) {
  return %x, %x : tensor<f32>, tensor<f32>
}
