// RUN: zeroc-opt %s -split-input-file -verify-diagnostics

// Tests that compare's predicate is one of lt, le, gt, ge.
func.func @f(%x: tensor<3xf32>) -> tensor<3xi1> {
  // expected-error @+1 {{predicate must be one of lt, le, gt, ge, got "eq"}}
  %0 = graph.compare %x, %x {predicate = "eq"} : tensor<3xf32>, tensor<3xf32> -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

// Tests that compare's operands are float, i32 or i64.
func.func @f(%x: tensor<3xi8>) -> tensor<3xi1> {
  // expected-error @+1 {{operands must be float, i32 or i64 tensors, got 'i8'}}
  %0 = graph.compare %x, %x {predicate = "lt"} : tensor<3xi8>, tensor<3xi8> -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

// Tests that compare's operands broadcast.
func.func @f(%x: tensor<3xf32>, %y: tensor<4xf32>) -> tensor<3xi1> {
  // expected-error @+2 {{operand shapes 'tensor<3xf32>' and 'tensor<4xf32>' are not broadcast-compatible}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.compare %x, %y {predicate = "lt"} : tensor<3xf32>, tensor<4xf32> -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

// Tests that logical's op is one of and, or, xor.
func.func @f(%m: tensor<3xi1>) -> tensor<3xi1> {
  // expected-error @+1 {{op must be one of and, or, xor, got "nand"}}
  %0 = graph.logical %m, %m {op = "nand"} : tensor<3xi1>, tensor<3xi1> -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

// Tests that logical's operands broadcast.
func.func @f(%m: tensor<3xi1>, %n: tensor<2xi1>) -> tensor<3xi1> {
  // expected-error @+2 {{operand shapes 'tensor<3xi1>' and 'tensor<2xi1>' are not broadcast-compatible}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.logical %m, %n {op = "and"} : tensor<3xi1>, tensor<2xi1> -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

// Tests that is_nan keeps the input's shape.
func.func @f(%x: tensor<3xf32>) -> tensor<4xi1> {
  // expected-error @+1 {{result shape must equal input shape}}
  %0 = graph.is_nan %x : tensor<3xf32> -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// Tests that is_inf keeps the input's shape.
func.func @f(%x: tensor<3xf32>) -> tensor<4xi1> {
  // expected-error @+1 {{result shape must equal input shape}}
  %0 = graph.is_inf %x {detect_positive = true, detect_negative = true} : tensor<3xf32> -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// Tests that is_inf detects at least one sign.
func.func @f(%x: tensor<3xf32>) -> tensor<3xi1> {
  // expected-error @+1 {{detects nothing: detect_positive or detect_negative must be set}}
  %0 = graph.is_inf %x {detect_positive = false, detect_negative = false} : tensor<3xf32> -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

// Tests that gelu's approximate is none or tanh.
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{approximate must be "none" or "tanh", got "erf"}}
  %0 = graph.gelu %x {approximate = "erf"} : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that clip's bounds are not NaN.
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{bounds must not be NaN}}
  %0 = graph.clip %x {min = 0x7FF8000000000000 : f64} : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that clip_grad's bounds are not NaN.
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{bounds must not be NaN}}
  %0 = graph.clip_grad %x, %x {max = 0x7FF8000000000000 : f64} : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that max's operands broadcast.
func.func @f(%x: tensor<3xf32>, %y: tensor<2xf32>) -> tensor<3xf32> {
  // expected-error @+2 {{operand shapes [3] and [2] are not broadcast-compatible}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.max %x, %y : tensor<3xf32>, tensor<2xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that unary_grad accepts only known unary ops.
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{unknown unary op 'sign'}}
  %0 = graph.unary_grad %x {op = "sign"} : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that unary_grad has the forward value its derivative reads.
func.func @f(%g: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'erf' reads the forward input x, which is missing}}
  %0 = graph.unary_grad %g {op = "erf"} : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that unary_grad leaves out a forward value its derivative does not
// read (autodiff would keep it alive for nothing).
func.func @f(%g: tensor<3xf32>, %x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'tanh' does not read the forward input x; leave it out}}
  %0 = graph.unary_grad %g, x = %x, y = %x {op = "tanh"} : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests unary_grad's syntax: x and y once each.
func.func @f(%g: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{expected 'x = ' or 'y = ' once each}}
  %0 = graph.unary_grad %g, x = %g, x = %g {op = "erf"} : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that generic IR cannot leave out unary_grad's gradient.
func.func @f(%g: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'graph.unary_grad' op needs exactly one gradient operand}}
  %0 = "graph.unary_grad"(%g) {op = "neg", operandSegmentSizes = array<i32: 1, 0, 0>} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
