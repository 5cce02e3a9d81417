// RUN: zeroc-opt %s -split-input-file -zero-plan-buffers | FileCheck %s

// Tests where zero-plan-buffers puts the gradient accumulators in the
// runtime's gradient slab. A stage-0 bucket's accumulators lie where its
// pack holds them (w at byte 0, b at 48), so the pack is that stretch of
// the slab: it is marked zero.in_grad_slab and takes no arena storage, and
// its 16-element buffer (the 16th element padding for 2 ranks) ends at
// byte 64. The accumulator outside the bucket starts at the next 64-byte
// boundary; the frozen parameter has none.
// CHECK: module attributes {zero.arena_bytes = {{[0-9]+}} : i64, zero.grad_slab_bytes = 84 : i64
// CHECK: graph.param trainable @w {{.*}}#zero.state_layout<param = 12, grad = 12, update = 12>}
// CHECK: graph.param trainable @b {{.*}}#zero.state_layout<param = 4, grad = 3, update = 3, grad_offset = 48>}
// CHECK: graph.param trainable @c {{.*}}#zero.state_layout<param = 6, grad = 5, update = 5, grad_offset = 64>}
// CHECK: graph.param @f {{.*}}#zero.state_layout<param = 2>}
// CHECK-LABEL: func.func @train_step
// CHECK: zero.pack %{{.*}}, %{{.*}} {offsets = [0, 12], zero.in_grad_slab} : (tensor<4x3xf32>, tensor<3xf32>) -> !zero.flat<grads, f32, 16, 2>
module attributes {zero.stage = 0 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<4x3xf32>
  graph.param trainable @b = dense<0.1> : tensor<3xf32>
  graph.param trainable @c = dense<0.1> : tensor<5xf32>
  graph.param @f = dense<0.1> : tensor<2xf32>
  func.func @train_micro_step() {
    return
  }
  func.func @train_step() -> tensor<f64> attributes {zero.micro_steps = 1 : i64} {
    %w = zero.grad_accumulator @w : tensor<4x3xf32>
    %b = zero.grad_accumulator @b : tensor<3xf32>
    %p = zero.pack %w, %b {offsets = [0, 12]} : (tensor<4x3xf32>, tensor<3xf32>) -> !zero.flat<grads, f32, 16, 2>
    %r = zero.all_reduce %p {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 16, 2>
    %vw = zero.view %r {offset = 0 : i64} : !zero.flat<grads, f32, 16, 2> -> tensor<4x3xf32>
    %vb = zero.view %r {offset = 12 : i64} : !zero.flat<grads, f32, 16, 2> -> tensor<3xf32>
    %c = zero.grad_accumulator @c : tensor<5xf32>
    %rc = zero.all_reduce %c {reduction = #zero<reduction sum>} : tensor<5xf32>
    %s = zero.sum_squares %vw, %vb, %rc : tensor<4x3xf32>, tensor<3xf32>, tensor<5xf32> -> tensor<f64>
    return %s : tensor<f64>
  }
}

// -----

// Tests that a pack copies its accumulators into arena storage of its own
// when one of them is read elsewhere too (the all-reduce in the slab would
// change what that reader sees): no zero.in_grad_slab, and every
// accumulator from a 64-byte boundary.
// CHECK: module attributes {zero.arena_bytes = {{[0-9]+}} : i64, zero.grad_slab_bytes = 76 : i64
// CHECK: graph.param trainable @w {{.*}}#zero.state_layout<param = 12, grad = 12, update = 12>}
// CHECK: graph.param trainable @b {{.*}}#zero.state_layout<param = 4, grad = 3, update = 3, grad_offset = 64>}
// CHECK-LABEL: func.func @train_step
// CHECK: zero.pack %{{.*}}, %{{.*}} {offsets = [0, 12], zero.arena_offsets = [{{[0-9]+}}]}
module attributes {zero.stage = 0 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<4x3xf32>
  graph.param trainable @b = dense<0.1> : tensor<3xf32>
  func.func @train_micro_step() {
    return
  }
  func.func @train_step() -> tensor<f64> attributes {zero.micro_steps = 1 : i64} {
    %w = zero.grad_accumulator @w : tensor<4x3xf32>
    %b = zero.grad_accumulator @b : tensor<3xf32>
    %p = zero.pack %w, %b {offsets = [0, 12]} : (tensor<4x3xf32>, tensor<3xf32>) -> !zero.flat<grads, f32, 16, 2>
    %r = zero.all_reduce %p {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 16, 2>
    %vw = zero.view %r {offset = 0 : i64} : !zero.flat<grads, f32, 16, 2> -> tensor<4x3xf32>
    %s = zero.sum_squares %vw, %w : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<f64>
    return %s : tensor<f64>
  }
}

// -----

// Tests that only stage 0's packs are placed in the slab: a stage-1
// accumulator holds the padded elements, and stage 1's buckets are
// zero.pack_shards, each rank's shards apart. A zero.pack there copies.
// CHECK: module attributes {zero.arena_bytes = {{[0-9]+}} : i64, zero.grad_slab_bytes = 80 : i64
// CHECK-LABEL: func.func @train_step
// CHECK: zero.pack %{{.*}}, %{{.*}} {offsets = [0, 12], zero.arena_offsets = [{{[0-9]+}}]}
module attributes {zero.stage = 1 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<4x3xf32>
  graph.param trainable @b = dense<0.1> : tensor<3xf32>
  func.func @train_micro_step() {
    return
  }
  func.func @train_step() -> tensor<f64> attributes {zero.micro_steps = 1 : i64} {
    %w = zero.grad_accumulator @w : tensor<4x3xf32>
    %b = zero.grad_accumulator @b : tensor<3xf32>
    %p = zero.pack %w, %b {offsets = [0, 12]} : (tensor<4x3xf32>, tensor<3xf32>) -> !zero.flat<grads, f32, 16, 2>
    %r = zero.all_reduce %p {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 16, 2>
    %vw = zero.view %r {offset = 0 : i64} : !zero.flat<grads, f32, 16, 2> -> tensor<4x3xf32>
    %s = zero.sum_squares %vw : tensor<4x3xf32> -> tensor<f64>
    return %s : tensor<f64>
  }
}
