//===- GraphFusedOps.td - elementwise chains as one op -----*- tablegen -*-===//
//
// The ops a fusion pass makes: a chain of elementwise ops that one kernel
// computes element by element (zero-fuse-elementwise, docs/CudaTarget.md).
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

def Graph_YieldOp : Graph_Op<"yield",
    [Pure, Terminator, HasParent<"FusedElementwiseOp">]> {
  let summary = "the results of a graph.fused_elementwise";
  let arguments = (ins Variadic<Graph_FloatTensor>:$values);
  let assemblyFormat = "$values attr-dict `:` type($values)";
}

#endif // ZEROC_DIALECT_GRAPH_GRAPHFUSEDOPS_TD
