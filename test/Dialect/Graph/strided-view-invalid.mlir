// RUN: zeroc-opt %s -split-input-file -verify-diagnostics

// Tests the verifier of graph.strided_view: one stride per result dim, none
// negative, every element viewed inside the input, a matrix a GEMM can read
// (unit stride along one of the last two dims), and only matmuls reading it.

func.func @stride_count(%x: tensor<4x6xf32>, %w: tensor<3x2xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{'graph.strided_view' op has 3 strides for a rank-2 result}}
  %v = graph.strided_view %x {offset = 0 : i64, strides = array<i64: 6, 1, 1>} : tensor<4x6xf32> -> tensor<2x3xf32>
  %y = graph.matmul %v, %w : tensor<2x3xf32>, tensor<3x2xf32> -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

func.func @negative(%x: tensor<4x6xf32>, %w: tensor<3x2xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{'graph.strided_view' op offset and strides must not be negative}}
  %v = graph.strided_view %x {offset = 6 : i64, strides = array<i64: -6, 1>} : tensor<4x6xf32> -> tensor<2x3xf32>
  %y = graph.matmul %v, %w : tensor<2x3xf32>, tensor<3x2xf32> -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

func.func @out_of_bounds(%x: tensor<4x6xf32>, %w: tensor<3x2xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{'graph.strided_view' op views element 24 of an input of 24 elements}}
  %v = graph.strided_view %x {offset = 16 : i64, strides = array<i64: 6, 1>} : tensor<4x6xf32> -> tensor<2x3xf32>
  %y = graph.matmul %v, %w : tensor<2x3xf32>, tensor<3x2xf32> -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

func.func @not_a_matrix(%x: tensor<4x6xf32>, %w: tensor<3x2xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{'graph.strided_view' op needs a rank of at least 2 and a last or second-last dim of stride 1 (a matrix a GEMM can read)}}
  %v = graph.strided_view %x {offset = 0 : i64, strides = array<i64: 6, 2>} : tensor<4x6xf32> -> tensor<2x3xf32>
  %y = graph.matmul %v, %w : tensor<2x3xf32>, tensor<3x2xf32> -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

func.func @read_by_neg(%x: tensor<4x6xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'graph.strided_view' op is read by 'graph.neg'; only matmuls and fused attentions read strided views}}
  %v = graph.strided_view %x {offset = 0 : i64, strides = array<i64: 6, 1>} : tensor<4x6xf32> -> tensor<2x3xf32>
  // expected-note @+1 {{read here}}
  %n = graph.neg %v : tensor<2x3xf32>
  return %n : tensor<2x3xf32>
}
