//===- Strides.h - Element strides of stored tensors -------------*- C++ -*-===//
//
// The element stride of each dim of a dense row-major tensor (the last
// dim's is 1), and of a tensor stored transposed by a perm (graph.matmul's
// result_perm and the fused attentions' result perms: stored dim j is
// logical dim perm[j]). The passes that read tensors at strides
// (zero-fold-matmul-views, zero-fuse-attention) and the CUDA emitter, which
// prints them, share these.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_SUPPORT_STRIDES_H
#define ZEROC_SUPPORT_STRIDES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace zeroc {

/// The strides of a dense row-major tensor of `dims`.
inline llvm::SmallVector<int64_t> rowMajorStrides(llvm::ArrayRef<int64_t> dims) {
  llvm::SmallVector<int64_t> strides(dims.size(), 1);
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d > 0; --d)
    strides[d - 1] = strides[d] * dims[d];
  return strides;
}

/// The strides, one per logical dim, of a tensor of logical `dims` stored
/// dense in the order `perm` (stored dim j is logical dim perm[j]); without
/// a perm, row-major.
inline llvm::SmallVector<int64_t> permutedStrides(llvm::ArrayRef<int64_t> dims,
                                                  std::optional<llvm::ArrayRef<int64_t>> perm) {
  if (!perm)
    return rowMajorStrides(dims);
  llvm::SmallVector<int64_t> strides(dims.size(), 0);
  int64_t stride = 1;
  for (int64_t j = static_cast<int64_t>(perm->size()) - 1; j >= 0; --j) {
    strides[(*perm)[j]] = stride;
    stride *= dims[(*perm)[j]];
  }
  return strides;
}

} // namespace zeroc

#endif // ZEROC_SUPPORT_STRIDES_H
