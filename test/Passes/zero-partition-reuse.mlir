// RUN: zeroc-opt %s -zero-autodiff -zero-partition="stage=3 world-size=2 persistence-threshold=0" -zero-verify-partition | FileCheck %s --check-prefix=KEEP
// RUN: zeroc-opt %s -zero-autodiff -zero-partition="stage=3 world-size=2 persistence-threshold=0 max-reuse-distance=193" -zero-verify-partition | FileCheck %s --check-prefix=KEEP
// RUN: zeroc-opt %s -zero-autodiff -zero-partition="stage=3 world-size=2 persistence-threshold=0 max-reuse-distance=192" -zero-verify-partition | FileCheck %s --check-prefix=D192
// RUN: zeroc-opt %s -zero-autodiff -zero-partition="stage=3 world-size=2 persistence-threshold=0 max-reuse-distance=65" -zero-verify-partition | FileCheck %s --check-prefix=D192
// RUN: zeroc-opt %s -zero-autodiff -zero-partition="stage=3 world-size=2 persistence-threshold=0 max-reuse-distance=64" -zero-verify-partition | FileCheck %s --check-prefix=D64
// RUN: zeroc-opt %s -zero-autodiff -zero-partition="stage=3 world-size=2 persistence-threshold=0 max-reuse-distance=1" -zero-verify-partition | FileCheck %s --check-prefix=D64
// RUN: zeroc-opt %s -zero-autodiff -zero-partition="stage=3 world-size=2 persistence-threshold=0 max-reuse-distance=0" -zero-verify-partition | FileCheck %s --check-prefix=D0

// Tests stage3_max_reuse_distance: a parameter whose backward use comes
// before max-reuse-distance elements of other parameter uses keeps its
// forward gather. Reuse distances here: w3 0 (its backward use comes
// first), w2 64 (w3's forward and backward uses, 32 each), w1 192 (w2's
// two uses of 64, w3's two of 32); w0 has no backward use (the input needs
// no gradient). A distance below the limit keeps the gather.

graph.param trainable @w0 = dense<0.5> : tensor<4x4xf32>
graph.param trainable @w1 = dense<0.25> : tensor<4x8xf32>
graph.param trainable @w2 = dense<0.125> : tensor<8x8xf32>
graph.param trainable @w3 = dense<0.5> : tensor<8x4xf32>
func.func @forward(%x: tensor<2x4xf32>) -> (tensor<f32> {graph.loss}) {
  %w0 = graph.load_param @w0 : tensor<4x4xf32>
  %w1 = graph.load_param @w1 : tensor<4x8xf32>
  %w2 = graph.load_param @w2 : tensor<8x8xf32>
  %w3 = graph.load_param @w3 : tensor<8x4xf32>
  %a0 = graph.matmul %x, %w0 : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %h0 = graph.tanh %a0 : tensor<2x4xf32>
  %a1 = graph.matmul %h0, %w1 : tensor<2x4xf32>, tensor<4x8xf32> -> tensor<2x8xf32>
  %h1 = graph.tanh %a1 : tensor<2x8xf32>
  %a2 = graph.matmul %h1, %w2 : tensor<2x8xf32>, tensor<8x8xf32> -> tensor<2x8xf32>
  %h2 = graph.tanh %a2 : tensor<2x8xf32>
  %y = graph.matmul %h2, %w3 : tensor<2x8xf32>, tensor<8x4xf32> -> tensor<2x4xf32>
  %l = graph.reduce_sum %y {axes = [0, 1], keepdims = false} : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// Every parameter gathered once; each kept copy is released after its
// backward use.
// KEEP-LABEL: func.func @train_micro_step
// KEEP: zero.param_shard @w0
// KEEP: zero.param_shard @w1
// KEEP: %[[W1:.*]] = zero.all_gather
// KEEP: zero.param_shard @w2
// KEEP: %[[W2:.*]] = zero.all_gather
// KEEP: zero.param_shard @w3
// KEEP: %[[W3:.*]] = zero.all_gather
// KEEP: graph.reduce_sum {{.*}}zero.forward_end
// KEEP: zero.release %[[W3]]
// KEEP: zero.release %[[W2]]
// KEEP: zero.release %[[W1]]
// KEEP-NOT: zero.param_shard
// KEEP: return

// w3 and w2 keep their gathers; w1 is gathered again.
// D192-LABEL: func.func @train_micro_step
// D192-COUNT-4: zero.param_shard
// D192: graph.reduce_sum {{.*}}zero.forward_end
// D192-NOT: zero.param_shard
// D192: zero.param_shard @w1
// D192-NOT: zero.param_shard
// D192: return

// Only w3 keeps its gather.
// D64-LABEL: func.func @train_micro_step
// D64-COUNT-4: zero.param_shard
// D64: graph.reduce_sum {{.*}}zero.forward_end
// D64-NOT: zero.param_shard
// D64: zero.param_shard @w2
// D64-NOT: zero.param_shard
// D64: zero.param_shard @w1
// D64-NOT: zero.param_shard
// D64: return

// 0: every backward use gathers again.
// D0-LABEL: func.func @train_micro_step
// D0-COUNT-4: zero.param_shard
// D0: graph.reduce_sum {{.*}}zero.forward_end
// D0: zero.param_shard @w3
// D0: zero.param_shard @w2
// D0: zero.param_shard @w1
// D0-NOT: zero.param_shard
// D0: return
