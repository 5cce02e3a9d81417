// RUN: zeroc-opt %s -split-input-file -zero-bucket="reduce-bucket-size=12 allgather-bucket-size=14" -zero-verify-step | FileCheck %s --check-prefix=FULL
// RUN: zeroc-opt %s -split-input-file -zero-bucket="reduce-bucket-size=11 allgather-bucket-size=13" -zero-verify-step | FileCheck %s --check-prefix=OVER
// RUN: zeroc-opt %s -split-input-file -zero-bucket="reduce-bucket-size=12 allgather-bucket-size=14 comm-alpha-us=0.001 comm-gbps=1.6" -zero-verify-step | FileCheck %s --check-prefix=ALONE
// Size 0, or one smaller than every member, leaves the IR exactly as it is.
// RUN: zeroc-opt %s -split-input-file > %t.before
// RUN: zeroc-opt %s -split-input-file -zero-bucket="reduce-bucket-size=0 allgather-bucket-size=0" > %t.zero
// RUN: diff %t.before %t.zero
// RUN: zeroc-opt %s -split-input-file -zero-bucket="reduce-bucket-size=1 allgather-bucket-size=1" > %t.one
// RUN: diff %t.before %t.one

// Tests zero-bucket on @train_step at world size 2: reduce-bucket-size for
// the reductions of stages 0-1 and allgather-bucket-size for the replica
// gathers. Parameters of 4, 3, 5 and 2 elements.
//
// Stage 0: the accumulators are packed end to end and the bucket is padded
// once, at its end: {a, b, c} moves 12 elements (exactly size 12), d stays
// alone; at size 11, {a, b} moves 8 (with c it would be 12) and {c, d} 8.
// Each member is read back as a view of the all-reduced bucket, and the
// bucket's all-reduce, where the last member's was, takes over
// zero.reduction_end.
module attributes {zero.stage = 0 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @a = dense<0.0> : tensor<4xf32>
  graph.param trainable @b = dense<0.0> : tensor<3xf32>
  graph.param trainable @c = dense<0.0> : tensor<5xf32>
  graph.param trainable @d = dense<0.0> : tensor<2xf32>
  func.func @train_micro_step() -> tensor<f32> {
    %l = graph.constant dense<0.0> : tensor<f32>
    return %l : tensor<f32>
  }
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) {
    %of = graph.constant dense<false> : tensor<i1>
    %z = graph.constant dense<0.0> : tensor<f64>
    %t = zero.step_count : tensor<i64>
    %ga = zero.grad_accumulator @a : tensor<4xf32>
    %ra = zero.all_reduce %ga {reduction = #zero<reduction sum>} : tensor<4xf32>
    %gb = zero.grad_accumulator @b : tensor<3xf32>
    %rb = zero.all_reduce %gb {reduction = #zero<reduction sum>} : tensor<3xf32>
    %gc = zero.grad_accumulator @c : tensor<5xf32>
    %rc = zero.all_reduce %gc {reduction = #zero<reduction sum>} : tensor<5xf32>
    %gd = zero.grad_accumulator @d : tensor<2xf32>
    %rd = zero.all_reduce %gd {reduction = #zero<reduction sum>, zero.reduction_end} : tensor<2xf32>
    %ss = zero.sum_squares %ra, %rb, %rc, %rd : tensor<4xf32>, tensor<3xf32>, tensor<5xf32>, tensor<2xf32> -> tensor<f64>
    zero.if_finite %of : tensor<i1> {
      zero.sgd_update @a, %ra, %z, %z, %t {optimizer = #zero.sgd<>} : tensor<4xf32>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.sgd_update @b, %rb, %z, %z, %t {optimizer = #zero.sgd<>} : tensor<3xf32>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.sgd_update @c, %rc, %z, %z, %t {optimizer = #zero.sgd<>} : tensor<5xf32>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.sgd_update @d, %rd, %z, %z, %t {optimizer = #zero.sgd<>} : tensor<2xf32>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.advance_step
    }
    return %ss, %of, %z : tensor<f64>, tensor<i1>, tensor<f64>
  }
}

// FULL-LABEL: func.func @train_step
// FULL: %[[GA:.*]] = zero.grad_accumulator @a
// FULL: %[[GB:.*]] = zero.grad_accumulator @b
// FULL: %[[GC:.*]] = zero.grad_accumulator @c
// FULL: %[[P:.*]] = zero.pack %[[GA]], %[[GB]], %[[GC]] {offsets = [0, 4, 7]} : (tensor<4xf32>, tensor<3xf32>, tensor<5xf32>) -> !zero.flat<grads, f32, 12, 2>
// FULL-NEXT: %[[R:.*]] = zero.all_reduce %[[P]] {reduction = #zero<reduction sum>, zero.bucket = 0 : i64} : !zero.flat<grads, f32, 12, 2>
// FULL-NEXT: %[[VA:.*]] = zero.view %[[R]] {offset = 0 : i64} : !zero.flat<grads, f32, 12, 2> -> tensor<4xf32>
// FULL-NEXT: %[[VB:.*]] = zero.view %[[R]] {offset = 4 : i64} : !zero.flat<grads, f32, 12, 2> -> tensor<3xf32>
// FULL-NEXT: %[[VC:.*]] = zero.view %[[R]] {offset = 7 : i64} : !zero.flat<grads, f32, 12, 2> -> tensor<5xf32>
// FULL-NEXT: %[[GD:.*]] = zero.grad_accumulator @d
// FULL-NEXT: %[[RD:.*]] = zero.all_reduce %[[GD]] {reduction = #zero<reduction sum>, zero.reduction_end} : tensor<2xf32>
// FULL-NEXT: zero.sum_squares %[[VA]], %[[VB]], %[[VC]], %[[RD]]
// FULL: zero.sgd_update @a, %[[VA]]
// FULL: zero.sgd_update @c, %[[VC]]
// FULL: zero.sgd_update @d, %[[RD]]

// OVER-LABEL: func.func @train_step
// OVER: zero.pack %{{.*}}, %{{.*}} {offsets = [0, 4]} : (tensor<4xf32>, tensor<3xf32>) -> !zero.flat<grads, f32, 8, 2>
// OVER-NEXT: zero.all_reduce {{.*}}zero.bucket = 0 : i64} : !zero.flat<grads, f32, 8, 2>
// OVER: zero.pack %{{.*}}, %{{.*}} {offsets = [0, 5]} : (tensor<5xf32>, tensor<2xf32>) -> !zero.flat<grads, f32, 8, 2>
// OVER-NEXT: zero.all_reduce {{.*}}zero.bucket = 1 : i64, zero.reduction_end} : !zero.flat<grads, f32, 8, 2>

// -----

// Stage 1: the padded accumulators (4, 4, 6 and 2 elements) are
// reduce-scattered in rank-major buckets like stage 2's gradients: at size
// 12 {a, b} (8; with c 14) and {c, d} (8), at size 11 the same. The
// replicas are gathered after the updates: at size 14 {a, b, c} fills the
// bucket exactly and d stays alone; at size 13 {a, b} and {c, d}. A gather
// bucket sends this rank's updated slices end to end and copies each member
// into its replica.
module attributes {zero.stage = 1 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @a = dense<0.0> : tensor<4xf32>
  graph.param trainable @b = dense<0.0> : tensor<3xf32>
  graph.param trainable @c = dense<0.0> : tensor<5xf32>
  graph.param trainable @d = dense<0.0> : tensor<2xf32>
  func.func @train_micro_step() -> tensor<f32> {
    %l = graph.constant dense<0.0> : tensor<f32>
    return %l : tensor<f32>
  }
  func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) {
    %of = graph.constant dense<false> : tensor<i1>
    %z = graph.constant dense<0.0> : tensor<f64>
    %t = zero.step_count : tensor<i64>
    %ga = zero.grad_accumulator @a : !zero.flat<grads, f32, 4, 2>
    %ra = zero.reduce_scatter %ga {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 4, 2> -> !zero.shard<grads, f32, 2, device>
    %gb = zero.grad_accumulator @b : !zero.flat<grads, f32, 4, 2>
    %rb = zero.reduce_scatter %gb {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 4, 2> -> !zero.shard<grads, f32, 2, device>
    %gc = zero.grad_accumulator @c : !zero.flat<grads, f32, 6, 2>
    %rc = zero.reduce_scatter %gc {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 6, 2> -> !zero.shard<grads, f32, 3, device>
    %gd = zero.grad_accumulator @d : !zero.flat<grads, f32, 2, 2>
    %rd = zero.reduce_scatter %gd {reduction = #zero<reduction sum>, zero.reduction_end} : !zero.flat<grads, f32, 2, 2> -> !zero.shard<grads, f32, 1, device>
    %ss = zero.sum_squares %ra, %rb, %rc, %rd : !zero.shard<grads, f32, 2, device>, !zero.shard<grads, f32, 2, device>, !zero.shard<grads, f32, 3, device>, !zero.shard<grads, f32, 1, device> -> tensor<f64>
    zero.if_finite %of : tensor<i1> {
      zero.sgd_update @a, %ra, %z, %z, %t {optimizer = #zero.sgd<>} : !zero.shard<grads, f32, 2, device>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.sgd_update @b, %rb, %z, %z, %t {optimizer = #zero.sgd<>} : !zero.shard<grads, f32, 2, device>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.sgd_update @c, %rc, %z, %z, %t {optimizer = #zero.sgd<>} : !zero.shard<grads, f32, 3, device>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.sgd_update @d, %rd, %z, %z, %t {optimizer = #zero.sgd<>} : !zero.shard<grads, f32, 1, device>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.advance_step
      zero.gather_replica @a : !zero.shard<params, f32, 2, device>
      zero.gather_replica @b : !zero.shard<params, f32, 2, device>
      zero.gather_replica @c : !zero.shard<params, f32, 3, device>
      zero.gather_replica @d : !zero.shard<params, f32, 1, device>
    }
    return %ss, %of, %z : tensor<f64>, tensor<i1>, tensor<f64>
  }
}

// FULL-LABEL: func.func @train_step
// FULL: %[[GA:.*]] = zero.grad_accumulator @a
// FULL: %[[GB:.*]] = zero.grad_accumulator @b
// FULL: %[[VA:.*]] = zero.view %[[GA]] {offset = 0 : i64} : !zero.flat<grads, f32, 4, 2> -> tensor<4xf32>
// FULL-NEXT: %[[VB:.*]] = zero.view %[[GB]] {offset = 0 : i64} : !zero.flat<grads, f32, 4, 2> -> tensor<3xf32>
// FULL-NEXT: %[[P:.*]] = zero.pack_shards %[[VA]], %[[VB]] {offsets = [0, 2]} : (tensor<4xf32>, tensor<3xf32>) -> !zero.flat<grads, f32, 8, 2>
// FULL-NEXT: %[[R:.*]] = zero.reduce_scatter %[[P]] {reduction = #zero<reduction sum>, zero.bucket = 0 : i64} : !zero.flat<grads, f32, 8, 2> -> !zero.shard<grads, f32, 4, device>
// FULL-NEXT: %[[SA:.*]] = zero.shard_slice %[[R]] {offset = 0 : i64} : !zero.shard<grads, f32, 4, device> -> !zero.shard<grads, f32, 2, device>
// FULL-NEXT: %[[SB:.*]] = zero.shard_slice %[[R]] {offset = 2 : i64} : !zero.shard<grads, f32, 4, device> -> !zero.shard<grads, f32, 2, device>
// FULL: zero.pack_shards %{{.*}}, %{{.*}} {offsets = [0, 3]} : (tensor<5xf32>, tensor<2xf32>) -> !zero.flat<grads, f32, 8, 2>
// FULL-NEXT: zero.reduce_scatter {{.*}}zero.bucket = 1 : i64, zero.reduction_end}
// FULL: zero.if_finite
// FULL: zero.sgd_update @a, %[[SA]]
// FULL: zero.sgd_update @b, %[[SB]]
// FULL: zero.advance_step
// FULL-NEXT: %[[LA:.*]] = zero.replica_slice @a : !zero.shard<params, f32, 2, device>
// FULL-NEXT: %[[LB:.*]] = zero.replica_slice @b : !zero.shard<params, f32, 2, device>
// FULL-NEXT: %[[LC:.*]] = zero.replica_slice @c : !zero.shard<params, f32, 3, device>
// FULL-NEXT: %[[C:.*]] = zero.concat_shards %[[LA]], %[[LB]], %[[LC]] : {{.*}} -> !zero.shard<params, f32, 7, device>
// FULL-NEXT: %[[F:.*]] = zero.all_gather %[[C]] {zero.bucket = 2 : i64} : !zero.shard<params, f32, 7, device> -> !zero.flat<params, f32, 14, 2>
// FULL-NEXT: zero.unpack_replica [@a, @b, @c], %[[F]] {offsets = [0, 2, 4]}
// FULL-NEXT: zero.gather_replica @d : !zero.shard<params, f32, 1, device>
// A replica the cost model finds large enough keeps its own gather, which
// writes into it in place: with these constants (2 ranks) a gather of at
// least 20 bytes loses at most 2% to fixed costs, so c's 6 elements (24
// bytes) go alone and a, b and d (16, 16, 8 bytes) share a bucket.
// ALONE: zero.advance_step
// ALONE: zero.advance_step
// ALONE-NEXT: zero.gather_replica @c
// ALONE-NEXT: zero.replica_slice @a
// ALONE-NEXT: zero.replica_slice @b
// ALONE-NEXT: zero.replica_slice @d
// ALONE-NEXT: zero.concat_shards
// ALONE-NEXT: zero.all_gather
// FULL-NEXT: }

// OVER-LABEL: func.func @train_step
// OVER: zero.reduce_scatter {{.*}}zero.bucket = 0 : i64}
// OVER: zero.reduce_scatter {{.*}}zero.bucket = 1 : i64, zero.reduction_end}
// OVER: zero.advance_step
// OVER: zero.concat_shards {{.*}} -> !zero.shard<params, f32, 4, device>
// OVER-NEXT: zero.all_gather {{.*}}zero.bucket = 2 : i64} : !zero.shard<params, f32, 4, device> -> !zero.flat<params, f32, 8, 2>
// OVER: zero.concat_shards {{.*}} -> !zero.shard<params, f32, 4, device>
// OVER-NEXT: zero.all_gather {{.*}}zero.bucket = 3 : i64} : !zero.shard<params, f32, 4, device> -> !zero.flat<params, f32, 8, 2>
// OVER-NEXT: zero.unpack_replica [@c, @d], %{{.*}} {offsets = [0, 3]}
// OVER-NOT: zero.gather_replica
