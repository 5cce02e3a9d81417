// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=0 world-size=2' --zero-step-boundary | FileCheck %s --check-prefix=S0
// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=1 world-size=2' --zero-step-boundary='loss-scaler=#zero.loss_scaler<scale_window=100> gradient-clipping=0.5' | FileCheck %s --check-prefix=S1
// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=2 world-size=2' --zero-step-boundary='optimizer=#zero.sgd<lr=0.1,momentum=0.9>' | FileCheck %s --check-prefix=S2
// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=3 world-size=2 persistence-threshold=0' --zero-step-boundary='lr-schedule=#zero.lr_schedule<kind=one_cycle,cycle_max_lr=0.1>' | FileCheck %s --check-prefix=S3
// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=1 world-size=2' --zero-step-boundary='loss-scaler=#zero.loss_scaler<scale_window=100> gradient-clipping=0.5' --zero-verify-step | FileCheck %s --check-prefix=S1
// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=3 world-size=2 persistence-threshold=0' --zero-step-boundary='lr-schedule=#zero.lr_schedule<kind=one_cycle,cycle_max_lr=0.1>' --zero-verify-step | FileCheck %s --check-prefix=S3
// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=0 world-size=2' --zero-step-boundary='tf32=true' | FileCheck %s --check-prefix=TF32

// Tests the optimizer step zero-step-boundary builds for each stage: the
// reduction, the overflow check, the norm, the update and the all-gathers.
// @frozen has no gradient: it is neither read nor updated.
graph.param trainable @w = dense<0.5> : tensor<4x3xf32>
graph.param trainable @b = dense<0.0> : tensor<3xf32>
graph.param @frozen = dense<1.0> : tensor<3xf32>
func.func @forward(%x: tensor<2x4xf32> {graph.input = "x"}) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<4x3xf32>
  %b = graph.load_param @b : tensor<3xf32>
  %f = graph.load_param @frozen : tensor<3xf32>
  %y = graph.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %z = graph.add %y, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %u = graph.mul %z, %f : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %l = graph.reduce_mean %u {axes = [0, 1], keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// Stage 0: each full gradient is all-reduced in place; no loss scaler, so
// the overflow flag is the constant false; the norm needs no collective.
// tf32 is recorded on @train_step (the program table's tf32), and only then.
// TF32: func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) attributes {zero.micro_steps = 1 : i64, zero.monitor = #zero.monitor<>, zero.tf32}
// S0-NOT: zero.tf32
// S0-LABEL: func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>)
// S0-NOT: zero.loss_scale
// S0: %[[T:.*]] = zero.step_count : tensor<i64>
// S0: %[[SCALE:.*]] = graph.constant dense<1.000000e+00> : tensor<f64>
// S0: %[[LR:.*]], %{{.*}} = zero.lr_schedule %[[T]] {base_lr = 1.000000e-03 : f64, base_momentum = 9.000000e-01 : f64, schedule = #zero.lr_schedule<>}
// S0: %[[GW:.*]] = zero.grad_accumulator @w : tensor<4x3xf32>
// S0: %[[RW:.*]] = zero.all_reduce %[[GW]] {reduction = #zero<reduction sum>} : tensor<4x3xf32>
// S0: %[[GB:.*]] = zero.grad_accumulator @b : tensor<3xf32>
// S0: %[[RB:.*]] = zero.all_reduce %[[GB]] {reduction = #zero<reduction sum>, zero.reduction_end} : tensor<3xf32>
// S0-NOT: @frozen
// S0: %[[OF:.*]] = graph.constant dense<false> : tensor<i1>
// S0: %[[SS:.*]] = zero.sum_squares %[[RW]], %[[RB]] : tensor<4x3xf32>, tensor<3xf32> -> tensor<f64>
// S0-NEXT: %[[NORM:.*]], %[[F:.*]] = zero.clip_grad_norm %[[SS]], %[[SCALE]] {max_norm = 1.000000e+00 : f64, world_size = 2 : i64}
// S0: zero.if_finite %[[OF]] : tensor<i1> {
// S0-NEXT: zero.adam_update @w, %[[RW]], %[[F]], %[[LR]], %{{.*}}, %{{.*}}, %[[T]] {optimizer = #zero.adam<>}
// S0-NEXT: zero.adam_update @b, %[[RB]], %[[F]], %[[LR]]
// S0-NEXT: zero.advance_step
// S0-NEXT: }
// S0-NEXT: return %[[NORM]], %[[OF]], %[[LR]]

// Stage 1: the padded accumulators are reduce-scattered; the loss scaler
// checks the shards and all-reduces the flag; the norm is all-reduced; the
// updated replicas are gathered.
// S1-LABEL: func.func @train_step()
// S1: %[[SCALE:.*]] = zero.loss_scale : tensor<f64>
// S1: %[[GW:.*]] = zero.grad_accumulator @w : !zero.flat<grads, f32, 12, 2>
// S1-NEXT: %[[RW:.*]] = zero.reduce_scatter %[[GW]] {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 12, 2> -> !zero.shard<grads, f32, 6, device>
// S1: %[[GB:.*]] = zero.grad_accumulator @b : !zero.flat<grads, f32, 4, 2>
// S1-NEXT: %[[RB:.*]] = zero.reduce_scatter %[[GB]] {reduction = #zero<reduction sum>, zero.reduction_end}
// S1: %[[LOCAL:.*]] = zero.has_overflow %[[RW]], %[[RB]]
// S1-NEXT: %[[OF:.*]] = zero.all_reduce %[[LOCAL]] {reduction = #zero<reduction max>} : tensor<i1>
// S1-NEXT: zero.update_loss_scale %[[OF]] {scaler = #zero.loss_scaler<scale_window = 100>} : tensor<i1>
// S1-NEXT: %[[SS:.*]] = zero.sum_squares %[[RW]], %[[RB]]
// S1-NEXT: %[[GSS:.*]] = zero.all_reduce %[[SS]] {reduction = #zero<reduction sum>} : tensor<f64>
// S1-NEXT: zero.clip_grad_norm %[[GSS]], %[[SCALE]] {max_norm = 5.000000e-01 : f64, world_size = 2 : i64}
// S1: zero.if_finite %[[OF]]
// S1-NEXT: zero.adam_update @w, %[[RW]]
// S1-NEXT: zero.adam_update @b, %[[RB]]
// S1-NEXT: zero.advance_step
// S1-NEXT: zero.gather_replica @w : !zero.shard<params, f32, 6, device>
// S1-NEXT: zero.gather_replica @b : !zero.shard<params, f32, 2, device>

// Stage 2: the micro-step already reduce-scattered; SGD's options.
// S2-LABEL: func.func @train_step()
// S2-NOT: zero.reduce_scatter
// S2: %[[GW:.*]] = zero.grad_accumulator @w : !zero.shard<grads, f32, 6, device>
// S2: zero.all_reduce %{{.*}} {reduction = #zero<reduction sum>} : tensor<f64>
// S2: zero.sgd_update @w, %[[GW]], %{{.*}}, %{{.*}}, %{{.*}} {optimizer = #zero.sgd<lr = 1.000000e-01, momentum = 9.000000e-01>}
// S2: zero.gather_replica @w

// Stage 3: no all-gather at the step; OneCycle's momentum is Adam's beta1
// and beta2 is 0.99.
// S3-LABEL: func.func @train_step()
// S3: %[[LR:.*]], %[[MOM:.*]] = zero.lr_schedule {{.*}}#zero.lr_schedule<kind = one_cycle, cycle_max_lr = 1.000000e-01>
// S3: zero.grad_accumulator @w : !zero.shard<grads, f32, 6, device>
// S3: %[[B2:.*]] = graph.constant dense<0.98999999999999999> : tensor<f64>
// S3: zero.adam_update @w, %{{.*}}, %{{.*}}, %[[LR]], %[[MOM]], %[[B2]]
// S3-NOT: zero.gather_replica
// S3: return
