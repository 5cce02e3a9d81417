//===- kernels_elementwise_test.cc - unary, binary, where, cast, dropout --===//

#include "kernels_test_util.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <climits>
#include <cmath>
#include <limits>

using namespace zeroc_rt::test;

namespace {

const zeroc_rt_unary_op_t kUnaryOps[] = {
    ZEROC_RT_UNARY_NEG,  ZEROC_RT_UNARY_SQRT,    ZEROC_RT_UNARY_RECIPROCAL,
    ZEROC_RT_UNARY_RELU, ZEROC_RT_UNARY_TANH,    ZEROC_RT_UNARY_SIGMOID,
    ZEROC_RT_UNARY_ERF,  ZEROC_RT_UNARY_EXP,     ZEROC_RT_UNARY_LOG};

const char *unaryName(zeroc_rt_unary_op_t op) {
  const char *names[] = {"neg",     "sqrt", "reciprocal", "relu", "tanh",
                         "sigmoid", "erf",  "exp",        "log"};
  return names[op];
}

double refUnary(zeroc_rt_unary_op_t op, double x) {
  switch (op) {
  case ZEROC_RT_UNARY_NEG:
    return -x;
  case ZEROC_RT_UNARY_SQRT:
    return std::sqrt(x);
  case ZEROC_RT_UNARY_RECIPROCAL:
    return 1.0 / x;
  case ZEROC_RT_UNARY_RELU:
    return x > 0 ? x : 0.0;
  case ZEROC_RT_UNARY_TANH:
    return std::tanh(x);
  case ZEROC_RT_UNARY_SIGMOID:
    return 1.0 / (1.0 + std::exp(-x));
  case ZEROC_RT_UNARY_ERF:
    return std::erf(x);
  case ZEROC_RT_UNARY_EXP:
    return std::exp(x);
  case ZEROC_RT_UNARY_LOG:
    return std::log(x);
  default: // the ops of kUnaryOps only; the rest have their own tests
    break;
  }
  return NAN;
}

double refUnaryDerivative(zeroc_rt_unary_op_t op, double x) {
  switch (op) {
  case ZEROC_RT_UNARY_NEG:
    return -1.0;
  case ZEROC_RT_UNARY_SQRT:
    return 0.5 / std::sqrt(x);
  case ZEROC_RT_UNARY_RECIPROCAL:
    return -1.0 / (x * x);
  case ZEROC_RT_UNARY_RELU:
    return x > 0 ? 1.0 : 0.0;
  case ZEROC_RT_UNARY_TANH:
    return 1.0 - std::tanh(x) * std::tanh(x);
  case ZEROC_RT_UNARY_SIGMOID: {
    double s = 1.0 / (1.0 + std::exp(-x));
    return s * (1.0 - s);
  }
  case ZEROC_RT_UNARY_ERF:
    return 2.0 / std::sqrt(M_PI) * std::exp(-x * x);
  case ZEROC_RT_UNARY_EXP:
    return std::exp(x);
  case ZEROC_RT_UNARY_LOG:
    return 1.0 / x;
  default: // the ops of kUnaryOps only; the rest have their own tests
    break;
  }
  return NAN;
}

/// Inputs inside the op's domain and away from kinks and poles.
HostTensor unaryInput(zeroc_rt_unary_op_t op, zeroc_rt_dtype_t dtype,
                      const Dims &dims, std::mt19937_64 &rng) {
  switch (op) {
  case ZEROC_RT_UNARY_SQRT:
  case ZEROC_RT_UNARY_LOG:
    return randomTensor(dtype, dims, rng, 0.2, 2.0);
  case ZEROC_RT_UNARY_RECIPROCAL:
    return randomAwayFromZero(dtype, dims, rng, 0.3, 2.0);
  case ZEROC_RT_UNARY_RELU:
    return randomAwayFromZero(dtype, dims, rng, 0.05, 2.0);
  default:
    return randomTensor(dtype, dims, rng, -2.0, 2.0);
  }
}

const Dims kUnaryShapes[] = {{}, {7}, {2, 3, 4}, {0, 3}, {1, 1, 5}};

template <typename T> class KernelsUnary : public ::testing::Test {};
TYPED_TEST_SUITE(KernelsUnary, FloatTypes, FloatTypeNames);

TYPED_TEST(KernelsUnary, MatchesReference) {
  constexpr zeroc_rt_dtype_t dt = dtypeOf<TypeParam>();
  std::mt19937_64 rng(11);
  for (zeroc_rt_unary_op_t op : kUnaryOps)
    for (const Dims &dims : kUnaryShapes) {
      HostTensor x = unaryInput(op, dt, dims, rng);
      HostTensor y(dt, dims);
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_unary(op, x.desc(), y.desc()));
      std::vector<double> want;
      for (double v : x.values())
        want.push_back(refUnary(op, v));
      expectClose(y, want, tolOf<TypeParam>(),
                  std::string(unaryName(op)) + dimsName(dims));
    }
}

TYPED_TEST(KernelsUnary, GradMatchesReference) {
  constexpr zeroc_rt_dtype_t dt = dtypeOf<TypeParam>();
  std::mt19937_64 rng(12);
  for (zeroc_rt_unary_op_t op : kUnaryOps)
    for (const Dims &dims : kUnaryShapes) {
      HostTensor x = unaryInput(op, dt, dims, rng);
      HostTensor y(dt, dims), gx(dt, dims);
      HostTensor gy = randomTensor(dt, dims, rng);
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_unary(op, x.desc(), y.desc()));
      ZEROC_RT_ASSERT_OK(
          zeroc_rt_k_unary_grad(op, x.desc(), y.desc(), gy.desc(), gx.desc()));
      std::vector<double> want;
      for (int64_t i = 0; i < x.size(); ++i)
        want.push_back(gy.get(i) * refUnaryDerivative(op, x.get(i)));
      expectClose(gx, want, 4 * tolOf<TypeParam>(),
                  std::string(unaryName(op)) + "' " + dimsName(dims));
    }
}

TEST(KernelsUnaryGrad, FiniteDifferencesF64) {
  std::mt19937_64 rng(13);
  for (zeroc_rt_unary_op_t op : kUnaryOps) {
    Dims dims = {3, 4};
    HostTensor x = unaryInput(op, ZEROC_RT_DTYPE_F64, dims, rng);
    HostTensor y(ZEROC_RT_DTYPE_F64, dims), gx(ZEROC_RT_DTYPE_F64, dims);
    HostTensor w = randomTensor(ZEROC_RT_DTYPE_F64, dims, rng);
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_unary(op, x.desc(), y.desc()));
    ZEROC_RT_ASSERT_OK(
        zeroc_rt_k_unary_grad(op, x.desc(), y.desc(), w.desc(), gx.desc()));
    auto forward = [&](const std::vector<double> &point) {
      HostTensor xp(ZEROC_RT_DTYPE_F64, dims), yp(ZEROC_RT_DTYPE_F64, dims);
      xp.setValues(point);
      ZEROC_RT_EXPECT_OK(zeroc_rt_k_unary(op, xp.desc(), yp.desc()));
      return yp.values();
    };
    expectGradient(forward, x.values(), w.values(), gx.values(),
                   std::string("unary_grad ") + unaryName(op));
  }
}

TEST(KernelsUnaryGrad, UnusedForwardOperandMayBeNull) {
  std::mt19937_64 rng(14);
  Dims dims = {5};
  for (zeroc_rt_unary_op_t op : kUnaryOps) {
    HostTensor x = unaryInput(op, ZEROC_RT_DTYPE_F64, dims, rng);
    HostTensor y(ZEROC_RT_DTYPE_F64, dims), both(ZEROC_RT_DTYPE_F64, dims),
        one(ZEROC_RT_DTYPE_F64, dims);
    HostTensor gy = randomTensor(ZEROC_RT_DTYPE_F64, dims, rng);
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_unary(op, x.desc(), y.desc()));
    ZEROC_RT_ASSERT_OK(
        zeroc_rt_k_unary_grad(op, x.desc(), y.desc(), gy.desc(), both.desc()));
    bool readsX = op == ZEROC_RT_UNARY_RELU || op == ZEROC_RT_UNARY_ERF ||
                  op == ZEROC_RT_UNARY_LOG;
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_unary_grad(op, readsX ? x.desc() : nullptr,
                                             readsX ? nullptr : y.desc(),
                                             gy.desc(), one.desc()));
    EXPECT_EQ(one.values(), both.values()) << unaryName(op);
    if (op != ZEROC_RT_UNARY_NEG)
      EXPECT_KERNEL_ERROR(
          zeroc_rt_k_unary_grad(op, readsX ? nullptr : x.desc(),
                                readsX ? y.desc() : nullptr, gy.desc(),
                                one.desc()),
          ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_unary_grad", "is NULL");
  }
}

TEST(KernelsUnary, ReluPropagatesNaN) {
  HostTensor x(ZEROC_RT_DTYPE_F32, {3}), y(ZEROC_RT_DTYPE_F32, {3});
  x.setValues({NAN, -1.0, 2.0});
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_unary(ZEROC_RT_UNARY_RELU, x.desc(), y.desc()));
  EXPECT_TRUE(std::isnan(y.get(0)));
  EXPECT_EQ(y.get(1), 0.0);
  EXPECT_EQ(y.get(2), 2.0);
}

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

const zeroc_rt_binary_op_t kFloatBinaryOps[] = {
    ZEROC_RT_BINARY_ADD, ZEROC_RT_BINARY_SUB, ZEROC_RT_BINARY_MUL,
    ZEROC_RT_BINARY_DIV, ZEROC_RT_BINARY_POW};

double refBinary(zeroc_rt_binary_op_t op, double a, double b) {
  switch (op) {
  case ZEROC_RT_BINARY_ADD:
    return a + b;
  case ZEROC_RT_BINARY_SUB:
    return a - b;
  case ZEROC_RT_BINARY_MUL:
    return a * b;
  case ZEROC_RT_BINARY_DIV:
    return a / b;
  case ZEROC_RT_BINARY_POW:
    return std::pow(a, b);
  case ZEROC_RT_BINARY_EQUAL:
    return a == b;
  default: // the comparisons, logic ops, max and min have their own tests
    break;
  }
  return NAN;
}

const std::pair<Dims, Dims> kBroadcastPairs[] = {
    {{2, 3}, {2, 3}},       {{2, 3}, {3}},       {{2, 1, 4}, {3, 1}},
    {{}, {2, 2}},           {{1}, {}},           {{}, {}},
    {{0, 3}, {3}},          {{4, 1, 1, 2}, {1, 5, 1}},
    {{3, 1}, {1, 0}},       {{1, 2, 3, 1, 2, 1, 2, 1}, {2, 1, 2, 1}}};

template <typename T> class KernelsBinary : public ::testing::Test {};
TYPED_TEST_SUITE(KernelsBinary, FloatTypes, FloatTypeNames);

// A one-element exponent of 2 or 3 is a product, as in PyTorch's
// pow_tensor_scalar: f32 x * x * x, bit for bit (std::pow rounds once, the
// product twice); other exponents go through std::pow.
TEST(KernelsBinaryPow, SmallIntegerExponentsAreProducts) {
  std::mt19937_64 rng(5);
  HostTensor a = randomTensor(ZEROC_RT_DTYPE_F32, {257}, rng, -3.0, 3.0);
  for (double e : {2.0, 3.0, 2.5}) {
    HostTensor b(ZEROC_RT_DTYPE_F32, {});
    b.set(0, e);
    HostTensor out(ZEROC_RT_DTYPE_F32, {257});
    ZEROC_RT_ASSERT_OK(
        zeroc_rt_k_binary(ZEROC_RT_BINARY_POW, a.desc(), b.desc(), out.desc()));
    const float *x = static_cast<const float *>(a.desc()->data);
    const float *y = static_cast<const float *>(out.desc()->data);
    for (int64_t i = 0; i < 257; ++i) {
      float want = e == 2.0   ? x[i] * x[i]
                   : e == 3.0 ? x[i] * x[i] * x[i]
                              : std::pow(x[i], 2.5f);
      if (e == 2.5 && x[i] < 0)
        EXPECT_TRUE(std::isnan(y[i])) << i;
      else
        EXPECT_EQ(y[i], want) << "exponent " << e << " element " << i;
    }
  }
}

TYPED_TEST(KernelsBinary, BroadcastingMatchesReference) {
  constexpr zeroc_rt_dtype_t dt = dtypeOf<TypeParam>();
  std::mt19937_64 rng(21);
  for (zeroc_rt_binary_op_t op : kFloatBinaryOps)
    for (const auto &[aDims, bDims] : kBroadcastPairs) {
      bool pow = op == ZEROC_RT_BINARY_POW;
      HostTensor a = pow ? randomTensor(dt, aDims, rng, 0.5, 2.0)
                         : randomTensor(dt, aDims, rng);
      HostTensor b = op == ZEROC_RT_BINARY_DIV
                         ? randomAwayFromZero(dt, bDims, rng, 0.5, 2.0)
                         : randomTensor(dt, bDims, rng, -2.0, 2.0);
      Dims outDims = broadcastDims(aDims, bDims);
      HostTensor out(dt, outDims);
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_binary(op, a.desc(), b.desc(), out.desc()));
      std::vector<double> want(out.size());
      for (int64_t i = 0; i < out.size(); ++i) {
        Dims index = unravel(i, outDims);
        want[i] = refBinary(op, a.get(broadcastSource(index, aDims)),
                            b.get(broadcastSource(index, bDims)));
      }
      expectClose(out, want, tolOf<TypeParam>(),
                  "op " + std::to_string(op) + " " + dimsName(aDims) + " " +
                      dimsName(bDims));
    }
}

TEST(KernelsBinary, IntegerArithmeticWrapsAndTruncates) {
  auto run = [](zeroc_rt_binary_op_t op, zeroc_rt_dtype_t dt,
                std::vector<double> a, std::vector<double> b) {
    HostTensor ta(dt, {static_cast<int64_t>(a.size())}),
        tb(dt, {static_cast<int64_t>(b.size())}),
        out(dt, {static_cast<int64_t>(a.size())});
    ta.setValues(a);
    tb.setValues(b);
    ZEROC_RT_EXPECT_OK(zeroc_rt_k_binary(op, ta.desc(), tb.desc(), out.desc()));
    return out;
  };
  HostTensor div = run(ZEROC_RT_BINARY_DIV, ZEROC_RT_DTYPE_I64,
                       {-7, 7, 7, -7, 0}, {2, -2, 2, -2, 5});
  EXPECT_EQ(div.values(), (std::vector<double>{-3, -3, 3, 3, 0}));

  HostTensor i32(ZEROC_RT_DTYPE_I32, {3}), one(ZEROC_RT_DTYPE_I32, {3}),
      sum(ZEROC_RT_DTYPE_I32, {3});
  i32.as<int32_t>()[0] = INT32_MAX;
  i32.as<int32_t>()[1] = INT32_MIN;
  i32.as<int32_t>()[2] = INT32_MIN;
  one.as<int32_t>()[0] = 1;
  one.as<int32_t>()[1] = -1;
  one.as<int32_t>()[2] = 1;
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_binary(ZEROC_RT_BINARY_ADD, i32.desc(),
                                       one.desc(), sum.desc()));
  EXPECT_EQ(sum.as<int32_t>()[0], INT32_MIN);
  EXPECT_EQ(sum.as<int32_t>()[1], INT32_MAX);
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_binary(ZEROC_RT_BINARY_DIV, i32.desc(),
                                       one.desc(), sum.desc()));
  EXPECT_EQ(sum.as<int32_t>()[1], INT32_MIN); // MIN / -1 wraps
  EXPECT_EQ(sum.as<int32_t>()[2], INT32_MIN);
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_binary(ZEROC_RT_BINARY_MUL, i32.desc(),
                                       one.desc(), sum.desc()));
  EXPECT_EQ(sum.as<int32_t>()[1], INT32_MIN); // -MIN wraps

  HostTensor u8 = run(ZEROC_RT_BINARY_ADD, ZEROC_RT_DTYPE_U8, {200, 5},
                      {100, 250});
  EXPECT_EQ(u8.values(), (std::vector<double>{44, 255}));
  HostTensor u8sub =
      run(ZEROC_RT_BINARY_SUB, ZEROC_RT_DTYPE_U8, {5, 200}, {6, 100});
  EXPECT_EQ(u8sub.values(), (std::vector<double>{255, 100}));
  HostTensor u8mul =
      run(ZEROC_RT_BINARY_MUL, ZEROC_RT_DTYPE_U8, {16, 3}, {16, 5});
  EXPECT_EQ(u8mul.values(), (std::vector<double>{0, 15}));

  HostTensor pow = run(ZEROC_RT_BINARY_POW, ZEROC_RT_DTYPE_I64,
                       {3, -2, 5, 0, 2, -1}, {4, 3, 0, 0, 62, 7});
  EXPECT_EQ(pow.values(),
            (std::vector<double>{81, -8, 1, 1, std::ldexp(1.0, 62), -1}));
  HostTensor pow32 =
      run(ZEROC_RT_BINARY_POW, ZEROC_RT_DTYPE_I32, {2, 3}, {31, 2});
  EXPECT_EQ(pow32.as<int32_t>()[0], INT32_MIN);
  EXPECT_EQ(pow32.as<int32_t>()[1], 9);
}

TEST(KernelsBinary, IntegerDivisionByZeroAndNegativePowFail) {
  HostTensor a(ZEROC_RT_DTYPE_I64, {2, 2}), b(ZEROC_RT_DTYPE_I64, {2}),
      out(ZEROC_RT_DTYPE_I64, {2, 2});
  a.setValues({1, 2, 3, 4});
  b.setValues({1, 0});
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_binary(ZEROC_RT_BINARY_DIV, a.desc(), b.desc(), out.desc()),
      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_binary", "division by zero");
  b.setValues({2, -1});
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_binary(ZEROC_RT_BINARY_POW, a.desc(), b.desc(), out.desc()),
      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_binary", "negative exponent -1");
  // Float division by zero is IEEE.
  HostTensor fa(ZEROC_RT_DTYPE_F32, {2}), fb(ZEROC_RT_DTYPE_F32, {}),
      fo(ZEROC_RT_DTYPE_F32, {2});
  fa.setValues({1, 0});
  fb.setValues({0});
  ZEROC_RT_ASSERT_OK(
      zeroc_rt_k_binary(ZEROC_RT_BINARY_DIV, fa.desc(), fb.desc(), fo.desc()));
  EXPECT_TRUE(std::isinf(fo.get(0)));
  EXPECT_TRUE(std::isnan(fo.get(1)));
}

TEST(KernelsBinary, EqualForEveryDtype) {
  std::mt19937_64 rng(22);
  for (zeroc_rt_dtype_t dt : {ZEROC_RT_DTYPE_F32, ZEROC_RT_DTYPE_F64,
                              ZEROC_RT_DTYPE_I64, ZEROC_RT_DTYPE_I32,
                              ZEROC_RT_DTYPE_U8}) {
    // Small integer values so that equal pairs are frequent.
    HostTensor a = randomTensor(dt, {3, 1, 4}, rng, 0, 2);
    HostTensor b = randomTensor(dt, {2, 1}, rng, 0, 2);
    for (int64_t i = 0; i < a.size(); ++i)
      a.set(i, std::round(a.get(i)));
    for (int64_t i = 0; i < b.size(); ++i)
      b.set(i, std::round(b.get(i)));
    Dims outDims = {3, 2, 4};
    HostTensor out(ZEROC_RT_DTYPE_BOOL, outDims);
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_binary(ZEROC_RT_BINARY_EQUAL, a.desc(),
                                         b.desc(), out.desc()));
    std::vector<double> want(out.size());
    for (int64_t i = 0; i < out.size(); ++i) {
      Dims index = unravel(i, outDims);
      want[i] = a.get(broadcastSource(index, a.dims())) ==
                b.get(broadcastSource(index, b.dims()));
    }
    EXPECT_EQ(out.values(), want) << zeroc_rt_dtype_name(dt);
  }
  // IEEE equality: +0 == -0, NaN != NaN, in every float format.
  HostTensor f(ZEROC_RT_DTYPE_F32, {3}), g(ZEROC_RT_DTYPE_F32, {3}),
      eq(ZEROC_RT_DTYPE_BOOL, {3});
  f.setValues({0.0, NAN, 1.5});
  g.setValues({-0.0, NAN, 1.5});
  ZEROC_RT_ASSERT_OK(
      zeroc_rt_k_binary(ZEROC_RT_BINARY_EQUAL, f.desc(), g.desc(), eq.desc()));
  EXPECT_EQ(eq.values(), (std::vector<double>{1, 0, 1}));
  for (zeroc_rt_dtype_t dt : {ZEROC_RT_DTYPE_F16, ZEROC_RT_DTYPE_BF16}) {
    HostTensor h(dt, {3}), k(dt, {3});
    uint16_t nan = dt == ZEROC_RT_DTYPE_F16 ? 0x7E00 : 0x7FC0;
    uint16_t oneBits = dt == ZEROC_RT_DTYPE_F16 ? 0x3C00 : 0x3F80;
    uint16_t hv[3] = {0x0000, nan, oneBits}, kv[3] = {0x8000, nan, oneBits};
    std::memcpy(h.data(), hv, sizeof hv);
    std::memcpy(k.data(), kv, sizeof kv);
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_binary(ZEROC_RT_BINARY_EQUAL, h.desc(),
                                         k.desc(), eq.desc()));
    EXPECT_EQ(eq.values(), (std::vector<double>{1, 0, 1}))
        << zeroc_rt_dtype_name(dt);
  }
  // BOOL compares truth values: bytes 2 and 1 are both true.
  HostTensor p(ZEROC_RT_DTYPE_BOOL, {3}), q(ZEROC_RT_DTYPE_BOOL, {3});
  p.setValues({2, 0, 1});
  q.setValues({1, 0, 0});
  ZEROC_RT_ASSERT_OK(
      zeroc_rt_k_binary(ZEROC_RT_BINARY_EQUAL, p.desc(), q.desc(), eq.desc()));
  EXPECT_EQ(eq.values(), (std::vector<double>{1, 1, 0}));
}

//===----------------------------------------------------------------------===//
// Where
//===----------------------------------------------------------------------===//

TEST(KernelsWhere, BroadcastsAllThreeOperandsForSeveralDtypes) {
  std::mt19937_64 rng(31);
  struct Case {
    Dims cond, a, b;
  };
  const Case cases[] = {{{3, 1}, {1, 4}, {}},
                        {{2, 3, 4}, {3, 4}, {2, 1, 4}},
                        {{}, {2}, {2}},
                        {{4, 4}, {2, 4, 4}, {}},
                        {{0, 2}, {2}, {1}}};
  for (zeroc_rt_dtype_t dt : {ZEROC_RT_DTYPE_F32, ZEROC_RT_DTYPE_F64,
                              ZEROC_RT_DTYPE_I64, ZEROC_RT_DTYPE_U8,
                              ZEROC_RT_DTYPE_BOOL})
    for (const Case &c : cases) {
      HostTensor cond = randomTensor(ZEROC_RT_DTYPE_BOOL, c.cond, rng, 0, 1);
      HostTensor a = randomTensor(dt, c.a, rng, 0, 1);
      HostTensor b = randomTensor(dt, c.b, rng, 0, 1);
      Dims outDims = broadcastDims(broadcastDims(c.cond, c.a), c.b);
      HostTensor out(dt, outDims);
      ZEROC_RT_ASSERT_OK(
          zeroc_rt_k_where(cond.desc(), a.desc(), b.desc(), out.desc()));
      std::vector<double> want(out.size());
      for (int64_t i = 0; i < out.size(); ++i) {
        Dims index = unravel(i, outDims);
        want[i] = cond.get(broadcastSource(index, c.cond)) != 0
                      ? a.get(broadcastSource(index, c.a))
                      : b.get(broadcastSource(index, c.b));
      }
      EXPECT_EQ(out.values(), want)
          << zeroc_rt_dtype_name(dt) << " " << dimsName(outDims);
    }
}

//===----------------------------------------------------------------------===//
// Cast
//===----------------------------------------------------------------------===//

double decodeHalfRef(uint16_t h) {
  int e = (h >> 10) & 31, m = h & 1023;
  double v = e == 0    ? std::ldexp(m, -24)
             : e == 31 ? (m ? NAN : INFINITY)
                       : std::ldexp(m + 1024, e - 25);
  return (h & 0x8000) ? -v : v;
}

double decodeBFloatRef(uint16_t h) {
  int e = (h >> 7) & 255, m = h & 127;
  double v = e == 0     ? std::ldexp(m, -133)
             : e == 255 ? (m ? NAN : INFINITY)
                        : std::ldexp(m + 128, e - 134);
  return (h & 0x8000) ? -v : v;
}

uint16_t castToSmall(zeroc_rt_dtype_t to, zeroc_rt_dtype_t from, double v) {
  HostTensor in(from, {}), out(to, {});
  in.set(0, v);
  ZEROC_RT_EXPECT_OK(zeroc_rt_k_cast(in.desc(), out.desc()));
  return out.as<uint16_t>()[0];
}

TEST(KernelsCast, HalfAndBFloatKnownValues) {
  auto f16 = [](double v) {
    return castToSmall(ZEROC_RT_DTYPE_F16, ZEROC_RT_DTYPE_F64, v);
  };
  auto bf16 = [](double v) {
    return castToSmall(ZEROC_RT_DTYPE_BF16, ZEROC_RT_DTYPE_F64, v);
  };
  EXPECT_EQ(f16(1.0), 0x3C00);
  EXPECT_EQ(f16(-2.0), 0xC000);
  EXPECT_EQ(f16(0.1), 0x2E66);
  EXPECT_EQ(f16(65504.0), 0x7BFF);
  EXPECT_EQ(f16(65519.99), 0x7BFF);
  EXPECT_EQ(f16(65520.0), 0x7C00); // tie rounds to even = inf
  EXPECT_EQ(f16(-1e9), 0xFC00);
  EXPECT_EQ(f16(std::ldexp(1.0, -24)), 0x0001);
  EXPECT_EQ(f16(std::ldexp(1.0, -25)), 0x0000); // tie to even (0)
  EXPECT_EQ(f16(std::ldexp(3.0, -25)), 0x0002); // 1.5 ulp -> 2
  EXPECT_EQ(f16(std::ldexp(1023.6, -24)), 0x0400); // rounds up to min normal
  EXPECT_EQ(f16(-0.0), 0x8000);
  EXPECT_EQ(f16(NAN) & 0x7C00, 0x7C00);
  EXPECT_NE(f16(NAN) & 0x03FF, 0);
  EXPECT_EQ(f16(1.0 + std::ldexp(1.0, -11)), 0x3C00); // tie to even
  EXPECT_EQ(f16(1.0 + std::ldexp(3.0, -11)), 0x3C02); // tie to even (up)
  EXPECT_EQ(bf16(1.0), 0x3F80);
  EXPECT_EQ(bf16(0.1), 0x3DCD);
  EXPECT_EQ(bf16(-3.0), 0xC040);
  EXPECT_EQ(bf16(FLT_MAX), 0x7F80);
  EXPECT_EQ(bf16(std::ldexp(1.0, -133)), 0x0001);
  EXPECT_EQ(bf16(NAN) & 0x7FC0, 0x7FC0);
  EXPECT_EQ(castToSmall(ZEROC_RT_DTYPE_F16, ZEROC_RT_DTYPE_I64, 2049), 0x6800);
  EXPECT_EQ(castToSmall(ZEROC_RT_DTYPE_F16, ZEROC_RT_DTYPE_I64, 2051), 0x6802);
  EXPECT_EQ(castToSmall(ZEROC_RT_DTYPE_BF16, ZEROC_RT_DTYPE_BOOL, 1), 0x3F80);
}

TEST(KernelsCast, EverySmallFloatRoundTripsThroughF32AndF64) {
  for (zeroc_rt_dtype_t small : {ZEROC_RT_DTYPE_F16, ZEROC_RT_DTYPE_BF16})
    for (zeroc_rt_dtype_t wide : {ZEROC_RT_DTYPE_F32, ZEROC_RT_DTYPE_F64}) {
      HostTensor bits(small, {65536}), mid(wide, {65536}), back(small, {65536});
      for (int i = 0; i < 65536; ++i)
        bits.as<uint16_t>()[i] = static_cast<uint16_t>(i);
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_cast(bits.desc(), mid.desc()));
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_cast(mid.desc(), back.desc()));
      int failures = 0;
      for (int i = 0; i < 65536; ++i) {
        auto h = static_cast<uint16_t>(i);
        double ref = small == ZEROC_RT_DTYPE_F16 ? decodeHalfRef(h)
                                                 : decodeBFloatRef(h);
        double got = mid.get(i);
        bool ok = std::isnan(ref) ? std::isnan(got) : got == ref;
        uint16_t b = back.as<uint16_t>()[i];
        ok = ok && (std::isnan(ref) ? (b & 0x7FFF) > (small == ZEROC_RT_DTYPE_F16
                                                          ? 0x7C00
                                                          : 0x7F80)
                                    : b == h);
        if (!ok && ++failures < 5)
          ADD_FAILURE() << zeroc_rt_dtype_name(small) << " bits 0x" << std::hex
                        << i << " -> " << got << " -> 0x" << b;
      }
    }
}

TEST(KernelsCast, F32ToSmallFloatsRoundToNearestEven) {
  std::mt19937_64 rng(41);
  std::uniform_real_distribution<double> exponent(-30.0, 17.0);
  for (zeroc_rt_dtype_t small : {ZEROC_RT_DTYPE_F16, ZEROC_RT_DTYPE_BF16}) {
    auto decode = small == ZEROC_RT_DTYPE_F16 ? decodeHalfRef : decodeBFloatRef;
    uint16_t inf = small == ZEROC_RT_DTYPE_F16 ? 0x7C00 : 0x7F80;
    const int n = 20000;
    HostTensor x(ZEROC_RT_DTYPE_F32, {n}), h(small, {n});
    for (int i = 0; i < n; ++i)
      x.set(i, std::exp2(exponent(rng)) * (i % 2 ? -1 : 1));
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_cast(x.desc(), h.desc()));
    int failures = 0;
    for (int i = 0; i < n; ++i) {
      double v = std::fabs(x.get(i));
      uint16_t bits = h.as<uint16_t>()[i];
      bool signOk = ((bits & 0x8000) != 0) == (x.get(i) < 0);
      uint16_t mag = bits & 0x7FFF;
      bool ok = signOk && mag <= inf;
      // At or beyond max + ulp/2 the result is inf; below, no neighbour is
      // closer, and ties go to the even encoding.
      double maxFinite = decode(static_cast<uint16_t>(inf - 1));
      double overflow = maxFinite + (maxFinite - decode(inf - 2)) / 2;
      if (v >= overflow)
        ok = ok && mag == inf;
      double dist = std::fabs(decode(mag) - v);
      for (int delta : {-1, 1}) {
        if (v >= overflow)
          break;
        int other = mag + delta;
        if (other < 0 || other > inf)
          continue;
        double d = std::fabs(decode(static_cast<uint16_t>(other)) - v);
        if (d < dist || (d == dist && (mag & 1)))
          ok = false;
      }
      if (!ok && ++failures < 5)
        ADD_FAILURE() << zeroc_rt_dtype_name(small) << ": " << x.get(i)
                      << " -> 0x" << std::hex << bits;
    }
  }
}

TEST(KernelsCast, FloatToIntTruncatesSaturatesAndMapsNaNToZero) {
  std::vector<double> in = {2.7, -2.7, NAN, 1e20, -1e20, 300.5, -1.0, 0.99};
  HostTensor x(ZEROC_RT_DTYPE_F64, {8});
  x.setValues(in);
  HostTensor i64(ZEROC_RT_DTYPE_I64, {8}), i32(ZEROC_RT_DTYPE_I32, {8}),
      u8(ZEROC_RT_DTYPE_U8, {8}), b(ZEROC_RT_DTYPE_BOOL, {8});
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_cast(x.desc(), i64.desc()));
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_cast(x.desc(), i32.desc()));
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_cast(x.desc(), u8.desc()));
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_cast(x.desc(), b.desc()));
  const int64_t *p = i64.as<int64_t>();
  EXPECT_EQ(p[0], 2);
  EXPECT_EQ(p[1], -2);
  EXPECT_EQ(p[2], 0);
  EXPECT_EQ(p[3], INT64_MAX);
  EXPECT_EQ(p[4], INT64_MIN);
  EXPECT_EQ(p[5], 300);
  EXPECT_EQ(i32.values(), (std::vector<double>{2, -2, 0, INT32_MAX, INT32_MIN,
                                               300, -1, 0}));
  EXPECT_EQ(u8.values(), (std::vector<double>{2, 0, 0, 255, 0, 255, 0, 0}));
  EXPECT_EQ(b.values(), (std::vector<double>{1, 1, 1, 1, 1, 1, 1, 1}));
  // Casting F64 -> F32 rounds to nearest; float -> bool maps 0 and -0 to 0.
  HostTensor z(ZEROC_RT_DTYPE_F32, {2}), zb(ZEROC_RT_DTYPE_BOOL, {2});
  z.setValues({0.0, -0.0});
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_cast(z.desc(), zb.desc()));
  EXPECT_EQ(zb.values(), (std::vector<double>{0, 0}));
}

TEST(KernelsCast, IntegerConversionsWrapAndBoolNormalizes) {
  HostTensor x(ZEROC_RT_DTYPE_I64, {4});
  int64_t values[4] = {300, (int64_t(1) << 32) + 5, -1, (int64_t(1) << 53) + 1};
  std::memcpy(x.data(), values, sizeof values);
  HostTensor u8(ZEROC_RT_DTYPE_U8, {4}), i32(ZEROC_RT_DTYPE_I32, {4}),
      f32(ZEROC_RT_DTYPE_F32, {4}), f64(ZEROC_RT_DTYPE_F64, {4});
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_cast(x.desc(), u8.desc()));
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_cast(x.desc(), i32.desc()));
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_cast(x.desc(), f32.desc()));
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_cast(x.desc(), f64.desc()));
  EXPECT_EQ(u8.values(), (std::vector<double>{44, 5, 255, 1}));
  EXPECT_EQ(i32.values(), (std::vector<double>{300, 5, -1, 1}));
  EXPECT_EQ(f32.as<float>()[3], static_cast<float>(values[3]));
  EXPECT_EQ(f64.as<double>()[3], static_cast<double>(values[3]));
  HostTensor b(ZEROC_RT_DTYPE_BOOL, {3}), bf(ZEROC_RT_DTYPE_F32, {3}),
      bi(ZEROC_RT_DTYPE_I64, {3}), bb(ZEROC_RT_DTYPE_BOOL, {3});
  b.setValues({0, 1, 7});
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_cast(b.desc(), bf.desc()));
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_cast(b.desc(), bi.desc()));
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_cast(b.desc(), bb.desc()));
  EXPECT_EQ(bf.values(), (std::vector<double>{0, 1, 1}));
  EXPECT_EQ(bi.values(), (std::vector<double>{0, 1, 1}));
  EXPECT_EQ(bb.values(), (std::vector<double>{0, 1, 1}));
}

TEST(KernelsCast, AllNumericPairsAgreeWithReferenceOnExactValues) {
  // Values representable in every dtype (0..100 integers): every cast is exact.
  const zeroc_rt_dtype_t dtypes[] = {ZEROC_RT_DTYPE_F32, ZEROC_RT_DTYPE_F64,
                                     ZEROC_RT_DTYPE_I64, ZEROC_RT_DTYPE_I32,
                                     ZEROC_RT_DTYPE_U8};
  std::mt19937_64 rng(42);
  for (zeroc_rt_dtype_t from : dtypes)
    for (zeroc_rt_dtype_t to : dtypes) {
      HostTensor x = randomTensor(from, {2, 5}, rng, 0, 100);
      for (int64_t i = 0; i < x.size(); ++i)
        x.set(i, std::floor(x.get(i)));
      HostTensor y(to, {2, 5});
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_cast(x.desc(), y.desc()));
      EXPECT_EQ(y.values(), x.values())
          << zeroc_rt_dtype_name(from) << " -> " << zeroc_rt_dtype_name(to);
    }
  HostTensor x(ZEROC_RT_DTYPE_F64, {}), y(ZEROC_RT_DTYPE_F32, {});
  x.set(0, 0.1);
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_cast(x.desc(), y.desc()));
  EXPECT_EQ(y.as<float>()[0], 0.1f);
}

//===----------------------------------------------------------------------===//
// Dropout
//===----------------------------------------------------------------------===//

/// The hash documented in kernels.h, re-implemented independently.
uint32_t dropoutHash(uint64_t seed, uint64_t counter, uint64_t i) {
  auto mix = [](uint64_t z) {
    z ^= z >> 30;
    z *= 0xBF58476D1CE4E5B9ull;
    z ^= z >> 27;
    z *= 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  const uint64_t gamma = 0x9E3779B97F4A7C15ull;
  uint64_t key = mix(seed ^ mix(counter + gamma));
  return static_cast<uint32_t>(mix(key + (i + 1) * gamma) >> 32);
}

template <typename T> class KernelsDropout : public ::testing::Test {};
TYPED_TEST_SUITE(KernelsDropout, FloatTypes, FloatTypeNames);

TYPED_TEST(KernelsDropout, MatchesDocumentedHash) {
  constexpr zeroc_rt_dtype_t dt = dtypeOf<TypeParam>();
  std::mt19937_64 rng(51);
  for (const Dims &dims : {Dims{}, Dims{3, 7}, Dims{2, 0}, Dims{4, 5, 6}})
    for (double ratio : {0.0, 0.1, 0.5, 0.9, 1.0}) {
      HostTensor x = randomTensor(dt, dims, rng);
      HostTensor y(dt, dims);
      uint64_t seed = 0xC0FFEEull + dims.size(), counter = 17;
      ZEROC_RT_ASSERT_OK(
          zeroc_rt_k_dropout(x.desc(), ratio, seed, counter, y.desc()));
      std::vector<double> want(x.size());
      for (int64_t i = 0; i < x.size(); ++i) {
        bool keep = std::ldexp(dropoutHash(seed, counter, i), -32) >= ratio;
        want[i] = keep ? x.get(i) / (1.0 - ratio) : 0.0;
      }
      expectClose(y, want, tolOf<TypeParam>(),
                  "ratio " + std::to_string(ratio) + " " + dimsName(dims));
    }
}

TEST(KernelsDropout, KeepsAboutOneMinusRatioAndDependsOnSeedAndCounter) {
  const int64_t n = 200000;
  HostTensor x(ZEROC_RT_DTYPE_F32, {n}), a(ZEROC_RT_DTYPE_F32, {n}),
      b(ZEROC_RT_DTYPE_F32, {n}), c(ZEROC_RT_DTYPE_F32, {n});
  x.fill(1.0);
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_dropout(x.desc(), 0.3, 7, 0, a.desc()));
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_dropout(x.desc(), 0.3, 7, 0, b.desc()));
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_dropout(x.desc(), 0.3, 7, 1, c.desc()));
  int64_t kept = 0, differs = 0;
  for (int64_t i = 0; i < n; ++i) {
    kept += a.get(i) != 0;
    differs += a.get(i) != c.get(i);
    ASSERT_EQ(a.get(i), b.get(i));
    ASSERT_TRUE(a.get(i) == 0 || a.get(i) == static_cast<float>(1.0 / (1.0 - 0.3)));
  }
  EXPECT_NEAR(double(kept) / n, 0.7, 0.005);
  // Independent masks differ in about 2 * 0.3 * 0.7 = 42% of the elements.
  EXPECT_NEAR(double(differs) / n, 0.42, 0.01);
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_dropout(x.desc(), 0.3, 8, 0, c.desc()));
  differs = 0;
  for (int64_t i = 0; i < n; ++i)
    differs += a.get(i) != c.get(i);
  EXPECT_NEAR(double(differs) / n, 0.42, 0.01);
}

TEST(KernelsDropout, BackwardIsTheSameMaskSoItIsSelfAdjoint) {
  std::mt19937_64 rng(52);
  Dims dims = {6, 5};
  HostTensor x = randomTensor(ZEROC_RT_DTYPE_F64, dims, rng);
  HostTensor w = randomTensor(ZEROC_RT_DTYPE_F64, dims, rng);
  HostTensor gx(ZEROC_RT_DTYPE_F64, dims);
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_dropout(w.desc(), 0.4, 99, 3, gx.desc()));
  auto forward = [&](const std::vector<double> &point) {
    HostTensor xp(ZEROC_RT_DTYPE_F64, dims), yp(ZEROC_RT_DTYPE_F64, dims);
    xp.setValues(point);
    ZEROC_RT_EXPECT_OK(zeroc_rt_k_dropout(xp.desc(), 0.4, 99, 3, yp.desc()));
    return yp.values();
  };
  expectGradient(forward, x.values(), w.values(), gx.values(), "dropout");
}

} // namespace
