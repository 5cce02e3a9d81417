// RUN: zeroc-opt %s --split-input-file --zero-verify-step --verify-diagnostics

// Tests the invariants zero-verify-step checks on @train_step.

module attributes {zero.stage = 0 : i64, zero.world_size = 2 : i64} {
  // expected-error@+1 {{has no gradient read and update in @train_step}}
  graph.param trainable @w = dense<0.5> : tensor<4xf32>
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) {
    %of = graph.constant dense<false> : tensor<i1>
    %z = graph.constant dense<0.0> : tensor<f64>
    zero.if_finite %of : tensor<i1> {
      zero.advance_step
    }
    return %z, %of, %z : tensor<f64>, tensor<i1>, tensor<f64>
  }
}

// -----

// Stage 0 updates from the all-reduced accumulator, not the local one.
module attributes {zero.stage = 0 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<4xf32>
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) {
    %of = graph.constant dense<false> : tensor<i1>
    %z = graph.constant dense<0.0> : tensor<f64>
    %t = zero.step_count : tensor<i64>
    %g = zero.grad_accumulator @w : tensor<4xf32>
    zero.if_finite %of : tensor<i1> {
      // expected-error@+1 {{must update 'w' from the all-reduced full accumulator at stage 0}}
      zero.sgd_update @w, %g, %z, %z, %t {optimizer = #zero.sgd<>} : tensor<4xf32>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.advance_step
    }
    return %z, %of, %z : tensor<f64>, tensor<i1>, tensor<f64>
  }
}

// -----

// An update outside the guard would run on overflow steps.
module attributes {zero.stage = 2 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<4xf32>
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) {
    %of = graph.constant dense<false> : tensor<i1>
    %z = graph.constant dense<0.0> : tensor<f64>
    %t = zero.step_count : tensor<i64>
    %g = zero.grad_accumulator @w : !zero.shard<grads, f32, 2, device>
    // expected-error@+1 {{must be inside the step's zero.if_finite}}
    zero.sgd_update @w, %g, %z, %z, %t {optimizer = #zero.sgd<>} : !zero.shard<grads, f32, 2, device>, tensor<f64>, tensor<f64>, tensor<i64>
    zero.if_finite %of : tensor<i1> {
      zero.advance_step
    }
    return %z, %of, %z : tensor<f64>, tensor<i1>, tensor<f64>
  }
}

// -----

// Stage 2 must gather the updated replica.
module attributes {zero.stage = 2 : i64, zero.world_size = 2 : i64} {
  // expected-error@+1 {{is updated but its replica is never gathered}}
  graph.param trainable @w = dense<0.5> : tensor<4xf32>
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) {
    %of = graph.constant dense<false> : tensor<i1>
    %z = graph.constant dense<0.0> : tensor<f64>
    %t = zero.step_count : tensor<i64>
    %g = zero.grad_accumulator @w : !zero.shard<grads, f32, 2, device>
    zero.if_finite %of : tensor<i1> {
      zero.sgd_update @w, %g, %z, %z, %t {optimizer = #zero.sgd<>} : !zero.shard<grads, f32, 2, device>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.advance_step
    }
    return %z, %of, %z : tensor<f64>, tensor<i1>, tensor<f64>
  }
}

// -----

// Stage 3 keeps only shards: nothing to gather at the step.
module attributes {zero.stage = 3 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<4xf32>
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) {
    %of = graph.constant dense<false> : tensor<i1>
    %z = graph.constant dense<0.0> : tensor<f64>
    %t = zero.step_count : tensor<i64>
    %g = zero.grad_accumulator @w : !zero.shard<grads, f32, 2, device>
    zero.if_finite %of : tensor<i1> {
      zero.sgd_update @w, %g, %z, %z, %t {optimizer = #zero.sgd<>} : !zero.shard<grads, f32, 2, device>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.advance_step
      // expected-error@+1 {{only stages 1-2 and zero.persistent stage-3 parameters gather replicas, this is stage 3}}
      zero.gather_replica @w : !zero.shard<params, f32, 2, device>
    }
    return %z, %of, %z : tensor<f64>, tensor<i1>, tensor<f64>
  }
}

// -----

// A shard of the wrong size.
module attributes {zero.stage = 3 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<4xf32>
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) {
    %of = graph.constant dense<false> : tensor<i1>
    %z = graph.constant dense<0.0> : tensor<f64>
    %t = zero.step_count : tensor<i64>
    %g = zero.grad_accumulator @w : !zero.shard<grads, f32, 4, device>
    zero.if_finite %of : tensor<i1> {
      // expected-error@+1 {{must update 'w' from a shard of ceil(numel / world) elements at stage 3}}
      zero.sgd_update @w, %g, %z, %z, %t {optimizer = #zero.sgd<>} : !zero.shard<grads, f32, 4, device>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.advance_step
    }
    return %z, %of, %z : tensor<f64>, tensor<i1>, tensor<f64>
  }
}

// -----

module attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  // expected-error@+1 {{@train_step must take nothing and return (tensor<f64>, tensor<i1>, tensor<f64>)}}
  func.func @train_step() -> tensor<f64> {
    %z = graph.constant dense<0.0> : tensor<f64>
    return %z : tensor<f64>
  }
}
