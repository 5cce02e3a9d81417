// RUN: zeroc-opt %s -split-input-file -zero-fuse-attention-bias | FileCheck %s

// Tests that a QKV projection's bias add, read only as the q, kt and v
// views of an attention and its gradient, goes: the views read x, and the
// attention ops add the bias viewed at the views' offsets and strides
// modulo the bias's 96 elements (0 along batch and time).
// CHECK-LABEL: func.func @qkv
// CHECK-NOT: graph.add
// CHECK-DAG: %[[Q:.*]] = graph.strided_view %[[X:arg0]] {offset = 0 : i64, strides = array<i64: 768, 16, 96, 1>}
// CHECK-DAG: %[[QB:.*]] = graph.strided_view %[[B:arg1]] {offset = 0 : i64, strides = array<i64: 0, 16, 0, 1>} : tensor<96xbf16> -> tensor<2x2x8x16xbf16>
// CHECK-DAG: %[[K:.*]] = graph.strided_view %[[X]] {offset = 32 : i64, strides = array<i64: 768, 16, 1, 96>}
// CHECK-DAG: %[[KB:.*]] = graph.strided_view %[[B]] {offset = 32 : i64, strides = array<i64: 0, 16, 1, 0>} : tensor<96xbf16> -> tensor<2x2x16x8xbf16>
// CHECK-DAG: %[[V:.*]] = graph.strided_view %[[X]] {offset = 64 : i64, strides = array<i64: 768, 16, 96, 1>}
// CHECK-DAG: %[[VB:.*]] = graph.strided_view %[[B]] {offset = 64 : i64, strides = array<i64: 0, 16, 0, 1>}
// CHECK: graph.fused_attention %[[Q]], %[[K]], %[[V]] q_bias(%[[QB]] : tensor<2x2x8x16xbf16>) kt_bias(%[[KB]] : tensor<2x2x16x8xbf16>) v_bias(%[[VB]] : tensor<2x2x8x16xbf16>)
// CHECK: graph.fused_attention_grad %[[Q]], %[[K]], %[[V]], %{{.*}}, %{{.*}}, %{{.*}} q_bias(%[[QB]] : tensor<2x2x8x16xbf16>) kt_bias(%[[KB]] : tensor<2x2x16x8xbf16>) v_bias(%[[VB]] : tensor<2x2x8x16xbf16>)
func.func @qkv(%x: tensor<2x8x96xbf16>, %b: tensor<96xbf16>, %g: tensor<2x2x8x16xbf16>) -> (tensor<2x8x2x16xbf16>, tensor<2x8x2x16xbf16>) {
  %qkv = graph.add %b, %x : tensor<96xbf16>, tensor<2x8x96xbf16> -> tensor<2x8x96xbf16>
  %q = graph.strided_view %qkv {offset = 0 : i64, strides = array<i64: 768, 16, 96, 1>} : tensor<2x8x96xbf16> -> tensor<2x2x8x16xbf16>
  %kt = graph.strided_view %qkv {offset = 32 : i64, strides = array<i64: 768, 16, 1, 96>} : tensor<2x8x96xbf16> -> tensor<2x2x16x8xbf16>
  %v = graph.strided_view %qkv {offset = 64 : i64, strides = array<i64: 768, 16, 96, 1>} : tensor<2x8x96xbf16> -> tensor<2x2x8x16xbf16>
  %o, %lse = graph.fused_attention %q, %kt, %v {out_perm = array<i64: 0, 2, 1, 3>} : (tensor<2x2x8x16xbf16>, tensor<2x2x16x8xbf16>, tensor<2x2x8x16xbf16>) -> (tensor<2x8x2x16xbf16>, tensor<2x2x8xf32>) {
  ^bb0(%s: tensor<2x2x8x8xbf16>):
    graph.yield %s : tensor<2x2x8x8xbf16>
  }
  %dq, %dkt, %dv, %delta = graph.fused_attention_grad %q, %kt, %v, %o, %lse, %g prologue() epilogue() {grad_q_perm = array<i64: 0, 2, 1, 3>, grad_kt_perm = array<i64: 0, 3, 1, 2>, grad_v_perm = array<i64: 0, 2, 1, 3>, out_perm = array<i64: 0, 2, 1, 3>} : (tensor<2x2x8x16xbf16>, tensor<2x2x16x8xbf16>, tensor<2x2x8x16xbf16>, tensor<2x8x2x16xbf16>, tensor<2x2x8xf32>, tensor<2x2x8x16xbf16>) -> (tensor<2x8x2x16xbf16>, tensor<2x8x2x16xbf16>, tensor<2x8x2x16xbf16>, tensor<2x2x8xf32>) {
  ^bb0(%s: tensor<2x2x8x8xbf16>):
    graph.yield %s : tensor<2x2x8x8xbf16>
  } {
  ^bb0(%s: tensor<2x2x8x8xbf16>):
    graph.yield %s : tensor<2x2x8x8xbf16>
  }
  return %o, %dq : tensor<2x8x2x16xbf16>, tensor<2x8x2x16xbf16>
}

// -----

// Tests that the add stays when its result has another reader (here a
// returned value), and when a view of it has one that is not an attention
// (a matmul).
// CHECK-LABEL: func.func @returned
// CHECK: graph.add
// CHECK-NOT: q_bias
func.func @returned(%x: tensor<2x8x96xbf16>, %b: tensor<96xbf16>) -> (tensor<2x8x2x16xbf16>, tensor<2x8x96xbf16>) {
  %qkv = graph.add %b, %x : tensor<96xbf16>, tensor<2x8x96xbf16> -> tensor<2x8x96xbf16>
  %q = graph.strided_view %qkv {offset = 0 : i64, strides = array<i64: 768, 16, 96, 1>} : tensor<2x8x96xbf16> -> tensor<2x2x8x16xbf16>
  %kt = graph.strided_view %qkv {offset = 32 : i64, strides = array<i64: 768, 16, 1, 96>} : tensor<2x8x96xbf16> -> tensor<2x2x16x8xbf16>
  %v = graph.strided_view %qkv {offset = 64 : i64, strides = array<i64: 768, 16, 96, 1>} : tensor<2x8x96xbf16> -> tensor<2x2x8x16xbf16>
  %o, %lse = graph.fused_attention %q, %kt, %v {out_perm = array<i64: 0, 2, 1, 3>} : (tensor<2x2x8x16xbf16>, tensor<2x2x16x8xbf16>, tensor<2x2x8x16xbf16>) -> (tensor<2x8x2x16xbf16>, tensor<2x2x8xf32>) {
  ^bb0(%s: tensor<2x2x8x8xbf16>):
    graph.yield %s : tensor<2x2x8x8xbf16>
  }
  return %o, %qkv : tensor<2x8x2x16xbf16>, tensor<2x8x96xbf16>
}

// CHECK-LABEL: func.func @matmul
// CHECK: graph.add
// CHECK-NOT: q_bias
func.func @matmul(%x: tensor<2x8x96xbf16>, %b: tensor<96xbf16>) -> (tensor<2x8x2x16xbf16>, tensor<2x2x8x8xbf16>) {
  %qkv = graph.add %b, %x : tensor<96xbf16>, tensor<2x8x96xbf16> -> tensor<2x8x96xbf16>
  %q = graph.strided_view %qkv {offset = 0 : i64, strides = array<i64: 768, 16, 96, 1>} : tensor<2x8x96xbf16> -> tensor<2x2x8x16xbf16>
  %kt = graph.strided_view %qkv {offset = 32 : i64, strides = array<i64: 768, 16, 1, 96>} : tensor<2x8x96xbf16> -> tensor<2x2x16x8xbf16>
  %v = graph.strided_view %qkv {offset = 64 : i64, strides = array<i64: 768, 16, 96, 1>} : tensor<2x8x96xbf16> -> tensor<2x2x8x16xbf16>
  %o, %lse = graph.fused_attention %q, %kt, %v {out_perm = array<i64: 0, 2, 1, 3>} : (tensor<2x2x8x16xbf16>, tensor<2x2x16x8xbf16>, tensor<2x2x8x16xbf16>) -> (tensor<2x8x2x16xbf16>, tensor<2x2x8xf32>) {
  ^bb0(%s: tensor<2x2x8x8xbf16>):
    graph.yield %s : tensor<2x2x8x8xbf16>
  }
  %s = graph.matmul %q, %kt : tensor<2x2x8x16xbf16>, tensor<2x2x16x8xbf16> -> tensor<2x2x8x8xbf16>
  return %o, %s : tensor<2x8x2x16xbf16>, tensor<2x2x8x8xbf16>
}

// -----

// Tests that an addend that is not a bias along the last dim (here one
// per time step too) stays an add.
// CHECK-LABEL: func.func @not_a_bias
// CHECK: graph.add
// CHECK-NOT: q_bias
func.func @not_a_bias(%x: tensor<2x8x96xbf16>, %b: tensor<8x96xbf16>) -> tensor<2x8x2x16xbf16> {
  %qkv = graph.add %b, %x : tensor<8x96xbf16>, tensor<2x8x96xbf16> -> tensor<2x8x96xbf16>
  %q = graph.strided_view %qkv {offset = 0 : i64, strides = array<i64: 768, 16, 96, 1>} : tensor<2x8x96xbf16> -> tensor<2x2x8x16xbf16>
  %kt = graph.strided_view %qkv {offset = 32 : i64, strides = array<i64: 768, 16, 1, 96>} : tensor<2x8x96xbf16> -> tensor<2x2x16x8xbf16>
  %v = graph.strided_view %qkv {offset = 64 : i64, strides = array<i64: 768, 16, 96, 1>} : tensor<2x8x96xbf16> -> tensor<2x2x8x16xbf16>
  %o, %lse = graph.fused_attention %q, %kt, %v {out_perm = array<i64: 0, 2, 1, 3>} : (tensor<2x2x8x16xbf16>, tensor<2x2x16x8xbf16>, tensor<2x2x8x16xbf16>) -> (tensor<2x8x2x16xbf16>, tensor<2x2x8xf32>) {
  ^bb0(%s: tensor<2x2x8x8xbf16>):
    graph.yield %s : tensor<2x2x8x8xbf16>
  }
  return %o : tensor<2x8x2x16xbf16>
}
