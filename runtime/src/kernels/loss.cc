//===- kernels/loss.cc - SoftmaxCrossEntropyLoss and its grad ---*- C++ -*-===//
//
// scores (N, C, d1..dk) are read as (N, C, D) with D = d1*...*dk; position
// (n, s) has label labels[n * D + s] and class scores scores[(n*C + c)*D + s].
// loss(n, s) = logsumexp_c(scores) - scores[label], computed in double with
// the max subtracted.
//
//===----------------------------------------------------------------------===//

#include "kernels/tensor_check.h"
#include "kernels/vector_math.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

namespace zeroc_rt::kernels {
namespace {

struct LossShape {
  int64_t n, c, d; // batch, classes, product of the trailing dims
};

const char *reductionName(zeroc_rt_loss_reduction_t r) {
  switch (r) {
  case ZEROC_RT_LOSS_MEAN:
    return "mean";
  case ZEROC_RT_LOSS_SUM:
    return "sum";
  case ZEROC_RT_LOSS_NONE:
    return "none";
  }
  return nullptr;
}

/// Checks scores, labels (shape and values) and the reduction; `result` is
/// the loss output (forward) or its gradient (backward): a scalar for
/// mean/sum, labels' shape for none.
zeroc_rt_status_t checkLoss(const char *k, const zeroc_rt_tensor_t *scores,
                            const zeroc_rt_tensor_t *labels,
                            zeroc_rt_loss_reduction_t reduction,
                            bool hasIgnore, int64_t ignoreIndex,
                            const char *resultName,
                            const zeroc_rt_tensor_t *result,
                            LossShape *shape) {
  if (!reductionName(reduction))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: invalid reduction %d", k,
                          static_cast<int>(reduction));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "scores", scores, kFloatDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "labels", labels, kIndexDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, resultName, result));
  ZEROC_RT_RETURN_IF_ERROR(
      checkSameDtype(k, resultName, *result, "scores", *scores));
  if (scores->rank < 2)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: scores %s must be (N, C) or (N, C, d...)", k,
                          describe(*scores).c_str());
  int64_t expected[kMaxRank];
  int rank = 0;
  for (int d = 0; d < scores->rank; ++d)
    if (d != 1)
      expected[rank++] = scores->dims[d];
  ZEROC_RT_RETURN_IF_ERROR(checkShape(k, "labels", *labels, rank, expected,
                                      "scores without the class dim"));
  if (reduction == ZEROC_RT_LOSS_NONE)
    ZEROC_RT_RETURN_IF_ERROR(checkShape(k, resultName, *result, rank, expected,
                                        "the labels' shape (reduction none)"));
  else
    ZEROC_RT_RETURN_IF_ERROR(checkShape(k, resultName, *result, 0, expected,
                                        "a scalar (reduction mean/sum)"));
  shape->n = scores->dims[0];
  shape->c = scores->dims[1];
  shape->d = product(scores->dims, 2, scores->rank);
  int64_t count = numElements(*labels);
  for (int64_t i = 0; i < count; ++i) {
    int64_t label = loadIndex(*labels, i);
    if (hasIgnore && label == ignoreIndex)
      continue;
    if (label < 0 || label >= shape->c)
      return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                            "%s: label %lld (element %lld of labels %s) is "
                            "outside [0, %lld) and not the ignore_index",
                            k, static_cast<long long>(label),
                            static_cast<long long>(i),
                            describe(*labels).c_str(),
                            static_cast<long long>(shape->c));
  }
  return nullptr;
}

/// Calls fn(j, v) for the class scores x[j * stride], j < c, in order, v
/// the score as double. Contiguous F16/BF16 scores (one position per sample)
/// are converted in chunks by loadChunk, vectorized.
template <typename T, typename Fn>
void forEachScore(const T *x, int64_t c, int64_t stride, Fn &&fn) {
  if (!kIsNarrowFloat<T> || stride != 1) {
    for (int64_t j = 0; j < c; ++j)
      fn(j, loadDouble(x[j * stride]));
    return;
  }
  float buf[kChunk];
  forEachChunk(c, [&](int64_t j0, int64_t m) {
    const auto *v = loadChunk(x + j0, m, buf);
    for (int64_t j = 0; j < m; ++j)
      fn(j0 + j, static_cast<double>(v[j]));
  });
}

/// The largest class score at one position.
template <typename T> double maxScore(const T *x, int64_t c, int64_t stride) {
  double m = -INFINITY;
  forEachScore(x, c, stride, [&](int64_t, double v) { m = std::fmax(m, v); });
  return m;
}

/// Contiguous f32 scores (one position per sample, the language-model
/// case): exp(x_c - m) of a chunk in float through expRow (vectorized),
/// summed in double. x_c - m is exact in float wherever the exponential
/// is above float's underflow. Calls fn(j0, e, count) per chunk.
template <typename Fn>
void forEachExpChunk(const float *x, int64_t c, float m, Fn &&fn) {
  float e[kChunk];
  forEachChunk(c, [&](int64_t j0, int64_t count) {
    for (int64_t j = 0; j < count; ++j)
      e[j] = x[j0 + j] - m;
    expRow(e, e, count);
    fn(j0, e, count);
  });
}

/// log(sum_c exp(x_c)) of the class scores at one position, max subtracted.
template <typename T> double logSumExp(const T *x, int64_t c, int64_t stride) {
  const double m = maxScore(x, c, stride);
  double sum = 0.0;
  if constexpr (std::is_same_v<T, float>)
    if (stride == 1 && std::isfinite(m)) {
      forEachExpChunk(x, c, static_cast<float>(m),
                      [&](int64_t, const float *e, int64_t count) {
                        for (int64_t j = 0; j < count; ++j)
                          sum += e[j];
                      });
      return m + std::log(sum);
    }
  forEachScore(x, c, stride,
               [&](int64_t, double v) { sum += std::exp(v - m); });
  return m + std::log(sum);
}

zeroc_rt_status_t kLoss(const zeroc_rt_tensor_t *scores,
                        const zeroc_rt_tensor_t *labels,
                        zeroc_rt_loss_reduction_t reduction, int hasIgnore,
                        int64_t ignoreIndex, const zeroc_rt_tensor_t *out) {
  const char *k = "zeroc_rt_k_softmax_cross_entropy";
  LossShape sh{};
  bool ignore = flag(hasIgnore);
  ZEROC_RT_RETURN_IF_ERROR(checkLoss(k, scores, labels, reduction, ignore,
                                     ignoreIndex, "out", out, &sh));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "scores", *scores));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "labels", *labels));
  dispatchFloat(scores->dtype, [&](auto tag) {
    using T = decltype(tag);
    const T *x = static_cast<const T *>(scores->data);
    T *y = static_cast<T *>(out->data);
    double total = 0.0;
    int64_t counted = 0;
    for (int64_t n = 0; n < sh.n; ++n)
      for (int64_t s = 0; s < sh.d; ++s) {
        int64_t pos = n * sh.d + s;
        int64_t label = loadIndex(*labels, pos);
        double loss = 0.0;
        if (!(ignore && label == ignoreIndex)) {
          const T *xs = x + n * sh.c * sh.d + s;
          loss = logSumExp(xs, sh.c, sh.d) - loadDouble(xs[label * sh.d]);
          total += loss;
          ++counted;
        }
        if (reduction == ZEROC_RT_LOSS_NONE)
          y[pos] = storeValue<T>(loss);
      }
    if (reduction == ZEROC_RT_LOSS_SUM)
      y[0] = storeValue<T>(total);
    else if (reduction == ZEROC_RT_LOSS_MEAN)
      y[0] =
          storeValue<T>(counted ? total / static_cast<double>(counted) : 0.0);
  });
  return nullptr;
}

zeroc_rt_status_t kLossGrad(const zeroc_rt_tensor_t *scores,
                            const zeroc_rt_tensor_t *labels,
                            zeroc_rt_loss_reduction_t reduction, int hasIgnore,
                            int64_t ignoreIndex,
                            const zeroc_rt_tensor_t *gradOut,
                            const zeroc_rt_tensor_t *gradScores) {
  const char *k = "zeroc_rt_k_softmax_cross_entropy_grad";
  LossShape sh{};
  bool ignore = flag(hasIgnore);
  ZEROC_RT_RETURN_IF_ERROR(checkLoss(k, scores, labels, reduction, ignore,
                                     ignoreIndex, "grad_out", gradOut, &sh));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_scores", gradScores));
  ZEROC_RT_RETURN_IF_ERROR(
      checkSameDtype(k, "grad_scores", *gradScores, "scores", *scores));
  ZEROC_RT_RETURN_IF_ERROR(
      checkSameShape(k, "grad_scores", *gradScores, "scores", *scores));
  ZEROC_RT_RETURN_IF_ERROR(
      checkNoOverlap(k, "grad_scores", *gradScores, "scores", *scores));
  ZEROC_RT_RETURN_IF_ERROR(
      checkNoOverlap(k, "grad_scores", *gradScores, "labels", *labels));
  ZEROC_RT_RETURN_IF_ERROR(
      checkNoOverlap(k, "grad_scores", *gradScores, "grad_out", *gradOut));
  int64_t positions = numElements(*labels);
  int64_t counted = 0;
  for (int64_t i = 0; i < positions; ++i)
    if (!(ignore && loadIndex(*labels, i) == ignoreIndex))
      ++counted;
  dispatchFloat(scores->dtype, [&](auto tag) {
    using T = decltype(tag);
    const T *x = static_cast<const T *>(scores->data);
    const T *g = static_cast<const T *>(gradOut->data);
    T *gx = static_cast<T *>(gradScores->data);
    double scalar = 0.0;
    if (reduction == ZEROC_RT_LOSS_SUM)
      scalar = loadDouble(g[0]);
    else if (reduction == ZEROC_RT_LOSS_MEAN && counted > 0)
      scalar = loadDouble(g[0]) / static_cast<double>(counted);
    for (int64_t n = 0; n < sh.n; ++n)
      for (int64_t s = 0; s < sh.d; ++s) {
        int64_t pos = n * sh.d + s;
        int64_t label = loadIndex(*labels, pos);
        const T *xs = x + n * sh.c * sh.d + s;
        T *gs = gx + n * sh.c * sh.d + s;
        if (ignore && label == ignoreIndex) {
          for (int64_t c = 0; c < sh.c; ++c)
            gs[c * sh.d] = storeValue<T>(0.0);
          continue;
        }
        double w =
            reduction == ZEROC_RT_LOSS_NONE ? loadDouble(g[pos]) : scalar;
        if constexpr (std::is_same_v<T, float>)
          if (const double mx = sh.d == 1 ? maxScore(xs, sh.c, 1) : NAN;
              std::isfinite(mx)) {
            // softmax_c = exp(x_c - m) / sum, the exponentials vectorized
            // (the same values for the sum and the gradient).
            const float m = static_cast<float>(mx);
            double sum = 0.0;
            forEachExpChunk(xs, sh.c, m, [&](int64_t, const float *e, int64_t count) {
              for (int64_t j = 0; j < count; ++j)
                sum += e[j];
            });
            forEachExpChunk(xs, sh.c, m, [&](int64_t j0, const float *e, int64_t count) {
              for (int64_t j = 0; j < count; ++j) {
                double p = static_cast<double>(e[j]) / sum;
                gs[j0 + j] = storeValue<T>(w * (p - (j0 + j == label ? 1.0 : 0.0)));
              }
            });
            continue;
          }
        double lse = logSumExp(xs, sh.c, sh.d);
        forEachScore(xs, sh.c, sh.d, [&](int64_t c, double v) {
          double p = std::exp(v - lse);
          gs[c * sh.d] = storeValue<T>(w * (p - (c == label ? 1.0 : 0.0)));
        });
      }
  });
  return nullptr;
}

} // namespace
} // namespace zeroc_rt::kernels

using namespace zeroc_rt::kernels;

extern "C" {

zeroc_rt_status_t zeroc_rt_k_softmax_cross_entropy(
    const zeroc_rt_tensor_t *scores, const zeroc_rt_tensor_t *labels,
    zeroc_rt_loss_reduction_t reduction, int has_ignore, int64_t ignore_index,
    const zeroc_rt_tensor_t *out) {
  return ZEROC_RT_GUARD_EXCEPTIONS(
      kLoss(scores, labels, reduction, has_ignore, ignore_index, out));
}

zeroc_rt_status_t zeroc_rt_k_softmax_cross_entropy_grad(
    const zeroc_rt_tensor_t *scores, const zeroc_rt_tensor_t *labels,
    zeroc_rt_loss_reduction_t reduction, int has_ignore, int64_t ignore_index,
    const zeroc_rt_tensor_t *grad_out, const zeroc_rt_tensor_t *grad_scores) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kLossGrad(scores, labels, reduction,
                                             has_ignore, ignore_index, grad_out,
                                             grad_scores));
}

} // extern "C"
