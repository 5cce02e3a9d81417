// RUN: zeroc-opt %s -zero-bucket="reduce-bucket-size=0 allgather-bucket-size=100" -zero-verify-step | FileCheck %s

// Tests that on one rank zero-bucket leaves each replica's gather alone:
// it is in place there (the rank's slice is the whole replica) and runs
// nothing, where a bucket would copy the slices out and the replicas back.
// CHECK-LABEL: func.func @train_step
// CHECK-NOT: zero.concat_shards
// CHECK-NOT: zero.unpack_replica
// CHECK: zero.gather_replica @a
// CHECK-NEXT: zero.gather_replica @b
// CHECK-NOT: zero.bucket
module attributes {zero.stage = 1 : i64, zero.world_size = 1 : i64} {
  graph.param trainable @a = dense<0.0> : tensor<4xf32>
  graph.param trainable @b = dense<0.0> : tensor<3xf32>
  func.func @train_micro_step() -> tensor<f32> {
    %l = graph.constant dense<0.0> : tensor<f32>
    return %l : tensor<f32>
  }
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) {
    %of = graph.constant dense<false> : tensor<i1>
    %z = graph.constant dense<0.0> : tensor<f64>
    %t = zero.step_count : tensor<i64>
    %ga = zero.grad_accumulator @a : !zero.flat<grads, f32, 4, 1>
    %ra = zero.reduce_scatter %ga {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 4, 1> -> !zero.shard<grads, f32, 4, device>
    %gb = zero.grad_accumulator @b : !zero.flat<grads, f32, 3, 1>
    %rb = zero.reduce_scatter %gb {reduction = #zero<reduction sum>, zero.reduction_end} : !zero.flat<grads, f32, 3, 1> -> !zero.shard<grads, f32, 3, device>
    %ss = zero.sum_squares %ra, %rb : !zero.shard<grads, f32, 4, device>, !zero.shard<grads, f32, 3, device> -> tensor<f64>
    zero.if_finite %of : tensor<i1> {
      zero.sgd_update @a, %ra, %z, %z, %t {optimizer = #zero.sgd<>} : !zero.shard<grads, f32, 4, device>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.sgd_update @b, %rb, %z, %z, %t {optimizer = #zero.sgd<>} : !zero.shard<grads, f32, 3, device>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.advance_step
      zero.gather_replica @a : !zero.shard<params, f32, 4, device>
      zero.gather_replica @b : !zero.shard<params, f32, 3, device>
    }
    return %ss, %of, %z : tensor<f64>, tensor<i1>, tensor<f64>
  }
}
