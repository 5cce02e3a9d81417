//===- kernels/scatter.cu - ScatterND (none, add, mul) and GatherND -------===//
//
// gather_nd: one thread per output element copies it from the slice its
// tuple addresses (an index out of range is flagged and writes 0).
//
// scatter_nd: out = data (a device copy), then the slices that the k-tuples
// of indices address get the matching slices of updates:
//  - a check kernel, one thread per tuple, flags an index out of range and,
//    with reduction NONE, a slice that two tuples address (counted in a
//    scratch word per slice): the CPU kernel rejects both;
//  - NONE: one thread per updated element (distinct slices, so no order);
//  - ADD/MUL: one thread per element of a slice, each applying the tuples
//    in index order, so that repeated tuples combine deterministically and
//    as the CPU does (floats in double, rounded per update; integers wrap).
//
//===----------------------------------------------------------------------===//

#include "kernels/common.h"

namespace zeroc_rt::cuda {
namespace {

/// `tuples` k-tuples, each addressing one of `slices` slices of `sliceSize`
/// elements of data; the first k dims of data and their strides in slices.
struct NdPlan {
  int64_t k = 0, tuples = 0, sliceSize = 0, slices = 0;
  int64_t dims[ZEROC_RT_MAX_RANK] = {};
  int64_t strides[ZEROC_RT_MAX_RANK] = {};
};

/// The slice tuple `t` addresses (negative indices count from the end), or
/// -1 when an index is out of range.
template <typename I>
ZRT_HD int64_t sliceOf(const NdPlan &p, const I *indices, int64_t t) {
  int64_t slice = 0;
  for (int64_t j = 0; j < p.k; ++j) {
    int64_t v = static_cast<int64_t>(indices[t * p.k + j]);
    if (v < 0)
      v += p.dims[j];
    if (v < 0 || v >= p.dims[j])
      return -1;
    slice += v * p.strides[j];
  }
  return slice;
}

/// Flags out-of-range indices and, when `seen` is given, repeated slices.
template <typename I>
ZRT_GLOBAL void checkTuplesKernel(const I *indices, NdPlan p, unsigned *seen, unsigned *error,
                                  int32_t op) {
  for (int64_t t = gridFirst(); t < p.tuples; t += gridStride()) {
    const int64_t s = sliceOf(p, indices, t);
    if (s < 0)
      flagError(error, kIndexOutOfRange, op);
    else if (seen && atomicIncrement(seen + s) != 0)
      flagError(error, kRepeatedIndex, op);
  }
}

template <typename U, typename I>
ZRT_GLOBAL void scatterNoneKernel(const I *indices, const U *updates, U *out, NdPlan p) {
  const int64_t n = p.tuples * p.sliceSize;
  for (int64_t i = gridFirst(); i < n; i += gridStride()) {
    const int64_t t = i / p.sliceSize, e = i % p.sliceSize;
    const int64_t s = sliceOf(p, indices, t);
    if (s >= 0)
      out[s * p.sliceSize + e] = updates[i];
  }
}

template <typename U, typename I>
ZRT_GLOBAL void gatherNdKernel(const U *data, const I *indices, U *out, NdPlan p,
                               unsigned *error, int32_t op) {
  const int64_t n = p.tuples * p.sliceSize;
  for (int64_t i = gridFirst(); i < n; i += gridStride()) {
    const int64_t s = sliceOf(p, indices, i / p.sliceSize);
    if (s < 0) {
      flagError(error, kIndexOutOfRange, op);
      out[i] = U{};
      continue;
    }
    out[i] = data[s * p.sliceSize + i % p.sliceSize];
  }
}

template <typename S, typename I>
ZRT_GLOBAL void scatterCombineKernel(const I *indices, const S *updates, S *out, NdPlan p,
                                     int mul) {
  for (int64_t e = gridFirst(); e < p.sliceSize; e += gridStride())
    for (int64_t t = 0; t < p.tuples; ++t) {
      const int64_t s = sliceOf(p, indices, t);
      if (s < 0)
        continue; // flagged by checkTuplesKernel
      S *to = out + s * p.sliceSize + e;
      *to = combineOf(*to, updates[t * p.sliceSize + e], mul);
    }
}

/// The planNd of the CPU kernel without the index checks (the device's).
zeroc_rt_status_t planNd(const char *k, const zeroc_rt_tensor_t &data,
                         const zeroc_rt_tensor_t &indices, const char *slicedName,
                         const zeroc_rt_tensor_t &sliced, NdPlan &p) {
  using namespace zeroc_rt::kernels;
  if (data.rank < 1 || indices.rank < 1 || indices.dims[indices.rank - 1] < 1 ||
      indices.dims[indices.rank - 1] > data.rank)
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                          "%s: indices %s must have shape (..., k) with 1 <= k <= the rank "
                          "of data %s",
                          k, describe(indices).c_str(), describe(data).c_str());
  p.k = indices.dims[indices.rank - 1];
  int64_t expected[2 * ZEROC_RT_MAX_RANK];
  int rank = 0;
  for (int d = 0; d < indices.rank - 1; ++d)
    expected[rank++] = indices.dims[d];
  for (int d = static_cast<int>(p.k); d < data.rank; ++d)
    expected[rank++] = data.dims[d];
  ZEROC_RT_RETURN_IF_ERROR(checkShape(k, slicedName, sliced, rank, expected,
                                      "indices.shape[:-1] + data.shape[k:]"));
  p.tuples = product(indices.dims, 0, indices.rank - 1);
  p.sliceSize = product(data.dims, static_cast<int>(p.k), data.rank);
  p.slices = product(data.dims, 0, static_cast<int>(p.k));
  int64_t s = 1;
  for (int64_t d = p.k - 1; d >= 0; --d) {
    p.dims[d] = data.dims[d];
    p.strides[d] = s;
    s *= data.dims[d];
  }
  return nullptr;
}

} // namespace
} // namespace zeroc_rt::cuda

using namespace zeroc_rt::cuda;

extern "C" {

zeroc_rt_status_t zeroc_rt_cuda_k_gather_nd(zrt_ct data, zrt_ct indices, zrt_ct out) {
  using namespace zeroc_rt::kernels;
  const char *k = "gather_nd";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "data", data));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "indices", indices, kIndexDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "out", *out, "data", *data));
  NdPlan p;
  ZEROC_RT_RETURN_IF_ERROR(planNd(k, *data, *indices, "out", *out, p));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "data", *data));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "indices", *indices));
  if (!p.tuples)
    return nullptr;
  auto run = [&](auto i) -> zeroc_rt_status_t {
    using I = decltype(i);
    const I *idx = static_cast<const I *>(indices->data);
    // Empty slices copy nothing, but the CPU kernel still checks the indices.
    if (!p.sliceSize)
      return ZRT_LAUNCH(k, checkTuplesKernel<I>, blocksFor(p.tuples), kBlock, idx, p,
                        static_cast<unsigned *>(nullptr), kernelErrorWord(), currentOp());
    return bySize(zeroc_rt_dtype_size(data->dtype), [&](auto u) {
      using U = decltype(u);
      return ZRT_LAUNCH(k, gatherNdKernel<U, I>, blocksFor(p.tuples * p.sliceSize), kBlock,
                        static_cast<const U *>(data->data), idx, static_cast<U *>(out->data), p,
                        kernelErrorWord(), currentOp());
    });
  };
  return indices->dtype == ZEROC_RT_DTYPE_I64 ? run(int64_t{}) : run(int32_t{});
}

zeroc_rt_status_t zeroc_rt_cuda_k_scatter_nd(zrt_ct data, zrt_ct indices, zrt_ct updates,
                                             zeroc_rt_scatter_reduction_t reduction, zrt_ct out) {
  using namespace zeroc_rt::kernels;
  const char *k = "scatter_nd";
  ZEROC_RT_RETURN_IF_ERROR(checkScatterOperands(k, data, indices, updates, reduction, out));
  NdPlan p;
  ZEROC_RT_RETURN_IF_ERROR(planNd(k, *data, *indices, "updates", *updates, p));
  ZEROC_RT_RETURN_IF_ERROR(gpuCopy(out->data, data->data, numBytes(*out)));
  if (!p.tuples)
    return nullptr;
  const bool none = reduction == ZEROC_RT_SCATTER_NONE;
  void *seen = nullptr;
  if (none && p.sliceSize > 0) {
    ZEROC_RT_RETURN_IF_ERROR(gpuScratch(static_cast<size_t>(p.slices) * sizeof(unsigned), &seen));
    ZEROC_RT_RETURN_IF_ERROR(gpuZero(seen, static_cast<size_t>(p.slices) * sizeof(unsigned)));
  }
  auto run = [&](auto i) -> zeroc_rt_status_t {
    using I = decltype(i);
    const I *idx = static_cast<const I *>(indices->data);
    ZEROC_RT_RETURN_IF_ERROR(ZRT_LAUNCH(k, checkTuplesKernel<I>, blocksFor(p.tuples), kBlock, idx,
                                        p, static_cast<unsigned *>(seen), kernelErrorWord(),
                                        currentOp()));
    if (!p.sliceSize)
      return nullptr;
    if (none)
      return bySize(zeroc_rt_dtype_size(data->dtype), [&](auto u) {
        using U = decltype(u);
        return ZRT_LAUNCH(k, scatterNoneKernel<U, I>, blocksFor(p.tuples * p.sliceSize), kBlock,
                          idx, static_cast<const U *>(updates->data),
                          static_cast<U *>(out->data), p);
      });
    auto combine = [&](auto v) {
      using S = decltype(v);
      return ZRT_LAUNCH(k, scatterCombineKernel<S, I>, blocksFor(p.sliceSize), kBlock, idx,
                        static_cast<const S *>(updates->data), static_cast<S *>(out->data), p,
                        reduction == ZEROC_RT_SCATTER_MUL ? 1 : 0);
    };
    return dispatchNumeric(k, data->dtype, combine);
  };
  return indices->dtype == ZEROC_RT_DTYPE_I64 ? run(int64_t{}) : run(int32_t{});
}

} // extern "C"
