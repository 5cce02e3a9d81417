// RUN: zeroc-opt %s | zeroc-opt | FileCheck %s
// RUN: zeroc-opt %s --mlir-print-op-generic | zeroc-opt | FileCheck %s

// Tests that pad, gather_elements, gather_nd, scatter_nd, scatter_elements,
// cumsum and their gradient ops round-trip through their custom assembly
// format.

// CHECK-LABEL: func.func @movement
func.func @movement(%x: tensor<2x5xf32>, %l: tensor<2x8xi64>,
                    %i: tensor<2x3xi64>, %t: tensor<2x1xi64>,
                    %u: tensor<2x5xf32>, %g: tensor<2x8xf32>)
    -> (tensor<2x9xi64>, tensor<2x8xf32>, tensor<2x3xf32>, tensor<2x5xf32>,
        tensor<2x5xf32>, tensor<2x8xi64>, tensor<2x5xf32>, tensor<2x5xf32>,
        tensor<2x5xf32>) {
  // CHECK: graph.pad %{{.*}} {mode = "constant", pads = [0, 0, 0, 1], value = -1.000000e+02 : f64} : tensor<2x8xi64> -> tensor<2x9xi64>
  %0 = graph.pad %l {pads = [0, 0, 0, 1], mode = "constant", value = -100.0 : f64} : tensor<2x8xi64> -> tensor<2x9xi64>
  // CHECK: graph.pad %{{.*}} {mode = "reflect", pads = [0, 2, 0, 1]} : tensor<2x5xf32> -> tensor<2x8xf32>
  %1 = graph.pad %x {pads = [0, 2, 0, 1], mode = "reflect"} : tensor<2x5xf32> -> tensor<2x8xf32>
  // CHECK: graph.gather_elements %{{.*}}, %{{.*}} {axis = 1 : i64} : tensor<2x5xf32>, tensor<2x3xi64> -> tensor<2x3xf32>
  %2 = graph.gather_elements %x, %i {axis = 1 : i64} : tensor<2x5xf32>, tensor<2x3xi64> -> tensor<2x3xf32>
  // CHECK: graph.gather_nd %{{.*}}, %{{.*}} : tensor<2x5xf32>, tensor<2x1xi64> -> tensor<2x5xf32>
  %3 = graph.gather_nd %x, %t : tensor<2x5xf32>, tensor<2x1xi64> -> tensor<2x5xf32>
  // CHECK: graph.scatter_nd %{{.*}}, %{{.*}}, %{{.*}} {reduction = "add"} : tensor<2x5xf32>, tensor<2x1xi64>, tensor<2x5xf32>
  %4 = graph.scatter_nd %x, %t, %u {reduction = "add"} : tensor<2x5xf32>, tensor<2x1xi64>, tensor<2x5xf32>
  // CHECK: graph.cumsum %{{.*}} {axis = 1 : i64, exclusive = false, reverse = true} : tensor<2x8xi64>
  %5 = graph.cumsum %l {axis = 1 : i64, exclusive = false, reverse = true} : tensor<2x8xi64>
  // CHECK: graph.pad_grad %{{.*}} {mode = "reflect", pads = [0, 2, 0, 1]} : tensor<2x8xf32> -> tensor<2x5xf32>
  %6 = graph.pad_grad %g {pads = [0, 2, 0, 1], mode = "reflect"} : tensor<2x8xf32> -> tensor<2x5xf32>
  // CHECK: graph.gather_elements_grad %{{.*}}, %{{.*}} {axis = 1 : i64} : tensor<2x3xf32>, tensor<2x3xi64> -> tensor<2x5xf32>
  %7 = graph.gather_elements_grad %2, %i {axis = 1 : i64} : tensor<2x3xf32>, tensor<2x3xi64> -> tensor<2x5xf32>
  // CHECK: graph.scatter_elements %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64, reduction = "mul"} : tensor<2x5xf32>, tensor<2x3xi64>, tensor<2x3xf32>
  %8 = graph.scatter_elements %x, %i, %2 {axis = 1 : i64, reduction = "mul"} : tensor<2x5xf32>, tensor<2x3xi64>, tensor<2x3xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<2x9xi64>, tensor<2x8xf32>, tensor<2x3xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x8xi64>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>
}
