// RUN: zeroc-opt %s --zero-train-pipeline='stage=1 world-size=2 precision=fp16 loss-scaling=true grad-accum-steps=4 gradient-clipping=0.5' | zeroc-translate --emit-cpu | FileCheck %s --check-prefix=S1
// RUN: zeroc-opt %s --zero-train-pipeline='stage=0 world-size=2 optimizer=#zero.sgd<lr=0.1,momentum=0.9> lr-schedule=#zero.lr_schedule<kind=warmup,warmup_num_steps=5>' | zeroc-translate --emit-cpu | FileCheck %s --check-prefix=S0

// Tests the C++ the CPU emitter prints for @train_step and the program
// table it fills from the IR.
graph.param trainable @w = dense<0.5> : tensor<4x3xf32>
func.func @forward(%x: tensor<2x4xf32> {graph.input = "x"}) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<4x3xf32>
  %y = graph.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %l = graph.reduce_mean %y {axes = [0, 1], keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// Stage 1, fp16: reduce-scatter into the arena, the overflow flag as a
// byte reduced with MAX, the scaler update, the norm's all-reduce, Adam on
// the shard, and the in-place all-gather of the rank's slice.
// S1-LABEL: zeroc_rt_status_t trainStep(zeroc_rt_engine_t *e, zeroc_rt_step_result_t *result) {
// S1: = zeroc_rt_engine_loss_scale(e);
// S1: = zeroc_rt_engine_step_count(e);
// S1: ZRT_TRY(zeroc_rt_engine_lr_schedule(e, *(int64_t *)[[T:V.[0-9]+.]], 0.001, 0.9{{[0-9]*}},
// S1: [[G:V.[0-9]+.]] = (char *)zeroc_rt_engine_grad_accumulator(e, 0);
// S1: ZRT_TRY(zeroc_rt_comm_reduce_scatter(comm, [[G]], [[R:V.[0-9]+.]], 6, ZEROC_RT_DTYPE_F16, ZEROC_RT_REDUCE_SUM));
// S1-NEXT: zeroc_rt_engine_mark_reduced(e);
// The overflow flag is read off the global sum of squares
// (zero-overflow-from-norm): no separate pass over the gradients and no
// all-reduce of a flag.
// S1-NOT: has_inf_or_nan
// S1-NOT: ZEROC_RT_REDUCE_MAX
// S1: static const zeroc_rt_dtype_t zrt_dtypes[] = {ZEROC_RT_DTYPE_F16};
// S1-NEXT: const void *const zrt_xs[] = {[[R]]};
// S1-NEXT: static const int64_t zrt_ns[] = {6};
// S1: ZRT_TRY(zeroc_rt_k_sum_squares_multi(zrt_count, zrt_dtypes, zrt_xs, zrt_ns, (double *)[[LSS:V.[0-9]+.]]));
// S1: [[SS:V.[0-9]+.]] = [[LSS]];
// S1-NEXT: ZRT_TRY(zeroc_rt_comm_all_reduce(comm, [[SS]], [[SS]], 1, ZEROC_RT_DTYPE_F64, ZEROC_RT_REDUCE_SUM));
// S1-NEXT: [[OF:V.[0-9]+.]] = A + {{[0-9]+}};
// S1-NEXT: zeroc_rt_engine_trace_op
// S1-NEXT: *(unsigned char *)[[OF]] = std::isfinite(*(double *)[[SS]]) ? 0 : 1;
// S1: ZRT_TRY(zeroc_rt_engine_update_loss_scale(e, *(unsigned char *)[[OF]]));
// S1: ZRT_TRY(zeroc_rt_k_clip_grad_norm({{.*}}, 2, 0.5,
// S1: if (!*(unsigned char *)[[OF]]) {
// S1-NEXT: zeroc_rt_engine_trace_op(e, {{[0-9]+}});
// S1-NEXT: ZRT_TRY(zeroc_rt_engine_adam_update(e, 0, [[R]], 6,
// S1-SAME: *(int64_t *)[[T]] + 1));
// S1-NEXT: zeroc_rt_engine_trace_op
// S1-NEXT: zeroc_rt_engine_advance_step(e);
// S1-NEXT: zeroc_rt_engine_trace_op
// S1-NEXT: {
// S1-NEXT: char *zrt_replica = (char *)zeroc_rt_engine_param_replica(e, 0);
// S1-NEXT: ZRT_TRY(zeroc_rt_comm_all_gather(comm, zrt_replica + (size_t)zeroc_rt_comm_rank(comm) * 12, zrt_replica, 6, ZEROC_RT_DTYPE_F16));
// S1: }
// S1: result->grad_norm =
// S1: program.micro_batch = 2;
// S1: program.grad_accum = 4;
// S1: program.gradient_clipping = 0.5;
// S1: program.optimizer.type = ZEROC_RT_OPTIMIZER_ADAM;
// S1: program.train_step = trainStep;
// S1: program.loss_scaler.enabled = 1;
// S1: program.loss_scaler.initial_scale = 65536.0;
// S1: program.precision = ZEROC_RT_PRECISION_FP16;

// Stage 0: the full gradient is all-reduced in place; no scaler, so no
// overflow check and a scale of 1; SGD and WarmupLR in the table.
// S0-LABEL: zeroc_rt_status_t trainStep(
// S0-NOT: zeroc_rt_engine_loss_scale
// S0: [[G:V.[0-9]+.]] = (char *)zeroc_rt_engine_grad_accumulator(e, 0);
// S0-NEXT: [[R:V.[0-9]+.]] = [[G]];
// S0-NEXT: ZRT_TRY(zeroc_rt_comm_all_reduce(comm, [[R]], [[R]], 12, ZEROC_RT_DTYPE_F32, ZEROC_RT_REDUCE_SUM));
// S0-NOT: has_inf_or_nan
// S0-NOT: update_loss_scale
// S0: ZRT_TRY(zeroc_rt_engine_sgd_update(e, 0, [[R]], 12, {{.*}}, 0.9{{[0-9]*}}, 0.0, 0.0, 0,
// S0-NOT: zeroc_rt_comm_all_gather
// S0: program.optimizer.type = ZEROC_RT_OPTIMIZER_SGD;
// S0: program.optimizer.momentum = 0.9{{[0-9]*}};
// S0: program.lr_schedule.type = ZEROC_RT_LR_WARMUP;
// S0: program.lr_schedule.warmup_num_steps = 5;
// S0: program.loss_scaler.enabled = 0;
