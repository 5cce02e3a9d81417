// RUN: zeroc-opt %s --zero-train-pipeline='stage=3 world-size=2 persistence-threshold=0' | zeroc-translate --emit-cpu | FileCheck %s

// Tests the C++ the CPU emitter prints for a stage-3 @train_micro_step:
// every value at its planned arena offset, the parameter gathered from the
// rank's shard before its use and released after, the shard's gradient
// reduce-scattered and accumulated, the backward marker after the loss.
graph.param trainable @w = dense<0.5> : tensor<4x3xf32>
func.func @forward(%x: tensor<2x4xf32> {graph.input = "x"}) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<4x3xf32>
  %y = graph.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %l = graph.reduce_mean %y {axes = [0, 1], keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK: // ZeRO stage 3, world size 2.
// CHECK: const zeroc_rt_param_desc_t kParams[] = {
// The layout zero-plan-buffers planned for stage 3: a 6-element shard of
// the parameter, of its accumulator and of its update, at rank * 6; the
// accumulator at byte 0 of the rank's gradient slab.
// CHECK-NEXT: {"w", ZEROC_RT_DTYPE_F32, 2, {4, 3}, 12, 0, ZEROC_RT_DTYPE_F32, ZEROC_RT_DTYPE_F32, 0, 6, 6, 6, 6, 6, 0},
// CHECK: const zeroc_rt_input_desc_t kInputs[] = {
// CHECK-NEXT: {"x", ZEROC_RT_DTYPE_F32, 2, {2, 4}},
// CHECK: part0(
// CHECK: [[SHARD:V.[0-9]+.]] = (char *)zeroc_rt_engine_param_shard(e, 0);
// CHECK: [[FULL:V.[0-9]+.]] = A + {{[0-9]+}};
// CHECK: ZRT_TRY(zeroc_rt_comm_all_gather(comm, [[SHARD]], [[FULL]], 6, ZEROC_RT_DTYPE_F32));
// CHECK: zeroc_rt_k_matmul
// CHECK: zeroc_rt_engine_mark_backward(e);
// One micro-step per step: the reduce-scatter writes this rank's shard
// straight into the gradient accumulator (no accumulation call).
// CHECK: [[ACC:V.[0-9]+.]] = (char *)zeroc_rt_engine_grad_accumulator(e, 0);
// CHECK: zeroc_rt_comm_reduce_scatter(comm, {{.*}}, [[ACC]], 6, ZEROC_RT_DTYPE_F32, ZEROC_RT_REDUCE_SUM)
// CHECK-NOT: zeroc_rt_engine_grad_accumulate(
// CHECK: zeroc_rt_status_t trainStep(
// CHECK-NOT: zeroc_rt_comm_all_gather
// CHECK: int main(int argc, char **argv) {
// CHECK: program.stage = 3;
// CHECK: program.grad_slab_bytes = 24;
// CHECK: program.micro_batch = 2;
// CHECK: program.grad_accum = 1;
// CHECK: program.micro_step_collectives = 1;
// CHECK: program.micro_step = microStep;
// CHECK: return zeroc_rt_train_process_main(argc, argv, &program);
