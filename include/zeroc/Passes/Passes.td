//===- Passes.td - zeroc pass definitions ------------------*- tablegen -*-===//
#ifndef ZEROC_PASSES_PASSES_TD
#define ZEROC_PASSES_PASSES_TD

include "mlir/Pass/PassBase.td"

def VerifyImportedGraph : Pass<"zero-verify-imported-graph", "::mlir::ModuleOp"> {
  let summary = "checks the contract of an imported forward graph";
  let description = [{
    The phase-boundary verifier after ONNX import. It checks what every later
    pass relies on:

    * the module has exactly one `func.func @forward`;
    * every value in it (arguments, op results) is a statically shaped ranked
      tensor;
    * exactly one result carries `graph.loss`, and it is a floating-point
      scalar (`tensor<f32>` and friends);
    * every op in @forward belongs to the `graph` dialect or is `func.return`.

    Example of IR it rejects:

    ```mlir
    func.func @forward(%x: tensor<?x4xf32>) -> (tensor<f32> {graph.loss}) {
      ...
    }
    // error: 'func.func' op argument 0 must be a statically shaped tensor, got tensor<?x4xf32>
    ```
  }];
  let dependentDialects = ["::zeroc::graph::GraphDialect"];
  let options = [
    Option<"requireLoss", "require-loss", "bool", /*default=*/"true",
           "Require exactly one graph.loss result (off for inference graphs)">,
  ];
}

#endif // ZEROC_PASSES_PASSES_TD
