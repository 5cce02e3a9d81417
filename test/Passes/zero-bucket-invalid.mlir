// RUN: zeroc-opt %s -zero-bucket -verify-diagnostics
// RUN: not zeroc-opt %s -zero-bucket="reduce-bucket-size=-1" 2>&1 | FileCheck %s --check-prefix=REDUCE
// RUN: not zeroc-opt %s -zero-bucket="prefetch-bucket-size=-2" 2>&1 | FileCheck %s --check-prefix=PREFETCH
// RUN: not zeroc-opt %s --zero-train-pipeline='stage=3 world-size=2 reduce-bucket-size=-1' 2>&1 | FileCheck %s --check-prefix=REDUCE
// RUN: not zeroc-opt %s --zero-train-pipeline='stage=3 world-size=2 prefetch-bucket-size=-2' 2>&1 | FileCheck %s --check-prefix=PREFETCH
// RUN: not zeroc-opt %s -zero-bucket="allgather-bucket-size=-3" 2>&1 | FileCheck %s --check-prefix=ALLGATHER
// RUN: not zeroc-opt %s --zero-train-pipeline='stage=1 world-size=2 allgather-bucket-size=-3' 2>&1 | FileCheck %s --check-prefix=ALLGATHER
// REDUCE: error: zero-bucket: reduce-bucket-size must be >= 0, got -1
// ALLGATHER: error: zero-bucket: allgather-bucket-size must be >= 0, got -3
// PREFETCH: error: zero-bucket: prefetch-bucket-size must be >= 0, got -2

// Tests that the bucket sizes, given to the pass or to the pipeline, are
// not negative, and that the pass runs on zero-partition's
// @train_micro_step.

// expected-error @below {{zero-bucket needs @train_micro_step (run zero-partition first)}}
module {
  graph.param trainable @w = dense<0.5> : tensor<3xf32>
  func.func @forward(%x: tensor<3xf32>) -> (tensor<f32> {graph.loss}) {
    %w = graph.load_param @w : tensor<3xf32>
    %y = graph.mul %x, %w : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
    %l = graph.reduce_sum %y {axes = [0], keepdims = false} : tensor<3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
