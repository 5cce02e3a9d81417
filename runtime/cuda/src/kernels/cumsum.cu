//===- kernels/cumsum.cu - Cumulative sum along an axis -------------------===//
//
// One thread per line along the axis (outer x inner lines; neighbouring
// threads take neighbouring inner positions, so loads coalesce), summing in
// order as the CPU kernel does: floats in double, each element rounded once
// (F16/BF16 through float); I64/I32 wrap.
//
//===----------------------------------------------------------------------===//

#include "kernels/common.h"

#include <type_traits>

namespace zeroc_rt::cuda {
namespace {

/// The running sum as an element: floats rounded once, integers wrapped.
template <typename S, typename Acc> ZRT_HD S elementOf(Acc acc) {
  if constexpr (std::is_integral_v<S>)
    return static_cast<S>(static_cast<long long>(acc));
  else
    return storeD<S>(acc);
}

template <typename S>
ZRT_GLOBAL void cumsumKernel(const S *in, S *out, int64_t outer, int64_t count, int64_t inner,
                             int exclusive, int reverse) {
  using Acc = std::conditional_t<std::is_integral_v<S>, unsigned long long, double>;
  const int64_t lines = outer * inner;
  for (int64_t l = gridFirst(); l < lines; l += gridStride()) {
    const int64_t base = (l / inner) * count * inner + l % inner;
    Acc acc = 0;
    for (int64_t s = 0; s < count; ++s) {
      const int64_t at = base + (reverse ? count - 1 - s : s) * inner;
      Acc v;
      if constexpr (std::is_integral_v<S>)
        v = static_cast<Acc>(static_cast<long long>(in[at]));
      else
        v = static_cast<double>(load(in[at]));
      if (exclusive) {
        out[at] = elementOf<S>(acc);
        acc += v;
      } else {
        acc += v;
        out[at] = elementOf<S>(acc);
      }
    }
  }
}

} // namespace
} // namespace zeroc_rt::cuda

using namespace zeroc_rt::cuda;

extern "C" {

zeroc_rt_status_t zeroc_rt_cuda_k_cumsum(zrt_ct in, int64_t axis, int exclusive, int reverse,
                                         zrt_ct out) {
  using namespace zeroc_rt::kernels;
  const char *k = "cumsum";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "in", in, kFloatDtypes | kIndexDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "out", *out, "in", *in));
  ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "out", *out, "in", *in));
  if (in->rank == 0)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: in must have rank >= 1", k);
  int ax = 0;
  ZEROC_RT_RETURN_IF_ERROR(normalizeAxis(k, axis, in->rank, &ax));
  const int64_t outer = product(in->dims, 0, ax), count = in->dims[ax];
  const int64_t inner = product(in->dims, ax + 1, in->rank);
  if (!numElements(*out))
    return nullptr;
  auto run = [&](auto v) {
    using S = decltype(v);
    return ZRT_LAUNCH(k, cumsumKernel<S>, blocksFor(outer * inner), kBlock,
                      static_cast<const S *>(in->data), static_cast<S *>(out->data), outer,
                      count, inner, exclusive ? 1 : 0, reverse ? 1 : 0);
  };
  switch (in->dtype) {
  case ZEROC_RT_DTYPE_I64: return run(int64_t{});
  case ZEROC_RT_DTYPE_I32: return run(int32_t{});
  default: return dispatchFloat(k, in->dtype, run);
  }
}

} // extern "C"
