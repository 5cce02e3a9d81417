// RUN: zeroc-opt %s -split-input-file -zero-autodiff | FileCheck %s

// The gradient rules of GraphElementwiseOps.td (dialects/Graph/
// GraphGradientsElementwise.cpp), one split each, in the style of
// zero-autodiff-rules.mlir. test/e2e/gradcheck.test checks them numerically.

// Tests that cos, sin, abs and gelu (both forms) each use one
// graph.unary_grad with their kind.
graph.param trainable @w = dense<0.5> : tensor<2x3xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<2x3xf32>
  %a = graph.cos %w : tensor<2x3xf32>
  %b = graph.sin %a : tensor<2x3xf32>
  %c = graph.abs %b : tensor<2x3xf32>
  %d = graph.gelu %c {approximate = "none"} : tensor<2x3xf32>
  %e = graph.gelu %d {approximate = "tanh"} : tensor<2x3xf32>
  %l = graph.reduce_sum %e {axes = [0, 1], keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: graph.unary_grad {{.*}} {op = "gelu_tanh"}
// CHECK: graph.unary_grad {{.*}} {op = "gelu"}
// CHECK: graph.unary_grad {{.*}} {op = "abs"}
// CHECK: graph.unary_grad {{.*}} {op = "sin"}
// CHECK: %[[DW:.*]] = graph.unary_grad {{.*}} {op = "cos"}
// CHECK: return %{{.*}}, %[[DW]] : tensor<f32>, tensor<2x3xf32>

// -----

// Tests that sign, floor, ceil and round pass no gradient: the parameter
// read only through them gets a zero gradient constant.
graph.param trainable @w = dense<0.5> : tensor<2x3xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<2x3xf32>
  %a = graph.sign %w : tensor<2x3xf32>
  %b = graph.floor %a : tensor<2x3xf32>
  %c = graph.ceil %b : tensor<2x3xf32>
  %d = graph.round %c : tensor<2x3xf32>
  %l = graph.reduce_sum %d {axes = [0, 1], keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK-NOT: graph.unary_grad
// CHECK: %[[Z:.*]] = graph.constant dense<0.000000e+00> : tensor<2x3xf32>
// CHECK: return %{{.*}}, %[[Z]] : tensor<f32>, tensor<2x3xf32>

// -----

// Tests that max's rule is torch.maximum's: where(lhs < rhs, 0, where(tie,
// g/2, g)) for lhs, the mirror for rhs, each summed to its operand's shape.
graph.param trainable @a = dense<0.5> : tensor<2x3xf32>
graph.param trainable @b = dense<0.5> : tensor<3xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %a = graph.load_param @a : tensor<2x3xf32>
  %b = graph.load_param @b : tensor<3xf32>
  %m = graph.max %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %l = graph.reduce_sum %m {axes = [0, 1], keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[A:.*]] = graph.load_param @a
// CHECK: %[[B:.*]] = graph.load_param @b
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK: %[[ZERO:.*]] = graph.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[TIE:.*]] = graph.equal %[[A]], %[[B]]
// CHECK: %[[HALF:.*]] = graph.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[GH:.*]] = graph.mul %[[G]], %[[HALF]]
// CHECK: %[[SHARED:.*]] = graph.where %[[TIE]], %[[GH]], %[[G]]
// CHECK: %[[LA:.*]] = graph.compare %[[A]], %[[B]] {predicate = "lt"}
// CHECK: %[[DA:.*]] = graph.where %[[LA]], %[[ZERO]], %[[SHARED]]
// CHECK: %[[LB:.*]] = graph.compare %[[B]], %[[A]] {predicate = "lt"}
// CHECK: %[[WB:.*]] = graph.where %[[LB]], %[[ZERO]], %[[SHARED]]
// CHECK: %[[DB:.*]] = graph.sum_to %[[WB]] : tensor<2x3xf32> -> tensor<3xf32>
// CHECK: return %{{.*}}, %[[DA]], %[[DB]] : tensor<f32>, tensor<2x3xf32>, tensor<3xf32>

// -----

// Tests that min's rule zeroes the operand that is greater.
graph.param trainable @a = dense<0.5> : tensor<3xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %a = graph.load_param @a : tensor<3xf32>
  %c = graph.constant dense<0.25> : tensor<f32>
  %m = graph.min %a, %c : tensor<3xf32>, tensor<f32> -> tensor<3xf32>
  %l = graph.reduce_sum %m {axes = [0], keepdims = false} : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[A:.*]] = graph.load_param @a
// CHECK: %[[C:.*]] = graph.constant dense<2.500000e-01>
// CHECK: %[[GT:.*]] = graph.compare %[[A]], %[[C]] {predicate = "gt"}
// CHECK: %[[DA:.*]] = graph.where %[[GT]],
// CHECK-NOT: graph.compare %[[C]], %[[A]]
// CHECK: return %{{.*}}, %[[DA]] : tensor<f32>, tensor<3xf32>

// -----

// Tests that clip's gradient is one graph.clip_grad with the same bounds.
graph.param trainable @w = dense<0.5> : tensor<2x3xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<2x3xf32>
  %y = graph.clip %w {min = -1.0 : f64, max = 1.0 : f64} : tensor<2x3xf32>
  %l = graph.reduce_sum %y {axes = [0, 1], keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[W:.*]] = graph.load_param @w
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK: %[[DW:.*]] = graph.clip_grad %[[W]], %[[G]] {max = 1.000000e+00 : f64, min = -1.000000e+00 : f64} : tensor<2x3xf32>
// CHECK: return %{{.*}}, %[[DW]] : tensor<f32>, tensor<2x3xf32>

// -----

// Tests that a comparison feeding where carries no gradient: only where's
// branches are differentiated.
graph.param trainable @w = dense<0.5> : tensor<3xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<3xf32>
  %z = graph.constant dense<0.0> : tensor<f32>
  %m = graph.compare %w, %z {predicate = "gt"} : tensor<3xf32>, tensor<f32> -> tensor<3xi1>
  %n = graph.not %m : tensor<3xi1>
  %k = graph.is_nan %w : tensor<3xf32> -> tensor<3xi1>
  %o = graph.logical %n, %k {op = "or"} : tensor<3xi1>, tensor<3xi1> -> tensor<3xi1>
  %y = graph.where %o, %z, %w : tensor<3xi1>, tensor<f32>, tensor<3xf32> -> tensor<3xf32>
  %l = graph.reduce_sum %y {axes = [0], keepdims = false} : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[O:.*]] = graph.logical
// CHECK: graph.loss_seed
// CHECK: %[[DW:.*]] = graph.where %[[O]], %{{.*}}, %{{.*}} : tensor<3xi1>, tensor<f32>, tensor<3xf32> -> tensor<3xf32>
// CHECK-NOT: graph.compare
// CHECK: return %{{.*}}, %[[DW]] : tensor<f32>, tensor<3xf32>
