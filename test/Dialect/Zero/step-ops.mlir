// RUN: zeroc-opt %s | zeroc-opt | FileCheck %s
// RUN: zeroc-opt %s --mlir-print-op-generic | zeroc-opt | FileCheck %s

// Tests that the optimizer step's ops and attributes round-trip.
graph.param trainable @w = dense<0.5> : tensor<4xf32>

// CHECK-LABEL: func.func @train_step
// CHECK: zero.grad_accumulator @w : tensor<4xf32>
// CHECK: zero.all_reduce %{{.*}} {reduction = #zero<reduction sum>} : tensor<4xf32>
// CHECK: zero.has_overflow %{{.*}} : tensor<4xf32> -> tensor<i1>
// CHECK: zero.update_loss_scale %{{.*}} {scaler = #zero.loss_scaler<initial_scale = 1.024000e+03, scale_window = 10, consecutive_hysteresis = true>} : tensor<i1>
// CHECK: zero.sum_squares %{{.*}} : tensor<4xf32> -> tensor<f64>
// CHECK: zero.non_finite %{{.*}} : tensor<f64> -> tensor<i1>
// CHECK: zero.clip_grad_norm %{{.*}}, %{{.*}} {max_norm = 1.000000e+00 : f64, world_size = 2 : i64}
// CHECK: zero.lr_schedule %{{.*}} {base_lr = 1.000000e-03 : f64, base_momentum = 9.000000e-01 : f64, schedule = #zero.lr_schedule<kind = warmup_decay, warmup_num_steps = 10, warmup_type_log = false, total_num_steps = 100>}
// CHECK: zero.if_finite %{{.*}} : tensor<i1> {
// CHECK: zero.adam_update @w, {{.*}} {optimizer = #zero.adam<lr = 1.000000e-02, weight_decay = 1.000000e-01, adam_w_mode = false>}
// CHECK: zero.sgd_update @w, {{.*}} {optimizer = #zero.sgd<momentum = 9.000000e-01, nesterov = true>}
// CHECK: zero.adam_update_multi [@w](%{{.*}}), {{.*}} {optimizer = #zero.adam<>} : (tensor<4xf32>), tensor<f64>
// CHECK: zero.sgd_update_multi [@w](%{{.*}}), {{.*}} {optimizer = #zero.sgd<momentum = 9.000000e-01>} : (tensor<4xf32>), tensor<f64>, tensor<f64>, tensor<i64>
// CHECK: zero.advance_step
// CHECK: zero.gather_replica @w : !zero.shard<params, f32, 2, device>
func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) {
  %scale = zero.loss_scale : tensor<f64>
  %t = zero.step_count : tensor<i64>
  %g = zero.grad_accumulator @w : tensor<4xf32>
  %r = zero.all_reduce %g {reduction = #zero<reduction sum>} : tensor<4xf32>
  %local = zero.has_overflow %r : tensor<4xf32> -> tensor<i1>
  %of = zero.all_reduce %local {reduction = #zero<reduction max>} : tensor<i1>
  zero.update_loss_scale %of {scaler = #zero.loss_scaler<initial_scale = 1024.0, scale_window = 10, consecutive_hysteresis = true>} : tensor<i1>
  %ss = zero.sum_squares %r : tensor<4xf32> -> tensor<f64>
  %nf = zero.non_finite %ss : tensor<f64> -> tensor<i1>
  %norm, %factor = zero.clip_grad_norm %ss, %scale {world_size = 2 : i64, max_norm = 1.0 : f64} : tensor<f64>, tensor<f64> -> tensor<f64>, tensor<f64>
  %lr, %mom = zero.lr_schedule %t {schedule = #zero.lr_schedule<kind = warmup_decay, warmup_num_steps = 10, warmup_type_log = false, total_num_steps = 100>, base_lr = 1.0e-3 : f64, base_momentum = 0.9 : f64} : tensor<i64> -> tensor<f64>, tensor<f64>
  zero.if_finite %of : tensor<i1> {
    zero.adam_update @w, %r, %factor, %lr, %mom, %mom, %t {optimizer = #zero.adam<lr = 0.01, weight_decay = 0.1, adam_w_mode = false>} : tensor<4xf32>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<i64>
    zero.sgd_update @w, %r, %factor, %lr, %t {optimizer = #zero.sgd<momentum = 0.9, nesterov = true>} : tensor<4xf32>, tensor<f64>, tensor<f64>, tensor<i64>
    zero.adam_update_multi [@w](%r), %factor, %lr, %mom, %mom, %t {optimizer = #zero.adam<>} : (tensor<4xf32>), tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<i64>
    zero.sgd_update_multi [@w](%r), %factor, %lr, %t {optimizer = #zero.sgd<momentum = 0.9>} : (tensor<4xf32>), tensor<f64>, tensor<f64>, tensor<i64>
    zero.advance_step
    zero.gather_replica @w : !zero.shard<params, f32, 2, device>
  }
  return %norm, %of, %lr : tensor<f64>, tensor<i1>, tensor<f64>
}

// The bucketed form of zero.gather_replica (zero-bucket).
graph.param trainable @b = dense<0.5> : tensor<3xf32>
// CHECK-LABEL: func.func @replica_bucket
// CHECK: %[[W:.*]] = zero.replica_slice @w : !zero.shard<params, f32, 2, device>
// CHECK: %[[B:.*]] = zero.replica_slice @b : !zero.shard<params, f32, 2, device>
// CHECK: %[[C:.*]] = zero.concat_shards %[[W]], %[[B]]
// CHECK: %[[F:.*]] = zero.all_gather %[[C]] {zero.bucket = 0 : i64}
// CHECK: zero.unpack_replica [@w, @b], %[[F]] {offsets = [0, 2]} : !zero.flat<params, f32, 8, 2>
func.func @replica_bucket() {
  %w = zero.replica_slice @w : !zero.shard<params, f32, 2, device>
  %b = zero.replica_slice @b : !zero.shard<params, f32, 2, device>
  %c = zero.concat_shards %w, %b : (!zero.shard<params, f32, 2, device>, !zero.shard<params, f32, 2, device>) -> !zero.shard<params, f32, 4, device>
  %f = zero.all_gather %c {zero.bucket = 0 : i64} : !zero.shard<params, f32, 4, device> -> !zero.flat<params, f32, 8, 2>
  zero.unpack_replica [@w, @b], %f {offsets = [0, 2]} : !zero.flat<params, f32, 8, 2>
  return
}
