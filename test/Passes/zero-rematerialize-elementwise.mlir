// RUN: zeroc-opt %s -split-input-file -zero-rematerialize-elementwise | FileCheck %s

// Tests a GELU after a bias add and its gradient, as zero-fuse-elementwise
// leaves them: the forward op stored h = x + b, h / sqrt 2, 1 + erf and the
// result. The backward op computes h / sqrt 2 and 1 + erf from h (which it
// reads anyway) and the two scalars (new inputs), so the forward op yields h
// and the result only; its body is unchanged.
// CHECK-LABEL: func.func @gelu
// CHECK-NEXT: %[[F:.*]]:2 = graph.fused_elementwise %arg0, %arg1, %arg2, %arg3, %arg4 : {{.*}} -> (tensor<2x8xf32>, tensor<2x8xf32>) {
// CHECK: %[[H:.*]] = graph.add
// CHECK: graph.mul
// CHECK-NEXT: %[[Y:.*]] = graph.mul
// CHECK-NEXT: graph.yield %[[H]], %[[Y]] : tensor<2x8xf32>, tensor<2x8xf32>
// CHECK: %[[G:.*]] = graph.fused_elementwise %arg5, %arg4, %[[F]]#0, %arg2, %arg3 : (tensor<2x8xf32>, tensor<f32>, tensor<2x8xf32>, tensor<f32>, tensor<f32>) -> tensor<2x8xf32> {
// CHECK-NEXT: ^bb0(%[[DY:.*]]: tensor<2x8xf32>, %[[HALF:.*]]: tensor<f32>, %[[BH:.*]]: tensor<2x8xf32>, %[[S2:.*]]: tensor<f32>, %[[ONE:.*]]: tensor<f32>):
// CHECK-NEXT: %[[D:.*]] = graph.div %[[BH]], %[[S2]]
// CHECK-NEXT: %[[E:.*]] = graph.erf %[[D]]
// CHECK-NEXT: %[[P:.*]] = graph.add %[[E]], %[[ONE]]
// CHECK-NEXT: %[[M:.*]] = graph.mul %[[DY]], %[[HALF]]
// CHECK-NEXT: %[[DH:.*]] = graph.mul %[[M]], %[[P]]
// CHECK-NEXT: %[[DE:.*]] = graph.mul %[[M]], %[[BH]]
// CHECK-NEXT: %[[DD:.*]] = graph.unary_grad %[[DE]], x = %[[D]] {op = "erf"}
// CHECK-NEXT: %[[DS:.*]] = graph.div %[[DD]], %[[S2]]
// CHECK-NEXT: %[[DX:.*]] = graph.add %[[DH]], %[[DS]]
// CHECK-NEXT: graph.yield %[[DX]] : tensor<2x8xf32>
// CHECK: return %[[F]]#1, %[[G]]
func.func @gelu(%x: tensor<2x8xf32>, %b: tensor<8xf32>, %sqrt2: tensor<f32>, %one: tensor<f32>, %half: tensor<f32>, %dy: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %f:4 = graph.fused_elementwise %x, %b, %sqrt2, %one, %half : (tensor<2x8xf32>, tensor<8xf32>, tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  ^bb0(%a: tensor<2x8xf32>, %c: tensor<8xf32>, %s: tensor<f32>, %o: tensor<f32>, %k: tensor<f32>):
    %h = graph.add %a, %c : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
    %d = graph.div %h, %s : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
    %e = graph.erf %d : tensor<2x8xf32>
    %p = graph.add %e, %o : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
    %m = graph.mul %h, %p : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
    %y = graph.mul %m, %k : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
    graph.yield %h, %d, %p, %y : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
  }
  %g = graph.fused_elementwise %dy, %half, %f#2, %f#0, %f#1, %sqrt2 : (tensor<2x8xf32>, tensor<f32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32> {
  ^bb0(%a: tensor<2x8xf32>, %k: tensor<f32>, %p: tensor<2x8xf32>, %h: tensor<2x8xf32>, %d: tensor<2x8xf32>, %s: tensor<f32>):
    %m = graph.mul %a, %k : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
    %dh = graph.mul %m, %p : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
    %de = graph.mul %m, %h : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
    %dd = graph.unary_grad %de, x = %d {op = "erf"} : tensor<2x8xf32>
    %ds = graph.div %dd, %s : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
    %dx = graph.add %dh, %ds : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
    graph.yield %dx : tensor<2x8xf32>
  }
  return %f#3, %g : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// Tests values the consumer cannot compute from what it reads: t = tanh(x)
// needs x, which only the producer reads (recomputing it would keep x alive
// instead of t); a dropout's mask belongs to its launch; a value of another
// shape is a broadcast, not an element of the consumer's. All stay stored.
// CHECK-LABEL: func.func @kept
// CHECK: %[[F:.*]]:3 = graph.fused_elementwise
// CHECK: graph.yield %{{.*}}, %{{.*}}, %{{.*}} :
// CHECK: graph.fused_elementwise %arg1, %[[F]]#0, %[[F]]#1 : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: graph.fused_elementwise %arg2, %[[F]]#2 : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
func.func @kept(%x: tensor<4xf32>, %dy: tensor<4xf32>, %w: tensor<2x4xf32>) -> (tensor<4xf32>, tensor<2x4xf32>) {
  %f:3 = graph.fused_elementwise %x : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    %t = graph.tanh %a : tensor<4xf32>
    %d = graph.dropout %t {ratio = 5.000000e-01 : f64, seed = 3 : i64, training = true} : tensor<4xf32>
    %n = graph.neg %d : tensor<4xf32>
    graph.yield %t, %d, %n : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
  %g = graph.fused_elementwise %dy, %f#0, %f#1 : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %t: tensor<4xf32>, %d: tensor<4xf32>):
    %0 = graph.mul %a, %t : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %1 = graph.mul %0, %d : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    graph.yield %1 : tensor<4xf32>
  }
  %h = graph.fused_elementwise %w, %f#2 : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32> {
  ^bb0(%a: tensor<2x4xf32>, %n: tensor<4xf32>):
    %0 = graph.mul %a, %n : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
    %1 = graph.exp %0 : tensor<2x4xf32>
    graph.yield %1 : tensor<2x4xf32>
  }
  return %g, %h : tensor<4xf32>, tensor<2x4xf32>
}

// -----

// Tests a value another op also reads (here a softmax): the consumer
// computes it from the input it reads anyway, and the producer still yields
// it for the softmax.
// CHECK-LABEL: func.func @read_elsewhere
// CHECK: %[[F:.*]]:2 = graph.fused_elementwise %arg0
// CHECK: graph.softmax %[[F]]#0
// CHECK: graph.fused_elementwise %arg1, %arg0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: ^bb0(%[[DY:.*]]: tensor<4xf32>, %[[X:.*]]: tensor<4xf32>):
// CHECK-NEXT: %[[S:.*]] = graph.sigmoid %[[X]]
// CHECK-NEXT: graph.mul %[[DY]], %[[S]]
func.func @read_elsewhere(%x: tensor<4xf32>, %dy: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %f:2 = graph.fused_elementwise %x : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    %s = graph.sigmoid %a : tensor<4xf32>
    %y = graph.mul %a, %s : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    graph.yield %s, %y : tensor<4xf32>, tensor<4xf32>
  }
  %p = graph.softmax %f#0 {axis = 0 : i64} : tensor<4xf32>
  %g = graph.fused_elementwise %dy, %f#0, %x : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %s: tensor<4xf32>, %b: tensor<4xf32>):
    %0 = graph.mul %a, %s : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %1 = graph.add %0, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    graph.yield %1 : tensor<4xf32>
  }
  return %f#1, %p, %g : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests values whose storage an in-place all-reduce writes: a rank-0 value
// and an input both ops read may hold other values where the consumer
// stands, so the consumer computes nothing from them and the producer keeps
// yielding what it stored.
// CHECK-LABEL: func.func @written
// CHECK: %[[F:.*]]:2 = graph.fused_elementwise
// CHECK: %[[G:.*]]:2 = graph.fused_elementwise
// CHECK: graph.fused_elementwise %arg3, %[[F]]#0, %[[F]]#1 :
// CHECK: graph.fused_elementwise %arg3, %arg1, %[[G]]#0 :
func.func @written(%x: tensor<4xf32>, %y: tensor<4xf32>, %k: tensor<f32>, %dy: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<4xf32>) {
  %f:2 = graph.fused_elementwise %x, %k : (tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>, %c: tensor<f32>):
    %0 = graph.add %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %1 = graph.mul %0, %c : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
    graph.yield %0, %1 : tensor<4xf32>, tensor<4xf32>
  }
  %g:2 = graph.fused_elementwise %y : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    %0 = graph.exp %a : tensor<4xf32>
    %1 = graph.neg %0 : tensor<4xf32>
    graph.yield %0, %1 : tensor<4xf32>, tensor<4xf32>
  }
  %r = zero.all_reduce %k {reduction = #zero<reduction sum>} : tensor<f32>
  %s = zero.all_reduce %y {reduction = #zero<reduction sum>} : tensor<4xf32>
  %h = graph.fused_elementwise %dy, %f#0, %f#1 : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %p: tensor<4xf32>, %m: tensor<4xf32>):
    %0 = graph.mul %a, %p : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %1 = graph.mul %0, %m : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    graph.yield %1 : tensor<4xf32>
  }
  %i = graph.fused_elementwise %dy, %y, %g#0 : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>, %e: tensor<4xf32>):
    %0 = graph.mul %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %1 = graph.mul %0, %e : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    graph.yield %1 : tensor<4xf32>
  }
  return %h, %g#1, %r, %i : tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<4xf32>
}

// -----

// Tests a rank-0 value that views state (a buffer here, a scalar
// parameter's replica alike): a store of that state between the two ops
// changes what the consumer would read, so it computes nothing from it; a
// write after the consumer (the all-reduce of %x) changes nothing the
// consumer reads, so it computes x + x from x.
// CHECK-LABEL: func.func @state_write
// CHECK: %[[F:.*]]:2 = graph.fused_elementwise
// CHECK: zero.buffer_store @scale
// CHECK-NEXT: graph.fused_elementwise %arg1, %arg0, %[[F]]#0 :
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<4xf32>, %[[X:.*]]: tensor<4xf32>, %{{.*}}: tensor<4xf32>):
// CHECK-NEXT: graph.add %[[X]], %[[X]]
// CHECK: zero.all_reduce %arg0
graph.buffer @scale = dense<1.0> : tensor<f32>
func.func @state_write(%x: tensor<4xf32>, %dy: tensor<4xf32>, %new: tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %s = zero.buffer_load @scale : tensor<f32>
  %f:3 = graph.fused_elementwise %x, %s : (tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>, %c: tensor<f32>):
    %0 = graph.add %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %1 = graph.mul %a, %c : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
    %2 = graph.exp %1 : tensor<4xf32>
    graph.yield %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
  zero.buffer_store @scale, %new : tensor<f32>
  %h = graph.fused_elementwise %dy, %x, %f#0, %f#1 : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>, %p: tensor<4xf32>, %m: tensor<4xf32>):
    %0 = graph.mul %a, %p : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %1 = graph.mul %0, %m : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %2 = graph.mul %1, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    graph.yield %2 : tensor<4xf32>
  }
  %r = zero.all_reduce %x {reduction = #zero<reduction sum>} : tensor<4xf32>
  return %h, %f#2, %r : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
