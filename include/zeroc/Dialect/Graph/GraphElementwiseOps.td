//===- GraphElementwiseOps.td - comparisons, logic, math ---*- tablegen -*-===//
//
// The elementwise ops of Hugging Face exports beyond arithmetic: comparisons
// and logic producing i1 masks, NaN/Inf tests, float math (cos, sin, abs,
// sign, floor, ceil, round, gelu), max/min and clip. Included from
// GraphOps.td, after its base classes.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_DIALECT_GRAPH_GRAPHELEMENTWISEOPS_TD
#define ZEROC_DIALECT_GRAPH_GRAPHELEMENTWISEOPS_TD

def Graph_CosOp : Graph_UnaryFloatOp<"cos", "the cosine">;
def Graph_SinOp : Graph_UnaryFloatOp<"sin", "the sine">;
def Graph_AbsOp : Graph_UnaryFloatOp<"abs", "the absolute value">;
def Graph_SignOp : Graph_UnaryFloatOp<"sign",
    "the sign (-1, 0 or 1; NaN gives 0, as torch.sign; no gradient)">;
def Graph_FloorOp : Graph_UnaryFloatOp<"floor", "rounding down (no gradient)">;
def Graph_CeilOp : Graph_UnaryFloatOp<"ceil", "rounding up (no gradient)">;
def Graph_RoundOp : Graph_UnaryFloatOp<"round",
    "rounding to nearest, ties to even (no gradient)">;

def Graph_MaxOp : Graph_BroadcastBinaryOp<"max",
    "the maximum (NaN propagates; ties split the gradient equally)">;
def Graph_MinOp : Graph_BroadcastBinaryOp<"min",
    "the minimum (NaN propagates; ties split the gradient equally)">;

def Graph_GeluOp : Graph_ComputeOp<"gelu", [SameOperandsAndResultType]> {
  let summary = "elementwise GELU, exact or tanh approximation";
  let description = [{
    ONNX Gelu (opset 20) and torch.nn.functional.gelu: with `approximate`
    `"none"`, `0.5 x (1 + erf(x / sqrt(2)))`; with `"tanh"`,
    `0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))`.

    ```mlir
    %y = graph.gelu %x {approximate = "tanh"} : tensor<2x3xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, StrAttr:$approximate);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Graph_CompareOp : Graph_ComputeOp<"compare",
    [AllElementTypesMatch<["lhs", "rhs"]>,
     DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "elementwise ordered comparison with numpy broadcasting";
  let description = [{
    ONNX Less, LessOrEqual, Greater and GreaterOrEqual: `lhs <predicate>
    rhs` elementwise after broadcasting, as an i1 mask. `predicate` is one
    of `lt`, `le`, `gt`, `ge`. Operands are float or integer (i32, i64)
    tensors of one element type; a comparison with NaN is false. Masks carry
    no gradient.

    ```mlir
    %m = graph.compare %x, %y {predicate = "lt"} : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xi1>
    ```
  }];
  let arguments = (ins Graph_Tensor:$lhs, Graph_Tensor:$rhs,
                   StrAttr:$predicate);
  let results = (outs Graph_BoolTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Graph_LogicalOp : Graph_ComputeOp<"logical",
    [DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "elementwise and, or, xor of i1 masks with broadcasting";
  let description = [{
    ONNX And, Or and Xor: `op` is `and`, `or` or `xor`.

    ```mlir
    %m = graph.logical %a, %b {op = "and"} : tensor<4x4xi1>, tensor<4xi1> -> tensor<4x4xi1>
    ```
  }];
  let arguments = (ins Graph_BoolTensor:$lhs, Graph_BoolTensor:$rhs,
                   StrAttr:$op);
  let results = (outs Graph_BoolTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Graph_NotOp : Graph_ComputeOp<"not", [SameOperandsAndResultType]> {
  let summary = "elementwise logical not of an i1 mask";
  let description = [{
    ```mlir
    %n = graph.not %m : tensor<4x4xi1>
    ```
  }];
  let arguments = (ins Graph_BoolTensor:$input);
  let results = (outs Graph_BoolTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Graph_IsNaNOp : Graph_ComputeOp<"is_nan"> {
  let summary = "elementwise NaN test of a float tensor";
  let description = [{
    ONNX IsNaN: an i1 mask of the input's shape.

    ```mlir
    %m = graph.is_nan %x : tensor<2x3xf32> -> tensor<2x3xi1>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input);
  let results = (outs Graph_BoolTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Graph_IsInfOp : Graph_ComputeOp<"is_inf"> {
  let summary = "elementwise infinity test of a float tensor";
  let description = [{
    ONNX IsInf: true at +inf when `detect_positive`, at -inf when
    `detect_negative`; at least one of them is set (the importer folds the
    case of neither to a constant false mask).

    ```mlir
    %m = graph.is_inf %x {detect_positive = true, detect_negative = false} : tensor<2x3xf32> -> tensor<2x3xi1>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, BoolAttr:$detect_positive,
                   BoolAttr:$detect_negative);
  let results = (outs Graph_BoolTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Graph_ClipOp : Graph_ComputeOp<"clip", [SameOperandsAndResultType]> {
  let summary = "clamps every element to constant bounds";
  let description = [{
    ONNX Clip with constant `min`/`max` (either may be absent) and
    torch.clamp: `min(max(x, min), max)`, so `min > max` gives `max`
    everywhere; NaN stays NaN. Bounds are not NaN. The gradient passes where
    `min < x < max` (current torch.clamp with scalar bounds: 0 at a bound).

    ```mlir
    %y = graph.clip %x {min = -1.0 : f64, max = 1.0 : f64} : tensor<2x3xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, OptionalAttr<F64Attr>:$min,
                   OptionalAttr<F64Attr>:$max);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Graph_ClipGradOp : Graph_Op<"clip_grad",
    [Pure, AllTypesMatch<["x", "grad", "result"]>]> {
  let summary = "gradient of clip: grad where min < x < max, else 0";
  let description = [{
    ```mlir
    %gx = graph.clip_grad %x, %gy {min = -1.0 : f64} : tensor<2x3xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$x, Graph_FloatTensor:$grad,
                   OptionalAttr<F64Attr>:$min, OptionalAttr<F64Attr>:$max);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$x `,` $grad attr-dict `:` type($x)";
  let hasVerifier = 1;
}

#endif // ZEROC_DIALECT_GRAPH_GRAPHELEMENTWISEOPS_TD
