//===- Fusion.cpp - What the fusion passes share ---------------------------===//

#include "Fusion.h"

#include "zeroc/Dialect/Zero/BufferPlanning.h"

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

bool writesStorageBetween(Operation *from, Operation *to, ValueRange values) {
  llvm::DenseSet<Value> roots;
  for (Value v : values)
    roots.insert(zero::storageRoot(v));
  for (Operation *op = from->getNextNode(); op && op != to; op = op->getNextNode())
    if (mayWriteOrFree(op) && llvm::any_of(op->getOperands(), [&](Value v) {
          return roots.contains(zero::storageRoot(v));
        }))
      return true;
  return false;
}

} // namespace zeroc::fusion
