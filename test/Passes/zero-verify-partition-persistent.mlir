// RUN: zeroc-opt %s -split-input-file -zero-verify-partition -verify-diagnostics

// Tests zero-verify-partition's checks of stage 3's persistent parameters
// (zero-partition's zero.persistent).

// A persistent parameter is read from its replica; its gradient is still a
// reduce-scattered shard. A frozen one has no gradient.
module attributes {zero.stage = 3 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<2xf32> {zero.persistent}
  graph.param @f = dense<0.5> : tensor<2xf32> {zero.persistent}
  func.func @train_micro_step() -> tensor<f32> {
    %w = zero.param_replica @w : tensor<2xf32>
    %f = zero.param_replica @f : tensor<2xf32>
    %y = graph.mul %w, %f : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
    %l = graph.reduce_sum %y {axes = [0], keepdims = false} : tensor<2xf32> -> tensor<f32>
    %p = zero.pack %y {offsets = [0]} : (tensor<2xf32>) -> !zero.flat<grads, f32, 2, 2>
    %s = zero.reduce_scatter %p {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 2, 2> -> !zero.shard<grads, f32, 1, device>
    zero.grad_accumulate @w, %s : !zero.shard<grads, f32, 1, device>
    return %l : tensor<f32>
  }
}

// -----

// Only stage 3 has persistent parameters.
module attributes {zero.stage = 2 : i64, zero.world_size = 2 : i64} {
  // expected-error @+1 {{is zero.persistent at stage 2; only stage 3 has persistent parameters}}
  graph.param trainable @w = dense<0.5> : tensor<2xf32> {zero.persistent}
  func.func @train_micro_step() -> tensor<f32> {
    %l = graph.constant dense<0.0> : tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// zero.persistent is a unit attribute.
module attributes {zero.stage = 3 : i64, zero.world_size = 2 : i64} {
  // expected-error @+1 {{zero.persistent must be a unit attribute}}
  graph.param @f = dense<0.5> : tensor<2xf32> {zero.persistent = 1 : i64}
  func.func @train_micro_step() -> tensor<f32> {
    %l = graph.constant dense<0.0> : tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// A persistent parameter is whole on every rank: it has no shard to gather.
module attributes {zero.stage = 3 : i64, zero.world_size = 2 : i64} {
  graph.param @f = dense<0.5> : tensor<2xf32> {zero.persistent}
  func.func @train_micro_step() -> tensor<f32> {
    // expected-error @+1 {{reads a shard of @f, which is zero.persistent (whole on every rank)}}
    %s = zero.param_shard @f : !zero.shard<params, f32, 1, device>
    %l = graph.constant dense<0.0> : tensor<f32>
    return %l : tensor<f32>
  }
}
