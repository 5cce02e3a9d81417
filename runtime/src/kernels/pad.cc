//===- kernels/pad.cc - Pad (constant, reflect, edge, wrap) and its adjoint ===//

#include "kernels/scalar_types.h"
#include "kernels/tensor_check.h"

#include <cstring>
#include <type_traits>
#include <vector>

namespace zeroc_rt::kernels {
namespace {

/// The input position that padded position `p` (already shifted by the
/// begin count, so in-bounds positions are [0, n)) reads, or -1 for
/// constant padding. n >= 1 for the non-constant modes (checked).
int64_t sourceOf(int64_t p, int64_t n, zeroc_rt_pad_mode_t mode) {
  if (p >= 0 && p < n)
    return p;
  switch (mode) {
  case ZEROC_RT_PAD_EDGE:
    return p < 0 ? 0 : n - 1;
  case ZEROC_RT_PAD_REFLECT: {
    if (n == 1)
      return 0;
    int64_t period = 2 * (n - 1);
    int64_t q = ((p % period) + period) % period;
    return q < n ? q : period - q;
  }
  case ZEROC_RT_PAD_WRAP:
    return ((p % n) + n) % n;
  default:
    return -1;
  }
}

/// Checks pads against the unpadded `in` and the padded `out` shapes and the
/// mode; fills, per dim, the input position each output position reads.
zeroc_rt_status_t planPad(const char *k, const char *inName,
                          const zeroc_rt_tensor_t &in, const char *outName,
                          const zeroc_rt_tensor_t &out, const int64_t *pads,
                          zeroc_rt_pad_mode_t mode,
                          std::vector<std::vector<int64_t>> *sources) {
  if (mode != ZEROC_RT_PAD_CONSTANT && mode != ZEROC_RT_PAD_REFLECT &&
      mode != ZEROC_RT_PAD_EDGE && mode != ZEROC_RT_PAD_WRAP)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: invalid mode %d", k,
                          static_cast<int>(mode));
  if (in.rank != out.rank)
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                          "%s: %s %s must have the rank of %s %s", k, outName,
                          describe(out).c_str(), inName, describe(in).c_str());
  if (in.rank > 0 && !pads)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: pads is NULL", k);
  sources->assign(in.rank, {});
  for (int d = 0; d < in.rank; ++d) {
    int64_t n = in.dims[d], lo = pads[d], hi = pads[d + in.rank], size = 0;
    if (__builtin_add_overflow(lo, n, &size) ||
        __builtin_add_overflow(size, hi, &size) || size != out.dims[d])
      return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                            "%s: dim %d: %s %s padded by %lld, %lld is not %s %s",
                            k, d, inName, describe(in).c_str(),
                            static_cast<long long>(lo),
                            static_cast<long long>(hi), outName,
                            describe(out).c_str());
    if (n == 0 && size > 0 && mode != ZEROC_RT_PAD_CONSTANT)
      return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                            "%s: dim %d of %s %s is empty; only constant "
                            "padding can fill it",
                            k, d, inName, describe(in).c_str());
    std::vector<int64_t> &src = (*sources)[d];
    src.resize(static_cast<size_t>(size));
    for (int64_t o = 0; o < size; ++o)
      src[o] = sourceOf(o - lo, n, mode);
  }
  return nullptr;
}

/// Calls fn(outFlat, inFlat or -1) for every element of `out` in order.
template <typename Fn>
void forEachPadded(const zeroc_rt_tensor_t &in, const zeroc_rt_tensor_t &out,
                   const std::vector<std::vector<int64_t>> &sources, Fn &&fn) {
  int64_t total = numElements(out);
  if (total == 0)
    return;
  int64_t inStrides[kMaxRank];
  contiguousStrides(in.dims, in.rank, inStrides);
  int64_t index[kMaxRank] = {};
  for (int64_t o = 0; o < total; ++o) {
    int64_t src = 0;
    for (int d = 0; d < out.rank && src >= 0; ++d) {
      int64_t s = sources[d][index[d]];
      src = s < 0 ? -1 : src + s * inStrides[d];
    }
    fn(o, src);
    for (int d = out.rank - 1; d >= 0; --d) {
      if (++index[d] < out.dims[d])
        break;
      index[d] = 0;
    }
  }
}

zeroc_rt_status_t kPad(const zeroc_rt_tensor_t *in, const int64_t *pads,
                       zeroc_rt_pad_mode_t mode, double value,
                       const zeroc_rt_tensor_t *out) {
  const char *k = "zeroc_rt_k_pad";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "in", in));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "out", *out, "in", *in));
  std::vector<std::vector<int64_t>> sources;
  ZEROC_RT_RETURN_IF_ERROR(
      planPad(k, "in", *in, "out", *out, pads, mode, &sources));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "in", *in));
  // The fill value in out's dtype, converted as graph.cast converts.
  uint64_t fill = 0;
  if (mode == ZEROC_RT_PAD_CONSTANT) {
    zeroc_rt_tensor_t from{&value, ZEROC_RT_DTYPE_F64, 0, {}};
    zeroc_rt_tensor_t to{&fill, out->dtype, 0, {}};
    ZEROC_RT_RETURN_IF_ERROR(zeroc_rt_k_cast(&from, &to));
  }
  dispatchBySize(zeroc_rt_dtype_size(out->dtype), [&](auto tag) {
    using U = decltype(tag);
    U f;
    std::memcpy(&f, &fill, sizeof(U));
    const U *x = static_cast<const U *>(in->data);
    U *y = static_cast<U *>(out->data);
    forEachPadded(*in, *out, sources,
                  [&](int64_t o, int64_t s) { y[o] = s < 0 ? f : x[s]; });
  });
  return nullptr;
}

zeroc_rt_status_t kPadGrad(const zeroc_rt_tensor_t *gradOut,
                           const int64_t *pads, zeroc_rt_pad_mode_t mode,
                           const zeroc_rt_tensor_t *gradIn) {
  const char *k = "zeroc_rt_k_pad_grad";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_out", gradOut, kFloatDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_in", gradIn));
  ZEROC_RT_RETURN_IF_ERROR(
      checkSameDtype(k, "grad_in", *gradIn, "grad_out", *gradOut));
  std::vector<std::vector<int64_t>> sources;
  ZEROC_RT_RETURN_IF_ERROR(planPad(k, "grad_in", *gradIn, "grad_out", *gradOut,
                                   pads, mode, &sources));
  ZEROC_RT_RETURN_IF_ERROR(
      checkNoOverlap(k, "grad_in", *gradIn, "grad_out", *gradOut));
  // Sums in index order, in double (reflect and edge add several elements
  // into one), rounded once per element.
  return dispatchFloat(gradOut->dtype, [&](auto tag) -> zeroc_rt_status_t {
    using T = decltype(tag);
    const int64_t total = numElements(*gradIn);
    Scratch<double> acc;
    ZEROC_RT_RETURN_IF_ERROR(acc.allocate(k, "double accumulator", total));
    for (int64_t i = 0; i < total; ++i)
      acc.data()[i] = 0.0;
    const T *g = static_cast<const T *>(gradOut->data);
    forEachPadded(*gradIn, *gradOut, sources, [&](int64_t o, int64_t s) {
      if (s >= 0)
        acc.data()[s] += loadDouble(g[o]);
    });
    T *gi = static_cast<T *>(gradIn->data);
    for (int64_t i = 0; i < total; ++i)
      gi[i] = storeValue<T>(acc.data()[i]);
    return nullptr;
  });
}

} // namespace
} // namespace zeroc_rt::kernels

using namespace zeroc_rt::kernels;

extern "C" {

zeroc_rt_status_t zeroc_rt_k_pad(const zeroc_rt_tensor_t *in,
                                 const int64_t *pads, zeroc_rt_pad_mode_t mode,
                                 double value, const zeroc_rt_tensor_t *out) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kPad(in, pads, mode, value, out));
}

zeroc_rt_status_t zeroc_rt_k_pad_grad(const zeroc_rt_tensor_t *grad_out,
                                      const int64_t *pads,
                                      zeroc_rt_pad_mode_t mode,
                                      const zeroc_rt_tensor_t *grad_in) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kPadGrad(grad_out, pads, mode, grad_in));
}

} // extern "C"
