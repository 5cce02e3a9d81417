//===- GraphConvOps.cpp - shape rules of conv, pooling, batch norm --------===//
//
// One window-shape rule shared by conv, max_pool and avg_pool and their
// gradient ops: the result type of a forward op comes from it, and each
// gradient op checks that its operand and result types are a forward op's.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Dialect/Graph/GraphOps.h"

#include <cmath>

using namespace mlir;
using namespace zeroc::graph;

namespace {

RankedTensorType ranked(Value v) {
  return llvm::dyn_cast_or_null<RankedTensorType>(v ? v.getType() : Type());
}

std::optional<SmallVector<int64_t>> ints(Attribute a) {
  auto arr = llvm::dyn_cast_or_null<ArrayAttr>(a);
  if (!arr)
    return std::nullopt;
  SmallVector<int64_t> v;
  for (Attribute x : arr) {
    auto i = llvm::dyn_cast<IntegerAttr>(x);
    if (!i)
      return std::nullopt;
    v.push_back(i.getInt());
  }
  return v;
}

/// The window of a conv or pooling op, read from its attribute dictionary.
struct Window {
  SmallVector<int64_t> kernel, strides, pads, dilations;
  bool ceil = false;
  bool pool = false; // pads must be smaller than the dilated kernel
};

/// Reads the window attributes for `spatial` dims; `kernel` is taken from
/// the attribute `kernel_shape` unless given. Returns an error message.
std::optional<std::string> readWindow(DictionaryAttr attrs, size_t spatial,
                                      std::optional<SmallVector<int64_t>> kernel,
                                      Window &w) {
  auto get = [&](StringRef name, size_t n,
                 SmallVector<int64_t> &out) -> std::optional<std::string> {
    auto v = ints(attrs.get(name));
    if (!v)
      return "needs an integer array attribute '" + name.str() + "'";
    if (v->size() != n)
      return "'" + name.str() + "' has " + std::to_string(v->size()) +
             " entries, expected " + std::to_string(n);
    out = *v;
    return std::nullopt;
  };
  if (kernel)
    w.kernel = *kernel;
  else if (auto e = get("kernel_shape", spatial, w.kernel))
    return e;
  for (auto [name, n, out] :
       {std::tuple{"strides", spatial, &w.strides},
        std::tuple{"pads", 2 * spatial, &w.pads},
        std::tuple{"dilations", spatial, &w.dilations}})
    if (auto e = get(name, n, *out))
      return e;
  auto ceil = llvm::dyn_cast_or_null<BoolAttr>(attrs.get("ceil_mode"));
  w.ceil = ceil && ceil.getValue();
  return std::nullopt;
}

/// The output spatial dims of `w` over input spatial dims `in`.
std::optional<std::string> windowShape(ArrayRef<int64_t> in, const Window &w,
                                       SmallVectorImpl<int64_t> &out) {
  size_t n = in.size();
  for (size_t i = 0; i < n; ++i) {
    std::string dim = " of spatial dim " + std::to_string(i);
    if (w.kernel[i] < 1)
      return "kernel size " + std::to_string(w.kernel[i]) + dim + " must be >= 1";
    if (w.strides[i] < 1 || w.strides[i] > (int64_t(1) << 32))
      return "stride " + std::to_string(w.strides[i]) + dim + " must be in [1, 2^32]";
    if (w.dilations[i] < 1 || w.dilations[i] > (int64_t(1) << 32))
      return "dilation " + std::to_string(w.dilations[i]) + dim + " must be in [1, 2^32]";
    int64_t pb = w.pads[i], pe = w.pads[i + n];
    if (pb < 0 || pe < 0 || pb > (int64_t(1) << 32) || pe > (int64_t(1) << 32))
      return "pads of spatial dim " + std::to_string(i) + " must be in [0, 2^32]";
    if (w.kernel[i] > (int64_t(1) << 32))
      return "kernel size" + dim + " must be <= 2^32";
    int64_t ek = (w.kernel[i] - 1) * w.dilations[i] + 1;
    if (w.pool && (pb >= ek || pe >= ek))
      return "pads of spatial dim " + std::to_string(i) +
             " must be smaller than the dilated kernel (" + std::to_string(ek) +
             ")";
    int64_t padded = in[i] + pb + pe;
    if (padded < ek)
      return "the dilated kernel (" + std::to_string(ek) + ")" + dim +
             " is larger than the padded input (" + std::to_string(padded) + ")";
    int64_t span = padded - ek;
    int64_t count = (w.ceil ? (span + w.strides[i] - 1) / w.strides[i]
                            : span / w.strides[i]) + 1;
    if (w.ceil && (count - 1) * w.strides[i] >= in[i] + pb)
      return "ceil_mode: the last window" + dim +
             " would start in the end padding (PyTorch drops that window, "
             "ONNX keeps it); change the pads or the input size";
    out.push_back(count);
  }
  return std::nullopt;
}

LogicalResult fail(std::optional<Location> loc, StringRef opName,
                   const Twine &msg) {
  return emitOptionalError(loc, "'", opName, "' op ", msg.str());
}

/// The conv result type of (input, weight) under `attrs`, or a message.
std::optional<std::string> convType(RankedTensorType x, RankedTensorType w,
                                    DictionaryAttr attrs,
                                    RankedTensorType &result) {
  if (!x || !w)
    return std::string("operands must be ranked tensors");
  if (x.getRank() < 3 || x.getRank() > 5)
    return "input must have rank 3 to 5 (N, C and 1 to 3 spatial dims), got " +
           std::to_string(x.getRank());
  if (w.getRank() != x.getRank())
    return "weight rank " + std::to_string(w.getRank()) +
           " must equal the input rank " + std::to_string(x.getRank());
  auto groupAttr = llvm::dyn_cast_or_null<IntegerAttr>(attrs.get("group"));
  if (!groupAttr)
    return std::string("needs an integer attribute 'group'");
  int64_t group = groupAttr.getInt();
  int64_t c = x.getDimSize(1), m = w.getDimSize(0);
  if (group < 1 || m % group != 0 || c != w.getDimSize(1) * group)
    return "group " + std::to_string(group) + " does not fit: input has " +
           std::to_string(c) + " channels, weight (M, C/group, ...) has M = " +
           std::to_string(m) + " and C/group = " +
           std::to_string(w.getDimSize(1));
  Window win;
  size_t spatial = x.getRank() - 2;
  SmallVector<int64_t> kernel(w.getShape().drop_front(2));
  if (auto e = readWindow(attrs, spatial, kernel, win))
    return e;
  SmallVector<int64_t> shape{x.getDimSize(0), m};
  if (auto e = windowShape(x.getShape().drop_front(2), win, shape))
    return e;
  result = RankedTensorType::get(shape, x.getElementType());
  return std::nullopt;
}

/// The pooling result type of `x` under `attrs`, or a message.
std::optional<std::string> poolType(RankedTensorType x, DictionaryAttr attrs,
                                    RankedTensorType &result) {
  if (!x)
    return std::string("input must be a ranked tensor");
  if (x.getRank() < 3 || x.getRank() > 5)
    return "input must have rank 3 to 5 (N, C and 1 to 3 spatial dims), got " +
           std::to_string(x.getRank());
  Window win;
  win.pool = true;
  if (auto e = readWindow(attrs, x.getRank() - 2, std::nullopt, win))
    return e;
  SmallVector<int64_t> shape(x.getShape().take_front(2));
  if (auto e = windowShape(x.getShape().drop_front(2), win, shape))
    return e;
  result = RankedTensorType::get(shape, x.getElementType());
  return std::nullopt;
}

LogicalResult expectType(Operation *op, RankedTensorType expected,
                         Type actual, StringRef what) {
  if (expected != actual)
    return op->emitOpError(what) << " type " << actual
                                 << " does not match the forward op's "
                                 << expected;
  return success();
}

} // namespace

LogicalResult ConvOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                       ValueRange operands, DictionaryAttr attrs,
                                       OpaqueProperties, RegionRange,
                                       SmallVectorImpl<Type> &results) {
  if (operands.size() < 2)
    return fail(loc, getOperationName(), "needs an input and a weight");
  RankedTensorType result;
  if (auto e = convType(ranked(operands[0]), ranked(operands[1]), attrs, result))
    return fail(loc, getOperationName(), *e);
  if (operands.size() > 2) {
    RankedTensorType b = ranked(operands[2]);
    if (!b || b.getRank() != 1 || b.getDimSize(0) != result.getDimSize(1) ||
        b.getElementType() != result.getElementType())
      return fail(loc, getOperationName(),
                  "bias must be a 1-D tensor of the " +
                      std::to_string(result.getDimSize(1)) +
                      " output channels with the input's element type");
  }
  if (ranked(operands[1]).getElementType() != result.getElementType())
    return fail(loc, getOperationName(),
                "weight element type must match the input");
  results.push_back(result);
  return success();
}

LogicalResult ConvGradInputOp::verify() {
  RankedTensorType expected;
  if (auto e = convType(getType(), getWeight().getType(),
                        (*this)->getAttrDictionary(), expected))
    return emitOpError(*e);
  return expectType(*this, expected, getGrad().getType(), "grad");
}

LogicalResult ConvGradWeightOp::verify() {
  RankedTensorType expected;
  if (auto e = convType(getInput().getType(), getType(),
                        (*this)->getAttrDictionary(), expected))
    return emitOpError(*e);
  return expectType(*this, expected, getGrad().getType(), "grad");
}

#define ZEROC_POOL_INFER(OP)                                                   \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> loc, ValueRange operands,         \
      DictionaryAttr attrs, OpaqueProperties, RegionRange,                     \
      SmallVectorImpl<Type> &results) {                                        \
    RankedTensorType result;                                                   \
    if (operands.empty())                                                      \
      return fail(loc, getOperationName(), "needs an input");                  \
    if (auto e = poolType(ranked(operands[0]), attrs, result))                 \
      return fail(loc, getOperationName(), *e);                                \
    results.push_back(result);                                                 \
    return success();                                                          \
  }
ZEROC_POOL_INFER(MaxPoolOp)
ZEROC_POOL_INFER(AvgPoolOp)
#undef ZEROC_POOL_INFER

LogicalResult MaxPoolGradOp::verify() {
  RankedTensorType expected;
  if (auto e = poolType(getInput().getType(), (*this)->getAttrDictionary(),
                        expected))
    return emitOpError(*e);
  return expectType(*this, expected, getGrad().getType(), "grad");
}

LogicalResult AvgPoolGradOp::verify() {
  RankedTensorType expected;
  if (auto e = poolType(getType(), (*this)->getAttrDictionary(), expected))
    return emitOpError(*e);
  return expectType(*this, expected, getGrad().getType(), "grad");
}

static LogicalResult verifyBatchNorm(Operation *op, RankedTensorType x,
                                     RankedTensorType scale,
                                     ArrayRef<std::pair<StringRef, Type>> params,
                                     double epsilon) {
  if (x.getRank() < 2)
    return op->emitOpError("input must have rank >= 2 (N, C, ...), got ")
           << x.getRank();
  for (auto [what, t] : params) {
    auto rt = llvm::cast<RankedTensorType>(t);
    if (rt.getRank() != 1 || rt.getDimSize(0) != x.getDimSize(1))
      return op->emitOpError(what)
             << " must have shape (" << x.getDimSize(1) << "), the channels, got "
             << rt;
    if (rt.getElementType() != x.getElementType())
      return op->emitOpError(what) << " element type must match the input";
  }
  (void)scale;
  if (!(epsilon > 0.0) || !std::isfinite(epsilon))
    return op->emitOpError("epsilon must be positive and finite");
  return success();
}

LogicalResult BatchNormOp::verify() {
  return verifyBatchNorm(*this, getInput().getType(), getScale().getType(),
                         {{"scale", getScale().getType()},
                          {"bias", getBias().getType()}},
                         getEpsilon().convertToDouble());
}

LogicalResult BatchNormGradOp::verify() {
  return verifyBatchNorm(*this, getInput().getType(), getScale().getType(),
                         {{"scale", getScale().getType()}},
                         getEpsilon().convertToDouble());
}
