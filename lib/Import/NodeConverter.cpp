//===- NodeConverter.cpp - node accessors and op creation ------------------===//
#include "NodeConverter.h"
#include "OnnxModelLoader.h"

#include "mlir/IR/Verifier.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

using namespace mlir;

namespace zeroc::onnximport {

namespace {
const std::set<std::string> &supportedOpTypes() {
  static const std::set<std::string> ops = {
      "Gemm", "MatMul", "Add", "Sub", "Mul", "Div", "Pow", "Sqrt",
      "Reciprocal", "Neg", "Relu", "Tanh", "Sigmoid", "Erf", "Exp", "Log",
      "ReduceMean", "ReduceSum", "ReduceMax", "Softmax", "LogSoftmax",
      "LayerNormalization", "Gather", "Reshape", "Transpose", "Unsqueeze",
      "Squeeze", "Split", "Concat", "Slice", "Trilu", "Equal", "Where", "Cast",
      "Constant", "ConstantOfShape", "Shape", "Expand", "Identity", "Dropout",
      "SoftmaxCrossEntropyLoss",
      // Sequences, resolved at import (ConvertSequenceOps.cpp).
      "SplitToSequence", "SequenceAt", "SequenceConstruct",
      "ConcatFromSequence", "SequenceLength", "SequenceEmpty",
      "SequenceInsert", "SequenceErase",
      // Convolution, pooling, batch norm (ConvertConvOps.cpp).
      "Conv", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool",
      "BatchNormalization",
      // ConvertMovementOps.cpp
      "Pad", "Tile", "Flatten", "GatherElements", "GatherND", "ScatterND",
      "ScatterElements", "CumSum",
      // ConvertFoldOnlyOps.cpp
      "Range", "NonZero", "OneHot", "ReduceMin", "ReduceProd",
      // ConvertElementwiseOps.cpp
      "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or", "Xor",
      "Not", "IsNaN", "IsInf", "Cos", "Sin", "Abs", "Sign", "Floor", "Ceil",
      "Round", "Max", "Min", "Clip", "Gelu", "CastLike"};
  return ops;
}
} // namespace

double shortestDouble(float f) {
  char buf[32];
  for (int precision = 1; precision <= 9; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, static_cast<double>(f));
    double d = std::strtod(buf, nullptr);
    if (static_cast<float>(d) == f)
      return d;
  }
  return f;
}

bool isSupportedOpType(const std::string &opType) {
  return supportedOpTypes().count(opType) != 0;
}

NodeConverter::NodeConverter(GraphBuilder &gb, const onnx::NodeProto &node,
                             int index)
    : node(node), gb(gb),
      loc(NameLoc::get(
          StringAttr::get(&gb.getContext(),
                          node.name().empty() ? node.op_type() + "_" + std::to_string(index)
                                              : node.name()),
          FileLineColLoc::get(&gb.getContext(), gb.getPath(), 0, 0))),
      index(index) {}

const onnx::AttributeProto *NodeConverter::attr(const char *name) const {
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

int64_t NodeConverter::attrInt(const char *name, int64_t dflt) const {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return dflt;
  if (a->type() != onnx::AttributeProto::INT)
    throw ImportError(std::string("attribute '") + name + "' must be an int");
  return a->i();
}

float NodeConverter::attrFloat(const char *name, float dflt) const {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return dflt;
  if (a->type() != onnx::AttributeProto::FLOAT)
    throw ImportError(std::string("attribute '") + name + "' must be a float");
  if (!std::isfinite(a->f()))
    throw ImportError(std::string("attribute '") + name + "' is " +
                      (std::isnan(a->f()) ? "NaN" : "infinite") +
                      "; it must be a finite number (re-export the model "
                      "with a finite value)");
  return a->f();
}

float NodeConverter::attrFloatValue(const char *name, float dflt) const {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return dflt;
  if (a->type() != onnx::AttributeProto::FLOAT)
    throw ImportError(std::string("attribute '") + name + "' must be a float");
  return a->f();
}

std::string NodeConverter::attrString(const char *name,
                                      const std::string &dflt) const {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return dflt;
  if (a->type() != onnx::AttributeProto::STRING)
    throw ImportError(std::string("attribute '") + name + "' must be a string");
  return a->s();
}

std::optional<std::vector<int64_t>>
NodeConverter::attrInts(const char *name) const {
  const onnx::AttributeProto *a = attr(name);
  if (!a)
    return std::nullopt;
  if (a->type() != onnx::AttributeProto::INTS)
    throw ImportError(std::string("attribute '") + name + "' must be ints");
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

bool NodeConverter::hasInput(int i) const {
  return i < node.input_size() && !node.input(i).empty();
}

Entry &NodeConverter::input(int i) {
  if (!hasInput(i))
    throw ImportError("missing required input #" + std::to_string(i));
  return gb.lookup(node.input(i));
}

Value NodeConverter::value(int i) {
  return gb.materialize(input(i), loc, node.input(i));
}

bool NodeConverter::allConst() {
  for (int i = 0; i < node.input_size(); ++i)
    if (hasInput(i) && !isConst(i))
      return false;
  return true;
}

const HostTensor &NodeConverter::constInput(int i, const char *what) {
  Entry &e = input(i);
  if (!e.constant)
    throw ImportError(std::string("input '") + node.input(i) + "' (" + what +
                      ") must be a compile-time constant; zeroc needs static "
                      "shapes");
  return *e.constant;
}

std::vector<int64_t> NodeConverter::constInts(int i, const char *what) {
  const HostTensor &h = constInput(i, what);
  if (h.isFloat() || h.dims.size() > 1)
    throw ImportError(std::string("input '") + node.input(i) + "' (" + what +
                      ") must be a 1-D integer tensor");
  return h.ints;
}

void NodeConverter::setOutput(int i, Value v) {
  if (i >= node.output_size() || node.output(i).empty())
    return;
  Entry e;
  e.value = v;
  e.type = llvm::cast<RankedTensorType>(v.getType());
  gb.valueTable()[node.output(i)] = e;
}

void NodeConverter::setOutput(int i, HostTensor h) {
  if (i >= node.output_size() || node.output(i).empty())
    return;
  Entry e;
  e.type = gb.tensorType(h.dims, h.dtype);
  gb.chargeConstant(node.output(i), h.numElements(), 8);
  e.constant = std::make_shared<HostTensor>(std::move(h));
  gb.valueTable()[node.output(i)] = e;
}

void NodeConverter::unmodeledOutputs(int from, const std::string &why) {
  for (int i = from; i < node.output_size(); ++i)
    if (!node.output(i).empty())
      gb.markUnmodeled(node.output(i), "is output #" + std::to_string(i) +
                                           " of " + describeNode(node, index) +
                                           ", which zeroc does not support (" +
                                           why + ")");
}

int64_t NodeConverter::normAxis(int64_t axis, int64_t rank) const {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    throw ImportError("axis " + std::to_string(axis) +
                      " is out of range for rank " + std::to_string(rank));
  return a;
}

Operation *NodeConverter::create(StringRef opName, ValueRange operands,
                                 ArrayRef<NamedAttribute> attrs,
                                 TypeRange explicitTypes) {
  MLIRContext *ctx = &gb.getContext();
  OperationState state(loc, opName);
  state.addOperands(operands);
  state.addAttributes(attrs);
  if (explicitTypes.empty()) {
    std::optional<RegisteredOperationName> info =
        RegisteredOperationName::lookup(opName, ctx);
    auto *iface = info ? info->getInterface<InferTypeOpInterface>() : nullptr;
    if (!iface)
      throw ImportError("internal: " + opName.str() + " cannot infer its type");
    SmallVector<Type> types;
    if (failed(iface->inferReturnTypes(
            ctx, loc, state.operands, state.attributes.getDictionary(ctx),
            state.getRawProperties(), state.regions, types)))
      throw ImportError(gb.takeDiagnostic());
    state.addTypes(types);
  } else {
    state.addTypes(explicitTypes);
  }
  for (Type t : state.types)
    if (auto rt = llvm::dyn_cast<RankedTensorType>(t))
      checkedNumElements(std::vector<int64_t>(rt.getShape().begin(),
                                              rt.getShape().end()));
  Operation *op = gb.builder().create(state);
  if (failed(verify(op))) {
    std::string msg = gb.takeDiagnostic();
    op->erase();
    throw ImportError(msg);
  }
  return op;
}

void convertNode(GraphBuilder &gb, const onnx::NodeProto &node, int index) {
  // An exporter's merge of equal initializers, undone in declareParams.
  if (node.op_type() == "Identity" && node.output_size() == 1 &&
      gb.isUnmerged(node.output(0)))
    return;
  NodeConverter c(gb, node, index);
  if (convertSequenceOp(c) || convertShapeOp(c) || convertComputeOp(c) ||
      convertConvOp(c) || convertMovementOp(c) || convertFoldOnlyOp(c) ||
      convertElementwiseOp(c))
    return;
  throw ImportError("unsupported op type");
}

} // namespace zeroc::onnximport
