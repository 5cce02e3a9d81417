// RUN: zeroc-opt %s --split-input-file --zero-verify-step --verify-diagnostics

// Tests zero-verify-step's checks of the gathers zero-overlap carries
// across the step boundary (zero.all_gather_start carry / carried).

// A carry no micro-step takes.
module attributes {zero.stage = 3 : i64, zero.world_size = 2 : i64} {
  graph.param @w = dense<0.5> : tensor<4xf32>
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) {
    %of = graph.constant dense<false> : tensor<i1>
    %z = graph.constant dense<0.0> : tensor<f64>
    zero.if_finite %of : tensor<i1> {
      %s = zero.param_shard @w : !zero.shard<params, f32, 2, device>
      // expected-error@+1 {{carry 0 has no carried start in @train_micro_step}}
      %t = zero.all_gather_start %s {carry = 0 : i64} : !zero.shard<params, f32, 2, device> -> !zero.token<!zero.flat<params, f32, 4, 2>>
      zero.advance_step
    }
    return %z, %of, %z : tensor<f64>, tensor<i1>, tensor<f64>
  }
}

// -----

// A carried start without its carry.
module attributes {zero.stage = 3 : i64, zero.world_size = 2 : i64} {
  graph.param @w = dense<0.5> : tensor<4xf32>
  func.func @train_micro_step() {
    %s = zero.param_shard @w : !zero.shard<params, f32, 2, device>
    // expected-error@+1 {{carried start 0 has no carry in @train_step}}
    %t = zero.all_gather_start %s {carried = 0 : i64} : !zero.shard<params, f32, 2, device> -> !zero.token<!zero.flat<params, f32, 4, 2>>
    %f = zero.wait %t : !zero.token<!zero.flat<params, f32, 4, 2>> -> !zero.flat<params, f32, 4, 2>
    zero.release %f : !zero.flat<params, f32, 4, 2>
    return
  }
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

// The carry gathers another parameter than the micro-step's start.
module attributes {zero.stage = 3 : i64, zero.world_size = 2 : i64} {
  graph.param @w = dense<0.5> : tensor<4xf32>
  graph.param @v = dense<0.5> : tensor<4xf32>
  func.func @train_micro_step() {
    %s = zero.param_shard @v : !zero.shard<params, f32, 2, device>
    // expected-note@+1 {{the carried start}}
    %t = zero.all_gather_start %s {carried = 0 : i64} : !zero.shard<params, f32, 2, device> -> !zero.token<!zero.flat<params, f32, 4, 2>>
    %f = zero.wait %t : !zero.token<!zero.flat<params, f32, 4, 2>> -> !zero.flat<params, f32, 4, 2>
    zero.release %f : !zero.flat<params, f32, 4, 2>
    return
  }
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) {
    %of = graph.constant dense<false> : tensor<i1>
    %z = graph.constant dense<0.0> : tensor<f64>
    zero.if_finite %of : tensor<i1> {
      %s = zero.param_shard @w : !zero.shard<params, f32, 2, device>
      // expected-error@+1 {{carry 0 does not gather what its carried start gathers}}
      %t = zero.all_gather_start %s {carry = 0 : i64} : !zero.shard<params, f32, 2, device> -> !zero.token<!zero.flat<params, f32, 4, 2>>
      zero.advance_step
    }
    return %z, %of, %z : tensor<f64>, tensor<i1>, tensor<f64>
  }
}

// -----

// The carry sends the shard before its update wrote it.
module attributes {zero.stage = 3 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<4xf32>
  func.func @train_micro_step() {
    %s = zero.param_shard @w : !zero.shard<params, f32, 2, device>
    %t = zero.all_gather_start %s {carried = 0 : i64} : !zero.shard<params, f32, 2, device> -> !zero.token<!zero.flat<params, f32, 4, 2>>
    %f = zero.wait %t : !zero.token<!zero.flat<params, f32, 4, 2>> -> !zero.flat<params, f32, 4, 2>
    zero.release %f : !zero.flat<params, f32, 4, 2>
    return
  }
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) {
    %of = graph.constant dense<false> : tensor<i1>
    %z = graph.constant dense<0.0> : tensor<f64>
    %n = zero.step_count : tensor<i64>
    %g = zero.grad_accumulator @w : !zero.shard<grads, f32, 2, device>
    zero.if_finite %of : tensor<i1> {
      %s = zero.param_shard @w : !zero.shard<params, f32, 2, device>
      // expected-error@+1 {{carry 0 must follow the update of 'w'}}
      %t = zero.all_gather_start %s {carry = 0 : i64} : !zero.shard<params, f32, 2, device> -> !zero.token<!zero.flat<params, f32, 4, 2>>
      zero.sgd_update @w, %g, %z, %z, %n {optimizer = #zero.sgd<>} : !zero.shard<grads, f32, 2, device>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.advance_step
    }
    return %z, %of, %z : tensor<f64>, tensor<i1>, tensor<f64>
  }
}

// -----

// A carry outside @train_step.
module attributes {zero.stage = 3 : i64, zero.world_size = 2 : i64} {
  graph.param @w = dense<0.5> : tensor<4xf32>
  func.func @train_micro_step() {
    %s = zero.param_shard @w : !zero.shard<params, f32, 2, device>
    // expected-error@+1 {{carry must be in @train_step}}
    %t = zero.all_gather_start %s {carry = 0 : i64} : !zero.shard<params, f32, 2, device> -> !zero.token<!zero.flat<params, f32, 4, 2>>
    return
  }
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) {
    %of = graph.constant dense<false> : tensor<i1>
    %z = graph.constant dense<0.0> : tensor<f64>
    zero.if_finite %of : tensor<i1> {
      zero.advance_step
    }
    return %z, %of, %z : tensor<f64>, tensor<i1>, tensor<f64>
  }
}
