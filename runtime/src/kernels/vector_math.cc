//===- kernels/vector_math.cc - exp and tanh of float rows ------*- C++ -*-===//

#include "kernels/vector_math.h"

#include <cmath>

#if defined(ZEROC_RT_HAVE_MVEC) && defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

// glibc's libmvec (x86_64 vector ABI, AVX2 variants: 'd', 8 floats).
extern "C" __m256 _ZGVdN8v_expf(__m256);
extern "C" __m256 _ZGVdN8v_tanhf(__m256);
#define ZEROC_RT_VECTOR_MATH 1
#endif

namespace zeroc_rt::kernels {
namespace {

#ifdef ZEROC_RT_VECTOR_MATH
bool haveAvx2() {
  static const bool yes =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return yes;
}

/// Eight lanes at a time; the tail goes through the vector function too
/// (padded), so every element gets the same function whatever n is.
template <__m256 (*F)(__m256)>
__attribute__((target("avx2,fma"))) void vectorRow(const float *in, float *out,
                                                   int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, F(_mm256_loadu_ps(in + i)));
  if (i < n) {
    alignas(32) float tail[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t j = i; j < n; ++j)
      tail[j - i] = in[j];
    _mm256_store_ps(tail, F(_mm256_load_ps(tail)));
    for (int64_t j = i; j < n; ++j)
      out[j] = tail[j - i];
  }
}
#endif

} // namespace

void expRow(const float *in, float *out, int64_t n) {
#ifdef ZEROC_RT_VECTOR_MATH
  if (haveAvx2())
    return vectorRow<_ZGVdN8v_expf>(in, out, n);
#endif
  for (int64_t i = 0; i < n; ++i)
    out[i] = std::exp(in[i]);
}

void tanhRow(const float *in, float *out, int64_t n) {
#ifdef ZEROC_RT_VECTOR_MATH
  if (haveAvx2())
    return vectorRow<_ZGVdN8v_tanhf>(in, out, n);
#endif
  for (int64_t i = 0; i < n; ++i)
    out[i] = std::tanh(in[i]);
}

} // namespace zeroc_rt::kernels
