//===- kernels_reduce_test.cc - reduce, softmax, layer_norm -----*- C++ -*-===//

#include "kernels_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace zeroc_rt::test;

namespace {

//===----------------------------------------------------------------------===//
// Reduce
//===----------------------------------------------------------------------===//

const Dims kReduceShapes[] = {{}, {5}, {2, 3, 4}, {2, 0, 3}, {1, 3, 1, 2}};

template <typename T> class KernelsReduce : public ::testing::Test {};
TYPED_TEST_SUITE(KernelsReduce, FloatTypes, FloatTypeNames);

TYPED_TEST(KernelsReduce, EveryMaskBothOutputFormsMatchReference) {
  constexpr zeroc_rt_dtype_t dt = dtypeOf<TypeParam>();
  std::mt19937_64 rng(1);
  for (zeroc_rt_tensor_reduce_op_t op :
       {ZEROC_RT_REDUCE_OP_SUM, ZEROC_RT_REDUCE_OP_MEAN, ZEROC_RT_REDUCE_OP_MAX})
    for (const Dims &dims : kReduceShapes)
      for (uint32_t mask = 0; mask < (1u << dims.size()); ++mask)
        for (bool keepdims : {false, true}) {
          HostTensor x = randomTensor(dt, dims, rng, -3, 3);
          Dims outDims;
          for (size_t d = 0; d < dims.size(); ++d)
            if (!((mask >> d) & 1u))
              outDims.push_back(dims[d]);
            else if (keepdims)
              outDims.push_back(1);
          HostTensor y(dt, outDims);
          ZEROC_RT_ASSERT_OK(zeroc_rt_k_reduce(op, x.desc(), mask, y.desc()));
          // Reference: accumulate each input element into its kept index.
          Dims keepDims;
          for (size_t d = 0; d < dims.size(); ++d)
            keepDims.push_back((mask >> d) & 1u ? 1 : dims[d]);
          int64_t count = 1;
          for (size_t d = 0; d < dims.size(); ++d)
            if ((mask >> d) & 1u)
              count *= dims[d];
          std::vector<double> want(
              y.size(), op == ZEROC_RT_REDUCE_OP_MAX ? -INFINITY : 0.0);
          for (int64_t i = 0; i < x.size(); ++i) {
            Dims index = unravel(i, dims);
            for (size_t d = 0; d < dims.size(); ++d)
              if ((mask >> d) & 1u)
                index[d] = 0;
            double &slot = want[ravel(index, keepDims)];
            slot = op == ZEROC_RT_REDUCE_OP_MAX ? std::max(slot, x.get(i))
                                                : slot + x.get(i);
          }
          if (op == ZEROC_RT_REDUCE_OP_MEAN)
            for (double &v : want)
              v /= static_cast<double>(count);
          expectClose(y, want, tolOf<TypeParam>(),
                      "op " + std::to_string(op) + " " + dimsName(dims) +
                          " mask " + std::to_string(mask) +
                          (keepdims ? " keepdims" : ""));
        }
}

TEST(KernelsReduce, MaxPropagatesNaNAndEmptyReductions) {
  HostTensor x(ZEROC_RT_DTYPE_F32, {2, 3}), y(ZEROC_RT_DTYPE_F32, {2});
  x.setValues({1, NAN, 3, -1, -2, -3});
  ZEROC_RT_ASSERT_OK(
      zeroc_rt_k_reduce(ZEROC_RT_REDUCE_OP_MAX, x.desc(), 2, y.desc()));
  EXPECT_TRUE(std::isnan(y.get(0)));
  EXPECT_EQ(y.get(1), -1.0);
  HostTensor e(ZEROC_RT_DTYPE_F64, {2, 0}), r(ZEROC_RT_DTYPE_F64, {2});
  ZEROC_RT_ASSERT_OK(
      zeroc_rt_k_reduce(ZEROC_RT_REDUCE_OP_MAX, e.desc(), 2, r.desc()));
  EXPECT_EQ(r.get(0), -INFINITY);
  ZEROC_RT_ASSERT_OK(
      zeroc_rt_k_reduce(ZEROC_RT_REDUCE_OP_SUM, e.desc(), 2, r.desc()));
  EXPECT_EQ(r.get(1), 0.0);
  ZEROC_RT_ASSERT_OK(
      zeroc_rt_k_reduce(ZEROC_RT_REDUCE_OP_MEAN, e.desc(), 2, r.desc()));
  EXPECT_TRUE(std::isnan(r.get(1)));
}

TEST(KernelsReduce, SumsF32InDouble) {
  // 2^24 + 1 + 1 ... is not representable step by step in float.
  const int64_t n = 1 << 20;
  HostTensor x(ZEROC_RT_DTYPE_F32, {n}), y(ZEROC_RT_DTYPE_F32, {});
  x.fill(1.0);
  x.set(0, 16777216.0); // 2^24: float accumulation would stall here
  ZEROC_RT_ASSERT_OK(
      zeroc_rt_k_reduce(ZEROC_RT_REDUCE_OP_SUM, x.desc(), 1, y.desc()));
  EXPECT_EQ(y.get(0), static_cast<float>(16777216.0 + double(n - 1)));
}

TEST(KernelsReduce, RejectsBadMasksAndShapes) {
  HostTensor x(ZEROC_RT_DTYPE_F32, {2, 3}), y(ZEROC_RT_DTYPE_F32, {3});
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_reduce(ZEROC_RT_REDUCE_OP_SUM, x.desc(), 4, y.desc()),
      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_reduce", "axes_mask 0x4");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_reduce(ZEROC_RT_REDUCE_OP_SUM, x.desc(), 2, y.desc()),
      ZEROC_RT_SHAPE_MISMATCH, "zeroc_rt_k_reduce",
      "out is f32[3] but in without the reduced dims is [2]");
  HostTensor k(ZEROC_RT_DTYPE_F32, {2, 3});
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_reduce(ZEROC_RT_REDUCE_OP_SUM, x.desc(), 2, k.desc()),
      ZEROC_RT_SHAPE_MISMATCH, "zeroc_rt_k_reduce", "[2,1]");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_reduce(static_cast<zeroc_rt_tensor_reduce_op_t>(3),
                                        x.desc(), 1, y.desc()),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_reduce",
                      "invalid reduce op 3");
}

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

/// Naive (log)softmax along `axis` in double.
std::vector<double> refSoftmax(const HostTensor &x, int axis, bool log) {
  const Dims &dims = x.dims();
  std::vector<double> out(x.size());
  for (int64_t i = 0; i < x.size(); ++i) {
    Dims index = unravel(i, dims);
    double max = -INFINITY;
    for (int64_t j = 0; j < dims[axis]; ++j) {
      index[axis] = j;
      max = std::max(max, x.get(ravel(index, dims)));
    }
    double sum = 0.0;
    for (int64_t j = 0; j < dims[axis]; ++j) {
      index[axis] = j;
      sum += std::exp(x.get(ravel(index, dims)) - max);
    }
    out[i] = log ? x.get(i) - max - std::log(sum)
                 : std::exp(x.get(i) - max) / sum;
  }
  return out;
}

template <typename T> class KernelsSoftmax : public ::testing::Test {};
TYPED_TEST_SUITE(KernelsSoftmax, FloatTypes, FloatTypeNames);

TYPED_TEST(KernelsSoftmax, MatchesReferenceOnEveryAxis) {
  constexpr zeroc_rt_dtype_t dt = dtypeOf<TypeParam>();
  std::mt19937_64 rng(2);
  for (const Dims &dims : {Dims{5}, Dims{2, 3, 4}, Dims{1, 4}, Dims{3, 0, 2}})
    for (int64_t axis = -int64_t(dims.size()); axis < int64_t(dims.size());
         ++axis)
      for (int log : {0, 1})
        for (double offset : {0.0, 1000.0}) { // large values stay stable
          HostTensor x = randomTensor(dt, dims, rng, -4 + offset, 4 + offset);
          HostTensor y(dt, dims);
          ZEROC_RT_ASSERT_OK(zeroc_rt_k_softmax(x.desc(), axis, log, y.desc()));
          int ax = static_cast<int>(axis < 0 ? axis + dims.size() : axis);
          // log_softmax of large inputs loses F32 relative precision in the
          // input itself; compare with an absolute-ish tolerance.
          expectClose(y, refSoftmax(x, ax, log), 4 * tolOf<TypeParam>(),
                      dimsName(dims) + " axis " + std::to_string(axis) +
                          (log ? " log" : ""));
        }
}

TYPED_TEST(KernelsSoftmax, GradMatchesReference) {
  constexpr zeroc_rt_dtype_t dt = dtypeOf<TypeParam>();
  std::mt19937_64 rng(3);
  for (const Dims &dims : {Dims{5}, Dims{2, 3, 4}})
    for (int64_t axis = 0; axis < int64_t(dims.size()); ++axis)
      for (int log : {0, 1}) {
        HostTensor x = randomTensor(dt, dims, rng, -2, 2);
        HostTensor y(dt, dims), gx(dt, dims);
        HostTensor gy = randomTensor(dt, dims, rng);
        ZEROC_RT_ASSERT_OK(zeroc_rt_k_softmax(x.desc(), axis, log, y.desc()));
        ZEROC_RT_ASSERT_OK(zeroc_rt_k_softmax_grad(y.desc(), gy.desc(), axis,
                                                   log, gx.desc()));
        std::vector<double> want(x.size());
        for (int64_t i = 0; i < x.size(); ++i) {
          Dims index = unravel(i, dims);
          double acc = 0.0;
          for (int64_t j = 0; j < dims[axis]; ++j) {
            index[axis] = j;
            int64_t l = ravel(index, dims);
            acc += log ? gy.get(l) : gy.get(l) * y.get(l);
          }
          want[i] = log ? gy.get(i) - std::exp(y.get(i)) * acc
                        : y.get(i) * (gy.get(i) - acc);
        }
        expectClose(gx, want, 4 * tolOf<TypeParam>(),
                    dimsName(dims) + " axis " + std::to_string(axis));
      }
}

TEST(KernelsSoftmax, GradFiniteDifferencesBothModesF64) {
  std::mt19937_64 rng(4);
  for (const Dims &dims : {Dims{6}, Dims{2, 3, 4}})
    for (int64_t axis = -1; axis < int64_t(dims.size()); ++axis)
      for (int log : {0, 1}) {
        HostTensor x = randomTensor(ZEROC_RT_DTYPE_F64, dims, rng, -2, 2);
        HostTensor w = randomTensor(ZEROC_RT_DTYPE_F64, dims, rng);
        HostTensor y(ZEROC_RT_DTYPE_F64, dims), g(ZEROC_RT_DTYPE_F64, dims);
        ZEROC_RT_ASSERT_OK(zeroc_rt_k_softmax(x.desc(), axis, log, y.desc()));
        ZEROC_RT_ASSERT_OK(
            zeroc_rt_k_softmax_grad(y.desc(), w.desc(), axis, log, g.desc()));
        auto forward = [&](const std::vector<double> &p) {
          HostTensor xp(ZEROC_RT_DTYPE_F64, dims), yp(ZEROC_RT_DTYPE_F64, dims);
          xp.setValues(p);
          ZEROC_RT_EXPECT_OK(zeroc_rt_k_softmax(xp.desc(), axis, log, yp.desc()));
          return yp.values();
        };
        expectGradient(forward, x.values(), w.values(), g.values(),
                       std::string(log ? "log_softmax" : "softmax") + " " +
                           dimsName(dims) + " axis " + std::to_string(axis));
      }
}

TEST(KernelsSoftmax, RejectsBadAxis) {
  HostTensor x(ZEROC_RT_DTYPE_F32, {2, 3}), y(ZEROC_RT_DTYPE_F32, {2, 3});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_softmax(x.desc(), 2, 0, y.desc()),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_softmax",
                      "axis 2 is out of range for rank 2");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_softmax_grad(y.desc(), x.desc(), -3, 0,
                                              y.desc()),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_softmax_grad",
                      "axis -3");
  HostTensor s(ZEROC_RT_DTYPE_F32, {}), t(ZEROC_RT_DTYPE_F32, {});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_softmax(s.desc(), 0, 0, t.desc()),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_softmax",
                      "rank 0");
}

//===----------------------------------------------------------------------===//
// Layer norm
//===----------------------------------------------------------------------===//

struct LnCase {
  Dims dims;
  int64_t axis;
};
const LnCase kLnCases[] = {
    {{2, 3, 4}, 2}, {{2, 3, 4}, 1}, {{2, 3, 4}, -1}, {{5}, 0}, {{4, 1}, 1},
    {{3, 2, 5}, 0}};

/// Reference layer norm (biased variance) in double.
std::vector<double> refLayerNorm(const HostTensor &x, const HostTensor &scale,
                                 const HostTensor *bias, int axis, double eps) {
  int64_t n = numel(Dims(x.dims().begin() + axis, x.dims().end()));
  int64_t rows = x.size() / n;
  std::vector<double> y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < n; ++j)
      mean += x.get(r * n + j) / n;
    for (int64_t j = 0; j < n; ++j)
      var += (x.get(r * n + j) - mean) * (x.get(r * n + j) - mean) / n;
    for (int64_t j = 0; j < n; ++j)
      y[r * n + j] = (x.get(r * n + j) - mean) / std::sqrt(var + eps) *
                         scale.get(j) +
                     (bias ? bias->get(j) : 0.0);
  }
  return y;
}

template <typename T> class KernelsLayerNorm : public ::testing::Test {};
TYPED_TEST_SUITE(KernelsLayerNorm, FloatTypes, FloatTypeNames);

TYPED_TEST(KernelsLayerNorm, MatchesReferenceWithAndWithoutBias) {
  constexpr zeroc_rt_dtype_t dt = dtypeOf<TypeParam>();
  std::mt19937_64 rng(5);
  for (const LnCase &c : kLnCases)
    for (bool withBias : {false, true})
      for (double eps : {1e-5, 0.5}) {
        int axis = static_cast<int>(c.axis < 0 ? c.axis + c.dims.size() : c.axis);
        Dims pDims(c.dims.begin() + axis, c.dims.end());
        HostTensor x = randomTensor(dt, c.dims, rng, -2, 3);
        HostTensor scale = randomTensor(dt, pDims, rng, 0.5, 1.5);
        HostTensor bias = randomTensor(dt, pDims, rng);
        HostTensor y(dt, c.dims);
        ZEROC_RT_ASSERT_OK(zeroc_rt_k_layer_norm(x.desc(), scale.desc(),
                                                 withBias ? bias.desc() : nullptr,
                                                 c.axis, eps, y.desc()));
        expectClose(y, refLayerNorm(x, scale, withBias ? &bias : nullptr, axis, eps),
                    4 * tolOf<TypeParam>(),
                    dimsName(c.dims) + " axis " + std::to_string(c.axis));
      }
}

TYPED_TEST(KernelsLayerNorm, GradMatchesReference) {
  constexpr zeroc_rt_dtype_t dt = dtypeOf<TypeParam>();
  std::mt19937_64 rng(6);
  const double eps = 1e-5;
  for (const LnCase &c : kLnCases) {
    int axis = static_cast<int>(c.axis < 0 ? c.axis + c.dims.size() : c.axis);
    Dims pDims(c.dims.begin() + axis, c.dims.end());
    int64_t n = numel(pDims), rows = numel(c.dims) / n;
    HostTensor x = randomTensor(dt, c.dims, rng, -2, 3);
    HostTensor scale = randomTensor(dt, pDims, rng, 0.5, 1.5);
    HostTensor gy = randomTensor(dt, c.dims, rng);
    HostTensor gx(dt, c.dims), gs(dt, pDims), gb(dt, pDims);
    gs.fill(9);
    gb.fill(9);
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_layer_norm_grad(
        x.desc(), scale.desc(), c.axis, eps, gy.desc(), gx.desc(), gs.desc(),
        gb.desc()));
    // Textbook formulas, in double.
    std::vector<double> wantX(x.size()), wantS(n, 0.0), wantB(n, 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      double mean = 0, var = 0;
      for (int64_t j = 0; j < n; ++j)
        mean += x.get(r * n + j) / n;
      for (int64_t j = 0; j < n; ++j)
        var += std::pow(x.get(r * n + j) - mean, 2) / n;
      double rstd = 1 / std::sqrt(var + eps);
      double meanD = 0, meanDX = 0;
      for (int64_t j = 0; j < n; ++j) {
        double xhat = (x.get(r * n + j) - mean) * rstd;
        double d = gy.get(r * n + j) * scale.get(j);
        meanD += d / n;
        meanDX += d * xhat / n;
        wantS[j] += gy.get(r * n + j) * xhat;
        wantB[j] += gy.get(r * n + j);
      }
      for (int64_t j = 0; j < n; ++j) {
        double xhat = (x.get(r * n + j) - mean) * rstd;
        double d = gy.get(r * n + j) * scale.get(j);
        wantX[r * n + j] = rstd * (d - meanD - xhat * meanDX);
      }
    }
    std::string what = dimsName(c.dims) + " axis " + std::to_string(c.axis);
    // grad_x involves cancellation; scale the F32 tolerance accordingly.
    double tol = std::is_same_v<TypeParam, float> ? 1e-4 : 1e-10;
    expectClose(gx, wantX, tol, "grad_x " + what);
    expectClose(gs, wantS, tol, "grad_scale " + what);
    expectClose(gb, wantB, tol, "grad_bias " + what);
    // grad_bias may be NULL.
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_layer_norm_grad(x.desc(), scale.desc(),
                                                  c.axis, eps, gy.desc(),
                                                  gx.desc(), gs.desc(), nullptr));
  }
}

TEST(KernelsLayerNorm, GradFiniteDifferencesF64) {
  std::mt19937_64 rng(7);
  const auto dt = ZEROC_RT_DTYPE_F64;
  const double eps = 1e-5;
  for (const LnCase &c : kLnCases) {
    int axis = static_cast<int>(c.axis < 0 ? c.axis + c.dims.size() : c.axis);
    Dims pDims(c.dims.begin() + axis, c.dims.end());
    HostTensor x = randomTensor(dt, c.dims, rng, -2, 3);
    HostTensor scale = randomTensor(dt, pDims, rng, 0.5, 1.5);
    HostTensor bias = randomTensor(dt, pDims, rng);
    HostTensor w = randomTensor(dt, c.dims, rng);
    HostTensor gx(dt, c.dims), gs(dt, pDims), gb(dt, pDims);
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_layer_norm_grad(x.desc(), scale.desc(),
                                                  c.axis, eps, w.desc(),
                                                  gx.desc(), gs.desc(),
                                                  gb.desc()));
    auto forward = [&](int which) {
      return [&, which](const std::vector<double> &p) {
        HostTensor xp = x, sp = scale, bp = bias, y(dt, c.dims);
        (which == 0 ? xp : which == 1 ? sp : bp).setValues(p);
        ZEROC_RT_EXPECT_OK(zeroc_rt_k_layer_norm(xp.desc(), sp.desc(),
                                                 bp.desc(), c.axis, eps,
                                                 y.desc()));
        return y.values();
      };
    };
    std::string what = dimsName(c.dims) + " axis " + std::to_string(c.axis);
    expectGradient(forward(0), x.values(), w.values(), gx.values(),
                   "layer_norm dx " + what);
    expectGradient(forward(1), scale.values(), w.values(), gs.values(),
                   "layer_norm dscale " + what);
    expectGradient(forward(2), bias.values(), w.values(), gb.values(),
                   "layer_norm dbias " + what);
  }
}

TEST(KernelsLayerNorm, RejectsBadParameters) {
  HostTensor x(ZEROC_RT_DTYPE_F32, {2, 3}), y(ZEROC_RT_DTYPE_F32, {2, 3}),
      s(ZEROC_RT_DTYPE_F32, {3}), wrong(ZEROC_RT_DTYPE_F32, {2});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_layer_norm(x.desc(), wrong.desc(), nullptr, 1,
                                            1e-5, y.desc()),
                      ZEROC_RT_SHAPE_MISMATCH, "zeroc_rt_k_layer_norm",
                      "scale is f32[2] but the normalized dims");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_layer_norm(x.desc(), s.desc(), wrong.desc(), 1,
                                            1e-5, y.desc()),
                      ZEROC_RT_SHAPE_MISMATCH, "zeroc_rt_k_layer_norm",
                      "bias is f32[2]");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_layer_norm(x.desc(), s.desc(), nullptr, 1, -1.0, y.desc()),
      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_layer_norm", "epsilon");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_layer_norm(x.desc(), s.desc(), nullptr, 2, 1e-5, y.desc()),
      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_layer_norm", "axis 2");
  HostTensor gx(ZEROC_RT_DTYPE_F32, {2, 3}), gs(ZEROC_RT_DTYPE_F32, {3});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_layer_norm_grad(x.desc(), s.desc(), 1, 1e-5,
                                                 y.desc(), gx.desc(), nullptr,
                                                 nullptr),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_layer_norm_grad",
                      "grad_scale is NULL");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_layer_norm_grad(x.desc(), s.desc(), 1, 1e-5,
                                                 y.desc(), gx.desc(), s.desc(),
                                                 nullptr),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_layer_norm_grad",
                      "grad_scale overlaps scale");
}

} // namespace
