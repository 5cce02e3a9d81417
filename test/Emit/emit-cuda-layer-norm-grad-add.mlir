// RUN: zeroc-opt %s --zero-train-pipeline='stage=0 world-size=1 target=cuda' | FileCheck %s --check-prefix=IR
// RUN: zeroc-opt %s --zero-train-pipeline='stage=0 world-size=1 target=cuda' | zeroc-translate --emit-cuda | FileCheck %s
// RUN: zeroc-opt %s --zero-train-pipeline='stage=0 world-size=1 target=cuda fuse-elementwise=false' | zeroc-translate --emit-cuda | FileCheck %s --check-prefix=UNFUSED

// Tests a pre-norm residual block, y = z + ln(z) w with z = x v, on the
// CUDA target: the
// backward pass adds the layer norm's input gradient to the residual's, and
// the layer norm gradient's call writes the sum
// (zero-fuse-layer-norm-grad-add); without the fusion passes the two are
// calls of their own.
graph.param trainable @v = dense<0.25> : tensor<4x4xf32>
graph.param trainable @w = dense<0.5> : tensor<4x4xf32>
graph.param trainable @s = dense<1.0> : tensor<4xf32>
graph.param trainable @b = dense<0.0> : tensor<4xf32>
func.func @forward(%x: tensor<2x4xf32> {graph.input = "x"}) -> (tensor<f32> {graph.loss}) {
  %v = graph.load_param @v : tensor<4x4xf32>
  %w = graph.load_param @w : tensor<4x4xf32>
  %s = graph.load_param @s : tensor<4xf32>
  %b = graph.load_param @b : tensor<4xf32>
  %z = graph.matmul %x, %v : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %n = graph.layer_norm %z, %s, %b {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %h = graph.matmul %n, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %y = graph.add %z, %h : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %e = graph.exp %y : tensor<2x4xf32>
  %l = graph.reduce_mean %e {axes = [0, 1], keepdims = false} : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// IR-LABEL: func.func @train_micro_step
// IR: graph.fused_layer_norm_grad_add
// IR-NOT: graph.layer_norm_grad
// IR-LABEL: func.func @train_step

// CHECK: ZRT_TRY(zeroc_rt_cuda_k_layer_norm_grad_add(
// CHECK-NOT: zeroc_rt_cuda_k_layer_norm_grad(
// UNFUSED: ZRT_TRY(zeroc_rt_cuda_k_layer_norm_grad(
// UNFUSED: ZRT_TRY(zeroc_rt_cuda_k_binary(ZEROC_RT_BINARY_ADD,
