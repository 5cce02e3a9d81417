// RUN: zeroc-opt %s -split-input-file -verify-diagnostics

// Tests that a parameter's initial value must be a tensor.
// expected-error @+1 {{initial value must be a statically shaped tensor}}
graph.param @p = dense<1.0> : vector<2xf32>

// -----

// Tests that trainable parameters are floating-point.
// expected-error @+1 {{trainable parameter must have a floating-point type, got 'i64'}}
graph.param trainable @p = dense<1> : tensor<2xi64>

// -----

// Tests that only trainable parameters have a master copy.
// expected-error @+1 {{only a trainable parameter can have a master type}}
graph.param @p master(f32) = dense<1.0> : tensor<2xf16>

// -----

// Tests that the master type is wider than the parameter's.
// expected-error @+1 {{master type 'f16' must be a floating-point type wider than 'bf16'}}
graph.param trainable @p master(f16) = dense<1.0> : tensor<2xbf16>

// -----

// Tests that the master type is a floating-point type.
// expected-error @+1 {{master type 'i32' must be a floating-point type wider than 'f16'}}
graph.param trainable @p master(i32) = dense<1.0> : tensor<2xf16>

// -----

// Tests that load_param names an existing parameter.
func.func @f() -> tensor<2xf32> {
  // expected-error @+1 {{'nope' does not name a graph.param}}
  %0 = graph.load_param @nope : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that load_param's type matches the parameter's.
graph.param trainable @p = dense<1.0> : tensor<2xf32>
func.func @f() -> tensor<3xf32> {
  // expected-error @+1 {{result type 'tensor<3xf32>' does not match parameter type 'tensor<2xf32>'}}
  %0 = graph.load_param @p : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that a buffer's initial value must be a tensor.
// expected-error @+1 {{initial value must be a statically shaped tensor}}
graph.buffer @b = dense<1.0> : vector<2xf32>

// -----

// Tests that buffers are floating-point.
// expected-error @+1 {{buffer must have a floating-point type, got 'i64'}}
graph.buffer @b = dense<1> : tensor<2xi64>

// -----

// Tests that load_buffer names an existing buffer.
graph.param @p = dense<1.0> : tensor<2xf32>
func.func @f() -> tensor<2xf32> {
  // expected-error @+1 {{'p' does not name a graph.buffer}}
  %0 = graph.load_buffer @p : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that load_buffer's type matches the buffer's.
graph.buffer @b = dense<1.0> : tensor<2xf32>
func.func @f() -> tensor<3xf32> {
  // expected-error @+1 {{result type 'tensor<3xf32>' does not match buffer type 'tensor<2xf32>'}}
  %0 = graph.load_buffer @b : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that cast keeps the shape.
func.func @f(%x: tensor<2xi64>) -> tensor<3xf32> {
  // expected-error @+1 {{result shape must equal input shape}}
  %0 = graph.cast %x : tensor<2xi64> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that the dropout ratio is a probability below one.
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{ratio must be in [0, 1), got 1.5}}
  %0 = graph.dropout %x {ratio = 1.5 : f64, training = true} : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that softmax's axis is within the rank.
func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = graph.softmax %x {axis = 2 : i64} : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that log_softmax's axis is within the rank.
func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{axis -1 is out of range for rank 2}}
  %0 = graph.log_softmax %x {axis = -1 : i64} : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that softmax_grad's axis is within the rank (autodiff copies the
// forward op's, which is; zero-fuse-softmax's fused op requires it).
func.func @f(%y: tensor<2x3xf32>, %g: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.softmax_grad' op axis -1 is out of range for rank 2}}
  %0 = graph.softmax_grad %y, %g {axis = -1 : i64, log = false} : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that layer_norm's scale covers exactly the normalized dims.
func.func @f(%x: tensor<2x3xf32>, %g: tensor<2xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{scale shape must equal the normalized dims}}
  %0 = graph.layer_norm %x, %g {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that layer_norm's scale has the input's element type.
func.func @f(%x: tensor<2x3xf32>, %g: tensor<3xf16>) -> tensor<2x3xf32> {
  // expected-error @+1 {{scale element type must match the input}}
  %0 = graph.layer_norm %x, %g {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x3xf32>, tensor<3xf16>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that layer_norm's bias covers exactly the normalized dims.
func.func @f(%x: tensor<2x3xf32>, %g: tensor<3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{bias shape must equal the normalized dims}}
  %0 = graph.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that layer_norm's epsilon is positive.
func.func @f(%x: tensor<2x3xf32>, %g: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{epsilon must be positive}}
  %0 = graph.layer_norm %x, %g {axis = 1 : i64, epsilon = 0.0 : f64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that layer_norm's epsilon is finite.
func.func @f(%x: tensor<2x3xf32>, %g: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{epsilon must be finite}}
  %0 = graph.layer_norm %x, %g {axis = 1 : i64, epsilon = 0x7FF0000000000000 : f64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that gemm's alpha is finite.
func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{alpha must be finite, got nan}}
  %0 = graph.gemm %a, %b {alpha = 0x7FF8000000000000 : f64} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Tests that gemm's beta is finite.
func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{beta must be finite, got inf}}
  %0 = graph.gemm %a, %b, %c {beta = 0xFFF0000000000000 : f64} : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Tests that reshape keeps the element count.
func.func @f(%x: tensor<2x3xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{element count changes from 6 to 8}}
  %0 = graph.reshape %x : tensor<2x3xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// Tests that expand's input broadcasts to its result.
func.func @f(%x: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{input shape does not broadcast to the result shape}}
  %0 = graph.expand %x : tensor<2x3xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Tests that trilu needs a matrix.
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{input must have rank >= 2}}
  %0 = graph.trilu %x {upper = true, k = 0 : i64} : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that elementwise operands must broadcast.
func.func @f(%x: tensor<2x3xf32>, %y: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{operand shapes [2, 3] and [4] are not broadcast-compatible}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.add %x, %y : tensor<2x3xf32>, tensor<4xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that a declared result type must equal the inferred one.
func.func @f(%x: tensor<2x3xf32>, %y: tensor<3xf32>) -> tensor<3x3xf32> {
  // expected-error @+2 {{'graph.mul' op inferred type(s) 'tensor<2x3xf32>' are incompatible with return type(s) of operation 'tensor<3x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.mul %x, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

// Tests that where's three operands must broadcast.
func.func @f(%c: tensor<5xi1>, %x: tensor<2x3xf32>, %y: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{are not broadcast-compatible}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.where %c, %x, %y : tensor<5xi1>, tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that matmul's contracting dims agree.
func.func @f(%x: tensor<2x3xf32>, %y: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+2 {{contracting dims differ: [2, 3] x [4, 5]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.matmul %x, %y : tensor<2x3xf32>, tensor<4x5xf32> -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// Tests that matmul rejects scalars.
func.func @f(%x: tensor<f32>, %y: tensor<4x5xf32>) -> tensor<5xf32> {
  // expected-error @+2 {{operands must have rank >= 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.matmul %x, %y : tensor<f32>, tensor<4x5xf32> -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// Tests that matmul's transposed operand has rank 2 or more.
func.func @f(%x: tensor<3xf32>, %y: tensor<3x4xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{a transposed operand must have rank >= 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.matmul %x, %y {transA = true} : tensor<3xf32>, tensor<3x4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that matmul's result_perm is a permutation of the product's dims.
func.func @f(%x: tensor<2x3x4xf32>, %y: tensor<4x5xf32>) -> tensor<3x2x5xf32> {
  // expected-error @+2 {{result_perm must be a permutation of the product's 3 dims (rank 2 or more)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.matmul %x, %y {result_perm = array<i64: 1, 1, 2>} : tensor<2x3x4xf32>, tensor<4x5xf32> -> tensor<3x2x5xf32>
  return %0 : tensor<3x2x5xf32>
}

// -----

// Tests that matmul's result_perm needs matrix operands.
func.func @f(%x: tensor<2x4x3xf32>, %y: tensor<3xf32>) -> tensor<4x2xf32> {
  // expected-error @+2 {{result_perm needs operands of rank 2 or more (a vector operand's product is no batch of matrices)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.matmul %x, %y {result_perm = array<i64: 1, 0>} : tensor<2x4x3xf32>, tensor<3xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

// Tests that matmul's result_perm keeps a matrix dim last.
func.func @f(%x: tensor<2x3x4xf32>, %y: tensor<4x5xf32>) -> tensor<3x5x2xf32> {
  // expected-error @+2 {{result_perm must keep one of the product's last two dims last (a matrix the GEMM writes)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.matmul %x, %y {result_perm = array<i64: 1, 2, 0>} : tensor<2x3x4xf32>, tensor<4x5xf32> -> tensor<3x5x2xf32>
  return %0 : tensor<3x5x2xf32>
}

// -----

// Tests that matmul's contracting dims agree with a transposed operand.
func.func @f(%x: tensor<2x3xf32>, %y: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+2 {{contracting dims differ: [2, 3] x [3, 4]^T}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.matmul %x, %y {transB = true} : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Tests that matmul's batch dims broadcast.
func.func @f(%x: tensor<2x3x4xf32>, %y: tensor<5x4x6xf32>) -> tensor<2x3x6xf32> {
  // expected-error @+2 {{batch dims are not broadcast-compatible}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.matmul %x, %y : tensor<2x3x4xf32>, tensor<5x4x6xf32> -> tensor<2x3x6xf32>
  return %0 : tensor<2x3x6xf32>
}

// -----

// Tests that gemm takes matrices.
func.func @f(%x: tensor<2x3x4xf32>, %y: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+2 {{a and b must be rank-2 tensors}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.gemm %x, %y : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// Tests that gemm's contracting dims agree after transposition.
func.func @f(%x: tensor<2x3xf32>, %y: tensor<4x5xf32>) -> tensor<2x4xf32> {
  // expected-error @+2 {{contracting dims differ: 3 vs 5}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.gemm %x, %y {transB = true} : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// Tests that gemm's operands share an element type.
func.func @f(%x: tensor<2x3xf32>, %y: tensor<3x5xf16>) -> tensor<2x5xf32> {
  // expected-error @+2 {{a and b element types differ}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.gemm %x, %y : (tensor<2x3xf32>, tensor<3x5xf16>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// Tests that gemm's bias broadcasts to the result.
func.func @f(%x: tensor<2x3xf32>, %y: tensor<3x5xf32>, %c: tensor<4xf32>) -> tensor<2x5xf32> {
  // expected-error @+2 {{c must broadcast to the result shape [2, 5]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.gemm %x, %y, %c : (tensor<2x3xf32>, tensor<3x5xf32>, tensor<4xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// Tests that reduction axes are sorted, unique and in range.
func.func @f(%x: tensor<2x3xf32>) -> tensor<f32> {
  // expected-error @+2 {{axes must be strictly increasing and within [0, 2)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.reduce_sum %x {axes = [1, 0], keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Tests that cross entropy's scores have a class dim.
func.func @f(%x: tensor<2xf32>, %l: tensor<2xi64>) -> tensor<f32> {
  // expected-error @+2 {{scores must have rank >= 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.softmax_cross_entropy_loss %x, %l {reduction = "mean"} : tensor<2xf32>, tensor<2xi64> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Tests that cross entropy's labels match the scores without the class dim.
func.func @f(%x: tensor<2x5xf32>, %l: tensor<3xi64>) -> tensor<f32> {
  // expected-error @+2 {{labels shape [3] does not match scores [2, 5] (expected [2])}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.softmax_cross_entropy_loss %x, %l {reduction = "mean"} : tensor<2x5xf32>, tensor<3xi64> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Tests that cross entropy accepts only ONNX's reductions.
func.func @f(%x: tensor<2x5xf32>, %l: tensor<2xi64>) -> tensor<f32> {
  // expected-error @+2 {{reduction must be 'mean', 'sum' or 'none', got 'avg'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.softmax_cross_entropy_loss %x, %l {reduction = "avg"} : tensor<2x5xf32>, tensor<2xi64> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Tests that gather's axis is within the data's rank.
func.func @f(%x: tensor<2x3xf32>, %i: tensor<4xi64>) -> tensor<2x3xf32> {
  // expected-error @+2 {{axis 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.gather %x, %i {axis = 2 : i64} : tensor<2x3xf32>, tensor<4xi64> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that transpose's perm covers every dim.
func.func @f(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+2 {{perm must have one entry per input dim}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.transpose %x {perm = [1]} : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// Tests that transpose's perm is a permutation.
func.func @f(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+2 {{perm is not a permutation}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.transpose %x {perm = [1, 1]} : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// Tests that slice triples cover every dim.
func.func @f(%x: tensor<2x3xf32>) -> tensor<1x3xf32> {
  // expected-error @+2 {{starts, ends and steps must have one entry per input dim}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.slice %x {starts = [0], ends = [1], steps = [1]} : tensor<2x3xf32> -> tensor<1x3xf32>
  return %0 : tensor<1x3xf32>
}

// -----

// Tests that slice triples are normalized.
func.func @f(%x: tensor<4xf32>) -> tensor<5xf32> {
  // expected-error @+2 {{dim 0: slice [0:5:1] is not normalized for size 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.slice %x {starts = [0], ends = [5], steps = [1]} : tensor<4xf32> -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// Tests that concat's axis is within the rank.
func.func @f(%x: tensor<2x3xf32>) -> tensor<2x6xf32> {
  // expected-error @+2 {{axis is out of range}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.concat %x, %x {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

// Tests that concat's inputs share rank and element type.
func.func @f(%x: tensor<2x3xf32>, %y: tensor<3xf32>) -> tensor<2x6xf32> {
  // expected-error @+2 {{inputs must have the same rank and element type}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.concat %x, %y {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

// Tests that concat's inputs agree outside the axis.
func.func @f(%x: tensor<2x3xf32>, %y: tensor<3x3xf32>) -> tensor<2x6xf32> {
  // expected-error @+2 {{inputs differ in dim 0 outside the concat axis}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.concat %x, %y {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

// Tests that unary_grad names a known unary op.
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{unknown unary op 'cosh'}}
  %0 = graph.unary_grad %x, x = %x {op = "cosh"} : tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that sum_to's result broadcasts to its input.
func.func @f(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{result shape does not broadcast to the input shape}}
  %0 = graph.sum_to %x : tensor<2x3xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that gather_grad's axis is within the data's rank.
func.func @f(%g: tensor<4x3xf32>, %i: tensor<4xi64>) -> tensor<5x3xf32> {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = graph.gather_grad %g, %i {axis = 2 : i64} : tensor<4x3xf32>, tensor<4xi64> -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

// Tests that gather_grad's gradient matches gathering from its result type.
func.func @f(%g: tensor<4x2xf32>, %i: tensor<4xi64>) -> tensor<5x3xf32> {
  // expected-error @+1 {{grad shape does not match gathering the result type}}
  %0 = graph.gather_grad %g, %i {axis = 0 : i64} : tensor<4x2xf32>, tensor<4xi64> -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

// Tests that gather_grad's result is grad's element type or, for a bf16 or
// f16 grad, f32.
func.func @f(%g: tensor<4x3xbf16>, %i: tensor<4xi64>) -> tensor<5x3xf16> {
  // expected-error @+1 {{result element type 'f16' is neither grad's ('bf16') nor f32 for an f16 or bf16 grad}}
  %0 = graph.gather_grad %g, %i {axis = 0 : i64} : tensor<4x3xbf16>, tensor<4xi64> -> tensor<5x3xf16>
  return %0 : tensor<5x3xf16>
}

// -----

// Tests that an f32 grad is not summed into an f64 result.
func.func @f(%g: tensor<4x3xf32>, %i: tensor<4xi64>) -> tensor<5x3xf64> {
  // expected-error @+1 {{result element type 'f64' is neither grad's ('f32') nor f32 for an f16 or bf16 grad}}
  %0 = graph.gather_grad %g, %i {axis = 0 : i64} : tensor<4x3xf32>, tensor<4xi64> -> tensor<5x3xf64>
  return %0 : tensor<5x3xf64>
}

// -----

// Tests that slice_grad's gradient has the slice's type.
func.func @f(%g: tensor<3xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{grad type 'tensor<3xf32>' does not match slicing the result: 'tensor<2xf32>'}}
  %0 = graph.slice_grad %g {starts = [0], ends = [4], steps = [2]} : tensor<3xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
