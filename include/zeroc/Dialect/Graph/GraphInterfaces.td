//===- GraphInterfaces.td - graph dialect op interfaces ----*- tablegen -*-===//
//
// The gradient contract of the graph dialect. Every compute op of the forward
// graph implements DifferentiableOpInterface; the autodiff pass walks the graph
// in reverse and asks each op which operands carry a gradient.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_DIALECT_GRAPH_GRAPHINTERFACES_TD
#define ZEROC_DIALECT_GRAPH_GRAPHINTERFACES_TD

include "mlir/IR/OpBase.td"

def Graph_DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let description = [{
    An op of the forward graph through which reverse-mode autodiff can flow.
    By default an operand is differentiable exactly when its element type is a
    floating-point type: integer and boolean paths (embedding indices, masks,
    labels) never carry a gradient. Ops override this where a float operand is
    not differentiated (e.g. the `ratio` of dropout is an attribute, so no op
    needs that today).
  }];
  let cppNamespace = "::zeroc::graph";
  let methods = [
    InterfaceMethod<
      /*desc=*/"Returns true when operand `index` receives a gradient.",
      /*retTy=*/"bool", /*methodName=*/"isOperandDifferentiable",
      /*args=*/(ins "unsigned":$index), /*methodBody=*/"",
      /*defaultImplementation=*/[{
        auto type = ::llvm::dyn_cast<::mlir::ShapedType>(
            $_op->getOperand(index).getType());
        return type && ::llvm::isa<::mlir::FloatType>(type.getElementType());
      }]>,
  ];
}

#endif // ZEROC_DIALECT_GRAPH_GRAPHINTERFACES_TD
