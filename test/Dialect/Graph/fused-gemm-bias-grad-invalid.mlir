// RUN: zeroc-opt %s -split-input-file -verify-diagnostics

// Tests the verifier of graph.fused_gemm_bias_grad: rank-2 operands whose
// inner dimensions agree, the product's result type, `summed` naming an
// operand stored [K, L] (a read transposed, b read as stored), and a bias
// gradient of that operand's L elements, as [L] or [1, ..., 1, L].

func.func @ok(%gy: tensor<8x3xf32>, %x: tensor<8x5xf32>, %w: tensor<3x8xf32>) -> (tensor<3x5xf32>, tensor<1x3xf32>, tensor<3x5xf32>, tensor<5xf32>) {
  %r, %b = graph.fused_gemm_bias_grad %gy, %x {transA = true, summed = 0 : i64} : (tensor<8x3xf32>, tensor<8x5xf32>) -> (tensor<3x5xf32>, tensor<1x3xf32>)
  %r2, %b2 = graph.fused_gemm_bias_grad %w, %x {summed = 1 : i64} : (tensor<3x8xf32>, tensor<8x5xf32>) -> (tensor<3x5xf32>, tensor<5xf32>)
  return %r, %b, %r2, %b2 : tensor<3x5xf32>, tensor<1x3xf32>, tensor<3x5xf32>, tensor<5xf32>
}

// -----

func.func @rank(%gy: tensor<2x8x3xf32>, %x: tensor<8x5xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'graph.fused_gemm_bias_grad' op a and b must have rank 2}}
  %r, %b = graph.fused_gemm_bias_grad %gy, %x {transA = true, summed = 0 : i64} : (tensor<2x8x3xf32>, tensor<8x5xf32>) -> (tensor<3x5xf32>, tensor<3xf32>)
  return %b : tensor<3xf32>
}

// -----

func.func @inner(%gy: tensor<8x3xf32>, %x: tensor<7x5xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'graph.fused_gemm_bias_grad' op inner dimensions differ: 8 and 7}}
  %r, %b = graph.fused_gemm_bias_grad %gy, %x {transA = true, summed = 0 : i64} : (tensor<8x3xf32>, tensor<7x5xf32>) -> (tensor<3x5xf32>, tensor<3xf32>)
  return %b : tensor<3xf32>
}

// -----

func.func @result(%gy: tensor<8x3xf32>, %x: tensor<8x5xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'graph.fused_gemm_bias_grad' op result has type 'tensor<5x3xf32>'; expected 3x5}}
  %r, %b = graph.fused_gemm_bias_grad %gy, %x {transA = true, summed = 0 : i64} : (tensor<8x3xf32>, tensor<8x5xf32>) -> (tensor<5x3xf32>, tensor<3xf32>)
  return %b : tensor<3xf32>
}

// -----

func.func @summed(%gy: tensor<8x3xf32>, %x: tensor<8x5xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'graph.fused_gemm_bias_grad' op summed must be 0 (a) or 1 (b), got 2}}
  %r, %b = graph.fused_gemm_bias_grad %gy, %x {transA = true, summed = 2 : i64} : (tensor<8x3xf32>, tensor<8x5xf32>) -> (tensor<3x5xf32>, tensor<3xf32>)
  return %b : tensor<3xf32>
}

// -----

func.func @a_not_transposed(%w: tensor<3x8xf32>, %x: tensor<8x5xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'graph.fused_gemm_bias_grad' op sums a's columns over the inner dimension, so a must be read transposed (transA)}}
  %r, %b = graph.fused_gemm_bias_grad %w, %x {summed = 0 : i64} : (tensor<3x8xf32>, tensor<8x5xf32>) -> (tensor<3x5xf32>, tensor<3xf32>)
  return %b : tensor<3xf32>
}

// -----

func.func @b_transposed(%w: tensor<3x8xf32>, %x: tensor<5x8xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{'graph.fused_gemm_bias_grad' op sums b's columns over the inner dimension, so b must be read as stored (no transB)}}
  %r, %b = graph.fused_gemm_bias_grad %w, %x {transB = true, summed = 1 : i64} : (tensor<3x8xf32>, tensor<5x8xf32>) -> (tensor<3x5xf32>, tensor<5xf32>)
  return %b : tensor<5xf32>
}

// -----

func.func @bias_length(%gy: tensor<8x3xf32>, %x: tensor<8x5xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{'graph.fused_gemm_bias_grad' op bias_grad has type 'tensor<5xf32>'; expected 3 elements, in shape [3] or [1, ..., 3]}}
  %r, %b = graph.fused_gemm_bias_grad %gy, %x {transA = true, summed = 0 : i64} : (tensor<8x3xf32>, tensor<8x5xf32>) -> (tensor<3x5xf32>, tensor<5xf32>)
  return %b : tensor<5xf32>
}

// -----

func.func @bias_shape(%gy: tensor<8x3xf32>, %x: tensor<8x5xf32>) -> tensor<3x1xf32> {
  // expected-error @+1 {{'graph.fused_gemm_bias_grad' op bias_grad has type 'tensor<3x1xf32>'; expected 3 elements, in shape [3] or [1, ..., 3]}}
  %r, %b = graph.fused_gemm_bias_grad %gy, %x {transA = true, summed = 0 : i64} : (tensor<8x3xf32>, tensor<8x5xf32>) -> (tensor<3x5xf32>, tensor<3x1xf32>)
  return %b : tensor<3x1xf32>
}

// -----

func.func @element_type(%gy: tensor<8x3xf32>, %x: tensor<8x5xf32>) -> tensor<3xf16> {
  // expected-error @+1 {{'graph.fused_gemm_bias_grad' op failed to verify that all of {a, b, result, bias_grad} have same element type}}
  %r, %b = graph.fused_gemm_bias_grad %gy, %x {transA = true, summed = 0 : i64} : (tensor<8x3xf32>, tensor<8x5xf32>) -> (tensor<3x5xf32>, tensor<3xf16>)
  return %b : tensor<3xf16>
}
