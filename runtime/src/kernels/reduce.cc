//===- kernels/reduce.cc - Sum, mean and max over a set of dims --*- C++ -*-===//

#include "kernels/tensor_check.h"

#include <cmath>
#include <limits>

namespace zeroc_rt::kernels {
namespace {

const char *reduceName(zeroc_rt_tensor_reduce_op_t op) {
  switch (op) {
  case ZEROC_RT_REDUCE_OP_SUM:
    return "sum";
  case ZEROC_RT_REDUCE_OP_MEAN:
    return "mean";
  case ZEROC_RT_REDUCE_OP_MAX:
    return "max";
  }
  return nullptr;
}

zeroc_rt_status_t kReduce(zeroc_rt_tensor_reduce_op_t op, const zeroc_rt_tensor_t *in,
                          uint32_t axesMask, const zeroc_rt_tensor_t *out) {
  const char *k = "zeroc_rt_k_reduce";
  if (!reduceName(op))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: invalid reduce op %d", k, static_cast<int>(op));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "in", in, kFloatDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "out", *out, "in", *in));
  if (in->rank < 32 && (axesMask >> in->rank) != 0)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: axes_mask 0x%x names dims beyond in %s", k,
                          static_cast<unsigned>(axesMask),
                          describe(*in).c_str());
  // out is either keepdims (reduced dims 1) or the kept dims only.
  int64_t keep[kMaxRank], kept[kMaxRank];
  int keptRank = 0;
  for (int d = 0; d < in->rank; ++d) {
    bool reduced = (axesMask >> d) & 1u;
    keep[d] = reduced ? 1 : in->dims[d];
    if (!reduced)
      kept[keptRank++] = in->dims[d];
  }
  if (out->rank == in->rank || keptRank == in->rank)
    ZEROC_RT_RETURN_IF_ERROR(checkShape(k, "out", *out, in->rank, keep,
                                        "in with the reduced dims kept as 1"));
  else
    ZEROC_RT_RETURN_IF_ERROR(checkShape(k, "out", *out, keptRank, kept,
                                        "in without the reduced dims"));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "in", *in));
  Loop<1> outer, inner;
  int64_t count = splitReduction(in->dims, in->rank, axesMask, &outer, &inner);
  dispatchFloat(in->dtype, [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeOf<T>;
    const T *x = static_cast<const T *>(in->data);
    T *y = static_cast<T *>(out->data);
    if (op == ZEROC_RT_REDUCE_OP_MAX) {
      int64_t o = 0;
      // NaN propagates (torch.amax); an empty reduction gives -inf (ONNX).
      // 16-bit values compare as floats (exact), so the max is an input.
      forEach(outer, {0}, [&](const Offsets1 &base) {
        C best = -std::numeric_limits<C>::infinity();
        forEach(inner, base, [&](const Offsets1 &off) {
          C v = loadValue(x[off[0]]);
          if (v > best || std::isnan(v))
            best = std::isnan(best) ? best : v;
        });
        y[o++] = storeValue<T>(best);
      });
      return;
    }
    // An empty mean is 0/0 = NaN, as in numpy and torch.
    bool mean = op == ZEROC_RT_REDUCE_OP_MEAN;
    sumOver(x, in->dims, in->rank, axesMask, [&](int64_t o, double acc) {
      y[o] = storeValue<T>(mean ? acc / static_cast<double>(count) : acc);
    });
  });
  return nullptr;
}

} // namespace
} // namespace zeroc_rt::kernels

extern "C" zeroc_rt_status_t zeroc_rt_k_reduce(zeroc_rt_tensor_reduce_op_t op,
                                               const zeroc_rt_tensor_t *in,
                                               uint32_t axes_mask,
                                               const zeroc_rt_tensor_t *out) {
  return ZEROC_RT_GUARD_EXCEPTIONS(
      zeroc_rt::kernels::kReduce(op, in, axes_mask, out));
}
