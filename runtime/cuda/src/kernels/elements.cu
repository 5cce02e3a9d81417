//===- kernels/elements.cu - GatherElements, its gradient, ScatterElements ===//
//
// Position p of indices picks the element of data with p's coordinates and
// indices[p] on the axis. Indices are checked on the device: an index out
// of range is flagged (kIndexOutOfRange) where the CPU kernel fails.
//  - gather_elements: one thread per position (a flagged one writes 0);
//  - gather_elements_grad: grad_data = 0, then one thread per position
//    adds its grad_out element atomically, in float (double for F64;
//    F16/BF16 in an f32 scratch, rounded once), as gather_grad does;
//  - scatter_elements NONE: one thread per position writes its update and
//    counts its target in a scratch word per element of data, so that two
//    positions on one element are flagged (kRepeatedIndex) where the CPU
//    kernel rejects them;
//  - scatter_elements ADD/MUL: only positions that differ on the axis alone
//    can share a target, so one thread per line of indices along the axis
//    applies its positions in index order: repeated targets combine as the
//    CPU does (floats in double, rounded per update; integers wrap).
//
//===----------------------------------------------------------------------===//

#include "kernels/common.h"

#include <type_traits>

namespace zeroc_rt::cuda {
namespace {

/// indices' (and the picked tensor's) dims, data's strides and the axis;
/// `inner`: the positions after the axis, `lines` those off the axis.
struct ElementPlan {
  int rank = 0, axis = 0;
  int64_t dims[ZEROC_RT_MAX_RANK] = {};
  int64_t dataStrides[ZEROC_RT_MAX_RANK] = {};
  int64_t axisSize = 0, positions = 0, inner = 0, lines = 0;
};

/// The offset in data of position i's coordinates off the axis.
ZRT_HD int64_t offAxisOffset(const ElementPlan &p, int64_t i) {
  int64_t off = 0;
  for (int d = p.rank - 1; d >= 0; --d) {
    if (d != p.axis)
      off += (i % p.dims[d]) * p.dataStrides[d];
    i /= p.dims[d];
  }
  return off;
}

/// The offset along the axis of index v (negative counts from the end), or
/// -1 when it is out of range.
template <typename I> ZRT_HD int64_t axisOffset(const ElementPlan &p, I index) {
  int64_t v = static_cast<int64_t>(index);
  if (v < 0)
    v += p.axisSize;
  return v < 0 || v >= p.axisSize ? -1 : v * p.dataStrides[p.axis];
}

template <typename U, typename I>
ZRT_GLOBAL void gatherElementsKernel(const U *data, const I *indices, U *out, ElementPlan p,
                                     unsigned *error, int32_t op) {
  for (int64_t i = gridFirst(); i < p.positions; i += gridStride()) {
    const int64_t a = axisOffset(p, indices[i]);
    if (a < 0) {
      flagError(error, kIndexOutOfRange, op);
      out[i] = U{};
      continue;
    }
    out[i] = data[offAxisOffset(p, i) + a];
  }
}

/// acc (zeroed, of grad_data's element count, in float A) += grad_out at
/// the picked elements.
template <typename S, typename A, typename I>
ZRT_GLOBAL void gatherElementsGradKernel(const S *gout, const I *indices, A *acc, ElementPlan p,
                                         unsigned *error, int32_t op) {
  for (int64_t i = gridFirst(); i < p.positions; i += gridStride()) {
    const int64_t a = axisOffset(p, indices[i]);
    if (a < 0) {
      flagError(error, kIndexOutOfRange, op);
      continue;
    }
    A *to = acc + offAxisOffset(p, i) + a;
    atomicAccumulate(to, static_cast<A>(load(gout[i])));
  }
}

/// `seen`: a zeroed word per element of data.
template <typename U, typename I>
ZRT_GLOBAL void scatterElementsNoneKernel(const I *indices, const U *updates, U *out,
                                          ElementPlan p, unsigned *seen, unsigned *error,
                                          int32_t op) {
  for (int64_t i = gridFirst(); i < p.positions; i += gridStride()) {
    const int64_t a = axisOffset(p, indices[i]);
    if (a < 0) {
      flagError(error, kIndexOutOfRange, op);
      continue;
    }
    const int64_t to = offAxisOffset(p, i) + a;
    if (atomicIncrement(seen + to) != 0)
      flagError(error, kRepeatedIndex, op);
    out[to] = updates[i];
  }
}

template <typename S, typename I>
ZRT_GLOBAL void scatterElementsCombineKernel(const I *indices, const S *updates, S *out,
                                             ElementPlan p, int mul, unsigned *error,
                                             int32_t op) {
  const int64_t length = p.dims[p.axis];
  for (int64_t l = gridFirst(); l < p.lines; l += gridStride()) {
    // The line's first position (coordinate 0 on the axis), then a stride
    // of `inner` positions per step along the axis.
    const int64_t first = (l / p.inner) * length * p.inner + l % p.inner;
    const int64_t base = offAxisOffset(p, first);
    for (int64_t j = 0; j < length; ++j) {
      const int64_t i = first + j * p.inner;
      const int64_t a = axisOffset(p, indices[i]);
      if (a < 0) {
        flagError(error, kIndexOutOfRange, op);
        continue;
      }
      out[base + a] = combineOf(out[base + a], updates[i], mul);
    }
  }
}

/// The checks of the CPU's forEachElementIndex but the index values' (the
/// device checks those): indices against data (`dataName`), and `picked`
/// (the gathered result, its gradient or the updates) shaped like indices.
zeroc_rt_status_t planElements(const char *k, const char *dataName, const zeroc_rt_tensor_t &data,
                               const zeroc_rt_tensor_t *indices, int64_t axis,
                               const char *pickedName, const zeroc_rt_tensor_t &picked,
                               ElementPlan &p) {
  using namespace zeroc_rt::kernels;
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "indices", indices, kIndexDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, pickedName, picked, dataName, data));
  if (data.rank == 0 || indices->rank != data.rank)
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                          "%s: indices %s must have the rank of %s %s (>= 1)", k,
                          describe(*indices).c_str(), dataName, describe(data).c_str());
  ZEROC_RT_RETURN_IF_ERROR(normalizeAxis(k, axis, data.rank, &p.axis));
  for (int d = 0; d < data.rank; ++d)
    if (d != p.axis && indices->dims[d] > data.dims[d])
      return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH, "%s: indices %s exceeds %s %s in dim %d", k,
                            describe(*indices).c_str(), dataName, describe(data).c_str(), d);
  ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, pickedName, picked, "indices", *indices));
  p.rank = data.rank;
  for (int d = 0; d < p.rank; ++d)
    p.dims[d] = indices->dims[d];
  contiguousStrides(data.dims, data.rank, p.dataStrides);
  p.axisSize = data.dims[p.axis];
  p.positions = numElements(*indices);
  p.inner = product(indices->dims, p.axis + 1, indices->rank);
  p.lines = p.positions ? p.positions / indices->dims[p.axis] : 0;
  return nullptr;
}

/// Calls fn(I{}) for the element type of indices (I64 or I32, checked).
template <typename Fn> zeroc_rt_status_t byIndexType(const zeroc_rt_tensor_t &indices, Fn &&fn) {
  return indices.dtype == ZEROC_RT_DTYPE_I64 ? fn(int64_t{}) : fn(int32_t{});
}

} // namespace
} // namespace zeroc_rt::cuda

using namespace zeroc_rt::cuda;

extern "C" {

zeroc_rt_status_t zeroc_rt_cuda_k_gather_elements(zrt_ct data, zrt_ct indices, int64_t axis,
                                                  zrt_ct out) {
  using namespace zeroc_rt::kernels;
  const char *k = "gather_elements";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "data", data));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "indices", indices, kIndexDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "data", *data));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "indices", *indices));
  ElementPlan p;
  ZEROC_RT_RETURN_IF_ERROR(planElements(k, "data", *data, indices, axis, "out", *out, p));
  if (!p.positions)
    return nullptr;
  return byIndexType(*indices, [&](auto i) {
    using I = decltype(i);
    return bySize(zeroc_rt_dtype_size(data->dtype), [&](auto u) {
      using U = decltype(u);
      return ZRT_LAUNCH(k, gatherElementsKernel<U, I>, blocksFor(p.positions), kBlock,
                        static_cast<const U *>(data->data), static_cast<const I *>(indices->data),
                        static_cast<U *>(out->data), p, kernelErrorWord(), currentOp());
    });
  });
}

zeroc_rt_status_t zeroc_rt_cuda_k_gather_elements_grad(zrt_ct grad_out, zrt_ct indices,
                                                       int64_t axis, zrt_ct grad_data) {
  using namespace zeroc_rt::kernels;
  const char *k = "gather_elements_grad";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_out", grad_out, kFloatDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_data", grad_data));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "indices", indices, kIndexDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "grad_data", *grad_data, "grad_out", *grad_out));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "grad_data", *grad_data, "indices", *indices));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "grad_out", *grad_out, "grad_data", *grad_data));
  ElementPlan p;
  ZEROC_RT_RETURN_IF_ERROR(
      planElements(k, "grad_data", *grad_data, indices, axis, "grad_out", *grad_out, p));
  const int64_t total = numElements(*grad_data);
  return dispatchFloat(k, grad_data->dtype, [&](auto s) -> zeroc_rt_status_t {
    using S = decltype(s);
    using A = std::conditional_t<std::is_same_v<S, double>, double, float>;
    constexpr bool narrow = !std::is_same_v<S, A>; // F16/BF16: an f32 scratch
    void *acc = grad_data->data;
    if (narrow && total)
      ZEROC_RT_RETURN_IF_ERROR(gpuScratch(static_cast<size_t>(total) * sizeof(A), &acc));
    ZEROC_RT_RETURN_IF_ERROR(gpuZero(acc, static_cast<size_t>(total) * sizeof(A)));
    if (p.positions)
      ZEROC_RT_RETURN_IF_ERROR(byIndexType(*indices, [&](auto i) {
        using I = decltype(i);
        return ZRT_LAUNCH(k, gatherElementsGradKernel<S, A, I>, blocksFor(p.positions), kBlock,
                          static_cast<const S *>(grad_out->data),
                          static_cast<const I *>(indices->data), static_cast<A *>(acc), p,
                          kernelErrorWord(), currentOp());
      }));
    if constexpr (narrow)
      if (total)
        return ZRT_LAUNCH(k, roundKernel<S>, blocksFor(total), kBlock,
                          static_cast<const float *>(acc), static_cast<S *>(grad_data->data),
                          total);
    return nullptr;
  });
}

zeroc_rt_status_t zeroc_rt_cuda_k_scatter_elements(zrt_ct data, zrt_ct indices, zrt_ct updates,
                                                   int64_t axis,
                                                   zeroc_rt_scatter_reduction_t reduction,
                                                   zrt_ct out) {
  using namespace zeroc_rt::kernels;
  const char *k = "scatter_elements";
  ZEROC_RT_RETURN_IF_ERROR(checkScatterOperands(k, data, indices, updates, reduction, out));
  ElementPlan p;
  ZEROC_RT_RETURN_IF_ERROR(planElements(k, "data", *data, indices, axis, "updates", *updates, p));
  ZEROC_RT_RETURN_IF_ERROR(gpuCopy(out->data, data->data, numBytes(*out)));
  if (!p.positions)
    return nullptr;
  if (reduction == ZEROC_RT_SCATTER_NONE) {
    const size_t seenBytes = static_cast<size_t>(numElements(*data)) * sizeof(unsigned);
    void *seen = nullptr;
    ZEROC_RT_RETURN_IF_ERROR(gpuScratch(seenBytes, &seen));
    ZEROC_RT_RETURN_IF_ERROR(gpuZero(seen, seenBytes));
    return byIndexType(*indices, [&](auto i) {
      using I = decltype(i);
      return bySize(zeroc_rt_dtype_size(data->dtype), [&](auto u) {
        using U = decltype(u);
        return ZRT_LAUNCH(k, scatterElementsNoneKernel<U, I>, blocksFor(p.positions), kBlock,
                          static_cast<const I *>(indices->data),
                          static_cast<const U *>(updates->data), static_cast<U *>(out->data), p,
                          static_cast<unsigned *>(seen), kernelErrorWord(), currentOp());
      });
    });
  }
  const int mul = reduction == ZEROC_RT_SCATTER_MUL ? 1 : 0;
  return byIndexType(*indices, [&](auto i) {
    using I = decltype(i);
    return dispatchNumeric(k, data->dtype, [&](auto v) {
      using S = decltype(v);
      return ZRT_LAUNCH(k, scatterElementsCombineKernel<S, I>, blocksFor(p.lines), kBlock,
                        static_cast<const I *>(indices->data),
                        static_cast<const S *>(updates->data), static_cast<S *>(out->data), p,
                        mul, kernelErrorWord(), currentOp());
    });
  });
}

} // extern "C"
