//===- zeroc_rt_cuda/scalar_ops.h - Elementwise math, per element -*- C++ -*-===//
//
// The arithmetic of one element of zeroc_rt_k_unary, _unary_grad, _binary
// (in the compute type C: float, or double for F64) and _dropout: the CUDA
// runtime's elementwise kernels and the fused kernels of a generated CUDA
// program (zeroc_rt_cuda/fused.h) both call these, so that a fused chain
// computes the bits the ops compute one by one.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_CUDA_SCALAR_OPS_H
#define ZEROC_RT_CUDA_SCALAR_OPS_H

#include "zeroc_rt_cuda/compat.h"

#include "zeroc_rt/kernels.h"

namespace zeroc_rt::cuda {

template <typename C> ZRT_HD C unaryOf(int op, C x) {
  const C kInvSqrt2 = C(0.70710678118654752440), kSqrt2OverPi = C(0.79788456080286535588);
  switch (op) {
  case ZEROC_RT_UNARY_NEG: return -x;
  case ZEROC_RT_UNARY_SQRT: return sqrt(x);
  case ZEROC_RT_UNARY_RECIPROCAL: return C(1) / x;
  case ZEROC_RT_UNARY_RELU: return x > C(0) ? x : (x != x ? x : C(0));
  case ZEROC_RT_UNARY_TANH: return tanh(x);
  case ZEROC_RT_UNARY_SIGMOID: return C(1) / (C(1) + exp(-x));
  case ZEROC_RT_UNARY_ERF: return erf(x);
  case ZEROC_RT_UNARY_EXP: return exp(x);
  case ZEROC_RT_UNARY_LOG: return log(x);
  case ZEROC_RT_UNARY_COS: return cos(x);
  case ZEROC_RT_UNARY_SIN: return sin(x);
  case ZEROC_RT_UNARY_ABS: return fabs(x);
  case ZEROC_RT_UNARY_SIGN: return x > C(0) ? C(1) : (x < C(0) ? C(-1) : C(0));
  case ZEROC_RT_UNARY_FLOOR: return floor(x);
  case ZEROC_RT_UNARY_CEIL: return ceil(x);
  case ZEROC_RT_UNARY_ROUND: return rint(x);
  case ZEROC_RT_UNARY_GELU: return C(0.5) * x * (C(1) + erf(x * kInvSqrt2));
  case ZEROC_RT_UNARY_GELU_TANH:
    return C(0.5) * x * (C(1) + tanh(kSqrt2OverPi * (x + C(0.044715) * x * x * x)));
  }
  return x;
}

/// d op / dx at forward input x and output y (zeroc_rt_k_unary_grad's rules).
template <typename C> ZRT_HD C derivativeOf(int op, C x, C y) {
  const C kInvSqrt2 = C(0.70710678118654752440), kInvSqrt2Pi = C(0.39894228040143267794);
  const C kSqrt2OverPi = C(0.79788456080286535588), kKappa = C(0.044715);
  switch (op) {
  case ZEROC_RT_UNARY_NEG: return C(-1);
  case ZEROC_RT_UNARY_SQRT: return C(0.5) / y;
  case ZEROC_RT_UNARY_RECIPROCAL: return -y * y;
  case ZEROC_RT_UNARY_RELU: return x > C(0) ? C(1) : C(0);
  case ZEROC_RT_UNARY_TANH: return C(1) - y * y;
  case ZEROC_RT_UNARY_SIGMOID: return y * (C(1) - y);
  case ZEROC_RT_UNARY_ERF: return C(1.12837916709551257390) * exp(-x * x);
  case ZEROC_RT_UNARY_EXP: return y;
  case ZEROC_RT_UNARY_LOG: return C(1) / x;
  case ZEROC_RT_UNARY_COS: return -sin(x);
  case ZEROC_RT_UNARY_SIN: return cos(x);
  case ZEROC_RT_UNARY_ABS: return x > C(0) ? C(1) : (x < C(0) ? C(-1) : C(0));
  case ZEROC_RT_UNARY_GELU: {
    C cdf = C(0.5) * (C(1) + erf(x * kInvSqrt2));
    return cdf + x * kInvSqrt2Pi * exp(C(-0.5) * x * x);
  }
  case ZEROC_RT_UNARY_GELU_TANH: {
    C inner = kSqrt2OverPi * (x + kKappa * x * x * x);
    C t = tanh(inner);
    C dInner = kSqrt2OverPi * (C(1) + C(3) * kKappa * x * x);
    return C(0.5) * (C(1) + t) + C(0.5) * x * (C(1) - t * t) * dInner;
  }
  default: return C(0); // sign, floor, ceil, round
  }
}

template <typename C> ZRT_HD C binaryOf(int op, C a, C b) {
  switch (op) {
  case ZEROC_RT_BINARY_ADD: return a + b;
  case ZEROC_RT_BINARY_SUB: return a - b;
  case ZEROC_RT_BINARY_MUL: return a * b;
  case ZEROC_RT_BINARY_DIV: return a / b;
  case ZEROC_RT_BINARY_POW: return pow(a, b);
  case ZEROC_RT_BINARY_MAX: return (a != a || b != b) ? a + b : (a > b ? a : b);
  case ZEROC_RT_BINARY_MIN: return (a != a || b != b) ? a + b : (a < b ? a : b);
  }
  return a;
}

/// zeroc_rt_k_dropout's mask (zeroc_rt/kernels.h states the hash): the
/// key of a (seed, counter) pair, computed once per call on the host.
ZRT_HD uint64_t dropoutMix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
ZRT_HD uint64_t dropoutKey(uint64_t seed, uint64_t counter) {
  return dropoutMix64(seed ^ dropoutMix64(counter + 0x9E3779B97F4A7C15ull));
}
/// What a kept element is multiplied by (in double).
ZRT_HD double dropoutKeepScale(double ratio) {
  return ratio < 1.0 ? 1.0 / (1.0 - ratio) : 0.0;
}
/// The mask's rule, hash / 2^32 >= ratio, as an integer compare: the hash
/// h is an integer and h * 2^-32 is exact in double, so it holds exactly
/// when h >= ceil(ratio * 2^32) (ratio in [0, 1]; 2^32 keeps nothing).
ZRT_HD uint64_t dropoutThreshold(double ratio) {
  return static_cast<uint64_t>(ceil(ratio * 4294967296.0));
}
/// Whether dropout keeps element i (its flat index in the dropout's
/// tensor) under `key`: zeroc_rt_k_dropout's mask, `threshold` the ratio's
/// dropoutThreshold.
ZRT_HD bool dropoutKeeps(int64_t i, uint64_t threshold, uint64_t key) {
  const uint64_t z = dropoutMix64(key + static_cast<uint64_t>(i + 1) * 0x9E3779B97F4A7C15ull);
  return (z >> 32) >= threshold;
}
/// A kept element x (in the compute type) as dropout stores it.
template <typename S>
ZRT_HD S dropoutKept(typename Compute<S>::type x, double keepScale) {
  return storeD<S>(static_cast<double>(x) * keepScale);
}
/// Element i of dropout's result, x its input in the compute type.
template <typename S>
ZRT_HD S dropoutOf(typename Compute<S>::type x, int64_t i, double ratio,
                   double keepScale, uint64_t key) {
  return dropoutKeeps(i, dropoutThreshold(ratio), key) ? dropoutKept<S>(x, keepScale)
                                                      : storeD<S>(0.0);
}

} // namespace zeroc_rt::cuda

#endif // ZEROC_RT_CUDA_SCALAR_OPS_H
