// RUN: zeroc-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

// Tests that a flat buffer cannot be empty.
// expected-error @+1 {{flat buffer size must be positive, got 0}}
func.func private @f(!zero.flat<params, f32, 0, 1>)

// -----

// Tests that a flat buffer is partitioned across at least one rank.
// expected-error @+1 {{flat buffer world size must be at least 1, got 0}}
func.func private @f(!zero.flat<params, f32, 16, 0>)

// -----

// Tests that a flat buffer is padded to a multiple of the world size.
// expected-error @+1 {{flat buffer size 10 is not padded to a multiple of the world size 4}}
func.func private @f(!zero.flat<params, f32, 10, 4>)

// -----

// Tests that a flat buffer holds numbers.
// expected-error @+1 {{flat buffer element type must be a float or integer type, got 'index'}}
func.func private @f(!zero.flat<params, index, 16, 4>)

// -----

// Tests that a shard cannot be empty.
// expected-error @+1 {{shard size must be positive, got -4}}
func.func private @f(!zero.shard<grads, f32, -4, device>)

// -----

// Tests that a shard holds numbers.
// expected-error @+1 {{shard element type must be a float or integer type, got 'tensor<4xf32>'}}
func.func private @f(!zero.shard<grads, tensor<4xf32>, 4, device>)

// -----

// Tests that a token carries the result of a collective.
// expected-error @+1 {{token payload must be a !zero.flat, a !zero.shard or a statically shaped tensor, got 'tensor<?xf32>'}}
func.func private @f(!zero.token<tensor<?xf32>>)

//===----------------------------------------------------------------------===//
// zero.pack, zero.view
//===----------------------------------------------------------------------===//

// -----

// Tests that zero.pack has one offset per input.
func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'zero.pack' op expected 2 offsets, one per input, got 1}}
  %0 = zero.pack %a, %b {offsets = [0]} : (tensor<4xf32>, tensor<4xf32>) -> !zero.flat<params, f32, 8, 2>
  return
}

// -----

// Tests that zero.pack offsets are non-negative.
func.func @f(%a: tensor<4xf32>) {
  // expected-error @+1 {{'zero.pack' op input #0 offset must be non-negative, got -1}}
  %0 = zero.pack %a {offsets = [-1]} : (tensor<4xf32>) -> !zero.flat<params, f32, 8, 2>
  return
}

// -----

// Tests that zero.pack inputs have the buffer's element type.
func.func @f(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{'zero.pack' op input #1 element type 'f16' does not match buffer element type 'f32'}}
  %0 = zero.pack %a, %b {offsets = [0, 4]} : (tensor<4xf32>, tensor<4xf16>) -> !zero.flat<params, f32, 8, 2>
  return
}

// -----

// Tests that zero.pack inputs fit in the buffer.
func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'zero.pack' op input #0 range [4, 10) exceeds buffer size 8}}
  %0 = zero.pack %a {offsets = [4]} : (tensor<2x3xf32>) -> !zero.flat<params, f32, 8, 2>
  return
}

// -----

// Tests that zero.pack inputs do not overlap, whatever their order.
func.func @f(%a: tensor<4xf32>, %b: tensor<2xf32>, %c: tensor<2xf32>) {
  // expected-error @+1 {{'zero.pack' op input #0 range [4, 8) overlaps input #2 range [3, 5)}}
  %0 = zero.pack %a, %b, %c {offsets = [4, 0, 3]} : (tensor<4xf32>, tensor<2xf32>, tensor<2xf32>) -> !zero.flat<params, f32, 8, 2>
  return
}

// -----

// Tests that a zero.view offset is non-negative.
func.func @f(%f: !zero.flat<params, f32, 8, 2>) {
  // expected-error @+1 {{'zero.view' op attribute 'offset' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %0 = zero.view %f {offset = -1} : !zero.flat<params, f32, 8, 2> -> tensor<2xf32>
  return
}

// -----

// Tests that a zero.view has the buffer's element type.
func.func @f(%f: !zero.flat<params, f32, 8, 2>) {
  // expected-error @+1 {{'zero.view' op result element type 'bf16' does not match buffer element type 'f32'}}
  %0 = zero.view %f {offset = 0} : !zero.flat<params, f32, 8, 2> -> tensor<2xbf16>
  return
}

// -----

// Tests that a zero.view lies inside the buffer.
func.func @f(%f: !zero.flat<params, f32, 8, 2>) {
  // expected-error @+1 {{'zero.view' op range [6, 10) exceeds buffer size 8}}
  %0 = zero.view %f {offset = 6} : !zero.flat<params, f32, 8, 2> -> tensor<2x2xf32>
  return
}

// -----

// Tests that zero.all_gather reads device shards.
func.func @f(%s: !zero.shard<params, f32, 4, host>) {
  // expected-error @+1 {{'zero.all_gather' op gathered shard must be in device memory}}
  %0 = zero.all_gather %s : !zero.shard<params, f32, 4, host> -> !zero.flat<params, f32, 8, 2>
  return
}

// -----

// Tests that an in-place zero.all_gather is one rank's (its shard is its
// whole buffer), as is an in-place zero.all_gather_start.
func.func @f(%s: !zero.shard<params, f32, 4, device>) {
  // expected-error @+1 {{'zero.all_gather' op in place needs a world of one rank, not 2}}
  %0 = zero.all_gather %s {in_place} : !zero.shard<params, f32, 4, device> -> !zero.flat<params, f32, 8, 2>
  return
}

// -----

func.func @f(%s: !zero.shard<params, f32, 4, device>) {
  // expected-error @+1 {{'zero.all_gather_start' op in place needs a world of one rank, not 2}}
  %t = zero.all_gather_start %s {in_place} : !zero.shard<params, f32, 4, device> -> !zero.token<!zero.flat<params, f32, 8, 2>>
  %0 = zero.wait %t : !zero.token<!zero.flat<params, f32, 8, 2>> -> !zero.flat<params, f32, 8, 2>
  return
}

// -----

// Tests that zero.all_gather produces world shards' worth of elements.
func.func @f(%s: !zero.shard<params, f32, 4, device>) {
  // expected-error @+1 {{'zero.all_gather' op shard size 4 is not the flat buffer size 16 divided by the world size 2}}
  %0 = zero.all_gather %s : !zero.shard<params, f32, 4, device> -> !zero.flat<params, f32, 16, 2>
  return
}

// -----

// Tests that zero.reduce_scatter rejects max.
func.func @f(%g: !zero.flat<grads, f32, 8, 2>) {
  // expected-error @+1 {{'zero.reduce_scatter' op reduce_scatter supports sum and avg}}
  %0 = zero.reduce_scatter %g {reduction = #zero<reduction max>} : !zero.flat<grads, f32, 8, 2> -> !zero.shard<grads, f32, 4, device>
  return
}

// -----

// Tests that zero.reduce_scatter leaves its result in device memory.
func.func @f(%g: !zero.flat<grads, f32, 8, 2>) {
  // expected-error @+1 {{'zero.reduce_scatter' op scattered shard must be in device memory}}
  %0 = zero.reduce_scatter %g {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 8, 2> -> !zero.shard<grads, f32, 4, host>
  return
}

// -----

// Tests that a collective's scale is a positive finite number.
func.func @f(%g: !zero.flat<grads, f32, 8, 2>) {
  // expected-error @+1 {{'zero.reduce_scatter' op scale must be a positive finite number, got -5.000000e-01}}
  %0 = zero.reduce_scatter %g {reduction = #zero<reduction sum>, scale = -0.5 : f64} : !zero.flat<grads, f32, 8, 2> -> !zero.shard<grads, f32, 4, device>
  return
}

// -----

// Tests that zero.reduce_scatter keeps the buffer kind.
func.func @f(%g: !zero.flat<grads, f32, 8, 2>) {
  // expected-error @+1 {{'zero.reduce_scatter' op shard kind 'optim_state' does not match flat buffer kind 'grads'}}
  %0 = zero.reduce_scatter %g {reduction = #zero<reduction avg>} : !zero.flat<grads, f32, 8, 2> -> !zero.shard<optim_state, f32, 4, device>
  return
}

// -----

// Tests that a scale needs a linear reduction.
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'zero.all_reduce' op scale requires a sum or avg reduction}}
  %0 = zero.all_reduce %x {reduction = #zero<reduction max>, scale = 2.0 : f64} : tensor<4xf32>
  return
}

// -----

// Tests that i1 flags are combined with max.
func.func @f(%x: tensor<i1>) {
  // expected-error @+1 {{'zero.all_reduce' op i1 values must be reduced with max}}
  %0 = zero.all_reduce %x {reduction = #zero<reduction sum>} : tensor<i1>
  return
}

// -----

// Tests that avg needs floating-point values.
func.func @f(%x: !zero.flat<grads, i32, 8, 2>) {
  // expected-error @+1 {{'zero.all_reduce' op avg reduction requires a floating-point element type, got 'i32'}}
  %0 = zero.all_reduce %x {reduction = #zero<reduction avg>} : !zero.flat<grads, i32, 8, 2>
  return
}

// -----

// Tests that zero.all_reduce reduces flat buffers and static tensors only.
func.func @f(%s: !zero.shard<grads, f32, 4, device>) {
  // expected-error @+1 {{'zero.all_reduce' op operand #0 must be flat buffer or statically shaped tensor}}
  %0 = zero.all_reduce %s {reduction = #zero<reduction sum>} : !zero.shard<grads, f32, 4, device>
  return
}

//===----------------------------------------------------------------------===//
// Asynchronous collectives
//===----------------------------------------------------------------------===//

// -----

// Tests that a started collective is waited.
func.func @f(%s: !zero.shard<params, f32, 4, device>) {
  // expected-error @+1 {{'zero.all_gather_start' op token must be waited exactly once}}
  %t = zero.all_gather_start %s : !zero.shard<params, f32, 4, device> -> !zero.token<!zero.flat<params, f32, 8, 2>>
  return
}

// -----

// Tests that a carry (waited for by the next micro-step) has no wait here.
func.func @f(%s: !zero.shard<params, f32, 4, device>) {
  // expected-error @+1 {{'zero.all_gather_start' op token of a carry must have no use here (the next micro-step waits for it)}}
  %t = zero.all_gather_start %s {carry = 0 : i64} : !zero.shard<params, f32, 4, device> -> !zero.token<!zero.flat<params, f32, 8, 2>>
  %0 = zero.wait %t : !zero.token<!zero.flat<params, f32, 8, 2>> -> !zero.flat<params, f32, 8, 2>
  return
}

// -----

// Tests that a gather is not both a carry and carried.
func.func @f(%s: !zero.shard<params, f32, 4, device>) {
  // expected-error @+1 {{'zero.all_gather_start' op cannot be both a carry and carried}}
  %t = zero.all_gather_start %s {carry = 0 : i64, carried = 0 : i64} : !zero.shard<params, f32, 4, device> -> !zero.token<!zero.flat<params, f32, 8, 2>>
  return
}

// -----

// Tests that a carry index is not negative.
func.func @f(%s: !zero.shard<params, f32, 4, device>) {
  // expected-error @+1 {{'zero.all_gather_start' op carry index must be >= 0, got -1}}
  %t = zero.all_gather_start %s {carried = -1 : i64} : !zero.shard<params, f32, 4, device> -> !zero.token<!zero.flat<params, f32, 8, 2>>
  %0 = zero.wait %t : !zero.token<!zero.flat<params, f32, 8, 2>> -> !zero.flat<params, f32, 8, 2>
  return
}

// -----

// Tests that a started collective is waited only once.
func.func @f(%g: !zero.flat<grads, f32, 8, 2>) {
  // expected-error @+1 {{'zero.reduce_scatter_start' op token must be waited exactly once}}
  %t = zero.reduce_scatter_start %g {reduction = #zero<reduction avg>} : !zero.flat<grads, f32, 8, 2> -> !zero.token<!zero.shard<grads, f32, 4, device>>
  %0 = zero.wait %t : !zero.token<!zero.shard<grads, f32, 4, device>> -> !zero.shard<grads, f32, 4, device>
  %1 = zero.wait %t : !zero.token<!zero.shard<grads, f32, 4, device>> -> !zero.shard<grads, f32, 4, device>
  return
}

// -----

// Tests that a token is used only by zero.wait.
func.func @f(%x: tensor<f32>) -> !zero.token<tensor<f32>> {
  // expected-error @+1 {{'zero.all_reduce_start' op token must be waited exactly once}}
  %t = zero.all_reduce_start %x {reduction = #zero<reduction sum>} : tensor<f32> -> !zero.token<tensor<f32>>
  return %t : !zero.token<tensor<f32>>
}

// -----

// Tests that zero.all_gather_start obeys the zero.all_gather type rules.
func.func @f(%s: !zero.shard<params, f32, 4, device>) {
  // expected-error @+1 {{'zero.all_gather_start' op shard element type 'f32' does not match flat buffer element type 'f16'}}
  %t = zero.all_gather_start %s : !zero.shard<params, f32, 4, device> -> !zero.token<!zero.flat<params, f16, 8, 2>>
  %0 = zero.wait %t : !zero.token<!zero.flat<params, f16, 8, 2>> -> !zero.flat<params, f16, 8, 2>
  return
}

// -----

// Tests that zero.all_gather_start returns a token of a flat buffer.
func.func @f(%s: !zero.shard<params, f32, 4, device>) {
  // expected-error @+1 {{'zero.all_gather_start' op result #0 must be token of a flat per-dtype buffer partitioned across the ranks}}
  %t = zero.all_gather_start %s : !zero.shard<params, f32, 4, device> -> !zero.token<!zero.shard<params, f32, 4, device>>
  %0 = zero.wait %t : !zero.token<!zero.shard<params, f32, 4, device>> -> !zero.shard<params, f32, 4, device>
  return
}

// -----

// Tests that zero.reduce_scatter_start obeys the zero.reduce_scatter rules.
func.func @f(%g: !zero.flat<grads, f32, 8, 2>) {
  // expected-error @+1 {{'zero.reduce_scatter_start' op reduce_scatter supports sum and avg}}
  %t = zero.reduce_scatter_start %g {reduction = #zero<reduction max>} : !zero.flat<grads, f32, 8, 2> -> !zero.token<!zero.shard<grads, f32, 4, device>>
  %0 = zero.wait %t : !zero.token<!zero.shard<grads, f32, 4, device>> -> !zero.shard<grads, f32, 4, device>
  return
}

// -----

// Tests that zero.all_reduce_start's token carries the input type.
func.func @f(%x: tensor<f32>) {
  // expected-error @+1 {{'zero.all_reduce_start' op token payload type 'tensor<f64>' does not match input type 'tensor<f32>'}}
  %t = zero.all_reduce_start %x {reduction = #zero<reduction sum>} : tensor<f32> -> !zero.token<tensor<f64>>
  %0 = zero.wait %t : !zero.token<tensor<f64>> -> tensor<f64>
  return
}

// -----

// Tests that zero.all_reduce_start obeys the zero.all_reduce rules.
func.func @f(%x: tensor<i1>) {
  // expected-error @+1 {{'zero.all_reduce_start' op i1 values must be reduced with max}}
  %t = zero.all_reduce_start %x {reduction = #zero<reduction avg>} : tensor<i1> -> !zero.token<tensor<i1>>
  %0 = zero.wait %t : !zero.token<tensor<i1>> -> tensor<i1>
  return
}

// -----

// Tests that zero.wait returns the token's payload.
func.func @f(%t: !zero.token<tensor<f32>>) {
  // expected-error @+1 {{'zero.wait' op result type 'tensor<f64>' does not match token payload type 'tensor<f32>'}}
  %0 = zero.wait %t : !zero.token<tensor<f32>> -> tensor<f64>
  return
}

//===----------------------------------------------------------------------===//
// zero.release
//===----------------------------------------------------------------------===//

// -----

// Tests that only gathered buffers are released.
func.func @f(%f: !zero.flat<params, f32, 8, 2>) {
  // expected-error @+1 {{'zero.release' op released buffer must come from zero.all_gather}}
  zero.release %f : !zero.flat<params, f32, 8, 2>
  return
}

// -----

// Tests that the wait of a non-gather collective is not releasable.
func.func @f(%g: !zero.flat<grads, f32, 8, 2>) {
  %t = zero.all_reduce_start %g {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 8, 2> -> !zero.token<!zero.flat<grads, f32, 8, 2>>
  %r = zero.wait %t : !zero.token<!zero.flat<grads, f32, 8, 2>> -> !zero.flat<grads, f32, 8, 2>
  // expected-error @+1 {{'zero.release' op released buffer must come from zero.all_gather}}
  zero.release %r : !zero.flat<grads, f32, 8, 2>
  return
}

// -----

// Tests that only parameter buffers are released.
func.func @f(%s: !zero.shard<optim_state, f32, 4, device>) {
  %f = zero.all_gather %s : !zero.shard<optim_state, f32, 4, device> -> !zero.flat<optim_state, f32, 8, 2>
  // expected-error @+1 {{'zero.release' op released buffer must hold params, got 'optim_state'}}
  zero.release %f : !zero.flat<optim_state, f32, 8, 2>
  return
}

// -----

// Tests that a released buffer is not used afterwards.
func.func @f(%s: !zero.shard<params, f32, 4, device>) -> tensor<8xf32> {
  %f = zero.all_gather %s : !zero.shard<params, f32, 4, device> -> !zero.flat<params, f32, 8, 2>
  // expected-error @+1 {{'zero.release' op released buffer is used after the release}}
  zero.release %f : !zero.flat<params, f32, 8, 2>
  // expected-note @+1 {{used here}}
  %v = zero.view %f {offset = 0} : !zero.flat<params, f32, 8, 2> -> tensor<8xf32>
  return %v : tensor<8xf32>
}

// -----

graph.param @frozen = dense<0.5> : tensor<4xf32>
func.func @f(%g: tensor<4xf32>) {
  // expected-error @+1 {{'frozen' is not trainable}}
  zero.grad_accumulate @frozen, %g : tensor<4xf32>
  return
}

// -----

// Tests that buffer_load names a graph.buffer.
graph.param @p = dense<0.5> : tensor<4xf32>
func.func @f() -> tensor<4xf32> {
  // expected-error @+1 {{'p' does not name a graph.buffer}}
  %0 = zero.buffer_load @p : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Tests that buffer_store's value has the buffer's type.
graph.buffer @b = dense<0.5> : tensor<4xf32>
func.func @f(%v: tensor<2xf32>) {
  // expected-error @+1 {{type 'tensor<2xf32>' does not match buffer type 'tensor<4xf32>'}}
  zero.buffer_store @b, %v : tensor<2xf32>
  return
}

// -----

graph.param trainable @emb = dense<0.5> : tensor<16x4xf32>
func.func @f(%r: tensor<2x3xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{rows shape must be the indices' shape followed by a parameter row's, got 'tensor<2x3xf32>' for indices 'tensor<2xi64>' and parameter 'tensor<16x4xf32>'}}
  zero.grad_accumulate_rows @emb, %r, %i : tensor<2x3xf32>, tensor<2xi64>
  return
}

// -----

graph.param trainable @emb = dense<0.5> : tensor<16x4xf32>
func.func @f(%r: tensor<2x4xf32>, %i: tensor<2xf32>) {
  // expected-error @+1 {{indices must be i32 or i64, got 'f32'}}
  zero.grad_accumulate_rows @emb, %r, %i : tensor<2x4xf32>, tensor<2xf32>
  return
}

// -----

graph.param trainable @emb = dense<0.5> : tensor<16x4xf32>
func.func @f(%r: tensor<2x4xf16>, %i: tensor<2xi64>) {
  // expected-error @+1 {{rows must have the parameter's element type 'f32', got 'f16'}}
  zero.grad_accumulate_rows @emb, %r, %i : tensor<2x4xf16>, tensor<2xi64>
  return
}

// -----

graph.param @frozen_emb = dense<0.5> : tensor<16x4xf32>
func.func @f(%r: tensor<2x4xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{'frozen_emb' is not trainable}}
  zero.grad_accumulate_rows @frozen_emb, %r, %i : tensor<2x4xf32>, tensor<2xi64>
  return
}
