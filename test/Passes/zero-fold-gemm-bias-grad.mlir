// RUN: zeroc-opt %s -split-input-file -zero-fold-gemm-bias-grad | FileCheck %s

// Tests a linear layer's backward pass, its output gradient [2, 4, 3]
// summed into the bias gradient before the reshape to [8, 3] that the
// weight gradient's GEMM reads transposed: one fused op at the sum's
// place, reading a reshape made there; the input gradient's GEMM keeps
// the old reshape.
// CHECK-LABEL: func.func @sum_first
// CHECK-NEXT: %[[R:.*]] = graph.reshape %arg0 : tensor<2x4x3xf32> -> tensor<8x3xf32>
// CHECK-NEXT: %[[W:.*]], %[[B:.*]] = graph.fused_gemm_bias_grad %[[R]], %arg1 {summed = 0 : i64, transA = true} : (tensor<8x3xf32>, tensor<8x5xf32>) -> (tensor<3x5xf32>, tensor<3xf32>)
// CHECK-NEXT: %[[N:.*]] = graph.neg %[[B]]
// CHECK-NEXT: %[[R2:.*]] = graph.reshape %arg0
// CHECK-NEXT: %[[X:.*]] = graph.gemm %[[R2]], %arg2
// CHECK-NOT: graph.sum_to
// CHECK: return %[[N]], %[[W]], %[[X]]
func.func @sum_first(%gy: tensor<2x4x3xf32>, %x: tensor<8x5xf32>, %w: tensor<3x5xf32>) -> (tensor<3xf32>, tensor<3x5xf32>, tensor<8x5xf32>) {
  %b = graph.sum_to %gy : tensor<2x4x3xf32> -> tensor<3xf32>
  %nb = graph.neg %b : tensor<3xf32>
  %r = graph.reshape %gy : tensor<2x4x3xf32> -> tensor<8x3xf32>
  %gx = graph.gemm %r, %w : (tensor<8x3xf32>, tensor<3x5xf32>) -> tensor<8x5xf32>
  %gw = graph.gemm %r, %x {transA = true, beta = 0.0 : f64} : (tensor<8x3xf32>, tensor<8x5xf32>) -> tensor<3x5xf32>
  return %nb, %gw, %gx : tensor<3xf32>, tensor<3x5xf32>, tensor<8x5xf32>
}

// -----

// Tests the weight gradient x^T gy (a [in, out] weight): the output
// gradient is the GEMM's b, read as stored, and the sum, into [1, 3],
// comes after the GEMM: the fused op stands at the GEMM's place.
// CHECK-LABEL: func.func @gemm_first
// CHECK-NEXT: %[[W:.*]], %[[B:.*]] = graph.fused_gemm_bias_grad %arg1, %arg0 {summed = 1 : i64, transA = true} : (tensor<8x5xf32>, tensor<8x3xf32>) -> (tensor<5x3xf32>, tensor<1x3xf32>)
// CHECK-NEXT: return %[[W]], %[[B]]
func.func @gemm_first(%gy: tensor<8x3xf32>, %x: tensor<8x5xf32>) -> (tensor<5x3xf32>, tensor<1x3xf32>) {
  %gw = graph.gemm %x, %gy {transA = true} : (tensor<8x5xf32>, tensor<8x3xf32>) -> tensor<5x3xf32>
  %b = graph.sum_to %gy : tensor<8x3xf32> -> tensor<1x3xf32>
  return %gw, %b : tensor<5x3xf32>, tensor<1x3xf32>
}

// -----

// Tests an output gradient made as [8, 3] and summed as its reshape to
// [2, 4, 3]: the GEMM reads the value the sum's input reshapes.
// CHECK-LABEL: func.func @reshaped_sum
// CHECK-NEXT: %[[W:.*]], %[[B:.*]] = graph.fused_gemm_bias_grad %arg0, %arg1 {summed = 0 : i64, transA = true}
// CHECK-NEXT: return %[[W]], %[[B]]
func.func @reshaped_sum(%gy: tensor<8x3xf32>, %x: tensor<8x5xf32>) -> (tensor<3x5xf32>, tensor<3xf32>) {
  %r = graph.reshape %gy : tensor<8x3xf32> -> tensor<2x4x3xf32>
  %b = graph.sum_to %r : tensor<2x4x3xf32> -> tensor<3xf32>
  %gw = graph.gemm %gy, %x {transA = true} : (tensor<8x3xf32>, tensor<8x5xf32>) -> tensor<3x5xf32>
  return %gw, %b : tensor<3x5xf32>, tensor<3xf32>
}

// -----

// Tests sums and GEMMs that stay apart: a GEMM with c, one with alpha 2,
// one reading the output gradient untransposed as a (its rows summed,
// not its columns), a sum that keeps two dims, a GEMM whose other operand
// is made after the sum (the fused op would read it before it exists),
// and one whose other operand an in-place all-reduce writes between the
// sum and the GEMM (the fused op would read it before the reduction).
// CHECK-LABEL: func.func @kept
// CHECK-NOT: fused_gemm_bias_grad
// CHECK: return
func.func @kept(%gy: tensor<8x3xf32>, %x: tensor<8x5xf32>, %c: tensor<5xf32>, %v: tensor<3x5xf32>, %gy3: tensor<2x4x3xf32>) -> (tensor<3xf32>, tensor<3x5xf32>, tensor<3xf32>, tensor<3x5xf32>, tensor<8x1xf32>, tensor<8x5xf32>, tensor<4x3xf32>, tensor<3x5xf32>, tensor<3xf32>, tensor<3x5xf32>, tensor<3xf32>, tensor<3x5xf32>, tensor<8x5xf32>) {
  %b1 = graph.sum_to %gy : tensor<8x3xf32> -> tensor<3xf32>
  %w1 = graph.gemm %gy, %x, %c {transA = true} : (tensor<8x3xf32>, tensor<8x5xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  %b2 = graph.sum_to %gy : tensor<8x3xf32> -> tensor<3xf32>
  %w2 = graph.gemm %gy, %x {transA = true, alpha = 2.0 : f64} : (tensor<8x3xf32>, tensor<8x5xf32>) -> tensor<3x5xf32>
  %b3 = graph.sum_to %gy : tensor<8x3xf32> -> tensor<8x1xf32>
  %w3 = graph.gemm %gy, %v : (tensor<8x3xf32>, tensor<3x5xf32>) -> tensor<8x5xf32>
  %b4 = graph.sum_to %gy3 : tensor<2x4x3xf32> -> tensor<4x3xf32>
  %r4 = graph.reshape %gy3 : tensor<2x4x3xf32> -> tensor<8x3xf32>
  %w4 = graph.gemm %r4, %x {transA = true} : (tensor<8x3xf32>, tensor<8x5xf32>) -> tensor<3x5xf32>
  %b5 = graph.sum_to %gy : tensor<8x3xf32> -> tensor<3xf32>
  %later = graph.neg %x : tensor<8x5xf32>
  %w5 = graph.gemm %gy, %later {transA = true} : (tensor<8x3xf32>, tensor<8x5xf32>) -> tensor<3x5xf32>
  %b6 = graph.sum_to %gy : tensor<8x3xf32> -> tensor<3xf32>
  %red = zero.all_reduce %x {reduction = #zero<reduction sum>} : tensor<8x5xf32>
  %w6 = graph.gemm %gy, %x {transA = true} : (tensor<8x3xf32>, tensor<8x5xf32>) -> tensor<3x5xf32>
  return %b1, %w1, %b2, %w2, %b3, %w3, %b4, %w4, %b5, %w5, %b6, %w6, %red : tensor<3xf32>, tensor<3x5xf32>, tensor<3xf32>, tensor<3x5xf32>, tensor<8x1xf32>, tensor<8x5xf32>, tensor<4x3xf32>, tensor<3x5xf32>, tensor<3xf32>, tensor<3x5xf32>, tensor<3xf32>, tensor<3x5xf32>, tensor<8x5xf32>
}
