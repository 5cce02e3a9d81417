// RUN: zeroc-opt %s -zero-autodiff -zero-partition="stage=3 world-size=2 max-reuse-distance=-1" -verify-diagnostics
// RUN: not zeroc-opt %s --zero-train-pipeline='stage=3 world-size=2 max-reuse-distance=-3' 2>&1 | FileCheck %s
// CHECK: error: zero-partition: max-reuse-distance must be >= 0, got -3

// Tests that the reuse distance, given to the pass or to the pipeline, is
// not negative.

// expected-error @below {{zero-partition: max-reuse-distance must be >= 0, got -1}}
module {
  graph.param trainable @w = dense<0.5> : tensor<3xf32>
  func.func @forward(%x: tensor<3xf32>) -> (tensor<f32> {graph.loss}) {
    %w = graph.load_param @w : tensor<3xf32>
    %y = graph.mul %x, %w : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
    %l = graph.reduce_sum %y {axes = [0], keepdims = false} : tensor<3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
