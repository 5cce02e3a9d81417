// RUN: zeroc-opt %s -split-input-file -zero-fuse-attention | FileCheck %s

// Tests a training step's attention as zero-fold-matmul-views leaves it
// (B=2, H=2, T=8, D=16: q, kt and v views of the QKV projection, the scale
// and causal mask in the softmax's prologue and epilogue, the output and
// the gradients stored as [B, T, H, D]): the forward ops become one
// graph.fused_attention at o's matmul, the backward ops one
// graph.fused_attention_grad at the last of them; each result keeps its
// matmul's layout, the prologue is the softmax's body with the score
// first, and no [B, H, T, T] value is left.
// CHECK-LABEL: func.func @attention
// CHECK-NOT: graph.matmul
// CHECK-NOT: graph.fused_softmax
// CHECK: %[[O:.*]], %[[LSE:.*]] = graph.fused_attention %[[Q:.*]], %[[KT:.*]], %[[V:.*]] prologue(%arg3, %arg2, %arg4 : tensor<1x1x8x8xi1>, tensor<bf16>, tensor<bf16>) {out_perm = array<i64: 0, 2, 1, 3>} : (tensor<2x2x8x16xbf16>, tensor<2x2x16x8xbf16>, tensor<2x2x8x16xbf16>) -> (tensor<2x8x2x16xbf16>, tensor<2x2x8xf32>) {
// CHECK-NEXT: ^bb0(%[[S:.*]]: tensor<2x2x8x8xbf16>, %[[C:.*]]: tensor<1x1x8x8xi1>, %[[K:.*]]: tensor<bf16>, %[[N:.*]]: tensor<bf16>):
// CHECK-NEXT: %[[M:.*]] = graph.mul %[[K]], %[[S]]
// CHECK-NEXT: %[[W:.*]] = graph.where %[[C]], %[[N]], %[[M]]
// CHECK-NEXT: graph.yield %[[W]]
// CHECK: %[[DQ:.*]], %[[DKT:.*]], %[[DV:.*]], %{{.*}} = graph.fused_attention_grad %[[Q]], %[[KT]], %[[V]], %[[O]], %[[LSE]], %arg1 prologue(%arg3, %arg2, %arg4 : tensor<1x1x8x8xi1>, tensor<bf16>, tensor<bf16>) epilogue(%arg3, %arg5, %arg2 : tensor<1x1x8x8xi1>, tensor<bf16>, tensor<bf16>) {grad_kt_perm = array<i64: 0, 3, 1, 2>, grad_q_perm = array<i64: 0, 2, 1, 3>, grad_v_perm = array<i64: 0, 2, 1, 3>, out_perm = array<i64: 0, 2, 1, 3>}
// CHECK-SAME: -> (tensor<2x8x2x16xbf16>, tensor<2x8x2x16xbf16>, tensor<2x8x2x16xbf16>, tensor<2x2x8xf32>)
// CHECK: graph.yield
// CHECK: ^bb0(%[[GX:.*]]: tensor<2x2x8x8xbf16>, %{{.*}}: tensor<1x1x8x8xi1>, %{{.*}}: tensor<bf16>, %{{.*}}: tensor<bf16>):
// CHECK-NEXT: graph.where %{{.*}}, %{{.*}}, %[[GX]]
// CHECK-NEXT: graph.mul
// CHECK-NEXT: graph.yield
// CHECK: return %[[O]], %[[DV]], %[[DQ]], %[[DKT]]
func.func @attention(%qkv: tensor<2x8x96xbf16>, %do: tensor<2x2x8x16xbf16>, %k: tensor<bf16>, %m: tensor<1x1x8x8xi1>, %ninf: tensor<bf16>, %zero: tensor<bf16>) -> (tensor<2x8x2x16xbf16>, tensor<2x8x2x16xbf16>, tensor<2x8x2x16xbf16>, tensor<2x8x2x16xbf16>) {
  %q = graph.strided_view %qkv {offset = 0 : i64, strides = array<i64: 768, 16, 96, 1>} : tensor<2x8x96xbf16> -> tensor<2x2x8x16xbf16>
  %kt = graph.strided_view %qkv {offset = 32 : i64, strides = array<i64: 768, 16, 1, 96>} : tensor<2x8x96xbf16> -> tensor<2x2x16x8xbf16>
  %v = graph.strided_view %qkv {offset = 64 : i64, strides = array<i64: 768, 16, 96, 1>} : tensor<2x8x96xbf16> -> tensor<2x2x8x16xbf16>
  %s = graph.matmul %q, %kt : tensor<2x2x8x16xbf16>, tensor<2x2x16x8xbf16> -> tensor<2x2x8x8xbf16>
  %p = graph.fused_softmax %m, %k, %s, %ninf {axis = 3 : i64, log = false} : (tensor<1x1x8x8xi1>, tensor<bf16>, tensor<2x2x8x8xbf16>, tensor<bf16>) -> tensor<2x2x8x8xbf16> {
  ^bb0(%c: tensor<1x1x8x8xi1>, %b: tensor<bf16>, %a: tensor<2x2x8x8xbf16>, %d: tensor<bf16>):
    %0 = graph.mul %b, %a : tensor<bf16>, tensor<2x2x8x8xbf16> -> tensor<2x2x8x8xbf16>
    %1 = graph.where %c, %d, %0 : tensor<1x1x8x8xi1>, tensor<bf16>, tensor<2x2x8x8xbf16> -> tensor<2x2x8x8xbf16>
    graph.yield %1 : tensor<2x2x8x8xbf16>
  }
  %o = graph.matmul %p, %v {result_perm = array<i64: 0, 2, 1, 3>} : tensor<2x2x8x8xbf16>, tensor<2x2x8x16xbf16> -> tensor<2x8x2x16xbf16>
  %dp = graph.matmul %do, %v {transB = true} : tensor<2x2x8x16xbf16>, tensor<2x2x8x16xbf16> -> tensor<2x2x8x8xbf16>
  %dv = graph.matmul %p, %do {result_perm = array<i64: 0, 2, 1, 3>, transA = true} : tensor<2x2x8x8xbf16>, tensor<2x2x8x16xbf16> -> tensor<2x8x2x16xbf16>
  %ds = graph.fused_softmax_grad %p, %dp epilogue(%m, %zero, %k : tensor<1x1x8x8xi1>, tensor<bf16>, tensor<bf16>) {axis = 3 : i64, log = false} : tensor<2x2x8x8xbf16> {
  ^bb0(%g: tensor<2x2x8x8xbf16>, %c: tensor<1x1x8x8xi1>, %z: tensor<bf16>, %b: tensor<bf16>):
    %0 = graph.where %c, %z, %g : tensor<1x1x8x8xi1>, tensor<bf16>, tensor<2x2x8x8xbf16> -> tensor<2x2x8x8xbf16>
    %1 = graph.mul %0, %b : tensor<2x2x8x8xbf16>, tensor<bf16> -> tensor<2x2x8x8xbf16>
    graph.yield %1 : tensor<2x2x8x8xbf16>
  }
  %dq = graph.matmul %ds, %kt {result_perm = array<i64: 0, 2, 1, 3>, transB = true} : tensor<2x2x8x8xbf16>, tensor<2x2x16x8xbf16> -> tensor<2x8x2x16xbf16>
  %dkt = graph.matmul %q, %ds {result_perm = array<i64: 0, 3, 1, 2>, transA = true} : tensor<2x2x8x16xbf16>, tensor<2x2x8x8xbf16> -> tensor<2x8x2x16xbf16>
  return %o, %dv, %dq, %dkt : tensor<2x8x2x16xbf16>, tensor<2x8x2x16xbf16>, tensor<2x8x2x16xbf16>, tensor<2x8x2x16xbf16>
}

// -----

// Tests an attention without its gradient (the eval function) and without
// a prologue (a plain softmax, dense operands): the forward op alone, its
// prologue yielding the score.
// CHECK-LABEL: func.func @forward_only
// CHECK: %[[O:.*]], %{{.*}} = graph.fused_attention %arg0, %arg1, %arg2 : (tensor<1x2x8x32xf16>, tensor<1x2x32x24xf16>, tensor<1x2x24x32xf16>) -> (tensor<1x2x8x32xf16>, tensor<1x2x8xf32>) {
// CHECK-NEXT: ^bb0(%[[S:.*]]: tensor<1x2x8x24xf16>):
// CHECK-NEXT: graph.yield %[[S]]
// CHECK: return %[[O]]
func.func @forward_only(%q: tensor<1x2x8x32xf16>, %kt: tensor<1x2x32x24xf16>, %v: tensor<1x2x24x32xf16>) -> tensor<1x2x8x32xf16> {
  %s = graph.matmul %q, %kt : tensor<1x2x8x32xf16>, tensor<1x2x32x24xf16> -> tensor<1x2x8x24xf16>
  %p = graph.softmax %s {axis = 3 : i64} : tensor<1x2x8x24xf16>
  %o = graph.matmul %p, %v : tensor<1x2x8x24xf16>, tensor<1x2x24x32xf16> -> tensor<1x2x8x32xf16>
  return %o : tensor<1x2x8x32xf16>
}

// -----

// Tests attentions that stay as they are: f32 (no tensor cores), a head of
// 24 elements, probabilities with another reader (dropped probabilities
// that are returned too; a returned value), a softmax over another axis,
// and an op between the forward ops that writes memory in place.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: graph.fused_attention
// CHECK-COUNT-12: graph.matmul
// CHECK-NOT: graph.fused_attention
func.func @kept(%q: tensor<1x2x8x16xf32>, %kt: tensor<1x2x16x8xf32>, %v: tensor<1x2x8x16xf32>,
                %q24: tensor<1x2x8x24xbf16>, %kt24: tensor<1x2x24x8xbf16>, %v24: tensor<1x2x8x24xbf16>,
                %qb: tensor<1x2x8x16xbf16>, %ktb: tensor<1x2x16x8xbf16>, %vb: tensor<1x2x8x16xbf16>)
    -> (tensor<1x2x8x16xf32>, tensor<1x2x8x24xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x8xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x8xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>) {
  %s0 = graph.matmul %q, %kt : tensor<1x2x8x16xf32>, tensor<1x2x16x8xf32> -> tensor<1x2x8x8xf32>
  %p0 = graph.softmax %s0 {axis = 3 : i64} : tensor<1x2x8x8xf32>
  %o0 = graph.matmul %p0, %v : tensor<1x2x8x8xf32>, tensor<1x2x8x16xf32> -> tensor<1x2x8x16xf32>
  %s1 = graph.matmul %q24, %kt24 : tensor<1x2x8x24xbf16>, tensor<1x2x24x8xbf16> -> tensor<1x2x8x8xbf16>
  %p1 = graph.softmax %s1 {axis = 3 : i64} : tensor<1x2x8x8xbf16>
  %o1 = graph.matmul %p1, %v24 : tensor<1x2x8x8xbf16>, tensor<1x2x8x24xbf16> -> tensor<1x2x8x24xbf16>
  %s2 = graph.matmul %qb, %ktb : tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16> -> tensor<1x2x8x8xbf16>
  %p2 = graph.softmax %s2 {axis = 3 : i64} : tensor<1x2x8x8xbf16>
  %d2 = graph.dropout %p2 {ratio = 0.1 : f64, seed = 7 : i64, training = true} : tensor<1x2x8x8xbf16>
  %o2 = graph.matmul %d2, %vb : tensor<1x2x8x8xbf16>, tensor<1x2x8x16xbf16> -> tensor<1x2x8x16xbf16>
  %s3 = graph.matmul %qb, %ktb : tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16> -> tensor<1x2x8x8xbf16>
  %p3 = graph.softmax %s3 {axis = 3 : i64} : tensor<1x2x8x8xbf16>
  %o3 = graph.matmul %p3, %vb : tensor<1x2x8x8xbf16>, tensor<1x2x8x16xbf16> -> tensor<1x2x8x16xbf16>
  %s4 = graph.matmul %qb, %ktb : tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16> -> tensor<1x2x8x8xbf16>
  %p4 = graph.softmax %s4 {axis = 2 : i64} : tensor<1x2x8x8xbf16>
  %o4 = graph.matmul %p4, %vb : tensor<1x2x8x8xbf16>, tensor<1x2x8x16xbf16> -> tensor<1x2x8x16xbf16>
  %s5 = graph.matmul %qb, %ktb : tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16> -> tensor<1x2x8x8xbf16>
  %p5 = graph.softmax %s5 {axis = 3 : i64} : tensor<1x2x8x8xbf16>
  %r5 = zero.all_reduce %vb {reduction = #zero<reduction sum>} : tensor<1x2x8x16xbf16>
  %o5 = graph.matmul %p5, %vb : tensor<1x2x8x8xbf16>, tensor<1x2x8x16xbf16> -> tensor<1x2x8x16xbf16>
  return %o0, %o1, %o2, %d2, %o3, %p3, %o4, %o5 : tensor<1x2x8x16xf32>, tensor<1x2x8x24xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x8xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x8xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>
}

// -----

// Tests a dropout on the probabilities (GPT-2's attn_pdrop): forward,
// between the softmax and both products that read the probabilities; in
// the backward pass, the same dropout (ratio, seed) of dp before the
// softmax gradient. Both fused ops carry it and no dropout is left; the
// eval function's attention (forward only) carries its own.
// CHECK-LABEL: func.func @attention_dropout
// CHECK-NOT: graph.dropout
// CHECK: %[[O:.*]], %[[LSE:.*]] = graph.fused_attention %arg0, %arg1, %arg2 {dropout_ratio = 1.000000e-01 : f64, dropout_seed = 7 : i64}
// CHECK: graph.fused_attention_grad %arg0, %arg1, %arg2, %[[O]], %[[LSE]], %arg3 prologue() epilogue() {dropout_ratio = 1.000000e-01 : f64, dropout_seed = 7 : i64}
// CHECK-NOT: graph.dropout
// CHECK-NOT: graph.matmul
// CHECK-LABEL: func.func @forward_dropout
// CHECK: graph.fused_attention %arg0, %arg1, %arg2 {dropout_ratio = 2.000000e-01 : f64, dropout_seed = 3 : i64}
// CHECK-NOT: graph.dropout
func.func @attention_dropout(%q: tensor<1x2x8x16xbf16>, %kt: tensor<1x2x16x8xbf16>, %v: tensor<1x2x8x16xbf16>, %do: tensor<1x2x8x16xbf16>) -> (tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16>) {
  %s = graph.matmul %q, %kt : tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16> -> tensor<1x2x8x8xbf16>
  %p = graph.softmax %s {axis = 3 : i64} : tensor<1x2x8x8xbf16>
  %pd = graph.dropout %p {ratio = 0.1 : f64, seed = 7 : i64, training = true} : tensor<1x2x8x8xbf16>
  %o = graph.matmul %pd, %v : tensor<1x2x8x8xbf16>, tensor<1x2x8x16xbf16> -> tensor<1x2x8x16xbf16>
  %dv = graph.matmul %pd, %do {transA = true} : tensor<1x2x8x8xbf16>, tensor<1x2x8x16xbf16> -> tensor<1x2x8x16xbf16>
  %dpd = graph.matmul %do, %v {transB = true} : tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16> -> tensor<1x2x8x8xbf16>
  %dp = graph.dropout %dpd {ratio = 0.1 : f64, seed = 7 : i64, training = true} : tensor<1x2x8x8xbf16>
  %ds = graph.softmax_grad %p, %dp {axis = 3 : i64, log = false} : tensor<1x2x8x8xbf16>
  %dq = graph.matmul %ds, %kt {transB = true} : tensor<1x2x8x8xbf16>, tensor<1x2x16x8xbf16> -> tensor<1x2x8x16xbf16>
  %dkt = graph.matmul %q, %ds {transA = true} : tensor<1x2x8x16xbf16>, tensor<1x2x8x8xbf16> -> tensor<1x2x16x8xbf16>
  return %o, %dv, %dq, %dkt : tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16>
}
func.func @forward_dropout(%q: tensor<1x2x8x16xbf16>, %kt: tensor<1x2x16x8xbf16>, %v: tensor<1x2x8x16xbf16>) -> tensor<1x2x8x16xbf16> {
  %s = graph.matmul %q, %kt : tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16> -> tensor<1x2x8x8xbf16>
  %p = graph.softmax %s {axis = 3 : i64} : tensor<1x2x8x8xbf16>
  %pd = graph.dropout %p {ratio = 0.2 : f64, seed = 3 : i64, training = true} : tensor<1x2x8x8xbf16>
  %o = graph.matmul %pd, %v : tensor<1x2x8x8xbf16>, tensor<1x2x8x16xbf16> -> tensor<1x2x8x16xbf16>
  return %o : tensor<1x2x8x16xbf16>
}

// -----

// Tests dropouts the kernels cannot draw: the gradient's dropout with
// another seed (not the forward one's mask), a dropout of the
// probabilities in eval mode (training false), and one that reads the
// probabilities where the product reads them undropped.
// CHECK-LABEL: func.func @kept_dropouts
// CHECK-NOT: graph.fused_attention
// CHECK-COUNT-9: graph.matmul
// CHECK-NOT: graph.fused_attention
func.func @kept_dropouts(%q: tensor<1x2x8x16xbf16>, %kt: tensor<1x2x16x8xbf16>, %v: tensor<1x2x8x16xbf16>, %do: tensor<1x2x8x16xbf16>) -> (tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x8xbf16>) {
  %s = graph.matmul %q, %kt : tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16> -> tensor<1x2x8x8xbf16>
  %p = graph.softmax %s {axis = 3 : i64} : tensor<1x2x8x8xbf16>
  %pd = graph.dropout %p {ratio = 0.1 : f64, seed = 7 : i64, training = true} : tensor<1x2x8x8xbf16>
  %o = graph.matmul %pd, %v : tensor<1x2x8x8xbf16>, tensor<1x2x8x16xbf16> -> tensor<1x2x8x16xbf16>
  %dv = graph.matmul %pd, %do {transA = true} : tensor<1x2x8x8xbf16>, tensor<1x2x8x16xbf16> -> tensor<1x2x8x16xbf16>
  %dpd = graph.matmul %do, %v {transB = true} : tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16> -> tensor<1x2x8x8xbf16>
  %dp = graph.dropout %dpd {ratio = 0.1 : f64, seed = 8 : i64, training = true} : tensor<1x2x8x8xbf16>
  %ds = graph.softmax_grad %p, %dp {axis = 3 : i64, log = false} : tensor<1x2x8x8xbf16>
  %dq = graph.matmul %ds, %kt {transB = true} : tensor<1x2x8x8xbf16>, tensor<1x2x16x8xbf16> -> tensor<1x2x8x16xbf16>
  %dkt = graph.matmul %q, %ds {transA = true} : tensor<1x2x8x16xbf16>, tensor<1x2x8x8xbf16> -> tensor<1x2x16x8xbf16>
  %s1 = graph.matmul %q, %kt : tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16> -> tensor<1x2x8x8xbf16>
  %p1 = graph.softmax %s1 {axis = 3 : i64} : tensor<1x2x8x8xbf16>
  %d1 = graph.dropout %p1 {ratio = 0.1 : f64, seed = 9 : i64, training = false} : tensor<1x2x8x8xbf16>
  %o1 = graph.matmul %d1, %v : tensor<1x2x8x8xbf16>, tensor<1x2x8x16xbf16> -> tensor<1x2x8x16xbf16>
  %s2 = graph.matmul %q, %kt : tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16> -> tensor<1x2x8x8xbf16>
  %p2 = graph.softmax %s2 {axis = 3 : i64} : tensor<1x2x8x8xbf16>
  %d2 = graph.dropout %p2 {ratio = 0.1 : f64, seed = 10 : i64, training = true} : tensor<1x2x8x8xbf16>
  %o2 = graph.matmul %p2, %v : tensor<1x2x8x8xbf16>, tensor<1x2x8x16xbf16> -> tensor<1x2x8x16xbf16>
  return %o, %dv, %dq, %dkt, %o1, %o2, %d2 : tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x8xbf16>
}

// -----

// Tests gradient dropouts that are not the forward one's and probabilities
// dropped twice: the gradient's dropout with another ratio, in eval mode,
// and with another reader (the dropped gradient returned too); two
// training dropouts of one softmax, each read by a product.
// CHECK-LABEL: func.func @kept_gradient_dropouts
// CHECK-NOT: graph.fused_attention
// CHECK-COUNT-18: graph.matmul
// CHECK-NOT: graph.fused_attention
func.func @kept_gradient_dropouts(%q: tensor<1x2x8x16xbf16>, %kt: tensor<1x2x16x8xbf16>, %v: tensor<1x2x8x16xbf16>, %do: tensor<1x2x8x16xbf16>) -> (tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x8x8xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>) {
  %s0 = graph.matmul %q, %kt : tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16> -> tensor<1x2x8x8xbf16>
  %p0 = graph.softmax %s0 {axis = 3 : i64} : tensor<1x2x8x8xbf16>
  %pd0 = graph.dropout %p0 {ratio = 0.1 : f64, seed = 7 : i64, training = true} : tensor<1x2x8x8xbf16>
  %o0 = graph.matmul %pd0, %v : tensor<1x2x8x8xbf16>, tensor<1x2x8x16xbf16> -> tensor<1x2x8x16xbf16>
  %dv0 = graph.matmul %pd0, %do {transA = true} : tensor<1x2x8x8xbf16>, tensor<1x2x8x16xbf16> -> tensor<1x2x8x16xbf16>
  %dpd0 = graph.matmul %do, %v {transB = true} : tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16> -> tensor<1x2x8x8xbf16>
  %dp0 = graph.dropout %dpd0 {ratio = 0.2 : f64, seed = 7 : i64, training = true} : tensor<1x2x8x8xbf16>
  %ds0 = graph.softmax_grad %p0, %dp0 {axis = 3 : i64, log = false} : tensor<1x2x8x8xbf16>
  %dq0 = graph.matmul %ds0, %kt {transB = true} : tensor<1x2x8x8xbf16>, tensor<1x2x16x8xbf16> -> tensor<1x2x8x16xbf16>
  %dkt0 = graph.matmul %q, %ds0 {transA = true} : tensor<1x2x8x16xbf16>, tensor<1x2x8x8xbf16> -> tensor<1x2x16x8xbf16>
  %s1 = graph.matmul %q, %kt : tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16> -> tensor<1x2x8x8xbf16>
  %p1 = graph.softmax %s1 {axis = 3 : i64} : tensor<1x2x8x8xbf16>
  %pd1 = graph.dropout %p1 {ratio = 0.1 : f64, seed = 7 : i64, training = true} : tensor<1x2x8x8xbf16>
  %o1 = graph.matmul %pd1, %v : tensor<1x2x8x8xbf16>, tensor<1x2x8x16xbf16> -> tensor<1x2x8x16xbf16>
  %dv1 = graph.matmul %pd1, %do {transA = true} : tensor<1x2x8x8xbf16>, tensor<1x2x8x16xbf16> -> tensor<1x2x8x16xbf16>
  %dpd1 = graph.matmul %do, %v {transB = true} : tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16> -> tensor<1x2x8x8xbf16>
  %dp1 = graph.dropout %dpd1 {ratio = 0.1 : f64, seed = 7 : i64, training = false} : tensor<1x2x8x8xbf16>
  %ds1 = graph.softmax_grad %p1, %dp1 {axis = 3 : i64, log = false} : tensor<1x2x8x8xbf16>
  %dq1 = graph.matmul %ds1, %kt {transB = true} : tensor<1x2x8x8xbf16>, tensor<1x2x16x8xbf16> -> tensor<1x2x8x16xbf16>
  %dkt1 = graph.matmul %q, %ds1 {transA = true} : tensor<1x2x8x16xbf16>, tensor<1x2x8x8xbf16> -> tensor<1x2x16x8xbf16>
  %s2 = graph.matmul %q, %kt : tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16> -> tensor<1x2x8x8xbf16>
  %p2 = graph.softmax %s2 {axis = 3 : i64} : tensor<1x2x8x8xbf16>
  %pd2 = graph.dropout %p2 {ratio = 0.1 : f64, seed = 7 : i64, training = true} : tensor<1x2x8x8xbf16>
  %o2 = graph.matmul %pd2, %v : tensor<1x2x8x8xbf16>, tensor<1x2x8x16xbf16> -> tensor<1x2x8x16xbf16>
  %dv2 = graph.matmul %pd2, %do {transA = true} : tensor<1x2x8x8xbf16>, tensor<1x2x8x16xbf16> -> tensor<1x2x8x16xbf16>
  %dpd2 = graph.matmul %do, %v {transB = true} : tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16> -> tensor<1x2x8x8xbf16>
  %dp2 = graph.dropout %dpd2 {ratio = 0.1 : f64, seed = 7 : i64, training = true} : tensor<1x2x8x8xbf16>
  %ds2 = graph.softmax_grad %p2, %dp2 {axis = 3 : i64, log = false} : tensor<1x2x8x8xbf16>
  %dq2 = graph.matmul %ds2, %kt {transB = true} : tensor<1x2x8x8xbf16>, tensor<1x2x16x8xbf16> -> tensor<1x2x8x16xbf16>
  %dkt2 = graph.matmul %q, %ds2 {transA = true} : tensor<1x2x8x16xbf16>, tensor<1x2x8x8xbf16> -> tensor<1x2x16x8xbf16>
  %s3 = graph.matmul %q, %kt : tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16> -> tensor<1x2x8x8xbf16>
  %p3 = graph.softmax %s3 {axis = 3 : i64} : tensor<1x2x8x8xbf16>
  %d3 = graph.dropout %p3 {ratio = 0.1 : f64, seed = 11 : i64, training = true} : tensor<1x2x8x8xbf16>
  %d3b = graph.dropout %p3 {ratio = 0.1 : f64, seed = 12 : i64, training = true} : tensor<1x2x8x8xbf16>
  %o3 = graph.matmul %d3, %v : tensor<1x2x8x8xbf16>, tensor<1x2x8x16xbf16> -> tensor<1x2x8x16xbf16>
  %o3b = graph.matmul %d3b, %v : tensor<1x2x8x8xbf16>, tensor<1x2x8x16xbf16> -> tensor<1x2x8x16xbf16>
  return %o0, %dv0, %dq0, %dkt0, %o1, %dv1, %dq1, %dkt1, %o2, %dv2, %dq2, %dkt2, %dp2, %o3, %o3b : tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x8x8xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>
}

// -----

// Tests prologues the kernels cannot take: an input that broadcasts the
// scores to more dims (a per-example bias over one q: the probabilities
// are not the scores' shape) and a dropout inside the softmax's prologue.
// CHECK-LABEL: func.func @kept_prologues
// CHECK-NOT: graph.fused_attention
// CHECK-COUNT-4: graph.matmul
// CHECK-NOT: graph.fused_attention
func.func @kept_prologues(%q: tensor<1x2x8x16xbf16>, %kt: tensor<1x2x16x8xbf16>, %v: tensor<1x2x8x16xbf16>, %bias: tensor<2x2x8x8xbf16>) -> (tensor<2x2x8x16xbf16>, tensor<1x2x8x16xbf16>) {
  %s0 = graph.matmul %q, %kt : tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16> -> tensor<1x2x8x8xbf16>
  %p0 = graph.fused_softmax %s0, %bias {axis = 3 : i64, log = false} : (tensor<1x2x8x8xbf16>, tensor<2x2x8x8xbf16>) -> tensor<2x2x8x8xbf16> {
  ^bb0(%a: tensor<1x2x8x8xbf16>, %b: tensor<2x2x8x8xbf16>):
    %0 = graph.add %a, %b : tensor<1x2x8x8xbf16>, tensor<2x2x8x8xbf16> -> tensor<2x2x8x8xbf16>
    graph.yield %0 : tensor<2x2x8x8xbf16>
  }
  %o0 = graph.matmul %p0, %v : tensor<2x2x8x8xbf16>, tensor<1x2x8x16xbf16> -> tensor<2x2x8x16xbf16>
  %s1 = graph.matmul %q, %kt : tensor<1x2x8x16xbf16>, tensor<1x2x16x8xbf16> -> tensor<1x2x8x8xbf16>
  %p1 = graph.fused_softmax %s1 {axis = 3 : i64, log = false} : (tensor<1x2x8x8xbf16>) -> tensor<1x2x8x8xbf16> {
  ^bb0(%a: tensor<1x2x8x8xbf16>):
    %0 = graph.dropout %a {ratio = 0.1 : f64, seed = 3 : i64, training = true} : tensor<1x2x8x8xbf16>
    graph.yield %0 : tensor<1x2x8x8xbf16>
  }
  %o1 = graph.matmul %p1, %v : tensor<1x2x8x8xbf16>, tensor<1x2x8x16xbf16> -> tensor<1x2x8x16xbf16>
  return %o0, %o1 : tensor<2x2x8x16xbf16>, tensor<1x2x8x16xbf16>
}

// -----

// Tests the form zero-fold-transposes leaves in Hugging Face exports: the
// scores read k's rows with transB and dq multiplies by k itself. The
// fused ops read kt as a new view of k's storage with its last two strides
// swapped (k's own view, now unread, is erased), and dk, which autodiff
// computes as q^T ds stored as [B, H, Tk, D], keeps its perm. A dense k
// gets a view of its own.
// CHECK-LABEL: func.func @k_rows
// CHECK-NOT: offset = 32 : i64, strides = array<i64: 768, 16, 96, 1>
// CHECK: %[[KT:.*]] = graph.strided_view %arg0 {offset = 32 : i64, strides = array<i64: 768, 16, 1, 96>} : tensor<2x8x96xbf16> -> tensor<2x2x16x8xbf16>
// CHECK-NOT: graph.matmul
// CHECK: graph.fused_attention %{{.*}}, %[[KT]], %{{.*}} prologue
// CHECK: graph.fused_attention_grad %{{.*}}, %[[KT]], {{.*}} {grad_kt_perm = array<i64: 0, 1, 3, 2>, out_perm = array<i64: 0, 2, 1, 3>}
// CHECK-NOT: graph.matmul
// CHECK: return
func.func @k_rows(%qkv: tensor<2x8x96xbf16>, %do: tensor<2x2x8x16xbf16>, %c: tensor<bf16>) -> (tensor<2x8x2x16xbf16>, tensor<2x2x8x16xbf16>, tensor<2x2x8x16xbf16>, tensor<2x2x8x16xbf16>) {
  %q = graph.strided_view %qkv {offset = 0 : i64, strides = array<i64: 768, 16, 96, 1>} : tensor<2x8x96xbf16> -> tensor<2x2x8x16xbf16>
  %k = graph.strided_view %qkv {offset = 32 : i64, strides = array<i64: 768, 16, 96, 1>} : tensor<2x8x96xbf16> -> tensor<2x2x8x16xbf16>
  %v = graph.strided_view %qkv {offset = 64 : i64, strides = array<i64: 768, 16, 96, 1>} : tensor<2x8x96xbf16> -> tensor<2x2x8x16xbf16>
  %s = graph.matmul %q, %k {transB = true} : tensor<2x2x8x16xbf16>, tensor<2x2x8x16xbf16> -> tensor<2x2x8x8xbf16>
  %p = graph.fused_softmax %s, %c {axis = 3 : i64, log = false} : (tensor<2x2x8x8xbf16>, tensor<bf16>) -> tensor<2x2x8x8xbf16> {
  ^bb0(%a: tensor<2x2x8x8xbf16>, %b: tensor<bf16>):
    %0 = graph.mul %a, %b : tensor<2x2x8x8xbf16>, tensor<bf16> -> tensor<2x2x8x8xbf16>
    graph.yield %0 : tensor<2x2x8x8xbf16>
  }
  %o = graph.matmul %p, %v {result_perm = array<i64: 0, 2, 1, 3>} : tensor<2x2x8x8xbf16>, tensor<2x2x8x16xbf16> -> tensor<2x8x2x16xbf16>
  %dp = graph.matmul %do, %v {transB = true} : tensor<2x2x8x16xbf16>, tensor<2x2x8x16xbf16> -> tensor<2x2x8x8xbf16>
  %dv = graph.matmul %p, %do {transA = true} : tensor<2x2x8x8xbf16>, tensor<2x2x8x16xbf16> -> tensor<2x2x8x16xbf16>
  %ds = graph.fused_softmax_grad %p, %dp epilogue(%c : tensor<bf16>) {axis = 3 : i64, log = false} : tensor<2x2x8x8xbf16> {
  ^bb0(%g: tensor<2x2x8x8xbf16>, %b: tensor<bf16>):
    %0 = graph.mul %g, %b : tensor<2x2x8x8xbf16>, tensor<bf16> -> tensor<2x2x8x8xbf16>
    graph.yield %0 : tensor<2x2x8x8xbf16>
  }
  %dq = graph.matmul %ds, %k : tensor<2x2x8x8xbf16>, tensor<2x2x8x16xbf16> -> tensor<2x2x8x16xbf16>
  %dk = graph.matmul %q, %ds {result_perm = array<i64: 0, 1, 3, 2>, transA = true} : tensor<2x2x8x16xbf16>, tensor<2x2x8x8xbf16> -> tensor<2x2x8x16xbf16>
  return %o, %dv, %dq, %dk : tensor<2x8x2x16xbf16>, tensor<2x2x8x16xbf16>, tensor<2x2x8x16xbf16>, tensor<2x2x8x16xbf16>
}

// CHECK-LABEL: func.func @k_rows_dense
// CHECK: %[[KT:.*]] = graph.strided_view %arg1 {offset = 0 : i64, strides = array<i64: 512, 256, 1, 32>} : tensor<1x2x8x32xf16> -> tensor<1x2x32x8xf16>
// CHECK: graph.fused_attention %arg0, %[[KT]], %arg2 :
func.func @k_rows_dense(%q: tensor<1x2x8x32xf16>, %k: tensor<1x2x8x32xf16>, %v: tensor<1x2x8x32xf16>) -> tensor<1x2x8x32xf16> {
  %s = graph.matmul %q, %k {transB = true} : tensor<1x2x8x32xf16>, tensor<1x2x8x32xf16> -> tensor<1x2x8x8xf16>
  %p = graph.softmax %s {axis = 3 : i64} : tensor<1x2x8x8xf16>
  %o = graph.matmul %p, %v : tensor<1x2x8x8xf16>, tensor<1x2x8x32xf16> -> tensor<1x2x8x32xf16>
  return %o : tensor<1x2x8x32xf16>
}

// -----

// Tests the causal proof: a constant mask that drops exactly the keys after
// each query (to a constant -inf, through a cast) makes the fused ops
// causal, the gradient's too when its epilogue keeps zero zero (where with
// a zero constant, a product by a finite constant). A mask that also drops
// the diagonal proves nothing, and neither does an epilogue that adds or
// one that multiplies by a constant that is finite as f64 but inf once
// cast to bf16. A causal op's kernels mask those keys themselves, so the
// prologue's where goes with the mask and the -inf, and so does the
// epilogue's where that zeroes their gradients (with the mask and the
// zero); a gradient that is not causal keeps both.
// CHECK-LABEL: func.func @causal
// CHECK: graph.fused_attention %{{.*}}, %{{.*}}, %{{.*}} {causal} :
// CHECK-NEXT: ^bb0(%[[S:.*]]: tensor<1x1x4x4xbf16>):
// CHECK-NEXT: graph.yield %[[S]]
// CHECK: graph.fused_attention_grad {{.*}} prologue() epilogue(%{{.*}} : tensor<bf16>) {causal} :
// CHECK-NEXT: ^bb0(%[[GS:.*]]: tensor<1x1x4x4xbf16>):
// CHECK-NEXT: graph.yield %[[GS]]
// CHECK: ^bb0(%[[G:.*]]: tensor<1x1x4x4xbf16>, %[[K:.*]]: tensor<bf16>):
// CHECK-NEXT: graph.mul %[[G]], %[[K]]
// CHECK-LABEL: func.func @diagonal_masked
// CHECK: graph.fused_attention {{.*}} prologue(%{{.*}}, %{{.*}} : tensor<1x1x4x4xi1>, tensor<bf16>)
// CHECK-NOT: causal
// CHECK-LABEL: func.func @epilogue_adds
// CHECK: graph.fused_attention %{{.*}}, %{{.*}}, %{{.*}} {causal} :
// CHECK: graph.fused_attention_grad {{.*}} prologue(%{{.*}}, %{{.*}} : tensor<1x1x4x4xi1>, tensor<bf16>) epilogue(%{{.*}}, %{{.*}}, %{{.*}} : tensor<1x1x4x4xi1>, tensor<bf16>, tensor<bf16>) :
// CHECK: graph.where
// CHECK: graph.where
// CHECK-NOT: causal
// CHECK: return
// CHECK-LABEL: func.func @epilogue_scale_overflows
// CHECK: graph.fused_attention {{.*}} {causal}
// CHECK: graph.fused_attention_grad
// CHECK-NOT: causal
// CHECK: return
func.func @causal(%q: tensor<1x1x4x16xbf16>, %kt: tensor<1x1x16x4xbf16>, %v: tensor<1x1x4x16xbf16>, %do: tensor<1x1x4x16xbf16>) -> (tensor<1x1x4x16xbf16>, tensor<1x1x4x16xbf16>, tensor<1x1x4x16xbf16>, tensor<1x1x16x4xbf16>) {
  %m = graph.constant dense<[[[[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]]]> : tensor<1x1x4x4xi1>
  %n32 = graph.constant dense<0xFF800000> : tensor<f32>
  %n = graph.cast %n32 : tensor<f32> -> tensor<bf16>
  %z = graph.constant dense<0.0> : tensor<bf16>
  %k = graph.constant dense<0.25> : tensor<bf16>
  %s = graph.matmul %q, %kt : tensor<1x1x4x16xbf16>, tensor<1x1x16x4xbf16> -> tensor<1x1x4x4xbf16>
  %p = graph.fused_softmax %s, %m, %n {axis = 3 : i64, log = false} : (tensor<1x1x4x4xbf16>, tensor<1x1x4x4xi1>, tensor<bf16>) -> tensor<1x1x4x4xbf16> {
  ^bb0(%a: tensor<1x1x4x4xbf16>, %c: tensor<1x1x4x4xi1>, %d: tensor<bf16>):
    %0 = graph.where %c, %d, %a : tensor<1x1x4x4xi1>, tensor<bf16>, tensor<1x1x4x4xbf16> -> tensor<1x1x4x4xbf16>
    graph.yield %0 : tensor<1x1x4x4xbf16>
  }
  %o = graph.matmul %p, %v : tensor<1x1x4x4xbf16>, tensor<1x1x4x16xbf16> -> tensor<1x1x4x16xbf16>
  %dp = graph.matmul %do, %v {transB = true} : tensor<1x1x4x16xbf16>, tensor<1x1x4x16xbf16> -> tensor<1x1x4x4xbf16>
  %dv = graph.matmul %p, %do {transA = true} : tensor<1x1x4x4xbf16>, tensor<1x1x4x16xbf16> -> tensor<1x1x4x16xbf16>
  %ds = graph.fused_softmax_grad %p, %dp epilogue(%m, %z, %k : tensor<1x1x4x4xi1>, tensor<bf16>, tensor<bf16>) {axis = 3 : i64, log = false} : tensor<1x1x4x4xbf16> {
  ^bb0(%g: tensor<1x1x4x4xbf16>, %c: tensor<1x1x4x4xi1>, %y: tensor<bf16>, %b: tensor<bf16>):
    %0 = graph.where %c, %y, %g : tensor<1x1x4x4xi1>, tensor<bf16>, tensor<1x1x4x4xbf16> -> tensor<1x1x4x4xbf16>
    %1 = graph.mul %0, %b : tensor<1x1x4x4xbf16>, tensor<bf16> -> tensor<1x1x4x4xbf16>
    graph.yield %1 : tensor<1x1x4x4xbf16>
  }
  %dq = graph.matmul %ds, %kt {transB = true} : tensor<1x1x4x4xbf16>, tensor<1x1x16x4xbf16> -> tensor<1x1x4x16xbf16>
  %dkt = graph.matmul %q, %ds {transA = true} : tensor<1x1x4x16xbf16>, tensor<1x1x4x4xbf16> -> tensor<1x1x16x4xbf16>
  return %o, %dv, %dq, %dkt : tensor<1x1x4x16xbf16>, tensor<1x1x4x16xbf16>, tensor<1x1x4x16xbf16>, tensor<1x1x16x4xbf16>
}

func.func @diagonal_masked(%q: tensor<1x1x4x16xbf16>, %kt: tensor<1x1x16x4xbf16>, %v: tensor<1x1x4x16xbf16>, %do: tensor<1x1x4x16xbf16>) -> (tensor<1x1x4x16xbf16>, tensor<1x1x4x16xbf16>, tensor<1x1x4x16xbf16>, tensor<1x1x16x4xbf16>) {
  %m = graph.constant dense<[[[[true, true, true, true], [false, true, true, true], [false, false, true, true], [false, false, false, true]]]]> : tensor<1x1x4x4xi1>
  %n32 = graph.constant dense<0xFF800000> : tensor<f32>
  %n = graph.cast %n32 : tensor<f32> -> tensor<bf16>
  %z = graph.constant dense<0.0> : tensor<bf16>
  %k = graph.constant dense<0.25> : tensor<bf16>
  %s = graph.matmul %q, %kt : tensor<1x1x4x16xbf16>, tensor<1x1x16x4xbf16> -> tensor<1x1x4x4xbf16>
  %p = graph.fused_softmax %s, %m, %n {axis = 3 : i64, log = false} : (tensor<1x1x4x4xbf16>, tensor<1x1x4x4xi1>, tensor<bf16>) -> tensor<1x1x4x4xbf16> {
  ^bb0(%a: tensor<1x1x4x4xbf16>, %c: tensor<1x1x4x4xi1>, %d: tensor<bf16>):
    %0 = graph.where %c, %d, %a : tensor<1x1x4x4xi1>, tensor<bf16>, tensor<1x1x4x4xbf16> -> tensor<1x1x4x4xbf16>
    graph.yield %0 : tensor<1x1x4x4xbf16>
  }
  %o = graph.matmul %p, %v : tensor<1x1x4x4xbf16>, tensor<1x1x4x16xbf16> -> tensor<1x1x4x16xbf16>
  %dp = graph.matmul %do, %v {transB = true} : tensor<1x1x4x16xbf16>, tensor<1x1x4x16xbf16> -> tensor<1x1x4x4xbf16>
  %dv = graph.matmul %p, %do {transA = true} : tensor<1x1x4x4xbf16>, tensor<1x1x4x16xbf16> -> tensor<1x1x4x16xbf16>
  %ds = graph.fused_softmax_grad %p, %dp epilogue(%m, %z, %k : tensor<1x1x4x4xi1>, tensor<bf16>, tensor<bf16>) {axis = 3 : i64, log = false} : tensor<1x1x4x4xbf16> {
  ^bb0(%g: tensor<1x1x4x4xbf16>, %c: tensor<1x1x4x4xi1>, %y: tensor<bf16>, %b: tensor<bf16>):
    %0 = graph.where %c, %y, %g : tensor<1x1x4x4xi1>, tensor<bf16>, tensor<1x1x4x4xbf16> -> tensor<1x1x4x4xbf16>
    %1 = graph.mul %0, %b : tensor<1x1x4x4xbf16>, tensor<bf16> -> tensor<1x1x4x4xbf16>
    graph.yield %1 : tensor<1x1x4x4xbf16>
  }
  %dq = graph.matmul %ds, %kt {transB = true} : tensor<1x1x4x4xbf16>, tensor<1x1x16x4xbf16> -> tensor<1x1x4x16xbf16>
  %dkt = graph.matmul %q, %ds {transA = true} : tensor<1x1x4x16xbf16>, tensor<1x1x4x4xbf16> -> tensor<1x1x16x4xbf16>
  return %o, %dv, %dq, %dkt : tensor<1x1x4x16xbf16>, tensor<1x1x4x16xbf16>, tensor<1x1x4x16xbf16>, tensor<1x1x16x4xbf16>
}

func.func @epilogue_adds(%q: tensor<1x1x4x16xbf16>, %kt: tensor<1x1x16x4xbf16>, %v: tensor<1x1x4x16xbf16>, %do: tensor<1x1x4x16xbf16>) -> (tensor<1x1x4x16xbf16>, tensor<1x1x4x16xbf16>, tensor<1x1x4x16xbf16>, tensor<1x1x16x4xbf16>) {
  %m = graph.constant dense<[[[[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]]]> : tensor<1x1x4x4xi1>
  %n32 = graph.constant dense<0xFF800000> : tensor<f32>
  %n = graph.cast %n32 : tensor<f32> -> tensor<bf16>
  %z = graph.constant dense<0.0> : tensor<bf16>
  %k = graph.constant dense<0.25> : tensor<bf16>
  %s = graph.matmul %q, %kt : tensor<1x1x4x16xbf16>, tensor<1x1x16x4xbf16> -> tensor<1x1x4x4xbf16>
  %p = graph.fused_softmax %s, %m, %n {axis = 3 : i64, log = false} : (tensor<1x1x4x4xbf16>, tensor<1x1x4x4xi1>, tensor<bf16>) -> tensor<1x1x4x4xbf16> {
  ^bb0(%a: tensor<1x1x4x4xbf16>, %c: tensor<1x1x4x4xi1>, %d: tensor<bf16>):
    %0 = graph.where %c, %d, %a : tensor<1x1x4x4xi1>, tensor<bf16>, tensor<1x1x4x4xbf16> -> tensor<1x1x4x4xbf16>
    graph.yield %0 : tensor<1x1x4x4xbf16>
  }
  %o = graph.matmul %p, %v : tensor<1x1x4x4xbf16>, tensor<1x1x4x16xbf16> -> tensor<1x1x4x16xbf16>
  %dp = graph.matmul %do, %v {transB = true} : tensor<1x1x4x16xbf16>, tensor<1x1x4x16xbf16> -> tensor<1x1x4x4xbf16>
  %dv = graph.matmul %p, %do {transA = true} : tensor<1x1x4x4xbf16>, tensor<1x1x4x16xbf16> -> tensor<1x1x4x16xbf16>
  %ds = graph.fused_softmax_grad %p, %dp epilogue(%m, %z, %k : tensor<1x1x4x4xi1>, tensor<bf16>, tensor<bf16>) {axis = 3 : i64, log = false} : tensor<1x1x4x4xbf16> {
  ^bb0(%g: tensor<1x1x4x4xbf16>, %c: tensor<1x1x4x4xi1>, %y: tensor<bf16>, %b: tensor<bf16>):
    %0 = graph.where %c, %y, %g : tensor<1x1x4x4xi1>, tensor<bf16>, tensor<1x1x4x4xbf16> -> tensor<1x1x4x4xbf16>
    %1 = graph.add %0, %b : tensor<1x1x4x4xbf16>, tensor<bf16> -> tensor<1x1x4x4xbf16>
    graph.yield %1 : tensor<1x1x4x4xbf16>
  }
  %dq = graph.matmul %ds, %kt {transB = true} : tensor<1x1x4x4xbf16>, tensor<1x1x16x4xbf16> -> tensor<1x1x4x16xbf16>
  %dkt = graph.matmul %q, %ds {transA = true} : tensor<1x1x4x16xbf16>, tensor<1x1x4x4xbf16> -> tensor<1x1x16x4xbf16>
  return %o, %dv, %dq, %dkt : tensor<1x1x4x16xbf16>, tensor<1x1x4x16xbf16>, tensor<1x1x4x16xbf16>, tensor<1x1x16x4xbf16>
}

func.func @epilogue_scale_overflows(%q: tensor<1x1x4x16xbf16>, %kt: tensor<1x1x16x4xbf16>, %v: tensor<1x1x4x16xbf16>, %do: tensor<1x1x4x16xbf16>) -> (tensor<1x1x4x16xbf16>, tensor<1x1x4x16xbf16>, tensor<1x1x4x16xbf16>, tensor<1x1x16x4xbf16>) {
  %m = graph.constant dense<[[[[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]]]> : tensor<1x1x4x4xi1>
  %n32 = graph.constant dense<0xFF800000> : tensor<f32>
  %n = graph.cast %n32 : tensor<f32> -> tensor<bf16>
  %z = graph.constant dense<0.0> : tensor<bf16>
  %k64 = graph.constant dense<1.0e300> : tensor<f64>
  %k = graph.cast %k64 : tensor<f64> -> tensor<bf16>
  %s = graph.matmul %q, %kt : tensor<1x1x4x16xbf16>, tensor<1x1x16x4xbf16> -> tensor<1x1x4x4xbf16>
  %p = graph.fused_softmax %s, %m, %n {axis = 3 : i64, log = false} : (tensor<1x1x4x4xbf16>, tensor<1x1x4x4xi1>, tensor<bf16>) -> tensor<1x1x4x4xbf16> {
  ^bb0(%a: tensor<1x1x4x4xbf16>, %c: tensor<1x1x4x4xi1>, %d: tensor<bf16>):
    %0 = graph.where %c, %d, %a : tensor<1x1x4x4xi1>, tensor<bf16>, tensor<1x1x4x4xbf16> -> tensor<1x1x4x4xbf16>
    graph.yield %0 : tensor<1x1x4x4xbf16>
  }
  %o = graph.matmul %p, %v : tensor<1x1x4x4xbf16>, tensor<1x1x4x16xbf16> -> tensor<1x1x4x16xbf16>
  %dp = graph.matmul %do, %v {transB = true} : tensor<1x1x4x16xbf16>, tensor<1x1x4x16xbf16> -> tensor<1x1x4x4xbf16>
  %dv = graph.matmul %p, %do {transA = true} : tensor<1x1x4x4xbf16>, tensor<1x1x4x16xbf16> -> tensor<1x1x4x16xbf16>
  %ds = graph.fused_softmax_grad %p, %dp epilogue(%m, %z, %k : tensor<1x1x4x4xi1>, tensor<bf16>, tensor<bf16>) {axis = 3 : i64, log = false} : tensor<1x1x4x4xbf16> {
  ^bb0(%g: tensor<1x1x4x4xbf16>, %c: tensor<1x1x4x4xi1>, %y: tensor<bf16>, %b: tensor<bf16>):
    %0 = graph.where %c, %y, %g : tensor<1x1x4x4xi1>, tensor<bf16>, tensor<1x1x4x4xbf16> -> tensor<1x1x4x4xbf16>
    %1 = graph.mul %0, %b : tensor<1x1x4x4xbf16>, tensor<bf16> -> tensor<1x1x4x4xbf16>
    graph.yield %1 : tensor<1x1x4x4xbf16>
  }
  %dq = graph.matmul %ds, %kt {transB = true} : tensor<1x1x4x4xbf16>, tensor<1x1x16x4xbf16> -> tensor<1x1x4x16xbf16>
  %dkt = graph.matmul %q, %ds {transA = true} : tensor<1x1x4x16xbf16>, tensor<1x1x4x4xbf16> -> tensor<1x1x16x4xbf16>
  return %o, %dv, %dq, %dkt : tensor<1x1x4x16xbf16>, tensor<1x1x4x16xbf16>, tensor<1x1x4x16xbf16>, tensor<1x1x16x4xbf16>
}
