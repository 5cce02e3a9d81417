// RUN: zeroc-opt %s -split-input-file -zero-plan-buffers="row-pitch-alignment=16" | FileCheck %s
// RUN: zeroc-opt %s -split-input-file -zero-plan-buffers | FileCheck %s --check-prefix=DENSE
// RUN: not zeroc-opt %s -split-input-file -zero-plan-buffers="row-pitch-alignment=-16" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// DENSE-NOT: zero.result_strides
// NEGATIVE: error: zero-plan-buffers: row-pitch-alignment must be >= 0, got -16

// Tests that a language model head's scores, 61 bf16 (122 bytes) a row,
// are stored with rows 64 elements (128 bytes) apart, and so is their
// gradient, written over them: the GEMM and the loss record the strides,
// the storage is 7 * 64 + 61 elements (1018 bytes, 1024 in the arena), and
// the gradient's two GEMMs read it. Without the option every row is dense.
module attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  // CHECK-LABEL: func.func @train_micro_step
  func.func @train_micro_step(%x: tensor<8x16xbf16>, %w: tensor<61x16xbf16>, %t: tensor<8xi64>, %g: tensor<bf16>) -> (tensor<bf16>, tensor<8x16xbf16>, tensor<61x16xbf16>) {
    // CHECK: graph.gemm {{.*}} {transB = true, zero.arena_offsets = [0], zero.result_strides = [array<i64: 64, 1>]}
    %s = graph.gemm %x, %w {transB = true} : (tensor<8x16xbf16>, tensor<61x16xbf16>) -> tensor<8x61xbf16>
    // CHECK: graph.fused_softmax_cross_entropy {{.*}} {reduction = "mean", zero.arena_offsets = [1024, 0], zero.grad_over_scores, zero.result_strides = [array<i64>, array<i64: 64, 1>]}
    %l, %gs = graph.fused_softmax_cross_entropy %s, %t, %g {reduction = "mean"} : tensor<8x61xbf16>, tensor<8xi64>, tensor<bf16>
    // CHECK: graph.gemm {{.*}} {beta = 0.000000e+00 : f64, zero.arena_offsets = [1088]}
    %dx = graph.gemm %gs, %w {beta = 0.0 : f64} : (tensor<8x61xbf16>, tensor<61x16xbf16>) -> tensor<8x16xbf16>
    // CHECK: graph.gemm {{.*}} {transA = true, zero.arena_offsets = [1344]}
    %dw = graph.gemm %gs, %x {transA = true} : (tensor<8x61xbf16>, tensor<8x16xbf16>) -> tensor<61x16xbf16>
    return %l, %dx, %dw : tensor<bf16>, tensor<8x16xbf16>, tensor<61x16xbf16>
  }
}

// -----

// Tests the loss and its gradient as two ops (elementwise fusion off): the
// scores and the gradient op's result are padded, f32 rows of 61 (244
// bytes) to 64 elements, so that the program computes what the fused op
// would.
module attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  // CHECK-LABEL: func.func @train_micro_step
  func.func @train_micro_step(%x: tensor<8x16xf32>, %w: tensor<61x16xf32>, %t: tensor<8xi64>, %g: tensor<f32>) -> (tensor<f32>, tensor<8x16xf32>) {
    // CHECK: graph.gemm {{.*}} zero.result_strides = [array<i64: 64, 1>]
    %s = graph.gemm %x, %w {transB = true} : (tensor<8x16xf32>, tensor<61x16xf32>) -> tensor<8x61xf32>
    // CHECK: graph.softmax_cross_entropy_loss
    // CHECK-NOT: zero.result_strides
    // CHECK-SAME: -> tensor<f32>
    %l = graph.softmax_cross_entropy_loss %s, %t {reduction = "mean"} : tensor<8x61xf32>, tensor<8xi64> -> tensor<f32>
    // CHECK: graph.softmax_cross_entropy_loss_grad {{.*}} zero.result_strides = [array<i64: 64, 1>]
    %gs = graph.softmax_cross_entropy_loss_grad %s, %t, %g {reduction = "mean"} : tensor<8x61xf32>, tensor<8xi64>, tensor<f32>
    %dx = graph.gemm %gs, %w : (tensor<8x61xf32>, tensor<61x16xf32>) -> tensor<8x16xf32>
    return %l, %dx : tensor<f32>, tensor<8x16xf32>
  }
}

// -----

// Tests the rows left dense: rows of 64 bf16 are 128 bytes already; a
// GEMM that adds a bias (the runtime's strided product adds none); scores
// another op reads; a gradient another op reads.
module attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  // CHECK-LABEL: func.func @train_micro_step
  // CHECK-NOT: zero.result_strides
  // CHECK: return
  func.func @train_micro_step(%x: tensor<8x16xbf16>, %w: tensor<64x16xbf16>, %v: tensor<61x16xbf16>, %c: tensor<61xbf16>, %t: tensor<8xi64>, %g: tensor<bf16>) -> (tensor<bf16>, tensor<bf16>, tensor<bf16>, tensor<bf16>, tensor<8x61xbf16>, tensor<8x61xbf16>) {
    %s0 = graph.gemm %x, %w {transB = true} : (tensor<8x16xbf16>, tensor<64x16xbf16>) -> tensor<8x64xbf16>
    %l0, %gs0 = graph.fused_softmax_cross_entropy %s0, %t, %g {reduction = "mean"} : tensor<8x64xbf16>, tensor<8xi64>, tensor<bf16>
    %s1 = graph.gemm %x, %v, %c {transB = true} : (tensor<8x16xbf16>, tensor<61x16xbf16>, tensor<61xbf16>) -> tensor<8x61xbf16>
    %l1, %gs1 = graph.fused_softmax_cross_entropy %s1, %t, %g {reduction = "mean"} : tensor<8x61xbf16>, tensor<8xi64>, tensor<bf16>
    %s2 = graph.gemm %x, %v {transB = true} : (tensor<8x16xbf16>, tensor<61x16xbf16>) -> tensor<8x61xbf16>
    %l2, %gs2 = graph.fused_softmax_cross_entropy %s2, %t, %g {reduction = "mean"} : tensor<8x61xbf16>, tensor<8xi64>, tensor<bf16>
    %s3 = graph.gemm %x, %v {transB = true} : (tensor<8x16xbf16>, tensor<61x16xbf16>) -> tensor<8x61xbf16>
    %l3, %gs3 = graph.fused_softmax_cross_entropy %s3, %t, %g {reduction = "mean"} : tensor<8x61xbf16>, tensor<8xi64>, tensor<bf16>
    return %l0, %l1, %l2, %l3, %s2, %gs3 : tensor<bf16>, tensor<bf16>, tensor<bf16>, tensor<bf16>, tensor<8x61xbf16>, tensor<8x61xbf16>
  }
}
