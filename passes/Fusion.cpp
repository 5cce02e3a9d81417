//===- Fusion.cpp - What the fusion passes share ---------------------------===//

#include "Fusion.h"

#include "zeroc/Dialect/Zero/BufferPlanning.h"
#include "zeroc/Dialect/Zero/ZeroOps.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;

namespace zeroc::fusion {

bool mayWriteOrFree(Operation *op) {
  auto effects = llvm::dyn_cast<MemoryEffectOpInterface>(op);
  return effects ? effects.hasEffect<MemoryEffects::Write>() ||
                       effects.hasEffect<MemoryEffects::Free>()
                 : !isMemoryEffectFree(op);
}

bool writesBetween(Operation *from, Operation *to) {
  for (Operation *op = from->getNextNode(); op && op != to; op = op->getNextNode())
    if (mayWriteOrFree(op))
      return true;
  return false;
}

bool definedBefore(Value v, Operation *op) {
  if (auto arg = llvm::dyn_cast<BlockArgument>(v))
    return arg.getOwner() == op->getBlock();
  Operation *def = v.getDefiningOp();
  return def->getBlock() == op->getBlock() && def->isBeforeInBlock(op);
}

namespace {

/// Whether `op` declares `effect` (a write or a free) on the state that
/// ops name by symbol.
bool hasStateEffect(Operation *op, bool write) {
  auto effects = llvm::dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return false;
  SmallVector<MemoryEffects::EffectInstance> list;
  effects.getEffectsOnResource(zero::StateResource::get(), list);
  return llvm::any_of(list, [&](const MemoryEffects::EffectInstance &e) {
    return write ? llvm::isa<MemoryEffects::Write, MemoryEffects::Free>(e.getEffect())
                 : llvm::isa<MemoryEffects::Read>(e.getEffect());
  });
}

/// Whether `writer`'s write of the state may change the state `reader`
/// read: a gradient accumulation writes an accumulator alone; any other
/// write is taken to reach any state.
bool mayChangeState(Operation *writer, Operation *reader) {
  if (llvm::isa<zero::GradAccumulateOp, zero::GradAccumulateRowsOp>(writer))
    return llvm::isa<zero::GradAccumulatorOp>(reader);
  return true;
}

} // namespace

bool writesStorageBetween(Operation *from, Operation *to, ValueRange values) {
  assert(from->getBlock() == to->getBlock() && from->isBeforeInBlock(to) &&
         "writesStorageBetween: `from` must precede `to` in its block");
  llvm::DenseSet<Value> roots;
  SmallVector<Operation *> stateReaders; // the ops that read state that `values` are
  for (Value v : values) {
    Value root = zero::storageRoot(v);
    roots.insert(root);
    if (Operation *def = root.getDefiningOp(); def && hasStateEffect(def, /*write=*/false))
      stateReaders.push_back(def);
  }
  for (Operation *op = from->getNextNode(); op && op != to; op = op->getNextNode()) {
    if (!mayWriteOrFree(op))
      continue;
    // Effects it does not declare itself (those of a region, zero.if_finite).
    if (!llvm::isa<MemoryEffectOpInterface>(op))
      return true;
    if (llvm::any_of(op->getOperands(),
                     [&](Value v) { return roots.contains(zero::storageRoot(v)); }))
      return true;
    if (hasStateEffect(op, /*write=*/true) &&
        llvm::any_of(stateReaders, [&](Operation *r) { return mayChangeState(op, r); }))
      return true;
  }
  return false;
}

} // namespace zeroc::fusion
