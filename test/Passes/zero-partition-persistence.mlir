// RUN: zeroc-opt %s -zero-autodiff -zero-partition="stage=3 world-size=2 persistence-threshold=4" -zero-verify-partition | FileCheck %s --check-prefix=AT
// RUN: zeroc-opt %s -zero-autodiff -zero-partition="stage=3 world-size=2 persistence-threshold=4 model-persistence-threshold=7" -zero-verify-partition | FileCheck %s --check-prefix=CAP7
// RUN: zeroc-opt %s -zero-autodiff -zero-partition="stage=3 world-size=2 persistence-threshold=4 model-persistence-threshold=6" -zero-verify-partition | FileCheck %s --check-prefix=CAP6
// RUN: zeroc-opt %s -zero-autodiff -zero-partition="stage=3 world-size=2 persistence-threshold=4 model-persistence-threshold=0" -zero-verify-partition | FileCheck %s --check-prefix=NONE
// RUN: zeroc-opt %s -zero-autodiff -zero-partition="stage=3 world-size=2 persistence-threshold=0" -zero-verify-partition | FileCheck %s --check-prefix=NONE
// RUN: zeroc-opt %s -zero-autodiff -zero-partition="stage=3 world-size=2 persistence-threshold=1" -zero-verify-partition | FileCheck %s --check-prefix=ONE
// RUN: zeroc-opt %s -zero-autodiff -zero-partition="stage=3 world-size=2" -zero-verify-partition | FileCheck %s --check-prefix=DEFAULT
// RUN: zeroc-opt %s -zero-autodiff -zero-partition="stage=2 world-size=2 persistence-threshold=100" -zero-verify-partition | FileCheck %s --check-prefix=NONE
// RUN: zeroc-opt %s -zero-autodiff -zero-partition="stage=3 world-size=2 persistence-threshold=4" -zero-step-boundary -zero-verify-step -zero-plan-buffers | FileCheck %s --check-prefix=STEP

// Tests DeepSpeed's stage3_param_persistence_threshold and
// stage3_model_persistence_threshold in zero-partition: in declaration
// order, a parameter of at most persistence-threshold elements (@a has
// exactly 4) is zero.persistent unless it would take the persistent total
// past model-persistence-threshold; such a one is skipped and a later,
// smaller one may still fit (with a cap of 6, @c is skipped and @s fits). Frozen
// parameters (@f) count like the others. A persistent parameter is read as
// a replica; its gradient is still reduce-scattered. Stages 0-2 mark none.
graph.param trainable @a = dense<0.5> : tensor<4xf32>
graph.param trainable @b = dense<0.5> : tensor<5xf32>
graph.param trainable @c = dense<0.5> : tensor<3xf32>
graph.param trainable @s = dense<2.0> : tensor<f32>
graph.param @f = dense<0.25> : tensor<2xf32>
func.func @forward(%x: tensor<4xf32>) -> (tensor<f32> {graph.loss}) {
  %a = graph.load_param @a : tensor<4xf32>
  %b = graph.load_param @b : tensor<5xf32>
  %c = graph.load_param @c : tensor<3xf32>
  %s = graph.load_param @s : tensor<f32>
  %f = graph.load_param @f : tensor<2xf32>
  %xa = graph.mul %x, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %la = graph.reduce_sum %xa {axes = [0], keepdims = false} : tensor<4xf32> -> tensor<f32>
  %lb = graph.reduce_sum %b {axes = [0], keepdims = false} : tensor<5xf32> -> tensor<f32>
  %lc = graph.reduce_sum %c {axes = [0], keepdims = false} : tensor<3xf32> -> tensor<f32>
  %lf = graph.reduce_sum %f {axes = [0], keepdims = false} : tensor<2xf32> -> tensor<f32>
  %l1 = graph.add %la, %lb : tensor<f32>, tensor<f32> -> tensor<f32>
  %l2 = graph.add %l1, %lc : tensor<f32>, tensor<f32> -> tensor<f32>
  %l3 = graph.mul %l2, %s : tensor<f32>, tensor<f32> -> tensor<f32>
  %l = graph.add %l3, %lf : tensor<f32>, tensor<f32> -> tensor<f32>
  return %l : tensor<f32>
}

// AT: graph.param trainable @a {{.*}} {zero.persistent}
// AT-NOT: graph.param trainable @b {{.*}}zero.persistent
// AT: graph.param trainable @c {{.*}} {zero.persistent}
// AT: graph.param trainable @s {{.*}} {zero.persistent}
// AT: graph.param @f {{.*}} {zero.persistent}
// AT-LABEL: func.func @train_micro_step
// AT-DAG: zero.param_replica @a : tensor<4xf32>
// AT-DAG: zero.param_shard @b : !zero.shard<params, f32, 3, device>
// AT-DAG: zero.param_replica @c : tensor<3xf32>
// AT-DAG: zero.param_replica @s : tensor<f32>
// AT-DAG: zero.param_replica @f : tensor<2xf32>
// AT-NOT: zero.param_shard @a
// AT-NOT: zero.param_shard @c
// AT-NOT: zero.param_shard @s
// AT-NOT: zero.param_shard @f
// AT: zero.reduce_scatter {{.*}} : !zero.flat<grads, f32, 4, 2> -> !zero.shard<grads, f32, 2, device>
// AT: zero.grad_accumulate @a, %{{.*}} : !zero.shard<grads, f32, 2, device>

// CAP7: graph.param trainable @a {{.*}} {zero.persistent}
// CAP7-NOT: graph.param trainable @b {{.*}}zero.persistent
// CAP7: graph.param trainable @c {{.*}} {zero.persistent}
// CAP7-NOT: zero.persistent

// CAP6: graph.param trainable @a {{.*}} {zero.persistent}
// CAP6-NOT: graph.param trainable @b {{.*}}zero.persistent
// CAP6-NOT: graph.param trainable @c {{.*}}zero.persistent
// CAP6: graph.param trainable @s {{.*}} {zero.persistent}
// CAP6-NOT: zero.persistent

// NONE-NOT: zero.persistent

// ONE-NOT: graph.param trainable @c {{.*}}zero.persistent
// ONE: graph.param trainable @s {{.*}} {zero.persistent}
// ONE-NOT: zero.persistent

// DEFAULT: graph.param trainable @a {{.*}} {zero.persistent}
// DEFAULT: graph.param trainable @b {{.*}} {zero.persistent}
// DEFAULT: graph.param trainable @c {{.*}} {zero.persistent}
// DEFAULT: graph.param trainable @s {{.*}} {zero.persistent}
// DEFAULT: graph.param @f {{.*}} {zero.persistent}
// DEFAULT-NOT: zero.param_shard

// The step and the state of a persistent parameter: a whole replica
// (param_stride 0), a partitioned gradient and update, and its replica
// gathered after the update (a frozen one has nothing to gather); a
// gathered one keeps its shard.
// STEP: graph.param trainable @a {{.*}} {zero.persistent, zero.state_layout = #zero.state_layout<param = 4, grad = 2, update = 2, update_stride = 2>}
// STEP: graph.param trainable @b {{.*}} {zero.state_layout = #zero.state_layout<param = 3, param_stride = 3, grad = 3, update = 3, update_stride = 3, grad_offset = 64>}
// STEP: graph.param @f {{.*}} {zero.persistent, zero.state_layout = #zero.state_layout<param = 2>}
// STEP-LABEL: func.func @train_step
// STEP: zero.if_finite
// STEP: zero.advance_step
// STEP-NEXT: zero.gather_replica @a : !zero.shard<params, f32, 2, device>
// STEP-NEXT: zero.gather_replica @c : !zero.shard<params, f32, 2, device>
// STEP-NEXT: zero.gather_replica @s : !zero.shard<params, f32, 1, device>
// STEP-NEXT: }
