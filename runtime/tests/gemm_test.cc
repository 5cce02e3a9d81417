//===- gemm_test.cc - zeroc_rt_gemm_f32 against a naive loop ----*- C++ -*-===//

#include "test_support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

using namespace zeroc_rt::test;

namespace {

/// Row-major reference: C = alpha * op(A) * op(B) + beta * C in double.
void naiveGemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
               const std::vector<float> &a, int64_t lda,
               const std::vector<float> &b, int64_t ldb, float beta,
               std::vector<float> &c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < k; ++p) {
        double av = ta ? a[p * lda + i] : a[i * lda + p];
        double bv = tb ? b[j * ldb + p] : b[p * ldb + j];
        acc += av * bv;
      }
      double prior = beta == 0.0f ? 0.0 : beta * double(c[i * ldc + j]);
      c[i * ldc + j] = static_cast<float>(alpha * acc + prior);
    }
}

std::vector<float> randomMatrix(size_t size, std::mt19937 &rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> values(size);
  for (float &value : values)
    value = dist(rng);
  return values;
}

/// (transA, transB, m, n, k)
using GemmShape = std::tuple<bool, bool, int64_t, int64_t, int64_t>;

class GemmVsNaive : public ::testing::TestWithParam<GemmShape> {};

TEST_P(GemmVsNaive, MatchesWithPaddedLeadingDimensions) {
  auto [ta, tb, m, n, k] = GetParam();
  std::mt19937 rng(1234);
  int64_t aRows = ta ? k : m, aCols = ta ? m : k;
  int64_t bRows = tb ? n : k, bCols = tb ? k : n;
  int64_t lda = aCols + 3, ldb = bCols + 1, ldc = n + 2;
  std::vector<float> a = randomMatrix(aRows * lda, rng);
  std::vector<float> b = randomMatrix(bRows * ldb, rng);
  std::vector<float> c = randomMatrix(m * ldc, rng);
  std::vector<float> expected = c;
  float alpha = 1.5f, beta = -0.5f;
  naiveGemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, expected, ldc);
  ZEROC_RT_ASSERT_OK(zeroc_rt_gemm_f32(
      ta ? ZEROC_RT_TRANSPOSE : ZEROC_RT_NO_TRANSPOSE,
      tb ? ZEROC_RT_TRANSPOSE : ZEROC_RT_NO_TRANSPOSE, m, n, k, alpha, a.data(),
      lda, b.data(), ldb, beta, c.data(), ldc));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < ldc; ++j) {
      float want = expected[i * ldc + j];
      EXPECT_NEAR(c[i * ldc + j], want, 1e-4f * (1.0f + std::fabs(want)))
          << "at (" << i << ", " << j << ")";
    }
}

std::string gemmShapeName(const ::testing::TestParamInfo<GemmShape> &info) {
  auto [ta, tb, m, n, k] = info.param;
  return std::string(ta ? "T" : "N") + (tb ? "T" : "N") + "_m" +
         std::to_string(m) + "n" + std::to_string(n) + "k" + std::to_string(k);
}

INSTANTIATE_TEST_SUITE_P(
    AllTransposes, GemmVsNaive,
    ::testing::Combine(::testing::Bool(), ::testing::Bool(),
                       ::testing::Values(int64_t(5), int64_t(33)),
                       ::testing::Values(int64_t(7)),
                       ::testing::Values(int64_t(3), int64_t(64))),
    gemmShapeName);

TEST(Gemm, BetaZeroOverwritesNaN) {
  float a[2] = {1, 2}, b[2] = {3, 4};
  float c[1] = {std::numeric_limits<float>::quiet_NaN()};
  ZEROC_RT_ASSERT_OK(zeroc_rt_gemm_f32(ZEROC_RT_NO_TRANSPOSE,
                                       ZEROC_RT_NO_TRANSPOSE, 1, 1, 2, 1.0f, a,
                                       2, b, 1, 0.0f, c, 1));
  EXPECT_EQ(c[0], 11.0f);
}

TEST(Gemm, ZeroKScalesOrClearsC) {
  float c[4] = {1, 2, 3, std::numeric_limits<float>::quiet_NaN()};
  ZEROC_RT_ASSERT_OK(zeroc_rt_gemm_f32(ZEROC_RT_NO_TRANSPOSE,
                                       ZEROC_RT_NO_TRANSPOSE, 2, 2, 0, 1.0f,
                                       nullptr, 1, nullptr, 2, 0.0f, c, 2));
  for (float value : c)
    EXPECT_EQ(value, 0.0f);
  float d[2] = {1, -2};
  ZEROC_RT_ASSERT_OK(zeroc_rt_gemm_f32(ZEROC_RT_NO_TRANSPOSE,
                                       ZEROC_RT_NO_TRANSPOSE, 1, 2, 0, 1.0f,
                                       nullptr, 1, nullptr, 2, 3.0f, d, 2));
  EXPECT_EQ(d[0], 3.0f);
  EXPECT_EQ(d[1], -6.0f);
}

TEST(Gemm, EmptyOutputIsNoOpWithNullPointers) {
  ZEROC_RT_EXPECT_OK(
      zeroc_rt_gemm_f32(ZEROC_RT_NO_TRANSPOSE, ZEROC_RT_NO_TRANSPOSE, 0, 4, 3,
                        1.0f, nullptr, 3, nullptr, 4, 0.0f, nullptr, 4));
}

TEST(Gemm, RejectsInvalidArguments) {
  float a[6] = {}, b[6] = {}, c[6] = {};
  auto noT = ZEROC_RT_NO_TRANSPOSE;
  ZEROC_RT_EXPECT_ERROR(
      zeroc_rt_gemm_f32(noT, noT, -1, 2, 3, 1, a, 3, b, 2, 0, c, 2),
      ZEROC_RT_INVALID_ARGUMENT, "m=-1");
  ZEROC_RT_EXPECT_ERROR(
      zeroc_rt_gemm_f32(noT, noT, 2, 2, 3, 1, a, 2, b, 2, 0, c, 2),
      ZEROC_RT_INVALID_ARGUMENT, "lda = 2");
  ZEROC_RT_EXPECT_ERROR(zeroc_rt_gemm_f32(noT, ZEROC_RT_TRANSPOSE, 2, 2, 3, 1,
                                          a, 3, b, 2, 0, c, 2),
                        ZEROC_RT_INVALID_ARGUMENT, "ldb = 2");
  ZEROC_RT_EXPECT_ERROR(
      zeroc_rt_gemm_f32(noT, noT, 2, 2, 3, 1, a, 3, b, 2, 0, c, 1),
      ZEROC_RT_INVALID_ARGUMENT, "ldc = 1");
  ZEROC_RT_EXPECT_ERROR(
      zeroc_rt_gemm_f32(noT, noT, 2, 2, 3, 1, nullptr, 3, b, 2, 0, c, 2),
      ZEROC_RT_INVALID_ARGUMENT, "A is NULL");
  ZEROC_RT_EXPECT_ERROR(
      zeroc_rt_gemm_f32(noT, noT, 2, 2, 3, 1, a, 3, b, 2, 0, nullptr, 2),
      ZEROC_RT_INVALID_ARGUMENT, "C is NULL");
  ZEROC_RT_EXPECT_ERROR(zeroc_rt_gemm_f32(static_cast<zeroc_rt_transpose_t>(2),
                                          noT, 2, 2, 3, 1, a, 3, b, 2, 0, c, 2),
                        ZEROC_RT_INVALID_ARGUMENT, "invalid transpose flag 2");
  ZEROC_RT_EXPECT_ERROR(
      zeroc_rt_gemm_f32(noT, noT, 2, 2, 3, 1, a, 3, b, 2, 0, a + 1, 2),
      ZEROC_RT_INVALID_ARGUMENT, "overlaps input A");
  ZEROC_RT_EXPECT_ERROR(zeroc_rt_gemm_f32(noT, noT, 2, 2, int64_t(1) << 31, 1,
                                          a, 3, b, 2, 0, c, 2),
                        ZEROC_RT_INVALID_ARGUMENT, "INT_MAX");
}

} // namespace
