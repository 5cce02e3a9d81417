// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=2 world-size=2' --canonicalize --zero-plan-buffers | FileCheck %s
// RUN: zeroc-opt %s --zero-autodiff --zero-partition='stage=2 world-size=2' --canonicalize --zero-plan-buffers | zeroc-opt --zero-step-boundary --zero-plan-buffers | zeroc-translate --emit-cpu | FileCheck %s --check-prefix=CXX

// Tests zero-plan-buffers' pack renaming: a zero.pack of one gradient that
// fills its flat buffer exactly (no padding) and that nothing else reads
// needs no arena buffer and no copy: the buffer is the gradient's storage
// (the reduce-scatter reads it there). @w's 4x16 gradient fills a 64-element
// buffer at 2 ranks; @b's 3 elements pad to 4, so its pack has a buffer.
graph.param trainable @w = dense<0.5> : tensor<4x16xf32>
graph.param trainable @b = dense<0.5> : tensor<3xf32>
func.func @forward(%x: tensor<2x4xf32> {graph.input = "x"}) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<4x16xf32>
  %b = graph.load_param @b : tensor<3xf32>
  %y = graph.matmul %x, %w : tensor<2x4xf32>, tensor<4x16xf32> -> tensor<2x16xf32>
  %l = graph.reduce_mean %y {axes = [0, 1], keepdims = false} : tensor<2x16xf32> -> tensor<f32>
  %m = graph.reduce_mean %b {axes = [0], keepdims = false} : tensor<3xf32> -> tensor<f32>
  %s = graph.add %l, %m : tensor<f32>, tensor<f32> -> tensor<f32>
  return %s : tensor<f32>
}

// CHECK-LABEL: func.func @train_micro_step
// CHECK: zero.pack %{{.*}} {offsets = [0], zero.arena_offsets = [{{[0-9]+}}]} : (tensor<3xf32>) -> !zero.flat<grads, f32, 4, 2>
// CHECK: %[[GW:.*]] = graph.matmul {{.*}}zero.arena_offsets = [{{[0-9]+}}]{{.*}} -> tensor<4x16xf32>
// CHECK-NEXT: zero.pack %[[GW]] {offsets = [0]} : (tensor<4x16xf32>) -> !zero.flat<grads, f32, 64, 2>

// The renamed pack is a pointer copy.
// CXX-LABEL: part0(
// CXX: ZRT_TRY(zeroc_rt_k_matmul({{.*}}P(T([[G:V\[[0-9]+\]]], ZEROC_RT_DTYPE_F32, 2, {4, 16}))));
// CXX-NEXT: [[P:V\[[0-9]+\]]] = [[G]];
// CXX: zeroc_rt_comm_reduce_scatter(comm, [[P]],
