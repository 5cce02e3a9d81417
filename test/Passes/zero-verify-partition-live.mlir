// RUN: zeroc-opt %s --zero-verify-partition -verify-diagnostics

// Tests zero-verify-partition's check of zero-overlap's live-parameter
// limit: a gather started while another gathered buffer is alive may keep
// at most zero.max_live_parameters gathered elements alive.
module attributes {zero.stage = 3 : i64, zero.world_size = 2 : i64} {
  graph.param @w1 = dense<0.5> : tensor<4x4xf32>
  graph.param @w2 = dense<0.5> : tensor<4x4xf32>
  func.func @train_micro_step(%x: tensor<4x4xf32>) -> tensor<f32> attributes {zero.max_live_parameters = 31 : i64} {
    %s1 = zero.param_shard @w1 : !zero.shard<params, f32, 8, device>
    %t1 = zero.all_gather_start %s1 : !zero.shard<params, f32, 8, device> -> !zero.token<!zero.flat<params, f32, 16, 2>>
    %f1 = zero.wait %t1 : !zero.token<!zero.flat<params, f32, 16, 2>> -> !zero.flat<params, f32, 16, 2>
    %s2 = zero.param_shard @w2 : !zero.shard<params, f32, 8, device>
    // expected-error @below {{'zero.all_gather_start' op prefetched gather keeps 32 gathered parameter elements alive, more than zero.max_live_parameters = 31}}
    %t2 = zero.all_gather_start %s2 : !zero.shard<params, f32, 8, device> -> !zero.token<!zero.flat<params, f32, 16, 2>>
    %v1 = zero.view %f1 {offset = 0 : i64} : !zero.flat<params, f32, 16, 2> -> tensor<4x4xf32>
    %y = graph.matmul %x, %v1 : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    zero.release %f1 : !zero.flat<params, f32, 16, 2>
    %f2 = zero.wait %t2 : !zero.token<!zero.flat<params, f32, 16, 2>> -> !zero.flat<params, f32, 16, 2>
    %v2 = zero.view %f2 {offset = 0 : i64} : !zero.flat<params, f32, 16, 2> -> tensor<4x4xf32>
    %z = graph.matmul %y, %v2 : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
    zero.release %f2 : !zero.flat<params, f32, 16, 2>
    %l = graph.reduce_mean %z {axes = [0, 1], keepdims = false} : tensor<4x4xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}
