// RUN: zeroc-opt %s | zeroc-opt | FileCheck %s
// RUN: zeroc-opt %s --mlir-print-op-generic | zeroc-opt | FileCheck %s

// Tests that every graph op round-trips through its custom assembly format.

// CHECK: graph.param trainable @fc.weight = dense<5.000000e-01> : tensor<3x4xf32>
graph.param trainable @"fc.weight" = dense<0.5> : tensor<3x4xf32>
// CHECK: graph.param @attn.bias = dense<true> : tensor<4x4xi1>
graph.param @"attn.bias" = dense<true> : tensor<4x4xi1>
// CHECK: graph.param trainable @fc.bias master(f32) = dense<2.500000e-01> : tensor<4xf16>
graph.param trainable @"fc.bias" master(f32) = dense<0.25> : tensor<4xf16>
// CHECK: graph.buffer @bn.running_mean = dense<0.000000e+00> : tensor<4xf32>
graph.buffer @"bn.running_mean" = dense<0.0> : tensor<4xf32>

// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<2x4xf32> {graph.input = "x"},
                   %idx: tensor<2x4xi64> {graph.input = "idx"},
                   %m: tensor<4x4xi1>)
    -> (tensor<f32> {graph.output = "loss", graph.loss}) {
  // CHECK: graph.load_param @fc.weight : tensor<3x4xf32>
  %w = graph.load_param @"fc.weight" : tensor<3x4xf32>
  // CHECK: graph.load_buffer @bn.running_mean : tensor<4xf32>
  %runmean = graph.load_buffer @"bn.running_mean" : tensor<4xf32>
  // CHECK: graph.constant dense<[2, 3]> : tensor<2xi64>
  %c = graph.constant dense<[2, 3]> : tensor<2xi64>
  // CHECK: graph.gemm %{{.*}}, %{{.*}} {transB = true} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
  %g = graph.gemm %x, %w {transB = true} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
  // CHECK: graph.matmul %{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %sq = graph.cast %m : tensor<4x4xi1> -> tensor<4x4xf32>
  %mm = graph.matmul %x, %sq : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  // CHECK: graph.add
  %a = graph.add %mm, %x : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  // CHECK: graph.sub
  %s = graph.sub %a, %x : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  // CHECK: graph.mul
  %mu = graph.mul %s, %x : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  // CHECK: graph.div
  %d = graph.div %mu, %x : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  // CHECK: graph.pow
  %p = graph.pow %d, %x : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  // CHECK: graph.equal %{{.*}} : tensor<2x4xi64>, tensor<2x4xi64> -> tensor<2x4xi1>
  %e = graph.equal %idx, %idx : tensor<2x4xi64>, tensor<2x4xi64> -> tensor<2x4xi1>
  // CHECK: graph.where
  %wh = graph.where %e, %p, %x : tensor<2x4xi1>, tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  // CHECK: graph.neg
  %u0 = graph.neg %wh : tensor<2x4xf32>
  // CHECK: graph.sqrt
  %u1 = graph.sqrt %u0 : tensor<2x4xf32>
  // CHECK: graph.reciprocal
  %u2 = graph.reciprocal %u1 : tensor<2x4xf32>
  // CHECK: graph.relu
  %u3 = graph.relu %u2 : tensor<2x4xf32>
  // CHECK: graph.tanh
  %u4 = graph.tanh %u3 : tensor<2x4xf32>
  // CHECK: graph.sigmoid
  %u5 = graph.sigmoid %u4 : tensor<2x4xf32>
  // CHECK: graph.erf
  %u6 = graph.erf %u5 : tensor<2x4xf32>
  // CHECK: graph.exp
  %u7 = graph.exp %u6 : tensor<2x4xf32>
  // CHECK: graph.log
  %u8 = graph.log %u7 : tensor<2x4xf32>
  // CHECK: graph.dropout %{{.*}} {ratio = 1.000000e-01 : f64, training = true} : tensor<2x4xf32>
  %dr = graph.dropout %u8 {ratio = 0.1 : f64, training = true} : tensor<2x4xf32>
  // CHECK: graph.softmax %{{.*}} {axis = 1 : i64} : tensor<2x4xf32>
  %sm = graph.softmax %dr {axis = 1 : i64} : tensor<2x4xf32>
  // CHECK: graph.log_softmax
  %ls = graph.log_softmax %sm {axis = 1 : i64} : tensor<2x4xf32>
  // CHECK: graph.layer_norm
  %gam = graph.constant dense<1.0> : tensor<4xf32>
  %ln = graph.layer_norm %ls, %gam, %gam {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  // CHECK: graph.reduce_sum %{{.*}} {axes = [1], keepdims = true} : tensor<2x4xf32> -> tensor<2x1xf32>
  %rs = graph.reduce_sum %ln {axes = [1], keepdims = true} : tensor<2x4xf32> -> tensor<2x1xf32>
  // CHECK: graph.reduce_max
  %rx = graph.reduce_max %ln {axes = [0], keepdims = false} : tensor<2x4xf32> -> tensor<4xf32>
  // CHECK: graph.gather %{{.*}} {axis = 0 : i64} : tensor<3x4xf32>, tensor<2x4xi64> -> tensor<2x4x4xf32>
  %ga = graph.gather %w, %idx {axis = 0 : i64} : tensor<3x4xf32>, tensor<2x4xi64> -> tensor<2x4x4xf32>
  // CHECK: graph.reshape %{{.*}} : tensor<2x4x4xf32> -> tensor<8x4xf32>
  %rh = graph.reshape %ga : tensor<2x4x4xf32> -> tensor<8x4xf32>
  // CHECK: graph.transpose %{{.*}} {perm = [1, 0]} : tensor<8x4xf32> -> tensor<4x8xf32>
  %tr = graph.transpose %rh {perm = [1, 0]} : tensor<8x4xf32> -> tensor<4x8xf32>
  // CHECK: graph.expand %{{.*}} : tensor<4xf32> -> tensor<3x4xf32>
  %ex = graph.expand %rx : tensor<4xf32> -> tensor<3x4xf32>
  // CHECK: graph.slice %{{.*}} {ends = [4, -1], starts = [0, 7], steps = [1, -2]} : tensor<4x8xf32> -> tensor<4x4xf32>
  %sl = graph.slice %tr {starts = [0, 7], ends = [4, -1], steps = [1, -2]} : tensor<4x8xf32> -> tensor<4x4xf32>
  // CHECK: graph.concat %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<4x4xf32>, tensor<3x4xf32>) -> tensor<7x4xf32>
  %cc = graph.concat %sl, %ex {axis = 0 : i64} : (tensor<4x4xf32>, tensor<3x4xf32>) -> tensor<7x4xf32>
  // CHECK: graph.trilu %{{.*}} {k = 0 : i64, upper = false} : tensor<7x4xf32>
  %tl = graph.trilu %cc {upper = false, k = 0 : i64} : tensor<7x4xf32>
  // CHECK: graph.softmax_cross_entropy_loss %{{.*}} {ignore_index = -100 : i64, reduction = "mean"} : tensor<7x4xf32>, tensor<7xi64> -> tensor<f32>
  %lab = graph.constant dense<1> : tensor<7xi64>
  %loss = graph.softmax_cross_entropy_loss %tl, %lab {reduction = "mean", ignore_index = -100 : i64} : tensor<7x4xf32>, tensor<7xi64> -> tensor<f32>
  // CHECK: graph.reduce_mean
  %rm = graph.reduce_mean %rs {axes = [0, 1], keepdims = false} : tensor<2x1xf32> -> tensor<f32>
  %t = graph.add %loss, %rm : tensor<f32>, tensor<f32> -> tensor<f32>
  return %t : tensor<f32>
}

// Tests that the gradient ops round-trip.
// CHECK-LABEL: func.func @gradients
func.func @gradients(%x: tensor<2x4xf32>, %s: tensor<4xf32>, %i: tensor<2xi64>,
                     %l: tensor<f32>) -> tensor<2x4xf32> {
  // CHECK: graph.unary_grad %{{.*}}, y = %{{.*}} {op = "tanh"} : tensor<2x4xf32>
  %0 = graph.unary_grad %x, y = %x {op = "tanh"} : tensor<2x4xf32>
  // CHECK: graph.sum_to %{{.*}} : tensor<2x4xf32> -> tensor<4xf32>
  %1 = graph.sum_to %0 : tensor<2x4xf32> -> tensor<4xf32>
  // CHECK: graph.softmax_grad %{{.*}}, %{{.*}} {axis = 1 : i64, log = true} : tensor<2x4xf32>
  %2 = graph.softmax_grad %0, %x {axis = 1 : i64, log = true} : tensor<2x4xf32>
  // CHECK: graph.layer_norm_grad %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64, epsilon = 1.000000e-05 : f64} : tensor<2x4xf32>, tensor<4xf32>
  %3:3 = graph.layer_norm_grad %2, %s, %x {axis = 1 : i64, epsilon = 1.0e-05 : f64} : tensor<2x4xf32>, tensor<4xf32>
  // CHECK: graph.gather_grad %{{.*}}, %{{.*}} {axis = 0 : i64} : tensor<2x4xf32>, tensor<2xi64> -> tensor<7x4xf32>
  %4 = graph.gather_grad %3#0, %i {axis = 0 : i64} : tensor<2x4xf32>, tensor<2xi64> -> tensor<7x4xf32>
  // CHECK: graph.slice_grad %{{.*}} {ends = [7, 4], starts = [1, 0], steps = [3, 1]} : tensor<2x4xf32> -> tensor<7x4xf32>
  %5 = graph.slice_grad %3#0 {starts = [1, 0], ends = [7, 4], steps = [3, 1]} : tensor<2x4xf32> -> tensor<7x4xf32>
  // CHECK: graph.softmax_cross_entropy_loss_grad %{{.*}}, %{{.*}}, %{{.*}} {reduction = "mean"} : tensor<2x4xf32>, tensor<2xi64>, tensor<f32>
  %6 = graph.softmax_cross_entropy_loss_grad %x, %i, %l {reduction = "mean"} : tensor<2x4xf32>, tensor<2xi64>, tensor<f32>
  return %6 : tensor<2x4xf32>
}

// Tests that the fused ops round-trip (their inputs optional in
// fused_softmax_grad's form).
// CHECK-LABEL: func.func @fused
func.func @fused(%x: tensor<2x4xf32>, %k: tensor<f32>, %m: tensor<1x4xi1>) -> tensor<2x4xf32> {
  // CHECK: graph.fused_elementwise %{{.*}}, %{{.*}} : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32> {
  %0 = graph.fused_elementwise %x, %k : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32> {
  ^bb0(%a: tensor<2x4xf32>, %b: tensor<f32>):
    %n = graph.mul %a, %b : tensor<2x4xf32>, tensor<f32> -> tensor<2x4xf32>
    graph.yield %n : tensor<2x4xf32>
  }
  // CHECK: graph.fused_softmax %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64, log = false} : (tensor<2x4xf32>, tensor<1x4xi1>, tensor<f32>) -> tensor<2x4xf32> {
  // CHECK: graph.where
  %1 = graph.fused_softmax %0, %m, %k {axis = 1 : i64, log = false} : (tensor<2x4xf32>, tensor<1x4xi1>, tensor<f32>) -> tensor<2x4xf32> {
  ^bb0(%a: tensor<2x4xf32>, %c: tensor<1x4xi1>, %b: tensor<f32>):
    %n = graph.where %c, %b, %a : tensor<1x4xi1>, tensor<f32>, tensor<2x4xf32> -> tensor<2x4xf32>
    graph.yield %n : tensor<2x4xf32>
  }
  // CHECK: graph.fused_softmax_grad %{{.*}}, %{{.*}} epilogue(%{{.*}} : tensor<f32>) {axis = 0 : i64, log = true} : tensor<2x4xf32> {
  %2 = graph.fused_softmax_grad %1, %x epilogue(%k : tensor<f32>) {axis = 0 : i64, log = true} : tensor<2x4xf32> {
  ^bb0(%g: tensor<2x4xf32>, %b: tensor<f32>):
    %n = graph.mul %g, %b : tensor<2x4xf32>, tensor<f32> -> tensor<2x4xf32>
    graph.yield %n : tensor<2x4xf32>
  }
  // CHECK: graph.fused_softmax_grad %{{.*}}, %{{.*}} {axis = 1 : i64, log = false} : tensor<2x4xf32> {
  // CHECK-NEXT: ^bb0
  // CHECK-NEXT: graph.neg
  %3 = graph.fused_softmax_grad %2, %x {axis = 1 : i64, log = false} : tensor<2x4xf32> {
  ^bb0(%g: tensor<2x4xf32>):
    %n = graph.neg %g : tensor<2x4xf32>
    graph.yield %n : tensor<2x4xf32>
  }
  return %3 : tensor<2x4xf32>
}
