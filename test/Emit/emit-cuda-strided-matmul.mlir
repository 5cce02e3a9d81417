// RUN: zeroc-opt %s --zero-train-pipeline='stage=0 world-size=1 target=cuda' | FileCheck %s --check-prefix=IR
// RUN: zeroc-opt %s --zero-train-pipeline='stage=0 world-size=1 target=cuda' | zeroc-translate --emit-cuda | FileCheck %s
// RUN: zeroc-opt %s --zero-train-pipeline='stage=0 world-size=1' | FileCheck %s --check-prefix=CPU
// RUN: zeroc-opt %s --zero-train-pipeline='stage=0 world-size=1 target=cuda' | not zeroc-translate --emit-cpu 2>&1 | FileCheck %s --check-prefix=CPU-EMIT

// Tests attention's head split in the CUDA pipeline (zero-fold-matmul-views)
// and its calls: B=2, T=4, H=2, D=3. q, k and v, slices of the QKV
// projection reshaped and transposed, are strided views of it in the
// forward and the backward products; each view is its input's pointer plus
// the offset in bytes, and each product reading one is a strided matmul
// call with the view's strides. The gradients of q, k and v, transposed
// back to [B, T, H, D], are stored so by their GEMMs (result_perm): the
// call describes the product and writes it at the strides of the
// transposed tensor. The CPU pipeline keeps the copies, and the
// CPU emitter refuses a strided view (its runtime's GEMMs read dense
// tensors).
graph.param trainable @w = dense<0.25> : tensor<6x18xf32>
func.func @forward(%x: tensor<2x4x6xf32> {graph.input = "x"}) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<6x18xf32>
  %qkv = graph.matmul %x, %w : tensor<2x4x6xf32>, tensor<6x18xf32> -> tensor<2x4x18xf32>
  %q0 = graph.slice %qkv {starts = [0, 0, 0], ends = [2, 4, 6], steps = [1, 1, 1]} : tensor<2x4x18xf32> -> tensor<2x4x6xf32>
  %k0 = graph.slice %qkv {starts = [0, 0, 6], ends = [2, 4, 12], steps = [1, 1, 1]} : tensor<2x4x18xf32> -> tensor<2x4x6xf32>
  %v0 = graph.slice %qkv {starts = [0, 0, 12], ends = [2, 4, 18], steps = [1, 1, 1]} : tensor<2x4x18xf32> -> tensor<2x4x6xf32>
  %q1 = graph.reshape %q0 : tensor<2x4x6xf32> -> tensor<2x4x2x3xf32>
  %k1 = graph.reshape %k0 : tensor<2x4x6xf32> -> tensor<2x4x2x3xf32>
  %v1 = graph.reshape %v0 : tensor<2x4x6xf32> -> tensor<2x4x2x3xf32>
  %q = graph.transpose %q1 {perm = [0, 2, 1, 3]} : tensor<2x4x2x3xf32> -> tensor<2x2x4x3xf32>
  %k = graph.transpose %k1 {perm = [0, 2, 3, 1]} : tensor<2x4x2x3xf32> -> tensor<2x2x3x4xf32>
  %v = graph.transpose %v1 {perm = [0, 2, 1, 3]} : tensor<2x4x2x3xf32> -> tensor<2x2x4x3xf32>
  %s = graph.matmul %q, %k : tensor<2x2x4x3xf32>, tensor<2x2x3x4xf32> -> tensor<2x2x4x4xf32>
  %p = graph.softmax %s {axis = 3 : i64} : tensor<2x2x4x4xf32>
  %o = graph.matmul %p, %v : tensor<2x2x4x4xf32>, tensor<2x2x4x3xf32> -> tensor<2x2x4x3xf32>
  %l = graph.reduce_mean %o {axes = [0, 1, 2, 3], keepdims = false} : tensor<2x2x4x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// IR-LABEL: func.func @train_micro_step
// IR-NOT: graph.slice
// IR-DAG: %[[Q:.*]] = graph.strided_view %[[QKV:[0-9]+]] {offset = 0 : i64, strides = array<i64: 72, 3, 18, 1>}
// IR-DAG: %[[K:.*]] = graph.strided_view %[[QKV]] {offset = 6 : i64, strides = array<i64: 72, 3, 1, 18>}
// IR-DAG: %[[V:.*]] = graph.strided_view %[[QKV]] {offset = 12 : i64, strides = array<i64: 72, 3, 18, 1>}
// IR: graph.matmul %[[Q]], %[[K]]
// IR: graph.matmul %{{.*}}, %[[V]]
// IR: graph.matmul %{{.*}}, %[[V]] {transB = true
// IR: graph.matmul %{{.*}}, %{{.*}} {result_perm = array<i64: 0, 2, 1, 3>, transA = true, {{.*}}} : tensor<2x2x4x4xf32>, tensor<2x2x4x3xf32> -> tensor<2x4x2x3xf32>
// IR: graph.matmul %{{.*}}, %[[K]] {result_perm = array<i64: 0, 2, 1, 3>, transB = true, {{.*}}} : tensor<2x2x4x4xf32>, tensor<2x2x3x4xf32> -> tensor<2x4x2x3xf32>
// IR: graph.matmul %[[Q]], %{{.*}} {result_perm = array<i64: 0, 3, 1, 2>, transA = true, {{.*}}} : tensor<2x2x4x3xf32>, tensor<2x2x4x4xf32> -> tensor<2x4x2x3xf32>
// IR-NOT: graph.transpose
// IR-LABEL: func.func @train_step

// CHECK-LABEL: part0(
// CHECK: V{{\[}}[[QKV:[0-9]+]]{{\]}} = A + {{[0-9]+}};
// CHECK: V{{\[}}[[Q:[0-9]+]]{{\]}} = V{{\[}}[[QKV]]{{\]}} + 0;
// CHECK-NEXT: V{{\[}}[[K:[0-9]+]]{{\]}} = V{{\[}}[[QKV]]{{\]}} + 24;
// CHECK-NEXT: V{{\[}}[[V:[0-9]+]]{{\]}} = V{{\[}}[[QKV]]{{\]}} + 48;
// CHECK: { static const int64_t lhs_strides[] = {72, 3, 18, 1}, rhs_strides[] = {72, 3, 1, 18};
// CHECK-NEXT: ZRT_TRY(zeroc_rt_cuda_k_matmul_strided(P(T(V{{\[}}[[Q]]{{\]}}, ZEROC_RT_DTYPE_F32, 4, {2, 2, 4, 3})), lhs_strides, P(T(V{{\[}}[[K]]{{\]}}, ZEROC_RT_DTYPE_F32, 4, {2, 2, 3, 4})), rhs_strides, 0, 0, P(T({{.*}})), nullptr));
// CHECK-NEXT: {{^ *}}}{{$}}
// CHECK: { static const int64_t rhs_strides[] = {72, 3, 18, 1};
// CHECK-NEXT: ZRT_TRY(zeroc_rt_cuda_k_matmul_strided(P(T({{.*}})), nullptr, P(T(V{{\[}}[[V]]{{\]}}, ZEROC_RT_DTYPE_F32, 4, {2, 2, 4, 3})), rhs_strides, 0, 0, P(T(
// CHECK: zeroc_rt_cuda_k_matmul_strided(P(T({{.*}})), nullptr, P(T(V{{\[}}[[V]]{{\]}}, {{.*}})), rhs_strides, 0, 1, P(T(
// The gradient of v stored as [B, T, H, D]: the product's dims, the
// transposed tensor's strides.
// CHECK: { static const int64_t out_strides[] = {24, 3, 6, 1};
// CHECK-NEXT: ZRT_TRY(zeroc_rt_cuda_k_matmul_strided({{.*}}, nullptr, 1, 0, P(T(V{{\[[0-9]+\]}}, ZEROC_RT_DTYPE_F32, 4, {2, 2, 4, 3})), out_strides));
// CHECK: { static const int64_t rhs_strides[] = {72, 3, 1, 18}, out_strides[] = {24, 3, 6, 1};
// The gradient of k: a [D, T] product per head stored column-major.
// CHECK: { static const int64_t lhs_strides[] = {72, 3, 18, 1}, out_strides[] = {24, 3, 1, 6};
// CHECK-NEXT: ZRT_TRY(zeroc_rt_cuda_k_matmul_strided({{.*}}, 1, 0, P(T(V{{\[[0-9]+\]}}, ZEROC_RT_DTYPE_F32, 4, {2, 2, 3, 4})), out_strides));

// CPU-LABEL: func.func @train_micro_step
// CPU-NOT: graph.strided_view
// CPU: graph.transpose

// CPU-EMIT: error: 'graph.matmul' op is not supported by the CPU target yet: its runtime has no matmul_strided kernel
