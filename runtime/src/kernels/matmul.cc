//===- kernels/matmul.cc - numpy.matmul and ONNX Gemm over cblas -*- C++ -*-===//

#include "kernels/blas.h"
#include "kernels/tensor_check.h"

#include <algorithm>
#include <cblas.h>
#include <climits>
#include <type_traits>

namespace zeroc_rt::kernels {
namespace {

/// Converts n float-storage elements to float scratch and back (16-bit
/// operands run through cblas_sgemm; rounding back is to nearest even).
template <typename S> void loadFloats(const void *src, float *dst, int64_t n) {
  const S *s = static_cast<const S *>(src);
  if constexpr (std::is_same_v<S, float>)
    std::copy(s, s + n, dst);
  else
    loadRow(s, dst, n);
}
template <typename S> void storeFloats(const float *src, void *dst, int64_t n) {
  S *d = static_cast<S *>(dst);
  if constexpr (std::is_same_v<S, float>)
    std::copy(src, src + n, d);
  else
    storeRow(src, d, n);
}

/// Float copies of a 16-bit tensor's elements (NULL data for none).
zeroc_rt_status_t floatCopy(const char *k, const char *what,
                            const zeroc_rt_tensor_t &t, Scratch<float> *out) {
  int64_t n = numElements(t);
  ZEROC_RT_RETURN_IF_ERROR(out->allocate(k, what, n));
  dispatchFloat(t.dtype, [&](auto tag) {
    using S = decltype(tag);
    if constexpr (!std::is_same_v<S, double>)
      loadFloats<S>(t.data, out->data(), n);
  });
  return nullptr;
}

/// Rounds a float scratch into `t` (F16 or BF16).
void storeFloatCopy(const float *src, const zeroc_rt_tensor_t &t) {
  int64_t n = numElements(t);
  dispatchFloat(t.dtype, [&](auto tag) {
    using S = decltype(tag);
    if constexpr (!std::is_same_v<S, double>)
      storeFloats<S>(src, t.data, n);
  });
}

zeroc_rt_status_t checkBlasDims(const char *k, int64_t m, int64_t n,
                                int64_t kk) {
  if (m > INT_MAX || n > INT_MAX || kk > INT_MAX)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: m=%lld n=%lld k=%lld exceed the 32-bit BLAS "
                          "limit",
                          k, static_cast<long long>(m),
                          static_cast<long long>(n), static_cast<long long>(kk));
  return nullptr;
}

zeroc_rt_status_t kMatmul(const zeroc_rt_tensor_t *a,
                          const zeroc_rt_tensor_t *b, bool ta, bool tb,
                          const zeroc_rt_tensor_t *out) {
  const char *k = ta || tb ? "zeroc_rt_k_matmul_trans" : "zeroc_rt_k_matmul";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "a", a, kFloatDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "b", b));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "b", *b, "a", *a));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "out", *out, "a", *a));
  if (a->rank < 1 || b->rank < 1)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: operands must have rank >= 1 (a %s, b %s)", k,
                          describe(*a).c_str(), describe(*b).c_str());
  if ((ta && a->rank < 2) || (tb && b->rank < 2))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: a transposed operand must have rank >= 2 (a %s, "
                          "b %s, trans_a=%d, trans_b=%d)",
                          k, describe(*a).c_str(), describe(*b).c_str(), ta ? 1 : 0,
                          tb ? 1 : 0);
  // Promote rank-1 operands: a (K) -> (1, K), b (K) -> (K, 1). A transposed
  // operand's last two dims are read swapped.
  bool aVector = a->rank == 1, bVector = b->rank == 1;
  int64_t m = aVector ? 1 : a->dims[a->rank - (ta ? 1 : 2)];
  int64_t kk = a->dims[a->rank - (ta ? 2 : 1)];
  int64_t kb = bVector ? b->dims[0] : b->dims[b->rank - (tb ? 1 : 2)];
  int64_t n = bVector ? 1 : b->dims[b->rank - (tb ? 2 : 1)];
  if (kk != kb)
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                          "%s: contraction dims differ: a %s has K=%lld, b %s "
                          "has K=%lld",
                          k, describe(*a).c_str(), static_cast<long long>(kk),
                          describe(*b).c_str(), static_cast<long long>(kb));
  // Batch dims: numpy broadcast of a.dims[:-2] and b.dims[:-2].
  zeroc_rt_tensor_t aBatch = *a, bBatch = *b;
  aBatch.rank = aVector ? 0 : a->rank - 2;
  bBatch.rank = bVector ? 0 : b->rank - 2;
  const zeroc_rt_tensor_t *batchOps[2] = {&aBatch, &bBatch};
  const char *batchNames[2] = {"a's batch dims", "b's batch dims"};
  int batchRank = 0;
  int64_t dims[kMaxRank + 2];
  ZEROC_RT_RETURN_IF_ERROR(
      broadcastShapes(k, 2, batchOps, batchNames, &batchRank, dims));
  int rank = batchRank;
  if (!aVector)
    dims[rank++] = m;
  if (!bVector)
    dims[rank++] = n;
  ZEROC_RT_RETURN_IF_ERROR(
      checkShape(k, "out", *out, rank, dims, "numpy.matmul of a and b"));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "a", *a));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "b", *b));
  ZEROC_RT_RETURN_IF_ERROR(checkBlasDims(k, m, n, kk));
  if (numElements(*out) == 0)
    return nullptr;

  // Loop over the batch: offsets of out, a and b in elements.
  Loop<3> loop;
  loop.rank = batchRank;
  std::copy(dims, dims + batchRank, loop.dims);
  contiguousStrides(dims, batchRank, loop.strides[0]);
  broadcastStrides(aBatch, batchRank, dims, loop.strides[1]);
  broadcastStrides(bBatch, batchRank, dims, loop.strides[2]);
  for (int d = 0; d < batchRank; ++d) {
    loop.strides[0][d] *= m * n;
    loop.strides[1][d] *= m * kk;
    loop.strides[2][d] *= kk * n;
  }
  loop.coalesce();
  // b shared by the whole batch and a not broadcast (nor transposed): one
  // GEMM with the batch folded into M (a and out are then contiguous stacks
  // of rows).
  bool bShared = true, aDense = true;
  for (int d = 0; d < loop.rank; ++d) {
    bShared = bShared && loop.strides[2][d] == 0;
    aDense = aDense && loop.strides[1][d] != 0;
  }
  int64_t batch = product(dims, 0, batchRank);
  if (!ta && bShared && aDense && loop.rank <= 1 && batch * m <= INT_MAX) {
    m *= batch;
    loop.rank = 0;
  }
  auto run = [&](auto tag, const void *da, const void *db, void *dout) {
    using T = decltype(tag);
    const T *pa = static_cast<const T *>(da);
    const T *pb = static_cast<const T *>(db);
    T *po = static_cast<T *>(dout);
    forEach(loop, {0, 0, 0}, [&](const std::array<int64_t, 3> &off) {
      blasGemm<T>(ta, tb, m, n, kk, T(1), pa + off[1], pb + off[2], T(0),
                  po + off[0]);
    });
  };
  if (zeroc_rt_dtype_is_half(a->dtype)) {
    // F16/BF16: float copies of a, b and out, cblas_sgemm, one rounding.
    Scratch<float> fa, fb, fo;
    ZEROC_RT_RETURN_IF_ERROR(floatCopy(k, "float copy of a", *a, &fa));
    ZEROC_RT_RETURN_IF_ERROR(floatCopy(k, "float copy of b", *b, &fb));
    ZEROC_RT_RETURN_IF_ERROR(fo.allocate(k, "float result", numElements(*out)));
    run(float(), fa.data(), fb.data(), fo.data());
    storeFloatCopy(fo.data(), *out);
    return nullptr;
  }
  if (a->dtype == ZEROC_RT_DTYPE_F64)
    run(double(), a->data, b->data, out->data);
  else
    run(float(), a->data, b->data, out->data);
  return nullptr;
}

zeroc_rt_status_t kGemm(const zeroc_rt_tensor_t *a, const zeroc_rt_tensor_t *b,
                        const zeroc_rt_tensor_t *c, double alpha, double beta,
                        int transA, int transB, const zeroc_rt_tensor_t *out) {
  const char *k = "zeroc_rt_k_gemm";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "a", a, kFloatDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "b", b));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "b", *b, "a", *a));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "out", *out, "a", *a));
  if (a->rank != 2 || b->rank != 2)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: a %s and b %s must have rank 2", k,
                          describe(*a).c_str(), describe(*b).c_str());
  bool ta = flag(transA), tb = flag(transB);
  int64_t m = ta ? a->dims[1] : a->dims[0];
  int64_t kk = ta ? a->dims[0] : a->dims[1];
  int64_t kb = tb ? b->dims[1] : b->dims[0];
  int64_t n = tb ? b->dims[0] : b->dims[1];
  if (kk != kb)
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                          "%s: contraction dims differ: op(a) of %s has "
                          "K=%lld, op(b) of %s has K=%lld (trans_a=%d, "
                          "trans_b=%d)",
                          k, describe(*a).c_str(), static_cast<long long>(kk),
                          describe(*b).c_str(), static_cast<long long>(kb),
                          ta ? 1 : 0, tb ? 1 : 0);
  int64_t dims[2] = {m, n};
  ZEROC_RT_RETURN_IF_ERROR(
      checkShape(k, "out", *out, 2, dims, "(M, N) of op(a) * op(b)"));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "a", *a));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "b", *b));
  if (c) {
    ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "c", c));
    ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "c", *c, "a", *a));
    bool ok = c->rank <= 2;
    for (int d = 0; ok && d < c->rank; ++d)
      ok = c->dims[d] == 1 || c->dims[d] == dims[d + 2 - c->rank];
    if (!ok)
      return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                            "%s: c %s does not broadcast to out %s", k,
                            describe(*c).c_str(), describe(*out).c_str());
    ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "c", *c));
  }
  ZEROC_RT_RETURN_IF_ERROR(checkBlasDims(k, m, n, kk));
  if (m == 0 || n == 0)
    return nullptr;
  // beta == 0 ignores c (BLAS semantics: NaNs in c do not propagate).
  const bool useC = c && beta != 0.0;
  // F16/BF16 run in float: a and b are copied to float scratch, the result
  // (beta * c, then the GEMM) is formed in a float scratch and rounded once.
  const bool narrowFloat = zeroc_rt_dtype_is_half(a->dtype);
  Scratch<float> fa, fb, fo;
  if (narrowFloat) {
    ZEROC_RT_RETURN_IF_ERROR(floatCopy(k, "float copy of a", *a, &fa));
    ZEROC_RT_RETURN_IF_ERROR(floatCopy(k, "float copy of b", *b, &fb));
    ZEROC_RT_RETURN_IF_ERROR(fo.allocate(k, "float result", m * n));
  }
  dispatchFloat(a->dtype, [&](auto tag) {
    using S = decltype(tag);
    using T = ComputeOf<S>; // the BLAS type
    T *po;
    const T *pa, *pb;
    if constexpr (std::is_same_v<S, T>) {
      po = static_cast<T *>(out->data);
      pa = static_cast<const T *>(a->data);
      pb = static_cast<const T *>(b->data);
    } else {
      po = fo.data();
      pa = fa.data();
      pb = fb.data();
    }
    T betaT = static_cast<T>(beta);
    if (useC) {
      int64_t strides[2];
      broadcastStrides(*c, 2, dims, strides);
      const S *pc = static_cast<const S *>(c->data);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
          po[i * n + j] =
              betaT * loadValue(pc[i * strides[0] + j * strides[1]]);
    }
    blasGemm<T>(ta, tb, m, n, kk, static_cast<T>(alpha), pa, pb,
                useC ? T(1) : T(0), po);
  });
  if (narrowFloat)
    storeFloatCopy(fo.data(), *out);
  return nullptr;
}

} // namespace
} // namespace zeroc_rt::kernels

using namespace zeroc_rt::kernels;

extern "C" {

zeroc_rt_status_t zeroc_rt_k_matmul(const zeroc_rt_tensor_t *a,
                                    const zeroc_rt_tensor_t *b,
                                    const zeroc_rt_tensor_t *out) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kMatmul(a, b, false, false, out));
}

zeroc_rt_status_t zeroc_rt_k_matmul_trans(const zeroc_rt_tensor_t *a,
                                          const zeroc_rt_tensor_t *b, int trans_a,
                                          int trans_b, const zeroc_rt_tensor_t *out) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kMatmul(a, b, flag(trans_a), flag(trans_b), out));
}

zeroc_rt_status_t zeroc_rt_k_gemm(const zeroc_rt_tensor_t *a,
                                  const zeroc_rt_tensor_t *b,
                                  const zeroc_rt_tensor_t *c, double alpha,
                                  double beta, int trans_a, int trans_b,
                                  const zeroc_rt_tensor_t *out) {
  return ZEROC_RT_GUARD_EXCEPTIONS(
      kGemm(a, b, c, alpha, beta, trans_a, trans_b, out));
}

} // extern "C"
