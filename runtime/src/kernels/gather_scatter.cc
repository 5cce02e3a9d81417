//===- kernels/gather_scatter.cc - element and ND gathers and scatters ----===//

#include "kernels/scalar_types.h"
#include "kernels/tensor_check.h"

#include <cstring>
#include <string>
#include <type_traits>

namespace zeroc_rt::kernels {
namespace {

zeroc_rt_status_t indexOutOfRange(const char *k, int64_t v, int64_t element,
                                  const zeroc_rt_tensor_t &indices, int dim,
                                  int64_t size) {
  return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                        "%s: index %lld (element %lld of indices %s) is out "
                        "of range for dim %d of size %lld",
                        k, static_cast<long long>(v),
                        static_cast<long long>(element),
                        describe(indices).c_str(), dim,
                        static_cast<long long>(size));
}

//===----------------------------------------------------------------------===//
// GatherElements
//===----------------------------------------------------------------------===//

/// Checks gather_elements' operands (`data` is the gathered tensor or its
/// gradient, `picked` the result or its gradient, shaped like indices) and
/// every index; calls fn(pickedFlat, dataFlat) for every element in order.
template <typename Fn>
zeroc_rt_status_t forEachElementIndex(const char *k, const char *dataName,
                                      const zeroc_rt_tensor_t *data,
                                      const zeroc_rt_tensor_t *indices,
                                      int64_t axis, const char *pickedName,
                                      const zeroc_rt_tensor_t *picked, Fn &&fn) {
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "indices", indices, kIndexDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, pickedName, *picked, dataName, *data));
  if (data->rank == 0 || indices->rank != data->rank)
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                          "%s: indices %s must have the rank of %s %s (>= 1)",
                          k, describe(*indices).c_str(), dataName,
                          describe(*data).c_str());
  int ax = 0;
  ZEROC_RT_RETURN_IF_ERROR(normalizeAxis(k, axis, data->rank, &ax));
  for (int d = 0; d < data->rank; ++d)
    if (d != ax && indices->dims[d] > data->dims[d])
      return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                            "%s: indices %s exceeds %s %s in dim %d", k,
                            describe(*indices).c_str(), dataName,
                            describe(*data).c_str(), d);
  ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, pickedName, *picked, "indices", *indices));
  int64_t strides[kMaxRank];
  contiguousStrides(data->dims, data->rank, strides);
  const int64_t size = data->dims[ax], total = numElements(*indices);
  for (int64_t i = 0; i < total; ++i) {
    int64_t v = loadIndex(*indices, i);
    if (v < -size || v >= size)
      return indexOutOfRange(k, v, i, *indices, ax, size);
  }
  int64_t index[kMaxRank] = {};
  for (int64_t i = 0; i < total; ++i) {
    int64_t v = loadIndex(*indices, i);
    int64_t off = (v < 0 ? v + size : v) * strides[ax];
    for (int d = 0; d < data->rank; ++d)
      if (d != ax)
        off += index[d] * strides[d];
    fn(i, off);
    for (int d = indices->rank - 1; d >= 0; --d) {
      if (++index[d] < indices->dims[d])
        break;
      index[d] = 0;
    }
  }
  return nullptr;
}

zeroc_rt_status_t kGatherElements(const zeroc_rt_tensor_t *data,
                                  const zeroc_rt_tensor_t *indices,
                                  int64_t axis, const zeroc_rt_tensor_t *out) {
  const char *k = "zeroc_rt_k_gather_elements";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "data", data));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "indices", indices, kIndexDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "data", *data));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "indices", *indices));
  return dispatchBySize(zeroc_rt_dtype_size(data->dtype), [&](auto tag) {
    using U = decltype(tag);
    const U *x = static_cast<const U *>(data->data);
    U *y = static_cast<U *>(out->data);
    return forEachElementIndex(k, "data", data, indices, axis, "out", out,
                               [&](int64_t o, int64_t s) { y[o] = x[s]; });
  });
}

zeroc_rt_status_t kGatherElementsGrad(const zeroc_rt_tensor_t *gradOut,
                                      const zeroc_rt_tensor_t *indices,
                                      int64_t axis,
                                      const zeroc_rt_tensor_t *gradData) {
  const char *k = "zeroc_rt_k_gather_elements_grad";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_out", gradOut, kFloatDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_data", gradData));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "indices", indices, kIndexDtypes));
  ZEROC_RT_RETURN_IF_ERROR(
      checkNoOverlap(k, "grad_data", *gradData, "grad_out", *gradOut));
  ZEROC_RT_RETURN_IF_ERROR(
      checkNoOverlap(k, "grad_data", *gradData, "indices", *indices));
  // Repeated indices accumulate in index order, in double, rounded once.
  return dispatchFloat(gradOut->dtype, [&](auto tag) -> zeroc_rt_status_t {
    using T = decltype(tag);
    if (gradData->dtype != gradOut->dtype)
      return checkSameDtype(k, "grad_out", *gradOut, "grad_data", *gradData);
    const int64_t total = numElements(*gradData);
    Scratch<double> acc;
    ZEROC_RT_RETURN_IF_ERROR(acc.allocate(k, "double accumulator", total));
    for (int64_t i = 0; i < total; ++i)
      acc.data()[i] = 0.0;
    const T *g = static_cast<const T *>(gradOut->data);
    ZEROC_RT_RETURN_IF_ERROR(forEachElementIndex(
        k, "grad_data", gradData, indices, axis, "grad_out", gradOut,
        [&](int64_t o, int64_t s) { acc.data()[s] += loadDouble(g[o]); }));
    T *gd = static_cast<T *>(gradData->data);
    for (int64_t i = 0; i < total; ++i)
      gd[i] = storeValue<T>(acc.data()[i]);
    return nullptr;
  });
}

//===----------------------------------------------------------------------===//
// GatherND and ScatterND (batch_dims 0)
//===----------------------------------------------------------------------===//

/// The plan of an ND index: `tuples` k-tuples, each addressing one of
/// `slices` slices of `sliceSize` elements of data.
struct NdPlan {
  int64_t k = 0, tuples = 0, sliceSize = 0, slices = 0;
  int64_t strides[kMaxRank] = {}; // of the first k dims, in slices
};

/// Checks indices (..., k) against data and that `sliced` has the shape
/// indices.shape[:-1] + data.shape[k:], and every index.
zeroc_rt_status_t planNd(const char *k, const zeroc_rt_tensor_t &data,
                         const zeroc_rt_tensor_t &indices,
                         const char *slicedName,
                         const zeroc_rt_tensor_t &sliced, NdPlan *plan) {
  if (data.rank < 1 || indices.rank < 1 ||
      indices.dims[indices.rank - 1] < 1 ||
      indices.dims[indices.rank - 1] > data.rank)
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                          "%s: indices %s must have shape (..., k) with 1 <= k "
                          "<= the rank of data %s",
                          k, describe(indices).c_str(), describe(data).c_str());
  plan->k = indices.dims[indices.rank - 1];
  int64_t expected[2 * kMaxRank];
  int rank = 0;
  for (int d = 0; d < indices.rank - 1; ++d)
    expected[rank++] = indices.dims[d];
  for (int d = static_cast<int>(plan->k); d < data.rank; ++d)
    expected[rank++] = data.dims[d];
  ZEROC_RT_RETURN_IF_ERROR(checkShape(k, slicedName, sliced, rank, expected,
                                      "indices.shape[:-1] + data.shape[k:]"));
  plan->tuples = product(indices.dims, 0, indices.rank - 1);
  plan->sliceSize = product(data.dims, static_cast<int>(plan->k), data.rank);
  plan->slices = product(data.dims, 0, static_cast<int>(plan->k));
  int64_t s = 1;
  for (int64_t d = plan->k - 1; d >= 0; --d) {
    plan->strides[d] = s;
    s *= data.dims[d];
  }
  for (int64_t i = 0; i < plan->tuples * plan->k; ++i) {
    int d = static_cast<int>(i % plan->k);
    int64_t v = loadIndex(indices, i);
    if (v < -data.dims[d] || v >= data.dims[d])
      return indexOutOfRange(k, v, i, indices, d, data.dims[d]);
  }
  return nullptr;
}

/// The slice number tuple `t` addresses (indices checked by planNd).
int64_t sliceOf(const NdPlan &plan, const zeroc_rt_tensor_t &data,
                const zeroc_rt_tensor_t &indices, int64_t t) {
  int64_t slice = 0;
  for (int64_t j = 0; j < plan.k; ++j) {
    int64_t v = loadIndex(indices, t * plan.k + j);
    slice += (v < 0 ? v + data.dims[j] : v) * plan.strides[j];
  }
  return slice;
}

zeroc_rt_status_t kGatherNd(const zeroc_rt_tensor_t *data,
                            const zeroc_rt_tensor_t *indices,
                            const zeroc_rt_tensor_t *out) {
  const char *k = "zeroc_rt_k_gather_nd";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "data", data));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "indices", indices, kIndexDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "out", *out, "data", *data));
  NdPlan plan;
  ZEROC_RT_RETURN_IF_ERROR(planNd(k, *data, *indices, "out", *out, &plan));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "data", *data));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "indices", *indices));
  size_t elem = zeroc_rt_dtype_size(data->dtype);
  for (int64_t t = 0; t < plan.tuples; ++t)
    copyElements(static_cast<char *>(out->data) + t * plan.sliceSize * elem,
                 static_cast<const char *>(data->data) +
                     sliceOf(plan, *data, *indices, t) * plan.sliceSize * elem,
                 plan.sliceSize, elem);
  return nullptr;
}

/// dst op= src over n elements of storage type S (add/mul; integers wrap).
template <typename S>
void combine(S *dst, const S *src, int64_t n, zeroc_rt_scatter_reduction_t r) {
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (kIsFloatStorage<S>) {
      double a = loadDouble(dst[i]), b = loadDouble(src[i]);
      dst[i] = storeValue<S>(r == ZEROC_RT_SCATTER_ADD ? a + b : a * b);
    } else if constexpr (std::is_integral_v<S>) {
      using W = std::make_unsigned_t<S>;
      W a = static_cast<W>(dst[i]), b = static_cast<W>(src[i]);
      dst[i] = static_cast<S>(r == ZEROC_RT_SCATTER_ADD ? W(a + b) : W(a * b));
    }
  }
}

zeroc_rt_status_t kScatterNd(const zeroc_rt_tensor_t *data,
                             const zeroc_rt_tensor_t *indices,
                             const zeroc_rt_tensor_t *updates,
                             zeroc_rt_scatter_reduction_t reduction,
                             const zeroc_rt_tensor_t *out) {
  const char *k = "zeroc_rt_k_scatter_nd";
  ZEROC_RT_RETURN_IF_ERROR(checkScatterOperands(k, data, indices, updates,
                                                 reduction, out));
  NdPlan plan;
  ZEROC_RT_RETURN_IF_ERROR(planNd(k, *data, *indices, "updates", *updates, &plan));
  if (reduction == ZEROC_RT_SCATTER_NONE && plan.sliceSize > 0) {
    // Two writes to one slice would make the result depend on their order.
    Scratch<uint8_t> seen;
    ZEROC_RT_RETURN_IF_ERROR(seen.allocate(k, "slice map", plan.slices));
    if (plan.slices > 0)
      std::memset(seen.data(), 0, static_cast<size_t>(plan.slices));
    for (int64_t t = 0; t < plan.tuples; ++t) {
      int64_t s = sliceOf(plan, *data, *indices, t);
      if (seen.data()[s]++)
        return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                              "%s: index tuple %lld of indices %s addresses a "
                              "slice an earlier tuple wrote (reduction none "
                              "needs distinct indices)",
                              k, static_cast<long long>(t),
                              describe(*indices).c_str());
    }
  }
  size_t elem = zeroc_rt_dtype_size(data->dtype);
  copyElements(out->data, data->data, numElements(*data), elem);
  char *dst = static_cast<char *>(out->data);
  const char *src = static_cast<const char *>(updates->data);
  for (int64_t t = 0; t < plan.tuples; ++t) {
    char *d = dst + sliceOf(plan, *data, *indices, t) * plan.sliceSize * elem;
    const char *u = src + t * plan.sliceSize * elem;
    if (reduction == ZEROC_RT_SCATTER_NONE) {
      copyElements(d, u, plan.sliceSize, elem);
      continue;
    }
    dispatchAny(data->dtype, [&](auto tag) {
      using S = decltype(tag);
      combine(reinterpret_cast<S *>(d), reinterpret_cast<const S *>(u),
              plan.sliceSize, reduction);
    });
  }
  return nullptr;
}

//===----------------------------------------------------------------------===//
// ScatterElements
//===----------------------------------------------------------------------===//

/// With reduction none: fails when two positions of indices address one
/// element of data (one byte per element of data).
zeroc_rt_status_t checkDistinctElements(const char *k,
                                        const zeroc_rt_tensor_t *data,
                                        const zeroc_rt_tensor_t *indices,
                                        int64_t axis,
                                        const zeroc_rt_tensor_t *updates) {
  const int64_t total = numElements(*data);
  Scratch<uint8_t> seen;
  ZEROC_RT_RETURN_IF_ERROR(seen.allocate(k, "element map", total));
  if (total > 0)
    std::memset(seen.data(), 0, static_cast<size_t>(total));
  int64_t repeated = -1;
  ZEROC_RT_RETURN_IF_ERROR(forEachElementIndex(
      k, "data", data, indices, axis, "updates", updates,
      [&](int64_t i, int64_t s) {
        if (seen.data()[s]++ && repeated < 0)
          repeated = i;
      }));
  if (repeated >= 0)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: element %lld of indices %s addresses a data "
                          "element an earlier one wrote (reduction none needs "
                          "distinct indices)",
                          k, static_cast<long long>(repeated),
                          describe(*indices).c_str());
  return nullptr;
}

zeroc_rt_status_t kScatterElements(const zeroc_rt_tensor_t *data,
                                   const zeroc_rt_tensor_t *indices,
                                   const zeroc_rt_tensor_t *updates,
                                   int64_t axis,
                                   zeroc_rt_scatter_reduction_t reduction,
                                   const zeroc_rt_tensor_t *out) {
  const char *k = "zeroc_rt_k_scatter_elements";
  ZEROC_RT_RETURN_IF_ERROR(checkScatterOperands(k, data, indices, updates,
                                                 reduction, out));
  if (reduction == ZEROC_RT_SCATTER_NONE)
    ZEROC_RT_RETURN_IF_ERROR(
        checkDistinctElements(k, data, indices, axis, updates));
  copyElements(out->data, data->data, numElements(*data),
               zeroc_rt_dtype_size(data->dtype));
  return dispatchAny(data->dtype, [&](auto tag) {
    using S = decltype(tag);
    S *y = static_cast<S *>(out->data);
    const S *u = static_cast<const S *>(updates->data);
    return forEachElementIndex(
        k, "data", data, indices, axis, "updates", updates,
        [&](int64_t i, int64_t s) {
          if (reduction == ZEROC_RT_SCATTER_NONE)
            y[s] = u[i];
          else
            combine(y + s, u + i, 1, reduction);
        });
  });
}

} // namespace
} // namespace zeroc_rt::kernels

using namespace zeroc_rt::kernels;

extern "C" {

zeroc_rt_status_t zeroc_rt_k_gather_elements(const zeroc_rt_tensor_t *data,
                                             const zeroc_rt_tensor_t *indices,
                                             int64_t axis,
                                             const zeroc_rt_tensor_t *out) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kGatherElements(data, indices, axis, out));
}

zeroc_rt_status_t zeroc_rt_k_gather_elements_grad(
    const zeroc_rt_tensor_t *grad_out, const zeroc_rt_tensor_t *indices,
    int64_t axis, const zeroc_rt_tensor_t *grad_data) {
  return ZEROC_RT_GUARD_EXCEPTIONS(
      kGatherElementsGrad(grad_out, indices, axis, grad_data));
}

zeroc_rt_status_t zeroc_rt_k_gather_nd(const zeroc_rt_tensor_t *data,
                                       const zeroc_rt_tensor_t *indices,
                                       const zeroc_rt_tensor_t *out) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kGatherNd(data, indices, out));
}

zeroc_rt_status_t zeroc_rt_k_scatter_nd(const zeroc_rt_tensor_t *data,
                                        const zeroc_rt_tensor_t *indices,
                                        const zeroc_rt_tensor_t *updates,
                                        zeroc_rt_scatter_reduction_t reduction,
                                        const zeroc_rt_tensor_t *out) {
  return ZEROC_RT_GUARD_EXCEPTIONS(
      kScatterNd(data, indices, updates, reduction, out));
}

zeroc_rt_status_t zeroc_rt_k_scatter_elements(
    const zeroc_rt_tensor_t *data, const zeroc_rt_tensor_t *indices,
    const zeroc_rt_tensor_t *updates, int64_t axis,
    zeroc_rt_scatter_reduction_t reduction, const zeroc_rt_tensor_t *out) {
  return ZEROC_RT_GUARD_EXCEPTIONS(
      kScatterElements(data, indices, updates, axis, reduction, out));
}

} // extern "C"
