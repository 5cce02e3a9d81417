//===- ScaleLoss.cpp - seed the backward pass with the loss scale ---------===//
#include "zeroc/Passes/Passes.h"

#include "zeroc/Dialect/Graph/GraphOps.h"
#include "zeroc/Dialect/Zero/ZeroOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace zeroc {
#define GEN_PASS_DEF_SCALELOSS
#include "zeroc/Passes/Passes.h.inc"
} // namespace zeroc

using namespace mlir;

namespace {

struct ScaleLossPass : zeroc::impl::ScaleLossBase<ScaleLossPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fn = module.lookupSymbol<func::FuncOp>("forward_backward");
    if (!fn) {
      module.emitError("zero-scale-loss needs @forward_backward (run zero-autodiff)");
      return signalPassFailure();
    }
    SmallVector<zeroc::graph::ConstantOp> seeds;
    fn.walk([&](zeroc::graph::ConstantOp c) {
      if (c->hasAttr("graph.loss_seed"))
        seeds.push_back(c);
    });
    if (seeds.size() != 1) {
      fn.emitOpError("has ") << seeds.size()
                             << " loss seeds marked graph.loss_seed, expected 1";
      return signalPassFailure();
    }
    auto seed = seeds.front();
    if (!seed.getType().getElementType().isF32()) {
      seed.emitOpError("loss scaling needs an f32 loss, got ") << seed.getType();
      return signalPassFailure();
    }
    OpBuilder b(seed);
    Value scale = b.create<zeroc::zero::LossScaleOp>(seed.getLoc(), seed.getType());
    seed.getResult().replaceAllUsesWith(scale);
    seed.erase();
  }
};

} // namespace
