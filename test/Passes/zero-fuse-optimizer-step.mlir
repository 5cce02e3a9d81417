// RUN: zeroc-opt %s --zero-fuse-optimizer-step --split-input-file | FileCheck %s

// Runs of consecutive zero.adam_updates with the same scalars become one
// zero.adam_update_multi; what stands between updates (here a replica
// gather) splits a run, as do other scalars, and a lone update stays.
// CHECK-LABEL: func.func @train_step
// CHECK: zero.if_finite
// CHECK-NEXT: zero.adam_update_multi [@a, @b](%[[GA:.*]], %[[GB:.*]]), %[[F:.*]], %[[LR:.*]], %[[B1:.*]], %[[B2:.*]], %[[T:.*]] {optimizer = #zero.adam<>}
// CHECK-NEXT: zero.gather_replica @a
// CHECK-NEXT: zero.gather_replica @b
// CHECK-NEXT: zero.adam_update_multi [@c, @d](%{{.*}}, %{{.*}}), %[[F]], %[[LR]], %[[B1]], %[[B2]], %[[T]]
// CHECK-NEXT: zero.adam_update @e, %{{.*}}, %[[F]], %[[LR2:.*]], %[[B1]], %[[B2]], %[[T]]
// CHECK-NEXT: zero.adam_update @f, %{{.*}}, %[[F]], %[[LR]], %[[B1]], %[[B2]], %[[T]] {optimizer = #zero.adam<weight_decay
// CHECK-NEXT: zero.advance_step
module attributes {zero.stage = 1 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @a = dense<0.5> : tensor<4xf32>
  graph.param trainable @b = dense<0.5> : tensor<4xf32>
  graph.param trainable @c = dense<0.5> : tensor<4xf32>
  graph.param trainable @d = dense<0.5> : tensor<4xf32>
  graph.param trainable @e = dense<0.5> : tensor<4xf32>
  graph.param trainable @f = dense<0.5> : tensor<4xf32>
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) {
    %of = graph.constant dense<false> : tensor<i1>
    %f = graph.constant dense<1.0> : tensor<f64>
    %lr = graph.constant dense<1.0e-3> : tensor<f64>
    %lr2 = graph.constant dense<2.0e-3> : tensor<f64>
    %b1 = graph.constant dense<0.9> : tensor<f64>
    %b2 = graph.constant dense<0.999> : tensor<f64>
    %t = zero.step_count : tensor<i64>
    %ga = zero.grad_accumulator @a : !zero.shard<grads, f32, 2, device>
    %gb = zero.grad_accumulator @b : !zero.shard<grads, f32, 2, device>
    %gc = zero.grad_accumulator @c : !zero.shard<grads, f32, 2, device>
    %gd = zero.grad_accumulator @d : !zero.shard<grads, f32, 2, device>
    %ge = zero.grad_accumulator @e : !zero.shard<grads, f32, 2, device>
    %gf = zero.grad_accumulator @f : !zero.shard<grads, f32, 2, device>
    zero.if_finite %of : tensor<i1> {
      zero.adam_update @a, %ga, %f, %lr, %b1, %b2, %t {optimizer = #zero.adam<>} : !zero.shard<grads, f32, 2, device>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.adam_update @b, %gb, %f, %lr, %b1, %b2, %t {optimizer = #zero.adam<>} : !zero.shard<grads, f32, 2, device>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.gather_replica @a : !zero.shard<params, f32, 2, device>
      zero.gather_replica @b : !zero.shard<params, f32, 2, device>
      zero.adam_update @c, %gc, %f, %lr, %b1, %b2, %t {optimizer = #zero.adam<>} : !zero.shard<grads, f32, 2, device>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.adam_update @d, %gd, %f, %lr, %b1, %b2, %t {optimizer = #zero.adam<>} : !zero.shard<grads, f32, 2, device>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.adam_update @e, %ge, %f, %lr2, %b1, %b2, %t {optimizer = #zero.adam<>} : !zero.shard<grads, f32, 2, device>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.adam_update @f, %gf, %f, %lr, %b1, %b2, %t {optimizer = #zero.adam<weight_decay = 0.01>} : !zero.shard<grads, f32, 2, device>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.advance_step
    }
    return %f, %of, %lr : tensor<f64>, tensor<i1>, tensor<f64>
  }
}

// -----

// zero.sgd_updates fuse the same way; other options (nesterov) split a run.
// CHECK-LABEL: func.func @train_step
// CHECK: zero.if_finite
// CHECK-NEXT: zero.sgd_update_multi [@a, @b](%{{.*}}, %{{.*}}), %[[F:.*]], %[[LR:.*]], %[[T:.*]] {optimizer = #zero.sgd<momentum = 9.000000e-01>}
// CHECK-NEXT: zero.sgd_update @c, %{{.*}}, %[[F]], %[[LR]], %[[T]] {optimizer = #zero.sgd<momentum = 9.000000e-01, nesterov = true>}
// CHECK-NEXT: zero.advance_step
module attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  graph.param trainable @a = dense<0.5> : tensor<4xf32>
  graph.param trainable @b = dense<0.5> : tensor<4xf32>
  graph.param trainable @c = dense<0.5> : tensor<4xf32>
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) {
    %of = graph.constant dense<false> : tensor<i1>
    %f = graph.constant dense<1.0> : tensor<f64>
    %lr = graph.constant dense<1.0e-1> : tensor<f64>
    %t = zero.step_count : tensor<i64>
    %ga = zero.grad_accumulator @a : tensor<4xf32>
    %gb = zero.grad_accumulator @b : tensor<4xf32>
    %gc = zero.grad_accumulator @c : tensor<4xf32>
    zero.if_finite %of : tensor<i1> {
      zero.sgd_update @a, %ga, %f, %lr, %t {optimizer = #zero.sgd<momentum = 0.9>} : tensor<4xf32>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.sgd_update @b, %gb, %f, %lr, %t {optimizer = #zero.sgd<momentum = 0.9>} : tensor<4xf32>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.sgd_update @c, %gc, %f, %lr, %t {optimizer = #zero.sgd<momentum = 0.9, nesterov = true>} : tensor<4xf32>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.advance_step
    }
    return %f, %of, %lr : tensor<f64>, tensor<i1>, tensor<f64>
  }
}
