//===- kernels/scalar_types.cc - f16/bf16 conversions -----------*- C++ -*-===//
//
// The reference f16/bf16 <-> double conversions, and the row conversions
// with their x86 variants (F16C for binary16, AVX2 for bfloat16) picked once
// from CPUID.
//
//===----------------------------------------------------------------------===//

#include "kernels/scalar_types.h"

#include <cmath>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define ZEROC_RT_HAVE_X86_ROWS 1
#endif

namespace zeroc_rt::kernels {
namespace {

/// Rounds a non-negative value below 2^52 to the nearest integer, ties to
/// even, independently of the floating-point environment.
double roundHalfEven(double v) {
  double floor = std::floor(v);
  double diff = v - floor; // exact for the small values used here
  if (diff > 0.5 || (diff == 0.5 && std::fmod(floor, 2.0) == 1.0))
    floor += 1.0;
  return floor;
}

/// Encodes `value` in a binary format with one sign bit, ExpBits exponent
/// bits (bias 2^(ExpBits-1) - 1) and MantBits stored mantissa bits.
template <int ExpBits, int MantBits> uint16_t encodeSmall(double value) {
  constexpr int bias = (1 << (ExpBits - 1)) - 1;
  constexpr unsigned expMask = ((1u << ExpBits) - 1u) << MantBits;
  constexpr double implicitOne = static_cast<double>(1u << MantBits);
  unsigned sign = std::signbit(value) ? 0x8000u : 0u;
  if (std::isnan(value))
    return static_cast<uint16_t>(sign | expMask | (1u << (MantBits - 1)));
  double a = std::fabs(value);
  if (std::isinf(a))
    return static_cast<uint16_t>(sign | expMask);
  if (a == 0.0)
    return static_cast<uint16_t>(sign);
  int e = 0;
  (void)std::frexp(a, &e); // a = f * 2^e, f in [0.5, 1)
  int exponent = e - 1;    // a in [2^exponent, 2^(exponent + 1))
  if (exponent < 1 - bias) {
    // Subnormal: integer multiples of 2^(1 - bias - MantBits). Rounding up to
    // 2^MantBits yields the smallest normal's encoding, as it should.
    double m = roundHalfEven(std::ldexp(a, bias - 1 + MantBits));
    return static_cast<uint16_t>(sign | static_cast<unsigned>(m));
  }
  double m = roundHalfEven(std::ldexp(a, MantBits - exponent));
  if (m == 2.0 * implicitOne) {
    m = implicitOne;
    ++exponent;
  }
  if (exponent > bias)
    return static_cast<uint16_t>(sign | expMask);
  return static_cast<uint16_t>(
      sign | (static_cast<unsigned>(exponent + bias) << MantBits) |
      static_cast<unsigned>(m - implicitOne));
}

template <int ExpBits, int MantBits> double decodeSmall(uint16_t bits) {
  constexpr int bias = (1 << (ExpBits - 1)) - 1;
  unsigned exponent = (bits >> MantBits) & ((1u << ExpBits) - 1u);
  unsigned mantissa = bits & ((1u << MantBits) - 1u);
  double magnitude;
  if (exponent == (1u << ExpBits) - 1u)
    magnitude = mantissa ? std::numeric_limits<double>::quiet_NaN()
                         : std::numeric_limits<double>::infinity();
  else if (exponent == 0)
    magnitude = std::ldexp(static_cast<double>(mantissa), 1 - bias - MantBits);
  else
    magnitude = std::ldexp(static_cast<double>(mantissa + (1u << MantBits)),
                           static_cast<int>(exponent) - bias - MantBits);
  return (bits & 0x8000u) ? -magnitude : magnitude;
}

//===----------------------------------------------------------------------===//
// Row conversions
//===----------------------------------------------------------------------===//

/// Portable rows: the branch-free element conversions in loops that the
/// compiler vectorizes.
void loadRowGeneric(const F16 *src, float *dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    dst[i] = detail::f16ToFloatBranchFree(src[i].bits);
}
void storeRowGeneric(const float *src, F16 *dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    dst[i].bits = detail::floatToF16BranchFree(src[i]);
}
void loadRowGeneric(const BF16 *src, float *dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    dst[i] = bf16BitsToFloat(src[i].bits);
}
void storeRowGeneric(const float *src, BF16 *dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    dst[i].bits = floatToBF16Bits(src[i]);
}

#ifdef ZEROC_RT_HAVE_X86_ROWS

/// AVX with F16C, enabled by the OS (XCR0 saves the SSE and AVX state).
bool cpuHasF16C() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
    return false;
  const bool osxsave = ecx & (1u << 27), avx = ecx & (1u << 28),
             f16c = ecx & (1u << 29);
  if (!osxsave || !avx || !f16c)
    return false;
  unsigned lo = 0, hi = 0;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (lo & 6u) == 6u;
}

/// AVX2 (256-bit integer vectors) on top of cpuHasF16C.
bool cpuHasAvx2() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return cpuHasF16C() && __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) &&
         (ebx & (1u << 5));
}

// Dynamic initializers: a row converted before they run (from another
// static initializer) takes the portable path, which gives the same bits.
const bool kUseF16C = cpuHasF16C();
const bool kUseAvx2 = cpuHasAvx2();

/// The portable bfloat16 rows compiled for AVX2: the same element code,
/// vectorized twice as wide.
__attribute__((target("avx2"))) void loadRowAvx2(const BF16 *src, float *dst,
                                                 int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    dst[i] = bf16BitsToFloat(src[i].bits);
}
__attribute__((target("avx2"))) void storeRowAvx2(const float *src, BF16 *dst,
                                                  int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    dst[i].bits = floatToBF16Bits(src[i]);
}

/// vcvtph2ps is exact and quiets NaNs as f16BitsToFloat does.
__attribute__((target("avx,f16c"))) void loadRowF16C(const F16 *src, float *dst,
                                                     int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
  loadRowGeneric(src + i, dst + i, n - i);
}

/// vcvtps2ph with an explicit round-to-nearest-even (independent of the
/// MXCSR rounding mode) rounds as floatToF16Bits; only NaNs differ (it keeps
/// payload bits), so they are replaced first by the canonical quiet NaN of
/// their sign.
__attribute__((target("avx,f16c"))) void storeRowF16C(const float *src,
                                                      F16 *dst, int64_t n) {
  const __m256 signBit =
      _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int>(0x80000000u)));
  const __m256 quietNaN = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FC00000));
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 v = _mm256_loadu_ps(src + i);
    __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
    __m256 canonical = _mm256_or_ps(_mm256_and_ps(v, signBit), quietNaN);
    // A bitwise select: GCC lowers _mm256_blendv_ps on a compare mask to
    // per-lane branches when AVX comes from a target attribute only.
    v = _mm256_or_ps(_mm256_andnot_ps(nan, v), _mm256_and_ps(nan, canonical));
    __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + i), h);
  }
  storeRowGeneric(src + i, dst + i, n - i);
}

#endif // ZEROC_RT_HAVE_X86_ROWS

} // namespace

void loadRow(const F16 *src, float *dst, int64_t n) {
#ifdef ZEROC_RT_HAVE_X86_ROWS
  if (kUseF16C)
    return loadRowF16C(src, dst, n);
#endif
  loadRowGeneric(src, dst, n);
}

void storeRow(const float *src, F16 *dst, int64_t n) {
#ifdef ZEROC_RT_HAVE_X86_ROWS
  if (kUseF16C)
    return storeRowF16C(src, dst, n);
#endif
  storeRowGeneric(src, dst, n);
}

void loadRow(const BF16 *src, float *dst, int64_t n) {
#ifdef ZEROC_RT_HAVE_X86_ROWS
  if (kUseAvx2)
    return loadRowAvx2(src, dst, n);
#endif
  loadRowGeneric(src, dst, n);
}

void storeRow(const float *src, BF16 *dst, int64_t n) {
#ifdef ZEROC_RT_HAVE_X86_ROWS
  if (kUseAvx2)
    return storeRowAvx2(src, dst, n);
#endif
  storeRowGeneric(src, dst, n);
}

uint16_t encodeF16(double value) { return encodeSmall<5, 10>(value); }
uint16_t encodeBF16(double value) { return encodeSmall<8, 7>(value); }
double decodeF16(uint16_t bits) { return decodeSmall<5, 10>(bits); }
double decodeBF16(uint16_t bits) { return decodeSmall<8, 7>(bits); }

} // namespace zeroc_rt::kernels
