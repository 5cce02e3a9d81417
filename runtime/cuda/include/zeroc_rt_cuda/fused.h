//===- zeroc_rt_cuda/fused.h - What generated fused kernels use -*- C++ -*-===//
//
// A graph.fused_elementwise becomes a kernel in the generated train.cu
// (docs/CudaTarget.md, "Elementwise fusion"). It is written against
// zeroc_rt_cuda/compat.h like the runtime's kernels, so nvcc builds it for
// the GPU and the host compiler for the emulation, and it computes each op
// of the chain with the runtime's own element arithmetic (scalar_ops.h),
// rounding each op's value to the storage type as that op's kernel would.
// A graph.fused_softmax or fused_softmax_grad is the runtime's softmax rows
// (zeroc_rt_cuda/rows.h) with such a chain in its element reads or writes,
// and a graph.fused_attention (_grad) zeroc_rt_cuda/attention.h's kernels
// with the softmax's chains as their prologue and epilogue.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_CUDA_FUSED_H
#define ZEROC_RT_CUDA_FUSED_H

#include "zeroc_rt_cuda/attention.h"
#include "zeroc_rt_cuda/compat.h"
#include "zeroc_rt_cuda/rows.h"
#include "zeroc_rt_cuda/scalar_ops.h"

#include "zeroc_rt/status.h"

namespace zeroc_rt::cuda {

/// 16 bytes of storage type S: the elements a thread of a fused elementwise
/// kernel reads from an input, or writes to a result, in one access when
/// every pointer it accesses so is 16-byte aligned (docs/CudaTarget.md,
/// "Elementwise fusion").
template <typename S> struct alignas(16) Chunk {
  static constexpr int kSize = 16 / static_cast<int>(sizeof(S));
  S e[kSize];
};

/// The chunk at `p` (16-byte aligned).
template <typename S> ZRT_DEV Chunk<S> loadChunk(const S *p) {
#if ZEROC_RT_CUDA_DEVICE
  return *reinterpret_cast<const Chunk<S> *>(p);
#else
  Chunk<S> c;
  std::memcpy(c.e, p, sizeof c.e);
  return c;
#endif
}

/// Stores `c` at `p` (16-byte aligned).
template <typename S> ZRT_DEV void storeChunk(S *p, const Chunk<S> &c) {
#if ZEROC_RT_CUDA_DEVICE
  *reinterpret_cast<Chunk<S> *>(p) = c;
#else
  std::memcpy(p, c.e, sizeof c.e);
#endif
}

/// Whether every pointer is 16-byte aligned.
template <typename... P> ZRT_DEV bool aligned16(const P *...p) {
  return ((reinterpret_cast<uintptr_t>(p) % 16u == 0) && ...);
}

} // namespace zeroc_rt::cuda

ZEROC_RT_EXTERN_C_BEGIN

/// The status of a generated kernel's launch: NULL when `error` (a
/// cudaError_t, 0 on the emulation) is 0, else a ZEROC_RT_INTERNAL status
/// naming `kernel` and carrying CUDA's error string.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_launch_status(int error,
                                                                const char *kernel);

ZEROC_RT_EXTERN_C_END

#endif // ZEROC_RT_CUDA_FUSED_H
