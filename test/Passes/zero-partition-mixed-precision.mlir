// RUN: zeroc-opt %s -zero-mixed-precision="dtype=f16" -zero-autodiff -zero-partition="stage=2 world-size=2" -zero-verify-partition | FileCheck %s --check-prefix=S2
// RUN: zeroc-opt %s -zero-mixed-precision="dtype=bf16" -zero-autodiff -zero-partition="stage=3 world-size=4 persistence-threshold=0" -zero-verify-partition | FileCheck %s --check-prefix=S3

// Tests that with mixed precision the parameters, their gradients and every
// collective that moves them are 16-bit: DeepSpeed communicates in the
// training dtype and keeps fp32 only in the optimizer's master copy.
graph.param trainable @w = dense<0.5> : tensor<7xf32>
func.func @forward(%x: tensor<7xf32>) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<7xf32>
  %y = graph.mul %x, %w : tensor<7xf32>, tensor<7xf32> -> tensor<7xf32>
  %z = graph.mul %y, %w : tensor<7xf32>, tensor<7xf32> -> tensor<7xf32>
  %l = graph.reduce_sum %z {axes = [0], keepdims = false} : tensor<7xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// S2: graph.param trainable @w master(f32) = dense<5.000000e-01> : tensor<7xf16>
// S2-LABEL: func.func @train_micro_step
// S2: zero.param_replica @w : tensor<7xf16>
// S2: %[[F:.*]] = zero.pack {{.*}} : (tensor<7xf16>) -> !zero.flat<grads, f16, 8, 2>
// S2: %[[S:.*]] = zero.reduce_scatter %[[F]] {{.*}} : !zero.flat<grads, f16, 8, 2> -> !zero.shard<grads, f16, 4, device>
// S2: zero.grad_accumulate @w, %[[S]] : !zero.shard<grads, f16, 4, device>

// S3: graph.param trainable @w master(f32) = dense<5.000000e-01> : tensor<7xbf16>
// S3-LABEL: func.func @train_micro_step
// S3: zero.param_shard @w : !zero.shard<params, bf16, 2, device>
// S3: zero.all_gather {{.*}} -> !zero.flat<params, bf16, 8, 4>
// S3: zero.reduce_scatter {{.*}} : !zero.flat<grads, bf16, 8, 4> -> !zero.shard<grads, bf16, 2, device>
// S3: zero.grad_accumulate @w, {{.*}} : !zero.shard<grads, bf16, 2, device>
