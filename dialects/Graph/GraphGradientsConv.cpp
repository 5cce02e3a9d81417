//===- GraphGradientsConv.cpp - reverse-mode rules of conv, pool, bn ------===//
//
// conv: the input gradient is a transposed convolution (col2im), the weight
// gradient a correlation of the input with the result gradient, the bias
// gradient a sum over batch and spatial dims. Pooling gradients route to the
// argmax (max) or spread over the window (average). Batch norm has one
// gradient op for its three operands.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Dialect/Graph/GraphOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace zeroc::graph;

LogicalResult ConvOp::buildGradients(OpBuilder &b, ValueRange grads,
                                     ArrayRef<bool> needed,
                                     SmallVectorImpl<Value> &out) {
  Location loc = getLoc();
  Value gy = grads[0];
  out.push_back(needed[0] ? b.create<ConvGradInputOp>(
                                loc, getInput().getType(), getWeight(), gy,
                                getStridesAttr(), getPadsAttr(),
                                getDilationsAttr(), getGroupAttr())
                                .getResult()
                          : Value());
  out.push_back(needed[1] ? b.create<ConvGradWeightOp>(
                                loc, getWeight().getType(), getInput(), gy,
                                getStridesAttr(), getPadsAttr(),
                                getDilationsAttr(), getGroupAttr())
                                .getResult()
                          : Value());
  if (getBias()) {
    Value gb;
    if (needed.size() > 2 && needed[2]) {
      SmallVector<int64_t> axes{0};
      for (int64_t i = 2; i < getType().getRank(); ++i)
        axes.push_back(i);
      gb = b.create<ReduceSumOp>(loc, getBias().getType(), gy,
                                 b.getI64ArrayAttr(axes), b.getBoolAttr(false));
    }
    out.push_back(gb);
  }
  return success();
}

LogicalResult MaxPoolOp::buildGradients(OpBuilder &b, ValueRange grads,
                                        ArrayRef<bool>,
                                        SmallVectorImpl<Value> &out) {
  out.push_back(b.create<MaxPoolGradOp>(
      getLoc(), getInput().getType(), getInput(), grads[0],
      getKernelShapeAttr(), getStridesAttr(), getPadsAttr(),
      getDilationsAttr(), getCeilModeAttr()));
  return success();
}

LogicalResult AvgPoolOp::buildGradients(OpBuilder &b, ValueRange grads,
                                        ArrayRef<bool>,
                                        SmallVectorImpl<Value> &out) {
  out.push_back(b.create<AvgPoolGradOp>(
      getLoc(), getInput().getType(), grads[0], getKernelShapeAttr(),
      getStridesAttr(), getPadsAttr(), getDilationsAttr(), getCeilModeAttr(),
      getCountIncludePadAttr()));
  return success();
}

LogicalResult BatchNormOp::buildGradients(OpBuilder &b, ValueRange grads,
                                          ArrayRef<bool> needed,
                                          SmallVectorImpl<Value> &out) {
  auto g = b.create<BatchNormGradOp>(
      getLoc(),
      TypeRange{getType(), getScale().getType(), getScale().getType()},
      getInput(), getScale(), grads[0], getEpsilonAttr());
  out.push_back(needed[0] ? g.getGradInput() : Value());
  out.push_back(needed[1] ? g.getGradScale() : Value());
  out.push_back(needed[2] ? g.getGradBias() : Value());
  return success();
}
