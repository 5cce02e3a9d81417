// RUN: zeroc-opt %s --zero-step-boundary='reduce-in-backward=true' -verify-diagnostics

// Tests zero-step-boundary's reduce-in-backward error: a trainable
// parameter whose gradient the micro-step never accumulates has no point
// to reduce after.
module attributes {zero.stage = 0 : i64, zero.world_size = 2 : i64} {
  // expected-error @below {{'graph.param' op has no gradient accumulation in @train_micro_step to reduce after}}
  graph.param trainable @w = dense<0.5> : tensor<4x3xf32>
  func.func @train_micro_step(%x: tensor<2x4xf32>) -> tensor<f32> {
    %l = graph.reduce_mean %x {axes = [0, 1], keepdims = false} : tensor<2x4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
