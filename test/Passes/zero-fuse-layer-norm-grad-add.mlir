// RUN: zeroc-opt %s -split-input-file -zero-fuse-layer-norm-grad-add | FileCheck %s

// Tests a pre-norm block's backward pass: the layer norm's input gradient
// is added to the residual's gradient (either operand order) and read by
// nothing else, so one fused op at the layer norm gradient's place yields
// the sum and the parameter gradients, read where the two ops' were.
// CHECK-LABEL: func.func @residual
// CHECK-NEXT: %[[S:.*]], %[[GS:.*]], %[[GB:.*]] = graph.fused_layer_norm_grad_add %arg0, %arg1, %arg2, %arg3 {axis = 1 : i64, epsilon = 1.000000e-05 : f64} : tensor<2x4xf32>, tensor<4xf32>
// CHECK-NEXT: %[[T:.*]], %[[GS2:.*]], %[[GB2:.*]] = graph.fused_layer_norm_grad_add %arg0, %arg1, %[[S]], %[[S]]
// CHECK-NOT: graph.add
// CHECK: return %[[T]], %[[GS]], %[[GB]], %[[GS2]]
func.func @residual(%x: tensor<2x4xf32>, %s: tensor<4xf32>, %gy: tensor<2x4xf32>, %r: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %gx, %gs, %gb = graph.layer_norm_grad %x, %s, %gy {axis = 1 : i64, epsilon = 1.0e-05 : f64} : tensor<2x4xf32>, tensor<4xf32>
  %sum = graph.add %r, %gx : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %gx2, %gs2, %gb2 = graph.layer_norm_grad %x, %s, %sum {axis = 1 : i64, epsilon = 1.0e-05 : f64} : tensor<2x4xf32>, tensor<4xf32>
  %sum2 = graph.add %gx2, %sum : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  return %sum2, %gs, %gb, %gs2 : tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests input gradients that stay stored: one another op reads too, one
// added to a value made after the layer norm gradient (the fused op would
// read it before it exists), one added to a value an in-place all-reduce
// writes in between, one added to itself, one broadcast against a bias.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: fused_layer_norm_grad_add
// CHECK: return
func.func @kept(%x: tensor<2x4xf32>, %s: tensor<4xf32>, %gy: tensor<2x4xf32>, %r: tensor<2x4xf32>, %b: tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %g1, %a1, %b1 = graph.layer_norm_grad %x, %s, %gy {axis = 1 : i64, epsilon = 1.0e-05 : f64} : tensor<2x4xf32>, tensor<4xf32>
  %s1 = graph.add %r, %g1 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %n1 = graph.neg %g1 : tensor<2x4xf32>
  %g2, %a2, %b2 = graph.layer_norm_grad %x, %s, %gy {axis = 1 : i64, epsilon = 1.0e-05 : f64} : tensor<2x4xf32>, tensor<4xf32>
  %later = graph.neg %r : tensor<2x4xf32>
  %s2 = graph.add %later, %g2 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %g3, %a3, %b3 = graph.layer_norm_grad %x, %s, %gy {axis = 1 : i64, epsilon = 1.0e-05 : f64} : tensor<2x4xf32>, tensor<4xf32>
  %w = zero.all_reduce %r {reduction = #zero<reduction sum>} : tensor<2x4xf32>
  %s3 = graph.add %r, %g3 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %g4, %a4, %b4 = graph.layer_norm_grad %x, %s, %gy {axis = 1 : i64, epsilon = 1.0e-05 : f64} : tensor<2x4xf32>, tensor<4xf32>
  %s4 = graph.add %g4, %g4 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %g5, %a5, %b5 = graph.layer_norm_grad %x, %s, %gy {axis = 1 : i64, epsilon = 1.0e-05 : f64} : tensor<2x4xf32>, tensor<4xf32>
  %s5 = graph.add %g5, %b : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
  return %s1, %n1, %s2, %s3, %w, %s4, %s5 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}
