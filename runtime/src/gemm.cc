//===- gemm.cc - Validated single-precision GEMM over cblas -----*- C++ -*-===//

#include "zeroc_rt/gemm.h"

#include "status_internal.h"

#include <algorithm>
#include <cblas.h>
#include <climits>
#include <cstdint>

namespace zeroc_rt {
namespace {

/// Row-major `rows x cols` matrix with leading dimension `ld`.
struct MatrixView {
  const char *name;
  const void *data;
  int64_t rows;
  int64_t cols;
  int64_t ld;

  bool empty() const { return rows == 0 || cols == 0; }
  /// Bytes spanned from the first to one past the last element.
  uint64_t extentBytes() const {
    return empty()
               ? 0
               : static_cast<uint64_t>((rows - 1) * ld + cols) * sizeof(float);
  }
};

zeroc_rt_status_t checkMatrix(const MatrixView &matrix, const char *ldName) {
  if (matrix.ld < std::max<int64_t>(1, matrix.cols))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "gemm_f32: %s = %lld must be >= max(1, %lld)", ldName,
                          static_cast<long long>(matrix.ld),
                          static_cast<long long>(matrix.cols));
  if (matrix.ld > INT_MAX)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "gemm_f32: %s = %lld exceeds the 32-bit BLAS limit",
                          ldName, static_cast<long long>(matrix.ld));
  if (!matrix.empty() && !matrix.data)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "gemm_f32: %s is NULL for a %lldx%lld matrix",
                          matrix.name, static_cast<long long>(matrix.rows),
                          static_cast<long long>(matrix.cols));
  return nullptr;
}

bool overlaps(const MatrixView &a, const MatrixView &b) {
  auto aBegin = reinterpret_cast<uintptr_t>(a.data);
  auto bBegin = reinterpret_cast<uintptr_t>(b.data);
  uint64_t aBytes = a.extentBytes(), bBytes = b.extentBytes();
  return aBytes > 0 && bBytes > 0 && aBegin < bBegin + bBytes &&
         bBegin < aBegin + aBytes;
}

/// C = beta * C, with beta == 0 overwriting (BLAS semantics for k == 0).
void scaleOutput(float beta, float *c, int64_t m, int64_t n, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
}

zeroc_rt_status_t gemm(zeroc_rt_transpose_t transA, zeroc_rt_transpose_t transB,
                       int64_t m, int64_t n, int64_t k, float alpha,
                       const float *a, int64_t lda, const float *b, int64_t ldb,
                       float beta, float *c, int64_t ldc) {
  for (zeroc_rt_transpose_t trans : {transA, transB})
    if (trans != ZEROC_RT_NO_TRANSPOSE && trans != ZEROC_RT_TRANSPOSE)
      return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                            "gemm_f32: invalid transpose flag %d",
                            static_cast<int>(trans));
  if (m < 0 || n < 0 || k < 0 || m > INT_MAX || n > INT_MAX || k > INT_MAX)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "gemm_f32: dimensions m=%lld n=%lld k=%lld must be "
                          "in [0, INT_MAX]",
                          static_cast<long long>(m), static_cast<long long>(n),
                          static_cast<long long>(k));
  bool ta = transA == ZEROC_RT_TRANSPOSE, tb = transB == ZEROC_RT_TRANSPOSE;
  // Operands that are not read (empty output, or k == 0) may be NULL.
  bool readsInputs = m > 0 && n > 0 && k > 0;
  MatrixView viewA{"A", readsInputs ? a : nullptr, ta ? k : m, ta ? m : k, lda};
  MatrixView viewB{"B", readsInputs ? b : nullptr, tb ? n : k, tb ? k : n, ldb};
  MatrixView viewC{"C", c, m, n, ldc};
  if (readsInputs) {
    ZEROC_RT_RETURN_IF_ERROR(checkMatrix(viewA, "lda"));
    ZEROC_RT_RETURN_IF_ERROR(checkMatrix(viewB, "ldb"));
  }
  ZEROC_RT_RETURN_IF_ERROR(checkMatrix(viewC, "ldc"));
  if (overlaps(viewC, viewA) || overlaps(viewC, viewB))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "gemm_f32: output C overlaps input %s",
                          overlaps(viewC, viewA) ? "A" : "B");
  if (m == 0 || n == 0)
    return nullptr;
  if (k == 0) {
    scaleOutput(beta, c, m, n, ldc);
    return nullptr;
  }
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
              tb ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), alpha, a,
              static_cast<int>(lda), b, static_cast<int>(ldb), beta, c,
              static_cast<int>(ldc));
  return nullptr;
}

} // namespace
} // namespace zeroc_rt

extern "C" zeroc_rt_status_t
zeroc_rt_gemm_f32(zeroc_rt_transpose_t trans_a, zeroc_rt_transpose_t trans_b,
                  int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                  int64_t lda, const float *b, int64_t ldb, float beta,
                  float *c, int64_t ldc) {
  return ZEROC_RT_GUARD_EXCEPTIONS(zeroc_rt::gemm(
      trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc));
}
