// RUN: zeroc-opt %s -zero-bucket="reduce-bucket-size=100 prefetch-bucket-size=0 overlap=true comm-alpha-us=1 comm-gbps=0.0008" -zero-verify-partition | FileCheck %s --check-prefix=COST
// RUN: zeroc-opt %s -zero-bucket="reduce-bucket-size=100 prefetch-bucket-size=0" -zero-verify-partition | FileCheck %s --check-prefix=LIMIT
// RUN: not zeroc-opt %s -zero-bucket="overlap=true comm-alpha-us=0" 2>&1 | FileCheck %s --check-prefix=ALPHA
// RUN: not zeroc-opt %s -zero-bucket="comm-gbps=-1" 2>&1 | FileCheck %s --check-prefix=GBPS

// Tests zero-bucket's cost model under overlap_comm: a gradient bucket also
// closes once it holds enough elements that its ring reduce-scatter spends
// at most 2% of its time on fixed costs. With alpha 1 us and 0.0008 Gbit/s
// (0.1 byte/us) at world size 2 that is ceil(2 * 1 * 0.1 * 0.98 / 0.02) =
// 10 bytes, 3 f32 elements. The reductions move 6, 4, 2, 24, 2, 2 f32
// elements, an f16 gradient, then 2: g0 and g1 close their buckets at once,
// g2 (2 elements) takes g3, {g4, g5} closes at 4; without overlap the same
// 100-element limit makes one bucket of g0-g5.
// COST-LABEL: func.func @train_micro_step
// COST: zero.pack %{{.*}} : (tensor<2x3xf32>) -> !zero.flat<grads, f32, 6, 2>
// COST-NEXT: zero.reduce_scatter %{{.*}} {reduction = #zero<reduction sum>} :
// COST: zero.pack %{{.*}} : (tensor<3xf32>) -> !zero.flat<grads, f32, 4, 2>
// COST-NEXT: zero.reduce_scatter %{{.*}} {reduction = #zero<reduction sum>} :
// COST: zero.pack_shards {{.*}} : (tensor<2xf32>, tensor<24xf32>) -> !zero.flat<grads, f32, 26, 2>
// COST-NEXT: zero.reduce_scatter {{.*}}zero.bucket = 0
// COST: zero.pack_shards {{.*}} : (tensor<2xf32>, tensor<2xf32>) -> !zero.flat<grads, f32, 4, 2>
// COST-NEXT: zero.reduce_scatter {{.*}}zero.bucket = 1
// COST-NOT: zero.bucket = 2
// LIMIT-LABEL: func.func @train_micro_step
// LIMIT: zero.pack_shards {{.*}} -> !zero.flat<grads, f32, 40, 2>
// LIMIT-NEXT: zero.reduce_scatter {{.*}}zero.bucket = 0
// ALPHA: error: zero-bucket: comm-alpha-us must be a positive number, got 0
// GBPS: error: zero-bucket: comm-gbps must be a positive number, got -1
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

