//===- OverflowFromNorm.cpp - The overflow flag off the global norm -------===//
//
// docs/RationaleZero.md, "The overflow check": the loss scaler's flag is
// read off the sum of squares the norm already reduces, so that the step
// passes over the gradients once and reduces one scalar.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Passes/Passes.h"

#include "zeroc/Dialect/Zero/BufferPlanning.h"
#include "zeroc/Dialect/Zero/ZeroOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace zeroc {
#define GEN_PASS_DEF_OVERFLOWFROMNORM
#include "zeroc/Passes/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc;

namespace {

/// Whether the squares of `grads`' elements cannot overflow f64: 16-bit
/// floats and f32.
bool squaresFitF64(ValueRange grads) {
  return llvm::all_of(grads, [](Value g) {
    auto f = llvm::dyn_cast<FloatType>(zero::bufferElementType(g.getType()));
    return f && f.getWidth() <= 32;
  });
}

/// The sum of squares of exactly `grads` that a zero.clip_grad_norm in
/// `block` reads (the zero.sum_squares, or its all-reduce with sum), or null.
Value globalSumSquares(Block &block, ValueRange grads) {
  for (auto clip : block.getOps<zero::ClipGradNormOp>()) {
    Value total = clip.getSumSquares();
    Value local = total;
    if (auto ar = total.getDefiningOp<zero::AllReduceOp>()) {
      if (ar.getReduction() != zero::ReduceKind::Sum || ar.getScale())
        continue;
      local = ar.getInput();
    }
    auto ss = local.getDefiningOp<zero::SumSquaresOp>();
    if (ss && ss->getBlock() == &block && total.getDefiningOp()->getBlock() == &block &&
        ss.getGrads() == grads)
      return total;
  }
  return {};
}

struct OverflowFromNormPass
    : zeroc::impl::OverflowFromNormBase<OverflowFromNormPass> {
  void runOnOperation() override {
    auto fn = getOperation().lookupSymbol<func::FuncOp>("train_step");
    if (!fn || fn.isExternal())
      return;
    SmallVector<zero::HasOverflowOp> checks(
        fn.getBody().getOps<zero::HasOverflowOp>());
    for (zero::HasOverflowOp check : checks)
      rewrite(check);
  }

  /// Replaces `check` and the all-reduce that makes it global by the
  /// non-finiteness of the global sum of squares of the same gradients.
  void rewrite(zero::HasOverflowOp check) {
    if (!check->hasOneUse() || !squaresFitF64(check.getGrads()))
      return;
    auto max = llvm::dyn_cast<zero::AllReduceOp>(*check->user_begin());
    if (!max || max.getReduction() != zero::ReduceKind::Max || max.getScale())
      return;
    Block &block = *check->getBlock();
    Value total = globalSumSquares(block, check.getGrads());
    if (!total)
      return;
    Operation *after = total.getDefiningOp();
    // What reads the flag before the sum is known must be able to move
    // after it: the loss-scaler update, which yields nothing, past ops that
    // neither read nor write the step's state (the scale it changes).
    SmallVector<Operation *> moved;
    for (Operation *user : max->getUsers()) {
      Operation *top = block.findAncestorOpInBlock(*user);
      if (!top)
        return;
      if (top->isBeforeInBlock(after)) {
        if (!llvm::isa<zero::UpdateLossScaleOp>(top))
          return;
        moved.push_back(top);
      }
    }
    for (Operation *op : moved)
      for (Operation *between = op->getNextNode(); between != after->getNextNode();
           between = between->getNextNode())
        if (!llvm::is_contained(moved, between) && between != max.getOperation() &&
            !isMemoryEffectFree(between) && !llvm::isa<zero::AllReduceOp>(between))
          return;
    OpBuilder b(after->getContext());
    b.setInsertionPointAfter(after);
    auto flag = b.create<zero::NonFiniteOp>(max.getLoc(), max.getType(), total);
    Operation *last = flag;
    llvm::sort(moved, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
    for (Operation *op : moved) {
      op->moveAfter(last);
      last = op;
    }
    max.getResult().replaceAllUsesWith(flag.getResult());
    max->erase();
    check->erase();
  }
};

} // namespace
