// RUN: zeroc-opt %s --zero-train-pipeline='stage=1 world-size=2 target=cuda' | zeroc-translate --emit-cuda | FileCheck %s --check-prefix=F32
// RUN: zeroc-opt %s --zero-train-pipeline='stage=1 world-size=2 precision=bf16 target=cuda' | zeroc-translate --emit-cuda | FileCheck %s --check-prefix=BF16

// Tests how a fused elementwise kernel reads and writes 16 bytes at a
// time: each thread takes a chunk of 16 bytes' elements (4 f32, 8 bf16)
// from an index that is a multiple of it, when the result's elements are
// a multiple of it (48 here). An input that has the chunk's elements at
// consecutive offsets (the result's shape; the bias [12] when 12 is a
// multiple of the chunk: f32, not bf16) is one 16-byte load, the others
// (the bias in bf16, the column [4, 1]) are read element by element at
// their broadcast offsets, the scalar once at the kernel's top, and every
// result is one 16-byte store. The chunks are taken only when all those pointers are 16-byte
// aligned; else the loop over single elements runs, with the same code
// for each element.
graph.param trainable @w = dense<0.5> : tensor<8x12xf32>
graph.param trainable @b = dense<0.1> : tensor<12xf32>
graph.param trainable @c = dense<0.2> : tensor<4x1xf32>
func.func @forward(%x: tensor<4x8xf32> {graph.input = "x"}) -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<8x12xf32>
  %b = graph.load_param @b : tensor<12xf32>
  %c = graph.load_param @c : tensor<4x1xf32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %y = graph.matmul %x, %w : tensor<4x8xf32>, tensor<8x12xf32> -> tensor<4x12xf32>
  %z = graph.add %y, %b : tensor<4x12xf32>, tensor<12xf32> -> tensor<4x12xf32>
  %s = graph.mul %z, %c : tensor<4x12xf32>, tensor<4x1xf32> -> tensor<4x12xf32>
  %t = graph.tanh %s : tensor<4x12xf32>
  %h = graph.mul %t, %half : tensor<4x12xf32>, tensor<f32> -> tensor<4x12xf32>
  %e = graph.exp %h : tensor<4x12xf32>
  %l = graph.reduce_mean %e {axes = [0, 1], keepdims = false} : tensor<4x12xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// F32: // graph.fused_elementwise: 5 ops, 48 elements, yields 3
// F32-NEXT: ZRT_GLOBAL void [[K:fused[0-9]+]](const float *in0, const float *in1, const float *in2, const float *in3, float *out0, float *out1, float *out2, int64_t n) {
// F32-NEXT: namespace z = zeroc_rt::cuda;
// F32-NEXT: using zc = z::Compute<float>::type;
// F32-NEXT: const zc in3_0 = z::load(in3[0]);
// F32-NEXT: if (z::aligned16(in0, in1, out0, out1, out2)) {
// F32-NEXT: for (int64_t c = z::gridFirst(); c < n / 4; c += z::gridStride()) {
// F32-NEXT: const int64_t i0 = c * 4;
// F32-NEXT: const z::Chunk<float> r0 = z::loadChunk(in0 + i0);
// F32-NEXT: const z::Chunk<float> r1 = z::loadChunk(in1 + (i0 % 12));
// F32-NEXT: z::Chunk<float> w0, w1, w2;
// F32-NEXT: ZRT_UNROLL
// F32-NEXT: for (int j = 0; j < 4; ++j) {
// F32-NEXT: {{\[\[maybe_unused\]\]}} const int64_t i = i0 + j;
// F32-NEXT: const zc a0 = z::load(r0.e[j]);
// F32-NEXT: const zc a1 = z::load(r1.e[j]);
// F32-NEXT: const zc a2 = z::load(in2[i / 12]);
// F32-NEXT: const zc a3 = in3_0;
// F32-NEXT: const zc v0 = z::roundTo<float>(z::binaryOf(ZEROC_RT_BINARY_ADD, a0, a1));
// F32: w0.e[j] = z::storeD<float>(v0);
// F32-NEXT: w1.e[j] = z::storeD<float>(v2);
// F32-NEXT: w2.e[j] = z::storeD<float>(v4);
// F32-NEXT: }
// F32-NEXT: z::storeChunk(out0 + i0, w0);
// F32-NEXT: z::storeChunk(out1 + i0, w1);
// F32-NEXT: z::storeChunk(out2 + i0, w2);
// F32-NEXT: }
// F32-NEXT: return;
// F32-NEXT: }
// F32-NEXT: for (int64_t i = z::gridFirst(); i < n; i += z::gridStride()) {
// F32-NEXT: const zc a0 = z::load(in0[i]);
// F32-NEXT: const zc a1 = z::load(in1[i % 12]);
// F32-NEXT: const zc a2 = z::load(in2[i / 12]);
// F32-NEXT: const zc a3 = in3_0;
// F32: out2[i] = z::storeD<float>(v4);
// F32-NEXT: }
// F32-NEXT: }
// The launch: a thread per chunk, n the elements.
// F32: launch([[K]], zeroc_rt::cuda::blocksFor(12), zeroc_rt::cuda::kBlock, {{.*}}, (int64_t)48), "[[K]]"));

// BF16: // graph.fused_elementwise: 5 ops, 48 elements, yields 3
// BF16: if (z::aligned16(in0, out0, out1, out2)) {
// BF16-NEXT: for (int64_t c = z::gridFirst(); c < n / 8; c += z::gridStride()) {
// BF16-NEXT: const int64_t i0 = c * 8;
// BF16-NEXT: const z::Chunk<zeroc_rt::cuda::BF16> r0 = z::loadChunk(in0 + i0);
// BF16-NEXT: z::Chunk<zeroc_rt::cuda::BF16> w0, w1, w2;
// BF16: const zc a0 = z::load(r0.e[j]);
// BF16-NEXT: const zc a1 = z::load(in1[i % 12]);
// BF16: launch({{fused[0-9]+}}, zeroc_rt::cuda::blocksFor(6), zeroc_rt::cuda::kBlock, {{.*}}, (int64_t)48), "{{fused[0-9]+}}"));
