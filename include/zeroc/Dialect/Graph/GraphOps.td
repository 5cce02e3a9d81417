//===- GraphOps.td - graph dialect ops ---------------------*- tablegen -*-===//
//
// The graph dialect holds the forward graph of an imported ONNX model: tensor
// ops with value semantics over statically shaped tensors, trainable
// parameters as symbols, and a scalar loss returned from @forward.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_DIALECT_GRAPH_GRAPHOPS_TD
#define ZEROC_DIALECT_GRAPH_GRAPHOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "zeroc/Dialect/Graph/GraphInterfaces.td"

//===----------------------------------------------------------------------===//
// Dialect
//===----------------------------------------------------------------------===//

def Graph_Dialect : Dialect {
  let name = "graph";
  let cppNamespace = "::zeroc::graph";
  let summary = "forward tensor graph of an imported model";
  let description = [{
    The `graph` dialect is the first IR of zeroc. The ONNX importer produces
    one `func.func @forward` whose arguments are the model's data inputs and
    whose results are the model's outputs, one of them marked `graph.loss`
    (a floating-point scalar). Every value is a ranked tensor with a static
    shape: the importer folds the shape arithmetic that exporters emit.

    Float initializers that are parameters become `graph.param` symbols
    (`trainable` or frozen); the forward function reads them with
    `graph.load_param`. A parameter used in
    two places (tied embeddings) is loaded once and has two uses, so its
    gradients accumulate.

    ```mlir
    graph.param trainable @"fc.weight" = dense<0.5> : tensor<3x4xf32>
    func.func @forward(%x: tensor<2x4xf32> {graph.input = "x"})
        -> (tensor<f32> {graph.output = "loss", graph.loss}) {
      %w = graph.load_param @"fc.weight" : tensor<3x4xf32>
      %y = graph.gemm %x, %w {transB = true} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
      %l = graph.reduce_mean %y {axes = [0, 1], keepdims = false} : tensor<2x3xf32> -> tensor<f32>
      return %l : tensor<f32>
    }
    ```
  }];
  let usePropertiesForAttributes = 0;
  let hasConstantMaterializer = 1;
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Graph_ElementType : AnyTypeOf<[F16, BF16, F32, F64, I1, I8, I32, I64]>;
def Graph_Tensor : StaticShapeTensorOf<[F16, BF16, F32, F64, I1, I8, I32, I64]>;
def Graph_FloatTensor : StaticShapeTensorOf<[F16, BF16, F32, F64]>;
def Graph_IndexTensor : StaticShapeTensorOf<[I32, I64]>;
def Graph_BoolTensor : StaticShapeTensorOf<[I1]>;

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

class Graph_Op<string mnemonic, list<Trait> traits = []>
    : Op<Graph_Dialect, mnemonic, traits>;

// A compute op of the forward graph: pure and differentiable.
class Graph_ComputeOp<string mnemonic, list<Trait> traits = []>
    : Graph_Op<mnemonic, !listconcat(traits,
          [Pure, DeclareOpInterfaceMethods<Graph_DifferentiableOpInterface>])>;

class Graph_UnaryFloatOp<string mnemonic, string what>
    : Graph_ComputeOp<mnemonic, [SameOperandsAndResultType]> {
  let summary = "elementwise " # what;
  let description = [{
    Applies }] # what # [{ to every element; shape and type are unchanged.

    ```mlir
    %y = graph.}] # mnemonic # [{ %x : tensor<2x3xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

class Graph_BroadcastBinaryOp<string mnemonic, string what,
                              Type resultType = Graph_Tensor>
    : Graph_ComputeOp<mnemonic, [AllElementTypesMatch<["lhs", "rhs"]>,
          DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "elementwise " # what # " with numpy broadcasting";
  let description = [{
    Computes }] # what # [{ of `lhs` and `rhs` elementwise after broadcasting
    both to a common shape (ONNX multidirectional broadcasting). Both operands
    have the same element type.

    ```mlir
    %z = graph.}] # mnemonic # [{ %x, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$lhs, Graph_Tensor:$rhs);
  let results = (outs resultType:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
}

class Graph_ReduceOp<string mnemonic, string what>
    : Graph_ComputeOp<mnemonic, [DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = what # " over a set of axes";
  let description = [{
    Reduces `input` with }] # what # [{ over `axes` (non-negative, strictly
    increasing). With `keepdims` the reduced axes stay as size 1.

    ```mlir
    %s = graph.}] # mnemonic # [{ %x {axes = [1], keepdims = true} : tensor<2x3xf32> -> tensor<2x1xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, I64ArrayAttr:$axes,
                   BoolAttr:$keepdims);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

//===----------------------------------------------------------------------===//
// Parameters and constants
//===----------------------------------------------------------------------===//

def Graph_ParamOp : Graph_Op<"param", [Symbol]> {
  let summary = "a model parameter with its initial value";
  let description = [{
    Declares a parameter of the model, named after the ONNX initializer. A
    `trainable` parameter has a floating-point type and receives a gradient.
    A parameter without `trainable` is frozen (PyTorch's
    requires_grad=False): autodiff gives it no gradient, it has no optimizer
    state, no gradient collective and is never updated, but it is ZeRO state
    like a trainable one: the ZeRO passes partition every parameter across
    ranks (stage 3: a shard, all-gathered around its uses, released after),
    and `--save-params` saves it unchanged. Registered buffers are not
    parameters but `graph.constant`s. The importer decides which is which
    (docs/Import.md, "Parameters").

    A trainable parameter may name a wider `master` element type: the
    parameter (and so its gradient and every collective that moves either)
    is stored in its own, narrower type, and the optimizer keeps a copy in
    the master type, updates that copy and rounds it back into the
    parameter. `zero-mixed-precision` makes fp16/bf16 parameters with f32
    masters this way, as DeepSpeed's fp16/bf16 optimizers do; the initial
    value is the rounded one, and the master starts from it.

    ```mlir
    graph.param trainable @"wte.weight" = dense<0.0> : tensor<61x32xf32>
    graph.param trainable @"wpe.weight" master(f32) = dense<0.0> : tensor<8x32xf16>
    graph.param @"frozen.weight" = dense<0.0> : tensor<4x32xf32>
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, ElementsAttr:$initial_value,
                   UnitAttr:$trainable, OptionalAttr<TypeAttr>:$master);
  let assemblyFormat = [{
    (`trainable` $trainable^)? $sym_name (`master` `(` $master^ `)`)? `=`
    $initial_value attr-dict
  }];
  let extraClassDeclaration = [{
    ::mlir::RankedTensorType getType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getInitialValue().getType());
    }
    /// The element type the optimizer updates: `master` if set, otherwise
    /// the parameter's own element type.
    ::mlir::Type getMasterElementType() {
      if (auto m = getMaster())
        return *m;
      return getType().getElementType();
    }
  }];
  let hasVerifier = 1;
}

def Graph_LoadParamOp : Graph_Op<"load_param",
    [Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "reads a parameter's current value";
  let description = [{
    Produces the current value of the `graph.param` named by `param`. The
    result type equals the parameter's type.

    ```mlir
    %w = graph.load_param @"fc.weight" : tensor<3x4xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$param attr-dict `:` type($result)";
}

def Graph_BufferOp : Graph_Op<"buffer", [Symbol]> {
  let summary = "a registered buffer that training updates";
  let description = [{
    Declares a floating-point buffer of the model that is not a parameter
    but state the forward pass updates: the running mean and variance of a
    training-mode BatchNormalization (PyTorch's `running_mean` and
    `running_var`). It has no gradient and no optimizer state. The forward
    function reads its value at the start of the micro-step with
    `graph.load_buffer` and returns its new value as a result tagged
    `graph.buffer_update = @name`; the ZeRO passes store that result into
    the buffer at the end of the micro-step. A buffer is never partitioned:
    every rank keeps its own, updated from its own micro-batches, as
    DeepSpeed keeps module buffers whole on every rank; `--save-params`
    saves each rank's. Buffers that nothing updates are `graph.constant`s.

    ```mlir
    graph.buffer @"bn.running_mean" = dense<0.0> : tensor<8xf32>
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, ElementsAttr:$initial_value);
  let assemblyFormat = "$sym_name `=` $initial_value attr-dict";
  let extraClassDeclaration = [{
    ::mlir::RankedTensorType getType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getInitialValue().getType());
    }
  }];
  let hasVerifier = 1;
}

def Graph_LoadBufferOp : Graph_Op<"load_buffer",
    [Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "reads a buffer's value at the start of the micro-step";
  let description = [{
    Produces the value the `graph.buffer` named by `buffer` holds when the
    micro-step starts; the micro-step's update is stored only after it, so
    every read in one micro-step sees the same value.

    ```mlir
    %m = graph.load_buffer @"bn.running_mean" : tensor<8xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$buffer);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$buffer attr-dict `:` type($result)";
}

def Graph_ConstantOp : Graph_Op<"constant",
    [ConstantLike, Pure, AllTypesMatch<["value", "result"]>]> {
  let summary = "a constant tensor";
  let description = [{
    A constant that is not a parameter: ONNX `Constant` nodes, integer
    initializers, and the results of folded shape arithmetic.

    ```mlir
    %c = graph.constant dense<[2, 3]> : tensor<2xi64>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

def Graph_NegOp : Graph_UnaryFloatOp<"neg", "negation">;
def Graph_SqrtOp : Graph_UnaryFloatOp<"sqrt", "the square root">;
def Graph_ReciprocalOp : Graph_UnaryFloatOp<"reciprocal", "1/x">;
def Graph_ReluOp : Graph_UnaryFloatOp<"relu", "max(x, 0)">;
def Graph_TanhOp : Graph_UnaryFloatOp<"tanh", "the hyperbolic tangent">;
def Graph_SigmoidOp : Graph_UnaryFloatOp<"sigmoid", "the logistic sigmoid">;
def Graph_ErfOp : Graph_UnaryFloatOp<"erf", "the error function">;
def Graph_ExpOp : Graph_UnaryFloatOp<"exp", "the exponential">;
def Graph_LogOp : Graph_UnaryFloatOp<"log", "the natural logarithm">;

def Graph_AddOp : Graph_BroadcastBinaryOp<"add", "the sum">;
def Graph_SubOp : Graph_BroadcastBinaryOp<"sub", "the difference">;
def Graph_MulOp : Graph_BroadcastBinaryOp<"mul", "the product">;
def Graph_DivOp : Graph_BroadcastBinaryOp<"div", "the quotient">;
def Graph_PowOp : Graph_BroadcastBinaryOp<"pow", "lhs raised to rhs">;
def Graph_EqualOp : Graph_BroadcastBinaryOp<"equal", "equality (an i1 tensor)",
                                            Graph_BoolTensor>;

def Graph_CastOp : Graph_ComputeOp<"cast"> {
  let summary = "elementwise element type conversion";
  let description = [{
    Converts every element to the result's element type; the shape is kept.

    ```mlir
    %y = graph.cast %x : tensor<4xi64> -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  // A constant converted to a floating-point type folds to the constant the
  // runtime's cast would compute (docs/RationaleGraph.md, "Folding casts").
  let hasFolder = 1;
}

def Graph_WhereOp : Graph_ComputeOp<"where",
    [AllElementTypesMatch<["on_true", "on_false", "result"]>,
     DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "elementwise select with broadcasting";
  let description = [{
    Picks `on_true` where `condition` holds, else `on_false`, after
    broadcasting all three operands to a common shape.

    ```mlir
    %r = graph.where %m, %x, %y : tensor<4x4xi1>, tensor<2x4x4xf32>, tensor<f32> -> tensor<2x4x4xf32>
    ```
  }];
  let arguments = (ins Graph_BoolTensor:$condition, Graph_Tensor:$on_true,
                   Graph_Tensor:$on_false);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $condition `,` $on_true `,` $on_false attr-dict `:` type($condition) `,`
    type($on_true) `,` type($on_false) `->` type($result)
  }];
}

def Graph_DropoutOp : Graph_ComputeOp<"dropout", [SameOperandsAndResultType]> {
  let summary = "inverted dropout";
  let description = [{
    In training mode zeroes each element with probability `ratio` and scales
    the kept ones by 1/(1-ratio); otherwise the identity. The mask output of
    ONNX Dropout is not modelled: the importer rejects models that read it.
    The mask is a function of `seed`, the training step and the element
    index, so applying the same op (same seed) to the gradient is the
    backward pass.

    ```mlir
    %y = graph.dropout %x {ratio = 1.0e-01 : f64, training = true} : tensor<2x8xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input,
                   F64Attr:$ratio,
                   BoolAttr:$training,
                   DefaultValuedAttr<I64Attr, "0">:$seed);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Contractions and normalizations
//===----------------------------------------------------------------------===//

def Graph_MatMulOp : Graph_ComputeOp<"matmul",
    [AllElementTypesMatch<["lhs", "rhs", "result"]>,
     DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "numpy-style matrix product";
  let description = [{
    Matrix product over the last two dims with broadcasting batch dims; a
    rank-1 operand is promoted to a matrix and the promoted dim removed from
    the result (numpy.matmul).

    `transA` / `transB` swap the last two dims of `lhs` / `rhs` (rank 2 or
    more) before the product: zero-fold-transposes sets them in place of a
    batched transpose, which the GEMM then reads transposed instead of
    copying.

    `result_perm` stores the product transposed: the result is
    `transpose(product, result_perm)`, and one of the product's last two
    dims stays the result's last (each matrix of the product is then rows
    or columns of unit stride, which the GEMM writes in place). Only
    zero-fold-matmul-views sets it, after autodiff: such a matmul has no
    gradient rule.

    ```mlir
    %y = graph.matmul %x, %w : tensor<2x8x32xf32>, tensor<32x64xf32> -> tensor<2x8x64xf32>
    %s = graph.matmul %q, %k {transB = true} : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$lhs, Graph_FloatTensor:$rhs,
                   DefaultValuedAttr<BoolAttr, "false">:$transA,
                   DefaultValuedAttr<BoolAttr, "false">:$transB,
                   OptionalAttr<DenseI64ArrayAttr>:$result_perm);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$lhs, "::mlir::Value":$rhs,
                   CArg<"bool", "false">:$transA, CArg<"bool", "false">:$transB), [{
      build($_builder, $_state, lhs, rhs, transA, transB, ::mlir::DenseI64ArrayAttr());
    }]>,
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$lhs, "::mlir::Value":$rhs,
                   "bool":$transA, "bool":$transB), [{
      build($_builder, $_state, result, lhs, rhs, transA, transB,
            ::mlir::DenseI64ArrayAttr());
    }]>
  ];
}

def Graph_GemmOp : Graph_ComputeOp<"gemm",
    [DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "alpha * op(A) * op(B) + beta * C";
  let description = [{
    ONNX Gemm: rank-2 `a` and `b`, optionally transposed, and an optional `c`
    broadcastable to the (M, N) result. `alpha` and `beta` are finite.

    ```mlir
    %y = graph.gemm %x, %w, %b {transB = true} : (tensor<8x10xf32>, tensor<7x10xf32>, tensor<7xf32>) -> tensor<8x7xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$a, Graph_FloatTensor:$b,
                   Optional<Graph_FloatTensor>:$c,
                   DefaultValuedAttr<F64Attr, "1.0">:$alpha,
                   DefaultValuedAttr<F64Attr, "1.0">:$beta,
                   DefaultValuedAttr<BoolAttr, "false">:$transA,
                   DefaultValuedAttr<BoolAttr, "false">:$transB);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $a `,` $b (`,` $c^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Graph_SoftmaxOp : Graph_ComputeOp<"softmax", [SameOperandsAndResultType]> {
  let summary = "softmax along one axis";
  let description = [{
    ```mlir
    %p = graph.softmax %x {axis = 1 : i64} : tensor<2x5xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Graph_LogSoftmaxOp : Graph_ComputeOp<"log_softmax",
    [SameOperandsAndResultType]> {
  let summary = "log of softmax along one axis";
  let description = [{
    ```mlir
    %p = graph.log_softmax %x {axis = 1 : i64} : tensor<2x5xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Graph_LayerNormOp : Graph_ComputeOp<"layer_norm",
    [AllElementTypesMatch<["input", "result"]>,
     AllTypesMatch<["input", "result"]>]> {
  let summary = "layer normalization over the trailing axes";
  let description = [{
    Normalizes over axes `[axis, rank)` and applies `scale` and the optional
    `bias`, both shaped like the normalized trailing dims.

    ```mlir
    %y = graph.layer_norm %x, %g, %b {axis = 2 : i64, epsilon = 1.0e-05 : f64}
        : (tensor<2x8x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$scale,
                   Optional<Graph_FloatTensor>:$bias, I64Attr:$axis,
                   F64Attr:$epsilon);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Graph_SoftmaxCrossEntropyLossOp : Graph_ComputeOp<"softmax_cross_entropy_loss",
    [DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "cross entropy of softmax(scores) against integer labels";
  let description = [{
    ONNX SoftmaxCrossEntropyLoss without class weights. `scores` is (N, C) or
    (N, C, d1, ...), `labels` is (N) or (N, d1, ...). Labels equal to
    `ignore_index` contribute nothing and are excluded from the mean.
    `reduction` is `mean` or `sum` (scalar result) or `none`.

    ```mlir
    %l = graph.softmax_cross_entropy_loss %s, %t {reduction = "mean"} : tensor<16x61xf32>, tensor<16xi64> -> tensor<f32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$scores, Graph_IndexTensor:$labels,
                   StrAttr:$reduction, OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $scores `,` $labels attr-dict `:` type($scores) `,` type($labels) `->` type($result)
  }];
}

def Graph_ReduceSumOp : Graph_ReduceOp<"reduce_sum", "the sum">;
def Graph_ReduceMeanOp : Graph_ReduceOp<"reduce_mean", "the mean">;
def Graph_ReduceMaxOp : Graph_ReduceOp<"reduce_max", "the maximum">;

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Graph_GatherOp : Graph_ComputeOp<"gather",
    [DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "gathers slices of data along an axis (embedding lookup)";
  let description = [{
    The result shape is `data.shape[:axis] + indices.shape + data.shape[axis+1:]`.
    Negative indices count from the end of the axis.

    `padding_idx` (axis 0 only; the importer sets it from the parameter
    marker for an `nn.Embedding(padding_idx=p)` weight) is a row of `data`
    that receives no gradient from this gather, as in PyTorch; the lookup
    itself is unchanged.

    ```mlir
    %e = graph.gather %wte, %idx {axis = 0 : i64} : tensor<61x32xf32>, tensor<2x8xi64> -> tensor<2x8x32xf32>
    %p = graph.gather %wte, %idx {axis = 0 : i64, padding_idx = 0 : i64} : tensor<61x32xf32>, tensor<2x8xi64> -> tensor<2x8x32xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$data, Graph_IndexTensor:$indices,
                   I64Attr:$axis, OptionalAttr<I64Attr>:$padding_idx);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = [{
    $data `,` $indices attr-dict `:` type($data) `,` type($indices) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Graph_ReshapeOp : Graph_ComputeOp<"reshape",
    [AllElementTypesMatch<["input", "result"]>]> {
  let summary = "reinterprets the shape, keeping the element count";
  let description = [{
    The target shape is the static result type; ONNX Reshape, Squeeze,
    Unsqueeze and Flatten all import as this op.

    ```mlir
    %y = graph.reshape %x : tensor<2x8x32xf32> -> tensor<16x32xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_TransposeOp : Graph_ComputeOp<"transpose",
    [DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "permutes the dims";
  let description = [{
    Result dim `i` is input dim `perm[i]`.

    ```mlir
    %y = graph.transpose %x {perm = [0, 2, 1, 3]} : tensor<2x8x2x16xf32> -> tensor<2x2x8x16xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, I64ArrayAttr:$perm);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Graph_ExpandOp : Graph_ComputeOp<"expand",
    [AllElementTypesMatch<["input", "result"]>]> {
  let summary = "broadcasts to the static result shape";
  let description = [{
    ```mlir
    %y = graph.expand %x : tensor<1x8xf32> -> tensor<2x8xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Graph_SliceOp : Graph_ComputeOp<"slice",
    [DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "strided slice with one normalized triple per dim";
  let description = [{
    `starts`, `ends` and `steps` have one entry per dim, already clamped by
    the importer. For a positive step `0 <= start <= end <= dim`; for a
    negative step `-1 <= end <= start < dim`. Dim `i` of the result has
    `ceil((end - start) / step)` elements. ONNX Split imports as slices.

    ```mlir
    %q = graph.slice %x {starts = [0, 0], ends = [2, 32], steps = [1, 1]} : tensor<2x96xf32> -> tensor<2x32xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, I64ArrayAttr:$starts,
                   I64ArrayAttr:$ends, I64ArrayAttr:$steps);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Graph_ConcatOp : Graph_ComputeOp<"concat",
    [DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "concatenates tensors along an axis";
  let description = [{
    ```mlir
    %y = graph.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
    ```
  }];
  let arguments = (ins Variadic<Graph_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, results)";
}

def Graph_TriluOp : Graph_ComputeOp<"trilu", [SameOperandsAndResultType]> {
  let summary = "keeps the upper or lower triangle of the last two dims";
  let description = [{
    With `upper`, keeps elements with `col - row >= k`; otherwise those with
    `col - row <= k`. Others become zero.

    ```mlir
    %m = graph.trilu %x {upper = false, k = 0 : i64} : tensor<8x8xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, BoolAttr:$upper, I64Attr:$k);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

// Pad, GatherElements, GatherND, ScatterND, ScatterElements, CumSum and their
// gradient ops.
include "zeroc/Dialect/Graph/GraphMovementOps.td"

//===----------------------------------------------------------------------===//
// Gradient ops (created by zero-autodiff)
//===----------------------------------------------------------------------===//

def Graph_UnaryGradOp : Graph_Op<"unary_grad",
    [Pure, AttrSizedOperandSegments]> {
  let summary = "gradient of an elementwise unary op";
  let description = [{
    `result = grad * f'(x)` for the unary op named by `op` (one of neg,
    sqrt, reciprocal, relu, tanh, sigmoid, erf, exp, log, cos, sin, abs,
    gelu, gelu_tanh), given what the derivative reads of the forward pass:
    its input `x` (relu, erf, log, cos, sin, abs, gelu, gelu_tanh) or its
    output `y` (sqrt, reciprocal, tanh, sigmoid, exp), and nothing else
    (neg). An operand the derivative does not read is absent, so that
    autodiff keeps no forward value alive for it
    (`UnaryGradOp::readsInput`, `readsOutput`).

    ```mlir
    %gx = graph.unary_grad %gy, y = %y {op = "tanh"} : tensor<2x3xf32>
    %ge = graph.unary_grad %gy, x = %x {op = "erf"} : tensor<2x3xf32>
    ```
  }];
  let arguments = (ins Optional<Graph_FloatTensor>:$x,
                   Optional<Graph_FloatTensor>:$y,
                   Graph_FloatTensor:$grad, StrAttr:$op);
  let results = (outs Graph_FloatTensor:$result);
  // `%g, x = %x, y = %y {op = ...} : type`, the forward values optional,
  // of the gradient's type.
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let builders = [
    // The gradient of `kind` at forward input x and output y: passes the
    // one the derivative reads.
    OpBuilder<(ins "::mlir::Value":$x, "::mlir::Value":$y,
                   "::mlir::Value":$grad, "::llvm::StringRef":$kind)>
  ];
  let extraClassDeclaration = [{
    /// Whether the derivative of unary op `kind` reads its input x (its
    /// output y).
    static bool readsInput(::llvm::StringRef kind);
    static bool readsOutput(::llvm::StringRef kind);
  }];
}

def Graph_SumToOp : Graph_Op<"sum_to", [Pure,
    AllElementTypesMatch<["input", "result"]>]> {
  let summary = "sums the broadcast dims away (adjoint of broadcasting)";
  let description = [{
    The result shape must broadcast to the input shape; the dims that
    broadcasting expanded are summed.

    ```mlir
    %gb = graph.sum_to %g : tensor<2x3xf32> -> tensor<3xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_SoftmaxGradOp : Graph_Op<"softmax_grad",
    [Pure, AllTypesMatch<["y", "grad", "result"]>]> {
  let summary = "gradient of softmax or log_softmax from its output";
  let description = [{
    ```mlir
    %gx = graph.softmax_grad %y, %gy {axis = 1 : i64, log = false} : tensor<2x5xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$y, Graph_FloatTensor:$grad,
                   I64Attr:$axis, BoolAttr:$log);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$y `,` $grad attr-dict `:` type($y)";
  let hasVerifier = 1;
}

def Graph_LayerNormGradOp : Graph_Op<"layer_norm_grad", [Pure,
    AllTypesMatch<["input", "grad", "grad_input"]>,
    AllTypesMatch<["scale", "grad_scale", "grad_bias"]>]> {
  let summary = "gradients of layer_norm w.r.t. input, scale and bias";
  let description = [{
    ```mlir
    %gx, %gs, %gb = graph.layer_norm_grad %x, %s, %gy {axis = 1 : i64, epsilon = 1.0e-05 : f64}
        : tensor<2x4xf32>, tensor<4xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$scale,
                   Graph_FloatTensor:$grad, I64Attr:$axis, F64Attr:$epsilon);
  let results = (outs Graph_FloatTensor:$grad_input,
                 Graph_FloatTensor:$grad_scale, Graph_FloatTensor:$grad_bias);
  let assemblyFormat = [{
    $input `,` $scale `,` $grad attr-dict `:` type($input) `,` type($scale)
  }];
}

def Graph_GatherGradOp : Graph_Op<"gather_grad", [Pure]> {
  let summary = "scatter-add of a gather's result gradient";
  let description = [{
    Zeroes a tensor of the gathered data's shape (the result type) and adds
    `grad` at the gathered positions; repeated indices accumulate. With
    `padding_idx` (axis 0), positions that gather that row add nothing.
    The result's element type is `grad`'s, or f32 for an f16 or bf16
    `grad`: the sums are then stored as they are computed, in f32, where
    an f16 or bf16 result rounds each of them once at the end
    (zero-widen-gather-grad).

    ```mlir
    %gw = graph.gather_grad %g, %idx {axis = 0 : i64} : tensor<2x8x32xf32>, tensor<2x8xi64> -> tensor<61x32xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$grad, Graph_IndexTensor:$indices,
                   I64Attr:$axis, OptionalAttr<I64Attr>:$padding_idx);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $indices attr-dict `:` type($grad) `,` type($indices) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Graph_SliceGradOp : Graph_Op<"slice_grad", [Pure,
    AllElementTypesMatch<["grad", "result"]>]> {
  let summary = "places a slice's gradient into zeros of the input's shape";
  let description = [{
    The adjoint of `graph.slice` with the same `starts`, `ends` and `steps`;
    the result type is the sliced input's type.

    ```mlir
    %gx = graph.slice_grad %g {starts = [0, 0], ends = [2, 32], steps = [1, 1]} : tensor<2x32xf32> -> tensor<2x96xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$grad, I64ArrayAttr:$starts,
                   I64ArrayAttr:$ends, I64ArrayAttr:$steps);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$grad attr-dict `:` type($grad) `->` type($result)";
  let hasVerifier = 1;
}

def Graph_SoftmaxCrossEntropyLossGradOp
    : Graph_Op<"softmax_cross_entropy_loss_grad", [Pure,
        AllTypesMatch<["scores", "result"]>]> {
  let summary = "gradient of softmax_cross_entropy_loss w.r.t. the scores";
  let description = [{
    `grad` is the gradient of the loss result (a scalar for mean and sum).

    ```mlir
    %gs = graph.softmax_cross_entropy_loss_grad %s, %t, %g {reduction = "mean"} : tensor<16x61xf32>, tensor<16xi64>, tensor<f32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$scores, Graph_IndexTensor:$labels,
                   Graph_FloatTensor:$grad, StrAttr:$reduction,
                   OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = [{
    $scores `,` $labels `,` $grad attr-dict `:` type($scores) `,` type($labels) `,` type($grad)
  }];
}

include "zeroc/Dialect/Graph/GraphElementwiseOps.td"
include "zeroc/Dialect/Graph/GraphConvOps.td"
include "zeroc/Dialect/Graph/GraphFusedOps.td"

#endif // ZEROC_DIALECT_GRAPH_GRAPHOPS_TD
