// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=0 world-size=4' --zero-step-boundary --zero-plan-buffers | FileCheck %s --check-prefix=S0
// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=1 world-size=4' --zero-step-boundary --zero-plan-buffers | FileCheck %s --check-prefix=S1
// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=2 world-size=4' --zero-step-boundary --zero-plan-buffers | FileCheck %s --check-prefix=S2
// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=3 world-size=4 persistence-threshold=0' --zero-step-boundary --zero-plan-buffers | FileCheck %s --check-prefix=S3

// Tests the persistent state zero-plan-buffers plans for each stage: a
// 7-element parameter padded to 8 for 4 ranks (S = 2), and a frozen one
// that keeps only its parameter. @train_step is planned into the same
// arena as the micro-step.
graph.param trainable @w = dense<0.5> : tensor<7xf32>
graph.param @f = dense<1.0> : tensor<7xf32>
func.func @forward(%x: tensor<7xf32> {graph.input = "x"}) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<7xf32>
  %f = graph.load_param @f : tensor<7xf32>
  %y = graph.mul %x, %w : tensor<7xf32>, tensor<7xf32> -> tensor<7xf32>
  %z = graph.mul %y, %f : tensor<7xf32>, tensor<7xf32> -> tensor<7xf32>
  %l = graph.reduce_mean %z {axes = [0], keepdims = false} : tensor<7xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// S0: graph.param trainable @w {{.*}}zero.state_layout = #zero.state_layout<param = 8, grad = 7, update = 7>
// S0: graph.param @f {{.*}}zero.state_layout = #zero.state_layout<param = 8>
// S1: graph.param trainable @w {{.*}}zero.state_layout = #zero.state_layout<param = 8, grad = 8, update = 2, update_stride = 2>
// S2: graph.param trainable @w {{.*}}zero.state_layout = #zero.state_layout<param = 8, grad = 2, update = 2, update_stride = 2>
// S3: graph.param trainable @w {{.*}}zero.state_layout = #zero.state_layout<param = 2, param_stride = 2, grad = 2, update = 2, update_stride = 2>
// S3: graph.param @f {{.*}}zero.state_layout = #zero.state_layout<param = 2, param_stride = 2>
// S1: func.func @train_step
// S1: zero.reduce_scatter {{.*}}zero.arena_offsets = [{{[0-9]+}}]
