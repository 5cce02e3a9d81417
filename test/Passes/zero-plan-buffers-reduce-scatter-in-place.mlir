// RUN: zeroc-opt %s -split-input-file -zero-plan-buffers | FileCheck %s

// Tests that on one rank zero-plan-buffers reduces a micro-step's gradient
// in place: the shard is the whole buffer, so the reduce-scatter is marked
// in_place and its shard takes no storage of its own (no arena offset),
// and the packed gradient's storage stays taken until the accumulation
// reads the shard (the next matmul's result goes after it).
module attributes {zero.stage = 3 : i64, zero.world_size = 1 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<4x4xf32>
  // CHECK-LABEL: func.func @train_micro_step
  func.func @train_micro_step(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
    // CHECK: graph.matmul {{.*}} {zero.arena_offsets = [0]}
    %g = graph.matmul %x, %x : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    // CHECK: zero.pack {{.*}} {offsets = [0]}
    %p = zero.pack %g {offsets = [0]} : (tensor<4x4xf32>) -> !zero.flat<grads, f32, 16, 1>
    // CHECK: zero.reduce_scatter_start {{.*}} {in_place, reduction = #zero<reduction sum>} :
    %t = zero.reduce_scatter_start %p {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 16, 1> -> !zero.token<!zero.shard<grads, f32, 16, device>>
    // CHECK: graph.matmul {{.*}} {zero.arena_offsets = [64]}
    %y = graph.matmul %x, %x : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    %s = zero.wait %t : !zero.token<!zero.shard<grads, f32, 16, device>> -> !zero.shard<grads, f32, 16, device>
    zero.grad_accumulate @w, %s : !zero.shard<grads, f32, 16, device>
    return %y : tensor<4x4xf32>
  }
}

// -----

// Tests that on two ranks the shard keeps storage of its own (half the
// buffer), so the reduce-scatter is not marked.
module attributes {zero.stage = 3 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<4x4xf32>
  // CHECK-LABEL: func.func @train_micro_step
  func.func @train_micro_step(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %g = graph.matmul %x, %x : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    %p = zero.pack %g {offsets = [0]} : (tensor<4x4xf32>) -> !zero.flat<grads, f32, 16, 2>
    // CHECK: zero.reduce_scatter_start {{.*}} {reduction = #zero<reduction sum>, zero.arena_offsets = [{{[0-9]+}}]}
    %t = zero.reduce_scatter_start %p {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 16, 2> -> !zero.token<!zero.shard<grads, f32, 8, device>>
    %s = zero.wait %t : !zero.token<!zero.shard<grads, f32, 8, device>> -> !zero.shard<grads, f32, 8, device>
    zero.grad_accumulate @w, %s : !zero.shard<grads, f32, 8, device>
    return %g : tensor<4x4xf32>
  }
}
