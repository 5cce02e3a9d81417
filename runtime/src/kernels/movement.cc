//===- kernels/movement.cc - Copies, gathers, slices, broadcast --*- C++ -*-===//

#include "kernels/scalar_types.h"
#include "kernels/tensor_check.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

namespace zeroc_rt::kernels {
namespace {

/// The tile edge of strided copies that transpose: a 32 x 32 tile reads
/// 32 source lines, which stay cached while the tile's rows are written.
constexpr int64_t kTile = 32;

/// Copies the 2-D block d[i * dstRow + j] = s[i + j * srcCol] for i < rows,
/// j < cols (the source is contiguous along i, the destination along j) in
/// tiles: within a tile the strided reads reuse cache lines that a
/// row-by-row copy would have evicted before coming back to them.
template <typename U>
void transposeBlock(U *d, const U *s, int64_t rows, int64_t cols,
                    int64_t dstRow, int64_t srcCol) {
  for (int64_t i0 = 0; i0 < rows; i0 += kTile)
    for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
      const int64_t i1 = std::min(rows, i0 + kTile);
      const int64_t j1 = std::min(cols, j0 + kTile);
      for (int64_t i = i0; i < i1; ++i)
        for (int64_t j = j0; j < j1; ++j)
          d[i * dstRow + j] = s[i + j * srcCol];
    }
}

/// The dim, other than the innermost, along which the source is contiguous
/// while the destination is contiguous along the innermost one and the
/// source is not (a transpose of the two); -1 when there is none.
int transposedDim(const Loop<2> &loop) {
  if (loop.rank < 2 || loop.innerStride(0) != 1 || loop.innerStride(1) == 1 ||
      loop.innerStride(1) == 0)
    return -1;
  for (int d = 0; d < loop.rank - 1; ++d)
    if (loop.strides[1][d] == 1)
      return d;
  return -1;
}

/// Runs a two-operand loop (0: destination, 1: source, element offsets),
/// copying one element of `size` bytes per index. Every destination element
/// is written once, so the visiting order is free: transposes go tile by
/// tile, contiguous rows are memcpy'd and broadcast rows filled.
void stridedCopy(const Loop<2> &loop, void *dst, const void *src,
                 std::array<int64_t, 2> base, size_t size) {
  dispatchBySize(size, [&](auto tag) {
    using U = decltype(tag);
    U *d = static_cast<U *>(dst);
    const U *s = static_cast<const U *>(src);
    if (int p = transposedDim(loop); p >= 0) {
      // Loop over every dim but p and the innermost; each step copies one
      // rows(p) x cols(innermost) block.
      Loop<2> rest;
      for (int dim = 0; dim < loop.rank - 1; ++dim) {
        if (dim == p)
          continue;
        rest.dims[rest.rank] = loop.dims[dim];
        rest.strides[0][rest.rank] = loop.strides[0][dim];
        rest.strides[1][rest.rank] = loop.strides[1][dim];
        ++rest.rank;
      }
      forEach(rest, base, [&](const std::array<int64_t, 2> &off) {
        transposeBlock(d + off[0], s + off[1], loop.dims[p],
                       loop.dims[loop.rank - 1], loop.strides[0][p],
                       loop.innerStride(1));
      });
      return;
    }
    const int64_t sd = loop.innerStride(0), ss = loop.innerStride(1);
    forEachRow(loop, base, [&](const std::array<int64_t, 2> &off, int64_t n) {
      U *pd = d + off[0];
      const U *ps = s + off[1];
      if (sd == 1 && ss == 1)
        std::memcpy(pd, ps, static_cast<size_t>(n) * sizeof(U));
      else if (sd == 1 && ss == 0)
        std::fill_n(pd, n, *ps);
      else
        for (int64_t j = 0; j < n; ++j)
          pd[j * sd] = ps[j * ss];
    });
  });
}

zeroc_rt_status_t kCopy(const zeroc_rt_tensor_t *in,
                        const zeroc_rt_tensor_t *out) {
  const char *k = "zeroc_rt_k_copy";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "in", in));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "out", *out, "in", *in));
  if (numElements(*in) != numElements(*out))
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                          "%s: out %s has %lld elements but in %s has %lld", k,
                          describe(*out).c_str(),
                          static_cast<long long>(numElements(*out)),
                          describe(*in).c_str(),
                          static_cast<long long>(numElements(*in)));
  size_t bytes = numBytes(*in);
  if (bytes && in->data != out->data)
    std::memmove(out->data, in->data, bytes);
  return nullptr;
}

zeroc_rt_status_t kZero(const zeroc_rt_tensor_t *out) {
  ZEROC_RT_RETURN_IF_ERROR(checkTensor("zeroc_rt_k_zero", "out", out));
  if (size_t bytes = numBytes(*out))
    std::memset(out->data, 0, bytes); // all-zero bits are 0 in every dtype
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Broadcast and its adjoint
//===----------------------------------------------------------------------===//

/// `small` broadcasts to `big` (numpy rules, one direction).
zeroc_rt_status_t checkBroadcastsTo(const char *k, const char *smallName,
                                    const zeroc_rt_tensor_t &small,
                                    const char *bigName,
                                    const zeroc_rt_tensor_t &big) {
  bool ok = small.rank <= big.rank;
  for (int d = 0; ok && d < small.rank; ++d) {
    int64_t s = small.dims[d], b = big.dims[d + big.rank - small.rank];
    ok = s == 1 || s == b;
  }
  if (!ok)
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                          "%s: %s %s does not broadcast to %s %s", k, smallName,
                          describe(small).c_str(), bigName,
                          describe(big).c_str());
  return nullptr;
}

zeroc_rt_status_t kBroadcast(const zeroc_rt_tensor_t *in,
                             const zeroc_rt_tensor_t *out) {
  const char *k = "zeroc_rt_k_broadcast";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "in", in));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "out", *out, "in", *in));
  ZEROC_RT_RETURN_IF_ERROR(checkBroadcastsTo(k, "in", *in, "out", *out));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "in", *in));
  Loop<2> loop;
  loop.rank = out->rank;
  std::copy(out->dims, out->dims + out->rank, loop.dims);
  contiguousStrides(out->dims, out->rank, loop.strides[0]);
  broadcastStrides(*in, out->rank, out->dims, loop.strides[1]);
  loop.coalesce();
  stridedCopy(loop, out->data, in->data, {0, 0},
              zeroc_rt_dtype_size(out->dtype));
  return nullptr;
}

zeroc_rt_status_t kSumTo(const zeroc_rt_tensor_t *in,
                         const zeroc_rt_tensor_t *out) {
  const char *k = "zeroc_rt_k_sum_to";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "in", in, kFloatDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "out", *out, "in", *in));
  ZEROC_RT_RETURN_IF_ERROR(checkBroadcastsTo(k, "out", *out, "in", *in));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "in", *in));
  // Reduced: the leading dims out lacks, and out's size-1 dims that in expands.
  uint32_t mask = 0;
  int lead = in->rank - out->rank;
  for (int d = 0; d < in->rank; ++d)
    if (d < lead || (out->dims[d - lead] == 1 && in->dims[d] != 1))
      mask |= 1u << d;
  dispatchFloat(in->dtype, [&](auto tag) {
    using T = decltype(tag);
    T *y = static_cast<T *>(out->data);
    // An empty reduction (a zero dim in `in`) leaves every sum 0.
    sumOver(static_cast<const T *>(in->data), in->dims, in->rank, mask,
            [&](int64_t o, double sum) { y[o] = storeValue<T>(sum); });
  });
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Gather
//===----------------------------------------------------------------------===//

/// Validates gather's operands: `data` (or grad_data) shape, indices, and the
/// result shape data[:axis] + indices + data[axis+1:]. Checks every index.
zeroc_rt_status_t checkGather(const char *k, const char *dataName, const zeroc_rt_tensor_t *data,
                              const zeroc_rt_tensor_t *indices, int64_t axis, const char *outName,
                              const zeroc_rt_tensor_t *out, int *axisOut, bool sameDtype = true) {
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "indices", indices, kIndexDtypes));
  if (sameDtype)
    ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, outName, *out, dataName, *data));
  if (data->rank == 0)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: %s must have rank >= 1", k, dataName);
  int ax = 0;
  ZEROC_RT_RETURN_IF_ERROR(normalizeAxis(k, axis, data->rank, &ax));
  int64_t expected[2 * kMaxRank];
  int rank = 0;
  for (int d = 0; d < ax; ++d)
    expected[rank++] = data->dims[d];
  for (int d = 0; d < indices->rank; ++d)
    expected[rank++] = indices->dims[d];
  for (int d = ax + 1; d < data->rank; ++d)
    expected[rank++] = data->dims[d];
  std::string rule = std::string(dataName) + "[:axis] + indices + " +
                     dataName + "[axis+1:] with axis " + std::to_string(ax);
  ZEROC_RT_RETURN_IF_ERROR(
      checkShape(k, outName, *out, rank, expected, rule.c_str()));
  int64_t size = data->dims[ax];
  int64_t n = numElements(*indices);
  for (int64_t i = 0; i < n; ++i) {
    int64_t v = loadIndex(*indices, i);
    if (v < -size || v >= size)
      return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                            "%s: index %lld (element %lld of indices %s) is "
                            "out of range for axis %d of size %lld",
                            k, static_cast<long long>(v),
                            static_cast<long long>(i),
                            describe(*indices).c_str(), ax,
                            static_cast<long long>(size));
  }
  *axisOut = ax;
  return nullptr;
}

zeroc_rt_status_t kGather(const zeroc_rt_tensor_t *data,
                          const zeroc_rt_tensor_t *indices, int64_t axis,
                          const zeroc_rt_tensor_t *out) {
  const char *k = "zeroc_rt_k_gather";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "data", data));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  int ax = 0;
  ZEROC_RT_RETURN_IF_ERROR(
      checkGather(k, "data", data, indices, axis, "out", out, &ax));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "data", *data));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "indices", *indices));
  int64_t outer = product(data->dims, 0, ax);
  int64_t size = data->dims[ax];
  int64_t inner = product(data->dims, ax + 1, data->rank);
  int64_t n = numElements(*indices);
  size_t elem = zeroc_rt_dtype_size(data->dtype);
  const char *src = static_cast<const char *>(data->data);
  char *dst = static_cast<char *>(out->data);
  if (inner == 0 || outer == 0)
    return nullptr;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < n; ++j) {
      int64_t v = loadIndex(*indices, j);
      if (v < 0)
        v += size;
      copyElements(dst + ((o * n + j) * inner) * elem,
                   src + ((o * size + v) * inner) * elem, inner, elem);
    }
  return nullptr;
}

zeroc_rt_status_t kGatherGrad(const zeroc_rt_tensor_t *gradOut,
                              const zeroc_rt_tensor_t *indices, int64_t axis,
                              const zeroc_rt_tensor_t *gradData) {
  const char *k = "zeroc_rt_k_gather_grad";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_out", gradOut, kFloatDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_data", gradData));
  const bool widened = sumsF16InF32(*gradOut, *gradData);
  int ax = 0;
  ZEROC_RT_RETURN_IF_ERROR(
      checkGather(k, "grad_data", gradData, indices, axis, "grad_out", gradOut, &ax, !widened));
  ZEROC_RT_RETURN_IF_ERROR(
      checkNoOverlap(k, "grad_data", *gradData, "grad_out", *gradOut));
  ZEROC_RT_RETURN_IF_ERROR(
      checkNoOverlap(k, "grad_data", *gradData, "indices", *indices));
  int64_t outer = product(gradData->dims, 0, ax);
  int64_t size = gradData->dims[ax];
  int64_t inner = product(gradData->dims, ax + 1, gradData->rank);
  int64_t n = numElements(*indices);
  // F32/F64 accumulate in grad_data itself, and so do F16/BF16 into an F32
  // grad_data. Else F16/BF16 accumulate in a float scratch shaped like
  // grad_data (16-bit sums of repeated indices would stall: in bf16,
  // 256 + 1 == 256) and round each element once at the end.
  return dispatchFloat(gradOut->dtype, [&](auto tag) -> zeroc_rt_status_t {
    using T = decltype(tag);
    using C = ComputeOf<T>;
    constexpr bool narrowStorage = !std::is_same_v<T, C>;
    const int64_t total = numElements(*gradData);
    Scratch<C> scratch;
    C *acc = nullptr;
    if constexpr (narrowStorage) {
      if (widened) {
        acc = static_cast<C *>(gradData->data);
      } else {
        ZEROC_RT_RETURN_IF_ERROR(scratch.allocate(k, "float accumulator", total));
        acc = scratch.data();
      }
    } else {
      acc = static_cast<T *>(gradData->data);
    }
    for (int64_t i = 0; i < total; ++i)
      acc[i] = C(0);
    const T *g = static_cast<const T *>(gradOut->data);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < n; ++j) {
        int64_t v = loadIndex(*indices, j);
        if (v < 0)
          v += size;
        C *dst = acc + (o * size + v) * inner;
        const T *src = g + (o * n + j) * inner;
        for (int64_t i = 0; i < inner; ++i)
          dst[i] += loadValue(src[i]);
      }
    if constexpr (narrowStorage) {
      if (widened)
        return nullptr;
      T *gd = static_cast<T *>(gradData->data);
      for (int64_t i = 0; i < total; ++i)
        gd[i] = storeValue<T>(acc[i]);
    }
    return nullptr;
  });
}

//===----------------------------------------------------------------------===//
// Transpose, slice, concat, trilu
//===----------------------------------------------------------------------===//

zeroc_rt_status_t kTranspose(const zeroc_rt_tensor_t *in, const int64_t *perm,
                             const zeroc_rt_tensor_t *out) {
  const char *k = "zeroc_rt_k_transpose";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "in", in));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "out", *out, "in", *in));
  if (in->rank > 0 && !perm)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: perm is NULL", k);
  bool seen[kMaxRank] = {};
  int64_t dims[kMaxRank];
  for (int i = 0; i < in->rank; ++i) {
    if (perm[i] < 0 || perm[i] >= in->rank || seen[perm[i]])
      return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                            "%s: perm %s is not a permutation of [0, %d)", k,
                            dimsString(perm, in->rank).c_str(),
                            static_cast<int>(in->rank));
    seen[perm[i]] = true;
    dims[i] = in->dims[perm[i]];
  }
  ZEROC_RT_RETURN_IF_ERROR(
      checkShape(k, "out", *out, in->rank, dims, "in permuted by perm"));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "in", *in));
  int64_t inStrides[kMaxRank];
  contiguousStrides(in->dims, in->rank, inStrides);
  Loop<2> loop;
  loop.rank = in->rank;
  std::copy(dims, dims + in->rank, loop.dims);
  contiguousStrides(dims, in->rank, loop.strides[0]);
  for (int i = 0; i < in->rank; ++i)
    loop.strides[1][i] = inStrides[perm[i]];
  loop.coalesce();
  stridedCopy(loop, out->data, in->data, {0, 0},
              zeroc_rt_dtype_size(in->dtype));
  return nullptr;
}

/// Checks that every strided position of a `counts`-shaped slice of `full`
/// lies inside it; fills the loop over the slice (0: slice, 1: full) and the
/// offset of the first element in `full`.
zeroc_rt_status_t planSlice(const char *k, const char *fullName,
                            const zeroc_rt_tensor_t &full,
                            const char *sliceName,
                            const zeroc_rt_tensor_t &slice,
                            const int64_t *starts, const int64_t *steps,
                            Loop<2> *loop, int64_t *base) {
  if (slice.rank != full.rank)
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                          "%s: %s %s must have the rank of %s %s", k, sliceName,
                          describe(slice).c_str(), fullName,
                          describe(full).c_str());
  if (full.rank > 0 && (!starts || !steps))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: %s is NULL", k,
                          starts ? "steps" : "starts");
  int64_t fullStrides[kMaxRank];
  contiguousStrides(full.dims, full.rank, fullStrides);
  *loop = Loop<2>();
  loop->rank = full.rank;
  *base = 0;
  for (int d = 0; d < full.rank; ++d) {
    int64_t n = slice.dims[d], dim = full.dims[d];
    int64_t start = starts[d], step = steps[d];
    if (step == 0)
      return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                            "%s: step of dim %d is 0", k, d);
    if (n > 0) {
      uint64_t magnitude = step > 0 ? static_cast<uint64_t>(step)
                                    : 0 - static_cast<uint64_t>(step);
      bool ok = start >= 0 && start < dim;
      if (ok) {
        uint64_t room = static_cast<uint64_t>(step > 0 ? dim - 1 - start : start);
        ok = static_cast<uint64_t>(n - 1) <= room / magnitude;
      }
      if (!ok)
        return ZEROC_RT_ERROR(
            ZEROC_RT_SHAPE_MISMATCH,
            "%s: dim %d: %lld elements from start %lld with step %lld leave "
            "[0, %lld) of %s %s (%s is %s)",
            k, d, static_cast<long long>(n), static_cast<long long>(start),
            static_cast<long long>(step), static_cast<long long>(dim), fullName,
            describe(full).c_str(), sliceName, describe(slice).c_str());
      *base += start * fullStrides[d];
    }
    loop->dims[d] = n;
    // Only dims with n > 1 step at all, and then |step| < dim: no overflow.
    loop->strides[1][d] = n > 1 ? fullStrides[d] * step : 0;
  }
  contiguousStrides(slice.dims, slice.rank, loop->strides[0]);
  if (loop->empty())
    *base = 0;
  loop->coalesce();
  return nullptr;
}

zeroc_rt_status_t kSlice(const zeroc_rt_tensor_t *in, const int64_t *starts,
                         const int64_t *steps, const zeroc_rt_tensor_t *out) {
  const char *k = "zeroc_rt_k_slice";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "in", in));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "out", *out, "in", *in));
  Loop<2> loop;
  int64_t base = 0;
  ZEROC_RT_RETURN_IF_ERROR(
      planSlice(k, "in", *in, "out", *out, starts, steps, &loop, &base));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "in", *in));
  stridedCopy(loop, out->data, in->data, {0, base},
              zeroc_rt_dtype_size(in->dtype));
  return nullptr;
}

zeroc_rt_status_t kSliceGrad(const zeroc_rt_tensor_t *gradOut,
                             const int64_t *starts, const int64_t *steps,
                             const zeroc_rt_tensor_t *gradIn) {
  const char *k = "zeroc_rt_k_slice_grad";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_out", gradOut));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_in", gradIn));
  ZEROC_RT_RETURN_IF_ERROR(
      checkSameDtype(k, "grad_in", *gradIn, "grad_out", *gradOut));
  Loop<2> loop;
  int64_t base = 0;
  ZEROC_RT_RETURN_IF_ERROR(planSlice(k, "grad_in", *gradIn, "grad_out",
                                     *gradOut, starts, steps, &loop, &base));
  ZEROC_RT_RETURN_IF_ERROR(
      checkNoOverlap(k, "grad_in", *gradIn, "grad_out", *gradOut));
  if (size_t bytes = numBytes(*gradIn))
    std::memset(gradIn->data, 0, bytes);
  // The strided positions are distinct (steps != 0): a scatter, no sums,
  // which is the slice's loop copying the other way.
  Loop<2> scatter = loop;
  for (int d = 0; d < loop.rank; ++d)
    std::swap(scatter.strides[0][d], scatter.strides[1][d]);
  stridedCopy(scatter, gradIn->data, gradOut->data, {base, 0},
              zeroc_rt_dtype_size(gradIn->dtype));
  return nullptr;
}

zeroc_rt_status_t kConcat(const zeroc_rt_tensor_t *const *inputs, int32_t n,
                          int64_t axis, const zeroc_rt_tensor_t *out) {
  const char *k = "zeroc_rt_k_concat";
  int ax = 0;
  ZEROC_RT_RETURN_IF_ERROR(checkConcatOperands(k, inputs, n, axis, out, &ax));
  int64_t outer = product(out->dims, 0, ax);
  int64_t inner = product(out->dims, ax + 1, out->rank);
  size_t elem = zeroc_rt_dtype_size(out->dtype);
  char *dst = static_cast<char *>(out->data);
  for (int64_t o = 0; o < outer; ++o) {
    int64_t offset = 0;
    for (int32_t i = 0; i < n; ++i) {
      int64_t chunk = inputs[i]->dims[ax] * inner;
      copyElements(dst + ((o * out->dims[ax] + offset) * inner) * elem,
                   static_cast<const char *>(inputs[i]->data) + o * chunk * elem,
                   chunk, elem);
      offset += inputs[i]->dims[ax];
    }
  }
  return nullptr;
}

zeroc_rt_status_t kTrilu(const zeroc_rt_tensor_t *in, int upper, int64_t kDiag,
                         const zeroc_rt_tensor_t *out) {
  const char *k = "zeroc_rt_k_trilu";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "in", in));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  if (in->rank < 2)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: in %s must have rank >= 2", k,
                          describe(*in).c_str());
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "out", *out, "in", *in));
  ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "out", *out, "in", *in));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "in", *in));
  int64_t rows = in->dims[in->rank - 2], cols = in->dims[in->rank - 1];
  int64_t batch = product(in->dims, 0, in->rank - 2);
  size_t elem = zeroc_rt_dtype_size(in->dtype);
  // Clamping k to [-rows-1, cols+1] keeps r + k from overflowing.
  int64_t kc = std::clamp<int64_t>(kDiag, -rows - 1, cols + 1);
  const char *src = static_cast<const char *>(in->data);
  char *dst = static_cast<char *>(out->data);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t r = 0; r < rows; ++r) {
      int64_t row = (b * rows + r) * cols;
      // Kept columns [lo, hi): upper keeps c >= r + k, lower c <= r + k.
      int64_t lo = flag(upper) ? std::clamp<int64_t>(r + kc, 0, cols) : 0;
      int64_t hi = flag(upper) ? cols : std::clamp<int64_t>(r + kc + 1, 0, cols);
      if (hi < lo)
        hi = lo;
      std::memset(dst + row * elem, 0, static_cast<size_t>(cols) * elem);
      copyElements(dst + (row + lo) * elem, src + (row + lo) * elem, hi - lo,
                    elem);
    }
  return nullptr;
}

zeroc_rt_status_t kCopyMulti(int64_t count, const zeroc_rt_copy_t *copies) {
  ZEROC_RT_RETURN_IF_ERROR(checkCopies("zeroc_rt_k_copy_multi", count, copies));
  for (int64_t i = 0; i < count; ++i)
    if (copies[i].bytes > 0)
      std::memmove(copies[i].dst, copies[i].src, static_cast<size_t>(copies[i].bytes));
  return nullptr;
}

} // namespace
} // namespace zeroc_rt::kernels

using namespace zeroc_rt::kernels;

extern "C" {

zeroc_rt_status_t zeroc_rt_k_copy_multi(int64_t count, const zeroc_rt_copy_t *copies) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kCopyMulti(count, copies));
}

zeroc_rt_status_t zeroc_rt_k_copy(const zeroc_rt_tensor_t *in,
                                  const zeroc_rt_tensor_t *out) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kCopy(in, out));
}

zeroc_rt_status_t zeroc_rt_k_zero(const zeroc_rt_tensor_t *out) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kZero(out));
}

zeroc_rt_status_t zeroc_rt_k_broadcast(const zeroc_rt_tensor_t *in,
                                       const zeroc_rt_tensor_t *out) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kBroadcast(in, out));
}

zeroc_rt_status_t zeroc_rt_k_sum_to(const zeroc_rt_tensor_t *in,
                                    const zeroc_rt_tensor_t *out) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kSumTo(in, out));
}

zeroc_rt_status_t zeroc_rt_k_gather(const zeroc_rt_tensor_t *data,
                                    const zeroc_rt_tensor_t *indices,
                                    int64_t axis,
                                    const zeroc_rt_tensor_t *out) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kGather(data, indices, axis, out));
}

zeroc_rt_status_t zeroc_rt_k_gather_grad(const zeroc_rt_tensor_t *grad_out,
                                         const zeroc_rt_tensor_t *indices,
                                         int64_t axis,
                                         const zeroc_rt_tensor_t *grad_data) {
  return ZEROC_RT_GUARD_EXCEPTIONS(
      kGatherGrad(grad_out, indices, axis, grad_data));
}

zeroc_rt_status_t zeroc_rt_k_transpose(const zeroc_rt_tensor_t *in,
                                       const int64_t *perm,
                                       const zeroc_rt_tensor_t *out) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kTranspose(in, perm, out));
}

zeroc_rt_status_t zeroc_rt_k_slice(const zeroc_rt_tensor_t *in,
                                   const int64_t *starts, const int64_t *steps,
                                   const zeroc_rt_tensor_t *out) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kSlice(in, starts, steps, out));
}

zeroc_rt_status_t zeroc_rt_k_slice_grad(const zeroc_rt_tensor_t *grad_out,
                                        const int64_t *starts,
                                        const int64_t *steps,
                                        const zeroc_rt_tensor_t *grad_in) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kSliceGrad(grad_out, starts, steps, grad_in));
}

zeroc_rt_status_t zeroc_rt_k_concat(const zeroc_rt_tensor_t *const *inputs,
                                    int32_t n, int64_t axis,
                                    const zeroc_rt_tensor_t *out) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kConcat(inputs, n, axis, out));
}

zeroc_rt_status_t zeroc_rt_k_trilu(const zeroc_rt_tensor_t *in, int upper,
                                   int64_t k, const zeroc_rt_tensor_t *out) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kTrilu(in, upper, k, out));
}

} // extern "C"
