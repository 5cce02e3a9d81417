//===- kernels/tensor_check.cc - Descriptor checks and loops ----*- C++ -*-===//

#include "kernels/tensor_check.h"

#include <cstdint>
#include <cstring>
#include <limits>

namespace zeroc_rt::kernels {

std::string dimsString(const int64_t *dims, int rank) {
  std::string s = "[";
  for (int d = 0; d < rank; ++d) {
    if (d)
      s += ',';
    s += std::to_string(dims[d]);
  }
  return s + "]";
}

std::string describe(const zeroc_rt_tensor_t &t) {
  return std::string(zeroc_rt_dtype_name(t.dtype)) + dimsString(t.dims, t.rank);
}

int64_t product(const int64_t *dims, int begin, int end) {
  int64_t p = 1;
  for (int d = begin; d < end; ++d)
    p *= dims[d];
  return p;
}

zeroc_rt_status_t checkTensor(const char *kernel, const char *name,
                              const zeroc_rt_tensor_t *t) {
  if (!t)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: %s is NULL", kernel,
                          name);
  size_t size = zeroc_rt_dtype_size(t->dtype);
  if (size == 0)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: %s has invalid dtype %d", kernel, name,
                          static_cast<int>(t->dtype));
  if (t->rank < 0 || t->rank > kMaxRank)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: %s has rank %d; expected 0 to %d", kernel, name,
                          static_cast<int>(t->rank), kMaxRank);
  // The byte size must fit int64, and so must every partial product of the
  // dims (kernels split shapes into outer/inner blocks), so the product of
  // the non-zero dims is bounded even when a zero dim makes the tensor empty.
  int64_t limit =
      std::numeric_limits<int64_t>::max() / static_cast<int64_t>(size);
  int64_t nonZero = 1;
  bool empty = false;
  for (int d = 0; d < t->rank; ++d) {
    if (t->dims[d] < 0)
      return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                            "%s: %s dim %d is %lld (dims %s must be >= 0)",
                            kernel, name, d, static_cast<long long>(t->dims[d]),
                            dimsString(t->dims, t->rank).c_str());
    if (t->dims[d] == 0) {
      empty = true;
      continue;
    }
    if (nonZero > limit / t->dims[d])
      return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                            "%s: %s %s has more bytes than int64 can count",
                            kernel, name, describe(*t).c_str());
    nonZero *= t->dims[d];
  }
  int64_t count = empty ? 0 : nonZero;
  if (count > 0 && !t->data)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: %s data is NULL for %s", kernel, name,
                          describe(*t).c_str());
  return checkAlignment(kernel, name, t->data, t->dtype);
}

zeroc_rt_status_t checkAlignment(const char *kernel, const char *name,
                                 const void *data, zeroc_rt_dtype_t dtype) {
  size_t size = zeroc_rt_dtype_size(dtype);
  if (data && size && reinterpret_cast<uintptr_t>(data) % size != 0)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: %s data %p is not aligned to its %zu-byte %s "
                          "elements",
                          kernel, name, data, size, zeroc_rt_dtype_name(dtype));
  return nullptr;
}

namespace {

/// "f32 or f64", "f32, f64, f16 or bf16".
std::string allowedNames(unsigned allowed) {
  std::string s, last;
  for (int d = 0; d < ZEROC_RT_DTYPE_COUNT; ++d)
    if (allowed & (1u << d)) {
      if (!last.empty())
        s += (s.empty() ? "" : ", ") + last;
      last = zeroc_rt_dtype_name(static_cast<zeroc_rt_dtype_t>(d));
    }
  return s.empty() ? last : s + " or " + last;
}

} // namespace

zeroc_rt_status_t checkTensor(const char *kernel, const char *name,
                              const zeroc_rt_tensor_t *t, unsigned allowed) {
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(kernel, name, t));
  if (!(allowed & dtypeBit(t->dtype)))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: %s has dtype %s; expected %s", kernel, name,
                          zeroc_rt_dtype_name(t->dtype),
                          allowedNames(allowed).c_str());
  return nullptr;
}

zeroc_rt_status_t checkSameDtype(const char *kernel, const char *name,
                                 const zeroc_rt_tensor_t &t,
                                 const char *refName,
                                 const zeroc_rt_tensor_t &ref) {
  if (t.dtype != ref.dtype)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: %s has dtype %s but %s has %s", kernel, name,
                          zeroc_rt_dtype_name(t.dtype), refName,
                          zeroc_rt_dtype_name(ref.dtype));
  return nullptr;
}

zeroc_rt_status_t checkShape(const char *kernel, const char *name,
                             const zeroc_rt_tensor_t &t, int rank,
                             const int64_t *dims, const char *rule) {
  bool same = t.rank == rank;
  for (int d = 0; same && d < rank; ++d)
    same = t.dims[d] == dims[d];
  if (!same)
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH, "%s: %s is %s but %s is %s",
                          kernel, name, describe(t).c_str(), rule,
                          dimsString(dims, rank).c_str());
  return nullptr;
}

zeroc_rt_status_t checkSameShape(const char *kernel, const char *name,
                                 const zeroc_rt_tensor_t &t,
                                 const char *refName,
                                 const zeroc_rt_tensor_t &ref) {
  bool same = t.rank == ref.rank;
  for (int d = 0; same && d < t.rank; ++d)
    same = t.dims[d] == ref.dims[d];
  if (!same)
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                          "%s: %s is %s but must have the shape of %s %s",
                          kernel, name, describe(t).c_str(), refName,
                          describe(ref).c_str());
  return nullptr;
}

zeroc_rt_status_t checkNoOverlap(const char *kernel, const char *nameA,
                                 const void *a, size_t bytesA,
                                 const char *nameB, const void *b,
                                 size_t bytesB) {
  if (bytesA == 0 || bytesB == 0)
    return nullptr;
  auto aBegin = reinterpret_cast<uintptr_t>(a);
  auto bBegin = reinterpret_cast<uintptr_t>(b);
  if (aBegin < bBegin + bytesB && bBegin < aBegin + bytesA)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: %s overlaps %s (outputs must not alias inputs)",
                          kernel, nameA, nameB);
  return nullptr;
}

zeroc_rt_status_t normalizeAxis(const char *kernel, int64_t axis, int rank,
                                int *out) {
  if (axis < -static_cast<int64_t>(rank) || axis >= rank)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: axis %lld is out of range for rank %d", kernel,
                          static_cast<long long>(axis), rank);
  *out = static_cast<int>(axis < 0 ? axis + rank : axis);
  return nullptr;
}

zeroc_rt_status_t broadcastShapes(const char *kernel, int n,
                                  const zeroc_rt_tensor_t *const *operands,
                                  const char *const *names, int *rank,
                                  int64_t *dims) {
  int r = 0;
  for (int i = 0; i < n; ++i)
    r = operands[i]->rank > r ? operands[i]->rank : r;
  for (int d = 0; d < r; ++d) {
    int64_t dim = 1;
    int from = -1;
    for (int i = 0; i < n; ++i) {
      const zeroc_rt_tensor_t &t = *operands[i];
      int td = d - (r - t.rank);
      if (td < 0 || t.dims[td] == 1)
        continue;
      if (from >= 0 && t.dims[td] != dim)
        return ZEROC_RT_ERROR(
            ZEROC_RT_SHAPE_MISMATCH,
            "%s: %s %s and %s %s do not broadcast (dim %lld vs %lld)", kernel,
            names[from], describe(*operands[from]).c_str(), names[i],
            describe(t).c_str(), static_cast<long long>(dim),
            static_cast<long long>(t.dims[td]));
      dim = t.dims[td];
      from = i;
    }
    dims[d] = dim;
  }
  *rank = r;
  return nullptr;
}

void contiguousStrides(const int64_t *dims, int rank, int64_t *strides) {
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; --d) {
    strides[d] = s;
    s *= dims[d];
  }
}

void broadcastStrides(const zeroc_rt_tensor_t &t, int outRank,
                      const int64_t *outDims, int64_t *strides) {
  (void)outDims;
  int64_t own[kMaxRank];
  contiguousStrides(t.dims, t.rank, own);
  int lead = outRank - t.rank;
  for (int d = 0; d < outRank; ++d) {
    int td = d - lead;
    strides[d] = (td < 0 || t.dims[td] == 1) ? 0 : own[td];
  }
}

int64_t splitReduction(const int64_t *dims, int rank, uint32_t reducedMask,
                       Loop<1> *outer, Loop<1> *inner) {
  int64_t strides[kMaxRank];
  contiguousStrides(dims, rank, strides);
  *outer = Loop<1>();
  *inner = Loop<1>();
  int64_t reduced = 1;
  for (int d = 0; d < rank; ++d) {
    Loop<1> *loop = (reducedMask >> d) & 1u ? inner : outer;
    loop->dims[loop->rank] = dims[d];
    loop->strides[0][loop->rank] = strides[d];
    ++loop->rank;
    if ((reducedMask >> d) & 1u)
      reduced *= dims[d];
  }
  outer->coalesce();
  inner->coalesce();
  return reduced;
}

void copyElements(void *dst, const void *src, int64_t count, size_t size) {
  if (count > 0)
    std::memcpy(dst, src, static_cast<size_t>(count) * size);
}

/// What scatter_nd and scatter_elements check alike: the descriptors, the
/// reduction, dtypes, out's shape and that out overlaps no input.
zeroc_rt_status_t checkScatterOperands(const char *k,
                                       const zeroc_rt_tensor_t *data,
                                       const zeroc_rt_tensor_t *indices,
                                       const zeroc_rt_tensor_t *updates,
                                       zeroc_rt_scatter_reduction_t reduction,
                                       const zeroc_rt_tensor_t *out) {
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "data", data));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "indices", indices, kIndexDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "updates", updates));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  if (reduction != ZEROC_RT_SCATTER_NONE && reduction != ZEROC_RT_SCATTER_ADD &&
      reduction != ZEROC_RT_SCATTER_MUL)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: invalid reduction %d", k,
                          static_cast<int>(reduction));
  if (reduction != ZEROC_RT_SCATTER_NONE && data->dtype == ZEROC_RT_DTYPE_BOOL)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: add and mul need a numeric dtype, not bool", k);
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "updates", *updates, "data", *data));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "out", *out, "data", *data));
  ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "out", *out, "data", *data));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "data", *data));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "indices", *indices));
  return checkNoOverlap(k, "out", *out, "updates", *updates);
}

zeroc_rt_status_t checkCopies(const char *k, int64_t count,
                              const zeroc_rt_copy_t *copies) {
  if (count < 0 || (count > 0 && !copies))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: count %lld, copies %s", k,
                          static_cast<long long>(count), copies ? "given" : "NULL");
  for (int64_t i = 0; i < count; ++i) {
    const zeroc_rt_copy_t &c = copies[i];
    if (c.bytes < 0 || (c.bytes > 0 && (!c.src || !c.dst)))
      return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                            "%s: copy %lld: %lld bytes from %p to %p", k,
                            static_cast<long long>(i), static_cast<long long>(c.bytes),
                            c.src, c.dst);
  }
  return nullptr;
}

zeroc_rt_status_t checkConcatOperands(const char *k,
                                      const zeroc_rt_tensor_t *const *inputs,
                                      int32_t n, int64_t axis,
                                      const zeroc_rt_tensor_t *out, int *axOut) {
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  if (n < 1)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: needs at least one input, got %d", k,
                          static_cast<int>(n));
  if (!inputs)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: inputs is NULL", k);
  if (out->rank == 0)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: out must have rank >= 1", k);
  int ax = 0;
  ZEROC_RT_RETURN_IF_ERROR(normalizeAxis(k, axis, out->rank, &ax));
  *axOut = ax;
  int64_t total = 0;
  for (int32_t i = 0; i < n; ++i) {
    std::string name = "inputs[" + std::to_string(i) + "]";
    const zeroc_rt_tensor_t *in = inputs[i];
    ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, name.c_str(), in));
    ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, name.c_str(), *in, "out", *out));
    bool ok = in->rank == out->rank;
    for (int d = 0; ok && d < out->rank; ++d)
      ok = d == ax || in->dims[d] == out->dims[d];
    if (!ok)
      return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                            "%s: %s %s must match out %s except on axis %d", k,
                            name.c_str(), describe(*in).c_str(),
                            describe(*out).c_str(), ax);
    ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, name.c_str(), *in));
    if (in->dims[ax] > out->dims[ax] - total) {
      total = -1; // more than out holds (tested this way to avoid overflow)
      break;
    }
    total += in->dims[ax];
  }
  if (total != out->dims[ax])
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                          "%s: the inputs' axis-%d dims sum to %s but out %s "
                          "has %lld",
                          k, ax,
                          total < 0 ? "more" : std::to_string(total).c_str(),
                          describe(*out).c_str(),
                          static_cast<long long>(out->dims[ax]));
  return nullptr;
}

} // namespace zeroc_rt::kernels
