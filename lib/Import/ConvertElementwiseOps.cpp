//===- ConvertElementwiseOps.cpp - masks, float math, Max/Min, Clip, Gelu -===//
//
// Less, LessOrEqual, Greater, GreaterOrEqual, And, Or, Xor, Not, IsNaN,
// IsInf, Cos, Sin, Abs, Sign, Floor, Ceil, Round, Max, Min, Clip, Gelu and
// CastLike. Every op folds on the host when all its inputs are constants
// (integer operands of comparisons must be exact in a double, |x| <= 2^53);
// otherwise it becomes the graph op of GraphElementwiseOps.td. Variadic
// Max/Min become a left-to-right chain of binary ops; Clip with constant
// bounds is graph.clip, with computed bounds graph.max/graph.min.
//
//===----------------------------------------------------------------------===//

#include "NodeConverter.h"

#include "zeroc/Dialect/Graph/GraphOps.h"

#include <cmath>
#include <map>

using namespace mlir;

namespace zeroc::onnximport {

namespace {

using TP = onnx::TensorProto;

std::vector<int64_t> broadcastAll(NodeConverter &c, int first, int count) {
  SmallVector<int64_t> shape;
  for (int i = first; i < first + count; ++i) {
    FailureOr<SmallVector<int64_t>> b =
        graph::broadcastShapes(shape, c.type(i).getShape());
    if (failed(b))
      throw ImportError("operand shapes are not broadcast-compatible");
    shape = *b;
  }
  return std::vector<int64_t>(shape.begin(), shape.end());
}

void requireSameElementType(NodeConverter &c, int count) {
  for (int i = 1; i < count; ++i)
    if (c.type(i).getElementType() != c.type(0).getElementType())
      throw ImportError("operands have different element types");
}

/// Integer host values compare exactly only up to 2^53 in a double.
void requireExactInts(const HostTensor &h) {
  if (h.isFloat())
    return;
  for (int64_t v : h.ints)
    if (v > (int64_t(1) << 53) || v < -(int64_t(1) << 53))
      throw ImportError("integer constant beyond 2^53 cannot be folded "
                        "exactly; the exporter's shape arithmetic overflowed");
}

bool isFloatInput(NodeConverter &c, int i) {
  return llvm::isa<FloatType>(c.type(i).getElementType());
}

//===--------------------------------------------------------------------===//
// Comparisons and logic
//===--------------------------------------------------------------------===//

bool convertCompare(NodeConverter &c) {
  static const std::map<std::string,
                        std::pair<const char *, bool (*)(double, double)>>
      ops = {{"Less", {"lt", [](double a, double b) { return a < b; }}},
             {"LessOrEqual", {"le", [](double a, double b) { return a <= b; }}},
             {"Greater", {"gt", [](double a, double b) { return a > b; }}},
             {"GreaterOrEqual",
              {"ge", [](double a, double b) { return a >= b; }}}};
  auto it = ops.find(c.node.op_type());
  if (it == ops.end())
    return false;
  requireSameElementType(c, 2);
  if (c.allConst()) {
    const HostTensor &a = *c.input(0).constant, &b = *c.input(1).constant;
    requireExactInts(a);
    requireExactInts(b);
    auto fn = it->second.second;
    c.setOutput(
        0, foldElementwise({&a, &b}, broadcastAll(c, 0, 2), TP::BOOL,
                           [fn](const double *v) { return fn(v[0], v[1]); }));
    return true;
  }
  c.setOutput(0, c.create(graph::CompareOp::getOperationName(),
                          {c.value(0), c.value(1)},
                          {c.named("predicate", c.gb.builder().getStringAttr(
                                                    it->second.first))})
                     ->getResult(0));
  return true;
}

bool convertLogic(NodeConverter &c) {
  const std::string &op = c.node.op_type();
  if (op != "And" && op != "Or" && op != "Xor" && op != "Not")
    return false;
  int arity = op == "Not" ? 1 : 2;
  for (int i = 0; i < arity; ++i)
    if (c.type(i).getElementType() != c.gb.builder().getI1Type())
      throw ImportError("operands must be bool tensors");
  if (c.allConst()) {
    std::vector<const HostTensor *> ins;
    for (int i = 0; i < arity; ++i)
      ins.push_back(c.input(i).constant.get());
    c.setOutput(0, foldElementwise(ins, broadcastAll(c, 0, arity), TP::BOOL,
                                   [op](const double *v) -> double {
                                     bool a = v[0] != 0;
                                     if (op == "Not")
                                       return !a;
                                     bool b = v[1] != 0;
                                     if (op == "And")
                                       return a && b;
                                     if (op == "Or")
                                       return a || b;
                                     return a != b;
                                   }));
    return true;
  }
  if (op == "Not") {
    Value in = c.value(0);
    c.setOutput(
        0, c.create(graph::NotOp::getOperationName(), {in}, {}, {in.getType()})
               ->getResult(0));
    return true;
  }
  std::string kind = op == "And" ? "and" : op == "Or" ? "or" : "xor";
  c.setOutput(0, c.create(graph::LogicalOp::getOperationName(),
                          {c.value(0), c.value(1)},
                          {c.named("op", c.gb.builder().getStringAttr(kind))})
                     ->getResult(0));
  return true;
}

bool convertIsNaNOrInf(NodeConverter &c) {
  const std::string &op = c.node.op_type();
  if (op != "IsNaN" && op != "IsInf")
    return false;
  if (!isFloatInput(c, 0))
    throw ImportError("input must be a floating-point tensor");
  bool pos = c.attrInt("detect_positive", 1) != 0;
  bool neg = c.attrInt("detect_negative", 1) != 0;
  std::vector<int64_t> dims = shapeVector(c.type(0));
  if (c.isConst(0) || (op == "IsInf" && !pos && !neg)) {
    // IsInf detecting neither sign is the constant false mask.
    const HostTensor *in = c.isConst(0) ? c.input(0).constant.get() : nullptr;
    HostTensor zero;
    zero.dtype = TP::BOOL;
    zero.dims = dims;
    zero.resize(checkedNumElements(dims));
    if (!in)
      in = &zero;
    c.setOutput(
        0,
        foldElementwise({in}, dims, TP::BOOL, [&](const double *v) -> double {
          if (op == "IsNaN")
            return std::isnan(v[0]);
          return std::isinf(v[0]) && ((v[0] > 0 && pos) || (v[0] < 0 && neg));
        }));
    return true;
  }
  RankedTensorType mask =
      RankedTensorType::get(c.type(0).getShape(), c.gb.builder().getI1Type());
  if (op == "IsNaN") {
    c.setOutput(0, c.create(graph::IsNaNOp::getOperationName(), {c.value(0)},
                            {}, {mask})
                       ->getResult(0));
    return true;
  }
  OpBuilder &b = c.gb.builder();
  c.setOutput(0, c.create(graph::IsInfOp::getOperationName(), {c.value(0)},
                          {c.named("detect_positive", b.getBoolAttr(pos)),
                           c.named("detect_negative", b.getBoolAttr(neg))},
                          {mask})
                     ->getResult(0));
  return true;
}

//===--------------------------------------------------------------------===//
// Float math
//===--------------------------------------------------------------------===//

double signOf(double x) { return (0.0 < x) - (x < 0.0); }

bool convertMath(NodeConverter &c) {
  struct Math {
    StringRef name;
    double (*fn)(double);
  };
  static const std::map<std::string, Math> ops = {
      {"Cos",
       {graph::CosOp::getOperationName(),
        [](double x) { return std::cos(x); }}},
      {"Sin",
       {graph::SinOp::getOperationName(),
        [](double x) { return std::sin(x); }}},
      {"Abs",
       {graph::AbsOp::getOperationName(),
        [](double x) { return std::fabs(x); }}},
      {"Sign", {graph::SignOp::getOperationName(), signOf}},
      {"Floor",
       {graph::FloorOp::getOperationName(),
        [](double x) { return std::floor(x); }}},
      {"Ceil",
       {graph::CeilOp::getOperationName(),
        [](double x) { return std::ceil(x); }}},
      {"Round", {graph::RoundOp::getOperationName(), [](double x) {
                   return std::nearbyint(x);
                 }}}};
  auto it = ops.find(c.node.op_type());
  if (it == ops.end())
    return false;
  if (c.isConst(0)) {
    const HostTensor &in = *c.input(0).constant;
    if (!in.isFloat() && c.node.op_type() != "Abs" &&
        c.node.op_type() != "Sign")
      throw ImportError("input must be a floating-point tensor");
    requireExactInts(in);
    auto fn = it->second.fn;
    c.setOutput(0, foldElementwise({&in}, in.dims, in.dtype,
                                   [fn](const double *v) { return fn(v[0]); }));
    return true;
  }
  if (!isFloatInput(c, 0))
    throw ImportError("input must be a floating-point tensor (integer " +
                      c.node.op_type() + " is folded only on constants)");
  Value in = c.value(0);
  c.setOutput(
      0, c.create(it->second.name, {in}, {}, {in.getType()})->getResult(0));
  return true;
}

bool convertGelu(NodeConverter &c) {
  if (c.node.op_type() != "Gelu")
    return false;
  if (c.gb.opsetVersion() < 20)
    throw ImportError("Gelu is an opset-20 op but the model imports opset " +
                      std::to_string(c.gb.opsetVersion()) +
                      " of the default domain");
  std::string approx = c.attrString("approximate", "none");
  if (approx != "none" && approx != "tanh")
    throw ImportError("attribute 'approximate' must be \"none\" or \"tanh\"");
  if (!isFloatInput(c, 0))
    throw ImportError("input must be a floating-point tensor");
  if (c.isConst(0)) {
    const HostTensor &in = *c.input(0).constant;
    bool tanhForm = approx == "tanh";
    c.setOutput(
        0,
        foldElementwise({&in}, in.dims, in.dtype, [tanhForm](const double *v) {
          double x = v[0];
          if (tanhForm)
            return 0.5 * x *
                   (1 + std::tanh(0.79788456080286535588 *
                                  (x + 0.044715 * x * x * x)));
          return 0.5 * x * (1 + std::erf(x * 0.70710678118654752440));
        }));
    return true;
  }
  Value in = c.value(0);
  c.setOutput(0, c.create(graph::GeluOp::getOperationName(), {in},
                          {c.named("approximate",
                                   c.gb.builder().getStringAttr(approx))},
                          {in.getType()})
                     ->getResult(0));
  return true;
}

//===--------------------------------------------------------------------===//
// Max, Min, Clip
//===--------------------------------------------------------------------===//

double maxOf(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : (a < b ? b : a);
}
double minOf(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : (b < a ? b : a);
}

bool convertMaxMin(NodeConverter &c) {
  const std::string &op = c.node.op_type();
  if (op != "Max" && op != "Min")
    return false;
  const bool isMax = op == "Max";
  const int n = c.node.input_size();
  if (n < 1)
    throw ImportError("needs at least one input");
  requireSameElementType(c, n);
  if (c.type(0).getElementType() == c.gb.builder().getI1Type())
    throw ImportError("operands must be numeric tensors, not bool");
  if (n == 1) {
    c.forward(0, 0);
    return true;
  }
  if (c.allConst()) {
    std::vector<const HostTensor *> ins;
    for (int i = 0; i < n; ++i) {
      ins.push_back(c.input(i).constant.get());
      requireExactInts(*ins.back());
    }
    c.setOutput(0, foldElementwise(ins, broadcastAll(c, 0, n), ins[0]->dtype,
                                   [n, isMax](const double *v) {
                                     double r = v[0];
                                     for (int i = 1; i < n; ++i)
                                       r = isMax ? maxOf(r, v[i])
                                                 : minOf(r, v[i]);
                                     return r;
                                   }));
    return true;
  }
  StringRef name = isMax ? graph::MaxOp::getOperationName()
                         : graph::MinOp::getOperationName();
  Value acc = c.value(0);
  for (int i = 1; i < n; ++i)
    acc = c.create(name, {acc, c.value(i)}, {})->getResult(0);
  c.setOutput(0, acc);
  return true;
}

/// A Clip bound that is a host constant with one element, as a double.
std::optional<double> constBound(NodeConverter &c, int i, const char *what) {
  const HostTensor &h = *c.input(i).constant;
  if (h.numElements() != 1)
    throw ImportError(std::string("Clip's ") + what +
                      " must be a scalar (one element)");
  double v = h.getAsDouble(0);
  if (std::isnan(v))
    throw ImportError(std::string("Clip's ") + what +
                      " is NaN; a bound must be a number (or left out)");
  return v;
}

bool convertClip(NodeConverter &c) {
  if (c.node.op_type() != "Clip")
    return false;
  const bool hasMin = c.hasInput(1), hasMax = c.hasInput(2);
  for (int i = 1; i <= 2; ++i)
    if (c.hasInput(i) &&
        c.type(i).getElementType() != c.type(0).getElementType())
      throw ImportError("bounds must have the input's element type");
  if (!hasMin && !hasMax) {
    c.forward(0, 0);
    return true;
  }
  const bool constBounds =
      (!hasMin || c.isConst(1)) && (!hasMax || c.isConst(2));
  if (constBounds) {
    std::optional<double> lo = hasMin ? constBound(c, 1, "min") : std::nullopt;
    std::optional<double> hi = hasMax ? constBound(c, 2, "max") : std::nullopt;
    if (c.isConst(0)) {
      const HostTensor &in = *c.input(0).constant;
      requireExactInts(in);
      c.setOutput(0, foldElementwise({&in}, in.dims, in.dtype,
                                     [lo, hi](const double *v) {
                                       double x = v[0];
                                       if (std::isnan(x))
                                         return x;
                                       if (lo && x < *lo)
                                         x = *lo;
                                       if (hi && x > *hi)
                                         x = *hi;
                                       return x;
                                     }));
      return true;
    }
    if (isFloatInput(c, 0)) {
      OpBuilder &b = c.gb.builder();
      SmallVector<NamedAttribute> attrs;
      if (lo)
        attrs.push_back(c.named("min", b.getF64FloatAttr(*lo)));
      if (hi)
        attrs.push_back(c.named("max", b.getF64FloatAttr(*hi)));
      Value in = c.value(0);
      c.setOutput(0, c.create(graph::ClipOp::getOperationName(), {in}, attrs,
                              {in.getType()})
                         ->getResult(0));
      return true;
    }
  }
  // Computed bounds (or integer input): min(max(x, lo), hi) with the bounds
  // broadcast as scalars.
  for (int i = 1; i <= 2; ++i)
    if (c.hasInput(i) && c.type(i).getNumElements() != 1)
      throw ImportError("Clip's bounds must be scalars");
  Value acc = c.value(0);
  auto scalarBound = [&](int i) -> Value {
    Value v = c.value(i);
    auto t = llvm::cast<RankedTensorType>(v.getType());
    if (t.getRank() == 0)
      return v;
    return c
        .create(graph::ReshapeOp::getOperationName(), {v}, {},
                {RankedTensorType::get({}, t.getElementType())})
        ->getResult(0);
  };
  if (hasMin)
    acc = c.create(graph::MaxOp::getOperationName(), {acc, scalarBound(1)}, {})
              ->getResult(0);
  if (hasMax)
    acc = c.create(graph::MinOp::getOperationName(), {acc, scalarBound(2)}, {})
              ->getResult(0);
  c.setOutput(0, acc);
  return true;
}

bool convertCastLike(NodeConverter &c) {
  if (c.node.op_type() != "CastLike")
    return false;
  convertCastTo(c, c.dtype(1));
  return true;
}

} // namespace

bool convertElementwiseOp(NodeConverter &c) {
  return convertCompare(c) || convertLogic(c) || convertIsNaNOrInf(c) ||
         convertMath(c) || convertGelu(c) || convertMaxMin(c) ||
         convertClip(c) || convertCastLike(c);
}

} // namespace zeroc::onnximport
