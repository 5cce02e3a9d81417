//===- comm_half_ops.cc - f16/bf16 reduction arithmetic ---------*- C++ -*-===//
//
// Adding in float and rounding once to 16 bits equals rounding the exact sum:
// float keeps 24 bits, at least 2p + 2 for f16 (p = 11) and bf16 (p = 8),
// which makes the double rounding innocuous (Figueroa, "When is double
// rounding innocuous?", 1995).
//
//===----------------------------------------------------------------------===//

#include "comm_half_ops.h"

#include "kernels/scalar_types.h"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace zeroc_rt {
namespace {

struct F16Format {
  static float load(uint16_t bits) { return kernels::f16BitsToFloat(bits); }
  static uint16_t store(float value) { return kernels::toF16Bits(value); }
  static constexpr uint16_t kQuietNaN = 0x7E00;
};

struct BF16Format {
  static float load(uint16_t bits) { return kernels::bf16BitsToFloat(bits); }
  static uint16_t store(float value) { return kernels::toBF16Bits(value); }
  static constexpr uint16_t kQuietNaN = 0x7FC0;
};

// A NaN's sign and payload would otherwise depend on operand order (x86
// returns the first NaN operand), so NaN results are canonical.

template <typename Format> uint16_t sum(uint16_t x, uint16_t y) {
  const float result = Format::load(x) + Format::load(y);
  return std::isnan(result) ? Format::kQuietNaN : Format::store(result);
}

template <typename Format> uint16_t max(uint16_t x, uint16_t y) {
  const float a = Format::load(x), b = Format::load(y);
  if (std::isnan(a) || std::isnan(b))
    return Format::kQuietNaN;
  if (a != b)
    return a > b ? x : y;
  // Equal values have equal bits except +0 and -0, where the AND is +0.
  return static_cast<uint16_t>(x & y);
}

template <uint16_t (*Combine)(uint16_t, uint16_t)>
void combineAll(const void *in, void *inout, size_t count) {
  const auto *src = static_cast<const unsigned char *>(in);
  auto *dst = static_cast<unsigned char *>(inout);
  for (size_t i = 0; i < count; ++i) {
    uint16_t x, y;
    std::memcpy(&x, src + 2 * i, 2);
    std::memcpy(&y, dst + 2 * i, 2);
    const uint16_t result = Combine(x, y);
    std::memcpy(dst + 2 * i, &result, 2);
  }
}

} // namespace

void reduceHalf(zeroc_rt_dtype_t dtype, zeroc_rt_reduce_op_t op, const void *in,
                void *inout, size_t count) {
  const bool isMax = op == ZEROC_RT_REDUCE_MAX;
  if (dtype == ZEROC_RT_DTYPE_BF16) {
    if (isMax)
      combineAll<max<BF16Format>>(in, inout, count);
    else
      combineAll<sum<BF16Format>>(in, inout, count);
  } else if (isMax) {
    combineAll<max<F16Format>>(in, inout, count);
  } else {
    combineAll<sum<F16Format>>(in, inout, count);
  }
}

} // namespace zeroc_rt
