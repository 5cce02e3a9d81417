//===- kernels/common.h - What every CUDA kernel file shares -----*- C++ -*-===//
//
// Dtype dispatch on the host, the element-index <-> offset arithmetic of
// broadcasting and permutations (passed to kernels by value), and the
// checks of zeroc_rt/kernels.h's contract that need no data (the CPU
// runtime's tensor_check.h, so that messages match the CPU's).
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_CUDA_SRC_KERNELS_COMMON_H
#define ZEROC_RT_CUDA_SRC_KERNELS_COMMON_H

#include "zeroc_rt_cuda/compat.h"
#include "gpu.h"

#include "kernels/tensor_check.h"
#include "status_internal.h"
#include "zeroc_rt/kernels.h"
#include "zeroc_rt_cuda/kernels.h"

#include <type_traits>
#include <vector>

namespace zeroc_rt::cuda {

using kernels::numElements;

/// Up to 8 dims, and per operand the element stride of each (0 where the
/// operand is broadcast).
struct Strides {
  int rank = 0;
  int64_t dims[ZEROC_RT_MAX_RANK] = {};
  int64_t stride[3][ZEROC_RT_MAX_RANK] = {};
};

/// The offsets in up to three operands of element i of the iteration space.
ZRT_HD void offsetsOf(const Strides &s, int64_t i, int64_t *o0, int64_t *o1,
                      int64_t *o2) {
  int64_t a = 0, b = 0, c = 0;
  for (int d = s.rank - 1; d >= 0; --d) {
    const int64_t n = s.dims[d];
    const int64_t k = n ? i % n : 0;
    i = n ? i / n : 0;
    a += k * s.stride[0][d];
    b += k * s.stride[1][d];
    c += k * s.stride[2][d];
  }
  *o0 = a;
  *o1 = b;
  *o2 = c;
}

/// Strides of `t` broadcast against `out`'s shape (numpy rules, aligned at
/// the right), into slot `which` of `s` (whose dims become out's).
inline void setBroadcast(Strides &s, int which, const zeroc_rt_tensor_t &t,
                         const zeroc_rt_tensor_t &out) {
  s.rank = out.rank;
  for (int d = 0; d < out.rank; ++d)
    s.dims[d] = out.dims[d];
  int64_t stride = 1;
  for (int d = out.rank - 1, e = t.rank - 1; d >= 0; --d, --e) {
    const int64_t n = e >= 0 ? t.dims[e] : 1;
    s.stride[which][d] = n == 1 ? 0 : stride;
    stride *= n;
  }
}

/// The table row (of `count`, ordered by firstChunk, each row's chunks
/// non-empty) that chunk `chunk` belongs to: the last one starting at or
/// before it. The multi-tensor kernels give each block chunks of one row.
template <typename Row>
ZRT_DEV int64_t rowOfChunk(const Row *rows, int64_t count, int64_t chunk) {
  int64_t lo = 0, hi = count - 1;
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (rows[mid].firstChunk <= chunk)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/// A multi-tensor kernel's table, uploaded into the kernel scratch on the
/// compute stream (so before the launch that reads it); *out: the copy.
template <typename Row>
zeroc_rt_status_t uploadRows(const std::vector<Row> &rows, const Row **out) {
  const size_t bytes = rows.size() * sizeof(Row);
  void *table = nullptr;
  ZEROC_RT_RETURN_IF_ERROR(gpuScratch(bytes, &table));
  ZEROC_RT_RETURN_IF_ERROR(gpuUpload(table, rows.data(), bytes));
  *out = static_cast<const Row *>(table);
  return nullptr;
}

/// The launch's status (a CUDA error names the kernel).
#define ZRT_LAUNCH(name, ...)                                                  \
  ::zeroc_rt::cuda::launchStatus(                                              \
      static_cast<int>(::zeroc_rt::cuda::launch(__VA_ARGS__)), name)

/// Calls fn(S{}) for the storage type S of a float dtype; NULL when
/// `dtype` is not one (the caller reports it).
template <typename Fn>
zeroc_rt_status_t dispatchFloat(const char *kernel, zeroc_rt_dtype_t dtype,
                                Fn &&fn) {
  switch (dtype) {
  case ZEROC_RT_DTYPE_F32:
    return fn(float{});
  case ZEROC_RT_DTYPE_F64:
    return fn(double{});
  case ZEROC_RT_DTYPE_F16:
    return fn(F16{});
  case ZEROC_RT_DTYPE_BF16:
    return fn(BF16{});
  default:
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: dtype %s is not a float dtype", kernel,
                          zeroc_rt_dtype_name(dtype));
  }
}

/// fn(F{}, T{}) for the storage types of two float dtypes.
template <typename Fn>
zeroc_rt_status_t dispatchFloatPair(const char *kernel, zeroc_rt_dtype_t from,
                                    zeroc_rt_dtype_t to, Fn &&fn) {
  return dispatchFloat(kernel, from, [&](auto f) {
    return dispatchFloat(kernel, to, [&](auto t) { return fn(f, t); });
  });
}

/// Sets the kernel error word (kernelErrorWord) to `code` for op `op`,
/// unless an earlier error is there.
ZRT_DEV void flagError(unsigned *word, unsigned code, int32_t op) {
#if ZEROC_RT_CUDA_DEVICE && defined(__CUDA_ARCH__)
  if (atomicCAS(word, 0u, code) == 0u)
    word[1] = static_cast<unsigned>(op);
#else
  if (word[0] == 0) {
    word[0] = code;
    word[1] = static_cast<unsigned>(op);
  }
#endif
}

/// Atomically adds 1 to *word; returns the value before.
ZRT_DEV unsigned atomicIncrement(unsigned *word) {
#if ZEROC_RT_CUDA_DEVICE && defined(__CUDA_ARCH__)
  return ::atomicAdd(word, 1u);
#else
  return (*word)++;
#endif
}

/// The codes of kernelErrorWord (gpu_common.cc's kernelErrorText names 1;
/// the others read "a kernel found bad data (code N)").
constexpr unsigned kIndexOutOfRange = 1;
constexpr unsigned kDivisionByZero = 2;   ///< integer binary div by 0
constexpr unsigned kNegativeExponent = 3; ///< integer binary pow, b < 0
constexpr unsigned kRepeatedIndex = 4;    ///< scatter_nd/_elements none: one target twice

/// Calls fn(U{}) for the unsigned integer type U of `size` bytes (8, 4, 2,
/// else 1): kernels that only move elements.
template <typename Fn> zeroc_rt_status_t bySize(size_t size, Fn &&fn) {
  switch (size) {
  case 8: return fn(uint64_t{});
  case 4: return fn(uint32_t{});
  case 2: return fn(uint16_t{});
  default: return fn(uint8_t{});
  }
}

/// Calls fn(S{}) for the storage type S of a dtype that scatters add and
/// multiply (every dtype but BOOL, which the callers reject first).
template <typename Fn>
zeroc_rt_status_t dispatchNumeric(const char *kernel, zeroc_rt_dtype_t dtype,
                                  Fn &&fn) {
  switch (dtype) {
  case ZEROC_RT_DTYPE_I64: return fn(int64_t{});
  case ZEROC_RT_DTYPE_I32: return fn(int32_t{});
  case ZEROC_RT_DTYPE_U8: return fn(uint8_t{});
  default: return dispatchFloat(kernel, dtype, fn);
  }
}

/// a + b (mul == 0) or a * b, as the CPU's scatters combine: floats in
/// double, rounded once (through float for F16/BF16); integers wrap.
template <typename S> ZRT_HD S combineOf(S a, S b, int mul) {
  if constexpr (std::is_integral_v<S>) {
    using W = unsigned long long;
    const W x = static_cast<W>(a), y = static_cast<W>(b);
    return static_cast<S>(mul ? x * y : x + y);
  } else {
    const double x = static_cast<double>(load(a)), y = static_cast<double>(load(b));
    return storeD<S>(mul ? x * y : x + y);
  }
}

/// *to += v, atomically: the float (f32 and 16-bit gradients) or double
/// (f64) accumulators of the scattering gradients.
ZRT_DEV void atomicAccumulate(float *to, float v) { atomicAddFloat(to, v); }
ZRT_DEV void atomicAccumulate(double *to, double v) { atomicAddDouble(to, v); }

/// to[i] = from[i] rounded once to S: a 16-bit gradient out of its float
/// accumulator.
template <typename S>
ZRT_GLOBAL void roundKernel(const float *from, S *to, int64_t n) {
  for (int64_t i = gridFirst(); i < n; i += gridStride())
    to[i] = store<S>(from[i]);
}

} // namespace zeroc_rt::cuda

#endif // ZEROC_RT_CUDA_SRC_KERNELS_COMMON_H
