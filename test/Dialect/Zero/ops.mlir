// RUN: zeroc-opt %s | zeroc-opt | FileCheck %s
// RUN: zeroc-opt %s --mlir-print-op-generic | zeroc-opt | FileCheck %s

// CHECK-LABEL: func.func private @types
// CHECK-SAME: !zero.flat<params, f16, 8192, 4>
// CHECK-SAME: !zero.flat<optim_state, f32, 16, 1>
// CHECK-SAME: !zero.shard<grads, bf16, 2048, host>
// CHECK-SAME: !zero.token<!zero.flat<params, f16, 8192, 4>>
// CHECK-SAME: !zero.token<!zero.shard<grads, f32, 2, device>>
// CHECK-SAME: !zero.token<tensor<f32>>
func.func private @types(!zero.flat<params, f16, 8192, 4>,
                         !zero.flat<optim_state, f32, 16, 1>,
                         !zero.shard<grads, bf16, 2048, host>,
                         !zero.token<!zero.flat<params, f16, 8192, 4>>,
                         !zero.token<!zero.shard<grads, f32, 2, device>>,
                         !zero.token<tensor<f32>>)

// CHECK-LABEL: func.func private @enum_attrs
// CHECK-SAME: zero.kind = #zero<kind optim_state>
// CHECK-SAME: zero.reduction = #zero<reduction max>
// CHECK-SAME: zero.space = #zero<space host>
func.func private @enum_attrs() attributes {
  zero.kind = #zero<kind optim_state>,
  zero.reduction = #zero<reduction max>,
  zero.space = #zero<space host>
}

// Pack two parameters into one flat buffer.
// CHECK-LABEL: func.func @pack
func.func @pack(%w: tensor<3x4xf32>, %b: tensor<3xf32>)
    -> !zero.flat<params, f32, 16, 4> {
  // CHECK: zero.pack %{{.*}}, %{{.*}} {offsets = [0, 12]} : (tensor<3x4xf32>, tensor<3xf32>) -> !zero.flat<params, f32, 16, 4>
  %flat = zero.pack %w, %b {offsets = [0, 12]}
      : (tensor<3x4xf32>, tensor<3xf32>) -> !zero.flat<params, f32, 16, 4>
  return %flat : !zero.flat<params, f32, 16, 4>
}

// Offsets need not be in operand order; an empty pack is all padding.
// CHECK-LABEL: func.func @pack_unordered
func.func @pack_unordered(%a: tensor<2xi32>, %b: tensor<2x2xi32>)
    -> (!zero.flat<params, i32, 8, 2>, !zero.flat<grads, f32, 4, 2>) {
  // CHECK: zero.pack %{{.*}}, %{{.*}} {offsets = [6, 0]}
  %f = zero.pack %a, %b {offsets = [6, 0]}
      : (tensor<2xi32>, tensor<2x2xi32>) -> !zero.flat<params, i32, 8, 2>
  // CHECK: zero.pack {offsets = []} : () -> !zero.flat<grads, f32, 4, 2>
  %z = zero.pack {offsets = []} : () -> !zero.flat<grads, f32, 4, 2>
  return %f, %z : !zero.flat<params, i32, 8, 2>, !zero.flat<grads, f32, 4, 2>
}

// Stage 3 forward: gather, view, release.
// CHECK-LABEL: func.func @gather_view_release
func.func @gather_view_release(%s: !zero.shard<params, f32, 4, device>)
    -> (tensor<3x4xf32>, tensor<3xf32>) {
  // CHECK: %[[F:.*]] = zero.all_gather %{{.*}} : !zero.shard<params, f32, 4, device> -> !zero.flat<params, f32, 16, 4>
  %f = zero.all_gather %s : !zero.shard<params, f32, 4, device> -> !zero.flat<params, f32, 16, 4>
  // CHECK: zero.view %[[F]] {offset = 0 : i64} : !zero.flat<params, f32, 16, 4> -> tensor<3x4xf32>
  %w = zero.view %f {offset = 0} : !zero.flat<params, f32, 16, 4> -> tensor<3x4xf32>
  // CHECK: zero.view %[[F]] {offset = 12 : i64} : !zero.flat<params, f32, 16, 4> -> tensor<3xf32>
  %b = zero.view %f {offset = 12} : !zero.flat<params, f32, 16, 4> -> tensor<3xf32>
  // CHECK: zero.release %[[F]] : !zero.flat<params, f32, 16, 4>
  zero.release %f : !zero.flat<params, f32, 16, 4>
  return %w, %b : tensor<3x4xf32>, tensor<3xf32>
}

// CHECK-LABEL: func.func @reductions
func.func @reductions(%g: !zero.flat<grads, f32, 16, 4>, %flag: tensor<i1>,
                      %norm: tensor<f64>, %count: tensor<4xi64>)
    -> (!zero.shard<grads, f32, 4, device>, !zero.shard<grads, f32, 4, device>,
        !zero.flat<grads, f32, 16, 4>, tensor<i1>, tensor<f64>, tensor<4xi64>) {
  // CHECK: zero.reduce_scatter %{{.*}} {reduction = #zero<reduction avg>} : !zero.flat<grads, f32, 16, 4> -> !zero.shard<grads, f32, 4, device>
  %a = zero.reduce_scatter %g {reduction = #zero<reduction avg>}
      : !zero.flat<grads, f32, 16, 4> -> !zero.shard<grads, f32, 4, device>
  // CHECK: zero.reduce_scatter %{{.*}} {reduction = #zero<reduction sum>, scale = 1.250000e-01 : f64}
  %b = zero.reduce_scatter %g {reduction = #zero<reduction sum>, scale = 0.125 : f64}
      : !zero.flat<grads, f32, 16, 4> -> !zero.shard<grads, f32, 4, device>
  // In place: the shard is the buffer's first elements.
  // CHECK: zero.reduce_scatter %{{.*}} {in_place, reduction = #zero<reduction sum>}
  %bi = zero.reduce_scatter %g {in_place, reduction = #zero<reduction sum>}
      : !zero.flat<grads, f32, 16, 4> -> !zero.shard<grads, f32, 4, device>
  // CHECK: zero.all_reduce %{{.*}} {reduction = #zero<reduction avg>} : !zero.flat<grads, f32, 16, 4>
  %c = zero.all_reduce %g {reduction = #zero<reduction avg>} : !zero.flat<grads, f32, 16, 4>
  // CHECK: zero.all_reduce %{{.*}} {reduction = #zero<reduction max>} : tensor<i1>
  %d = zero.all_reduce %flag {reduction = #zero<reduction max>} : tensor<i1>
  // CHECK: zero.all_reduce %{{.*}} {reduction = #zero<reduction sum>} : tensor<f64>
  %e = zero.all_reduce %norm {reduction = #zero<reduction sum>} : tensor<f64>
  // CHECK: zero.all_reduce %{{.*}} {reduction = #zero<reduction sum>} : tensor<4xi64>
  %f = zero.all_reduce %count {reduction = #zero<reduction sum>} : tensor<4xi64>
  return %a, %b, %c, %d, %e, %f
      : !zero.shard<grads, f32, 4, device>, !zero.shard<grads, f32, 4, device>,
        !zero.flat<grads, f32, 16, 4>, tensor<i1>, tensor<f64>, tensor<4xi64>
}

// Overlap: every start op is waited exactly once; a waited gather can be
// released.
// CHECK-LABEL: func.func @async
func.func @async(%s: !zero.shard<params, f16, 2048, device>,
                 %g: !zero.flat<grads, f32, 8192, 4>, %n: tensor<f32>)
    -> (tensor<64x32xf16>, !zero.shard<grads, f32, 2048, device>, tensor<f32>) {
  // CHECK: %[[T0:.*]] = zero.all_gather_start %{{.*}} : !zero.shard<params, f16, 2048, device> -> !zero.token<!zero.flat<params, f16, 8192, 4>>
  %t0 = zero.all_gather_start %s
      : !zero.shard<params, f16, 2048, device> -> !zero.token<!zero.flat<params, f16, 8192, 4>>
  // CHECK: %[[T1:.*]] = zero.reduce_scatter_start %{{.*}} {reduction = #zero<reduction avg>} : !zero.flat<grads, f32, 8192, 4> -> !zero.token<!zero.shard<grads, f32, 2048, device>>
  %t1 = zero.reduce_scatter_start %g {reduction = #zero<reduction avg>}
      : !zero.flat<grads, f32, 8192, 4> -> !zero.token<!zero.shard<grads, f32, 2048, device>>
  // CHECK: %[[T2:.*]] = zero.all_reduce_start %{{.*}} {reduction = #zero<reduction sum>} : tensor<f32> -> !zero.token<tensor<f32>>
  %t2 = zero.all_reduce_start %n {reduction = #zero<reduction sum>}
      : tensor<f32> -> !zero.token<tensor<f32>>
  // CHECK: %[[F:.*]] = zero.wait %[[T0]] : !zero.token<!zero.flat<params, f16, 8192, 4>> -> !zero.flat<params, f16, 8192, 4>
  %f = zero.wait %t0 : !zero.token<!zero.flat<params, f16, 8192, 4>> -> !zero.flat<params, f16, 8192, 4>
  // CHECK: zero.view %[[F]] {offset = 4096 : i64}
  %w = zero.view %f {offset = 4096} : !zero.flat<params, f16, 8192, 4> -> tensor<64x32xf16>
  // CHECK: zero.release %[[F]]
  zero.release %f : !zero.flat<params, f16, 8192, 4>
  // CHECK: zero.wait %[[T1]] : !zero.token<!zero.shard<grads, f32, 2048, device>> -> !zero.shard<grads, f32, 2048, device>
  %r = zero.wait %t1 : !zero.token<!zero.shard<grads, f32, 2048, device>> -> !zero.shard<grads, f32, 2048, device>
  // CHECK: zero.wait %[[T2]] : !zero.token<tensor<f32>> -> tensor<f32>
  %m = zero.wait %t2 : !zero.token<tensor<f32>> -> tensor<f32>
  return %w, %r, %m : tensor<64x32xf16>, !zero.shard<grads, f32, 2048, device>, tensor<f32>
}

// CHECK-LABEL: func.func @loss_scale
func.func @loss_scale() -> tensor<f32> {
  // CHECK: zero.loss_scale : tensor<f32>
  %s = zero.loss_scale : tensor<f32>
  return %s : tensor<f32>
}

// A BatchNormalization's running mean: read at the start of the micro-step,
// stored at its end.
graph.buffer @"bn.running_mean" = dense<0.0> : tensor<4xf32>
// CHECK-LABEL: func.func @buffer_load_store
// CHECK: zero.buffer_load @bn.running_mean : tensor<4xf32>
// CHECK: zero.buffer_store @bn.running_mean, %{{.*}} : tensor<4xf32>
func.func @buffer_load_store(%x: tensor<4xf32>) {
  %m = zero.buffer_load @"bn.running_mean" : tensor<4xf32>
  %n = graph.add %m, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  zero.buffer_store @"bn.running_mean", %n : tensor<4xf32>
  return
}

// A gather carried across the step boundary: the carry has no wait in its
// function; the carried start is waited for as any other.
// CHECK-LABEL: func.func @carry
func.func @carry(%s: !zero.shard<params, f32, 4, device>) {
  // CHECK: zero.all_gather_start %{{.*}} {carry = 0 : i64}
  %t = zero.all_gather_start %s {carry = 0 : i64} : !zero.shard<params, f32, 4, device> -> !zero.token<!zero.flat<params, f32, 8, 2>>
  return
}
// CHECK-LABEL: func.func @carried
func.func @carried(%s: !zero.shard<params, f32, 4, device>) -> !zero.flat<params, f32, 8, 2> {
  // CHECK: %[[T:.*]] = zero.all_gather_start %{{.*}} {carried = 0 : i64}
  // CHECK-NEXT: zero.wait %[[T]]
  %t = zero.all_gather_start %s {carried = 0 : i64} : !zero.shard<params, f32, 4, device> -> !zero.token<!zero.flat<params, f32, 8, 2>>
  %f = zero.wait %t : !zero.token<!zero.flat<params, f32, 8, 2>> -> !zero.flat<params, f32, 8, 2>
  return %f : !zero.flat<params, f32, 8, 2>
}

// CHECK-LABEL: func.func @rows
graph.param trainable @emb = dense<0.5> : tensor<16x4xf32>
func.func @rows(%r: tensor<2x3x4xf32>, %i: tensor<2x3xi64>) {
  // CHECK: zero.grad_accumulate_rows @emb, %{{.*}}, %{{.*}} {padding_idx = 0 : i64} : tensor<2x3x4xf32>, tensor<2x3xi64>
  zero.grad_accumulate_rows @emb, %r, %i {padding_idx = 0 : i64} : tensor<2x3x4xf32>, tensor<2x3xi64>
  return
}
