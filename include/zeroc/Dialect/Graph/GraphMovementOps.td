//===- GraphMovementOps.td - padding, element gathers, scans -*- tablegen -*-===//
//
// Data-movement ops of ONNX Pad, GatherElements, GatherND, ScatterND,
// ScatterElements and CumSum, and the gradient ops their rules need. Included from GraphOps.td
// (Graph_ComputeOp, Graph_Op and the tensor constraints come from there).
// ONNX Tile, Flatten and Range import as existing ops (expand and reshape,
// or a folded constant).
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_DIALECT_GRAPH_GRAPHMOVEMENTOPS_TD
#define ZEROC_DIALECT_GRAPH_GRAPHMOVEMENTOPS_TD

def Graph_PadOp : Graph_ComputeOp<"pad",
    [DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "pads (or crops) every dim: constant, reflect, edge or wrap";
  let description = [{
    ONNX Pad with its `pads` normalized to one begin and one end count per
    dim, in ONNX order `[b0, b1, ..., e0, e1, ...]`. Result dim `i` is
    `b_i + input_i + e_i`; a negative count crops. Result element `o` along
    dim `i` reads input position `p = o - b_i`; outside `[0, input_i)` the
    `mode` decides: `constant` writes `value` (any element type; for integer
    tensors it is an exact integer), `edge` repeats the border element,
    `reflect` mirrors without repeating the border (needs every pad count
    below the dim), `wrap` continues periodically (needs pad counts up to the
    dim and no crops). The importer checks these limits.

    ```mlir
    %y = graph.pad %labels {pads = [0, 0, 0, 1], mode = "constant", value = -1.0e+02 : f64} : tensor<2x8xi64> -> tensor<2x9xi64>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, I64ArrayAttr:$pads,
                   StrAttr:$mode, DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Graph_GatherElementsOp : Graph_ComputeOp<"gather_elements",
    [DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "picks one element along an axis per index (torch.gather)";
  let description = [{
    `result[i0, ..., ik, ...] = data[i0, ..., indices[i0, ..., ik, ...], ...]`
    with the index replacing coordinate `axis`. `indices` has the rank of
    `data` and dims no larger than `data`'s off the axis; the result has the
    shape of `indices`. Negative indices count from the end of the axis.

    ```mlir
    %y = graph.gather_elements %x, %idx {axis = 1 : i64} : tensor<2x5xf32>, tensor<2x3xi64> -> tensor<2x3xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$data, Graph_IndexTensor:$indices,
                   I64Attr:$axis);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices attr-dict `:` type($data) `,` type($indices) `->` type($result)
  }];
}

def Graph_GatherNDOp : Graph_ComputeOp<"gather_nd",
    [DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "gathers slices addressed by index tuples (ONNX GatherND)";
  let description = [{
    ONNX GatherND with `batch_dims = 0`: `indices` has shape `(..., k)` with
    `1 <= k <= rank(data)`; each k-tuple addresses a slice `data[t0, ...,
    tk-1]` and the result has shape `indices.shape[:-1] + data.shape[k:]`.
    Negative indices count from the end of their dim. The gradient rule of
    `graph.scatter_nd` uses it.

    ```mlir
    %y = graph.gather_nd %x, %idx : tensor<4x3xf32>, tensor<2x1xi64> -> tensor<2x3xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$data, Graph_IndexTensor:$indices);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices attr-dict `:` type($data) `,` type($indices) `->` type($result)
  }];
}

def Graph_ScatterNDOp : Graph_ComputeOp<"scatter_nd",
    [AllTypesMatch<["data", "result"]>,
     AllElementTypesMatch<["data", "updates"]>]> {
  let summary = "a copy of data with slices replaced, added to or multiplied";
  let description = [{
    ONNX ScatterND: the result is `data` with the slice addressed by each
    k-tuple of `indices` (shape `(..., k)`, as in `graph.gather_nd`) set to
    (`reduction = "none"`), increased by (`"add"`) or multiplied by
    (`"mul"`) the matching slice of `updates`, whose shape is
    `indices.shape[:-1] + data.shape[k:]`. With `none`, two tuples that
    address the same slice are an error at run time (ONNX leaves the result
    undefined); `add` and `mul` apply them in index order.

    ```mlir
    %y = graph.scatter_nd %x, %idx, %u {reduction = "none"} : tensor<4x3xf32>, tensor<2x1xi64>, tensor<2x3xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$data, Graph_IndexTensor:$indices,
                   Graph_Tensor:$updates, StrAttr:$reduction);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices `,` $updates attr-dict `:` type($data) `,` type($indices) `,` type($updates)
  }];
  let hasVerifier = 1;
}

def Graph_ScatterElementsOp : Graph_ComputeOp<"scatter_elements",
    [AllTypesMatch<["data", "result"]>,
     AllElementTypesMatch<["data", "updates"]>]> {
  let summary = "a copy of data with elements replaced, added to or multiplied";
  let description = [{
    ONNX ScatterElements (torch.scatter), the inverse of
    `graph.gather_elements`: the result is `data` with the element
    `data[i0, ..., indices[i0, ..., ik, ...], ...]` (the index replacing
    coordinate `axis`) of every position of `indices` set to (`reduction =
    "none"`), increased by (`"add"`) or multiplied by (`"mul"`)
    `updates[i0, ..., ik, ...]`. `indices` and `updates` have one shape, of
    the rank of `data` and with dims no larger than `data`'s off the axis.
    Negative indices count from the end of the axis. With `none`, two
    positions that address the same element are an error at run time (ONNX
    leaves the result undefined); `add` and `mul` apply them in index order.

    ```mlir
    %y = graph.scatter_elements %x, %idx, %u {axis = 1 : i64, reduction = "none"} : tensor<2x5xf32>, tensor<2x1xi64>, tensor<2x1xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$data, Graph_IndexTensor:$indices,
                   Graph_Tensor:$updates, I64Attr:$axis, StrAttr:$reduction);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices `,` $updates attr-dict `:` type($data) `,` type($indices) `,` type($updates)
  }];
  let hasVerifier = 1;
}

def Graph_CumSumOp : Graph_ComputeOp<"cumsum", [SameOperandsAndResultType]> {
  let summary = "cumulative sum along an axis";
  let description = [{
    ONNX CumSum with its axis normalized to `[0, rank)`. With `exclusive`
    element `i` sums the elements before it (the first is 0); with
    `reverse` the sum runs from the end of the axis. Float sums accumulate
    in double; integer sums wrap.

    ```mlir
    %p = graph.cumsum %mask {axis = 1 : i64, exclusive = false, reverse = false} : tensor<2x8xi64>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, I64Attr:$axis,
                   BoolAttr:$exclusive, BoolAttr:$reverse);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Gradient ops of the ops above (created by zero-autodiff)
//===----------------------------------------------------------------------===//

def Graph_PadGradOp : Graph_Op<"pad_grad", [Pure,
    AllElementTypesMatch<["grad", "result"]>]> {
  let summary = "the adjoint of graph.pad: sums each padded element back";
  let description = [{
    Zeroes a tensor of the padded input's type (the result type) and adds
    every element of `grad` to the input position it was read from (none
    for `constant` padding): a slice of `grad` for `constant`, a
    scatter-add for `reflect`, `edge` and `wrap`.

    ```mlir
    %gx = graph.pad_grad %g {pads = [0, 2, 0, 1], mode = "reflect"} : tensor<2x8xf32> -> tensor<2x5xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$grad, I64ArrayAttr:$pads,
                   StrAttr:$mode);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$grad attr-dict `:` type($grad) `->` type($result)";
  let hasVerifier = 1;
}

def Graph_GatherElementsGradOp : Graph_Op<"gather_elements_grad", [Pure,
    AllElementTypesMatch<["grad", "result"]>]> {
  let summary = "scatter-add of a gather_elements result gradient";
  let description = [{
    Zeroes a tensor of the gathered data's type (the result type) and adds
    every element of `grad` at the position its index picked; repeated
    indices accumulate.

    ```mlir
    %gx = graph.gather_elements_grad %g, %idx {axis = 1 : i64} : tensor<2x3xf32>, tensor<2x3xi64> -> tensor<2x5xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$grad, Graph_IndexTensor:$indices,
                   I64Attr:$axis);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $indices attr-dict `:` type($grad) `,` type($indices) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Graph_StridedViewOp : Graph_Op<"strided_view",
    [Pure, AllElementTypesMatch<["input", "result"]>]> {
  let summary = "names elements of a tensor at strides, without copying";
  let description = [{
    Result element `(i0, ..., in)` is input element number
    `offset + i0 * strides[0] + ... + in * strides[n]` of the input's
    row-major storage. No kernel runs: the view is the input's memory, read
    through its strides.

    zero-fold-matmul-views makes it in place of the slices, reshapes and
    transposes in front of a matmul operand (attention's head split), so it
    is read only by matmuls, whose GEMMs take a strided operand: one of its
    last two dims has stride 1 and the other is the matrix's leading
    dimension, and by the fused attentions zero-fuse-attention makes of
    those matmuls.

    ```mlir
    %k = graph.strided_view %qkv {offset = 768 : i64, strides = array<i64: 2359296, 64, 1, 2304>} : tensor<8x1024x2304xbf16> -> tensor<8x12x64x1024xbf16>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, I64Attr:$offset,
                   DenseI64ArrayAttr:$strides);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

#endif // ZEROC_DIALECT_GRAPH_GRAPHMOVEMENTOPS_TD
