//===- Overlap.cpp - stage 3 parameter gathers started one bucket early ---===//
//
// overlap_comm at stage 3: each parameter gather starts right after the
// previous one is waited for, so it travels while the previous bucket's
// compute runs. See docs/RationaleZero.md, "Overlap".
//
//===----------------------------------------------------------------------===//
#include "zeroc/Passes/Passes.h"

#include "zeroc/Dialect/Zero/ZeroOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace zeroc {
#define GEN_PASS_DEF_OVERLAP
#include "zeroc/Passes/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc;

namespace {

/// The ops that make a gather's operand: a zero.param_shard, or a
/// zero.concat_shards of them, in program order; empty when the operand
/// comes from anything else (it then cannot move).
SmallVector<Operation *> shardReads(Value shard) {
  SmallVector<Operation *> ops;
  Operation *def = shard.getDefiningOp();
  if (llvm::isa_and_nonnull<zero::ParamShardOp>(def))
    return {def};
  auto concat = llvm::dyn_cast_or_null<zero::ConcatShardsOp>(def);
  if (!concat)
    return {};
  for (Value in : concat.getInputs()) {
    auto read = in.getDefiningOp<zero::ParamShardOp>();
    if (!read || !read->hasOneUse())
      return {};
    ops.push_back(read);
  }
  ops.push_back(concat);
  return ops;
}

struct OverlapPass : zeroc::impl::OverlapBase<OverlapPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto stage = module->getAttrOfType<IntegerAttr>("zero.stage");
    auto fn = module.lookupSymbol<func::FuncOp>("train_micro_step");
    if (!stage || !fn) {
      module.emitError("zero-overlap needs @train_micro_step and zero.stage (run zero-partition)");
      return signalPassFailure();
    }
    if (stage.getInt() != 3)
      return;
    SmallVector<zero::AllGatherOp> gathers(fn.getOps<zero::AllGatherOp>());
    OpBuilder b(&getContext());
    Operation *previousWait = nullptr;
    for (zero::AllGatherOp gather : gathers) {
      b.setInsertionPoint(gather);
      auto tokenType = zero::TokenType::get(&getContext(), gather.getType());
      auto start = b.create<zero::AllGatherStartOp>(gather.getLoc(), tokenType,
                                                    gather.getShard());
      start->setAttrs(gather->getDiscardableAttrDictionary());
      auto wait = b.create<zero::WaitOp>(gather.getLoc(), start.getToken());
      gather.replaceAllUsesWith(wait.getResult());
      gather.erase();
      // Start one gather early: after the previous wait, with the reads of
      // what it sends (state reads and a copy, none of which depends on the
      // ops it moves across).
      SmallVector<Operation *> reads = shardReads(start.getShard());
      if (previousWait && !reads.empty()) {
        Operation *after = previousWait;
        for (Operation *read : reads) {
          read->moveAfter(after);
          after = read;
        }
        start->moveAfter(after);
      }
      previousWait = wait;
    }
  }
};

} // namespace
