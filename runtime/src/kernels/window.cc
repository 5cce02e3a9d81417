//===- kernels/window.cc - Sliding-window geometry of conv and pool -------===//

#include "kernels/window.h"

namespace zeroc_rt::kernels {

zeroc_rt_status_t checkWindow(const char *k, const zeroc_rt_window_t *window,
                              const zeroc_rt_tensor_t &x, const int64_t *kernel,
                              Geometry *g) {
  if (!window)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: window is NULL", k);
  const int r = window->spatial_rank;
  if (r < 1 || r > kSpatial || x.rank != r + 2)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: window spatial_rank %d does not fit x %s (rank "
                          "2 + 1..%d)",
                          k, r, describe(x).c_str(), kSpatial);
  constexpr int64_t kLimit = int64_t(1) << 31;
  g->rank = r;
  for (int a = 0; a < kSpatial; ++a) {
    g->in[a] = g->out[a] = g->k[a] = g->s[a] = g->d[a] = 1;
    g->pb[a] = g->pe[a] = 0;
  }
  for (int i = 0; i < r; ++i) {
    const int a = kSpatial - r + i;
    const int64_t kk = kernel ? kernel[i] : window->kernel[i];
    const int64_t s = window->strides[i], d = window->dilations[i];
    const int64_t pb = window->pads_begin[i], pe = window->pads_end[i];
    if (kk < 1 || kk >= kLimit || s < 1 || s >= kLimit || d < 1 ||
        d >= kLimit || pb < 0 || pb >= kLimit || pe < 0 || pe >= kLimit)
      return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                            "%s: window dim %d has kernel %lld, stride %lld, "
                            "dilation %lld, pads %lld/%lld (need kernel, "
                            "stride, dilation in [1, 2^31), pads in [0, 2^31))",
                            k, i, static_cast<long long>(kk),
                            static_cast<long long>(s), static_cast<long long>(d),
                            static_cast<long long>(pb), static_cast<long long>(pe));
    const int64_t ek = (kk - 1) * d + 1;
    if (!kernel && (pb >= ek || pe >= ek))
      return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                            "%s: window dim %d pads %lld/%lld must be smaller "
                            "than the dilated kernel %lld",
                            k, i, static_cast<long long>(pb),
                            static_cast<long long>(pe), static_cast<long long>(ek));
    const int64_t padded = x.dims[2 + i] + pb + pe;
    if (padded < ek)
      return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                            "%s: x %s: dilated kernel %lld of spatial dim %d is "
                            "larger than the padded input %lld",
                            k, describe(x).c_str(), static_cast<long long>(ek),
                            i, static_cast<long long>(padded));
    const int64_t span = padded - ek;
    g->in[a] = x.dims[2 + i];
    g->out[a] = (window->ceil_mode ? (span + s - 1) / s : span / s) + 1;
    g->k[a] = kk;
    g->s[a] = s;
    g->d[a] = d;
    g->pb[a] = pb;
    g->pe[a] = pe;
  }
  return nullptr;
}

} // namespace zeroc_rt::kernels
