//===- zeroc_rt_cuda/scalar_ops.h - Elementwise math, per element -*- C++ -*-===//
//
// The arithmetic of one element of zeroc_rt_k_unary, _unary_grad and
// _binary in the compute type C (float, or double for F64): the CUDA
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

} // namespace zeroc_rt::cuda

#endif // ZEROC_RT_CUDA_SCALAR_OPS_H
