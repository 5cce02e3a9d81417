// RUN: zeroc-opt %s -split-input-file -zero-mixed-precision="dtype=f16" -verify-diagnostics | FileCheck %s
// RUN: zeroc-opt %s -split-input-file -zero-mixed-precision="dtype=bf16" -verify-diagnostics | FileCheck %s --check-prefix=BF16

// Tests that trainable parameters become 16-bit with an f32 master (their
// initial value rounded), float inputs and constants are cast to the compute
// type, every float op computes in 16 bits, integer paths are untouched, and
// the loss returns as f32.
graph.param trainable @w = dense<0.1> : tensor<4x3xf32>
func.func @forward(%x: tensor<2x4xf32>, %t: tensor<2xi64>) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<4x3xf32>
  %c = graph.constant dense<2.0> : tensor<f32>
  %y = graph.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %z = graph.mul %y, %c : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  %l = graph.softmax_cross_entropy_loss %z, %t {reduction = "mean"} : tensor<2x3xf32>, tensor<2xi64> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK: graph.param trainable @w master(f32) = dense<9.997550e-02> : tensor<4x3xf16>
// CHECK-LABEL: func.func @forward(%arg0: tensor<2x4xf32>, %arg1: tensor<2xi64>) -> (tensor<f32> {graph.loss})
// CHECK: %[[X:.*]] = graph.cast %arg0 : tensor<2x4xf32> -> tensor<2x4xf16>
// CHECK: %[[W:.*]] = graph.load_param @w : tensor<4x3xf16>
// CHECK-NOT: graph.cast %[[W]]
// CHECK: %[[C:.*]] = graph.constant dense<2.000000e+00> : tensor<f32>
// CHECK: %[[CH:.*]] = graph.cast %[[C]] : tensor<f32> -> tensor<f16>
// CHECK: %[[Y:.*]] = graph.matmul %[[X]], %[[W]] : tensor<2x4xf16>, tensor<4x3xf16> -> tensor<2x3xf16>
// CHECK: %[[Z:.*]] = graph.mul %[[Y]], %[[CH]] : tensor<2x3xf16>, tensor<f16> -> tensor<2x3xf16>
// CHECK: %[[L:.*]] = graph.softmax_cross_entropy_loss %[[Z]], %arg1 {{.*}} -> tensor<f16>
// CHECK: %[[LF:.*]] = graph.cast %[[L]] : tensor<f16> -> tensor<f32>
// CHECK: return %[[LF]] : tensor<f32>
// BF16: graph.param trainable @w master(f32) = dense<1.000980e-01> : tensor<4x3xbf16>
// BF16: graph.matmul {{.*}} -> tensor<2x3xbf16>

// -----

// Tests that the dtype option is checked.
// RUN: not zeroc-opt %s -split-input-file -zero-mixed-precision="dtype=f8" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: zero-mixed-precision: dtype must be f16 or bf16, got 'f8'
graph.param trainable @w = dense<0.5> : tensor<2xf32>
func.func @forward(%x: tensor<2xf32>) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<2xf32>
  %l = graph.reduce_sum %w {axes = [0], keepdims = false} : tensor<2xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Tests that a frozen float parameter becomes 16-bit without a master (as
// DeepSpeed's module.half() and its optimizer, which holds fp32 copies only of
// parameters that require grad) and is read in 16 bits.
graph.param trainable @w = dense<0.5> : tensor<2xf32>
graph.param @b = dense<0.25> : tensor<2xf32>
func.func @forward(%x: tensor<2xf32>) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<2xf32>
  %b = graph.load_param @b : tensor<2xf32>
  %s = graph.add %w, %b : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
  %l = graph.reduce_sum %s {axes = [0], keepdims = false} : tensor<2xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK: graph.param trainable @w master(f32) = dense<5.000000e-01> : tensor<2xf16>
// CHECK: graph.param @b = dense<2.500000e-01> : tensor<2xf16>
// CHECK: %[[W:.*]] = graph.load_param @w : tensor<2xf16>
// CHECK: %[[B:.*]] = graph.load_param @b : tensor<2xf16>
// CHECK-NOT: graph.cast
// CHECK: graph.add %[[W]], %[[B]] : tensor<2xf16>, tensor<2xf16>


// -----

// Tests that a buffer keeps its f32 storage: its value is cast to the
// compute type where it is read and its update back to f32 (as the other
// results).
graph.buffer @rm = dense<0.0> : tensor<3xf32>
// CHECK: graph.buffer @rm = dense<0.000000e+00> : tensor<3xf32>
// CHECK: func.func @forward(%{{.*}}: tensor<3xf32>) -> (tensor<f32> {graph.loss}, tensor<3xf32> {graph.buffer_update = @rm})
// CHECK: %[[M:.*]] = graph.load_buffer @rm : tensor<3xf32>
// CHECK: %[[H:.*]] = graph.cast %[[M]] : tensor<3xf32> -> tensor<3xf16>
// CHECK: %[[N:.*]] = graph.add %[[H]], %{{.*}} : tensor<3xf16>, tensor<3xf16> -> tensor<3xf16>
// CHECK: %[[F:.*]] = graph.cast %[[N]] : tensor<3xf16> -> tensor<3xf32>
// CHECK: return %{{.*}}, %[[F]]
// BF16: graph.load_buffer @rm : tensor<3xf32>
// BF16-NEXT: graph.cast %{{.*}} : tensor<3xf32> -> tensor<3xbf16>
func.func @forward(%x: tensor<3xf32>) -> (tensor<f32> {graph.loss}, tensor<3xf32> {graph.buffer_update = @rm}) {
  %m = graph.load_buffer @rm : tensor<3xf32>
  %n = graph.add %m, %x : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  %l = graph.reduce_mean %x {axes = [0], keepdims = false} : tensor<3xf32> -> tensor<f32>
  return %l, %n : tensor<f32>, tensor<3xf32>
}
