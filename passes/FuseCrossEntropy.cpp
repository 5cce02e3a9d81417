//===- FuseCrossEntropy.cpp - A loss and its gradient in one pass ---------===//
//
// docs/CudaTarget.md, "The loss and its gradient in one pass": a softmax
// cross-entropy loss and its gradient read the scores (GPT-2's [B*T, V]
// logits) three times between them; one graph.fused_softmax_cross_entropy
// reads them once.
//
//===----------------------------------------------------------------------===//

#include "Fusion.h"

#include "zeroc/Passes/Passes.h"

#include "zeroc/Dialect/Graph/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace zeroc {
#define GEN_PASS_DEF_FUSECROSSENTROPY
#include "zeroc/Passes/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::graph;

namespace {

/// The loss in `grad`'s block, before it, of the same scores, labels,
/// reduction and ignore_index, that can compute `grad` where it stands: the
/// loss's gradient is defined before it, and no op between the two writes
/// or frees what `grad` reads. Null when there is none.
SoftmaxCrossEntropyLossOp lossOf(SoftmaxCrossEntropyLossGradOp grad) {
  for (Operation *user : grad.getScores().getUsers()) {
    auto loss = llvm::dyn_cast<SoftmaxCrossEntropyLossOp>(user);
    if (!loss || loss->getBlock() != grad->getBlock() || !loss->isBeforeInBlock(grad) ||
        loss.getLabels() != grad.getLabels() || loss.getReduction() != grad.getReduction() ||
        loss.getIgnoreIndex() != grad.getIgnoreIndex() || !zeroc::fusion::definedBefore(grad.getGrad(), loss))
      continue;
    if (!zeroc::fusion::writesStorageBetween(loss, grad, grad->getOperands()))
      return loss;
  }
  return nullptr;
}

struct FuseCrossEntropyPass : zeroc::impl::FuseCrossEntropyBase<FuseCrossEntropyPass> {
  void runOnOperation() override {
    SmallVector<SoftmaxCrossEntropyLossGradOp> grads;
    getOperation().walk([&](SoftmaxCrossEntropyLossGradOp g) { grads.push_back(g); });
    for (SoftmaxCrossEntropyLossGradOp grad : grads) {
      SoftmaxCrossEntropyLossOp loss = lossOf(grad);
      if (!loss)
        continue;
      OpBuilder b(loss);
      auto fused = b.create<FusedSoftmaxCrossEntropyOp>(
          b.getFusedLoc({loss.getLoc(), grad.getLoc()}), loss.getType(), grad.getType(),
          loss.getScores(), loss.getLabels(), grad.getGrad(), loss.getReductionAttr(),
          loss.getIgnoreIndexAttr());
      loss.getResult().replaceAllUsesWith(fused.getLoss());
      grad.getResult().replaceAllUsesWith(fused.getGradScores());
      grad->erase();
      loss->erase();
    }
  }
};

} // namespace
