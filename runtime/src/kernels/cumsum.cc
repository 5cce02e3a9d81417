//===- kernels/cumsum.cc - Cumulative sum along an axis ---------*- C++ -*-===//

#include "kernels/scalar_types.h"
#include "kernels/tensor_check.h"

#include <type_traits>

namespace zeroc_rt::kernels {
namespace {

constexpr unsigned kCumSumDtypes = kFloatDtypes | dtypeBit(ZEROC_RT_DTYPE_I64) |
                                   dtypeBit(ZEROC_RT_DTYPE_I32);

zeroc_rt_status_t kCumSum(const zeroc_rt_tensor_t *in, int64_t axis,
                          int exclusive, int reverse,
                          const zeroc_rt_tensor_t *out) {
  const char *k = "zeroc_rt_k_cumsum";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "in", in, kCumSumDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "out", *out, "in", *in));
  ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "out", *out, "in", *in));
  if (in->rank == 0)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: in must have rank >= 1", k);
  int ax = 0;
  ZEROC_RT_RETURN_IF_ERROR(normalizeAxis(k, axis, in->rank, &ax));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "in", *in));
  const int64_t outer = product(in->dims, 0, ax), n = in->dims[ax];
  const int64_t inner = product(in->dims, ax + 1, in->rank);
  dispatchAny(in->dtype, [&](auto tag) {
    using S = decltype(tag);
    // Floats sum in double and round each output once; integers wrap.
    using Acc = std::conditional_t<kIsFloatStorage<S>, double, uint64_t>;
    const S *x = static_cast<const S *>(in->data);
    S *y = static_cast<S *>(out->data);
    auto load = [](S v) -> Acc {
      if constexpr (kIsFloatStorage<S>)
        return loadDouble(v);
      else if constexpr (std::is_integral_v<S>)
        return static_cast<Acc>(static_cast<int64_t>(v));
      else
        return Acc(0);
    };
    auto store = [](Acc v) -> S {
      if constexpr (kIsFloatStorage<S>)
        return storeValue<S>(v);
      else if constexpr (std::is_integral_v<S>)
        return static_cast<S>(static_cast<int64_t>(v));
      else
        return S{};
    };
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        Acc acc = 0;
        for (int64_t s = 0; s < n; ++s) {
          int64_t j = flag(reverse) ? n - 1 - s : s;
          int64_t at = (o * n + j) * inner + i;
          Acc v = load(x[at]);
          if (flag(exclusive)) {
            y[at] = store(acc);
            acc += v;
          } else {
            acc += v;
            y[at] = store(acc);
          }
        }
      }
  });
  return nullptr;
}

} // namespace
} // namespace zeroc_rt::kernels

using namespace zeroc_rt::kernels;

extern "C" {

zeroc_rt_status_t zeroc_rt_k_cumsum(const zeroc_rt_tensor_t *in, int64_t axis,
                                    int exclusive, int reverse,
                                    const zeroc_rt_tensor_t *out) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kCumSum(in, axis, exclusive, reverse, out));
}

} // extern "C"
