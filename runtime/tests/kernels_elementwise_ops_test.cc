//===- kernels_elementwise_ops_test.cc - masks, math, max/min, clip -------===//
//
// The kernels of issue 9's elementwise ops: the unary math ops (cos ... gelu)
// and their gradients, comparisons, logic, max/min, predicate (not, is_nan,
// is_inf) and clip. F32/F64 against double references, F16/BF16 against the
// F32 kernel rounded once, gradients against finite differences in F64, and
// every rejection.
//
//===----------------------------------------------------------------------===//

#include "kernels_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace zeroc_rt::test;

namespace {

constexpr zeroc_rt_dtype_t F32 = ZEROC_RT_DTYPE_F32, F64 = ZEROC_RT_DTYPE_F64,
                           F16 = ZEROC_RT_DTYPE_F16, BF16 = ZEROC_RT_DTYPE_BF16,
                           I64 = ZEROC_RT_DTYPE_I64, I32 = ZEROC_RT_DTYPE_I32,
                           BOOL = ZEROC_RT_DTYPE_BOOL;
const zeroc_rt_dtype_t kFloatDtypes[] = {F32, F64, F16, BF16};

const zeroc_rt_unary_op_t kNewUnary[] = {
    ZEROC_RT_UNARY_COS,   ZEROC_RT_UNARY_SIN,   ZEROC_RT_UNARY_ABS,
    ZEROC_RT_UNARY_SIGN,  ZEROC_RT_UNARY_FLOOR, ZEROC_RT_UNARY_CEIL,
    ZEROC_RT_UNARY_ROUND, ZEROC_RT_UNARY_GELU,  ZEROC_RT_UNARY_GELU_TANH};

double refUnary(zeroc_rt_unary_op_t op, double x) {
  switch (op) {
  case ZEROC_RT_UNARY_COS:
    return std::cos(x);
  case ZEROC_RT_UNARY_SIN:
    return std::sin(x);
  case ZEROC_RT_UNARY_ABS:
    return std::fabs(x);
  case ZEROC_RT_UNARY_SIGN:
    return (0.0 < x) - (x < 0.0);
  case ZEROC_RT_UNARY_FLOOR:
    return std::floor(x);
  case ZEROC_RT_UNARY_CEIL:
    return std::ceil(x);
  case ZEROC_RT_UNARY_ROUND:
    return std::nearbyint(x);
  case ZEROC_RT_UNARY_GELU:
    return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  case ZEROC_RT_UNARY_GELU_TANH:
    return 0.5 * x *
           (1 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
  default:
    return NAN;
  }
}

/// Rounds v to dtype dt (nearest even) and back.
double roundTo(zeroc_rt_dtype_t dt, double v) {
  HostTensor t(dt, {1});
  t.set(0, v);
  return t.get(0);
}

bool sameValue(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

/// Expects the 16-bit kernel's output to be the F32 kernel's rounded once.
void expectRoundedF32(const HostTensor &half, const HostTensor &single,
                      const std::string &what) {
  ASSERT_EQ(half.size(), single.size());
  for (int64_t i = 0; i < half.size(); ++i)
    EXPECT_TRUE(sameValue(half.get(i), roundTo(half.dtype(), single.get(i))))
        << what << " (" << zeroc_rt_dtype_name(half.dtype()) << ") element "
        << i << ": " << half.get(i) << " vs F32 " << single.get(i);
}

HostTensor tensorOf(zeroc_rt_dtype_t dt, const std::vector<double> &v,
                    Dims dims = {}) {
  if (dims.empty())
    dims = {static_cast<int64_t>(v.size())};
  HostTensor t(dt, dims);
  t.setValues(v);
  return t;
}

/// Ties, signed zeros, infinities, NaN and ordinary values.
const std::vector<double> kSpecials = {0.5,  1.5,   2.5,      -0.5,      -2.5,
                                       0.0,  -0.0,  INFINITY, -INFINITY, NAN,
                                       3.25, -7.75, 1e-3,     -40.0};

//===----------------------------------------------------------------------===//
// Unary math
//===----------------------------------------------------------------------===//

TEST(KernelsElementwiseOps, UnaryMatchesReferenceF32F64) {
  std::mt19937_64 rng(901);
  for (zeroc_rt_dtype_t dt : {F32, F64}) {
    const double tol = dt == F32 ? 2e-6 : 1e-14;
    for (zeroc_rt_unary_op_t op : kNewUnary) {
      HostTensor x = randomTensor(dt, {3, 5}, rng, -6.0, 6.0);
      HostTensor y(dt, {3, 5});
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_unary(op, x.desc(), y.desc()));
      std::vector<double> want;
      for (int64_t i = 0; i < x.size(); ++i)
        want.push_back(refUnary(op, x.get(i)));
      expectClose(y, want, tol, "unary op " + std::to_string(op));
      HostTensor s = tensorOf(dt, kSpecials),
                 sy(dt, {int64_t(kSpecials.size())});
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_unary(op, s.desc(), sy.desc()));
      for (int64_t i = 0; i < s.size(); ++i) {
        double w = refUnary(op, s.get(i));
        double g = sy.get(i);
        EXPECT_TRUE(sameValue(g, w) ||
                    std::fabs(g - w) <= tol * (1 + std::fabs(w)))
            << "op " << op << " at " << s.get(i) << ": " << g << " vs " << w;
      }
    }
  }
}

TEST(KernelsElementwiseOps, RoundTiesToEvenAndSignOfNaNIsZero) {
  HostTensor x = tensorOf(F32, {0.5, 1.5, 2.5, -0.5, -1.5, NAN});
  HostTensor y(F32, {6});
  ZEROC_RT_ASSERT_OK(
      zeroc_rt_k_unary(ZEROC_RT_UNARY_ROUND, x.desc(), y.desc()));
  EXPECT_EQ(y.values()[0], 0.0);
  EXPECT_EQ(y.values()[1], 2.0);
  EXPECT_EQ(y.values()[2], 2.0);
  EXPECT_EQ(y.values()[4], -2.0);
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_unary(ZEROC_RT_UNARY_SIGN, x.desc(), y.desc()));
  EXPECT_EQ(y.values()[5], 0.0); // torch.sign(nan) == 0
  EXPECT_EQ(y.values()[3], -1.0);
}

TEST(KernelsElementwiseOps, UnaryAndGradHalfMatchF32Rounded) {
  std::mt19937_64 rng(902);
  for (zeroc_rt_dtype_t dt : {F16, BF16})
    for (zeroc_rt_unary_op_t op : kNewUnary) {
      HostTensor xh = randomTensor(dt, {37}, rng, -5.0, 5.0);
      HostTensor xs = tensorOf(F32, xh.values());
      HostTensor yh(dt, {37}), ys(F32, {37});
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_unary(op, xh.desc(), yh.desc()));
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_unary(op, xs.desc(), ys.desc()));
      expectRoundedF32(yh, ys, "unary op " + std::to_string(op));
      HostTensor gh = randomTensor(dt, {37}, rng, -2.0, 2.0);
      HostTensor gs = tensorOf(F32, gh.values());
      HostTensor gxh(dt, {37}), gxs(F32, {37});
      ZEROC_RT_ASSERT_OK(
          zeroc_rt_k_unary_grad(op, xh.desc(), nullptr, gh.desc(), gxh.desc()));
      ZEROC_RT_ASSERT_OK(
          zeroc_rt_k_unary_grad(op, xs.desc(), nullptr, gs.desc(), gxs.desc()));
      expectRoundedF32(gxh, gxs, "unary_grad op " + std::to_string(op));
    }
}

TEST(KernelsElementwiseOps, UnaryGradFiniteDifferencesF64) {
  std::mt19937_64 rng(903);
  const Dims dims = {2, 6};
  for (zeroc_rt_unary_op_t op :
       {ZEROC_RT_UNARY_COS, ZEROC_RT_UNARY_SIN, ZEROC_RT_UNARY_ABS,
        ZEROC_RT_UNARY_GELU, ZEROC_RT_UNARY_GELU_TANH}) {
    // Away from abs's kink at 0.
    HostTensor x = randomAwayFromZero(F64, dims, rng, 0.05, 4.0);
    HostTensor w = randomTensor(F64, dims, rng), gx(F64, dims);
    ZEROC_RT_ASSERT_OK(
        zeroc_rt_k_unary_grad(op, x.desc(), nullptr, w.desc(), gx.desc()));
    auto forward = [&](const std::vector<double> &point) {
      HostTensor xp(F64, dims), yp(F64, dims);
      xp.setValues(point);
      ZEROC_RT_EXPECT_OK(zeroc_rt_k_unary(op, xp.desc(), yp.desc()));
      return yp.values();
    };
    expectGradient(forward, x.values(), w.values(), gx.values(),
                   "unary_grad op " + std::to_string(op));
  }
}

TEST(KernelsElementwiseOps, ZeroDerivativeOpsNeedNoForwardOperands) {
  std::mt19937_64 rng(904);
  for (zeroc_rt_unary_op_t op : {ZEROC_RT_UNARY_SIGN, ZEROC_RT_UNARY_FLOOR,
                                 ZEROC_RT_UNARY_CEIL, ZEROC_RT_UNARY_ROUND}) {
    HostTensor g = randomTensor(F32, {4}, rng), gx(F32, {4});
    gx.fill(5.0);
    ZEROC_RT_ASSERT_OK(
        zeroc_rt_k_unary_grad(op, nullptr, nullptr, g.desc(), gx.desc()));
    expectClose(gx, {0, 0, 0, 0}, 0, "zero derivative");
  }
  // abs at 0 has gradient 0, as torch.abs.
  HostTensor x = tensorOf(F64, {0.0, -2.0}), g = tensorOf(F64, {3.0, 3.0});
  HostTensor gx(F64, {2});
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_unary_grad(ZEROC_RT_UNARY_ABS, x.desc(),
                                           nullptr, g.desc(), gx.desc()));
  expectClose(gx, {0.0, -3.0}, 0, "abs grad");
}

//===----------------------------------------------------------------------===//
// Comparisons, logic, max/min
//===----------------------------------------------------------------------===//

const zeroc_rt_binary_op_t kCompareOps[] = {
    ZEROC_RT_BINARY_LESS, ZEROC_RT_BINARY_LESS_EQUAL, ZEROC_RT_BINARY_GREATER,
    ZEROC_RT_BINARY_GREATER_EQUAL};

bool refCompare(zeroc_rt_binary_op_t op, double a, double b) {
  switch (op) {
  case ZEROC_RT_BINARY_LESS:
    return a < b;
  case ZEROC_RT_BINARY_LESS_EQUAL:
    return a <= b;
  case ZEROC_RT_BINARY_GREATER:
    return a > b;
  default:
    return a >= b;
  }
}

/// Runs a broadcasting binary op on (2,1,3) x (4,1) -> (2,4,3) and checks
/// every element against ref(a, b).
template <typename Ref>
void checkBroadcastBinary(zeroc_rt_binary_op_t op, HostTensor &a, HostTensor &b,
                          zeroc_rt_dtype_t outDtype, Ref ref,
                          const std::string &what) {
  Dims outDims = broadcastDims(a.dims(), b.dims());
  HostTensor out(outDtype, outDims);
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_binary(op, a.desc(), b.desc(), out.desc()));
  for (int64_t i = 0; i < out.size(); ++i) {
    Dims idx = unravel(i, outDims);
    double want = ref(a.get(broadcastSource(idx, a.dims())),
                      b.get(broadcastSource(idx, b.dims())));
    EXPECT_TRUE(sameValue(out.get(i), want))
        << what << " element " << i << ": " << out.get(i) << " vs " << want;
  }
}

TEST(KernelsElementwiseOps, ComparisonsEveryDtypeWithBroadcasting) {
  std::mt19937_64 rng(905);
  for (zeroc_rt_dtype_t dt : {F32, F64, F16, BF16, I64, I32})
    for (zeroc_rt_binary_op_t op : kCompareOps) {
      // Small integers make ties frequent in every dtype.
      HostTensor a = randomTensor(dt, {2, 1, 3}, rng, -2, 2);
      HostTensor b = randomTensor(dt, {4, 1}, rng, -2, 2);
      for (int64_t i = 0; i < a.size(); ++i)
        a.set(i, std::round(a.get(i)));
      for (int64_t i = 0; i < b.size(); ++i)
        b.set(i, std::round(b.get(i)));
      checkBroadcastBinary(
          op, a, b, BOOL,
          [op](double x, double y) { return refCompare(op, x, y); },
          std::string("compare ") + zeroc_rt_dtype_name(dt));
    }
  // Any comparison with NaN is false.
  for (zeroc_rt_dtype_t dt : kFloatDtypes)
    for (zeroc_rt_binary_op_t op : kCompareOps) {
      HostTensor a = tensorOf(dt, {NAN, 1.0, NAN}),
                 b = tensorOf(dt, {1.0, NAN, NAN});
      HostTensor out(BOOL, {3});
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_binary(op, a.desc(), b.desc(), out.desc()));
      expectClose(out, {0, 0, 0}, 0, "compare with NaN");
    }
}

TEST(KernelsElementwiseOps, LogicWithBroadcasting) {
  HostTensor a = tensorOf(BOOL, {0, 1, 1, 0, 1, 0}, {2, 1, 3});
  HostTensor b = tensorOf(BOOL, {1, 0, 0, 1}, {4, 1});
  checkBroadcastBinary(
      ZEROC_RT_BINARY_AND, a, b, BOOL,
      [](double x, double y) { return x && y; }, "and");
  checkBroadcastBinary(
      ZEROC_RT_BINARY_OR, a, b, BOOL, [](double x, double y) { return x || y; },
      "or");
  checkBroadcastBinary(
      ZEROC_RT_BINARY_XOR, a, b, BOOL,
      [](double x, double y) { return (x != 0) != (y != 0); }, "xor");
}

TEST(KernelsElementwiseOps, MaxMinPropagateNaNEveryDtype) {
  std::mt19937_64 rng(906);
  for (zeroc_rt_dtype_t dt : {F32, F64, I64, I32}) {
    HostTensor a = randomTensor(dt, {2, 1, 3}, rng, -20, 20);
    HostTensor b = randomTensor(dt, {4, 1}, rng, -20, 20);
    checkBroadcastBinary(
        ZEROC_RT_BINARY_MAX, a, b, dt,
        [](double x, double y) { return std::max(x, y); },
        std::string("max ") + zeroc_rt_dtype_name(dt));
    checkBroadcastBinary(
        ZEROC_RT_BINARY_MIN, a, b, dt,
        [](double x, double y) { return std::min(x, y); },
        std::string("min ") + zeroc_rt_dtype_name(dt));
  }
  for (zeroc_rt_dtype_t dt : kFloatDtypes) {
    HostTensor a = tensorOf(dt, {NAN, 1.0, -INFINITY, 2.0});
    HostTensor b = tensorOf(dt, {1.0, NAN, 3.0, 2.0});
    HostTensor mx(dt, {4}), mn(dt, {4});
    ZEROC_RT_ASSERT_OK(
        zeroc_rt_k_binary(ZEROC_RT_BINARY_MAX, a.desc(), b.desc(), mx.desc()));
    ZEROC_RT_ASSERT_OK(
        zeroc_rt_k_binary(ZEROC_RT_BINARY_MIN, a.desc(), b.desc(), mn.desc()));
    EXPECT_TRUE(std::isnan(mx.get(0)) && std::isnan(mx.get(1)));
    EXPECT_TRUE(std::isnan(mn.get(0)) && std::isnan(mn.get(1)));
    EXPECT_EQ(mx.get(2), 3.0);
    EXPECT_EQ(mn.get(2), -INFINITY);
    EXPECT_EQ(mx.get(3), 2.0);
  }
  // F16/BF16 equal the F32 kernel rounded once.
  for (zeroc_rt_dtype_t dt : {F16, BF16})
    for (zeroc_rt_binary_op_t op : {ZEROC_RT_BINARY_MAX, ZEROC_RT_BINARY_MIN}) {
      HostTensor ah = randomTensor(dt, {3, 4}, rng, -9, 9),
                 bh = randomTensor(dt, {4}, rng, -9, 9);
      HostTensor as = tensorOf(F32, ah.values(), {3, 4}),
                 bs = tensorOf(F32, bh.values());
      HostTensor oh(dt, {3, 4}), os(F32, {3, 4});
      ZEROC_RT_ASSERT_OK(
          zeroc_rt_k_binary(op, ah.desc(), bh.desc(), oh.desc()));
      ZEROC_RT_ASSERT_OK(
          zeroc_rt_k_binary(op, as.desc(), bs.desc(), os.desc()));
      expectRoundedF32(oh, os, "max/min");
    }
}

//===----------------------------------------------------------------------===//
// Predicates
//===----------------------------------------------------------------------===//

TEST(KernelsElementwiseOps, PredicatesEveryFloatDtype) {
  const std::vector<double> v = {1.0, NAN, INFINITY, -INFINITY, -0.0, 65504};
  for (zeroc_rt_dtype_t dt : kFloatDtypes) {
    HostTensor x = tensorOf(dt, v), out(BOOL, {6});
    ZEROC_RT_ASSERT_OK(
        zeroc_rt_k_predicate(ZEROC_RT_PREDICATE_IS_NAN, x.desc(), out.desc()));
    expectClose(out, {0, 1, 0, 0, 0, 0}, 0, "is_nan");
    ZEROC_RT_ASSERT_OK(
        zeroc_rt_k_predicate(ZEROC_RT_PREDICATE_IS_INF, x.desc(), out.desc()));
    expectClose(out, {0, 0, 1, 1, 0, 0}, 0, "is_inf");
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_predicate(ZEROC_RT_PREDICATE_IS_POS_INF,
                                            x.desc(), out.desc()));
    expectClose(out, {0, 0, 1, 0, 0, 0}, 0, "is_pos_inf");
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_predicate(ZEROC_RT_PREDICATE_IS_NEG_INF,
                                            x.desc(), out.desc()));
    expectClose(out, {0, 0, 0, 1, 0, 0}, 0, "is_neg_inf");
  }
  HostTensor m = tensorOf(BOOL, {1, 0, 1}), n(BOOL, {3});
  ZEROC_RT_ASSERT_OK(
      zeroc_rt_k_predicate(ZEROC_RT_PREDICATE_NOT, m.desc(), n.desc()));
  expectClose(n, {0, 1, 0}, 0, "not");
}

//===----------------------------------------------------------------------===//
// Clip
//===----------------------------------------------------------------------===//

TEST(KernelsElementwiseOps, ClipAndGradCurrentTorchClampConvention) {
  for (zeroc_rt_dtype_t dt : kFloatDtypes) {
    HostTensor x = tensorOf(dt, {-2.0, -1.0, 0.25, 1.0, 3.0, NAN});
    HostTensor y(dt, {6}), g = tensorOf(dt, {1, 2, 3, 4, 5, 6}), gx(dt, {6});
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_clip(x.desc(), 1, -1.0, 1, 1.0, y.desc()));
    EXPECT_EQ(y.values()[0], -1.0);
    EXPECT_EQ(y.values()[2], 0.25);
    EXPECT_EQ(y.values()[4], 1.0);
    EXPECT_TRUE(std::isnan(y.get(5)));
    // The gradient is 0 at the bounds themselves (current torch.clamp's
    // minimum-norm subgradient) and for NaN.
    ZEROC_RT_ASSERT_OK(
        zeroc_rt_k_clip_grad(x.desc(), 1, -1.0, 1, 1.0, g.desc(), gx.desc()));
    expectClose(gx, {0, 0, 3, 0, 0, 0}, 0, "clip_grad");
    // One bound only.
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_clip(x.desc(), 0, 0.0, 1, 0.0, y.desc()));
    EXPECT_EQ(y.values()[0], -2.0);
    EXPECT_EQ(y.values()[3], 0.0);
    ZEROC_RT_ASSERT_OK(
        zeroc_rt_k_clip_grad(x.desc(), 1, 0.25, 0, 0.0, g.desc(), gx.desc()));
    expectClose(gx, {0, 0, 0, 4, 5, 0}, 0, "clip_grad min only");
    // An absent bound imposes nothing: +inf passes with a min only.
    HostTensor xi = tensorOf(dt, {INFINITY, -INFINITY}), gi = tensorOf(dt, {1, 1});
    HostTensor gxi(dt, {2});
    ZEROC_RT_ASSERT_OK(
        zeroc_rt_k_clip_grad(xi.desc(), 1, 0.0, 0, 0.0, gi.desc(), gxi.desc()));
    expectClose(gxi, {1, 0}, 0, "clip_grad at inf");
    // lo >= hi: no interior, no gradient.
    ZEROC_RT_ASSERT_OK(
        zeroc_rt_k_clip_grad(x.desc(), 1, 1.0, 1, 1.0, g.desc(), gx.desc()));
    expectClose(gx, {0, 0, 0, 0, 0, 0}, 0, "clip_grad lo == hi");
    // min > max: every element becomes max (ONNX).
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_clip(x.desc(), 1, 2.0, 1, -1.0, y.desc()));
    EXPECT_EQ(y.values()[2], -1.0);
    EXPECT_EQ(y.values()[4], -1.0);
  }
}

//===----------------------------------------------------------------------===//
// Rejections
//===----------------------------------------------------------------------===//

TEST(KernelsElementwiseOps, RejectsBadDescriptorsAndArguments) {
  HostTensor f(F32, {3}), f2(F32, {3}), f4(F32, {4}), i(I64, {3}), m(BOOL, {3}),
      m2(BOOL, {3}), m4(BOOL, {4});
  const char *bin = "zeroc_rt_k_binary";
  // Comparisons: operands must be numeric, out BOOL, shapes broadcast.
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_binary(ZEROC_RT_BINARY_LESS, m.desc(), m2.desc(), m4.desc()),
      ZEROC_RT_INVALID_ARGUMENT, bin, "a");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_binary(ZEROC_RT_BINARY_LESS, f.desc(), f2.desc(), f4.desc()),
      ZEROC_RT_INVALID_ARGUMENT, bin, "out");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_binary(ZEROC_RT_BINARY_GREATER, f.desc(), i.desc(), m.desc()),
      ZEROC_RT_INVALID_ARGUMENT, bin, "b");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_binary(ZEROC_RT_BINARY_GREATER, f.desc(), f4.desc(), m.desc()),
      ZEROC_RT_SHAPE_MISMATCH, bin, "f32[4]");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_binary(ZEROC_RT_BINARY_LESS, f.desc(), f2.desc(), m4.desc()),
      ZEROC_RT_SHAPE_MISMATCH, bin, "out");
  // Logic: BOOL only.
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_binary(ZEROC_RT_BINARY_AND, f.desc(), f2.desc(), m.desc()),
      ZEROC_RT_INVALID_ARGUMENT, bin, "a");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_binary(ZEROC_RT_BINARY_XOR, m.desc(), m2.desc(), f.desc()),
      ZEROC_RT_INVALID_ARGUMENT, bin, "out");
  // Max/min: not BOOL, out of the operands' dtype.
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_binary(ZEROC_RT_BINARY_MAX, m.desc(), m2.desc(), m4.desc()),
      ZEROC_RT_INVALID_ARGUMENT, bin, "a");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_binary(ZEROC_RT_BINARY_MIN, f.desc(), f2.desc(), m.desc()),
      ZEROC_RT_INVALID_ARGUMENT, bin, "out");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_binary(static_cast<zeroc_rt_binary_op_t>(99),
                                        f.desc(), f2.desc(), f4.desc()),
                      ZEROC_RT_INVALID_ARGUMENT, bin, "invalid binary op 99");
  // Aliasing.
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_binary(ZEROC_RT_BINARY_MAX, f.desc(), f2.desc(), f.desc()),
      ZEROC_RT_INVALID_ARGUMENT, bin, "overlap");

  // Unary: invalid op; gelu's gradient reads x.
  EXPECT_KERNEL_ERROR(zeroc_rt_k_unary(static_cast<zeroc_rt_unary_op_t>(42),
                                       f.desc(), f2.desc()),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_unary",
                      "invalid unary op 42");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_unary(ZEROC_RT_UNARY_COS, i.desc(), f.desc()),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_unary", "in");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_unary_grad(ZEROC_RT_UNARY_GELU, nullptr,
                                            nullptr, f.desc(), f2.desc()),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_unary_grad",
                      "x is NULL but the gradient of gelu reads it");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_unary_grad(ZEROC_RT_UNARY_SIN, f4.desc(),
                                            nullptr, f.desc(), f2.desc()),
                      ZEROC_RT_SHAPE_MISMATCH, "zeroc_rt_k_unary_grad", "x");

  // Predicates.
  const char *pred = "zeroc_rt_k_predicate";
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_predicate(ZEROC_RT_PREDICATE_NOT, f.desc(), m.desc()),
      ZEROC_RT_INVALID_ARGUMENT, pred, "in");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_predicate(ZEROC_RT_PREDICATE_IS_NAN, i.desc(), m.desc()),
      ZEROC_RT_INVALID_ARGUMENT, pred, "in");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_predicate(ZEROC_RT_PREDICATE_IS_INF, f.desc(), f2.desc()),
      ZEROC_RT_INVALID_ARGUMENT, pred, "out");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_predicate(ZEROC_RT_PREDICATE_IS_NAN, f.desc(), m4.desc()),
      ZEROC_RT_SHAPE_MISMATCH, pred, "out");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_predicate(static_cast<zeroc_rt_predicate_op_t>(7), f.desc(),
                           m.desc()),
      ZEROC_RT_INVALID_ARGUMENT, pred, "invalid predicate op 7");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_predicate(ZEROC_RT_PREDICATE_IS_NAN, nullptr, m.desc()),
      ZEROC_RT_INVALID_ARGUMENT, pred, "in");

  // Clip.
  EXPECT_KERNEL_ERROR(zeroc_rt_k_clip(f.desc(), 1, NAN, 0, 0.0, f2.desc()),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_clip",
                      "a clip bound is NaN");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_clip(i.desc(), 1, 0.0, 0, 0.0, i.desc()),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_clip", "in");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_clip(f.desc(), 1, 0.0, 0, 0.0, f4.desc()),
                      ZEROC_RT_SHAPE_MISMATCH, "zeroc_rt_k_clip", "out");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_clip(f.desc(), 1, 0.0, 1, 1.0, f.desc()),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_clip", "overlap");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_clip_grad(f.desc(), 0, 0.0, 1, NAN, f2.desc(), f4.desc()),
      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_clip_grad", "NaN");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_clip_grad(f.desc(), 1, 0.0, 0, 0.0, f4.desc(), f2.desc()),
      ZEROC_RT_SHAPE_MISMATCH, "zeroc_rt_k_clip_grad", "grad_out");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_clip_grad(f.desc(), 1, 0.0, 0, 0.0, f2.desc(), f2.desc()),
      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_clip_grad", "overlap");
  HostTensor d(F64, {3});
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_clip_grad(f.desc(), 1, 0.0, 0, 0.0, d.desc(), f2.desc()),
      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_clip_grad", "grad_out");
}

} // namespace
