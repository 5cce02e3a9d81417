// RUN: zeroc-opt %s -split-input-file -zero-verify-partition -verify-diagnostics

// Tests that the stage and world size must be recorded on the module.
// expected-error @+1 {{module has no zero.stage and zero.world_size}}
module {
}

// -----

// Tests that @train_micro_step must exist.
// expected-error @+1 {{module has no func.func @train_micro_step}}
module attributes {zero.stage = 0 : i64, zero.world_size = 2 : i64} {
}

// -----

// Tests that stage 3 keeps no parameter replicas.
module attributes {zero.stage = 3 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<2xf32>
  func.func @train_micro_step() -> tensor<f32> {
    // expected-error @+1 {{stage 3 keeps replicas of zero.persistent parameters only}}
    %w = zero.param_replica @w : tensor<2xf32>
    %l = graph.reduce_sum %w {axes = [0], keepdims = false} : tensor<2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that only stage 3 partitions parameters.
module attributes {zero.stage = 1 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<2xf32>
  func.func @train_micro_step() -> tensor<f32> {
    // expected-error @+1 {{only stage 3 partitions parameters}}
    %s = zero.param_shard @w : !zero.shard<params, f32, 1, device>
    %l = graph.constant dense<0.0> : tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a trainable parameter is not read directly.
module attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<2xf32>
  func.func @train_micro_step() -> tensor<f32> {
    // expected-error @+1 {{reads parameter @w without the ZeRO state ops}}
    %w = graph.load_param @w : tensor<2xf32>
    %l = graph.reduce_sum %w {axes = [0], keepdims = false} : tensor<2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that every gathered buffer is released.
module attributes {zero.stage = 3 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<2xf32>
  func.func @train_micro_step() -> tensor<f32> {
    %s = zero.param_shard @w : !zero.shard<params, f32, 1, device>
    // expected-error @+1 {{gathered parameter buffer is never released}}
    %f = zero.all_gather %s : !zero.shard<params, f32, 1, device> -> !zero.flat<params, f32, 2, 2>
    %w = zero.view %f {offset = 0} : !zero.flat<params, f32, 2, 2> -> tensor<2xf32>
    %l = graph.reduce_sum %w {axes = [0], keepdims = false} : tensor<2xf32> -> tensor<f32>
    %sg = zero.pack %w {offsets = [0]} : (tensor<2xf32>) -> !zero.flat<grads, f32, 2, 2>
    %g = zero.reduce_scatter %sg {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 2, 2> -> !zero.shard<grads, f32, 1, device>
    zero.grad_accumulate @w, %g : !zero.shard<grads, f32, 1, device>
    return %l : tensor<f32>
  }
}

// -----

// Tests that flat buffers use the module's world size.
module attributes {zero.stage = 3 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<2xf32>
  func.func @train_micro_step() -> tensor<f32> {
    %s = zero.param_shard @w : !zero.shard<params, f32, 1, device>
    // expected-error @+1 {{flat buffer world size 1 differs from the module's 2}}
    %f = zero.all_gather %s : !zero.shard<params, f32, 1, device> -> !zero.flat<params, f32, 1, 1>
    %l = graph.constant dense<0.0> : tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that stages 0-1 accumulate full gradients.
module attributes {zero.stage = 1 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<2xf32>
  func.func @train_micro_step() -> tensor<f32> {
    %w = zero.param_replica @w : tensor<2xf32>
    %sg = zero.pack %w {offsets = [0]} : (tensor<2xf32>) -> !zero.flat<grads, f32, 2, 2>
    %g = zero.reduce_scatter %sg {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 2, 2> -> !zero.shard<grads, f32, 1, device>
    // expected-error @+1 {{stages 0-1 accumulate full gradients}}
    zero.grad_accumulate @w, %g : !zero.shard<grads, f32, 1, device>
    %l = graph.constant dense<0.0> : tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a gradient shard partitions the parameter over the ranks.
module attributes {zero.stage = 2 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<7xf32>
  graph.param trainable @v = dense<0.5> : tensor<4xf32>
  func.func @train_micro_step() -> tensor<f32> {
    %v = zero.param_replica @v : tensor<4xf32>
    %sg = zero.pack %v {offsets = [0]} : (tensor<4xf32>) -> !zero.flat<grads, f32, 4, 2>
    %g = zero.reduce_scatter %sg {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 4, 2> -> !zero.shard<grads, f32, 2, device>
    // expected-error @+1 {{gradient shard of 2 elements does not partition 7 elements over 2 ranks}}
    zero.grad_accumulate @w, %g : !zero.shard<grads, f32, 2, device>
    %l = graph.constant dense<0.0> : tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that every trainable parameter accumulates its gradient once.
module attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<2xf32>
  // expected-error @+1 {{parameter @w has 0 gradient accumulations, expected 1}}
  func.func @train_micro_step() -> tensor<f32> {
    %l = graph.constant dense<0.0> : tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that the micro-step returns only the scalar loss.
module attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  // expected-error @+1 {{must return exactly the scalar micro-batch loss}}
  func.func @train_micro_step() -> tensor<2xf32> {
    %l = graph.constant dense<0.0> : tensor<2xf32>
    return %l : tensor<2xf32>
  }
}

// -----

// Tests that buffers are read through zero.buffer_load after partitioning.
module attributes {zero.stage = 0 : i64, zero.world_size = 2 : i64} {
  graph.buffer @rm = dense<0.5> : tensor<2xf32>
  func.func @train_micro_step() -> tensor<f32> {
    // expected-error @+1 {{reads buffer @rm without the ZeRO state ops}}
    %m = graph.load_buffer @rm : tensor<2xf32>
    %l = graph.reduce_sum %m {axes = [0], keepdims = false} : tensor<2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that buffer stores end the micro-step.
module attributes {zero.stage = 0 : i64, zero.world_size = 2 : i64} {
  graph.buffer @rm = dense<0.5> : tensor<2xf32>
  func.func @train_micro_step(%x: tensor<2xf32>) -> tensor<f32> {
    %m = zero.buffer_load @rm : tensor<2xf32>
    // expected-error @+1 {{must follow every other op of the micro-step}}
    zero.buffer_store @rm, %x : tensor<2xf32>
    // expected-note @+1 {{followed by this op}}
    %l = graph.reduce_sum %m {axes = [0], keepdims = false} : tensor<2xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a buffer is stored once per micro-step.
module attributes {zero.stage = 0 : i64, zero.world_size = 2 : i64} {
  graph.buffer @rm = dense<0.5> : tensor<2xf32>
  func.func @train_micro_step(%x: tensor<2xf32>) -> tensor<f32> {
    %l = graph.reduce_sum %x {axes = [0], keepdims = false} : tensor<2xf32> -> tensor<f32>
    zero.buffer_store @rm, %x : tensor<2xf32>
    // expected-error @+1 {{stores buffer @rm a second time in one micro-step}}
    zero.buffer_store @rm, %x : tensor<2xf32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that embedding rows are accumulated at stages 2-3 only.
module attributes {zero.stage = 1 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @e = dense<0.5> : tensor<8x2xf32>
  func.func @train_micro_step(%r: tensor<3x2xf32>, %i: tensor<3xi64>) -> tensor<f32> {
    // expected-error @+1 {{only stages 2-3 accumulate gradient rows}}
    zero.grad_accumulate_rows @e, %r, %i : tensor<3x2xf32>, tensor<3xi64>
    %l = graph.constant dense<0.0> : tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a parameter's rows are accumulated once.
module attributes {zero.stage = 2 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @e = dense<0.5> : tensor<8x2xf32>
  func.func @train_micro_step(%r: tensor<3x2xf32>, %i: tensor<3xi64>) -> tensor<f32> {
    zero.grad_accumulate_rows @e, %r, %i : tensor<3x2xf32>, tensor<3xi64>
    // expected-error @+1 {{second row accumulation of @e}}
    zero.grad_accumulate_rows @e, %r, %i : tensor<3x2xf32>, tensor<3xi64>
    %l = graph.constant dense<0.0> : tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Tests that a parameter with rows has at most one dense accumulation.
module attributes {zero.stage = 2 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @e = dense<0.5> : tensor<8x2xf32>
  // expected-error @+1 {{parameter @e has 2 gradient accumulations, expected 1}}
  func.func @train_micro_step(%r: tensor<3x2xf32>, %i: tensor<3xi64>, %g: tensor<8x2xf32>) -> tensor<f32> {
    zero.grad_accumulate_rows @e, %r, %i : tensor<3x2xf32>, tensor<3xi64>
    %p = zero.pack %g {offsets = [0]} : (tensor<8x2xf32>) -> !zero.flat<grads, f32, 16, 2>
    %s = zero.reduce_scatter %p {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 16, 2> -> !zero.shard<grads, f32, 8, device>
    zero.grad_accumulate @e, %s : !zero.shard<grads, f32, 8, device>
    %p2 = zero.pack %g {offsets = [0]} : (tensor<8x2xf32>) -> !zero.flat<grads, f32, 16, 2>
    %s2 = zero.reduce_scatter %p2 {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 16, 2> -> !zero.shard<grads, f32, 8, device>
    zero.grad_accumulate @e, %s2 : !zero.shard<grads, f32, 8, device>
    %l = graph.constant dense<0.0> : tensor<f32>
    return %l : tensor<f32>
  }
}
