// RUN: zeroc-opt %s --zero-train-pipeline='stage=1 world-size=2 target=cuda' | FileCheck %s --check-prefix=IR
// RUN: zeroc-opt %s --zero-train-pipeline='stage=1 world-size=2 target=cuda' | zeroc-translate --emit-cuda | FileCheck %s
// RUN: zeroc-opt %s --zero-train-pipeline='stage=1 world-size=2 precision=bf16 target=cuda' | zeroc-translate --emit-cuda | FileCheck %s --check-prefix=BF16
// RUN: zeroc-opt %s --zero-train-pipeline='stage=1 world-size=2 target=cuda fuse-elementwise=false' | FileCheck %s --check-prefix=OFF
// RUN: zeroc-opt %s --zero-train-pipeline='stage=1 world-size=2' | FileCheck %s --check-prefix=OFF

// Tests the CUDA pipeline's elementwise fusion (zero-fuse-elementwise) and
// its kernels: the forward chain after the matmul is one fused op that
// also yields the value the backward pass reads (tanh's output; the chain's
// last value, the loss's exp, is the mean's); the backward chain
// (unary_grad and the scalings around it) another, which computes exp's
// output again from tanh's (zero-rematerialize-elementwise) and in which
// the forward inputs the derivatives do not read are 0. Each prints as a
// kernel of the program's own: the inputs read at their broadcast offsets
// (the bias by column; the scalar once, before the loop), every value rounded to the
// storage type, each result stored, and one launch where the ops were.
// The CPU pipeline and fuse-elementwise=false keep one op per kernel.
graph.param trainable @w = dense<0.5> : tensor<4x3xf32>
graph.param trainable @b = dense<0.1> : tensor<3xf32>
func.func @forward(%x: tensor<2x4xf32> {graph.input = "x"}) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<4x3xf32>
  %b = graph.load_param @b : tensor<3xf32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %y = graph.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %z = graph.add %y, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %t = graph.tanh %z : tensor<2x3xf32>
  %h = graph.mul %t, %half : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  %e = graph.exp %h : tensor<2x3xf32>
  %l = graph.reduce_mean %e {axes = [0, 1], keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// IR-LABEL: func.func @train_micro_step
// IR: %[[F:.*]]:2 = graph.fused_elementwise %{{.*}}, %{{.*}}, %{{.*}} {zero.arena_offsets = [{{.*}}]} : (tensor<2x3xf32>, tensor<3xf32>, tensor<f32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
// IR: graph.add
// IR-NEXT: graph.tanh
// IR-NEXT: graph.mul
// IR-NEXT: graph.exp
// IR-NEXT: graph.yield %{{.*}}, %{{.*}} :
// IR: graph.reduce_mean %[[F]]#1
// IR: graph.fused_elementwise %{{.*}}, %{{.*}}, %[[F]]#0 {{.*}} -> tensor<2x3xf32> {
// IR: graph.mul
// IR-NEXT: graph.exp
// IR-NEXT: graph.unary_grad
// IR-NEXT: graph.mul
// IR-NEXT: graph.unary_grad
// IR-NEXT: graph.yield
// IR-LABEL: func.func @train_step

// CHECK: #include "zeroc_rt_cuda/fused.h"
// CHECK: // graph.fused_elementwise: 4 ops, 6 elements, yields 2
// CHECK-NEXT: ZRT_GLOBAL void fused{{[0-9]+}}(const float *in0, const float *in1, const float *in2, float *out0, float *out1, int64_t n) {
// CHECK-NEXT: namespace z = zeroc_rt::cuda;
// CHECK-NEXT: using zc = z::Compute<float>::type;
// CHECK-NEXT: const zc in2_0 = z::load(in2[0]);
// CHECK-NEXT: for (int64_t i = z::gridFirst(); i < n; i += z::gridStride()) {
// CHECK-NEXT: const zc a0 = z::load(in0[i]);
// CHECK-NEXT: const zc a1 = z::load(in1[i % 3]);
// CHECK-NEXT: const zc a2 = in2_0;
// CHECK-NEXT: const zc v0 = z::roundTo<float>(z::binaryOf(ZEROC_RT_BINARY_ADD, a0, a1));
// CHECK-NEXT: const zc v1 = z::roundTo<float>(z::unaryOf(ZEROC_RT_UNARY_TANH, v0));
// CHECK-NEXT: const zc v2 = z::roundTo<float>(z::binaryOf(ZEROC_RT_BINARY_MUL, v1, a2));
// CHECK-NEXT: const zc v3 = z::roundTo<float>(z::unaryOf(ZEROC_RT_UNARY_EXP, v2));
// CHECK-NEXT: out0[i] = z::storeD<float>(v1);
// CHECK-NEXT: out1[i] = z::storeD<float>(v3);
// CHECK: const zc v1 = z::roundTo<float>(z::unaryOf(ZEROC_RT_UNARY_EXP, v0));
// CHECK-NEXT: a0 * z::derivativeOf(ZEROC_RT_UNARY_EXP, zc(0), v1)
// CHECK: v3 * z::derivativeOf(ZEROC_RT_UNARY_TANH, zc(0), a2)
// CHECK-LABEL: part0(
// CHECK: ZRT_TRY(zeroc_rt_cuda_launch_status((int)zeroc_rt::cuda::launch([[K:fused[0-9]+]], zeroc_rt::cuda::blocksFor(6), zeroc_rt::cuda::kBlock, (const float *)(V[{{[0-9]+}}]), {{.*}}, (float *)(V[{{[0-9]+}}]), (int64_t)6), "[[K]]"));

// BF16: ZRT_GLOBAL void fused{{[0-9]+}}(const zeroc_rt::cuda::BF16 *in0,
// BF16: using zc = z::Compute<zeroc_rt::cuda::BF16>::type;
// BF16: z::roundTo<zeroc_rt::cuda::BF16>(

// OFF-NOT: graph.fused_elementwise
