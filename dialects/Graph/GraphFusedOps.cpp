//===- GraphFusedOps.cpp - graph.fused_elementwise --------------------------===//
//
// Which ops a fused elementwise kernel computes, and the verifier of the op
// that holds them (GraphFusedOps.td).
//
//===----------------------------------------------------------------------===//

#include "zeroc/Dialect/Graph/GraphOps.h"

using namespace mlir;
using namespace zeroc::graph;

namespace zeroc::graph {

bool isFusableElementwise(Operation *op) {
  // A select: an i1 condition, its values of the result's float type.
  if (auto where = llvm::dyn_cast<WhereOp>(op)) {
    Type element = where.getType().getElementType();
    return llvm::isa<FloatType>(element) &&
           where.getOnTrue().getType().getElementType() == element &&
           where.getOnFalse().getType().getElementType() == element;
  }
  if (!llvm::isa<NegOp, SqrtOp, ReciprocalOp, ReluOp, TanhOp, SigmoidOp, ErfOp,
                 ExpOp, LogOp, CosOp, SinOp, AbsOp, SignOp, FloorOp, CeilOp,
                 RoundOp, AddOp, SubOp, MulOp, DivOp, MaxOp, MinOp, GeluOp,
                 UnaryGradOp, DropoutOp>(op) ||
      op->getNumResults() != 1)
    return false;
  if (auto dropout = llvm::dyn_cast<DropoutOp>(op); dropout && !dropout.getTraining())
    return false;
  Type element = llvm::cast<ShapedType>(op->getResult(0).getType()).getElementType();
  if (!llvm::isa<FloatType>(element))
    return false;
  return llvm::all_of(op->getOperandTypes(), [&](Type t) {
    return llvm::cast<ShapedType>(t).getElementType() == element;
  });
}

} // namespace zeroc::graph

OperandRange FusedElementwiseOp::getYielded() {
  return llvm::cast<YieldOp>(getBody().front().getTerminator()).getValues();
}

LogicalResult FusedElementwiseOp::verifyRegions() {
  Block &body = getBody().front();
  if (getNumResults() == 0)
    return emitOpError("has no results");
  RankedTensorType type = getResultType();
  for (Type t : getResultTypes())
    if (t != type)
      return emitOpError("results have types ") << type << " and " << t
                                                << "; all must have one type";
  if (body.getNumArguments() != getInputs().size())
    return emitOpError("has ") << getInputs().size() << " inputs but its body "
                               << body.getNumArguments() << " arguments";
  for (auto [i, input, arg] : llvm::enumerate(getInputs(), body.getArguments())) {
    if (input.getType() != arg.getType())
      return emitOpError("body argument ")
             << i << " has type " << arg.getType() << ", its input "
             << input.getType();
    auto t = llvm::cast<RankedTensorType>(arg.getType());
    FailureOr<SmallVector<int64_t>> shape = broadcastShapes(t.getShape(), type.getShape());
    const bool elementOk = t.getElementType() == type.getElementType() ||
                           t.getElementType().isInteger(1);
    if (!elementOk || failed(shape) || ArrayRef<int64_t>(*shape) != type.getShape())
      return emitOpError("input ") << i << " of type " << t
                                   << " does not broadcast to the result type "
                                   << type;
  }
  auto yield = llvm::dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError("body must end in graph.yield");
  if (yield.getValues().size() != getNumResults())
    return emitOpError("yields ") << yield.getValues().size() << " values but has "
                                  << getNumResults() << " results";
  for (auto [i, v] : llvm::enumerate(yield.getValues()))
    if (v.getType() != type)
      return emitOpError("yields value ")
             << i << " of type " << v.getType() << ", not the result type " << type;
  for (Operation &op : body.without_terminator()) {
    if (!isFusableElementwise(&op))
      return emitOpError("body holds '")
                 .append(op.getName().getStringRef(),
                         "', which is no fusable elementwise op")
                 .attachNote(op.getLoc())
             << "here";
    if (op.getResult(0).getType() != type)
      return emitOpError("body op '")
                 .append(op.getName().getStringRef(), "' has type ")
             << op.getResult(0).getType() << ", not the result type " << type;
  }
  return success();
}
