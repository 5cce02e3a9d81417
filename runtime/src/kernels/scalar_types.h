//===- kernels/scalar_types.h - Element types and conversions ---*- C++ -*-===//
//
// Storage types for every zeroc_rt_dtype_t (F16/BF16/BOOL get wrappers),
// exact f16/bf16 <-> double and float conversions (round to nearest even),
// their vectorized row forms (loadRow / storeRow), and the element
// conversions of zeroc_rt_k_cast.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_SRC_KERNELS_SCALAR_TYPES_H
#define ZEROC_RT_SRC_KERNELS_SCALAR_TYPES_H

#include "zeroc_rt/dtype.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace zeroc_rt::kernels {

struct F16 {
  uint16_t bits;
};
struct BF16 {
  uint16_t bits;
};
/// One byte; any non-zero byte reads as true.
struct Bool8 {
  uint8_t byte;
};

/// IEEE binary16 / bfloat16 from a double, rounding to nearest even
/// (overflow gives +-inf, NaN a quiet NaN of the same sign). Out of line and
/// written with frexp/ldexp: the reference that the inline bit-level
/// conversions below (used by the kernels) are tested against.
uint16_t encodeF16(double value);
uint16_t encodeBF16(double value);
/// Exact binary16 / bfloat16 values.
double decodeF16(uint16_t bits);
double decodeBF16(uint16_t bits);

namespace detail {

/// Round to nearest even of the integer m * 2^-shift (0 < shift < 64, m
/// small enough that m + 2^(shift-1) does not wrap): adding half - 1, plus
/// one more when the kept part is odd, carries into the kept part exactly
/// when the dropped part is above half, or equal to it with an odd kept part.
/// Branch-free: the rounding bits of real data are random, so a branch on
/// them mispredicts about every other element.
template <typename U> inline U shiftRoundEven(U m, int shift) {
  const U half = U(1) << (shift - 1);
  return (m + (half - 1) + ((m >> shift) & 1u)) >> shift;
}

/// Bit-level round to nearest even of a double into a format with one sign
/// bit, ExpBits exponent bits and MantBits stored mantissa bits; the same
/// results as encodeF16/encodeBF16 (overflow to +-inf, NaN to the quiet NaN
/// sign | exponent ones | top mantissa bit), independent of the
/// floating-point environment.
template <int ExpBits, int MantBits>
inline uint16_t roundToSmall(double value) {
  constexpr int bias = (1 << (ExpBits - 1)) - 1;
  constexpr uint32_t expMask = ((1u << ExpBits) - 1u) << MantBits;
  uint64_t u;
  std::memcpy(&u, &value, sizeof u);
  const auto sign = static_cast<uint32_t>((u >> 48) & 0x8000u);
  const uint64_t a = u & 0x7FFFFFFFFFFFFFFFull;
  if (a > 0x7FF0000000000000ull) // NaN
    return static_cast<uint16_t>(sign | expMask | (1u << (MantBits - 1)));
  const int e = static_cast<int>(a >> 52); // biased double exponent
  if (e == 0) // zero or double subnormal: far below half the smallest target
    return static_cast<uint16_t>(sign);
  const int exponent = e - 1023; // |value| in [2^exponent, 2^(exponent + 1))
  if (exponent > bias)           // includes inf
    return static_cast<uint16_t>(sign | expMask);
  const uint64_t m = (a & ((uint64_t(1) << 52) - 1)) | (uint64_t(1) << 52);
  // Normal targets keep MantBits fraction bits; subnormal ones count
  // multiples of 2^(1 - bias - MantBits).
  const bool subnormal = exponent < 1 - bias;
  const int shift = 52 - MantBits + (subnormal ? 1 - bias - exponent : 0);
  if (shift > 53) // below half the smallest subnormal (ties included: 0)
    return static_cast<uint16_t>(sign);
  const uint64_t q = shiftRoundEven(m, shift);
  // q includes the implicit bit for normal targets, so the exponent field is
  // biased by one less; a mantissa carry (q == 2^(MantBits+1)) bumps the
  // exponent, up to the inf encoding, and a subnormal rounding up to
  // 2^MantBits becomes the smallest normal.
  const uint32_t base =
      subnormal ? 0u : static_cast<uint32_t>(exponent + bias - 1) << MantBits;
  return static_cast<uint16_t>(sign | (base + static_cast<uint32_t>(q)));
}

/// roundToSmall for a float argument, on its 32-bit pattern: the same
/// rounding of the same real value (every float is a double), without the
/// widening and with 32-bit arithmetic.
template <int ExpBits, int MantBits>
inline uint16_t roundFloatToSmall(float value) {
  constexpr int bias = (1 << (ExpBits - 1)) - 1;
  constexpr uint32_t expMask = ((1u << ExpBits) - 1u) << MantBits;
  uint32_t u;
  std::memcpy(&u, &value, sizeof u);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) // NaN
    return static_cast<uint16_t>(sign | expMask | (1u << (MantBits - 1)));
  // A float subnormal is m * 2^(1 - 127 - 23) without the implicit bit: read
  // with biased exponent 1, the formulas below hold for it unchanged (its q
  // lacks the implicit bit, so it lands below the first normal target).
  const int e = static_cast<int>(a >> 23);
  const int exponent = (e ? e : 1) - 127;
  if (exponent > bias) // includes inf
    return static_cast<uint16_t>(sign | expMask);
  const uint32_t m = (a & 0x007FFFFFu) | (e ? 0x00800000u : 0u);
  const bool subnormal = exponent < 1 - bias;
  const int shift = 23 - MantBits + (subnormal ? 1 - bias - exponent : 0);
  if (shift > 24) // m < 2^24: below half the smallest subnormal
    return static_cast<uint16_t>(sign);
  const uint32_t q = shiftRoundEven(m, shift);
  const uint32_t base =
      subnormal ? 0u : static_cast<uint32_t>(exponent + bias - 1) << MantBits;
  return static_cast<uint16_t>(sign | (base + q));
}

inline float floatFromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
inline uint32_t floatBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

/// All ones when `c`, else 0: the branch-free conversions below select with
/// masks, so loops over them have no control flow and vectorize.
inline uint32_t maskIf(bool c) { return 0u - static_cast<uint32_t>(c); }
inline uint32_t selectBits(uint32_t mask, uint32_t ifSet, uint32_t ifClear) {
  return (ifSet & mask) | (ifClear & ~mask);
}

/// f16BitsToFloat and floatToF16Bits without branches, for the row
/// conversions' loops (which vectorize them). Per element, out of such a
/// loop, they cost more than the branching versions below.
inline float f16ToFloatBranchFree(uint16_t h) {
  const uint32_t x = h;
  const uint32_t sign = (x & 0x8000u) << 16;
  const uint32_t e = (x >> 10) & 0x1Fu, m = x & 0x3FFu;
  // Normal: rebias the exponent from 15 to 127.
  uint32_t bits = ((e + 112u) << 23) | (m << 13);
  // Exponent ones: inf, or NaN made quiet.
  const uint32_t special =
      0x7F800000u | (m << 13) | (maskIf(m != 0) & 0x00400000u);
  bits = selectBits(maskIf(e == 0x1Fu), special, bits);
  // Zero or subnormal: m * 2^-24, exact in float.
  const uint32_t subnormal =
      floatBits(static_cast<float>(static_cast<int32_t>(m)) * 0x1p-24f);
  bits = selectBits(maskIf(e == 0), subnormal, bits);
  return floatFromBits(sign | bits);
}
inline uint16_t floatToF16BranchFree(float v) {
  const uint32_t u = floatBits(v);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t a = u & 0x7FFFFFFFu;
  // |v| >= 2^-14 (a normal target, or inf after a carry): rebias the
  // exponent from 127 to 15 and round the 13 low mantissa bits away.
  const uint32_t normal = shiftRoundEven(a - 0x38000000u, 13);
  // |v| < 2^-14: a multiple of 2^-24. y = |v| * 2^24 < 2^10 is exact, its
  // integer part comes from a truncating conversion and its fraction from an
  // exact subtraction, so no step depends on the rounding mode.
  const uint32_t small = maskIf(a < 0x38800000u);
  const float y = floatFromBits(a & small) * 0x1p24f;
  const auto whole = static_cast<uint32_t>(static_cast<int32_t>(y));
  const float frac = y - static_cast<float>(static_cast<int32_t>(whole));
  // Ternaries rather than bool arithmetic: GCC vectorizes these selects.
  const uint32_t up =
      (frac > 0.5f ? 1u : 0u) | (frac == 0.5f ? whole & 1u : 0u);
  uint32_t r = selectBits(small, whole + up, normal);
  // |v| >= 2^16 (inf included) is past max + ulp / 2 = 65520: inf.
  r = selectBits(maskIf(a >= 0x47800000u), 0x7C00u, r);
  r = selectBits(maskIf(a > 0x7F800000u), 0x7E00u, r); // NaN
  return static_cast<uint16_t>(sign | r);
}

} // namespace detail

/// Round to nearest even from double (the kernels' conversions).
inline uint16_t toF16Bits(double v) { return detail::roundToSmall<5, 10>(v); }
inline uint16_t toBF16Bits(double v) { return detail::roundToSmall<8, 7>(v); }
/// The same roundings for a float: identical to toF16Bits(double(v)) and
/// toBF16Bits(double(v)) (the widening is exact), but cheaper. Separate
/// names keep the double overloads' addresses unambiguous.
inline uint16_t floatToF16Bits(float v) {
  return detail::roundFloatToSmall<5, 10>(v);
}
inline uint16_t floatToBF16Bits(float v) {
  const uint32_t u = detail::floatBits(v);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t a = u & 0x7FFFFFFFu;
  // bfloat16 shares float's exponent, so dropping 16 mantissa bits with a
  // carry rounds every finite value, subnormals and overflow to inf
  // included. Branch-free, so loops over it vectorize.
  const uint32_t r = detail::shiftRoundEven(a, 16);
  return static_cast<uint16_t>(
      sign | detail::selectBits(detail::maskIf(a > 0x7F800000u), 0x7FC0u, r));
}

/// Exact 16-bit -> float (NaNs stay NaN with their sign, made quiet).
inline float f16BitsToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
  if (e == 0x1Fu)
    return detail::floatFromBits(sign | 0x7F800000u | (m << 13) |
                                 (m ? 0x00400000u : 0u));
  if (e != 0)
    return detail::floatFromBits(sign | ((e + 112u) << 23) | (m << 13));
  // Zero or subnormal: m * 2^-24, exact in float.
  const float v = static_cast<float>(m) * 0x1p-24f;
  return sign ? -v : v;
}
inline float bf16BitsToFloat(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  const uint32_t nan = detail::maskIf((bits & 0x7FFFFFFFu) > 0x7F800000u);
  return detail::floatFromBits(bits | (nan & 0x00400000u)); // quiet NaN
}

/// Row conversions: dst[i] = f16BitsToFloat / bf16BitsToFloat (src[i]) and
/// dst[i] = floatToF16Bits / floatToBF16Bits (src[i]) for i < n, bit for
/// bit, but vectorized (F16 with the CPU's F16C instructions where it has
/// them). The 16-bit kernels convert rows or chunks with these and compute
/// on float buffers.
void loadRow(const F16 *src, float *dst, int64_t n);
void loadRow(const BF16 *src, float *dst, int64_t n);
void storeRow(const float *src, F16 *dst, int64_t n);
void storeRow(const float *src, BF16 *dst, int64_t n);

//===----------------------------------------------------------------------===//
// Float storage types of the float kernels
//===----------------------------------------------------------------------===//
//
// F16 and BF16 are storage types: elements are loaded into their compute type
// (float), computed on, and rounded once (to nearest even) into the output
// dtype. float and double compute in themselves. Values computed in double
// (sums, statistics, losses) are rounded from double directly, never through
// float, so every stored element is rounded exactly once.

template <typename S>
inline constexpr bool kIsFloatStorage =
    std::is_same_v<S, float> || std::is_same_v<S, double> ||
    std::is_same_v<S, F16> || std::is_same_v<S, BF16>;

/// F16 and BF16: the storage types computed in float and converted a chunk
/// at a time (loadRow/storeRow).
template <typename S>
inline constexpr bool kIsNarrowFloat =
    std::is_same_v<S, F16> || std::is_same_v<S, BF16>;

/// float for F16/BF16/float, double for double.
template <typename S>
using ComputeOf = std::conditional_t<std::is_same_v<S, double>, double, float>;

inline float loadValue(float v) { return v; }
inline double loadValue(double v) { return v; }
inline float loadValue(F16 v) { return f16BitsToFloat(v.bits); }
inline float loadValue(BF16 v) { return bf16BitsToFloat(v.bits); }

/// A float-storage element as double (exact).
template <typename S> inline double loadDouble(S v) {
  return static_cast<double>(loadValue(v));
}

/// Rounds a computed value into storage type S (floats convert to double
/// exactly, so float results are rounded once as well).
template <typename S> S storeValue(double v);
template <> inline float storeValue<float>(double v) {
  return static_cast<float>(v);
}
template <> inline double storeValue<double>(double v) { return v; }
template <> inline F16 storeValue<F16>(double v) { return F16{toF16Bits(v)}; }
template <> inline BF16 storeValue<BF16>(double v) {
  return BF16{toBF16Bits(v)};
}
/// The same for a value computed in float: the float overloads pick the
/// float-pattern rounding, which gives the bits of the double one.
template <typename S> S storeValue(float v);
template <> inline float storeValue<float>(float v) { return v; }
template <> inline double storeValue<double>(float v) { return v; }
template <> inline F16 storeValue<F16>(float v) {
  return F16{floatToF16Bits(v)};
}
template <> inline BF16 storeValue<BF16>(float v) {
  return BF16{floatToBF16Bits(v)};
}

/// Calls fn(S{}) with S the storage type of `dtype` (valid dtypes only).
template <typename Fn> decltype(auto) dispatchAny(zeroc_rt_dtype_t dtype, Fn &&fn) {
  switch (dtype) {
  case ZEROC_RT_DTYPE_F32:
    return fn(float());
  case ZEROC_RT_DTYPE_F64:
    return fn(double());
  case ZEROC_RT_DTYPE_F16:
    return fn(F16());
  case ZEROC_RT_DTYPE_BF16:
    return fn(BF16());
  case ZEROC_RT_DTYPE_I64:
    return fn(int64_t());
  case ZEROC_RT_DTYPE_I32:
    return fn(int32_t());
  case ZEROC_RT_DTYPE_U8:
    return fn(uint8_t());
  case ZEROC_RT_DTYPE_BOOL:
    break;
  }
  return fn(Bool8());
}

/// Calls fn(U{}) with an unsigned integer type of `size` bytes (1, 2, 4, 8),
/// for dtype-agnostic element moves.
template <typename Fn> decltype(auto) dispatchBySize(size_t size, Fn &&fn) {
  switch (size) {
  case 1:
    return fn(uint8_t());
  case 2:
    return fn(uint16_t());
  case 4:
    return fn(uint32_t());
  default:
    break;
  }
  return fn(uint64_t());
}

// Widening: float-like storage to double, integer-like to int64.
inline double widen(float v) { return v; }
inline double widen(double v) { return v; }
inline double widen(F16 v) { return f16BitsToFloat(v.bits); }
inline double widen(BF16 v) { return bf16BitsToFloat(v.bits); }
inline int64_t widen(int64_t v) { return v; }
inline int64_t widen(int32_t v) { return v; }
inline int64_t widen(uint8_t v) { return v; }
inline int64_t widen(Bool8 v) { return v.byte != 0; }

/// Float to integer: truncation toward zero, NaN -> 0, saturating at the
/// bounds of I (so the conversion is always defined).
template <typename I> I saturatingTrunc(double v) {
  if (std::isnan(v))
    return 0;
  double t = std::trunc(v);
  // 2^(digits) is exactly representable; the max itself may not be.
  const double upper =
      std::ldexp(1.0, std::numeric_limits<I>::digits); // max + 1
  if (t >= upper)
    return std::numeric_limits<I>::max();
  if (t < static_cast<double>(std::numeric_limits<I>::min()))
    return std::numeric_limits<I>::min();
  return static_cast<I>(t);
}

// Narrowing from a widened double.
template <typename D> D narrow(double v);
template <> inline float narrow<float>(double v) {
  return static_cast<float>(v);
}
template <> inline double narrow<double>(double v) { return v; }
template <> inline F16 narrow<F16>(double v) { return F16{toF16Bits(v)}; }
template <> inline BF16 narrow<BF16>(double v) { return BF16{toBF16Bits(v)}; }
template <> inline int64_t narrow<int64_t>(double v) {
  return saturatingTrunc<int64_t>(v);
}
template <> inline int32_t narrow<int32_t>(double v) {
  return saturatingTrunc<int32_t>(v);
}
template <> inline uint8_t narrow<uint8_t>(double v) {
  return saturatingTrunc<uint8_t>(v);
}
template <> inline Bool8 narrow<Bool8>(double v) {
  return Bool8{static_cast<uint8_t>(v != 0.0)}; // NaN is true, as in numpy
}

// Narrowing from a widened int64 (integer targets wrap modulo 2^bits).
template <typename D> D narrow(int64_t v);
template <> inline float narrow<float>(int64_t v) {
  return static_cast<float>(v);
}
template <> inline double narrow<double>(int64_t v) {
  return static_cast<double>(v);
}
template <> inline F16 narrow<F16>(int64_t v) {
  return F16{toF16Bits(static_cast<double>(v))};
}
template <> inline BF16 narrow<BF16>(int64_t v) {
  return BF16{toBF16Bits(static_cast<double>(v))};
}
template <> inline int64_t narrow<int64_t>(int64_t v) { return v; }
template <> inline int32_t narrow<int32_t>(int64_t v) {
  return static_cast<int32_t>(static_cast<uint32_t>(v));
}
template <> inline uint8_t narrow<uint8_t>(int64_t v) {
  return static_cast<uint8_t>(v);
}
template <> inline Bool8 narrow<Bool8>(int64_t v) {
  return Bool8{static_cast<uint8_t>(v != 0)};
}

} // namespace zeroc_rt::kernels

#endif // ZEROC_RT_SRC_KERNELS_SCALAR_TYPES_H
