//===- GraphConvOps.td - convolution, pooling, batch norm --*- tablegen -*-===//
//
// The sliding-window ops of CNNs (ONNX Conv, MaxPool, AveragePool) and
// training-mode BatchNormalization, with their gradient ops. Included from
// GraphOps.td. Window attributes are normalized by the importer: one entry
// per spatial dim for `strides`, `dilations` and `kernel_shape`, and `pads`
// as ONNX orders them (all begins, then all ends); auto_pad is resolved to
// explicit pads. Shape rules and verifiers live in GraphConvOps.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_DIALECT_GRAPH_GRAPHCONVOPS_TD
#define ZEROC_DIALECT_GRAPH_GRAPHCONVOPS_TD

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

def Graph_ConvOp : Graph_ComputeOp<"conv",
    [DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "N-d convolution (ONNX Conv), 1 to 3 spatial dims";
  let description = [{
    `input` is (N, C, d1, ...), `weight` is (M, C / group, k1, ...) and the
    optional `bias` is (M). Output dim i is
    `floor((d_i + pad_begin_i + pad_end_i - ((k_i - 1) * dilation_i + 1)) / stride_i) + 1`.
    Channels are split into `group` groups; group g's outputs see only its
    inputs. A cross-correlation, as ONNX and PyTorch define it.

    ```mlir
    %y = graph.conv %x, %w, %b {strides = [2, 2], pads = [1, 1, 1, 1], dilations = [1, 1], group = 1 : i64}
        : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x4x4xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$weight,
                   Optional<Graph_FloatTensor>:$bias, I64ArrayAttr:$strides,
                   I64ArrayAttr:$pads, I64ArrayAttr:$dilations, I64Attr:$group);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
}

def Graph_ConvGradInputOp : Graph_Op<"conv_grad_input", [Pure,
    AllElementTypesMatch<["weight", "grad", "result"]>]> {
  let summary = "gradient of conv w.r.t. its input (transposed convolution)";
  let description = [{
    The result has the convolved input's type; `grad` is the gradient of the
    conv's result. Same window attributes as the `graph.conv`.

    ```mlir
    %gx = graph.conv_grad_input %w, %gy {strides = [1], pads = [0, 0], dilations = [1], group = 1 : i64}
        : (tensor<4x3x3xf32>, tensor<2x4x6xf32>) -> tensor<2x3x8xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$weight, Graph_FloatTensor:$grad,
                   I64ArrayAttr:$strides, I64ArrayAttr:$pads,
                   I64ArrayAttr:$dilations, I64Attr:$group);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $weight `,` $grad attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Graph_ConvGradWeightOp : Graph_Op<"conv_grad_weight", [Pure,
    AllElementTypesMatch<["input", "grad", "result"]>]> {
  let summary = "gradient of conv w.r.t. its weight";
  let description = [{
    The result has the weight's type. (The bias gradient is a `reduce_sum`
    of `grad` over the batch and spatial dims.)

    ```mlir
    %gw = graph.conv_grad_weight %x, %gy {strides = [1], pads = [0, 0], dilations = [1], group = 1 : i64}
        : (tensor<2x3x8xf32>, tensor<2x4x6xf32>) -> tensor<4x3x3xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$grad,
                   I64ArrayAttr:$strides, I64ArrayAttr:$pads,
                   I64ArrayAttr:$dilations, I64Attr:$group);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $grad attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

def Graph_MaxPoolOp : Graph_ComputeOp<"max_pool",
    [DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "max pooling (ONNX MaxPool without the Indices output)";
  let description = [{
    `input` is (N, C, d1, ...). Padded positions never win. Output dim i is
    `(d_i + pad_begin_i + pad_end_i - ((k_i - 1) * dilation_i + 1)) / stride_i + 1`
    rounded down, or up with `ceil_mode` (ONNX's rule; a last window that
    would start in the end padding is rejected, as PyTorch drops it).

    ```mlir
    %y = graph.max_pool %x {kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 0, 0], dilations = [1, 1], ceil_mode = false}
        : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, I64ArrayAttr:$kernel_shape,
                   I64ArrayAttr:$strides, I64ArrayAttr:$pads,
                   I64ArrayAttr:$dilations, BoolAttr:$ceil_mode);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Graph_AvgPoolOp : Graph_ComputeOp<"avg_pool",
    [DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "average pooling (ONNX AveragePool)";
  let description = [{
    The window's mean. With `count_include_pad` the divisor counts padded
    positions inside [-pad_begin, d + pad_end), as PyTorch does; otherwise
    only the input positions. Output shape as `graph.max_pool`.

    ```mlir
    %y = graph.avg_pool %x {kernel_shape = [3], strides = [1], pads = [1, 1], dilations = [1], ceil_mode = false, count_include_pad = true}
        : tensor<2x4x8xf32> -> tensor<2x4x8xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, I64ArrayAttr:$kernel_shape,
                   I64ArrayAttr:$strides, I64ArrayAttr:$pads,
                   I64ArrayAttr:$dilations, BoolAttr:$ceil_mode,
                   BoolAttr:$count_include_pad);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Graph_MaxPoolGradOp : Graph_Op<"max_pool_grad", [Pure,
    AllTypesMatch<["input", "result"]>,
    AllElementTypesMatch<["input", "grad"]>]> {
  let summary = "gradient of max_pool: each window's gradient to its argmax";
  let description = [{
    Each output's gradient goes to the first maximum of its window (in
    row-major window order, as PyTorch picks it); windows that overlap
    accumulate.

    ```mlir
    %gx = graph.max_pool_grad %x, %gy {kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 0, 0], dilations = [1, 1], ceil_mode = false}
        : tensor<2x4x8x8xf32>, tensor<2x4x4x4xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$grad,
                   I64ArrayAttr:$kernel_shape, I64ArrayAttr:$strides,
                   I64ArrayAttr:$pads, I64ArrayAttr:$dilations,
                   BoolAttr:$ceil_mode);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input `,` $grad attr-dict `:` type($input) `,` type($grad)";
  let hasVerifier = 1;
}

def Graph_AvgPoolGradOp : Graph_Op<"avg_pool_grad", [Pure,
    AllElementTypesMatch<["grad", "result"]>]> {
  let summary = "gradient of avg_pool w.r.t. its input";
  let description = [{
    The result has the pooled input's type.

    ```mlir
    %gx = graph.avg_pool_grad %gy {kernel_shape = [3], strides = [1], pads = [1, 1], dilations = [1], ceil_mode = false, count_include_pad = true}
        : tensor<2x4x8xf32> -> tensor<2x4x8xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$grad, I64ArrayAttr:$kernel_shape,
                   I64ArrayAttr:$strides, I64ArrayAttr:$pads,
                   I64ArrayAttr:$dilations, BoolAttr:$ceil_mode,
                   BoolAttr:$count_include_pad);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$grad attr-dict `:` type($grad) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Batch normalization (training mode)
//===----------------------------------------------------------------------===//

def Graph_BatchNormOp : Graph_ComputeOp<"batch_norm",
    [AllTypesMatch<["input", "result"]>]> {
  let summary = "batch normalization with the batch's statistics";
  let description = [{
    ONNX BatchNormalization with `training_mode = 1`: `input` is
    (N, C, d1, ...); each channel is normalized with the mean and biased
    variance over N and the spatial dims, then scaled and shifted by the
    (C)-shaped `scale` and `bias`. The running statistics are not modelled.

    ```mlir
    %y = graph.batch_norm %x, %g, %b {epsilon = 1.0e-05 : f64}
        : (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$scale,
                   Graph_FloatTensor:$bias, F64Attr:$epsilon);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Graph_BatchNormGradOp : Graph_Op<"batch_norm_grad", [Pure,
    AllTypesMatch<["input", "grad", "grad_input"]>,
    AllTypesMatch<["scale", "grad_scale", "grad_bias"]>]> {
  let summary = "gradients of batch_norm w.r.t. input, scale and bias";
  let description = [{
    ```mlir
    %gx, %gs, %gb = graph.batch_norm_grad %x, %s, %gy {epsilon = 1.0e-05 : f64}
        : tensor<2x4x8x8xf32>, tensor<4xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$scale,
                   Graph_FloatTensor:$grad, F64Attr:$epsilon);
  let results = (outs Graph_FloatTensor:$grad_input,
                 Graph_FloatTensor:$grad_scale, Graph_FloatTensor:$grad_bias);
  let assemblyFormat = [{
    $input `,` $scale `,` $grad attr-dict `:` type($input) `,` type($scale)
  }];
  let hasVerifier = 1;
}

#endif // ZEROC_DIALECT_GRAPH_GRAPHCONVOPS_TD
