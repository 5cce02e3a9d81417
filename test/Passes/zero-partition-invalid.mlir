// RUN: zeroc-opt %s -zero-autodiff -zero-partition="stage=3 world-size=2 persistence-threshold=-1" -verify-diagnostics
// RUN: zeroc-opt %s -zero-autodiff -zero-partition="stage=3 world-size=2 model-persistence-threshold=-5" -verify-diagnostics
// RUN: not zeroc-opt %s --zero-train-pipeline='stage=3 world-size=2 persistence-threshold=-1' 2>&1 | FileCheck %s
// CHECK: error: zero-partition: persistence-threshold and model-persistence-threshold must be >= 0, got -1 and 9223372036854775807

// Tests that the persistence thresholds, given to the pass or to the
// pipeline, are not negative.

// expected-error-re @below {{zero-partition: persistence-threshold and model-persistence-threshold must be >= 0, got {{-?[0-9]+}} and {{-?[0-9]+}}}}
module {
  graph.param trainable @w = dense<0.5> : tensor<3xf32>
  func.func @forward(%x: tensor<3xf32>) -> (tensor<f32> {graph.loss}) {
    %w = graph.load_param @w : tensor<3xf32>
    %y = graph.mul %x, %w : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
    %l = graph.reduce_sum %y {axes = [0], keepdims = false} : tensor<3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
