// RUN: zeroc-opt %s --zero-train-pipeline='stage=1 world-size=2 precision=fp16 loss-scaling=true target=cuda' | zeroc-translate --emit-cuda | FileCheck %s
// RUN: zeroc-opt %s --zero-train-pipeline='stage=3 world-size=2 target=cuda' | zeroc-translate --emit-cuda | FileCheck %s --check-prefix=S3

// Tests the CUDA target's train.cu: the program printer's schedule with the
// CUDA runtime's kernels (zeroc_rt_cuda_k_*), the same communicator and
// engine calls as the CPU's, the micro-step's arena scalars moved with
// zeroc_rt_cuda_upload/download, and @train_step's scalars in the host
// block H (zero-plan-buffers' host-step-scalars), read and written there.
graph.param trainable @w = dense<0.5> : tensor<4x3xf32>
func.func @forward(%x: tensor<2x4xf32> {graph.input = "x"}) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<4x3xf32>
  %y = graph.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %l = graph.reduce_mean %y {axes = [0, 1], keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK: #include "zeroc_rt_cuda/program.h"
// CHECK: alignas(64) char H[{{[0-9]+}}];
// CHECK-LABEL: part0(
// CHECK: ZRT_TRY(zeroc_rt_cuda_k_matmul(
// The micro-step's loss scale is written into the device arena.
// CHECK: { float zrt_v = (float)zeroc_rt_engine_loss_scale(e); ZRT_TRY(zeroc_rt_cuda_upload([[LS:V.[0-9]+.]], &zrt_v, sizeof zrt_v)); }
// CHECK: ZRT_TRY(zeroc_rt_cuda_k_gemm(
// CHECK-LABEL: zeroc_rt_status_t microStep(
// The loss stays on the device: the engine reads a step's losses once.
// CHECK-NOT: zeroc_rt_cuda_download
// CHECK: ZRT_TRY(zeroc_rt_engine_stash_loss(e, V{{.[0-9]+.}}, ZEROC_RT_DTYPE_F32));
// The step's scalars are host memory: plain loads and stores.
// CHECK-LABEL: zeroc_rt_status_t trainStep(
// CHECK: [[SC:V.[0-9]+.]] = H + 0;
// CHECK-NEXT: zeroc_rt_engine_trace_op
// CHECK-NEXT: *(double *)[[SC]] = zeroc_rt_engine_loss_scale(e);
// CHECK: ZRT_TRY(zeroc_rt_comm_reduce_scatter(comm, {{.*}}, ZEROC_RT_DTYPE_F16, ZEROC_RT_REDUCE_SUM));
// One call (one read back) for every gradient; the overflow flag is read
// off the sum (zero-overflow-from-norm), in host memory.
// CHECK-NOT: has_inf_or_nan
// CHECK-NOT: ZEROC_RT_REDUCE_MAX
// CHECK: ZRT_TRY(zeroc_rt_cuda_k_sum_squares_multi(zrt_count, zrt_dtypes, zrt_xs, zrt_ns, (double *)[[LSS:V.[0-9]+.]]));
// CHECK: [[SS:V.[0-9]+.]] = [[LSS]];
// CHECK-NEXT: ZRT_TRY(zeroc_rt_comm_all_reduce(comm, [[SS]], [[SS]], 1, ZEROC_RT_DTYPE_F64, ZEROC_RT_REDUCE_SUM));
// CHECK: [[RED:V.[0-9]+.]] = H + {{[0-9]+}};
// CHECK-NEXT: zeroc_rt_engine_trace_op
// CHECK-NEXT: *(unsigned char *)[[RED]] = std::isfinite(*(double *)[[SS]]) ? 0 : 1;
// CHECK: ZRT_TRY(zeroc_rt_cuda_k_clip_grad_norm(
// CHECK: if (!*(unsigned char *)[[RED]]) {
// CHECK: ZRT_TRY(zeroc_rt_engine_adam_update(e, 0,
// CHECK: return zeroc_rt_cuda_train_process_main(argc, argv, &program);

// Stage 3 (the small parameter is persistent): the gradient's
// reduce-scatter is the CPU's call, on device buffers, into the engine's
// accumulator.
// S3-LABEL: part0(
// S3: = (char *)zeroc_rt_engine_param_replica(e, 0);
// S3: ZRT_TRY(zeroc_rt_cuda_k_matmul(
// S3: ZRT_TRY(zeroc_rt_cuda_k_gemm(
// S3: [[ACC:V.[0-9]+.]] = (char *)zeroc_rt_engine_grad_accumulator(e, 0);
// S3: ZRT_TRY(zeroc_rt_comm_reduce_scatter(comm, V{{.[0-9]+.}}, [[ACC]], 6, ZEROC_RT_DTYPE_F32, ZEROC_RT_REDUCE_SUM));
