//===- GraphGradientsElementwise.cpp - rules of mask/math ops -------------===//
//
// Reverse-mode rules of the ops in GraphElementwiseOps.td. Masks
// (compare, logical, not, is_nan, is_inf) and the piecewise-constant ops
// (sign, floor, ceil, round) carry no gradient. max/min follow
// torch.maximum/minimum: the selected operand gets the gradient and a tie
// gives each operand half of it (NaN in either gives both the full
// gradient, as torch's where/masked_fill formula does).
//
//===----------------------------------------------------------------------===//

#include "zeroc/Dialect/Graph/GraphOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace zeroc::graph;

namespace {

RankedTensorType typeOf(Value v) {
  return llvm::cast<RankedTensorType>(v.getType());
}

Value scalarLike(OpBuilder &b, Location loc, Value like, double v) {
  auto t = RankedTensorType::get({}, typeOf(like).getElementType());
  return b.create<ConstantOp>(
      loc, DenseElementsAttr::get(t, b.getFloatAttr(t.getElementType(), v)));
}

Value sumToType(OpBuilder &b, Location loc, Value g, RankedTensorType target) {
  if (typeOf(g) == target)
    return g;
  return b.create<SumToOp>(loc, target, g);
}

LogicalResult noGradients(Operation *op, SmallVectorImpl<Value> &out) {
  out.append(op->getNumOperands(), Value());
  return success();
}

template <typename OpT>
LogicalResult unaryGradOf(OpT op, OpBuilder &b, ValueRange grads,
                          SmallVectorImpl<Value> &out, StringRef kind) {
  out.push_back(
      b.create<UnaryGradOp>(op.getLoc(), op.getInput(), op.getResult(), grads[0], kind));
  return success();
}

/// torch.maximum's rule (isMax) or torch.minimum's: the operand that lost
/// gets 0, a tie gives each half, otherwise (it won, or NaN) the gradient.
void maxMinGradients(Operation *op, Value lhs, Value rhs, bool isMax,
                     OpBuilder &b, Value g, ArrayRef<bool> needed,
                     SmallVectorImpl<Value> &out) {
  Location loc = op->getLoc();
  Value zero = scalarLike(b, loc, g, 0.0);
  Value tie = b.create<EqualOp>(loc, lhs, rhs);
  Value half = b.create<MulOp>(loc, g, scalarLike(b, loc, g, 0.5));
  Value shared = b.create<WhereOp>(loc, tie, half, g);
  auto lost = [&](Value self, Value other) {
    return b.create<CompareOp>(loc, self, other,
                               b.getStringAttr(isMax ? "lt" : "gt"));
  };
  auto grad = [&](Value self, Value other) -> Value {
    Value keep = b.create<WhereOp>(loc, lost(self, other), zero, shared);
    return sumToType(b, loc, keep, typeOf(self));
  };
  out.push_back(needed[0] ? grad(lhs, rhs) : Value());
  out.push_back(needed[1] ? grad(rhs, lhs) : Value());
}

} // namespace

#define ZEROC_UNARY_GRAD(OP, KIND)                                             \
  LogicalResult OP::buildGradients(OpBuilder &b, ValueRange grads,             \
                                   ArrayRef<bool>,                             \
                                   SmallVectorImpl<Value> &out) {              \
    return unaryGradOf(*this, b, grads, out, KIND);                            \
  }
ZEROC_UNARY_GRAD(CosOp, "cos")
ZEROC_UNARY_GRAD(SinOp, "sin")
ZEROC_UNARY_GRAD(AbsOp, "abs")
#undef ZEROC_UNARY_GRAD

#define ZEROC_NO_GRAD(OP)                                                      \
  LogicalResult OP::buildGradients(OpBuilder &, ValueRange, ArrayRef<bool>,    \
                                   SmallVectorImpl<Value> &out) {              \
    return noGradients(*this, out);                                            \
  }
ZEROC_NO_GRAD(SignOp)
ZEROC_NO_GRAD(FloorOp)
ZEROC_NO_GRAD(CeilOp)
ZEROC_NO_GRAD(RoundOp)
ZEROC_NO_GRAD(CompareOp)
ZEROC_NO_GRAD(LogicalOp)
ZEROC_NO_GRAD(NotOp)
ZEROC_NO_GRAD(IsNaNOp)
ZEROC_NO_GRAD(IsInfOp)
#undef ZEROC_NO_GRAD

LogicalResult GeluOp::buildGradients(OpBuilder &b, ValueRange grads,
                                     ArrayRef<bool>,
                                     SmallVectorImpl<Value> &out) {
  return unaryGradOf(*this, b, grads, out,
                     getApproximate() == "tanh" ? "gelu_tanh" : "gelu");
}

LogicalResult MaxOp::buildGradients(OpBuilder &b, ValueRange grads,
                                    ArrayRef<bool> needed,
                                    SmallVectorImpl<Value> &out) {
  maxMinGradients(*this, getLhs(), getRhs(), true, b, grads[0], needed, out);
  return success();
}

LogicalResult MinOp::buildGradients(OpBuilder &b, ValueRange grads,
                                    ArrayRef<bool> needed,
                                    SmallVectorImpl<Value> &out) {
  maxMinGradients(*this, getLhs(), getRhs(), false, b, grads[0], needed, out);
  return success();
}

LogicalResult ClipOp::buildGradients(OpBuilder &b, ValueRange grads,
                                     ArrayRef<bool>,
                                     SmallVectorImpl<Value> &out) {
  out.push_back(b.create<ClipGradOp>(getLoc(), getInput().getType(), getInput(),
                                     grads[0], getMinAttr(), getMaxAttr()));
  return success();
}
