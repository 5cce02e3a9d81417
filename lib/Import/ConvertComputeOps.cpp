//===- ConvertComputeOps.cpp - arithmetic and NN ONNX ops ------------------===//
//
// Elementwise arithmetic (folded when all inputs are constants), contractions,
// reductions, normalizations, dropout and the cross-entropy loss.
//
//===----------------------------------------------------------------------===//

#include "NodeConverter.h"
#include "OpVersions.h"

#include "zeroc/Dialect/Graph/GraphOps.h"

#include <cmath>

using namespace mlir;

namespace zeroc::onnximport {

namespace {

using TP = onnx::TensorProto;

/// An integer fold's operand or result: host folding computes in doubles,
/// which hold every integer up to 2^53 exactly; beyond that (or outside
/// the dtype) a fold would be silently wrong, so it is an error.
double exactInt(double v, int32_t dtype) {
  constexpr double kExact = 9007199254740992.0; // 2^53
  double lo = -kExact, hi = kExact;
  if (dtype == TP::INT32)
    lo = -2147483648.0, hi = 2147483647.0;
  else if (dtype == TP::INT8)
    lo = -128.0, hi = 127.0;
  if (!(v >= lo && v <= hi))
    throw ImportError("integer constant arithmetic leaves the range zeroc "
                      "folds exactly (" +
                      std::string(dtype == TP::INT64 ? "|x| <= 2^53"
                                                     : "the dtype's range") +
                      "); the exporter's shape arithmetic overflowed");
  return v;
}

double binaryFold(const std::string &op, double a, double b, bool isInt) {
  if (op == "Add") return a + b;
  if (op == "Sub") return a - b;
  if (op == "Mul") return a * b;
  if (op == "Pow") return std::pow(a, b);
  // Div
  if (isInt) {
    if (b == 0)
      throw ImportError("integer division by zero in a constant");
    return std::trunc(a / b);
  }
  return a / b;
}

bool convertBinary(NodeConverter &c) {
  static const std::map<std::string, StringRef> ops = {
      {"Add", graph::AddOp::getOperationName()},
      {"Sub", graph::SubOp::getOperationName()},
      {"Mul", graph::MulOp::getOperationName()},
      {"Div", graph::DivOp::getOperationName()},
      {"Pow", graph::PowOp::getOperationName()}};
  auto it = ops.find(c.node.op_type());
  if (it == ops.end())
    return false;
  const std::string &op = c.node.op_type();
  Type lhsElem = c.type(0).getElementType();
  if (op != "Pow" && lhsElem != c.type(1).getElementType())
    throw ImportError("operands have different element types");
  if (c.allConst()) {
    FailureOr<SmallVector<int64_t>> out =
        graph::broadcastShapes(c.type(0).getShape(), c.type(1).getShape());
    if (failed(out))
      throw ImportError("operand shapes are not broadcast-compatible");
    const HostTensor &a = *c.input(0).constant, &b = *c.input(1).constant;
    bool isInt = !a.isFloat();
    c.setOutput(0, foldElementwise({&a, &b}, {out->begin(), out->end()}, a.dtype,
                                   [&](const double *v) {
                                     if (!isInt)
                                       return binaryFold(op, v[0], v[1], false);
                                     return exactInt(
                                         binaryFold(op, exactInt(v[0], a.dtype),
                                                    exactInt(v[1], a.dtype), true),
                                         a.dtype);
                                   }));
    return true;
  }
  Value lhs = c.value(0), rhs = c.value(1);
  if (op == "Pow" && c.type(1).getElementType() != lhsElem)
    rhs = c.create(graph::CastOp::getOperationName(), {rhs}, {},
                   {RankedTensorType::get(c.type(1).getShape(), lhsElem)})
              ->getResult(0);
  c.setOutput(0, c.create(it->second, {lhs, rhs}, {})->getResult(0));
  return true;
}

double erfOf(double x) { return std::erf(x); }

bool convertUnary(NodeConverter &c) {
  struct Unary {
    StringRef name;
    double (*fn)(double);
  };
  static const std::map<std::string, Unary> ops = {
      {"Neg", {graph::NegOp::getOperationName(), [](double x) { return -x; }}},
      {"Sqrt", {graph::SqrtOp::getOperationName(), [](double x) { return std::sqrt(x); }}},
      {"Reciprocal", {graph::ReciprocalOp::getOperationName(), [](double x) { return 1.0 / x; }}},
      {"Relu", {graph::ReluOp::getOperationName(), [](double x) { return x > 0 ? x : 0.0; }}},
      {"Tanh", {graph::TanhOp::getOperationName(), [](double x) { return std::tanh(x); }}},
      {"Sigmoid", {graph::SigmoidOp::getOperationName(), [](double x) { return 1.0 / (1.0 + std::exp(-x)); }}},
      {"Erf", {graph::ErfOp::getOperationName(), erfOf}},
      {"Exp", {graph::ExpOp::getOperationName(), [](double x) { return std::exp(x); }}},
      {"Log", {graph::LogOp::getOperationName(), [](double x) { return std::log(x); }}}};
  auto it = ops.find(c.node.op_type());
  if (it == ops.end())
    return false;
  if (c.isConst(0) && (c.input(0).constant->isFloat() || c.node.op_type() == "Neg")) {
    const HostTensor &in = *c.input(0).constant;
    auto fn = it->second.fn;
    const bool isInt = !in.isFloat();
    const int32_t dtype = in.dtype;
    c.setOutput(0, foldElementwise({&in}, in.dims, in.dtype,
                                   [=](const double *v) {
                                     return isInt ? exactInt(fn(exactInt(v[0], dtype)), dtype)
                                                  : fn(v[0]);
                                   }));
    return true;
  }
  if (!llvm::isa<FloatType>(c.type(0).getElementType()))
    throw ImportError("input must be a floating-point tensor");
  Value in = c.value(0);
  c.setOutput(0, c.create(it->second.name, {in}, {}, {in.getType()})->getResult(0));
  return true;
}

void convertGemm(NodeConverter &c) {
  OpBuilder &b = c.gb.builder();
  SmallVector<Value> operands{c.value(0), c.value(1)};
  if (c.hasInput(2))
    operands.push_back(c.value(2));
  c.setOutput(0, c.create(graph::GemmOp::getOperationName(), operands,
                          {c.named("alpha", b.getF64FloatAttr(shortestDouble(c.attrFloat("alpha", 1)))),
                           c.named("beta", b.getF64FloatAttr(shortestDouble(c.attrFloat("beta", 1)))),
                           c.named("transA", b.getBoolAttr(c.attrInt("transA", 0))),
                           c.named("transB", b.getBoolAttr(c.attrInt("transB", 0)))})
                     ->getResult(0));
}

void convertReduce(NodeConverter &c, StringRef opName) {
  int64_t rank = c.type(0).getRank();
  std::vector<int64_t> axes;
  // ReduceSum-13 and the other Reduce*-18 take axes as an input.
  bool axesFromInput = c.node.op_type() == "ReduceSum" ||
                       resolveOpVersion(c.node.op_type(), c.gb.opsetVersion()).since >= 18;
  if (axesFromInput && c.hasInput(1))
    axes = c.constInts(1, "axes");
  else if (auto a = c.attrInts("axes"))
    axes = *a;
  bool keep = c.attrInt("keepdims", 1) != 0;
  if (axes.empty()) {
    if (c.attrInt("noop_with_empty_axes", 0) != 0) {
      c.forward(0, 0);
      return;
    }
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  }
  for (int64_t &a : axes)
    a = c.normAxis(a, rank);
  llvm::sort(axes);
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    throw ImportError("axes repeat");
  c.setOutput(0, c.create(opName, {c.value(0)},
                          {c.named("axes", c.i64Array(axes)),
                           c.named("keepdims", c.gb.builder().getBoolAttr(keep))})
                     ->getResult(0));
}

void convertSoftmax(NodeConverter &c, StringRef opName) {
  Value in = c.value(0);
  int64_t axis = c.normAxis(c.attrInt("axis", -1), c.type(0).getRank());
  c.setOutput(0, c.create(opName, {in},
                          {c.named("axis", c.gb.builder().getI64IntegerAttr(axis))},
                          {in.getType()})
                     ->getResult(0));
}

void convertLayerNorm(NodeConverter &c) {
  Value in = c.value(0);
  int64_t axis = c.normAxis(c.attrInt("axis", -1), c.type(0).getRank());
  SmallVector<Value> operands{in, c.value(1)};
  if (c.hasInput(2))
    operands.push_back(c.value(2));
  c.unmodeledOutputs(1, "LayerNormalization's Mean and InvStdDev outputs");
  OpBuilder &b = c.gb.builder();
  c.setOutput(0, c.create(graph::LayerNormOp::getOperationName(), operands,
                          {c.named("axis", b.getI64IntegerAttr(axis)),
                           c.named("epsilon", b.getF64FloatAttr(shortestDouble(c.attrFloat("epsilon", 1e-5f))))},
                          {in.getType()})
                     ->getResult(0));
}

void convertDropout(NodeConverter &c) {
  double ratio = 0.5;
  if (c.hasInput(1)) {
    const HostTensor &r = c.constInput(1, "ratio");
    if (r.numElements() != 1)
      throw ImportError("ratio must be a scalar");
    ratio = r.getAsDouble(0);
    if (r.dtype == onnx::TensorProto::FLOAT)
      ratio = shortestDouble(static_cast<float>(ratio));
  }
  bool training = false;
  if (c.hasInput(2)) {
    const HostTensor &t = c.constInput(2, "training_mode");
    if (t.numElements() != 1)
      throw ImportError("training_mode must be a scalar");
    training = t.getAsDouble(0) != 0;
  }
  if (!(ratio >= 0 && ratio < 1))
    throw ImportError("ratio " + std::to_string(ratio) + " is outside [0, 1)");
  c.unmodeledOutputs(1, "Dropout's mask output");
  if (!training || ratio == 0) {
    c.forward(0, 0);
    return;
  }
  Value in = c.value(0);
  OpBuilder &b = c.gb.builder();
  c.setOutput(0, c.create(graph::DropoutOp::getOperationName(), {in},
                          {c.named("ratio", b.getF64FloatAttr(ratio)),
                           c.named("training", b.getBoolAttr(true))},
                          {in.getType()})
                     ->getResult(0));
}

void convertSoftmaxCrossEntropy(NodeConverter &c) {
  if (c.hasInput(2))
    throw ImportError("class weights are not supported");
  c.unmodeledOutputs(1, "SoftmaxCrossEntropyLoss's log_prob output");
  OpBuilder &b = c.gb.builder();
  SmallVector<NamedAttribute> attrs{
      c.named("reduction", b.getStringAttr(c.attrString("reduction", "mean")))};
  if (c.attr("ignore_index"))
    attrs.push_back(c.named("ignore_index",
                            b.getI64IntegerAttr(c.attrInt("ignore_index", 0))));
  c.setOutput(0, c.create(graph::SoftmaxCrossEntropyLossOp::getOperationName(),
                          {c.value(0), c.value(1)}, attrs)
                     ->getResult(0));
}

} // namespace

bool convertComputeOp(NodeConverter &c) {
  const std::string &op = c.node.op_type();
  if (convertBinary(c) || convertUnary(c))
    return true;
  if (op == "Gemm") convertGemm(c);
  else if (op == "MatMul")
    c.setOutput(0, c.create(graph::MatMulOp::getOperationName(),
                            {c.value(0), c.value(1)}, {})
                       ->getResult(0));
  else if (op == "ReduceSum") convertReduce(c, graph::ReduceSumOp::getOperationName());
  else if (op == "ReduceMean") convertReduce(c, graph::ReduceMeanOp::getOperationName());
  else if (op == "ReduceMax") convertReduce(c, graph::ReduceMaxOp::getOperationName());
  else if (op == "Softmax") convertSoftmax(c, graph::SoftmaxOp::getOperationName());
  else if (op == "LogSoftmax") convertSoftmax(c, graph::LogSoftmaxOp::getOperationName());
  else if (op == "LayerNormalization") convertLayerNorm(c);
  else if (op == "Dropout") convertDropout(c);
  else if (op == "SoftmaxCrossEntropyLoss") convertSoftmaxCrossEntropy(c);
  else return false;
  return true;
}

} // namespace zeroc::onnximport
