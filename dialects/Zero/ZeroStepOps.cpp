//===- ZeroStepOps.cpp - verifiers of the optimizer step's ops ------------===//
#include "ParamLookup.h"
#include "zeroc/Dialect/Zero/BufferPlanning.h"
#include "zeroc/Dialect/Zero/ZeroOps.h"
#include "llvm/ADT/DenseSet.h"

#include <cmath>

using namespace mlir;
using namespace zeroc::zero;

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

LogicalResult SgdAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                              APFloat, APFloat momentum, APFloat dampening, APFloat,
                              bool nesterov) {
  if (nesterov && (momentum.convertToDouble() <= 0.0 ||
                   dampening.convertToDouble() != 0.0))
    return emitError() << "nesterov needs a positive momentum and zero dampening";
  return success();
}

//===----------------------------------------------------------------------===//
// Gradient reads and reductions
//===----------------------------------------------------------------------===//

/// Flat buffers and shards of gradients must hold gradients, and every
/// gradient floats.
static LogicalResult verifyGradOperands(Operation *op, ValueRange grads) {
  for (auto [i, g] : llvm::enumerate(grads)) {
    Type t = g.getType();
    if (auto flat = llvm::dyn_cast<FlatType>(t);
        flat && flat.getKind() != BufferKind::Grads)
      return op->emitOpError("operand ") << i << " must be a grads buffer";
    if (auto shard = llvm::dyn_cast<ShardType>(t);
        shard && shard.getKind() != BufferKind::Grads)
      return op->emitOpError("operand ") << i << " must be a grads shard";
    if (!llvm::isa<FloatType>(bufferElementType(t)))
      return op->emitOpError("operand ") << i << " must hold floating-point gradients";
  }
  return success();
}

LogicalResult HasOverflowOp::verify() { return verifyGradOperands(*this, getGrads()); }
LogicalResult SumSquaresOp::verify() { return verifyGradOperands(*this, getGrads()); }

LogicalResult ClipGradNormOp::verify() {
  double maxNorm = getMaxNorm().convertToDouble();
  if (!(maxNorm >= 0.0) || std::isinf(maxNorm))
    return emitOpError("max_norm must be finite and non-negative, got ") << maxNorm;
  return success();
}

LogicalResult
GradAccumulatorOp::verifySymbolUses(SymbolTableCollection &symbols) {
  auto param = lookupParam(*this, getParamAttr(), symbols, /*trainable=*/true);
  if (!param)
    return failure();
  Type t = getType();
  if (llvm::isa<RankedTensorType>(t)) {
    if (llvm::cast<RankedTensorType>(t).getShape() != param.getType().getShape())
      return emitOpError("full accumulator shape must match parameter type ")
             << param.getType();
    return success();
  }
  if (auto flat = llvm::dyn_cast<FlatType>(t);
      flat && (flat.getKind() != BufferKind::Grads ||
               flat.getSize() < param.getType().getNumElements()))
    return emitOpError("a flat accumulator must be a grads buffer of at least ")
           << param.getType().getNumElements() << " elements";
  if (auto shard = llvm::dyn_cast<ShardType>(t);
      shard && shard.getKind() != BufferKind::Grads)
    return emitOpError("a shard accumulator must be a grads shard");
  return success();
}

//===----------------------------------------------------------------------===//
// Updates
//===----------------------------------------------------------------------===//

/// The update's gradient must be the reduced accumulator of the parameter:
/// its full shape or a grads shard.
static LogicalResult verifyUpdate(Operation *op, FlatSymbolRefAttr ref,
                                  Type grad, SymbolTableCollection &symbols) {
  auto param = lookupParam(op, ref, symbols, /*trainable=*/true);
  if (!param)
    return failure();
  if (auto shard = llvm::dyn_cast<ShardType>(grad)) {
    if (shard.getKind() != BufferKind::Grads)
      return op->emitOpError("gradient must be a grads shard");
    return success();
  }
  if (llvm::cast<RankedTensorType>(grad).getShape() != param.getType().getShape())
    return op->emitOpError("gradient shape must match parameter type ")
           << param.getType();
  return success();
}

LogicalResult AdamUpdateOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyUpdate(*this, getParamAttr(), getGrad().getType(), symbols);
}

/// A multi-tensor update names at least one parameter, each once, with a
/// gradient each.
static LogicalResult verifyMultiUpdate(Operation *op, ArrayAttr params, size_t grads) {
  if (params.empty())
    return op->emitOpError("must update at least one parameter");
  if (params.size() != grads)
    return op->emitOpError("has ") << params.size() << " parameters but " << grads << " gradients";
  llvm::SmallDenseSet<Attribute> seen;
  for (Attribute p : params)
    if (!seen.insert(p).second)
      return op->emitOpError("updates ") << p << " twice";
  return success();
}

static LogicalResult verifyMultiUpdateUses(Operation *op, ArrayAttr params, ValueRange grads,
                                           SymbolTableCollection &symbols) {
  for (auto [ref, grad] : llvm::zip(params, grads))
    if (failed(verifyUpdate(op, llvm::cast<FlatSymbolRefAttr>(ref), grad.getType(), symbols)))
      return failure();
  return success();
}

LogicalResult AdamUpdateMultiOp::verify() {
  return verifyMultiUpdate(*this, getParams(), getGrads().size());
}

LogicalResult AdamUpdateMultiOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyMultiUpdateUses(*this, getParams(), getGrads(), symbols);
}

LogicalResult SgdUpdateMultiOp::verify() {
  return verifyMultiUpdate(*this, getParams(), getGrads().size());
}

LogicalResult SgdUpdateMultiOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyMultiUpdateUses(*this, getParams(), getGrads(), symbols);
}

LogicalResult SgdUpdateOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return verifyUpdate(*this, getParamAttr(), getGrad().getType(), symbols);
}

LogicalResult GatherReplicaOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return success(static_cast<bool>(
      lookupParamOfShard(*this, getParamAttr(), llvm::cast<ShardType>(getShard()),
                         "shard", symbols, /*trainable=*/true)));
}

LogicalResult ReplicaSliceOp::verifySymbolUses(SymbolTableCollection &symbols) {
  ShardType shard = getType();
  auto param = lookupParamOfShard(*this, getParamAttr(), shard, "result",
                                  symbols, /*trainable=*/true);
  if (!param)
    return failure();
  if (shard.getSize() > param.getType().getNumElements())
    return emitOpError("slice of ")
           << shard.getSize() << " elements is larger than parameter '"
           << getParam() << "' (" << param.getType().getNumElements()
           << " elements)";
  return success();
}

LogicalResult UnpackReplicaOp::verifySymbolUses(SymbolTableCollection &symbols) {
  if (getParams().empty())
    return emitOpError("must unpack at least one parameter");
  if (getOffsets().size() != getParams().size())
    return emitOpError("has ") << getOffsets().size() << " offsets for "
                               << getParams().size() << " parameters";
  llvm::SmallDenseSet<Attribute> seen;
  FlatType flat = getBuffer().getType();
  for (auto [ref, offsetAttr] : llvm::zip(getParams(), getOffsets())) {
    auto symbol = llvm::cast<FlatSymbolRefAttr>(ref);
    if (!seen.insert(symbol).second)
      return emitOpError("unpacks ") << symbol << " twice";
    auto param = lookupParam(*this, symbol, symbols, /*trainable=*/true);
    if (!param)
      return failure();
    if (flat.getKind() != BufferKind::Params ||
        flat.getElementType() != param.getType().getElementType())
      return emitOpError("buffer must hold params of element type ")
             << param.getType().getElementType();
    int64_t begin = llvm::cast<IntegerAttr>(offsetAttr).getInt();
    if (begin < 0)
      return emitOpError("offset of ") << symbol << " is negative: " << begin;
    int64_t end =
        begin + shardElements(param.getType().getNumElements(), flat.getWorld());
    if (end > flat.getShardSize())
      return emitOpError("shard range [")
             << begin << ", " << end << ") of " << symbol << " exceeds slice size "
             << flat.getShardSize();
  }
  return success();
}
