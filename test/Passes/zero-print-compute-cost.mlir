// RUN: zeroc-opt %s -zero-print-compute-cost='gflops=1000 memory-gb-per-s=100' -o /dev/null | FileCheck %s
// RUN: zeroc-opt %s -zero-print-compute-cost='gflops=1000 memory-gb-per-s=100 by-node=true' -o /dev/null | FileCheck %s --check-prefix=NODE

// Tests the table: per op name, most costly first, the FLOPs (a GEMM's
// 2MNK, 2*256*1024*512 = 0.268 GFLOP; one per result element otherwise)
// and bytes (every operand and result once: the GEMM's 256x512, 512x1024
// and 256x1024 f32 are 3.67 MB), each op's time the longer of the two at
// the given rate and bandwidth (the GEMM: 268.4 us of FLOPs over 36.7 us
// of bytes; a fused op: 2.1 MB, 21.0 us), a fused op counted once and not
// its body's ops, a reshape (which only names memory) and a concat whose
// operands were written in its storage (zero.operands_in_place) not at all.
// CHECK: // @step: each op's FLOPs and bytes (operands and results), its time at 1000 GFLOP/s or 100 GB/s, whichever is longer
// CHECK-NEXT: //   op                                        count        GFLOP         GB         us
// CHECK-NEXT: //   graph.gemm                                    1          0.3      0.004      268.4
// CHECK-NEXT: //   graph.fused_elementwise                       2          0.0      0.004       41.9
// CHECK-NEXT: //   total                                         3          0.3      0.008      310.4
// CHECK-NOT: graph.reshape
// CHECK-NOT: graph.exp
// CHECK-NOT: graph.concat
// With by-node, one row per op name and ONNX node (the name the trainer's
// trace gives the op); an op without a node's name keeps its op name.
// NODE: //   graph.gemm /layer/MatMul                      1          0.3      0.004      268.4
// NODE-NEXT: //   graph.fused_elementwise /layer/Exp            1          0.0      0.002       21.0
// NODE-NEXT: //   graph.fused_elementwise                       1          0.0      0.002       21.0
// NODE-NEXT: //   total                                         3          0.3      0.008      310.4
func.func @step(%a: tensor<256x512xf32>, %b: tensor<512x1024xf32>) -> tensor<262144xf32> {
  %c = graph.gemm %a, %b : (tensor<256x512xf32>, tensor<512x1024xf32>) -> tensor<256x1024xf32> loc("/layer/MatMul")
  %e = graph.fused_elementwise %c : (tensor<256x1024xf32>) -> tensor<256x1024xf32> {
  ^bb0(%x: tensor<256x1024xf32>):
    %0 = graph.exp %x : tensor<256x1024xf32>
    graph.yield %0 : tensor<256x1024xf32>
  } loc(fused["/layer/Exp", unknown])
  %f = graph.fused_elementwise %e : (tensor<256x1024xf32>) -> tensor<256x1024xf32> {
  ^bb0(%x: tensor<256x1024xf32>):
    %0 = graph.neg %x : tensor<256x1024xf32>
    graph.yield %0 : tensor<256x1024xf32>
  }
  %r = graph.reshape %f : tensor<256x1024xf32> -> tensor<262144xf32>
  %in = graph.concat %r, %r {axis = 0 : i64, zero.operands_in_place} : (tensor<262144xf32>, tensor<262144xf32>) -> tensor<524288xf32>
  return %r : tensor<262144xf32>
}

// A fused attention's FLOPs are its kernels' matrix products, 2 FLOPs per
// (query, key) pair and head element each: the forward kernel's 2 (q kt
// and p v: 2 * 2 * 8*12*64 * 1024*1024 = 25.8 GFLOP), over the lower
// triangle's 1024*1025/2 pairs when causal (12.9 GFLOP), and the
// gradient's 5 for a head of 64, whose kernels walk the scores once (q kt,
// dout vt, dq, dk and dv: 32.2 GFLOP causal), 7 for a head of 128 (q kt
// and dout vt in each of its two kernels: 2 * 7 * 2*4*128 * 1024*1025/2 =
// 7.5 GFLOP).
// CHECK: // @attention: each op's FLOPs
// CHECK-NEXT: //   op
// CHECK-NEXT: //   graph.fused_attention                         2         38.7      0.101    38667.3
// CHECK-NEXT: //   graph.fused_attention_grad                    1         32.2      0.101    32243.7
// CHECK: // @attention_head128: each op's FLOPs
// CHECK-NEXT: //   op
// CHECK-NEXT: //   graph.fused_attention_grad                    1          7.5
func.func @attention(%q: tensor<8x12x1024x64xbf16>, %kt: tensor<8x12x64x1024xbf16>, %v: tensor<8x12x1024x64xbf16>, %g: tensor<8x12x1024x64xbf16>) -> (tensor<8x12x1024x64xbf16>, tensor<8x12x1024x64xbf16>, tensor<8x12x1024x64xbf16>) {
  %o, %l = graph.fused_attention %q, %kt, %v : (tensor<8x12x1024x64xbf16>, tensor<8x12x64x1024xbf16>, tensor<8x12x1024x64xbf16>) -> (tensor<8x12x1024x64xbf16>, tensor<8x12x1024xf32>) {
  ^bb0(%s: tensor<8x12x1024x1024xbf16>):
    graph.yield %s : tensor<8x12x1024x1024xbf16>
  }
  %co, %cl = graph.fused_attention %q, %kt, %v {causal} : (tensor<8x12x1024x64xbf16>, tensor<8x12x64x1024xbf16>, tensor<8x12x1024x64xbf16>) -> (tensor<8x12x1024x64xbf16>, tensor<8x12x1024xf32>) {
  ^bb0(%s: tensor<8x12x1024x1024xbf16>):
    graph.yield %s : tensor<8x12x1024x1024xbf16>
  }
  %dq, %dkt, %dv, %delta = graph.fused_attention_grad %q, %kt, %v, %co, %cl, %g prologue() epilogue() {causal} : (tensor<8x12x1024x64xbf16>, tensor<8x12x64x1024xbf16>, tensor<8x12x1024x64xbf16>, tensor<8x12x1024x64xbf16>, tensor<8x12x1024xf32>, tensor<8x12x1024x64xbf16>) -> (tensor<8x12x1024x64xbf16>, tensor<8x12x64x1024xbf16>, tensor<8x12x1024x64xbf16>, tensor<8x12x1024xf32>) {
  ^bb0(%s: tensor<8x12x1024x1024xbf16>):
    graph.yield %s : tensor<8x12x1024x1024xbf16>
  } {
  ^bb0(%s: tensor<8x12x1024x1024xbf16>):
    graph.yield %s : tensor<8x12x1024x1024xbf16>
  }
  return %o, %dq, %dv : tensor<8x12x1024x64xbf16>, tensor<8x12x1024x64xbf16>, tensor<8x12x1024x64xbf16>
}

func.func @attention_head128(%q: tensor<2x4x1024x128xbf16>, %kt: tensor<2x4x128x1024xbf16>, %v: tensor<2x4x1024x128xbf16>, %o: tensor<2x4x1024x128xbf16>, %l: tensor<2x4x1024xf32>, %g: tensor<2x4x1024x128xbf16>) -> tensor<2x4x1024x128xbf16> {
  %dq, %dkt, %dv, %delta = graph.fused_attention_grad %q, %kt, %v, %o, %l, %g prologue() epilogue() {causal} : (tensor<2x4x1024x128xbf16>, tensor<2x4x128x1024xbf16>, tensor<2x4x1024x128xbf16>, tensor<2x4x1024x128xbf16>, tensor<2x4x1024xf32>, tensor<2x4x1024x128xbf16>) -> (tensor<2x4x1024x128xbf16>, tensor<2x4x128x1024xbf16>, tensor<2x4x1024x128xbf16>, tensor<2x4x1024xf32>) {
  ^bb0(%s: tensor<2x4x1024x1024xbf16>):
    graph.yield %s : tensor<2x4x1024x1024xbf16>
  } {
  ^bb0(%s: tensor<2x4x1024x1024xbf16>):
    graph.yield %s : tensor<2x4x1024x1024xbf16>
  }
  return %dq : tensor<2x4x1024x128xbf16>
}

// The training state ops move more than their operands. A gradient
// accumulation reads its gradient (a shard of 1M bf16: 2 MiB) and writes
// its f32 accumulator (4 MiB), which it also reads after the first of the
// step's 2 micro-steps (2 MiB on average): 8 MiB, 83.9 us; a rows
// accumulation reads its rows (1M bf16: 2 MiB) and indices (32 KiB) and
// reads and writes their accumulator elements (8 MiB): 10.03 MiB, 105.2
// us, its gathering of every rank's rows aside; the collectives (start,
// wait, release) are the communication model's. Adam
// reads the f32 accumulator (4 MiB), reads and writes the master copy and
// both moments (24 MiB) and writes the bf16 copy (2 MiB): 30 MiB; SGD with
// momentum on an f32 parameter (its own master) 4 + 16 MiB.
// CHECK: // @micro: each op's FLOPs
// CHECK-NEXT: //   op
// CHECK-NEXT: //   zero.grad_accumulate_rows                     1          0.0      0.011      105.2
// CHECK-NEXT: //   zero.grad_accumulate                          1          0.0      0.008       83.9
// CHECK-NEXT: //   total                                         2          0.0      0.019      189.1
// CHECK: // @train_step: each op's FLOPs
// CHECK-NEXT: //   op
// CHECK-NEXT: //   zero.adam_update                              1          0.0      0.031      314.6
// CHECK-NEXT: //   zero.sgd_update                               1          0.0      0.021      209.7
graph.param trainable @w master(f32) = dense<0.5> : tensor<2097152xbf16>
graph.param trainable @v = dense<0.5> : tensor<2097152xf32>
graph.param trainable @e master(f32) = dense<0.5> : tensor<8192x256xbf16>
func.func @micro(%s: !zero.shard<grads, bf16, 1048576, device>, %rows: tensor<4096x256xbf16>, %i: tensor<4096xi64>) {
  zero.grad_accumulate @w, %s : !zero.shard<grads, bf16, 1048576, device>
  zero.grad_accumulate_rows @e, %rows, %i : tensor<4096x256xbf16>, tensor<4096xi64>
  %p = zero.param_shard @w : !zero.shard<params, bf16, 1048576, device>
  %g = zero.all_gather_start %p : !zero.shard<params, bf16, 1048576, device> -> !zero.token<!zero.flat<params, bf16, 2097152, 2>>
  %f = zero.wait %g : !zero.token<!zero.flat<params, bf16, 2097152, 2>> -> !zero.flat<params, bf16, 2097152, 2>
  zero.release %f : !zero.flat<params, bf16, 2097152, 2>
  return
}
func.func @train_step() attributes {zero.micro_steps = 2 : i64} {
  %f = graph.constant dense<1.0> : tensor<f64>
  %lr = graph.constant dense<1.0e-3> : tensor<f64>
  %b1 = graph.constant dense<0.9> : tensor<f64>
  %b2 = graph.constant dense<0.999> : tensor<f64>
  %t = zero.step_count : tensor<i64>
  %gw = zero.grad_accumulator @w : !zero.shard<grads, f32, 1048576, device>
  %gv = zero.grad_accumulator @v : !zero.shard<grads, f32, 1048576, device>
  %ge = zero.grad_accumulator @e : !zero.shard<grads, f32, 1048576, device>
  zero.adam_update @w, %gw, %f, %lr, %b1, %b2, %t {optimizer = #zero.adam<>} : !zero.shard<grads, f32, 1048576, device>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<i64>
  zero.sgd_update @v, %gv, %f, %lr, %t {optimizer = #zero.sgd<momentum = 9.000000e-01>} : !zero.shard<grads, f32, 1048576, device>, tensor<f64>, tensor<f64>, tensor<i64>
  return
}
