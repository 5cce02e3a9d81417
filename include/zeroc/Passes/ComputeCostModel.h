//===- ComputeCostModel.h - the time an op of the micro-step takes -*- C++ -*-===//
//
// What a kernel costs on the compute core, as the passes that place
// communication see it: the larger of its floating-point work at a peak
// rate and the bytes it reads and writes at a memory bandwidth (a roofline).
// The constants come from pass options (zeroc compile --compute-gflops /
// --memory-gb-per-s). See docs/RationaleZero.md, "Overlap".
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_PASSES_COMPUTECOSTMODEL_H
#define ZEROC_PASSES_COMPUTECOSTMODEL_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringMap.h"

namespace zeroc {

/// What the training state ops move besides their operands, from the
/// module (stateOf): each parameter's gradient accumulator element type
/// (a parameter not listed: its gradient's), and the micro-steps per
/// optimizer step (the first micro-step's accumulation only writes).
struct TrainingStateCost {
  llvm::StringMap<mlir::Type> accumulators;
  int64_t microSteps = 1;

  static TrainingStateCost of(mlir::ModuleOp module);
};

struct ComputeCostModel {
  /// Floating-point operations per second the kernels reach, in GFLOP/s.
  double gflops;
  /// Bytes per second they stream through memory, in GB/s.
  double memoryGBPerS;
  TrainingStateCost state = {};

  /// Floating-point operations of `op`: 2MNK for a matrix product, 2 per
  /// multiply-add of a convolution, the products of a fused attention's
  /// kernels (the scores a causal one skips aside), one per result element
  /// otherwise; 0
  /// for an op that only names memory (a view, a reshape, a state read).
  static double flops(mlir::Operation *op);
  /// Bytes `op` reads and writes: its tensor, flat-buffer and shard
  /// operands and results, and the state a gradient accumulation (its
  /// accumulator) or an optimizer update (the master copy, the moments or
  /// the momentum, the 16-bit copy) reads and writes besides; 0 for an op
  /// that only names memory and for a collective (CommCostModel's).
  double bytes(mlir::Operation *op) const;
  /// Microseconds `op` takes: max(flops / rate, bytes / bandwidth).
  double opUs(mlir::Operation *op) const;
};

/// Defaults measured on the CI machine (one core, OpenBLAS's Haswell SGEMM
/// on GPT-2's shapes; a streaming copy): see docs/RationaleZero.md.
inline constexpr double kDefaultComputeGflops = 50.0;
inline constexpr double kDefaultMemoryGBPerS = 10.0;

/// A stage-3 gather starts where the compute before its first use is
/// estimated to take this many times its ring time: the estimates are
/// rough, and MPI progresses a started collective only between kernels.
inline constexpr double kPrefetchSlack = 2.0;

} // namespace zeroc

#endif // ZEROC_PASSES_COMPUTECOSTMODEL_H
