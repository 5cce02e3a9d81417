// RUN: zeroc-opt %s --zero-mixed-precision='dtype=bf16' --zero-autodiff --zero-partition='stage=0 world-size=1' --zero-step-boundary='fp32-grad-accum=true' | FileCheck %s --check-prefix=S0
// RUN: zeroc-opt %s --zero-mixed-precision='dtype=bf16' --zero-autodiff --zero-partition='stage=0 world-size=1' --zero-step-boundary='fp32-grad-accum=true grad-accum-steps=2' | FileCheck %s --check-prefix=F32
// RUN: zeroc-opt %s --zero-mixed-precision='dtype=bf16' --zero-autodiff --zero-partition='stage=0 world-size=2' --zero-step-boundary='fp32-grad-accum=true' | FileCheck %s --check-prefix=F32
// RUN: zeroc-opt %s --zero-mixed-precision='dtype=bf16' --zero-autodiff --zero-partition='stage=3 world-size=1' --zero-step-boundary='fp32-grad-accum=true' | FileCheck %s --check-prefix=S3

// Tests which 16-bit parameters get f32 gradient accumulators. With one
// rank and one micro-step an accumulator holds one gradient, which is exact
// in bf16: @w's accumulator is bf16. @e's table is read twice (a gather
// and a matmul, as a tied embedding is): at stage 0 the backward pass adds
// its two gradients in bf16 (as PyTorch's autograd does) and accumulates
// the sum once, so its accumulator is bf16 too; at stage 3 its rows and
// its dense gradient add in the accumulator, which stays f32. Two
// micro-steps or two ranks add in the accumulator: every one is f32.
graph.param trainable @w = dense<0.5> : tensor<4x4xf32>
graph.param trainable @e = dense<0.25> : tensor<8x4xf32>
func.func @forward(%ids: tensor<2xi64> {graph.input = "ids"}) -> (tensor<f32> {graph.loss}) {
  %e = graph.load_param @e : tensor<8x4xf32>
  %w = graph.load_param @w : tensor<4x4xf32>
  %x = graph.gather %e, %ids {axis = 0 : i64} : tensor<8x4xf32>, tensor<2xi64> -> tensor<2x4xf32>
  %h = graph.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %t = graph.transpose %e {perm = [1, 0]} : tensor<8x4xf32> -> tensor<4x8xf32>
  %y = graph.matmul %h, %t : tensor<2x4xf32>, tensor<4x8xf32> -> tensor<2x8xf32>
  %l = graph.reduce_mean %y {axes = [0, 1], keepdims = false} : tensor<2x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// S0-LABEL: func.func @train_step
// S0-DAG: zero.grad_accumulator @w : tensor<4x4xbf16>
// S0-DAG: zero.grad_accumulator @e : tensor<8x4xbf16>
// S3-LABEL: func.func @train_step
// S3-DAG: zero.grad_accumulator @w : !zero.shard<grads, bf16, 16, device>
// S3-DAG: zero.grad_accumulator @e : !zero.shard<grads, f32, 32, device>
// F32-LABEL: func.func @train_step
// F32-DAG: zero.grad_accumulator @w : tensor<4x4xf32>
// F32-DAG: zero.grad_accumulator @e : tensor<8x4xf32>
