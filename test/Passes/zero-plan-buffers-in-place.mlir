// RUN: zeroc-opt %s -split-input-file -zero-plan-buffers | FileCheck %s

// Tests that with one micro-step a gradient used only by its accumulation
// (through a reshape) is planned in the accumulator (offset -1, the
// accumulation in_place) and takes no arena space.
module attributes {zero.stage = 0 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<4x4xf32>
  // CHECK-LABEL: module attributes
  // CHECK-SAME: zero.arena_bytes = 64 : i64
  func.func @train_micro_step(%x: tensor<16xf32>) -> tensor<f32> {
    // CHECK: graph.relu %{{.*}} {zero.arena_offsets = [-1]}
    %g = graph.relu %x : tensor<16xf32>
    %r = graph.reshape %g : tensor<16xf32> -> tensor<4x4xf32>
    // CHECK: zero.grad_accumulate @w, %{{.*}} {in_place}
    zero.grad_accumulate @w, %r : tensor<4x4xf32>
    // CHECK: graph.reduce_sum {{.*}}zero.arena_offsets = [0]}
    %l = graph.reduce_sum %x {axes = [0], keepdims = false} : tensor<16xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
  func.func @train_step() attributes {zero.micro_steps = 1 : i64} {
    %a = zero.grad_accumulator @w : tensor<4x4xf32>
    return
  }
}

// -----
// CHECK-LABEL: // {{-----}}

// Tests that a gradient is copied into its accumulator (planned in the
// arena) when the step has two micro-steps.
module attributes {zero.stage = 0 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<16xf32>
  func.func @train_micro_step(%x: tensor<16xf32>) {
    // CHECK: graph.relu %{{.*}} {zero.arena_offsets = [0]}
    %g = graph.relu %x : tensor<16xf32>
    // CHECK: zero.grad_accumulate @w, %{{.*}} : tensor<16xf32>
    zero.grad_accumulate @w, %g : tensor<16xf32>
    return
  }
  func.func @train_step() attributes {zero.micro_steps = 2 : i64} {
    %a = zero.grad_accumulator @w : tensor<16xf32>
    return
  }
}

// -----
// CHECK-LABEL: // {{-----}}

// Tests that a gradient another op also reads stays in the arena.
module attributes {zero.stage = 0 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<16xf32>
  func.func @train_micro_step(%x: tensor<16xf32>) -> tensor<16xf32> {
    // CHECK: graph.relu %{{.*}} {zero.arena_offsets = [0]}
    %g = graph.relu %x : tensor<16xf32>
    // CHECK: zero.grad_accumulate @w, %{{.*}} : tensor<16xf32>
    zero.grad_accumulate @w, %g : tensor<16xf32>
    %y = graph.mul %g, %x : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
    return %y : tensor<16xf32>
  }
  func.func @train_step() attributes {zero.micro_steps = 1 : i64} {
    %a = zero.grad_accumulator @w : tensor<16xf32>
    return
  }
}

// -----
// CHECK-LABEL: // {{-----}}

// Tests that a bf16 gradient widened into an f32 accumulator stays in the
// arena.
module attributes {zero.stage = 0 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<16xbf16>
  func.func @train_micro_step(%x: tensor<16xbf16>) {
    // CHECK: graph.relu %{{.*}} {zero.arena_offsets = [0]}
    %g = graph.relu %x : tensor<16xbf16>
    // CHECK: zero.grad_accumulate @w, %{{.*}} : tensor<16xbf16>
    zero.grad_accumulate @w, %g : tensor<16xbf16>
    return
  }
  func.func @train_step() attributes {zero.micro_steps = 1 : i64} {
    %a = zero.grad_accumulator @w : tensor<16xf32>
    return
  }
}

// -----
// CHECK-LABEL: // {{-----}}

// Tests a stage-3 gradient on one rank: packed (a renaming), reduce-scattered
// in place (the shard is the whole buffer) and waited for, it is planned in
// the accumulator, and the pack, the start and the wait take no storage.
module attributes {zero.stage = 3 : i64, zero.world_size = 1 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<4x4xf32>
  // CHECK-LABEL: module attributes
  // CHECK-SAME: zero.arena_bytes = 0 : i64
  func.func @train_micro_step(%x: tensor<4x4xf32>) {
    // CHECK: graph.matmul {{.*}} {zero.arena_offsets = [-1]}
    %g = graph.matmul %x, %x : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    %p = zero.pack %g {offsets = [0]} : (tensor<4x4xf32>) -> !zero.flat<grads, f32, 16, 1>
    // CHECK: zero.reduce_scatter_start {{.*}} {in_place, reduction = #zero<reduction sum>} :
    %t = zero.reduce_scatter_start %p {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 16, 1> -> !zero.token<!zero.shard<grads, f32, 16, device>>
    %s = zero.wait %t : !zero.token<!zero.shard<grads, f32, 16, device>> -> !zero.shard<grads, f32, 16, device>
    // CHECK: zero.grad_accumulate @w, %{{.*}} {in_place}
    zero.grad_accumulate @w, %s : !zero.shard<grads, f32, 16, device>
    return
  }
  func.func @train_step() attributes {zero.micro_steps = 1 : i64} {
    %a = zero.grad_accumulator @w : !zero.shard<grads, f32, 16, device>
    return
  }
}

// -----
// CHECK-LABEL: // {{-----}}

// Tests the same gradient on two ranks: the rank's shard is half the
// buffer, which the reduce-scatter writes, so the gradient is produced in
// the arena and the shard accumulated.
module attributes {zero.stage = 3 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<4x4xf32>
  func.func @train_micro_step(%x: tensor<4x4xf32>) {
    // CHECK: graph.matmul {{.*}} {zero.arena_offsets = [0]}
    %g = graph.matmul %x, %x : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    %p = zero.pack %g {offsets = [0]} : (tensor<4x4xf32>) -> !zero.flat<grads, f32, 16, 2>
    %t = zero.reduce_scatter_start %p {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 16, 2> -> !zero.token<!zero.shard<grads, f32, 8, device>>
    %s = zero.wait %t : !zero.token<!zero.shard<grads, f32, 8, device>> -> !zero.shard<grads, f32, 8, device>
    // CHECK: zero.grad_accumulate @w, %{{.*}} : !zero.shard<grads, f32, 8, device>
    zero.grad_accumulate @w, %s : !zero.shard<grads, f32, 8, device>
    return
  }
  func.func @train_step() attributes {zero.micro_steps = 1 : i64} {
    %a = zero.grad_accumulator @w : !zero.shard<grads, f32, 8, device>
    return
  }
}
