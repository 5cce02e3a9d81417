// RUN: zeroc-opt %s | zeroc-opt | FileCheck %s
// RUN: zeroc-opt %s --mlir-print-op-generic | zeroc-opt | FileCheck %s

// Tests that the conv, pooling and batch-norm ops and their gradient ops
// round-trip through their custom assembly formats.

// CHECK-LABEL: func.func @conv_pool_bn
func.func @conv_pool_bn(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>,
                        %gy: tensor<2x4x4x4xf32>, %x1: tensor<2x4x8xf32>, %s: tensor<4xf32>) {
  // CHECK: graph.conv %{{.*}}, %{{.*}}, %{{.*}} {dilations = [1, 1], group = 1 : i64, pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x4x4xf32>
  %y = graph.conv %x, %w, %b {strides = [2, 2], pads = [1, 1, 1, 1], dilations = [1, 1], group = 1 : i64} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x4x4xf32>
  // CHECK: graph.conv %{{.*}}, %{{.*}} {{{.*}}} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x4x4xf32>
  %y2 = graph.conv %x, %w {strides = [2, 2], pads = [1, 1, 1, 1], dilations = [1, 1], group = 1 : i64} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x4x4xf32>
  // CHECK: graph.conv_grad_input %{{.*}}, %{{.*}} {{{.*}}} : (tensor<4x3x3x3xf32>, tensor<2x4x4x4xf32>) -> tensor<2x3x8x8xf32>
  %gx = graph.conv_grad_input %w, %gy {strides = [2, 2], pads = [1, 1, 1, 1], dilations = [1, 1], group = 1 : i64} : (tensor<4x3x3x3xf32>, tensor<2x4x4x4xf32>) -> tensor<2x3x8x8xf32>
  // CHECK: graph.conv_grad_weight %{{.*}}, %{{.*}} {{{.*}}} : (tensor<2x3x8x8xf32>, tensor<2x4x4x4xf32>) -> tensor<4x3x3x3xf32>
  %gw = graph.conv_grad_weight %x, %gy {strides = [2, 2], pads = [1, 1, 1, 1], dilations = [1, 1], group = 1 : i64} : (tensor<2x3x8x8xf32>, tensor<2x4x4x4xf32>) -> tensor<4x3x3x3xf32>
  // CHECK: graph.max_pool %{{.*}} {ceil_mode = false, dilations = [1, 1], kernel_shape = [2, 2], pads = [0, 0, 0, 0], strides = [2, 2]} : tensor<2x3x8x8xf32> -> tensor<2x3x4x4xf32>
  %mp = graph.max_pool %x {kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 0, 0], dilations = [1, 1], ceil_mode = false} : tensor<2x3x8x8xf32> -> tensor<2x3x4x4xf32>
  // CHECK: graph.max_pool_grad %{{.*}}, %{{.*}} {{{.*}}} : tensor<2x3x8x8xf32>, tensor<2x3x4x4xf32>
  %mpg = graph.max_pool_grad %x, %mp {kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 0, 0], dilations = [1, 1], ceil_mode = false} : tensor<2x3x8x8xf32>, tensor<2x3x4x4xf32>
  // CHECK: graph.avg_pool %{{.*}} {ceil_mode = false, count_include_pad = true, dilations = [1], kernel_shape = [3], pads = [1, 1], strides = [1]} : tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %ap = graph.avg_pool %x1 {kernel_shape = [3], strides = [1], pads = [1, 1], dilations = [1], ceil_mode = false, count_include_pad = true} : tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  // CHECK: graph.avg_pool_grad %{{.*}} {{{.*}}} : tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  %apg = graph.avg_pool_grad %ap {kernel_shape = [3], strides = [1], pads = [1, 1], dilations = [1], ceil_mode = false, count_include_pad = true} : tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  // CHECK: graph.batch_norm %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-05 : f64} : (tensor<2x4x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8xf32>
  %bn = graph.batch_norm %x1, %s, %s {epsilon = 1.0e-05 : f64} : (tensor<2x4x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8xf32>
  // CHECK: graph.batch_norm_grad %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-05 : f64} : tensor<2x4x8xf32>, tensor<4xf32>
  %g:3 = graph.batch_norm_grad %x1, %s, %bn {epsilon = 1.0e-05 : f64} : tensor<2x4x8xf32>, tensor<4xf32>
  return
}
