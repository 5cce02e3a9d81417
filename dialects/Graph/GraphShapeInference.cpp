//===- GraphShapeInference.cpp - result types of graph ops ----------------===//
//
// inferReturnTypes for every graph op whose result type follows from its
// operands and attributes. The importer calls these before creating an op, so
// a shape error in an untrusted model becomes a diagnostic at the ONNX node's
// location instead of a malformed op; the verifier calls them again.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Dialect/Graph/GraphOps.h"

#include "llvm/ADT/STLExtras.h"

#include <utility>

using namespace mlir;
using namespace zeroc::graph;

namespace {

std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::interleave(
      shape, [&](int64_t d) { s += std::to_string(d); }, [&] { s += ", "; });
  return s + "]";
}

LogicalResult fail(std::optional<Location> loc, StringRef opName,
                   const Twine &msg) {
  return emitOptionalError(loc, "'", opName, "' op ", msg.str());
}

RankedTensorType ranked(Value v) {
  return llvm::dyn_cast<RankedTensorType>(v.getType());
}

LogicalResult inferBroadcast(std::optional<Location> loc, StringRef opName,
                             ValueRange operands, Type elementType,
                             SmallVectorImpl<Type> &results) {
  SmallVector<int64_t> shape;
  for (Value v : operands) {
    RankedTensorType t = ranked(v);
    if (!t)
      return fail(loc, opName, "operands must be ranked tensors");
    FailureOr<SmallVector<int64_t>> b = broadcastShapes(shape, t.getShape());
    if (failed(b))
      return fail(loc, opName,
                  "operand shapes " + shapeStr(shape) + " and " +
                      shapeStr(t.getShape()) + " are not broadcast-compatible");
    shape = *b;
  }
  results.push_back(RankedTensorType::get(shape, elementType));
  return success();
}

} // namespace

int64_t zeroc::graph::sliceSize(int64_t start, int64_t end, int64_t step) {
  uint64_t span = step > 0 ? uint64_t(end) - uint64_t(start)
                           : uint64_t(start) - uint64_t(end);
  if ((step > 0 && end <= start) || (step < 0 && start <= end))
    return 0;
  uint64_t absStep = step > 0 ? uint64_t(step) : uint64_t(0) - uint64_t(step);
  return static_cast<int64_t>(1 + (span - 1) / absStep);
}

FailureOr<SmallVector<int64_t>>
zeroc::graph::broadcastShapes(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t l = i < rank - lhs.size() ? 1 : lhs[i - (rank - lhs.size())];
    int64_t r = i < rank - rhs.size() ? 1 : rhs[i - (rank - rhs.size())];
    if (l != r && l != 1 && r != 1)
      return failure();
    out[i] = l == 1 ? r : l;
  }
  return out;
}

#define ZEROC_BROADCAST_INFER(OP, ELEMENT)                                     \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *ctx, std::optional<Location> loc, ValueRange operands,      \
      DictionaryAttr, OpaqueProperties, RegionRange,                           \
      SmallVectorImpl<Type> &results) {                                        \
    RankedTensorType lhs = ranked(operands[0]);                                \
    if (!lhs)                                                                  \
      return fail(loc, getOperationName(), "operands must be ranked tensors"); \
    (void)ctx;                                                                 \
    return inferBroadcast(loc, getOperationName(), operands, ELEMENT,          \
                          results);                                            \
  }

ZEROC_BROADCAST_INFER(AddOp, lhs.getElementType())
ZEROC_BROADCAST_INFER(SubOp, lhs.getElementType())
ZEROC_BROADCAST_INFER(MulOp, lhs.getElementType())
ZEROC_BROADCAST_INFER(DivOp, lhs.getElementType())
ZEROC_BROADCAST_INFER(PowOp, lhs.getElementType())
ZEROC_BROADCAST_INFER(EqualOp, IntegerType::get(ctx, 1))
ZEROC_BROADCAST_INFER(MaxOp, lhs.getElementType())
ZEROC_BROADCAST_INFER(MinOp, lhs.getElementType())
#undef ZEROC_BROADCAST_INFER

LogicalResult WhereOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        ValueRange operands, DictionaryAttr,
                                        OpaqueProperties, RegionRange,
                                        SmallVectorImpl<Type> &results) {
  RankedTensorType onTrue = ranked(operands[1]);
  if (!onTrue)
    return fail(loc, getOperationName(), "operands must be ranked tensors");
  return inferBroadcast(loc, getOperationName(), operands,
                        onTrue.getElementType(), results);
}

LogicalResult MatMulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         ValueRange operands,
                                         DictionaryAttr attributes,
                                         OpaqueProperties properties,
                                         RegionRange regions,
                                         SmallVectorImpl<Type> &results) {
  Adaptor adaptor(operands, attributes, properties, regions);
  RankedTensorType lhs = ranked(adaptor.getLhs()), rhs = ranked(adaptor.getRhs());
  if (!lhs || !rhs)
    return fail(loc, getOperationName(), "operands must be ranked tensors");
  if (lhs.getRank() == 0 || rhs.getRank() == 0)
    return fail(loc, getOperationName(), "operands must have rank >= 1");
  // Read as attributes: an op built by name (the importer) infers its type
  // before its default-valued flags are filled in.
  const bool transA = adaptor.getTransAAttr() && adaptor.getTransAAttr().getValue();
  const bool transB = adaptor.getTransBAttr() && adaptor.getTransBAttr().getValue();
  if ((transA && lhs.getRank() < 2) || (transB && rhs.getRank() < 2))
    return fail(loc, getOperationName(),
                "a transposed operand must have rank >= 2");
  SmallVector<int64_t> a(lhs.getShape()), b(rhs.getShape());
  if (transA)
    std::swap(a[a.size() - 2], a[a.size() - 1]);
  if (transB)
    std::swap(b[b.size() - 2], b[b.size() - 1]);
  bool lhsVector = a.size() == 1, rhsVector = b.size() == 1;
  if (lhsVector)
    a.insert(a.begin(), 1);
  if (rhsVector)
    b.push_back(1);
  if (a.back() != b[b.size() - 2])
    return fail(loc, getOperationName(),
                "contracting dims differ: " + shapeStr(lhs.getShape()) +
                    (transA ? "^T" : "") + " x " + shapeStr(rhs.getShape()) +
                    (transB ? "^T" : ""));
  FailureOr<SmallVector<int64_t>> batch = broadcastShapes(
      ArrayRef<int64_t>(a).drop_back(2), ArrayRef<int64_t>(b).drop_back(2));
  if (failed(batch))
    return fail(loc, getOperationName(),
                "batch dims are not broadcast-compatible: " +
                    shapeStr(lhs.getShape()) + " x " +
                    shapeStr(rhs.getShape()));
  SmallVector<int64_t> shape = *batch;
  if (!lhsVector)
    shape.push_back(a[a.size() - 2]);
  if (!rhsVector)
    shape.push_back(b.back());
  if (DenseI64ArrayAttr permAttr = adaptor.getResultPermAttr()) {
    if (lhsVector || rhsVector)
      return fail(loc, getOperationName(),
                  "result_perm needs operands of rank 2 or more (a vector "
                  "operand's product is no batch of matrices)");
    ArrayRef<int64_t> perm = permAttr.asArrayRef();
    const int64_t r = static_cast<int64_t>(shape.size());
    SmallVector<bool> seen(shape.size(), false);
    bool valid = static_cast<int64_t>(perm.size()) == r && r >= 2;
    for (int64_t i = 0; valid && i < r; ++i) {
      valid = perm[i] >= 0 && perm[i] < r && !seen[perm[i]];
      if (valid)
        seen[perm[i]] = true;
    }
    if (!valid)
      return fail(loc, getOperationName(),
                  "result_perm must be a permutation of the product's " +
                      std::to_string(r) + " dims (rank 2 or more)");
    if (perm.back() < r - 2)
      return fail(loc, getOperationName(),
                  "result_perm must keep one of the product's last two dims "
                  "last (a matrix the GEMM writes)");
    SmallVector<int64_t> stored;
    for (int64_t i : perm)
      stored.push_back(shape[i]);
    shape = std::move(stored);
  }
  results.push_back(RankedTensorType::get(shape, lhs.getElementType()));
  return success();
}

LogicalResult GemmOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       ValueRange operands,
                                       DictionaryAttr attributes,
                                       OpaqueProperties properties,
                                       RegionRange regions,
                                       SmallVectorImpl<Type> &results) {
  Adaptor adaptor(operands, attributes, properties, regions);
  RankedTensorType a = ranked(adaptor.getA()), b = ranked(adaptor.getB());
  if (!a || !b || a.getRank() != 2 || b.getRank() != 2)
    return fail(loc, getOperationName(), "a and b must be rank-2 tensors");
  int64_t m = adaptor.getTransA() ? a.getDimSize(1) : a.getDimSize(0);
  int64_t ka = adaptor.getTransA() ? a.getDimSize(0) : a.getDimSize(1);
  int64_t kb = adaptor.getTransB() ? b.getDimSize(1) : b.getDimSize(0);
  int64_t n = adaptor.getTransB() ? b.getDimSize(0) : b.getDimSize(1);
  if (ka != kb)
    return fail(loc, getOperationName(),
                "contracting dims differ: " + std::to_string(ka) + " vs " +
                    std::to_string(kb));
  if (a.getElementType() != b.getElementType())
    return fail(loc, getOperationName(), "a and b element types differ");
  if (Value c = adaptor.getC()) {
    RankedTensorType ct = ranked(c);
    FailureOr<SmallVector<int64_t>> bc = failure();
    if (ct)
      bc = broadcastShapes(ct.getShape(), {m, n});
    if (failed(bc) || *bc != SmallVector<int64_t>{m, n} ||
        ct.getElementType() != a.getElementType())
      return fail(loc, getOperationName(),
                  "c must broadcast to the result shape [" +
                      std::to_string(m) + ", " + std::to_string(n) + "]");
  }
  results.push_back(RankedTensorType::get({m, n}, a.getElementType()));
  return success();
}

namespace {
LogicalResult inferReduce(std::optional<Location> loc, StringRef opName,
                          Value input, ArrayAttr axes, bool keepdims,
                          SmallVectorImpl<Type> &results) {
  RankedTensorType t = ranked(input);
  if (!t || !axes)
    return fail(loc, opName, "expects a ranked input and axes");
  SmallVector<int64_t> shape;
  int64_t prev = -1;
  llvm::SmallDenseSet<int64_t> reduced;
  for (Attribute a : axes) {
    auto ia = llvm::dyn_cast<IntegerAttr>(a);
    if (!ia)
      return fail(loc, opName, "axes must be integers");
    int64_t axis = ia.getInt();
    if (axis <= prev || axis >= t.getRank())
      return fail(loc, opName,
                  "axes must be strictly increasing and within [0, " +
                      std::to_string(t.getRank()) + ")");
    prev = axis;
    reduced.insert(axis);
  }
  for (int64_t i = 0; i < t.getRank(); ++i) {
    if (!reduced.contains(i))
      shape.push_back(t.getDimSize(i));
    else if (keepdims)
      shape.push_back(1);
  }
  results.push_back(RankedTensorType::get(shape, t.getElementType()));
  return success();
}
} // namespace

#define ZEROC_REDUCE_INFER(OP)                                                 \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> loc, ValueRange operands,         \
      DictionaryAttr attributes, OpaqueProperties properties,                  \
      RegionRange regions, SmallVectorImpl<Type> &results) {                   \
    Adaptor adaptor(operands, attributes, properties, regions);                \
    BoolAttr keep = adaptor.getKeepdimsAttr();                                 \
    return inferReduce(loc, getOperationName(), adaptor.getInput(),            \
                       adaptor.getAxesAttr(), keep && keep.getValue(),         \
                       results);                                               \
  }
ZEROC_REDUCE_INFER(ReduceSumOp)
ZEROC_REDUCE_INFER(ReduceMeanOp)
ZEROC_REDUCE_INFER(ReduceMaxOp)
#undef ZEROC_REDUCE_INFER

FailureOr<RankedTensorType> zeroc::graph::crossEntropyLossType(std::optional<Location> loc,
                                                             StringRef opName, Type scoresType,
                                                             Type labelsType,
                                                             StringAttr reduction) {
  auto scores = llvm::dyn_cast<RankedTensorType>(scoresType);
  auto labels = llvm::dyn_cast<RankedTensorType>(labelsType);
  if (!scores || !labels || scores.getRank() < 2)
    return fail(loc, opName, "scores must have rank >= 2");
  SmallVector<int64_t> expected{scores.getDimSize(0)};
  llvm::append_range(expected, scores.getShape().drop_front(2));
  if (labels.getShape() != ArrayRef<int64_t>(expected))
    return fail(loc, opName,
                "labels shape " + shapeStr(labels.getShape()) + " does not match scores " +
                    shapeStr(scores.getShape()) + " (expected " + shapeStr(expected) + ")");
  if (!reduction)
    return fail(loc, opName, "requires a reduction");
  if (reduction.getValue() == "none")
    return RankedTensorType::get(expected, scores.getElementType());
  if (reduction.getValue() == "mean" || reduction.getValue() == "sum")
    return RankedTensorType::get({}, scores.getElementType());
  return fail(loc, opName,
              "reduction must be 'mean', 'sum' or 'none', got '" + reduction.getValue() + "'");
}

LogicalResult SoftmaxCrossEntropyLossOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties,
    RegionRange regions, SmallVectorImpl<Type> &results) {
  Adaptor adaptor(operands, attributes, properties, regions);
  FailureOr<RankedTensorType> loss =
      crossEntropyLossType(loc, getOperationName(), adaptor.getScores().getType(),
                           adaptor.getLabels().getType(), adaptor.getReductionAttr());
  if (failed(loss))
    return failure();
  results.push_back(*loss);
  return success();
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         ValueRange operands,
                                         DictionaryAttr attributes,
                                         OpaqueProperties properties,
                                         RegionRange regions,
                                         SmallVectorImpl<Type> &results) {
  Adaptor adaptor(operands, attributes, properties, regions);
  RankedTensorType data = ranked(adaptor.getData());
  RankedTensorType indices = ranked(adaptor.getIndices());
  if (!data || !indices || !adaptor.getAxisAttr())
    return fail(loc, getOperationName(), "expects ranked operands and an axis");
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= data.getRank())
    return fail(loc, getOperationName(),
                "axis " + std::to_string(axis) + " is out of range for rank " +
                    std::to_string(data.getRank()));
  SmallVector<int64_t> shape(data.getShape().take_front(axis));
  llvm::append_range(shape, indices.getShape());
  llvm::append_range(shape, data.getShape().drop_front(axis + 1));
  results.push_back(RankedTensorType::get(shape, data.getElementType()));
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            ValueRange operands,
                                            DictionaryAttr attributes,
                                            OpaqueProperties properties,
                                            RegionRange regions,
                                            SmallVectorImpl<Type> &results) {
  Adaptor adaptor(operands, attributes, properties, regions);
  RankedTensorType t = ranked(adaptor.getInput());
  ArrayAttr perm = adaptor.getPermAttr();
  if (!t || !perm || static_cast<int64_t>(perm.size()) != t.getRank())
    return fail(loc, getOperationName(),
                "perm must have one entry per input dim");
  SmallVector<int64_t> shape;
  SmallVector<bool> seen(t.getRank(), false);
  for (Attribute a : perm) {
    auto ia = llvm::dyn_cast<IntegerAttr>(a);
    int64_t p = ia ? ia.getInt() : -1;
    if (p < 0 || p >= t.getRank() || seen[p])
      return fail(loc, getOperationName(), "perm is not a permutation");
    seen[p] = true;
    shape.push_back(t.getDimSize(p));
  }
  results.push_back(RankedTensorType::get(shape, t.getElementType()));
  return success();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        ValueRange operands,
                                        DictionaryAttr attributes,
                                        OpaqueProperties properties,
                                        RegionRange regions,
                                        SmallVectorImpl<Type> &results) {
  Adaptor adaptor(operands, attributes, properties, regions);
  RankedTensorType t = ranked(adaptor.getInput());
  ArrayAttr starts = adaptor.getStartsAttr(), ends = adaptor.getEndsAttr(),
            steps = adaptor.getStepsAttr();
  if (!t || !starts || !ends || !steps ||
      static_cast<int64_t>(starts.size()) != t.getRank() ||
      starts.size() != ends.size() || starts.size() != steps.size())
    return fail(loc, getOperationName(),
                "starts, ends and steps must have one entry per input dim");
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < t.getRank(); ++i) {
    auto s = llvm::dyn_cast<IntegerAttr>(starts[i]);
    auto e = llvm::dyn_cast<IntegerAttr>(ends[i]);
    auto st = llvm::dyn_cast<IntegerAttr>(steps[i]);
    if (!s || !e || !st)
      return fail(loc, getOperationName(), "starts, ends and steps must be integers");
    int64_t start = s.getInt(), end = e.getInt(), step = st.getInt();
    int64_t dim = t.getDimSize(i);
    bool ok = step > 0 ? (0 <= start && start <= end && end <= dim)
                       : (step < 0 && -1 <= end && end <= start && start < dim);
    if (!ok)
      return fail(loc, getOperationName(),
                  "dim " + std::to_string(i) + ": slice [" +
                      std::to_string(start) + ":" + std::to_string(end) + ":" +
                      std::to_string(step) + "] is not normalized for size " +
                      std::to_string(dim));
    shape.push_back(sliceSize(start, end, step));
  }
  results.push_back(RankedTensorType::get(shape, t.getElementType()));
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         ValueRange operands,
                                         DictionaryAttr attributes,
                                         OpaqueProperties properties,
                                         RegionRange regions,
                                         SmallVectorImpl<Type> &results) {
  Adaptor adaptor(operands, attributes, properties, regions);
  if (operands.empty() || !adaptor.getAxisAttr())
    return fail(loc, getOperationName(), "expects at least one input and an axis");
  RankedTensorType first = ranked(operands[0]);
  int64_t axis = adaptor.getAxis();
  if (!first || axis < 0 || axis >= first.getRank())
    return fail(loc, getOperationName(), "axis is out of range");
  SmallVector<int64_t> shape(first.getShape());
  for (Value v : operands.drop_front()) {
    RankedTensorType t = ranked(v);
    if (!t || t.getRank() != first.getRank() ||
        t.getElementType() != first.getElementType())
      return fail(loc, getOperationName(),
                  "inputs must have the same rank and element type");
    for (int64_t i = 0; i < t.getRank(); ++i) {
      if (i == axis)
        shape[i] += t.getDimSize(i);
      else if (t.getDimSize(i) != shape[i])
        return fail(loc, getOperationName(),
                    "inputs differ in dim " + std::to_string(i) +
                        " outside the concat axis");
    }
  }
  results.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}
