//===- kernels/pad.cu - Pad (constant, reflect, edge, wrap) and its adjoint ===//
//
// pad: one thread per output element, which finds the input element it
// reads dim by dim (sourceOf, the CPU kernel's rule) or the fill value.
// pad_grad: grad_out's elements are added to the input positions they read
// with atomics into a double scratch of grad_in's element count (reflect
// and edge add several into one; the CPU sums in double in index order),
// then rounded once into grad_in.
//
//===----------------------------------------------------------------------===//

#include "kernels/common.h"

namespace zeroc_rt::cuda {
namespace {

/// Per dim: out's and in's dims, in's element stride and the begin pad.
struct PadPlan {
  int rank = 0;
  int mode = 0;
  int64_t outDims[ZEROC_RT_MAX_RANK] = {};
  int64_t inDims[ZEROC_RT_MAX_RANK] = {};
  int64_t inStride[ZEROC_RT_MAX_RANK] = {};
  int64_t lo[ZEROC_RT_MAX_RANK] = {};
};

/// The input position padded position `p` (shifted by the begin pad, so
/// that [0, n) is in bounds) reads, or -1 for constant padding; n >= 1 for
/// the modes but constant (checked on the host).
ZRT_HD int64_t sourceOf(int64_t p, int64_t n, int mode) {
  if (p >= 0 && p < n)
    return p;
  switch (mode) {
  case ZEROC_RT_PAD_EDGE:
    return p < 0 ? 0 : n - 1;
  case ZEROC_RT_PAD_REFLECT: {
    if (n == 1)
      return 0;
    const int64_t period = 2 * (n - 1);
    const int64_t q = ((p % period) + period) % period;
    return q < n ? q : period - q;
  }
  case ZEROC_RT_PAD_WRAP:
    return ((p % n) + n) % n;
  default:
    return -1;
  }
}

/// The input offset output element `o` reads, or -1 (the fill value).
ZRT_HD int64_t padSource(const PadPlan &p, int64_t o) {
  int64_t src = 0;
  for (int d = p.rank - 1; d >= 0; --d) {
    const int64_t i = o % p.outDims[d];
    o /= p.outDims[d];
    const int64_t s = sourceOf(i - p.lo[d], p.inDims[d], p.mode);
    if (s < 0)
      return -1;
    src += s * p.inStride[d];
  }
  return src;
}

template <typename U>
ZRT_GLOBAL void padKernel(const U *in, U *out, PadPlan p, U fill, int64_t n) {
  for (int64_t i = gridFirst(); i < n; i += gridStride()) {
    const int64_t s = padSource(p, i);
    out[i] = s < 0 ? fill : in[s];
  }
}

template <typename S>
ZRT_GLOBAL void padGradKernel(const S *gout, double *acc, PadPlan p, int64_t n) {
  for (int64_t i = gridFirst(); i < n; i += gridStride()) {
    const int64_t s = padSource(p, i);
    if (s >= 0)
      atomicAddDouble(acc + s, static_cast<double>(load(gout[i])));
  }
}

template <typename S>
ZRT_GLOBAL void roundDoubleKernel(const double *from, S *to, int64_t n) {
  for (int64_t i = gridFirst(); i < n; i += gridStride())
    to[i] = storeD<S>(from[i]);
}

/// Checks pads against the unpadded `in` and the padded `out` and the mode
/// (the CPU kernel's planPad); fills the plan.
zeroc_rt_status_t planPad(const char *k, const char *inName, const zeroc_rt_tensor_t &in,
                          const char *outName, const zeroc_rt_tensor_t &out,
                          const int64_t *pads, zeroc_rt_pad_mode_t mode, PadPlan &p) {
  using namespace zeroc_rt::kernels;
  if (mode != ZEROC_RT_PAD_CONSTANT && mode != ZEROC_RT_PAD_REFLECT &&
      mode != ZEROC_RT_PAD_EDGE && mode != ZEROC_RT_PAD_WRAP)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: invalid mode %d", k,
                          static_cast<int>(mode));
  if (in.rank != out.rank)
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH, "%s: %s %s must have the rank of %s %s", k,
                          outName, describe(out).c_str(), inName, describe(in).c_str());
  if (in.rank > 0 && !pads)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: pads is NULL", k);
  p.rank = in.rank;
  p.mode = static_cast<int>(mode);
  int64_t stride = 1;
  for (int d = in.rank - 1; d >= 0; --d) {
    p.inStride[d] = stride;
    stride *= in.dims[d];
  }
  for (int d = 0; d < in.rank; ++d) {
    const int64_t n = in.dims[d], lo = pads[d], hi = pads[d + in.rank];
    int64_t size = 0;
    if (__builtin_add_overflow(lo, n, &size) || __builtin_add_overflow(size, hi, &size) ||
        size != out.dims[d])
      return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                            "%s: dim %d: %s %s padded by %lld, %lld is not %s %s", k, d, inName,
                            describe(in).c_str(), static_cast<long long>(lo),
                            static_cast<long long>(hi), outName, describe(out).c_str());
    if (n == 0 && size > 0 && mode != ZEROC_RT_PAD_CONSTANT)
      return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                            "%s: dim %d of %s %s is empty; only constant padding can fill it",
                            k, d, inName, describe(in).c_str());
    p.outDims[d] = size;
    p.inDims[d] = n;
    p.lo[d] = lo;
  }
  return nullptr;
}

} // namespace
} // namespace zeroc_rt::cuda

using namespace zeroc_rt::cuda;

extern "C" {

zeroc_rt_status_t zeroc_rt_cuda_k_pad(zrt_ct in, const int64_t *pads, zeroc_rt_pad_mode_t mode,
                                      double value, zrt_ct out) {
  using namespace zeroc_rt::kernels;
  const char *k = "pad";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "in", in));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "out", *out, "in", *in));
  PadPlan p;
  ZEROC_RT_RETURN_IF_ERROR(planPad(k, "in", *in, "out", *out, pads, mode, p));
  // The fill value in out's dtype, converted as the CPU's cast converts.
  uint64_t fill = 0;
  if (mode == ZEROC_RT_PAD_CONSTANT) {
    zeroc_rt_tensor_t from{&value, ZEROC_RT_DTYPE_F64, 0, {}};
    zeroc_rt_tensor_t to{&fill, out->dtype, 0, {}};
    ZEROC_RT_RETURN_IF_ERROR(zeroc_rt_k_cast(&from, &to));
  }
  const int64_t n = numElements(*out);
  if (!n)
    return nullptr;
  return bySize(zeroc_rt_dtype_size(out->dtype), [&](auto u) {
    using U = decltype(u);
    U f;
    std::memcpy(&f, &fill, sizeof f);
    return ZRT_LAUNCH(k, padKernel<U>, blocksFor(n), kBlock, static_cast<const U *>(in->data),
                      static_cast<U *>(out->data), p, f, n);
  });
}

zeroc_rt_status_t zeroc_rt_cuda_k_pad_grad(zrt_ct grad_out, const int64_t *pads,
                                           zeroc_rt_pad_mode_t mode, zrt_ct grad_in) {
  using namespace zeroc_rt::kernels;
  const char *k = "pad_grad";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_out", grad_out, kFloatDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_in", grad_in));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "grad_in", *grad_in, "grad_out", *grad_out));
  PadPlan p;
  ZEROC_RT_RETURN_IF_ERROR(planPad(k, "grad_in", *grad_in, "grad_out", *grad_out, pads, mode, p));
  const int64_t total = numElements(*grad_in), n = numElements(*grad_out);
  if (!total)
    return nullptr;
  void *acc = nullptr;
  ZEROC_RT_RETURN_IF_ERROR(gpuScratch(static_cast<size_t>(total) * sizeof(double), &acc));
  ZEROC_RT_RETURN_IF_ERROR(gpuZero(acc, static_cast<size_t>(total) * sizeof(double)));
  return dispatchFloat(k, grad_in->dtype, [&](auto v) -> zeroc_rt_status_t {
    using S = decltype(v);
    if (n)
      ZEROC_RT_RETURN_IF_ERROR(ZRT_LAUNCH(k, padGradKernel<S>, blocksFor(n), kBlock,
                                          static_cast<const S *>(grad_out->data),
                                          static_cast<double *>(acc), p, n));
    return ZRT_LAUNCH(k, roundDoubleKernel<S>, blocksFor(total), kBlock,
                      static_cast<const double *>(acc), static_cast<S *>(grad_in->data), total);
  });
}

} // extern "C"
