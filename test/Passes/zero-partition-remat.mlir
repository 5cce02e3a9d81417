// RUN: zeroc-opt %s -zero-autodiff -zero-partition="stage=3 world-size=2 persistence-threshold=0 max-reuse-distance=0" -zero-verify-partition | FileCheck %s

// Tests that in stage 3 a value computed from a parameter alone (the
// transposed weight of a Linear layer) is recomputed in the backward pass
// from a re-gathered parameter, instead of keeping the forward copy alive:
// the forward gather is released right after the forward use.
graph.param trainable @w = dense<0.5> : tensor<3x4xf32>
func.func @forward(%x: tensor<2x4xf32>) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<3x4xf32>
  %wt = graph.transpose %w {perm = [1, 0]} : tensor<3x4xf32> -> tensor<4x3xf32>
  %y = graph.matmul %x, %wt : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %t = graph.tanh %y : tensor<2x3xf32>
  %z = graph.matmul %t, %w : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
  %l = graph.reduce_sum %z {axes = [0, 1], keepdims = false} : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @train_micro_step
// CHECK: %[[F1:.*]] = zero.all_gather
// CHECK: %[[V1:.*]] = zero.view %[[F1]]
// CHECK: %[[WT1:.*]] = graph.transpose %[[V1]]
// CHECK: graph.matmul %arg0, %[[WT1]]
// CHECK: graph.matmul %{{.*}}, %[[V1]]
// CHECK: zero.release %[[F1]]
// CHECK: graph.reduce_sum
// CHECK: %[[F2:.*]] = zero.all_gather
// CHECK: %[[V2:.*]] = zero.view %[[F2]]
// CHECK-DAG: graph.transpose %[[V2]] {perm = [1, 0]}
// CHECK: zero.release %[[F2]]
// CHECK-NOT: %[[WT1]]
// CHECK: return
