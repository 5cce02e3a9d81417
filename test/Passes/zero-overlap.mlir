// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=3 world-size=2 persistence-threshold=0' --zero-overlap='prefetch-bucket-size=16' --zero-verify-partition | FileCheck %s
// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=2 world-size=2' --zero-overlap --zero-verify-partition | FileCheck %s --check-prefix=RS
// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=3 world-size=2 persistence-threshold=0' --zero-overlap --zero-verify-partition | FileCheck %s --check-prefix=RS
// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=1 world-size=2' --zero-overlap | FileCheck %s --check-prefix=S1
// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=3 world-size=2 persistence-threshold=0' --zero-overlap='max-live-parameters=31' --zero-verify-partition | FileCheck %s --check-prefix=LIVE31
// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=3 world-size=2 persistence-threshold=0' --zero-overlap='max-live-parameters=32 prefetch-bucket-size=16' --zero-verify-partition | FileCheck %s
// RUN: not zeroc-opt %s --zero-autodiff --zero-partition='stage=3 world-size=2 persistence-threshold=0' --zero-overlap='max-live-parameters=-1' 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: not zeroc-opt %s --zero-overlap 2>&1 | FileCheck %s --check-prefix=ERR

// Tests zero-overlap's schedule at stage 3: every gather becomes a start and
// a wait; the wait is where the gather was (before the first use), and each
// start after the first moves up, with the shard read it sends, as far as
// the compute cost model asks (here all the way: these ops are tiny), to
// right after the previous wait when prefetch-bucket-size leaves no room
// for two gathers in flight, so it travels during the previous layer's
// compute (zero-overlap-cost.mlir tests the cost model).
graph.param trainable @w1 = dense<0.5> : tensor<4x4xf32>
graph.param trainable @w2 = dense<0.25> : tensor<4x4xf32>
func.func @forward(%x: tensor<2x4xf32> {graph.input = "x"}) -> (tensor<f32> {graph.loss}) {
  %w1 = graph.load_param @w1 : tensor<4x4xf32>
  %w2 = graph.load_param @w2 : tensor<4x4xf32>
  %y = graph.matmul %x, %w1 : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %r = graph.relu %y : tensor<2x4xf32>
  %z = graph.matmul %r, %w2 : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %l = graph.reduce_mean %z {axes = [0, 1], keepdims = false} : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK-LABEL: func.func @train_micro_step
// CHECK: %[[SH1:.*]] = zero.param_shard @w1
// CHECK-NEXT: %[[T1:.*]] = zero.all_gather_start %[[SH1]] : !zero.shard<params, f32, 8, device> -> !zero.token<!zero.flat<params, f32, 16, 2>>
// CHECK-NEXT: %[[F1:.*]] = zero.wait %[[T1]]
// CHECK-NEXT: %[[SH2:.*]] = zero.param_shard @w2
// CHECK-NEXT: %[[T2:.*]] = zero.all_gather_start %[[SH2]]
// CHECK: graph.matmul
// CHECK: zero.release %[[F1]]
// CHECK: %[[F2:.*]] = zero.wait %[[T2]]
// CHECK: zero.view %[[F2]]
// CHECK-NOT: zero.all_gather %

// Stages 2-3: each gradient reduce-scatter starts right after its pack;
// its wait and accumulation move to the next reduction's start (w2's
// reduction travels during w1's weight gradient), the last one's to the end.
// RS-LABEL: func.func @train_micro_step
// RS: %[[P2:.*]] = zero.pack
// RS-NEXT: %[[R2:.*]] = zero.reduce_scatter_start %[[P2]] {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 16, 2> -> !zero.token<!zero.shard<grads, f32, 8, device>>
// RS: graph.unary_grad
// RS: %[[P1:.*]] = zero.pack
// RS-NEXT: %[[A2:.*]] = zero.wait %[[R2]]
// RS-NEXT: zero.grad_accumulate @w2, %[[A2]]
// RS-NEXT: %[[R1:.*]] = zero.reduce_scatter_start %[[P1]]
// RS-NEXT: %[[A1:.*]] = zero.wait %[[R1]]
// RS-NEXT: zero.grad_accumulate @w1, %[[A1]]
// RS-NEXT: return
// RS-NOT: zero.reduce_scatter %

// Stages 0-1 reduce at the optimizer step: the micro-step has nothing to
// overlap.
// S1-LABEL: func.func @train_micro_step
// S1-NOT: _start
// S1-NOT: zero.wait

// max-live-parameters: prefetching w2's gather while w1's 16 gathered
// elements are alive keeps 32 alive; a limit of 31 stops w2's start right
// after w1's release (the relu still hides it), 32 allows the prefetch (the
// CHECK schedule above).
// LIVE31-LABEL: func.func @train_micro_step
// LIVE31-SAME: zero.max_live_parameters = 31
// LIVE31: %[[T1:.*]] = zero.all_gather_start
// LIVE31-NEXT: zero.wait %[[T1]]
// LIVE31: graph.matmul
// LIVE31-NEXT: zero.release
// LIVE31-NEXT: zero.param_shard @w2
// LIVE31-NEXT: %[[T2:.*]] = zero.all_gather_start
// LIVE31-NEXT: graph.relu
// LIVE31-NEXT: zero.wait %[[T2]]
// NEG: error: 'func.func' op zero-overlap: max-live-parameters and prefetch-bucket-size must be >= 0, got -1 and 50000000

// ERR: error: zero-overlap needs @train_micro_step and zero.stage (run zero-partition)
