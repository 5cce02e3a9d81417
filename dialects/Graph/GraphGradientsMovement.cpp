//===- GraphGradientsMovement.cpp - pad, gathers, scatters, cumsum --------===//
//
// DifferentiableOpInterface::buildGradients of the ops in
// GraphMovementOps.td (the other rules are in GraphGradients.cpp).
//
//===----------------------------------------------------------------------===//

#include "zeroc/Dialect/Graph/GraphOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace zeroc::graph;

LogicalResult PadOp::buildGradients(OpBuilder &b, ValueRange grads,
                                    ArrayRef<bool> needed,
                                    SmallVectorImpl<Value> &out) {
  out.push_back(needed[0] ? b.create<PadGradOp>(getLoc(), getInput().getType(),
                                                grads[0], getPadsAttr(),
                                                getModeAttr())
                                .getResult()
                          : Value());
  return success();
}

LogicalResult GatherElementsOp::buildGradients(OpBuilder &b, ValueRange grads,
                                               ArrayRef<bool> needed,
                                               SmallVectorImpl<Value> &out) {
  out.push_back(needed[0] ? b.create<GatherElementsGradOp>(
                                    getLoc(), getData().getType(), grads[0],
                                    getIndices(), getAxisAttr())
                                .getResult()
                          : Value());
  out.push_back(Value());
  return success();
}

LogicalResult GatherNDOp::buildGradients(OpBuilder &b, ValueRange grads,
                                         ArrayRef<bool> needed,
                                         SmallVectorImpl<Value> &out) {
  // The adjoint of gathering slices is scatter-adding them into zeros.
  Value gd;
  if (needed[0]) {
    auto t = getData().getType();
    Value zeros = b.create<ConstantOp>(
        getLoc(), DenseElementsAttr::get(
                      t, b.getFloatAttr(t.getElementType(), 0.0)));
    gd = b.create<ScatterNDOp>(getLoc(), t, zeros, getIndices(), grads[0],
                               b.getStringAttr("add"));
  }
  out.push_back(gd);
  out.push_back(Value());
  return success();
}

namespace {

/// The gradients of a scatter (data, indices, updates) with `reduction`:
/// data gets g where reduction is add, otherwise g with the overwritten
/// positions zeroed (`zeroScatter(zeros)`: the scatter of zeros over g);
/// updates get `gather()` (g read at the scattered positions). Mul has no
/// rule.
template <typename ScatterOp, typename ZeroScatter, typename Gather>
LogicalResult scatterGradients(ScatterOp op, OpBuilder &b, ArrayRef<bool> needed,
                               Value g, SmallVectorImpl<Value> &out,
                               ZeroScatter zeroScatter, Gather gather) {
  StringRef reduction = op.getReduction();
  bool wantData = needed[0], wantUpdates = needed.size() > 2 && needed[2];
  if (reduction == "mul" && (wantData || wantUpdates))
    return op.emitOpError("has no gradient rule for reduction 'mul'");
  Value gd, gu;
  if (wantData) {
    if (reduction == "add") {
      gd = g;
    } else {
      // Overwritten positions do not depend on data: scatter zeros over them.
      auto ut = op.getUpdates().getType();
      gd = zeroScatter(b.create<ConstantOp>(
          op.getLoc(),
          DenseElementsAttr::get(ut, b.getFloatAttr(ut.getElementType(), 0.0))));
    }
  }
  if (wantUpdates)
    gu = gather();
  out.push_back(gd);
  out.push_back(Value());
  out.push_back(gu);
  return success();
}

} // namespace

LogicalResult ScatterNDOp::buildGradients(OpBuilder &b, ValueRange grads,
                                          ArrayRef<bool> needed,
                                          SmallVectorImpl<Value> &out) {
  Location loc = getLoc();
  Value g = grads[0];
  return scatterGradients(
      *this, b, needed, g, out,
      [&](Value zeros) -> Value {
        return b.create<ScatterNDOp>(loc, getType(), g, getIndices(), zeros,
                                     b.getStringAttr("none"));
      },
      [&]() -> Value { return b.create<GatherNDOp>(loc, g, getIndices()); });
}

LogicalResult ScatterElementsOp::buildGradients(OpBuilder &b, ValueRange grads,
                                                ArrayRef<bool> needed,
                                                SmallVectorImpl<Value> &out) {
  Location loc = getLoc();
  Value g = grads[0];
  return scatterGradients(
      *this, b, needed, g, out,
      [&](Value zeros) -> Value {
        return b.create<ScatterElementsOp>(loc, getType(), g, getIndices(), zeros,
                                           getAxisAttr(), b.getStringAttr("none"));
      },
      [&]() -> Value {
        return b.create<GatherElementsOp>(loc, g, getIndices(), getAxisAttr());
      });
}

LogicalResult CumSumOp::buildGradients(OpBuilder &b, ValueRange grads,
                                       ArrayRef<bool> needed,
                                       SmallVectorImpl<Value> &out) {
  // d/dx_j of sum over i of g_i y_i: the g_i whose sums include x_j, i.e.
  // the cumulative sum of g in the other direction, as exclusive as y's.
  out.push_back(needed[0] ? b.create<CumSumOp>(getLoc(), grads[0], getAxisAttr(),
                                               getExclusiveAttr(),
                                               b.getBoolAttr(!getReverse()))
                                .getResult()
                          : Value());
  return success();
}
