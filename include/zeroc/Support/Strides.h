//===- Strides.h - Element strides of stored tensors -------------*- C++ -*-===//
//
// The element stride of each dim of a dense row-major tensor (the last
// dim's is 1), and of a tensor stored transposed by a perm (graph.matmul's
// result_perm and the fused attentions' result perms: stored dim j is
// logical dim perm[j]), and a strided tensor's strides seen through a
// reshape. The passes that read or write tensors at strides
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

/// The strides at which a tensor of `dims`, stored at `strides`, reads as
/// a reshape to `newDims` (the same element count) without a copy: each
/// run of dims that the reshape merges or splits must be contiguous within
/// itself (each dim's stride its inner neighbour's times that one's size,
/// dims of size 1 aside). None when the reshape would need a copy.
inline std::optional<llvm::SmallVector<int64_t>> reshapedStrides(llvm::ArrayRef<int64_t> dims,
                                                                 llvm::ArrayRef<int64_t> strides,
                                                                 llvm::ArrayRef<int64_t> newDims) {
  int64_t count = 1, newCount = 1;
  for (int64_t d : dims)
    count *= d;
  for (int64_t d : newDims)
    newCount *= d;
  if (count != newCount || dims.size() != strides.size())
    return std::nullopt;
  // No element to place, or a scalar: dense strides read nothing wrong.
  if (count == 0 || dims.empty())
    return rowMajorStrides(newDims);
  llvm::SmallVector<int64_t> out(newDims.size(), 1);
  // From the innermost dim out, one chunk at a time: a chunk is a run of
  // old dims each contiguous within its inner neighbour; the new dims
  // that multiply to the chunk's size take strides within it.
  int64_t newD = static_cast<int64_t>(newDims.size()) - 1;
  int64_t chunkBase = strides.back(), chunkSize = 1, newSize = 1;
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    chunkSize *= dims[d];
    const bool chunkEnds = d == 0 || (dims[d - 1] != 1 && strides[d - 1] != chunkSize * chunkBase);
    if (!chunkEnds)
      continue;
    while (newD >= 0 && (newSize < chunkSize || newDims[newD] == 1)) {
      out[newD] = newSize * chunkBase;
      newSize *= newDims[newD];
      --newD;
    }
    if (newSize != chunkSize)
      return std::nullopt;
    if (d > 0) {
      chunkBase = strides[d - 1];
      chunkSize = newSize = 1;
    }
  }
  if (newD != -1)
    return std::nullopt;
  return out;
}

} // namespace zeroc

#endif // ZEROC_SUPPORT_STRIDES_H
