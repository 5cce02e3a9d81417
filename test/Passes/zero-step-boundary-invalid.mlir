// RUN: not zeroc-opt %s --zero-step-boundary 2>&1 | FileCheck %s --check-prefix=UNPARTITIONED
// RUN: not zeroc-opt %s --zero-autodiff --zero-partition='stage=1 world-size=2' --zero-step-boundary='optimizer=#zero.lamb<>' 2>&1 | FileCheck %s --check-prefix=OPTIMIZER
// RUN: not zeroc-opt %s --zero-autodiff --zero-partition='stage=1 world-size=2' --zero-step-boundary='optimizer=#zero.sgd<nesterov=true>' 2>&1 | FileCheck %s --check-prefix=NESTEROV
// RUN: not zeroc-opt %s --zero-autodiff --zero-partition='stage=1 world-size=2' --zero-step-boundary='lr-schedule=#zero.adam<>' 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// RUN: not zeroc-opt %s --zero-autodiff --zero-partition='stage=1 world-size=2' --zero-step-boundary='gradient-clipping=-1' 2>&1 | FileCheck %s --check-prefix=CLIP
// RUN: not zeroc-opt %s --zero-autodiff --zero-partition='stage=1 world-size=2' --zero-step-boundary --zero-step-boundary 2>&1 | FileCheck %s --check-prefix=TWICE

// Tests zero-step-boundary's errors: a module it cannot build a step for,
// and option texts that are not the attributes they must be.
graph.param trainable @w = dense<0.5> : tensor<4x3xf32>
func.func @forward(%x: tensor<2x4xf32> {graph.input = "x"}) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<4x3xf32>
  %y = graph.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %l = graph.reduce_mean %y {axes = [0, 1], keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// UNPARTITIONED: error: zero-step-boundary needs @train_micro_step, zero.stage and zero.world_size (run zero-partition first)
// OPTIMIZER: error: zero-step-boundary: option optimizer '#zero.lamb<>' is not a #zero.adam or #zero.sgd attribute
// NESTEROV: nesterov needs a positive momentum and zero dampening
// NESTEROV: error: zero-step-boundary: option optimizer '#zero.sgd<nesterov=true>' is not a #zero.adam or #zero.sgd attribute
// SCHEDULE: error: zero-step-boundary: option lr-schedule '#zero.adam<>' is not a valid lr_schedule attribute
// CLIP: error: zero-step-boundary: gradient-clipping must be >= 0, got -1.000000e+00
// TWICE: error: zero-step-boundary: the module already has @train_step
