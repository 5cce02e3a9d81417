// RUN: zeroc-opt %s -zero-autodiff | FileCheck %s --check-prefix=AD
// RUN: zeroc-opt %s -zero-autodiff -zero-partition="stage=0 world-size=2" -zero-verify-partition | FileCheck %s --check-prefix=S0
// RUN: zeroc-opt %s -zero-autodiff -zero-partition="stage=3 world-size=2 persistence-threshold=0" -zero-verify-partition | FileCheck %s --check-prefix=S3

// Tests a buffer that the forward pass updates (a BatchNormalization's
// running mean): autodiff gives it no gradient and keeps its update as a
// result after the gradients; zero-partition reads it with zero.buffer_load
// at every stage (buffers are never partitioned) and stores the update after
// every other op of the micro-step, the gradient accumulation included.
graph.param trainable @w = dense<0.5> : tensor<4xf32>
graph.buffer @rm = dense<0.0> : tensor<4xf32>
func.func @forward(%x: tensor<4xf32>) -> (tensor<f32> {graph.loss}, tensor<4xf32> {graph.buffer_update = @rm}) {
  %w = graph.load_param @w : tensor<4xf32>
  %m = graph.load_buffer @rm : tensor<4xf32>
  %y = graph.mul %x, %w : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %n = graph.add %m, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %l = graph.reduce_sum %y {axes = [0], keepdims = false} : tensor<4xf32> -> tensor<f32>
  return %l, %n : tensor<f32>, tensor<4xf32>
}

// AD-LABEL: func.func @forward_backward
// AD-SAME: -> (tensor<f32> {graph.loss}, tensor<4xf32> {graph.grad_of = @w}, tensor<4xf32> {graph.buffer_update = @rm})
// AD: %[[M:.*]] = graph.load_buffer @rm
// AD: %[[N:.*]] = graph.add %[[M]]
// AD: return %{{.*}}, %{{.*}}, %[[N]]

// S0-LABEL: func.func @train_micro_step
// S0-SAME: -> (tensor<f32> {graph.loss})
// S0: %[[M:.*]] = zero.buffer_load @rm : tensor<4xf32>
// S0: %[[N:.*]] = graph.add %[[M]]
// S0: zero.grad_accumulate @w
// S0-NEXT: zero.buffer_store @rm, %[[N]] : tensor<4xf32>
// S0-NEXT: return

// S3-LABEL: func.func @train_micro_step
// S3: zero.buffer_load @rm : tensor<4xf32>
// S3: zero.reduce_scatter
// S3: zero.grad_accumulate @w
// S3-NEXT: zero.buffer_store @rm
// S3-NEXT: return
