//===- Fusion.cpp - What the fusion passes share ---------------------------===//

#include "Fusion.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace zeroc::fusion {

bool writesBetween(Operation *from, Operation *to) {
  for (Operation *op = from->getNextNode(); op && op != to; op = op->getNextNode()) {
    auto effects = llvm::dyn_cast<MemoryEffectOpInterface>(op);
    if (effects ? effects.hasEffect<MemoryEffects::Write>() ||
                      effects.hasEffect<MemoryEffects::Free>()
                : !isMemoryEffectFree(op))
      return true;
  }
  return false;
}

} // namespace zeroc::fusion
