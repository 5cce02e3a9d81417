//===- GraphFusedOps.td - elementwise chains as one op -----*- tablegen -*-===//
//
// The ops the fusion passes make: a chain of elementwise ops that one kernel
// computes element by element (zero-fuse-elementwise), and a softmax or
// softmax gradient with such a chain before or after it (zero-fuse-softmax;
// docs/CudaTarget.md), an attention with its softmax's chains, forward
// and backward (zero-fuse-attention), a cross-entropy loss with its
// gradient (zero-fuse-cross-entropy), a layer norm's gradient with the
// add after it (zero-fuse-layer-norm-grad-add), and a weight gradient's
// GEMM with its bias gradient (zero-fold-gemm-bias-grad).
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_DIALECT_GRAPH_GRAPHFUSEDOPS_TD
#define ZEROC_DIALECT_GRAPH_GRAPHFUSEDOPS_TD

def Graph_FusedElementwiseOp : Graph_Op<"fused_elementwise",
    [Pure, IsolatedFromAbove]> {
  let summary = "elementwise ops computed in one pass over the elements";
  let description = [{
    The body computes the results one element at a time: its block
    arguments are the inputs (each broadcast to the results' shape, numpy
    rules; of the results' element type, or i1 for a `graph.where`'s
    condition), every op in it is an elementwise op of the results' type
    (zeroc::graph::isFusableElementwise), and `graph.yield` returns the
    results, all of one type: the chain's last value and the values between
    that other ops read. Each op's value is rounded to the element type as
    the op would round it on its own, so the op computes exactly what its
    body's ops compute one after another; the values it does not yield are
    never stored.

    ```mlir
    %e, %y = graph.fused_elementwise %x, %b : (tensor<2x8xf32>, tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
    ^bb0(%a: tensor<2x8xf32>, %c: tensor<8xf32>):
      %s = graph.add %a, %c : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
      %e = graph.erf %s : tensor<2x8xf32>
      %y = graph.mul %e, %s : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
      graph.yield %e, %y : tensor<2x8xf32>, tensor<2x8xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<Graph_Tensor>:$inputs);
  let results = (outs Variadic<Graph_FloatTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $inputs attr-dict `:` functional-type($inputs, $results) $body
  }];
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The values graph.yield returns, one per result.
    ::mlir::OperandRange getYielded();
    /// The type every result has.
    ::mlir::RankedTensorType getResultType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getResult(0).getType());
    }
  }];
}

def Graph_FusedSoftmaxOp : Graph_Op<"fused_softmax",
    [Pure, IsolatedFromAbove]> {
  let summary = "a softmax of the values an elementwise chain computes";
  let description = [{
    The softmax (`log`: the log-softmax) along `axis` of the value its body
    yields, the body computing that value one element at a time as a
    `graph.fused_elementwise` body does (its arguments the inputs, each
    broadcast to the result's shape; every value rounded to the element
    type). It computes the bits a `graph.fused_elementwise` followed by a
    `graph.softmax` computes, without storing the value between them
    (zero-fuse-softmax, docs/CudaTarget.md).

    ```mlir
    %p = graph.fused_softmax %s, %k, %mask, %ninf {axis = 3 : i64, log = false} : (tensor<2x4x8x8xbf16>, tensor<bf16>, tensor<1x1x8x8xi1>, tensor<bf16>) -> tensor<2x4x8x8xbf16> {
    ^bb0(%a: tensor<2x4x8x8xbf16>, %b: tensor<bf16>, %c: tensor<1x1x8x8xi1>, %d: tensor<bf16>):
      %0 = graph.mul %a, %b : tensor<2x4x8x8xbf16>, tensor<bf16> -> tensor<2x4x8x8xbf16>
      %1 = graph.where %c, %d, %0 : tensor<1x1x8x8xi1>, tensor<bf16>, tensor<2x4x8x8xbf16> -> tensor<2x4x8x8xbf16>
      graph.yield %1 : tensor<2x4x8x8xbf16>
    }
    ```
  }];
  let arguments = (ins Variadic<Graph_Tensor>:$inputs, I64Attr:$axis, BoolAttr:$log);
  let results = (outs Graph_FloatTensor:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $inputs attr-dict `:` functional-type($inputs, $result) $body
  }];
  let hasRegionVerifier = 1;
}

def Graph_FusedSoftmaxGradOp : Graph_Op<"fused_softmax_grad",
    [Pure, IsolatedFromAbove, AllTypesMatch<["y", "grad", "result"]>]> {
  let summary = "a softmax gradient with an elementwise chain applied to it";
  let description = [{
    The gradient `graph.softmax_grad %y, %grad` computes (same `axis` and
    `log`), then the body applied to it one element at a time: the body's
    first argument is that gradient's element, the others are the inputs
    (each broadcast to the result's shape), and it yields the result, every
    value rounded to the element type as a `graph.fused_elementwise` body
    does. It computes the bits a `graph.softmax_grad` followed by a
    `graph.fused_elementwise` computes, without storing the gradient
    between them (zero-fuse-softmax, docs/CudaTarget.md).

    ```mlir
    %g = graph.fused_softmax_grad %y, %gy epilogue(%mask, %zero, %k : tensor<1x1x8x8xi1>, tensor<bf16>, tensor<bf16>) {axis = 3 : i64, log = false} : tensor<2x4x8x8xbf16> {
    ^bb0(%gx: tensor<2x4x8x8xbf16>, %c: tensor<1x1x8x8xi1>, %z: tensor<bf16>, %s: tensor<bf16>):
      %0 = graph.where %c, %z, %gx : tensor<1x1x8x8xi1>, tensor<bf16>, tensor<2x4x8x8xbf16> -> tensor<2x4x8x8xbf16>
      %1 = graph.mul %0, %s : tensor<2x4x8x8xbf16>, tensor<bf16> -> tensor<2x4x8x8xbf16>
      graph.yield %1 : tensor<2x4x8x8xbf16>
    }
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$y, Graph_FloatTensor:$grad,
                   Variadic<Graph_Tensor>:$inputs, I64Attr:$axis, BoolAttr:$log);
  let results = (outs Graph_FloatTensor:$result);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $y `,` $grad (`epilogue` `(` $inputs^ `:` type($inputs) `)`)? attr-dict `:` type($result) $body
  }];
  let hasRegionVerifier = 1;
}

def Graph_FusedAttentionOp : Graph_Op<"fused_attention",
    [Pure, IsolatedFromAbove, AttrSizedOperandSegments]> {
  let summary = "a softmax attention in one kernel: softmax(prologue(q kt)) v";
  let description = [{
    `q` is `[B, H, Tq, D]`, `kt` `[B, H, D, Tk]` and `v` `[B, H, Tk, D]`,
    of one f16 or bf16 type. The scores `q kt` (`[B, H, Tq, Tk]`, each
    rounded to the element type as a `graph.matmul` stores it) go through
    the body one element at a time, as a `graph.fused_softmax` body (its
    first argument the score, the others the `inputs`, each broadcast to
    the scores' shape); the softmax along the last dim of what it yields,
    times `v`, is `out`: `[B, H, Tq, D]`, stored transposed by `out_perm`
    as `graph.matmul`'s `result_perm` stores a product. `lse` is each
    row's log-sum-exp (f32 `[B, H, Tq]`), which the gradient reads. The
    scores and probabilities are never stored (zero-fuse-attention,
    docs/CudaTarget.md "Attention in one kernel"). `causal` masks every
    key after its query: its score is `-inf`, whatever the prologue yields
    (its pass proved the graph's mask did that and took the mask out of the
    prologue), and the kernel skips the key tiles that hold no other score. `dropout_ratio` and `dropout_seed` (both or
    neither) are a `graph.dropout` in training mode between the softmax and
    the product with `v`: the probabilities are dropped by the mask that op
    draws over the `[B, H, Tq, Tk]` probabilities (the seed's, and the
    micro-step's counter), kept ones scaled by 1/(1-ratio), while the
    softmax's sum counts every key. `q_bias`, `kt_bias` and `v_bias`, each
    optional and of its operand's type, are added to it as the kernels load
    it, each sum rounded to the element type as a `graph.add` (bias + x)
    stores it: the bias of a QKV projection, usually a `graph.strided_view`
    with strides 0 along batch and time (zero-fuse-attention-bias).

    ```mlir
    %o, %lse = graph.fused_attention %q, %kt, %v prologue(%k, %mask, %ninf : tensor<bf16>, tensor<1x1x64x64xi1>, tensor<bf16>) {out_perm = array<i64: 0, 2, 1, 3>} : (tensor<2x4x64x16xbf16>, tensor<2x4x16x64xbf16>, tensor<2x4x64x16xbf16>) -> (tensor<2x64x4x16xbf16>, tensor<2x4x64xf32>) {
    ^bb0(%s: tensor<2x4x64x64xbf16>, %a: tensor<bf16>, %c: tensor<1x1x64x64xi1>, %n: tensor<bf16>):
      %0 = graph.mul %s, %a : tensor<2x4x64x64xbf16>, tensor<bf16> -> tensor<2x4x64x64xbf16>
      %1 = graph.where %c, %n, %0 : tensor<1x1x64x64xi1>, tensor<bf16>, tensor<2x4x64x64xbf16> -> tensor<2x4x64x64xbf16>
      graph.yield %1 : tensor<2x4x64x64xbf16>
    }
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$q, Graph_FloatTensor:$kt, Graph_FloatTensor:$v,
                   Optional<Graph_FloatTensor>:$q_bias, Optional<Graph_FloatTensor>:$kt_bias,
                   Optional<Graph_FloatTensor>:$v_bias,
                   Variadic<Graph_Tensor>:$inputs,
                   OptionalAttr<DenseI64ArrayAttr>:$out_perm, UnitAttr:$causal,
                   OptionalAttr<F64Attr>:$dropout_ratio,
                   OptionalAttr<I64Attr>:$dropout_seed);
  let results = (outs Graph_FloatTensor:$out, Graph_FloatTensor:$lse);
  let regions = (region SizedRegion<1>:$prologue);
  let assemblyFormat = [{
    $q `,` $kt `,` $v (`q_bias` `(` $q_bias^ `:` type($q_bias) `)`)?
    (`kt_bias` `(` $kt_bias^ `:` type($kt_bias) `)`)?
    (`v_bias` `(` $v_bias^ `:` type($v_bias) `)`)?
    (`prologue` `(` $inputs^ `:` type($inputs) `)`)? attr-dict `:`
    `(` type($q) `,` type($kt) `,` type($v) `)` `->` `(` type($out) `,` type($lse) `)` $prologue
  }];
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The type of the scores the prologue computes on: [B, H, Tq, Tk].
    ::mlir::RankedTensorType getScoresType();
  }];
}

def Graph_FusedAttentionGradOp : Graph_Op<"fused_attention_grad",
    [Pure, IsolatedFromAbove, AttrSizedOperandSegments]> {
  let summary = "the gradients of a graph.fused_attention's q, kt and v";
  let description = [{
    From the forward op's operands, its `out` (stored by `out_perm`) and
    `lse`, and `grad`, the gradient of `out` (`[B, H, Tq, D]`, not
    transposed): the gradients of `q`, `kt` and `v`, each of its operand's
    shape stored transposed by `grad_q_perm`, `grad_kt_perm` and
    `grad_v_perm`. The probabilities are recomputed from `lse` with the
    `prologue` region (the forward op's body, reading `prologue_inputs`);
    their softmax gradient, rounded to the element type as
    `graph.softmax_grad` stores it, goes through the `epilogue` region as a
    `graph.fused_softmax_grad` body (its first argument that gradient, the
    others `epilogue_inputs`), which yields the gradient of the scores
    `q kt`. `delta` is scratch: each row's sum of `grad * out` (f32
    `[B, H, Tq]`), the softmax gradient's dot product. `causal`: as the
    forward op's, and the gradient of a masked score enters the epilogue
    as `+0`, which the epilogue keeps zero, so the kernels skip the tiles
    above the diagonal. `dropout_ratio` and
    `dropout_seed`: the forward op's dropout, whose mask drops the
    probabilities `grad_v` is computed from and the gradient of the dropped
    probabilities (`grad v^T`), as the dropout op of the gradient does.
    `q_bias`, `kt_bias` and `v_bias`: as the forward op's (q, kt and v are
    the sums). For heads of at most 64 (`walksScoresOnce`) the CUDA
    kernels walk the scores once, adding `grad_q` into a float accumulator
    in the runtime's kernel scratch; else `grad_q`'s kernel computes the
    products it needs apart from `grad_kt` and `grad_v`'s.
  }];
  let arguments = (ins Graph_FloatTensor:$q, Graph_FloatTensor:$kt, Graph_FloatTensor:$v,
                   Graph_FloatTensor:$out, Graph_FloatTensor:$lse, Graph_FloatTensor:$grad,
                   Optional<Graph_FloatTensor>:$q_bias, Optional<Graph_FloatTensor>:$kt_bias,
                   Optional<Graph_FloatTensor>:$v_bias,
                   Variadic<Graph_Tensor>:$prologue_inputs,
                   Variadic<Graph_Tensor>:$epilogue_inputs,
                   OptionalAttr<DenseI64ArrayAttr>:$out_perm,
                   OptionalAttr<DenseI64ArrayAttr>:$grad_q_perm,
                   OptionalAttr<DenseI64ArrayAttr>:$grad_kt_perm,
                   OptionalAttr<DenseI64ArrayAttr>:$grad_v_perm, UnitAttr:$causal,
                   OptionalAttr<F64Attr>:$dropout_ratio,
                   OptionalAttr<I64Attr>:$dropout_seed);
  let results = (outs Graph_FloatTensor:$grad_q, Graph_FloatTensor:$grad_kt,
                      Graph_FloatTensor:$grad_v, Graph_FloatTensor:$delta);
  let regions = (region SizedRegion<1>:$prologue, SizedRegion<1>:$epilogue);
  let extraClassDeclaration = [{
    /// The type of the scores the prologue and epilogue compute on:
    /// [B, H, Tq, Tk].
    ::mlir::RankedTensorType getScoresType();
    /// Whether its kernels walk the scores once (heads of at most 64):
    /// dk and dv with each key block's share of dq added atomically into a
    /// float accumulator, 5 products per tile pair; else twice, dq's
    /// kernel apart from dk and dv's, 7 (zeroc_rt_cuda/attention.h,
    /// kAttnOneWalkMaxDim; docs/CudaTarget.md, "Attention in one kernel").
    bool walksScoresOnce();
  }];
  let assemblyFormat = [{
    $q `,` $kt `,` $v `,` $out `,` $lse `,` $grad
    (`q_bias` `(` $q_bias^ `:` type($q_bias) `)`)?
    (`kt_bias` `(` $kt_bias^ `:` type($kt_bias) `)`)?
    (`v_bias` `(` $v_bias^ `:` type($v_bias) `)`)?
    `prologue` `(` ($prologue_inputs^ `:` type($prologue_inputs))? `)`
    `epilogue` `(` ($epilogue_inputs^ `:` type($epilogue_inputs))? `)` attr-dict `:`
    `(` type($q) `,` type($kt) `,` type($v) `,` type($out) `,` type($lse) `,` type($grad) `)`
    `->` `(` type($grad_q) `,` type($grad_kt) `,` type($grad_v) `,` type($delta) `)`
    $prologue $epilogue
  }];
  let hasRegionVerifier = 1;
}

def Graph_YieldOp : Graph_Op<"yield",
    [Pure, Terminator,
     ParentOneOf<["FusedElementwiseOp", "FusedSoftmaxOp", "FusedSoftmaxGradOp",
                 "FusedAttentionOp", "FusedAttentionGradOp"]>]> {
  let summary = "the results of a fused op's body";
  let arguments = (ins Variadic<Graph_FloatTensor>:$values);
  let assemblyFormat = "$values attr-dict `:` type($values)";
}

def Graph_FusedSoftmaxCrossEntropyOp : Graph_Op<"fused_softmax_cross_entropy",
    [Pure, AllTypesMatch<["scores", "grad_scores"]>, AllTypesMatch<["grad", "loss"]>]> {
  let summary = "a softmax cross-entropy loss and its gradient in one pass over the scores";
  let description = [{
    `graph.softmax_cross_entropy_loss` of `scores` against `labels` and its
    `graph.softmax_cross_entropy_loss_grad` for the loss's gradient `grad`,
    computed together (zero-fuse-cross-entropy): each row's max and sum of
    exponentials are computed once, the loss and the row's gradient from
    them, with the two ops' arithmetic, so the results have their bits.

    ```mlir
    %l, %gs = graph.fused_softmax_cross_entropy %s, %t, %g {reduction = "mean"} : tensor<16x61xf32>, tensor<16xi64>, tensor<f32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$scores, Graph_IndexTensor:$labels,
                   Graph_FloatTensor:$grad, StrAttr:$reduction,
                   OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Graph_FloatTensor:$loss, Graph_FloatTensor:$grad_scores);
  let assemblyFormat = [{
    $scores `,` $labels `,` $grad attr-dict `:` type($scores) `,` type($labels) `,` type($grad)
  }];
  let hasVerifier = 1;
}

def Graph_FusedLayerNormGradAddOp : Graph_Op<"fused_layer_norm_grad_add",
    [Pure, AllTypesMatch<["input", "grad", "addend", "sum"]>,
     AllTypesMatch<["scale", "grad_scale", "grad_bias"]>]> {
  let summary = "a layer norm's gradient added to another gradient as it is written";
  let description = [{
    `graph.layer_norm_grad` of `input`, `scale` and `grad`, whose input
    gradient `graph.add` adds to `addend` (a residual connection's other
    gradient): `sum` is `addend + grad_input` (zero-fuse-layer-norm-grad-add).
    The input gradient is rounded to its element type as the layer norm
    gradient stores it, then added as the add computes it, so `sum` has
    the two ops' bits; the input gradient itself is never stored.

    ```mlir
    %sum, %gs, %gb = graph.fused_layer_norm_grad_add %x, %s, %gy, %r {axis = 1 : i64, epsilon = 1.0e-05 : f64} : tensor<2x4xf32>, tensor<4xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$scale,
                   Graph_FloatTensor:$grad, Graph_FloatTensor:$addend, I64Attr:$axis,
                   F64Attr:$epsilon);
  let results = (outs Graph_FloatTensor:$sum, Graph_FloatTensor:$grad_scale,
                 Graph_FloatTensor:$grad_bias);
  let assemblyFormat = [{
    $input `,` $scale `,` $grad `,` $addend attr-dict `:` type($input) `,` type($scale)
  }];
}

def Graph_FusedGemmBiasGradOp : Graph_Op<"fused_gemm_bias_grad",
    [Pure, AllElementTypesMatch<["a", "b", "result", "bias_grad"]>]> {
  let summary = "a weight gradient's GEMM that also sums its bias gradient";
  let description = [{
    `result` is `op(a) * op(b)`, as `graph.gemm` computes it with alpha 1
    and no `c`. `bias_grad` is the sum down the columns of one operand, the
    one `summed` names (0: `a`, 1: `b`), as `graph.sum_to` computes it.
    That operand is stored [K, L], K being the product's inner dimension:
    `a` read transposed (`transA`), or `b` read as stored (no `transB`).
    `bias_grad` has L elements, in shape [L] or [1, ..., 1, L].

    A linear layer's backward pass computes its weight gradient from its
    output gradient, and sums the same output gradient into its bias
    gradient (zero-fold-gemm-bias-grad makes the two one op). The CUDA
    runtime sums the operand in the GEMM's epilogue, where cuBLASLt has one
    for the shapes, so the output gradient is read once
    (docs/CudaTarget.md, "Bias gradients in the GEMM").

    ```mlir
    %gw, %gb = graph.fused_gemm_bias_grad %gy, %x {transA = true, summed = 0 : i64} : (tensor<8x3xf32>, tensor<8x5xf32>) -> (tensor<3x5xf32>, tensor<3xf32>)
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$a, Graph_FloatTensor:$b,
                   DefaultValuedAttr<BoolAttr, "false">:$transA,
                   DefaultValuedAttr<BoolAttr, "false">:$transB, I64Attr:$summed);
  let results = (outs Graph_FloatTensor:$result, Graph_FloatTensor:$bias_grad);
  let assemblyFormat = [{
    $a `,` $b attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // ZEROC_DIALECT_GRAPH_GRAPHFUSEDOPS_TD
