//===- kernels_matmul_test.cc - matmul and gemm kernels ---------*- C++ -*-===//

#include "kernels_test_util.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace zeroc_rt::test;

namespace {

/// numpy.matmul output shape (assumes valid operands).
Dims matmulDims(const Dims &a, const Dims &b) {
  Dims aBatch(a.begin(), a.end() - std::min<size_t>(a.size(), 2));
  Dims bBatch(b.begin(), b.end() - std::min<size_t>(b.size(), 2));
  if (a.size() == 1)
    aBatch.clear();
  if (b.size() == 1)
    bBatch.clear();
  Dims out = broadcastDims(aBatch, bBatch);
  if (a.size() >= 2)
    out.push_back(a[a.size() - 2]);
  if (b.size() >= 2)
    out.push_back(b.back());
  return out;
}

/// Naive numpy.matmul in double.
std::vector<double> refMatmul(const HostTensor &a, const HostTensor &b,
                              const Dims &outDims) {
  Dims ad = a.dims(), bd = b.dims();
  bool aVec = ad.size() == 1, bVec = bd.size() == 1;
  if (aVec)
    ad.insert(ad.begin(), 1);
  if (bVec)
    bd.push_back(1);
  int64_t m = ad[ad.size() - 2], k = ad.back(), n = bd.back();
  Dims aBatch(ad.begin(), ad.end() - 2), bBatch(bd.begin(), bd.end() - 2);
  Dims batch = broadcastDims(aBatch, bBatch);
  std::vector<double> out(static_cast<size_t>(numel(outDims)));
  int64_t nb = numel(batch);
  for (int64_t bi = 0; bi < nb; ++bi) {
    Dims bIndex = unravel(bi, batch);
    int64_t aOff = broadcastSource(bIndex, aBatch) * m * k;
    int64_t bOff = broadcastSource(bIndex, bBatch) * k * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0.0;
        for (int64_t p = 0; p < k; ++p)
          acc += a.get(aOff + i * k + p) * b.get(bOff + p * n + j);
        out[(bi * m + i) * n + j] = acc;
      }
  }
  return out;
}

const std::pair<Dims, Dims> kMatmulShapes[] = {
    {{3, 4}, {4, 5}},          {{4}, {4, 5}},           {{3, 4}, {4}},
    {{4}, {4}},                {{2, 3, 4}, {4, 5}},     {{2, 3, 4}, {2, 4, 5}},
    {{2, 1, 3, 4}, {5, 4, 2}}, {{1, 3, 4}, {2, 4, 5}},  {{2, 3, 0}, {0, 5}},
    {{0, 3, 4}, {4, 5}},       {{3, 4}, {2, 4, 5}},     {{2, 3, 4}, {4}},
    {{5}, {2, 5, 3}},          {{2, 2, 3, 4}, {1, 4, 1}}, {{1, 1}, {1, 1}},
    {{3, 1, 2, 3}, {1, 4, 3, 2}}};

template <typename T> class KernelsMatmul : public ::testing::Test {};
TYPED_TEST_SUITE(KernelsMatmul, FloatTypes, FloatTypeNames);

TYPED_TEST(KernelsMatmul, MatchesNaiveLoopWithBroadcastBatches) {
  constexpr zeroc_rt_dtype_t dt = dtypeOf<TypeParam>();
  std::mt19937_64 rng(1);
  for (const auto &[aDims, bDims] : kMatmulShapes) {
    HostTensor a = randomTensor(dt, aDims, rng);
    HostTensor b = randomTensor(dt, bDims, rng);
    Dims outDims = matmulDims(aDims, bDims);
    HostTensor out(dt, outDims);
    out.fill(NAN); // overwritten even when K == 0
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_matmul(a.desc(), b.desc(), out.desc()));
    expectClose(out, refMatmul(a, b, outDims), 4 * tolOf<TypeParam>(),
                dimsName(aDims) + " @ " + dimsName(bDims));
  }
}

/// `t` with its last two dims swapped (stored that way).
HostTensor swappedLast2(const HostTensor &t) {
  Dims d = t.dims();
  const size_t r = d.size();
  std::swap(d[r - 2], d[r - 1]);
  HostTensor out(t.dtype(), d);
  const int64_t rows = t.dims()[r - 2], cols = t.dims()[r - 1];
  const int64_t blocks = numel(d) / std::max<int64_t>(rows * cols, 1);
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        out.set(b * rows * cols + j * rows + i, t.get(b * rows * cols + i * cols + j));
  return out;
}

/// matmul_trans(a, b, ta, tb) is numpy.matmul of the operands with their
/// last two dims swapped where flagged: batched, broadcast, b shared by the
/// batch (whose GEMM folds the batch into M only when a is not transposed).
TYPED_TEST(KernelsMatmul, TransposedOperandsMatchSwappedCopies) {
  constexpr zeroc_rt_dtype_t dt = dtypeOf<TypeParam>();
  std::mt19937_64 rng(3);
  const std::pair<Dims, Dims> shapes[] = {{{3, 4}, {4, 5}},       {{2, 3, 4}, {2, 4, 5}},
                                          {{2, 3, 4}, {4, 5}},    {{2, 1, 3, 4}, {5, 4, 2}},
                                          {{3, 4}, {2, 4, 5}},    {{2, 3, 0}, {2, 0, 5}}};
  for (const auto &[aDims, bDims] : shapes)
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb) {
        HostTensor a = randomTensor(dt, aDims, rng), b = randomTensor(dt, bDims, rng);
        // The flagged operands as stored: the plain ones' swapped copies.
        HostTensor sa = ta ? swappedLast2(a) : a, sb = tb ? swappedLast2(b) : b;
        Dims outDims = matmulDims(aDims, bDims);
        HostTensor out(dt, outDims);
        out.fill(NAN);
        ZEROC_RT_ASSERT_OK(zeroc_rt_k_matmul_trans(sa.desc(), sb.desc(), ta, tb, out.desc()));
        expectClose(out, refMatmul(a, b, outDims), 4 * tolOf<TypeParam>(),
                    dimsName(aDims) + " @ " + dimsName(bDims) + " ta=" + std::to_string(ta) +
                        " tb=" + std::to_string(tb));
      }
}

TEST(KernelsMatmul, TransposedOperandNeedsRankTwo) {
  HostTensor a(ZEROC_RT_DTYPE_F32, {3}), b(ZEROC_RT_DTYPE_F32, {3, 4}),
      out(ZEROC_RT_DTYPE_F32, {4});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_matmul_trans(a.desc(), b.desc(), 1, 0, out.desc()),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_matmul_trans",
                      "a transposed operand must have rank >= 2");
  HostTensor c(ZEROC_RT_DTYPE_F32, {2, 3}), wrong(ZEROC_RT_DTYPE_F32, {2, 4});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_matmul_trans(c.desc(), b.desc(), 0, 1, wrong.desc()),
                      ZEROC_RT_SHAPE_MISMATCH, "zeroc_rt_k_matmul_trans",
                      "contraction dims differ");
}

TEST(KernelsMatmul, RejectsBadShapes) {
  HostTensor a(ZEROC_RT_DTYPE_F32, {2, 3}), b(ZEROC_RT_DTYPE_F32, {4, 5}),
      out(ZEROC_RT_DTYPE_F32, {2, 5});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_matmul(a.desc(), b.desc(), out.desc()),
                      ZEROC_RT_SHAPE_MISMATCH, "zeroc_rt_k_matmul",
                      "a f32[2,3] has K=3, b f32[4,5] has K=4");
  HostTensor b2(ZEROC_RT_DTYPE_F32, {3, 5}), wrong(ZEROC_RT_DTYPE_F32, {5, 2});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_matmul(a.desc(), b2.desc(), wrong.desc()),
                      ZEROC_RT_SHAPE_MISMATCH, "zeroc_rt_k_matmul",
                      "out is f32[5,2] but numpy.matmul of a and b is [2,5]");
  HostTensor a3(ZEROC_RT_DTYPE_F32, {2, 2, 3}), b3(ZEROC_RT_DTYPE_F32, {3, 3, 5}),
      out3(ZEROC_RT_DTYPE_F32, {3, 2, 5});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_matmul(a3.desc(), b3.desc(), out3.desc()),
                      ZEROC_RT_SHAPE_MISMATCH, "zeroc_rt_k_matmul",
                      "do not broadcast");
  HostTensor s(ZEROC_RT_DTYPE_F32, {});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_matmul(s.desc(), b2.desc(), out.desc()),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_matmul",
                      "rank >= 1");
  HostTensor d(ZEROC_RT_DTYPE_F64, {3, 5});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_matmul(a.desc(), d.desc(), out.desc()),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_matmul",
                      "b has dtype f64 but a has f32");
  HostTensor i(ZEROC_RT_DTYPE_I64, {2, 3});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_matmul(i.desc(), b2.desc(), out.desc()),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_matmul",
                      "a has dtype i64; expected f32, f64, f16 or bf16");
  // out aliasing an input.
  zeroc_rt_tensor_t alias = *out.desc();
  alias.data = a.data();
  HostTensor sq(ZEROC_RT_DTYPE_F32, {3, 3});
  alias.dims[1] = 3;
  EXPECT_KERNEL_ERROR(zeroc_rt_k_matmul(a.desc(), sq.desc(), &alias),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_matmul",
                      "out overlaps a");
}

/// Matmul gradients built from the kernels themselves (transpose of the last
/// two dims, matmul, sum_to) agree with finite differences:
///   dA = sum_to(G @ B^T, A), dB = sum_to(A^T @ G, B).
TEST(KernelsMatmul, AdjointIdentitiesByFiniteDifferencesF64) {
  std::mt19937_64 rng(2);
  const auto dt = ZEROC_RT_DTYPE_F64;
  auto transposeLast = [](HostTensor &x) {
    Dims d = x.dims();
    Dims perm(d.size());
    for (size_t i = 0; i < d.size(); ++i)
      perm[i] = static_cast<int64_t>(i);
    std::swap(perm[d.size() - 1], perm[d.size() - 2]);
    std::swap(d[d.size() - 1], d[d.size() - 2]);
    HostTensor t(x.dtype(), d);
    ZEROC_RT_EXPECT_OK(zeroc_rt_k_transpose(x.desc(), perm.data(), t.desc()));
    return t;
  };
  const std::pair<Dims, Dims> shapes[] = {{{3, 4}, {4, 5}},
                                          {{2, 1, 3, 4}, {5, 4, 2}},
                                          {{2, 3, 4}, {4, 2}},
                                          {{3, 2}, {2, 2, 4}}};
  for (const auto &[aDims, bDims] : shapes) {
    HostTensor a = randomTensor(dt, aDims, rng), b = randomTensor(dt, bDims, rng);
    Dims outDims = matmulDims(aDims, bDims);
    HostTensor g = randomTensor(dt, outDims, rng);
    HostTensor bT = transposeLast(b), aT = transposeLast(a);
    HostTensor gaFull(dt, matmulDims(outDims, bT.dims()));
    HostTensor gbFull(dt, matmulDims(aT.dims(), outDims));
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_matmul(g.desc(), bT.desc(), gaFull.desc()));
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_matmul(aT.desc(), g.desc(), gbFull.desc()));
    HostTensor ga(dt, aDims), gb(dt, bDims);
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_sum_to(gaFull.desc(), ga.desc()));
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_sum_to(gbFull.desc(), gb.desc()));
    auto fa = [&, aDims = aDims](const std::vector<double> &p) {
      HostTensor ap(dt, aDims), out(dt, outDims);
      ap.setValues(p);
      ZEROC_RT_EXPECT_OK(zeroc_rt_k_matmul(ap.desc(), b.desc(), out.desc()));
      return out.values();
    };
    auto fb = [&, bDims = bDims](const std::vector<double> &p) {
      HostTensor bp(dt, bDims), out(dt, outDims);
      bp.setValues(p);
      ZEROC_RT_EXPECT_OK(zeroc_rt_k_matmul(a.desc(), bp.desc(), out.desc()));
      return out.values();
    };
    std::string what = dimsName(aDims) + " @ " + dimsName(bDims);
    expectGradient(fa, a.values(), g.values(), ga.values(), "dA " + what);
    expectGradient(fb, b.values(), g.values(), gb.values(), "dB " + what);
  }
}

//===----------------------------------------------------------------------===//
// Gemm
//===----------------------------------------------------------------------===//

template <typename T> class KernelsGemm : public ::testing::Test {};
TYPED_TEST_SUITE(KernelsGemm, FloatTypes, FloatTypeNames);

TYPED_TEST(KernelsGemm, MatchesNaiveLoopForEveryTransposeAndBias) {
  constexpr zeroc_rt_dtype_t dt = dtypeOf<TypeParam>();
  std::mt19937_64 rng(3);
  const int64_t m = 3, n = 4;
  const Dims biasShapes[] = {{-1}, {n}, {m, 1}, {}, {m, n}, {1, n}, {1}};
  for (int64_t k : {int64_t(5), int64_t(0)})
    for (int ta : {0, 1})
      for (int tb : {0, 1})
        for (const Dims &cDims : biasShapes)
          for (double beta : {0.0, 0.5}) {
            bool hasC = cDims.empty() || cDims[0] >= 0;
            HostTensor a = randomTensor(dt, ta ? Dims{k, m} : Dims{m, k}, rng);
            HostTensor b = randomTensor(dt, tb ? Dims{n, k} : Dims{k, n}, rng);
            HostTensor c =
                hasC ? randomTensor(dt, cDims, rng) : HostTensor(dt, {});
            HostTensor out(dt, {m, n});
            out.fill(NAN);
            double alpha = 1.5;
            ZEROC_RT_ASSERT_OK(zeroc_rt_k_gemm(a.desc(), b.desc(),
                                               hasC ? c.desc() : nullptr, alpha,
                                               beta, ta, tb, out.desc()));
            std::vector<double> want(m * n);
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j) {
                double acc = 0.0;
                for (int64_t p = 0; p < k; ++p)
                  acc += a.get(ta ? p * m + i : i * k + p) *
                         b.get(tb ? j * k + p : p * n + j);
                double bias =
                    hasC && beta != 0.0
                        ? beta * c.get(broadcastSource({i, j}, cDims))
                        : 0.0;
                want[i * n + j] = alpha * acc + bias;
              }
            expectClose(out, want, 4 * tolOf<TypeParam>(),
                        "ta " + std::to_string(ta) + " tb " +
                            std::to_string(tb) + " k " + std::to_string(k) +
                            " c " + dimsName(cDims));
          }
}

TEST(KernelsGemm, BetaZeroIgnoresNaNInC) {
  HostTensor a(ZEROC_RT_DTYPE_F64, {1, 2}), b(ZEROC_RT_DTYPE_F64, {2, 1}),
      c(ZEROC_RT_DTYPE_F64, {1, 1}), out(ZEROC_RT_DTYPE_F64, {1, 1});
  a.setValues({1, 2});
  b.setValues({3, 4});
  c.setValues({NAN});
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_gemm(a.desc(), b.desc(), c.desc(), 2.0, 0.0, 0,
                                     0, out.desc()));
  EXPECT_EQ(out.get(0), 22.0);
}

TEST(KernelsGemm, RejectsBadShapes) {
  HostTensor a(ZEROC_RT_DTYPE_F32, {2, 3}), b(ZEROC_RT_DTYPE_F32, {3, 4}),
      out(ZEROC_RT_DTYPE_F32, {2, 4}), c(ZEROC_RT_DTYPE_F32, {3});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_gemm(a.desc(), b.desc(), nullptr, 1, 0, 1, 0,
                                      out.desc()),
                      ZEROC_RT_SHAPE_MISMATCH, "zeroc_rt_k_gemm", "K=2");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_gemm(a.desc(), b.desc(), c.desc(), 1, 1, 0, 0,
                                      out.desc()),
                      ZEROC_RT_SHAPE_MISMATCH, "zeroc_rt_k_gemm",
                      "c f32[3] does not broadcast to out f32[2,4]");
  HostTensor wrong(ZEROC_RT_DTYPE_F32, {4, 2});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_gemm(a.desc(), b.desc(), nullptr, 1, 0, 0, 0,
                                      wrong.desc()),
                      ZEROC_RT_SHAPE_MISMATCH, "zeroc_rt_k_gemm",
                      "out is f32[4,2]");
  HostTensor v(ZEROC_RT_DTYPE_F32, {3});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_gemm(a.desc(), v.desc(), nullptr, 1, 0, 0, 0,
                                      out.desc()),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_gemm", "rank 2");
}

/// out = alpha * op(a) op(b) + beta * c:
///   d op(a) = alpha * G op(b)^T,  d op(b) = alpha * op(a)^T G,
///   dc = beta * sum_to(G, c).
TEST(KernelsGemm, AdjointIdentitiesByFiniteDifferencesF64) {
  std::mt19937_64 rng(4);
  const auto dt = ZEROC_RT_DTYPE_F64;
  const int64_t m = 3, n = 2, k = 4;
  const double alpha = 0.7, beta = -1.3;
  for (int ta : {0, 1})
    for (int tb : {0, 1}) {
      Dims aDims = ta ? Dims{k, m} : Dims{m, k};
      Dims bDims = tb ? Dims{n, k} : Dims{k, n};
      Dims cDims = {n};
      HostTensor a = randomTensor(dt, aDims, rng), b = randomTensor(dt, bDims, rng),
                 c = randomTensor(dt, cDims, rng), g = randomTensor(dt, {m, n}, rng);
      // d op(a) (m x k) = alpha * G (m x n) * op(b)^T: gemm(G, b, trans_b=!tb).
      HostTensor dOpA(dt, {m, k}), dOpB(dt, {k, n});
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_gemm(g.desc(), b.desc(), nullptr, alpha, 0,
                                         0, !tb, dOpA.desc()));
      // d op(b) (k x n) = alpha * op(a)^T * G: gemm(a, G, trans_a=!ta).
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_gemm(a.desc(), g.desc(), nullptr, alpha, 0,
                                         !ta, 0, dOpB.desc()));
      HostTensor da(dt, aDims), db(dt, bDims), dc(dt, cDims);
      const int64_t swap[2] = {1, 0};
      if (ta)
        ZEROC_RT_ASSERT_OK(zeroc_rt_k_transpose(dOpA.desc(), swap, da.desc()));
      else
        ZEROC_RT_ASSERT_OK(zeroc_rt_k_copy(dOpA.desc(), da.desc()));
      if (tb)
        ZEROC_RT_ASSERT_OK(zeroc_rt_k_transpose(dOpB.desc(), swap, db.desc()));
      else
        ZEROC_RT_ASSERT_OK(zeroc_rt_k_copy(dOpB.desc(), db.desc()));
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_sum_to(g.desc(), dc.desc()));
      std::vector<double> dcv = dc.values();
      for (double &x : dcv)
        x *= beta;
      auto forward = [&](int which) {
        return [&, which](const std::vector<double> &p) {
          HostTensor ap = a, bp = b, cp = c, out(dt, {m, n});
          (which == 0 ? ap : which == 1 ? bp : cp).setValues(p);
          ZEROC_RT_EXPECT_OK(zeroc_rt_k_gemm(ap.desc(), bp.desc(), cp.desc(),
                                             alpha, beta, ta, tb, out.desc()));
          return out.values();
        };
      };
      std::string what = "ta " + std::to_string(ta) + " tb " + std::to_string(tb);
      expectGradient(forward(0), a.values(), g.values(), da.values(),
                     "gemm dA " + what);
      expectGradient(forward(1), b.values(), g.values(), db.values(),
                     "gemm dB " + what);
      expectGradient(forward(2), c.values(), g.values(), dcv, "gemm dC " + what);
    }
}

} // namespace
