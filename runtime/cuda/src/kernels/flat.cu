//===- kernels/flat.cu - The engine's and the optimizer step's kernels ----===//
//
// Flat arrays: gradient accumulation (widening 16-bit into f32), scaling and
// dtype conversion, the sum of squares and the overflow check (their result
// read back to the host), and the Adam and SGD updates with zeroc_rt_k_*'s
// arithmetic (the parameter's own precision, coefficients in double), one
// tensor or many in one launch.
//
//===----------------------------------------------------------------------===//

#include "kernels/common.h"

#include "zeroc_rt_cuda/chunk.h"

namespace zeroc_rt::cuda {
namespace {

template <typename S, typename A>
ZRT_GLOBAL void accumulateKernel(const S *x, A *acc, int64_t n) {
  for (int64_t i = gridFirst(); i < n; i += gridStride())
    acc[i] = storeD<A>(static_cast<double>(load(acc[i])) + static_cast<double>(load(x[i])));
}

template <typename S>
ZRT_GLOBAL void scaleKernel(S *x, int64_t n, double factor) {
  for (int64_t i = gridFirst(); i < n; i += gridStride())
    x[i] = storeD<S>(static_cast<double>(load(x[i])) * factor);
}

template <typename F, typename T>
ZRT_GLOBAL void convertKernel(const F *src, T *dst, int64_t n, double factor) {
  for (int64_t i = gridFirst(); i < n; i += gridStride())
    dst[i] = storeD<T>(static_cast<double>(load(src[i])) * factor);
}

/// Adds the sum of squares of x's n elements into *out. Its grid is capped
/// (addSumSquares), so a thread takes many elements: 16 bytes at a time
/// when x is 16-byte aligned (whole chunks, then the rest one at a time; a
/// grid of one thread still adds them in order), which keeps 4 to 8 times
/// the bytes in flight of a load per element.
template <typename S>
ZRT_GLOBAL void sumSquaresKernel(const S *x, int64_t n, double *out) {
  constexpr int K = Chunk<S>::kSize;
  __shared__ double scratch[32];
  double acc = 0.0;
  const int64_t whole = aligned16(x) ? n / K : 0;
  for (int64_t c = gridFirst(); c < whole; c += gridStride()) {
    typename Compute<S>::type v[K];
    loadRun<K>(x + c * K, v);
    for (int e = 0; e < K; ++e) {
      const double d = static_cast<double>(v[e]);
      acc += d * d;
    }
  }
  for (int64_t i = whole * K + gridFirst(); i < n; i += gridStride()) {
    const double v = static_cast<double>(load(x[i]));
    acc += v * v;
  }
  acc = blockSum(acc, scratch);
  if (threadIndex() == 0)
    atomicAddDouble(out, acc);
}

template <typename S>
ZRT_GLOBAL void infOrNanKernel(const S *x, int64_t n, unsigned *out) {
  using C = typename Compute<S>::type; // double for F64: 1e300 is finite
  for (int64_t i = gridFirst(); i < n; i += gridStride()) {
    const C v = load(x[i]);
    if (!(v - v == C(0))) // inf - inf and NaN - NaN are NaN
      atomicOr(out, 1u);
  }
}

/// Adam's per-element coefficients, in the parameter's precision.
template <typename T> struct AdamCoeffs {
  T b1, b2, rest1, rest2, decay, weightDecay, bc2Sqrt, eps, stepSize;
  int decoupled;
};

/// One element of Adam: zeroc_rt_k_adam_step's arithmetic.
template <typename T>
ZRT_DEV void adamElement(T &pi, T gi, T &mi, T &vi, const AdamCoeffs<T> &c) {
  if (c.decoupled)
    pi *= c.decay;
  else
    gi += c.weightDecay * pi;
  mi = c.b1 * mi + c.rest1 * gi;
  vi = c.b2 * vi + c.rest2 * gi * gi;
  const T denom = sqrt(vi) / c.bc2Sqrt + c.eps;
  pi -= c.stepSize * (mi / denom);
}

template <typename T>
ZRT_GLOBAL void adamKernel(T *p, const T *g, T *m, T *v, int64_t n, AdamCoeffs<T> c) {
  for (int64_t i = gridFirst(); i < n; i += gridStride()) {
    T pi = p[i], mi = m[i], vi = v[i];
    adamElement(pi, g[i], mi, vi, c);
    m[i] = mi;
    v[i] = vi;
    p[i] = pi;
  }
}

/// Elements of each tensor of a multi-tensor optimizer step a block takes.
constexpr int64_t kUpdateChunk = 65536;

/// A row of a multi-tensor step's table in device memory: a tensor of
/// zeroc_rt_cuda_k_adam_step_multi (`state`: m and v) or
/// zeroc_rt_cuda_k_sgd_step_multi (`state[0]`: the momentum buffer or
/// NULL), and its first chunk.
struct UpdateRow {
  const void *grad;
  void *param, *state[2], *rounded;
  int64_t n, firstChunk;
  int32_t gradDtype, roundedDtype;
};

/// Element i of a float array of `dtype`, as double.
ZRT_DEV double loadAt(int32_t dtype, const void *x, int64_t i) {
  switch (dtype) {
  case ZEROC_RT_DTYPE_F16:
    return static_cast<double>(load(static_cast<const F16 *>(x)[i]));
  case ZEROC_RT_DTYPE_BF16:
    return static_cast<double>(load(static_cast<const BF16 *>(x)[i]));
  case ZEROC_RT_DTYPE_F64:
    return static_cast<const double *>(x)[i];
  default:
    return static_cast<double>(static_cast<const float *>(x)[i]);
  }
}

/// Stores `v` into element i of a 16-bit float array of `dtype`.
ZRT_DEV void storeHalfAt(int32_t dtype, void *x, int64_t i, double v) {
  if (dtype == ZEROC_RT_DTYPE_F16)
    static_cast<F16 *>(x)[i] = storeD<F16>(v);
  else
    static_cast<BF16 *>(x)[i] = storeD<BF16>(v);
}

/// Every tensor of `rows` in one launch, a chunk per block: the gradient
/// times `factor` (zeroc_rt_cuda_k_scale's or _convert's rounding),
/// `update(row, i, param element, gradient element)`, the master rounded
/// into the 16-bit parameter (_convert's).
template <typename T, typename Update>
ZRT_DEV void updateChunks(const UpdateRow *rows, int64_t count, int64_t chunks, double factor,
                          Update &&update) {
  for (int64_t chunk = blockIndex(); chunk < chunks; chunk += gridBlocks()) {
    const UpdateRow &r = rows[rowOfChunk(rows, count, chunk)];
    const int64_t begin = (chunk - r.firstChunk) * kUpdateChunk;
    const int64_t end = begin + kUpdateChunk < r.n ? begin + kUpdateChunk : r.n;
    T *p = static_cast<T *>(r.param);
    for (int64_t i = begin + threadIndex(); i < end; i += blockThreads()) {
      T pi = p[i];
      update(r, i, pi, storeD<T>(loadAt(r.gradDtype, r.grad, i) * factor));
      p[i] = pi;
      if (r.rounded)
        storeHalfAt(r.roundedDtype, r.rounded, i, static_cast<double>(pi));
    }
  }
}

template <typename T>
ZRT_GLOBAL void adamMultiKernel(const UpdateRow *rows, int64_t count, int64_t chunks, double factor,
                                AdamCoeffs<T> c) {
  updateChunks<T>(rows, count, chunks, factor, [&](const UpdateRow &r, int64_t i, T &pi, T gi) {
    T *m = static_cast<T *>(r.state[0]), *v = static_cast<T *>(r.state[1]);
    T mi = m[i], vi = v[i];
    adamElement(pi, gi, mi, vi, c);
    m[i] = mi;
    v[i] = vi;
  });
}

/// SGD's per-element arguments; `first`: the step is the first, which
/// starts the momentum buffer at the gradient.
struct SgdCoeffs {
  double lr, momentum, weightDecay, dampening;
  int nesterov, first;
};

/// One element of SGD: zeroc_rt_k_sgd_step's arithmetic (in double); `buf`
/// is its momentum buffer's element, or NULL without momentum.
template <typename T> ZRT_DEV void sgdElement(T &pi, T gi, T *buf, const SgdCoeffs &c) {
  const double p = pi;
  double d = static_cast<double>(gi) + c.weightDecay * p;
  if (buf) {
    const double b = c.first ? d : c.momentum * static_cast<double>(*buf) + (1.0 - c.dampening) * d;
    *buf = static_cast<T>(b);
    d = c.nesterov ? d + c.momentum * b : b;
  }
  pi = static_cast<T>(p - c.lr * d);
}

template <typename T> ZRT_GLOBAL void sgdKernel(T *p, const T *g, T *buf, int64_t n, SgdCoeffs c) {
  for (int64_t i = gridFirst(); i < n; i += gridStride()) {
    T pi = p[i];
    sgdElement(pi, g[i], buf ? buf + i : nullptr, c);
    p[i] = pi;
  }
}

template <typename T>
ZRT_GLOBAL void sgdMultiKernel(const UpdateRow *rows, int64_t count, int64_t chunks, double factor,
                               SgdCoeffs c) {
  updateChunks<T>(rows, count, chunks, factor, [&](const UpdateRow &r, int64_t i, T &pi, T gi) {
    T *buf = static_cast<T *>(r.state[0]);
    sgdElement(pi, gi, buf ? buf + i : nullptr, c);
  });
}

zeroc_rt_status_t checkFlatArgs(const char *k, int64_t n,
                                std::initializer_list<const void *> pointers) {
  if (n < 0)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: n %lld is negative", k,
                          static_cast<long long>(n));
  for (const void *p : pointers)
    if (n > 0 && !p)
      return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: a buffer is NULL", k);
  return nullptr;
}

template <typename Fn>
zeroc_rt_status_t dispatchWide(const char *k, zeroc_rt_dtype_t dtype, Fn &&fn) {
  if (dtype == ZEROC_RT_DTYPE_F32)
    return fn(float{});
  if (dtype == ZEROC_RT_DTYPE_F64)
    return fn(double{});
  return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                        "%s: dtype %s is not f32 or f64", k, zeroc_rt_dtype_name(dtype));
}

zeroc_rt_status_t checkAdam(const char *k, double lr, double beta1, double beta2,
                            double eps, double weightDecay, int64_t step) {
  if (step < 1 || !(lr >= 0) || !(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1) ||
      !(eps >= 0) || !(weightDecay >= 0))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: bad hyperparameters (lr %g, betas %g %g, eps %g, "
                          "weight_decay %g, step %lld)",
                          k, lr, beta1, beta2, eps, weightDecay,
                          static_cast<long long>(step));
  return nullptr;
}

/// zeroc_rt_cuda_k_adam_step's coefficients at `step`.
template <typename T>
AdamCoeffs<T> adamCoeffs(double lr, double beta1, double beta2, double eps,
                         double weightDecay, int adamW, int biasCorrection,
                         int64_t step) {
  const double stepD = static_cast<double>(step);
  const double bc1 = biasCorrection ? 1.0 - std::pow(beta1, stepD) : 1.0;
  const double bc2Sqrt = biasCorrection ? std::sqrt(1.0 - std::pow(beta2, stepD)) : 1.0;
  return {T(beta1),       T(beta2),   T(1.0 - beta1), T(1.0 - beta2),
          T(1.0 - lr * weightDecay), T(weightDecay), T(bc2Sqrt), T(eps),
          T(lr / bc1),    adamW ? 1 : 0};
}

/// Tensor `i` of a multi-tensor step (zeroc_rt_cuda_adam_tensor_t or
/// _sgd_tensor_t, which name their shared fields alike): its count, its
/// gradient, parameter and `state` buffers, its dtypes; errors name its
/// index.
template <typename Tensor>
zeroc_rt_status_t checkUpdateTensor(const char *k, int64_t i, const Tensor &t,
                                    std::initializer_list<const void *> state) {
  const long long at = static_cast<long long>(i);
  if (t.n < 0)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: tensor %lld: n %lld is negative", k, at,
                          static_cast<long long>(t.n));
  bool missing = !t.grad || !t.param;
  for (const void *p : state)
    missing |= !p;
  if (t.n > 0 && missing)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: tensor %lld: a buffer is NULL", k, at);
  const zeroc_rt_dtype_t g = t.grad_dtype, r = t.rounded_dtype;
  if (g != ZEROC_RT_DTYPE_F32 && g != ZEROC_RT_DTYPE_F64 && g != ZEROC_RT_DTYPE_F16 &&
      g != ZEROC_RT_DTYPE_BF16)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: tensor %lld: gradient dtype %s is not a float dtype", k, at,
                          zeroc_rt_dtype_name(g));
  if (t.rounded && r != ZEROC_RT_DTYPE_F16 && r != ZEROC_RT_DTYPE_BF16)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: tensor %lld: rounded dtype %s is not f16 or bf16", k, at,
                          zeroc_rt_dtype_name(r));
  return nullptr;
}

/// Tensor `t`'s row of the table, with its state buffers.
template <typename Tensor> UpdateRow tableRow(const Tensor &t, void *state0, void *state1) {
  return {t.grad, t.param, {state0, state1}, t.rounded, t.n, 0, t.grad_dtype, t.rounded_dtype};
}

/// A multi-tensor step in one launch: `rowOf(i, row)` checks tensor i
/// (*failed, when not NULL, is set to the first that fails) and fills its
/// row; empty tensors are left out; the table goes to the device and
/// `kernelOf(T{})` runs over it, a chunk per block, with the factor and
/// `coeffsOf(T{})`, T the dtype's (f32 or f64).
template <typename RowOf, typename KernelOf, typename CoeffsOf>
zeroc_rt_status_t multiStep(const char *k, zeroc_rt_dtype_t dtype, int64_t count, bool given,
                            int64_t *failed, double factor, RowOf &&rowOf, KernelOf &&kernelOf,
                            CoeffsOf &&coeffsOf) {
  if (count < 0 || (count > 0 && !given))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: count %lld, tensors %s", k,
                          static_cast<long long>(count), given ? "given" : "NULL");
  std::vector<UpdateRow> rows;
  int64_t chunks = 0;
  for (int64_t i = 0; i < count; ++i) {
    UpdateRow row{};
    if (zeroc_rt_status_t status = rowOf(i, row)) {
      if (failed)
        *failed = i;
      return status;
    }
    if (row.n == 0)
      continue;
    row.firstChunk = chunks;
    rows.push_back(row);
    chunks += (row.n + kUpdateChunk - 1) / kUpdateChunk;
  }
  return dispatchWide(k, dtype, [&](auto t) -> zeroc_rt_status_t {
    if (rows.empty())
      return nullptr;
    const UpdateRow *table = nullptr;
    ZEROC_RT_RETURN_IF_ERROR(uploadRows(rows, &table));
    return ZRT_LAUNCH(k, kernelOf(t), cappedBlocks(chunks), kBlock, table,
                      static_cast<int64_t>(rows.size()), chunks, factor, coeffsOf(t));
  });
}

SgdCoeffs sgdCoeffs(double lr, double momentum, double weightDecay, double dampening, int nesterov,
                    int64_t step) {
  return {lr, momentum, weightDecay, dampening, nesterov ? 1 : 0, step == 1 ? 1 : 0};
}

zeroc_rt_status_t checkSgd(const char *k, double momentum, double dampening, int nesterov,
                           int64_t step) {
  if (step < 1 || (nesterov && (momentum <= 0.0 || dampening != 0.0)))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: bad arguments (step %lld, nesterov %d, momentum "
                          "%g, dampening %g)",
                          k, static_cast<long long>(step), nesterov, momentum, dampening);
  return nullptr;
}

} // namespace
} // namespace zeroc_rt::cuda

using namespace zeroc_rt::cuda;

extern "C" {

zeroc_rt_status_t zeroc_rt_cuda_k_accumulate(zeroc_rt_dtype_t dtype, const void *x,
                                             void *acc, int64_t n) {
  return zeroc_rt_cuda_k_accumulate_widening(dtype, x, dtype, acc, n);
}

zeroc_rt_status_t zeroc_rt_cuda_k_accumulate_widening(zeroc_rt_dtype_t from, const void *x,
                                                      zeroc_rt_dtype_t to, void *acc,
                                                      int64_t n) {
  const char *k = "accumulate";
  ZEROC_RT_RETURN_IF_ERROR(checkFlatArgs(k, n, {x, acc}));
  if (n == 0)
    return nullptr;
  return dispatchFloatPair(k, from, to, [&](auto f, auto t) {
    using F = decltype(f);
    using T = decltype(t);
    return ZRT_LAUNCH(k, accumulateKernel<F, T>, blocksFor(n), kBlock,
                      static_cast<const F *>(x), static_cast<T *>(acc), n);
  });
}

zeroc_rt_status_t zeroc_rt_cuda_k_scale(zeroc_rt_dtype_t dtype, void *x, int64_t n,
                                        double factor) {
  ZEROC_RT_RETURN_IF_ERROR(checkFlatArgs("scale", n, {x}));
  if (n == 0 || factor == 1.0)
    return nullptr;
  return dispatchFloat("scale", dtype, [&](auto s) {
    using S = decltype(s);
    return ZRT_LAUNCH("scale", scaleKernel<S>, blocksFor(n), kBlock,
                      static_cast<S *>(x), n, factor);
  });
}

zeroc_rt_status_t zeroc_rt_cuda_k_convert(zeroc_rt_dtype_t from, const void *src,
                                          zeroc_rt_dtype_t to, void *dst, int64_t n,
                                          double factor) {
  const char *k = "convert";
  ZEROC_RT_RETURN_IF_ERROR(checkFlatArgs(k, n, {src, dst}));
  if (n == 0)
    return nullptr;
  return dispatchFloatPair(k, from, to, [&](auto f, auto t) {
    using F = decltype(f);
    using T = decltype(t);
    return ZRT_LAUNCH(k, convertKernel<F, T>, blocksFor(n), kBlock,
                      static_cast<const F *>(src), static_cast<T *>(dst), n, factor);
  });
}

namespace {

// Launches that add x's sum of squares into *acc, or set *flag when x has an
// inf or NaN, on the compute stream, without reading anything back.
zeroc_rt_status_t addSumSquares(const char *k, zeroc_rt_dtype_t dtype, const void *x,
                                int64_t n, double *acc) {
  ZEROC_RT_RETURN_IF_ERROR(checkFlatArgs(k, n, {x}));
  if (n == 0)
    return nullptr;
  return dispatchFloat(k, dtype, [&](auto s) {
    using S = decltype(s);
    int64_t blocks = blocksFor(n);
    blocks = blocks > 1024 ? 1024 : blocks;
    return ZRT_LAUNCH(k, sumSquaresKernel<S>, blocks, kBlock, static_cast<const S *>(x), n, acc);
  });
}

zeroc_rt_status_t markInfOrNan(const char *k, zeroc_rt_dtype_t dtype, const void *x,
                               int64_t n, unsigned *flag) {
  ZEROC_RT_RETURN_IF_ERROR(checkFlatArgs(k, n, {x}));
  if (n == 0)
    return nullptr;
  return dispatchFloat(k, dtype, [&](auto s) {
    using S = decltype(s);
    return ZRT_LAUNCH(k, infOrNanKernel<S>, blocksFor(n), kBlock, static_cast<const S *>(x), n, flag);
  });
}

zeroc_rt_status_t checkMultiArgs(const char *k, int64_t count, const zeroc_rt_dtype_t *dtypes,
                                 const void *const *xs, const int64_t *ns, const void *out) {
  if (count < 0)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: count %lld is negative", k,
                          static_cast<long long>(count));
  if (count > 0 && (!dtypes || !xs || !ns))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: dtypes, xs or ns is NULL", k);
  if (!out)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: out is NULL", k);
  return nullptr;
}

// The sum of squares of `count` tensors (count 1: one), one device
// accumulator, one read back.
zeroc_rt_status_t sumSquaresOf(const char *k, int64_t count, const zeroc_rt_dtype_t *dtypes,
                               const void *const *xs, const int64_t *ns, double *out) {
  ZEROC_RT_RETURN_IF_ERROR(checkMultiArgs(k, count, dtypes, xs, ns, out));
  *out = 0.0;
  double *acc = deviceScalars();
  ZEROC_RT_RETURN_IF_ERROR(gpuZero(acc, sizeof(double)));
  for (int64_t t = 0; t < count; ++t)
    ZEROC_RT_RETURN_IF_ERROR(addSumSquares(k, dtypes[t], xs[t], ns[t], acc));
  return gpuDownload(out, acc, sizeof(double));
}

zeroc_rt_status_t infOrNanOf(const char *k, int64_t count, const zeroc_rt_dtype_t *dtypes,
                             const void *const *xs, const int64_t *ns, int *out) {
  ZEROC_RT_RETURN_IF_ERROR(checkMultiArgs(k, count, dtypes, xs, ns, out));
  *out = 0;
  unsigned *flag = reinterpret_cast<unsigned *>(deviceScalars());
  ZEROC_RT_RETURN_IF_ERROR(gpuZero(flag, sizeof(unsigned)));
  for (int64_t t = 0; t < count; ++t)
    ZEROC_RT_RETURN_IF_ERROR(markInfOrNan(k, dtypes[t], xs[t], ns[t], flag));
  unsigned found = 0;
  ZEROC_RT_RETURN_IF_ERROR(gpuDownload(&found, flag, sizeof found));
  *out = found ? 1 : 0;
  return nullptr;
}

} // namespace

zeroc_rt_status_t zeroc_rt_cuda_k_sum_squares(zeroc_rt_dtype_t dtype, const void *x,
                                              int64_t n, double *out) {
  return sumSquaresOf("sum_squares", 1, &dtype, &x, &n, out);
}

zeroc_rt_status_t zeroc_rt_cuda_k_has_inf_or_nan(zeroc_rt_dtype_t dtype, const void *x,
                                                 int64_t n, int *out) {
  return infOrNanOf("has_inf_or_nan", 1, &dtype, &x, &n, out);
}

zeroc_rt_status_t zeroc_rt_cuda_k_sum_squares_multi(int64_t count,
                                                    const zeroc_rt_dtype_t *dtypes,
                                                    const void *const *xs, const int64_t *ns,
                                                    double *out) {
  return sumSquaresOf("sum_squares_multi", count, dtypes, xs, ns, out);
}

zeroc_rt_status_t zeroc_rt_cuda_k_has_inf_or_nan_multi(int64_t count,
                                                       const zeroc_rt_dtype_t *dtypes,
                                                       const void *const *xs,
                                                       const int64_t *ns, int *out) {
  return infOrNanOf("has_inf_or_nan_multi", count, dtypes, xs, ns, out);
}

zeroc_rt_status_t zeroc_rt_cuda_k_adam_step(zeroc_rt_dtype_t dtype, void *param,
                                            const void *grad, void *exp_avg,
                                            void *exp_avg_sq, int64_t n, double lr,
                                            double beta1, double beta2, double eps,
                                            double weight_decay, int adam_w_mode,
                                            int bias_correction, int64_t step) {
  const char *k = "adam_step";
  ZEROC_RT_RETURN_IF_ERROR(checkFlatArgs(k, n, {param, grad, exp_avg, exp_avg_sq}));
  ZEROC_RT_RETURN_IF_ERROR(checkAdam(k, lr, beta1, beta2, eps, weight_decay, step));
  if (n == 0)
    return nullptr;
  return dispatchWide(k, dtype, [&](auto t) {
    using T = decltype(t);
    return ZRT_LAUNCH(k, adamKernel<T>, blocksFor(n), kBlock, static_cast<T *>(param),
                      static_cast<const T *>(grad), static_cast<T *>(exp_avg),
                      static_cast<T *>(exp_avg_sq), n,
                      adamCoeffs<T>(lr, beta1, beta2, eps, weight_decay, adam_w_mode,
                                    bias_correction, step));
  });
}

zeroc_rt_status_t zeroc_rt_cuda_k_adam_step_multi(
    zeroc_rt_dtype_t dtype, int64_t count, const zeroc_rt_cuda_adam_tensor_t *tensors,
    double factor, double lr, double beta1, double beta2, double eps,
    double weight_decay, int adam_w_mode, int bias_correction, int64_t step,
    int64_t *failed) {
  const char *k = "adam_step_multi";
  if (failed)
    *failed = -1;
  ZEROC_RT_RETURN_IF_ERROR(checkAdam(k, lr, beta1, beta2, eps, weight_decay, step));
  return multiStep(
      k, dtype, count, tensors != nullptr, failed, factor,
      [&](int64_t i, UpdateRow &row) -> zeroc_rt_status_t {
        const zeroc_rt_cuda_adam_tensor_t &t = tensors[i];
        row = tableRow(t, t.exp_avg, t.exp_avg_sq);
        return checkUpdateTensor(k, i, t, {t.exp_avg, t.exp_avg_sq});
      },
      [](auto t) { return adamMultiKernel<decltype(t)>; },
      [&](auto t) {
        return adamCoeffs<decltype(t)>(lr, beta1, beta2, eps, weight_decay, adam_w_mode,
                                       bias_correction, step);
      });
}

zeroc_rt_status_t zeroc_rt_cuda_k_sgd_step(zeroc_rt_dtype_t dtype, void *param,
                                           const void *grad, void *momentum_buf,
                                           int64_t n, double lr, double momentum,
                                           double weight_decay, double dampening,
                                           int nesterov, int64_t step) {
  const char *k = "sgd_step";
  const bool useMomentum = momentum != 0.0;
  ZEROC_RT_RETURN_IF_ERROR(checkFlatArgs(k, n, {param, grad}));
  if (useMomentum)
    ZEROC_RT_RETURN_IF_ERROR(checkFlatArgs(k, n, {momentum_buf}));
  ZEROC_RT_RETURN_IF_ERROR(checkSgd(k, momentum, dampening, nesterov, step));
  if (n == 0)
    return nullptr;
  return dispatchWide(k, dtype, [&](auto t) {
    using T = decltype(t);
    return ZRT_LAUNCH(k, sgdKernel<T>, blocksFor(n), kBlock, static_cast<T *>(param),
                      static_cast<const T *>(grad),
                      useMomentum ? static_cast<T *>(momentum_buf) : nullptr, n,
                      sgdCoeffs(lr, momentum, weight_decay, dampening, nesterov, step));
  });
}

zeroc_rt_status_t zeroc_rt_cuda_k_sgd_step_multi(zeroc_rt_dtype_t dtype, int64_t count,
                                                 const zeroc_rt_cuda_sgd_tensor_t *tensors,
                                                 double factor, double lr, double momentum,
                                                 double weight_decay, double dampening,
                                                 int nesterov, int64_t step, int64_t *failed) {
  const char *k = "sgd_step_multi";
  const bool useMomentum = momentum != 0.0;
  if (failed)
    *failed = -1;
  ZEROC_RT_RETURN_IF_ERROR(checkSgd(k, momentum, dampening, nesterov, step));
  const SgdCoeffs coeffs = sgdCoeffs(lr, momentum, weight_decay, dampening, nesterov, step);
  return multiStep(
      k, dtype, count, tensors != nullptr, failed, factor,
      [&](int64_t i, UpdateRow &row) -> zeroc_rt_status_t {
        const zeroc_rt_cuda_sgd_tensor_t &t = tensors[i];
        row = tableRow(t, useMomentum ? t.momentum_buf : nullptr, nullptr);
        ZEROC_RT_RETURN_IF_ERROR(checkUpdateTensor(k, i, t, {}));
        if (useMomentum && t.n > 0 && !t.momentum_buf)
          return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                                "%s: tensor %lld: momentum_buf is NULL (momentum %g)", k,
                                static_cast<long long>(i), momentum);
        return nullptr;
      },
      [](auto t) { return sgdMultiKernel<decltype(t)>; }, [&](auto) { return coeffs; });
}

zeroc_rt_status_t zeroc_rt_cuda_k_clip_grad_norm(double sum_squares, double scale,
                                                 int64_t world, double max_norm,
                                                 double *norm, double *factor) {
  return zeroc_rt_k_clip_grad_norm(sum_squares, scale, world, max_norm, norm, factor);
}

} // extern "C"
