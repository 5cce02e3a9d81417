//===- FuseLayerNormGradAdd.cpp - A residual's gradients summed as written ===//
//
// docs/CudaTarget.md, "A layer norm's gradient and the residual add": in a
// pre-norm transformer's backward pass each layer norm's input gradient is
// added to the residual stream's gradient, and read by nothing else; the
// layer norm gradient's kernel writes the sum instead.
//
//===----------------------------------------------------------------------===//

#include "Fusion.h"

#include "zeroc/Passes/Passes.h"

#include "zeroc/Dialect/Graph/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace zeroc {
#define GEN_PASS_DEF_FUSELAYERNORMGRADADD
#include "zeroc/Passes/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::graph;

namespace {

/// The add that is the only reader of `grad`'s input gradient, and its
/// other operand: of the gradient's type, defined before `grad`, and not
/// written or freed up to the add (the fused op reads it where `grad`
/// stands). Null when there is none.
std::pair<AddOp, Value> addAfter(LayerNormGradOp grad) {
  Value gx = grad.getGradInput();
  if (!gx.hasOneUse())
    return {};
  auto add = llvm::dyn_cast<AddOp>(*gx.getUsers().begin());
  if (!add || add->getBlock() != grad->getBlock() || add.getType() != gx.getType())
    return {};
  Value addend = add.getLhs() == gx ? add.getRhs() : add.getLhs();
  if (addend == gx || addend.getType() != gx.getType() ||
      !zeroc::fusion::definedBefore(addend, grad) ||
      zeroc::fusion::writesStorageBetween(grad, add, addend))
    return {};
  return {add, addend};
}

struct FuseLayerNormGradAddPass
    : zeroc::impl::FuseLayerNormGradAddBase<FuseLayerNormGradAddPass> {
  void runOnOperation() override {
    SmallVector<LayerNormGradOp> grads;
    getOperation().walk([&](LayerNormGradOp g) { grads.push_back(g); });
    for (LayerNormGradOp grad : grads) {
      auto [add, addend] = addAfter(grad);
      if (!add)
        continue;
      OpBuilder b(grad);
      auto fused = b.create<FusedLayerNormGradAddOp>(
          b.getFusedLoc({grad.getLoc(), add.getLoc()}), grad.getGradInput().getType(),
          grad.getGradScale().getType(), grad.getGradBias().getType(), grad.getInput(),
          grad.getScale(), grad.getGrad(), addend, grad.getAxisAttr(), grad.getEpsilonAttr());
      add.getResult().replaceAllUsesWith(fused.getSum());
      grad.getGradScale().replaceAllUsesWith(fused.getGradScale());
      grad.getGradBias().replaceAllUsesWith(fused.getGradBias());
      add->erase();
      grad->erase();
    }
  }
};

} // namespace
