// RUN: zeroc-opt %s -split-input-file -zero-plan-buffers | FileCheck %s

// Tests that a fused cross-entropy's scores gradient is placed over its
// scores when nothing reads the scores after it: the gradient takes the
// scores' offset (the op is marked zero.grad_over_scores), and that
// storage stays taken until the gradient's last reader, so the next
// matmul's result goes after it.
module attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  // CHECK-LABEL: func.func @train_micro_step
  func.func @train_micro_step(%x: tensor<8x16xbf16>, %w: tensor<16x64xbf16>, %t: tensor<8xi64>, %g: tensor<bf16>) -> (tensor<bf16>, tensor<8x16xbf16>) {
    // CHECK: graph.matmul {{.*}} {zero.arena_offsets = [0]}
    %s = graph.matmul %x, %w : tensor<8x16xbf16>, tensor<16x64xbf16> -> tensor<8x64xbf16>
    // CHECK: graph.fused_softmax_cross_entropy {{.*}} {reduction = "mean", zero.arena_offsets = [1024, 0], zero.grad_over_scores}
    %l, %gs = graph.fused_softmax_cross_entropy %s, %t, %g {reduction = "mean"} : tensor<8x64xbf16>, tensor<8xi64>, tensor<bf16>
    // CHECK: graph.matmul {{.*}} {transB = true, zero.arena_offsets = [1088]}
    %dx = graph.matmul %gs, %w {transB = true} : tensor<8x64xbf16>, tensor<16x64xbf16> -> tensor<8x16xbf16>
    return %l, %dx : tensor<bf16>, tensor<8x16xbf16>
  }
}

// -----

// Tests that scores read after the fused op keep their storage: the
// gradient gets its own.
module attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  // CHECK-LABEL: func.func @train_micro_step
  func.func @train_micro_step(%x: tensor<8x16xbf16>, %w: tensor<16x64xbf16>, %t: tensor<8xi64>, %g: tensor<bf16>) -> (tensor<bf16>, tensor<8x64xbf16>, tensor<8x64xbf16>) {
    // CHECK: graph.matmul {{.*}} {zero.arena_offsets = [0]}
    %s = graph.matmul %x, %w : tensor<8x16xbf16>, tensor<16x64xbf16> -> tensor<8x64xbf16>
    // CHECK: graph.fused_softmax_cross_entropy
    // CHECK-NOT: zero.grad_over_scores
    // CHECK-SAME: zero.arena_offsets = [1024, 1088]
    // CHECK-NOT: zero.grad_over_scores
    // CHECK-SAME: : tensor<8x64xbf16>
    %l, %gs = graph.fused_softmax_cross_entropy %s, %t, %g {reduction = "mean"} : tensor<8x64xbf16>, tensor<8xi64>, tensor<bf16>
    return %l, %gs, %s : tensor<bf16>, tensor<8x64xbf16>, tensor<8x64xbf16>
  }
}
