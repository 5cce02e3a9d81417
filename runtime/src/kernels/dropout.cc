//===- kernels/dropout.cc - Counter-based inverted dropout ------*- C++ -*-===//
//
// The mask hash is documented in zeroc_rt/kernels.h (zeroc_rt_k_dropout) and
// must stay bit-for-bit stable: checkpoints resumed mid-epoch and the
// backward pass rely on regenerating the same mask.
//
//===----------------------------------------------------------------------===//

#include "kernels/tensor_check.h"

#include <cmath>

namespace zeroc_rt::kernels {
namespace {

constexpr uint64_t kGamma = 0x9E3779B97F4A7C15ull;

/// SplitMix64's finalizer.
uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

zeroc_rt_status_t kDropout(const zeroc_rt_tensor_t *in, double ratio,
                           uint64_t seed, uint64_t counter,
                           const zeroc_rt_tensor_t *out) {
  const char *k = "zeroc_rt_k_dropout";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "in", in, kFloatDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "out", *out, "in", *in));
  ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "out", *out, "in", *in));
  if (!(ratio >= 0.0 && ratio <= 1.0))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: ratio %g must be in [0, 1]", k, ratio);
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "in", *in));
  // Keep element i iff hash / 2^32 >= ratio, i.e. hash >= ratio * 2^32
  // (both sides exact in double). ratio == 1 drops everything.
  const double threshold = std::ldexp(ratio, 32);
  const double scale = ratio < 1.0 ? 1.0 / (1.0 - ratio) : 0.0;
  const uint64_t key = mix64(seed ^ mix64(counter + kGamma));
  int64_t n = numElements(*in);
  dispatchFloat(in->dtype, [&](auto tag) {
    using T = decltype(tag);
    const T *x = static_cast<const T *>(in->data);
    T *y = static_cast<T *>(out->data);
    for (int64_t i = 0; i < n; ++i) {
      uint64_t z = key + (static_cast<uint64_t>(i) + 1u) * kGamma;
      auto hash = static_cast<uint32_t>(mix64(z) >> 32);
      // Kept values are scaled in double and rounded once (16-bit too).
      y[i] = static_cast<double>(hash) >= threshold
                 ? storeValue<T>(static_cast<double>(loadValue(x[i])) * scale)
                 : storeValue<T>(0.0);
    }
  });
  return nullptr;
}

} // namespace
} // namespace zeroc_rt::kernels

extern "C" zeroc_rt_status_t zeroc_rt_k_dropout(const zeroc_rt_tensor_t *in,
                                                double ratio, uint64_t seed,
                                                uint64_t counter,
                                                const zeroc_rt_tensor_t *out) {
  return ZEROC_RT_GUARD_EXCEPTIONS(
      zeroc_rt::kernels::kDropout(in, ratio, seed, counter, out));
}
