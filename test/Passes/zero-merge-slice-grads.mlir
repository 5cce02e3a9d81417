// RUN: zeroc-opt %s -split-input-file -zero-merge-slice-grads | FileCheck %s

// Tests GPT-2's QKV gradient: three slice gradients that tile the last
// axis, summed in autodiff's order (v + k, then + q), are one concat in
// the slices' order.
// CHECK-LABEL: func.func @qkv
// CHECK-NEXT: %[[C:.*]] = graph.concat %arg0, %arg1, %arg2 {axis = 2 : i64} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x12xf32>
// CHECK-NEXT: return %[[C]]
func.func @qkv(%q: tensor<2x3x4xf32>, %k: tensor<2x3x4xf32>, %v: tensor<2x3x4xf32>) -> tensor<2x3x12xf32> {
  %0 = graph.slice_grad %v {ends = [2, 3, 12], starts = [0, 0, 8], steps = [1, 1, 1]} : tensor<2x3x4xf32> -> tensor<2x3x12xf32>
  %1 = graph.slice_grad %k {ends = [2, 3, 8], starts = [0, 0, 4], steps = [1, 1, 1]} : tensor<2x3x4xf32> -> tensor<2x3x12xf32>
  %2 = graph.slice_grad %q {ends = [2, 3, 4], starts = [0, 0, 0], steps = [1, 1, 1]} : tensor<2x3x4xf32> -> tensor<2x3x12xf32>
  %3 = graph.add %0, %1 : tensor<2x3x12xf32>, tensor<2x3x12xf32> -> tensor<2x3x12xf32>
  %4 = graph.add %3, %2 : tensor<2x3x12xf32>, tensor<2x3x12xf32> -> tensor<2x3x12xf32>
  return %4 : tensor<2x3x12xf32>
}

// -----

// Tests two adjacent bands that do not cover the axis: a slice gradient of
// their concat over the joint band.
// CHECK-LABEL: func.func @partial
// CHECK-NEXT: %[[C:.*]] = graph.concat %arg0, %arg1 {axis = 0 : i64} : (tensor<1x4xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT: %[[G:.*]] = graph.slice_grad %[[C]] {ends = [4, 4], starts = [1, 0], steps = [1, 1]} : tensor<3x4xf32> -> tensor<5x4xf32>
// CHECK-NEXT: return %[[G]]
func.func @partial(%a: tensor<1x4xf32>, %b: tensor<2x4xf32>) -> tensor<5x4xf32> {
  %0 = graph.slice_grad %a {ends = [2, 4], starts = [1, 0], steps = [1, 1]} : tensor<1x4xf32> -> tensor<5x4xf32>
  %1 = graph.slice_grad %b {ends = [4, 4], starts = [2, 0], steps = [1, 1]} : tensor<2x4xf32> -> tensor<5x4xf32>
  %2 = graph.add %0, %1 : tensor<5x4xf32>, tensor<5x4xf32> -> tensor<5x4xf32>
  return %2 : tensor<5x4xf32>
}

// -----

// Tests sums that stay: overlapping bands, a gap between them, bands along
// two axes, a step of 2, and a slice gradient another op reads too.
// CHECK-LABEL: func.func @stay
// CHECK-NOT: graph.concat
func.func @stay(%a: tensor<2x4xf32>, %b: tensor<2x2xf32>, %c: tensor<1x8xf32>, %d: tensor<2x2xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  %a0 = graph.slice_grad %a {ends = [2, 4], starts = [0, 0], steps = [1, 1]} : tensor<2x4xf32> -> tensor<2x8xf32>
  %a1 = graph.slice_grad %a {ends = [2, 7], starts = [0, 3], steps = [1, 1]} : tensor<2x4xf32> -> tensor<2x8xf32>
  %overlap = graph.add %a0, %a1 : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  %b0 = graph.slice_grad %b {ends = [2, 2], starts = [0, 0], steps = [1, 1]} : tensor<2x2xf32> -> tensor<2x8xf32>
  %b1 = graph.slice_grad %b {ends = [2, 6], starts = [0, 4], steps = [1, 1]} : tensor<2x2xf32> -> tensor<2x8xf32>
  %gap = graph.add %b0, %b1 : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  %c0 = graph.slice_grad %c {ends = [1, 8], starts = [0, 0], steps = [1, 1]} : tensor<1x8xf32> -> tensor<2x8xf32>
  %c1 = graph.slice_grad %b {ends = [2, 2], starts = [0, 0], steps = [1, 1]} : tensor<2x2xf32> -> tensor<2x8xf32>
  %axes = graph.add %c0, %c1 : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  %d0 = graph.slice_grad %d {ends = [2, 4], starts = [0, 0], steps = [1, 2]} : tensor<2x2xf32> -> tensor<2x8xf32>
  %d1 = graph.slice_grad %a {ends = [2, 8], starts = [0, 4], steps = [1, 1]} : tensor<2x4xf32> -> tensor<2x8xf32>
  %strided = graph.add %d0, %d1 : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  %e0 = graph.slice_grad %a {ends = [2, 4], starts = [0, 0], steps = [1, 1]} : tensor<2x4xf32> -> tensor<2x8xf32>
  %e1 = graph.slice_grad %a {ends = [2, 8], starts = [0, 4], steps = [1, 1]} : tensor<2x4xf32> -> tensor<2x8xf32>
  %shared = graph.add %e0, %e1 : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  %also = graph.neg %e1 : tensor<2x8xf32>
  return %overlap, %gap, %axes, %strided, %shared, %also : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
}
