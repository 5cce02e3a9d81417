//===- kernels/softmax.cc - (Log)softmax along one axis ---------*- C++ -*-===//

#include "kernels/tensor_check.h"

#include <cmath>
#include <type_traits>

namespace zeroc_rt::kernels {
namespace {

/// A tensor seen as (outer, len, inner) around `axis`.
struct AxisView {
  int64_t outer, len, inner;
};

AxisView viewAround(const zeroc_rt_tensor_t &t, int axis) {
  return {product(t.dims, 0, axis), t.dims[axis],
          product(t.dims, axis + 1, t.rank)};
}

/// Calls fn(base) for the first element of every line along the axis; the
/// line's elements are base + j * view.inner.
template <typename Fn> void forEachLine(const AxisView &view, Fn &&fn) {
  for (int64_t o = 0; o < view.outer; ++o)
    for (int64_t i = 0; i < view.inner; ++i)
      fn(o * view.len * view.inner + i);
}

/// Lines up to this length run on stack buffers: their elements are read
/// into the compute type once (F16/BF16 contiguous lines with loadRow) and
/// their exponentials computed once. Longer lines reread and recompute them;
/// the values are the same either way.
constexpr int64_t kLineCache = 1024;

/// The `len` elements x[j * stride] as compute-type values: a contiguous
/// float or double line in place, otherwise converted or gathered into buf.
template <typename T>
const ComputeOf<T> *lineValues(const T *x, int64_t len, int64_t stride,
                               ComputeOf<T> *buf) {
  if constexpr (kIsNarrowFloat<T>) {
    if (stride == 1) {
      loadRow(x, buf, len);
      return buf;
    }
  } else {
    if (stride == 1)
      return x;
  }
  for (int64_t j = 0; j < len; ++j)
    buf[j] = loadValue(x[j * stride]);
  return buf;
}

/// Softmax of one line of at most kLineCache elements at `stride`.
template <typename T>
void softmaxLine(const T *x, T *y, int64_t len, int64_t stride, bool log,
                 ComputeOf<T> *buf, double *e) {
  const auto *v = lineValues(x, len, stride, buf);
  double max = -INFINITY;
  for (int64_t j = 0; j < len; ++j)
    max = std::fmax(max, static_cast<double>(v[j]));
  double sum = 0.0;
  for (int64_t j = 0; j < len; ++j) {
    e[j] = std::exp(static_cast<double>(v[j]) - max);
    sum += e[j];
  }
  if (log) {
    double logSum = std::log(sum);
    for (int64_t j = 0; j < len; ++j)
      y[j * stride] = storeValue<T>(static_cast<double>(v[j]) - max - logSum);
  } else {
    for (int64_t j = 0; j < len; ++j)
      y[j * stride] = storeValue<T>(e[j] / sum);
  }
}

template <typename T>
void softmax(const T *x, T *y, const AxisView &v, bool log) {
  ComputeOf<T> buf[kLineCache];
  double e[kLineCache];
  forEachLine(v, [&](int64_t base) {
    const int64_t s = v.inner;
    if (v.len <= kLineCache)
      return softmaxLine(x + base, y + base, v.len, s, log, buf, e);
    double max = -INFINITY;
    for (int64_t j = 0; j < v.len; ++j)
      max = std::fmax(max, loadDouble(x[base + j * s]));
    double sum = 0.0;
    for (int64_t j = 0; j < v.len; ++j)
      sum += std::exp(loadDouble(x[base + j * s]) - max);
    if (log) {
      double logSum = std::log(sum);
      for (int64_t j = 0; j < v.len; ++j)
        y[base + j * s] =
            storeValue<T>(loadDouble(x[base + j * s]) - max - logSum);
    } else {
      for (int64_t j = 0; j < v.len; ++j)
        y[base + j * s] =
            storeValue<T>(std::exp(loadDouble(x[base + j * s]) - max) / sum);
    }
  });
}

template <typename T>
void softmaxGrad(const T *y, const T *gy, T *gx, const AxisView &v, bool log) {
  ComputeOf<T> bufY[kLineCache], bufG[kLineCache];
  forEachLine(v, [&](int64_t base) {
    const int64_t s = v.inner;
    const bool cached = v.len <= kLineCache;
    // The line's y and grad_y as compute-type values (reread when long).
    const ComputeOf<T> *vy =
        cached ? lineValues(y + base, v.len, s, bufY) : nullptr;
    const ComputeOf<T> *vg =
        cached ? lineValues(gy + base, v.len, s, bufG) : nullptr;
    auto yAt = [&](int64_t j) {
      return cached ? static_cast<double>(vy[j]) : loadDouble(y[base + j * s]);
    };
    auto gAt = [&](int64_t j) {
      return cached ? static_cast<double>(vg[j]) : loadDouble(gy[base + j * s]);
    };
    double acc = 0.0;
    if (log) {
      // gx = gy - exp(y) * sum(gy)
      for (int64_t j = 0; j < v.len; ++j)
        acc += gAt(j);
      for (int64_t j = 0; j < v.len; ++j)
        gx[base + j * s] = storeValue<T>(gAt(j) - std::exp(yAt(j)) * acc);
    } else {
      // gx = y * (gy - sum(gy * y))
      for (int64_t j = 0; j < v.len; ++j)
        acc += gAt(j) * yAt(j);
      for (int64_t j = 0; j < v.len; ++j)
        gx[base + j * s] = storeValue<T>(yAt(j) * (gAt(j) - acc));
    }
  });
}

zeroc_rt_status_t kSoftmax(const zeroc_rt_tensor_t *in, int64_t axis, int log,
                           const zeroc_rt_tensor_t *out) {
  const char *k = "zeroc_rt_k_softmax";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "in", in, kFloatDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "out", *out, "in", *in));
  ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "out", *out, "in", *in));
  int ax = 0;
  ZEROC_RT_RETURN_IF_ERROR(normalizeAxis(k, axis, in->rank, &ax));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "in", *in));
  AxisView view = viewAround(*in, ax);
  dispatchFloat(in->dtype, [&](auto tag) {
    using T = decltype(tag);
    softmax<T>(static_cast<const T *>(in->data), static_cast<T *>(out->data),
               view, flag(log));
  });
  return nullptr;
}

zeroc_rt_status_t kSoftmaxGrad(const zeroc_rt_tensor_t *y,
                               const zeroc_rt_tensor_t *gradY, int64_t axis,
                               int log, const zeroc_rt_tensor_t *gradX) {
  const char *k = "zeroc_rt_k_softmax_grad";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "y", y, kFloatDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_y", gradY));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_x", gradX));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "grad_y", *gradY, "y", *y));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "grad_x", *gradX, "y", *y));
  ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "grad_y", *gradY, "y", *y));
  ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "grad_x", *gradX, "y", *y));
  int ax = 0;
  ZEROC_RT_RETURN_IF_ERROR(normalizeAxis(k, axis, y->rank, &ax));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "grad_x", *gradX, "y", *y));
  ZEROC_RT_RETURN_IF_ERROR(
      checkNoOverlap(k, "grad_x", *gradX, "grad_y", *gradY));
  AxisView view = viewAround(*y, ax);
  dispatchFloat(y->dtype, [&](auto tag) {
    using T = decltype(tag);
    softmaxGrad<T>(static_cast<const T *>(y->data),
                   static_cast<const T *>(gradY->data),
                   static_cast<T *>(gradX->data), view, flag(log));
  });
  return nullptr;
}

} // namespace
} // namespace zeroc_rt::kernels

using namespace zeroc_rt::kernels;

extern "C" {

zeroc_rt_status_t zeroc_rt_k_softmax(const zeroc_rt_tensor_t *in, int64_t axis,
                                     int log, const zeroc_rt_tensor_t *out) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kSoftmax(in, axis, log, out));
}

zeroc_rt_status_t zeroc_rt_k_softmax_grad(const zeroc_rt_tensor_t *y,
                                          const zeroc_rt_tensor_t *grad_y,
                                          int64_t axis, int log,
                                          const zeroc_rt_tensor_t *grad_x) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kSoftmaxGrad(y, grad_y, axis, log, grad_x));
}

} // extern "C"
