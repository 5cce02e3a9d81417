// RUN: zeroc-opt %s -zero-autodiff -zero-partition="stage=0 world-size=2" -zero-verify-partition | FileCheck %s --check-prefix=S0
// RUN: zeroc-opt %s -zero-autodiff -zero-partition="stage=2 world-size=2" -zero-verify-partition | FileCheck %s --check-prefix=S2
// RUN: zeroc-opt %s -zero-autodiff -zero-partition="stage=3 world-size=4 persistence-threshold=0 max-reuse-distance=0" -zero-verify-partition | FileCheck %s --check-prefix=S3

// Tests each stage's rewrite of a 7-element parameter (not divisible by the
// world size): replicas and full gradient accumulation in stage 0; padded
// reduce-scatter of the gradient in stage 2; in stage 3 a gather before the
// forward use and again before the backward use, each released after it.
graph.param trainable @w = dense<0.5> : tensor<7xf32>
func.func @forward(%x: tensor<7xf32>) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<7xf32>
  %y = graph.mul %x, %w : tensor<7xf32>, tensor<7xf32> -> tensor<7xf32>
  %z = graph.mul %y, %w : tensor<7xf32>, tensor<7xf32> -> tensor<7xf32>
  %l = graph.reduce_sum %z {axes = [0], keepdims = false} : tensor<7xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// S0: module attributes {zero.stage = 0 : i64, zero.world_size = 2 : i64}
// S0-LABEL: func.func @train_micro_step(%arg0: tensor<7xf32>) -> (tensor<f32> {graph.loss})
// S0: %[[W:.*]] = zero.param_replica @w : tensor<7xf32>
// S0: zero.grad_accumulate @w, %{{.*}} : tensor<7xf32>
// S0-NOT: zero.reduce_scatter
// S0: return %{{.*}} : tensor<f32>

// S2-LABEL: func.func @train_micro_step
// S2: zero.param_replica @w : tensor<7xf32>
// S2: %[[F:.*]] = zero.pack %{{.*}} {offsets = [0]} : (tensor<7xf32>) -> !zero.flat<grads, f32, 8, 2>
// S2: %[[S:.*]] = zero.reduce_scatter %[[F]] {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 8, 2> -> !zero.shard<grads, f32, 4, device>
// S2: zero.grad_accumulate @w, %[[S]] : !zero.shard<grads, f32, 4, device>

// S3-LABEL: func.func @train_micro_step
// S3: %[[SH1:.*]] = zero.param_shard @w : !zero.shard<params, f32, 2, device>
// S3: %[[F1:.*]] = zero.all_gather %[[SH1]] : !zero.shard<params, f32, 2, device> -> !zero.flat<params, f32, 8, 4>
// S3: %[[V1:.*]] = zero.view %[[F1]] {offset = 0 : i64} : !zero.flat<params, f32, 8, 4> -> tensor<7xf32>
// S3: graph.mul %arg0, %[[V1]]
// S3: graph.mul %{{.*}}, %[[V1]]
// S3: zero.release %[[F1]]
// S3: graph.reduce_sum
// S3: %[[SH2:.*]] = zero.param_shard @w
// S3: %[[F2:.*]] = zero.all_gather %[[SH2]]
// S3: %[[V2:.*]] = zero.view %[[F2]]
// S3: zero.release %[[F2]]
// S3: zero.reduce_scatter
// S3: zero.grad_accumulate @w, %{{.*}} : !zero.shard<grads, f32, 2, device>
