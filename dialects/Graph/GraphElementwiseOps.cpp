//===- GraphElementwiseOps.cpp - verifiers and types of mask/math ops -----===//
//
// Verifiers and inferReturnTypes of the ops in GraphElementwiseOps.td.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Dialect/Graph/GraphOps.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>

using namespace mlir;
using namespace zeroc::graph;

namespace {

/// The broadcast of two operands' shapes with `element` as element type.
LogicalResult inferBroadcastPair(std::optional<Location> loc, StringRef opName,
                                 ValueRange operands, Type element,
                                 SmallVectorImpl<Type> &results) {
  auto lhs = llvm::dyn_cast<RankedTensorType>(operands[0].getType());
  auto rhs = llvm::dyn_cast<RankedTensorType>(operands[1].getType());
  if (!lhs || !rhs)
    return emitOptionalError(loc, "'", opName,
                             "' op operands must be ranked tensors");
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(lhs.getShape(), rhs.getShape());
  if (failed(shape))
    return emitOptionalError(loc, "'", opName, "' op operand shapes ", lhs,
                             " and ", rhs, " are not broadcast-compatible");
  results.push_back(RankedTensorType::get(*shape, element));
  return success();
}

LogicalResult verifyMaskShape(Operation *op, Value input, Value result) {
  if (llvm::cast<RankedTensorType>(input.getType()).getShape() !=
      llvm::cast<RankedTensorType>(result.getType()).getShape())
    return op->emitOpError("result shape must equal input shape");
  return success();
}

LogicalResult verifyBounds(Operation *op, std::optional<APFloat> min,
                           std::optional<APFloat> max) {
  if ((min && min->isNaN()) || (max && max->isNaN()))
    return op->emitOpError("bounds must not be NaN");
  return success();
}

} // namespace

LogicalResult GeluOp::verify() {
  if (getApproximate() != "none" && getApproximate() != "tanh")
    return emitOpError("approximate must be \"none\" or \"tanh\", got \"")
           << getApproximate() << "\"";
  return success();
}

LogicalResult CompareOp::verify() {
  if (!llvm::StringSwitch<bool>(getPredicate())
           .Cases("lt", "le", "gt", "ge", true)
           .Default(false))
    return emitOpError("predicate must be one of lt, le, gt, ge, got \"")
           << getPredicate() << "\"";
  Type e = getLhs().getType().getElementType();
  if (!llvm::isa<FloatType>(e) && !e.isInteger(32) && !e.isInteger(64))
    return emitOpError("operands must be float, i32 or i64 tensors, got ") << e;
  return success();
}

LogicalResult CompareOp::inferReturnTypes(MLIRContext *ctx,
                                          std::optional<Location> loc,
                                          ValueRange operands, DictionaryAttr,
                                          OpaqueProperties, RegionRange,
                                          SmallVectorImpl<Type> &results) {
  return inferBroadcastPair(loc, getOperationName(), operands,
                            IntegerType::get(ctx, 1), results);
}

LogicalResult LogicalOp::verify() {
  if (getOp() != "and" && getOp() != "or" && getOp() != "xor")
    return emitOpError("op must be one of and, or, xor, got \"")
           << getOp() << "\"";
  return success();
}

LogicalResult LogicalOp::inferReturnTypes(MLIRContext *ctx,
                                          std::optional<Location> loc,
                                          ValueRange operands, DictionaryAttr,
                                          OpaqueProperties, RegionRange,
                                          SmallVectorImpl<Type> &results) {
  return inferBroadcastPair(loc, getOperationName(), operands,
                            IntegerType::get(ctx, 1), results);
}

LogicalResult IsNaNOp::verify() {
  return verifyMaskShape(*this, getInput(), getResult());
}

LogicalResult IsInfOp::verify() {
  if (!getDetectPositive() && !getDetectNegative())
    return emitOpError("detects nothing: detect_positive or detect_negative "
                       "must be set");
  return verifyMaskShape(*this, getInput(), getResult());
}

LogicalResult ClipOp::verify() {
  return verifyBounds(*this, getMin(), getMax());
}

LogicalResult ClipGradOp::verify() {
  return verifyBounds(*this, getMin(), getMax());
}
