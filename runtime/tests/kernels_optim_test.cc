//===- kernels_optim_test.cc - Flat-buffer math, Adam(W), SGD ---*- C++ -*-===//

#include "kernels_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace zeroc_rt::test;

namespace {

template <typename T> class KernelsFlat : public ::testing::Test {};
TYPED_TEST_SUITE(KernelsFlat, FloatTypes, FloatTypeNames);

TYPED_TEST(KernelsFlat, AccumulateScaleSumSquares) {
  constexpr zeroc_rt_dtype_t dt = dtypeOf<TypeParam>();
  std::mt19937_64 rng(1);
  const int64_t n = 37;
  HostTensor x = randomTensor(dt, {n}, rng), acc = randomTensor(dt, {n}, rng);
  std::vector<double> want(n);
  for (int64_t i = 0; i < n; ++i)
    want[i] = acc.get(i) + x.get(i);
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_accumulate(dt, x.data(), acc.data(), n));
  expectClose(acc, want, tolOf<TypeParam>(), "accumulate");

  for (int64_t i = 0; i < n; ++i)
    want[i] = acc.get(i) * -0.37;
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_scale(dt, acc.data(), n, -0.37));
  expectClose(acc, want, tolOf<TypeParam>(), "scale");

  double sum = 0.0, got = -1.0;
  for (int64_t i = 0; i < n; ++i)
    sum += acc.get(i) * acc.get(i);
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_sum_squares(dt, acc.data(), n, &got));
  EXPECT_NEAR(got, sum, 1e-12 * sum);

  // n == 0 accepts NULL buffers.
  ZEROC_RT_EXPECT_OK(zeroc_rt_k_accumulate(dt, nullptr, nullptr, 0));
  ZEROC_RT_EXPECT_OK(zeroc_rt_k_scale(dt, nullptr, 0, 2.0));
  ZEROC_RT_EXPECT_OK(zeroc_rt_k_sum_squares(dt, nullptr, 0, &got));
  EXPECT_EQ(got, 0.0);
}

// The 16-bit micro-batch gradient into an f32 accumulator: exact widening,
// one float rounding per element.
TEST(KernelsFlat, AccumulateWideningAddsSixteenBitIntoF32) {
  std::mt19937_64 rng(5);
  for (zeroc_rt_dtype_t half : {ZEROC_RT_DTYPE_F16, ZEROC_RT_DTYPE_BF16}) {
    const int64_t n = 101;
    HostTensor x = randomTensor(half, {n}, rng, -100, 100);
    HostTensor acc = randomTensor(ZEROC_RT_DTYPE_F32, {n}, rng, -1e4, 1e4);
    std::vector<double> want(n);
    for (int64_t i = 0; i < n; ++i)
      want[i] = static_cast<float>(static_cast<float>(acc.get(i)) +
                                   static_cast<float>(x.get(i)));
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_accumulate_widening(
        half, x.data(), ZEROC_RT_DTYPE_F32, acc.data(), n));
    for (int64_t i = 0; i < n; ++i)
      EXPECT_EQ(acc.get(i), want[i]) << zeroc_rt_dtype_name(half) << " " << i;
    ZEROC_RT_EXPECT_OK(zeroc_rt_k_accumulate_widening(
        half, nullptr, ZEROC_RT_DTYPE_F32, nullptr, 0));
    // The accumulator must not be narrower than the gradient.
    EXPECT_KERNEL_ERROR(zeroc_rt_k_accumulate_widening(ZEROC_RT_DTYPE_F32,
                                                       acc.data(), half,
                                                       x.data(), 4),
                        ZEROC_RT_INVALID_ARGUMENT,
                        "zeroc_rt_k_accumulate_widening", "must be wider");
    zeroc_rt_dtype_t other =
        half == ZEROC_RT_DTYPE_F16 ? ZEROC_RT_DTYPE_BF16 : ZEROC_RT_DTYPE_F16;
    HostTensor y(other, {4});
    EXPECT_KERNEL_ERROR(
        zeroc_rt_k_accumulate_widening(half, x.data(), other, y.data(), 4),
        ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_accumulate_widening",
        "must be wider");
  }
}

/// torch.optim.Adam / AdamW in double, written out step by step.
struct AdamRef {
  std::vector<double> p, m, v;
  bool biasCorrection = true;
  void step(const std::vector<double> &g, double lr, double b1, double b2,
            double eps, double wd, bool adamW, int64_t t) {
    for (size_t i = 0; i < p.size(); ++i) {
      double gi = g[i];
      if (adamW)
        p[i] = p[i] * (1 - lr * wd);
      else
        gi = gi + wd * p[i];
      m[i] = b1 * m[i] + (1 - b1) * gi;
      v[i] = b2 * v[i] + (1 - b2) * gi * gi;
      double bc1 = biasCorrection ? 1 - std::pow(b1, double(t)) : 1.0;
      double bc2 = biasCorrection ? 1 - std::pow(b2, double(t)) : 1.0;
      double denom = std::sqrt(v[i]) / std::sqrt(bc2) + eps;
      p[i] = p[i] - (lr / bc1) * m[i] / denom;
    }
  }
};

TYPED_TEST(KernelsFlat, AdamThreeStepsMatchHandComputedReference) {
  constexpr zeroc_rt_dtype_t dt = dtypeOf<TypeParam>();
  std::mt19937_64 rng(2);
  const int64_t n = 11;
  const double lr = 1e-2, b1 = 0.9, b2 = 0.999, eps = 1e-8;
  for (bool corrected : {true, false})
  for (bool adamW : {true, false})
    for (double wd : {0.0, 0.1}) {
      HostTensor p = randomTensor(dt, {n}, rng), m(dt, {n}), v(dt, {n});
      AdamRef ref{p.values(), std::vector<double>(n, 0.0),
                  std::vector<double>(n, 0.0), corrected};
      for (int64_t t = 1; t <= 3; ++t) {
        HostTensor g = randomTensor(dt, {n}, rng, -2, 2);
        ZEROC_RT_ASSERT_OK(zeroc_rt_k_adam_step(dt, p.data(), g.data(),
                                                m.data(), v.data(), n, lr, b1,
                                                b2, eps, wd, adamW, corrected,
                                                t));
        ref.step(g.values(), lr, b1, b2, eps, wd, adamW, t);
        std::string what = std::string(adamW ? "adamw" : "adam-l2") + " wd " +
                           std::to_string(wd) + " step " + std::to_string(t) +
                           (corrected ? "" : " no bias correction");
        expectClose(p, ref.p, 10 * tolOf<TypeParam>(), "param " + what);
        expectClose(m, ref.m, 10 * tolOf<TypeParam>(), "exp_avg " + what);
        expectClose(v, ref.v, 10 * tolOf<TypeParam>(), "exp_avg_sq " + what);
      }
    }
}

TEST(KernelsFlat, AdamFirstStepByHand) {
  // p = 1, g = 0.5, lr = 0.1: m = 0.05, v = 2.5e-4, m_hat = 0.5,
  // v_hat = 0.25, p = 1 - 0.1 * 0.5 / (0.5 + 1e-8).
  double p = 1.0, g = 0.5, m = 0.0, v = 0.0;
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_adam_step(ZEROC_RT_DTYPE_F64, &p, &g, &m, &v, 1,
                                          0.1, 0.9, 0.999, 1e-8, 0.0, 1, 1, 1));
  EXPECT_NEAR(m, 0.05, 1e-15);
  EXPECT_NEAR(v, 2.5e-4, 1e-15);
  EXPECT_NEAR(p, 1.0 - 0.1 * 0.5 / (0.5 + 1e-8), 1e-14);
  // AdamW decay with wd = 0.5 shrinks p by (1 - lr * wd) before the update.
  p = 1.0;
  m = v = 0.0;
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_adam_step(ZEROC_RT_DTYPE_F64, &p, &g, &m, &v, 1,
                                          0.1, 0.9, 0.999, 1e-8, 0.5, 1, 1, 1));
  EXPECT_NEAR(p, 0.95 - 0.1 * 0.5 / (0.5 + 1e-8), 1e-14);
  // L2 mode with wd = 0.5: g' = 0.5 + 0.5 * 1 = 1; m_hat = 1, v_hat = 1.
  p = 1.0;
  m = v = 0.0;
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_adam_step(ZEROC_RT_DTYPE_F64, &p, &g, &m, &v, 1,
                                          0.1, 0.9, 0.999, 1e-8, 0.5, 0, 1, 1));
  EXPECT_NEAR(m, 0.1, 1e-15);
  EXPECT_NEAR(p, 1.0 - 0.1 / (1.0 + 1e-8), 1e-14);
}

TYPED_TEST(KernelsFlat, SgdMomentumThreeSteps) {
  constexpr zeroc_rt_dtype_t dt = dtypeOf<TypeParam>();
  std::mt19937_64 rng(3);
  const int64_t n = 9;
  const double lr = 0.05, momentum = 0.9, wd = 0.01;
  HostTensor p = randomTensor(dt, {n}, rng), buf(dt, {n});
  buf.fill(NAN); // step 1 must not read it
  std::vector<double> rp = p.values(), rb(n);
  for (int64_t t = 1; t <= 3; ++t) {
    HostTensor g = randomTensor(dt, {n}, rng);
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_sgd_step(dt, p.data(), g.data(), buf.data(),
                                           n, lr, momentum, wd, 0.0, 0, t));
    for (int64_t i = 0; i < n; ++i) {
      double d = g.get(i) + wd * rp[i];
      rb[i] = t == 1 ? d : momentum * rb[i] + d;
      rp[i] -= lr * rb[i];
    }
    expectClose(p, rp, 10 * tolOf<TypeParam>(), "sgd param step " +
                                                    std::to_string(t));
    expectClose(buf, rb, 10 * tolOf<TypeParam>(), "sgd buf step " +
                                                      std::to_string(t));
  }
  // Without momentum the buffer is not used and may be NULL.
  HostTensor g = randomTensor(dt, {n}, rng);
  std::vector<double> before = p.values();
  ZEROC_RT_ASSERT_OK(
      zeroc_rt_k_sgd_step(dt, p.data(), g.data(), nullptr, n, lr, 0.0, 0.0, 0.0, 0, 5));
  for (int64_t i = 0; i < n; ++i)
    before[i] -= lr * g.get(i);
  expectClose(p, before, tolOf<TypeParam>(), "sgd without momentum");
}

// torch.optim.SGD's dampening and Nesterov momentum, written out.
TYPED_TEST(KernelsFlat, SgdDampeningAndNesterov) {
  constexpr zeroc_rt_dtype_t dt = dtypeOf<TypeParam>();
  std::mt19937_64 rng(4);
  const int64_t n = 9;
  const double lr = 0.05, momentum = 0.8, wd = 0.02;
  struct Variant {
    double dampening;
    int nesterov;
  };
  for (Variant var : {Variant{0.3, 0}, Variant{0.0, 1}}) {
    HostTensor p = randomTensor(dt, {n}, rng), buf(dt, {n});
    std::vector<double> rp = p.values(), rb(n);
    for (int64_t t = 1; t <= 3; ++t) {
      HostTensor g = randomTensor(dt, {n}, rng);
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_sgd_step(dt, p.data(), g.data(), buf.data(),
                                             n, lr, momentum, wd, var.dampening,
                                             var.nesterov, t));
      for (int64_t i = 0; i < n; ++i) {
        double d = g.get(i) + wd * rp[i];
        rb[i] = t == 1 ? d : momentum * rb[i] + (1 - var.dampening) * d;
        rp[i] -= lr * (var.nesterov ? d + momentum * rb[i] : rb[i]);
      }
      std::string what = std::string(var.nesterov ? "nesterov" : "dampening") +
                         " step " + std::to_string(t);
      expectClose(p, rp, 10 * tolOf<TypeParam>(), "sgd param " + what);
      expectClose(buf, rb, 10 * tolOf<TypeParam>(), "sgd buf " + what);
    }
  }
}

TEST(KernelsFlat, RejectsBadArguments) {
  float p[4] = {}, g[4] = {}, m[4] = {}, v[4] = {};
  const char *adam = "zeroc_rt_k_adam_step";
  EXPECT_KERNEL_ERROR(zeroc_rt_k_adam_step(ZEROC_RT_DTYPE_F32, p, g, m, v, 4,
                                           0.1, 1.0, 0.999, 1e-8, 0, 1, 1, 1),
                      ZEROC_RT_INVALID_ARGUMENT, adam, "beta1 = 1");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_adam_step(ZEROC_RT_DTYPE_F32, p, g, m, v, 4,
                                           NAN, 0.9, 0.999, 1e-8, 0, 1, 1, 1),
                      ZEROC_RT_INVALID_ARGUMENT, adam, "lr = nan");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_adam_step(ZEROC_RT_DTYPE_F32, p, g, m, v, 4,
                                           0.1, 0.9, 0.999, 1e-8, 0, 1, 1, 0),
                      ZEROC_RT_INVALID_ARGUMENT, adam, "step 0");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_adam_step(ZEROC_RT_DTYPE_F32, p, p + 1, m, v,
                                           4, 0.1, 0.9, 0.999, 1e-8, 0, 1, 1, 1),
                      ZEROC_RT_INVALID_ARGUMENT, adam, "grad overlaps param");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_adam_step(ZEROC_RT_DTYPE_F32, p, g, nullptr, v,
                                           4, 0.1, 0.9, 0.999, 1e-8, 0, 1, 1, 1),
                      ZEROC_RT_INVALID_ARGUMENT, adam, "exp_avg is NULL");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_adam_step(ZEROC_RT_DTYPE_F32, p, g, m,
                                           reinterpret_cast<char *>(v) + 1, 2,
                                           0.1, 0.9, 0.999, 1e-8, 0, 1, 1, 1),
                      ZEROC_RT_INVALID_ARGUMENT, adam,
                      "exp_avg_sq data 0x");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_adam_step(ZEROC_RT_DTYPE_I32, p, g, m, v, 4,
                                           0.1, 0.9, 0.999, 1e-8, 0, 1, 1, 1),
                      ZEROC_RT_INVALID_ARGUMENT, adam, "dtype i32");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_adam_step(ZEROC_RT_DTYPE_F32, p, g, m, v, -1,
                                           0.1, 0.9, 0.999, 1e-8, 0, 1, 1, 1),
                      ZEROC_RT_INVALID_ARGUMENT, adam, "element count -1");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_sgd_step(ZEROC_RT_DTYPE_F32, p, g, nullptr, 4, 0.1, 0.9, 0, 0.0, 0, 2),
      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_sgd_step", "momentum_buf is NULL");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_sgd_step(ZEROC_RT_DTYPE_F32, p, g, m, 4, -0.1, 0.9, 0, 0.0, 0, 2),
      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_sgd_step", "lr = -0.1");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_sgd_step(ZEROC_RT_DTYPE_F32, p, g, m, 4, 0.1, 0.9, 0, 0.5, 1, 2),
      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_sgd_step",
      "Nesterov momentum requires a momentum and zero dampening");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_sgd_step(ZEROC_RT_DTYPE_F32, p, g, m, 4, 0.1, 0.9, 0, NAN, 0, 2),
      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_sgd_step", "dampening = nan");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_accumulate(ZEROC_RT_DTYPE_F32, p, p, 4),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_accumulate",
                      "overlaps");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_scale(static_cast<zeroc_rt_dtype_t>(42), p, 4, 2.0),
      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_scale", "dtype invalid (42)");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_sum_squares(ZEROC_RT_DTYPE_F32, p, 4, nullptr),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_sum_squares",
                      "out is NULL");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_sum_squares(ZEROC_RT_DTYPE_F64, p, INT64_MAX / 4, nullptr),
      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_sum_squares", "too large");
}

// The step's checks over every gradient in one call: the sum of the
// tensors' sums in tensor order (the value the per-tensor calls give), and
// an overflow found in any tensor, whatever their dtypes.
TEST(KernelsFlat, MultiTensorSumSquaresAndOverflowMatchPerTensorCalls) {
  std::mt19937_64 rng(11);
  std::vector<HostTensor> xs;
  std::vector<zeroc_rt_dtype_t> dtypes = {ZEROC_RT_DTYPE_F16, ZEROC_RT_DTYPE_F32,
                                          ZEROC_RT_DTYPE_BF16, ZEROC_RT_DTYPE_F64};
  std::vector<int64_t> ns = {37, 0, 5, 130};
  std::vector<const void *> ptrs;
  double want = 0.0;
  for (size_t t = 0; t < dtypes.size(); ++t) {
    xs.push_back(randomTensor(dtypes[t], {ns[t]}, rng));
    ptrs.push_back(xs.back().data());
    double part = -1.0;
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_sum_squares(dtypes[t], ptrs[t], ns[t], &part));
    want += part;
  }
  const int64_t count = static_cast<int64_t>(dtypes.size());
  double got = -1.0;
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_sum_squares_multi(count, dtypes.data(), ptrs.data(),
                                                  ns.data(), &got));
  EXPECT_EQ(got, want);
  int found = -1;
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_has_inf_or_nan_multi(count, dtypes.data(), ptrs.data(),
                                                     ns.data(), &found));
  EXPECT_EQ(found, 0);
  xs[3].set(129, std::numeric_limits<double>::infinity());
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_has_inf_or_nan_multi(count, dtypes.data(), ptrs.data(),
                                                     ns.data(), &found));
  EXPECT_EQ(found, 1);
  // No tensors: 0 and no overflow, NULL arrays allowed.
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_sum_squares_multi(0, nullptr, nullptr, nullptr, &got));
  EXPECT_EQ(got, 0.0);
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_has_inf_or_nan_multi(0, nullptr, nullptr, nullptr, &found));
  EXPECT_EQ(found, 0);
  EXPECT_KERNEL_ERROR(zeroc_rt_k_sum_squares_multi(-1, nullptr, nullptr, nullptr, &got),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_sum_squares_multi",
                      "count -1 is negative");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_has_inf_or_nan_multi(2, dtypes.data(), nullptr,
                                                      ns.data(), &found),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_has_inf_or_nan_multi",
                      "dtypes, xs or ns is NULL");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_sum_squares_multi(count, dtypes.data(), ptrs.data(),
                                                   ns.data(), nullptr),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_sum_squares_multi",
                      "out is NULL");
}

} // namespace
