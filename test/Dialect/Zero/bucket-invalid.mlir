// RUN: zeroc-opt %s -split-input-file -verify-diagnostics

// Tests the verifiers of the bucket ops (zero.pack_shards, zero.shard_slice,
// zero.concat_shards, zero.unpack_shards).

// Tests that zero.pack_shards has one offset per input.
func.func @f(%a: tensor<4xf32>, %b: tensor<2xf32>) {
  // expected-error @+1 {{'zero.pack_shards' op expected 2 offsets, one per input, got 1}}
  %p = zero.pack_shards %a, %b {offsets = [0]} : (tensor<4xf32>, tensor<2xf32>) -> !zero.flat<grads, f32, 6, 2>
  return
}

// -----

// Tests that zero.pack_shards offsets are not negative.
func.func @f(%a: tensor<4xf32>) {
  // expected-error @+1 {{'zero.pack_shards' op input #0 offset must be non-negative, got -1}}
  %p = zero.pack_shards %a {offsets = [-1]} : (tensor<4xf32>) -> !zero.flat<grads, f32, 4, 2>
  return
}

// -----

// Tests that zero.pack_shards inputs have the bucket's element type.
func.func @f(%a: tensor<4xf32>, %b: tensor<2xf16>) {
  // expected-error @+1 {{'zero.pack_shards' op input #1 element type 'f16' does not match buffer element type 'f32'}}
  %p = zero.pack_shards %a, %b {offsets = [0, 2]} : (tensor<4xf32>, tensor<2xf16>) -> !zero.flat<grads, f32, 6, 2>
  return
}

// -----

// Tests that a shard lies inside one rank's slice: a 5-element tensor has
// 3-element shards at world size 2, which do not fit after offset 3 of a
// 5-element slice.
func.func @f(%a: tensor<4xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{'zero.pack_shards' op input #1 shard range [3, 6) exceeds slice size 5}}
  %p = zero.pack_shards %a, %b {offsets = [0, 3]} : (tensor<4xf32>, tensor<5xf32>) -> !zero.flat<grads, f32, 10, 2>
  return
}

// -----

// Tests that shards do not overlap, whatever the operand order.
func.func @f(%a: tensor<4xf32>, %b: tensor<5xf32>) {
  // expected-error @+1 {{'zero.pack_shards' op input #0 shard range [2, 4) overlaps input #1 shard range [0, 3)}}
  %p = zero.pack_shards %a, %b {offsets = [2, 0]} : (tensor<4xf32>, tensor<5xf32>) -> !zero.flat<grads, f32, 10, 2>
  return
}

// -----

// Tests that a shard slice keeps the kind, element type and memory space.
func.func @f(%s: !zero.shard<grads, f32, 5, device>) {
  // expected-error @+1 {{'zero.shard_slice' op result shard must have the operand's kind, element type and memory space}}
  %v = zero.shard_slice %s {offset = 0} : !zero.shard<grads, f32, 5, device> -> !zero.shard<params, f32, 2, device>
  return
}

// -----

// Tests that a shard slice lies inside the shard.
func.func @f(%s: !zero.shard<grads, f32, 5, device>) {
  // expected-error @+1 {{'zero.shard_slice' op range [4, 6) exceeds shard size 5}}
  %v = zero.shard_slice %s {offset = 4} : !zero.shard<grads, f32, 5, device> -> !zero.shard<grads, f32, 2, device>
  return
}

// -----

// Tests that a shard slice offset is not negative.
func.func @f(%s: !zero.shard<grads, f32, 5, device>) {
  // expected-error @+1 {{'zero.shard_slice' op attribute 'offset' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %v = zero.shard_slice %s {offset = -1} : !zero.shard<grads, f32, 5, device> -> !zero.shard<grads, f32, 2, device>
  return
}

// -----

// Tests that concatenated shards match the result's kind, element type and
// memory space.
func.func @f(%a: !zero.shard<params, f32, 3, device>, %b: !zero.shard<params, f32, 2, host>) {
  // expected-error @+1 {{'zero.concat_shards' op input #1 must have the result's kind, element type and memory space}}
  %c = zero.concat_shards %a, %b : (!zero.shard<params, f32, 3, device>, !zero.shard<params, f32, 2, host>) -> !zero.shard<params, f32, 5, device>
  return
}

// -----

// Tests that the concatenation is exactly as large as its inputs.
func.func @f(%a: !zero.shard<params, f32, 3, device>, %b: !zero.shard<params, f32, 2, device>) {
  // expected-error @+1 {{'zero.concat_shards' op result size 6 is not the sum of the input sizes, 5}}
  %c = zero.concat_shards %a, %b : (!zero.shard<params, f32, 3, device>, !zero.shard<params, f32, 2, device>) -> !zero.shard<params, f32, 6, device>
  return
}

// -----

// Tests that an unpacked tensor has the bucket's element type.
func.func @f(%f: !zero.flat<params, f32, 10, 2>) {
  // expected-error @+1 {{'zero.unpack_shards' op result 0 element type 'f16' does not match buffer element type 'f32'}}
  %w = zero.unpack_shards %f {offsets = [0]} : !zero.flat<params, f32, 10, 2> -> tensor<4xf16>
  return
}

// -----

// Tests that an unpacked tensor's shards lie inside each slice: a
// 4-element tensor has 2-element shards at world size 2.
func.func @f(%f: !zero.flat<params, f32, 10, 2>) {
  // expected-error @+1 {{'zero.unpack_shards' op result 1 shard range [4, 6) exceeds slice size 5}}
  %v, %w = zero.unpack_shards %f {offsets = [0, 4]} : !zero.flat<params, f32, 10, 2> -> tensor<2xf32>, tensor<2x2xf32>
  return
}

// -----

// Tests that every unpacked tensor has its offset.
func.func @f(%f: !zero.flat<params, f32, 10, 2>) {
  // expected-error @+1 {{'zero.unpack_shards' op has 1 offsets for 2 results}}
  %v, %w = zero.unpack_shards %f {offsets = [0]} : !zero.flat<params, f32, 10, 2> -> tensor<2xf32>, tensor<2xf32>
  return
}

// -----

func.func @f(%f: !zero.flat<params, f32, 10, 2>) {
  // expected-error @+1 {{'zero.unpack_shards' op must unpack at least one tensor}}
  "zero.unpack_shards"(%f) {offsets = []} : (!zero.flat<params, f32, 10, 2>) -> ()
  return
}

// -----

func.func @f(%f: !zero.flat<params, f32, 10, 2>) {
  // expected-error @+1 {{'zero.unpack_shards' op offset 0 is negative: -1}}
  %w = zero.unpack_shards %f {offsets = [-1]} : !zero.flat<params, f32, 10, 2> -> tensor<2xf32>
  return
}
