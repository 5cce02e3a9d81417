// RUN: zeroc-opt %s --zero-train-pipeline='stage=3 world-size=2 persistence-threshold=0 overlap-comm=true prefetch-bucket-size=16 allgather-bucket-size=16' | zeroc-translate --emit-cpu | FileCheck %s

// Tests the C++ of a gather carried across the step boundary (zero-overlap
// at stage 3): @train_step starts w1's gather after w1's update into the
// carried slot and sets its flag C[0]; the micro-step issues it only when
// the flag is clear, clears it, and waits; the program's end
// (finishCarries, program.finish) waits for a carry no micro-step took.
graph.param trainable @w1 = dense<0.5> : tensor<4x4xf32>
graph.param trainable @w2 = dense<0.25> : tensor<4x4xf32>
func.func @forward(%x: tensor<2x4xf32> {graph.input = "x"}) -> (tensor<f32> {graph.loss}) {
  %w1 = graph.load_param @w1 : tensor<4x4xf32>
  %w2 = graph.load_param @w2 : tensor<4x4xf32>
  %y = graph.matmul %x, %w1 : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %r = graph.relu %y : tensor<2x4xf32>
  %z = graph.matmul %r, %w2 : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %l = graph.reduce_mean %z {axes = [0, 1], keepdims = false} : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK: unsigned char C[1];
// CHECK-LABEL: part0(
// CHECK: [[G:V\[[0-9]+\]]] = A + 0;
// CHECK-NEXT: zeroc_rt_engine_trace_op
// CHECK-NEXT: if (!C[0]) {
// CHECK-NEXT: ZRT_TRY(zeroc_rt_comm_all_gather_start(comm, {{V\[[0-9]+\]}}, [[G]], 8, ZEROC_RT_DTYPE_F32, &Q[0]));
// CHECK-NEXT: }
// CHECK-NEXT: C[0] = 0;
// CHECK: ZRT_TRY(zeroc_rt_comm_wait(comm, Q[0]));
// CHECK-LABEL: zeroc_rt_status_t trainStep(
// CHECK: if (!*(unsigned char *)
// CHECK: zeroc_rt_engine_adam_update(e, 0,
// CHECK: A + 0;
// CHECK: ZRT_TRY(zeroc_rt_comm_all_gather_start(comm, {{V\[[0-9]+\]}}, {{V\[[0-9]+\]}}, 8, ZEROC_RT_DTYPE_F32, &Q[0]));
// CHECK-NEXT: C[0] = 1;
// CHECK-NEXT: zeroc_rt_engine_trace_op
// CHECK-NEXT: zeroc_rt_engine_adam_update(e, 1,
// CHECK-LABEL: zeroc_rt_status_t finishCarries(
// CHECK: if (C[0]) {
// CHECK-NEXT: C[0] = 0;
// CHECK-NEXT: ZRT_TRY(zeroc_rt_comm_wait(comm, Q[0]));
// CHECK: program.finish = finishCarries;
