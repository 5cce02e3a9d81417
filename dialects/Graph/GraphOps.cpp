//===- GraphOps.cpp - graph dialect verifiers and folders -----------------===//
#include "zeroc/Dialect/Graph/GraphOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>

using namespace mlir;
using namespace zeroc::graph;

//===----------------------------------------------------------------------===//
// Parameters and constants
//===----------------------------------------------------------------------===//

LogicalResult ParamOp::verify() {
  auto type = llvm::dyn_cast<RankedTensorType>(getInitialValue().getType());
  if (!type || !type.hasStaticShape())
    return emitOpError("initial value must be a statically shaped tensor");
  if (getTrainable() && !llvm::isa<FloatType>(type.getElementType()))
    return emitOpError("trainable parameter must have a floating-point type, got ")
           << type.getElementType();
  if (auto master = getMaster()) {
    if (!getTrainable())
      return emitOpError("only a trainable parameter can have a master type");
    auto wide = llvm::dyn_cast<FloatType>(*master);
    auto narrow = llvm::cast<FloatType>(type.getElementType());
    if (!wide || wide.getWidth() <= narrow.getWidth())
      return emitOpError("master type ")
             << *master << " must be a floating-point type wider than "
             << narrow;
  }
  return success();
}

LogicalResult
LoadParamOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto param = symbolTable.lookupNearestSymbolFrom<ParamOp>(*this, getParamAttr());
  if (!param)
    return emitOpError("'") << getParam() << "' does not name a graph.param";
  if (param.getType() != getType())
    return emitOpError("result type ")
           << getType() << " does not match parameter type " << param.getType();
  return success();
}

LogicalResult BufferOp::verify() {
  auto type = llvm::dyn_cast<RankedTensorType>(getInitialValue().getType());
  if (!type || !type.hasStaticShape())
    return emitOpError("initial value must be a statically shaped tensor");
  if (!llvm::isa<FloatType>(type.getElementType()))
    return emitOpError("buffer must have a floating-point type, got ")
           << type.getElementType();
  return success();
}

LogicalResult
LoadBufferOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto buffer = symbolTable.lookupNearestSymbolFrom<BufferOp>(*this, getBufferAttr());
  if (!buffer)
    return emitOpError("'") << getBuffer() << "' does not name a graph.buffer";
  if (buffer.getType() != getType())
    return emitOpError("result type ")
           << getType() << " does not match buffer type " << buffer.getType();
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

LogicalResult CastOp::verify() {
  if (getInput().getType().getShape() != getType().getShape())
    return emitOpError("result shape must equal input shape");
  return success();
}

namespace {
/// Constants with more elements than this (and not a splat) are cast at run
/// time: folding would copy them at compile time for one launch saved.
constexpr int64_t kMaxFoldedCastElements = 4096;

/// `v` as the runtime's cast makes it (runtime/src/kernels/elementwise.cc):
/// rounded to nearest even into `to`, overflow to infinity, subnormals kept.
/// None where a fold might differ from it: a NaN (whose payload the runtime
/// keeps its own way), an integer beyond 2^53 (which it rounds twice,
/// through a double).
std::optional<APFloat> castElement(Attribute element, FloatType to) {
  bool inexact = false;
  if (auto f = llvm::dyn_cast<FloatAttr>(element)) {
    APFloat v = f.getValue();
    if (v.isNaN())
      return std::nullopt;
    v.convert(to.getFloatSemantics(), APFloat::rmNearestTiesToEven, &inexact);
    return v;
  }
  auto i = llvm::dyn_cast<IntegerAttr>(element);
  if (!i)
    return std::nullopt;
  const bool isUnsigned = i.getType().isUnsignedInteger() || i.getType().isInteger(1);
  APInt value = i.getValue();
  const APInt magnitude = isUnsigned || !value.isNegative() ? value : -value;
  if (magnitude.getActiveBits() > 53)
    return std::nullopt;
  APFloat v(to.getFloatSemantics());
  v.convertFromAPInt(value, /*isSigned=*/!isUnsigned, APFloat::rmNearestTiesToEven);
  return v;
}
} // namespace

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  auto input = llvm::dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput());
  auto to = llvm::dyn_cast<FloatType>(getType().getElementType());
  if (!input || !to || (!input.isSplat() && input.getNumElements() > kMaxFoldedCastElements))
    return {};
  // One value for a splat (DenseElementsAttr::get makes a splat of it).
  SmallVector<Attribute> elements;
  if (input.isSplat())
    elements.push_back(input.getSplatValue<Attribute>());
  else
    llvm::append_range(elements, input.getValues<Attribute>());
  SmallVector<APFloat> values;
  for (Attribute element : elements) {
    std::optional<APFloat> v = castElement(element, to);
    if (!v)
      return {};
    values.push_back(*v);
  }
  return DenseElementsAttr::get(getType(), values);
}

LogicalResult DropoutOp::verify() {
  double ratio = getRatio().convertToDouble();
  if (!(ratio >= 0.0 && ratio < 1.0))
    return emitOpError("ratio must be in [0, 1), got ")
           << getRatio().convertToDouble();
  return success();
}

//===----------------------------------------------------------------------===//
// Normalizations
//===----------------------------------------------------------------------===//

LogicalResult zeroc::graph::verifyAxis(Operation *op, int64_t axis, int64_t rank) {
  if (axis < 0 || axis >= rank)
    return op->emitOpError("axis ")
           << axis << " is out of range for rank " << rank;
  return success();
}

LogicalResult SoftmaxOp::verify() {
  return verifyAxis(*this, getAxis(), getType().getRank());
}

LogicalResult LogSoftmaxOp::verify() {
  return verifyAxis(*this, getAxis(), getType().getRank());
}

LogicalResult SoftmaxGradOp::verify() {
  return verifyAxis(*this, getAxis(), getType().getRank());
}

LogicalResult LayerNormOp::verify() {
  auto type = getInput().getType();
  if (failed(verifyAxis(*this, getAxis(), type.getRank())))
    return failure();
  ArrayRef<int64_t> normalized = type.getShape().drop_front(getAxis());
  auto check = [&](Value v, StringRef what) -> LogicalResult {
    auto t = llvm::cast<RankedTensorType>(v.getType());
    if (t.getShape() != normalized)
      return emitOpError(what) << " shape must equal the normalized dims";
    if (t.getElementType() != type.getElementType())
      return emitOpError(what) << " element type must match the input";
    return success();
  };
  if (failed(check(getScale(), "scale")))
    return failure();
  if (getBias() && failed(check(getBias(), "bias")))
    return failure();
  if (!(getEpsilon().convertToDouble() > 0.0))
    return emitOpError("epsilon must be positive");
  if (!std::isfinite(getEpsilon().convertToDouble()))
    return emitOpError("epsilon must be finite");
  return success();
}

LogicalResult GemmOp::verify() {
  for (auto [name, v] : {std::pair{"alpha", getAlpha()}, {"beta", getBeta()}})
    if (!v.isFinite())
      return emitOpError(name) << " must be finite, got "
                               << (v.isNaN() ? "nan" : "inf");
  return success();
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  if (getInput().getType().getNumElements() != getType().getNumElements())
    return emitOpError("element count changes from ")
           << getInput().getType().getNumElements() << " to "
           << getType().getNumElements();
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto inner = getInput().getDefiningOp<ReshapeOp>()) {
    // reshape(reshape(x)) is reshape(x), or x when the shapes agree.
    getInputMutable().assign(inner.getInput());
    if (getInput().getType() == getType())
      return getInput();
    return getResult();
  }
  if (auto elements = llvm::dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput()))
    return elements.reshape(getType());
  return {};
}

LogicalResult ExpandOp::verify() {
  auto in = getInput().getType();
  FailureOr<SmallVector<int64_t>> b =
      broadcastShapes(in.getShape(), getType().getShape());
  if (failed(b) || ArrayRef<int64_t>(*b) != getType().getShape())
    return emitOpError("input shape does not broadcast to the result shape");
  return success();
}

LogicalResult TriluOp::verify() {
  if (getType().getRank() < 2)
    return emitOpError("input must have rank >= 2");
  return success();
}

//===----------------------------------------------------------------------===//
// Gradient ops
//===----------------------------------------------------------------------===//

bool UnaryGradOp::readsInput(StringRef kind) {
  return llvm::is_contained({"relu", "erf", "log", "cos", "sin", "abs", "gelu",
                             "gelu_tanh"},
                            kind);
}

bool UnaryGradOp::readsOutput(StringRef kind) {
  return llvm::is_contained({"sqrt", "reciprocal", "tanh", "sigmoid", "exp"}, kind);
}

void UnaryGradOp::build(OpBuilder &b, OperationState &state, Value x, Value y,
                        Value grad, StringRef kind) {
  build(b, state, grad.getType(), readsInput(kind) ? x : Value(),
        readsOutput(kind) ? y : Value(), grad, b.getStringAttr(kind));
}

void UnaryGradOp::print(OpAsmPrinter &p) {
  p << " " << getGrad();
  if (getX())
    p << ", x = " << getX();
  if (getY())
    p << ", y = " << getY();
  p.printOptionalAttrDict((*this)->getAttrs(), {getOperandSegmentSizesAttrName()});
  p << " : " << getType();
}

ParseResult UnaryGradOp::parse(OpAsmParser &parser, OperationState &result) {
  OpAsmParser::UnresolvedOperand grad;
  std::optional<OpAsmParser::UnresolvedOperand> x, y;
  if (parser.parseOperand(grad))
    return failure();
  while (succeeded(parser.parseOptionalComma())) {
    StringRef name;
    OpAsmParser::UnresolvedOperand v;
    SMLoc at = parser.getCurrentLocation();
    if (parser.parseKeyword(&name) || parser.parseEqual() || parser.parseOperand(v))
      return failure();
    std::optional<OpAsmParser::UnresolvedOperand> &slot = name == "x" ? x : y;
    if ((name != "x" && name != "y") || slot)
      return parser.emitError(at, "expected 'x = ' or 'y = ' once each");
    slot = v;
  }
  Type type;
  if (parser.parseOptionalAttrDict(result.attributes) || parser.parseColonType(type))
    return failure();
  for (const std::optional<OpAsmParser::UnresolvedOperand> &v : {x, y})
    if (v && parser.resolveOperand(*v, type, result.operands))
      return failure();
  if (parser.resolveOperand(grad, type, result.operands))
    return failure();
  result.addAttribute(getOperandSegmentSizesAttrName(result.name),
                      parser.getBuilder().getDenseI32ArrayAttr(
                          {x ? 1 : 0, y ? 1 : 0, 1}));
  result.addTypes(type);
  return success();
}

LogicalResult UnaryGradOp::verify() {
  // ODS checks the optional groups; generic IR may still leave out grad.
  if (getODSOperandIndexAndLength(2).second != 1)
    return emitOpError("needs exactly one gradient operand");
  StringRef kind = getOp();
  if (getGrad().getType() != getType())
    return emitOpError("gradient has type ") << getGrad().getType()
                                             << ", its result " << getType();
  if (kind != "neg" && !readsInput(kind) && !readsOutput(kind))
    return emitOpError("unknown unary op '") << kind << "'";
  auto check = [&](Value v, bool reads, StringRef what) -> LogicalResult {
    if (reads && !v)
      return emitOpError("'") << kind << "' reads the forward " << what
                              << ", which is missing";
    if (!reads && v)
      return emitOpError("'") << kind << "' does not read the forward " << what
                              << "; leave it out";
    if (v && v.getType() != getType())
      return emitOpError("forward ") << what << " has type " << v.getType()
                                     << ", not the gradient's " << getType();
    return success();
  };
  return failure(failed(check(getX(), readsInput(kind), "input x")) ||
                 failed(check(getY(), readsOutput(kind), "output y")));
}

LogicalResult SumToOp::verify() {
  ArrayRef<int64_t> in = getInput().getType().getShape();
  FailureOr<SmallVector<int64_t>> b = broadcastShapes(getType().getShape(), in);
  if (failed(b) || ArrayRef<int64_t>(*b) != in)
    return emitOpError("result shape does not broadcast to the input shape");
  return success();
}

OpFoldResult SumToOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

/// A gather's padding_idx (an embedding row without gradient): axis 0 and
/// a row of the gathered data.
static LogicalResult verifyPaddingIdx(Operation *op, std::optional<int64_t> pad,
                                      int64_t axis, RankedTensorType data) {
  if (!pad)
    return success();
  if (axis != 0)
    return op->emitOpError("padding_idx needs axis 0, not ") << axis;
  if (data.getRank() < 1 || *pad < 0 || *pad >= data.getDimSize(0))
    return op->emitOpError("padding_idx ")
           << *pad << " is not a row of " << data;
  return success();
}

LogicalResult GatherOp::verify() {
  return verifyPaddingIdx(*this, getPaddingIdx(), getAxis(),
                          llvm::cast<RankedTensorType>(getData().getType()));
}

LogicalResult GatherGradOp::verify() {
  auto data = getType();
  Type gradElement = getGrad().getType().getElementType(), element = data.getElementType();
  if (element != gradElement && !(element.isF32() && (gradElement.isF16() || gradElement.isBF16())))
    return emitOpError("result element type ") << element << " is neither grad's (" << gradElement
                                               << ") nor f32 for an f16 or bf16 grad";
  int64_t axis = getAxis();
  if (axis < 0 || axis >= data.getRank())
    return emitOpError("axis ") << axis << " is out of range for rank "
                                << data.getRank();
  if (failed(verifyPaddingIdx(*this, getPaddingIdx(), axis, data)))
    return failure();
  SmallVector<int64_t> expected(data.getShape().take_front(axis));
  llvm::append_range(expected, getIndices().getType().getShape());
  llvm::append_range(expected, data.getShape().drop_front(axis + 1));
  if (getGrad().getType().getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("grad shape does not match gathering the result type");
  return success();
}

LogicalResult SliceGradOp::verify() {
  SmallVector<Type> inferred;
  NamedAttrList attrs;
  attrs.set("starts", getStartsAttr());
  attrs.set("ends", getEndsAttr());
  attrs.set("steps", getStepsAttr());
  if (failed(SliceOp::inferReturnTypes(getContext(), getLoc(), {getResult()},
                                       attrs.getDictionary(getContext()),
                                       nullptr, {}, inferred)))
    return failure();
  if (inferred[0] != getGrad().getType())
    return emitOpError("grad type ")
           << getGrad().getType() << " does not match slicing the result: "
           << inferred[0];
  return success();
}

#define GET_OP_CLASSES
#include "zeroc/Dialect/Graph/GraphOps.cpp.inc"
