// RUN: zeroc-opt %s --split-input-file --zero-verify-step --verify-diagnostics

// Tests zero-verify-step on zero-bucket's buckets of @train_step and on
// stage 3's persistent parameters.

// Stage 1, bucketed: each update reads its member's slice of the
// reduce-scattered bucket, and each replica is copied out of a gathered
// bucket of replica slices.
module attributes {zero.stage = 1 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @a = dense<0.0> : tensor<4xf32>
  graph.param trainable @b = dense<0.0> : tensor<3xf32>
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) {
    %of = graph.constant dense<false> : tensor<i1>
    %z = graph.constant dense<0.0> : tensor<f64>
    %t = zero.step_count : tensor<i64>
    %ga = zero.grad_accumulator @a : !zero.flat<grads, f32, 4, 2>
    %gb = zero.grad_accumulator @b : !zero.flat<grads, f32, 4, 2>
    %va = zero.view %ga {offset = 0 : i64} : !zero.flat<grads, f32, 4, 2> -> tensor<4xf32>
    %vb = zero.view %gb {offset = 0 : i64} : !zero.flat<grads, f32, 4, 2> -> tensor<3xf32>
    %p = zero.pack_shards %va, %vb {offsets = [0, 2]} : (tensor<4xf32>, tensor<3xf32>) -> !zero.flat<grads, f32, 8, 2>
    %r = zero.reduce_scatter %p {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 8, 2> -> !zero.shard<grads, f32, 4, device>
    %sa = zero.shard_slice %r {offset = 0 : i64} : !zero.shard<grads, f32, 4, device> -> !zero.shard<grads, f32, 2, device>
    %sb = zero.shard_slice %r {offset = 2 : i64} : !zero.shard<grads, f32, 4, device> -> !zero.shard<grads, f32, 2, device>
    zero.if_finite %of : tensor<i1> {
      zero.sgd_update @a, %sa, %z, %z, %t {optimizer = #zero.sgd<>} : !zero.shard<grads, f32, 2, device>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.sgd_update @b, %sb, %z, %z, %t {optimizer = #zero.sgd<>} : !zero.shard<grads, f32, 2, device>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.advance_step
      %la = zero.replica_slice @a : !zero.shard<params, f32, 2, device>
      %lb = zero.replica_slice @b : !zero.shard<params, f32, 2, device>
      %c = zero.concat_shards %la, %lb : (!zero.shard<params, f32, 2, device>, !zero.shard<params, f32, 2, device>) -> !zero.shard<params, f32, 4, device>
      %f = zero.all_gather %c : !zero.shard<params, f32, 4, device> -> !zero.flat<params, f32, 8, 2>
      zero.unpack_replica [@a, @b], %f {offsets = [0, 2]} : !zero.flat<params, f32, 8, 2>
    }
    return %z, %of, %z : tensor<f64>, tensor<i1>, tensor<f64>
  }
}

// -----

// Stage 1: an update reading another member's slice of the bucket.
module attributes {zero.stage = 1 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @a = dense<0.0> : tensor<4xf32>
  graph.param trainable @b = dense<0.0> : tensor<3xf32>
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) {
    %of = graph.constant dense<false> : tensor<i1>
    %z = graph.constant dense<0.0> : tensor<f64>
    %t = zero.step_count : tensor<i64>
    %ga = zero.grad_accumulator @a : !zero.flat<grads, f32, 4, 2>
    %gb = zero.grad_accumulator @b : !zero.flat<grads, f32, 4, 2>
    %va = zero.view %ga {offset = 0 : i64} : !zero.flat<grads, f32, 4, 2> -> tensor<4xf32>
    %vb = zero.view %gb {offset = 0 : i64} : !zero.flat<grads, f32, 4, 2> -> tensor<3xf32>
    %p = zero.pack_shards %va, %vb {offsets = [0, 2]} : (tensor<4xf32>, tensor<3xf32>) -> !zero.flat<grads, f32, 8, 2>
    %r = zero.reduce_scatter %p {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 8, 2> -> !zero.shard<grads, f32, 4, device>
    %sa = zero.shard_slice %r {offset = 0 : i64} : !zero.shard<grads, f32, 4, device> -> !zero.shard<grads, f32, 2, device>
    %sb = zero.shard_slice %r {offset = 2 : i64} : !zero.shard<grads, f32, 4, device> -> !zero.shard<grads, f32, 2, device>
    zero.if_finite %of : tensor<i1> {
      // expected-error@+1 {{must update 'a' from the reduce-scattered padded accumulator at stage 1}}
      zero.sgd_update @a, %sb, %z, %z, %t {optimizer = #zero.sgd<>} : !zero.shard<grads, f32, 2, device>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.sgd_update @b, %sa, %z, %z, %t {optimizer = #zero.sgd<>} : !zero.shard<grads, f32, 2, device>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.advance_step
      zero.gather_replica @a : !zero.shard<params, f32, 2, device>
      zero.gather_replica @b : !zero.shard<params, f32, 2, device>
    }
    return %z, %of, %z : tensor<f64>, tensor<i1>, tensor<f64>
  }
}

// -----

// Stage 0, bucketed: each update reads its member's view of the all-reduced
// bucket; a view at another member's offset is not its gradient.
module attributes {zero.stage = 0 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @a = dense<0.0> : tensor<2xf32>
  graph.param trainable @b = dense<0.0> : tensor<2xf32>
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) {
    %of = graph.constant dense<false> : tensor<i1>
    %z = graph.constant dense<0.0> : tensor<f64>
    %t = zero.step_count : tensor<i64>
    %ga = zero.grad_accumulator @a : tensor<2xf32>
    %gb = zero.grad_accumulator @b : tensor<2xf32>
    %p = zero.pack %ga, %gb {offsets = [0, 2]} : (tensor<2xf32>, tensor<2xf32>) -> !zero.flat<grads, f32, 4, 2>
    %r = zero.all_reduce %p {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 4, 2>
    %va = zero.view %r {offset = 0 : i64} : !zero.flat<grads, f32, 4, 2> -> tensor<2xf32>
    %vb = zero.view %r {offset = 2 : i64} : !zero.flat<grads, f32, 4, 2> -> tensor<2xf32>
    zero.if_finite %of : tensor<i1> {
      zero.sgd_update @a, %va, %z, %z, %t {optimizer = #zero.sgd<>} : tensor<2xf32>, tensor<f64>, tensor<f64>, tensor<i64>
      // expected-error@+1 {{must update 'b' from the all-reduced full accumulator at stage 0}}
      zero.sgd_update @b, %va, %z, %z, %t {optimizer = #zero.sgd<>} : tensor<2xf32>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.advance_step
    }
    return %z, %of, %z : tensor<f64>, tensor<i1>, tensor<f64>
  }
}

// -----

// A replica is copied out of a gathered zero.concat_shards, nothing else.
module attributes {zero.stage = 2 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @a = dense<0.0> : tensor<4xf32>
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) {
    %of = graph.constant dense<false> : tensor<i1>
    %z = graph.constant dense<0.0> : tensor<f64>
    %t = zero.step_count : tensor<i64>
    %ga = zero.grad_accumulator @a : !zero.shard<grads, f32, 2, device>
    zero.if_finite %of : tensor<i1> {
      zero.sgd_update @a, %ga, %z, %z, %t {optimizer = #zero.sgd<>} : !zero.shard<grads, f32, 2, device>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.advance_step
      %la = zero.replica_slice @a : !zero.shard<params, f32, 2, device>
      %f = zero.all_gather %la : !zero.shard<params, f32, 2, device> -> !zero.flat<params, f32, 4, 2>
      // expected-error@+1 {{unpacked buffer must be a zero.all_gather of zero.concat_shards}}
      zero.unpack_replica [@a], %f {offsets = [0]} : !zero.flat<params, f32, 4, 2>
    }
    return %z, %of, %z : tensor<f64>, tensor<i1>, tensor<f64>
  }
}

// -----

// The member at the unpacked offset is another parameter's slice.
module attributes {zero.stage = 2 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @a = dense<0.0> : tensor<4xf32>
  graph.param trainable @b = dense<0.0> : tensor<4xf32>
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) {
    %of = graph.constant dense<false> : tensor<i1>
    %z = graph.constant dense<0.0> : tensor<f64>
    %t = zero.step_count : tensor<i64>
    %ga = zero.grad_accumulator @a : !zero.shard<grads, f32, 2, device>
    %gb = zero.grad_accumulator @b : !zero.shard<grads, f32, 2, device>
    zero.if_finite %of : tensor<i1> {
      zero.sgd_update @a, %ga, %z, %z, %t {optimizer = #zero.sgd<>} : !zero.shard<grads, f32, 2, device>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.sgd_update @b, %gb, %z, %z, %t {optimizer = #zero.sgd<>} : !zero.shard<grads, f32, 2, device>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.advance_step
      %la = zero.replica_slice @a : !zero.shard<params, f32, 2, device>
      %lb = zero.replica_slice @b : !zero.shard<params, f32, 2, device>
      %c = zero.concat_shards %la, %lb : (!zero.shard<params, f32, 2, device>, !zero.shard<params, f32, 2, device>) -> !zero.shard<params, f32, 4, device>
      %f = zero.all_gather %c : !zero.shard<params, f32, 4, device> -> !zero.flat<params, f32, 8, 2>
      // expected-error@+1 {{offset 2 of the bucket is not the 2-element zero.replica_slice of 'a'}}
      zero.unpack_replica [@a, @b], %f {offsets = [2, 0]} : !zero.flat<params, f32, 8, 2>
    }
    return %z, %of, %z : tensor<f64>, tensor<i1>, tensor<f64>
  }
}

// -----

// The unpacked offset starts no member.
module attributes {zero.stage = 2 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @a = dense<0.0> : tensor<4xf32>
  graph.param trainable @b = dense<0.0> : tensor<4xf32>
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) {
    %of = graph.constant dense<false> : tensor<i1>
    %z = graph.constant dense<0.0> : tensor<f64>
    %t = zero.step_count : tensor<i64>
    %ga = zero.grad_accumulator @a : !zero.shard<grads, f32, 2, device>
    %gb = zero.grad_accumulator @b : !zero.shard<grads, f32, 2, device>
    zero.if_finite %of : tensor<i1> {
      zero.sgd_update @a, %ga, %z, %z, %t {optimizer = #zero.sgd<>} : !zero.shard<grads, f32, 2, device>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.sgd_update @b, %gb, %z, %z, %t {optimizer = #zero.sgd<>} : !zero.shard<grads, f32, 2, device>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.advance_step
      %la = zero.replica_slice @a : !zero.shard<params, f32, 2, device>
      %lb = zero.replica_slice @b : !zero.shard<params, f32, 2, device>
      %c = zero.concat_shards %la, %lb : (!zero.shard<params, f32, 2, device>, !zero.shard<params, f32, 2, device>) -> !zero.shard<params, f32, 4, device>
      %f = zero.all_gather %c : !zero.shard<params, f32, 4, device> -> !zero.flat<params, f32, 8, 2>
      // expected-error@+1 {{offset 1 (of 'b') is not the start of a member of the bucket}}
      zero.unpack_replica [@a, @b], %f {offsets = [0, 1]} : !zero.flat<params, f32, 8, 2>
    }
    return %z, %of, %z : tensor<f64>, tensor<i1>, tensor<f64>
  }
}

// -----

// Stage 3: a persistent parameter's replica is gathered after its update.
module attributes {zero.stage = 3 : i64, zero.world_size = 2 : i64} {
  // expected-error@+1 {{is updated but its replica is never gathered}}
  graph.param trainable @a = dense<0.0> : tensor<4xf32> {zero.persistent}
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) {
    %of = graph.constant dense<false> : tensor<i1>
    %z = graph.constant dense<0.0> : tensor<f64>
    %t = zero.step_count : tensor<i64>
    %ga = zero.grad_accumulator @a : !zero.shard<grads, f32, 2, device>
    zero.if_finite %of : tensor<i1> {
      zero.sgd_update @a, %ga, %z, %z, %t {optimizer = #zero.sgd<>} : !zero.shard<grads, f32, 2, device>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.advance_step
    }
    return %z, %of, %z : tensor<f64>, tensor<i1>, tensor<f64>
  }
}

// -----

// Stage 3: a gathered (not persistent) parameter has no replica to refresh,
// bucketed or not.
module attributes {zero.stage = 3 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @a = dense<0.0> : tensor<4xf32>
  graph.param trainable @b = dense<0.0> : tensor<4xf32> {zero.persistent}
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) {
    %of = graph.constant dense<false> : tensor<i1>
    %z = graph.constant dense<0.0> : tensor<f64>
    %t = zero.step_count : tensor<i64>
    %ga = zero.grad_accumulator @a : !zero.shard<grads, f32, 2, device>
    %gb = zero.grad_accumulator @b : !zero.shard<grads, f32, 2, device>
    zero.if_finite %of : tensor<i1> {
      zero.sgd_update @a, %ga, %z, %z, %t {optimizer = #zero.sgd<>} : !zero.shard<grads, f32, 2, device>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.sgd_update @b, %gb, %z, %z, %t {optimizer = #zero.sgd<>} : !zero.shard<grads, f32, 2, device>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.advance_step
      %la = zero.replica_slice @a : !zero.shard<params, f32, 2, device>
      %lb = zero.replica_slice @b : !zero.shard<params, f32, 2, device>
      %c = zero.concat_shards %la, %lb : (!zero.shard<params, f32, 2, device>, !zero.shard<params, f32, 2, device>) -> !zero.shard<params, f32, 4, device>
      %f = zero.all_gather %c : !zero.shard<params, f32, 4, device> -> !zero.flat<params, f32, 8, 2>
      // expected-error@+1 {{only stages 1-2 and zero.persistent stage-3 parameters gather replicas, this is stage 3}}
      zero.unpack_replica [@a, @b], %f {offsets = [0, 2]} : !zero.flat<params, f32, 8, 2>
    }
    return %z, %of, %z : tensor<f64>, tensor<i1>, tensor<f64>
  }
}
