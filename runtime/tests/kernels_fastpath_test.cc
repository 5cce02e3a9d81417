//===- kernels_fastpath_test.cc - Fast paths against element loops --------===//
//
// The kernels' row conversions (loadRow / storeRow: F16C, AVX2 or portable)
// and their fast paths (chunked 16-bit elementwise loops, contiguous and
// broadcast rows, blocked sums, tiled transposes, cached softmax lines,
// chunked layer-norm and loss rows) must give the bits of the plain element
// loops they replace. The references here are those element loops: every
// element is read exactly, computed on in the kernel's compute type in the
// kernel's order, and rounded once with the reference encoders
// (zeroc_rt::kernels::encodeF16/BF16). Shapes straddle the chunk (256), tile
// (32) and line-cache (1024) sizes and mix contiguous, broadcast and strided
// operands. Outputs compare bit for bit, except that NaN results only need
// to be NaN: the sign and payload of a NaN that arithmetic produces are the
// hardware's and the compiler's (-g * v may be computed as -(g * v)).
//
//===----------------------------------------------------------------------===//

#include "kernels_test_util.h"

#include "kernels/scalar_types.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

using namespace zeroc_rt::test;
namespace zk = zeroc_rt::kernels;

namespace {

constexpr zeroc_rt_dtype_t F32 = ZEROC_RT_DTYPE_F32;
constexpr zeroc_rt_dtype_t F64 = ZEROC_RT_DTYPE_F64;
constexpr zeroc_rt_dtype_t F16 = ZEROC_RT_DTYPE_F16;
constexpr zeroc_rt_dtype_t BF16 = ZEROC_RT_DTYPE_BF16;
const zeroc_rt_dtype_t kFloatDtypes[] = {F32, F64, F16, BF16};

const char *dtypeName(zeroc_rt_dtype_t dt) {
  switch (dt) {
  case F32:
    return "f32";
  case F64:
    return "f64";
  case F16:
    return "f16";
  case BF16:
    return "bf16";
  default:
    return "other";
  }
}

uint32_t bitsOf(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}
float floatOf(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

/// Element i as the kernels' compute type sees it: float for F32/F16/BF16
/// (exact), double for F64; returned as double.
double computeValue(const HostTensor &t, int64_t i) { return t.get(i); }

/// Rounds `v` (exact in the compute type) once into element i of `t`.
void store(HostTensor &t, int64_t i, double v) { t.set(i, v); }

/// Random values in [-2, 2) with zeros, signed zeros, large values and a
/// NaN sprinkled in (every element's dtype holds them).
HostTensor mixedTensor(zeroc_rt_dtype_t dt, const Dims &dims,
                       std::mt19937_64 &rng, bool specials = true) {
  HostTensor t = randomTensor(dt, dims, rng, -2.0, 2.0);
  if (!specials)
    return t;
  const double extra[] = {0.0, -0.0, 1e-6, -3e-5, 1000.0, NAN, INFINITY};
  for (int64_t i = 0; i < t.size(); i += 37)
    t.set(i, extra[(i / 37) % 7]);
  return t;
}

/// EXPECT got == want bit for bit (NaN float elements: both NaN).
void expectSameBits(const HostTensor &got, const HostTensor &want,
                    const std::string &what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.dims(), want.dims()) << what;
  const size_t size = zeroc_rt_dtype_size(got.dtype());
  const bool isFloat = got.dtype() == F32 || got.dtype() == F64 ||
                       got.dtype() == F16 || got.dtype() == BF16;
  int failures = 0;
  for (int64_t i = 0; i < got.size(); ++i) {
    const auto *g = static_cast<const unsigned char *>(
                        const_cast<HostTensor &>(got).data()) +
                    i * size;
    const auto *w = static_cast<const unsigned char *>(
                        const_cast<HostTensor &>(want).data()) +
                    i * size;
    if (std::memcmp(g, w, size) == 0)
      continue;
    if (isFloat && std::isnan(got.get(i)) && std::isnan(want.get(i)))
      continue;
    if (++failures <= 5)
      ADD_FAILURE() << what << ": element " << i << " is " << got.get(i)
                    << ", want " << want.get(i);
  }
}

//===----------------------------------------------------------------------===//
// Row conversions
//===----------------------------------------------------------------------===//

/// loadRow gives f16BitsToFloat's / bf16BitsToFloat's bits for every
/// pattern, whatever the row's start and length (vector bodies and tails),
/// and so does the branch-free element decoder of the portable rows.
TEST(KernelsFastPath, RowLoadsMatchElementLoads) {
  std::vector<zk::F16> h(65536);
  std::vector<zk::BF16> b(65536);
  for (uint32_t i = 0; i < 65536; ++i) {
    h[i].bits = static_cast<uint16_t>(i);
    b[i].bits = static_cast<uint16_t>(i);
  }
  std::vector<float> out(65536);
  for (int64_t start : {0, 3}) {
    for (int64_t length : {int64_t(65536) - start, int64_t(13)}) {
      int failures = 0;
      zk::loadRow(h.data() + start, out.data(), length);
      for (int64_t i = 0; i < length; ++i) {
        auto bits = static_cast<uint16_t>(start + i);
        uint32_t want = bitsOf(zk::f16BitsToFloat(bits));
        uint32_t got = bitsOf(out[i]);
        uint32_t branchFree = bitsOf(zk::detail::f16ToFloatBranchFree(bits));
        if ((got != want || branchFree != want) && ++failures <= 5)
          ADD_FAILURE() << "f16 0x" << std::hex << bits << ": row 0x" << got
                        << ", branch-free 0x" << branchFree << ", want 0x"
                        << want;
      }
      zk::loadRow(b.data() + start, out.data(), length);
      for (int64_t i = 0; i < length; ++i) {
        auto bits = static_cast<uint16_t>(start + i);
        uint32_t want = bitsOf(zk::bf16BitsToFloat(bits));
        if (bitsOf(out[i]) != want && ++failures <= 5)
          ADD_FAILURE() << "bf16 0x" << std::hex << bits << ": row 0x"
                        << bitsOf(out[i]) << ", want 0x" << want;
      }
    }
  }
  // The element decoders against the reference decoders.
  for (uint32_t i = 0; i < 65536; ++i) {
    auto bits = static_cast<uint16_t>(i);
    for (bool bf : {false, true}) {
      double want = bf ? zk::decodeBF16(bits) : zk::decodeF16(bits);
      float got = bf ? zk::bf16BitsToFloat(bits) : zk::f16BitsToFloat(bits);
      bool ok = std::isnan(want)
                    ? std::isnan(got) && std::signbit(got) == std::signbit(want)
                    : static_cast<double>(got) == want &&
                          std::signbit(got) == std::signbit(want);
      EXPECT_TRUE(ok) << (bf ? "bf16 0x" : "f16 0x") << std::hex << i;
    }
  }
}

/// Floats where rounding to the 16-bit formats is delicate: every 16-bit
/// value, the midpoints to its neighbours and float ULPs around them, the
/// subnormal, overflow and NaN edges, a lattice over all patterns and
/// random patterns.
std::vector<float> encodingSamples() {
  std::vector<float> v;
  auto around = [&](float f) {
    float lo = f, hi = f;
    v.push_back(f);
    for (int k = 0; k < 2; ++k) {
      lo = std::nextafter(lo, -INFINITY);
      hi = std::nextafter(hi, INFINITY);
      v.push_back(lo);
      v.push_back(hi);
    }
  };
  for (bool bf : {false, true}) {
    auto decode = [&](uint32_t bits) {
      return bf ? zk::decodeBF16(static_cast<uint16_t>(bits))
                : zk::decodeF16(static_cast<uint16_t>(bits));
    };
    const uint32_t inf = bf ? 0x7F80u : 0x7C00u;
    for (uint32_t h = 0; h < 65536; ++h) {
      if ((h & 0x7FFFu) >= inf)
        continue;
      double value = decode(h);
      around(static_cast<float>(value));
      double next = decode(h + 1);
      if ((h & 0x7FFFu) + 1 == inf) // the overflow threshold: max + ulp / 2
        next = value + (value - decode(h - 1));
      around(static_cast<float>((value + next) / 2)); // exact in float
    }
  }
  const uint32_t specials[] = {
      0x00000000u, 0x80000000u, 0x00000001u, 0x807FFFFFu, 0x00800000u,
      0x7F7FFFFFu, 0xFF7FFFFFu, 0x7F800000u, 0xFF800000u, 0x7FC00000u,
      0xFFC00000u, 0x7F800001u, 0xFF800001u, 0x7FFFFFFFu, 0x7FA00000u,
      0xFFC02000u, 0x47800000u, 0x477FF000u, 0x33000000u, 0x33800000u,
      0x387FC000u};
  for (uint32_t s : specials)
    around(floatOf(s));
  for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 65537)
    v.push_back(floatOf(static_cast<uint32_t>(u)));
  std::mt19937 rng(29);
  for (int i = 0; i < (1 << 20); ++i)
    v.push_back(floatOf(rng()));
  return v;
}

/// Every float rounding (element and row, F16C or portable) equals the
/// reference encoder's on the float's value as a double.
TEST(KernelsFastPath, FloatEncodingsMatchReference) {
  const std::vector<float> samples = encodingSamples();
  const auto n = static_cast<int64_t>(samples.size());
  std::vector<zk::F16> rowH(samples.size()), tailH(samples.size());
  std::vector<zk::BF16> rowB(samples.size()), tailB(samples.size());
  zk::storeRow(samples.data(), rowH.data(), n);
  zk::storeRow(samples.data(), rowB.data(), n);
  zk::storeRow(samples.data() + 5, tailH.data(), n - 5);
  zk::storeRow(samples.data() + 5, tailB.data(), n - 5);
  int failures = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float f = samples[i];
    const double d = f;
    const uint16_t wantH = zk::encodeF16(d), wantB = zk::encodeBF16(d);
    const uint16_t gotH[] = {
        zk::floatToF16Bits(f), zk::detail::floatToF16BranchFree(f),
        zk::toF16Bits(d), rowH[i].bits, i >= 5 ? tailH[i - 5].bits : wantH};
    const uint16_t gotB[] = {zk::floatToBF16Bits(f), zk::toBF16Bits(d),
                             rowB[i].bits, i >= 5 ? tailB[i - 5].bits : wantB};
    for (uint16_t g : gotH)
      if (g != wantH && ++failures <= 10)
        ADD_FAILURE() << "f16 of 0x" << std::hex << bitsOf(f) << " is 0x" << g
                      << ", reference 0x" << wantH;
    for (uint16_t g : gotB)
      if (g != wantB && ++failures <= 10)
        ADD_FAILURE() << "bf16 of 0x" << std::hex << bitsOf(f) << " is 0x" << g
                      << ", reference 0x" << wantB;
  }
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

/// op on the compute type, as zeroc_rt_k_binary computes it.
template <typename C> C binaryOp(zeroc_rt_binary_op_t op, C x, C y) {
  switch (op) {
  case ZEROC_RT_BINARY_ADD:
    return x + y;
  case ZEROC_RT_BINARY_SUB:
    return x - y;
  case ZEROC_RT_BINARY_MUL:
    return x * y;
  case ZEROC_RT_BINARY_DIV:
    return x / y;
  default:
    return std::pow(x, y);
  }
}

TEST(KernelsFastPath, BinaryMatchesElementLoop) {
  const std::pair<Dims, Dims> shapes[] = {{{3, 300}, {3, 300}},
                                          {{}, {3, 300}},
                                          {{3, 300}, {}},
                                          {{300}, {3, 300}},
                                          {{3, 1}, {3, 300}},
                                          {{2, 1, 7}, {1, 300, 7}},
                                          {{}, {}},
                                          {{2, 3, 1}, {1, 1, 4}}};
  const zeroc_rt_binary_op_t ops[] = {ZEROC_RT_BINARY_ADD, ZEROC_RT_BINARY_SUB,
                                      ZEROC_RT_BINARY_MUL, ZEROC_RT_BINARY_DIV,
                                      ZEROC_RT_BINARY_POW};
  std::mt19937_64 rng(41);
  for (zeroc_rt_dtype_t dt : kFloatDtypes)
    for (const auto &[da, db] : shapes)
      for (zeroc_rt_binary_op_t op : ops) {
        HostTensor a = mixedTensor(dt, da, rng), b = mixedTensor(dt, db, rng);
        Dims dims = broadcastDims(da, db);
        HostTensor got(dt, dims), want(dt, dims);
        ZEROC_RT_EXPECT_OK(
            zeroc_rt_k_binary(op, a.desc(), b.desc(), got.desc()));
        for (int64_t i = 0; i < want.size(); ++i) {
          Dims index = unravel(i, dims);
          double x = computeValue(a, broadcastSource(index, da));
          double y = computeValue(b, broadcastSource(index, db));
          store(want, i,
                dt == F64 ? binaryOp(op, x, y)
                          : binaryOp(op, static_cast<float>(x),
                                     static_cast<float>(y)));
        }
        expectSameBits(got, want,
                       std::string(dtypeName(dt)) + " op " +
                           std::to_string(op) + " " + dimsName(da) + " " +
                           dimsName(db));
      }
}

/// zeroc_rt_k_unary's and zeroc_rt_k_unary_grad's functions on float.
float unaryF(zeroc_rt_unary_op_t op, float x) {
  switch (op) {
  case ZEROC_RT_UNARY_NEG:
    return -x;
  case ZEROC_RT_UNARY_SQRT:
    return std::sqrt(x);
  case ZEROC_RT_UNARY_RECIPROCAL:
    return 1.0f / x;
  case ZEROC_RT_UNARY_RELU:
    return x > 0.0f || std::isnan(x) ? x : 0.0f;
  case ZEROC_RT_UNARY_TANH:
    return std::tanh(x);
  case ZEROC_RT_UNARY_SIGMOID:
    return 1.0f / (1.0f + std::exp(-x));
  case ZEROC_RT_UNARY_ERF:
    return std::erf(x);
  case ZEROC_RT_UNARY_EXP:
    return std::exp(x);
  case ZEROC_RT_UNARY_LOG:
    return std::log(x);
  }
  return NAN;
}
float unaryGradF(zeroc_rt_unary_op_t op, float g, float x, float y) {
  switch (op) {
  case ZEROC_RT_UNARY_NEG:
    return -g;
  case ZEROC_RT_UNARY_SQRT:
    return g / (2.0f * y);
  case ZEROC_RT_UNARY_RECIPROCAL:
    return -g * (y * y);
  case ZEROC_RT_UNARY_RELU:
    return x > 0.0f ? g : 0.0f;
  case ZEROC_RT_UNARY_TANH:
    return g * (1.0f - y * y);
  case ZEROC_RT_UNARY_SIGMOID:
    return g * (1.0f - y) * y;
  case ZEROC_RT_UNARY_ERF:
    return g * static_cast<float>(1.12837916709551257389615890312) *
           std::exp(-x * x);
  case ZEROC_RT_UNARY_EXP:
    return g * y;
  case ZEROC_RT_UNARY_LOG:
    return g / x;
  }
  return NAN;
}

TEST(KernelsFastPath, UnaryAndGradMatchElementLoop) {
  std::mt19937_64 rng(43);
  for (zeroc_rt_dtype_t dt : {F16, BF16})
    for (int op = ZEROC_RT_UNARY_NEG; op <= ZEROC_RT_UNARY_LOG; ++op) {
      auto u = static_cast<zeroc_rt_unary_op_t>(op);
      const Dims dims = {1000};
      HostTensor x = mixedTensor(dt, dims, rng), y = mixedTensor(dt, dims, rng),
                 g = mixedTensor(dt, dims, rng);
      HostTensor got(dt, dims), want(dt, dims), gotGrad(dt, dims),
          wantGrad(dt, dims);
      ZEROC_RT_EXPECT_OK(zeroc_rt_k_unary(u, x.desc(), got.desc()));
      ZEROC_RT_EXPECT_OK(zeroc_rt_k_unary_grad(u, x.desc(), y.desc(), g.desc(),
                                               gotGrad.desc()));
      for (int64_t i = 0; i < x.size(); ++i) {
        auto xf = static_cast<float>(x.get(i));
        auto yf = static_cast<float>(y.get(i));
        auto gf = static_cast<float>(g.get(i));
        store(want, i, unaryF(u, xf));
        store(wantGrad, i, unaryGradF(u, gf, xf, yf));
      }
      std::string what =
          std::string(dtypeName(dt)) + " unary " + std::to_string(op);
      expectSameBits(got, want, what);
      expectSameBits(gotGrad, wantGrad, what + " grad");
    }
}

TEST(KernelsFastPath, CastMatchesElementLoop) {
  std::mt19937_64 rng(47);
  for (zeroc_rt_dtype_t from : kFloatDtypes)
    for (zeroc_rt_dtype_t to : kFloatDtypes) {
      HostTensor in = mixedTensor(from, {1001}, rng);
      if (from == F32 || from == F64)
        for (int64_t i = 1; i < in.size(); i += 5) // values needing rounding
          in.set(i, in.get(i) * (1.0 + std::ldexp(1.0, -12)) + 1e-7);
      HostTensor got(to, {1001}), want(to, {1001});
      ZEROC_RT_EXPECT_OK(zeroc_rt_k_cast(in.desc(), got.desc()));
      for (int64_t i = 0; i < in.size(); ++i)
        store(want, i, in.get(i));
      expectSameBits(got, want,
                     std::string("cast ") + dtypeName(from) + " -> " +
                         dtypeName(to));
    }
}

TEST(KernelsFastPath, WhereMatchesElementLoop) {
  struct Case {
    Dims cond, a, b;
  };
  const Case cases[] = {{{1, 5}, {}, {4, 5}},
                        {{4, 1}, {4, 5}, {1, 5}},
                        {{4, 300}, {4, 300}, {4, 300}},
                        {{3, 1, 300}, {1, 2, 300}, {}},
                        {{}, {2, 3}, {3}}};
  std::mt19937_64 rng(53);
  for (zeroc_rt_dtype_t dt :
       {ZEROC_RT_DTYPE_U8, F16, F32, F64, ZEROC_RT_DTYPE_I64}) {
    for (const Case &c : cases) {
      HostTensor cond = randomTensor(ZEROC_RT_DTYPE_BOOL, c.cond, rng, 0, 1);
      HostTensor a = randomTensor(dt, c.a, rng, 0, 100);
      HostTensor b = randomTensor(dt, c.b, rng, 0, 100);
      Dims dims = broadcastDims(broadcastDims(c.cond, c.a), c.b);
      HostTensor got(dt, dims), want(dt, dims);
      ZEROC_RT_EXPECT_OK(
          zeroc_rt_k_where(cond.desc(), a.desc(), b.desc(), got.desc()));
      for (int64_t i = 0; i < want.size(); ++i) {
        Dims index = unravel(i, dims);
        bool pick = cond.get(broadcastSource(index, c.cond)) != 0.0;
        want.set(i, pick ? a.get(broadcastSource(index, c.a))
                         : b.get(broadcastSource(index, c.b)));
      }
      expectSameBits(got, want,
                     std::string("where ") + dtypeName(dt) + " " +
                         dimsName(c.cond) + " " + dimsName(c.a) + " " +
                         dimsName(c.b));
    }
  }
}

//===----------------------------------------------------------------------===//
// Sums and data movement
//===----------------------------------------------------------------------===//

/// Sums of `in` over the dims in `mask` (double from 0.0, reduced indices
/// in row-major order), divided by the count for a mean, rounded once.
HostTensor referenceSums(const HostTensor &in, uint32_t mask, bool mean,
                         const Dims &outDims) {
  const Dims &dims = in.dims();
  Dims kept, reduced;
  for (size_t d = 0; d < dims.size(); ++d)
    ((mask >> d) & 1u ? reduced : kept).push_back(dims[d]);
  HostTensor out(in.dtype(), outDims);
  const int64_t count = numel(reduced);
  for (int64_t o = 0; o < numel(kept); ++o) {
    Dims keptIndex = unravel(o, kept);
    double acc = 0.0;
    for (int64_t r = 0; r < count; ++r) {
      Dims reducedIndex = unravel(r, reduced), index(dims.size());
      size_t k = 0, q = 0;
      for (size_t d = 0; d < dims.size(); ++d)
        index[d] = (mask >> d) & 1u ? reducedIndex[q++] : keptIndex[k++];
      acc += computeValue(in, ravel(index, dims));
    }
    store(out, o, mean ? acc / static_cast<double>(count) : acc);
  }
  return out;
}

TEST(KernelsFastPath, SumToMatchesElementLoop) {
  const std::pair<Dims, Dims> cases[] = {{{3, 2, 700}, {700}},
                                         {{3, 2, 700}, {2, 700}},
                                         {{3, 2, 700}, {3, 1, 700}},
                                         {{5, 300}, {5, 1}},
                                         {{4, 300, 3}, {1, 300, 1}},
                                         {{2, 0, 5}, {5}},
                                         {{6, 7}, {6, 7}}};
  std::mt19937_64 rng(59);
  for (zeroc_rt_dtype_t dt : kFloatDtypes)
    for (const auto &[inDims, outDims] : cases) {
      HostTensor in = mixedTensor(dt, inDims, rng, false);
      uint32_t mask = 0;
      size_t lead = inDims.size() - outDims.size();
      for (size_t d = 0; d < inDims.size(); ++d)
        if (d < lead || (outDims[d - lead] == 1 && inDims[d] != 1))
          mask |= 1u << d;
      HostTensor got(dt, outDims);
      ZEROC_RT_EXPECT_OK(zeroc_rt_k_sum_to(in.desc(), got.desc()));
      expectSameBits(got, referenceSums(in, mask, false, outDims),
                     std::string("sum_to ") + dtypeName(dt) + " " +
                         dimsName(inDims) + " -> " + dimsName(outDims));
    }
}

TEST(KernelsFastPath, ReduceSumAndMeanMatchElementLoop) {
  std::mt19937_64 rng(61);
  const Dims dims = {4, 3, 5, 70};
  for (zeroc_rt_dtype_t dt : kFloatDtypes)
    for (uint32_t mask = 0; mask < 16; ++mask)
      for (auto op : {ZEROC_RT_REDUCE_OP_SUM, ZEROC_RT_REDUCE_OP_MEAN}) {
        HostTensor in = mixedTensor(dt, dims, rng, false);
        Dims outDims;
        for (size_t d = 0; d < dims.size(); ++d)
          outDims.push_back((mask >> d) & 1u ? 1 : dims[d]);
        HostTensor got(dt, outDims);
        ZEROC_RT_EXPECT_OK(zeroc_rt_k_reduce(op, in.desc(), mask, got.desc()));
        expectSameBits(
            got,
            referenceSums(in, mask, op == ZEROC_RT_REDUCE_OP_MEAN, outDims),
            std::string("reduce ") + dtypeName(dt) + " mask " +
                std::to_string(mask) + " op " + std::to_string(op));
      }
}

TEST(KernelsFastPath, TransposeAndBroadcastMatchElementLoop) {
  const std::pair<Dims, Dims> cases[] = {{{37, 70}, {1, 0}},
                                         {{3, 33, 65}, {0, 2, 1}},
                                         {{2, 40, 3, 35}, {0, 2, 3, 1}},
                                         {{2, 40, 3, 35}, {0, 2, 1, 3}},
                                         {{5, 64, 40}, {2, 1, 0}},
                                         {{1, 33, 1, 2}, {3, 2, 1, 0}}};
  std::mt19937_64 rng(67);
  for (zeroc_rt_dtype_t dt : {ZEROC_RT_DTYPE_BOOL, F16, F32, F64}) {
    for (const auto &[dims, perm] : cases) {
      HostTensor in = randomTensor(dt, dims, rng, 0, 1);
      Dims outDims;
      for (int64_t p : perm)
        outDims.push_back(dims[p]);
      HostTensor got(dt, outDims), want(dt, outDims);
      ZEROC_RT_EXPECT_OK(
          zeroc_rt_k_transpose(in.desc(), perm.data(), got.desc()));
      for (int64_t i = 0; i < want.size(); ++i) {
        Dims outIndex = unravel(i, outDims), inIndex(dims.size());
        for (size_t d = 0; d < perm.size(); ++d)
          inIndex[perm[d]] = outIndex[d];
        want.set(i, in.get(ravel(inIndex, dims)));
      }
      expectSameBits(got, want,
                     std::string("transpose ") + dtypeName(dt) + " " +
                         dimsName(dims));
    }
    for (const auto &[from, to] : std::vector<std::pair<Dims, Dims>>{
             {{1, 300}, {4, 300}}, {{4, 1}, {4, 300}}, {{}, {3, 5}}}) {
      HostTensor in = randomTensor(dt, from, rng, 0, 1);
      HostTensor got(dt, to), want(dt, to);
      ZEROC_RT_EXPECT_OK(zeroc_rt_k_broadcast(in.desc(), got.desc()));
      for (int64_t i = 0; i < want.size(); ++i)
        want.set(i, in.get(broadcastSource(unravel(i, to), from)));
      expectSameBits(got, want,
                     std::string("broadcast ") + dtypeName(dt) + " " +
                         dimsName(from));
    }
  }
}

//===----------------------------------------------------------------------===//
// Softmax, layer norm, loss
//===----------------------------------------------------------------------===//

/// x viewed as (outer, len, inner) around `axis`; base of line (o, i).
struct Lines {
  int64_t outer = 1, len = 1, inner = 1;
  Lines(const Dims &dims, size_t axis) {
    for (size_t d = 0; d < dims.size(); ++d)
      (d < axis ? outer : d == axis ? len : inner) *= dims[d];
  }
  int64_t at(int64_t o, int64_t i, int64_t j) const {
    return (o * len + j) * inner + i;
  }
};

TEST(KernelsFastPath, SoftmaxAndGradMatchElementLoop) {
  const std::pair<Dims, int64_t> cases[] = {
      {{3, 5, 300}, 2}, {{3, 5, 300}, 1}, {{2, 1100}, 1}, {{2, 1100, 2}, 1}};
  std::mt19937_64 rng(71);
  for (zeroc_rt_dtype_t dt : kFloatDtypes)
    for (const auto &[dims, axis] : cases)
      for (int log = 0; log < 2; ++log) {
        HostTensor x = mixedTensor(dt, dims, rng, false);
        HostTensor gy = mixedTensor(dt, dims, rng, false);
        HostTensor y(dt, dims), want(dt, dims), gx(dt, dims),
            wantGrad(dt, dims);
        ZEROC_RT_EXPECT_OK(zeroc_rt_k_softmax(x.desc(), axis, log, y.desc()));
        Lines v(dims, static_cast<size_t>(axis));
        for (int64_t o = 0; o < v.outer; ++o)
          for (int64_t i = 0; i < v.inner; ++i) {
            double max = -INFINITY, sum = 0.0;
            for (int64_t j = 0; j < v.len; ++j)
              max = std::fmax(max, computeValue(x, v.at(o, i, j)));
            for (int64_t j = 0; j < v.len; ++j)
              sum += std::exp(computeValue(x, v.at(o, i, j)) - max);
            double logSum = std::log(sum);
            for (int64_t j = 0; j < v.len; ++j) {
              double xv = computeValue(x, v.at(o, i, j));
              store(want, v.at(o, i, j),
                    log ? xv - max - logSum : std::exp(xv - max) / sum);
            }
            // The gradient at the kernel's own output.
            double acc = 0.0;
            for (int64_t j = 0; j < v.len; ++j) {
              int64_t e = v.at(o, i, j);
              acc += log ? computeValue(gy, e)
                         : computeValue(gy, e) * computeValue(y, e);
            }
            for (int64_t j = 0; j < v.len; ++j) {
              int64_t e = v.at(o, i, j);
              double yv = computeValue(y, e), gv = computeValue(gy, e);
              store(wantGrad, e,
                    log ? gv - std::exp(yv) * acc : yv * (gv - acc));
            }
          }
        ZEROC_RT_EXPECT_OK(
            zeroc_rt_k_softmax_grad(y.desc(), gy.desc(), axis, log, gx.desc()));
        std::string what = std::string(dtypeName(dt)) + " softmax " +
                           dimsName(dims) + " axis " + std::to_string(axis) +
                           (log ? " log" : "");
        expectSameBits(y, want, what);
        expectSameBits(gx, wantGrad, what + " grad");
      }
}

TEST(KernelsFastPath, LayerNormAndGradMatchElementLoop) {
  const std::pair<Dims, int64_t> cases[] = {
      {{3, 300}, 1}, {{2, 3, 100}, 1}, {{4, 7}, 1}};
  const double eps = 1e-5;
  std::mt19937_64 rng(73);
  for (zeroc_rt_dtype_t dt : kFloatDtypes)
    for (const auto &[dims, axis] : cases)
      for (bool withBias : {true, false}) {
        Dims paramDims(dims.begin() + axis, dims.end());
        HostTensor x = mixedTensor(dt, dims, rng, false);
        HostTensor scale = mixedTensor(dt, paramDims, rng, false);
        HostTensor bias = mixedTensor(dt, paramDims, rng, false);
        HostTensor gy = mixedTensor(dt, dims, rng, false);
        HostTensor y(dt, dims), gx(dt, dims), gs(dt, paramDims),
            gb(dt, paramDims);
        ZEROC_RT_EXPECT_OK(zeroc_rt_k_layer_norm(
            x.desc(), scale.desc(), withBias ? bias.desc() : nullptr, axis, eps,
            y.desc()));
        ZEROC_RT_EXPECT_OK(zeroc_rt_k_layer_norm_grad(
            x.desc(), scale.desc(), axis, eps, gy.desc(), gx.desc(), gs.desc(),
            gb.desc()));
        const int64_t n = numel(paramDims), rows = x.size() / n;
        HostTensor wantY(dt, dims), wantGx(dt, dims), wantGs(dt, paramDims),
            wantGb(dt, paramDims);
        std::vector<double> sumScale(n, 0.0), sumBias(n, 0.0);
        const double invN = 1.0 / static_cast<double>(n);
        for (int64_t r = 0; r < rows; ++r) {
          auto xv = [&](int64_t j) { return computeValue(x, r * n + j); };
          double sum = 0.0, sq = 0.0;
          for (int64_t j = 0; j < n; ++j)
            sum += xv(j);
          double mean = sum / static_cast<double>(n);
          for (int64_t j = 0; j < n; ++j)
            sq += (xv(j) - mean) * (xv(j) - mean);
          double rstd = 1.0 / std::sqrt(sq / static_cast<double>(n) + eps);
          double sumD = 0.0, sumDX = 0.0;
          for (int64_t j = 0; j < n; ++j) {
            double v = (xv(j) - mean) * rstd * computeValue(scale, j);
            if (withBias)
              v += computeValue(bias, j);
            store(wantY, r * n + j, v);
            double xhat = (xv(j) - mean) * rstd;
            double g = computeValue(gy, r * n + j);
            double d = g * computeValue(scale, j);
            sumD += d;
            sumDX += d * xhat;
            sumScale[j] += g * xhat;
            sumBias[j] += g;
          }
          for (int64_t j = 0; j < n; ++j) {
            double xhat = (xv(j) - mean) * rstd;
            double d = computeValue(gy, r * n + j) * computeValue(scale, j);
            store(wantGx, r * n + j,
                  rstd * (d - sumD * invN - xhat * sumDX * invN));
          }
        }
        for (int64_t j = 0; j < n; ++j) {
          store(wantGs, j, sumScale[j]);
          store(wantGb, j, sumBias[j]);
        }
        std::string what = std::string(dtypeName(dt)) + " layer_norm " +
                           dimsName(dims) + (withBias ? "" : " no bias");
        expectSameBits(y, wantY, what);
        expectSameBits(gx, wantGx, what + " grad_x");
        expectSameBits(gs, wantGs, what + " grad_scale");
        expectSameBits(gb, wantGb, what + " grad_bias");
      }
}

TEST(KernelsFastPath, CrossEntropyAndGradMatchElementLoop) {
  const Dims shapes[] = {{4, 300}, {2, 300, 3}};
  std::mt19937_64 rng(79);
  for (zeroc_rt_dtype_t dt : kFloatDtypes)
    for (const Dims &dims : shapes) {
      const int64_t n = dims[0], c = dims[1], d = dims.size() > 2 ? dims[2] : 1;
      Dims labelDims = dims.size() > 2 ? Dims{n, d} : Dims{n};
      HostTensor x = mixedTensor(dt, dims, rng, false);
      HostTensor labels = randomTensor(ZEROC_RT_DTYPE_I64, labelDims, rng, 0,
                                       static_cast<double>(c - 1));
      HostTensor loss(dt, labelDims), wantLoss(dt, labelDims);
      HostTensor gOut = mixedTensor(dt, labelDims, rng, false);
      HostTensor gx(dt, dims), wantGx(dt, dims);
      ZEROC_RT_EXPECT_OK(zeroc_rt_k_softmax_cross_entropy(
          x.desc(), labels.desc(), ZEROC_RT_LOSS_NONE, 0, -100, loss.desc()));
      ZEROC_RT_EXPECT_OK(zeroc_rt_k_softmax_cross_entropy_grad(
          x.desc(), labels.desc(), ZEROC_RT_LOSS_NONE, 0, -100, gOut.desc(),
          gx.desc()));
      for (int64_t b = 0; b < n; ++b)
        for (int64_t s = 0; s < d; ++s) {
          auto xv = [&](int64_t k) {
            return computeValue(x, (b * c + k) * d + s);
          };
          double m = -INFINITY, sum = 0.0;
          for (int64_t k = 0; k < c; ++k)
            m = std::fmax(m, xv(k));
          for (int64_t k = 0; k < c; ++k)
            sum += std::exp(xv(k) - m);
          double lse = m + std::log(sum);
          const int64_t pos = b * d + s;
          const auto label = static_cast<int64_t>(labels.get(pos));
          store(wantLoss, pos, lse - xv(label));
          double w = computeValue(gOut, pos);
          for (int64_t k = 0; k < c; ++k)
            store(wantGx, (b * c + k) * d + s,
                  w * (std::exp(xv(k) - lse) - (k == label ? 1.0 : 0.0)));
        }
      std::string what =
          std::string(dtypeName(dt)) + " cross_entropy " + dimsName(dims);
      if (dt == F32 && d == 1) {
        // Contiguous f32 scores take the vectorized float exponentials
        // (kernels/vector_math.h): within a few float ULPs (relative
        // 1e-6) of the double reference, not bit for bit.
        for (auto [got, want] : {std::pair{&loss, &wantLoss}, std::pair{&gx, &wantGx}})
          for (int64_t i = 0; i < got->size(); ++i)
            EXPECT_LE(std::fabs(got->get(i) - want->get(i)),
                      1e-6 * std::fabs(want->get(i)) + 1e-30)
                << what << " element " << i;
        continue;
      }
      expectSameBits(loss, wantLoss, what);
      expectSameBits(gx, wantGx, what + " grad");
    }
}

} // namespace
