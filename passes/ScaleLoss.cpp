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
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (gradAccumSteps < 1) {
      module.emitError("zero-scale-loss: grad-accum-steps must be >= 1, got ")
          << static_cast<int64_t>(gradAccumSteps);
      return signalPassFailure();
    }
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
    auto type = llvm::cast<RankedTensorType>(seed.getType());
    if (dynamic && !type.getElementType().isF32()) {
      seed.emitOpError("loss scaling needs an f32 loss, got ") << type;
      return signalPassFailure();
    }
    OpBuilder b(seed);
    Attribute inverse = DenseElementsAttr::get(
        type, b.getFloatAttr(type.getElementType(),
                             1.0 / static_cast<double>(gradAccumSteps)));
    if (!dynamic) {
      seed.setValueAttr(llvm::cast<ElementsAttr>(inverse));
      return;
    }
    Value scaled = b.create<zeroc::zero::LossScaleOp>(seed.getLoc(), type);
    if (gradAccumSteps > 1) {
      Value g = b.create<zeroc::graph::ConstantOp>(
          seed.getLoc(), type, llvm::cast<ElementsAttr>(inverse));
      scaled = b.create<zeroc::graph::MulOp>(seed.getLoc(), type, scaled, g);
    }
    seed.getResult().replaceAllUsesWith(scaled);
    seed.erase();
  }
};

} // namespace
