// RUN: zeroc-opt %s --zero-train-pipeline='stage=3 world-size=2 persistence-threshold=0' | FileCheck %s --check-prefix=S3
// RUN: zeroc-opt %s --zero-train-pipeline='stage=1 world-size=2 precision=fp16 loss-scaling=true grad-accum-steps=2' | FileCheck %s --check-prefix=FP16
// RUN: zeroc-opt %s --zero-train-pipeline='stage=0 world-size=1 precision=bf16' | FileCheck %s --check-prefix=BF16

// Tests that the registered pipeline is every phase `zeroc compile` runs
// after import (lib/Driver/Compile.cpp builds the same list from the
// ds_config): from @forward to a planned @train_micro_step and @train_step.
graph.param trainable @w = dense<0.5> : tensor<4x3xf32>
graph.buffer @rm = dense<0.0> : tensor<3xf32>
func.func @forward(%x: tensor<2x4xf32> {graph.input = "x"})
    -> (tensor<f32> {graph.loss, graph.output = "loss"}, tensor<3xf32> {graph.buffer_update = @rm}) {
  %w = graph.load_param @w : tensor<4x3xf32>
  %m = graph.load_buffer @rm : tensor<3xf32>
  %y = graph.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %s = graph.reduce_mean %y {axes = [0], keepdims = false} : tensor<2x3xf32> -> tensor<3xf32>
  %n = graph.add %m, %s : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  %l = graph.reduce_mean %y {axes = [0, 1], keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %l, %n : tensor<f32>, tensor<3xf32>
}

// S3: module attributes {zero.arena_bytes = {{[0-9]+}} : i64, zero.grad_slab_bytes = 24 : i64, zero.stage = 3 : i64, zero.world_size = 2 : i64}
// S3: func.func @train_micro_step
// S3: zero.buffer_load @rm
// S3: zero.param_shard @w : !zero.shard<params, f32, 6, device>
// S3: zero.all_gather {{.*}}zero.arena_offsets
// S3: zero.reduce_scatter
// S3: zero.grad_accumulate @w
// S3: zero.buffer_store @rm
// S3-NOT: func.func @forward_backward
// S3: func.func @train_step
// S3: zero.grad_accumulator @w : !zero.shard<grads, f32, 6, device>
// S3: zero.adam_update @w

// FP16: zero.stage = 1 : i64
// FP16: graph.param trainable @w master(f32) = {{.*}} : tensor<4x3xf16>
// FP16: func.func @train_micro_step
// FP16: zero.param_replica @w : tensor<4x3xf16>
// FP16: zero.loss_scale
// FP16: zero.grad_accumulate @w
// FP16: func.func @train_step
// FP16: zero.loss_scale {{.*}}: tensor<f64>
// FP16: zero.reduce_scatter
// FP16: zero.update_loss_scale
// FP16: zero.gather_replica @w : !zero.shard<params, f16, 6, device>

// BF16: zero.stage = 0 : i64
// BF16: graph.param trainable @w master(f32) = {{.*}} : tensor<4x3xbf16>
// BF16-NOT: zero.loss_scale
