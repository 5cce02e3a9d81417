// RUN: zeroc-opt %s --zero-train-pipeline='stage=3 world-size=2 persistence-threshold=0 overlap-comm=true' | zeroc-translate --emit-cpu | FileCheck %s --check-prefix=S3
// RUN: zeroc-opt %s --zero-train-pipeline='stage=1 world-size=2 overlap-comm=true' | zeroc-translate --emit-cpu | FileCheck %s --check-prefix=S1
// RUN: zeroc-opt %s --zero-train-pipeline='stage=0 world-size=2 overlap-comm=true' | zeroc-translate --emit-cpu | FileCheck %s --check-prefix=S0

// Tests the C++ of started collectives (zero-overlap): each start passes
// its request slot, each wait completes that slot; an in-place reduction
// passes the same buffer as send and receive, and the result is it.
graph.param trainable @w = dense<0.5> : tensor<4x3xf32>
func.func @forward(%x: tensor<2x4xf32> {graph.input = "x"}) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<4x3xf32>
  %y = graph.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %l = graph.reduce_mean %y {axes = [0, 1], keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// S3: int64_t Q[2];
// S3: ZRT_TRY(zeroc_rt_comm_all_gather_start(comm, [[S:V\[[0-9]+\]]], [[G:V\[[0-9]+\]]], 6, ZEROC_RT_DTYPE_F32, &Q[0]));
// S3: ZRT_TRY(zeroc_rt_comm_wait(comm, Q[0]));
// One micro-step: the reduce-scatter writes the rank's shard into the
// accumulator, which no accumulation call copies into.
// S3: [[R:V\[[0-9]+\]]] = (char *)zeroc_rt_engine_grad_accumulator(e, 0);
// S3: ZRT_TRY(zeroc_rt_comm_reduce_scatter_start(comm, [[B:V\[[0-9]+\]]], [[R]], 6, ZEROC_RT_DTYPE_F32, ZEROC_RT_REDUCE_SUM, &Q[[[RQ:[0-9]+]]]));
// S3: ZRT_TRY(zeroc_rt_comm_wait(comm, Q[[[RQ]]]));
// S3-NOT: zeroc_rt_engine_grad_accumulate(

// One micro-step: the weight gradient's GEMM writes the accumulator, which
// no accumulation call copies into.
// S1: [[G:V\[[0-9]+\]]] = (char *)zeroc_rt_engine_grad_accumulator(e, 0);
// S1-NEXT: zeroc_rt_engine_trace_op
// S1-NEXT: ZRT_TRY(zeroc_rt_k_gemm({{.*}}, P(T([[G]], ZEROC_RT_DTYPE_F32, 2, {4, 3}))));
// S1-NOT: zeroc_rt_engine_grad_accumulate(
// S1: [[A:V\[[0-9]+\]]] = (char *)zeroc_rt_engine_grad_accumulator(e, 0);
// S1-NEXT: [[T:V\[[0-9]+\]]] = [[A]];
// S1-NEXT: ZRT_TRY(zeroc_rt_comm_reduce_scatter_start(comm, [[A]], [[T]], 6, ZEROC_RT_DTYPE_F32, ZEROC_RT_REDUCE_SUM, &Q[0]));
// S1: ZRT_TRY(zeroc_rt_comm_wait(comm, Q[0]));

// S0: [[G:V\[[0-9]+\]]] = (char *)zeroc_rt_engine_grad_accumulator(e, 0);
// S0-NEXT: zeroc_rt_engine_trace_op
// S0-NEXT: ZRT_TRY(zeroc_rt_k_gemm({{.*}}, P(T([[G]], ZEROC_RT_DTYPE_F32, 2, {4, 3}))));
// S0-NOT: zeroc_rt_engine_grad_accumulate(
// S0: [[A:V\[[0-9]+\]]] = (char *)zeroc_rt_engine_grad_accumulator(e, 0);
// S0-NEXT: [[T:V\[[0-9]+\]]] = [[A]];
// S0-NEXT: ZRT_TRY(zeroc_rt_comm_all_reduce_start(comm, [[T]], [[T]], 12, ZEROC_RT_DTYPE_F32, ZEROC_RT_REDUCE_SUM, &Q[0]));
// S0: ZRT_TRY(zeroc_rt_comm_wait(comm, Q[0]));
