// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=3 world-size=2 persistence-threshold=0' --zero-overlap='compute-gflops=0.001 memory-gb-per-s=1000000 comm-gbps=1000000 comm-alpha-us=5' --zero-verify-partition | FileCheck %s --check-prefix=NEAR
// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=3 world-size=2 persistence-threshold=0' --zero-overlap='compute-gflops=0.001 memory-gb-per-s=1000000 comm-gbps=1000000 comm-alpha-us=40' --zero-verify-partition | FileCheck %s --check-prefix=MID
// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=3 world-size=2 persistence-threshold=0' --zero-overlap='compute-gflops=0.001 memory-gb-per-s=1000000 comm-gbps=1000000 comm-alpha-us=1000' --zero-verify-partition | FileCheck %s --check-prefix=DEEP
// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=3 world-size=2 persistence-threshold=0' --zero-overlap='compute-gflops=0.001 memory-gb-per-s=1000000 comm-gbps=1000000 comm-alpha-us=1000 prefetch-bucket-size=32' --zero-verify-partition | FileCheck %s --check-prefix=TWO
// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=3 world-size=2 persistence-threshold=0' --zero-overlap='compute-gflops=0.001 memory-gb-per-s=1000000 comm-gbps=1000000 comm-alpha-us=1000 prefetch-bucket-size=16' --zero-verify-partition | FileCheck %s --check-prefix=ONE

// Tests the cost model behind zero-overlap's stage-3 prefetch. The compute
// model is set to 1 FLOP per microsecond with free memory traffic: a 2x4x4
// matmul takes 64 us, a relu or tanh of 8 elements 8 us. The link costs
// comm-alpha-us per gather (2 ranks: one ring step; the bytes are free), and
// a start moves up until the compute before its wait covers twice that.
graph.param trainable @w1 = dense<0.5> : tensor<4x4xf32>
graph.param trainable @w2 = dense<0.25> : tensor<4x4xf32>
graph.param trainable @w3 = dense<0.125> : tensor<4x4xf32>
func.func @forward(%x: tensor<2x4xf32> {graph.input = "x"}) -> (tensor<f32> {graph.loss}) {
  %w1 = graph.load_param @w1 : tensor<4x4xf32>
  %w2 = graph.load_param @w2 : tensor<4x4xf32>
  %w3 = graph.load_param @w3 : tensor<4x4xf32>
  %a = graph.matmul %x, %w1 : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %b = graph.relu %a : tensor<2x4xf32>
  %c = graph.tanh %b : tensor<2x4xf32>
  %d = graph.matmul %c, %w2 : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %e = graph.relu %d : tensor<2x4xf32>
  %f = graph.matmul %e, %w3 : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %l = graph.reduce_mean %f {axes = [0, 1], keepdims = false} : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// 10 us to cover: w2's gather starts before the relu and the tanh (16 us),
// w3's before the matmul that precedes it (a relu alone is 8 us).
// NEAR-LABEL: func.func @train_micro_step
// NEAR: %[[T1:.*]] = zero.all_gather_start
// NEAR-NEXT: zero.wait %[[T1]]
// NEAR: graph.matmul
// NEAR-NEXT: zero.release
// NEAR-NEXT: zero.param_shard @w2
// NEAR-NEXT: %[[T2:.*]] = zero.all_gather_start
// NEAR-NEXT: graph.relu
// NEAR-NEXT: graph.tanh
// NEAR-NEXT: zero.wait %[[T2]]
// NEAR-NEXT: zero.view
// NEAR-NEXT: zero.param_shard @w3
// NEAR-NEXT: %[[T3:.*]] = zero.all_gather_start
// NEAR-NEXT: graph.matmul
// NEAR-NEXT: graph.relu
// NEAR-NEXT: zero.wait %[[T3]]

// Just over 80 us: the ops between w1's start and w2's first use add up to
// exactly 80, so w2's gather starts right after w1's (two in flight); w3's
// covers the matmul and relu before it (72) and goes on to right after
// w2's start.
// MID-LABEL: func.func @train_micro_step
// MID: %[[T1:.*]] = zero.all_gather_start
// MID-NEXT: zero.param_shard @w2
// MID-NEXT: %[[T2:.*]] = zero.all_gather_start
// MID-NEXT: zero.wait %[[T1]]
// MID: graph.matmul
// MID-NEXT: zero.release
// MID-NEXT: zero.param_shard @w3
// MID-NEXT: %[[T3:.*]] = zero.all_gather_start
// MID-NEXT: graph.relu
// MID: zero.wait %[[T2]]
// MID: zero.wait %[[T3]]

// A slow link: every gather starts at the top, all three in flight.
// DEEP-LABEL: func.func @train_micro_step
// DEEP: zero.all_gather_start
// DEEP-NEXT: zero.param_shard @w2
// DEEP-NEXT: zero.all_gather_start
// DEEP-NEXT: zero.param_shard @w3
// DEEP-NEXT: zero.all_gather_start
// DEEP-NEXT: zero.wait

// prefetch-bucket-size bounds the elements in flight together: 32 lets two
// 16-element gathers travel at once (w3 waits for w1's wait), 16 one.
// TWO-LABEL: func.func @train_micro_step
// TWO: %[[T1:.*]] = zero.all_gather_start
// TWO-NEXT: zero.param_shard @w2
// TWO-NEXT: zero.all_gather_start
// TWO-NEXT: zero.wait %[[T1]]
// TWO-NEXT: zero.param_shard @w3
// TWO-NEXT: zero.all_gather_start
// ONE-LABEL: func.func @train_micro_step
// ONE: %[[T1:.*]] = zero.all_gather_start
// ONE-NEXT: zero.wait %[[T1]]
// ONE-NEXT: zero.param_shard @w2
// ONE-NEXT: %[[T2:.*]] = zero.all_gather_start
// ONE: zero.wait %[[T2]]
// ONE-NEXT: zero.param_shard @w3
// ONE-NEXT: zero.all_gather_start
