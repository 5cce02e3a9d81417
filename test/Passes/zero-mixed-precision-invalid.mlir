// RUN: zeroc-opt %s -split-input-file -zero-mixed-precision="dtype=f16" -verify-diagnostics

// Tests that an initial value outside the f16 range is an error (bf16 holds it).
// expected-error @+1 {{'graph.param' op initial value 7.000000e+04 does not fit in 'f16'; train in bf16 or fp32, or rescale the parameter}}
graph.param trainable @big = dense<[1.0, 70000.0]> : tensor<2xf32>
func.func @forward(%x: tensor<2xf32>) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @big : tensor<2xf32>
  %l = graph.reduce_sum %w {axes = [0], keepdims = false} : tensor<2xf32> -> tensor<f32>
  return %l : tensor<f32>
}
