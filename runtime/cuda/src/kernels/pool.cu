//===- kernels/pool.cu - Max and average pooling and their grads ----------===//
//
// The CPU kernel's geometry (kernels/window.h) and rules: windows are
// visited in row-major tap order, so the first maximum (NaN wins) is the
// CPU's (and PyTorch's) argmax; averages sum in double.
//  - pool: one thread per output element;
//  - pool_grad: one thread per output element adds its gradient (to its
//    argmax, or its share to every tap) into a double scratch of grad_x's
//    size with atomics, then rounded once into grad_x (the CPU sums in
//    double, in output order).
//
//===----------------------------------------------------------------------===//

#include "kernels/common.h"
#include "kernels/window.h"

namespace zeroc_rt::cuda {
namespace {

constexpr int kSp = ZEROC_RT_MAX_SPATIAL;

struct PoolGeom {
  int64_t in[kSp], out[kSp], k[kSp], s[kSp], d[kSp], pb[kSp], pe[kSp];
  int64_t inSize, outSize;
};

ZRT_HD int64_t posOf(const PoolGeom &g, int a, int64_t o, int64_t t) {
  return o * g.s[a] - g.pb[a] + t * g.d[a];
}

/// The average's divisor of output o (the CPU's `divisor`).
ZRT_HD double divisorOf(const PoolGeom &g, const int64_t *o, int includePad) {
  double count = 1.0;
  for (int a = 0; a < kSp; ++a) {
    const int64_t lo = includePad ? -g.pb[a] : 0;
    const int64_t hi = includePad ? g.in[a] + g.pe[a] : g.in[a];
    int64_t c = 0;
    for (int64_t t = 0; t < g.k[a]; ++t) {
      const int64_t p = posOf(g, a, o[a], t);
      c += p >= lo && p < hi;
    }
    count *= static_cast<double>(c);
  }
  return count;
}

/// Output element i's plane and spatial position.
ZRT_HD int64_t outputPosition(const PoolGeom &g, int64_t i, int64_t *o) {
  o[2] = i % g.out[2];
  i /= g.out[2];
  o[1] = i % g.out[1];
  i /= g.out[1];
  o[0] = i % g.out[0];
  return i / g.out[0];
}

/// The first maximum's offset in `plane` of output o's window, -1 if the
/// window has no input tap (the CPU's argmax; NaN wins).
template <typename S>
ZRT_HD int64_t argmaxOf(const S *plane, const PoolGeom &g, const int64_t *o) {
  int64_t best = -1;
  double bestV = 0.0;
  for (int64_t t0 = 0; t0 < g.k[0]; ++t0) {
    const int64_t p0 = posOf(g, 0, o[0], t0);
    if (p0 < 0 || p0 >= g.in[0])
      continue;
    for (int64_t t1 = 0; t1 < g.k[1]; ++t1) {
      const int64_t p1 = posOf(g, 1, o[1], t1);
      if (p1 < 0 || p1 >= g.in[1])
        continue;
      for (int64_t t2 = 0; t2 < g.k[2]; ++t2) {
        const int64_t p2 = posOf(g, 2, o[2], t2);
        if (p2 < 0 || p2 >= g.in[2])
          continue;
        const int64_t off = (p0 * g.in[1] + p1) * g.in[2] + p2;
        const double v = static_cast<double>(load(plane[off]));
        if (best < 0 || v > bestV || (v != v && bestV == bestV)) {
          best = off;
          bestV = v;
        }
      }
    }
  }
  return best;
}

/// Calls fn(offset) for output o's taps inside the input, in tap order.
template <typename Fn>
ZRT_HD void forTaps(const PoolGeom &g, const int64_t *o, Fn &&fn) {
  for (int64_t t0 = 0; t0 < g.k[0]; ++t0) {
    const int64_t p0 = posOf(g, 0, o[0], t0);
    if (p0 < 0 || p0 >= g.in[0])
      continue;
    for (int64_t t1 = 0; t1 < g.k[1]; ++t1) {
      const int64_t p1 = posOf(g, 1, o[1], t1);
      if (p1 < 0 || p1 >= g.in[1])
        continue;
      for (int64_t t2 = 0; t2 < g.k[2]; ++t2) {
        const int64_t p2 = posOf(g, 2, o[2], t2);
        if (p2 >= 0 && p2 < g.in[2])
          fn((p0 * g.in[1] + p1) * g.in[2] + p2);
      }
    }
  }
}

template <typename S>
ZRT_GLOBAL void poolKernel(const S *x, S *y, PoolGeom g, int isMax, int includePad,
                           int64_t total) {
  for (int64_t i = gridFirst(); i < total; i += gridStride()) {
    int64_t o[kSp];
    const int64_t p = outputPosition(g, i, o);
    const S *plane = x + p * g.inSize;
    double v;
    if (isMax) {
      const int64_t at = argmaxOf(plane, g, o);
      v = at < 0 ? -INFINITY : static_cast<double>(load(plane[at]));
    } else {
      double sum = 0.0;
      forTaps(g, o, [&](int64_t off) { sum += static_cast<double>(load(plane[off])); });
      v = sum / divisorOf(g, o, includePad);
    }
    y[i] = storeD<S>(v);
  }
}

template <typename S>
ZRT_GLOBAL void poolGradKernel(const S *x, const S *gy, double *acc, PoolGeom g, int isMax,
                               int includePad, int64_t total) {
  for (int64_t i = gridFirst(); i < total; i += gridStride()) {
    int64_t o[kSp];
    const int64_t p = outputPosition(g, i, o);
    double *plane = acc + p * g.inSize;
    const double gv = static_cast<double>(load(gy[i]));
    if (isMax) {
      const int64_t at = argmaxOf(x + p * g.inSize, g, o);
      if (at >= 0)
        atomicAddDouble(plane + at, gv);
    } else {
      const double share = gv / divisorOf(g, o, includePad);
      forTaps(g, o, [&](int64_t off) { atomicAddDouble(plane + off, share); });
    }
  }
}

template <typename S>
ZRT_GLOBAL void roundPoolGradKernel(const double *from, S *to, int64_t n) {
  for (int64_t i = gridFirst(); i < n; i += gridStride())
    to[i] = storeD<S>(from[i]);
}

zeroc_rt_status_t checkKind(const char *k, zeroc_rt_pool_kind_t kind) {
  if (kind != ZEROC_RT_POOL_MAX && kind != ZEROC_RT_POOL_AVG)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: unknown pool kind %d", k,
                          static_cast<int>(kind));
  return nullptr;
}

/// The CPU kernel's checkPool: x-shaped `x` and the pooled `y`.
zeroc_rt_status_t checkPool(const char *k, const char *xName, zrt_ct x, const char *yName,
                            zrt_ct y, const zeroc_rt_window_t *window, PoolGeom *out) {
  using namespace zeroc_rt::kernels;
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, xName, x, kFloatDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, yName, y));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, yName, *y, xName, *x));
  Geometry g;
  ZEROC_RT_RETURN_IF_ERROR(checkWindow(k, window, *x, nullptr, &g));
  int64_t dims[kMaxRank];
  const int rank = outDims(g, x->dims[0], x->dims[1], dims);
  ZEROC_RT_RETURN_IF_ERROR(
      checkShape(k, yName, *y, rank, dims, "pooling of x under the window"));
  for (int a = 0; a < kSp; ++a) {
    out->in[a] = g.in[a];
    out->out[a] = g.out[a];
    out->k[a] = g.k[a];
    out->s[a] = g.s[a];
    out->d[a] = g.d[a];
    out->pb[a] = g.pb[a];
    out->pe[a] = g.pe[a];
  }
  out->inSize = g.inSize();
  out->outSize = g.outSize();
  return nullptr;
}

} // namespace
} // namespace zeroc_rt::cuda

using namespace zeroc_rt::cuda;

extern "C" {

zeroc_rt_status_t zeroc_rt_cuda_k_pool(zeroc_rt_pool_kind_t kind, zrt_ct x,
                                       const zeroc_rt_window_t *window, int count_include_pad,
                                       zrt_ct y) {
  using namespace zeroc_rt::kernels;
  const char *k = "pool";
  ZEROC_RT_RETURN_IF_ERROR(checkKind(k, kind));
  PoolGeom g;
  ZEROC_RT_RETURN_IF_ERROR(checkPool(k, "x", x, "y", y, window, &g));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "y", *y, "x", *x));
  const int64_t total = numElements(*y);
  if (!total)
    return nullptr;
  return dispatchFloat(k, x->dtype, [&](auto v) {
    using S = decltype(v);
    return ZRT_LAUNCH(k, poolKernel<S>, blocksFor(total), kBlock,
                      static_cast<const S *>(x->data), static_cast<S *>(y->data), g,
                      kind == ZEROC_RT_POOL_MAX ? 1 : 0, count_include_pad ? 1 : 0, total);
  });
}

zeroc_rt_status_t zeroc_rt_cuda_k_pool_grad(zeroc_rt_pool_kind_t kind, zrt_ct x,
                                            zrt_ct grad_y, const zeroc_rt_window_t *window,
                                            int count_include_pad, zrt_ct grad_x) {
  using namespace zeroc_rt::kernels;
  const char *k = "pool_grad";
  ZEROC_RT_RETURN_IF_ERROR(checkKind(k, kind));
  PoolGeom g;
  ZEROC_RT_RETURN_IF_ERROR(checkPool(k, "grad_x", grad_x, "grad_y", grad_y, window, &g));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "grad_x", *grad_x, "grad_y", *grad_y));
  if (kind == ZEROC_RT_POOL_MAX) {
    if (!x)
      return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: max pooling's gradient needs x",
                            k);
    ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "x", x));
    ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "x", *x, "grad_x", *grad_x));
    ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "x", *x, "grad_x", *grad_x));
    ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "grad_x", *grad_x, "x", *x));
  }
  const int64_t n = numElements(*grad_x), total = numElements(*grad_y);
  if (!n)
    return nullptr;
  void *acc = nullptr;
  ZEROC_RT_RETURN_IF_ERROR(gpuScratch(static_cast<size_t>(n) * sizeof(double), &acc));
  ZEROC_RT_RETURN_IF_ERROR(gpuZero(acc, static_cast<size_t>(n) * sizeof(double)));
  const bool isMax = kind == ZEROC_RT_POOL_MAX;
  return dispatchFloat(k, grad_x->dtype, [&](auto v) -> zeroc_rt_status_t {
    using S = decltype(v);
    if (total)
      ZEROC_RT_RETURN_IF_ERROR(ZRT_LAUNCH(
          k, poolGradKernel<S>, blocksFor(total), kBlock,
          isMax ? static_cast<const S *>(x->data) : static_cast<const S *>(nullptr),
          static_cast<const S *>(grad_y->data), static_cast<double *>(acc), g,
          isMax ? 1 : 0, count_include_pad ? 1 : 0, total));
    return ZRT_LAUNCH(k, roundPoolGradKernel<S>, blocksFor(n), kBlock,
                      static_cast<const double *>(acc), static_cast<S *>(grad_x->data), n);
  });
}

} // extern "C"
