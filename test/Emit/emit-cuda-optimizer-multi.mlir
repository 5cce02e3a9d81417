// RUN: zeroc-opt %s --zero-train-pipeline='stage=1 world-size=2 precision=fp16 loss-scaling=true target=cuda' | FileCheck %s --check-prefix=IR
// RUN: zeroc-opt %s --zero-train-pipeline='stage=1 world-size=2 precision=fp16 loss-scaling=true target=cuda' | zeroc-opt --zero-verify-step | zeroc-translate --emit-cuda | FileCheck %s
// RUN: zeroc-opt %s --zero-train-pipeline='stage=1 world-size=2 precision=fp16 loss-scaling=true' | zeroc-translate --emit-cpu | FileCheck %s --check-prefix=CPU
// RUN: zeroc-opt %s --zero-train-pipeline='stage=0 world-size=2 target=cuda optimizer=#zero.sgd<lr=0.1,momentum=0.9,weight_decay=0.01>' | FileCheck %s --check-prefix=SGD-IR
// RUN: zeroc-opt %s --zero-train-pipeline='stage=0 world-size=2 target=cuda optimizer=#zero.sgd<lr=0.1,momentum=0.9,weight_decay=0.01>' | zeroc-opt --zero-verify-step | zeroc-translate --emit-cuda | FileCheck %s --check-prefix=SGD
// RUN: zeroc-opt %s --zero-train-pipeline='stage=0 world-size=2 optimizer=#zero.sgd<lr=0.1,momentum=0.9,weight_decay=0.01>' | zeroc-translate --emit-cpu | FileCheck %s --check-prefix=SGD-CPU

// Tests the CUDA pipeline's multi-tensor optimizer step
// (zero-fuse-optimizer-step): the updates of both parameters are one
// zero.adam_update_multi (zero.sgd_update_multi), which zero-verify-step
// accepts, printed as one engine call over a table of parameters, gradients
// and counts. The CPU pipeline keeps one call per parameter.
graph.param trainable @w = dense<0.5> : tensor<4x3xf32>
graph.param trainable @b = dense<0.1> : tensor<3xf32>
func.func @forward(%x: tensor<2x4xf32> {graph.input = "x"}) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<4x3xf32>
  %b = graph.load_param @b : tensor<3xf32>
  %y = graph.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %z = graph.add %y, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %l = graph.reduce_mean %z {axes = [0, 1], keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// IR: zero.if_finite
// IR-NEXT: zero.adam_update_multi [@w, @b](%{{.*}}, %{{.*}}), %factor, %lr, {{.*}} {optimizer = #zero.adam<>} : (!zero.shard<grads, f16, 6, device>, !zero.shard<grads, f16, 2, device>)
// IR-NOT: zero.adam_update

// CHECK-LABEL: zeroc_rt_status_t trainStep(
// CHECK: if (!*(unsigned char *)
// CHECK-NEXT: zeroc_rt_engine_trace_op
// CHECK-NEXT: {
// CHECK-NEXT: static const int32_t zrt_params[] = {0, 1};
// CHECK-NEXT: void *const zrt_grads[] = {[[GW:V.[0-9]+.]], [[GB:V.[0-9]+.]]};
// CHECK-NEXT: static const int64_t zrt_counts[] = {6, 2};
// CHECK-NEXT: ZRT_TRY(zeroc_rt_engine_adam_update_multi(e, 2, zrt_params, zrt_grads, zrt_counts, *(double *)V{{.[0-9]+.}}, {{.*}}, 1e-08, 0.0, 1, 1, *(int64_t *)V{{.[0-9]+.}} + 1));
// CHECK-NEXT: }
// CHECK-NOT: zeroc_rt_engine_adam_update(

// CPU-LABEL: zeroc_rt_status_t trainStep(
// CPU-NOT: adam_update_multi
// CPU: ZRT_TRY(zeroc_rt_engine_adam_update(e, 0,
// CPU: ZRT_TRY(zeroc_rt_engine_adam_update(e, 1,

// SGD-IR: zero.if_finite
// SGD-IR-NEXT: zero.sgd_update_multi [@w, @b](%{{.*}}, %{{.*}}), %{{.*}}, %{{.*}}, %{{.*}} {optimizer = #zero.sgd<lr = 1.000000e-01, momentum = 9.000000e-01, weight_decay = 1.000000e-02>} : (tensor<4x3xf32>, tensor<3xf32>)
// SGD-IR-NOT: zero.sgd_update

// SGD-LABEL: zeroc_rt_status_t trainStep(
// SGD: static const int32_t zrt_params[] = {0, 1};
// SGD-NEXT: void *const zrt_grads[] = {V{{.[0-9]+.}}, V{{.[0-9]+.}}};
// SGD-NEXT: static const int64_t zrt_counts[] = {12, 3};
// SGD-NEXT: ZRT_TRY(zeroc_rt_engine_sgd_update_multi(e, 2, zrt_params, zrt_grads, zrt_counts, *(double *)V{{.[0-9]+.}}, *(double *)V{{.[0-9]+.}}, 0.90000000000000002, 0.0, 0.01, 0, *(int64_t *)V{{.[0-9]+.}} + 1));
// SGD-NEXT: }
// SGD-NOT: zeroc_rt_engine_sgd_update(

// SGD-CPU-LABEL: zeroc_rt_status_t trainStep(
// SGD-CPU-NOT: sgd_update_multi
// SGD-CPU: ZRT_TRY(zeroc_rt_engine_sgd_update(e, 0,
// SGD-CPU: ZRT_TRY(zeroc_rt_engine_sgd_update(e, 1,
