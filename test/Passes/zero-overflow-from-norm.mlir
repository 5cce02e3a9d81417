// RUN: zeroc-opt %s --split-input-file --zero-overflow-from-norm | FileCheck %s

// Stage 1, f16 gradient shards: the flag is the non-finiteness of the
// all-reduced sum of squares; no has_overflow, no max all-reduce, and the
// loss-scaler update follows the sum (still before the clip).
// CHECK-LABEL: module attributes {zero.stage = 1
// CHECK-NOT: zero.has_overflow
// CHECK-NOT: reduction max
// CHECK: %[[SS:.*]] = zero.sum_squares %[[R:.*]] : !zero.shard<grads, f16, 2, device> -> tensor<f64>
// CHECK-NEXT: %[[T:.*]] = zero.all_reduce %[[SS]] {reduction = #zero<reduction sum>} : tensor<f64>
// CHECK-NEXT: %[[OF:.*]] = zero.non_finite %[[T]] : tensor<f64> -> tensor<i1>
// CHECK-NEXT: zero.update_loss_scale %[[OF]]
// CHECK-NEXT: zero.clip_grad_norm %[[T]], %{{.*}}
// CHECK: zero.if_finite %[[OF]] : tensor<i1> {
// CHECK: return %{{.*}}, %[[OF]], %{{.*}}
module attributes {zero.stage = 1 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<4xf16>
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) {
    %scale = zero.loss_scale : tensor<f64>
    %t = zero.step_count : tensor<i64>
    %lr = graph.constant dense<1.0e-3> : tensor<f64>
    %g = zero.grad_accumulator @w : !zero.flat<grads, f16, 4, 2>
    %r = zero.reduce_scatter %g {reduction = #zero<reduction sum>} : !zero.flat<grads, f16, 4, 2> -> !zero.shard<grads, f16, 2, device>
    %local = zero.has_overflow %r : !zero.shard<grads, f16, 2, device> -> tensor<i1>
    %of = zero.all_reduce %local {reduction = #zero<reduction max>} : tensor<i1>
    zero.update_loss_scale %of {scaler = #zero.loss_scaler<>} : tensor<i1>
    %ss = zero.sum_squares %r : !zero.shard<grads, f16, 2, device> -> tensor<f64>
    %gss = zero.all_reduce %ss {reduction = #zero<reduction sum>} : tensor<f64>
    %norm, %factor = zero.clip_grad_norm %gss, %scale {world_size = 2 : i64, max_norm = 1.0 : f64} : tensor<f64>, tensor<f64> -> tensor<f64>, tensor<f64>
    zero.if_finite %of : tensor<i1> {
      zero.sgd_update @w, %r, %factor, %lr, %t {optimizer = #zero.sgd<>} : !zero.shard<grads, f16, 2, device>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.advance_step
      zero.gather_replica @w : !zero.shard<params, f16, 2, device>
    }
    return %norm, %of, %lr : tensor<f64>, tensor<i1>, tensor<f64>
  }
}

// -----

// Stage 0, bf16 and f32: the local sum of the all-reduced gradients is the
// same on every rank, so it is read as it is.
// CHECK-LABEL: module attributes {zero.stage = 0
// CHECK-NOT: zero.has_overflow
// CHECK: %[[SS:.*]] = zero.sum_squares %{{.*}}, %{{.*}} : tensor<4xbf16>, tensor<3xf32> -> tensor<f64>
// CHECK-NEXT: %[[OF:.*]] = zero.non_finite %[[SS]] : tensor<f64> -> tensor<i1>
// CHECK-NEXT: zero.update_loss_scale %[[OF]]
// CHECK: zero.if_finite %[[OF]] : tensor<i1> {
module attributes {zero.stage = 0 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<4xbf16>
  graph.param trainable @b = dense<0.5> : tensor<3xf32>
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) {
    %scale = zero.loss_scale : tensor<f64>
    %t = zero.step_count : tensor<i64>
    %lr = graph.constant dense<1.0e-3> : tensor<f64>
    %gw = zero.grad_accumulator @w : tensor<4xbf16>
    %rw = zero.all_reduce %gw {reduction = #zero<reduction sum>} : tensor<4xbf16>
    %gb = zero.grad_accumulator @b : tensor<3xf32>
    %rb = zero.all_reduce %gb {reduction = #zero<reduction sum>} : tensor<3xf32>
    %local = zero.has_overflow %rw, %rb : tensor<4xbf16>, tensor<3xf32> -> tensor<i1>
    %of = zero.all_reduce %local {reduction = #zero<reduction max>} : tensor<i1>
    zero.update_loss_scale %of {scaler = #zero.loss_scaler<>} : tensor<i1>
    %ss = zero.sum_squares %rw, %rb : tensor<4xbf16>, tensor<3xf32> -> tensor<f64>
    %norm, %factor = zero.clip_grad_norm %ss, %scale {world_size = 2 : i64, max_norm = 0.0 : f64} : tensor<f64>, tensor<f64> -> tensor<f64>, tensor<f64>
    zero.if_finite %of : tensor<i1> {
      zero.sgd_update @w, %rw, %factor, %lr, %t {optimizer = #zero.sgd<>} : tensor<4xbf16>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.sgd_update @b, %rb, %factor, %lr, %t {optimizer = #zero.sgd<>} : tensor<3xf32>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.advance_step
    }
    return %norm, %of, %lr : tensor<f64>, tensor<i1>, tensor<f64>
  }
}

// -----

// f64 gradients: a finite f64 can square to inf, so the flag stays.
// CHECK-LABEL: module attributes {zero.stage = 0
// CHECK: zero.has_overflow
// CHECK: reduction max
// CHECK-NOT: zero.non_finite
module attributes {zero.stage = 0 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<4xf64>
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) {
    %scale = zero.loss_scale : tensor<f64>
    %t = zero.step_count : tensor<i64>
    %lr = graph.constant dense<1.0e-3> : tensor<f64>
    %g = zero.grad_accumulator @w : tensor<4xf64>
    %r = zero.all_reduce %g {reduction = #zero<reduction sum>} : tensor<4xf64>
    %local = zero.has_overflow %r : tensor<4xf64> -> tensor<i1>
    %of = zero.all_reduce %local {reduction = #zero<reduction max>} : tensor<i1>
    zero.update_loss_scale %of {scaler = #zero.loss_scaler<>} : tensor<i1>
    %ss = zero.sum_squares %r : tensor<4xf64> -> tensor<f64>
    %norm, %factor = zero.clip_grad_norm %ss, %scale {world_size = 2 : i64, max_norm = 0.0 : f64} : tensor<f64>, tensor<f64> -> tensor<f64>, tensor<f64>
    zero.if_finite %of : tensor<i1> {
      zero.sgd_update @w, %r, %factor, %lr, %t {optimizer = #zero.sgd<>} : tensor<4xf64>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.advance_step
    }
    return %norm, %of, %lr : tensor<f64>, tensor<i1>, tensor<f64>
  }
}

// -----

// The local flag read elsewhere (here: returned unreduced), or a sum of
// squares of other gradients: left as it is.
// CHECK-LABEL: module attributes {zero.stage = 1
// CHECK: zero.has_overflow
// CHECK: zero.has_overflow
// CHECK-NOT: zero.non_finite
module attributes {zero.stage = 1 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<4xf32>
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) {
    %scale = zero.loss_scale : tensor<f64>
    %t = zero.step_count : tensor<i64>
    %lr = graph.constant dense<1.0e-3> : tensor<f64>
    %g = zero.grad_accumulator @w : !zero.flat<grads, f32, 4, 2>
    %r = zero.reduce_scatter %g {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 4, 2> -> !zero.shard<grads, f32, 2, device>
    %r2 = zero.reduce_scatter %g {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 4, 2> -> !zero.shard<grads, f32, 2, device>
    %local = zero.has_overflow %r : !zero.shard<grads, f32, 2, device> -> tensor<i1>
    %of = zero.all_reduce %local {reduction = #zero<reduction max>} : tensor<i1>
    %local2 = zero.has_overflow %r2 : !zero.shard<grads, f32, 2, device> -> tensor<i1>
    %ss = zero.sum_squares %r2 : !zero.shard<grads, f32, 2, device> -> tensor<f64>
    %gss = zero.all_reduce %ss {reduction = #zero<reduction sum>} : tensor<f64>
    %norm, %factor = zero.clip_grad_norm %gss, %scale {world_size = 2 : i64, max_norm = 1.0 : f64} : tensor<f64>, tensor<f64> -> tensor<f64>, tensor<f64>
    zero.if_finite %local2 : tensor<i1> {
      zero.sgd_update @w, %r2, %factor, %lr, %t {optimizer = #zero.sgd<>} : !zero.shard<grads, f32, 2, device>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.advance_step
    }
    return %norm, %of, %lr : tensor<f64>, tensor<i1>, tensor<f64>
  }
}

// -----

// A read of the loss scale between the update and the sum would see the
// old scale if the update moved after the sum: left as it is.
// CHECK-LABEL: module attributes {zero.stage = 0
// CHECK: zero.has_overflow
// CHECK-NOT: zero.non_finite
module attributes {zero.stage = 0 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @w = dense<0.5> : tensor<4xf16>
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) {
    %t = zero.step_count : tensor<i64>
    %lr = graph.constant dense<1.0e-3> : tensor<f64>
    %g = zero.grad_accumulator @w : tensor<4xf16>
    %r = zero.all_reduce %g {reduction = #zero<reduction sum>} : tensor<4xf16>
    %local = zero.has_overflow %r : tensor<4xf16> -> tensor<i1>
    %of = zero.all_reduce %local {reduction = #zero<reduction max>} : tensor<i1>
    zero.update_loss_scale %of {scaler = #zero.loss_scaler<>} : tensor<i1>
    %scale = zero.loss_scale : tensor<f64>
    %ss = zero.sum_squares %r : tensor<4xf16> -> tensor<f64>
    %norm, %factor = zero.clip_grad_norm %ss, %scale {world_size = 2 : i64, max_norm = 0.0 : f64} : tensor<f64>, tensor<f64> -> tensor<f64>, tensor<f64>
    zero.if_finite %of : tensor<i1> {
      zero.sgd_update @w, %r, %factor, %lr, %t {optimizer = #zero.sgd<>} : tensor<4xf16>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.advance_step
    }
    return %norm, %of, %lr : tensor<f64>, tensor<i1>, tensor<f64>
  }
}
