// RUN: zeroc-opt %s | zeroc-opt | FileCheck %s
// RUN: zeroc-opt %s --mlir-print-op-generic | zeroc-opt | FileCheck %s

// Tests that the comparison, logic, NaN/Inf, math, max/min, gelu and clip
// ops (GraphElementwiseOps.td) round-trip.
// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%x: tensor<2x3xf32>, %y: tensor<3xf32>, %i: tensor<2x1xi64>,
                       %j: tensor<4xi64>, %m: tensor<2x3xi1>, %n: tensor<3xi1>)
    -> (tensor<2x3xf32>, tensor<2x3xi1>) {
  // CHECK: graph.compare %{{.*}}, %{{.*}} {predicate = "lt"} : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xi1>
  %0 = graph.compare %x, %y {predicate = "lt"} : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xi1>
  // CHECK: graph.compare %{{.*}}, %{{.*}} {predicate = "ge"} : tensor<2x1xi64>, tensor<4xi64> -> tensor<2x4xi1>
  %1 = graph.compare %i, %j {predicate = "ge"} : tensor<2x1xi64>, tensor<4xi64> -> tensor<2x4xi1>
  // CHECK: graph.logical %{{.*}}, %{{.*}} {op = "xor"} : tensor<2x3xi1>, tensor<3xi1> -> tensor<2x3xi1>
  %2 = graph.logical %m, %n {op = "xor"} : tensor<2x3xi1>, tensor<3xi1> -> tensor<2x3xi1>
  // CHECK: graph.not %{{.*}} : tensor<2x3xi1>
  %3 = graph.not %2 : tensor<2x3xi1>
  // CHECK: graph.is_nan %{{.*}} : tensor<2x3xf32> -> tensor<2x3xi1>
  %4 = graph.is_nan %x : tensor<2x3xf32> -> tensor<2x3xi1>
  // CHECK: graph.is_inf %{{.*}} {detect_negative = false, detect_positive = true} : tensor<2x3xf32> -> tensor<2x3xi1>
  %5 = graph.is_inf %x {detect_positive = true, detect_negative = false} : tensor<2x3xf32> -> tensor<2x3xi1>
  // CHECK: graph.cos
  %6 = graph.cos %x : tensor<2x3xf32>
  // CHECK: graph.sin
  %7 = graph.sin %6 : tensor<2x3xf32>
  // CHECK: graph.abs
  %8 = graph.abs %7 : tensor<2x3xf32>
  // CHECK: graph.sign
  %9 = graph.sign %8 : tensor<2x3xf32>
  // CHECK: graph.floor
  %10 = graph.floor %9 : tensor<2x3xf32>
  // CHECK: graph.ceil
  %11 = graph.ceil %10 : tensor<2x3xf32>
  // CHECK: graph.round
  %12 = graph.round %11 : tensor<2x3xf32>
  // CHECK: graph.max %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %13 = graph.max %12, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // CHECK: graph.min %{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %14 = graph.min %13, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  // CHECK: graph.gelu %{{.*}} {approximate = "tanh"} : tensor<2x3xf32>
  %15 = graph.gelu %14 {approximate = "tanh"} : tensor<2x3xf32>
  // CHECK: graph.clip %{{.*}} {max = 1.000000e+00 : f64, min = -1.000000e+00 : f64} : tensor<2x3xf32>
  %16 = graph.clip %15 {min = -1.0 : f64, max = 1.0 : f64} : tensor<2x3xf32>
  // CHECK: graph.clip_grad %{{.*}}, %{{.*}} {min = -1.000000e+00 : f64} : tensor<2x3xf32>
  %17 = graph.clip_grad %15, %16 {min = -1.0 : f64} : tensor<2x3xf32>
  // CHECK: graph.unary_grad %{{.*}}, x = %{{.*}} {op = "gelu_tanh"} : tensor<2x3xf32>
  %18 = graph.unary_grad %17, x = %14 {op = "gelu_tanh"} : tensor<2x3xf32>
  return %18, %3 : tensor<2x3xf32>, tensor<2x3xi1>
}
