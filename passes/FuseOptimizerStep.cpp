//===- FuseOptimizerStep.cpp - One multi-tensor Adam update per run -------===//
//
// docs/CudaTarget.md, "The optimizer step": consecutive zero.adam_updates
// with the same scalars become one zero.adam_update_multi, which the CUDA
// runtime runs as one launch.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Passes/Passes.h"

#include "zeroc/Dialect/Zero/ZeroOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace zeroc {
#define GEN_PASS_DEF_FUSEOPTIMIZERSTEP
#include "zeroc/Passes/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc;

namespace {

/// Whether `b` can join a run that `a` is in: the same scalars and options.
bool sameStep(zero::AdamUpdateOp a, zero::AdamUpdateOp b) {
  return a.getFactor() == b.getFactor() && a.getLr() == b.getLr() &&
         a.getBeta1() == b.getBeta1() && a.getBeta2() == b.getBeta2() &&
         a.getStep() == b.getStep() && a.getOptimizer() == b.getOptimizer();
}

/// Replaces `run` (two or more consecutive updates) by one multi update.
void fuse(ArrayRef<zero::AdamUpdateOp> run) {
  zero::AdamUpdateOp last = run.back();
  SmallVector<Attribute> params;
  SmallVector<Value> grads;
  SmallVector<Location> locs;
  for (zero::AdamUpdateOp up : run) {
    params.push_back(up.getParamAttr());
    grads.push_back(up.getGrad());
    locs.push_back(up.getLoc());
  }
  OpBuilder b(last);
  b.create<zero::AdamUpdateMultiOp>(
      b.getFusedLoc(locs), b.getArrayAttr(params), grads, last.getFactor(),
      last.getLr(), last.getBeta1(), last.getBeta2(), last.getStep(),
      last.getOptimizer());
  for (zero::AdamUpdateOp up : run)
    up->erase();
}

struct FuseOptimizerStepPass
    : zeroc::impl::FuseOptimizerStepBase<FuseOptimizerStepPass> {
  void runOnOperation() override {
    auto fn = getOperation().lookupSymbol<func::FuncOp>("train_step");
    if (!fn || fn.isExternal())
      return;
    SmallVector<zero::IfFiniteOp> guards(fn.getBody().getOps<zero::IfFiniteOp>());
    for (zero::IfFiniteOp guard : guards) {
      SmallVector<SmallVector<zero::AdamUpdateOp>> runs(1);
      for (Operation &op : guard.getBody().front()) {
        auto up = llvm::dyn_cast<zero::AdamUpdateOp>(op);
        SmallVector<zero::AdamUpdateOp> &run = runs.back();
        if (up && (run.empty() || sameStep(run.front(), up))) {
          run.push_back(up);
          continue;
        }
        if (!run.empty())
          runs.emplace_back();
        if (up)
          runs.back().push_back(up);
      }
      for (ArrayRef<zero::AdamUpdateOp> run : runs)
        if (run.size() >= 2)
          fuse(run);
    }
  }
};

} // namespace
