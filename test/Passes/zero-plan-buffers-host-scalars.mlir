// RUN: zeroc-opt %s --zero-train-pipeline='stage=1 world-size=2 target=cuda' | FileCheck %s
// RUN: zeroc-opt %s --zero-train-pipeline='stage=1 world-size=2' | FileCheck %s --check-prefix=CPU

// Tests zero-plan-buffers' host-step-scalars (the pipeline's target=cuda):
// @train_step's scalar results get zero.host_offsets, 64-byte slots in the
// module's zero.host_bytes, instead of arena offsets; its tensors and every
// result of the micro-step stay in the (device) arena. The CPU plan has no
// host block.
graph.param trainable @w = dense<0.5> : tensor<4x3xf32>
func.func @forward(%x: tensor<2x4xf32> {graph.input = "x"}) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<4x3xf32>
  %y = graph.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %l = graph.reduce_mean %y {axes = [0, 1], keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK: module attributes {zero.arena_bytes = {{[0-9]+}} : i64, zero.grad_slab_bytes = {{[0-9]+}} : i64, zero.host_bytes = 384 : i64
// CHECK-LABEL: func.func @train_micro_step
// CHECK-NOT: zero.host_offsets
// CHECK: graph.reduce_mean {{.*}}zero.arena_offsets
// CHECK-NOT: zero.host_offsets
// CHECK-LABEL: func.func @train_step
// CHECK: zero.step_count {zero.host_offsets = [0]}
// CHECK: zero.lr_schedule {{.*}}zero.host_offsets = [64, 128]
// CHECK: zero.reduce_scatter {{.*}}zero.arena_offsets
// CHECK: zero.sum_squares {{.*}}zero.host_offsets = [192]
// CHECK: zero.clip_grad_norm {{.*}}zero.host_offsets = [256, 320]

// CPU-NOT: zero.host_bytes
// CPU-NOT: zero.host_offsets
