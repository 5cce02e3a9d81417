// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=0 world-size=2' --zero-step-boundary='reduce-in-backward=true' --zero-verify-step | FileCheck %s --check-prefix=S0
// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=1 world-size=2' --zero-step-boundary='reduce-in-backward=true' --zero-verify-step | FileCheck %s --check-prefix=S1
// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=1 world-size=2' --zero-step-boundary='reduce-in-backward=true grad-accum-steps=2' --zero-verify-step | FileCheck %s --check-prefix=GAS
// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=2 world-size=2' --zero-step-boundary='reduce-in-backward=true' --zero-verify-step | FileCheck %s --check-prefix=S2

// Tests zero-step-boundary's reduce-in-backward: with one micro-step, the
// stage 0-1 reduction of each accumulator goes into @train_micro_step right
// after its accumulation, in place; @train_step reads the reduced
// accumulators. With accumulation, and at stages 2-3, nothing moves.
graph.param trainable @w = dense<0.5> : tensor<4x3xf32>
graph.param trainable @b = dense<0.0> : tensor<3xf32>
func.func @forward(%x: tensor<2x4xf32> {graph.input = "x"}) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<4x3xf32>
  %b = graph.load_param @b : tensor<3xf32>
  %y = graph.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %z = graph.add %y, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %l = graph.reduce_mean %z {axes = [0, 1], keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// S0-LABEL: func.func @train_micro_step
// S0: zero.grad_accumulate @b, %{{.*}} : tensor<3xf32>
// S0-NEXT: %[[AB:.*]] = zero.grad_accumulator @b : tensor<3xf32>
// S0-NEXT: zero.all_reduce %[[AB]] {reduction = #zero<reduction sum>} : tensor<3xf32>
// S0: zero.grad_accumulate @w, %{{.*}} : tensor<4x3xf32>
// S0-NEXT: %[[AW:.*]] = zero.grad_accumulator @w : tensor<4x3xf32>
// S0-NEXT: zero.all_reduce %[[AW]] {reduction = #zero<reduction sum>} : tensor<4x3xf32>
// S0-LABEL: func.func @train_step
// S0-NOT: zero.all_reduce {{.*}}x3xf32>
// S0: %[[GW:.*]] = zero.grad_accumulator @w : tensor<4x3xf32>
// S0: zero.adam_update @w, %[[GW]]

// S1-LABEL: func.func @train_micro_step
// S1: zero.grad_accumulate @w, %{{.*}} : tensor<4x3xf32>
// S1-NEXT: %[[AW:.*]] = zero.grad_accumulator @w : !zero.flat<grads, f32, 12, 2>
// S1-NEXT: zero.reduce_scatter %[[AW]] {in_place, reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 12, 2> -> !zero.shard<grads, f32, 6, device>
// S1-LABEL: func.func @train_step
// S1-NOT: zero.reduce_scatter
// S1: %[[GW:.*]] = zero.grad_accumulator @w : !zero.shard<grads, f32, 6, device>
// S1: zero.adam_update @w, %[[GW]]

// GAS-LABEL: func.func @train_micro_step
// GAS-NOT: zero.reduce_scatter
// GAS-LABEL: func.func @train_step
// GAS: zero.reduce_scatter %{{.*}} {reduction = #zero<reduction sum>}

// S2-LABEL: func.func @train_micro_step
// S2-NOT: in_place
// S2-LABEL: func.func @train_step
// S2-NOT: zero.reduce_scatter
