// RUN: zeroc-translate %s --split-input-file --emit-cpu --verify-diagnostics

// Tests the CPU emitter's errors on modules the pipeline did not prepare.

// expected-error@+1 {{no @train_micro_step to emit (run zero-partition)}}
module {
}

// -----

// A partitioned module without its optimizer step.
// expected-error@+1 {{no @train_step to emit (run zero-step-boundary)}}
module attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64, zero.arena_bytes = 0 : i64} {
  func.func @train_micro_step() -> tensor<f32> {
    %l = graph.constant dense<0.0> : tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A step without the run's configuration.
module attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64, zero.arena_bytes = 0 : i64} {
  func.func @train_micro_step() -> tensor<f32> {
    %l = graph.constant dense<0.0> : tensor<f32>
    return %l : tensor<f32>
  }
  // expected-error@+1 {{needs zero.micro_steps >= 1 and zero.monitor (run zero-step-boundary)}}
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) {
    %t = zero.step_count : tensor<i64>
    %lr, %m = zero.lr_schedule %t {schedule = #zero.lr_schedule<>, base_lr = 1.0e-3 : f64, base_momentum = 0.9 : f64} : tensor<i64> -> tensor<f64>, tensor<f64>
    %of = graph.constant dense<false> : tensor<i1>
    return %lr, %of, %lr : tensor<f64>, tensor<i1>, tensor<f64>
  }
}

// -----

// Without a plan no value has storage.
// expected-error@+1 {{module has no buffer plan (run zero-plan-buffers)}}
module attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  func.func @train_micro_step() -> tensor<f32> {
    %l = graph.constant dense<0.0> : tensor<f32>
    return %l : tensor<f32>
  }
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) attributes {zero.micro_steps = 1 : i64, zero.monitor = #zero.monitor<>} {
    %t = zero.step_count : tensor<i64>
    %lr, %m = zero.lr_schedule %t {schedule = #zero.lr_schedule<>, base_lr = 1.0e-3 : f64, base_momentum = 0.9 : f64} : tensor<i64> -> tensor<f64>, tensor<f64>
    %of = graph.constant dense<false> : tensor<i1>
    return %lr, %of, %lr : tensor<f64>, tensor<i1>, tensor<f64>
  }
}

// -----

// The CPU target has no averaging all-reduce.
module attributes {zero.stage = 0 : i64, zero.world_size = 2 : i64, zero.arena_bytes = 0 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<4xf32>
  func.func @train_micro_step() -> tensor<f32> {
    %l = graph.constant dense<0.0> : tensor<f32>
    return %l : tensor<f32>
  }
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) attributes {zero.micro_steps = 1 : i64, zero.monitor = #zero.monitor<>} {
    %t = zero.step_count {zero.arena_offsets = [128]} : tensor<i64>
    %lr, %m = zero.lr_schedule %t {schedule = #zero.lr_schedule<>, base_lr = 1.0e-3 : f64, base_momentum = 0.9 : f64, zero.arena_offsets = [0, 64]} : tensor<i64> -> tensor<f64>, tensor<f64>
    %g = zero.grad_accumulator @w : tensor<4xf32>
    // expected-error@+1 {{the CPU target emits only unscaled sum and max all-reduces}}
    %r = zero.all_reduce %g {reduction = #zero<reduction avg>} : tensor<4xf32>
    %of = graph.constant dense<false> : tensor<i1>
    return %lr, %of, %lr : tensor<f64>, tensor<i1>, tensor<f64>
  }
}

// -----

// A result planned into an accumulator that no in-place accumulation takes.
module attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64, zero.arena_bytes = 64 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<4xf32>
  func.func @train_micro_step(%x: tensor<4xf32>) -> tensor<f32> {
    // expected-error@+1 {{has arena offset -1 but no in-place zero.grad_accumulate of its result}}
    %g = graph.relu %x {zero.arena_offsets = [-1]} : tensor<4xf32>
    zero.grad_accumulate @w, %g : tensor<4xf32>
    %l = graph.constant dense<0.0> : tensor<f32>
    return %l : tensor<f32>
  }
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) attributes {zero.micro_steps = 1 : i64, zero.monitor = #zero.monitor<>} {
    %t = zero.step_count : tensor<i64>
    %lr, %m = zero.lr_schedule %t {schedule = #zero.lr_schedule<>, base_lr = 1.0e-3 : f64, base_momentum = 0.9 : f64} : tensor<i64> -> tensor<f64>, tensor<f64>
    %of = graph.constant dense<false> : tensor<i1>
    return %lr, %of, %lr : tensor<f64>, tensor<i1>, tensor<f64>
  }
}

// -----

// A carried gather whose storage is not its carry's.
module attributes {zero.stage = 3 : i64, zero.world_size = 2 : i64, zero.arena_bytes = 256 : i64} {
  graph.param @w = dense<0.5> : tensor<4xf32>
  func.func @train_micro_step() -> tensor<f32> {
    %s = zero.param_shard @w : !zero.shard<params, f32, 2, device>
    // expected-error@+1 {{has other arena offsets than carry 0 (run zero-plan-buffers)}}
    %t = zero.all_gather_start %s {carried = 0 : i64, zero.arena_offsets = [64]} : !zero.shard<params, f32, 2, device> -> !zero.token<!zero.flat<params, f32, 4, 2>>
    %f = zero.wait %t : !zero.token<!zero.flat<params, f32, 4, 2>> -> !zero.flat<params, f32, 4, 2>
    zero.release %f : !zero.flat<params, f32, 4, 2>
    %l = graph.constant dense<0.0> : tensor<f32>
    return %l : tensor<f32>
  }
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) attributes {zero.micro_steps = 1 : i64, zero.monitor = #zero.monitor<>} {
    %t = zero.step_count {zero.arena_offsets = [128]} : tensor<i64>
    %lr, %m = zero.lr_schedule %t {schedule = #zero.lr_schedule<>, base_lr = 1.0e-3 : f64, base_momentum = 0.9 : f64, zero.arena_offsets = [160, 192]} : tensor<i64> -> tensor<f64>, tensor<f64>
    %of = graph.constant dense<false> : tensor<i1>
    %s = zero.param_shard @w : !zero.shard<params, f32, 2, device>
    %c = zero.all_gather_start %s {carry = 0 : i64, zero.arena_offsets = [0]} : !zero.shard<params, f32, 2, device> -> !zero.token<!zero.flat<params, f32, 4, 2>>
    return %lr, %of, %lr : tensor<f64>, tensor<i1>, tensor<f64>
  }
}
