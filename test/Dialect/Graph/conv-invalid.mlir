// RUN: zeroc-opt %s -split-input-file -verify-diagnostics

// Tests the shape rules and verifiers of the conv, pooling and batch-norm ops.

func.func @conv_rank(%x: tensor<2x3xf32>, %w: tensor<4x3xf32>) {
  // expected-error @+2 {{input must have rank 3 to 5 (N, C and 1 to 3 spatial dims), got 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.conv %x, %w {strides = [], pads = [], dilations = [], group = 1 : i64} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @conv_weight_rank(%x: tensor<2x3x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+2 {{weight rank 4 must equal the input rank 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.conv %x, %w {strides = [1], pads = [0, 0], dilations = [1], group = 1 : i64} : (tensor<2x3x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x6xf32>
  return
}

// -----

func.func @conv_group(%x: tensor<2x4x8xf32>, %w: tensor<6x2x3xf32>) {
  // expected-error @+2 {{group 3 does not fit: input has 4 channels, weight (M, C/group, ...) has M = 6 and C/group = 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.conv %x, %w {strides = [1], pads = [0, 0], dilations = [1], group = 3 : i64} : (tensor<2x4x8xf32>, tensor<6x2x3xf32>) -> tensor<2x6x6xf32>
  return
}

// -----

func.func @conv_attr_length(%x: tensor<2x3x8xf32>, %w: tensor<4x3x3xf32>) {
  // expected-error @+2 {{'pads' has 1 entries, expected 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.conv %x, %w {strides = [1], pads = [0], dilations = [1], group = 1 : i64} : (tensor<2x3x8xf32>, tensor<4x3x3xf32>) -> tensor<2x4x6xf32>
  return
}

// -----

func.func @conv_stride(%x: tensor<2x3x8xf32>, %w: tensor<4x3x3xf32>) {
  // expected-error @+2 {{stride 0 of spatial dim 0 must be in [1, 2^32]}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.conv %x, %w {strides = [0], pads = [0, 0], dilations = [1], group = 1 : i64} : (tensor<2x3x8xf32>, tensor<4x3x3xf32>) -> tensor<2x4x6xf32>
  return
}

// -----

func.func @conv_kernel_too_big(%x: tensor<2x3x2xf32>, %w: tensor<4x3x3xf32>) {
  // expected-error @+2 {{the dilated kernel (5) of spatial dim 0 is larger than the padded input (2)}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.conv %x, %w {strides = [1], pads = [0, 0], dilations = [2], group = 1 : i64} : (tensor<2x3x2xf32>, tensor<4x3x3xf32>) -> tensor<2x4x1xf32>
  return
}

// -----

func.func @conv_bias(%x: tensor<2x3x8xf32>, %w: tensor<4x3x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{bias must be a 1-D tensor of the 4 output channels with the input's element type}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.conv %x, %w, %b {strides = [1], pads = [0, 0], dilations = [1], group = 1 : i64} : (tensor<2x3x8xf32>, tensor<4x3x3xf32>, tensor<3xf32>) -> tensor<2x4x6xf32>
  return
}

// -----

func.func @conv_grad_input_type(%w: tensor<4x3x3xf32>, %gy: tensor<2x4x5xf32>) {
  // expected-error @+1 {{grad type 'tensor<2x4x5xf32>' does not match the forward op's 'tensor<2x4x6xf32>'}}
  %gx = graph.conv_grad_input %w, %gy {strides = [1], pads = [0, 0], dilations = [1], group = 1 : i64} : (tensor<4x3x3xf32>, tensor<2x4x5xf32>) -> tensor<2x3x8xf32>
  return
}

// -----

func.func @conv_grad_weight_type(%x: tensor<2x3x8xf32>, %gy: tensor<2x4x5xf32>) {
  // expected-error @+1 {{grad type 'tensor<2x4x5xf32>' does not match the forward op's 'tensor<2x4x6xf32>'}}
  %gw = graph.conv_grad_weight %x, %gy {strides = [1], pads = [0, 0], dilations = [1], group = 1 : i64} : (tensor<2x3x8xf32>, tensor<2x4x5xf32>) -> tensor<4x3x3xf32>
  return
}

// -----

func.func @pool_pads(%x: tensor<2x3x8xf32>) {
  // expected-error @+2 {{pads of spatial dim 0 must be smaller than the dilated kernel (2)}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.max_pool %x {kernel_shape = [2], strides = [1], pads = [2, 0], dilations = [1], ceil_mode = false} : tensor<2x3x8xf32> -> tensor<2x3x9xf32>
  return
}

// -----

func.func @pool_ceil_in_pad(%x: tensor<1x1x4xf32>) {
  // expected-error @+2 {{ceil_mode: the last window of spatial dim 0 would start in the end padding}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.avg_pool %x {kernel_shape = [2], strides = [2], pads = [0, 1], dilations = [1], ceil_mode = true, count_include_pad = false} : tensor<1x1x4xf32> -> tensor<1x1x3xf32>
  return
}

// -----

func.func @pool_kernel_attr(%x: tensor<2x3x8xf32>) {
  // expected-error @+1 {{requires attribute 'kernel_shape'}}
  %y = "graph.max_pool"(%x) {strides = [1], pads = [0, 0], dilations = [1], ceil_mode = false} : (tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  return
}

// -----

func.func @pool_kernel_size(%x: tensor<2x3x8xf32>) {
  // expected-error @+2 {{kernel size 0 of spatial dim 0 must be >= 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.max_pool %x {kernel_shape = [0], strides = [1], pads = [0, 0], dilations = [1], ceil_mode = false} : tensor<2x3x8xf32> -> tensor<2x3x9xf32>
  return
}

// -----

func.func @pool_result(%x: tensor<2x3x8xf32>) {
  // expected-error @+2 {{'graph.max_pool' op inferred type(s) 'tensor<2x3x4xf32>' are incompatible with return type(s) of operation 'tensor<2x3x5xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = graph.max_pool %x {kernel_shape = [2], strides = [2], pads = [0, 0], dilations = [1], ceil_mode = false} : tensor<2x3x8xf32> -> tensor<2x3x5xf32>
  return
}

// -----

func.func @max_pool_grad_type(%x: tensor<2x3x8xf32>, %gy: tensor<2x3x5xf32>) {
  // expected-error @+1 {{grad type 'tensor<2x3x5xf32>' does not match the forward op's 'tensor<2x3x4xf32>'}}
  %gx = graph.max_pool_grad %x, %gy {kernel_shape = [2], strides = [2], pads = [0, 0], dilations = [1], ceil_mode = false} : tensor<2x3x8xf32>, tensor<2x3x5xf32>
  return
}

// -----

func.func @avg_pool_grad_type(%gy: tensor<2x3x5xf32>) {
  // expected-error @+1 {{grad type 'tensor<2x3x5xf32>' does not match the forward op's 'tensor<2x3x4xf32>'}}
  %gx = graph.avg_pool_grad %gy {kernel_shape = [2], strides = [2], pads = [0, 0], dilations = [1], ceil_mode = false, count_include_pad = false} : tensor<2x3x5xf32> -> tensor<2x3x8xf32>
  return
}

// -----

func.func @batch_norm_scale(%x: tensor<2x4x8xf32>, %s: tensor<3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{scale must have shape (4), the channels, got 'tensor<3xf32>'}}
  %y = graph.batch_norm %x, %s, %b {epsilon = 1.0e-05 : f64} : (tensor<2x4x8xf32>, tensor<3xf32>, tensor<4xf32>) -> tensor<2x4x8xf32>
  return
}

// -----

func.func @batch_norm_rank(%x: tensor<4xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{input must have rank >= 2 (N, C, ...), got 1}}
  %y = graph.batch_norm %x, %s, %s {epsilon = 1.0e-05 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @batch_norm_epsilon(%x: tensor<2x4xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{epsilon must be positive and finite}}
  %y = graph.batch_norm %x, %s, %s {epsilon = 0.0 : f64} : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @batch_norm_grad_scale(%x: tensor<2x4xf32>, %s: tensor<3xf32>) {
  // expected-error @+1 {{scale must have shape (4), the channels, got 'tensor<3xf32>'}}
  %g:3 = graph.batch_norm_grad %x, %s, %x {epsilon = 1.0e-05 : f64} : tensor<2x4xf32>, tensor<3xf32>
  return
}
