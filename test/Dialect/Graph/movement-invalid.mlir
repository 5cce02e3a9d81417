// RUN: zeroc-opt %s -split-input-file -verify-diagnostics

// Tests that pad has two counts per dim.
func.func @f(%x: tensor<2x5xf32>) -> tensor<2x6xf32> {
  // expected-error @+2 {{pads must have 2 entries per dim (4)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.pad %x {pads = [0, 1], mode = "constant"} : tensor<2x5xf32> -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

// Tests that pad's mode is known.
func.func @f(%x: tensor<5xf32>) -> tensor<6xf32> {
  // expected-error @+2 {{mode must be 'constant', 'reflect', 'edge' or 'wrap', got 'mirror'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.pad %x {pads = [0, 1], mode = "mirror"} : tensor<5xf32> -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// Tests that pad cannot crop more than a dim holds.
func.func @f(%x: tensor<5xf32>) -> tensor<0xf32> {
  // expected-error @+2 {{pads -6, 1 crop more than dim 0 of size 5 holds}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.pad %x {pads = [-6, 1], mode = "constant"} : tensor<5xf32> -> tensor<0xf32>
  return %0 : tensor<0xf32>
}

// -----

// Tests that pad counts are bounded.
func.func @f(%x: tensor<5xf32>) -> tensor<5xf32> {
  // expected-error @+2 {{pads of dim 0 of size 5 are too large}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.pad %x {pads = [4611686018427387904, 0], mode = "constant"} : tensor<5xf32> -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// Tests that reflect pads stay below the dim.
func.func @f(%x: tensor<3xf32>) -> tensor<6xf32> {
  // expected-error @+2 {{reflect pads of dim 0 of size 3 must be below the dim, got 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.pad %x {pads = [3, 0], mode = "reflect"} : tensor<3xf32> -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// Tests that edge padding needs an edge.
func.func @f(%x: tensor<0xf32>) -> tensor<2xf32> {
  // expected-error @+2 {{edge padding of empty dim 0 of size 0 has no edge}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.pad %x {pads = [1, 1], mode = "edge"} : tensor<0xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that wrap pads lie within the dim and do not crop.
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+2 {{wrap pads of dim 0 of size 3 must lie in [0, 3]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.pad %x {pads = [1, -1], mode = "wrap"} : tensor<3xf32> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that an integer tensor pads with an exact integer.
func.func @f(%x: tensor<3xi64>) -> tensor<4xi64> {
  // expected-error @+1 {{value 5.000000e-01 must be an integer of magnitude at most 2^53 for an integer tensor}}
  %0 = graph.pad %x {pads = [1, 0], mode = "constant", value = 0.5 : f64} : tensor<3xi64> -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// Tests that pad_grad's gradient is the padded result type.
func.func @f(%g: tensor<7xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{grad type 'tensor<7xf32>' does not match padding the result}}
  %0 = graph.pad_grad %g {pads = [1, 0], mode = "constant"} : tensor<7xf32> -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// Tests that pad_grad checks the pads like pad.
func.func @f(%g: tensor<7xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{reflect pads of dim 0 of size 5 must be below the dim, got 5}}
  %0 = graph.pad_grad %g {pads = [5, 0], mode = "reflect"} : tensor<7xf32> -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// Tests that gather_elements' indices have the data's rank.
func.func @f(%x: tensor<2x5xf32>, %i: tensor<3xi64>) -> tensor<3xf32> {
  // expected-error @+2 {{indices must have the rank of data (>= 1)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.gather_elements %x, %i {axis = 0 : i64} : tensor<2x5xf32>, tensor<3xi64> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Tests that gather_elements' axis is within the rank.
func.func @f(%x: tensor<2x5xf32>, %i: tensor<2x3xi64>) -> tensor<2x3xf32> {
  // expected-error @+2 {{axis 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.gather_elements %x, %i {axis = 2 : i64} : tensor<2x5xf32>, tensor<2x3xi64> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Tests that gather_elements' index dims off the axis fit the data.
func.func @f(%x: tensor<2x5xf32>, %i: tensor<3x3xi64>) -> tensor<3x3xf32> {
  // expected-error @+2 {{indices dim 0 (3) exceeds the data's (2)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.gather_elements %x, %i {axis = 1 : i64} : tensor<2x5xf32>, tensor<3x3xi64> -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

// Tests that gather_elements_grad's gradient is shaped like the indices.
func.func @f(%g: tensor<2x2xf32>, %i: tensor<2x3xi64>) -> tensor<2x5xf32> {
  // expected-error @+1 {{grad shape must equal the indices shape}}
  %0 = graph.gather_elements_grad %g, %i {axis = 1 : i64} : tensor<2x2xf32>, tensor<2x3xi64> -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// Tests that gather_elements_grad checks its axis.
func.func @f(%g: tensor<2x3xf32>, %i: tensor<2x3xi64>) -> tensor<2x5xf32> {
  // expected-error @+1 {{axis 3 is out of range for rank 2}}
  %0 = graph.gather_elements_grad %g, %i {axis = 3 : i64} : tensor<2x3xf32>, tensor<2x3xi64> -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// Tests that gather_nd's index tuples fit the data rank.
func.func @f(%x: tensor<2x5xf32>, %i: tensor<4x3xi64>) -> tensor<4xf32> {
  // expected-error @+2 {{index tuples have 3 entries; expected 1 to the data rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.gather_nd %x, %i : tensor<2x5xf32>, tensor<4x3xi64> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that gather_nd's indices are not a scalar.
func.func @f(%x: tensor<2x5xf32>, %i: tensor<i64>) -> tensor<5xf32> {
  // expected-error @+2 {{indices must have rank >= 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.gather_nd %x, %i : tensor<2x5xf32>, tensor<i64> -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// Tests that scatter_nd's reduction is known.
func.func @f(%x: tensor<4x3xf32>, %i: tensor<2x1xi64>, %u: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{reduction must be 'none', 'add' or 'mul', got 'max'}}
  %0 = graph.scatter_nd %x, %i, %u {reduction = "max"} : tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Tests that scatter_nd adds only numbers.
func.func @f(%x: tensor<4xi1>, %i: tensor<2x1xi64>, %u: tensor<2xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{reduction 'add' needs a numeric element type}}
  %0 = graph.scatter_nd %x, %i, %u {reduction = "add"} : tensor<4xi1>, tensor<2x1xi64>, tensor<2xi1>
  return %0 : tensor<4xi1>
}

// -----

// Tests that scatter_nd's updates have the addressed slices' shape.
func.func @f(%x: tensor<4x3xf32>, %i: tensor<2x1xi64>, %u: tensor<2x2xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{updates shape must be indices.shape[:-1] + data.shape[k:]}}
  %0 = graph.scatter_nd %x, %i, %u {reduction = "none"} : tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x2xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Tests that scatter_nd's index tuples fit the data rank.
func.func @f(%x: tensor<4x3xf32>, %i: tensor<2x0xi64>, %u: tensor<2x4x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{index tuples have 0 entries; expected 1 to the data rank 2}}
  %0 = graph.scatter_nd %x, %i, %u {reduction = "none"} : tensor<4x3xf32>, tensor<2x0xi64>, tensor<2x4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Tests that scatter_elements' reduction is known.
func.func @f(%x: tensor<2x5xf32>, %i: tensor<2x1xi64>, %u: tensor<2x1xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{reduction must be 'none', 'add' or 'mul', got 'min'}}
  %0 = graph.scatter_elements %x, %i, %u {axis = 1 : i64, reduction = "min"} : tensor<2x5xf32>, tensor<2x1xi64>, tensor<2x1xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// Tests that scatter_elements multiplies only numbers.
func.func @f(%x: tensor<4xi1>, %i: tensor<2xi64>, %u: tensor<2xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{reduction 'mul' needs a numeric element type}}
  %0 = graph.scatter_elements %x, %i, %u {axis = 0 : i64, reduction = "mul"} : tensor<4xi1>, tensor<2xi64>, tensor<2xi1>
  return %0 : tensor<4xi1>
}

// -----

// Tests that scatter_elements' indices have the data's rank.
func.func @f(%x: tensor<2x5xf32>, %i: tensor<2xi64>, %u: tensor<2xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{indices must have the rank of data (>= 1)}}
  %0 = graph.scatter_elements %x, %i, %u {axis = 0 : i64, reduction = "none"} : tensor<2x5xf32>, tensor<2xi64>, tensor<2xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// Tests that scatter_elements' axis is normalized into the rank.
func.func @f(%x: tensor<2x5xf32>, %i: tensor<2x1xi64>, %u: tensor<2x1xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{axis -1 is out of range for rank 2}}
  %0 = graph.scatter_elements %x, %i, %u {axis = -1 : i64, reduction = "none"} : tensor<2x5xf32>, tensor<2x1xi64>, tensor<2x1xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// Tests that scatter_elements' index dims off the axis fit the data.
func.func @f(%x: tensor<2x5xf32>, %i: tensor<3x1xi64>, %u: tensor<3x1xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{indices dim 0 (3) exceeds the data's (2)}}
  %0 = graph.scatter_elements %x, %i, %u {axis = 1 : i64, reduction = "add"} : tensor<2x5xf32>, tensor<3x1xi64>, tensor<3x1xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// Tests that scatter_elements' updates are shaped like the indices.
func.func @f(%x: tensor<2x5xf32>, %i: tensor<2x1xi64>, %u: tensor<2x2xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{updates shape must equal the indices shape}}
  %0 = graph.scatter_elements %x, %i, %u {axis = 1 : i64, reduction = "none"} : tensor<2x5xf32>, tensor<2x1xi64>, tensor<2x2xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// Tests that cumsum's axis is normalized into the rank.
func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{axis -1 is out of range for rank 2}}
  %0 = graph.cumsum %x {axis = -1 : i64, exclusive = false, reverse = false} : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
