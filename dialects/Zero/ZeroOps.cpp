//===- ZeroOps.cpp - zero dialect op verifiers ----------------------------===//
#include "zeroc/Dialect/Zero/ZeroOps.h"
#include "zeroc/Dialect/Graph/GraphOps.h"
#include "ParamLookup.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace zeroc::zero;

#define GET_OP_CLASSES
#include "zeroc/Dialect/Zero/ZeroOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Shared verification helpers
//===----------------------------------------------------------------------===//

/// The end of the element range `[begin, begin + numel)`, saturated so that
/// absurd offsets in the input cannot overflow. `begin` and `numel` are
/// non-negative.
static int64_t rangeEnd(int64_t begin, int64_t numel) {
  if (begin > std::numeric_limits<int64_t>::max() - numel)
    return std::numeric_limits<int64_t>::max();
  return begin + numel;
}

/// Checks that `shard` is one rank's slice of `flat`: same kind and element
/// type, and `world` shards make up the flat buffer.
static LogicalResult verifyShardOfFlat(Operation *op, ShardType shard,
                                       FlatType flat) {
  if (shard.getKind() != flat.getKind())
    return op->emitOpError("shard kind '")
           << stringifyBufferKind(shard.getKind())
           << "' does not match flat buffer kind '"
           << stringifyBufferKind(flat.getKind()) << "'";
  if (shard.getElementType() != flat.getElementType())
    return op->emitOpError("shard element type ")
           << shard.getElementType()
           << " does not match flat buffer element type "
           << flat.getElementType();
  if (shard.getSize() != flat.getShardSize())
    return op->emitOpError("shard size ")
           << shard.getSize() << " is not the flat buffer size "
           << flat.getSize() << " divided by the world size "
           << flat.getWorld();
  return success();
}

/// Checks that `shard`, playing `role` in `op`, lives in `space`.
static LogicalResult verifySpace(Operation *op, ShardType shard,
                                 MemorySpace space, StringRef role) {
  if (shard.getSpace() != space)
    return op->emitOpError(role)
           << " shard must be in " << stringifyMemorySpace(space)
           << " memory";
  return success();
}

/// Checks a reduction over values of `elementType` with an optional extra
/// `scale` factor.
static LogicalResult verifyReduction(Operation *op, ReduceKind reduction,
                                     Type elementType,
                                     std::optional<APFloat> scale) {
  if (scale) {
    double value = scale->convertToDouble();
    if (!std::isfinite(value) || value <= 0.0)
      return op->emitOpError("scale must be a positive finite number, got ")
             << value;
    if (reduction == ReduceKind::Max)
      return op->emitOpError("scale requires a sum or avg reduction");
  }
  if (elementType.isInteger(1) && reduction != ReduceKind::Max)
    return op->emitOpError("i1 values must be reduced with max");
  if (reduction == ReduceKind::Avg && !llvm::isa<FloatType>(elementType))
    return op->emitOpError(
               "avg reduction requires a floating-point element type, got ")
           << elementType;
  return success();
}

/// Type rules of zero.all_gather and zero.all_gather_start.
static LogicalResult verifyGatherTypes(Operation *op, ShardType shard,
                                       FlatType flat) {
  if (failed(verifySpace(op, shard, MemorySpace::Device, "gathered")))
    return failure();
  return verifyShardOfFlat(op, shard, flat);
}

/// Type and attribute rules of zero.reduce_scatter and its start form.
static LogicalResult verifyScatterTypes(Operation *op, FlatType flat,
                                        ShardType shard, ReduceKind reduction,
                                        std::optional<APFloat> scale) {
  if (reduction == ReduceKind::Max)
    return op->emitOpError("reduce_scatter supports sum and avg");
  if (failed(verifyReduction(op, reduction, flat.getElementType(), scale)) ||
      failed(verifySpace(op, shard, MemorySpace::Device, "scattered")))
    return failure();
  return verifyShardOfFlat(op, shard, flat);
}

/// Type and attribute rules of zero.all_reduce and its start form. The ODS
/// constraints already restrict `type` to a flat buffer or a static tensor.
static LogicalResult verifyAllReduceTypes(Operation *op, Type type,
                                          ReduceKind reduction,
                                          std::optional<APFloat> scale) {
  Type elementType;
  if (auto flat = llvm::dyn_cast<FlatType>(type))
    elementType = flat.getElementType();
  else
    elementType = llvm::cast<ShapedType>(type).getElementType();
  return verifyReduction(op, reduction, elementType, scale);
}

/// Checks that the token produced by a start op has exactly one use, a
/// zero.wait.
static LogicalResult verifyWaitedOnce(Operation *op, Value token) {
  if (!token.hasOneUse() || !llvm::isa<WaitOp>(*token.getUsers().begin()))
    return op->emitOpError("token must be waited exactly once");
  return success();
}


//===----------------------------------------------------------------------===//
// Packing and partitioning
//===----------------------------------------------------------------------===//

namespace {
/// The element range `[begin, end)` that operand `input` of a packing op
/// fills.
struct InputRange {
  int64_t begin, end;
  unsigned input;
};
} // namespace

/// Checks the ranges of a packing op's inputs (`noun`: "range" or "shard
/// range"): each ends at most at `limit` (described by `limitName`) and no
/// two overlap, whatever the operand order.
static LogicalResult verifyInputRanges(Operation *op,
                                       SmallVectorImpl<InputRange> &ranges,
                                       StringRef noun, int64_t limit,
                                       StringRef limitName) {
  for (const InputRange &r : ranges)
    if (r.end > limit)
      return op->emitOpError("input #")
             << r.input << " " << noun << " [" << r.begin << ", " << r.end
             << ") exceeds " << limitName << " " << limit;
  llvm::sort(ranges, [](const InputRange &a, const InputRange &b) {
    return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
  });
  for (auto [prev, next] : llvm::zip(ranges, llvm::drop_begin(ranges))) {
    // Empty ranges hold nothing and cannot overlap.
    if (prev.begin == prev.end || next.begin == next.end ||
        next.begin >= prev.end)
      continue;
    const InputRange &first = prev.input < next.input ? prev : next;
    const InputRange &second = prev.input < next.input ? next : prev;
    return op->emitOpError("input #")
           << first.input << " " << noun << " [" << first.begin << ", "
           << first.end << ") overlaps input #" << second.input << " " << noun
           << " [" << second.begin << ", " << second.end << ")";
  }
  return success();
}

/// The ranges of a packing op's tensor inputs, each input's offset from
/// `offsets` and its length from `length(type)`; fails on a missing or
/// negative offset or an element type other than `elementType`.
static LogicalResult
collectInputRanges(Operation *op, ValueRange inputs, ArrayAttr offsets,
                   Type elementType,
                   function_ref<int64_t(RankedTensorType)> length,
                   SmallVectorImpl<InputRange> &ranges) {
  if (offsets.size() != inputs.size())
    return op->emitOpError("expected ")
           << inputs.size() << " offsets, one per input, got "
           << offsets.size();
  for (auto [index, input, offsetAttr] : llvm::enumerate(inputs, offsets)) {
    auto type = llvm::cast<RankedTensorType>(input.getType());
    int64_t begin = llvm::cast<IntegerAttr>(offsetAttr).getInt();
    if (begin < 0)
      return op->emitOpError("input #")
             << index << " offset must be non-negative, got " << begin;
    if (type.getElementType() != elementType)
      return op->emitOpError("input #")
             << index << " element type " << type.getElementType()
             << " does not match buffer element type " << elementType;
    ranges.push_back(
        {begin, rangeEnd(begin, length(type)), static_cast<unsigned>(index)});
  }
  return success();
}

LogicalResult PackOp::verify() {
  FlatType flat = getResult().getType();
  SmallVector<InputRange> ranges;
  if (failed(collectInputRanges(
          *this, getInputs(), getOffsets(), flat.getElementType(),
          [](RankedTensorType t) { return t.getNumElements(); }, ranges)))
    return failure();
  return verifyInputRanges(*this, ranges, "range", flat.getSize(),
                           "buffer size");
}

LogicalResult ViewOp::verify() {
  FlatType flat = getBuffer().getType();
  RankedTensorType type = getResult().getType();
  if (type.getElementType() != flat.getElementType())
    return emitOpError("result element type ")
           << type.getElementType() << " does not match buffer element type "
           << flat.getElementType();
  int64_t begin = getOffset();
  int64_t end = rangeEnd(begin, type.getNumElements());
  if (end > flat.getSize())
    return emitOpError("range [")
           << begin << ", " << end << ") exceeds buffer size "
           << flat.getSize();
  return success();
}


//===----------------------------------------------------------------------===//
// Buckets
//===----------------------------------------------------------------------===//

LogicalResult PackShardsOp::verify() {
  FlatType flat = getResult().getType();
  int64_t world = flat.getWorld();
  SmallVector<InputRange> ranges;
  if (failed(collectInputRanges(
          *this, getInputs(), getOffsets(), flat.getElementType(),
          [&](RankedTensorType t) {
            return shardElements(t.getNumElements(), world);
          },
          ranges)))
    return failure();
  return verifyInputRanges(*this, ranges, "shard range", flat.getShardSize(),
                           "slice size");
}

LogicalResult ShardSliceOp::verify() {
  ShardType source = getShard().getType(), result = getResult().getType();
  if (source.getKind() != result.getKind() ||
      source.getElementType() != result.getElementType() ||
      source.getSpace() != result.getSpace())
    return emitOpError(
        "result shard must have the operand's kind, element type and memory "
        "space");
  int64_t begin = getOffset();
  int64_t end = rangeEnd(begin, result.getSize());
  if (end > source.getSize())
    return emitOpError("range [")
           << begin << ", " << end << ") exceeds shard size "
           << source.getSize();
  return success();
}

LogicalResult ConcatShardsOp::verify() {
  ShardType result = getResult().getType();
  int64_t total = 0;
  for (auto [index, input] : llvm::enumerate(getInputs())) {
    auto shard = llvm::cast<ShardType>(input.getType());
    if (shard.getKind() != result.getKind() ||
        shard.getElementType() != result.getElementType() ||
        shard.getSpace() != result.getSpace())
      return emitOpError("input #")
             << index
             << " must have the result's kind, element type and memory space";
    total = rangeEnd(total, shard.getSize());
  }
  if (total != result.getSize())
    return emitOpError("result size ")
           << result.getSize() << " is not the sum of the input sizes, "
           << total;
  return success();
}

LogicalResult UnpackShardsOp::verify() {
  FlatType flat = getBuffer().getType();
  if (getResults().empty())
    return emitOpError("must unpack at least one tensor");
  if (getOffsets().size() != getResults().size())
    return emitOpError("has ") << getOffsets().size() << " offsets for "
                               << getResults().size() << " results";
  for (auto [i, result, offsetAttr] : llvm::enumerate(getResults(), getOffsets())) {
    auto type = llvm::cast<RankedTensorType>(result.getType());
    if (type.getElementType() != flat.getElementType())
      return emitOpError("result ") << i << " element type " << type.getElementType()
                                    << " does not match buffer element type "
                                    << flat.getElementType();
    int64_t begin = llvm::cast<IntegerAttr>(offsetAttr).getInt();
    if (begin < 0)
      return emitOpError("offset ") << i << " is negative: " << begin;
    int64_t end =
        rangeEnd(begin, shardElements(type.getNumElements(), flat.getWorld()));
    if (end > flat.getShardSize())
      return emitOpError("result ") << i << " shard range [" << begin << ", " << end
                                    << ") exceeds slice size " << flat.getShardSize();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Synchronous collectives
//===----------------------------------------------------------------------===//

/// An in-place gather is one rank's: its shard is its whole buffer.
static LogicalResult verifyGatherInPlace(Operation *op, bool inPlace, FlatType flat) {
  if (inPlace && flat.getWorld() != 1)
    return op->emitOpError("in place needs a world of one rank, not ") << flat.getWorld();
  return success();
}

LogicalResult AllGatherOp::verify() {
  if (failed(verifyGatherTypes(*this, getShard().getType(), getResult().getType())))
    return failure();
  return verifyGatherInPlace(*this, getInPlace(), getResult().getType());
}

LogicalResult ReduceScatterOp::verify() {
  return verifyScatterTypes(*this, getBuffer().getType(),
                            getResult().getType(), getReduction(),
                            getScale());
}

LogicalResult AllReduceOp::verify() {
  return verifyAllReduceTypes(*this, getInput().getType(), getReduction(),
                              getScale());
}

//===----------------------------------------------------------------------===//
// Asynchronous collectives
//===----------------------------------------------------------------------===//

LogicalResult AllGatherStartOp::verify() {
  auto flat = llvm::cast<FlatType>(getToken().getType().getPayload());
  if (failed(verifyGatherTypes(*this, getShard().getType(), flat)) ||
      failed(verifyGatherInPlace(*this, getInPlace(), flat)))
    return failure();
  if (getCarry() && getCarried())
    return emitOpError("cannot be both a carry and carried");
  if (std::optional<int64_t> index = getCarryIndex(); index && *index < 0)
    return emitOpError("carry index must be >= 0, got ") << *index;
  if (getCarry()) {
    // Waited for by the next @train_micro_step (its carried start).
    if (!getToken().use_empty())
      return emitOpError("token of a carry must have no use here (the next "
                         "micro-step waits for it)");
    return success();
  }
  return verifyWaitedOnce(*this, getToken());
}

LogicalResult ReduceScatterStartOp::verify() {
  auto shard = llvm::cast<ShardType>(getToken().getType().getPayload());
  if (failed(verifyScatterTypes(*this, getBuffer().getType(), shard,
                                getReduction(), getScale())))
    return failure();
  return verifyWaitedOnce(*this, getToken());
}

LogicalResult AllReduceStartOp::verify() {
  Type payload = getToken().getType().getPayload();
  if (payload != getInput().getType())
    return emitOpError("token payload type ")
           << payload << " does not match input type "
           << getInput().getType();
  if (failed(verifyAllReduceTypes(*this, payload, getReduction(), getScale())))
    return failure();
  return verifyWaitedOnce(*this, getToken());
}

LogicalResult WaitOp::verify() {
  Type payload = getToken().getType().getPayload();
  if (getResult().getType() != payload)
    return emitOpError("result type ")
           << getResult().getType() << " does not match token payload type "
           << payload;
  return success();
}

//===----------------------------------------------------------------------===//
// Buffer lifetime
//===----------------------------------------------------------------------===//

/// Whether `value` is the result of a zero.all_gather, directly or through
/// the zero.wait of a zero.all_gather_start.
static bool isGathered(Value value) {
  if (value.getDefiningOp<AllGatherOp>())
    return true;
  auto wait = value.getDefiningOp<WaitOp>();
  return wait && wait.getToken().getDefiningOp<AllGatherStartOp>();
}

LogicalResult ReleaseOp::verify() {
  Value buffer = getBuffer();
  if (!isGathered(buffer))
    return emitOpError("released buffer must come from zero.all_gather");
  BufferKind kind = llvm::cast<FlatType>(buffer.getType()).getKind();
  if (kind != BufferKind::Params)
    return emitOpError("released buffer must hold params, got '")
           << stringifyBufferKind(kind) << "'";

  Block *block = (*this)->getBlock();
  for (Operation *user : buffer.getUsers()) {
    Operation *ancestor = block->findAncestorOpInBlock(*user);
    if (!ancestor || ancestor == getOperation() ||
        !getOperation()->isBeforeInBlock(ancestor))
      continue;
    InFlightDiagnostic diag =
        emitOpError("released buffer is used after the release");
    diag.attachNote(user->getLoc()) << "used here";
    return diag;
  }
  return success();
}



//===----------------------------------------------------------------------===//
// Persistent training state
//===----------------------------------------------------------------------===//

namespace zeroc::zero {
zeroc::graph::ParamOp lookupParam(Operation *op, FlatSymbolRefAttr ref,
                                  SymbolTableCollection &symbols,
                                  bool trainable) {
  auto param =
      symbols.lookupNearestSymbolFrom<zeroc::graph::ParamOp>(op, ref);
  if (!param) {
    op->emitOpError("'") << ref.getValue() << "' does not name a graph.param";
    return nullptr;
  }
  if (trainable && !param.getTrainable()) {
    op->emitOpError("'") << ref.getValue() << "' is not trainable";
    return nullptr;
  }
  return param;
}

zeroc::graph::ParamOp lookupParamOfShard(Operation *op, FlatSymbolRefAttr ref,
                                         ShardType shard, StringRef what,
                                         SymbolTableCollection &symbols,
                                         bool trainable) {
  auto param = lookupParam(op, ref, symbols, trainable);
  if (!param)
    return nullptr;
  Type elem = param.getType().getElementType();
  if (shard.getKind() != BufferKind::Params || shard.getElementType() != elem) {
    op->emitOpError() << what << " must be a params shard of element type " << elem;
    return nullptr;
  }
  return param;
}
} // namespace zeroc::zero

LogicalResult ParamReplicaOp::verifySymbolUses(SymbolTableCollection &symbols) {
  auto param = lookupParam(*this, getParamAttr(), symbols, /*trainable=*/false);
  if (!param)
    return failure();
  if (param.getType() != getType())
    return emitOpError("result type ")
           << getType() << " does not match parameter type " << param.getType();
  return success();
}

/// The graph.buffer `ref` names, or null after an error on `op`.
static zeroc::graph::BufferOp lookupBuffer(Operation *op, FlatSymbolRefAttr ref,
                                    Type type, SymbolTableCollection &symbols) {
  auto buffer = symbols.lookupNearestSymbolFrom<zeroc::graph::BufferOp>(op, ref);
  if (!buffer) {
    op->emitOpError("'") << ref.getValue() << "' does not name a graph.buffer";
    return {};
  }
  if (buffer.getType() != type) {
    op->emitOpError("type ") << type << " does not match buffer type "
                             << buffer.getType();
    return {};
  }
  return buffer;
}

LogicalResult BufferLoadOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return success(static_cast<bool>(
      lookupBuffer(*this, getBufferAttr(), getType(), symbols)));
}

LogicalResult BufferStoreOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return success(static_cast<bool>(
      lookupBuffer(*this, getBufferAttr(), getValue().getType(), symbols)));
}

LogicalResult ParamShardOp::verifySymbolUses(SymbolTableCollection &symbols) {
  return success(static_cast<bool>(lookupParamOfShard(
      *this, getParamAttr(), getType(), "result", symbols, /*trainable=*/false)));
}

LogicalResult
GradAccumulateRowsOp::verifySymbolUses(SymbolTableCollection &symbols) {
  auto param = lookupParam(*this, getParamAttr(), symbols, /*trainable=*/true);
  if (!param)
    return failure();
  auto rows = llvm::cast<RankedTensorType>(getRows().getType());
  auto indices = llvm::cast<RankedTensorType>(getIndices().getType());
  RankedTensorType p = param.getType();
  if (!indices.getElementType().isSignlessInteger(64) &&
      !indices.getElementType().isSignlessInteger(32))
    return emitOpError("indices must be i32 or i64, got ") << indices.getElementType();
  if (rows.getElementType() != p.getElementType())
    return emitOpError("rows must have the parameter's element type ")
           << p.getElementType() << ", got " << rows.getElementType();
  SmallVector<int64_t> expected(indices.getShape());
  if (p.getRank() < 1)
    return emitOpError("parameter must have rows (rank >= 1)");
  llvm::append_range(expected, p.getShape().drop_front());
  if (rows.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("rows shape must be the indices' shape followed by a "
                       "parameter row's, got ")
           << rows << " for indices " << indices << " and parameter " << p;
  return success();
}

LogicalResult
GradAccumulateOp::verifySymbolUses(SymbolTableCollection &symbols) {
  auto param = lookupParam(*this, getParamAttr(), symbols, /*trainable=*/true);
  if (!param)
    return failure();
  Type t = getGrad().getType();
  if (auto shard = llvm::dyn_cast<ShardType>(t)) {
    if (shard.getKind() != BufferKind::Grads ||
        shard.getElementType() != param.getType().getElementType())
      return emitOpError("gradient shard must be a grads shard of element type ")
             << param.getType().getElementType();
    return success();
  }
  if (t != param.getType())
    return emitOpError("gradient type ")
           << t << " does not match parameter type " << param.getType();
  return success();
}
