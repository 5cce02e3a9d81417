// RUN: zeroc-opt %s -split-input-file -zero-fuse-elementwise -zero-fuse-softmax | FileCheck %s

// Tests attention's softmax: the scale and the causal mask before it (one
// fused_elementwise after zero-fuse-elementwise) become its prologue, at
// the softmax's place; the inputs are the chain's.
// CHECK-LABEL: func.func @attention_forward
// CHECK-NEXT: %[[P:.*]] = graph.fused_softmax %arg0, %arg1, %arg2, %arg3 {axis = 3 : i64, log = false} : (tensor<2x4x8x8xf32>, tensor<f32>, tensor<1x1x8x8xi1>, tensor<f32>) -> tensor<2x4x8x8xf32> {
// CHECK-NEXT: ^bb0(%[[S:.*]]: tensor<2x4x8x8xf32>, %[[K:.*]]: tensor<f32>, %[[M:.*]]: tensor<1x1x8x8xi1>, %[[N:.*]]: tensor<f32>):
// CHECK-NEXT: %[[A:.*]] = graph.mul %[[S]], %[[K]]
// CHECK-NEXT: %[[W:.*]] = graph.where %[[M]], %[[N]], %[[A]]
// CHECK-NEXT: graph.yield %[[W]] : tensor<2x4x8x8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[P]]
func.func @attention_forward(%s: tensor<2x4x8x8xf32>, %k: tensor<f32>, %mask: tensor<1x1x8x8xi1>, %ninf: tensor<f32>) -> tensor<2x4x8x8xf32> {
  %0 = graph.mul %s, %k : tensor<2x4x8x8xf32>, tensor<f32> -> tensor<2x4x8x8xf32>
  %1 = graph.where %mask, %ninf, %0 : tensor<1x1x8x8xi1>, tensor<f32>, tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %p = graph.softmax %1 {axis = 3 : i64} : tensor<2x4x8x8xf32>
  return %p : tensor<2x4x8x8xf32>
}

// -----

// Tests the backward pass's mask and scale after softmax_grad: they become
// its epilogue at their place, the gradient the body's first argument and
// the chain's other inputs after it.
// CHECK-LABEL: func.func @attention_backward
// CHECK-NEXT: %[[G:.*]] = graph.fused_softmax_grad %arg0, %arg1 epilogue(%arg2, %arg3, %arg4 : tensor<1x1x8x8xi1>, tensor<f32>, tensor<f32>) {axis = 3 : i64, log = false} : tensor<2x4x8x8xf32> {
// CHECK-NEXT: ^bb0(%[[GX:.*]]: tensor<2x4x8x8xf32>, %[[M:.*]]: tensor<1x1x8x8xi1>, %[[Z:.*]]: tensor<f32>, %[[K:.*]]: tensor<f32>):
// CHECK-NEXT: %[[W:.*]] = graph.where %[[M]], %[[Z]], %[[GX]]
// CHECK-NEXT: %[[A:.*]] = graph.mul %[[W]], %[[K]]
// CHECK-NEXT: graph.yield %[[A]] : tensor<2x4x8x8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[G]]
func.func @attention_backward(%y: tensor<2x4x8x8xf32>, %gy: tensor<2x4x8x8xf32>, %mask: tensor<1x1x8x8xi1>, %zero: tensor<f32>, %k: tensor<f32>) -> tensor<2x4x8x8xf32> {
  %g = graph.softmax_grad %y, %gy {axis = 3 : i64, log = false} : tensor<2x4x8x8xf32>
  %0 = graph.where %mask, %zero, %g : tensor<1x1x8x8xi1>, tensor<f32>, tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %1 = graph.mul %0, %k : tensor<2x4x8x8xf32>, tensor<f32> -> tensor<2x4x8x8xf32>
  return %1 : tensor<2x4x8x8xf32>
}

// -----

// Tests a chain of one op (zero-fuse-elementwise leaves it alone), a
// log-softmax along a middle axis, and an epilogue of one op that reads
// the gradient twice: both arguments become the body's first.
// CHECK-LABEL: func.func @single_ops
// CHECK-NEXT: %[[P:.*]] = graph.fused_softmax %arg0, %arg1 {axis = 1 : i64, log = true} : (tensor<2x5x3xf32>, tensor<f32>) -> tensor<2x5x3xf32> {
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<2x5x3xf32>, %[[K:.*]]: tensor<f32>):
// CHECK-NEXT: %[[D:.*]] = graph.div %[[X]], %[[K]]
// CHECK-NEXT: graph.yield %[[D]]
// CHECK: %[[G:.*]] = graph.fused_softmax_grad %[[P]], %arg2 {axis = 1 : i64, log = true} : tensor<2x5x3xf32> {
// CHECK-NEXT: ^bb0(%[[GX:.*]]: tensor<2x5x3xf32>):
// CHECK-NEXT: %[[Q:.*]] = graph.mul %[[GX]], %[[GX]]
// CHECK-NEXT: graph.yield %[[Q]]
// CHECK: return %[[P]], %[[G]]
func.func @single_ops(%x: tensor<2x5x3xf32>, %k: tensor<f32>, %gy: tensor<2x5x3xf32>) -> (tensor<2x5x3xf32>, tensor<2x5x3xf32>) {
  %0 = graph.div %x, %k : tensor<2x5x3xf32>, tensor<f32> -> tensor<2x5x3xf32>
  %p = graph.log_softmax %0 {axis = 1 : i64} : tensor<2x5x3xf32>
  %g = graph.softmax_grad %p, %gy {axis = 1 : i64, log = true} : tensor<2x5x3xf32>
  %1 = graph.mul %g, %g : tensor<2x5x3xf32>, tensor<2x5x3xf32> -> tensor<2x5x3xf32>
  return %p, %1 : tensor<2x5x3xf32>, tensor<2x5x3xf32>
}

// -----

// Tests values that stay apart: a prologue whose value another op reads
// (the fused op would have to store it anyway), a fused chain of two
// results, and a gradient that two ops read.
// CHECK-LABEL: func.func @other_readers
// CHECK: graph.softmax %{{.*}} {axis = 1 : i64}
// CHECK: graph.softmax %{{.*}}#1 {axis = 1 : i64}
// CHECK: graph.softmax_grad
// CHECK-NOT: graph.fused_softmax
func.func @other_readers(%x: tensor<2x5xf32>, %k: tensor<f32>, %gy: tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>) {
  %0 = graph.mul %x, %k : tensor<2x5xf32>, tensor<f32> -> tensor<2x5xf32>
  %p = graph.softmax %0 {axis = 1 : i64} : tensor<2x5xf32>
  %1 = graph.exp %x : tensor<2x5xf32>
  %2 = graph.neg %1 : tensor<2x5xf32>
  %q = graph.softmax %2 {axis = 1 : i64} : tensor<2x5xf32>
  %g = graph.softmax_grad %p, %gy {axis = 1 : i64, log = false} : tensor<2x5xf32>
  %3 = graph.neg %g : tensor<2x5xf32>
  %4 = graph.exp %g : tensor<2x5xf32>
  return %0, %p, %1, %q, %3, %4 : tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>
}

// -----

// Tests an in-place all-reduce between the chain and the softmax, and
// between the gradient and the chain after it: the fused op would read
// what the reduction wrote, so the ops stay apart.
// CHECK-LABEL: func.func @in_place_write
// CHECK: graph.mul
// CHECK-NEXT: zero.all_reduce
// CHECK-NEXT: graph.softmax
// CHECK-NEXT: graph.softmax_grad
// CHECK-NEXT: zero.all_reduce
// CHECK-NEXT: graph.neg
func.func @in_place_write(%x: tensor<8xf32>, %k: tensor<f32>, %gy: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %0 = graph.mul %x, %k : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %r = zero.all_reduce %x {reduction = #zero<reduction sum>} : tensor<8xf32>
  %p = graph.softmax %0 {axis = 0 : i64} : tensor<8xf32>
  %g = graph.softmax_grad %p, %gy {axis = 0 : i64, log = false} : tensor<8xf32>
  %s = zero.all_reduce %gy {reduction = #zero<reduction sum>} : tensor<8xf32>
  %n = graph.neg %g : tensor<8xf32>
  return %r, %p, %s, %n : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// Tests an epilogue whose result is broadcast beyond the gradient's shape:
// the softmax's rows would not be the result's, so the ops stay apart.
// CHECK-LABEL: func.func @broadcast_epilogue
// CHECK: graph.softmax_grad
// CHECK-NEXT: graph.add
func.func @broadcast_epilogue(%y: tensor<5xf32>, %gy: tensor<5xf32>, %b: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %g = graph.softmax_grad %y, %gy {axis = 0 : i64, log = false} : tensor<5xf32>
  %a = graph.add %g, %b : tensor<5xf32>, tensor<2x5xf32> -> tensor<2x5xf32>
  return %a : tensor<2x5xf32>
}
