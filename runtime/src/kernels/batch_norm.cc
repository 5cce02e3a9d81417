//===- kernels/batch_norm.cc - Training-mode batch norm and grads -*- C++ -*-===//
//
// x is (N, C, spatial...); channel c's statistics run over its N * S
// elements (S = prod(spatial)), sample by sample, in double: mean, then the
// biased variance about it.
//
//===----------------------------------------------------------------------===//

#include "kernels/batch_norm_check.h"
#include "kernels/tensor_check.h"

#include <cmath>

namespace zeroc_rt::kernels {
namespace {

struct ChannelStats {
  double mean, rstd;
};

template <typename S>
ChannelStats channelStats(const S *x, int64_t n, int64_t c, int64_t ch,
                          int64_t s, double epsilon) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const S *row = x + (i * c + ch) * s;
    for (int64_t j = 0; j < s; ++j)
      sum += loadDouble(row[j]);
  }
  const double count = static_cast<double>(n) * static_cast<double>(s);
  const double mean = sum / count;
  double sq = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const S *row = x + (i * c + ch) * s;
    for (int64_t j = 0; j < s; ++j) {
      double d = loadDouble(row[j]) - mean;
      sq += d * d;
    }
  }
  return {mean, 1.0 / std::sqrt(sq / count + epsilon)};
}

zeroc_rt_status_t kBatchNorm(const zeroc_rt_tensor_t *x,
                             const zeroc_rt_tensor_t *scale,
                             const zeroc_rt_tensor_t *bias, double epsilon,
                             const zeroc_rt_tensor_t *y) {
  const char *k = "zeroc_rt_k_batch_norm";
  ZEROC_RT_RETURN_IF_ERROR(checkBatchNormOperands(k, x, scale, bias, epsilon, y));
  const int64_t n = x->dims[0], c = x->dims[1], s = product(x->dims, 2, x->rank);
  if (n * s == 0)
    return nullptr;
  dispatchFloat(x->dtype, [&](auto tag) {
    using S = decltype(tag);
    const S *px = static_cast<const S *>(x->data);
    const S *pg = static_cast<const S *>(scale->data);
    const S *pb = static_cast<const S *>(bias->data);
    S *py = static_cast<S *>(y->data);
    for (int64_t ch = 0; ch < c; ++ch) {
      ChannelStats st = channelStats(px, n, c, ch, s, epsilon);
      const double a = st.rstd * loadDouble(pg[ch]), b = loadDouble(pb[ch]);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t off = (i * c + ch) * s;
        for (int64_t j = 0; j < s; ++j)
          py[off + j] = storeValue<S>((loadDouble(px[off + j]) - st.mean) * a + b);
      }
    }
  });
  return nullptr;
}

zeroc_rt_status_t kBatchNormGrad(const zeroc_rt_tensor_t *x,
                                 const zeroc_rt_tensor_t *scale,
                                 double epsilon, const zeroc_rt_tensor_t *gradY,
                                 const zeroc_rt_tensor_t *gradX,
                                 const zeroc_rt_tensor_t *gradScale,
                                 const zeroc_rt_tensor_t *gradBias) {
  const char *k = "zeroc_rt_k_batch_norm_grad";
  ZEROC_RT_RETURN_IF_ERROR(checkBatchNormGradOperands(k, x, scale, epsilon, gradY,
                                                      gradX, gradScale, gradBias));
  const int64_t n = x->dims[0], c = x->dims[1], s = product(x->dims, 2, x->rank);
  dispatchFloat(x->dtype, [&](auto tag) {
    using S = decltype(tag);
    const S *px = static_cast<const S *>(x->data);
    const S *pg = static_cast<const S *>(scale->data);
    const S *pgy = static_cast<const S *>(gradY->data);
    S *pgx = static_cast<S *>(gradX->data);
    S *pgs = static_cast<S *>(gradScale->data);
    S *pgb = static_cast<S *>(gradBias->data);
    const double count = static_cast<double>(n) * static_cast<double>(s);
    for (int64_t ch = 0; ch < c; ++ch) {
      if (count == 0) {
        pgs[ch] = pgb[ch] = storeValue<S>(0.0);
        continue;
      }
      ChannelStats st = channelStats(px, n, c, ch, s, epsilon);
      // sum(gy) and sum(gy * xhat) over the channel.
      double sumG = 0.0, sumGX = 0.0;
      for (int64_t i = 0; i < n; ++i) {
        const int64_t off = (i * c + ch) * s;
        for (int64_t j = 0; j < s; ++j) {
          const double gy = loadDouble(pgy[off + j]);
          sumG += gy;
          sumGX += gy * (loadDouble(px[off + j]) - st.mean) * st.rstd;
        }
      }
      pgs[ch] = storeValue<S>(sumGX);
      pgb[ch] = storeValue<S>(sumG);
      // gx = scale * rstd * (gy - sum(gy) / M - xhat * sum(gy * xhat) / M).
      const double a = loadDouble(pg[ch]) * st.rstd;
      const double meanG = sumG / count, meanGX = sumGX / count;
      for (int64_t i = 0; i < n; ++i) {
        const int64_t off = (i * c + ch) * s;
        for (int64_t j = 0; j < s; ++j) {
          const double xhat = (loadDouble(px[off + j]) - st.mean) * st.rstd;
          pgx[off + j] = storeValue<S>(
              a * (loadDouble(pgy[off + j]) - meanG - xhat * meanGX));
        }
      }
    }
  });
  return nullptr;
}

} // namespace
} // namespace zeroc_rt::kernels

using namespace zeroc_rt::kernels;

extern "C" {

zeroc_rt_status_t zeroc_rt_k_batch_norm(const zeroc_rt_tensor_t *x,
                                        const zeroc_rt_tensor_t *scale,
                                        const zeroc_rt_tensor_t *bias,
                                        double epsilon,
                                        const zeroc_rt_tensor_t *y) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kBatchNorm(x, scale, bias, epsilon, y));
}

zeroc_rt_status_t zeroc_rt_k_batch_norm_grad(
    const zeroc_rt_tensor_t *x, const zeroc_rt_tensor_t *scale, double epsilon,
    const zeroc_rt_tensor_t *grad_y, const zeroc_rt_tensor_t *grad_x,
    const zeroc_rt_tensor_t *grad_scale, const zeroc_rt_tensor_t *grad_bias) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kBatchNormGrad(
      x, scale, epsilon, grad_y, grad_x, grad_scale, grad_bias));
}

} // extern "C"
