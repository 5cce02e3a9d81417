//===- GraphMovementOps.cpp - pad, element gathers, scatters, cumsum ------===//
//
// Result types and verifiers of the ops in GraphMovementOps.td.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Dialect/Graph/GraphOps.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace zeroc::graph;

namespace {

LogicalResult fail(std::optional<Location> loc, StringRef opName,
                   const Twine &msg) {
  return emitOptionalError(loc, "'", opName, "' op ", msg.str());
}

RankedTensorType ranked(Value v) {
  return llvm::dyn_cast<RankedTensorType>(v.getType());
}

bool isPadMode(StringRef m) {
  return m == "constant" || m == "reflect" || m == "edge" || m == "wrap";
}

/// The integers of an I64ArrayAttr (failure on a non-integer entry).
FailureOr<SmallVector<int64_t>> intsOf(ArrayAttr a) {
  SmallVector<int64_t> v;
  if (!a)
    return failure();
  for (Attribute x : a) {
    auto i = llvm::dyn_cast<IntegerAttr>(x);
    if (!i)
      return failure();
    v.push_back(i.getInt());
  }
  return v;
}

/// Checks the (..., k) index tuple shape against data and returns k.
FailureOr<int64_t> tupleLength(RankedTensorType data, RankedTensorType indices,
                               std::string &why) {
  if (indices.getRank() < 1) {
    why = "indices must have rank >= 1";
    return failure();
  }
  int64_t k = indices.getShape().back();
  if (k < 1 || k > data.getRank()) {
    why = "index tuples have " + std::to_string(k) +
          " entries; expected 1 to the data rank " +
          std::to_string(data.getRank());
    return failure();
  }
  return k;
}

SmallVector<int64_t> ndSliceShape(RankedTensorType data,
                                  RankedTensorType indices, int64_t k) {
  SmallVector<int64_t> shape(indices.getShape().drop_back());
  llvm::append_range(shape, data.getShape().drop_front(k));
  return shape;
}

/// gather_elements' rule: equal ranks, axis in range, index dims no larger
/// than the data's off the axis.
LogicalResult checkElementIndices(RankedTensorType data,
                                  RankedTensorType indices, int64_t axis,
                                  std::string &why) {
  if (data.getRank() < 1 || indices.getRank() != data.getRank()) {
    why = "indices must have the rank of data (>= 1)";
    return failure();
  }
  if (axis < 0 || axis >= data.getRank()) {
    why = "axis " + std::to_string(axis) + " is out of range for rank " +
          std::to_string(data.getRank());
    return failure();
  }
  for (int64_t d = 0; d < data.getRank(); ++d)
    if (d != axis && indices.getDimSize(d) > data.getDimSize(d)) {
      why = "indices dim " + std::to_string(d) + " (" +
            std::to_string(indices.getDimSize(d)) + ") exceeds the data's (" +
            std::to_string(data.getDimSize(d)) + ")";
      return failure();
    }
  return success();
}

/// The scatters' reduction: none, add or mul, the last two of numbers only.
LogicalResult checkScatterReduction(Operation *op, StringRef r, Type elem) {
  if (r != "none" && r != "add" && r != "mul")
    return op->emitOpError("reduction must be 'none', 'add' or 'mul', got '")
           << r << "'";
  if (r != "none" && elem.isInteger(1))
    return op->emitOpError("reduction '") << r << "' needs a numeric element type";
  return success();
}

} // namespace

FailureOr<SmallVector<int64_t>>
zeroc::graph::padShape(ArrayRef<int64_t> in, ArrayRef<int64_t> pads,
                       StringRef mode, std::string &why) {
  int64_t rank = in.size();
  if (static_cast<int64_t>(pads.size()) != 2 * rank) {
    why = "pads must have 2 entries per dim (" + std::to_string(2 * rank) + ")";
    return failure();
  }
  if (!isPadMode(mode)) {
    why = "mode must be 'constant', 'reflect', 'edge' or 'wrap', got '" +
          mode.str() + "'";
    return failure();
  }
  SmallVector<int64_t> out;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t n = in[i], lo = pads[i], hi = pads[i + rank];
    std::string dim = "dim " + std::to_string(i) + " of size " + std::to_string(n);
    // |pads| up to 2^40 keeps the sum exact (tensors have at most 2^32
    // elements anyway).
    constexpr int64_t kLimit = int64_t(1) << 40;
    if (lo < -kLimit || lo > kLimit || hi < -kLimit || hi > kLimit) {
      why = "pads of " + dim + " are too large";
      return failure();
    }
    int64_t size = lo + n + hi;
    if (size < 0 || lo < -n || hi < -n) {
      why = "pads " + std::to_string(lo) + ", " + std::to_string(hi) +
            " crop more than " + dim + " holds";
      return failure();
    }
    int64_t most = std::max(lo, hi);
    if (mode == "reflect" && most > 0 && most > n - 1) {
      why = "reflect pads of " + dim + " must be below the dim, got " +
            std::to_string(most);
      return failure();
    }
    if (mode == "edge" && most > 0 && n == 0) {
      why = "edge padding of empty " + dim + " has no edge";
      return failure();
    }
    if (mode == "wrap" && most > 0 && (most > n || std::min(lo, hi) < 0)) {
      why = "wrap pads of " + dim + " must lie in [0, " + std::to_string(n) + "]";
      return failure();
    }
    out.push_back(size);
  }
  return out;
}

LogicalResult PadOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                      ValueRange operands,
                                      DictionaryAttr attributes,
                                      OpaqueProperties properties,
                                      RegionRange regions,
                                      SmallVectorImpl<Type> &results) {
  Adaptor adaptor(operands, attributes, properties, regions);
  RankedTensorType t = ranked(adaptor.getInput());
  if (!t || !adaptor.getModeAttr())
    return fail(loc, getOperationName(), "expects a ranked input and a mode");
  FailureOr<SmallVector<int64_t>> pads = intsOf(adaptor.getPadsAttr());
  if (failed(pads))
    return fail(loc, getOperationName(), "pads must be an array of integers");
  std::string why;
  FailureOr<SmallVector<int64_t>> shape =
      padShape(t.getShape(), *pads, adaptor.getMode(), why);
  if (failed(shape))
    return fail(loc, getOperationName(), why);
  results.push_back(RankedTensorType::get(*shape, t.getElementType()));
  return success();
}

LogicalResult PadOp::verify() {
  double v = getValue().convertToDouble();
  if (!llvm::isa<FloatType>(getType().getElementType()) &&
      !(std::isfinite(v) && v == std::trunc(v) && std::fabs(v) <= 9007199254740992.0))
    return emitOpError("value ") << v
           << " must be an integer of magnitude at most 2^53 for an integer "
              "tensor";
  return success();
}

LogicalResult PadGradOp::verify() {
  std::string why;
  FailureOr<SmallVector<int64_t>> shape =
      padShape(getType().getShape(), *intsOf(getPadsAttr()), getMode(), why);
  if (failed(shape))
    return emitOpError(why);
  if (ArrayRef<int64_t>(*shape) != getGrad().getType().getShape())
    return emitOpError("grad type ")
           << getGrad().getType() << " does not match padding the result";
  return success();
}

LogicalResult GatherElementsOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &results) {
  Adaptor adaptor(operands, attributes, properties, regions);
  RankedTensorType data = ranked(adaptor.getData());
  RankedTensorType indices = ranked(adaptor.getIndices());
  if (!data || !indices || !adaptor.getAxisAttr())
    return fail(loc, getOperationName(), "expects ranked operands and an axis");
  std::string why;
  if (failed(checkElementIndices(data, indices, adaptor.getAxis(), why)))
    return fail(loc, getOperationName(), why);
  results.push_back(
      RankedTensorType::get(indices.getShape(), data.getElementType()));
  return success();
}

LogicalResult GatherElementsGradOp::verify() {
  std::string why;
  if (failed(checkElementIndices(getType(), getIndices().getType(), getAxis(),
                                 why)))
    return emitOpError(why);
  if (getGrad().getType().getShape() != getIndices().getType().getShape())
    return emitOpError("grad shape must equal the indices shape");
  return success();
}

LogicalResult GatherNDOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> loc,
                                           ValueRange operands,
                                           DictionaryAttr attributes,
                                           OpaqueProperties properties,
                                           RegionRange regions,
                                           SmallVectorImpl<Type> &results) {
  Adaptor adaptor(operands, attributes, properties, regions);
  RankedTensorType data = ranked(adaptor.getData());
  RankedTensorType indices = ranked(adaptor.getIndices());
  if (!data || !indices)
    return fail(loc, getOperationName(), "expects ranked operands");
  std::string why;
  FailureOr<int64_t> k = tupleLength(data, indices, why);
  if (failed(k))
    return fail(loc, getOperationName(), why);
  results.push_back(RankedTensorType::get(ndSliceShape(data, indices, *k),
                                          data.getElementType()));
  return success();
}

LogicalResult ScatterNDOp::verify() {
  if (failed(checkScatterReduction(*this, getReduction(),
                                   getType().getElementType())))
    return failure();
  std::string why;
  FailureOr<int64_t> k = tupleLength(getData().getType(), getIndices().getType(), why);
  if (failed(k))
    return emitOpError(why);
  SmallVector<int64_t> expected =
      ndSliceShape(getData().getType(), getIndices().getType(), *k);
  if (getUpdates().getType().getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("updates shape must be indices.shape[:-1] + "
                       "data.shape[k:]");
  return success();
}

LogicalResult ScatterElementsOp::verify() {
  if (failed(checkScatterReduction(*this, getReduction(),
                                   getType().getElementType())))
    return failure();
  std::string why;
  if (failed(checkElementIndices(getData().getType(), getIndices().getType(),
                                 getAxis(), why)))
    return emitOpError(why);
  if (getUpdates().getType().getShape() != getIndices().getType().getShape())
    return emitOpError("updates shape must equal the indices shape");
  return success();
}

LogicalResult CumSumOp::verify() {
  int64_t rank = getType().getRank(), axis = static_cast<int64_t>(getAxis());
  if (axis < 0 || axis >= rank)
    return emitOpError("axis ") << axis << " is out of range for rank "
                                << rank;
  return success();
}

LogicalResult StridedViewOp::verify() {
  auto in = llvm::cast<RankedTensorType>(getInput().getType());
  RankedTensorType out = getType();
  ArrayRef<int64_t> strides = getStrides();
  if (static_cast<int64_t>(strides.size()) != out.getRank())
    return emitOpError("has ") << strides.size() << " strides for a rank-"
                               << out.getRank() << " result";
  if (getOffset() < 0 || llvm::any_of(strides, [](int64_t s) { return s < 0; }))
    return emitOpError("offset and strides must not be negative");
  // The last element viewed must be an element of the input.
  if (out.getNumElements() > 0) {
    int64_t last = getOffset();
    for (auto [dim, stride] : llvm::zip(out.getShape(), strides))
      last += (dim - 1) * stride;
    if (last >= in.getNumElements())
      return emitOpError("views element ")
             << last << " of an input of " << in.getNumElements() << " elements";
  }
  if (out.getRank() < 2 || (strides.back() != 1 && strides[strides.size() - 2] != 1))
    return emitOpError("needs a rank of at least 2 and a last or second-last "
                       "dim of stride 1 (a matrix a GEMM can read)");
  for (Operation *user : getResult().getUsers())
    if (!llvm::isa<MatMulOp, FusedAttentionOp, FusedAttentionGradOp>(user)) {
      InFlightDiagnostic diag = emitOpError("is read by '")
                                << user->getName()
                                << "'; only matmuls and fused attentions read strided views";
      diag.attachNote(user->getLoc()) << "read here";
      return diag;
    }
  return success();
}
