// RUN: zeroc-opt %s -split-input-file -zero-fuse-elementwise | FileCheck %s

// Tests a GELU written out (the erf form an ONNX export has) after a bias
// add: one fused op whose inputs are x, the broadcast bias and the scalar
// constants, in first-use order, and whose body is the chain in order.
// CHECK-LABEL: func.func @gelu
// CHECK-NEXT: %[[F:.*]] = graph.fused_elementwise %arg0, %arg1, %arg2, %arg3, %arg4 : (tensor<2x8xf32>, tensor<8xf32>, tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<2x8xf32> {
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<2x8xf32>, %[[B:.*]]: tensor<8xf32>, %[[S2:.*]]: tensor<f32>, %[[ONE:.*]]: tensor<f32>, %[[HALF:.*]]: tensor<f32>):
// CHECK-NEXT: %[[H:.*]] = graph.add %[[X]], %[[B]]
// CHECK-NEXT: %[[D:.*]] = graph.div %[[H]], %[[S2]]
// CHECK-NEXT: %[[E:.*]] = graph.erf %[[D]]
// CHECK-NEXT: %[[P:.*]] = graph.add %[[E]], %[[ONE]]
// CHECK-NEXT: %[[M:.*]] = graph.mul %[[H]], %[[P]]
// CHECK-NEXT: %[[Y:.*]] = graph.mul %[[M]], %[[HALF]]
// CHECK-NEXT: graph.yield %[[Y]] : tensor<2x8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[F]]
func.func @gelu(%x: tensor<2x8xf32>, %b: tensor<8xf32>, %sqrt2: tensor<f32>, %one: tensor<f32>, %half: tensor<f32>) -> tensor<2x8xf32> {
  %h = graph.add %x, %b : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  %d = graph.div %h, %sqrt2 : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
  %e = graph.erf %d : tensor<2x8xf32>
  %p = graph.add %e, %one : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
  %m = graph.mul %h, %p : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  %y = graph.mul %m, %half : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// Tests values that later ops read (the activations autodiff saves for the
// backward pass): the fused op yields them next to the chain's last value,
// and the later ops read its results.
// CHECK-LABEL: func.func @saved
// CHECK-NEXT: %[[F:.*]]:2 = graph.fused_elementwise %arg0 : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
// CHECK: %[[T:.*]] = graph.tanh
// CHECK-NEXT: %[[N:.*]] = graph.neg %[[T]]
// CHECK-NEXT: graph.yield %[[T]], %[[N]] : tensor<4xf32>, tensor<4xf32>
// CHECK: graph.softmax %[[F]]#0
// CHECK: return %[[F]]#1
func.func @saved(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %t = graph.tanh %x : tensor<4xf32>
  %n = graph.neg %t : tensor<4xf32>
  %s = graph.softmax %t {axis = 0 : i64} : tensor<4xf32>
  return %n, %s : tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests the chains that break: a value an op before the chain's end reads
// (the softmax between the exp and the add) ends it there, and ops of
// another shape make a group of their own.
// CHECK-LABEL: func.func @breaks
// CHECK-NEXT: %[[E:.*]] = graph.exp %arg0
// CHECK-NEXT: %[[S:.*]] = graph.softmax %[[E]]
// CHECK-NEXT: %[[F:.*]] = graph.fused_elementwise %[[E]], %[[S]], %arg1 : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK: graph.add
// CHECK-NEXT: graph.mul
// CHECK-NEXT: graph.yield
// CHECK: %[[W:.*]] = graph.fused_elementwise %arg1 : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: graph.relu
// CHECK-NEXT: graph.sqrt
// CHECK-NEXT: graph.yield
// CHECK: %[[O:.*]] = graph.add %arg0, %[[W]]
// CHECK-NEXT: return %[[F]], %[[O]]
func.func @breaks(%x: tensor<2x4xf32>, %v: tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %e = graph.exp %x : tensor<2x4xf32>
  %s = graph.softmax %e {axis = 1 : i64} : tensor<2x4xf32>
  %a = graph.add %e, %s : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %m = graph.mul %a, %v : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
  %r = graph.relu %v : tensor<4xf32>
  %w = graph.sqrt %r : tensor<4xf32>
  %o = graph.add %x, %w : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
  return %m, %o : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// Tests a chain across a zero.release of a gathered parameter buffer (stage
// 3): the fused op reads its inputs where the chain's last op stood, so the
// ops before the release stay out of it.
// CHECK-LABEL: func.func @release
// CHECK: %[[M:.*]] = graph.mul
// CHECK-NEXT: zero.release
// CHECK-NEXT: %[[F:.*]] = graph.fused_elementwise %[[M]]
// CHECK: graph.exp
// CHECK-NEXT: graph.neg
// CHECK-NEXT: graph.yield
func.func @release(%s: !zero.shard<params, f32, 4, device>, %x: tensor<8xf32>) -> tensor<8xf32> {
  %f = zero.all_gather %s : !zero.shard<params, f32, 4, device> -> !zero.flat<params, f32, 8, 2>
  %w = zero.view %f {offset = 0 : i64} : !zero.flat<params, f32, 8, 2> -> tensor<8xf32>
  %m = graph.mul %x, %w : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  zero.release %f : !zero.flat<params, f32, 8, 2>
  %e = graph.exp %m : tensor<8xf32>
  %n = graph.neg %e : tensor<8xf32>
  return %n : tensor<8xf32>
}

// -----

// Tests a gradient chain: unary_grad and the ops around it fuse; the
// integer and mixed-type ops (a cast, a compare) are no members.
// CHECK-LABEL: func.func @grad
// CHECK: graph.fused_elementwise %arg1, %arg2, %arg3
// CHECK: graph.unary_grad
// CHECK-NEXT: graph.mul
// CHECK-NEXT: graph.yield
// CHECK: graph.cast
// CHECK-NOT: graph.fused_elementwise
func.func @grad(%x: tensor<4xbf16>, %y: tensor<4xbf16>, %g: tensor<4xbf16>, %s: tensor<bf16>) -> (tensor<4xbf16>, tensor<4xf32>) {
  %gi = graph.unary_grad %g, y = %y {op = "tanh"} : tensor<4xbf16>
  %sc = graph.mul %gi, %s : tensor<4xbf16>, tensor<bf16> -> tensor<4xbf16>
  %c = graph.cast %sc : tensor<4xbf16> -> tensor<4xf32>
  return %sc, %c : tensor<4xbf16>, tensor<4xf32>
}

// -----

// Tests dropout in training mode (its mask is a function of the element
// index): it fuses with the bias add before it and the residual add after
// it; an evaluation-mode dropout is no member.
// CHECK-LABEL: func.func @dropout
// CHECK-NEXT: %[[F:.*]] = graph.fused_elementwise %arg0, %arg1, %arg2
// CHECK-NEXT: ^bb0
// CHECK-NEXT: graph.add
// CHECK-NEXT: graph.dropout %{{.*}} {ratio = 1.000000e-01 : f64, seed = 7 : i64, training = true}
// CHECK-NEXT: graph.add
// CHECK-NEXT: graph.yield
// CHECK: graph.dropout %[[F]] {ratio = 1.000000e-01 : f64, training = false}
func.func @dropout(%y: tensor<2x8xf32>, %b: tensor<8xf32>, %x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %h = graph.add %y, %b : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
  %d = graph.dropout %h {ratio = 0.1 : f64, seed = 7 : i64, training = true} : tensor<2x8xf32>
  %r = graph.add %d, %x : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  %e = graph.dropout %r {ratio = 0.1 : f64, training = false} : tensor<2x8xf32>
  return %e : tensor<2x8xf32>
}

// -----

// Tests a select (an attention's causal mask after its scaling): where
// fuses with its i1 condition as an input; the compare that makes an i1
// value is no member.
// CHECK-LABEL: func.func @where
// CHECK-NEXT: %[[C:.*]] = graph.compare
// CHECK-NEXT: %[[F:.*]] = graph.fused_elementwise %arg0, %arg1, %[[C]], %arg3 : (tensor<2x4x4xf32>, tensor<f32>, tensor<4x4xi1>, tensor<f32>) -> tensor<2x4x4xf32>
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<2x4x4xf32>, %{{.*}}: tensor<f32>, %[[M:.*]]: tensor<4x4xi1>, %[[NEG:.*]]: tensor<f32>):
// CHECK-NEXT: %[[S:.*]] = graph.mul
// CHECK-NEXT: graph.where %[[M]], %[[NEG]], %[[S]]
// CHECK-NEXT: graph.yield
func.func @where(%x: tensor<2x4x4xf32>, %scale: tensor<f32>, %p: tensor<4x4xf32>, %ninf: tensor<f32>) -> tensor<2x4x4xf32> {
  %s = graph.mul %x, %scale : tensor<2x4x4xf32>, tensor<f32> -> tensor<2x4x4xf32>
  %m = graph.compare %p, %ninf {predicate = "lt"} : tensor<4x4xf32>, tensor<f32> -> tensor<4x4xi1>
  %w = graph.where %m, %ninf, %s : tensor<4x4xi1>, tensor<f32>, tensor<2x4x4xf32> -> tensor<2x4x4xf32>
  return %w : tensor<2x4x4xf32>
}

// -----

// Tests a chain across an in-place all-reduce of a value the chain's first
// op reads (zero.all_reduce writes its operand's storage): that op stays
// before the reduction.
// CHECK-LABEL: func.func @in_place_write
// CHECK-NEXT: %[[A:.*]] = graph.mul %arg0, %arg1
// CHECK-NEXT: %[[R:.*]] = zero.all_reduce %arg0
// CHECK-NEXT: graph.fused_elementwise %[[A]], %[[R]]
func.func @in_place_write(%g: tensor<8xf32>, %c: tensor<8xf32>) -> tensor<8xf32> {
  %a = graph.mul %g, %c : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %r = zero.all_reduce %g {reduction = #zero<reduction sum>} : tensor<8xf32>
  %b = graph.add %a, %r : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %e = graph.exp %b : tensor<8xf32>
  return %e : tensor<8xf32>
}

// -----

// Tests a chain across the start of a stage-3 gather that zero-overlap
// placed between its ops (GPT-2's GELU and its 0.5 scaling, before the next
// weight's prefetch): the gather writes storage no member reads, so the
// chain fuses whole and the start stays where it was.
// CHECK-LABEL: func.func @unrelated_gather
// CHECK-NEXT: %[[T:.*]] = zero.all_gather_start %arg2
// CHECK-NEXT: graph.fused_elementwise %arg0, %arg1
// CHECK: graph.erf
// CHECK-NEXT: graph.mul
// CHECK-NEXT: graph.mul
// CHECK-NEXT: graph.yield
// CHECK: zero.wait %[[T]]
// CHECK-NOT: graph.mul
func.func @unrelated_gather(%x: tensor<8xf32>, %half: tensor<f32>, %s: !zero.shard<params, f32, 4, device>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = graph.erf %x : tensor<8xf32>
  %m = graph.mul %x, %e : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %t = zero.all_gather_start %s : !zero.shard<params, f32, 4, device> -> !zero.token<!zero.flat<params, f32, 8, 2>>
  %h = graph.mul %m, %half : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %f = zero.wait %t : !zero.token<!zero.flat<params, f32, 8, 2>> -> !zero.flat<params, f32, 8, 2>
  %w = zero.view %f {offset = 0 : i64} : !zero.flat<params, f32, 8, 2> -> tensor<8xf32>
  return %h, %w : tensor<8xf32>, tensor<8xf32>
}

// -----

// Tests a chain across a write of the state that ops name by symbol (here
// a buffer store; a gradient accumulation alike): the op that read the
// state before it stays out, as the state may have changed by the chain's
// end; the ops that read no state join.
// CHECK-LABEL: func.func @state_write
// CHECK-NEXT: %[[L:.*]] = zero.buffer_load @rm
// CHECK-NEXT: %[[M:.*]] = graph.mul %[[L]], %arg0
// CHECK-NEXT: zero.buffer_store @rm, %arg1
// CHECK-NEXT: graph.fused_elementwise %[[M]], %arg0
// CHECK-NEXT: ^bb0
// CHECK-NEXT: graph.add
// CHECK-NEXT: graph.exp
// CHECK-NEXT: graph.yield
graph.buffer @rm = dense<0.0> : tensor<8xf32>
func.func @state_write(%x: tensor<8xf32>, %new: tensor<8xf32>) -> tensor<8xf32> {
  %l = zero.buffer_load @rm : tensor<8xf32>
  %m = graph.mul %l, %x : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  zero.buffer_store @rm, %new : tensor<8xf32>
  %a = graph.add %m, %x : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %e = graph.exp %a : tensor<8xf32>
  return %e : tensor<8xf32>
}

// -----

// Tests a chain across a gradient accumulation, which writes an
// accumulator alone: the op that read a parameter's replica before it
// joins the chain.
// CHECK-LABEL: func.func @accumulation
// CHECK-NEXT: %[[W:.*]] = zero.param_replica @w
// CHECK-NEXT: zero.grad_accumulate @w, %arg1
// CHECK-NEXT: graph.fused_elementwise %[[W]], %arg0
// CHECK-NEXT: ^bb0
// CHECK-NEXT: graph.mul
// CHECK-NEXT: graph.exp
// CHECK-NEXT: graph.yield
graph.param trainable @w = dense<0.5> : tensor<8xf32>
func.func @accumulation(%x: tensor<8xf32>, %g: tensor<8xf32>) -> tensor<8xf32> {
  %w = zero.param_replica @w : tensor<8xf32>
  %m = graph.mul %w, %x : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  zero.grad_accumulate @w, %g : tensor<8xf32>
  %e = graph.exp %m : tensor<8xf32>
  return %e : tensor<8xf32>
}
