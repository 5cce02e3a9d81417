//===- kernels/scalar_types.cc - f16/bf16 conversions -----------*- C++ -*-===//

#include "kernels/scalar_types.h"

#include <cmath>

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

} // namespace

uint16_t encodeF16(double value) { return encodeSmall<5, 10>(value); }
uint16_t encodeBF16(double value) { return encodeSmall<8, 7>(value); }
double decodeF16(uint16_t bits) { return decodeSmall<5, 10>(bits); }
double decodeBF16(uint16_t bits) { return decodeSmall<8, 7>(bits); }

} // namespace zeroc_rt::kernels
