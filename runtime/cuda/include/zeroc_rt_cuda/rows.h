//===- zeroc_rt_cuda/rows.h - Softmax rows, for the runtime and fused kernels -*- C++ -*-===//
//
// A softmax, and its gradient, one block per row (the elements along the
// axis, at a stride when the axis is not the last), its threads striding
// over the row and reducing with blockSum/blockMax; statistics in the
// compute type. The runtime's softmax kernels (kernels/rows.cu) and the
// fused ones a generated program defines (graph.fused_softmax and
// fused_softmax_grad, docs/CudaTarget.md "Softmax fusion") are these
// templates with different element reads and writes, so that a fused
// softmax computes the bits the runtime's kernel computes.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_CUDA_ROWS_H
#define ZEROC_RT_CUDA_ROWS_H

#include "zeroc_rt_cuda/chunk.h"
#include "zeroc_rt_cuda/compat.h"

#include <type_traits>

namespace zeroc_rt::cuda {

/// `rows` rows of `count` elements at stride `inner`; row r starts at
/// (r / inner) * count * inner + r % inner.
struct Rows {
  int64_t rows, count, inner;
};
ZRT_HD int64_t rowBase(const Rows &g, int64_t r) {
  return (r / g.inner) * g.count * g.inner + r % g.inner;
}

/// The blocks a launch over `rows` rows takes: a block per row, capped
/// (each block loops over rows with the grid's stride).
inline int64_t rowBlocks(int64_t rows) {
  return rows < 1 ? 1 : (rows > 65535 * 16 ? 65535 * 16 : rows);
}

/// Elements of a row each thread keeps in registers: a softmax row of up to
/// kRowCache * blockDim elements (2048 at kBlock threads: the attention's
/// rows) is read from memory once, where the uncached loops read it twice
/// (the max and the sum in one pass, rowMaxAndSum; then the output).
/// Thread t keeps elements t, t + blockDim, ..., the elements it would read
/// in the uncached loops, in the same order.
constexpr int kRowCache = 8;

ZRT_DEV bool rowFitsCache(int64_t count) {
  return count <= static_cast<int64_t>(kRowCache) * blockThreads();
}

/// The first of the V elements from slot i of the thread's cache (i a
/// multiple of V) in a row of `count` (a multiple of V), or -1 past its
/// end. The cache holds runs of V elements (one, or a 16-byte Chunk that a
/// thread reads in one access): the thread's runs t, t + blockDim, ... of
/// the row, in order, as the uncached loops stride over them.
template <int V> ZRT_DEV int64_t cachedRun(int i, int64_t count) {
  const int64_t j = (threadIndex() + static_cast<int64_t>(i / V) * blockThreads()) * V;
  return j < count ? j : -1;
}

/// Element i of the thread's cache: the row's element j, or -1 past its end.
ZRT_DEV int64_t cachedElement(int i, int64_t count) { return cachedRun<1>(i, count); }

/// The threads of a block that takes rows of `count` elements one at a
/// time with about `perThread` elements each: a multiple of 32, at least
/// 32, at most `most`.
inline int rowThreadsFor(int64_t count, int64_t perThread, int most) {
  const int64_t need = (count + perThread - 1) / perThread;
  const int64_t t = (need + 31) / 32 * 32;
  return static_cast<int>(t < 32 ? 32 : (t > most ? most : t));
}

/// The threads of a block whose rows of `count` elements fit their caches
/// (kRowCache each), at most kBlock. A layer norm's rows of 768 take 96:
/// a block of kBlock would leave most of its threads idle and hold fewer
/// rows in flight per multiprocessor.
inline int rowThreads(int64_t count) { return rowThreadsFor(count, kRowCache, kBlock); }

/// The elements of the runs a row kernel reads at once (forRowRuns): two
/// 16-byte chunks, so that a thread has two loads in flight before it
/// computes on either (a block of 1024 threads, the cross-entropy's, then
/// keeps 32 KB of its row in flight per multiprocessor).
template <typename S> constexpr int kRowRun = 2 * Chunk<S>::kSize;

/// Calls f(j, n) for the thread's runs of a row of `count` contiguous
/// elements at `row`, n an std::integral_constant: 1, or kRowRun<S> for
/// the elements j .. j + kRowRun - 1 from a 16-byte boundary, which f
/// reads (loadRun) a chunk per access. With `chunks`, the elements before
/// the row's first 16-byte boundary come one at a time, then whole runs,
/// then the rest one at a time; without, every element one at a time. The
/// block's threads take every blockDim-th run of each part, so a block of
/// one thread visits the row in order.
template <typename S, typename F>
ZRT_DEV void forRowRuns(const S *row, int64_t count, bool chunks, F f) {
  constexpr int R = kRowRun<S>;
  const int64_t misaligned = static_cast<int64_t>(reinterpret_cast<uintptr_t>(row) % 16u);
  int64_t head = chunks ? ((16 - misaligned) % 16) / static_cast<int64_t>(sizeof(S)) : count;
  head = head < count ? head : count;
  const int64_t whole = chunks ? (count - head) / R : 0;
  const int t = threadIndex(), n = blockThreads();
  for (int64_t j = t; j < head; j += n)
    f(j, std::integral_constant<int, 1>{});
  for (int64_t c = t; c < whole; c += n)
    f(head + c * R, std::integral_constant<int, R>{});
  for (int64_t j = head + whole * R + t; j < count; j += n)
    f(j, std::integral_constant<int, 1>{});
}

/// The max of the row's `count` elements at `stride` from `base` (NaN
/// wins) and the sum of exp(x - max), in every thread of the block; x(k)
/// is element k (an index into the whole tensor) in the compute type C.
/// One pass over the row (an online softmax): each thread keeps the max of
/// its elements and its sum relative to that max, rescaling the sum when
/// the max grows, and the block combines the threads' sums at the row's
/// max. A row of the vocabulary's size (the cross-entropy's scores) is too
/// long for the register cache (kRowCache) and is read once here, not
/// twice. While a thread's max is -inf its sum is not used: the next
/// larger element resets it, and the block takes 0 for a thread whose
/// elements are all -inf. A row whose every element is -inf sums to 0 (its
/// max -inf, so a softmax of it is NaN, as the CPU kernel's); NaN and +inf
/// make the sum NaN, as two passes would.
template <typename C, typename X>
ZRT_DEV void rowMaxAndSum(X x, int64_t base, int64_t count, int64_t stride, C *scratch,
                          C &mx, C &sum) {
  C m = C(-INFINITY), s = C(0);
  for (int64_t j = threadIndex(); j < count; j += blockThreads()) {
    const C v = x(base + j * stride);
    if (v > m || v != v) {
      s = m == C(-INFINITY) ? C(0) : s * exp(m - v);
      m = v;
    }
    s += exp(v - m);
  }
  mx = blockMax(m, scratch);
  sum = blockSum(m == C(-INFINITY) ? C(0) : C(s * exp(m - mx)), scratch);
}

/// rowMaxAndSum of a row of `count` contiguous elements at `row`, read in
/// runs of chunks (forRowRuns; `chunks` as there): a thread folds a run's
/// max into its own, rescaling its sum once per run, then adds the run's
/// exponentials. The same NaN, -inf and +inf rules hold.
template <typename C, typename S>
ZRT_DEV void rowMaxAndSumRuns(const S *row, int64_t count, bool chunks, C *scratch, C &mx, C &sum) {
  C m = C(-INFINITY), s = C(0);
  forRowRuns(row, count, chunks, [&](int64_t j, auto n) {
    constexpr int V = decltype(n)::value;
    C v[V];
    loadRun<V>(row + j, v);
    C rm = v[0];
    for (int e = 1; e < V; ++e)
      rm = maxNaN(rm, v[e]);
    if (rm > m || rm != rm) {
      s = m == C(-INFINITY) ? C(0) : s * exp(m - rm);
      m = rm;
    }
    for (int e = 0; e < V; ++e)
      s += exp(v[e] - m);
  });
  mx = blockMax(m, scratch);
  sum = blockSum(m == C(-INFINITY) ? C(0) : C(s * exp(m - mx)), scratch);
}

/// The softmax (`log`: log-softmax) of every row of `g`, the block's rows
/// in the grid's stride: in(k) is the input's element k in the compute
/// type C, and out(k, v) takes the result's element k, in C (the caller
/// rounds it to its storage type).
template <typename C, typename In, typename Out>
ZRT_DEV void softmaxRows(const Rows &g, int log, In in, Out out) {
  __shared__ C scratch[32];
  const bool cached = rowFitsCache(g.count);
  for (int64_t r = blockIndex(); r < g.rows; r += gridBlocks()) {
    const int64_t base = rowBase(g, r);
    C mx, sum;
    if (cached) {
      C v[kRowCache];
      mx = C(-INFINITY);
      for (int i = 0; i < kRowCache; ++i) {
        const int64_t j = cachedElement(i, g.count);
        v[i] = j < 0 ? C(0) : in(base + j * g.inner);
        if (j >= 0)
          mx = maxNaN(mx, v[i]);
      }
      mx = blockMax(mx, scratch);
      sum = C(0);
      for (int i = 0; i < kRowCache; ++i)
        if (cachedElement(i, g.count) >= 0)
          sum += exp(v[i] - mx);
      sum = blockSum(sum, scratch);
      const C lse = log_(sum);
      for (int i = 0; i < kRowCache; ++i) {
        const int64_t j = cachedElement(i, g.count);
        if (j < 0)
          continue;
        const C z = v[i] - mx;
        out(base + j * g.inner, log ? z - lse : exp(z) / sum);
      }
      continue;
    }
    rowMaxAndSum(in, base, g.count, g.inner, scratch, mx, sum);
    const C lse = log_(sum);
    for (int64_t j = threadIndex(); j < g.count; j += blockThreads()) {
      const C z = in(base + j * g.inner) - mx;
      out(base + j * g.inner, log ? z - lse : exp(z) / sum);
    }
  }
}

/// The softmax's (`log`: log-softmax's) input gradient of every row of `g`
/// from its output y(k) and output gradient gy(k) (compute type C);
/// out(k, v) takes the gradient's element k, in C.
template <typename C, typename Y, typename GY, typename Out>
ZRT_DEV void softmaxGradRows(const Rows &g, int log, Y y, GY gy, Out out) {
  __shared__ C scratch[32];
  const bool cached = rowFitsCache(g.count);
  for (int64_t r = blockIndex(); r < g.rows; r += gridBlocks()) {
    const int64_t base = rowBase(g, r);
    C dot = C(0);
    if (cached) { // y and gy read once
      C yv[kRowCache], gv[kRowCache];
      for (int i = 0; i < kRowCache; ++i) {
        const int64_t j = cachedElement(i, g.count);
        yv[i] = j < 0 ? C(0) : y(base + j * g.inner);
        gv[i] = j < 0 ? C(0) : gy(base + j * g.inner);
        if (j >= 0)
          dot += log ? gv[i] : gv[i] * yv[i];
      }
      dot = blockSum(dot, scratch);
      for (int i = 0; i < kRowCache; ++i) {
        const int64_t j = cachedElement(i, g.count);
        if (j >= 0)
          out(base + j * g.inner, log ? gv[i] - exp(yv[i]) * dot : yv[i] * (gv[i] - dot));
      }
      continue;
    }
    for (int64_t j = threadIndex(); j < g.count; j += blockThreads()) {
      const int64_t i = base + j * g.inner;
      dot += log ? gy(i) : gy(i) * y(i);
    }
    dot = blockSum(dot, scratch);
    for (int64_t j = threadIndex(); j < g.count; j += blockThreads()) {
      const int64_t i = base + j * g.inner;
      out(i, log ? gy(i) - exp(y(i)) * dot : y(i) * (gy(i) - dot));
    }
  }
}

} // namespace zeroc_rt::cuda

#endif // ZEROC_RT_CUDA_ROWS_H
