//===- RowPitch.cpp - rows zero-plan-buffers stores at a pitch ------------===//
#include "RowPitch.h"

#include "zeroc/Dialect/Graph/GraphOps.h"
#include "zeroc/Dialect/Zero/BufferPlanning.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <numeric>

using namespace mlir;
using zeroc::graph::FusedSoftmaxCrossEntropyOp;
using zeroc::graph::GemmOp;
using zeroc::graph::SoftmaxCrossEntropyLossGradOp;
using zeroc::graph::SoftmaxCrossEntropyLossOp;

namespace zeroc {
namespace {

/// Whether every reader of `v` is a plain-product GEMM that takes it as a
/// or b.
bool readByProductsOnly(Value v) {
  return llvm::all_of(v.getUses(), [](OpOperand &use) {
    auto g = llvm::dyn_cast<GemmOp>(use.getOwner());
    return g && zero::isPlainGemmProduct(g) && use.get() != g.getC();
  });
}

} // namespace

int64_t stridedStorageBytes(Type type, ArrayRef<int64_t> strides) {
  auto shaped = llvm::cast<ShapedType>(type);
  int64_t last = 0;
  for (auto [dim, stride] : llvm::zip(shaped.getShape(), strides)) {
    if (dim == 0)
      return 0;
    last += (dim - 1) * stride;
  }
  return (last + 1) * zero::elementBytes(shaped.getElementType());
}

llvm::DenseSet<Value> padRowPitches(ArrayRef<Operation *> ops, int64_t alignBytes,
                                    const llvm::DenseSet<Value> &outside) {
  llvm::DenseSet<Value> padded;
  if (alignBytes <= 0)
    return padded;
  for (Operation *op : ops) {
    auto gemm = llvm::dyn_cast<GemmOp>(op);
    if (!gemm || !zero::isPlainGemmProduct(gemm) || gemm->hasAttr(zero::kResultStridesAttr))
      continue;
    Value scores = gemm.getResult();
    auto type = llvm::cast<RankedTensorType>(scores.getType());
    if (!type.hasStaticShape() || type.getRank() != 2 || type.getDimSize(0) < 2 ||
        outside.contains(scores) || scores.use_empty())
      continue;
    const int64_t cols = type.getDimSize(1);
    const int64_t bytes = zero::elementBytes(type.getElementType());
    if (bytes <= 0 || (cols * bytes) % alignBytes == 0)
      continue;
    // Every reader a cross-entropy of these scores, in this block; their
    // gradients (the fused op's, the gradient op's) read only by products.
    SmallVector<std::pair<Operation *, Value>> grads; // (op, its scores' gradient)
    bool hidden = true;
    for (OpOperand &use : scores.getUses()) {
      Operation *user = use.getOwner();
      hidden &= use.getOperandNumber() == 0 && user->getBlock() == gemm->getBlock() &&
                !user->hasAttr(zero::kResultStridesAttr);
      if (auto fused = llvm::dyn_cast<FusedSoftmaxCrossEntropyOp>(user))
        grads.emplace_back(user, fused.getGradScores());
      else if (auto grad = llvm::dyn_cast<SoftmaxCrossEntropyLossGradOp>(user))
        grads.emplace_back(user, grad.getResult());
      else
        hidden &= llvm::isa<SoftmaxCrossEntropyLossOp>(user);
    }
    for (auto &[user, grad] : grads)
      hidden &= readByProductsOnly(grad) && !outside.contains(grad);
    if (!hidden)
      continue;
    // The fewest elements whose bytes are a multiple of the alignment.
    const int64_t unit = alignBytes / std::gcd(alignBytes, bytes);
    const int64_t pitch = (cols + unit - 1) / unit * unit;
    Builder b(op->getContext());
    Attribute rows = b.getDenseI64ArrayAttr({pitch, 1}), dense = b.getDenseI64ArrayAttr({});
    gemm->setAttr(zero::kResultStridesAttr, b.getArrayAttr({rows}));
    padded.insert(scores);
    for (auto &[user, grad] : grads) {
      SmallVector<Attribute, 2> strides(user->getNumResults(), dense);
      strides[llvm::cast<OpResult>(grad).getResultNumber()] = rows;
      user->setAttr(zero::kResultStridesAttr, b.getArrayAttr(strides));
      padded.insert(grad);
    }
  }
  return padded;
}

} // namespace zeroc
