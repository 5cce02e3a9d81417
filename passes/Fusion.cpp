//===- Fusion.cpp - What the fusion passes share ---------------------------===//

#include "Fusion.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

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

} // namespace zeroc::fusion
