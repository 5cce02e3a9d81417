//===- kernels/tensor_check.h - Descriptor checks and loops -----*- C++ -*-===//
//
// Internal to the kernels: validation of zeroc_rt_tensor_t descriptors with
// messages that name the kernel and the offending dims, numpy broadcasting,
// and a strided multi-operand loop (an odometer over up to ZEROC_RT_MAX_RANK
// dims whose innermost dim is a plain counted loop).
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_SRC_KERNELS_TENSOR_CHECK_H
#define ZEROC_RT_SRC_KERNELS_TENSOR_CHECK_H

#include "zeroc_rt/kernels.h"

#include "kernels/scalar_types.h"
#include "status_internal.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <type_traits>

namespace zeroc_rt::kernels {

constexpr int kMaxRank = ZEROC_RT_MAX_RANK;

/// Bit sets of dtypes accepted by a kernel operand.
constexpr unsigned dtypeBit(zeroc_rt_dtype_t dtype) { return 1u << dtype; }
/// F32 and F64: the optimizer steps (mixed precision keeps fp32 masters).
constexpr unsigned kWideFloatDtypes =
    dtypeBit(ZEROC_RT_DTYPE_F32) | dtypeBit(ZEROC_RT_DTYPE_F64);
/// Every float dtype: F32, F64 and the storage types F16 and BF16.
constexpr unsigned kFloatDtypes = kWideFloatDtypes |
                                  dtypeBit(ZEROC_RT_DTYPE_F16) |
                                  dtypeBit(ZEROC_RT_DTYPE_BF16);
constexpr unsigned kIndexDtypes =
    dtypeBit(ZEROC_RT_DTYPE_I64) | dtypeBit(ZEROC_RT_DTYPE_I32);
constexpr unsigned kAnyDtype = (1u << ZEROC_RT_DTYPE_COUNT) - 1;

/// Whether F16/BF16 `grad`'s sums are stored in an F32 `sums` (a gather
/// gradient in zero-widen-gather-grad's form) rather than in its own dtype.
inline bool sumsF16InF32(const zeroc_rt_tensor_t &grad, const zeroc_rt_tensor_t &sums) {
  return (dtypeBit(grad.dtype) & (kFloatDtypes & ~kWideFloatDtypes)) &&
         sums.dtype == ZEROC_RT_DTYPE_F32;
}

/// "[2,3]" for the first `rank` entries of `dims`.
std::string dimsString(const int64_t *dims, int rank);
/// "f32[2,3]". Only for descriptors that passed checkTensor.
std::string describe(const zeroc_rt_tensor_t &t);

/// Product of dims[begin, end) (1 for an empty range). No overflow check:
/// use on descriptors that passed checkTensor.
int64_t product(const int64_t *dims, int begin, int end);
inline int64_t numElements(const zeroc_rt_tensor_t &t) {
  return product(t.dims, 0, t.rank);
}
inline size_t numBytes(const zeroc_rt_tensor_t &t) {
  return static_cast<size_t>(numElements(t)) * zeroc_rt_dtype_size(t.dtype);
}

/// Checks one descriptor: non-NULL, valid dtype, 0 <= rank <= 8, dims >= 0,
/// a byte size that fits int64, non-NULL data unless it has no elements, and
/// data aligned to the element size.
zeroc_rt_status_t checkTensor(const char *kernel, const char *name,
                              const zeroc_rt_tensor_t *t);

/// Element-size alignment of `data` (NULL passes): kernels access elements
/// through typed pointers.
zeroc_rt_status_t checkAlignment(const char *kernel, const char *name,
                                 const void *data, zeroc_rt_dtype_t dtype);

/// checkTensor plus the dtype in `allowed`.
zeroc_rt_status_t checkTensor(const char *kernel, const char *name,
                              const zeroc_rt_tensor_t *t, unsigned allowed);

/// `t` has the dtype of `ref` (INVALID_ARGUMENT otherwise).
zeroc_rt_status_t checkSameDtype(const char *kernel, const char *name,
                                 const zeroc_rt_tensor_t &t,
                                 const char *refName,
                                 const zeroc_rt_tensor_t &ref);

/// `t` has the shape of `ref` (SHAPE_MISMATCH otherwise).
zeroc_rt_status_t checkSameShape(const char *kernel, const char *name,
                                 const zeroc_rt_tensor_t &t,
                                 const char *refName,
                                 const zeroc_rt_tensor_t &ref);

/// `t` has exactly the shape (rank, dims) that `rule` describes.
zeroc_rt_status_t checkShape(const char *kernel, const char *name,
                             const zeroc_rt_tensor_t &t, int rank,
                             const int64_t *dims, const char *rule);

/// Fails when two byte ranges overlap (empty ranges never do).
zeroc_rt_status_t checkNoOverlap(const char *kernel, const char *nameA,
                                 const void *a, size_t bytesA,
                                 const char *nameB, const void *b,
                                 size_t bytesB);
inline zeroc_rt_status_t checkNoOverlap(const char *kernel, const char *nameA,
                                        const zeroc_rt_tensor_t &a,
                                        const char *nameB,
                                        const zeroc_rt_tensor_t &b) {
  return checkNoOverlap(kernel, nameA, a.data, numBytes(a), nameB, b.data,
                        numBytes(b));
}

/// concat's operands (both runtimes): the descriptors, at least one input,
/// out's rank, each input's dtype and dims (out's except on the axis), that
/// out overlaps no input, and that the axis dims add up to out's. *axOut:
/// the normalized axis.
zeroc_rt_status_t checkConcatOperands(const char *kernel,
                                      const zeroc_rt_tensor_t *const *inputs,
                                      int32_t n, int64_t axis,
                                      const zeroc_rt_tensor_t *out, int *axOut);

/// copy_multi's table (both runtimes): count >= 0, the table when count > 0,
/// no negative size, both pointers of a non-empty copy.
zeroc_rt_status_t checkCopies(const char *kernel, int64_t count,
                              const zeroc_rt_copy_t *copies);

/// What scatter_nd and scatter_elements check alike (both runtimes): the
/// descriptors, the reduction, dtypes, out's shape and that out overlaps no
/// input.
zeroc_rt_status_t checkScatterOperands(const char *kernel,
                                       const zeroc_rt_tensor_t *data,
                                       const zeroc_rt_tensor_t *indices,
                                       const zeroc_rt_tensor_t *updates,
                                       zeroc_rt_scatter_reduction_t reduction,
                                       const zeroc_rt_tensor_t *out);

/// Maps axis in [-rank, rank) to [0, rank).
zeroc_rt_status_t normalizeAxis(const char *kernel, int64_t axis, int rank,
                                int *out);

/// numpy broadcast of `n` operand shapes into (*rank, dims); SHAPE_MISMATCH
/// naming the operands when two non-1 dims differ.
zeroc_rt_status_t broadcastShapes(const char *kernel, int n,
                                  const zeroc_rt_tensor_t *const *operands,
                                  const char *const *names, int *rank,
                                  int64_t *dims);

/// Element strides of `t` read as broadcast to (outRank, outDims): 0 for
/// missing leading dims and for size-1 dims. `t` must broadcast to out.
void broadcastStrides(const zeroc_rt_tensor_t &t, int outRank,
                      const int64_t *outDims, int64_t *strides);

/// Row-major element strides.
void contiguousStrides(const int64_t *dims, int rank, int64_t *strides);

/// A loop nest over `rank` dims, advancing N offsets by their own strides.
template <size_t N> struct Loop {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strides[N][kMaxRank] = {};

  /// Stride of operand k along the innermost dim (0 for rank 0).
  int64_t innerStride(size_t k) const {
    return rank > 0 ? strides[k][rank - 1] : 0;
  }

  bool empty() const {
    for (int d = 0; d < rank; ++d)
      if (dims[d] == 0)
        return true;
    return false;
  }

  /// Drops size-1 dims and merges dims that are contiguous for every
  /// operand. The visiting order of the offsets is unchanged.
  void coalesce() {
    int r = 0;
    for (int d = 0; d < rank; ++d) {
      if (dims[d] == 1)
        continue;
      if (r > 0) {
        bool mergeable = true;
        for (size_t k = 0; k < N; ++k)
          if (strides[k][r - 1] != strides[k][d] * dims[d])
            mergeable = false;
        if (mergeable) {
          dims[r - 1] *= dims[d];
          for (size_t k = 0; k < N; ++k)
            strides[k][r - 1] = strides[k][d];
          continue;
        }
      }
      dims[r] = dims[d];
      for (size_t k = 0; k < N; ++k)
        strides[k][r] = strides[k][d];
      ++r;
    }
    rank = r;
  }
};

using Offsets1 = std::array<int64_t, 1>;

/// Calls fn(offsets, count) once per innermost row of the nest, rows in
/// row-major order, starting from `base`: the row's elements are at
/// offsets[k] + j * innerStride(k) for j < count (a rank-0 nest is one row of
/// one element). Kernels specialize their inner loops on those strides
/// (contiguous or broadcast operands), which the compiler vectorizes.
template <size_t N, typename Fn>
void forEachRow(const Loop<N> &loop, std::array<int64_t, N> base, Fn &&fn) {
  if (loop.empty())
    return;
  if (loop.rank == 0) {
    fn(base, int64_t(1));
    return;
  }
  const int last = loop.rank - 1;
  int64_t index[kMaxRank] = {};
  for (;;) {
    fn(base, loop.dims[last]);
    int d = last - 1;
    for (; d >= 0; --d) {
      for (size_t k = 0; k < N; ++k)
        base[k] += loop.strides[k][d];
      if (++index[d] < loop.dims[d])
        break;
      for (size_t k = 0; k < N; ++k)
        base[k] -= loop.strides[k][d] * loop.dims[d];
      index[d] = 0;
    }
    if (d < 0)
      return;
  }
}

/// Calls fn(offsets) for every index of the nest in row-major order, starting
/// from `base`. Offsets are in whatever unit the strides use.
template <size_t N, typename Fn>
void forEach(const Loop<N> &loop, std::array<int64_t, N> base, Fn &&fn) {
  std::array<int64_t, N> step;
  for (size_t k = 0; k < N; ++k)
    step[k] = loop.innerStride(k);
  forEachRow(loop, base, [&](std::array<int64_t, N> off, int64_t count) {
    for (int64_t j = 0; j < count; ++j) {
      fn(off);
      for (size_t k = 0; k < N; ++k)
        off[k] += step[k];
    }
  });
}

/// Splits `in` (shape dims/rank, contiguous) into the kept dims (bit clear in
/// `reducedMask`) and the reduced ones: `outer` visits kept indices in
/// row-major order (stride 0: in, stride 1 unused), `inner` the reduced ones.
/// Both are coalesced. Returns the number of reduced elements.
int64_t splitReduction(const int64_t *dims, int rank, uint32_t reducedMask,
                       Loop<1> *outer, Loop<1> *inner);

/// Elements per chunk of the F16/BF16 loops, which convert chunks of their
/// operands into float buffers on the stack (loadRow), compute on those and
/// round the results back (storeRow): the conversions then run vectorized
/// instead of once per element inside the compute loop.
constexpr int64_t kChunk = 256;

/// Calls fn(first, count) for the chunks [first, first + count) of n
/// elements, in order.
template <typename Fn> void forEachChunk(int64_t n, Fn &&fn) {
  for (int64_t first = 0; first < n; first += kChunk)
    fn(first, std::min(kChunk, n - first));
}

/// Reads `count` contiguous float-storage elements as the compute type:
/// F16/BF16 through loadRow into `buf` (returned), float and double in place.
template <typename T>
const ComputeOf<T> *loadChunk(const T *x, int64_t count, float *buf) {
  if constexpr (kIsNarrowFloat<T>) {
    loadRow(x, buf, count);
    return buf;
  } else {
    (void)count;
    (void)buf;
    return x;
  }
}

/// Sums of the contiguous float-storage tensor x (dims, rank) over the dims
/// in `reducedMask`: each sum runs in double from 0.0 over the reduced
/// indices in row-major order, and store(o, sum) receives the o-th sum, o in
/// row-major order of the kept dims. When the innermost dim is kept, a block
/// of adjacent sums is accumulated together, row by row of x, which reads x
/// in memory order and vectorizes; every sum still adds the same terms in
/// the same order.
template <typename T, typename Store>
void sumOver(const T *x, const int64_t *dims, int rank, uint32_t reducedMask,
             Store &&store) {
  constexpr int64_t kBlock = 256;
  Loop<1> outer, inner;
  splitReduction(dims, rank, reducedMask, &outer, &inner);
  if (outer.empty())
    return;
  float buf[kBlock];
  int64_t o = 0;
  if (outer.rank == 0 || outer.innerStride(0) != 1 || inner.empty()) {
    // The innermost dim is reduced (or nothing is): one sum at a time over
    // contiguous rows of x.
    forEach(outer, {0}, [&](const Offsets1 &base) {
      double acc = 0.0;
      forEachRow(inner, base, [&](const Offsets1 &off, int64_t n) {
        const int64_t step = inner.innerStride(0);
        if (step != 1) {
          for (int64_t j = 0; j < n; ++j)
            acc += loadValue(x[off[0] + j * step]);
          return;
        }
        for (int64_t j0 = 0; j0 < n; j0 += kBlock) {
          const int64_t m = std::min(kBlock, n - j0);
          const auto *v = loadChunk(x + off[0] + j0, m, buf);
          for (int64_t j = 0; j < m; ++j)
            acc += v[j];
        }
      });
      store(o++, acc);
    });
    return;
  }
  // The innermost dim (kept, stride 1) is split off `outer` and walked in
  // blocks of adjacent sums.
  Loop<1> rest = outer;
  const int64_t k = rest.dims[--rest.rank];
  double acc[kBlock];
  forEach(rest, {0}, [&](const Offsets1 &base) {
    for (int64_t k0 = 0; k0 < k; k0 += kBlock) {
      const int64_t m = std::min(kBlock, k - k0);
      std::fill_n(acc, m, 0.0);
      forEach(inner, {base[0] + k0}, [&](const Offsets1 &off) {
        const auto *v = loadChunk(x + off[0], m, buf);
        for (int64_t j = 0; j < m; ++j)
          acc[j] += v[j];
      });
      for (int64_t j = 0; j < m; ++j)
        store(o++, acc[j]);
    }
  });
}

/// Calls fn(S{}) with S = float, double, F16 or BF16 for F32 / F64 / F16 /
/// BF16 (a dtype that passed kFloatDtypes). One switch per kernel call; the
/// element loops inside fn are instantiated per storage type.
template <typename Fn> decltype(auto) dispatchFloat(zeroc_rt_dtype_t dtype, Fn &&fn) {
  switch (dtype) {
  case ZEROC_RT_DTYPE_F64:
    return fn(double());
  case ZEROC_RT_DTYPE_F16:
    return fn(F16());
  case ZEROC_RT_DTYPE_BF16:
    return fn(BF16());
  default:
    break;
  }
  return fn(float());
}

/// Calls fn(T{}) with T = float or double for F32 / F64 (kWideFloatDtypes).
template <typename Fn>
decltype(auto) dispatchWideFloat(zeroc_rt_dtype_t dtype, Fn &&fn) {
  if (dtype == ZEROC_RT_DTYPE_F64)
    return fn(double());
  return fn(float());
}

/// A scratch buffer of `count` elements from operator new (nothrow): NULL
/// data (and a ZEROC_RT_OUT_OF_MEMORY status from allocate) on failure.
template <typename T> class Scratch {
public:
  Scratch() = default;
  Scratch(const Scratch &) = delete;
  Scratch &operator=(const Scratch &) = delete;
  ~Scratch() { delete[] ptr; }

  zeroc_rt_status_t allocate(const char *kernel, const char *what,
                             int64_t count) {
    delete[] ptr;
    ptr = nullptr;
    if (count <= 0)
      return nullptr;
    if (static_cast<uint64_t>(count) > SIZE_MAX / sizeof(T) ||
        !(ptr = new (std::nothrow) T[static_cast<size_t>(count)]))
      return ZEROC_RT_ERROR(ZEROC_RT_OUT_OF_MEMORY,
                            "%s: cannot allocate the %s scratch (%lld "
                            "elements of %zu bytes)",
                            kernel, what, static_cast<long long>(count),
                            sizeof(T));
    return nullptr;
  }
  T *data() const { return ptr; }

private:
  T *ptr = nullptr;
};

/// Reads index element `i` of an I64 or I32 buffer.
inline int64_t loadIndex(const zeroc_rt_tensor_t &t, int64_t i) {
  if (t.dtype == ZEROC_RT_DTYPE_I64)
    return static_cast<const int64_t *>(t.data)[i];
  return static_cast<const int32_t *>(t.data)[i];
}

/// Copies element-size-aware blocks: a memcpy of `count` elements of `size`.
void copyElements(void *dst, const void *src, int64_t count, size_t size);

/// true when the C int flag is set (any non-zero value).
inline bool flag(int value) { return value != 0; }

} // namespace zeroc_rt::kernels

#endif // ZEROC_RT_SRC_KERNELS_TENSOR_CHECK_H
