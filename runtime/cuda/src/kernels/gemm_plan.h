//===- kernels/gemm_plan.h - matmul and gemm as batched GEMMs ----*- C++ -*-===//
//
// numpy.matmul's and ONNX Gemm's shapes, checked and reduced to row-major
// batched GEMMs out[b] = alpha * op(A[b]) * op(B[b]) + beta * out[b] with a
// batch stride per operand (0: shared by the batch). Batch dims that
// broadcast partly (neither equal to out's nor all 1) become one GEMM per
// batch element. The executors: gemm_cublaslt.cu (cuBLASLt) and
// gemm_emu.cc (the host emulation: the CPU runtime's BLAS).
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_CUDA_SRC_KERNELS_GEMM_PLAN_H
#define ZEROC_RT_CUDA_SRC_KERNELS_GEMM_PLAN_H

#include "kernels/common.h"

#include <vector>

namespace zeroc_rt::cuda {

struct GemmCall {
  int64_t m = 0, n = 0, k = 0;
  bool transA = false, transB = false;
  /// Element offsets of each batch element's A, B and out.
  std::vector<int64_t> offA, offB, offOut;
  /// A strided operand (zeroc_rt_cuda_k_matmul_strided): its matrix's
  /// leading dimension (0: dense, the row length) and whether the matrix
  /// is stored column-major, i.e. as its transpose with that leading
  /// dimension (op(A) then reads the stored matrix with transA flipped).
  int64_t ldA = 0, ldB = 0;
  bool colA = false, colB = false;
  /// Likewise for out (written at strides: graph.matmul's result_perm).
  int64_t ldOut = 0;
  bool colOut = false;
  /// The innermost batch dim's size: batch elements that one launch with
  /// one batch stride per operand may cover when the whole batch cannot
  /// (attention's heads of a strided operand, D apart within a sequence).
  int64_t innerBatch = 1;
};

/// The GEMMs of zeroc_rt_k_matmul_trans(a, b, transA, transB, out); with
/// stridesA (stridesB, stridesOut), of a (b) read or out written at those
/// element strides.
ZEROC_RT_MUST_USE zeroc_rt_status_t planMatmul(const zeroc_rt_tensor_t *a,
                                               const zeroc_rt_tensor_t *b, bool transA,
                                               bool transB, const zeroc_rt_tensor_t *out,
                                               GemmCall &call,
                                               const int64_t *stridesA = nullptr,
                                               const int64_t *stridesB = nullptr,
                                               const int64_t *stridesOut = nullptr);

/// The same products with out's matrices row-major: a column-major out
/// (out^T stored) is op(B)^T op(A)^T, the operands and their flags swapped.
GemmCall withRowMajorOut(const GemmCall &call);

/// Runs `call` on a, b and out (float dtypes, all one dtype) with alpha and
/// beta (beta != 0 reads out).
ZEROC_RT_MUST_USE zeroc_rt_status_t runGemm(const GemmCall &call, zeroc_rt_dtype_t dtype,
                                            const void *a, const void *b, void *out,
                                            double alpha, double beta);

/// Runs `call` (one dense GEMM: alpha 1, beta 0) with a bias-gradient
/// epilogue that writes into `biasGrad` the sums over the k dimension of
/// A (summedA: A stored k x m, read transposed) or of B (stored k x n):
/// graph.fused_gemm_bias_grad. *done is false, and nothing ran, when the
/// executor has no such epilogue for the call (the emulation; cuBLASLt
/// for shapes, types or alignments it has no kernel for): the caller then
/// runs the GEMM and sum_to.
ZEROC_RT_MUST_USE zeroc_rt_status_t runGemmBiasGrad(const GemmCall &call, zeroc_rt_dtype_t dtype,
                                                    const void *a, const void *b, void *out,
                                                    bool summedA, void *biasGrad, bool *done);

/// Runs `call` (one dense GEMM) as alpha * op(A) op(B) + bias, `bias` a
/// vector of n elements added to every row of out, in a bias epilogue:
/// graph.gemm with a c of one row and beta 1. *done is false, and nothing
/// ran, when the executor has no such epilogue for the call: the caller
/// then broadcasts c into out and runs the GEMM with beta 1.
ZEROC_RT_MUST_USE zeroc_rt_status_t runGemmBias(const GemmCall &call, zeroc_rt_dtype_t dtype,
                                                const void *a, const void *b, void *out,
                                                double alpha, const void *bias, bool *done);

/// How many bias and bias-gradient GEMMs (runGemmBias, runGemmBiasGrad)
/// ran in a cuBLASLt epilogue, and how many apart (the GEMM, then the
/// broadcast or sum_to), since the process started: the GPU kernel tests
/// print them, to say whether cuBLASLt had the epilogues on that GPU.
void gemmEpilogueCounts(int64_t *inEpilogue, int64_t *apart);

/// Whether f32 GEMMs may run on TF32 tensor cores (the program's tf32, set
/// once before training; off by default). The host emulation computes f32 in
/// IEEE f32 either way.
void setGemmTf32(bool allowed);
bool gemmTf32();
/// Whether this executor has TF32 at all (cuBLASLt: yes; the emulation: no).
bool gemmHasTf32();

} // namespace zeroc_rt::cuda

#endif // ZEROC_RT_CUDA_SRC_KERNELS_GEMM_PLAN_H
