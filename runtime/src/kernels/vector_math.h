//===- kernels/vector_math.h - exp and tanh of float rows -------*- C++ -*-===//
//
// The transcendental functions the hot float kernels apply to whole rows
// (the loss's exponentials, tanh), eight lanes at a time through glibc's
// libmvec where the build found it and the CPU has AVX2 and FMA, otherwise
// one std::exp / std::tanh per element. libmvec's results are within
// glibc's documented ULP bounds of the correctly rounded value (expf 1,
// tanhf 2-3), as PyTorch's Sleef kernels are within theirs; the row
// functions' results do not depend on n or on where a row starts.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_KERNELS_VECTOR_MATH_H
#define ZEROC_RT_KERNELS_VECTOR_MATH_H

#include <cstdint>

namespace zeroc_rt::kernels {

/// out[i] = exp(in[i]) for i < n (in == out allowed).
void expRow(const float *in, float *out, int64_t n);
/// out[i] = tanh(in[i]) for i < n (in == out allowed).
void tanhRow(const float *in, float *out, int64_t n);

} // namespace zeroc_rt::kernels

#endif // ZEROC_RT_KERNELS_VECTOR_MATH_H
