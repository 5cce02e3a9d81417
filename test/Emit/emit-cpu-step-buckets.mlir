// RUN: zeroc-opt %s --zero-train-pipeline='stage=1 world-size=2' | zeroc-translate --emit-cpu | FileCheck %s --check-prefix=S1
// RUN: zeroc-opt %s --zero-train-pipeline='stage=0 world-size=2' | zeroc-translate --emit-cpu | FileCheck %s --check-prefix=S0

// Tests the C++ the CPU emitter prints for zero-bucket's buckets of
// @train_step (DeepSpeed's default bucket sizes take both parameters): the
// ops nested in zero.if_finite get their planned arena offsets, a
// zero.replica_slice is a pointer into this rank's slice of the replica, and
// a zero.unpack_replica copies each rank's shard out of the gathered bucket
// into the replica. A bucket op's copies are one zeroc_rt_k_copy_multi call
// over a table (one launch on a GPU).
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

// S1-LABEL: zeroc_rt_status_t trainStep(
// S1: ZRT_TRY(zeroc_rt_comm_reduce_scatter(comm, [[B:V\[[0-9]+\]]], [[S:V\[[0-9]+\]]], 8, ZEROC_RT_DTYPE_F32, ZEROC_RT_REDUCE_SUM));
// S1-NEXT: zeroc_rt_engine_mark_reduced(e);
// S1: zeroc_rt_engine_advance_step(e);
// S1-NEXT: [[W:V\[[0-9]+\]]] = (char *)zeroc_rt_engine_param_replica(e, 0) + (size_t)zeroc_rt_comm_rank(comm) * 24;
// S1-NEXT: [[BS:V\[[0-9]+\]]] = (char *)zeroc_rt_engine_param_replica(e, 1) + (size_t)zeroc_rt_comm_rank(comm) * 8;
// S1-NEXT: [[C:V\[[0-9]+\]]] = A + {{[0-9]+}};
// S1-NEXT: zeroc_rt_engine_trace_op
// S1-NEXT: {
// S1-NEXT:   static thread_local zeroc_rt_copy_t zrt_copies[2];
// S1-NEXT:   int64_t zrt_c = 0;
// S1-NEXT:   zrt_copies[zrt_c++] = {[[W]], [[C]] + 0, 24};
// S1-NEXT:   zrt_copies[zrt_c++] = {[[BS]], [[C]] + 24, 8};
// S1-NEXT:   ZRT_TRY(zeroc_rt_k_copy_multi(zrt_c, zrt_copies));
// S1-NEXT: }
// S1-NEXT: [[F:V\[[0-9]+\]]] = A + {{[0-9]+}};
// S1-NEXT: zeroc_rt_engine_trace_op
// S1-NEXT: ZRT_TRY(zeroc_rt_comm_all_gather(comm, [[C]], [[F]], 8, ZEROC_RT_DTYPE_F32));
// S1-NEXT: zeroc_rt_engine_trace_op
// S1-NEXT: {
// S1-NEXT:   static thread_local zeroc_rt_copy_t zrt_copies[4];
// S1-NEXT:   int64_t zrt_c = 0;
// S1-NEXT:   for (int64_t zrt_r = 0; zrt_r < 2; ++zrt_r) {
// S1-NEXT:     const int64_t zrt_n = 12 - zrt_r * 6 < 6 ? 12 - zrt_r * 6 : 6;
// S1-NEXT:     if (zrt_n > 0) zrt_copies[zrt_c++] = {[[F]] + zrt_r * 32, ((char *)zeroc_rt_engine_param_replica(e, 0)) + zrt_r * 24, zrt_n * 4};
// S1-NEXT:   }
// S1-NEXT:   for (int64_t zrt_r = 0; zrt_r < 2; ++zrt_r) {
// S1-NEXT:     const int64_t zrt_n = 3 - zrt_r * 2 < 2 ? 3 - zrt_r * 2 : 2;
// S1-NEXT:     if (zrt_n > 0) zrt_copies[zrt_c++] = {[[F]] + zrt_r * 32 + 24, ((char *)zeroc_rt_engine_param_replica(e, 1)) + zrt_r * 8, zrt_n * 4};
// S1-NEXT:   }
// S1-NEXT:   ZRT_TRY(zeroc_rt_k_copy_multi(zrt_c, zrt_copies));
// S1-NEXT: }
// S1-NOT: zeroc_rt_comm_all_gather

// The bucket is the gradient slab: the accumulators lie end to end where
// the pack holds them (w at byte 0, b at 48, the 16th element's padding at
// 60), so the pack copies nothing and the all-reduce runs in the slab.
// S0: const zeroc_rt_param_desc_t kParams[] = {
// S0-NEXT: {"w", {{.*}}, 0, 12, 0, 12, 12, 0, 0},
// S0-NEXT: {"b", {{.*}}, 0, 4, 0, 3, 3, 0, 48},
// S0: zeroc_rt_status_t trainStep(
// S0: [[GW:V\[[0-9]+\]]] = (char *)zeroc_rt_engine_grad_accumulator(e, 0);
// S0-NEXT: [[GB:V\[[0-9]+\]]] = (char *)zeroc_rt_engine_grad_accumulator(e, 1);
// S0-NEXT: [[P:V\[[0-9]+\]]] = [[GW]];
// S0-NEXT: [[R:V\[[0-9]+\]]] = [[P]];
// S0-NEXT: ZRT_TRY(zeroc_rt_comm_all_reduce(comm, [[R]], [[R]], 16, ZEROC_RT_DTYPE_F32, ZEROC_RT_REDUCE_SUM));
// S0-NEXT: zeroc_rt_engine_mark_reduced(e);
// S0-NEXT: [[VW:V\[[0-9]+\]]] = [[R]] + 0;
// S0-NEXT: [[VB:V\[[0-9]+\]]] = [[R]] + 48;
// S0: zeroc_rt_engine_adam_update(e, 0, [[VW]], 12,
// S0: zeroc_rt_engine_adam_update(e, 1, [[VB]], 3,
// S0: program.grad_slab_bytes = 64;
