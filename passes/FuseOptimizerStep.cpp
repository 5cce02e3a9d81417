//===- FuseOptimizerStep.cpp - One multi-tensor update per run ------------===//
//
// docs/CudaTarget.md, "The optimizer step": consecutive zero.adam_updates
// (zero.sgd_updates) with the same scalars become one
// zero.adam_update_multi (zero.sgd_update_multi), which the CUDA runtime
// runs as one launch.
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
bool sameStep(zero::SgdUpdateOp a, zero::SgdUpdateOp b) {
  return a.getFactor() == b.getFactor() && a.getLr() == b.getLr() && a.getStep() == b.getStep() &&
         a.getOptimizer() == b.getOptimizer();
}

/// The multi update that stands for `run`, built before its last update
/// with the last update's scalars.
void createMulti(OpBuilder &b, Location loc, ArrayAttr params, ValueRange grads,
                 zero::AdamUpdateOp last) {
  b.create<zero::AdamUpdateMultiOp>(loc, params, grads, last.getFactor(), last.getLr(),
                                    last.getBeta1(), last.getBeta2(), last.getStep(),
                                    last.getOptimizer());
}
void createMulti(OpBuilder &b, Location loc, ArrayAttr params, ValueRange grads,
                 zero::SgdUpdateOp last) {
  b.create<zero::SgdUpdateMultiOp>(loc, params, grads, last.getFactor(), last.getLr(),
                                   last.getStep(), last.getOptimizer());
}

/// Replaces `run` (two or more consecutive updates) by one multi update.
template <typename UpdateOp> void fuse(ArrayRef<UpdateOp> run) {
  SmallVector<Attribute> params;
  SmallVector<Value> grads;
  SmallVector<Location> locs;
  for (UpdateOp up : run) {
    params.push_back(up.getParamAttr());
    grads.push_back(up.getGrad());
    locs.push_back(up.getLoc());
  }
  OpBuilder b(run.back());
  createMulti(b, b.getFusedLoc(locs), b.getArrayAttr(params), grads, run.back());
  for (UpdateOp up : run)
    up->erase();
}

/// Fuses each run of two or more consecutive `UpdateOp`s in `block` that
/// share their scalars.
template <typename UpdateOp> void fuseRuns(Block &block) {
  SmallVector<SmallVector<UpdateOp>> runs(1);
  for (Operation &op : block) {
    auto up = llvm::dyn_cast<UpdateOp>(op);
    SmallVector<UpdateOp> &run = runs.back();
    if (up && (run.empty() || sameStep(run.front(), up))) {
      run.push_back(up);
      continue;
    }
    if (!run.empty())
      runs.emplace_back();
    if (up)
      runs.back().push_back(up);
  }
  for (ArrayRef<UpdateOp> run : runs)
    if (run.size() >= 2)
      fuse(run);
}

struct FuseOptimizerStepPass
    : zeroc::impl::FuseOptimizerStepBase<FuseOptimizerStepPass> {
  void runOnOperation() override {
    auto fn = getOperation().lookupSymbol<func::FuncOp>("train_step");
    if (!fn || fn.isExternal())
      return;
    for (zero::IfFiniteOp guard : fn.getBody().getOps<zero::IfFiniteOp>()) {
      fuseRuns<zero::AdamUpdateOp>(guard.getBody().front());
      fuseRuns<zero::SgdUpdateOp>(guard.getBody().front());
    }
  }
};

} // namespace
