//===- kernels/rows.cu - Softmax, layer norm, softmax cross-entropy -------===//
//
// One block per row (the elements a softmax or a normalization runs over,
// at a stride when the axis is not the last), its threads striding over
// the row and reducing with blockSum/blockMax. Statistics in float (double
// for F64). The softmax rows are zeroc_rt_cuda/rows.h's, which fused
// softmax kernels share. The layer norm's parameter gradients sum down the
// columns (kernels/columns.h).
//
//===----------------------------------------------------------------------===//

#include "kernels/columns.h"
#include "kernels/common.h"

#include "zeroc_rt_cuda/rows.h"

namespace zeroc_rt::cuda {
namespace {

Rows rowsOf(const zeroc_rt_tensor_t &t, int axis) {
  Rows g;
  g.count = t.dims[axis];
  g.inner = kernels::product(t.dims, axis + 1, t.rank);
  g.rows = kernels::product(t.dims, 0, axis) * g.inner;
  return g;
}

/// Element k of a tensor of storage type S, in its compute type.
template <typename S> struct Loads {
  const S *p;
  ZRT_DEV typename Compute<S>::type operator()(int64_t k) const { return load(p[k]); }
};
/// Stores element k of a tensor of storage type S.
template <typename S> struct Stores {
  S *p;
  ZRT_DEV void operator()(int64_t k, typename Compute<S>::type v) const { p[k] = storeD<S>(v); }
};

template <typename S>
ZRT_GLOBAL void softmaxKernel(const S *in, S *out, Rows g, int log) {
  softmaxRows<typename Compute<S>::type>(g, log, Loads<S>{in}, Stores<S>{out});
}

template <typename S>
ZRT_GLOBAL void softmaxGradKernel(const S *y, const S *gy, S *gx, Rows g, int log) {
  softmaxGradRows<typename Compute<S>::type>(g, log, Loads<S>{y}, Loads<S>{gy},
                                             Stores<S>{gx});
}

/// Layer norm over rows of `cols` contiguous elements; saves each row's mean
/// and 1/std (in the compute type) when `stats` is set (the gradient's first
/// pass).
template <typename S>
ZRT_GLOBAL void layerNormKernel(const S *x, const S *scale, const S *bias, S *y,
                                int64_t rows, int64_t cols, double epsilon,
                                typename Compute<S>::type *stats) {
  using C = typename Compute<S>::type;
  __shared__ C scratch[32];
  const bool cached = rowFitsCache(cols);
  for (int64_t r = blockIndex(); r < rows; r += gridBlocks()) {
    const S *xr = x + r * cols;
    C v[kRowCache]; // the row's elements, read once (kRowCache)
    C sum = C(0);
    if (cached) {
      for (int i = 0; i < kRowCache; ++i) {
        const int64_t j = cachedElement(i, cols);
        v[i] = j < 0 ? C(0) : load(xr[j]);
        if (j >= 0)
          sum += v[i];
      }
    } else {
      for (int64_t j = threadIndex(); j < cols; j += blockThreads())
        sum += load(xr[j]);
    }
    const C mean = blockSum(sum, scratch) / C(cols);
    C sq = C(0);
    if (cached) {
      for (int i = 0; i < kRowCache; ++i)
        if (cachedElement(i, cols) >= 0) {
          const C d = v[i] - mean;
          sq += d * d;
        }
    } else {
      for (int64_t j = threadIndex(); j < cols; j += blockThreads()) {
        const C d = load(xr[j]) - mean;
        sq += d * d;
      }
    }
    const C rstd = C(1) / sqrt(blockSum(sq, scratch) / C(cols) + C(epsilon));
    if (stats) {
      if (threadIndex() == 0) {
        stats[2 * r] = mean;
        stats[2 * r + 1] = rstd;
      }
      continue;
    }
    for (int i = 0; cached && i < kRowCache; ++i) {
      const int64_t j = cachedElement(i, cols);
      if (j < 0)
        continue;
      C w = (v[i] - mean) * rstd * load(scale[j]);
      if (bias)
        w += load(bias[j]);
      y[r * cols + j] = storeD<S>(w);
    }
    for (int64_t j = threadIndex(); !cached && j < cols; j += blockThreads()) {
      C w = (load(xr[j]) - mean) * rstd * load(scale[j]);
      if (bias)
        w += load(bias[j]);
      y[r * cols + j] = storeD<S>(w);
    }
  }
}

template <typename S>
ZRT_GLOBAL void layerNormGradXKernel(const S *x, const S *scale, const S *gy, S *gx,
                                     int64_t rows, int64_t cols,
                                     const typename Compute<S>::type *stats) {
  using C = typename Compute<S>::type;
  __shared__ C scratch[32];
  const bool cached = rowFitsCache(cols);
  for (int64_t r = blockIndex(); r < rows; r += gridBlocks()) {
    const C mean = stats[2 * r], rstd = stats[2 * r + 1];
    const int64_t o = r * cols;
    C a = C(0), b = C(0); // sums of gy*s and gy*s*xhat
    C gsv[kRowCache], xmv[kRowCache]; // gy*s and x - mean, read once (kRowCache)
    if (cached) {
      for (int i = 0; i < kRowCache; ++i) {
        const int64_t j = cachedElement(i, cols);
        gsv[i] = j < 0 ? C(0) : load(gy[o + j]) * load(scale[j]);
        xmv[i] = j < 0 ? C(0) : load(x[o + j]) - mean;
        if (j >= 0) {
          a += gsv[i];
          b += gsv[i] * xmv[i] * rstd;
        }
      }
    } else {
      for (int64_t j = threadIndex(); j < cols; j += blockThreads()) {
        const C gs = load(gy[o + j]) * load(scale[j]);
        a += gs;
        b += gs * (load(x[o + j]) - mean) * rstd;
      }
    }
    a = blockSum(a, scratch) / C(cols);
    b = blockSum(b, scratch) / C(cols);
    for (int i = 0; cached && i < kRowCache; ++i) {
      const int64_t j = cachedElement(i, cols);
      if (j >= 0)
        gx[o + j] = storeD<S>(rstd * (gsv[i] - a - xmv[i] * rstd * b));
    }
    for (int64_t j = threadIndex(); !cached && j < cols; j += blockThreads()) {
      const C xhat = (load(x[o + j]) - mean) * rstd;
      const C gs = load(gy[o + j]) * load(scale[j]);
      gx[o + j] = storeD<S>(rstd * (gs - a - xhat * b));
    }
  }
}

/// grad_scale[j] = sum_r gy * xhat, grad_bias[j] = sum_r gy: down the
/// columns of [rows, cols] (kernels/columns.h), both sums in one pass.
template <typename S>
ZRT_GLOBAL void layerNormGradParamsKernel(const S *x, const S *gy, ColumnPlan p,
                                          const typename Compute<S>::type *stats,
                                          typename Compute<S>::type *partials) {
  using C = typename Compute<S>::type;
  __shared__ C shared[2][kColumnTile][kColumnTile + 1];
  columnPartials<2>(
      p, C(0), shared, partials,
      [&](int64_t, int64_t r, int64_t c, C *v) {
        const C g = load(gy[r * p.cols + c]);
        v[0] = g * (load(x[r * p.cols + c]) - stats[2 * r]) * stats[2 * r + 1];
        v[1] = g;
      },
      [](C a, C b) { return a + b; });
}

template <typename S>
ZRT_GLOBAL void layerNormGradParamsFinishKernel(const typename Compute<S>::type *partials,
                                                S *gscale, S *gbias, ColumnPlan p) {
  using C = typename Compute<S>::type;
  for (int64_t j = gridFirst(); j < p.outputs(); j += gridStride()) {
    C v[2];
    combineColumn<2>(p, partials, j, v, [](C a, C b) { return a + b; });
    if (gscale)
      gscale[j] = storeD<S>(v[0]);
    if (gbias)
      gbias[j] = storeD<S>(v[1]);
  }
}

/// Per sample (n, d): its loss (lse - score of the label, in the compute
/// type) into `loss`, and into acc[0] the sum of the losses, acc[1] the
/// count of labels not ignored.
template <typename S, typename L>
ZRT_GLOBAL void crossEntropyKernel(const S *scores, const L *labels, int64_t samples,
                                   int64_t classes, int64_t inner, int hasIgnore,
                                   int64_t ignore, typename Compute<S>::type *loss,
                                   double *acc, unsigned *error, int32_t op) {
  using C = typename Compute<S>::type;
  __shared__ C scratch[32];
  for (int64_t s = blockIndex(); s < samples; s += gridBlocks()) {
    const int64_t base = (s / inner) * classes * inner + s % inner;
    const int64_t label = static_cast<int64_t>(labels[s]);
    const bool ignored = hasIgnore && label == ignore;
    if (!ignored && (label < 0 || label >= classes)) {
      if (threadIndex() == 0)
        flagError(error, kIndexOutOfRange, op);
      continue;
    }
    C mx, sum;
    rowMaxAndSum(Loads<S>{scores}, base, classes, inner, scratch, mx, sum);
    if (threadIndex() == 0) {
      const C l = ignored ? C(0) : mx + log_(sum) - load(scores[base + label * inner]);
      if (loss)
        loss[s] = l;
      if (!ignored) {
        atomicAddDouble(acc, static_cast<double>(l));
        atomicAddDouble(acc + 1, 1.0);
      }
    }
  }
}

template <typename S>
ZRT_GLOBAL void lossFinishKernel(const double *acc, S *out, int mean) {
  if (blockIndex() == 0 && threadIndex() == 0)
    out[0] = storeD<S>(mean ? (acc[1] > 0 ? acc[0] / acc[1] : 0.0) : acc[0]);
}

template <typename T, typename S>
ZRT_GLOBAL void lossNoneKernel(const T *loss, S *out, int64_t n) {
  for (int64_t i = gridFirst(); i < n; i += gridStride())
    out[i] = storeD<S>(static_cast<double>(loss[i]));
}

template <typename S, typename L>
ZRT_GLOBAL void crossEntropyGradKernel(const S *scores, const L *labels, const S *gout,
                                       S *gscores, int64_t samples, int64_t classes,
                                       int64_t inner, int hasIgnore, int64_t ignore,
                                       int reduction, const double *acc) {
  using C = typename Compute<S>::type;
  __shared__ C scratch[32];
  for (int64_t s = blockIndex(); s < samples; s += gridBlocks()) {
    const int64_t base = (s / inner) * classes * inner + s % inner;
    const int64_t label = static_cast<int64_t>(labels[s]);
    const bool ignored = (hasIgnore && label == ignore) || label < 0 || label >= classes;
    C g = C(0);
    if (!ignored) {
      if (reduction == ZEROC_RT_LOSS_NONE)
        g = load(gout[s]);
      else if (reduction == ZEROC_RT_LOSS_SUM)
        g = load(gout[0]);
      else
        g = acc[1] > 0 ? static_cast<C>(static_cast<double>(load(gout[0])) / acc[1]) : C(0);
    }
    C mx, sum;
    rowMaxAndSum(Loads<S>{scores}, base, classes, inner, scratch, mx, sum);
    for (int64_t c = threadIndex(); c < classes; c += blockThreads()) {
      const int64_t i = base + c * inner;
      const C p = exp(load(scores[i]) - mx) / sum;
      gscores[i] = storeD<S>(ignored ? C(0) : g * (p - (c == label ? C(1) : C(0))));
    }
  }
}

/// Counts the labels not ignored into acc[1] (the mean's denominator).
template <typename L>
ZRT_GLOBAL void countLabelsKernel(const L *labels, int64_t samples, int hasIgnore,
                                  int64_t ignore, double *acc) {
  __shared__ float scratch[32];
  float count = 0.0f;
  for (int64_t s = gridFirst(); s < samples; s += gridStride())
    count += (hasIgnore && static_cast<int64_t>(labels[s]) == ignore) ? 0.0f : 1.0f;
  count = blockSum(count, scratch);
  if (threadIndex() == 0)
    atomicAddDouble(acc + 1, static_cast<double>(count));
}

zeroc_rt_status_t axisOf(const char *k, int64_t axis, int rank, int *out) {
  if (axis < -rank || axis >= rank || rank == 0)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: axis %lld is outside [-%d, %d)",
                          k, static_cast<long long>(axis), rank, rank);
  *out = static_cast<int>(axis < 0 ? axis + rank : axis);
  return nullptr;
}

template <typename Fn>
zeroc_rt_status_t dispatchLabels(const char *k, zeroc_rt_dtype_t dtype, Fn &&fn) {
  if (dtype == ZEROC_RT_DTYPE_I64)
    return fn(int64_t{});
  if (dtype == ZEROC_RT_DTYPE_I32)
    return fn(int32_t{});
  return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: labels must be i64 or i32", k);
}

/// Layer norm's rows (the elements before `axis`) and columns (from it),
/// with scale (and bias, when given) of x's dims from the axis.
zeroc_rt_status_t layerNormShape(const char *k, const zeroc_rt_tensor_t *x,
                                 const zeroc_rt_tensor_t *scale, const zeroc_rt_tensor_t *bias,
                                 int64_t axis, int64_t *rows, int64_t *cols) {
  using namespace zeroc_rt::kernels;
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "x", x));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "scale", scale));
  int a = 0;
  ZEROC_RT_RETURN_IF_ERROR(axisOf(k, axis, x->rank, &a));
  *cols = product(x->dims, a, x->rank);
  *rows = product(x->dims, 0, a);
  if (numElements(*scale) != *cols || (bias && numElements(*bias) != *cols))
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                          "%s: scale %s (or bias) is not x's dims from axis %d of %s", k,
                          describe(*scale).c_str(), a, describe(*x).c_str());
  return nullptr;
}

/// Softmax cross-entropy's scores (N, C, d...) and labels (N, d...): the
/// classes C, the trailing elements d and the samples N * d.
zeroc_rt_status_t crossEntropyShape(const char *k, const zeroc_rt_tensor_t *scores,
                                    const zeroc_rt_tensor_t *labels, int64_t *classes,
                                    int64_t *inner, int64_t *samples) {
  using namespace zeroc_rt::kernels;
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "scores", scores));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "labels", labels));
  if (scores->rank < 2)
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH, "%s: scores %s has no class dim", k,
                          describe(*scores).c_str());
  *classes = scores->dims[1];
  *inner = product(scores->dims, 2, scores->rank);
  *samples = numElements(*labels);
  if (*samples * *classes != numElements(*scores))
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH, "%s: labels %s do not match scores %s", k,
                          describe(*labels).c_str(), describe(*scores).c_str());
  return nullptr;
}

} // namespace
} // namespace zeroc_rt::cuda

using namespace zeroc_rt::cuda;

extern "C" {

zeroc_rt_status_t zeroc_rt_cuda_k_softmax(zrt_ct in, int64_t axis, int log, zrt_ct out) {
  using namespace zeroc_rt::kernels;
  const char *k = "softmax";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "in", in));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "out", *out, "in", *in));
  int a = 0;
  ZEROC_RT_RETURN_IF_ERROR(axisOf(k, axis, in->rank, &a));
  const Rows g = rowsOf(*in, a);
  return dispatchFloat(k, in->dtype, [&](auto s) {
    using S = decltype(s);
    return ZRT_LAUNCH(k, softmaxKernel<S>, rowBlocks(g.rows), kBlock,
                      static_cast<const S *>(in->data), static_cast<S *>(out->data), g, log);
  });
}

zeroc_rt_status_t zeroc_rt_cuda_k_softmax_grad(zrt_ct y, zrt_ct grad_y, int64_t axis,
                                               int log, zrt_ct grad_x) {
  using namespace zeroc_rt::kernels;
  const char *k = "softmax_grad";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "y", y));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_y", grad_y));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_x", grad_x));
  ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "grad_y", *grad_y, "y", *y));
  ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "grad_x", *grad_x, "y", *y));
  int a = 0;
  ZEROC_RT_RETURN_IF_ERROR(axisOf(k, axis, y->rank, &a));
  const Rows g = rowsOf(*y, a);
  return dispatchFloat(k, y->dtype, [&](auto s) {
    using S = decltype(s);
    return ZRT_LAUNCH(k, softmaxGradKernel<S>, rowBlocks(g.rows), kBlock,
                      static_cast<const S *>(y->data), static_cast<const S *>(grad_y->data),
                      static_cast<S *>(grad_x->data), g, log);
  });
}

zeroc_rt_status_t zeroc_rt_cuda_k_layer_norm(zrt_ct x, zrt_ct scale, zrt_ct bias,
                                             int64_t axis, double epsilon, zrt_ct y) {
  using namespace zeroc_rt::kernels;
  const char *k = "layer_norm";
  int64_t rows = 0, cols = 0;
  ZEROC_RT_RETURN_IF_ERROR(layerNormShape(k, x, scale, bias, axis, &rows, &cols));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "y", y));
  ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "y", *y, "x", *x));
  return dispatchFloat(k, x->dtype, [&](auto s) {
    using S = decltype(s);
    return ZRT_LAUNCH(k, layerNormKernel<S>, rowBlocks(rows), kBlock,
                      static_cast<const S *>(x->data), static_cast<const S *>(scale->data),
                      bias ? static_cast<const S *>(bias->data) : nullptr,
                      static_cast<S *>(y->data), rows, cols, epsilon,
                      static_cast<typename Compute<S>::type *>(nullptr));
  });
}

zeroc_rt_status_t zeroc_rt_cuda_k_layer_norm_grad(zrt_ct x, zrt_ct scale, int64_t axis,
                                                  double epsilon, zrt_ct grad_y,
                                                  zrt_ct grad_x, zrt_ct grad_scale,
                                                  zrt_ct grad_bias) {
  using namespace zeroc_rt::kernels;
  const char *k = "layer_norm_grad";
  int64_t rows = 0, cols = 0;
  ZEROC_RT_RETURN_IF_ERROR(layerNormShape(k, x, scale, nullptr, axis, &rows, &cols));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_y", grad_y));
  ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "grad_y", *grad_y, "x", *x));
  // The scratch: each row's mean and 1/std in the compute type, then the
  // parameter gradients' partial sums.
  const ColumnPlan plan = columnPlan(1, rows, cols);
  const size_t statsBytes = (static_cast<size_t>(rows) * 2 * sizeof(double) + 255) / 256 * 256;
  void *scratch = nullptr;
  ZEROC_RT_RETURN_IF_ERROR(gpuScratch(
      statsBytes + static_cast<size_t>(columnPartialCount(plan, 2)) * sizeof(double), &scratch));
  return dispatchFloat(k, x->dtype, [&](auto s) -> zeroc_rt_status_t {
    using S = decltype(s);
    using C = typename Compute<S>::type;
    C *stats = static_cast<C *>(scratch);
    C *partials = reinterpret_cast<C *>(static_cast<char *>(scratch) + statsBytes);
    const S *xp = static_cast<const S *>(x->data), *sp = static_cast<const S *>(scale->data);
    const S *gyp = static_cast<const S *>(grad_y->data);
    ZEROC_RT_RETURN_IF_ERROR(ZRT_LAUNCH(k, layerNormKernel<S>, rowBlocks(rows), kBlock, xp, sp,
                                        static_cast<const S *>(nullptr), static_cast<S *>(nullptr),
                                        rows, cols, epsilon, stats));
    if (grad_x)
      ZEROC_RT_RETURN_IF_ERROR(ZRT_LAUNCH(k, layerNormGradXKernel<S>, rowBlocks(rows), kBlock, xp,
                                          sp, gyp, static_cast<S *>(grad_x->data), rows, cols,
                                          static_cast<const C *>(stats)));
    if (!grad_scale && !grad_bias)
      return nullptr;
    ZEROC_RT_RETURN_IF_ERROR(ZRT_LAUNCH(k, layerNormGradParamsKernel<S>,
                                        cappedBlocks(plan.blocks()), kBlock, xp, gyp, plan,
                                        static_cast<const C *>(stats), partials));
    return ZRT_LAUNCH(k, layerNormGradParamsFinishKernel<S>, blocksFor(plan.outputs()), kBlock,
                      static_cast<const C *>(partials),
                      grad_scale ? static_cast<S *>(grad_scale->data) : nullptr,
                      grad_bias ? static_cast<S *>(grad_bias->data) : nullptr, plan);
  });
}

zeroc_rt_status_t zeroc_rt_cuda_k_softmax_cross_entropy(zrt_ct scores, zrt_ct labels,
                                                        zeroc_rt_loss_reduction_t reduction,
                                                        int has_ignore, int64_t ignore_index,
                                                        zrt_ct out) {
  using namespace zeroc_rt::kernels;
  const char *k = "softmax_cross_entropy";
  int64_t classes = 0, inner = 0, samples = 0;
  ZEROC_RT_RETURN_IF_ERROR(crossEntropyShape(k, scores, labels, &classes, &inner, &samples));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  double *acc = deviceScalars();
  ZEROC_RT_RETURN_IF_ERROR(gpuZero(acc, 2 * sizeof(double)));
  void *scratch = nullptr; // the per-sample losses, in the compute type
  if (reduction == ZEROC_RT_LOSS_NONE)
    ZEROC_RT_RETURN_IF_ERROR(gpuScratch(static_cast<size_t>(samples) * sizeof(double), &scratch));
  return dispatchFloat(k, scores->dtype, [&](auto s) {
    using S = decltype(s);
    using C = typename Compute<S>::type;
    C *loss = static_cast<C *>(scratch);
    return dispatchLabels(k, labels->dtype, [&](auto l) -> zeroc_rt_status_t {
      using L = decltype(l);
      ZEROC_RT_RETURN_IF_ERROR(ZRT_LAUNCH(
          k, crossEntropyKernel<S, L>, rowBlocks(samples), kBlock,
          static_cast<const S *>(scores->data), static_cast<const L *>(labels->data), samples,
          classes, inner, has_ignore, ignore_index, loss, acc, kernelErrorWord(), currentOp()));
      if (reduction == ZEROC_RT_LOSS_NONE)
        return dispatchFloat(k, out->dtype, [&](auto o) {
          using O = decltype(o);
          return ZRT_LAUNCH(k, lossNoneKernel<C, O>, blocksFor(samples), kBlock,
                            static_cast<const C *>(loss), static_cast<O *>(out->data), samples);
        });
      return dispatchFloat(k, out->dtype, [&](auto o) {
        using O = decltype(o);
        return ZRT_LAUNCH(k, lossFinishKernel<O>, 1, 32, static_cast<const double *>(acc),
                          static_cast<O *>(out->data), reduction == ZEROC_RT_LOSS_MEAN ? 1 : 0);
      });
    });
  });
}

zeroc_rt_status_t zeroc_rt_cuda_k_softmax_cross_entropy_grad(
    zrt_ct scores, zrt_ct labels, zeroc_rt_loss_reduction_t reduction, int has_ignore,
    int64_t ignore_index, zrt_ct grad_out, zrt_ct grad_scores) {
  using namespace zeroc_rt::kernels;
  const char *k = "softmax_cross_entropy_grad";
  int64_t classes = 0, inner = 0, samples = 0;
  ZEROC_RT_RETURN_IF_ERROR(crossEntropyShape(k, scores, labels, &classes, &inner, &samples));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_out", grad_out));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_scores", grad_scores));
  ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "grad_scores", *grad_scores, "scores", *scores));
  double *acc = deviceScalars();
  ZEROC_RT_RETURN_IF_ERROR(gpuZero(acc, 2 * sizeof(double)));
  return dispatchFloat(k, scores->dtype, [&](auto s) {
    using S = decltype(s);
    return dispatchLabels(k, labels->dtype, [&](auto l) -> zeroc_rt_status_t {
      using L = decltype(l);
      if (reduction == ZEROC_RT_LOSS_MEAN)
        ZEROC_RT_RETURN_IF_ERROR(ZRT_LAUNCH(k, countLabelsKernel<L>, 64, kBlock,
                                            static_cast<const L *>(labels->data), samples,
                                            has_ignore, ignore_index, acc));
      return ZRT_LAUNCH(k, crossEntropyGradKernel<S, L>, rowBlocks(samples), kBlock,
                        static_cast<const S *>(scores->data),
                        static_cast<const L *>(labels->data),
                        static_cast<const S *>(grad_out->data),
                        static_cast<S *>(grad_scores->data), samples, classes, inner,
                        has_ignore, ignore_index, int(reduction),
                        static_cast<const double *>(acc));
    });
  });
}

} // extern "C"
