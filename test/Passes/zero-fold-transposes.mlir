// RUN: zeroc-opt %s -split-input-file -zero-fold-transposes | FileCheck %s

// Tests that a tied head, matmul(h, transpose(wte)) with a rank-3 h, becomes
// one GEMM reading wte with transB, h's batch dims folded into M.
// CHECK-LABEL: func.func @tied_head
// CHECK-NOT: graph.transpose
// CHECK: %[[H:.*]] = graph.reshape %arg0 : tensor<2x8x4xf32> -> tensor<16x4xf32>
// CHECK: %[[G:.*]] = graph.gemm %[[H]], %arg1 {transB = true} : (tensor<16x4xf32>, tensor<61x4xf32>) -> tensor<16x61xf32>
// CHECK: %[[R:.*]] = graph.reshape %[[G]] : tensor<16x61xf32> -> tensor<2x8x61xf32>
// CHECK: return %[[R]]
func.func @tied_head(%h: tensor<2x8x4xf32>, %wte: tensor<61x4xf32>) -> tensor<2x8x61xf32> {
  %t = graph.transpose %wte {perm = [1, 0]} : tensor<61x4xf32> -> tensor<4x61xf32>
  %y = graph.matmul %h, %t : tensor<2x8x4xf32>, tensor<4x61xf32> -> tensor<2x8x61xf32>
  return %y : tensor<2x8x61xf32>
}

// -----

// Tests a weight gradient, transpose(matmul(transpose(x), g)): no transpose
// is left, the GEMM computes g^T x directly.
// CHECK-LABEL: func.func @weight_grad
// CHECK-NOT: graph.transpose
// CHECK: graph.gemm %arg1, %arg0 {transA = true} : (tensor<16x61xf32>, tensor<16x4xf32>) -> tensor<61x4xf32>
func.func @weight_grad(%x: tensor<16x4xf32>, %g: tensor<16x61xf32>) -> tensor<61x4xf32> {
  %xt = graph.transpose %x {perm = [1, 0]} : tensor<16x4xf32> -> tensor<4x16xf32>
  %dwt = graph.matmul %xt, %g : tensor<4x16xf32>, tensor<16x61xf32> -> tensor<4x61xf32>
  %dw = graph.transpose %dwt {perm = [1, 0]} : tensor<4x61xf32> -> tensor<61x4xf32>
  return %dw : tensor<61x4xf32>
}

// -----

// Tests that a transpose with another user stays for it, that a gemm with a
// bias keeps its transposed operand, and that a batched (rank-3) transpose
// becomes the matmul's flag.
// CHECK-LABEL: func.func @kept
// CHECK: %[[T:.*]] = graph.transpose %arg1
// CHECK: graph.gemm %arg0, %arg1 {{.*}}transB = true
// CHECK: graph.gemm %arg0, %[[T]], %arg2
// CHECK-NOT: graph.transpose
// CHECK: graph.matmul %arg3, %arg4 {transB = true} : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x3xf32>
// CHECK: return %[[T]]
func.func @kept(%x: tensor<3x4xf32>, %w: tensor<5x4xf32>, %c: tensor<5xf32>, %q: tensor<2x3x4xf32>, %k: tensor<2x3x4xf32>)
    -> (tensor<4x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<2x3x3xf32>) {
  %t = graph.transpose %w {perm = [1, 0]} : tensor<5x4xf32> -> tensor<4x5xf32>
  %a = graph.matmul %x, %t : tensor<3x4xf32>, tensor<4x5xf32> -> tensor<3x5xf32>
  %b = graph.gemm %x, %t, %c : (tensor<3x4xf32>, tensor<4x5xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  %kt = graph.transpose %k {perm = [0, 2, 1]} : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
  %s = graph.matmul %q, %kt : tensor<2x3x4xf32>, tensor<2x4x3xf32> -> tensor<2x3x3xf32>
  return %t, %a, %b, %s : tensor<4x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<2x3x3xf32>
}

// -----

// Tests the tied head's weight gradient as autodiff writes it for a unit
// batch: transpose(sum_to(matmul(transpose(h), g))) with rank-3 h and g.
// The sum_to over the unit dim is a reshape, the unit-batch transpose a
// GEMM flag, and the outer transpose swaps the operands: one GEMM g^T h.
// CHECK-LABEL: func.func @unit_batch_weight_grad
// CHECK-NOT: graph.transpose
// CHECK-NOT: graph.sum_to
// CHECK-NOT: graph.matmul
// CHECK-DAG: %[[H:.*]] = graph.reshape %arg0 : tensor<1x8x4xf32> -> tensor<8x4xf32>
// CHECK-DAG: %[[G:.*]] = graph.reshape %arg1 : tensor<1x8x61xf32> -> tensor<8x61xf32>
// CHECK: %[[W:.*]] = graph.gemm %[[G]], %[[H]] {transA = true} : (tensor<8x61xf32>, tensor<8x4xf32>) -> tensor<61x4xf32>
// CHECK: return %[[W]]
func.func @unit_batch_weight_grad(%h: tensor<1x8x4xf32>, %g: tensor<1x8x61xf32>) -> tensor<61x4xf32> {
  %ht = graph.transpose %h {perm = [0, 2, 1]} : tensor<1x8x4xf32> -> tensor<1x4x8xf32>
  %p = graph.matmul %ht, %g : tensor<1x4x8xf32>, tensor<1x8x61xf32> -> tensor<1x4x61xf32>
  %s = graph.sum_to %p : tensor<1x4x61xf32> -> tensor<4x61xf32>
  %dw = graph.transpose %s {perm = [1, 0]} : tensor<4x61xf32> -> tensor<61x4xf32>
  return %dw : tensor<61x4xf32>
}

// -----

// Tests that a sum_to which sums something stays, that a transpose moving
// a unit dim is no matrix transpose, and that reshape(reshape(x)) is one
// reshape.
// CHECK-LABEL: func.func @not_unit
// CHECK: graph.sum_to %arg0 : tensor<2x4x61xf32> -> tensor<4x61xf32>
// CHECK: graph.transpose %arg1 {perm = [1, 2, 0]}
// CHECK: %[[R:.*]] = graph.reshape %arg2 : tensor<2x6xf32> -> tensor<12xf32>
// CHECK: return {{.*}}, {{.*}}, %[[R]]
func.func @not_unit(%p: tensor<2x4x61xf32>, %x: tensor<1x4x8xf32>, %y: tensor<2x6xf32>)
    -> (tensor<4x61xf32>, tensor<4x8x1xf32>, tensor<12xf32>) {
  %s = graph.sum_to %p : tensor<2x4x61xf32> -> tensor<4x61xf32>
  %t = graph.transpose %x {perm = [1, 2, 0]} : tensor<1x4x8xf32> -> tensor<4x8x1xf32>
  %r1 = graph.reshape %y : tensor<2x6xf32> -> tensor<3x4xf32>
  %r2 = graph.reshape %r1 : tensor<3x4xf32> -> tensor<12xf32>
  return %s, %t, %r2 : tensor<4x61xf32>, tensor<4x8x1xf32>, tensor<12xf32>
}

// -----

// Tests the weight gradient of a linear layer applied to a batch, as
// autodiff writes it: transpose(sum_to(matmul(transpose(x), g))) with
// batch dims [2, 3]. The batch folds into the rows of one GEMM, which the
// outer transpose turns into g^T x: no [2, 3, K, N] product is left.
// CHECK-LABEL: func.func @batched_weight_grad
// CHECK-NOT: graph.transpose
// CHECK-NOT: graph.sum_to
// CHECK-NOT: graph.matmul
// CHECK-DAG: %[[X:.*]] = graph.reshape %arg0 : tensor<2x3x8x4xf32> -> tensor<48x4xf32>
// CHECK-DAG: %[[G:.*]] = graph.reshape %arg1 : tensor<2x3x8x61xf32> -> tensor<48x61xf32>
// CHECK: %[[W:.*]] = graph.gemm %[[G]], %[[X]] {transA = true} : (tensor<48x61xf32>, tensor<48x4xf32>) -> tensor<61x4xf32>
// CHECK: return %[[W]]
func.func @batched_weight_grad(%x: tensor<2x3x8x4xf32>, %g: tensor<2x3x8x61xf32>) -> tensor<61x4xf32> {
  %xt = graph.transpose %x {perm = [0, 1, 3, 2]} : tensor<2x3x8x4xf32> -> tensor<2x3x4x8xf32>
  %p = graph.matmul %xt, %g : tensor<2x3x4x8xf32>, tensor<2x3x8x61xf32> -> tensor<2x3x4x61xf32>
  %s = graph.sum_to %p : tensor<2x3x4x61xf32> -> tensor<4x61xf32>
  %dw = graph.transpose %s {perm = [1, 0]} : tensor<4x61xf32> -> tensor<61x4xf32>
  return %dw : tensor<61x4xf32>
}

// -----

// Tests the batched products that are no weight gradient: a sum down to a
// batch of its own ([3, 4, 61] keeps a batch dim), a g broadcast over x's
// batch, a product also used unsummed, and a transpose that also moves a
// batch dim all stay.
// CHECK-LABEL: func.func @batched_kept
// CHECK-COUNT-4: graph.matmul
// CHECK-NOT: graph.gemm
func.func @batched_kept(%x: tensor<2x3x8x4xf32>, %g: tensor<2x3x8x61xf32>, %g1: tensor<1x3x8x61xf32>)
    -> (tensor<3x4x61xf32>, tensor<4x61xf32>, tensor<4x61xf32>, tensor<2x3x4x61xf32>, tensor<4x61xf32>) {
  %xt = graph.transpose %x {perm = [0, 1, 3, 2]} : tensor<2x3x8x4xf32> -> tensor<2x3x4x8xf32>
  %p = graph.matmul %xt, %g : tensor<2x3x4x8xf32>, tensor<2x3x8x61xf32> -> tensor<2x3x4x61xf32>
  %s = graph.sum_to %p : tensor<2x3x4x61xf32> -> tensor<3x4x61xf32>
  %p1 = graph.matmul %xt, %g1 : tensor<2x3x4x8xf32>, tensor<1x3x8x61xf32> -> tensor<2x3x4x61xf32>
  %s1 = graph.sum_to %p1 : tensor<2x3x4x61xf32> -> tensor<4x61xf32>
  %p2 = graph.matmul %xt, %g : tensor<2x3x4x8xf32>, tensor<2x3x8x61xf32> -> tensor<2x3x4x61xf32>
  %s2 = graph.sum_to %p2 : tensor<2x3x4x61xf32> -> tensor<4x61xf32>
  %x2 = graph.transpose %x {perm = [1, 0, 3, 2]} : tensor<2x3x8x4xf32> -> tensor<3x2x4x8xf32>
  %g2 = graph.transpose %g {perm = [1, 0, 2, 3]} : tensor<2x3x8x61xf32> -> tensor<3x2x8x61xf32>
  %p3 = graph.matmul %x2, %g2 : tensor<3x2x4x8xf32>, tensor<3x2x8x61xf32> -> tensor<3x2x4x61xf32>
  %s3 = graph.sum_to %p3 : tensor<3x2x4x61xf32> -> tensor<4x61xf32>
  return %s, %s1, %s2, %p2, %s3 : tensor<3x4x61xf32>, tensor<4x61xf32>, tensor<4x61xf32>, tensor<2x3x4x61xf32>, tensor<4x61xf32>
}

// -----

// Tests batched attention as autodiff writes it: q k^T and the gradient's
// products with the probabilities and k read their operands transposed
// (the flags flip, a flag already set flips back), and a transpose that is
// not of the last two dims stays.
// CHECK-LABEL: func.func @attention
// CHECK-NOT: graph.transpose %arg1 {perm = [0, 1, 3, 2]}
// CHECK-DAG: %[[S:.*]] = graph.matmul %arg0, %arg1 {transB = true} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
// CHECK-DAG: %[[DV:.*]] = graph.matmul %arg2, %arg3 {transA = true} : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
// CHECK-DAG: %[[BACK:.*]] = graph.matmul %arg3, %arg4 : tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x8x8xf32>
// CHECK-DAG: %[[H:.*]] = graph.transpose %arg0 {perm = [0, 2, 1, 3]}
// CHECK-DAG: graph.matmul %[[H]], %[[H]] {transB = true}
func.func @attention(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %p: tensor<2x4x8x8xf32>, %g: tensor<2x4x8x16xf32>,
                     %kt2: tensor<2x4x16x8xf32>)
    -> (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x8xf32>, tensor<2x8x4x4xf32>) {
  %kt = graph.transpose %k {perm = [0, 1, 3, 2]} : tensor<2x4x8x16xf32> -> tensor<2x4x16x8xf32>
  %s = graph.matmul %q, %kt : tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x8x8xf32>
  %pt = graph.transpose %p {perm = [0, 1, 3, 2]} : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %dv = graph.matmul %pt, %g : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  %k2 = graph.transpose %kt2 {perm = [0, 1, 3, 2]} : tensor<2x4x16x8xf32> -> tensor<2x4x8x16xf32>
  %back = graph.matmul %g, %k2 {transB = true} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %h = graph.transpose %q {perm = [0, 2, 1, 3]} : tensor<2x4x8x16xf32> -> tensor<2x8x4x16xf32>
  %ht = graph.transpose %h {perm = [0, 1, 3, 2]} : tensor<2x8x4x16xf32> -> tensor<2x8x16x4xf32>
  %hh = graph.matmul %h, %ht : tensor<2x8x4x16xf32>, tensor<2x8x16x4xf32> -> tensor<2x8x4x4xf32>
  return %s, %dv, %back, %hh : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x8xf32>, tensor<2x8x4x4xf32>
}
