//===- zeroc_rt/gemm.h - Dense matrix multiply --------------------*- C -*-===//
//
// Row-major (C order) single-precision GEMM backed by OpenBLAS:
//   C[m x n] = alpha * op(A)[m x k] * op(B)[k x n] + beta * C
// op(X) is X or X^T. A is stored m x k (lda >= k), or k x m (lda >= m) when
// transposed; likewise B is k x n (ldb >= n), or n x k (ldb >= k). ldc >= n.
// With beta == 0, C is overwritten without being read (NaNs in C vanish).
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_GEMM_H
#define ZEROC_RT_GEMM_H

#include "zeroc_rt/common.h"
#include "zeroc_rt/status.h"

#include <stdint.h>

ZEROC_RT_EXTERN_C_BEGIN

typedef ZEROC_RT_ENUM(zeroc_rt_transpose){
    ZEROC_RT_NO_TRANSPOSE = 0,
    ZEROC_RT_TRANSPOSE = 1,
} zeroc_rt_transpose_t;

/// Validates every argument (dimensions, leading dimensions, NULL pointers,
/// C aliasing A or B, 32-bit BLAS index limits) before calling cblas_sgemm.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_gemm_f32(
    zeroc_rt_transpose_t trans_a, zeroc_rt_transpose_t trans_b, int64_t m,
    int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
    const float *b, int64_t ldb, float beta, float *c, int64_t ldc);

ZEROC_RT_EXTERN_C_END

#endif // ZEROC_RT_GEMM_H
