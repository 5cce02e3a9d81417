// RUN: zeroc-opt %s -split-input-file -zero-widen-gather-grad | FileCheck %s

// Tests a bf16 embedding gradient: summed into an f32 tensor, then cast to
// bf16 for its readers.
// CHECK-LABEL: func.func @bf16
// CHECK-NEXT: %[[S:.*]] = graph.gather_grad %arg0, %arg1 {axis = 0 : i64} : tensor<2x8x32xbf16>, tensor<2x8xi64> -> tensor<61x32xf32>
// CHECK-NEXT: %[[G:.*]] = graph.cast %[[S]] : tensor<61x32xf32> -> tensor<61x32xbf16>
// CHECK-NEXT: %[[A:.*]] = graph.add %[[G]], %arg2
// CHECK-NEXT: return %[[A]], %[[G]]
func.func @bf16(%d: tensor<2x8x32xbf16>, %i: tensor<2x8xi64>, %w: tensor<61x32xbf16>) -> (tensor<61x32xbf16>, tensor<61x32xbf16>) {
  %0 = graph.gather_grad %d, %i {axis = 0 : i64} : tensor<2x8x32xbf16>, tensor<2x8xi64> -> tensor<61x32xbf16>
  %1 = graph.add %0, %w : tensor<61x32xbf16>, tensor<61x32xbf16> -> tensor<61x32xbf16>
  return %1, %0 : tensor<61x32xbf16>, tensor<61x32xbf16>
}

// -----

// Tests an f16 gradient with a padding row and another axis: both kept.
// CHECK-LABEL: func.func @f16_padded
// CHECK-NEXT: %[[S:.*]] = graph.gather_grad %arg0, %arg1 {axis = 0 : i64, padding_idx = 3 : i64} : tensor<4x5xf16>, tensor<4xi32> -> tensor<7x5xf32>
// CHECK-NEXT: %[[G:.*]] = graph.cast %[[S]] : tensor<7x5xf32> -> tensor<7x5xf16>
// CHECK-NEXT: %[[T:.*]] = graph.gather_grad %arg2, %arg1 {axis = 1 : i64} : tensor<2x4xf16>, tensor<4xi32> -> tensor<2x9xf32>
// CHECK-NEXT: %[[H:.*]] = graph.cast %[[T]] : tensor<2x9xf32> -> tensor<2x9xf16>
// CHECK-NEXT: return %[[G]], %[[H]]
func.func @f16_padded(%d: tensor<4x5xf16>, %i: tensor<4xi32>, %e: tensor<2x4xf16>) -> (tensor<7x5xf16>, tensor<2x9xf16>) {
  %0 = graph.gather_grad %d, %i {axis = 0 : i64, padding_idx = 3 : i64} : tensor<4x5xf16>, tensor<4xi32> -> tensor<7x5xf16>
  %1 = graph.gather_grad %e, %i {axis = 1 : i64} : tensor<2x4xf16>, tensor<4xi32> -> tensor<2x9xf16>
  return %0, %1 : tensor<7x5xf16>, tensor<2x9xf16>
}

// -----

// Tests that f32 and f64 gradients, and one already summed in f32, stay.
// CHECK-LABEL: func.func @wide
// CHECK-NEXT: graph.gather_grad %arg0, %arg2 {axis = 0 : i64} : tensor<4x3xf32>, tensor<4xi64> -> tensor<5x3xf32>
// CHECK-NEXT: graph.gather_grad %arg1, %arg2 {axis = 0 : i64} : tensor<4x3xf64>, tensor<4xi64> -> tensor<5x3xf64>
// CHECK-NEXT: graph.gather_grad %arg3, %arg2 {axis = 0 : i64} : tensor<4x3xbf16>, tensor<4xi64> -> tensor<5x3xf32>
// CHECK-NOT: graph.cast
// CHECK: return
func.func @wide(%a: tensor<4x3xf32>, %b: tensor<4x3xf64>, %i: tensor<4xi64>, %c: tensor<4x3xbf16>) -> (tensor<5x3xf32>, tensor<5x3xf64>, tensor<5x3xf32>) {
  %0 = graph.gather_grad %a, %i {axis = 0 : i64} : tensor<4x3xf32>, tensor<4xi64> -> tensor<5x3xf32>
  %1 = graph.gather_grad %b, %i {axis = 0 : i64} : tensor<4x3xf64>, tensor<4xi64> -> tensor<5x3xf64>
  %2 = graph.gather_grad %c, %i {axis = 0 : i64} : tensor<4x3xbf16>, tensor<4xi64> -> tensor<5x3xf32>
  return %0, %1, %2 : tensor<5x3xf32>, tensor<5x3xf64>, tensor<5x3xf32>
}
