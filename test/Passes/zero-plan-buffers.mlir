// RUN: zeroc-opt %s -split-input-file -zero-plan-buffers -verify-diagnostics | FileCheck %s

// Tests that results get 64-byte aligned offsets, that a buffer is reused
// after its last use but never by the op that reads it, and that reshapes,
// views, parameters and constants get no arena storage.
module attributes {zero.stage = 3 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<16xf32>
  // CHECK-LABEL: module attributes
  // CHECK-SAME: zero.arena_bytes = 192 : i64
  func.func @train_micro_step(%x: tensor<16xf32>) -> tensor<f32> {
    // CHECK: zero.param_shard @w :
    // CHECK-NOT: zero.arena_offsets
    %s = zero.param_shard @w : !zero.shard<params, f32, 8, device>
    // CHECK: zero.all_gather {{.*}} {zero.arena_offsets = [0]}
    %f = zero.all_gather %s : !zero.shard<params, f32, 8, device> -> !zero.flat<params, f32, 16, 2>
    // CHECK: zero.view
    // CHECK-NOT: zero.arena_offsets
    %w = zero.view %f {offset = 0} : !zero.flat<params, f32, 16, 2> -> tensor<16xf32>
    // CHECK: graph.mul {{.*}} {zero.arena_offsets = [64]}
    %y = graph.mul %x, %w : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
    zero.release %f : !zero.flat<params, f32, 16, 2>
    // The gathered buffer is free again: the next result takes offset 0.
    // CHECK: graph.relu {{.*}} {zero.arena_offsets = [0]}
    %r = graph.relu %y : tensor<16xf32>
    // CHECK: graph.reshape
    // CHECK-NOT: zero.arena_offsets
    %t = graph.reshape %r : tensor<16xf32> -> tensor<4x4xf32>
    // %y died at the relu, but %t (the relu's storage) is still live.
    // CHECK: graph.reduce_sum {{.*}}zero.arena_offsets = [64]}
    %l = graph.reduce_sum %t {axes = [0, 1], keepdims = false} : tensor<4x4xf32> -> tensor<f32>
    %g = zero.pack %t {offsets = [0]} : (tensor<4x4xf32>) -> !zero.flat<grads, f32, 16, 2>
    %gs = zero.reduce_scatter %g {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 16, 2> -> !zero.shard<grads, f32, 8, device>
    zero.grad_accumulate @w, %gs : !zero.shard<grads, f32, 8, device>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a module without @train_micro_step is rejected.
// expected-error @+1 {{zero-plan-buffers needs @train_micro_step (run zero-partition)}}
module {
}
