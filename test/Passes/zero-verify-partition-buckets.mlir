// RUN: zeroc-opt %s -split-input-file -zero-verify-partition -verify-diagnostics

// Tests zero-verify-partition on the buckets of zero-bucket: every member
// of a gradient bucket accumulates exactly its shard of the reduced
// bucket, and every parameter read out of a gathered bucket is the shard
// of a parameter of its type.

// Tests that an accumulated shard was reduce-scattered.
module attributes {zero.stage = 2 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<2xf32>
  func.func @train_micro_step(%g: !zero.shard<grads, f32, 1, device>) -> tensor<f32> {
    // expected-error @+1 {{accumulated shard must come from zero.reduce_scatter}}
    zero.grad_accumulate @w, %g : !zero.shard<grads, f32, 1, device>
    %l = graph.constant dense<0.0> : tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that an accumulated slice is of a bucket.
module attributes {zero.stage = 2 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<2xf32>
  func.func @train_micro_step(%x: tensor<4xf32>) -> tensor<f32> {
    %p = zero.pack %x {offsets = [0]} : (tensor<4xf32>) -> !zero.flat<grads, f32, 4, 2>
    %s = zero.reduce_scatter %p {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 4, 2> -> !zero.shard<grads, f32, 2, device>
    %v = zero.shard_slice %s {offset = 1} : !zero.shard<grads, f32, 2, device> -> !zero.shard<grads, f32, 1, device>
    // expected-error @+1 {{accumulated slice must be of a reduce-scattered zero.pack_shards bucket}}
    zero.grad_accumulate @w, %v : !zero.shard<grads, f32, 1, device>
    %l = graph.constant dense<0.0> : tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that an accumulated slice is one member's shard: the 6-element
// member's shard is [0, 3), not [1, 4).
module attributes {zero.stage = 2 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @a = dense<0.5> : tensor<2x3xf32>
  graph.param trainable @b = dense<0.5> : tensor<3xf32>
  func.func @train_micro_step(%ga: tensor<2x3xf32>, %gb: tensor<3xf32>) -> tensor<f32> {
    %p = zero.pack_shards %ga, %gb {offsets = [0, 3]} : (tensor<2x3xf32>, tensor<3xf32>) -> !zero.flat<grads, f32, 10, 2>
    %s = zero.reduce_scatter %p {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 10, 2> -> !zero.shard<grads, f32, 5, device>
    %va = zero.shard_slice %s {offset = 1} : !zero.shard<grads, f32, 5, device> -> !zero.shard<grads, f32, 3, device>
    // expected-error @+1 {{accumulated slice [1, 4) is not the shard of a 6-element member of its bucket}}
    zero.grad_accumulate @a, %va : !zero.shard<grads, f32, 3, device>
    %vb = zero.shard_slice %s {offset = 3} : !zero.shard<grads, f32, 5, device> -> !zero.shard<grads, f32, 2, device>
    zero.grad_accumulate @b, %vb : !zero.shard<grads, f32, 2, device>
    %l = graph.constant dense<0.0> : tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that two parameters do not accumulate the same member's shard.
module attributes {zero.stage = 2 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @a = dense<0.5> : tensor<4xf32>
  graph.param trainable @b = dense<0.5> : tensor<4xf32>
  func.func @train_micro_step(%ga: tensor<4xf32>, %gb: tensor<4xf32>) -> tensor<f32> {
    %p = zero.pack_shards %ga, %gb {offsets = [0, 2]} : (tensor<4xf32>, tensor<4xf32>) -> !zero.flat<grads, f32, 8, 2>
    %s = zero.reduce_scatter %p {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 8, 2> -> !zero.shard<grads, f32, 4, device>
    %va = zero.shard_slice %s {offset = 2} : !zero.shard<grads, f32, 4, device> -> !zero.shard<grads, f32, 2, device>
    zero.grad_accumulate @a, %va : !zero.shard<grads, f32, 2, device>
    %vb = zero.shard_slice %s {offset = 2} : !zero.shard<grads, f32, 4, device> -> !zero.shard<grads, f32, 2, device>
    // expected-error @+1 {{accumulates bucket member at offset 2 a second time}}
    zero.grad_accumulate @b, %vb : !zero.shard<grads, f32, 2, device>
    %l = graph.constant dense<0.0> : tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a parameter is unpacked from a gathered bucket.
module attributes {zero.stage = 3 : i64, zero.world_size = 2 : i64} {
  func.func @train_micro_step(%f: !zero.flat<params, f32, 4, 2>) -> tensor<f32> {
    // expected-error @+1 {{unpacked buffer must be a zero.all_gather of zero.concat_shards}}
    %w = zero.unpack_shards %f {offsets = [0]} : !zero.flat<params, f32, 4, 2> -> tensor<4xf32>
    %l = graph.reduce_sum %w {axes = [0], keepdims = false} : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that an unpacked parameter starts where a member's shard starts.
module attributes {zero.stage = 3 : i64, zero.world_size = 2 : i64} {
  graph.param @a = dense<0.5> : tensor<4xf32>
  graph.param @b = dense<0.5> : tensor<4xf32>
  func.func @train_micro_step() -> tensor<f32> {
    %sa = zero.param_shard @a : !zero.shard<params, f32, 2, device>
    %sb = zero.param_shard @b : !zero.shard<params, f32, 2, device>
    %c = zero.concat_shards %sa, %sb : (!zero.shard<params, f32, 2, device>, !zero.shard<params, f32, 2, device>) -> !zero.shard<params, f32, 4, device>
    %f = zero.all_gather %c : !zero.shard<params, f32, 4, device> -> !zero.flat<params, f32, 8, 2>
    // expected-error @+1 {{offset 1 (result 0) is not the start of a 2-element shard of the gathered bucket}}
    %w = zero.unpack_shards %f {offsets = [1]} : !zero.flat<params, f32, 8, 2> -> tensor<4xf32>
    zero.release %f : !zero.flat<params, f32, 8, 2>
    %l = graph.reduce_sum %w {axes = [0], keepdims = false} : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that an unpacked parameter has the type of the parameter whose
// shard is at its offset.
module attributes {zero.stage = 3 : i64, zero.world_size = 2 : i64} {
  graph.param @a = dense<0.5> : tensor<3xf32>
  graph.param @b = dense<0.5> : tensor<4xf32>
  func.func @train_micro_step() -> tensor<f32> {
    %sa = zero.param_shard @a : !zero.shard<params, f32, 2, device>
    %sb = zero.param_shard @b : !zero.shard<params, f32, 2, device>
    %c = zero.concat_shards %sa, %sb : (!zero.shard<params, f32, 2, device>, !zero.shard<params, f32, 2, device>) -> !zero.shard<params, f32, 4, device>
    %f = zero.all_gather %c : !zero.shard<params, f32, 4, device> -> !zero.flat<params, f32, 8, 2>
    // expected-error @+1 {{unpacked shard 0 is not a zero.param_shard of a parameter of type 'tensor<4xf32>'}}
    %w = zero.unpack_shards %f {offsets = [0]} : !zero.flat<params, f32, 8, 2> -> tensor<4xf32>
    zero.release %f : !zero.flat<params, f32, 8, 2>
    %l = graph.reduce_sum %w {axes = [0], keepdims = false} : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a gathered bucket is released.
module attributes {zero.stage = 3 : i64, zero.world_size = 2 : i64} {
  graph.param @a = dense<0.5> : tensor<4xf32>
  graph.param @b = dense<0.5> : tensor<4xf32>
  func.func @train_micro_step() -> tensor<f32> {
    %sa = zero.param_shard @a : !zero.shard<params, f32, 2, device>
    %sb = zero.param_shard @b : !zero.shard<params, f32, 2, device>
    %c = zero.concat_shards %sa, %sb : (!zero.shard<params, f32, 2, device>, !zero.shard<params, f32, 2, device>) -> !zero.shard<params, f32, 4, device>
    // expected-error @+1 {{gathered parameter buffer is never released}}
    %f = zero.all_gather %c : !zero.shard<params, f32, 4, device> -> !zero.flat<params, f32, 8, 2>
    %wa, %wb = zero.unpack_shards %f {offsets = [0, 2]} : !zero.flat<params, f32, 8, 2> -> tensor<4xf32>, tensor<4xf32>
    %y = graph.add %wa, %wb : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %l = graph.reduce_sum %y {axes = [0], keepdims = false} : tensor<4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
