// RUN: zeroc-opt %s -canonicalize -split-input-file | FileCheck %s

// A constant cast to a floating-point type folds to what the runtime's cast
// computes: rounded to nearest even, overflow to infinity, subnormals kept,
// integers and booleans converted exactly or rounded once.
// CHECK-LABEL: func.func @folds
// CHECK-DAG: graph.constant dense<1.414060e+00> : tensor<bf16>
// CHECK-DAG: graph.constant dense<[0x7C00, 5.960460e-08]> : tensor<2xf16>
// CHECK-DAG: graph.constant dense<[1.000000e+00, -3.000000e+00, 0x4B800000]> : tensor<3xf32>
// CHECK-DAG: graph.constant dense<0xFF80> : tensor<1024xbf16>
// CHECK-DAG: graph.constant dense<[1.000000e+00, 0.000000e+00]> : tensor<2xf32>
// CHECK-NOT: graph.cast
func.func @folds() -> (tensor<bf16>, tensor<2xf16>, tensor<3xf32>, tensor<1024xbf16>, tensor<2xf32>) {
  %a = graph.constant dense<1.41421354> : tensor<f32>
  %b = graph.cast %a : tensor<f32> -> tensor<bf16>
  %c = graph.constant dense<[1.0e10, 3.0e-8]> : tensor<2xf32>
  %d = graph.cast %c : tensor<2xf32> -> tensor<2xf16>
  %e = graph.constant dense<[1, -3, 16777217]> : tensor<3xi64>
  %f = graph.cast %e : tensor<3xi64> -> tensor<3xf32>
  %g = graph.constant dense<0xFF800000> : tensor<1024xf32>
  %h = graph.cast %g : tensor<1024xf32> -> tensor<1024xbf16>
  %i = graph.constant dense<[true, false]> : tensor<2xi1>
  %j = graph.cast %i : tensor<2xi1> -> tensor<2xf32>
  return %b, %d, %f, %h, %j : tensor<bf16>, tensor<2xf16>, tensor<3xf32>, tensor<1024xbf16>, tensor<2xf32>
}

// -----

// Left to the runtime: a NaN (its payload is the runtime's), an integer
// beyond 2^53 (rounded twice there, through a double) and a cast to an
// integer type.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-3: graph.cast
func.func @kept() -> (tensor<f16>, tensor<f32>, tensor<2xi32>) {
  %a = graph.constant dense<0x7FC00001> : tensor<f32>
  %b = graph.cast %a : tensor<f32> -> tensor<f16>
  %c = graph.constant dense<9007199254740993> : tensor<i64>
  %d = graph.cast %c : tensor<i64> -> tensor<f32>
  %e = graph.constant dense<[1.5, 2.5]> : tensor<2xf32>
  %f = graph.cast %e : tensor<2xf32> -> tensor<2xi32>
  return %b, %d, %f : tensor<f16>, tensor<f32>, tensor<2xi32>
}
