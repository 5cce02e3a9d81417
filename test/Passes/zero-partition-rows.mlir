// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=2 world-size=2' --zero-verify-partition | FileCheck %s
// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=3 world-size=2 persistence-threshold=0' --zero-verify-partition | FileCheck %s
// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=1 world-size=2' --zero-verify-partition | FileCheck %s --check-prefix=S1
// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=2 world-size=16' --zero-verify-partition | FileCheck %s --check-prefix=W16

// Tests zero-partition's embedding rows at stages 2-3: the gradient of a
// lookup (graph.gather_grad, axis 0) reaches the ranks' shards as rows
// (zero.grad_accumulate_rows) when all ranks' rows are no more elements
// than the gradient (here 2 x 2 x 4 = 16 of 64 at 2 ranks). @wte is tied (the lookup and the head): its dense head
// gradient is reduce-scattered on its own, right where it is final; @emb
// is looked up only, so its rows are its one accumulation.
graph.param trainable @wte = dense<0.5> : tensor<16x4xf32>
graph.param trainable @emb = dense<0.25> : tensor<16x4xf32>
func.func @forward(%i: tensor<2xi64> {graph.input = "idx"}) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @wte : tensor<16x4xf32>
  %v = graph.load_param @emb : tensor<16x4xf32>
  %e = graph.gather %w, %i {axis = 0 : i64} : tensor<16x4xf32>, tensor<2xi64> -> tensor<2x4xf32>
  %f = graph.gather %v, %i {axis = 0 : i64} : tensor<16x4xf32>, tensor<2xi64> -> tensor<2x4xf32>
  %h = graph.add %e, %f : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %t = graph.transpose %w {perm = [1, 0]} : tensor<16x4xf32> -> tensor<4x16xf32>
  %y = graph.matmul %h, %t : tensor<2x4xf32>, tensor<4x16xf32> -> tensor<2x16xf32>
  %l = graph.reduce_mean %y {axes = [0, 1], keepdims = false} : tensor<2x16xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK-LABEL: func.func @train_micro_step
// The head's gradient: reduce-scattered as soon as it is computed.
// CHECK: graph.matmul {{.*}} -> tensor<4x16xf32>
// CHECK-NEXT: %[[HEAD:.*]] = graph.transpose {{.*}} -> tensor<16x4xf32>
// CHECK-NEXT: %[[P:.*]] = zero.pack %[[HEAD]]
// CHECK-NEXT: %[[S:.*]] = zero.reduce_scatter %[[P]]
// CHECK-NEXT: zero.grad_accumulate @wte, %[[S]] : !zero.shard<grads, f32, 32, device>
// CHECK-DAG: zero.grad_accumulate_rows @wte, %{{.*}}, %arg0 : tensor<2x4xf32>, tensor<2xi64>
// CHECK-DAG: zero.grad_accumulate_rows @emb, %{{.*}}, %arg0 : tensor<2x4xf32>, tensor<2xi64>
// CHECK-NOT: zero.grad_accumulate @emb
// CHECK: return

// Stage 1 reduces whole accumulators at the optimizer step: no rows.
// S1-LABEL: func.func @train_micro_step
// S1-NOT: grad_accumulate_rows
// S1: graph.gather_grad

// 16 ranks' rows (16 x 2 x 4 = 128 elements) are more than the gradient's
// 64: the gradient is reduce-scattered.
// W16-LABEL: func.func @train_micro_step
// W16-NOT: grad_accumulate_rows
// W16: zero.grad_accumulate @emb
