//===- kernels/movement.cu - Transpose, slice, gather, concat, trilu ------===//
//
// One thread per output element; the element's input offset from its
// index through per-dim strides (passed by value). concat scatters each
// input into its place in out (one launch per input); gather_grad_padded is
// gather_grad along axis 0 and then a zeroed row, as on the CPU.
//
//===----------------------------------------------------------------------===//

#include "kernels/common.h"

#include <string>
#include <vector>
#include <type_traits>

namespace zeroc_rt::cuda {
namespace {

/// Output dims and, per output dim, the input stride it moves by, plus a
/// base offset: offset(i) = base + sum_d index_d * stride_d.
struct Map {
  int rank = 0;
  int64_t dims[ZEROC_RT_MAX_RANK] = {};
  int64_t stride[ZEROC_RT_MAX_RANK] = {};
  int64_t base = 0;
};

ZRT_HD int64_t mapped(const Map &m, int64_t i) {
  int64_t o = m.base;
  for (int d = m.rank - 1; d >= 0; --d) {
    o += (i % m.dims[d]) * m.stride[d];
    i /= m.dims[d];
  }
  return o;
}

template <typename U>
ZRT_GLOBAL void gatherMapKernel(const U *in, U *out, Map m, int64_t n) {
  for (int64_t i = gridFirst(); i < n; i += gridStride())
    out[i] = in[mapped(m, i)];
}

template <typename U>
ZRT_GLOBAL void scatterMapKernel(const U *in, U *out, Map m, int64_t n) {
  for (int64_t i = gridFirst(); i < n; i += gridStride())
    out[mapped(m, i)] = in[i];
}

void rowMajorStrides(const zeroc_rt_tensor_t &t, int64_t *s) {
  int64_t stride = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    s[d] = stride;
    stride *= t.dims[d];
  }
}

zeroc_rt_status_t launchMap(const char *k, const zeroc_rt_tensor_t &in,
                            const zeroc_rt_tensor_t &out, const Map &m, bool scatter,
                            int64_t n) {
  return bySize(zeroc_rt_dtype_size(in.dtype), [&](auto u) {
    using U = decltype(u);
    return ZRT_LAUNCH(k, scatter ? scatterMapKernel<U> : gatherMapKernel<U>, blocksFor(n),
                      kBlock, static_cast<const U *>(in.data), static_cast<U *>(out.data), m, n);
  });
}

/// The slice's map: dim d of the slice moves `steps[d]` input elements.
zeroc_rt_status_t sliceMap(const char *k, const zeroc_rt_tensor_t &whole,
                           const zeroc_rt_tensor_t &part, const int64_t *starts,
                           const int64_t *steps, Map &m) {
  using namespace zeroc_rt::kernels;
  if (whole.rank != part.rank)
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH, "%s: ranks of %s and %s differ", k,
                          describe(whole).c_str(), describe(part).c_str());
  int64_t strides[ZEROC_RT_MAX_RANK];
  rowMajorStrides(whole, strides);
  m.rank = part.rank;
  for (int d = 0; d < part.rank; ++d) {
    const int64_t n = part.dims[d];
    if (n > 0) {
      const int64_t first = starts[d], last = starts[d] + (n - 1) * steps[d];
      if (steps[d] == 0 || first < 0 || first >= whole.dims[d] || last < 0 ||
          last >= whole.dims[d])
        return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                              "%s: dim %d's positions %lld + i * %lld leave %s", k, d,
                              static_cast<long long>(first), static_cast<long long>(steps[d]),
                              describe(whole).c_str());
    }
    m.dims[d] = n;
    m.stride[d] = strides[d] * steps[d];
    m.base += starts[d] * strides[d];
  }
  return nullptr;
}

template <typename U, typename I>
ZRT_GLOBAL void gatherKernel(const U *data, const I *indices, U *out, int64_t outer,
                             int64_t numIndices, int64_t axisDim, int64_t inner,
                             unsigned *error, int32_t op) {
  const int64_t n = outer * numIndices * inner;
  for (int64_t i = gridFirst(); i < n; i += gridStride()) {
    const int64_t in = i % inner, j = (i / inner) % numIndices, o = i / (inner * numIndices);
    int64_t idx = static_cast<int64_t>(indices[j]);
    if (idx < 0)
      idx += axisDim;
    if (idx < 0 || idx >= axisDim) {
      flagError(error, kIndexOutOfRange, op);
      out[i] = U{};
      continue;
    }
    out[i] = data[(o * axisDim + idx) * inner + in];
  }
}

/// grad_data (already zeroed, in float A) += grad_out at the indexed rows.
template <typename S, typename A, typename I>
ZRT_GLOBAL void gatherGradKernel(const S *gout, const I *indices, A *gdata, int64_t outer,
                                 int64_t numIndices, int64_t axisDim, int64_t inner) {
  const int64_t n = outer * numIndices * inner;
  for (int64_t i = gridFirst(); i < n; i += gridStride()) {
    const int64_t in = i % inner, j = (i / inner) % numIndices, o = i / (inner * numIndices);
    int64_t idx = static_cast<int64_t>(indices[j]);
    if (idx < 0)
      idx += axisDim;
    if (idx < 0 || idx >= axisDim)
      continue; // the forward gather flagged it
    A *to = gdata + (o * axisDim + idx) * inner + in;
    atomicAccumulate(to, static_cast<A>(load(gout[i])));
  }
}

/// A gather's (or its gradient's) shape along `axis` of `table`: the
/// elements before the axis, the axis' length, the elements after it and
/// the index count; `moved` must have outer * indices * inner elements.
struct GatherShape {
  int64_t outer = 0, axisDim = 0, inner = 0, numIndices = 0;
};

zeroc_rt_status_t gatherShape(const char *k, const char *tableName, const zeroc_rt_tensor_t *table,
                              const zeroc_rt_tensor_t *indices, const char *movedName,
                              const zeroc_rt_tensor_t *moved, int64_t axis, GatherShape &g,
                              bool sameDtype = true) {
  using namespace zeroc_rt::kernels;
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, tableName, table));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "indices", indices));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, movedName, moved));
  if (sameDtype)
    ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, movedName, *moved, tableName, *table));
  if (indices->dtype != ZEROC_RT_DTYPE_I64 && indices->dtype != ZEROC_RT_DTYPE_I32)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: indices must be i64 or i32", k);
  if (axis < 0)
    axis += table->rank;
  if (axis < 0 || axis >= table->rank)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: axis out of range", k);
  const int a = static_cast<int>(axis);
  g.outer = product(table->dims, 0, a);
  g.inner = product(table->dims, a + 1, table->rank);
  g.axisDim = table->dims[a];
  g.numIndices = numElements(*indices);
  if (g.outer * g.numIndices * g.inner != numElements(*moved))
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH, "%s: %s %s does not match %s %s and indices %s",
                          k, movedName, describe(*moved).c_str(), tableName,
                          describe(*table).c_str(), describe(*indices).c_str());
  return nullptr;
}

/// trilu: element i of (batch, rows, cols) is kept when col - row is >= k
/// (upper) or <= k (lower), else zero; k is clamped to [-rows-1, cols+1].
template <typename U>
ZRT_GLOBAL void triluKernel(const U *in, U *out, int64_t rows, int64_t cols, int upper,
                            int64_t k, int64_t n) {
  for (int64_t i = gridFirst(); i < n; i += gridStride()) {
    const int64_t c = i % cols, r = (i / cols) % rows;
    const bool keep = upper ? c - r >= k : c - r <= k;
    out[i] = keep ? in[i] : U{};
  }
}

/// Bytes of a copy a block of copyMultiKernel takes.
constexpr int64_t kCopyChunk = 65536;
/// Copies of at least this many bytes run as copies of their own (the copy
/// engine's bandwidth); the smaller ones share one launch.
constexpr int64_t kOwnCopyBytes = 1 << 20;

/// A copy of the table and its first chunk.
struct CopyRow {
  const unsigned char *src;
  unsigned char *dst;
  int64_t bytes, firstChunk;
};

/// A chunk per block: 4-byte words when both ends and the length allow,
/// else bytes (chunks start at multiples of kCopyChunk, so alignment holds).
ZRT_GLOBAL void copyMultiKernel(const CopyRow *rows, int64_t count, int64_t chunks) {
  for (int64_t chunk = blockIndex(); chunk < chunks; chunk += gridBlocks()) {
    const CopyRow &r = rows[rowOfChunk(rows, count, chunk)];
    const int64_t begin = (chunk - r.firstChunk) * kCopyChunk;
    const int64_t end = begin + kCopyChunk < r.bytes ? begin + kCopyChunk : r.bytes;
    const bool words = ((reinterpret_cast<uintptr_t>(r.src) | reinterpret_cast<uintptr_t>(r.dst) |
                         static_cast<uintptr_t>(end - begin)) & 3u) == 0;
    if (words) {
      const uint32_t *src = reinterpret_cast<const uint32_t *>(r.src + begin);
      uint32_t *dst = reinterpret_cast<uint32_t *>(r.dst + begin);
      for (int64_t i = threadIndex(); i < (end - begin) / 4; i += blockThreads())
        dst[i] = src[i];
    } else {
      for (int64_t i = begin + threadIndex(); i < end; i += blockThreads())
        r.dst[i] = r.src[i];
    }
  }
}

} // namespace
} // namespace zeroc_rt::cuda

using namespace zeroc_rt::cuda;

extern "C" {

zeroc_rt_status_t zeroc_rt_cuda_k_copy_multi(int64_t count, const zeroc_rt_copy_t *copies) {
  const char *k = "copy_multi";
  ZEROC_RT_RETURN_IF_ERROR(zeroc_rt::kernels::checkCopies(k, count, copies));
  std::vector<CopyRow> rows;
  int64_t chunks = 0;
  for (int64_t i = 0; i < count; ++i) {
    const zeroc_rt_copy_t &c = copies[i];
    if (c.bytes >= kOwnCopyBytes) {
      ZEROC_RT_RETURN_IF_ERROR(gpuCopy(c.dst, c.src, static_cast<size_t>(c.bytes)));
    } else if (c.bytes > 0) {
      rows.push_back({static_cast<const unsigned char *>(c.src),
                      static_cast<unsigned char *>(c.dst), c.bytes, chunks});
      chunks += (c.bytes + kCopyChunk - 1) / kCopyChunk;
    }
  }
  if (rows.empty())
    return nullptr;
  if (rows.size() == 1)
    return gpuCopy(rows[0].dst, rows[0].src, static_cast<size_t>(rows[0].bytes));
  const CopyRow *table = nullptr;
  ZEROC_RT_RETURN_IF_ERROR(uploadRows(rows, &table));
  return ZRT_LAUNCH(k, copyMultiKernel, cappedBlocks(chunks), kBlock, table,
                    static_cast<int64_t>(rows.size()), chunks);
}

zeroc_rt_status_t zeroc_rt_cuda_k_transpose(zrt_ct in, const int64_t *perm, zrt_ct out) {
  using namespace zeroc_rt::kernels;
  const char *k = "transpose";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "in", in));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "out", *out, "in", *in));
  if (in->rank != out->rank || (in->rank && !perm))
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH, "%s: %s and %s differ in rank", k,
                          describe(*in).c_str(), describe(*out).c_str());
  int64_t strides[ZEROC_RT_MAX_RANK];
  rowMajorStrides(*in, strides);
  Map m;
  m.rank = out->rank;
  unsigned seen = 0;
  for (int d = 0; d < out->rank; ++d) {
    const int64_t p = perm[d];
    if (p < 0 || p >= in->rank || (seen & (1u << p)) || in->dims[p] != out->dims[d])
      return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH, "%s: perm does not map %s to %s", k,
                            describe(*in).c_str(), describe(*out).c_str());
    seen |= 1u << p;
    m.dims[d] = out->dims[d];
    m.stride[d] = strides[p];
  }
  const int64_t n = numElements(*out);
  return n ? launchMap(k, *in, *out, m, false, n) : nullptr;
}

zeroc_rt_status_t zeroc_rt_cuda_k_slice(zrt_ct in, const int64_t *starts, const int64_t *steps,
                                        zrt_ct out) {
  using namespace zeroc_rt::kernels;
  const char *k = "slice";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "in", in));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "out", *out, "in", *in));
  Map m;
  ZEROC_RT_RETURN_IF_ERROR(sliceMap(k, *in, *out, starts, steps, m));
  const int64_t n = numElements(*out);
  return n ? launchMap(k, *in, *out, m, false, n) : nullptr;
}

zeroc_rt_status_t zeroc_rt_cuda_k_slice_grad(zrt_ct grad_out, const int64_t *starts,
                                             const int64_t *steps, zrt_ct grad_in) {
  using namespace zeroc_rt::kernels;
  const char *k = "slice_grad";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_out", grad_out));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_in", grad_in));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "grad_in", *grad_in, "grad_out", *grad_out));
  Map m;
  ZEROC_RT_RETURN_IF_ERROR(sliceMap(k, *grad_in, *grad_out, starts, steps, m));
  ZEROC_RT_RETURN_IF_ERROR(gpuZero(grad_in->data, numBytes(*grad_in)));
  const int64_t n = numElements(*grad_out);
  return n ? launchMap(k, *grad_out, *grad_in, m, true, n) : nullptr;
}

zeroc_rt_status_t zeroc_rt_cuda_k_gather(zrt_ct data, zrt_ct indices, int64_t axis, zrt_ct out) {
  using namespace zeroc_rt::kernels;
  const char *k = "gather";
  GatherShape g;
  ZEROC_RT_RETURN_IF_ERROR(gatherShape(k, "data", data, indices, "out", out, axis, g));
  const int64_t outer = g.outer, inner = g.inner, numIndices = g.numIndices, axisDim = g.axisDim;
  const int64_t n = numElements(*out);
  if (!n)
    return nullptr;
  return bySize(zeroc_rt_dtype_size(data->dtype), [&](auto u) {
    using U = decltype(u);
    if (indices->dtype == ZEROC_RT_DTYPE_I64)
      return ZRT_LAUNCH(k, gatherKernel<U, int64_t>, blocksFor(n), kBlock,
                        static_cast<const U *>(data->data),
                        static_cast<const int64_t *>(indices->data), static_cast<U *>(out->data),
                        outer, numIndices, axisDim, inner, kernelErrorWord(), currentOp());
    return ZRT_LAUNCH(k, gatherKernel<U, int32_t>, blocksFor(n), kBlock,
                      static_cast<const U *>(data->data),
                      static_cast<const int32_t *>(indices->data), static_cast<U *>(out->data),
                      outer, numIndices, axisDim, inner, kernelErrorWord(), currentOp());
  });
}

zeroc_rt_status_t zeroc_rt_cuda_k_gather_grad(zrt_ct grad_out, zrt_ct indices, int64_t axis,
                                              zrt_ct grad_data) {
  using namespace zeroc_rt::kernels;
  const char *k = "gather_grad";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_out", grad_out));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_data", grad_data));
  // F16/BF16 gradients sum in float: in a float grad_data itself
  // (zero-widen-gather-grad's form), else in the scratch, rounded at the end.
  const bool narrow = zeroc_rt_dtype_is_half(grad_out->dtype);
  const bool widened = sumsF16InF32(*grad_out, *grad_data);
  GatherShape g;
  ZEROC_RT_RETURN_IF_ERROR(
      gatherShape(k, "grad_data", grad_data, indices, "grad_out", grad_out, axis, g, !widened));
  const int64_t outer = g.outer, inner = g.inner, numIndices = g.numIndices, axisDim = g.axisDim;
  const int64_t n = outer * numIndices * inner, total = numElements(*grad_data);
  void *acc = grad_data->data;
  if (narrow && !widened)
    ZEROC_RT_RETURN_IF_ERROR(gpuScratch(static_cast<size_t>(total) * sizeof(float), &acc));
  ZEROC_RT_RETURN_IF_ERROR(gpuZero(acc, static_cast<size_t>(total) *
                                            (narrow ? sizeof(float) : zeroc_rt_dtype_size(grad_data->dtype))));
  auto scatter = [&](auto s, auto a, auto i) {
    using S = decltype(s);
    using A = decltype(a);
    using I = decltype(i);
    return ZRT_LAUNCH(k, gatherGradKernel<S, A, I>, blocksFor(n), kBlock,
                      static_cast<const S *>(grad_out->data), static_cast<const I *>(indices->data),
                      static_cast<A *>(acc), outer, numIndices, axisDim, inner);
  };
  return dispatchFloat(k, grad_out->dtype, [&](auto s) -> zeroc_rt_status_t {
    using S = decltype(s);
    using A = std::conditional_t<std::is_same_v<S, double>, double, float>;
    if (n)
      ZEROC_RT_RETURN_IF_ERROR(indices->dtype == ZEROC_RT_DTYPE_I64 ? scatter(S{}, A{}, int64_t{})
                                                                    : scatter(S{}, A{}, int32_t{}));
    if constexpr (!std::is_same_v<S, float> && !std::is_same_v<S, double>)
      if (!widened)
        return ZRT_LAUNCH(k, roundKernel<S>, blocksFor(total), kBlock,
                          static_cast<const float *>(acc), static_cast<S *>(grad_data->data),
                          total);
    return nullptr;
  });
}

zeroc_rt_status_t zeroc_rt_cuda_k_gather_grad_padded(zrt_ct grad_out, zrt_ct indices,
                                                     int64_t padding_idx, zrt_ct grad_data) {
  using namespace zeroc_rt::kernels;
  // As the CPU kernel: gather_grad's checks and result first, then the row.
  ZEROC_RT_RETURN_IF_ERROR(zeroc_rt_cuda_k_gather_grad(grad_out, indices, 0, grad_data));
  if (grad_data->rank < 1 || padding_idx < 0 || padding_idx >= grad_data->dims[0])
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "gather_grad_padded: padding_idx %lld is not a row of grad_data",
                          static_cast<long long>(padding_idx));
  const size_t row = static_cast<size_t>(product(grad_data->dims, 1, grad_data->rank)) *
                     zeroc_rt_dtype_size(grad_data->dtype);
  if (!row)
    return nullptr;
  return gpuZero(static_cast<char *>(grad_data->data) + static_cast<size_t>(padding_idx) * row,
                 row);
}

zeroc_rt_status_t zeroc_rt_cuda_k_concat(const zeroc_rt_tensor_t *const *inputs, int32_t n,
                                         int64_t axis, zrt_ct out) {
  using namespace zeroc_rt::kernels;
  const char *k = "concat";
  int ax = 0;
  ZEROC_RT_RETURN_IF_ERROR(checkConcatOperands(k, inputs, n, axis, out, &ax));
  // Input i, viewed as (outer, dims[ax] * inner), lands at column offset *
  // inner of out viewed as (outer, out.dims[ax] * inner).
  const int64_t outer = product(out->dims, 0, ax), inner = product(out->dims, ax + 1, out->rank);
  int64_t offset = 0;
  for (int32_t i = 0; i < n; ++i) {
    const zeroc_rt_tensor_t &in = *inputs[i];
    Map m;
    m.rank = 2;
    m.dims[0] = outer;
    m.dims[1] = in.dims[ax] * inner;
    m.stride[0] = out->dims[ax] * inner;
    m.stride[1] = 1;
    m.base = offset * inner;
    offset += in.dims[ax];
    const int64_t count = m.dims[0] * m.dims[1];
    if (count)
      ZEROC_RT_RETURN_IF_ERROR(launchMap(k, in, *out, m, true, count));
  }
  return nullptr;
}

zeroc_rt_status_t zeroc_rt_cuda_k_trilu(zrt_ct in, int upper, int64_t k_diag, zrt_ct out) {
  using namespace zeroc_rt::kernels;
  const char *k = "trilu";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "in", in));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  if (in->rank < 2)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: in %s must have rank >= 2", k,
                          describe(*in).c_str());
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "out", *out, "in", *in));
  ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "out", *out, "in", *in));
  const int64_t rows = in->dims[in->rank - 2], cols = in->dims[in->rank - 1];
  const int64_t n = numElements(*out);
  if (!n)
    return nullptr;
  // Clamping k to [-rows-1, cols+1] keeps col - row vs k exact and in range.
  const int64_t kc = k_diag < -rows - 1 ? -rows - 1 : (k_diag > cols + 1 ? cols + 1 : k_diag);
  return bySize(zeroc_rt_dtype_size(out->dtype), [&](auto u) {
    using U = decltype(u);
    return ZRT_LAUNCH(k, triluKernel<U>, blocksFor(n), kBlock, static_cast<const U *>(in->data),
                      static_cast<U *>(out->data), rows, cols, upper ? 1 : 0, kc, n);
  });
}

} // extern "C"
