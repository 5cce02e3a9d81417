// RUN: zeroc-opt %s -zero-autodiff -zero-partition="stage=0 world-size=2" -zero-verify-partition | FileCheck %s --check-prefix=S0
// RUN: zeroc-opt %s -zero-autodiff -zero-partition="stage=1 world-size=2" -zero-verify-partition | FileCheck %s --check-prefix=S0
// RUN: zeroc-opt %s -zero-autodiff -zero-partition="stage=2 world-size=2" -zero-verify-partition | FileCheck %s --check-prefix=S2
// RUN: zeroc-opt %s -zero-autodiff -zero-partition="stage=3 world-size=4 persistence-threshold=0" -zero-verify-partition | FileCheck %s --check-prefix=S3

// Tests a frozen parameter (graph.param without `trainable`): no gradient,
// so no accumulation and no reduce-scatter, but ZeRO state all the same: a
// replica in stages 0-2 and at stage 3 a shard gathered around its forward
// use and released after it, as DeepSpeed partitions requires_grad=False
// parameters.
graph.param trainable @w = dense<0.5> : tensor<7xf32>
graph.param @f = dense<0.25> : tensor<7xf32>
func.func @forward(%x: tensor<7xf32>) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<7xf32>
  %f = graph.load_param @f : tensor<7xf32>
  %y = graph.mul %x, %f : tensor<7xf32>, tensor<7xf32> -> tensor<7xf32>
  %z = graph.mul %y, %w : tensor<7xf32>, tensor<7xf32> -> tensor<7xf32>
  %l = graph.reduce_sum %z {axes = [0], keepdims = false} : tensor<7xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// S0-LABEL: func.func @train_micro_step
// S0-DAG: zero.param_replica @w : tensor<7xf32>
// S0-DAG: zero.param_replica @f : tensor<7xf32>
// S0: zero.grad_accumulate @w
// S0-NOT: zero.grad_accumulate @f

// S2-LABEL: func.func @train_micro_step
// S2-DAG: zero.param_replica @f : tensor<7xf32>
// S2: zero.reduce_scatter
// S2-NOT: zero.reduce_scatter
// S2: zero.grad_accumulate @w
// S2-NOT: zero.grad_accumulate @f

// S3-LABEL: func.func @train_micro_step
// S3: %[[FS:.*]] = zero.param_shard @f : !zero.shard<params, f32, 2, device>
// S3: %[[FF:.*]] = zero.all_gather %[[FS]] : !zero.shard<params, f32, 2, device> -> !zero.flat<params, f32, 8, 4>
// S3: %[[FV:.*]] = zero.view %[[FF]]
// S3: graph.mul %arg0, %[[FV]]
// S3: zero.release %[[FF]]
// S3-NOT: zero.param_shard @f
// S3: zero.reduce_scatter
// S3-NOT: zero.reduce_scatter
// S3: zero.grad_accumulate @w
// S3-NOT: zero.grad_accumulate @f
