// RUN: zeroc-opt %s -split-input-file -zero-autodiff | FileCheck %s

// One split per differentiable graph op: a tiny @forward whose trainable
// parameters feed the op, reduced to a scalar graph.loss, and CHECK lines
// pinning the gradient ops that the op's rule (dialects/Graph/
// GraphGradients.cpp) emits in @forward_backward. The seed is
// `graph.constant dense<1.0>`; graph.reduce_sum's rule broadcasts it back
// (reshape + expand), so most splits first capture that incoming gradient %[[G]].
// test/e2e/gradcheck.test checks the same rules numerically.

// Tests that neg's gradient is one graph.unary_grad {op = "neg"} of
// the incoming gradient alone (f' = -1).
graph.param trainable @w = dense<0.5> : tensor<2x3xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<2x3xf32>
  %y = graph.neg %w : tensor<2x3xf32>
  %l = graph.reduce_sum %y {axes = [0, 1], keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK-SAME: -> (tensor<f32> {graph.loss}, tensor<2x3xf32> {graph.grad_of = @w})
// CHECK: %[[W:.*]] = graph.load_param @w
// CHECK: %[[Y:.*]] = graph.neg %[[W]]
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK: %[[DW:.*]] = graph.unary_grad %[[G]] {op = "neg"} : tensor<2x3xf32>
// CHECK: return %{{.*}}, %[[DW]] : tensor<f32>, tensor<2x3xf32>

// -----

// Tests that sqrt's gradient is one graph.unary_grad {op = "sqrt"} of
// the incoming gradient and the op's result (f' = 1/(2 sqrt(x))).
graph.param trainable @w = dense<0.5> : tensor<2x3xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<2x3xf32>
  %y = graph.sqrt %w : tensor<2x3xf32>
  %l = graph.reduce_sum %y {axes = [0, 1], keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK-SAME: -> (tensor<f32> {graph.loss}, tensor<2x3xf32> {graph.grad_of = @w})
// CHECK: %[[W:.*]] = graph.load_param @w
// CHECK: %[[Y:.*]] = graph.sqrt %[[W]]
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK: %[[DW:.*]] = graph.unary_grad %[[G]], y = %[[Y]] {op = "sqrt"} : tensor<2x3xf32>
// CHECK: return %{{.*}}, %[[DW]] : tensor<f32>, tensor<2x3xf32>

// -----

// Tests that reciprocal's gradient is one graph.unary_grad {op = "reciprocal"} of
// the incoming gradient and the op's result (f' = -1/x^2).
graph.param trainable @w = dense<0.5> : tensor<2x3xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<2x3xf32>
  %y = graph.reciprocal %w : tensor<2x3xf32>
  %l = graph.reduce_sum %y {axes = [0, 1], keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK-SAME: -> (tensor<f32> {graph.loss}, tensor<2x3xf32> {graph.grad_of = @w})
// CHECK: %[[W:.*]] = graph.load_param @w
// CHECK: %[[Y:.*]] = graph.reciprocal %[[W]]
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK: %[[DW:.*]] = graph.unary_grad %[[G]], y = %[[Y]] {op = "reciprocal"} : tensor<2x3xf32>
// CHECK: return %{{.*}}, %[[DW]] : tensor<f32>, tensor<2x3xf32>

// -----

// Tests that relu's gradient is one graph.unary_grad {op = "relu"} of
// the incoming gradient and the op's input (f' = x > 0).
graph.param trainable @w = dense<0.5> : tensor<2x3xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<2x3xf32>
  %y = graph.relu %w : tensor<2x3xf32>
  %l = graph.reduce_sum %y {axes = [0, 1], keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK-SAME: -> (tensor<f32> {graph.loss}, tensor<2x3xf32> {graph.grad_of = @w})
// CHECK: %[[W:.*]] = graph.load_param @w
// CHECK: %[[Y:.*]] = graph.relu %[[W]]
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK: %[[DW:.*]] = graph.unary_grad %[[G]], x = %[[W]] {op = "relu"} : tensor<2x3xf32>
// CHECK: return %{{.*}}, %[[DW]] : tensor<f32>, tensor<2x3xf32>

// -----

// Tests that tanh's gradient is one graph.unary_grad {op = "tanh"} of
// the incoming gradient and the op's result (f' = 1 - y^2).
graph.param trainable @w = dense<0.5> : tensor<2x3xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<2x3xf32>
  %y = graph.tanh %w : tensor<2x3xf32>
  %l = graph.reduce_sum %y {axes = [0, 1], keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK-SAME: -> (tensor<f32> {graph.loss}, tensor<2x3xf32> {graph.grad_of = @w})
// CHECK: %[[W:.*]] = graph.load_param @w
// CHECK: %[[Y:.*]] = graph.tanh %[[W]]
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK: %[[DW:.*]] = graph.unary_grad %[[G]], y = %[[Y]] {op = "tanh"} : tensor<2x3xf32>
// CHECK: return %{{.*}}, %[[DW]] : tensor<f32>, tensor<2x3xf32>

// -----

// Tests that sigmoid's gradient is one graph.unary_grad {op = "sigmoid"} of
// the incoming gradient and the op's result (f' = y (1 - y)).
graph.param trainable @w = dense<0.5> : tensor<2x3xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<2x3xf32>
  %y = graph.sigmoid %w : tensor<2x3xf32>
  %l = graph.reduce_sum %y {axes = [0, 1], keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK-SAME: -> (tensor<f32> {graph.loss}, tensor<2x3xf32> {graph.grad_of = @w})
// CHECK: %[[W:.*]] = graph.load_param @w
// CHECK: %[[Y:.*]] = graph.sigmoid %[[W]]
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK: %[[DW:.*]] = graph.unary_grad %[[G]], y = %[[Y]] {op = "sigmoid"} : tensor<2x3xf32>
// CHECK: return %{{.*}}, %[[DW]] : tensor<f32>, tensor<2x3xf32>

// -----

// Tests that erf's gradient is one graph.unary_grad {op = "erf"} of
// the incoming gradient and the op's input (f' = 2/sqrt(pi) exp(-x^2)).
graph.param trainable @w = dense<0.5> : tensor<2x3xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<2x3xf32>
  %y = graph.erf %w : tensor<2x3xf32>
  %l = graph.reduce_sum %y {axes = [0, 1], keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK-SAME: -> (tensor<f32> {graph.loss}, tensor<2x3xf32> {graph.grad_of = @w})
// CHECK: %[[W:.*]] = graph.load_param @w
// CHECK: %[[Y:.*]] = graph.erf %[[W]]
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK: %[[DW:.*]] = graph.unary_grad %[[G]], x = %[[W]] {op = "erf"} : tensor<2x3xf32>
// CHECK: return %{{.*}}, %[[DW]] : tensor<f32>, tensor<2x3xf32>

// -----

// Tests that exp's gradient is one graph.unary_grad {op = "exp"} of
// the incoming gradient and the op's result (f' = y).
graph.param trainable @w = dense<0.5> : tensor<2x3xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<2x3xf32>
  %y = graph.exp %w : tensor<2x3xf32>
  %l = graph.reduce_sum %y {axes = [0, 1], keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK-SAME: -> (tensor<f32> {graph.loss}, tensor<2x3xf32> {graph.grad_of = @w})
// CHECK: %[[W:.*]] = graph.load_param @w
// CHECK: %[[Y:.*]] = graph.exp %[[W]]
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK: %[[DW:.*]] = graph.unary_grad %[[G]], y = %[[Y]] {op = "exp"} : tensor<2x3xf32>
// CHECK: return %{{.*}}, %[[DW]] : tensor<f32>, tensor<2x3xf32>

// -----

// Tests that log's gradient is one graph.unary_grad {op = "log"} of
// the incoming gradient and the op's input (f' = 1/x).
graph.param trainable @w = dense<0.5> : tensor<2x3xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %w = graph.load_param @w : tensor<2x3xf32>
  %y = graph.log %w : tensor<2x3xf32>
  %l = graph.reduce_sum %y {axes = [0, 1], keepdims = false} : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK-SAME: -> (tensor<f32> {graph.loss}, tensor<2x3xf32> {graph.grad_of = @w})
// CHECK: %[[W:.*]] = graph.load_param @w
// CHECK: %[[Y:.*]] = graph.log %[[W]]
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK: %[[DW:.*]] = graph.unary_grad %[[G]], x = %[[W]] {op = "log"} : tensor<2x3xf32>
// CHECK: return %{{.*}}, %[[DW]] : tensor<f32>, tensor<2x3xf32>

// -----

// Tests that add's gradient is the incoming gradient summed back to each
// broadcast operand's shape with graph.sum_to.
graph.param trainable @a = dense<0.5> : tensor<3x1xf32>
graph.param trainable @b = dense<0.25> : tensor<4xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %a = graph.load_param @a : tensor<3x1xf32>
  %b = graph.load_param @b : tensor<4xf32>
  %y = graph.add %a, %b : tensor<3x1xf32>, tensor<4xf32> -> tensor<3x4xf32>
  %l = graph.reduce_sum %y {axes = [0, 1], keepdims = false} : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<3x4xf32>
// CHECK: %[[DA:.*]] = graph.sum_to %[[G]] : tensor<3x4xf32> -> tensor<3x1xf32>
// CHECK: %[[DB:.*]] = graph.sum_to %[[G]] : tensor<3x4xf32> -> tensor<4xf32>
// CHECK: return %{{.*}}, %[[DA]], %[[DB]]

// -----

// Tests that sub's gradient is the incoming gradient for the lhs and its
// negation for the rhs, each summed back to the operand's broadcast shape.
graph.param trainable @a = dense<0.5> : tensor<3x1xf32>
graph.param trainable @b = dense<0.25> : tensor<4xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %a = graph.load_param @a : tensor<3x1xf32>
  %b = graph.load_param @b : tensor<4xf32>
  %y = graph.sub %a, %b : tensor<3x1xf32>, tensor<4xf32> -> tensor<3x4xf32>
  %l = graph.reduce_sum %y {axes = [0, 1], keepdims = false} : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<3x4xf32>
// CHECK: %[[DA:.*]] = graph.sum_to %[[G]] : tensor<3x4xf32> -> tensor<3x1xf32>
// CHECK: %[[NEG:.*]] = graph.neg %[[G]] : tensor<3x4xf32>
// CHECK: %[[DB:.*]] = graph.sum_to %[[NEG]] : tensor<3x4xf32> -> tensor<4xf32>
// CHECK: return %{{.*}}, %[[DA]], %[[DB]]

// -----

// Tests that mul's gradient multiplies the incoming gradient by the other
// operand and sums it back to each operand's broadcast shape.
graph.param trainable @a = dense<0.5> : tensor<3x1xf32>
graph.param trainable @b = dense<0.25> : tensor<4xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %a = graph.load_param @a : tensor<3x1xf32>
  %b = graph.load_param @b : tensor<4xf32>
  %y = graph.mul %a, %b : tensor<3x1xf32>, tensor<4xf32> -> tensor<3x4xf32>
  %l = graph.reduce_sum %y {axes = [0, 1], keepdims = false} : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[A:.*]] = graph.load_param @a
// CHECK: %[[B:.*]] = graph.load_param @b
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<3x4xf32>
// CHECK: %[[GB:.*]] = graph.mul %[[G]], %[[B]] : tensor<3x4xf32>, tensor<4xf32> -> tensor<3x4xf32>
// CHECK: %[[DA:.*]] = graph.sum_to %[[GB]] : tensor<3x4xf32> -> tensor<3x1xf32>
// CHECK: %[[GA:.*]] = graph.mul %[[G]], %[[A]] : tensor<3x4xf32>, tensor<3x1xf32> -> tensor<3x4xf32>
// CHECK: %[[DB:.*]] = graph.sum_to %[[GA]] : tensor<3x4xf32> -> tensor<4xf32>
// CHECK: return %{{.*}}, %[[DA]], %[[DB]]

// -----

// Tests that div's gradient is g / b for the lhs and -(g * y) / b for the
// rhs (y the quotient), each summed back to the operand's broadcast shape.
graph.param trainable @a = dense<0.5> : tensor<3x1xf32>
graph.param trainable @b = dense<0.25> : tensor<4xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %a = graph.load_param @a : tensor<3x1xf32>
  %b = graph.load_param @b : tensor<4xf32>
  %y = graph.div %a, %b : tensor<3x1xf32>, tensor<4xf32> -> tensor<3x4xf32>
  %l = graph.reduce_sum %y {axes = [0, 1], keepdims = false} : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[B:.*]] = graph.load_param @b
// CHECK: %[[Y:.*]] = graph.div
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<3x4xf32>
// CHECK: %[[GDB:.*]] = graph.div %[[G]], %[[B]] : tensor<3x4xf32>, tensor<4xf32> -> tensor<3x4xf32>
// CHECK: %[[DA:.*]] = graph.sum_to %[[GDB]] : tensor<3x4xf32> -> tensor<3x1xf32>
// CHECK: %[[GY:.*]] = graph.mul %[[G]], %[[Y]] : tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
// CHECK: %[[T:.*]] = graph.div %[[GY]], %[[B]] : tensor<3x4xf32>, tensor<4xf32> -> tensor<3x4xf32>
// CHECK: %[[NEG:.*]] = graph.neg %[[T]] : tensor<3x4xf32>
// CHECK: %[[DB:.*]] = graph.sum_to %[[NEG]] : tensor<3x4xf32> -> tensor<4xf32>
// CHECK: return %{{.*}}, %[[DA]], %[[DB]]

// -----

// Tests that pow's gradient is g * e * x^(e-1) for the base and
// g * y * log(x) for the exponent, each summed back to its broadcast shape.
graph.param trainable @x = dense<0.5> : tensor<3x1xf32>
graph.param trainable @e = dense<0.25> : tensor<4xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %x = graph.load_param @x : tensor<3x1xf32>
  %e = graph.load_param @e : tensor<4xf32>
  %y = graph.pow %x, %e : tensor<3x1xf32>, tensor<4xf32> -> tensor<3x4xf32>
  %l = graph.reduce_sum %y {axes = [0, 1], keepdims = false} : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[X:.*]] = graph.load_param @x
// CHECK: %[[E:.*]] = graph.load_param @e
// CHECK: %[[Y:.*]] = graph.pow %[[X]], %[[E]]
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<3x4xf32>
// CHECK: %[[ONE:.*]] = graph.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[EM1:.*]] = graph.sub %[[E]], %[[ONE]] : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
// CHECK: %[[P:.*]] = graph.pow %[[X]], %[[EM1]] : tensor<3x1xf32>, tensor<4xf32> -> tensor<3x4xf32>
// CHECK: %[[D:.*]] = graph.mul %[[E]], %[[P]]
// CHECK: %[[GD:.*]] = graph.mul %[[G]], %[[D]]
// CHECK: %[[DX:.*]] = graph.sum_to %[[GD]] : tensor<3x4xf32> -> tensor<3x1xf32>
// CHECK: %[[LOG:.*]] = graph.log %[[X]] : tensor<3x1xf32>
// CHECK: %[[YL:.*]] = graph.mul %[[Y]], %[[LOG]]
// CHECK: %[[GYL:.*]] = graph.mul %[[G]], %[[YL]]
// CHECK: %[[DE:.*]] = graph.sum_to %[[GYL]] : tensor<3x4xf32> -> tensor<4xf32>
// CHECK: return %{{.*}}, %[[DX]], %[[DE]]

// -----

// Tests that equal (an i1 result) passes no gradient: the parameter compared
// by graph.equal gets its gradient only through where's on_true branch.
graph.param trainable @a = dense<0.5> : tensor<4xf32>
func.func @forward(%x: tensor<4xf32>) -> (tensor<f32> {graph.loss}) {
  %a = graph.load_param @a : tensor<4xf32>
  %m = graph.equal %a, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
  %y = graph.where %m, %a, %x : tensor<4xi1>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %l = graph.reduce_sum %y {axes = [0], keepdims = false} : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[M:.*]] = graph.equal
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1xf32> -> tensor<4xf32>
// CHECK: %[[ZERO:.*]] = graph.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[DA:.*]] = graph.where %[[M]], %[[G]], %[[ZERO]]
// CHECK-NEXT: return %{{.*}}, %[[DA]] : tensor<f32>, tensor<4xf32>

// -----

// Tests that where's gradient routes the incoming gradient to on_true where
// the condition holds and to on_false elsewhere (a rank-0 zero in the other
// branch), each summed back to its broadcast shape; the condition gets none.
graph.param trainable @a = dense<0.5> : tensor<4xf32>
graph.param trainable @b = dense<0.25> : tensor<3x1xf32>
func.func @forward(%m: tensor<3x4xi1>) -> (tensor<f32> {graph.loss}) {
  %a = graph.load_param @a : tensor<4xf32>
  %b = graph.load_param @b : tensor<3x1xf32>
  %y = graph.where %m, %a, %b : tensor<3x4xi1>, tensor<4xf32>, tensor<3x1xf32> -> tensor<3x4xf32>
  %l = graph.reduce_sum %y {axes = [0, 1], keepdims = false} : tensor<3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward(%arg0: tensor<3x4xi1>)
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<3x4xf32>
// CHECK: %[[ZERO:.*]] = graph.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[T:.*]] = graph.where %arg0, %[[G]], %[[ZERO]] : tensor<3x4xi1>, tensor<3x4xf32>, tensor<f32> -> tensor<3x4xf32>
// CHECK: %[[DA:.*]] = graph.sum_to %[[T]] : tensor<3x4xf32> -> tensor<4xf32>
// CHECK: %[[F:.*]] = graph.where %arg0, %[[ZERO]], %[[G]] : tensor<3x4xi1>, tensor<f32>, tensor<3x4xf32> -> tensor<3x4xf32>
// CHECK: %[[DB:.*]] = graph.sum_to %[[F]] : tensor<3x4xf32> -> tensor<3x1xf32>
// CHECK: return %{{.*}}, %[[DA]], %[[DB]]

// -----

// Tests that cast's gradient casts the incoming gradient back to the input's
// element type (f64 -> f32), and that a cast from an integer input (not
// active) gets no gradient.
graph.param trainable @a = dense<0.5> : tensor<4xf32>
func.func @forward(%i: tensor<4xi64>) -> (tensor<f64> {graph.loss}) {
  %a = graph.load_param @a : tensor<4xf32>
  %c = graph.cast %a : tensor<4xf32> -> tensor<4xf64>
  %f = graph.cast %i : tensor<4xi64> -> tensor<4xf64>
  %y = graph.mul %c, %f : tensor<4xf64>, tensor<4xf64> -> tensor<4xf64>
  %l = graph.reduce_sum %y {axes = [0], keepdims = false} : tensor<4xf64> -> tensor<f64>
  return %l : tensor<f64>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK-SAME: -> (tensor<f64> {graph.loss}, tensor<4xf32> {graph.grad_of = @a})
// CHECK: %[[F:.*]] = graph.cast %arg0 : tensor<4xi64> -> tensor<4xf64>
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1xf64> -> tensor<4xf64>
// CHECK: %[[GC:.*]] = graph.mul %[[G]], %[[F]] : tensor<4xf64>, tensor<4xf64> -> tensor<4xf64>
// CHECK: %[[DA:.*]] = graph.cast %[[GC]] : tensor<4xf64> -> tensor<4xf32>
// CHECK-NOT: graph.cast
// CHECK: return %{{.*}}, %[[DA]] : tensor<f64>, tensor<4xf32>

// -----

// Tests that dropout's gradient is the same dropout (ratio, training and the
// seed that zero-autodiff assigns) applied to the incoming gradient, so that
// it replays the forward mask.
graph.param trainable @a = dense<0.5> : tensor<2x8xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %a = graph.load_param @a : tensor<2x8xf32>
  %d = graph.dropout %a {ratio = 2.5e-01 : f64, training = true} : tensor<2x8xf32>
  %l = graph.reduce_sum %d {axes = [0, 1], keepdims = false} : tensor<2x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: graph.dropout %{{.*}} {ratio = 2.500000e-01 : f64, seed = 1 : i64, training = true} : tensor<2x8xf32>
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<2x8xf32>
// CHECK: %[[DA:.*]] = graph.dropout %[[G]] {ratio = 2.500000e-01 : f64, seed = 1 : i64, training = true} : tensor<2x8xf32>
// CHECK: return %{{.*}}, %[[DA]]

// -----

// Tests that matmul's gradient is g @ b^T for the lhs and a^T @ g for the
// rhs, with the transposes swapping the last two dims.
graph.param trainable @a = dense<0.5> : tensor<2x3xf32>
graph.param trainable @b = dense<0.25> : tensor<3x4xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %a = graph.load_param @a : tensor<2x3xf32>
  %b = graph.load_param @b : tensor<3x4xf32>
  %y = graph.matmul %a, %b : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32>
  %l = graph.reduce_sum %y {axes = [0, 1], keepdims = false} : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[A:.*]] = graph.load_param @a
// CHECK: %[[B:.*]] = graph.load_param @b
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<2x4xf32>
// CHECK: %[[BT:.*]] = graph.transpose %[[B]] {perm = [1, 0]} : tensor<3x4xf32> -> tensor<4x3xf32>
// CHECK: %[[DA:.*]] = graph.matmul %[[G]], %[[BT]] : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
// CHECK: %[[AT:.*]] = graph.transpose %[[A]] {perm = [1, 0]} : tensor<2x3xf32> -> tensor<3x2xf32>
// CHECK: %[[DB:.*]] = graph.matmul %[[AT]], %[[G]] : tensor<3x2xf32>, tensor<2x4xf32> -> tensor<3x4xf32>
// CHECK: return %{{.*}}, %[[DA]], %[[DB]]

// -----

// Tests that a batched matmul against a broadcast 2-D rhs gets the rhs
// gradient from a batched a^T @ g (last two dims swapped) summed over the
// batch with graph.sum_to; the data lhs gets none.
graph.param trainable @b = dense<0.25> : tensor<3x4xf32>
func.func @forward(%x: tensor<5x2x3xf32>) -> (tensor<f32> {graph.loss}) {
  %b = graph.load_param @b : tensor<3x4xf32>
  %y = graph.matmul %x, %b : tensor<5x2x3xf32>, tensor<3x4xf32> -> tensor<5x2x4xf32>
  %l = graph.reduce_sum %y {axes = [0, 1, 2], keepdims = false} : tensor<5x2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1x1xf32> -> tensor<5x2x4xf32>
// CHECK-NOT: graph.transpose %{{.*}}perm = [1, 0]
// CHECK: %[[XT:.*]] = graph.transpose %arg0 {perm = [0, 2, 1]} : tensor<5x2x3xf32> -> tensor<5x3x2xf32>
// CHECK: %[[MM:.*]] = graph.matmul %[[XT]], %[[G]] : tensor<5x3x2xf32>, tensor<5x2x4xf32> -> tensor<5x3x4xf32>
// CHECK: %[[DB:.*]] = graph.sum_to %[[MM]] : tensor<5x3x4xf32> -> tensor<3x4xf32>
// CHECK: return %{{.*}}, %[[DB]]

// -----

// Tests the gradient of a matmul that reads both operands transposed,
// y = a^T b^T: da = (g b)^T = b^T g^T and db = (a g)^T = g^T a^T, each one
// matmul reading its operands transposed (no transpose op), and b's summed
// over the batch it was broadcast to.
graph.param trainable @a = dense<0.5> : tensor<2x3x5xf32>
graph.param trainable @b = dense<0.25> : tensor<4x3xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %a = graph.load_param @a : tensor<2x3x5xf32>
  %b = graph.load_param @b : tensor<4x3xf32>
  %y = graph.matmul %a, %b {transA = true, transB = true} : tensor<2x3x5xf32>, tensor<4x3xf32> -> tensor<2x5x4xf32>
  %l = graph.reduce_sum %y {axes = [0, 1, 2], keepdims = false} : tensor<2x5x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[A:.*]] = graph.load_param @a
// CHECK: %[[B:.*]] = graph.load_param @b
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1x1xf32> -> tensor<2x5x4xf32>
// CHECK-NOT: graph.transpose
// CHECK: %[[DA:.*]] = graph.matmul %[[B]], %[[G]] {transA = true, transB = true} : tensor<4x3xf32>, tensor<2x5x4xf32> -> tensor<2x3x5xf32>
// CHECK: %[[GA:.*]] = graph.matmul %[[G]], %[[A]] {transA = true, transB = true} : tensor<2x5x4xf32>, tensor<2x3x5xf32> -> tensor<2x4x3xf32>
// CHECK: %[[DB:.*]] = graph.sum_to %[[GA]] : tensor<2x4x3xf32> -> tensor<4x3xf32>
// CHECK: return %{{.*}}, %[[DA]], %[[DB]]

// -----

// Tests that a rank-1 x rank-1 matmul (a dot product) promotes both operands
// to matrices (1x3 and 3x1) and reshapes the gradients back to rank 1.
graph.param trainable @a = dense<0.5> : tensor<3xf32>
graph.param trainable @b = dense<0.25> : tensor<3xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %a = graph.load_param @a : tensor<3xf32>
  %b = graph.load_param @b : tensor<3xf32>
  %y = graph.matmul %a, %b : tensor<3xf32>, tensor<3xf32> -> tensor<f32>
  return %y : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[SEED:.*]] = graph.constant {graph.loss_seed} dense<1.000000e+00> : tensor<f32>
// CHECK: %[[A2:.*]] = graph.reshape %{{.*}} : tensor<3xf32> -> tensor<1x3xf32>
// CHECK: %[[B2:.*]] = graph.reshape %{{.*}} : tensor<3xf32> -> tensor<3x1xf32>
// CHECK: %[[G2:.*]] = graph.reshape %[[SEED]] : tensor<f32> -> tensor<1x1xf32>
// CHECK: %[[BT:.*]] = graph.transpose %[[B2]] {perm = [1, 0]} : tensor<3x1xf32> -> tensor<1x3xf32>
// CHECK: %[[MA:.*]] = graph.matmul %[[G2]], %[[BT]] : tensor<1x1xf32>, tensor<1x3xf32> -> tensor<1x3xf32>
// CHECK: %[[DA:.*]] = graph.reshape %[[MA]] : tensor<1x3xf32> -> tensor<3xf32>
// CHECK: %[[AT:.*]] = graph.transpose %[[A2]] {perm = [1, 0]} : tensor<1x3xf32> -> tensor<3x1xf32>
// CHECK: %[[MB:.*]] = graph.matmul %[[AT]], %[[G2]] : tensor<3x1xf32>, tensor<1x1xf32> -> tensor<3x1xf32>
// CHECK: %[[DB:.*]] = graph.reshape %[[MB]] : tensor<3x1xf32> -> tensor<3xf32>
// CHECK: return %{{.*}}, %[[DA]], %[[DB]]

// -----

// Tests that gemm's gradient (transB, alpha, beta, C) is two gemms with the
// same alpha and beta 0: dA = alpha g B (B as stored, no transpose) and
// dB = alpha g^T A; dC = beta g summed back to C's broadcast shape.
graph.param trainable @a = dense<0.5> : tensor<2x3xf32>
graph.param trainable @b = dense<0.25> : tensor<4x3xf32>
graph.param trainable @c = dense<0.125> : tensor<4xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %a = graph.load_param @a : tensor<2x3xf32>
  %b = graph.load_param @b : tensor<4x3xf32>
  %c = graph.load_param @c : tensor<4xf32>
  %y = graph.gemm %a, %b, %c {alpha = 5.0e-01 : f64, beta = 2.0 : f64, transB = true} : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %l = graph.reduce_sum %y {axes = [0, 1], keepdims = false} : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[A:.*]] = graph.load_param @a
// CHECK: %[[B:.*]] = graph.load_param @b
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<2x4xf32>
// CHECK: %[[DA:.*]] = graph.gemm %[[G]], %[[B]] {alpha = 5.000000e-01 : f64, beta = 0.000000e+00 : f64} : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
// CHECK: %[[DB:.*]] = graph.gemm %[[G]], %[[A]] {alpha = 5.000000e-01 : f64, beta = 0.000000e+00 : f64, transA = true} : (tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
// CHECK: %[[BETA:.*]] = graph.constant dense<2.000000e+00> : tensor<f32>
// CHECK: %[[GB:.*]] = graph.mul %[[G]], %[[BETA]] : tensor<2x4xf32>, tensor<f32> -> tensor<2x4xf32>
// CHECK: %[[DC:.*]] = graph.sum_to %[[GB]] : tensor<2x4xf32> -> tensor<4xf32>
// CHECK: return %{{.*}}, %[[DA]], %[[DB]], %[[DC]]

// -----

// Tests that with transA (no C, alpha 1) gemm's gradient is dA = B g^T and
// dB = A g, as gemms with the right transpose flags.
graph.param trainable @a = dense<0.5> : tensor<3x2xf32>
graph.param trainable @b = dense<0.25> : tensor<3x4xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %a = graph.load_param @a : tensor<3x2xf32>
  %b = graph.load_param @b : tensor<3x4xf32>
  %y = graph.gemm %a, %b {transA = true} : (tensor<3x2xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %l = graph.reduce_sum %y {axes = [0, 1], keepdims = false} : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[A:.*]] = graph.load_param @a
// CHECK: %[[B:.*]] = graph.load_param @b
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<2x4xf32>
// CHECK: %[[DA:.*]] = graph.gemm %[[B]], %[[G]] {beta = 0.000000e+00 : f64, transB = true} : (tensor<3x4xf32>, tensor<2x4xf32>) -> tensor<3x2xf32>
// CHECK: %[[DB:.*]] = graph.gemm %[[A]], %[[G]] {beta = 0.000000e+00 : f64} : (tensor<3x2xf32>, tensor<2x4xf32>) -> tensor<3x4xf32>
// CHECK: return %{{.*}}, %[[DA]], %[[DB]]

// -----

// Tests that reduce_sum's gradient reshapes the incoming gradient to keep
// the reduced axis as size 1 and expands it back to the input's shape.
graph.param trainable @a = dense<0.5> : tensor<2x3x4xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %a = graph.load_param @a : tensor<2x3x4xf32>
  %s = graph.reduce_sum %a {axes = [1], keepdims = false} : tensor<2x3x4xf32> -> tensor<2x4xf32>
  %l = graph.reduce_sum %s {axes = [0, 1], keepdims = false} : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<2x4xf32>
// CHECK: %[[R:.*]] = graph.reshape %[[G]] : tensor<2x4xf32> -> tensor<2x1x4xf32>
// CHECK: %[[DA:.*]] = graph.expand %[[R]] : tensor<2x1x4xf32> -> tensor<2x3x4xf32>
// CHECK: return %{{.*}}, %[[DA]]

// -----

// Tests that reduce_mean's gradient divides the incoming gradient by the
// number of reduced elements (2 * 4 = 8) and, with keepdims, expands it back
// without a reshape.
graph.param trainable @a = dense<0.5> : tensor<2x3x4xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %a = graph.load_param @a : tensor<2x3x4xf32>
  %s = graph.reduce_mean %a {axes = [0, 2], keepdims = true} : tensor<2x3x4xf32> -> tensor<1x3x1xf32>
  %l = graph.reduce_sum %s {axes = [0, 1, 2], keepdims = false} : tensor<1x3x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1x1xf32> -> tensor<1x3x1xf32>
// CHECK: %[[N:.*]] = graph.constant dense<8.000000e+00> : tensor<f32>
// CHECK: %[[GN:.*]] = graph.div %[[G]], %[[N]] : tensor<1x3x1xf32>, tensor<f32> -> tensor<1x3x1xf32>
// CHECK-NOT: graph.reshape
// CHECK: %[[DA:.*]] = graph.expand %[[GN]] : tensor<1x3x1xf32> -> tensor<2x3x4xf32>
// CHECK: return %{{.*}}, %[[DA]]

// -----

// Tests that reduce_max's gradient is split evenly among the elements equal
// to the (broadcast) maximum, as torch.amax does: a mask from graph.equal,
// cast to float, its per-row count, and the incoming gradient divided by it.
graph.param trainable @a = dense<0.5> : tensor<2x3xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %a = graph.load_param @a : tensor<2x3xf32>
  %s = graph.reduce_max %a {axes = [1], keepdims = false} : tensor<2x3xf32> -> tensor<2xf32>
  %l = graph.reduce_sum %s {axes = [0], keepdims = false} : tensor<2xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[A:.*]] = graph.load_param @a
// CHECK: %[[MAX:.*]] = graph.reduce_max %[[A]]
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1xf32> -> tensor<2xf32>
// CHECK: %[[MR:.*]] = graph.reshape %[[MAX]] : tensor<2xf32> -> tensor<2x1xf32>
// CHECK: %[[MB:.*]] = graph.expand %[[MR]] : tensor<2x1xf32> -> tensor<2x3xf32>
// CHECK: %[[MASK:.*]] = graph.equal %[[A]], %[[MB]] : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xi1>
// CHECK: %[[MF:.*]] = graph.cast %[[MASK]] : tensor<2x3xi1> -> tensor<2x3xf32>
// CHECK: %[[N:.*]] = graph.reduce_sum %[[MF]] {axes = [1], keepdims = false} : tensor<2x3xf32> -> tensor<2xf32>
// CHECK: %[[SHARE:.*]] = graph.div %[[G]], %[[N]]
// CHECK: %[[SR:.*]] = graph.reshape %[[SHARE]] : tensor<2xf32> -> tensor<2x1xf32>
// CHECK: %[[SB:.*]] = graph.expand %[[SR]] : tensor<2x1xf32> -> tensor<2x3xf32>
// CHECK: %[[DA:.*]] = graph.mul %[[SB]], %[[MF]]
// CHECK: return %{{.*}}, %[[DA]]

// -----

// Tests that softmax's gradient is graph.softmax_grad of the forward result
// and the incoming gradient along the same axis, with log = false.
graph.param trainable @a = dense<0.5> : tensor<2x5xf32>
func.func @forward(%x: tensor<2x5xf32>) -> (tensor<f32> {graph.loss}) {
  %a = graph.load_param @a : tensor<2x5xf32>
  %p = graph.softmax %a {axis = 0 : i64} : tensor<2x5xf32>
  %y = graph.mul %p, %x : tensor<2x5xf32>, tensor<2x5xf32> -> tensor<2x5xf32>
  %l = graph.reduce_sum %y {axes = [0, 1], keepdims = false} : tensor<2x5xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[P:.*]] = graph.softmax
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<2x5xf32>
// CHECK: %[[GP:.*]] = graph.mul %[[G]], %arg0
// CHECK: %[[DA:.*]] = graph.softmax_grad %[[P]], %[[GP]] {axis = 0 : i64, log = false} : tensor<2x5xf32>
// CHECK: return %{{.*}}, %[[DA]]

// -----

// Tests that log_softmax's gradient is graph.softmax_grad of the forward
// result and the incoming gradient along the same axis, with log = true.
graph.param trainable @a = dense<0.5> : tensor<2x5xf32>
func.func @forward(%x: tensor<2x5xf32>) -> (tensor<f32> {graph.loss}) {
  %a = graph.load_param @a : tensor<2x5xf32>
  %p = graph.log_softmax %a {axis = 1 : i64} : tensor<2x5xf32>
  %y = graph.mul %p, %x : tensor<2x5xf32>, tensor<2x5xf32> -> tensor<2x5xf32>
  %l = graph.reduce_sum %y {axes = [0, 1], keepdims = false} : tensor<2x5xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[P:.*]] = graph.log_softmax
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<2x5xf32>
// CHECK: %[[GP:.*]] = graph.mul %[[G]], %arg0
// CHECK: %[[DA:.*]] = graph.softmax_grad %[[P]], %[[GP]] {axis = 1 : i64, log = true} : tensor<2x5xf32>
// CHECK: return %{{.*}}, %[[DA]]

// -----

// Tests that layer_norm's gradient is one graph.layer_norm_grad (same axis
// and epsilon) whose three results are the input, scale and bias gradients;
// the input gradient flows on into the producer of the input.
graph.param trainable @g = dense<1.0> : tensor<4xf32>
graph.param trainable @b = dense<0.0> : tensor<4xf32>
graph.param trainable @w = dense<0.5> : tensor<2x3x4xf32>
func.func @forward(%x: tensor<2x3x4xf32>) -> (tensor<f32> {graph.loss}) {
  %g = graph.load_param @g : tensor<4xf32>
  %b = graph.load_param @b : tensor<4xf32>
  %w = graph.load_param @w : tensor<2x3x4xf32>
  %u = graph.mul %x, %w : tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %y = graph.layer_norm %u, %g, %b {axis = 2 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  %l = graph.reduce_sum %y {axes = [0, 1, 2], keepdims = false} : tensor<2x3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK-SAME: tensor<4xf32> {graph.grad_of = @g}, tensor<4xf32> {graph.grad_of = @b}, tensor<2x3x4xf32> {graph.grad_of = @w}
// CHECK: %[[S:.*]] = graph.load_param @g
// CHECK: %[[U:.*]] = graph.mul %arg0
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1x1xf32> -> tensor<2x3x4xf32>
// CHECK: %[[DX:.*]], %[[DS:.*]], %[[DB:.*]] = graph.layer_norm_grad %[[U]], %[[S]], %[[G]] {axis = 2 : i64, epsilon = 1.000000e-05 : f64} : tensor<2x3x4xf32>, tensor<4xf32>
// CHECK: %[[DW:.*]] = graph.mul %[[DX]], %arg0
// CHECK: return %{{.*}}, %[[DS]], %[[DB]], %[[DW]]

// -----

// Tests that layer_norm without bias over the last two axes (axis 1) returns
// only the scale gradient of its graph.layer_norm_grad (the input is data).
graph.param trainable @g = dense<1.0> : tensor<3x4xf32>
func.func @forward(%x: tensor<2x3x4xf32>) -> (tensor<f32> {graph.loss}) {
  %g = graph.load_param @g : tensor<3x4xf32>
  %y = graph.layer_norm %x, %g {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<2x3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
  %l = graph.reduce_sum %y {axes = [0, 1, 2], keepdims = false} : tensor<2x3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[DX:.*]], %[[DS:.*]], %[[DB:.*]] = graph.layer_norm_grad %arg0, %{{.*}}, %{{.*}} {axis = 1 : i64, epsilon = 1.000000e-05 : f64} : tensor<2x3x4xf32>, tensor<3x4xf32>
// CHECK-NEXT: return %{{.*}}, %[[DS]] : tensor<f32>, tensor<3x4xf32>

// -----

// Tests that softmax_cross_entropy_loss's gradient is one
// graph.softmax_cross_entropy_loss_grad of the scores, the labels and the
// incoming gradient, with the same reduction and ignore_index; the labels get
// no gradient.
graph.param trainable @s = dense<0.5> : tensor<2x5x3xf32>
func.func @forward(%t: tensor<2x3xi64>) -> (tensor<f32> {graph.loss}) {
  %s = graph.load_param @s : tensor<2x5x3xf32>
  %l = graph.softmax_cross_entropy_loss %s, %t {ignore_index = -1 : i64, reduction = "mean"} : tensor<2x5x3xf32>, tensor<2x3xi64> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[S:.*]] = graph.load_param @s
// CHECK: %[[SEED:.*]] = graph.constant {graph.loss_seed} dense<1.000000e+00> : tensor<f32>
// CHECK: %[[DS:.*]] = graph.softmax_cross_entropy_loss_grad %[[S]], %arg0, %[[SEED]] {ignore_index = -1 : i64, reduction = "mean"} : tensor<2x5x3xf32>, tensor<2x3xi64>, tensor<f32>
// CHECK: return %{{.*}}, %[[DS]]

// -----

// Tests that gather's gradient is graph.gather_grad of the incoming gradient
// and the same indices and axis, shaped like the table (an embedding).
graph.param trainable @e = dense<0.5> : tensor<5x3xf32>
func.func @forward(%i: tensor<2x4xi64>) -> (tensor<f32> {graph.loss}) {
  %e = graph.load_param @e : tensor<5x3xf32>
  %y = graph.gather %e, %i {axis = 0 : i64} : tensor<5x3xf32>, tensor<2x4xi64> -> tensor<2x4x3xf32>
  %l = graph.reduce_sum %y {axes = [0, 1, 2], keepdims = false} : tensor<2x4x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1x1xf32> -> tensor<2x4x3xf32>
// CHECK: %[[DE:.*]] = graph.gather_grad %[[G]], %arg0 {axis = 0 : i64} : tensor<2x4x3xf32>, tensor<2x4xi64> -> tensor<5x3xf32>
// CHECK: return %{{.*}}, %[[DE]]

// -----

// Tests that reshape's gradient reshapes the incoming gradient back to the
// input's shape.
graph.param trainable @a = dense<0.5> : tensor<2x3x4xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %a = graph.load_param @a : tensor<2x3x4xf32>
  %r = graph.reshape %a : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %l = graph.reduce_sum %r {axes = [0, 1], keepdims = false} : tensor<6x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<6x4xf32>
// CHECK: %[[DA:.*]] = graph.reshape %[[G]] : tensor<6x4xf32> -> tensor<2x3x4xf32>
// CHECK: return %{{.*}}, %[[DA]]

// -----

// Tests that transpose's gradient transposes the incoming gradient by the
// inverse permutation ([2, 0, 1] -> [1, 2, 0]).
graph.param trainable @a = dense<0.5> : tensor<2x3x4xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %a = graph.load_param @a : tensor<2x3x4xf32>
  %t = graph.transpose %a {perm = [2, 0, 1]} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %l = graph.reduce_sum %t {axes = [0, 1, 2], keepdims = false} : tensor<4x2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1x1xf32> -> tensor<4x2x3xf32>
// CHECK: %[[DA:.*]] = graph.transpose %[[G]] {perm = [1, 2, 0]} : tensor<4x2x3xf32> -> tensor<2x3x4xf32>
// CHECK: return %{{.*}}, %[[DA]]

// -----

// Tests that expand's gradient sums the incoming gradient back to the
// input's shape (over the new leading dim and the broadcast size-1 dim).
graph.param trainable @a = dense<0.5> : tensor<3x1xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %a = graph.load_param @a : tensor<3x1xf32>
  %e = graph.expand %a : tensor<3x1xf32> -> tensor<2x3x4xf32>
  %l = graph.reduce_sum %e {axes = [0, 1, 2], keepdims = false} : tensor<2x3x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1x1xf32> -> tensor<2x3x4xf32>
// CHECK: %[[DA:.*]] = graph.sum_to %[[G]] : tensor<2x3x4xf32> -> tensor<3x1xf32>
// CHECK: return %{{.*}}, %[[DA]]

// -----

// Tests that slice's gradient is graph.slice_grad with the same normalized
// starts, ends and (negative) steps, scattering back into the input's shape.
graph.param trainable @a = dense<0.5> : tensor<5x6xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %a = graph.load_param @a : tensor<5x6xf32>
  %s = graph.slice %a {starts = [4, 5], ends = [0, -1], steps = [-1, -2]} : tensor<5x6xf32> -> tensor<4x3xf32>
  %l = graph.reduce_sum %s {axes = [0, 1], keepdims = false} : tensor<4x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<4x3xf32>
// CHECK: %[[DA:.*]] = graph.slice_grad %[[G]] {ends = [0, -1], starts = [4, 5], steps = [-1, -2]} : tensor<4x3xf32> -> tensor<5x6xf32>
// CHECK: return %{{.*}}, %[[DA]]

// -----

// Tests that concat's gradient slices the incoming gradient along the axis
// at each needed input's offset (columns [0, 3) and [5, 9)); the data input
// in the middle gets no slice.
graph.param trainable @a = dense<0.5> : tensor<2x3xf32>
graph.param trainable @b = dense<0.25> : tensor<2x4xf32>
func.func @forward(%x: tensor<2x2xf32>) -> (tensor<f32> {graph.loss}) {
  %a = graph.load_param @a : tensor<2x3xf32>
  %b = graph.load_param @b : tensor<2x4xf32>
  %c = graph.concat %a, %x, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x2xf32>, tensor<2x4xf32>) -> tensor<2x9xf32>
  %l = graph.reduce_sum %c {axes = [0, 1], keepdims = false} : tensor<2x9xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<2x9xf32>
// CHECK: %[[DA:.*]] = graph.slice %[[G]] {ends = [2, 3], starts = [0, 0], steps = [1, 1]} : tensor<2x9xf32> -> tensor<2x3xf32>
// CHECK-NOT: tensor<2x2xf32>
// CHECK: %[[DB:.*]] = graph.slice %[[G]] {ends = [2, 9], starts = [0, 5], steps = [1, 1]} : tensor<2x9xf32> -> tensor<2x4xf32>
// CHECK: return %{{.*}}, %[[DA]], %[[DB]]

// -----

// Tests that trilu's gradient applies the same trilu (upper, k) to the
// incoming gradient.
graph.param trainable @a = dense<0.5> : tensor<4x4xf32>
func.func @forward() -> (tensor<f32> {graph.loss}) {
  %a = graph.load_param @a : tensor<4x4xf32>
  %t = graph.trilu %a {upper = false, k = -1 : i64} : tensor<4x4xf32>
  %l = graph.reduce_sum %t {axes = [0, 1], keepdims = false} : tensor<4x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[G:.*]] = graph.expand %{{.*}} : tensor<1x1xf32> -> tensor<4x4xf32>
// CHECK: %[[DA:.*]] = graph.trilu %[[G]] {k = -1 : i64, upper = false} : tensor<4x4xf32>
// CHECK: return %{{.*}}, %[[DA]]
