//===- zeroc_rt_cuda/chunk.h - 16-byte loads and stores -*- C++ -*-===//
//
// A kernel that moves memory reads and writes 16 bytes per thread where it
// can: a Chunk of elements in one access. Generated elementwise kernels
// (zeroc_rt_cuda/fused.h) and the runtime's row kernels (rows.h,
// kernels/rows.cu) share these, and they compile for the GPU and for the
// host emulation alike (compat.h).
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_CUDA_CHUNK_H
#define ZEROC_RT_CUDA_CHUNK_H

#include "zeroc_rt_cuda/compat.h"

namespace zeroc_rt::cuda {

/// 16 bytes of storage type S, read or written in one access at a 16-byte
/// aligned address.
template <typename S> struct alignas(16) Chunk {
  static constexpr int kSize = 16 / static_cast<int>(sizeof(S));
  S e[kSize];
};

/// The chunk at `p` (16-byte aligned).
template <typename S> ZRT_DEV Chunk<S> loadChunk(const S *p) {
#if ZEROC_RT_CUDA_DEVICE
  return *reinterpret_cast<const Chunk<S> *>(p);
#else
  emu::checkAligned(p, 16);
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
  emu::checkAligned(p, 16);
  std::memcpy(p, c.e, sizeof c.e);
#endif
}

/// Whether every pointer is 16-byte aligned (null ones are).
template <typename... P> ZRT_HD bool aligned16(const P *...p) {
  return ((reinterpret_cast<uintptr_t>(p) % 16u == 0) && ...);
}

/// V consecutive elements at `p` in the compute type, into v[0..V): one
/// element, or whole chunks (V a multiple of Chunk<S>::kSize; `p` 16-byte
/// aligned), every chunk's load issued before any of its elements is used.
template <int V, typename S, typename C> ZRT_DEV void loadRun(const S *p, C *v) {
  constexpr int K = Chunk<S>::kSize;
  static_assert(V == 1 || V % K == 0, "a run is an element or whole chunks");
  if constexpr (V == 1) {
    v[0] = load(*p);
  } else {
    Chunk<S> c[V / K];
    for (int k = 0; k < V / K; ++k)
      c[k] = loadChunk(p + k * K);
    for (int k = 0; k < V / K; ++k)
      for (int e = 0; e < K; ++e)
        v[k * K + e] = load(c[k].e[e]);
  }
}

/// Stores v[0..V) at `p`, each rounded to S as storeD does (loadRun's
/// converse).
template <int V, typename S, typename C> ZRT_DEV void storeRun(S *p, const C *v) {
  constexpr int K = Chunk<S>::kSize;
  static_assert(V == 1 || V % K == 0, "a run is an element or whole chunks");
  if constexpr (V == 1) {
    *p = storeD<S>(v[0]);
  } else {
    for (int k = 0; k < V / K; ++k) {
      Chunk<S> c;
      for (int e = 0; e < K; ++e)
        c.e[e] = storeD<S>(v[k * K + e]);
      storeChunk(p + k * K, c);
    }
  }
}

} // namespace zeroc_rt::cuda

#endif // ZEROC_RT_CUDA_CHUNK_H
