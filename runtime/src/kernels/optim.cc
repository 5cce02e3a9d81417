//===- kernels/optim.cc - Flat-buffer math and optimizer steps --*- C++ -*-===//
//
// Optimizer updates are computed per element in double (for F32 buffers too)
// and stored back in the buffer's dtype, in a fixed order.
//
//===----------------------------------------------------------------------===//

#include "kernels/tensor_check.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

namespace zeroc_rt::kernels {
namespace {

struct FlatBuffer {
  const char *name;
  const void *data;
};

/// dtype in `allowed`, n >= 0 with n * size bytes in int64, buffers non-NULL
/// and element-aligned when n > 0, and pairwise disjoint.
zeroc_rt_status_t checkFlat(const char *k, zeroc_rt_dtype_t dtype,
                            unsigned allowed, int64_t n,
                            std::initializer_list<FlatBuffer> buffers) {
  if (zeroc_rt_dtype_size(dtype) == 0 || !(allowed & dtypeBit(dtype)))
    return ZEROC_RT_ERROR(
        ZEROC_RT_INVALID_ARGUMENT, "%s: dtype %s (%d); expected %s", k,
        zeroc_rt_dtype_name(dtype), static_cast<int>(dtype),
        allowed == kWideFloatDtypes ? "f32 or f64" : "f32, f64, f16 or bf16");
  size_t size = zeroc_rt_dtype_size(dtype);
  if (n < 0 || n > std::numeric_limits<int64_t>::max() / static_cast<int64_t>(size))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: element count %lld is negative or too large", k,
                          static_cast<long long>(n));
  if (n == 0)
    return nullptr;
  for (const FlatBuffer &b : buffers) {
    if (!b.data)
      return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                            "%s: %s is NULL for %lld elements", k, b.name,
                            static_cast<long long>(n));
    ZEROC_RT_RETURN_IF_ERROR(checkAlignment(k, b.name, b.data, dtype));
  }
  size_t bytes = static_cast<size_t>(n) * size;
  for (auto i = buffers.begin(); i != buffers.end(); ++i)
    for (auto j = buffers.begin(); j != i; ++j)
      ZEROC_RT_RETURN_IF_ERROR(
          checkNoOverlap(k, i->name, i->data, bytes, j->name, j->data, bytes));
  return nullptr;
}

/// A hyperparameter that must be finite and inside [lo, hi) (or [lo, hi]).
zeroc_rt_status_t checkRange(const char *k, const char *name, double value,
                             double lo, double hi, bool hiOpen) {
  bool ok = std::isfinite(value) && value >= lo &&
            (hiOpen ? value < hi : value <= hi);
  if (!ok)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: %s = %g must be finite and in [%g, %g%c", k,
                          name, value, lo, hi, hiOpen ? ')' : ']');
  return nullptr;
}

constexpr double kInf = std::numeric_limits<double>::infinity();

// 16-bit buffers are converted a chunk at a time through float rows
// (loadRow/storeRow round exactly as loadValue/storeValue do), which the
// per-element conversions made the slowest part of a mixed-precision step.

zeroc_rt_status_t kAccumulate(zeroc_rt_dtype_t dtype, const void *x, void *acc,
                              int64_t n) {
  const char *k = "zeroc_rt_k_accumulate";
  ZEROC_RT_RETURN_IF_ERROR(
      checkFlat(k, dtype, kFloatDtypes, n, {{"acc", acc}, {"x", x}}));
  dispatchFloat(dtype, [&](auto tag) {
    using T = decltype(tag);
    const T *px = static_cast<const T *>(x);
    T *pa = static_cast<T *>(acc);
    // In the compute type (float for 16-bit), rounded once.
    if constexpr (kIsNarrowFloat<T>) {
      float ba[kChunk], bx[kChunk];
      forEachChunk(n, [&](int64_t i0, int64_t m) {
        loadRow(pa + i0, ba, m);
        loadRow(px + i0, bx, m);
        for (int64_t j = 0; j < m; ++j)
          ba[j] += bx[j];
        storeRow(ba, pa + i0, m);
      });
    } else {
      for (int64_t i = 0; i < n; ++i)
        pa[i] = storeValue<T>(loadValue(pa[i]) + loadValue(px[i]));
    }
  });
  return nullptr;
}

zeroc_rt_status_t kScale(zeroc_rt_dtype_t dtype, void *x, int64_t n,
                         double factor) {
  const char *k = "zeroc_rt_k_scale";
  ZEROC_RT_RETURN_IF_ERROR(checkFlat(k, dtype, kFloatDtypes, n, {{"x", x}}));
  dispatchFloat(dtype, [&](auto tag) {
    using T = decltype(tag);
    T *px = static_cast<T *>(x);
    for (int64_t i = 0; i < n; ++i)
      px[i] = storeValue<T>(loadDouble(px[i]) * factor);
  });
  return nullptr;
}

/// checkFlat for a kernel reading n elements of `from` at `in` and writing n
/// of `to` at `out` (different dtypes, so different byte sizes), then calls
/// fn(S *, D *) with the element types when n > 0.
template <typename Fn>
zeroc_rt_status_t twoDtypeFlat(const char *k, zeroc_rt_dtype_t from,
                               const char *inName, const void *in,
                               zeroc_rt_dtype_t to, const char *outName,
                               void *out, int64_t n, Fn &&fn) {
  ZEROC_RT_RETURN_IF_ERROR(checkFlat(k, from, kFloatDtypes, n, {{inName, in}}));
  ZEROC_RT_RETURN_IF_ERROR(checkFlat(k, to, kFloatDtypes, n, {{outName, out}}));
  if (n == 0)
    return nullptr;
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(
      k, inName, in, static_cast<size_t>(n) * zeroc_rt_dtype_size(from),
      outName, out, static_cast<size_t>(n) * zeroc_rt_dtype_size(to)));
  dispatchFloat(from, [&](auto fromTag) {
    using S = decltype(fromTag);
    dispatchFloat(to, [&](auto toTag) {
      using D = decltype(toTag);
      fn(static_cast<const S *>(in), static_cast<D *>(out));
    });
  });
  return nullptr;
}

zeroc_rt_status_t kAccumulateWidening(zeroc_rt_dtype_t from, const void *x,
                                      zeroc_rt_dtype_t to, void *acc,
                                      int64_t n) {
  const char *k = "zeroc_rt_k_accumulate_widening";
  // Same dtype, or strictly wider (f16 and bf16 do not hold each other).
  if (to != from && zeroc_rt_dtype_size(to) <= zeroc_rt_dtype_size(from))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: acc dtype %s does not hold x dtype %s exactly "
                          "(it must be wider)",
                          k, zeroc_rt_dtype_name(to), zeroc_rt_dtype_name(from));
  return twoDtypeFlat(k, from, "x", x, to, "acc", acc, n,
                      [&](const auto *px, auto *pa) {
    using S = std::remove_const_t<std::remove_pointer_t<decltype(px)>>;
    using D = std::remove_pointer_t<decltype(pa)>;
    using C = decltype(loadValue(std::declval<D>())); // acc's compute type
    // x widens exactly; the sum is rounded once, in acc's compute type.
    if constexpr (kIsNarrowFloat<S> && std::is_same_v<D, float>) {
      float bx[kChunk];
      forEachChunk(n, [&](int64_t i0, int64_t m) {
        loadRow(px + i0, bx, m);
        for (int64_t j = 0; j < m; ++j)
          pa[i0 + j] += bx[j];
      });
    } else {
      for (int64_t i = 0; i < n; ++i)
        pa[i] = storeValue<D>(loadValue(pa[i]) + static_cast<C>(loadDouble(px[i])));
    }
  });
}

zeroc_rt_status_t kConvert(zeroc_rt_dtype_t from, const void *src,
                           zeroc_rt_dtype_t to, void *dst, int64_t n,
                           double factor) {
  return twoDtypeFlat("zeroc_rt_k_convert", from, "src", src, to, "dst", dst, n,
                      [&](const auto *ps, auto *pd) {
    using S = std::remove_const_t<std::remove_pointer_t<decltype(ps)>>;
    using D = std::remove_pointer_t<decltype(pd)>;
    if constexpr (kIsNarrowFloat<S> && !kIsNarrowFloat<D>) {
      // The 16-bit gradient into the optimizer's copy: exact widening, the
      // product in double, one rounding.
      float b[kChunk];
      forEachChunk(n, [&](int64_t i0, int64_t m) {
        loadRow(ps + i0, b, m);
        for (int64_t j = 0; j < m; ++j)
          pd[i0 + j] = storeValue<D>(static_cast<double>(b[j]) * factor);
      });
      return;
    } else if constexpr (std::is_same_v<S, float> && kIsNarrowFloat<D>) {
      // The f32 master back into the 16-bit parameter: with factor 1 the
      // value is the float itself, which storeRow rounds as storeValue does.
      if (factor == 1.0) {
        forEachChunk(n, [&](int64_t i0, int64_t m) { storeRow(ps + i0, pd + i0, m); });
        return;
      }
    }
    for (int64_t i = 0; i < n; ++i)
      pd[i] = storeValue<D>(loadDouble(ps[i]) * factor);
  });
}

zeroc_rt_status_t kSumSquares(zeroc_rt_dtype_t dtype, const void *x, int64_t n,
                              double *out) {
  const char *k = "zeroc_rt_k_sum_squares";
  ZEROC_RT_RETURN_IF_ERROR(checkFlat(k, dtype, kFloatDtypes, n, {{"x", x}}));
  if (!out)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: out is NULL", k);
  *out = dispatchFloat(dtype, [&](auto tag) {
    using T = decltype(tag);
    const T *px = static_cast<const T *>(x);
    double acc = 0.0;
    if constexpr (kIsNarrowFloat<T>) {
      float b[kChunk];
      forEachChunk(n, [&](int64_t i0, int64_t m) {
        loadRow(px + i0, b, m);
        for (int64_t j = 0; j < m; ++j) {
          double v = b[j];
          acc += v * v;
        }
      });
    } else {
      for (int64_t i = 0; i < n; ++i) {
        double v = loadDouble(px[i]);
        acc += v * v;
      }
    }
    return acc;
  });
  return nullptr;
}

/// 1 when some element's exponent bits are all ones (inf or NaN).
template <typename U> int anyNonFinite(const void *data, int64_t n, U expMask) {
  const U *p = static_cast<const U *>(data);
  // Blocks of a branch-free OR (vectorizable), early exit between blocks.
  constexpr int64_t kBlock = 4096;
  for (int64_t begin = 0; begin < n; begin += kBlock) {
    int64_t end = n - begin < kBlock ? n : begin + kBlock;
    U found = 0;
    for (int64_t i = begin; i < end; ++i)
      found |= static_cast<U>((p[i] & expMask) == expMask);
    if (found)
      return 1;
  }
  return 0;
}

zeroc_rt_status_t kHasInfOrNaN(zeroc_rt_dtype_t dtype, const void *x, int64_t n,
                               int *out) {
  const char *k = "zeroc_rt_k_has_inf_or_nan";
  ZEROC_RT_RETURN_IF_ERROR(checkFlat(k, dtype, kFloatDtypes, n, {{"x", x}}));
  if (!out)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: out is NULL", k);
  switch (dtype) {
  case ZEROC_RT_DTYPE_F16:
    *out = anyNonFinite<uint16_t>(x, n, 0x7C00u);
    break;
  case ZEROC_RT_DTYPE_BF16:
    *out = anyNonFinite<uint16_t>(x, n, 0x7F80u);
    break;
  case ZEROC_RT_DTYPE_F32:
    *out = anyNonFinite<uint32_t>(x, n, 0x7F800000u);
    break;
  default:
    *out = anyNonFinite<uint64_t>(x, n, 0x7FF0000000000000ull);
    break;
  }
  return nullptr;
}

/// One Adam/AdamW update of n elements, in element order, in the
/// parameters' own precision (F32 in float, as torch.optim.AdamW and
/// DeepSpeed's CPU Adam compute an fp32 parameter; F64 in double), with the
/// step's coefficients computed in double and rounded once. The wide
/// clones (AVX-512, AVX2) compute exactly what the baseline does: IEEE
/// add, mul, div and sqrt are correctly rounded at any vector width, and
/// this file is compiled with -ffp-contract=off (no fused multiply-add), so
/// every machine gets the same bits. Float halves the vector work of the
/// sqrt and the divisions: on GPT-2's 62 M-element stage-2 shard 208 ms
/// against 330 ms in double, the update then running at memory speed.
struct AdamCoefficients {
  double beta1, beta2, eps, weightDecay, stepSize, decay, biasCorrection2Sqrt;
  bool decoupled;
};

template <typename T>
inline void adamElements(T *p, const T *g, T *m, T *v, int64_t n,
                         const AdamCoefficients &c) {
  const T b1 = static_cast<T>(c.beta1), b2 = static_cast<T>(c.beta2),
          rest1 = static_cast<T>(1.0 - c.beta1),
          rest2 = static_cast<T>(1.0 - c.beta2),
          decay = static_cast<T>(c.decay),
          weightDecay = static_cast<T>(c.weightDecay),
          bc2Sqrt = static_cast<T>(c.biasCorrection2Sqrt),
          eps = static_cast<T>(c.eps), stepSize = static_cast<T>(c.stepSize);
  for (int64_t i = 0; i < n; ++i) {
    T pi = p[i], gi = g[i];
    if (c.decoupled)
      pi *= decay;
    else
      gi += weightDecay * pi;
    T mi = b1 * m[i] + rest1 * gi;
    T vi = b2 * v[i] + rest2 * gi * gi;
    T denom = std::sqrt(vi) / bc2Sqrt + eps;
    pi -= stepSize * (mi / denom);
    m[i] = mi;
    v[i] = vi;
    p[i] = pi;
  }
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define ZEROC_RT_WIDE_CLONES                                                   \
  __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define ZEROC_RT_WIDE_CLONES
#endif

ZEROC_RT_WIDE_CLONES void adamF32(float *p, const float *g, float *m, float *v,
                                  int64_t n, const AdamCoefficients &c) {
  adamElements(p, g, m, v, n, c);
}

ZEROC_RT_WIDE_CLONES void adamF64(double *p, const double *g, double *m,
                                  double *v, int64_t n, const AdamCoefficients &c) {
  adamElements(p, g, m, v, n, c);
}

zeroc_rt_status_t kAdam(zeroc_rt_dtype_t dtype, void *param, const void *grad,
                        void *expAvg, void *expAvgSq, int64_t n, double lr,
                        double beta1, double beta2, double eps,
                        double weightDecay, int adamWMode, int biasCorrection,
                        int64_t step) {
  const char *k = "zeroc_rt_k_adam_step";
  ZEROC_RT_RETURN_IF_ERROR(checkFlat(k, dtype, kWideFloatDtypes, n,
                                     {{"param", param},
                                      {"grad", grad},
                                      {"exp_avg", expAvg},
                                      {"exp_avg_sq", expAvgSq}}));
  ZEROC_RT_RETURN_IF_ERROR(checkRange(k, "lr", lr, 0.0, kInf, true));
  ZEROC_RT_RETURN_IF_ERROR(checkRange(k, "beta1", beta1, 0.0, 1.0, true));
  ZEROC_RT_RETURN_IF_ERROR(checkRange(k, "beta2", beta2, 0.0, 1.0, true));
  ZEROC_RT_RETURN_IF_ERROR(checkRange(k, "eps", eps, 0.0, kInf, true));
  ZEROC_RT_RETURN_IF_ERROR(
      checkRange(k, "weight_decay", weightDecay, 0.0, kInf, true));
  if (step < 1)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: step %lld must be >= 1 (1-based)", k,
                          static_cast<long long>(step));
  const bool decoupled = flag(adamWMode);
  const double stepD = static_cast<double>(step);
  const bool corrected = flag(biasCorrection);
  const double biasCorrection1 = corrected ? 1.0 - std::pow(beta1, stepD) : 1.0;
  const double biasCorrection2Sqrt =
      corrected ? std::sqrt(1.0 - std::pow(beta2, stepD)) : 1.0;
  const AdamCoefficients c{beta1, beta2, eps, weightDecay, lr / biasCorrection1,
                           1.0 - lr * weightDecay, biasCorrection2Sqrt, decoupled};
  if (dtype == ZEROC_RT_DTYPE_F32)
    adamF32(static_cast<float *>(param), static_cast<const float *>(grad),
            static_cast<float *>(expAvg), static_cast<float *>(expAvgSq), n, c);
  else
    adamF64(static_cast<double *>(param), static_cast<const double *>(grad),
            static_cast<double *>(expAvg), static_cast<double *>(expAvgSq), n, c);
  return nullptr;
}

zeroc_rt_status_t kSgd(zeroc_rt_dtype_t dtype, void *param, const void *grad,
                       void *momentumBuf, int64_t n, double lr,
                       double momentum, double weightDecay, double dampening,
                       int nesterov, int64_t step) {
  const char *k = "zeroc_rt_k_sgd_step";
  ZEROC_RT_RETURN_IF_ERROR(checkRange(k, "lr", lr, 0.0, kInf, true));
  ZEROC_RT_RETURN_IF_ERROR(checkRange(k, "momentum", momentum, 0.0, kInf, true));
  ZEROC_RT_RETURN_IF_ERROR(
      checkRange(k, "weight_decay", weightDecay, 0.0, kInf, true));
  // torch.optim.SGD accepts any dampening.
  ZEROC_RT_RETURN_IF_ERROR(checkRange(k, "dampening", dampening, -kInf, kInf, true));
  const bool useNesterov = flag(nesterov);
  if (useNesterov && (momentum <= 0.0 || dampening != 0.0))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: Nesterov momentum requires a momentum and zero "
                          "dampening",
                          k);
  if (step < 1)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: step %lld must be >= 1 (1-based)", k,
                          static_cast<long long>(step));
  const bool useMomentum = momentum != 0.0;
  if (useMomentum)
    ZEROC_RT_RETURN_IF_ERROR(checkFlat(
        k, dtype, kWideFloatDtypes, n,
        {{"param", param}, {"grad", grad}, {"momentum_buf", momentumBuf}}));
  else
    ZEROC_RT_RETURN_IF_ERROR(checkFlat(k, dtype, kWideFloatDtypes, n,
                                       {{"param", param}, {"grad", grad}}));
  dispatchWideFloat(dtype, [&](auto tag) {
    using T = decltype(tag);
    T *p = static_cast<T *>(param);
    const T *g = static_cast<const T *>(grad);
    T *buf = static_cast<T *>(momentumBuf);
    for (int64_t i = 0; i < n; ++i) {
      double pi = p[i];
      double d = static_cast<double>(g[i]) + weightDecay * pi;
      if (useMomentum) {
        double b = step == 1 ? d
                             : momentum * static_cast<double>(buf[i]) +
                                   (1.0 - dampening) * d;
        buf[i] = static_cast<T>(b);
        d = useNesterov ? d + momentum * b : b;
      }
      p[i] = static_cast<T>(pi - lr * d);
    }
  });
  return nullptr;
}

/// The arrays of a *_multi kernel: every one present when count > 0.
zeroc_rt_status_t checkMulti(const char *k, int64_t count,
                             const zeroc_rt_dtype_t *dtypes,
                             const void *const *xs, const int64_t *ns,
                             const void *out) {
  if (count < 0)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: count %lld is negative",
                          k, static_cast<long long>(count));
  if (count > 0 && (!dtypes || !xs || !ns))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: dtypes, xs or ns is NULL", k);
  if (!out)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: out is NULL", k);
  return nullptr;
}

zeroc_rt_status_t kSumSquaresMulti(int64_t count, const zeroc_rt_dtype_t *dtypes,
                                   const void *const *xs, const int64_t *ns,
                                   double *out) {
  ZEROC_RT_RETURN_IF_ERROR(
      checkMulti("zeroc_rt_k_sum_squares_multi", count, dtypes, xs, ns, out));
  double total = 0.0;
  for (int64_t t = 0; t < count; ++t) {
    double part = 0.0;
    ZEROC_RT_RETURN_IF_ERROR(kSumSquares(dtypes[t], xs[t], ns[t], &part));
    total += part;
  }
  *out = total;
  return nullptr;
}

zeroc_rt_status_t kHasInfOrNaNMulti(int64_t count, const zeroc_rt_dtype_t *dtypes,
                                    const void *const *xs, const int64_t *ns,
                                    int *out) {
  ZEROC_RT_RETURN_IF_ERROR(
      checkMulti("zeroc_rt_k_has_inf_or_nan_multi", count, dtypes, xs, ns, out));
  *out = 0;
  for (int64_t t = 0; t < count && !*out; ++t)
    ZEROC_RT_RETURN_IF_ERROR(kHasInfOrNaN(dtypes[t], xs[t], ns[t], out));
  return nullptr;
}

} // namespace
} // namespace zeroc_rt::kernels

using namespace zeroc_rt::kernels;

extern "C" {

zeroc_rt_status_t zeroc_rt_k_accumulate(zeroc_rt_dtype_t dtype, const void *x,
                                        void *acc, int64_t n) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kAccumulate(dtype, x, acc, n));
}

zeroc_rt_status_t zeroc_rt_k_scale(zeroc_rt_dtype_t dtype, void *x, int64_t n,
                                   double factor) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kScale(dtype, x, n, factor));
}

zeroc_rt_status_t zeroc_rt_k_accumulate_widening(zeroc_rt_dtype_t from,
                                                 const void *x,
                                                 zeroc_rt_dtype_t to, void *acc,
                                                 int64_t n) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kAccumulateWidening(from, x, to, acc, n));
}

zeroc_rt_status_t zeroc_rt_k_convert(zeroc_rt_dtype_t from, const void *src,
                                     zeroc_rt_dtype_t to, void *dst, int64_t n,
                                     double factor) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kConvert(from, src, to, dst, n, factor));
}

zeroc_rt_status_t zeroc_rt_k_sum_squares(zeroc_rt_dtype_t dtype, const void *x,
                                         int64_t n, double *out) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kSumSquares(dtype, x, n, out));
}

zeroc_rt_status_t zeroc_rt_k_has_inf_or_nan(zeroc_rt_dtype_t dtype,
                                            const void *x, int64_t n,
                                            int *out) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kHasInfOrNaN(dtype, x, n, out));
}

zeroc_rt_status_t zeroc_rt_k_sum_squares_multi(int64_t count,
                                               const zeroc_rt_dtype_t *dtypes,
                                               const void *const *xs,
                                               const int64_t *ns, double *out) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kSumSquaresMulti(count, dtypes, xs, ns, out));
}

zeroc_rt_status_t zeroc_rt_k_has_inf_or_nan_multi(int64_t count,
                                                  const zeroc_rt_dtype_t *dtypes,
                                                  const void *const *xs,
                                                  const int64_t *ns, int *out) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kHasInfOrNaNMulti(count, dtypes, xs, ns, out));
}

zeroc_rt_status_t zeroc_rt_k_adam_step(zeroc_rt_dtype_t dtype, void *param,
                                       const void *grad, void *exp_avg,
                                       void *exp_avg_sq, int64_t n, double lr,
                                       double beta1, double beta2, double eps,
                                       double weight_decay, int adam_w_mode,
                                       int bias_correction, int64_t step) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kAdam(dtype, param, grad, exp_avg,
                                         exp_avg_sq, n, lr, beta1, beta2, eps,
                                         weight_decay, adam_w_mode,
                                         bias_correction, step));
}

zeroc_rt_status_t zeroc_rt_k_sgd_step(zeroc_rt_dtype_t dtype, void *param,
                                      const void *grad, void *momentum_buf,
                                      int64_t n, double lr, double momentum,
                                      double weight_decay, double dampening,
                                      int nesterov, int64_t step) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kSgd(dtype, param, grad, momentum_buf, n, lr,
                                        momentum, weight_decay, dampening,
                                        nesterov, step));
}

} // extern "C"

zeroc_rt_status_t zeroc_rt_k_clip_grad_norm(double sum_squares, double scale,
                                            int64_t world, double max_norm,
                                            double *norm, double *factor) {
  if (!norm || !factor)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "zeroc_rt_k_clip_grad_norm: norm or factor is NULL");
  if (world < 1 || !(scale > 0.0) || !(max_norm >= 0.0))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "zeroc_rt_k_clip_grad_norm: world %lld, scale %g and "
                          "max_norm %g must be >= 1, > 0 and >= 0",
                          static_cast<long long>(world), scale, max_norm);
  const double average = 1.0 / (static_cast<double>(world) * scale);
  *norm = std::sqrt(sum_squares) * average;
  *factor = average;
  if (max_norm > 0.0 && std::isfinite(*norm)) {
    const double clip = (*norm + 1e-6) / max_norm;
    if (clip > 1.0)
      *factor = average / clip;
  }
  return nullptr;
}
