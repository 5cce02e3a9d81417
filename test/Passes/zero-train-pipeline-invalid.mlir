// RUN: zeroc-opt %s --zero-train-pipeline='stage=5 world-size=2' -verify-diagnostics
// RUN: not zeroc-opt %s --zero-train-pipeline='precision=fp8' 2>&1 | FileCheck %s --check-prefix=PREC
// PREC: error: zero-mixed-precision: dtype must be f16 or bf16, got 'fp8'

// Tests that the pipeline's options reach the passes' own checks.

// expected-error @below {{zero-partition needs stage in 0-3 and world-size >= 1, got stage 5 and world-size 2}}
module {
  graph.param trainable @w = dense<0.5> : tensor<3xf32>
  func.func @forward(%x: tensor<3xf32>) -> (tensor<f32> {graph.loss}) {
    %w = graph.load_param @w : tensor<3xf32>
    %y = graph.mul %x, %w : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
    %l = graph.reduce_sum %y {axes = [0], keepdims = false} : tensor<3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
