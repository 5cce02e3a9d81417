// RUN: zeroc-opt %s -split-input-file -verify-diagnostics

// Tests the verifiers of the optimizer step's ops.

graph.param trainable @w = dense<0.5> : tensor<4xf32>
func.func @f(%p: !zero.shard<params, f32, 2, device>) -> tensor<i1> {
  // expected-error@+1 {{operand 0 must be a grads shard}}
  %of = zero.has_overflow %p : !zero.shard<params, f32, 2, device> -> tensor<i1>
  return %of : tensor<i1>
}

// -----

func.func @f(%g: tensor<4xi64>) -> tensor<f64> {
  // expected-error@+1 {{operand 0 must hold floating-point gradients}}
  %ss = zero.sum_squares %g : tensor<4xi64> -> tensor<f64>
  return %ss : tensor<f64>
}

// -----

func.func @f(%ss: tensor<f64>) -> tensor<f64> {
  // expected-error@+1 {{max_norm must be finite and non-negative, got -1}}
  %n, %f = zero.clip_grad_norm %ss, %ss {world_size = 1 : i64, max_norm = -1.0 : f64} : tensor<f64>, tensor<f64> -> tensor<f64>, tensor<f64>
  return %n : tensor<f64>
}

// -----

graph.param @frozen = dense<0.5> : tensor<4xf32>
func.func @f() -> tensor<4xf32> {
  // expected-error@+1 {{'frozen' is not trainable}}
  %g = zero.grad_accumulator @frozen : tensor<4xf32>
  return %g : tensor<4xf32>
}

// -----

graph.param trainable @w = dense<0.5> : tensor<4xf32>
func.func @f() -> tensor<2xf32> {
  // expected-error@+1 {{full accumulator shape must match parameter type 'tensor<4xf32>'}}
  %g = zero.grad_accumulator @w : tensor<2xf32>
  return %g : tensor<2xf32>
}

// -----

graph.param trainable @w = dense<0.5> : tensor<4xf32>
func.func @f() {
  // expected-error@+1 {{shard must be a params shard of element type 'f32'}}
  zero.gather_replica @w : !zero.shard<grads, f32, 2, device>
  return
}

// -----

graph.param trainable @w = dense<0.5> : tensor<4xf32>
func.func @f(%g: tensor<3xf32>, %s: tensor<f64>, %t: tensor<i64>) {
  // expected-error@+1 {{gradient shape must match parameter type 'tensor<4xf32>'}}
  zero.sgd_update @w, %g, %s, %s, %t {optimizer = #zero.sgd<>} : tensor<3xf32>, tensor<f64>, tensor<f64>, tensor<i64>
  return
}

// -----

graph.param trainable @w = dense<0.5> : tensor<4xf32>
func.func @f(%g: tensor<4xf32>, %s: tensor<f64>, %t: tensor<i64>) {
  // expected-error@+1 {{has 2 parameters but 1 gradients}}
  zero.adam_update_multi [@w, @w](%g), %s, %s, %s, %s, %t {optimizer = #zero.adam<>} : (tensor<4xf32>), tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<i64>
  return
}

// -----

graph.param trainable @w = dense<0.5> : tensor<4xf32>
func.func @f(%g: tensor<4xf32>, %s: tensor<f64>, %t: tensor<i64>) {
  // expected-error@+1 {{updates @w twice}}
  zero.adam_update_multi [@w, @w](%g, %g), %s, %s, %s, %s, %t {optimizer = #zero.adam<>} : (tensor<4xf32>, tensor<4xf32>), tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<i64>
  return
}

// -----

func.func @f(%s: tensor<f64>, %t: tensor<i64>) {
  // expected-error@+1 {{must update at least one parameter}}
  "zero.adam_update_multi"(%s, %s, %s, %s, %t) {optimizer = #zero.adam<>, params = []} : (tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<i64>) -> ()
  return
}

// -----

graph.param trainable @w = dense<0.5> : tensor<4xf32>
graph.param trainable @b = dense<0.5> : tensor<2xf32>
func.func @f(%g: tensor<4xf32>, %s: tensor<f64>, %t: tensor<i64>) {
  // expected-error@+1 {{gradient shape must match parameter type 'tensor<2xf32>'}}
  zero.adam_update_multi [@w, @b](%g, %g), %s, %s, %s, %s, %t {optimizer = #zero.adam<>} : (tensor<4xf32>, tensor<4xf32>), tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<i64>
  return
}

// -----

graph.param trainable @w = dense<0.5> : tensor<4xf32>
func.func @f(%g: tensor<4xf32>, %s: tensor<f64>, %t: tensor<i64>) {
  // expected-error@+1 {{'zero.sgd_update_multi' op updates @w twice}}
  zero.sgd_update_multi [@w, @w](%g, %g), %s, %s, %t {optimizer = #zero.sgd<>} : (tensor<4xf32>, tensor<4xf32>), tensor<f64>, tensor<f64>, tensor<i64>
  return
}

// -----

func.func @f(%s: tensor<f64>, %t: tensor<i64>) {
  // expected-error@+1 {{'zero.sgd_update_multi' op must update at least one parameter}}
  "zero.sgd_update_multi"(%s, %s, %t) {optimizer = #zero.sgd<>, params = []} : (tensor<f64>, tensor<f64>, tensor<i64>) -> ()
  return
}

// -----

graph.param trainable @w = dense<0.5> : tensor<4xf32>
graph.param trainable @b = dense<0.5> : tensor<2xf32>
func.func @f(%g: tensor<4xf32>, %s: tensor<f64>, %t: tensor<i64>) {
  // expected-error@+1 {{'zero.sgd_update_multi' op gradient shape must match parameter type 'tensor<2xf32>'}}
  zero.sgd_update_multi [@w, @b](%g, %g), %s, %s, %t {optimizer = #zero.sgd<>} : (tensor<4xf32>, tensor<4xf32>), tensor<f64>, tensor<f64>, tensor<i64>
  return
}

// -----

func.func @f() {
  // expected-error@+1 {{'zero.advance_step' op expects parent op 'zero.if_finite'}}
  zero.advance_step
  return
}

// -----

// expected-error@+1 {{nesterov needs a positive momentum and zero dampening}}
func.func private @f() attributes {o = #zero.sgd<nesterov = true>}

// -----

graph.param trainable @w = dense<0.5> : tensor<4xf32>
func.func @f() {
  // expected-error@+1 {{result must be a params shard of element type 'f32'}}
  %s = zero.replica_slice @w : !zero.shard<grads, f32, 2, device>
  return
}

// -----

graph.param trainable @w = dense<0.5> : tensor<4xf32>
func.func @f() {
  // expected-error@+1 {{slice of 5 elements is larger than parameter 'w' (4 elements)}}
  %s = zero.replica_slice @w : !zero.shard<params, f32, 5, device>
  return
}

// -----

graph.param @frozen = dense<0.5> : tensor<4xf32>
func.func @f() {
  // expected-error@+1 {{'frozen' is not trainable}}
  %s = zero.replica_slice @frozen : !zero.shard<params, f32, 2, device>
  return
}

// -----

graph.param trainable @w = dense<0.5> : tensor<4xf32>
func.func @f(%b: !zero.flat<grads, f32, 8, 2>) {
  // expected-error@+1 {{buffer must hold params of element type 'f32'}}
  zero.unpack_replica [@w], %b {offsets = [0]} : !zero.flat<grads, f32, 8, 2>
  return
}

// -----

graph.param trainable @w = dense<0.5> : tensor<4xf32>
func.func @f(%b: !zero.flat<params, f32, 8, 2>) {
  // expected-error@+1 {{shard range [3, 5) of @w exceeds slice size 4}}
  zero.unpack_replica [@w], %b {offsets = [3]} : !zero.flat<params, f32, 8, 2>
  return
}

// -----

graph.param trainable @w = dense<0.5> : tensor<4xf32>
func.func @f(%b: !zero.flat<params, f32, 8, 2>) {
  // expected-error@+1 {{has 1 offsets for 2 parameters}}
  zero.unpack_replica [@w, @w], %b {offsets = [0]} : !zero.flat<params, f32, 8, 2>
  return
}

// -----

graph.param trainable @w = dense<0.5> : tensor<4xf32>
func.func @f(%b: !zero.flat<params, f32, 8, 2>) {
  // expected-error@+1 {{unpacks @w twice}}
  zero.unpack_replica [@w, @w], %b {offsets = [0, 2]} : !zero.flat<params, f32, 8, 2>
  return
}
