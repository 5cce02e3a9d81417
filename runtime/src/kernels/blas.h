//===- kernels/blas.h - Row-major GEMM over cblas ----------------*- C++ -*-===//
//
// Internal to the kernels that contract with BLAS (matmul.cc, conv.cc).
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_SRC_KERNELS_BLAS_H
#define ZEROC_RT_SRC_KERNELS_BLAS_H

#include <cblas.h>
#include <cstdint>
#include <type_traits>

namespace zeroc_rt::kernels {

/// Row-major C[m x n] = alpha * op(A) * op(B) + beta * C with lda/ldb/ldc the
/// dense row lengths. beta == 0 overwrites C. k == 0 is handled here.
/// Callers check that m, n and k fit in int.
template <typename T>
void blasGemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha,
              const T *a, const T *b, T beta, T *c) {
  if (m == 0 || n == 0)
    return;
  if (k == 0) {
    for (int64_t i = 0; i < m * n; ++i)
      c[i] = beta == T(0) ? T(0) : beta * c[i];
    return;
  }
  int lda = static_cast<int>(ta ? m : k), ldb = static_cast<int>(tb ? k : n);
  auto transA = ta ? CblasTrans : CblasNoTrans;
  auto transB = tb ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, transA, transB, static_cast<int>(m),
                static_cast<int>(n), static_cast<int>(k), alpha, a, lda, b, ldb,
                beta, c, static_cast<int>(n));
  else
    cblas_dgemm(CblasRowMajor, transA, transB, static_cast<int>(m),
                static_cast<int>(n), static_cast<int>(k), alpha, a, lda, b, ldb,
                beta, c, static_cast<int>(n));
}

} // namespace zeroc_rt::kernels

#endif // ZEROC_RT_SRC_KERNELS_BLAS_H
