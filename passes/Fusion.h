//===- Fusion.h - What the fusion passes share --------------------*- C++ -*-===//
//
// zero-fuse-elementwise (passes/FuseElementwise.cpp) and zero-fuse-softmax
// (passes/FuseSoftmax.cpp) move where values are read: a fused op reads
// its inputs where it stands, which is after some of the ops it replaces.
// zero-rematerialize-elementwise reads a value where a later op stands.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_PASSES_FUSION_H
#define ZEROC_PASSES_FUSION_H

#include "mlir/IR/Operation.h"

namespace zeroc::fusion {

/// Whether `op` may write or free memory: a write or free effect, or
/// effects it does not declare.
bool mayWriteOrFree(mlir::Operation *op);

/// Whether an op between `from` and `to` (both in one block, `from` first)
/// writes or frees memory: a value `from` reads may have changed or be gone
/// by `to` (a collective reducing in place, zero.release of a gathered
/// parameter buffer). Ops whose effects are unknown count as such.
bool writesBetween(mlir::Operation *from, mlir::Operation *to);

/// Whether `v` is defined before `op` in its block (or is an argument of
/// that block): an op at `op`'s place may read it.
bool definedBefore(mlir::Value v, mlir::Operation *op);

/// Whether an op between `from` and `to` (both in one block, `from` first)
/// may write or free the storage (zero::storageRoot) of one of `values`:
/// an op at `from` would read them as they are at `to` unless one is. Such
/// an op writes or frees and has an operand of that storage (a collective
/// reducing in place, zero.release of a gathered buffer); or writes the
/// persistent state that ops name by symbol (zero::StateResource) where a
/// storage is state an op read (a parameter's shard or replica, an
/// accumulator, a buffer), a gradient accumulation only where it is an
/// accumulator; or does not declare its effects.
bool writesStorageBetween(mlir::Operation *from, mlir::Operation *to, mlir::ValueRange values);

} // namespace zeroc::fusion

#endif // ZEROC_PASSES_FUSION_H
