//===- GraphGradients.cpp - reverse-mode rules of the graph ops -----------===//
//
// DifferentiableOpInterface::buildGradients for every compute op. Each rule
// receives the gradients of the op's results and returns one gradient per
// operand (null when not needed or not differentiable). Broadcasting operands
// get their gradient summed back to their own shape with graph.sum_to.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Dialect/Graph/GraphOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace zeroc::graph;

namespace {

RankedTensorType typeOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }

/// A rank-0 constant of `like`'s element type (broadcasts in binary ops).
Value scalar(OpBuilder &b, Location loc, Value like, double v) {
  auto t = RankedTensorType::get({}, typeOf(like).getElementType());
  return b.create<ConstantOp>(
      loc, DenseElementsAttr::get(t, b.getFloatAttr(t.getElementType(), v)));
}

Value sumTo(OpBuilder &b, Location loc, Value g, RankedTensorType target) {
  if (typeOf(g) == target)
    return g;
  return b.create<SumToOp>(loc, target, g);
}

Value reshape(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> shape) {
  auto t = RankedTensorType::get(shape, typeOf(v).getElementType());
  if (t == typeOf(v))
    return v;
  return b.create<ReshapeOp>(loc, t, v);
}

/// Swaps the last two dims.
Value transposeLast2(OpBuilder &b, Location loc, Value v) {
  int64_t r = typeOf(v).getRank();
  SmallVector<int64_t> perm;
  for (int64_t i = 0; i < r; ++i)
    perm.push_back(i);
  std::swap(perm[r - 1], perm[r - 2]);
  return b.create<TransposeOp>(loc, v, b.getI64ArrayAttr(perm));
}

template <typename OpT>
LogicalResult unaryGrad(OpT op, OpBuilder &b, ValueRange grads,
                        SmallVectorImpl<Value> &out, StringRef kind) {
  out.push_back(
      b.create<UnaryGradOp>(op.getLoc(), op.getInput(), op.getResult(), grads[0], kind));
  return success();
}

} // namespace

#define ZEROC_UNARY_GRAD(OP, KIND)                                             \
  LogicalResult OP::buildGradients(OpBuilder &b, ValueRange grads,             \
                                   ArrayRef<bool>,                             \
                                   SmallVectorImpl<Value> &out) {              \
    return unaryGrad(*this, b, grads, out, KIND);                              \
  }
ZEROC_UNARY_GRAD(NegOp, "neg")
ZEROC_UNARY_GRAD(SqrtOp, "sqrt")
ZEROC_UNARY_GRAD(ReciprocalOp, "reciprocal")
ZEROC_UNARY_GRAD(ReluOp, "relu")
ZEROC_UNARY_GRAD(TanhOp, "tanh")
ZEROC_UNARY_GRAD(SigmoidOp, "sigmoid")
ZEROC_UNARY_GRAD(ErfOp, "erf")
ZEROC_UNARY_GRAD(ExpOp, "exp")
ZEROC_UNARY_GRAD(LogOp, "log")
#undef ZEROC_UNARY_GRAD

LogicalResult AddOp::buildGradients(OpBuilder &b, ValueRange grads,
                                    ArrayRef<bool> needed,
                                    SmallVectorImpl<Value> &out) {
  Location loc = getLoc();
  out.push_back(needed[0] ? sumTo(b, loc, grads[0], getLhs().getType()) : Value());
  out.push_back(needed[1] ? sumTo(b, loc, grads[0], getRhs().getType()) : Value());
  return success();
}

LogicalResult SubOp::buildGradients(OpBuilder &b, ValueRange grads,
                                    ArrayRef<bool> needed,
                                    SmallVectorImpl<Value> &out) {
  Location loc = getLoc();
  out.push_back(needed[0] ? sumTo(b, loc, grads[0], getLhs().getType()) : Value());
  Value neg;
  if (needed[1])
    neg = sumTo(b, loc, b.create<NegOp>(loc, grads[0]), getRhs().getType());
  out.push_back(neg);
  return success();
}

LogicalResult MulOp::buildGradients(OpBuilder &b, ValueRange grads,
                                    ArrayRef<bool> needed,
                                    SmallVectorImpl<Value> &out) {
  Location loc = getLoc();
  Value g = grads[0];
  out.push_back(needed[0] ? sumTo(b, loc, b.create<MulOp>(loc, g, getRhs()),
                                  getLhs().getType())
                          : Value());
  out.push_back(needed[1] ? sumTo(b, loc, b.create<MulOp>(loc, g, getLhs()),
                                  getRhs().getType())
                          : Value());
  return success();
}

LogicalResult DivOp::buildGradients(OpBuilder &b, ValueRange grads,
                                    ArrayRef<bool> needed,
                                    SmallVectorImpl<Value> &out) {
  Location loc = getLoc();
  Value g = grads[0];
  out.push_back(needed[0] ? sumTo(b, loc, b.create<DivOp>(loc, g, getRhs()),
                                  getLhs().getType())
                          : Value());
  Value gb;
  if (needed[1]) {
    // d(a/b)/db = -(a/b)/b = -y/b.
    Value t = b.create<DivOp>(loc, b.create<MulOp>(loc, g, getResult()), getRhs());
    gb = sumTo(b, loc, b.create<NegOp>(loc, t), getRhs().getType());
  }
  out.push_back(gb);
  return success();
}

LogicalResult PowOp::buildGradients(OpBuilder &b, ValueRange grads,
                                    ArrayRef<bool> needed,
                                    SmallVectorImpl<Value> &out) {
  Location loc = getLoc();
  Value g = grads[0], x = getLhs(), e = getRhs();
  Value gx, ge;
  if (needed[0]) {
    // d(x^e)/dx = e * x^(e-1): well defined at x = 0 for e >= 1.
    Value em1 = b.create<SubOp>(loc, e, scalar(b, loc, e, 1.0));
    Value d = b.create<MulOp>(loc, e, b.create<PowOp>(loc, x, em1));
    gx = sumTo(b, loc, b.create<MulOp>(loc, g, d), typeOf(x));
  }
  if (needed[1]) {
    Value d = b.create<MulOp>(loc, getResult(), b.create<LogOp>(loc, x));
    ge = sumTo(b, loc, b.create<MulOp>(loc, g, d), typeOf(e));
  }
  out.push_back(gx);
  out.push_back(ge);
  return success();
}

LogicalResult EqualOp::buildGradients(OpBuilder &, ValueRange, ArrayRef<bool>,
                                      SmallVectorImpl<Value> &out) {
  out.append(2, Value());
  return success();
}

LogicalResult WhereOp::buildGradients(OpBuilder &b, ValueRange grads,
                                      ArrayRef<bool> needed,
                                      SmallVectorImpl<Value> &out) {
  Location loc = getLoc();
  Value g = grads[0];
  Value zero = scalar(b, loc, g, 0.0);
  out.push_back(Value());
  out.push_back(needed[1] ? sumTo(b, loc,
                                  b.create<WhereOp>(loc, getCondition(), g, zero),
                                  typeOf(getOnTrue()))
                          : Value());
  out.push_back(needed[2] ? sumTo(b, loc,
                                  b.create<WhereOp>(loc, getCondition(), zero, g),
                                  typeOf(getOnFalse()))
                          : Value());
  return success();
}

LogicalResult CastOp::buildGradients(OpBuilder &b, ValueRange grads,
                                     ArrayRef<bool> needed,
                                     SmallVectorImpl<Value> &out) {
  if (!needed[0] || !llvm::isa<FloatType>(getType().getElementType())) {
    out.push_back(Value());
    return success();
  }
  out.push_back(b.create<CastOp>(getLoc(), getInput().getType(), grads[0]));
  return success();
}

LogicalResult DropoutOp::buildGradients(OpBuilder &b, ValueRange grads,
                                        ArrayRef<bool>,
                                        SmallVectorImpl<Value> &out) {
  out.push_back(b.create<DropoutOp>(getLoc(), grads[0], getRatioAttr(),
                                    getTrainingAttr(), getSeedAttr()));
  return success();
}

LogicalResult MatMulOp::buildGradients(OpBuilder &b, ValueRange grads,
                                       ArrayRef<bool> needed,
                                       SmallVectorImpl<Value> &out) {
  Location loc = getLoc();
  if (getResultPerm())
    return emitOpError("has no gradient rule with result_perm (only "
                       "zero-fold-matmul-views sets it, after autodiff)");
  RankedTensorType at = getLhs().getType(), bt = getRhs().getType();
  if (getTransA() || getTransB()) {
    // Y = op(A) op(B), operands of rank >= 2: dop(A) = G op(B)^T and
    // dop(B) = op(A)^T G, each transposed back where its operand is, as
    // matmuls that read their operands transposed.
    const bool ta = getTransA(), tb = getTransB();
    auto product = [&](Value x, Value y, bool tx, bool ty) {
      return b.create<MatMulOp>(loc, x, y, tx, ty).getResult();
    };
    Value ga, gb;
    if (needed[0]) {
      Value full = ta ? product(getRhs(), grads[0], tb, true)
                      : product(grads[0], getRhs(), false, !tb);
      ga = sumTo(b, loc, full, at);
    }
    if (needed[1]) {
      Value full = tb ? product(grads[0], getLhs(), true, ta)
                      : product(getLhs(), grads[0], !ta, false);
      gb = sumTo(b, loc, full, bt);
    }
    out.push_back(ga);
    out.push_back(gb);
    return success();
  }
  // Promote rank-1 operands to matrices, as the forward rule does.
  SmallVector<int64_t> as(at.getShape()), bs(bt.getShape());
  SmallVector<int64_t> gs(getType().getShape());
  if (as.size() == 1) {
    as.insert(as.begin(), 1);
    gs.insert(gs.end() - (bs.size() == 1 ? 0 : 1), 1);
  }
  if (bs.size() == 1) {
    bs.push_back(1);
    gs.push_back(1);
  }
  Value a2 = reshape(b, loc, getLhs(), as), b2 = reshape(b, loc, getRhs(), bs);
  Value g2 = reshape(b, loc, grads[0], gs);
  Value ga, gb;
  if (needed[0]) {
    Value full = b.create<MatMulOp>(loc, g2, transposeLast2(b, loc, b2));
    RankedTensorType promoted = RankedTensorType::get(as, at.getElementType());
    ga = reshape(b, loc, sumTo(b, loc, full, promoted), at.getShape());
  }
  if (needed[1]) {
    Value full = b.create<MatMulOp>(loc, transposeLast2(b, loc, a2), g2);
    RankedTensorType promoted = RankedTensorType::get(bs, bt.getElementType());
    gb = reshape(b, loc, sumTo(b, loc, full, promoted), bt.getShape());
  }
  out.push_back(ga);
  out.push_back(gb);
  return success();
}

LogicalResult GemmOp::buildGradients(OpBuilder &b, ValueRange grads,
                                     ArrayRef<bool> needed,
                                     SmallVectorImpl<Value> &out) {
  Location loc = getLoc();
  Value g = grads[0];
  bool ta = getTransA(), tb = getTransB();
  FloatAttr alpha = getAlphaAttr();
  FloatAttr zero = b.getF64FloatAttr(0.0);
  auto gemm = [&](Value x, Value y, bool tx, bool ty) -> Value {
    return b.create<GemmOp>(loc, x, y, Value(), alpha, zero,
                            b.getBoolAttr(tx), b.getBoolAttr(ty));
  };
  // y = alpha op(A) op(B) + beta C.
  Value ga, gb, gc;
  if (needed[0])
    ga = ta ? gemm(getB(), g, tb, true) : gemm(g, getB(), false, !tb);
  if (needed[1])
    gb = tb ? gemm(g, getA(), true, ta) : gemm(getA(), g, !ta, false);
  if (getC() && needed.size() > 2 && needed[2]) {
    Value scaled = g;
    if (getBeta().convertToDouble() != 1.0)
      scaled = b.create<MulOp>(loc, g, scalar(b, loc, g, getBeta().convertToDouble()));
    gc = sumTo(b, loc, scaled, typeOf(getC()));
  }
  out.push_back(ga);
  out.push_back(gb);
  if (getC())
    out.push_back(gc);
  return success();
}

namespace {
/// Broadcasts a reduction's result gradient back over the reduced axes.
Value expandReduced(OpBuilder &b, Location loc, Value g, ArrayAttr axes,
                    RankedTensorType inputType) {
  SmallVector<int64_t> kept(inputType.getShape());
  for (Attribute a : axes)
    kept[llvm::cast<IntegerAttr>(a).getInt()] = 1;
  Value r = reshape(b, loc, g, kept);
  RankedTensorType full =
      RankedTensorType::get(inputType.getShape(), typeOf(g).getElementType());
  if (typeOf(r) == full)
    return r;
  return b.create<ExpandOp>(loc, full, r);
}

int64_t reducedCount(ArrayAttr axes, RankedTensorType t) {
  int64_t n = 1;
  for (Attribute a : axes)
    n *= t.getDimSize(llvm::cast<IntegerAttr>(a).getInt());
  return n;
}
} // namespace

LogicalResult ReduceSumOp::buildGradients(OpBuilder &b, ValueRange grads,
                                          ArrayRef<bool>,
                                          SmallVectorImpl<Value> &out) {
  out.push_back(expandReduced(b, getLoc(), grads[0], getAxes(),
                              typeOf(getInput())));
  return success();
}

LogicalResult ReduceMeanOp::buildGradients(OpBuilder &b, ValueRange grads,
                                           ArrayRef<bool>,
                                           SmallVectorImpl<Value> &out) {
  Location loc = getLoc();
  RankedTensorType in = typeOf(getInput());
  int64_t n = reducedCount(getAxes(), in);
  Value g = b.create<DivOp>(loc, grads[0], scalar(b, loc, grads[0], double(n)));
  out.push_back(expandReduced(b, loc, g, getAxes(), in));
  return success();
}

LogicalResult ReduceMaxOp::buildGradients(OpBuilder &b, ValueRange grads,
                                          ArrayRef<bool>,
                                          SmallVectorImpl<Value> &out) {
  // As torch.amax: the gradient is split evenly among the elements equal to
  // the maximum (a valid subgradient; the loss is differentiable there when
  // ties move together).
  Location loc = getLoc();
  RankedTensorType in = typeOf(getInput());
  Value maxB = expandReduced(b, loc, getResult(), getAxes(), in);
  Value mask = b.create<EqualOp>(loc, getInput(), maxB);
  Value maskF = b.create<CastOp>(loc, RankedTensorType::get(in.getShape(), in.getElementType()), mask);
  Value count = b.create<ReduceSumOp>(loc, maskF, getAxes(), getKeepdimsAttr());
  Value share = b.create<DivOp>(loc, grads[0], count);
  Value g = expandReduced(b, loc, share, getAxes(), in);
  out.push_back(b.create<MulOp>(loc, g, maskF));
  return success();
}

LogicalResult SoftmaxOp::buildGradients(OpBuilder &b, ValueRange grads,
                                        ArrayRef<bool>,
                                        SmallVectorImpl<Value> &out) {
  out.push_back(b.create<SoftmaxGradOp>(getLoc(), getResult(), grads[0],
                                        getAxisAttr(), b.getBoolAttr(false)));
  return success();
}

LogicalResult LogSoftmaxOp::buildGradients(OpBuilder &b, ValueRange grads,
                                           ArrayRef<bool>,
                                           SmallVectorImpl<Value> &out) {
  out.push_back(b.create<SoftmaxGradOp>(getLoc(), getResult(), grads[0],
                                        getAxisAttr(), b.getBoolAttr(true)));
  return success();
}

LogicalResult LayerNormOp::buildGradients(OpBuilder &b, ValueRange grads,
                                          ArrayRef<bool> needed,
                                          SmallVectorImpl<Value> &out) {
  auto g = b.create<LayerNormGradOp>(
      getLoc(), TypeRange{getType(), getScale().getType(), getScale().getType()},
      getInput(), getScale(), grads[0], getAxisAttr(), getEpsilonAttr());
  out.push_back(needed[0] ? g.getGradInput() : Value());
  out.push_back(needed[1] ? g.getGradScale() : Value());
  if (getBias())
    out.push_back(needed.size() > 2 && needed[2] ? g.getGradBias() : Value());
  return success();
}

LogicalResult SoftmaxCrossEntropyLossOp::buildGradients(
    OpBuilder &b, ValueRange grads, ArrayRef<bool>,
    SmallVectorImpl<Value> &out) {
  out.push_back(b.create<SoftmaxCrossEntropyLossGradOp>(
      getLoc(), getScores().getType(), getScores(), getLabels(), grads[0],
      getReductionAttr(), getIgnoreIndexAttr()));
  out.push_back(Value());
  return success();
}

LogicalResult GatherOp::buildGradients(OpBuilder &b, ValueRange grads,
                                       ArrayRef<bool> needed,
                                       SmallVectorImpl<Value> &out) {
  Value gd;
  if (needed[0])
    gd = b.create<GatherGradOp>(getLoc(), getData().getType(), grads[0],
                                getIndices(), getAxisAttr(), getPaddingIdxAttr());
  out.push_back(gd);
  out.push_back(Value());
  return success();
}

LogicalResult ReshapeOp::buildGradients(OpBuilder &b, ValueRange grads,
                                        ArrayRef<bool>,
                                        SmallVectorImpl<Value> &out) {
  out.push_back(b.create<ReshapeOp>(getLoc(), getInput().getType(), grads[0]));
  return success();
}

LogicalResult TransposeOp::buildGradients(OpBuilder &b, ValueRange grads,
                                          ArrayRef<bool>,
                                          SmallVectorImpl<Value> &out) {
  SmallVector<int64_t> inverse(getPerm().size());
  for (auto [i, a] : llvm::enumerate(getPerm()))
    inverse[llvm::cast<IntegerAttr>(a).getInt()] = i;
  out.push_back(b.create<TransposeOp>(getLoc(), grads[0],
                                      b.getI64ArrayAttr(inverse)));
  return success();
}

LogicalResult ExpandOp::buildGradients(OpBuilder &b, ValueRange grads,
                                       ArrayRef<bool>,
                                       SmallVectorImpl<Value> &out) {
  out.push_back(sumTo(b, getLoc(), grads[0], getInput().getType()));
  return success();
}

LogicalResult SliceOp::buildGradients(OpBuilder &b, ValueRange grads,
                                      ArrayRef<bool>,
                                      SmallVectorImpl<Value> &out) {
  out.push_back(b.create<SliceGradOp>(getLoc(), typeOf(getInput()), grads[0],
                                      getStartsAttr(), getEndsAttr(),
                                      getStepsAttr()));
  return success();
}

LogicalResult ConcatOp::buildGradients(OpBuilder &b, ValueRange grads,
                                       ArrayRef<bool> needed,
                                       SmallVectorImpl<Value> &out) {
  Location loc = getLoc();
  int64_t axis = getAxis(), offset = 0;
  RankedTensorType rt = getType();
  for (auto [i, in] : llvm::enumerate(getInputs())) {
    RankedTensorType it = typeOf(in);
    if (!needed[i]) {
      out.push_back(Value());
      offset += it.getDimSize(axis);
      continue;
    }
    SmallVector<int64_t> starts(rt.getRank(), 0), ends(rt.getShape()),
        steps(rt.getRank(), 1);
    starts[axis] = offset;
    ends[axis] = offset + it.getDimSize(axis);
    offset = ends[axis];
    out.push_back(b.create<SliceOp>(loc, grads[0], b.getI64ArrayAttr(starts),
                                    b.getI64ArrayAttr(ends),
                                    b.getI64ArrayAttr(steps)));
  }
  return success();
}

LogicalResult TriluOp::buildGradients(OpBuilder &b, ValueRange grads,
                                      ArrayRef<bool>,
                                      SmallVectorImpl<Value> &out) {
  out.push_back(b.create<TriluOp>(getLoc(), grads[0], getUpperAttr(), getKAttr()));
  return success();
}
