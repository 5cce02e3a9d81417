// RUN: zeroc-translate %s --split-input-file --emit-cuda --verify-diagnostics

// Tests the CUDA emitter's errors: a plan without host memory for the
// optimizer step's scalars, and an op whose kernel the CUDA runtime does
// not have yet.

// Planned for the CPU (zero-plan-buffers without host-step-scalars).
// expected-error@+1 {{the CUDA target needs @train_step's scalars in host memory (run zero-plan-buffers with host-step-scalars, i.e. the pipeline's target=cuda)}}
module attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64, zero.arena_bytes = 0 : i64} {
  func.func @train_micro_step() -> tensor<f32> {
    %l = graph.constant dense<0.0> : tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

module attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64, zero.arena_bytes = 128 : i64, zero.host_bytes = 192 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<4xf32>
  func.func @train_micro_step(%x: tensor<2x5xf32>, %t: tensor<2x1xi64>) -> tensor<f32> {
    // expected-error@+1 {{'graph.gather_nd' op is not supported by the CUDA target yet: its runtime has no gather_nd kernel}}
    %c = graph.gather_nd %x, %t {zero.arena_offsets = [0]} : tensor<2x5xf32>, tensor<2x1xi64> -> tensor<2x5xf32>
    %l = graph.reduce_sum %c {axes = [0, 1], keepdims = false, zero.arena_offsets = [64]} : tensor<2x5xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) attributes {zero.micro_steps = 1 : i64, zero.monitor = #zero.monitor<>} {
    %t = zero.step_count {zero.host_offsets = [0]} : tensor<i64>
    %lr, %m = zero.lr_schedule %t {schedule = #zero.lr_schedule<>, base_lr = 1.0e-3 : f64, base_momentum = 0.9 : f64, zero.host_offsets = [64, 128]} : tensor<i64> -> tensor<f64>, tensor<f64>
    %of = graph.constant dense<false> : tensor<i1>
    return %lr, %of, %lr : tensor<f64>, tensor<i1>, tensor<f64>
  }
}
