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
    needs that today). `buildGradients` is each op's reverse-mode rule;
    the rules live in dialects/Graph/GraphGradients.cpp.
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
    InterfaceMethod<
      /*desc=*/[{
        Builds the op's gradient rule at the builder's insertion point:
        given one gradient per result (null where no gradient flows), fills
        `operandGrads` with one value per operand, null where the operand is
        not differentiable or `needed[i]` is false. Fails (with a
        diagnostic) for ops that have no gradient.
      }],
      /*retTy=*/"::llvm::LogicalResult", /*methodName=*/"buildGradients",
      /*args=*/(ins "::mlir::OpBuilder &":$builder,
                   "::mlir::ValueRange":$resultGrads,
                   "::llvm::ArrayRef<bool>":$needed,
                   "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>,
  ];
}

#endif // ZEROC_DIALECT_GRAPH_GRAPHINTERFACES_TD
