//===- RowPitch.h - rows zero-plan-buffers stores at a pitch -----*- C++ -*-===//
//
// A language model's logits are [tokens, vocabulary] rows, and GPT-2's
// 50,257 bf16 scores make rows of 100,514 bytes: every row but the first
// starts off a 16-byte boundary. The head's GEMMs write them and its
// gradient's two GEMMs read them, and a GPU's fastest GEMM kernels need
// each matrix's leading dimension in 16-byte multiples (on a Hopper, TMA
// cannot describe anything else). zero-plan-buffers therefore stores such
// rows at a pitch: each row from an aligned boundary, the elements in
// between unused (docs/CudaTarget.md, "The logits' rows at a pitch"). This
// file holds that decision.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_PASSES_ROWPITCH_H
#define ZEROC_PASSES_ROWPITCH_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseSet.h"

namespace zeroc {

/// Pads the rows of a cross-entropy's rank-2 scores and of their gradient
/// to a multiple of `alignBytes` when a row is not one already, where the
/// pitch is invisible to everything else: the scores are a graph.gemm's
/// result read only as the scores of cross-entropies (the loss, its
/// gradient, the fused op), and each gradient is read only as the a or b of
/// GEMMs; every GEMM has alpha 1 and no c. Records the strides
/// (kResultStridesAttr: the pitch, then 1) on the GEMM and on each op
/// that writes a gradient, and returns the padded values.
/// `ops` are one function's, in the order they run; values in `outside`
/// (placed elsewhere by the plan) are left alone. 0 pads nothing.
llvm::DenseSet<mlir::Value> padRowPitches(llvm::ArrayRef<mlir::Operation *> ops, int64_t alignBytes,
                                          const llvm::DenseSet<mlir::Value> &outside);

/// The bytes a value stored at `strides` (each dim's, in elements) spans:
/// from its first element to the end of its last.
int64_t stridedStorageBytes(mlir::Type type, llvm::ArrayRef<int64_t> strides);

} // namespace zeroc

#endif // ZEROC_PASSES_ROWPITCH_H
