//===- kernels/layer_norm.cc - Layer normalization and its grads -*- C++ -*-===//
//
// Rows are the leading dims [0, axis), each normalized over its N trailing
// elements with biased variance: y = (x - mean) / sqrt(var + eps) * scale +
// bias. Statistics and sums are accumulated in double in a fixed order.
//
//===----------------------------------------------------------------------===//

#include "kernels/tensor_check.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace zeroc_rt::kernels {
namespace {

struct RowStats {
  double mean, rstd;
};

template <typename T>
RowStats rowStats(const T *x, int64_t n, double epsilon) {
  float buf[kChunk];
  double sum = 0.0;
  forEachChunk(n, [&](int64_t j0, int64_t m) {
    const auto *v = loadChunk(x + j0, m, buf);
    for (int64_t j = 0; j < m; ++j)
      sum += v[j];
  });
  double mean = sum / static_cast<double>(n);
  double sq = 0.0;
  forEachChunk(n, [&](int64_t j0, int64_t m) {
    const auto *v = loadChunk(x + j0, m, buf);
    for (int64_t j = 0; j < m; ++j) {
      double d = static_cast<double>(v[j]) - mean;
      sq += d * d;
    }
  });
  double var = sq / static_cast<double>(n);
  return {mean, 1.0 / std::sqrt(var + epsilon)};
}

/// Checks x, the axis, epsilon and that `param` has shape x.dims[axis:].
zeroc_rt_status_t checkCommon(const char *k, const zeroc_rt_tensor_t *x,
                              int64_t axis, double epsilon, int *axisOut) {
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "x", x, kFloatDtypes));
  ZEROC_RT_RETURN_IF_ERROR(normalizeAxis(k, axis, x->rank, axisOut));
  if (!(epsilon >= 0.0) || std::isinf(epsilon))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: epsilon %g must be finite and >= 0", k, epsilon);
  return nullptr;
}

zeroc_rt_status_t checkParam(const char *k, const char *name,
                             const zeroc_rt_tensor_t *p,
                             const zeroc_rt_tensor_t &x, int axis) {
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, name, p));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, name, *p, "x", x));
  return checkShape(k, name, *p, x.rank - axis, x.dims + axis,
                    "the normalized dims x.dims[axis:]");
}

zeroc_rt_status_t kLayerNorm(const zeroc_rt_tensor_t *x,
                             const zeroc_rt_tensor_t *scale,
                             const zeroc_rt_tensor_t *bias, int64_t axis,
                             double epsilon, const zeroc_rt_tensor_t *y) {
  const char *k = "zeroc_rt_k_layer_norm";
  int ax = 0;
  ZEROC_RT_RETURN_IF_ERROR(checkCommon(k, x, axis, epsilon, &ax));
  ZEROC_RT_RETURN_IF_ERROR(checkParam(k, "scale", scale, *x, ax));
  if (bias)
    ZEROC_RT_RETURN_IF_ERROR(checkParam(k, "bias", bias, *x, ax));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "y", y));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "y", *y, "x", *x));
  ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "y", *y, "x", *x));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "y", *y, "x", *x));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "y", *y, "scale", *scale));
  if (bias)
    ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "y", *y, "bias", *bias));
  int64_t rows = product(x->dims, 0, ax);
  int64_t n = product(x->dims, ax, x->rank);
  if (n == 0)
    return nullptr;
  dispatchFloat(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    const T *px = static_cast<const T *>(x->data);
    const T *g = static_cast<const T *>(scale->data);
    const T *b = bias ? static_cast<const T *>(bias->data) : nullptr;
    T *py = static_cast<T *>(y->data);
    float bx[kChunk], bg[kChunk], bb[kChunk];
    for (int64_t r = 0; r < rows; ++r) {
      const T *xr = px + r * n;
      T *yr = py + r * n;
      RowStats s = rowStats(xr, n, epsilon);
      forEachChunk(n, [&](int64_t j0, int64_t m) {
        const auto *vx = loadChunk(xr + j0, m, bx);
        const auto *vg = loadChunk(g + j0, m, bg);
        const auto *vb = b ? loadChunk(b + j0, m, bb) : nullptr;
        for (int64_t j = 0; j < m; ++j) {
          double v = (static_cast<double>(vx[j]) - s.mean) * s.rstd *
                     static_cast<double>(vg[j]);
          if (vb)
            v += static_cast<double>(vb[j]);
          yr[j0 + j] = storeValue<T>(v);
        }
      });
    }
  });
  return nullptr;
}

zeroc_rt_status_t kLayerNormGrad(const zeroc_rt_tensor_t *x,
                                 const zeroc_rt_tensor_t *scale, int64_t axis,
                                 double epsilon,
                                 const zeroc_rt_tensor_t *gradY,
                                 const zeroc_rt_tensor_t *gradX,
                                 const zeroc_rt_tensor_t *gradScale,
                                 const zeroc_rt_tensor_t *gradBias) {
  const char *k = "zeroc_rt_k_layer_norm_grad";
  int ax = 0;
  ZEROC_RT_RETURN_IF_ERROR(checkCommon(k, x, axis, epsilon, &ax));
  ZEROC_RT_RETURN_IF_ERROR(checkParam(k, "scale", scale, *x, ax));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_y", gradY));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "grad_y", *gradY, "x", *x));
  ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "grad_y", *gradY, "x", *x));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_x", gradX));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "grad_x", *gradX, "x", *x));
  ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "grad_x", *gradX, "x", *x));
  ZEROC_RT_RETURN_IF_ERROR(checkParam(k, "grad_scale", gradScale, *x, ax));
  if (gradBias)
    ZEROC_RT_RETURN_IF_ERROR(checkParam(k, "grad_bias", gradBias, *x, ax));
  // Every output is disjoint from every input and from the other outputs.
  const zeroc_rt_tensor_t *inputs[3] = {x, scale, gradY};
  const char *inputNames[3] = {"x", "scale", "grad_y"};
  const zeroc_rt_tensor_t *outputs[3] = {gradX, gradScale, gradBias};
  const char *outputNames[3] = {"grad_x", "grad_scale", "grad_bias"};
  for (int o = 0; o < 3; ++o) {
    if (!outputs[o])
      continue;
    for (int i = 0; i < 3; ++i)
      ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, outputNames[o], *outputs[o],
                                              inputNames[i], *inputs[i]));
    for (int p = 0; p < o; ++p)
      ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, outputNames[o], *outputs[o],
                                              outputNames[p], *outputs[p]));
  }
  int64_t rows = product(x->dims, 0, ax);
  int64_t n = product(x->dims, ax, x->rank);
  if (n == 0)
    return nullptr;
  // Scratch: the double sums of grad_scale and grad_bias over the rows.
  std::vector<double> sumScale(static_cast<size_t>(n), 0.0);
  std::vector<double> sumBias(static_cast<size_t>(n), 0.0);
  dispatchFloat(x->dtype, [&](auto tag) {
    using T = decltype(tag);
    const T *px = static_cast<const T *>(x->data);
    const T *g = static_cast<const T *>(scale->data);
    const T *pgy = static_cast<const T *>(gradY->data);
    T *pgx = static_cast<T *>(gradX->data);
    const double invN = 1.0 / static_cast<double>(n);
    float bx[kChunk], bgy[kChunk], bg[kChunk];
    for (int64_t r = 0; r < rows; ++r) {
      const T *xr = px + r * n;
      const T *gyr = pgy + r * n;
      T *gxr = pgx + r * n;
      RowStats s = rowStats(xr, n, epsilon);
      // dxhat = gy * scale; gx = rstd * (dxhat - mean(dxhat)
      //                                  - xhat * mean(dxhat * xhat)).
      double sumD = 0.0, sumDX = 0.0;
      forEachChunk(n, [&](int64_t j0, int64_t m) {
        const auto *vx = loadChunk(xr + j0, m, bx);
        const auto *vgy = loadChunk(gyr + j0, m, bgy);
        const auto *vg = loadChunk(g + j0, m, bg);
        for (int64_t j = 0; j < m; ++j) {
          double xhat = (static_cast<double>(vx[j]) - s.mean) * s.rstd;
          double gy = vgy[j];
          double d = gy * static_cast<double>(vg[j]);
          sumD += d;
          sumDX += d * xhat;
          sumScale[j0 + j] += gy * xhat;
          sumBias[j0 + j] += gy;
        }
      });
      forEachChunk(n, [&](int64_t j0, int64_t m) {
        const auto *vx = loadChunk(xr + j0, m, bx);
        const auto *vgy = loadChunk(gyr + j0, m, bgy);
        const auto *vg = loadChunk(g + j0, m, bg);
        for (int64_t j = 0; j < m; ++j) {
          double xhat = (static_cast<double>(vx[j]) - s.mean) * s.rstd;
          double d = static_cast<double>(vgy[j]) * static_cast<double>(vg[j]);
          gxr[j0 + j] =
              storeValue<T>(s.rstd * (d - sumD * invN - xhat * sumDX * invN));
        }
      });
    }
    T *pgs = static_cast<T *>(gradScale->data);
    for (int64_t j = 0; j < n; ++j)
      pgs[j] = storeValue<T>(sumScale[j]);
    if (gradBias) {
      T *pgb = static_cast<T *>(gradBias->data);
      for (int64_t j = 0; j < n; ++j)
        pgb[j] = storeValue<T>(sumBias[j]);
    }
  });
  return nullptr;
}

} // namespace
} // namespace zeroc_rt::kernels

using namespace zeroc_rt::kernels;

extern "C" {

zeroc_rt_status_t zeroc_rt_k_layer_norm(const zeroc_rt_tensor_t *x,
                                        const zeroc_rt_tensor_t *scale,
                                        const zeroc_rt_tensor_t *bias,
                                        int64_t axis, double epsilon,
                                        const zeroc_rt_tensor_t *y) {
  return ZEROC_RT_GUARD_EXCEPTIONS(
      kLayerNorm(x, scale, bias, axis, epsilon, y));
}

zeroc_rt_status_t zeroc_rt_k_layer_norm_grad(
    const zeroc_rt_tensor_t *x, const zeroc_rt_tensor_t *scale, int64_t axis,
    double epsilon, const zeroc_rt_tensor_t *grad_y,
    const zeroc_rt_tensor_t *grad_x, const zeroc_rt_tensor_t *grad_scale,
    const zeroc_rt_tensor_t *grad_bias) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kLayerNormGrad(
      x, scale, axis, epsilon, grad_y, grad_x, grad_scale, grad_bias));
}

} // extern "C"
