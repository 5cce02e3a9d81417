//===- kernels_loss_test.cc - SoftmaxCrossEntropyLoss and grad --*- C++ -*-===//

#include "kernels_test_util.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace zeroc_rt::test;

namespace {

struct LossCase {
  Dims scores;                 // (N, C, d...)
  std::vector<double> labels;  // N * prod(d) values
  bool hasIgnore;
  int64_t ignoreIndex;
};

const LossCase kLossCases[] = {
    {{4, 5}, {0, 4, 2, 1}, false, 0},
    {{4, 5}, {0, -100, 2, -100}, true, -100},
    {{3, 4}, {2, 2, 1}, true, 2}, // ignore_index inside [0, C)
    {{2, 3, 2, 2}, {0, 1, 2, 0, 2, -1, 1, 1}, true, -1},
    {{2, 3}, {-7, -7}, true, -7}, // everything ignored
    {{1, 1}, {0}, false, 0},
    {{0, 3}, {}, false, 0},
};

Dims labelDims(const Dims &scores) {
  Dims d = {scores[0]};
  d.insert(d.end(), scores.begin() + 2, scores.end());
  return d;
}

/// Per-position losses (0 where ignored) and the count of counted labels.
std::vector<double> refLosses(const HostTensor &scores, const LossCase &c,
                              int64_t *counted) {
  int64_t n = c.scores[0], classes = c.scores[1];
  int64_t d = numel(Dims(c.scores.begin() + 2, c.scores.end()));
  std::vector<double> losses(n * d, 0.0);
  *counted = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t s = 0; s < d; ++s) {
      auto label = static_cast<int64_t>(c.labels[i * d + s]);
      if (c.hasIgnore && label == c.ignoreIndex)
        continue;
      double max = -INFINITY, sum = 0.0;
      for (int64_t k = 0; k < classes; ++k)
        max = std::max(max, scores.get((i * classes + k) * d + s));
      for (int64_t k = 0; k < classes; ++k)
        sum += std::exp(scores.get((i * classes + k) * d + s) - max);
      losses[i * d + s] =
          max + std::log(sum) - scores.get((i * classes + label) * d + s);
      ++*counted;
    }
  return losses;
}

const zeroc_rt_loss_reduction_t kReductions[] = {
    ZEROC_RT_LOSS_MEAN, ZEROC_RT_LOSS_SUM, ZEROC_RT_LOSS_NONE};

template <typename T> class KernelsLoss : public ::testing::Test {};
TYPED_TEST_SUITE(KernelsLoss, FloatTypes, FloatTypeNames);

TYPED_TEST(KernelsLoss, MatchesReferenceForEveryReduction) {
  constexpr zeroc_rt_dtype_t dt = dtypeOf<TypeParam>();
  std::mt19937_64 rng(1);
  for (zeroc_rt_dtype_t lt : {ZEROC_RT_DTYPE_I64, ZEROC_RT_DTYPE_I32})
    for (const LossCase &c : kLossCases)
      for (zeroc_rt_loss_reduction_t red : kReductions) {
        HostTensor scores = randomTensor(dt, c.scores, rng, -3, 3);
        HostTensor labels(lt, labelDims(c.scores));
        labels.setValues(c.labels);
        HostTensor out(dt, red == ZEROC_RT_LOSS_NONE ? labelDims(c.scores)
                                                     : Dims{});
        ZEROC_RT_ASSERT_OK(zeroc_rt_k_softmax_cross_entropy(
            scores.desc(), labels.desc(), red, c.hasIgnore, c.ignoreIndex,
            out.desc()));
        int64_t counted = 0;
        std::vector<double> losses = refLosses(scores, c, &counted);
        std::vector<double> want = losses;
        if (red != ZEROC_RT_LOSS_NONE) {
          double sum = 0.0;
          for (double l : losses)
            sum += l;
          want = {red == ZEROC_RT_LOSS_SUM ? sum
                  : counted                ? sum / double(counted)
                                           : 0.0};
        }
        expectClose(out, want, tolOf<TypeParam>(),
                    dimsName(c.scores) + " reduction " + std::to_string(red));
      }
}

TYPED_TEST(KernelsLoss, GradMatchesReference) {
  constexpr zeroc_rt_dtype_t dt = dtypeOf<TypeParam>();
  std::mt19937_64 rng(2);
  for (const LossCase &c : kLossCases)
    for (zeroc_rt_loss_reduction_t red : kReductions) {
      Dims ld = labelDims(c.scores);
      HostTensor scores = randomTensor(dt, c.scores, rng, -3, 3);
      HostTensor labels(ZEROC_RT_DTYPE_I64, ld);
      labels.setValues(c.labels);
      HostTensor gy = randomTensor(dt, red == ZEROC_RT_LOSS_NONE ? ld : Dims{},
                                   rng, 0.5, 2);
      HostTensor gx(dt, c.scores);
      gx.fill(5);
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_softmax_cross_entropy_grad(
          scores.desc(), labels.desc(), red, c.hasIgnore, c.ignoreIndex,
          gy.desc(), gx.desc()));
      int64_t counted = 0;
      refLosses(scores, c, &counted);
      int64_t n = c.scores[0], classes = c.scores[1];
      int64_t d = numel(Dims(c.scores.begin() + 2, c.scores.end()));
      std::vector<double> want(scores.size(), 0.0);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t s = 0; s < d; ++s) {
          auto label = static_cast<int64_t>(c.labels[i * d + s]);
          if (c.hasIgnore && label == c.ignoreIndex)
            continue;
          double w = red == ZEROC_RT_LOSS_NONE  ? gy.get(i * d + s)
                     : red == ZEROC_RT_LOSS_SUM ? gy.get(0)
                                                : gy.get(0) / double(counted);
          double max = -INFINITY, sum = 0.0;
          for (int64_t k = 0; k < classes; ++k)
            max = std::max(max, scores.get((i * classes + k) * d + s));
          for (int64_t k = 0; k < classes; ++k)
            sum += std::exp(scores.get((i * classes + k) * d + s) - max);
          for (int64_t k = 0; k < classes; ++k) {
            int64_t at = (i * classes + k) * d + s;
            double p = std::exp(scores.get(at) - max) / sum;
            want[at] = w * (p - (k == label));
          }
        }
      expectClose(gx, want, tolOf<TypeParam>(),
                  dimsName(c.scores) + " reduction " + std::to_string(red));
    }
}

TEST(KernelsLoss, GradFiniteDifferencesWithIgnoredLabelsF64) {
  std::mt19937_64 rng(3);
  const auto dt = ZEROC_RT_DTYPE_F64;
  for (const LossCase &c : kLossCases)
    for (zeroc_rt_loss_reduction_t red : kReductions) {
      Dims ld = labelDims(c.scores);
      Dims outDims = red == ZEROC_RT_LOSS_NONE ? ld : Dims{};
      HostTensor scores = randomTensor(dt, c.scores, rng, -3, 3);
      HostTensor labels(ZEROC_RT_DTYPE_I32, ld);
      labels.setValues(c.labels);
      HostTensor w = randomTensor(dt, outDims, rng);
      HostTensor g(dt, c.scores);
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_softmax_cross_entropy_grad(
          scores.desc(), labels.desc(), red, c.hasIgnore, c.ignoreIndex,
          w.desc(), g.desc()));
      auto forward = [&](const std::vector<double> &p) {
        HostTensor sp(dt, c.scores), out(dt, outDims);
        sp.setValues(p);
        ZEROC_RT_EXPECT_OK(zeroc_rt_k_softmax_cross_entropy(
            sp.desc(), labels.desc(), red, c.hasIgnore, c.ignoreIndex,
            out.desc()));
        return out.values();
      };
      expectGradient(forward, scores.values(), w.values(), g.values(),
                     "sce_grad " + dimsName(c.scores) + " reduction " +
                         std::to_string(red));
    }
}

TEST(KernelsLoss, StableForLargeScores) {
  HostTensor scores(ZEROC_RT_DTYPE_F32, {1, 3}), labels(ZEROC_RT_DTYPE_I64, {1}),
      out(ZEROC_RT_DTYPE_F32, {});
  scores.setValues({1000, 1001, 999});
  labels.setValues({1});
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_softmax_cross_entropy(
      scores.desc(), labels.desc(), ZEROC_RT_LOSS_MEAN, 0, 0, out.desc()));
  double want = std::log(std::exp(-1.0) + 1.0 + std::exp(-2.0));
  EXPECT_NEAR(out.get(0), want, 1e-6);
}

TEST(KernelsLoss, RejectsLabelsOutOfRangeAndBadShapes) {
  HostTensor scores(ZEROC_RT_DTYPE_F32, {3, 4}), labels(ZEROC_RT_DTYPE_I64, {3}),
      out(ZEROC_RT_DTYPE_F32, {}), g(ZEROC_RT_DTYPE_F32, {3, 4});
  labels.setValues({0, 4, 1});
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_softmax_cross_entropy(scores.desc(), labels.desc(),
                                       ZEROC_RT_LOSS_MEAN, 0, 0, out.desc()),
      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_softmax_cross_entropy",
      "label 4 (element 1 of labels i64[3]) is outside [0, 4)");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_softmax_cross_entropy_grad(
                          scores.desc(), labels.desc(), ZEROC_RT_LOSS_MEAN, 0,
                          0, out.desc(), g.desc()),
                      ZEROC_RT_INVALID_ARGUMENT,
                      "zeroc_rt_k_softmax_cross_entropy_grad", "label 4");
  labels.setValues({0, -100, 1});
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_softmax_cross_entropy(scores.desc(), labels.desc(),
                                       ZEROC_RT_LOSS_MEAN, 0, -100, out.desc()),
      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_softmax_cross_entropy",
      "label -100");
  ZEROC_RT_EXPECT_OK(zeroc_rt_k_softmax_cross_entropy(
      scores.desc(), labels.desc(), ZEROC_RT_LOSS_MEAN, 1, -100, out.desc()));
  HostTensor none(ZEROC_RT_DTYPE_F32, {3});
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_softmax_cross_entropy(scores.desc(), labels.desc(),
                                       ZEROC_RT_LOSS_SUM, 1, -100, none.desc()),
      ZEROC_RT_SHAPE_MISMATCH, "zeroc_rt_k_softmax_cross_entropy",
      "out is f32[3] but a scalar");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_softmax_cross_entropy(scores.desc(), labels.desc(),
                                       ZEROC_RT_LOSS_NONE, 1, -100, out.desc()),
      ZEROC_RT_SHAPE_MISMATCH, "zeroc_rt_k_softmax_cross_entropy",
      "the labels' shape");
  HostTensor badLabels(ZEROC_RT_DTYPE_I64, {4});
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_softmax_cross_entropy(scores.desc(), badLabels.desc(),
                                       ZEROC_RT_LOSS_SUM, 0, 0, out.desc()),
      ZEROC_RT_SHAPE_MISMATCH, "zeroc_rt_k_softmax_cross_entropy",
      "labels is i64[4] but scores without the class dim is [3]");
  HostTensor floatLabels(ZEROC_RT_DTYPE_F32, {3});
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_softmax_cross_entropy(scores.desc(), floatLabels.desc(),
                                       ZEROC_RT_LOSS_SUM, 0, 0, out.desc()),
      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_softmax_cross_entropy",
      "labels has dtype f32; expected i64 or i32");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_softmax_cross_entropy(
          scores.desc(), labels.desc(),
          static_cast<zeroc_rt_loss_reduction_t>(7), 1, -100, out.desc()),
      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_softmax_cross_entropy",
      "invalid reduction 7");
  HostTensor badGrad(ZEROC_RT_DTYPE_F32, {3, 5});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_softmax_cross_entropy_grad(
                          scores.desc(), labels.desc(), ZEROC_RT_LOSS_SUM, 1,
                          -100, out.desc(), badGrad.desc()),
                      ZEROC_RT_SHAPE_MISMATCH,
                      "zeroc_rt_k_softmax_cross_entropy_grad", "grad_scores");
}

} // namespace
