// RUN: zeroc-opt %s --zero-train-pipeline='stage=0 world-size=1 target=cuda' | zeroc-translate --emit-cuda | FileCheck %s

// Tests a fused dropout and where: the where's i1 condition is a byte
// input, read at its broadcast offset. The kernel takes the mask's key as a parameter,
// made at the launch from the op's seed and the micro-step's dropout
// counter as zeroc_rt_k_dropout's call makes it, and computes each element
// with the runtime's dropoutOf at the element's index; the backward pass's
// dropout of the gradient has the forward's seed.
graph.param trainable @w = dense<0.5> : tensor<4x3xf32>
graph.param trainable @b = dense<0.1> : tensor<3xf32>
func.func @forward(%x: tensor<2x4xf32> {graph.input = "x"}) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<4x3xf32>
  %b = graph.load_param @b : tensor<3xf32>
  %y = graph.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %z = graph.add %y, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %d = graph.dropout %z {ratio = 0.25 : f64, seed = 9 : i64, training = true} : tensor<2x3xf32>
  %m = graph.constant dense<[true, false, true]> : tensor<3xi1>
  %lo = graph.constant dense<-1.0> : tensor<f32>
  %k = graph.where %m, %d, %lo : tensor<3xi1>, tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  %t = graph.tanh %k : tensor<2x3xf32>
  %l = graph.reduce_mean %t {axes = [0, 1], keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK: // graph.fused_elementwise: 4 ops, 6 elements, yields 1
// CHECK-NEXT: ZRT_GLOBAL void [[FWD:fused[0-9]+]](const float *in0, const float *in1, const unsigned char *in2, const float *in3, uint64_t key0, float *out0, int64_t n) {
// CHECK: const bool a2 = in2[i % 3] != 0;
// CHECK: const zc v0 = z::roundTo<float>(z::binaryOf(ZEROC_RT_BINARY_ADD, a0, a1));
// CHECK-NEXT: const zc v1 = z::roundTo<float>(z::load(z::dropoutOf<float>(v0, i, 0.25, z::dropoutKeepScale(0.25), key0)));
// CHECK-NEXT: const zc v2 = z::roundTo<float>(a2 ? v1 : a3);
// CHECK-NEXT: const zc v3 = z::roundTo<float>(z::unaryOf(ZEROC_RT_UNARY_TANH, v2));
// CHECK: // graph.fused_elementwise: 3 ops, 6 elements, yields 1
// CHECK-NEXT: ZRT_GLOBAL void [[BWD:fused[0-9]+]](const float *in0, const float *in1, const unsigned char *in2, const float *in3, uint64_t key0, float *out0, int64_t n) {
// CHECK: derivativeOf(ZEROC_RT_UNARY_TANH
// CHECK-NEXT: a2 ? v0 : a3
// CHECK-NEXT: z::dropoutOf<float>(v1, i, 0.25, z::dropoutKeepScale(0.25), key0)
// CHECK: launch([[FWD]], zeroc_rt::cuda::blocksFor(6), zeroc_rt::cuda::kBlock, (const float *)(V[{{[0-9]+}}]), (const float *)(V[{{[0-9]+}}]), (const unsigned char *)(V[{{[0-9]+}}]), (const float *)(V[{{[0-9]+}}]), zeroc_rt::cuda::dropoutKey([[SEED:[0-9]+]]ull, zeroc_rt_engine_dropout_counter(e)), (float *)(V[{{[0-9]+}}]), (int64_t)6), "[[FWD]]"));
// CHECK: launch([[BWD]], {{.*}}, zeroc_rt::cuda::dropoutKey([[SEED]]ull, zeroc_rt_engine_dropout_counter(e)), (float *)(V[{{[0-9]+}}]), (int64_t)6), "[[BWD]]"));
