// RUN: zeroc-opt %s -split-input-file -zero-plan-buffers | FileCheck %s

// Tests that on one rank zero-plan-buffers gathers a stage-3 parameter in
// place: the shard of a device zero.param_shard is the whole buffer, so the
// gather is marked in_place, the gathered parameter is a view of the
// rank's shard and takes no arena storage, and the matmul's result is the
// arena's first buffer.
module attributes {zero.stage = 3 : i64, zero.world_size = 1 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<4x4xf32>
  // CHECK-LABEL: func.func @train_micro_step
  func.func @train_micro_step(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %s = zero.param_shard @w : !zero.shard<params, f32, 16, device>
    // CHECK: zero.all_gather_start %{{.*}} {in_place} :
    %t = zero.all_gather_start %s : !zero.shard<params, f32, 16, device> -> !zero.token<!zero.flat<params, f32, 16, 1>>
    %f = zero.wait %t : !zero.token<!zero.flat<params, f32, 16, 1>> -> !zero.flat<params, f32, 16, 1>
    %w = zero.view %f {offset = 0 : i64} : !zero.flat<params, f32, 16, 1> -> tensor<4x4xf32>
    // CHECK: graph.matmul {{.*}} {zero.arena_offsets = [0]}
    %y = graph.matmul %x, %w : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    zero.release %f : !zero.flat<params, f32, 16, 1>
    // CHECK: zero.all_gather %{{.*}} {in_place} :
    %g = zero.all_gather %s : !zero.shard<params, f32, 16, device> -> !zero.flat<params, f32, 16, 1>
    %w2 = zero.view %g {offset = 0 : i64} : !zero.flat<params, f32, 16, 1> -> tensor<4x4xf32>
    // CHECK: graph.matmul {{.*}} {zero.arena_offsets = [64]}
    %z = graph.matmul %y, %w2 : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    zero.release %g : !zero.flat<params, f32, 16, 1>
    return %z : tensor<4x4xf32>
  }
}

// -----

// Tests that on two ranks (the buffer is twice the shard) the gather keeps
// a buffer of its own.
module attributes {zero.stage = 3 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<4x4xf32>
  // CHECK-LABEL: func.func @train_micro_step
  func.func @train_micro_step(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %s = zero.param_shard @w : !zero.shard<params, f32, 8, device>
    // CHECK: zero.all_gather %{{.*}} {zero.arena_offsets = [0]} :
    %f = zero.all_gather %s : !zero.shard<params, f32, 8, device> -> !zero.flat<params, f32, 16, 2>
    %w = zero.view %f {offset = 0 : i64} : !zero.flat<params, f32, 16, 2> -> tensor<4x4xf32>
    %y = graph.matmul %x, %w : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    zero.release %f : !zero.flat<params, f32, 16, 2>
    return %y : tensor<4x4xf32>
  }
}
