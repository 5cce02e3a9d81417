// RUN: zeroc-opt %s -split-input-file -zero-plan-buffers | FileCheck %s

// Tests that an attention's q, k and v gradients, reshaped and concatenated
// into the QKV projection's gradient, are written in the concat's storage:
// each at its byte offset there (16 bf16 elements apart) and at the
// concat's row strides, recorded on the attention op, while the concat
// copies nothing and keeps the storage until its last reader.
module attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  // CHECK-LABEL: func.func @train_micro_step
  func.func @train_micro_step(%q: tensor<2x1x8x16xbf16>, %kt: tensor<2x1x16x8xbf16>, %v: tensor<2x1x8x16xbf16>, %o: tensor<2x8x1x16xbf16>, %lse: tensor<2x1x8xf32>, %g: tensor<2x1x8x16xbf16>) -> tensor<48xbf16> {
    // CHECK: graph.fused_attention_grad
    // CHECK-SAME: zero.arena_offsets = [0, 32, 64, 1536], zero.result_strides = [array<i64: 384, 48, 16, 1>, array<i64: 384, 48, 16, 1>, array<i64: 384, 48, 16, 1>, array<i64>]
    %dq, %dkt, %dv, %delta = graph.fused_attention_grad %q, %kt, %v, %o, %lse, %g prologue() epilogue() {grad_q_perm = array<i64: 0, 2, 1, 3>, grad_kt_perm = array<i64: 0, 3, 1, 2>, grad_v_perm = array<i64: 0, 2, 1, 3>, out_perm = array<i64: 0, 2, 1, 3>} : (tensor<2x1x8x16xbf16>, tensor<2x1x16x8xbf16>, tensor<2x1x8x16xbf16>, tensor<2x8x1x16xbf16>, tensor<2x1x8xf32>, tensor<2x1x8x16xbf16>) -> (tensor<2x8x1x16xbf16>, tensor<2x8x1x16xbf16>, tensor<2x8x1x16xbf16>, tensor<2x1x8xf32>) {
    ^bb0(%s: tensor<2x1x8x8xbf16>):
      graph.yield %s : tensor<2x1x8x8xbf16>
    } {
    ^bb0(%s: tensor<2x1x8x8xbf16>):
      graph.yield %s : tensor<2x1x8x8xbf16>
    }
    %rq = graph.reshape %dq : tensor<2x8x1x16xbf16> -> tensor<2x8x16xbf16>
    %rk = graph.reshape %dkt : tensor<2x8x1x16xbf16> -> tensor<2x8x16xbf16>
    %rv = graph.reshape %dv : tensor<2x8x1x16xbf16> -> tensor<2x8x16xbf16>
    // CHECK: graph.concat {{.*}} {axis = 2 : i64, zero.arena_offsets = [0], zero.operands_in_place}
    %c = graph.concat %rq, %rk, %rv {axis = 2 : i64} : (tensor<2x8x16xbf16>, tensor<2x8x16xbf16>, tensor<2x8x16xbf16>) -> tensor<2x8x48xbf16>
    // The concat's 1536 bytes stay taken until here: the sum goes after
    // them and delta.
    // CHECK: graph.sum_to {{.*}} {zero.arena_offsets = [1600]}
    %b = graph.sum_to %c : tensor<2x8x48xbf16> -> tensor<48xbf16>
    return %b : tensor<48xbf16>
  }
}

// -----

// Tests that a gradient something else reads too is not written in place,
// nor are the others: the concat copies them all.
module attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  // CHECK-LABEL: func.func @train_micro_step
  func.func @train_micro_step(%q: tensor<2x1x8x16xbf16>, %kt: tensor<2x1x16x8xbf16>, %v: tensor<2x1x8x16xbf16>, %o: tensor<2x8x1x16xbf16>, %lse: tensor<2x1x8xf32>, %g: tensor<2x1x8x16xbf16>) -> (tensor<2x8x48xbf16>, tensor<2x8x1x16xbf16>) {
    // CHECK: graph.fused_attention_grad
    // CHECK-NOT: zero.result_strides
    // CHECK-SAME: : (
    %dq, %dkt, %dv, %delta = graph.fused_attention_grad %q, %kt, %v, %o, %lse, %g prologue() epilogue() {grad_q_perm = array<i64: 0, 2, 1, 3>, grad_kt_perm = array<i64: 0, 3, 1, 2>, grad_v_perm = array<i64: 0, 2, 1, 3>, out_perm = array<i64: 0, 2, 1, 3>} : (tensor<2x1x8x16xbf16>, tensor<2x1x16x8xbf16>, tensor<2x1x8x16xbf16>, tensor<2x8x1x16xbf16>, tensor<2x1x8xf32>, tensor<2x1x8x16xbf16>) -> (tensor<2x8x1x16xbf16>, tensor<2x8x1x16xbf16>, tensor<2x8x1x16xbf16>, tensor<2x1x8xf32>) {
    ^bb0(%s: tensor<2x1x8x8xbf16>):
      graph.yield %s : tensor<2x1x8x8xbf16>
    } {
    ^bb0(%s: tensor<2x1x8x8xbf16>):
      graph.yield %s : tensor<2x1x8x8xbf16>
    }
    %rq = graph.reshape %dq : tensor<2x8x1x16xbf16> -> tensor<2x8x16xbf16>
    %rk = graph.reshape %dkt : tensor<2x8x1x16xbf16> -> tensor<2x8x16xbf16>
    %rv = graph.reshape %dv : tensor<2x8x1x16xbf16> -> tensor<2x8x16xbf16>
    // CHECK: graph.concat
    // CHECK-NOT: zero.operands_in_place
    // CHECK-SAME: -> tensor<2x8x48xbf16>
    %c = graph.concat %rq, %rk, %rv {axis = 2 : i64} : (tensor<2x8x16xbf16>, tensor<2x8x16xbf16>, tensor<2x8x16xbf16>) -> tensor<2x8x48xbf16>
    return %c, %dv : tensor<2x8x48xbf16>, tensor<2x8x1x16xbf16>
  }
}

// -----

// Tests that operands of ops whose emitters write dense results only (an
// add) are copied, whatever the input IR said: the plan decides afresh.
module attributes {zero.stage = 0 : i64, zero.world_size = 1 : i64} {
  // CHECK-LABEL: func.func @train_micro_step
  func.func @train_micro_step(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
    // CHECK: graph.add {{.*}} {zero.arena_offsets = [0]}
    // CHECK: graph.relu {{.*}} {zero.arena_offsets = [128]}
    %a = graph.add %x, %x : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
    %r = graph.relu %x : tensor<4x8xf32>
    // CHECK: graph.concat
    // CHECK-NOT: zero.operands_in_place
    // CHECK-SAME: -> tensor<4x16xf32>
    %c = graph.concat %a, %r {axis = 1 : i64, zero.operands_in_place} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
    return %c : tensor<4x16xf32>
  }
}
