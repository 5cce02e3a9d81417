//===- kernels/conv.cu - ONNX Conv and its gradients (direct) -------------===//
//
// Direct convolution on the CPU kernel's geometry (kernels/window.h, 1-D and
// 2-D windows read as 3-D ones):
//  - conv: one thread per output element, looping over its group's input
//    channels and the window's taps (compute type accumulators);
//  - conv_grad_input: one thread per input element, gathering over the
//    output positions (and output channels of its group) that read it;
//  - conv_grad_weight: one block per weight element, its threads striding
//    over the samples and output positions, reduced with blockSum.
//
//===----------------------------------------------------------------------===//

#include "kernels/common.h"
#include "kernels/window.h"

#include <climits>

namespace zeroc_rt::cuda {
namespace {

constexpr int kSp = ZEROC_RT_MAX_SPATIAL;

/// kernels::Geometry as a kernel argument, plus the conv's channel counts.
struct ConvGeom {
  int64_t in[kSp], out[kSp], k[kSp], s[kSp], d[kSp], pb[kSp];
  int64_t n, c, m, cg, mg;
  int64_t inSize, outSize, kSize;
};

ZRT_HD int64_t posOf(const ConvGeom &g, int a, int64_t o, int64_t t) {
  return o * g.s[a] - g.pb[a] + t * g.d[a];
}

template <typename S>
ZRT_GLOBAL void convKernel(const S *x, const S *w, const S *bias, S *y, ConvGeom g,
                           int64_t total) {
  using C = typename Compute<S>::type;
  for (int64_t i = gridFirst(); i < total; i += gridStride()) {
    int64_t r = i;
    const int64_t o2 = r % g.out[2]; r /= g.out[2];
    const int64_t o1 = r % g.out[1]; r /= g.out[1];
    const int64_t o0 = r % g.out[0]; r /= g.out[0];
    const int64_t m = r % g.m, n = r / g.m;
    const int64_t grp = m / g.mg;
    C acc = C(0);
    for (int64_t cc = 0; cc < g.cg; ++cc) {
      const S *xc = x + (n * g.c + grp * g.cg + cc) * g.inSize;
      const S *wc = w + (m * g.cg + cc) * g.kSize;
      for (int64_t t0 = 0; t0 < g.k[0]; ++t0) {
        const int64_t p0 = posOf(g, 0, o0, t0);
        if (p0 < 0 || p0 >= g.in[0])
          continue;
        for (int64_t t1 = 0; t1 < g.k[1]; ++t1) {
          const int64_t p1 = posOf(g, 1, o1, t1);
          if (p1 < 0 || p1 >= g.in[1])
            continue;
          for (int64_t t2 = 0; t2 < g.k[2]; ++t2) {
            const int64_t p2 = posOf(g, 2, o2, t2);
            if (p2 < 0 || p2 >= g.in[2])
              continue;
            acc += load(xc[(p0 * g.in[1] + p1) * g.in[2] + p2]) *
                   load(wc[(t0 * g.k[1] + t1) * g.k[2] + t2]);
          }
        }
      }
    }
    if (bias)
      acc += load(bias[m]);
    y[i] = storeD<S>(acc);
  }
}

/// The output index along dim `a` that reads input `p` through tap `t`, or
/// -1 when none does.
ZRT_HD int64_t outputOf(const ConvGeom &g, int a, int64_t p, int64_t t) {
  const int64_t q = p + g.pb[a] - t * g.d[a];
  if (q < 0 || q % g.s[a] != 0)
    return -1;
  const int64_t o = q / g.s[a];
  return o < g.out[a] ? o : -1;
}

template <typename S>
ZRT_GLOBAL void convGradInputKernel(const S *w, const S *gy, S *gx, ConvGeom g,
                                    int64_t total) {
  using C = typename Compute<S>::type;
  for (int64_t i = gridFirst(); i < total; i += gridStride()) {
    int64_t r = i;
    const int64_t p2 = r % g.in[2]; r /= g.in[2];
    const int64_t p1 = r % g.in[1]; r /= g.in[1];
    const int64_t p0 = r % g.in[0]; r /= g.in[0];
    const int64_t c = r % g.c, n = r / g.c;
    const int64_t grp = c / g.cg, cc = c % g.cg;
    C acc = C(0);
    for (int64_t t0 = 0; t0 < g.k[0]; ++t0) {
      const int64_t o0 = outputOf(g, 0, p0, t0);
      if (o0 < 0)
        continue;
      for (int64_t t1 = 0; t1 < g.k[1]; ++t1) {
        const int64_t o1 = outputOf(g, 1, p1, t1);
        if (o1 < 0)
          continue;
        for (int64_t t2 = 0; t2 < g.k[2]; ++t2) {
          const int64_t o2 = outputOf(g, 2, p2, t2);
          if (o2 < 0)
            continue;
          const int64_t tap = (t0 * g.k[1] + t1) * g.k[2] + t2;
          const int64_t opos = (o0 * g.out[1] + o1) * g.out[2] + o2;
          for (int64_t mm = 0; mm < g.mg; ++mm) {
            const int64_t m = grp * g.mg + mm;
            acc += load(w[(m * g.cg + cc) * g.kSize + tap]) *
                   load(gy[(n * g.m + m) * g.outSize + opos]);
          }
        }
      }
    }
    gx[i] = storeD<S>(acc);
  }
}

template <typename S>
ZRT_GLOBAL void convGradWeightKernel(const S *x, const S *gy, S *gw, ConvGeom g,
                                     int64_t total) {
  using C = typename Compute<S>::type;
  __shared__ C scratch[32];
  const int64_t work = g.n * g.outSize;
  for (int64_t e = blockIndex(); e < total; e += gridBlocks()) {
    int64_t r = e;
    const int64_t t2 = r % g.k[2]; r /= g.k[2];
    const int64_t t1 = r % g.k[1]; r /= g.k[1];
    const int64_t t0 = r % g.k[0]; r /= g.k[0];
    const int64_t cc = r % g.cg, m = r / g.cg;
    const int64_t c = (m / g.mg) * g.cg + cc;
    C acc = C(0);
    for (int64_t j = threadIndex(); j < work; j += blockThreads()) {
      const int64_t n = j / g.outSize, opos = j % g.outSize;
      const int64_t o2 = opos % g.out[2], o1 = (opos / g.out[2]) % g.out[1],
                    o0 = opos / (g.out[2] * g.out[1]);
      const int64_t p0 = posOf(g, 0, o0, t0), p1 = posOf(g, 1, o1, t1),
                    p2 = posOf(g, 2, o2, t2);
      if (p0 < 0 || p0 >= g.in[0] || p1 < 0 || p1 >= g.in[1] || p2 < 0 || p2 >= g.in[2])
        continue;
      acc += load(gy[(n * g.m + m) * g.outSize + opos]) *
             load(x[(n * g.c + c) * g.inSize + (p0 * g.in[1] + p1) * g.in[2] + p2]);
    }
    acc = blockSum(acc, scratch);
    if (threadIndex() == 0)
      gw[e] = storeD<S>(acc);
  }
}

/// The CPU kernel's checkConv: x (N, C, in...), w (M, C/g, k...),
/// y (N, M, out...), any of which may be the op's output.
zeroc_rt_status_t checkConv(const char *k, const char *xName, zrt_ct x, const char *wName,
                            zrt_ct w, const char *yName, zrt_ct y,
                            const zeroc_rt_window_t *window, int64_t group, ConvGeom *out) {
  using namespace zeroc_rt::kernels;
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, xName, x, kFloatDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, wName, w));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, yName, y));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, wName, *w, xName, *x));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, yName, *y, xName, *x));
  if (x->rank < 3 || w->rank != x->rank)
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                          "%s: %s %s and %s %s must have the same rank, 3 to 5", k, xName,
                          describe(*x).c_str(), wName, describe(*w).c_str());
  ConvGeom &s = *out;
  s.n = x->dims[0];
  s.c = x->dims[1];
  s.m = w->dims[0];
  s.cg = w->dims[1];
  if (group < 1 || s.m % group != 0 || s.cg * group != s.c)
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                          "%s: group %lld does not fit %s %s and %s %s (need "
                          "C = group * w.dims[1] and M %% group == 0)",
                          k, static_cast<long long>(group), xName, describe(*x).c_str(),
                          wName, describe(*w).c_str());
  s.mg = s.m / group;
  if (window && window->ceil_mode)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: ceil_mode is not defined for conv",
                          k);
  Geometry g;
  ZEROC_RT_RETURN_IF_ERROR(checkWindow(k, window, *x, w->dims + 2, &g));
  int64_t dims[kMaxRank];
  const int rank = outDims(g, s.n, s.m, dims);
  ZEROC_RT_RETURN_IF_ERROR(
      checkShape(k, yName, *y, rank, dims, "conv of x by w under the window"));
  for (int a = 0; a < kSp; ++a) {
    s.in[a] = g.in[a];
    s.out[a] = g.out[a];
    s.k[a] = g.k[a];
    s.s[a] = g.s[a];
    s.d[a] = g.d[a];
    s.pb[a] = g.pb[a];
  }
  s.inSize = g.inSize();
  s.outSize = g.outSize();
  s.kSize = g.kSize();
  return nullptr;
}

int64_t weightBlocks(int64_t n) { return n < 1 ? 1 : (n > 65535 * 16 ? 65535 * 16 : n); }

} // namespace
} // namespace zeroc_rt::cuda

using namespace zeroc_rt::cuda;

extern "C" {

zeroc_rt_status_t zeroc_rt_cuda_k_conv(zrt_ct x, zrt_ct w, zrt_ct bias,
                                       const zeroc_rt_window_t *window, int64_t group,
                                       zrt_ct y) {
  using namespace zeroc_rt::kernels;
  const char *k = "conv";
  ConvGeom g;
  ZEROC_RT_RETURN_IF_ERROR(checkConv(k, "x", x, "w", w, "y", y, window, group, &g));
  if (bias) {
    ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "bias", bias));
    ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "bias", *bias, "x", *x));
    ZEROC_RT_RETURN_IF_ERROR(checkShape(k, "bias", *bias, 1, &g.m, "(M), the output channels"));
    ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "y", *y, "bias", *bias));
  }
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "y", *y, "x", *x));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "y", *y, "w", *w));
  const int64_t total = numElements(*y);
  if (!total)
    return nullptr;
  return dispatchFloat(k, y->dtype, [&](auto v) {
    using S = decltype(v);
    return ZRT_LAUNCH(k, convKernel<S>, blocksFor(total), kBlock,
                      static_cast<const S *>(x->data), static_cast<const S *>(w->data),
                      bias ? static_cast<const S *>(bias->data) : nullptr,
                      static_cast<S *>(y->data), g, total);
  });
}

zeroc_rt_status_t zeroc_rt_cuda_k_conv_grad_input(zrt_ct w, zrt_ct grad_y,
                                                  const zeroc_rt_window_t *window,
                                                  int64_t group, zrt_ct grad_x) {
  using namespace zeroc_rt::kernels;
  const char *k = "conv_grad_input";
  ConvGeom g;
  ZEROC_RT_RETURN_IF_ERROR(
      checkConv(k, "grad_x", grad_x, "w", w, "grad_y", grad_y, window, group, &g));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "grad_x", *grad_x, "w", *w));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "grad_x", *grad_x, "grad_y", *grad_y));
  const int64_t total = numElements(*grad_x);
  if (!total)
    return nullptr;
  return dispatchFloat(k, grad_x->dtype, [&](auto v) {
    using S = decltype(v);
    return ZRT_LAUNCH(k, convGradInputKernel<S>, blocksFor(total), kBlock,
                      static_cast<const S *>(w->data), static_cast<const S *>(grad_y->data),
                      static_cast<S *>(grad_x->data), g, total);
  });
}

zeroc_rt_status_t zeroc_rt_cuda_k_conv_grad_weight(zrt_ct x, zrt_ct grad_y,
                                                   const zeroc_rt_window_t *window,
                                                   int64_t group, zrt_ct grad_w) {
  using namespace zeroc_rt::kernels;
  const char *k = "conv_grad_weight";
  ConvGeom g;
  ZEROC_RT_RETURN_IF_ERROR(
      checkConv(k, "x", x, "grad_w", grad_w, "grad_y", grad_y, window, group, &g));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "grad_w", *grad_w, "x", *x));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "grad_w", *grad_w, "grad_y", *grad_y));
  const int64_t total = numElements(*grad_w);
  if (!total)
    return nullptr;
  return dispatchFloat(k, grad_w->dtype, [&](auto v) {
    using S = decltype(v);
    return ZRT_LAUNCH(k, convGradWeightKernel<S>, weightBlocks(total), kBlock,
                      static_cast<const S *>(x->data), static_cast<const S *>(grad_y->data),
                      static_cast<S *>(grad_w->data), g, total);
  });
}

} // extern "C"
