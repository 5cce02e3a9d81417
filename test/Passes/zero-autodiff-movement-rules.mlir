// RUN: zeroc-opt %s -split-input-file -zero-autodiff | FileCheck %s

// The gradient rules of dialects/Graph/GraphGradientsMovement.cpp, one split
// per op, as in zero-autodiff-rules.mlir (the seed reaches each op through
// reduce_sum's reshape + expand, captured as %[[G]]). test/e2e/gradcheck.test
// checks the same rules numerically.

// Tests that pad's gradient is one graph.pad_grad with the same pads and mode.
graph.param trainable @w = dense<0.5> : tensor<2x5xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<2x5xf32>
  %y = graph.pad %w {pads = [0, 2, 0, -1], mode = "edge"} : tensor<2x5xf32> -> tensor<2x6xf32>
  %l = graph.reduce_sum %y {axes = [0, 1], keepdims = false} : tensor<2x6xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<2x6xf32>
// CHECK: %[[DW:.*]] = graph.pad_grad %[[G]] {mode = "edge", pads = [0, 2, 0, -1]} : tensor<2x6xf32> -> tensor<2x5xf32>
// CHECK: return %{{.*}}, %[[DW]]

// -----

// Tests that gather_elements' gradient is a gather_elements_grad into the
// data's type, and that the indices get none.
graph.param trainable @w = dense<0.5> : tensor<2x5xf32>
func.func @forward(%i: tensor<2x3xi64>) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<2x5xf32>
  %y = graph.gather_elements %w, %i {axis = 1 : i64} : tensor<2x5xf32>, tensor<2x3xi64> -> tensor<2x3xf32>
  %l = graph.reduce_sum %y {axes = [0, 1], keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK-SAME: (%[[I:.*]]: tensor<2x3xi64>)
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK: %[[DW:.*]] = graph.gather_elements_grad %[[G]], %[[I]] {axis = 1 : i64} : tensor<2x3xf32>, tensor<2x3xi64> -> tensor<2x5xf32>
// CHECK: return %{{.*}}, %[[DW]]

// -----

// Tests that scatter_nd (none) sends the gradient with the written slices
// zeroed to data, and its gather_nd to updates.
graph.param trainable @d = dense<0.5> : tensor<4x3xf32>
graph.param trainable @u = dense<0.25> : tensor<2x3xf32>
func.func @forward(%i: tensor<2x1xi64>) -> (tensor<f32> {graph.loss}) {
  %d = graph.load_param @d : tensor<4x3xf32>
  %u = graph.load_param @u : tensor<2x3xf32>
  %y = graph.scatter_nd %d, %i, %u {reduction = "none"} : tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>
  %l = graph.reduce_sum %y {axes = [0, 1], keepdims = false} : tensor<4x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK-SAME: (%[[I:.*]]: tensor<2x1xi64>)
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<4x3xf32>
// CHECK-DAG: %[[Z:.*]] = graph.constant dense<0.000000e+00> : tensor<2x3xf32>
// CHECK-DAG: %[[DD:.*]] = graph.scatter_nd %[[G]], %[[I]], %[[Z]] {reduction = "none"}
// CHECK-DAG: %[[DU:.*]] = graph.gather_nd %[[G]], %[[I]] : tensor<4x3xf32>, tensor<2x1xi64> -> tensor<2x3xf32>
// CHECK: return %{{.*}}, %[[DD]], %[[DU]]

// -----

// Tests that scatter_nd (add) passes the gradient to data unchanged.
graph.param trainable @d = dense<0.5> : tensor<4x3xf32>
func.func @forward(%i: tensor<2x1xi64>, %u: tensor<2x3xf32>) -> (tensor<f32> {graph.loss}) {
  %d = graph.load_param @d : tensor<4x3xf32>
  %y = graph.scatter_nd %d, %i, %u {reduction = "add"} : tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>
  %l = graph.reduce_sum %y {axes = [0, 1], keepdims = false} : tensor<4x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<4x3xf32>
// CHECK-NOT: graph.scatter_nd %[[G]]
// CHECK: return %{{.*}}, %[[G]]

// -----

// Tests that scatter_elements (none) sends the gradient with the written
// elements zeroed to data, and its gather_elements to updates.
graph.param trainable @d = dense<0.5> : tensor<2x5xf32>
graph.param trainable @u = dense<0.25> : tensor<2x3xf32>
func.func @forward(%i: tensor<2x3xi64>) -> (tensor<f32> {graph.loss}) {
  %d = graph.load_param @d : tensor<2x5xf32>
  %u = graph.load_param @u : tensor<2x3xf32>
  %y = graph.scatter_elements %d, %i, %u {axis = 1 : i64, reduction = "none"} : tensor<2x5xf32>, tensor<2x3xi64>, tensor<2x3xf32>
  %l = graph.reduce_sum %y {axes = [0, 1], keepdims = false} : tensor<2x5xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK-SAME: (%[[I:.*]]: tensor<2x3xi64>)
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<2x5xf32>
// CHECK-DAG: %[[Z:.*]] = graph.constant dense<0.000000e+00> : tensor<2x3xf32>
// CHECK-DAG: %[[DD:.*]] = graph.scatter_elements %[[G]], %[[I]], %[[Z]] {axis = 1 : i64, reduction = "none"}
// CHECK-DAG: %[[DU:.*]] = graph.gather_elements %[[G]], %[[I]] {axis = 1 : i64} : tensor<2x5xf32>, tensor<2x3xi64> -> tensor<2x3xf32>
// CHECK: return %{{.*}}, %[[DD]], %[[DU]]

// -----

// Tests that scatter_elements (add) passes the gradient to data unchanged and
// gathers it for updates.
graph.param trainable @d = dense<0.5> : tensor<4x3xf32>
graph.param trainable @u = dense<0.25> : tensor<2x3xf32>
func.func @forward(%i: tensor<2x3xi64>) -> (tensor<f32> {graph.loss}) {
  %d = graph.load_param @d : tensor<4x3xf32>
  %u = graph.load_param @u : tensor<2x3xf32>
  %y = graph.scatter_elements %d, %i, %u {axis = 0 : i64, reduction = "add"} : tensor<4x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>
  %l = graph.reduce_sum %y {axes = [0, 1], keepdims = false} : tensor<4x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK-SAME: (%[[I:.*]]: tensor<2x3xi64>)
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<4x3xf32>
// CHECK-NOT: graph.scatter_elements
// CHECK: %[[DU:.*]] = graph.gather_elements %[[G]], %[[I]] {axis = 0 : i64} : tensor<4x3xf32>, tensor<2x3xi64> -> tensor<2x3xf32>
// CHECK-NOT: graph.scatter_elements
// CHECK: return %{{.*}}, %[[G]], %[[DU]]

// -----

// Tests that gather_nd's gradient scatter-adds into zeros of the data's type.
graph.param trainable @w = dense<0.5> : tensor<4x3xf32>
func.func @forward(%i: tensor<2x1xi64>) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<4x3xf32>
  %y = graph.gather_nd %w, %i : tensor<4x3xf32>, tensor<2x1xi64> -> tensor<2x3xf32>
  %l = graph.reduce_sum %y {axes = [0, 1], keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK-SAME: (%[[I:.*]]: tensor<2x1xi64>)
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK: %[[Z:.*]] = graph.constant dense<0.000000e+00> : tensor<4x3xf32>
// CHECK: %[[DW:.*]] = graph.scatter_nd %[[Z]], %[[I]], %[[G]] {reduction = "add"}
// CHECK: return %{{.*}}, %[[DW]]

// -----

// Tests that cumsum's gradient is the cumsum the other way, as exclusive.
graph.param trainable @w = dense<0.5> : tensor<2x5xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<2x5xf32>
  %y = graph.cumsum %w {axis = 1 : i64, exclusive = true, reverse = false} : tensor<2x5xf32>
  %l = graph.reduce_sum %y {axes = [0, 1], keepdims = false} : tensor<2x5xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<2x5xf32>
// CHECK: %[[DW:.*]] = graph.cumsum %[[G]] {axis = 1 : i64, exclusive = true, reverse = true} : tensor<2x5xf32>
// CHECK: return %{{.*}}, %[[DW]]
