//===- kernels_half_test.cc - F16 / BF16 kernels against F32 ----*- C++ -*-===//
//
// Every float kernel on F16 and BF16 against the F32 kernel on the same
// (16-bit representable) inputs, its result rounded to the 16-bit type with
// the reference round-to-nearest-even (zeroc_rt::kernels::encodeF16/BF16).
//
// Tolerance: `ulps` units of the 16-bit type's ULP at 1 (2^-10 for F16,
// 2^-7 for BF16) times max(1, |ref|); NaN matches NaN, infinities must be
// equal. Per kernel:
//   0 (exact): kernels whose 16-bit path computes the very float values of
//     the F32 kernel and rounds them once: unary, unary_grad, binary (incl.
//     overflow, subnormal, inf and NaN cases), accumulate, gather_grad
//     (float accumulator), reduce MAX, and the data movement kernels
//     (broadcast, where, gather, transpose, slice, slice_grad, concat, trilu,
//     copy, zero).
//   1: kernels computing in double (sum_to, dropout, reduce SUM/MEAN,
//     softmax(_grad), layer_norm(_grad), softmax_cross_entropy(_grad),
//     scale): the reference rounds twice (double -> f32 -> 16 bits), the
//     kernel once, which differs by one ULP at near-ties (dropout with ratio
//     0.9 hits some); matmul and gemm (the same cblas_sgemm on the same
//     values, 1 ULP of slack for BLAS implementations).
//   sum_squares: the same double as F32 (exact).
//
//===----------------------------------------------------------------------===//

#include "kernels_test_util.h"

#include "kernels/scalar_types.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

using namespace zeroc_rt::test;
namespace zk = zeroc_rt::kernels;

namespace {

constexpr zeroc_rt_dtype_t F32 = ZEROC_RT_DTYPE_F32;

struct F16Tag {
  static constexpr zeroc_rt_dtype_t dt = ZEROC_RT_DTYPE_F16;
};
struct BF16Tag {
  static constexpr zeroc_rt_dtype_t dt = ZEROC_RT_DTYPE_BF16;
};
using HalfTypes = ::testing::Types<F16Tag, BF16Tag>;
struct HalfTypeNames {
  template <typename T> static std::string GetName(int) {
    return T::dt == ZEROC_RT_DTYPE_F16 ? "F16" : "BF16";
  }
};

double roundTo(zeroc_rt_dtype_t dt, double v) {
  return dt == ZEROC_RT_DTYPE_F16 ? zk::decodeF16(zk::encodeF16(v))
                                  : zk::decodeBF16(zk::encodeBF16(v));
}

/// The ULP of the 16-bit type at 1.
double ulpAtOne(zeroc_rt_dtype_t dt) {
  return std::ldexp(1.0, dt == ZEROC_RT_DTYPE_F16 ? -10 : -7);
}

/// One float operand twice: `half` in the 16-bit dtype and `single` in F32
/// holding exactly the same values.
struct Twin {
  HostTensor half, single;
};

/// src's values rounded to dt, and their F32 copy.
Twin twinOf(const HostTensor &src, zeroc_rt_dtype_t dt) {
  Twin t{HostTensor(dt, src.dims()), HostTensor(F32, src.dims())};
  for (int64_t i = 0; i < src.size(); ++i) {
    t.half.set(i, src.get(i));
    t.single.set(i, t.half.get(i));
  }
  return t;
}

Twin twinOf(const std::vector<double> &values, zeroc_rt_dtype_t dt) {
  HostTensor src(ZEROC_RT_DTYPE_F64, {static_cast<int64_t>(values.size())});
  src.setValues(values);
  return twinOf(src, dt);
}

Twin randomTwin(zeroc_rt_dtype_t dt, const Dims &dims, std::mt19937_64 &rng,
                double lo = -1.0, double hi = 1.0) {
  return twinOf(randomTensor(ZEROC_RT_DTYPE_F64, dims, rng, lo, hi), dt);
}

Twin awayTwin(zeroc_rt_dtype_t dt, const Dims &dims, std::mt19937_64 &rng,
              double lo, double hi) {
  return twinOf(randomAwayFromZero(ZEROC_RT_DTYPE_F64, dims, rng, lo, hi), dt);
}

/// Outputs of both kernels, pre-filled with a value no kernel produces here.
Twin outputs(zeroc_rt_dtype_t dt, const Dims &dims) {
  Twin t{HostTensor(dt, dims), HostTensor(F32, dims)};
  t.half.fill(-77.0);
  t.single.fill(-77.0);
  return t;
}

/// EXPECT got (16-bit) == ref (F32) rounded to got's dtype, within
/// ulps * ulpAtOne * max(1, |rounded ref|).
void expectRoundedMatch(const HostTensor &got, const HostTensor &ref,
                        double ulps, const std::string &what) {
  ASSERT_EQ(got.dims(), ref.dims()) << what;
  ASSERT_EQ(ref.dtype(), F32) << what;
  const double unit = ulpAtOne(got.dtype());
  int failures = 0;
  for (int64_t i = 0; i < got.size(); ++i) {
    double g = got.get(i), w = roundTo(got.dtype(), ref.get(i));
    bool ok = (std::isnan(g) && std::isnan(w)) || g == w ||
              std::fabs(g - w) <= ulps * unit * std::max(1.0, std::fabs(w));
    if (!ok && ++failures <= 5)
      ADD_FAILURE() << what << " (" << zeroc_rt_dtype_name(got.dtype())
                    << "): element " << i << " "
                    << dimsName(unravel(i, got.dims())) << " is " << g
                    << ", F32 rounded is " << w << " (F32 " << ref.get(i)
                    << ")";
  }
}

void expectRoundedMatch(const Twin &out, double ulps, const std::string &what) {
  expectRoundedMatch(out.half, out.single, ulps, what);
}

template <typename T> class KernelsHalf : public ::testing::Test {};
TYPED_TEST_SUITE(KernelsHalf, HalfTypes, HalfTypeNames);

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

const zeroc_rt_unary_op_t kUnaryOps[] = {
    ZEROC_RT_UNARY_NEG,  ZEROC_RT_UNARY_SQRT, ZEROC_RT_UNARY_RECIPROCAL,
    ZEROC_RT_UNARY_RELU, ZEROC_RT_UNARY_TANH, ZEROC_RT_UNARY_SIGMOID,
    ZEROC_RT_UNARY_ERF,  ZEROC_RT_UNARY_EXP,  ZEROC_RT_UNARY_LOG};

const Dims kShapes[] = {{}, {7}, {2, 3, 4}, {0, 3}, {1, 1, 5}, {300}};

Twin unaryInput(zeroc_rt_unary_op_t op, zeroc_rt_dtype_t dt, const Dims &dims,
                std::mt19937_64 &rng) {
  switch (op) {
  case ZEROC_RT_UNARY_SQRT:
  case ZEROC_RT_UNARY_LOG:
    return randomTwin(dt, dims, rng, 0.01, 20.0);
  case ZEROC_RT_UNARY_RECIPROCAL:
  case ZEROC_RT_UNARY_RELU:
    return awayTwin(dt, dims, rng, 0.01, 20.0);
  default:
    return randomTwin(dt, dims, rng, -6.0, 6.0);
  }
}

/// Infinities, NaN, signed zeros, overflow and underflow in both formats.
const std::vector<double> kSpecials = {0.0,  -0.0,  INFINITY, -INFINITY,
                                       NAN,  11.5,  -20.0,    1e-5,
                                       -3e4, 65504, 1e30,     -2.5e-38};

TYPED_TEST(KernelsHalf, UnaryMatchesF32) {
  constexpr zeroc_rt_dtype_t dt = TypeParam::dt;
  std::mt19937_64 rng(101);
  for (zeroc_rt_unary_op_t op : kUnaryOps) {
    std::string name = "unary op " + std::to_string(op);
    for (const Dims &dims : kShapes) {
      Twin x = unaryInput(op, dt, dims, rng), y = outputs(dt, dims);
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_unary(op, x.half.desc(), y.half.desc()));
      ZEROC_RT_ASSERT_OK(
          zeroc_rt_k_unary(op, x.single.desc(), y.single.desc()));
      expectRoundedMatch(y, 0, name + " " + dimsName(dims));
    }
    Twin x = twinOf(kSpecials, dt);
    Twin y = outputs(dt, x.half.dims());
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_unary(op, x.half.desc(), y.half.desc()));
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_unary(op, x.single.desc(), y.single.desc()));
    expectRoundedMatch(y, 0, name + " special values");
  }
  // exp overflows F16 (max 65504) but not BF16; relu keeps NaN.
  Twin x = twinOf({11.1, -30.0, NAN}, dt), y = outputs(dt, {3});
  ZEROC_RT_ASSERT_OK(
      zeroc_rt_k_unary(ZEROC_RT_UNARY_EXP, x.half.desc(), y.half.desc()));
  if (dt == ZEROC_RT_DTYPE_F16)
    EXPECT_EQ(y.half.get(0), INFINITY);
  else
    EXPECT_EQ(y.half.get(0),
              roundTo(dt, std::exp(static_cast<float>(x.half.get(0)))));
  ZEROC_RT_ASSERT_OK(
      zeroc_rt_k_unary(ZEROC_RT_UNARY_RELU, x.half.desc(), y.half.desc()));
  EXPECT_EQ(y.half.get(1), 0.0);
  EXPECT_TRUE(std::isnan(y.half.get(2)));
}

TYPED_TEST(KernelsHalf, UnaryGradMatchesF32) {
  constexpr zeroc_rt_dtype_t dt = TypeParam::dt;
  std::mt19937_64 rng(102);
  for (zeroc_rt_unary_op_t op : kUnaryOps)
    for (const Dims &dims : kShapes) {
      Twin x = unaryInput(op, dt, dims, rng);
      HostTensor yHalf(dt, dims);
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_unary(op, x.half.desc(), yHalf.desc()));
      Twin y = twinOf(yHalf, dt); // both gradients read the same y
      Twin gy = randomTwin(dt, dims, rng, -2.0, 2.0), gx = outputs(dt, dims);
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_unary_grad(op, x.half.desc(), y.half.desc(),
                                               gy.half.desc(), gx.half.desc()));
      ZEROC_RT_ASSERT_OK(
          zeroc_rt_k_unary_grad(op, x.single.desc(), y.single.desc(),
                                gy.single.desc(), gx.single.desc()));
      expectRoundedMatch(
          gx, 0, "unary_grad op " + std::to_string(op) + dimsName(dims));
    }
}

const zeroc_rt_binary_op_t kArithmeticOps[] = {
    ZEROC_RT_BINARY_ADD, ZEROC_RT_BINARY_SUB, ZEROC_RT_BINARY_MUL,
    ZEROC_RT_BINARY_DIV, ZEROC_RT_BINARY_POW};

const std::pair<Dims, Dims> kBroadcastPairs[] = {{{2, 3}, {2, 3}},
                                                 {{2, 3}, {3}},
                                                 {{2, 1, 4}, {3, 1}},
                                                 {{}, {2, 2}},
                                                 {{1}, {}},
                                                 {{0, 3}, {3}},
                                                 {{4, 1, 1, 2}, {1, 5, 1}},
                                                 {{3, 1}, {1, 0}},
                                                 {{64}, {64}}};

TYPED_TEST(KernelsHalf, BinaryMatchesF32) {
  constexpr zeroc_rt_dtype_t dt = TypeParam::dt;
  std::mt19937_64 rng(103);
  for (zeroc_rt_binary_op_t op : kArithmeticOps)
    for (const auto &[aDims, bDims] : kBroadcastPairs) {
      bool pow = op == ZEROC_RT_BINARY_POW;
      Twin a = pow ? randomTwin(dt, aDims, rng, 0.5, 4.0)
                   : randomTwin(dt, aDims, rng, -50.0, 50.0);
      Twin b = op == ZEROC_RT_BINARY_DIV ? awayTwin(dt, bDims, rng, 0.1, 4.0)
               : pow                     ? randomTwin(dt, bDims, rng, -3, 3)
                                         : randomTwin(dt, bDims, rng, -50, 50);
      Twin out = outputs(dt, broadcastDims(aDims, bDims));
      ZEROC_RT_ASSERT_OK(
          zeroc_rt_k_binary(op, a.half.desc(), b.half.desc(), out.half.desc()));
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_binary(op, a.single.desc(), b.single.desc(),
                                           out.single.desc()));
      expectRoundedMatch(out, 0,
                         "binary op " + std::to_string(op) + " " +
                             dimsName(aDims) + " " + dimsName(bDims));
    }
  // Overflow to inf (F16), subnormal results, inf and NaN operands: exact.
  Twin a =
      twinOf({65504, 300, 1e-3, -0.0, INFINITY, NAN, 1, 2, 3e-5, -1e38}, dt);
  Twin b = twinOf({2, 300, 1e-3, 0, -INFINITY, 1, 0, -0.5, 0.25, 10}, dt);
  for (zeroc_rt_binary_op_t op : kArithmeticOps) {
    Twin out = outputs(dt, {10});
    ZEROC_RT_ASSERT_OK(
        zeroc_rt_k_binary(op, a.half.desc(), b.half.desc(), out.half.desc()));
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_binary(op, a.single.desc(), b.single.desc(),
                                         out.single.desc()));
    expectRoundedMatch(out, 0, "binary op " + std::to_string(op) + " specials");
  }
  // EQUAL on the same values agrees with F32.
  Twin x = randomTwin(dt, {3, 1, 4}, rng, -2, 2), y = x;
  for (int64_t i = 0; i < 12; i += 3) {
    y.half.set(i, y.half.get(i) + 1.0);
    y.single.set(i, y.half.get(i));
  }
  HostTensor eqHalf(ZEROC_RT_DTYPE_BOOL, {3, 1, 4}),
      eqSingle(ZEROC_RT_DTYPE_BOOL, {3, 1, 4});
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_binary(ZEROC_RT_BINARY_EQUAL, x.half.desc(),
                                       y.half.desc(), eqHalf.desc()));
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_binary(ZEROC_RT_BINARY_EQUAL, x.single.desc(),
                                       y.single.desc(), eqSingle.desc()));
  EXPECT_EQ(eqHalf.values(), eqSingle.values());
}

TYPED_TEST(KernelsHalf, WhereMatchesF32) {
  constexpr zeroc_rt_dtype_t dt = TypeParam::dt;
  std::mt19937_64 rng(104);
  struct Case {
    Dims cond, a, b;
  };
  const Case cases[] = {
      {{3, 1}, {1, 4}, {}}, {{2, 3, 4}, {3, 4}, {2, 1, 4}}, {{0, 2}, {2}, {1}}};
  for (const Case &c : cases) {
    HostTensor cond = randomTensor(ZEROC_RT_DTYPE_BOOL, c.cond, rng, 0, 1);
    Twin a = randomTwin(dt, c.a, rng), b = randomTwin(dt, c.b, rng);
    Twin out = outputs(dt, broadcastDims(broadcastDims(c.cond, c.a), c.b));
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_where(cond.desc(), a.half.desc(),
                                        b.half.desc(), out.half.desc()));
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_where(cond.desc(), a.single.desc(),
                                        b.single.desc(), out.single.desc()));
    expectRoundedMatch(out, 0, "where " + dimsName(out.half.dims()));
  }
}

TYPED_TEST(KernelsHalf, BroadcastAndSumToMatchF32) {
  constexpr zeroc_rt_dtype_t dt = TypeParam::dt;
  std::mt19937_64 rng(105);
  const std::pair<Dims, Dims> pairs[] = {
      {{3}, {2, 3}},       {{2, 1, 4}, {2, 3, 4}}, {{}, {2, 2}},
      {{1, 1}, {5, 1, 1}}, {{3, 1}, {3, 0}},       {{1, 200}, {40, 200}}};
  for (const auto &[small, big] : pairs) {
    Twin in = randomTwin(dt, small, rng), out = outputs(dt, big);
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_broadcast(in.half.desc(), out.half.desc()));
    ZEROC_RT_ASSERT_OK(
        zeroc_rt_k_broadcast(in.single.desc(), out.single.desc()));
    expectRoundedMatch(out, 0, "broadcast to " + dimsName(big));

    Twin grad = randomTwin(dt, big, rng), sum = outputs(dt, small);
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_sum_to(grad.half.desc(), sum.half.desc()));
    ZEROC_RT_ASSERT_OK(
        zeroc_rt_k_sum_to(grad.single.desc(), sum.single.desc()));
    expectRoundedMatch(sum, 1, "sum_to " + dimsName(small));
  }
}

TYPED_TEST(KernelsHalf, DropoutMatchesF32) {
  constexpr zeroc_rt_dtype_t dt = TypeParam::dt;
  std::mt19937_64 rng(106);
  for (const Dims &dims : {Dims{}, Dims{3, 7}, Dims{2, 0}, Dims{500}})
    for (double ratio : {0.0, 0.1, 0.3, 0.5, 0.9, 1.0}) {
      Twin x = randomTwin(dt, dims, rng, -4, 4), y = outputs(dt, dims);
      ZEROC_RT_ASSERT_OK(
          zeroc_rt_k_dropout(x.half.desc(), ratio, 42, 7, y.half.desc()));
      ZEROC_RT_ASSERT_OK(
          zeroc_rt_k_dropout(x.single.desc(), ratio, 42, 7, y.single.desc()));
      expectRoundedMatch(y, 1,
                         "dropout " + std::to_string(ratio) + dimsName(dims));
      // The same mask: zeros exactly where F32 has them.
      for (int64_t i = 0; i < x.half.size(); ++i)
        EXPECT_EQ(y.half.get(i) == 0.0 && x.half.get(i) != 0.0,
                  y.single.get(i) == 0.0 && x.single.get(i) != 0.0);
    }
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

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

TYPED_TEST(KernelsHalf, MatmulMatchesF32) {
  constexpr zeroc_rt_dtype_t dt = TypeParam::dt;
  std::mt19937_64 rng(107);
  const std::pair<Dims, Dims> shapes[] = {{{3, 4}, {4, 5}},
                                          {{4}, {4, 5}},
                                          {{3, 4}, {4}},
                                          {{4}, {4}},
                                          {{2, 3, 4}, {4, 5}},
                                          {{2, 3, 4}, {2, 4, 5}},
                                          {{2, 1, 3, 4}, {5, 4, 2}},
                                          {{2, 3, 0}, {0, 5}},
                                          {{0, 3, 4}, {4, 5}},
                                          {{3, 4}, {2, 4, 5}},
                                          {{33, 70}, {70, 17}},
                                          {{1, 1}, {1, 1}}};
  for (const auto &[aDims, bDims] : shapes) {
    Twin a = randomTwin(dt, aDims, rng), b = randomTwin(dt, bDims, rng);
    Twin out = outputs(dt, matmulDims(aDims, bDims));
    ZEROC_RT_ASSERT_OK(
        zeroc_rt_k_matmul(a.half.desc(), b.half.desc(), out.half.desc()));
    ZEROC_RT_ASSERT_OK(
        zeroc_rt_k_matmul(a.single.desc(), b.single.desc(), out.single.desc()));
    expectRoundedMatch(out, 1, dimsName(aDims) + " @ " + dimsName(bDims));
  }
}

TYPED_TEST(KernelsHalf, GemmMatchesF32) {
  constexpr zeroc_rt_dtype_t dt = TypeParam::dt;
  std::mt19937_64 rng(108);
  const int64_t m = 3, n = 4, k = 5;
  const std::optional<Dims> cShapes[] = {std::nullopt, Dims{}, Dims{n},
                                         Dims{m, 1}, Dims{m, n}};
  for (int ta : {0, 1})
    for (int tb : {0, 1})
      for (const std::optional<Dims> &cDims : cShapes)
        for (double beta : {0.0, 0.5}) {
          Twin a = randomTwin(dt, ta ? Dims{k, m} : Dims{m, k}, rng);
          Twin b = randomTwin(dt, tb ? Dims{n, k} : Dims{k, n}, rng);
          Twin c = randomTwin(dt, cDims ? *cDims : Dims{}, rng);
          Twin out = outputs(dt, {m, n});
          out.half.fill(NAN); // overwritten, never read
          out.single.fill(NAN);
          ZEROC_RT_ASSERT_OK(zeroc_rt_k_gemm(
              a.half.desc(), b.half.desc(), cDims ? c.half.desc() : nullptr,
              1.5, beta, ta, tb, out.half.desc()));
          ZEROC_RT_ASSERT_OK(zeroc_rt_k_gemm(a.single.desc(), b.single.desc(),
                                             cDims ? c.single.desc() : nullptr,
                                             1.5, beta, ta, tb,
                                             out.single.desc()));
          expectRoundedMatch(out, 1,
                             "gemm ta " + std::to_string(ta) + " tb " +
                                 std::to_string(tb) + " c " +
                                 (cDims ? dimsName(*cDims) : "none") +
                                 " beta " + std::to_string(beta));
        }
  // K == 0: out = beta * c.
  Twin a = randomTwin(dt, {2, 0}, rng), b = randomTwin(dt, {0, 3}, rng);
  Twin c = randomTwin(dt, {2, 3}, rng), out = outputs(dt, {2, 3});
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_gemm(a.half.desc(), b.half.desc(),
                                     c.half.desc(), 1.0, 2.0, 0, 0,
                                     out.half.desc()));
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_gemm(a.single.desc(), b.single.desc(),
                                     c.single.desc(), 1.0, 2.0, 0, 0,
                                     out.single.desc()));
  expectRoundedMatch(out, 0, "gemm K == 0");
}

//===----------------------------------------------------------------------===//
// Reductions and normalizations
//===----------------------------------------------------------------------===//

TYPED_TEST(KernelsHalf, ReduceMatchesF32) {
  constexpr zeroc_rt_dtype_t dt = TypeParam::dt;
  std::mt19937_64 rng(109);
  for (const Dims &dims : {Dims{2, 3, 4}, Dims{3, 0, 2}, Dims{2, 150}})
    for (zeroc_rt_tensor_reduce_op_t op :
         {ZEROC_RT_REDUCE_OP_SUM, ZEROC_RT_REDUCE_OP_MEAN,
          ZEROC_RT_REDUCE_OP_MAX})
      for (uint32_t mask = 0; mask < (1u << dims.size()); ++mask) {
        Twin in = randomTwin(dt, dims, rng, -10, 10);
        Dims outDims = dims;
        for (size_t d = 0; d < dims.size(); ++d)
          if ((mask >> d) & 1u)
            outDims[d] = 1;
        Twin out = outputs(dt, outDims);
        ZEROC_RT_ASSERT_OK(
            zeroc_rt_k_reduce(op, in.half.desc(), mask, out.half.desc()));
        ZEROC_RT_ASSERT_OK(
            zeroc_rt_k_reduce(op, in.single.desc(), mask, out.single.desc()));
        expectRoundedMatch(out, op == ZEROC_RT_REDUCE_OP_MAX ? 0 : 1,
                           "reduce op " + std::to_string(op) + " mask " +
                               std::to_string(mask) + " " + dimsName(dims));
      }
  // MAX propagates NaN; an empty MAX is -inf, an empty MEAN NaN.
  Twin x = twinOf({1.0, NAN, 3.0}, dt), out = outputs(dt, {});
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_reduce(ZEROC_RT_REDUCE_OP_MAX, x.half.desc(),
                                       1u, out.half.desc()));
  EXPECT_TRUE(std::isnan(out.half.get(0)));
  Twin e = randomTwin(dt, {0}, rng);
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_reduce(ZEROC_RT_REDUCE_OP_MAX, e.half.desc(),
                                       1u, out.half.desc()));
  EXPECT_EQ(out.half.get(0), -INFINITY);
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_reduce(ZEROC_RT_REDUCE_OP_MEAN, e.half.desc(),
                                       1u, out.half.desc()));
  EXPECT_TRUE(std::isnan(out.half.get(0)));
}

TYPED_TEST(KernelsHalf, SoftmaxAndGradMatchF32) {
  constexpr zeroc_rt_dtype_t dt = TypeParam::dt;
  std::mt19937_64 rng(110);
  for (const Dims &dims : {Dims{2, 3, 4}, Dims{5}, Dims{3, 0}, Dims{2, 100}})
    for (int64_t axis = -1; axis < static_cast<int64_t>(dims.size()); ++axis)
      for (int log : {0, 1}) {
        std::string what = "softmax log " + std::to_string(log) + " axis " +
                           std::to_string(axis) + " " + dimsName(dims);
        Twin x = randomTwin(dt, dims, rng, -8, 8), y = outputs(dt, dims);
        ZEROC_RT_ASSERT_OK(
            zeroc_rt_k_softmax(x.half.desc(), axis, log, y.half.desc()));
        ZEROC_RT_ASSERT_OK(
            zeroc_rt_k_softmax(x.single.desc(), axis, log, y.single.desc()));
        expectRoundedMatch(y, 1, what);

        Twin yIn = twinOf(y.half, dt); // both gradients read the same y
        Twin gy = randomTwin(dt, dims, rng, -2, 2), gx = outputs(dt, dims);
        ZEROC_RT_ASSERT_OK(zeroc_rt_k_softmax_grad(
            yIn.half.desc(), gy.half.desc(), axis, log, gx.half.desc()));
        ZEROC_RT_ASSERT_OK(zeroc_rt_k_softmax_grad(
            yIn.single.desc(), gy.single.desc(), axis, log, gx.single.desc()));
        expectRoundedMatch(gx, 1, what + " grad");
      }
}

TYPED_TEST(KernelsHalf, LayerNormAndGradMatchF32) {
  constexpr zeroc_rt_dtype_t dt = TypeParam::dt;
  std::mt19937_64 rng(111);
  struct Case {
    Dims x;
    int64_t axis;
  };
  for (const Case &c :
       {Case{{4, 6}, 1}, Case{{2, 3, 4}, 1}, Case{{2, 3, 4}, -1},
        Case{{3, 64}, -1}, Case{{0, 5}, 1}})
    for (bool withBias : {false, true}) {
      int64_t axis = c.axis < 0 ? c.axis + int64_t(c.x.size()) : c.axis;
      Dims paramDims(c.x.begin() + axis, c.x.end());
      std::string what = "layer_norm " + dimsName(c.x) + " axis " +
                         std::to_string(c.axis) + (withBias ? " bias" : "");
      Twin x = randomTwin(dt, c.x, rng, -3, 5);
      Twin scale = randomTwin(dt, paramDims, rng, 0.5, 1.5);
      Twin bias = randomTwin(dt, paramDims, rng);
      Twin y = outputs(dt, c.x);
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_layer_norm(
          x.half.desc(), scale.half.desc(),
          withBias ? bias.half.desc() : nullptr, c.axis, 1e-5, y.half.desc()));
      ZEROC_RT_ASSERT_OK(
          zeroc_rt_k_layer_norm(x.single.desc(), scale.single.desc(),
                                withBias ? bias.single.desc() : nullptr, c.axis,
                                1e-5, y.single.desc()));
      expectRoundedMatch(y, 1, what);

      Twin gy = randomTwin(dt, c.x, rng), gx = outputs(dt, c.x);
      Twin gs = outputs(dt, paramDims), gb = outputs(dt, paramDims);
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_layer_norm_grad(
          x.half.desc(), scale.half.desc(), c.axis, 1e-5, gy.half.desc(),
          gx.half.desc(), gs.half.desc(), withBias ? gb.half.desc() : nullptr));
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_layer_norm_grad(
          x.single.desc(), scale.single.desc(), c.axis, 1e-5, gy.single.desc(),
          gx.single.desc(), gs.single.desc(),
          withBias ? gb.single.desc() : nullptr));
      expectRoundedMatch(gx, 1, what + " grad_x");
      expectRoundedMatch(gs, 1, what + " grad_scale");
      if (withBias)
        expectRoundedMatch(gb, 1, what + " grad_bias");
    }
}

TYPED_TEST(KernelsHalf, SoftmaxCrossEntropyAndGradMatchF32) {
  constexpr zeroc_rt_dtype_t dt = TypeParam::dt;
  std::mt19937_64 rng(112);
  struct Case {
    Dims scores;
    std::vector<double> labels;
    bool hasIgnore;
    int64_t ignoreIndex;
  };
  const Case cases[] = {
      {{4, 5}, {0, 4, 2, 1}, false, 0},
      {{4, 5}, {0, -100, 2, -100}, true, -100},
      {{2, 3, 2, 2}, {0, 1, 2, 0, 2, -1, 1, 1}, true, -1},
      {{2, 3}, {-7, -7}, true, -7},
      {{0, 3}, {}, false, 0},
      {{64, 10}, std::vector<double>(64, 3.0), false, 0},
  };
  for (zeroc_rt_dtype_t lt : {ZEROC_RT_DTYPE_I64, ZEROC_RT_DTYPE_I32})
    for (const Case &c : cases)
      for (zeroc_rt_loss_reduction_t red :
           {ZEROC_RT_LOSS_MEAN, ZEROC_RT_LOSS_SUM, ZEROC_RT_LOSS_NONE}) {
        Dims ld = {c.scores[0]};
        ld.insert(ld.end(), c.scores.begin() + 2, c.scores.end());
        Dims resultDims = red == ZEROC_RT_LOSS_NONE ? ld : Dims{};
        std::string what =
            "loss " + dimsName(c.scores) + " reduction " + std::to_string(red);
        HostTensor labels(lt, ld);
        labels.setValues(c.labels);
        Twin scores = randomTwin(dt, c.scores, rng, -6, 6);
        Twin out = outputs(dt, resultDims);
        ZEROC_RT_ASSERT_OK(zeroc_rt_k_softmax_cross_entropy(
            scores.half.desc(), labels.desc(), red, c.hasIgnore, c.ignoreIndex,
            out.half.desc()));
        ZEROC_RT_ASSERT_OK(zeroc_rt_k_softmax_cross_entropy(
            scores.single.desc(), labels.desc(), red, c.hasIgnore,
            c.ignoreIndex, out.single.desc()));
        expectRoundedMatch(out, 1, what);

        Twin gy = randomTwin(dt, resultDims, rng, 0.5, 2);
        Twin gx = outputs(dt, c.scores);
        ZEROC_RT_ASSERT_OK(zeroc_rt_k_softmax_cross_entropy_grad(
            scores.half.desc(), labels.desc(), red, c.hasIgnore, c.ignoreIndex,
            gy.half.desc(), gx.half.desc()));
        ZEROC_RT_ASSERT_OK(zeroc_rt_k_softmax_cross_entropy_grad(
            scores.single.desc(), labels.desc(), red, c.hasIgnore,
            c.ignoreIndex, gy.single.desc(), gx.single.desc()));
        expectRoundedMatch(gx, 1, what + " grad");
      }
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

TYPED_TEST(KernelsHalf, GatherAndGradMatchF32) {
  constexpr zeroc_rt_dtype_t dt = TypeParam::dt;
  std::mt19937_64 rng(113);
  struct Case {
    Dims data;
    int64_t axis;
    Dims indexDims;
    std::vector<double> indices;
  };
  const Case cases[] = {
      {{5, 3}, 0, {4}, {1, -1, 1, 0}},
      {{5, 3}, 1, {2, 2}, {2, 0, -3, 2}},
      {{2, 4, 3}, 1, {6}, {3, 3, 3, 0, -4, 1}},
      {{4, 2}, 0, {0}, {}},
  };
  for (zeroc_rt_dtype_t it : {ZEROC_RT_DTYPE_I64, ZEROC_RT_DTYPE_I32})
    for (const Case &c : cases) {
      HostTensor indices(it, c.indexDims);
      indices.setValues(c.indices);
      int64_t axis = c.axis;
      Dims outDims(c.data.begin(), c.data.begin() + axis);
      outDims.insert(outDims.end(), c.indexDims.begin(), c.indexDims.end());
      outDims.insert(outDims.end(), c.data.begin() + axis + 1, c.data.end());
      std::string what =
          "gather " + dimsName(c.data) + " axis " + std::to_string(axis);
      Twin data = randomTwin(dt, c.data, rng, -5, 5),
           out = outputs(dt, outDims);
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_gather(data.half.desc(), indices.desc(),
                                           axis, out.half.desc()));
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_gather(data.single.desc(), indices.desc(),
                                           axis, out.single.desc()));
      expectRoundedMatch(out, 0, what);

      Twin gy = randomTwin(dt, outDims, rng, -5, 5), gd = outputs(dt, c.data);
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_gather_grad(gy.half.desc(), indices.desc(),
                                                axis, gd.half.desc()));
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_gather_grad(
          gy.single.desc(), indices.desc(), axis, gd.single.desc()));
      expectRoundedMatch(gd, 0, what + " grad");
      // Summed into an F32 grad_data (zero-widen-gather-grad): the F32
      // kernel's sums, which the narrow result rounds.
      HostTensor wide(F32, c.data);
      wide.fill(-77.0);
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_gather_grad(gy.half.desc(), indices.desc(), axis, wide.desc()));
      EXPECT_EQ(wide.values(), gd.single.values()) << what << " grad into f32";
    }
  // 300 repeats of one index: a 16-bit running sum would stall (BF16: at
  // 256, as 256 + 1 rounds to 256); the float accumulator gives 300.
  HostTensor indices(ZEROC_RT_DTYPE_I64, {300});
  indices.fill(1);
  HostTensor ones(dt, {300, 2}), grad(dt, {3, 2});
  ones.fill(1.0);
  ZEROC_RT_ASSERT_OK(
      zeroc_rt_k_gather_grad(ones.desc(), indices.desc(), 0, grad.desc()));
  EXPECT_EQ(grad.values(), (std::vector<double>{0, 0, 300, 300, 0, 0}));
  HostTensor wide(F32, {3, 2});
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_gather_grad(ones.desc(), indices.desc(), 0, wide.desc()));
  EXPECT_EQ(wide.values(), (std::vector<double>{0, 0, 300, 300, 0, 0}));
}

TYPED_TEST(KernelsHalf, MovementKernelsMatchF32) {
  constexpr zeroc_rt_dtype_t dt = TypeParam::dt;
  std::mt19937_64 rng(114);
  Twin x = randomTwin(dt, {2, 3, 4}, rng, -100, 100);
  {
    const int64_t perm[3] = {2, 0, 1};
    Twin out = outputs(dt, {4, 2, 3});
    ZEROC_RT_ASSERT_OK(
        zeroc_rt_k_transpose(x.half.desc(), perm, out.half.desc()));
    ZEROC_RT_ASSERT_OK(
        zeroc_rt_k_transpose(x.single.desc(), perm, out.single.desc()));
    expectRoundedMatch(out, 0, "transpose");
  }
  {
    const int64_t starts[3] = {1, 2, 0}, steps[3] = {-1, -2, 3};
    Twin out = outputs(dt, {2, 2, 2});
    ZEROC_RT_ASSERT_OK(
        zeroc_rt_k_slice(x.half.desc(), starts, steps, out.half.desc()));
    ZEROC_RT_ASSERT_OK(
        zeroc_rt_k_slice(x.single.desc(), starts, steps, out.single.desc()));
    expectRoundedMatch(out, 0, "slice");
    Twin grad = outputs(dt, {2, 3, 4});
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_slice_grad(out.half.desc(), starts, steps,
                                             grad.half.desc()));
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_slice_grad(out.single.desc(), starts, steps,
                                             grad.single.desc()));
    expectRoundedMatch(grad, 0, "slice_grad");
  }
  {
    Twin y = randomTwin(dt, {2, 1, 4}, rng);
    const zeroc_rt_tensor_t *half[2] = {x.half.desc(), y.half.desc()};
    const zeroc_rt_tensor_t *single[2] = {x.single.desc(), y.single.desc()};
    Twin out = outputs(dt, {2, 4, 4});
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_concat(half, 2, 1, out.half.desc()));
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_concat(single, 2, 1, out.single.desc()));
    expectRoundedMatch(out, 0, "concat");
  }
  for (int upper : {0, 1}) {
    Twin out = outputs(dt, {2, 3, 4});
    ZEROC_RT_ASSERT_OK(
        zeroc_rt_k_trilu(x.half.desc(), upper, 1, out.half.desc()));
    ZEROC_RT_ASSERT_OK(
        zeroc_rt_k_trilu(x.single.desc(), upper, 1, out.single.desc()));
    expectRoundedMatch(out, 0, "trilu upper " + std::to_string(upper));
  }
  {
    Twin out = outputs(dt, {6, 4});
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_copy(x.half.desc(), out.half.desc()));
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_copy(x.single.desc(), out.single.desc()));
    expectRoundedMatch(out, 0, "copy");
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_zero(out.half.desc()));
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_zero(out.single.desc()));
    expectRoundedMatch(out, 0, "zero");
    for (int64_t i = 0; i < out.half.size(); ++i)
      ASSERT_EQ(out.half.as<uint16_t>()[i], 0u); // +0, not -0
  }
}

//===----------------------------------------------------------------------===//
// Flat-buffer math
//===----------------------------------------------------------------------===//

TYPED_TEST(KernelsHalf, AccumulateScaleSumSquaresMatchF32) {
  constexpr zeroc_rt_dtype_t dt = TypeParam::dt;
  std::mt19937_64 rng(115);
  for (int64_t n : {int64_t(1), int64_t(37), int64_t(1000)}) {
    Twin x = randomTwin(dt, {n}, rng, -10, 10);
    Twin acc = randomTwin(dt, {n}, rng, -10, 10);
    ZEROC_RT_ASSERT_OK(
        zeroc_rt_k_accumulate(dt, x.half.data(), acc.half.data(), n));
    ZEROC_RT_ASSERT_OK(
        zeroc_rt_k_accumulate(F32, x.single.data(), acc.single.data(), n));
    expectRoundedMatch(acc, 0, "accumulate n " + std::to_string(n));

    Twin s = randomTwin(dt, {n}, rng, -10, 10);
    for (double factor : {0.37, -1.0 / 3.0, 1e-3, 4096.0}) {
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_scale(dt, s.half.data(), n, factor));
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_scale(F32, s.single.data(), n, factor));
      expectRoundedMatch(s, 1, "scale " + std::to_string(factor));
      s = twinOf(s.half, dt); // continue from the same values
    }

    double half = -1.0, single = -2.0;
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_sum_squares(dt, x.half.data(), n, &half));
    ZEROC_RT_ASSERT_OK(
        zeroc_rt_k_sum_squares(F32, x.single.data(), n, &single));
    EXPECT_EQ(half, single) << "sum_squares n " << n;
  }
  // Scaling F16 past 65504 overflows to inf; n == 0 accepts NULL buffers.
  HostTensor big(dt, {2});
  big.setValues({60000.0, -1.0});
  double before = big.get(0);
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_scale(dt, big.data(), 2, 2.0));
  EXPECT_EQ(big.get(0),
            dt == ZEROC_RT_DTYPE_F16 ? INFINITY : roundTo(dt, 2 * before));
  EXPECT_EQ(big.get(1), -2.0);
  double got = -1.0;
  ZEROC_RT_EXPECT_OK(zeroc_rt_k_accumulate(dt, nullptr, nullptr, 0));
  ZEROC_RT_EXPECT_OK(zeroc_rt_k_scale(dt, nullptr, 0, 2.0));
  ZEROC_RT_EXPECT_OK(zeroc_rt_k_sum_squares(dt, nullptr, 0, &got));
  EXPECT_EQ(got, 0.0);
}

// The mixed-precision step: the 16-bit gradient into f32 with the
// unscale/clip factor, the f32 master back into 16 bits (rounded once).
TYPED_TEST(KernelsHalf, ConvertWidensWithAFactorAndRoundsBack) {
  constexpr zeroc_rt_dtype_t dt = TypeParam::dt;
  std::mt19937_64 rng(116);
  const int64_t n = 333;
  Twin g = randomTwin(dt, {n}, rng, -1000, 1000);
  HostTensor wide(F32, {n});
  const double factor = 1.0 / (3.0 * 65536.0);
  ZEROC_RT_ASSERT_OK(
      zeroc_rt_k_convert(dt, g.half.data(), F32, wide.data(), n, factor));
  for (int64_t i = 0; i < n; ++i)
    EXPECT_EQ(wide.get(i),
              static_cast<double>(static_cast<float>(g.half.get(i) * factor)))
        << i;
  HostTensor master(F32, {n}), back(dt, {n});
  for (int64_t i = 0; i < n; ++i)
    master.set(i, std::ldexp(static_cast<double>(i) - 166.0, -3) + 1e-4);
  master.set(0, 1e6); // beyond F16: inf there, finite in BF16
  ZEROC_RT_ASSERT_OK(
      zeroc_rt_k_convert(F32, master.data(), dt, back.data(), n, 1.0));
  for (int64_t i = 0; i < n; ++i)
    EXPECT_EQ(back.get(i), roundTo(dt, master.get(i))) << i;
  EXPECT_EQ(back.get(0), dt == ZEROC_RT_DTYPE_F16 ? INFINITY : roundTo(dt, 1e6));
  // n == 0 accepts NULL; overlap and non-float dtypes are rejected.
  ZEROC_RT_EXPECT_OK(zeroc_rt_k_convert(dt, nullptr, F32, nullptr, 0, 1.0));
  ZEROC_RT_EXPECT_ERROR(
      zeroc_rt_k_convert(dt, master.data(), F32, master.data(), 4, 1.0),
      ZEROC_RT_INVALID_ARGUMENT, "overlap");
  ZEROC_RT_EXPECT_ERROR(
      zeroc_rt_k_convert(ZEROC_RT_DTYPE_I32, master.data(), dt, back.data(), 4, 1.0),
      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_convert: dtype i32");
}

TYPED_TEST(KernelsHalf, OptimizerStepsRejectSixteenBitParams) {
  constexpr zeroc_rt_dtype_t dt = TypeParam::dt;
  uint16_t p[4] = {}, g[4] = {}, m[4] = {}, v[4] = {};
  std::string want = std::string("dtype ") + zeroc_rt_dtype_name(dt) + " (" +
                     std::to_string(dt) + "); expected f32 or f64";
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_adam_step(dt, p, g, m, v, 4, 0.1, 0.9, 0.999, 1e-8, 0, 1, 1, 1),
      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_adam_step", want);
  EXPECT_KERNEL_ERROR(zeroc_rt_k_sgd_step(dt, p, g, m, 4, 0.1, 0.9, 0.0, 0.0, 0, 1),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_sgd_step", want);
}

TYPED_TEST(KernelsHalf, MixedDtypesAreRejected) {
  constexpr zeroc_rt_dtype_t dt = TypeParam::dt;
  HostTensor h(dt, {2, 3}), f(F32, {2, 3}), hs(dt, {3, 2}), fs(F32, {3, 2});
  std::string name = zeroc_rt_dtype_name(dt);
  EXPECT_KERNEL_ERROR(zeroc_rt_k_unary(ZEROC_RT_UNARY_EXP, h.desc(), f.desc()),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_unary",
                      "out has dtype f32 but in has " + name);
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_binary(ZEROC_RT_BINARY_ADD, h.desc(), f.desc(), h.desc()),
      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_binary",
      "b has dtype f32 but a has " + name);
  HostTensor out(dt, {2, 2});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_matmul(h.desc(), fs.desc(), out.desc()),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_matmul",
                      "b has dtype f32 but a has " + name);
  EXPECT_KERNEL_ERROR(zeroc_rt_k_gemm(h.desc(), hs.desc(), f.desc(), 1.0, 1.0,
                                      0, 0, out.desc()),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_gemm",
                      "c has dtype f32 but a has " + name);
  HostTensor scale(F32, {3});
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_layer_norm(h.desc(), scale.desc(), nullptr, 1, 1e-5, h.desc()),
      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_layer_norm",
      "scale has dtype f32 but x has " + name);
  HostTensor sum(F32, {});
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_reduce(ZEROC_RT_REDUCE_OP_SUM, h.desc(), 3u, sum.desc()),
      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_reduce",
      "out has dtype f32 but in has " + name);
}

//===----------------------------------------------------------------------===//
// has_inf_or_nan
//===----------------------------------------------------------------------===//

/// Bit patterns of +inf, -inf and NaNs (quiet, signalling, negative) per
/// dtype, written with memcpy into element `at` of a buffer.
struct NonFinite {
  const char *name;
  uint64_t bits;
};

std::vector<NonFinite> nonFinites(zeroc_rt_dtype_t dt) {
  switch (dt) {
  case ZEROC_RT_DTYPE_F16:
    return {{"+inf", 0x7C00},
            {"-inf", 0xFC00},
            {"qnan", 0x7E00},
            {"snan", 0x7C01},
            {"-nan", 0xFFFF}};
  case ZEROC_RT_DTYPE_BF16:
    return {{"+inf", 0x7F80},
            {"-inf", 0xFF80},
            {"qnan", 0x7FC0},
            {"snan", 0x7F81},
            {"-nan", 0xFFFF}};
  case ZEROC_RT_DTYPE_F32:
    return {{"+inf", 0x7F800000},
            {"-inf", 0xFF800000},
            {"qnan", 0x7FC00000},
            {"snan", 0x7F800001},
            {"-nan", 0xFFFFFFFF}};
  default:
    return {{"+inf", 0x7FF0000000000000},
            {"-inf", 0xFFF0000000000000},
            {"qnan", 0x7FF8000000000000},
            {"snan", 0x7FF0000000000001},
            {"-nan", 0xFFFFFFFFFFFFFFFF}};
  }
}

const zeroc_rt_dtype_t kAllFloatDtypes[] = {
    ZEROC_RT_DTYPE_F16, ZEROC_RT_DTYPE_BF16, ZEROC_RT_DTYPE_F32,
    ZEROC_RT_DTYPE_F64};

TEST(KernelsHasInfOrNaN, FindsInfAndNaNAnywhereForEveryFloatDtype) {
  std::mt19937_64 rng(116);
  for (zeroc_rt_dtype_t dt : kAllFloatDtypes) {
    size_t size = zeroc_rt_dtype_size(dt);
    for (int64_t n :
         {int64_t(1), int64_t(2), int64_t(7), int64_t(4097), int64_t(10000)}) {
      // Finite extremes: max finite (+-), zeros, the smallest subnormal.
      HostTensor x = randomTensor(dt, {n}, rng, -1e3, 1e3);
      double maxFinite = dt == ZEROC_RT_DTYPE_F16    ? 65504.0
                         : dt == ZEROC_RT_DTYPE_BF16 ? 3.3895313892515355e38
                         : dt == ZEROC_RT_DTYPE_F32  ? double(FLT_MAX)
                                                     : DBL_MAX;
      const double extremes[] = {maxFinite, -maxFinite, -0.0, 0.0,
                                 std::ldexp(1.0, -24)};
      for (int64_t i = 0; i < n && i < 5; ++i)
        x.set(n - 1 - i, extremes[i]);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_TRUE(std::isfinite(x.get(i))) << zeroc_rt_dtype_name(dt);
      int found = -1;
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_has_inf_or_nan(dt, x.data(), n, &found));
      EXPECT_EQ(found, 0) << zeroc_rt_dtype_name(dt) << " n " << n;
      for (const NonFinite &bad : nonFinites(dt))
        for (int64_t at : {int64_t(0), n / 2, n - 1}) {
          HostTensor y = x;
          std::memcpy(static_cast<char *>(y.data()) + at * size, &bad.bits,
                      size); // little-endian: the low bytes
          found = -1;
          ZEROC_RT_ASSERT_OK(
              zeroc_rt_k_has_inf_or_nan(dt, y.data(), n, &found));
          EXPECT_EQ(found, 1) << zeroc_rt_dtype_name(dt) << " n " << n << " "
                              << bad.name << " at " << at;
        }
    }
    int found = -1;
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_has_inf_or_nan(dt, nullptr, 0, &found));
    EXPECT_EQ(found, 0);
  }
}

TEST(KernelsHasInfOrNaN, RejectsBadArguments) {
  const char *k = "zeroc_rt_k_has_inf_or_nan";
  alignas(8) uint64_t buf[4] = {};
  int found = 0;
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_has_inf_or_nan(ZEROC_RT_DTYPE_I32, buf, 4, &found),
      ZEROC_RT_INVALID_ARGUMENT, k,
      "dtype i32 (5); expected f32, f64, f16 or "
      "bf16");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_has_inf_or_nan(
                          static_cast<zeroc_rt_dtype_t>(42), buf, 4, &found),
                      ZEROC_RT_INVALID_ARGUMENT, k, "dtype invalid (42)");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_has_inf_or_nan(ZEROC_RT_DTYPE_F16, nullptr, 4, &found),
      ZEROC_RT_INVALID_ARGUMENT, k, "x is NULL");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_has_inf_or_nan(ZEROC_RT_DTYPE_F32, buf, 4, nullptr),
      ZEROC_RT_INVALID_ARGUMENT, k, "out is NULL");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_has_inf_or_nan(ZEROC_RT_DTYPE_BF16,
                                reinterpret_cast<char *>(buf) + 1, 2, &found),
      ZEROC_RT_INVALID_ARGUMENT, k, "not aligned");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_has_inf_or_nan(ZEROC_RT_DTYPE_F64, buf, -1, &found),
      ZEROC_RT_INVALID_ARGUMENT, k, "element count -1");
}

//===----------------------------------------------------------------------===//
// The kernels' inline conversions against the reference ones
//===----------------------------------------------------------------------===//

/// Every 16-bit pattern decodes like the reference; encoding matches the
/// reference on every representable value, every midpoint between
/// neighbours, one double and one float ULP either side of each midpoint,
/// random doubles over the whole exponent range, and the specials.
TEST(KernelsHalfConversion, InlineConversionsMatchReference) {
  struct Format {
    const char *name;
    double (*decode)(uint16_t);
    uint16_t (*encode)(double);
    float (*fastDecode)(uint16_t);
    uint16_t (*fastEncode)(double);
    uint16_t inf;
  };
  const Format formats[] = {{"f16", zk::decodeF16, zk::encodeF16,
                             zk::f16BitsToFloat, zk::toF16Bits, 0x7C00},
                            {"bf16", zk::decodeBF16, zk::encodeBF16,
                             zk::bf16BitsToFloat, zk::toBF16Bits, 0x7F80}};
  std::mt19937_64 rng(117);
  for (const Format &f : formats) {
    int failures = 0;
    auto check = [&](double v) {
      uint16_t want = f.encode(v), got = f.fastEncode(v);
      if (want != got && ++failures <= 5)
        ADD_FAILURE() << f.name << ": " << v << " (" << std::hexfloat << v
                      << std::defaultfloat << ") encodes to 0x" << std::hex
                      << got << ", reference 0x" << want << std::dec;
    };
    for (uint32_t h = 0; h < 65536; ++h) {
      auto bits = static_cast<uint16_t>(h);
      double want = f.decode(bits);
      float got = f.fastDecode(bits);
      bool ok = std::isnan(want)
                    ? std::isnan(got) && std::signbit(got) == std::signbit(want)
                    : static_cast<double>(got) == want &&
                          std::signbit(got) == std::signbit(want);
      if (!ok && ++failures <= 5)
        ADD_FAILURE() << f.name << ": 0x" << std::hex << h << std::dec
                      << " decodes to " << got << ", reference " << want;
      check(want);
      // Midpoints to the next pattern of the same sign (up to inf).
      if ((bits & 0x7FFF) < f.inf) {
        double next = f.decode(static_cast<uint16_t>(bits + 1));
        if (std::isinf(next)) // the overflow threshold: max + ulp / 2
          next = want + (want - f.decode(static_cast<uint16_t>(bits - 1)));
        double mid = (want + next) / 2; // exact in double
        check(mid);
        check(std::nextafter(mid, INFINITY));
        check(std::nextafter(mid, -INFINITY));
        auto fm = static_cast<float>(mid);
        check(std::nextafter(fm, std::numeric_limits<float>::infinity()));
        check(std::nextafter(fm, -std::numeric_limits<float>::infinity()));
      }
    }
    std::uniform_real_distribution<double> exponent(-1100.0, 1100.0);
    for (int i = 0; i < 200000; ++i) {
      double v = std::exp2(exponent(rng));
      check(i % 2 ? -v : v);
      check(static_cast<float>(v));
    }
    for (double v :
         {0.0, -0.0, double(INFINITY), -double(INFINITY), double(NAN),
          -double(NAN), DBL_MAX, -DBL_MAX, DBL_MIN, DBL_TRUE_MIN,
          double(FLT_MAX), double(FLT_MIN), 65504.0, 65519.99, 65520.0,
          std::ldexp(1.0, -25), std::ldexp(1.0, -134), std::ldexp(1.0, -133),
          std::ldexp(3.0, -135)})
      check(v);
  }
}

} // namespace
