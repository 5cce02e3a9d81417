// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=3 world-size=2 persistence-threshold=0' --zero-step-boundary --zero-overlap='prefetch-bucket-size=16' --zero-verify-partition --zero-verify-step --zero-plan-buffers | FileCheck %s
// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=3 world-size=2 persistence-threshold=0' --zero-step-boundary --zero-overlap='prefetch-bucket-size=32' --zero-verify-partition --zero-verify-step | FileCheck %s --check-prefix=TWO
// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=3 world-size=2 persistence-threshold=0' --zero-overlap --zero-verify-partition | FileCheck %s --check-prefix=NOSTEP

// Tests zero-overlap's carry across the step boundary at stage 3: the
// micro-step's first gather (w1's) starts before anything computes, so
// nothing hides it there. @train_step moves w1's update to the front of its
// update block and starts the same gather right after it (carry = 0), so
// that w2's update computes while it travels; the micro-step's start is
// marked carried = 0 (it only issues the gather when the carry did not run).
// Both get the same arena storage, placed first in each function.
graph.param trainable @w1 = dense<0.5> : tensor<4x4xf32>
graph.param trainable @w2 = dense<0.25> : tensor<4x4xf32>
func.func @forward(%x: tensor<2x4xf32> {graph.input = "x"}) -> (tensor<f32> {graph.loss}) {
  %w1 = graph.load_param @w1 : tensor<4x4xf32>
  %w2 = graph.load_param @w2 : tensor<4x4xf32>
  %y = graph.matmul %x, %w1 : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %r = graph.relu %y : tensor<2x4xf32>
  %z = graph.matmul %r, %w2 : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %l = graph.reduce_mean %z {axes = [0, 1], keepdims = false} : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK-LABEL: func.func @train_micro_step
// CHECK: %[[SH1:.*]] = zero.param_shard @w1
// CHECK-NEXT: %[[T1:.*]] = zero.all_gather_start %[[SH1]] {carried = 0 : i64, zero.arena_offsets = [[OFF:\[0\]]]} : !zero.shard<params, f32, 8, device> -> !zero.token<!zero.flat<params, f32, 16, 2>>
// CHECK-NEXT: zero.wait %[[T1]]
// CHECK: zero.param_shard @w2
// CHECK-NEXT: zero.all_gather_start %{{.*}} {zero.arena_offsets
// CHECK-LABEL: func.func @train_step
// CHECK: zero.if_finite
// CHECK-NEXT: zero.adam_update @w1
// CHECK-NEXT: %[[S1:.*]] = zero.param_shard @w1
// CHECK-NEXT: zero.all_gather_start %[[S1]] {carry = 0 : i64, zero.arena_offsets = [[OFF]]} : !zero.shard<params, f32, 8, device> -> !zero.token<!zero.flat<params, f32, 16, 2>>
// CHECK-NEXT: zero.adam_update @w2
// CHECK-NOT: zero.wait

// With room for both gathers in flight, both start before the first wait
// and both are carried, in order, each after its parameter's update.
// TWO-LABEL: func.func @train_micro_step
// TWO: zero.all_gather_start %{{.*}} {carried = 0 : i64}
// TWO-NEXT: zero.param_shard @w2
// TWO-NEXT: zero.all_gather_start %{{.*}} {carried = 1 : i64}
// TWO-NEXT: zero.wait
// TWO-LABEL: func.func @train_step
// TWO: zero.adam_update @w1
// TWO-NEXT: zero.param_shard @w1
// TWO-NEXT: zero.all_gather_start %{{.*}} {carry = 0 : i64}
// TWO-NEXT: zero.adam_update @w2
// TWO-NEXT: zero.param_shard @w2
// TWO-NEXT: zero.all_gather_start %{{.*}} {carry = 1 : i64}

// Without @train_step nothing is carried.
// NOSTEP-LABEL: func.func @train_micro_step
// NOSTEP-NOT: carr
