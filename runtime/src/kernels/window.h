//===- kernels/window.h - Sliding-window geometry of conv and pool -*- C++ -*-===//
//
// Internal to conv.cc and pool.cc: checks a zeroc_rt_window_t against x and
// computes the output spatial dims. 1-D and 2-D windows are read as 3-D ones
// with leading unit dims (size 1, kernel 1, stride 1, no padding), so every
// loop below is a fixed 3-deep nest.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_SRC_KERNELS_WINDOW_H
#define ZEROC_RT_SRC_KERNELS_WINDOW_H

#include "kernels/tensor_check.h"

namespace zeroc_rt::kernels {

constexpr int kSpatial = ZEROC_RT_MAX_SPATIAL;

struct Geometry {
  int rank = 0; // the window's own spatial rank
  int64_t in[kSpatial], out[kSpatial], k[kSpatial], s[kSpatial], d[kSpatial],
      pb[kSpatial], pe[kSpatial];
  int64_t inSize() const { return in[0] * in[1] * in[2]; }
  int64_t outSize() const { return out[0] * out[1] * out[2]; }
  int64_t kSize() const { return k[0] * k[1] * k[2]; }
  /// Input index along dim `a` of output `o` and kernel tap `t` (may be
  /// outside [0, in[a]) in the padding).
  int64_t pos(int a, int64_t o, int64_t t) const {
    return o * s[a] - pb[a] + t * d[a];
  }
};

/// Checks `window` for x (N, C, spatial...) and fills `g`; `kernel` gives
/// the kernel sizes (conv: the weight's spatial dims) or NULL for the
/// window's own (pooling, which also requires pads < dilated kernel).
zeroc_rt_status_t checkWindow(const char *k, const zeroc_rt_window_t *window,
                              const zeroc_rt_tensor_t &x, const int64_t *kernel,
                              Geometry *g);

/// The full output shape (lead0, lead1, out...) for checkShape.
inline int outDims(const Geometry &g, int64_t lead0, int64_t lead1,
                   int64_t *dims) {
  dims[0] = lead0;
  dims[1] = lead1;
  for (int i = 0; i < g.rank; ++i)
    dims[2 + i] = g.out[kSpatial - g.rank + i];
  return 2 + g.rank;
}

} // namespace zeroc_rt::kernels

#endif // ZEROC_RT_SRC_KERNELS_WINDOW_H
