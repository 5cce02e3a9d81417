// RUN: zeroc-opt %s -split-input-file -zero-fuse-cross-entropy | FileCheck %s

// Tests a loss and its gradient, as autodiff leaves them in the training
// step (the seed defined first, a cast of the loss between): one fused op
// at the loss's place, its two results read where the two ops' were.
// CHECK-LABEL: func.func @step
// CHECK-NEXT: %[[G:.*]] = graph.constant
// CHECK-NEXT: %[[L:.*]], %[[GS:.*]] = graph.fused_softmax_cross_entropy %arg0, %arg1, %[[G]] {ignore_index = -100 : i64, reduction = "mean"} : tensor<8x5xf32>, tensor<8xi64>, tensor<f32>
// CHECK-NEXT: %[[C:.*]] = graph.cast %[[L]]
// CHECK-NOT: softmax_cross_entropy_loss
// CHECK: return %[[C]], %[[GS]]
func.func @step(%s: tensor<8x5xf32>, %t: tensor<8xi64>) -> (tensor<f64>, tensor<8x5xf32>) {
  %g = graph.constant dense<1.0> : tensor<f32>
  %l = graph.softmax_cross_entropy_loss %s, %t {ignore_index = -100 : i64, reduction = "mean"} : tensor<8x5xf32>, tensor<8xi64> -> tensor<f32>
  %c = graph.cast %l : tensor<f32> -> tensor<f64>
  %gs = graph.softmax_cross_entropy_loss_grad %s, %t, %g {ignore_index = -100 : i64, reduction = "mean"} : tensor<8x5xf32>, tensor<8xi64>, tensor<f32>
  return %c, %gs : tensor<f64>, tensor<8x5xf32>
}

// -----

// Tests pairs that stay apart: a gradient defined after the loss (the loss
// would read it before it exists), another reduction, and an in-place
// all-reduce of the scores between the two (the loss would read them
// before it).
// CHECK-LABEL: func.func @apart
// CHECK-NOT: fused_softmax_cross_entropy
// CHECK: return
func.func @apart(%s: tensor<8x5xf32>, %u: tensor<8x5xf32>, %t: tensor<8xi64>, %k: tensor<f32>) -> (tensor<f32>, tensor<8x5xf32>, tensor<f32>, tensor<8x5xf32>, tensor<8x5xf32>, tensor<8x5xf32>) {
  %l = graph.softmax_cross_entropy_loss %s, %t {reduction = "mean"} : tensor<8x5xf32>, tensor<8xi64> -> tensor<f32>
  %g = graph.mul %l, %k : tensor<f32>, tensor<f32> -> tensor<f32>
  %gs = graph.softmax_cross_entropy_loss_grad %s, %t, %g {reduction = "mean"} : tensor<8x5xf32>, tensor<8xi64>, tensor<f32>
  %sum = graph.softmax_cross_entropy_loss_grad %s, %t, %k {reduction = "sum"} : tensor<8x5xf32>, tensor<8xi64>, tensor<f32>
  %m = graph.softmax_cross_entropy_loss %u, %t {reduction = "mean"} : tensor<8x5xf32>, tensor<8xi64> -> tensor<f32>
  %r = zero.all_reduce %u {reduction = #zero<reduction sum>} : tensor<8x5xf32>
  %gu = graph.softmax_cross_entropy_loss_grad %u, %t, %k {reduction = "mean"} : tensor<8x5xf32>, tensor<8xi64>, tensor<f32>
  return %l, %gs, %m, %gu, %sum, %r : tensor<f32>, tensor<8x5xf32>, tensor<f32>, tensor<8x5xf32>, tensor<8x5xf32>, tensor<8x5xf32>
}
