//===- WidenGatherGrad.cpp - 16-bit gather gradients summed in f32 --------===//
//
// An f16 or bf16 gather gradient as an f32 gather gradient and a cast, so
// that the f32 sums the kernels need are a planned tensor rather than the
// kernels' own scratch (Passes.td, zero-widen-gather-grad).
//
//===----------------------------------------------------------------------===//

#include "zeroc/Passes/Passes.h"

#include "zeroc/Dialect/Graph/GraphOps.h"

#include "mlir/IR/Builders.h"

namespace zeroc {
#define GEN_PASS_DEF_WIDENGATHERGRAD
#include "zeroc/Passes/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::graph;

namespace {

struct WidenGatherGradPass : zeroc::impl::WidenGatherGradBase<WidenGatherGradPass> {
  void runOnOperation() override {
    SmallVector<GatherGradOp> narrow;
    getOperation().walk([&](GatherGradOp g) {
      Type element = g.getType().getElementType();
      if (element.isF16() || element.isBF16())
        narrow.push_back(g);
    });
    for (GatherGradOp g : narrow) {
      OpBuilder b(g);
      RankedTensorType type = g.getType();
      auto wide = b.create<GatherGradOp>(g.getLoc(), type.clone(b.getF32Type()), g.getGrad(),
                                         g.getIndices(), g.getAxisAttr(), g.getPaddingIdxAttr());
      auto cast = b.create<CastOp>(g.getLoc(), type, wide.getResult());
      g.getResult().replaceAllUsesWith(cast.getResult());
      g.erase();
    }
  }
};

} // namespace
