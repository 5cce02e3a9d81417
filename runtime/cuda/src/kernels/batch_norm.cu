//===- kernels/batch_norm.cu - Training-mode batch norm and its grads -----===//
//
// One block per channel c of x (N, C, spatial...), its threads striding over
// the channel's N * S elements and reducing with blockSum, in double as the
// CPU kernel: the mean, then the biased variance about it; the gradient adds
// sum(gy) and sum(gy * xhat).
//
//===----------------------------------------------------------------------===//

#include "kernels/common.h"

#include "kernels/batch_norm_check.h"

namespace zeroc_rt::cuda {
namespace {

/// Element j of channel ch's N * S elements.
ZRT_HD int64_t channelOffset(int64_t j, int64_t c, int64_t ch, int64_t s) {
  return ((j / s) * c + ch) * s + j % s;
}

/// Channel ch's mean and 1/sqrt(var + epsilon), in every thread.
template <typename S>
ZRT_DEV void channelStats(const S *x, int64_t count, int64_t c, int64_t ch, int64_t s,
                          double epsilon, double *scratch, double &mean, double &rstd) {
  double sum = 0.0;
  for (int64_t j = threadIndex(); j < count; j += blockThreads())
    sum += static_cast<double>(load(x[channelOffset(j, c, ch, s)]));
  mean = blockSum(sum, scratch) / static_cast<double>(count);
  double sq = 0.0;
  for (int64_t j = threadIndex(); j < count; j += blockThreads()) {
    const double d = static_cast<double>(load(x[channelOffset(j, c, ch, s)])) - mean;
    sq += d * d;
  }
  rstd = 1.0 / sqrt(blockSum(sq, scratch) / static_cast<double>(count) + epsilon);
}

template <typename S>
ZRT_GLOBAL void batchNormKernel(const S *x, const S *scale, const S *bias, S *y, int64_t n,
                                int64_t c, int64_t s, double epsilon) {
  __shared__ double scratch[32];
  const int64_t count = n * s;
  for (int64_t ch = blockIndex(); ch < c; ch += gridBlocks()) {
    double mean, rstd;
    channelStats(x, count, c, ch, s, epsilon, scratch, mean, rstd);
    const double a = rstd * static_cast<double>(load(scale[ch]));
    const double b = static_cast<double>(load(bias[ch]));
    for (int64_t j = threadIndex(); j < count; j += blockThreads()) {
      const int64_t off = channelOffset(j, c, ch, s);
      y[off] = storeD<S>((static_cast<double>(load(x[off])) - mean) * a + b);
    }
  }
}

template <typename S>
ZRT_GLOBAL void batchNormGradKernel(const S *x, const S *scale, const S *gy, S *gx, S *gs,
                                    S *gb, int64_t n, int64_t c, int64_t s, double epsilon) {
  __shared__ double scratch[32];
  const int64_t count = n * s;
  for (int64_t ch = blockIndex(); ch < c; ch += gridBlocks()) {
    if (count == 0) {
      if (threadIndex() == 0)
        gs[ch] = gb[ch] = storeD<S>(0.0);
      continue;
    }
    double mean, rstd;
    channelStats(x, count, c, ch, s, epsilon, scratch, mean, rstd);
    double sumG = 0.0, sumGX = 0.0;
    for (int64_t j = threadIndex(); j < count; j += blockThreads()) {
      const int64_t off = channelOffset(j, c, ch, s);
      const double g = static_cast<double>(load(gy[off]));
      sumG += g;
      sumGX += g * (static_cast<double>(load(x[off])) - mean) * rstd;
    }
    sumG = blockSum(sumG, scratch);
    sumGX = blockSum(sumGX, scratch);
    if (threadIndex() == 0) {
      gs[ch] = storeD<S>(sumGX);
      gb[ch] = storeD<S>(sumG);
    }
    const double a = static_cast<double>(load(scale[ch])) * rstd;
    const double meanG = sumG / static_cast<double>(count);
    const double meanGX = sumGX / static_cast<double>(count);
    for (int64_t j = threadIndex(); j < count; j += blockThreads()) {
      const int64_t off = channelOffset(j, c, ch, s);
      const double xhat = (static_cast<double>(load(x[off])) - mean) * rstd;
      gx[off] = storeD<S>(a * (static_cast<double>(load(gy[off])) - meanG - xhat * meanGX));
    }
  }
}

int64_t channelBlocks(int64_t c) { return c < 1 ? 1 : (c > 65535 * 16 ? 65535 * 16 : c); }

} // namespace
} // namespace zeroc_rt::cuda

using namespace zeroc_rt::cuda;

extern "C" {

zeroc_rt_status_t zeroc_rt_cuda_k_batch_norm(zrt_ct x, zrt_ct scale, zrt_ct bias,
                                             double epsilon, zrt_ct y) {
  using namespace zeroc_rt::kernels;
  const char *k = "batch_norm";
  ZEROC_RT_RETURN_IF_ERROR(checkBatchNormOperands(k, x, scale, bias, epsilon, y));
  const int64_t n = x->dims[0], c = x->dims[1], s = product(x->dims, 2, x->rank);
  if (n * s == 0 || c == 0)
    return nullptr;
  return dispatchFloat(k, x->dtype, [&](auto v) {
    using S = decltype(v);
    return ZRT_LAUNCH(k, batchNormKernel<S>, channelBlocks(c), kBlock,
                      static_cast<const S *>(x->data), static_cast<const S *>(scale->data),
                      static_cast<const S *>(bias->data), static_cast<S *>(y->data), n, c, s,
                      epsilon);
  });
}

zeroc_rt_status_t zeroc_rt_cuda_k_batch_norm_grad(zrt_ct x, zrt_ct scale, double epsilon,
                                                  zrt_ct grad_y, zrt_ct grad_x,
                                                  zrt_ct grad_scale, zrt_ct grad_bias) {
  using namespace zeroc_rt::kernels;
  const char *k = "batch_norm_grad";
  ZEROC_RT_RETURN_IF_ERROR(checkBatchNormGradOperands(k, x, scale, epsilon, grad_y, grad_x,
                                                      grad_scale, grad_bias));
  const int64_t n = x->dims[0], c = x->dims[1], s = product(x->dims, 2, x->rank);
  if (c == 0)
    return nullptr;
  return dispatchFloat(k, x->dtype, [&](auto v) {
    using S = decltype(v);
    return ZRT_LAUNCH(k, batchNormGradKernel<S>, channelBlocks(c), kBlock,
                      static_cast<const S *>(x->data), static_cast<const S *>(scale->data),
                      static_cast<const S *>(grad_y->data), static_cast<S *>(grad_x->data),
                      static_cast<S *>(grad_scale->data), static_cast<S *>(grad_bias->data),
                      n, c, s, epsilon);
  });
}

} // extern "C"
