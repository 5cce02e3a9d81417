//===- GradSlab.h - where zero-plan-buffers puts the accumulators -*- C++ -*-===//
//
// The runtime keeps every gradient accumulator in one slab. zero-plan-buffers
// (passes/PlanBuffers.cpp) decides where each lies in it; this file holds
// that decision. A stage-0 bucket packs its accumulators end to end into a
// flat buffer and all-reduces it: when the accumulators already lie end to
// end in the slab at the pack's offsets, the pack is that stretch of the
// slab and copies nothing (docs/CudaTarget.md, "Stage 0's gradients in one
// slab").
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_PASSES_GRADSLAB_H
#define ZEROC_PASSES_GRADSLAB_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

namespace zeroc {

/// Marks kInGradSlabAttr on every zero.pack of a stage-0 @train_step whose
/// inputs are whole gradient accumulators, each the only one of its
/// parameter in the module and read by the pack alone, with one at offset
/// 0: the slab can hold them where the pack does.
void markPacksInGradSlab(mlir::ModuleOp module);

/// Every trainable parameter's accumulator: its byte offset in the slab.
struct GradSlab {
  llvm::StringMap<int64_t> offsets;
  int64_t bytes = 0;
};

/// Lays out the slab: the marked packs first, in the order @train_step runs
/// them, each from a 64-byte boundary with its accumulators at its offsets
/// and its whole buffer (its padding too) taken; then every other
/// accumulator from a 64-byte boundary, grouped by element type (f32, f64,
/// f16, bf16). `gradElements` gives a parameter's accumulator elements
/// (#zero.state_layout's grad; 0: none).
GradSlab layOutGradSlab(mlir::ModuleOp module,
                        llvm::function_ref<int64_t(llvm::StringRef param)> gradElements);

} // namespace zeroc

#endif // ZEROC_PASSES_GRADSLAB_H
