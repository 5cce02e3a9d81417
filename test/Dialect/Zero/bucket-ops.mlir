// RUN: zeroc-opt %s | zeroc-opt | FileCheck %s
// RUN: zeroc-opt %s --mlir-print-op-generic | zeroc-opt | FileCheck %s

// Tests that the bucket ops round-trip: a gradient bucket packed rank-major,
// reduce-scattered and sliced per member, and a parameter bucket
// concatenated, gathered and unpacked per member.

// CHECK-LABEL: func.func @gradient_bucket
func.func @gradient_bucket(%a: tensor<5xf32>, %b: tensor<2x2xf32>) -> !zero.shard<grads, f32, 2, device> {
  // CHECK: %[[P:.*]] = zero.pack_shards %{{.*}}, %{{.*}} {offsets = [0, 3]} : (tensor<5xf32>, tensor<2x2xf32>) -> !zero.flat<grads, f32, 10, 2>
  %p = zero.pack_shards %a, %b {offsets = [0, 3]}
      : (tensor<5xf32>, tensor<2x2xf32>) -> !zero.flat<grads, f32, 10, 2>
  %s = zero.reduce_scatter %p {reduction = #zero<reduction sum>}
      : !zero.flat<grads, f32, 10, 2> -> !zero.shard<grads, f32, 5, device>
  // CHECK: zero.shard_slice %{{.*}} {offset = 3 : i64} : !zero.shard<grads, f32, 5, device> -> !zero.shard<grads, f32, 2, device>
  %sb = zero.shard_slice %s {offset = 3}
      : !zero.shard<grads, f32, 5, device> -> !zero.shard<grads, f32, 2, device>
  // Gaps between shards are allowed (zero padding).
  // CHECK: zero.pack_shards %{{.*}} {offsets = [1]} : (tensor<5xf32>) -> !zero.flat<grads, f32, 8, 2>
  %q = zero.pack_shards %a {offsets = [1]} : (tensor<5xf32>) -> !zero.flat<grads, f32, 8, 2>
  return %sb : !zero.shard<grads, f32, 2, device>
}

// CHECK-LABEL: func.func @parameter_bucket
func.func @parameter_bucket(%a: !zero.shard<params, f16, 3, device>,
                            %b: !zero.shard<params, f16, 2, device>) -> tensor<2x2xf16> {
  // CHECK: %[[C:.*]] = zero.concat_shards %{{.*}}, %{{.*}} : (!zero.shard<params, f16, 3, device>, !zero.shard<params, f16, 2, device>) -> !zero.shard<params, f16, 5, device>
  %c = zero.concat_shards %a, %b
      : (!zero.shard<params, f16, 3, device>, !zero.shard<params, f16, 2, device>)
      -> !zero.shard<params, f16, 5, device>
  %f = zero.all_gather %c : !zero.shard<params, f16, 5, device> -> !zero.flat<params, f16, 10, 2>
  // CHECK: zero.unpack_shards %{{.*}} {offsets = [0, 3]} : !zero.flat<params, f16, 10, 2> -> tensor<5xf16>, tensor<2x2xf16>
  %wa, %wb = zero.unpack_shards %f {offsets = [0, 3]} : !zero.flat<params, f16, 10, 2> -> tensor<5xf16>, tensor<2x2xf16>
  // CHECK: zero.unpack_shards %{{.*}} {offsets = [3]} : !zero.flat<params, f16, 10, 2> -> tensor<2x2xf16>
  %wc = zero.unpack_shards %f {offsets = [3]} : !zero.flat<params, f16, 10, 2> -> tensor<2x2xf16>
  zero.release %f : !zero.flat<params, f16, 10, 2>
  return %wb : tensor<2x2xf16>
}
