// RUN: zeroc-opt %s -split-input-file -zero-bucket="reduce-bucket-size=12 prefetch-bucket-size=0" -zero-verify-partition | FileCheck %s --check-prefix=FULL
// RUN: zeroc-opt %s -split-input-file -zero-bucket="reduce-bucket-size=11 prefetch-bucket-size=0" -zero-verify-partition | FileCheck %s --check-prefix=OVER
// RUN: zeroc-opt %s -split-input-file -zero-bucket="reduce-bucket-size=0 prefetch-bucket-size=10" -zero-verify-partition | FileCheck %s --check-prefix=GATHER
// RUN: zeroc-opt %s -split-input-file -zero-bucket="reduce-bucket-size=0 prefetch-bucket-size=9" -zero-verify-partition | FileCheck %s --check-prefix=GATHER9
// Size 0, or one smaller than every member, leaves the IR exactly as it is.
// RUN: zeroc-opt %s -split-input-file > %t.before
// RUN: zeroc-opt %s -split-input-file -zero-bucket="reduce-bucket-size=0 prefetch-bucket-size=0" > %t.zero
// RUN: diff %t.before %t.zero
// RUN: zeroc-opt %s -split-input-file -zero-bucket="reduce-bucket-size=1 prefetch-bucket-size=1" > %t.one
// RUN: diff %t.before %t.one

// Tests the gradient buckets of stage 2 at world size 2. The reductions
// zero-partition emitted move, in program order, 6, 4 (3 elements padded),
// 2, 24, 2, 2, then an f16 gradient and 2 more f32 elements.
//  * size 12: {g0, g1, g2} fills the bucket exactly, g3 is larger than a
//    bucket and stays alone, {g4, g5} is a bucket; the f16 gradient ends it,
//    so g6 stays alone too;
//  * size 11: {g0, g1} (g2 would be one element over), g2 alone (g3 would
//    not fit), g3 alone, {g4, g5}.
// A bucket is packed rank-major and reduced where the last member's
// reduce-scatter was; each member accumulates its slice of the shard.
module attributes {zero.stage = 2 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @p0 = dense<0.0> : tensor<2x3xf32>
  graph.param trainable @p1 = dense<0.0> : tensor<3xf32>
  graph.param trainable @p2 = dense<0.0> : tensor<2xf32>
  graph.param trainable @p3 = dense<0.0> : tensor<24xf32>
  graph.param trainable @h = dense<0.0> : tensor<2xf16>
  graph.param trainable @p4 = dense<0.0> : tensor<2xf32>
  graph.param trainable @p5 = dense<0.0> : tensor<2xf32>
  graph.param trainable @p6 = dense<0.0> : tensor<2xf32>
  func.func @train_micro_step(%x0: tensor<2x3xf32>, %x1: tensor<3xf32>, %x2: tensor<2xf32>,
                              %x3: tensor<24xf32>, %xh: tensor<2xf16>) -> tensor<f32> {
    %g0 = graph.neg %x0 : tensor<2x3xf32>
    %f0 = zero.pack %g0 {offsets = [0]} : (tensor<2x3xf32>) -> !zero.flat<grads, f32, 6, 2>
    %s0 = zero.reduce_scatter %f0 {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 6, 2> -> !zero.shard<grads, f32, 3, device>
    zero.grad_accumulate @p0, %s0 : !zero.shard<grads, f32, 3, device>
    %g1 = graph.neg %x1 : tensor<3xf32>
    %f1 = zero.pack %g1 {offsets = [0]} : (tensor<3xf32>) -> !zero.flat<grads, f32, 4, 2>
    %s1 = zero.reduce_scatter %f1 {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 4, 2> -> !zero.shard<grads, f32, 2, device>
    zero.grad_accumulate @p1, %s1 : !zero.shard<grads, f32, 2, device>
    %g2 = graph.neg %x2 : tensor<2xf32>
    %f2 = zero.pack %g2 {offsets = [0]} : (tensor<2xf32>) -> !zero.flat<grads, f32, 2, 2>
    %s2 = zero.reduce_scatter %f2 {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 2, 2> -> !zero.shard<grads, f32, 1, device>
    zero.grad_accumulate @p2, %s2 : !zero.shard<grads, f32, 1, device>
    %g3 = graph.neg %x3 : tensor<24xf32>
    %f3 = zero.pack %g3 {offsets = [0]} : (tensor<24xf32>) -> !zero.flat<grads, f32, 24, 2>
    %s3 = zero.reduce_scatter %f3 {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 24, 2> -> !zero.shard<grads, f32, 12, device>
    zero.grad_accumulate @p3, %s3 : !zero.shard<grads, f32, 12, device>
    %g4 = graph.neg %x2 : tensor<2xf32>
    %f4 = zero.pack %g4 {offsets = [0]} : (tensor<2xf32>) -> !zero.flat<grads, f32, 2, 2>
    %s4 = zero.reduce_scatter %f4 {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 2, 2> -> !zero.shard<grads, f32, 1, device>
    zero.grad_accumulate @p4, %s4 : !zero.shard<grads, f32, 1, device>
    %g5 = graph.relu %x2 : tensor<2xf32>
    %f5 = zero.pack %g5 {offsets = [0]} : (tensor<2xf32>) -> !zero.flat<grads, f32, 2, 2>
    %s5 = zero.reduce_scatter %f5 {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 2, 2> -> !zero.shard<grads, f32, 1, device>
    zero.grad_accumulate @p5, %s5 : !zero.shard<grads, f32, 1, device>
    %gh = graph.neg %xh : tensor<2xf16>
    %fh = zero.pack %gh {offsets = [0]} : (tensor<2xf16>) -> !zero.flat<grads, f16, 2, 2>
    %sh = zero.reduce_scatter %fh {reduction = #zero<reduction sum>} : !zero.flat<grads, f16, 2, 2> -> !zero.shard<grads, f16, 1, device>
    zero.grad_accumulate @h, %sh : !zero.shard<grads, f16, 1, device>
    %g6 = graph.abs %x2 : tensor<2xf32>
    %f6 = zero.pack %g6 {offsets = [0]} : (tensor<2xf32>) -> !zero.flat<grads, f32, 2, 2>
    %s6 = zero.reduce_scatter %f6 {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 2, 2> -> !zero.shard<grads, f32, 1, device>
    zero.grad_accumulate @p6, %s6 : !zero.shard<grads, f32, 1, device>
    %l = graph.constant dense<0.0> : tensor<f32>
    return %l : tensor<f32>
  }
}

// FULL-LABEL: func.func @train_micro_step
// FULL: %[[G0:.*]] = graph.neg %arg0
// FULL: %[[G1:.*]] = graph.neg %arg1
// FULL: %[[G2:.*]] = graph.neg %arg2
// FULL-NEXT: %[[B0:.*]] = zero.pack_shards %[[G0]], %[[G1]], %[[G2]] {offsets = [0, 3, 5]} : (tensor<2x3xf32>, tensor<3xf32>, tensor<2xf32>) -> !zero.flat<grads, f32, 12, 2>
// FULL-NEXT: %[[S0:.*]] = zero.reduce_scatter %[[B0]] {reduction = #zero<reduction sum>, zero.bucket = 0 : i64} : !zero.flat<grads, f32, 12, 2> -> !zero.shard<grads, f32, 6, device>
// FULL-NEXT: %[[V0:.*]] = zero.shard_slice %[[S0]] {offset = 0 : i64} : !zero.shard<grads, f32, 6, device> -> !zero.shard<grads, f32, 3, device>
// FULL-NEXT: zero.grad_accumulate @p0, %[[V0]] : !zero.shard<grads, f32, 3, device>
// FULL-NEXT: %[[V1:.*]] = zero.shard_slice %[[S0]] {offset = 3 : i64} : !zero.shard<grads, f32, 6, device> -> !zero.shard<grads, f32, 2, device>
// FULL-NEXT: zero.grad_accumulate @p1, %[[V1]] : !zero.shard<grads, f32, 2, device>
// FULL-NEXT: %[[V2:.*]] = zero.shard_slice %[[S0]] {offset = 5 : i64} : !zero.shard<grads, f32, 6, device> -> !zero.shard<grads, f32, 1, device>
// FULL-NEXT: zero.grad_accumulate @p2, %[[V2]] : !zero.shard<grads, f32, 1, device>
// FULL-NEXT: %[[G3:.*]] = graph.neg %arg3
// FULL-NEXT: zero.pack %[[G3]] {offsets = [0]}
// FULL-NEXT: zero.reduce_scatter %{{.*}} {reduction = #zero<reduction sum>} :
// FULL-NEXT: zero.grad_accumulate @p3
// FULL-NEXT: %[[G4:.*]] = graph.neg %arg2
// FULL-NEXT: %[[G5:.*]] = graph.relu %arg2
// FULL-NEXT: %[[B1:.*]] = zero.pack_shards %[[G4]], %[[G5]] {offsets = [0, 1]} : (tensor<2xf32>, tensor<2xf32>) -> !zero.flat<grads, f32, 4, 2>
// FULL-NEXT: zero.reduce_scatter %[[B1]] {reduction = #zero<reduction sum>, zero.bucket = 1 : i64}
// FULL-NEXT: zero.shard_slice
// FULL-NEXT: zero.grad_accumulate @p4
// FULL-NEXT: zero.shard_slice
// FULL-NEXT: zero.grad_accumulate @p5
// FULL-NEXT: %[[GH:.*]] = graph.neg %arg4
// FULL-NEXT: zero.pack %[[GH]] {offsets = [0]}
// FULL-NEXT: zero.reduce_scatter %{{.*}} {reduction = #zero<reduction sum>} :
// FULL-NEXT: zero.grad_accumulate @h
// FULL-NEXT: %[[G6:.*]] = graph.abs %arg2
// FULL-NEXT: zero.pack %[[G6]] {offsets = [0]}
// FULL-NEXT: zero.reduce_scatter %{{.*}} {reduction = #zero<reduction sum>} :
// FULL-NEXT: zero.grad_accumulate @p6
// FULL-NOT: zero.pack

// OVER-LABEL: func.func @train_micro_step
// OVER: %[[G0:.*]] = graph.neg %arg0
// OVER: %[[G1:.*]] = graph.neg %arg1
// OVER-NEXT: zero.pack_shards %[[G0]], %[[G1]] {offsets = [0, 3]} : (tensor<2x3xf32>, tensor<3xf32>) -> !zero.flat<grads, f32, 10, 2>
// OVER-NEXT: zero.reduce_scatter %{{.*}} {reduction = #zero<reduction sum>, zero.bucket = 0 : i64} : !zero.flat<grads, f32, 10, 2> -> !zero.shard<grads, f32, 5, device>
// OVER: graph.neg %arg2
// OVER-NEXT: zero.pack %{{.*}} {offsets = [0]} : (tensor<2xf32>) -> !zero.flat<grads, f32, 2, 2>
// OVER: graph.neg %arg3
// OVER-NEXT: zero.pack %{{.*}} {offsets = [0]} : (tensor<24xf32>) -> !zero.flat<grads, f32, 24, 2>
// OVER: zero.pack_shards {{.*}} -> !zero.flat<grads, f32, 4, 2>
// OVER-NEXT: zero.reduce_scatter %{{.*}} {reduction = #zero<reduction sum>, zero.bucket = 1 : i64}

// GATHER-LABEL: func.func @train_micro_step
// GATHER-NOT: zero.bucket

// GATHER9-LABEL: func.func @train_micro_step

// -----

// Tests the parameter buckets of stage 3 at world size 2. The forward
// gathers move 6, 4 (3 elements padded) and 4 elements, the backward ones
// 4 and 6; forward and backward gathers never share a bucket.
//  * size 10: forward {a, b} (c would not fit), c alone; backward {c, a};
//  * size 9: forward a alone, {b, c}; backward c and a alone.
// The bucket is gathered before the first member's first use, with the
// later members' shard reads moved up to it; each member is copied out of
// the gathered bucket, which is released right after the copies.
module attributes {zero.stage = 3 : i64, zero.world_size = 2 : i64} {
  graph.param trainable @a = dense<0.0> : tensor<2x3xf32>
  graph.param trainable @b = dense<0.0> : tensor<3xf32>
  graph.param trainable @c = dense<0.0> : tensor<4xf32>
  func.func @train_micro_step(%x: tensor<2x3xf32>) -> tensor<f32> {
    %sa = zero.param_shard @a : !zero.shard<params, f32, 3, device>
    %fa = zero.all_gather %sa : !zero.shard<params, f32, 3, device> -> !zero.flat<params, f32, 6, 2>
    %a = zero.view %fa {offset = 0} : !zero.flat<params, f32, 6, 2> -> tensor<2x3xf32>
    %y = graph.mul %x, %a : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
    zero.release %fa : !zero.flat<params, f32, 6, 2>
    %sb = zero.param_shard @b : !zero.shard<params, f32, 2, device>
    %fb = zero.all_gather %sb : !zero.shard<params, f32, 2, device> -> !zero.flat<params, f32, 4, 2>
    %b = zero.view %fb {offset = 0} : !zero.flat<params, f32, 4, 2> -> tensor<3xf32>
    %yb = graph.add %y, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
    zero.release %fb : !zero.flat<params, f32, 4, 2>
    %sc = zero.param_shard @c : !zero.shard<params, f32, 2, device>
    %fc = zero.all_gather %sc : !zero.shard<params, f32, 2, device> -> !zero.flat<params, f32, 4, 2>
    %c = zero.view %fc {offset = 0} : !zero.flat<params, f32, 4, 2> -> tensor<4xf32>
    %r = graph.reshape %yb : tensor<2x3xf32> -> tensor<6xf32>
    %cs = graph.reduce_sum %c {axes = [0], keepdims = false} : tensor<4xf32> -> tensor<f32>
    zero.release %fc : !zero.flat<params, f32, 4, 2>
    %l = graph.reduce_sum %r {axes = [0], keepdims = false, zero.forward_end} : tensor<6xf32> -> tensor<f32>
    %sc2 = zero.param_shard @c : !zero.shard<params, f32, 2, device>
    %fc2 = zero.all_gather %sc2 : !zero.shard<params, f32, 2, device> -> !zero.flat<params, f32, 4, 2>
    %c2 = zero.view %fc2 {offset = 0} : !zero.flat<params, f32, 4, 2> -> tensor<4xf32>
    %gc = graph.neg %c2 : tensor<4xf32>
    zero.release %fc2 : !zero.flat<params, f32, 4, 2>
    %sa2 = zero.param_shard @a : !zero.shard<params, f32, 3, device>
    %fa2 = zero.all_gather %sa2 : !zero.shard<params, f32, 3, device> -> !zero.flat<params, f32, 6, 2>
    %a2 = zero.view %fa2 {offset = 0} : !zero.flat<params, f32, 6, 2> -> tensor<2x3xf32>
    %ga = graph.mul %x, %a2 : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
    zero.release %fa2 : !zero.flat<params, f32, 6, 2>
    %gb = graph.sum_to %ga : tensor<2x3xf32> -> tensor<3xf32>
    %pa = zero.pack %ga {offsets = [0]} : (tensor<2x3xf32>) -> !zero.flat<grads, f32, 6, 2>
    %ra = zero.reduce_scatter %pa {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 6, 2> -> !zero.shard<grads, f32, 3, device>
    zero.grad_accumulate @a, %ra : !zero.shard<grads, f32, 3, device>
    %pb = zero.pack %gb {offsets = [0]} : (tensor<3xf32>) -> !zero.flat<grads, f32, 4, 2>
    %rb = zero.reduce_scatter %pb {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 4, 2> -> !zero.shard<grads, f32, 2, device>
    zero.grad_accumulate @b, %rb : !zero.shard<grads, f32, 2, device>
    %pc = zero.pack %gc {offsets = [0]} : (tensor<4xf32>) -> !zero.flat<grads, f32, 4, 2>
    %rc = zero.reduce_scatter %pc {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 4, 2> -> !zero.shard<grads, f32, 2, device>
    zero.grad_accumulate @c, %rc : !zero.shard<grads, f32, 2, device>
    %sum = graph.add %l, %cs : tensor<f32>, tensor<f32> -> tensor<f32>
    return %sum : tensor<f32>
  }
}

// The gradient reductions move 6, 4 and 4 elements: {a, b} at size 12 and
// at size 11, c alone.
// FULL-LABEL: func.func @train_micro_step
// FULL-NOT: zero.concat_shards
// FULL: zero.pack_shards %{{.*}}, %{{.*}} {offsets = [0, 3]} : (tensor<2x3xf32>, tensor<3xf32>) -> !zero.flat<grads, f32, 10, 2>
// FULL-NEXT: zero.reduce_scatter %{{.*}} {reduction = #zero<reduction sum>, zero.bucket = 0 : i64}
// FULL: zero.pack %{{.*}} {offsets = [0]} : (tensor<4xf32>) -> !zero.flat<grads, f32, 4, 2>
// FULL-NOT: zero.bucket

// OVER-LABEL: func.func @train_micro_step
// OVER: zero.pack_shards {{.*}} -> !zero.flat<grads, f32, 10, 2>

// GATHER-LABEL: func.func @train_micro_step
// GATHER-NEXT: %[[SA:.*]] = zero.param_shard @a : !zero.shard<params, f32, 3, device>
// GATHER-NEXT: %[[SB:.*]] = zero.param_shard @b : !zero.shard<params, f32, 2, device>
// GATHER-NEXT: %[[C0:.*]] = zero.concat_shards %[[SA]], %[[SB]] : (!zero.shard<params, f32, 3, device>, !zero.shard<params, f32, 2, device>) -> !zero.shard<params, f32, 5, device>
// GATHER-NEXT: %[[F0:.*]] = zero.all_gather %[[C0]] {zero.bucket = 0 : i64} : !zero.shard<params, f32, 5, device> -> !zero.flat<params, f32, 10, 2>
// GATHER-NEXT: %[[AB:.*]]:2 = zero.unpack_shards %[[F0]] {offsets = [0, 3]} : !zero.flat<params, f32, 10, 2> -> tensor<2x3xf32>, tensor<3xf32>
// GATHER-NEXT: zero.release %[[F0]] : !zero.flat<params, f32, 10, 2>
// GATHER-NEXT: %[[Y:.*]] = graph.mul %arg0, %[[AB]]#0
// GATHER-NEXT: graph.add %[[Y]], %[[AB]]#1
// GATHER-NEXT: zero.param_shard @c
// GATHER-NEXT: zero.all_gather %{{.*}} : !zero.shard<params, f32, 2, device> -> !zero.flat<params, f32, 4, 2>
// GATHER-NEXT: zero.view
// GATHER: zero.forward_end
// GATHER-NEXT: %[[SC:.*]] = zero.param_shard @c
// GATHER-NEXT: %[[SA2:.*]] = zero.param_shard @a
// GATHER-NEXT: %[[C1:.*]] = zero.concat_shards %[[SC]], %[[SA2]] : (!zero.shard<params, f32, 2, device>, !zero.shard<params, f32, 3, device>) -> !zero.shard<params, f32, 5, device>
// GATHER-NEXT: %[[F1:.*]] = zero.all_gather %[[C1]] {zero.bucket = 1 : i64}
// GATHER-NEXT: %[[CA:.*]]:2 = zero.unpack_shards %[[F1]] {offsets = [0, 2]} : !zero.flat<params, f32, 10, 2> -> tensor<4xf32>, tensor<2x3xf32>
// GATHER-NEXT: zero.release %[[F1]]
// GATHER-NEXT: graph.neg %[[CA]]#0
// GATHER-NEXT: graph.mul %arg0, %[[CA]]#1
// GATHER-NOT: zero.view
// GATHER-NOT: zero.bucket

// GATHER9-LABEL: func.func @train_micro_step
// GATHER9: zero.all_gather %{{.*}} : !zero.shard<params, f32, 3, device> -> !zero.flat<params, f32, 6, 2>
// GATHER9: zero.concat_shards {{.*}} -> !zero.shard<params, f32, 4, device>
// GATHER9-NEXT: zero.all_gather %{{.*}} {zero.bucket = 0 : i64} : !zero.shard<params, f32, 4, device> -> !zero.flat<params, f32, 8, 2>
// GATHER9-NEXT: zero.unpack_shards %{{.*}} {offsets = [0, 2]} : !zero.flat<params, f32, 8, 2> -> tensor<3xf32>, tensor<4xf32>
// GATHER9-NOT: zero.bucket
