//===- kernels/pool.cc - Max and average pooling and their grads -*- C++ -*-===//
//
// Each (sample, channel) plane is pooled independently; windows are visited
// in row-major tap order, so "the first maximum" is PyTorch's argmax and
// every sum runs in a fixed order, in double.
//
//===----------------------------------------------------------------------===//

#include "kernels/tensor_check.h"
#include "kernels/window.h"

#include <cmath>
#include <limits>

namespace zeroc_rt::kernels {
namespace {

zeroc_rt_status_t checkKind(const char *k, zeroc_rt_pool_kind_t kind) {
  if (kind != ZEROC_RT_POOL_MAX && kind != ZEROC_RT_POOL_AVG)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: unknown pool kind %d",
                          k, static_cast<int>(kind));
  return nullptr;
}

/// Checks x-shaped `x` and the pooled `y` (either may be an output).
zeroc_rt_status_t checkPool(const char *k, const char *xName,
                            const zeroc_rt_tensor_t *x, const char *yName,
                            const zeroc_rt_tensor_t *y,
                            const zeroc_rt_window_t *window, Geometry *g) {
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, xName, x, kFloatDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, yName, y));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, yName, *y, xName, *x));
  ZEROC_RT_RETURN_IF_ERROR(checkWindow(k, window, *x, nullptr, g));
  int64_t dims[kMaxRank];
  int rank = outDims(*g, x->dims[0], x->dims[1], dims);
  return checkShape(k, yName, *y, rank, dims, "pooling of x under the window");
}

/// Calls fn(inputOffset) for the taps of output (o0, o1, o2) that lie in
/// the input, in row-major tap order.
template <typename Fn>
void forTaps(const Geometry &g, int64_t o0, int64_t o1, int64_t o2, Fn &&fn) {
  for (int64_t t0 = 0; t0 < g.k[0]; ++t0) {
    const int64_t p0 = g.pos(0, o0, t0);
    if (p0 < 0 || p0 >= g.in[0])
      continue;
    for (int64_t t1 = 0; t1 < g.k[1]; ++t1) {
      const int64_t p1 = g.pos(1, o1, t1);
      if (p1 < 0 || p1 >= g.in[1])
        continue;
      for (int64_t t2 = 0; t2 < g.k[2]; ++t2) {
        const int64_t p2 = g.pos(2, o2, t2);
        if (p2 >= 0 && p2 < g.in[2])
          fn((p0 * g.in[1] + p1) * g.in[2] + p2);
      }
    }
  }
}

/// The average's divisor of output (o0, o1, o2): its taps inside the input,
/// or inside [-pads_begin, in + pads_end) with count_include_pad.
double divisor(const Geometry &g, const int64_t *o, bool includePad) {
  double count = 1.0;
  for (int a = 0; a < kSpatial; ++a) {
    int64_t lo = includePad ? -g.pb[a] : 0;
    int64_t hi = includePad ? g.in[a] + g.pe[a] : g.in[a];
    int64_t c = 0;
    for (int64_t t = 0; t < g.k[a]; ++t) {
      int64_t p = g.pos(a, o[a], t);
      c += p >= lo && p < hi;
    }
    count *= static_cast<double>(c);
  }
  return count;
}

/// The offset of the first maximum of output o's window (-1 if it has no
/// input tap); NaN wins, as in PyTorch.
template <typename S>
int64_t argmax(const S *plane, const Geometry &g, const int64_t *o) {
  int64_t best = -1;
  double bestV = -std::numeric_limits<double>::infinity();
  forTaps(g, o[0], o[1], o[2], [&](int64_t off) {
    double v = loadDouble(plane[off]);
    // The first tap is always taken (it may be -inf).
    if (best < 0 || v > bestV || (std::isnan(v) && !std::isnan(bestV))) {
      best = off;
      bestV = v;
    }
  });
  return best;
}

/// Calls fn(plane index, output index, o[3]) over every output position.
template <typename Fn>
void forOutputs(int64_t planes, const Geometry &g, Fn &&fn) {
  int64_t o[kSpatial];
  for (int64_t p = 0; p < planes; ++p) {
    int64_t idx = 0;
    for (o[0] = 0; o[0] < g.out[0]; ++o[0])
      for (o[1] = 0; o[1] < g.out[1]; ++o[1])
        for (o[2] = 0; o[2] < g.out[2]; ++o[2], ++idx)
          fn(p, idx, o);
  }
}

zeroc_rt_status_t kPool(zeroc_rt_pool_kind_t kind, const zeroc_rt_tensor_t *x,
                        const zeroc_rt_window_t *window, int countIncludePad,
                        const zeroc_rt_tensor_t *y) {
  const char *k = "zeroc_rt_k_pool";
  ZEROC_RT_RETURN_IF_ERROR(checkKind(k, kind));
  Geometry g;
  ZEROC_RT_RETURN_IF_ERROR(checkPool(k, "x", x, "y", y, window, &g));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "y", *y, "x", *x));
  const int64_t planes = x->dims[0] * x->dims[1];
  if (numElements(*y) == 0)
    return nullptr;
  const bool includePad = flag(countIncludePad);
  dispatchFloat(x->dtype, [&](auto tag) {
    using S = decltype(tag);
    const S *px = static_cast<const S *>(x->data);
    S *py = static_cast<S *>(y->data);
    forOutputs(planes, g, [&](int64_t p, int64_t idx, const int64_t *o) {
      const S *plane = px + p * g.inSize();
      double v;
      if (kind == ZEROC_RT_POOL_MAX) {
        int64_t at = argmax(plane, g, o);
        v = at < 0 ? -std::numeric_limits<double>::infinity()
                   : loadDouble(plane[at]);
      } else {
        double sum = 0.0;
        forTaps(g, o[0], o[1], o[2],
                [&](int64_t off) { sum += loadDouble(plane[off]); });
        v = sum / divisor(g, o, includePad);
      }
      py[p * g.outSize() + idx] = storeValue<S>(v);
    });
  });
  return nullptr;
}

zeroc_rt_status_t kPoolGrad(zeroc_rt_pool_kind_t kind,
                            const zeroc_rt_tensor_t *x,
                            const zeroc_rt_tensor_t *gradY,
                            const zeroc_rt_window_t *window,
                            int countIncludePad,
                            const zeroc_rt_tensor_t *gradX) {
  const char *k = "zeroc_rt_k_pool_grad";
  ZEROC_RT_RETURN_IF_ERROR(checkKind(k, kind));
  Geometry g;
  ZEROC_RT_RETURN_IF_ERROR(
      checkPool(k, "grad_x", gradX, "grad_y", gradY, window, &g));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "grad_x", *gradX, "grad_y", *gradY));
  if (kind == ZEROC_RT_POOL_MAX) {
    if (!x)
      return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                            "%s: max pooling's gradient needs x", k);
    ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "x", x));
    ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "x", *x, "grad_x", *gradX));
    ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "x", *x, "grad_x", *gradX));
    ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "grad_x", *gradX, "x", *x));
  }
  const int64_t n = numElements(*gradX);
  if (n == 0)
    return nullptr;
  Scratch<double> acc;
  ZEROC_RT_RETURN_IF_ERROR(acc.allocate(k, "double gradient", n));
  std::fill(acc.data(), acc.data() + n, 0.0);
  const int64_t planes = gradX->dims[0] * gradX->dims[1];
  const bool includePad = flag(countIncludePad);
  dispatchFloat(gradX->dtype, [&](auto tag) {
    using S = decltype(tag);
    const S *pgy = static_cast<const S *>(gradY->data);
    const S *px = x ? static_cast<const S *>(x->data) : nullptr;
    forOutputs(planes, g, [&](int64_t p, int64_t idx, const int64_t *o) {
      double *plane = acc.data() + p * g.inSize();
      const double gy = loadDouble(pgy[p * g.outSize() + idx]);
      if (kind == ZEROC_RT_POOL_MAX) {
        int64_t at = argmax(px + p * g.inSize(), g, o);
        if (at >= 0)
          plane[at] += gy;
      } else {
        const double share = gy / divisor(g, o, includePad);
        forTaps(g, o[0], o[1], o[2], [&](int64_t off) { plane[off] += share; });
      }
    });
    S *pgx = static_cast<S *>(gradX->data);
    for (int64_t i = 0; i < n; ++i)
      pgx[i] = storeValue<S>(acc.data()[i]);
  });
  return nullptr;
}

} // namespace
} // namespace zeroc_rt::kernels

using namespace zeroc_rt::kernels;

extern "C" {

zeroc_rt_status_t zeroc_rt_k_pool(zeroc_rt_pool_kind_t kind,
                                  const zeroc_rt_tensor_t *x,
                                  const zeroc_rt_window_t *window,
                                  int count_include_pad,
                                  const zeroc_rt_tensor_t *y) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kPool(kind, x, window, count_include_pad, y));
}

zeroc_rt_status_t zeroc_rt_k_pool_grad(zeroc_rt_pool_kind_t kind,
                                       const zeroc_rt_tensor_t *x,
                                       const zeroc_rt_tensor_t *grad_y,
                                       const zeroc_rt_window_t *window,
                                       int count_include_pad,
                                       const zeroc_rt_tensor_t *grad_x) {
  return ZEROC_RT_GUARD_EXCEPTIONS(
      kPoolGrad(kind, x, grad_y, window, count_include_pad, grad_x));
}

} // extern "C"
