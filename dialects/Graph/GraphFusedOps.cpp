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

namespace {

/// Verifies a fused op's body, which computes values of `type` one element
/// at a time: its arguments are `leading` values of `type` and then one per
/// input (of the input's type, which broadcasts to `type`, of its element
/// type or i1 for a where's condition), it holds only fusable elementwise
/// ops of `type`, and it yields `numYields` values of `type`.
LogicalResult verifyElementwiseBody(Operation *op, Block &body, unsigned leading,
                                    ValueRange inputs, RankedTensorType type,
                                    unsigned numYields) {
  if (body.getNumArguments() != leading + inputs.size()) {
    if (leading)
      return op->emitOpError("body has ")
             << body.getNumArguments() << " arguments; expected "
             << leading + inputs.size() << " (the gradient, then one per input)";
    return op->emitOpError("has ") << inputs.size() << " inputs but its body "
                                   << body.getNumArguments() << " arguments";
  }
  for (BlockArgument arg : body.getArguments().take_front(leading))
    if (arg.getType() != type)
      return op->emitOpError("body argument ")
             << arg.getArgNumber() << " has type " << arg.getType()
             << ", not the result type " << type;
  for (auto [i, input, arg] :
       llvm::enumerate(inputs, body.getArguments().drop_front(leading))) {
    if (input.getType() != arg.getType())
      return op->emitOpError("body argument ")
             << arg.getArgNumber() << " has type " << arg.getType() << ", its input "
             << input.getType();
    auto t = llvm::cast<RankedTensorType>(arg.getType());
    FailureOr<SmallVector<int64_t>> shape = broadcastShapes(t.getShape(), type.getShape());
    const bool elementOk = t.getElementType() == type.getElementType() ||
                           t.getElementType().isInteger(1);
    if (!elementOk || failed(shape) || ArrayRef<int64_t>(*shape) != type.getShape())
      return op->emitOpError("input ") << i << " of type " << t
                                       << " does not broadcast to the result type "
                                       << type;
  }
  auto yield = llvm::dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return op->emitOpError("body must end in graph.yield");
  if (yield.getValues().size() != numYields)
    return op->emitOpError("yields ")
           << yield.getValues().size() << " values but has " << numYields
           << (numYields == 1 ? " result" : " results");
  for (auto [i, v] : llvm::enumerate(yield.getValues()))
    if (v.getType() != type)
      return op->emitOpError("yields value ")
             << i << " of type " << v.getType() << ", not the result type " << type;
  for (Operation &inner : body.without_terminator()) {
    if (!isFusableElementwise(&inner))
      return op->emitOpError("body holds '")
                 .append(inner.getName().getStringRef(),
                         "', which is no fusable elementwise op")
                 .attachNote(inner.getLoc())
             << "here";
    if (inner.getResult(0).getType() != type)
      return op->emitOpError("body op '")
                 .append(inner.getName().getStringRef(), "' has type ")
             << inner.getResult(0).getType() << ", not the result type " << type;
  }
  return success();
}

} // namespace

bool zeroc::graph::isInFusedBody(Operation *op) {
  return llvm::isa_and_nonnull<FusedElementwiseOp, FusedSoftmaxOp, FusedSoftmaxGradOp>(
      op->getParentOp());
}

LogicalResult FusedElementwiseOp::verifyRegions() {
  if (getNumResults() == 0)
    return emitOpError("has no results");
  RankedTensorType type = getResultType();
  for (Type t : getResultTypes())
    if (t != type)
      return emitOpError("results have types ") << type << " and " << t
                                                << "; all must have one type";
  return verifyElementwiseBody(*this, getBody().front(), 0, getInputs(), type,
                               getNumResults());
}

LogicalResult FusedSoftmaxOp::verifyRegions() {
  auto type = llvm::cast<RankedTensorType>(getType());
  if (failed(verifyAxis(*this, getAxis(), type.getRank())))
    return failure();
  return verifyElementwiseBody(*this, getBody().front(), 0, getInputs(), type, 1);
}

LogicalResult FusedSoftmaxGradOp::verifyRegions() {
  auto type = llvm::cast<RankedTensorType>(getType());
  if (failed(verifyAxis(*this, getAxis(), type.getRank())))
    return failure();
  return verifyElementwiseBody(*this, getBody().front(), 1, getInputs(), type, 1);
}
