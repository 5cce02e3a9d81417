//===- kernels/scalar_types.h - Element types and conversions ---*- C++ -*-===//
//
// Storage types for every zeroc_rt_dtype_t (F16/BF16/BOOL get wrappers),
// exact f16/bf16 <-> double conversions (round to nearest even), and the
// element conversions of zeroc_rt_k_cast.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_SRC_KERNELS_SCALAR_TYPES_H
#define ZEROC_RT_SRC_KERNELS_SCALAR_TYPES_H

#include "zeroc_rt/dtype.h"

#include <cmath>
#include <cstdint>
#include <limits>

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
/// (overflow gives +-inf, NaN a quiet NaN of the same sign).
uint16_t encodeF16(double value);
uint16_t encodeBF16(double value);
/// Exact binary16 / bfloat16 values.
double decodeF16(uint16_t bits);
double decodeBF16(uint16_t bits);

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
inline double widen(F16 v) { return decodeF16(v.bits); }
inline double widen(BF16 v) { return decodeBF16(v.bits); }
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
template <> inline F16 narrow<F16>(double v) { return F16{encodeF16(v)}; }
template <> inline BF16 narrow<BF16>(double v) { return BF16{encodeBF16(v)}; }
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
  return F16{encodeF16(static_cast<double>(v))};
}
template <> inline BF16 narrow<BF16>(int64_t v) {
  return BF16{encodeBF16(static_cast<double>(v))};
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
