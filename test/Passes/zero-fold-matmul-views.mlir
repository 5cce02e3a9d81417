// RUN: zeroc-opt %s -split-input-file -zero-fold-matmul-views | FileCheck %s

// Tests attention's head split (B=2, T=4, H=2, D=3, C=6): q, k and v are
// slices of qkv [2, 4, 18], reshaped to [2, 4, 2, 3] and transposed, k to
// [B, H, D, T]. Each becomes one strided view of qkv (k's last two dims
// column-major), q's shared by both of its matmuls; no copy is left.
// CHECK-LABEL: func.func @head_split
// CHECK-NOT: graph.slice
// CHECK-NOT: graph.transpose
// CHECK-DAG: %[[Q:.*]] = graph.strided_view %arg0 {offset = 0 : i64, strides = array<i64: 72, 3, 18, 1>} : tensor<2x4x18xf32> -> tensor<2x2x4x3xf32>
// CHECK-DAG: %[[K:.*]] = graph.strided_view %arg0 {offset = 6 : i64, strides = array<i64: 72, 3, 1, 18>} : tensor<2x4x18xf32> -> tensor<2x2x3x4xf32>
// CHECK-DAG: %[[V:.*]] = graph.strided_view %arg0 {offset = 12 : i64, strides = array<i64: 72, 3, 18, 1>} : tensor<2x4x18xf32> -> tensor<2x2x4x3xf32>
// CHECK: %[[S:.*]] = graph.matmul %[[Q]], %[[K]]
// CHECK: %[[O:.*]] = graph.matmul %[[S]], %[[V]]
// CHECK: graph.matmul %[[Q]], %[[Q]] {transB = true}
// CHECK-NOT: graph.strided_view
func.func @head_split(%qkv: tensor<2x4x18xf32>) -> (tensor<2x2x4x3xf32>, tensor<2x2x4x4xf32>) {
  %q0 = graph.slice %qkv {starts = [0, 0, 0], ends = [2, 4, 6], steps = [1, 1, 1]} : tensor<2x4x18xf32> -> tensor<2x4x6xf32>
  %k0 = graph.slice %qkv {starts = [0, 0, 6], ends = [2, 4, 12], steps = [1, 1, 1]} : tensor<2x4x18xf32> -> tensor<2x4x6xf32>
  %v0 = graph.slice %qkv {starts = [0, 0, 12], ends = [2, 4, 18], steps = [1, 1, 1]} : tensor<2x4x18xf32> -> tensor<2x4x6xf32>
  %q1 = graph.reshape %q0 : tensor<2x4x6xf32> -> tensor<2x4x2x3xf32>
  %k1 = graph.reshape %k0 : tensor<2x4x6xf32> -> tensor<2x4x2x3xf32>
  %v1 = graph.reshape %v0 : tensor<2x4x6xf32> -> tensor<2x4x2x3xf32>
  %q = graph.transpose %q1 {perm = [0, 2, 1, 3]} : tensor<2x4x2x3xf32> -> tensor<2x2x4x3xf32>
  %k = graph.transpose %k1 {perm = [0, 2, 3, 1]} : tensor<2x4x2x3xf32> -> tensor<2x2x3x4xf32>
  %v = graph.transpose %v1 {perm = [0, 2, 1, 3]} : tensor<2x4x2x3xf32> -> tensor<2x2x4x3xf32>
  %s = graph.matmul %q, %k : tensor<2x2x4x3xf32>, tensor<2x2x3x4xf32> -> tensor<2x2x4x4xf32>
  %o = graph.matmul %s, %v : tensor<2x2x4x4xf32>, tensor<2x2x4x3xf32> -> tensor<2x2x4x3xf32>
  %qq = graph.matmul %q, %q {transB = true} : tensor<2x2x4x3xf32>, tensor<2x2x4x3xf32> -> tensor<2x2x4x4xf32>
  return %o, %qq : tensor<2x2x4x3xf32>, tensor<2x2x4x4xf32>
}

// -----

// Tests that a copy with another user stays for it (the matmul still reads
// a view), and that a chain of reshapes alone is left alone: a reshape
// copies nothing.
// CHECK-LABEL: func.func @kept
// CHECK: %[[T:.*]] = graph.transpose %arg0
// CHECK: %[[V:.*]] = graph.strided_view %arg0 {offset = 0 : i64, strides = array<i64: 1, 4>} : tensor<3x4xf32> -> tensor<4x3xf32>
// CHECK: graph.matmul %[[V]], %arg1
// CHECK: %[[R:.*]] = graph.reshape %arg2
// CHECK: graph.matmul %[[R]], %arg1
// CHECK: graph.neg %[[T]]
func.func @kept(%x: tensor<3x4xf32>, %w: tensor<3x5xf32>, %y: tensor<12xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x3xf32>) {
  %t = graph.transpose %x {perm = [1, 0]} : tensor<3x4xf32> -> tensor<4x3xf32>
  %a = graph.matmul %t, %w : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  %r = graph.reshape %y : tensor<12xf32> -> tensor<4x3xf32>
  %b = graph.matmul %r, %w : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  %n = graph.neg %t : tensor<4x3xf32>
  return %a, %b, %n : tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x3xf32>
}

// -----

// Tests chains that are not a GEMM operand's strides and stay copies: a
// transpose that moves the unit-stride dim into the batch, and a reshape
// that merges dims a slice left apart. A slice of rows is a view.
// CHECK-LABEL: func.func @not_a_matrix
// CHECK: %[[T:.*]] = graph.transpose %arg0
// CHECK: %[[P:.*]] = graph.strided_view %arg1 {offset = 0 : i64, strides = array<i64: 2, 1>} : tensor<4x2xf32> -> tensor<3x2xf32>
// CHECK: graph.matmul %[[T]], %[[P]]
// CHECK: graph.slice %arg2
// CHECK: graph.reshape
// CHECK: graph.reshape
// CHECK-NOT: graph.strided_view
func.func @not_a_matrix(%x: tensor<2x3x4xf32>, %w: tensor<4x2xf32>, %z: tensor<4x6xf32>, %u: tensor<10x5xf32>) -> (tensor<4x2x2xf32>, tensor<2x5xf32>) {
  %t = graph.transpose %x {perm = [2, 0, 1]} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %p = graph.slice %w {starts = [0, 0], ends = [3, 2], steps = [1, 1]} : tensor<4x2xf32> -> tensor<3x2xf32>
  %a = graph.matmul %t, %p : tensor<4x2x3xf32>, tensor<3x2xf32> -> tensor<4x2x2xf32>
  %s = graph.slice %z {starts = [0, 0], ends = [4, 5], steps = [1, 1]} : tensor<4x6xf32> -> tensor<4x5xf32>
  %m = graph.reshape %s : tensor<4x5xf32> -> tensor<20xf32>
  %m2 = graph.reshape %m : tensor<20xf32> -> tensor<2x10xf32>
  %b = graph.matmul %m2, %u : tensor<2x10xf32>, tensor<10x5xf32> -> tensor<2x5xf32>
  return %a, %b : tensor<4x2x2xf32>, tensor<2x5xf32>
}

// -----

// Tests products that only a transpose reads: the matmul stores them
// transposed (result_perm) when a matrix dim stays last, attention's
// output to [B, T, H, D] and k's gradient from [B, H, D, T] alike; a
// product with another reader, or a transpose that moves both matrix dims,
// stays.
// CHECK-LABEL: func.func @stored_transposed
// CHECK: %[[O:.*]] = graph.matmul %arg0, %arg1 {result_perm = array<i64: 0, 2, 1, 3>} : tensor<2x2x4x4xf32>, tensor<2x2x4x3xf32> -> tensor<2x4x2x3xf32>
// CHECK: %[[DK:.*]] = graph.matmul %arg1, %arg0 {result_perm = array<i64: 0, 3, 1, 2>, transA = true} : tensor<2x2x4x3xf32>, tensor<2x2x4x4xf32> -> tensor<2x4x2x3xf32>
// CHECK: %[[S:.*]] = graph.matmul %arg0, %arg1 : tensor<2x2x4x4xf32>, tensor<2x2x4x3xf32> -> tensor<2x2x4x3xf32>
// CHECK: graph.transpose %[[S]] {perm = [0, 2, 1, 3]}
// CHECK: %[[M:.*]] = graph.matmul %arg0, %arg1 : tensor<2x2x4x4xf32>, tensor<2x2x4x3xf32> -> tensor<2x2x4x3xf32>
// CHECK: graph.transpose %[[M]] {perm = [2, 3, 0, 1]}
func.func @stored_transposed(%p: tensor<2x2x4x4xf32>, %v: tensor<2x2x4x3xf32>) -> (tensor<2x4x2x3xf32>, tensor<2x4x2x3xf32>, tensor<2x4x2x3xf32>, tensor<2x2x4x3xf32>, tensor<4x3x2x2xf32>) {
  %o = graph.matmul %p, %v : tensor<2x2x4x4xf32>, tensor<2x2x4x3xf32> -> tensor<2x2x4x3xf32>
  %ot = graph.transpose %o {perm = [0, 2, 1, 3]} : tensor<2x2x4x3xf32> -> tensor<2x4x2x3xf32>
  %dk = graph.matmul %v, %p {transA = true} : tensor<2x2x4x3xf32>, tensor<2x2x4x4xf32> -> tensor<2x2x3x4xf32>
  %dkt = graph.transpose %dk {perm = [0, 3, 1, 2]} : tensor<2x2x3x4xf32> -> tensor<2x4x2x3xf32>
  %s = graph.matmul %p, %v : tensor<2x2x4x4xf32>, tensor<2x2x4x3xf32> -> tensor<2x2x4x3xf32>
  %st = graph.transpose %s {perm = [0, 2, 1, 3]} : tensor<2x2x4x3xf32> -> tensor<2x4x2x3xf32>
  %m = graph.matmul %p, %v : tensor<2x2x4x4xf32>, tensor<2x2x4x3xf32> -> tensor<2x2x4x3xf32>
  %mt = graph.transpose %m {perm = [2, 3, 0, 1]} : tensor<2x2x4x3xf32> -> tensor<4x3x2x2xf32>
  return %ot, %dkt, %st, %s, %mt : tensor<2x4x2x3xf32>, tensor<2x4x2x3xf32>, tensor<2x4x2x3xf32>, tensor<2x2x4x3xf32>, tensor<4x3x2x2xf32>
}

// -----

// Tests that a product with a vector operand keeps its transpose (its last
// two dims are not a matrix's), and that a chain from a released buffer (a
// stage-3 gathered parameter, released after its last direct reader) stays
// a copy: a view would be read after the release.
// CHECK-LABEL: func.func @kept_copies
// CHECK: %[[P:.*]] = graph.matmul %arg0, %arg1 : tensor<2x4x3xf32>, tensor<3xf32> -> tensor<2x4xf32>
// CHECK: graph.transpose %[[P]] {perm = [1, 0]}
// CHECK: graph.transpose %{{.*}} {perm = [1, 0]} : tensor<3x4xf32> -> tensor<4x3xf32>
// CHECK: zero.release
// CHECK-NOT: graph.strided_view
func.func @kept_copies(%x: tensor<2x4x3xf32>, %v: tensor<3xf32>, %s: !zero.shard<params, f32, 6, device>, %y: tensor<5x4xf32>) -> (tensor<4x2xf32>, tensor<5x3xf32>) {
  %f = zero.all_gather %s : !zero.shard<params, f32, 6, device> -> !zero.flat<params, f32, 12, 2>
  %p = graph.matmul %x, %v : tensor<2x4x3xf32>, tensor<3xf32> -> tensor<2x4xf32>
  %pt = graph.transpose %p {perm = [1, 0]} : tensor<2x4xf32> -> tensor<4x2xf32>
  %w = zero.view %f {offset = 0 : i64} : !zero.flat<params, f32, 12, 2> -> tensor<3x4xf32>
  %wt = graph.transpose %w {perm = [1, 0]} : tensor<3x4xf32> -> tensor<4x3xf32>
  zero.release %f : !zero.flat<params, f32, 12, 2>
  %o = graph.matmul %y, %wt : tensor<5x4xf32>, tensor<4x3xf32> -> tensor<5x3xf32>
  return %pt, %o : tensor<4x2xf32>, tensor<5x3xf32>
}
