// RUN: zeroc-opt %s -zero-bucket="reduce-bucket-size=0 prefetch-bucket-size=100" -zero-verify-partition | FileCheck %s

// Tests that on one rank zero-bucket leaves each parameter's gather alone:
// the gather moves nothing there (zero-plan-buffers makes it in place, a
// view of the rank's shard), where a bucket would copy the shards in and
// the parameters out.
// CHECK-LABEL: func.func @train_micro_step
// CHECK-NOT: zero.concat_shards
// CHECK-NOT: zero.unpack_shards
// CHECK-NOT: zero.bucket
// CHECK: return
module attributes {zero.stage = 3 : i64, zero.world_size = 1 : i64} {
  graph.param trainable @a = dense<0.0> : tensor<2x3xf32>
  graph.param trainable @b = dense<0.0> : tensor<3xf32>
  func.func @train_micro_step(%x: tensor<2x3xf32>) -> tensor<f32> {
    %sa = zero.param_shard @a : !zero.shard<params, f32, 6, device>
    %fa = zero.all_gather %sa : !zero.shard<params, f32, 6, device> -> !zero.flat<params, f32, 6, 1>
    %a = zero.view %fa {offset = 0} : !zero.flat<params, f32, 6, 1> -> tensor<2x3xf32>
    %y = graph.mul %x, %a : tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
    zero.release %fa : !zero.flat<params, f32, 6, 1>
    %sb = zero.param_shard @b : !zero.shard<params, f32, 3, device>
    %fb = zero.all_gather %sb : !zero.shard<params, f32, 3, device> -> !zero.flat<params, f32, 3, 1>
    %b = zero.view %fb {offset = 0} : !zero.flat<params, f32, 3, 1> -> tensor<3xf32>
    %yb = graph.add %y, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
    zero.release %fb : !zero.flat<params, f32, 3, 1>
    %r = graph.reshape %yb : tensor<2x3xf32> -> tensor<6xf32>
    %l = graph.reduce_sum %r {axes = [0], keepdims = false, zero.forward_end} : tensor<6xf32> -> tensor<f32>
    %pa = zero.pack %y {offsets = [0]} : (tensor<2x3xf32>) -> !zero.flat<grads, f32, 6, 1>
    %ra = zero.reduce_scatter %pa {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 6, 1> -> !zero.shard<grads, f32, 6, device>
    zero.grad_accumulate @a, %ra : !zero.shard<grads, f32, 6, device>
    %gb = graph.sum_to %y : tensor<2x3xf32> -> tensor<3xf32>
    %pb = zero.pack %gb {offsets = [0]} : (tensor<3xf32>) -> !zero.flat<grads, f32, 3, 1>
    %rb = zero.reduce_scatter %pb {reduction = #zero<reduction sum>} : !zero.flat<grads, f32, 3, 1> -> !zero.shard<grads, f32, 3, device>
    zero.grad_accumulate @b, %rb : !zero.shard<grads, f32, 3, device>
    return %l : tensor<f32>
  }
}
