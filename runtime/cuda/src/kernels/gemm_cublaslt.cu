//===- kernels/gemm_cublaslt.cu - The plan's GEMMs on cuBLASLt ------------===//
//
// Row-major out = op(A) op(B) is column-major out^T = op(B)^T op(A)^T: each
// call passes B as cuBLASLt's A and A as its B. Uniform batch strides become
// one strided-batched matmul; strides uniform within each run of the
// innermost batch dim (a strided operand's heads) one per run; others one
// matmul per batch element. A strided operand passes its leading dimension,
// and a column-major one its flag flipped. f16 and
// bf16 run on tensor cores with f32 accumulation; f32 stays IEEE f32
// (CUBLAS_COMPUTE_32F) unless the program allows TF32 (zeroc.tf32:
// CUBLAS_COMPUTE_32F_FAST_TF32), and f64 is f64. A GEMM's descriptors and
// the heuristic's algorithm are made once per key (sizes, strides,
// alignments, epilogue) and kept for the program's life. A bias (gemm's c
// of one row) and a bias gradient (gemm_bias_grad) run in cuBLASLt's
// BIAS, BGRADA or BGRADB epilogue where it has a kernel for the call; a
// key without one is remembered, and its callers run the GEMM and the
// broadcast or sum apart.
//
//===----------------------------------------------------------------------===//

#include "kernels/gemm_plan.h"

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <utility>

namespace zeroc_rt::cuda {
namespace {

cublasLtHandle_t handle = nullptr;
void *workspace = nullptr;
constexpr size_t kWorkspaceBytes = 32u << 20;

zeroc_rt_status_t lt(cublasStatus_t status, const char *what) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return nullptr;
  return ZEROC_RT_ERROR(ZEROC_RT_INTERNAL, "cuBLASLt: %s: status %d", what,
                        static_cast<int>(status));
}

zeroc_rt_status_t ensureHandle() {
  if (handle && workspace)
    return nullptr;
  if (!handle)
    ZEROC_RT_RETURN_IF_ERROR(lt(cublasLtCreate(&handle), "creating the handle"));
  return gpuMalloc(kWorkspaceBytes, "the GEMM workspace", &workspace);
}

/// The largest power of two, at most 256, that divides the address of each
/// of an operand's matrices and its leading dimension: `base` plus the
/// offset of each launch's first matrix and the batch stride, in elements
/// of `es` bytes. cuBLASLt's heuristic assumes 256 unless told, and the
/// plan's buffers are aligned to less; a kernel that needs more would fail
/// on a misaligned address.
uint32_t alignmentOf(const void *base, const std::vector<int64_t> &off, size_t es,
                     size_t group, int64_t stride, int64_t ld) {
  uintptr_t bits = reinterpret_cast<uintptr_t>(base) | 256u;
  bits |= static_cast<uintptr_t>(stride) * es | static_cast<uintptr_t>(ld) * es;
  for (size_t i = 0; i < off.size(); i += group)
    bits |= static_cast<uintptr_t>(off[i]) * es;
  return static_cast<uint32_t>(bits & (~bits + 1));
}

/// Whether each run of `group` consecutive batch elements is `*stride`
/// elements apart (the first run's stride; 0 for runs of one).
bool uniform(const std::vector<int64_t> &off, size_t group, int64_t *stride) {
  *stride = group > 1 ? off[1] - off[0] : 0;
  for (size_t j = 0; j < off.size(); j += group)
    for (size_t i = j + 1; i < j + group; ++i)
      if (off[i] - off[i - 1] != *stride)
        return false;
  return true;
}

/// One (possibly strided-batched) column-major matmul.
struct Layouts {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  Layouts() = default;
  Layouts(const Layouts &) = delete;
  Layouts &operator=(const Layouts &) = delete;
  ~Layouts() {
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (desc) cublasLtMatmulDescDestroy(desc);
  }
};

zeroc_rt_status_t layout(cublasLtMatrixLayout_t *out, cudaDataType type, uint64_t rows,
                         uint64_t cols, int64_t ld, int32_t batch, int64_t stride) {
  ZEROC_RT_RETURN_IF_ERROR(lt(cublasLtMatrixLayoutCreate(out, type, rows, cols, ld), "a layout"));
  if (batch > 1) {
    ZEROC_RT_RETURN_IF_ERROR(lt(cublasLtMatrixLayoutSetAttribute(
                                    *out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch),
                                "a batch count"));
    ZEROC_RT_RETURN_IF_ERROR(
        lt(cublasLtMatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                            &stride, sizeof stride),
           "a batch stride"));
  }
  return nullptr;
}

/// A GEMM's descriptors and the algorithm cuBLASLt's heuristic chose for
/// them, kept for the next GEMM of the same key: a program runs the same
/// few shapes every micro-step, and the heuristic costs the host far more
/// than the launch.
struct Plan {
  Layouts layouts;
  cublasLtMatmulAlgo_t algo{};
  /// False for an epilogue cuBLASLt has no kernel for (runEpilogue's
  /// callers then run the GEMM and the bias's broadcast or sum apart).
  bool usable = true;
};

/// Everything a plan depends on: the types, the operations, the sizes,
/// leading dimensions, batch and batch strides, each operand's alignment,
/// and the epilogue with its vector's alignment.
using PlanKey = std::array<int64_t, 20>;

std::map<PlanKey, std::unique_ptr<Plan>> &plans() {
  static std::map<PlanKey, std::unique_ptr<Plan>> cache;
  return cache;
}

/// The descriptors of a column-major C^T (n x m) = op(B)^T (n x k) *
/// op(A)^T (k x m), batched, and the heuristic's first algorithm for them
/// at these alignments (cuBLASLt's A is our B, its B our A), with
/// `epilogue` and its vector `bias` (whose address the heuristic reads
/// for its alignment) unless the epilogue is the default.
zeroc_rt_status_t makePlan(Plan &plan, cudaDataType type, cublasComputeType_t compute,
                           cudaDataType scaleType, bool tA, bool tB, uint64_t m, uint64_t n,
                           uint64_t k, int64_t ldA, int64_t ldB, int64_t ldC, int32_t batch,
                           int64_t sA, int64_t sB, int64_t sC, uint32_t alignA, uint32_t alignB,
                           uint32_t alignC, cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT,
                           const void *bias = nullptr) {
  Layouts &l = plan.layouts;
  ZEROC_RT_RETURN_IF_ERROR(lt(cublasLtMatmulDescCreate(&l.desc, compute, scaleType), "a matmul"));
  if (epilogue != CUBLASLT_EPILOGUE_DEFAULT) {
    ZEROC_RT_RETURN_IF_ERROR(
        lt(cublasLtMatmulDescSetAttribute(l.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                          sizeof epilogue),
           "an epilogue"));
    ZEROC_RT_RETURN_IF_ERROR(lt(cublasLtMatmulDescSetAttribute(
                                    l.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias),
                                "the epilogue's vector"));
  }
  cublasOperation_t opFirst = tB ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opSecond = tA ? CUBLAS_OP_T : CUBLAS_OP_N;
  ZEROC_RT_RETURN_IF_ERROR(lt(cublasLtMatmulDescSetAttribute(l.desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                                             &opFirst, sizeof opFirst), "transa"));
  ZEROC_RT_RETURN_IF_ERROR(lt(cublasLtMatmulDescSetAttribute(l.desc, CUBLASLT_MATMUL_DESC_TRANSB,
                                                             &opSecond, sizeof opSecond), "transb"));
  ZEROC_RT_RETURN_IF_ERROR(layout(&l.a, type, tB ? k : n, tB ? n : k, ldB, batch, sB));
  ZEROC_RT_RETURN_IF_ERROR(layout(&l.b, type, tA ? m : k, tA ? k : m, ldA, batch, sA));
  ZEROC_RT_RETURN_IF_ERROR(layout(&l.c, type, n, m, ldC, batch, sC));

  cublasLtMatmulPreference_t pref = nullptr;
  ZEROC_RT_RETURN_IF_ERROR(lt(cublasLtMatmulPreferenceCreate(&pref), "a preference"));
  size_t ws = kWorkspaceBytes;
  const std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t> aligns[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignA},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignB},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignC},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignC}};
  cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
  for (const auto &[attribute, bytes] : aligns)
    if (st == CUBLAS_STATUS_SUCCESS)
      st = cublasLtMatmulPreferenceSetAttribute(pref, attribute, &bytes, sizeof bytes);
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatmulAlgoGetHeuristic(handle, l.desc, l.a, l.b, l.c, l.c, pref, 1, &result,
                                        &found);
  cublasLtMatmulPreferenceDestroy(pref);
  ZEROC_RT_RETURN_IF_ERROR(lt(st, "choosing an algorithm"));
  if (found == 0)
    return ZEROC_RT_ERROR(ZEROC_RT_INTERNAL, "cuBLASLt: no algorithm for a %llux%llux%llu GEMM",
                          static_cast<unsigned long long>(m), static_cast<unsigned long long>(n),
                          static_cast<unsigned long long>(k));
  plan.algo = result.algo;
  return nullptr;
}

/// The element, compute and scale types of a GEMM of `dtype`: f16 and
/// bf16 accumulate in f32, f32 in f32 (TF32 when allowed), f64 in f64.
struct LtTypes {
  cudaDataType type, scale;
  cublasComputeType_t compute;
};
zeroc_rt_status_t ltTypes(zeroc_rt_dtype_t dtype, LtTypes *t) {
  switch (dtype) {
  case ZEROC_RT_DTYPE_F32:
    *t = {CUDA_R_32F, CUDA_R_32F, gemmTf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F};
    return nullptr;
  case ZEROC_RT_DTYPE_F64:
    *t = {CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F};
    return nullptr;
  case ZEROC_RT_DTYPE_F16:
    *t = {CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    return nullptr;
  case ZEROC_RT_DTYPE_BF16:
    *t = {CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    return nullptr;
  default:
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "gemm: dtype %s is not a float dtype",
                          zeroc_rt_dtype_name(dtype));
  }
}

} // namespace

zeroc_rt_status_t runGemm(const GemmCall &planned, zeroc_rt_dtype_t dtype, const void *a,
                          const void *b, void *out, double alpha, double beta) {
  // cuBLASLt writes out's matrices with a leading dimension, not
  // transposed: a column-major out is the swapped product's.
  const GemmCall call = withRowMajorOut(planned);
  if (planned.colOut)
    std::swap(a, b);
  if (call.offOut.empty() || call.m == 0 || call.n == 0)
    return nullptr;
  if (call.k == 0) { // out = beta * out, as the emulation computes it
    const int64_t count = static_cast<int64_t>(call.offOut.size()) * call.m * call.n;
    return beta == 0.0 ? gpuZero(out, count * zeroc_rt_dtype_size(dtype))
                       : zeroc_rt_cuda_k_scale(dtype, out, count, beta);
  }
  ZEROC_RT_RETURN_IF_ERROR(ensureHandle());
  LtTypes types;
  ZEROC_RT_RETURN_IF_ERROR(ltTypes(dtype, &types));
  const cudaDataType type = types.type, scaleType = types.scale;
  const cublasComputeType_t compute = types.compute;
  const size_t es = zeroc_rt_dtype_size(dtype);
  // One launch for the whole batch when every operand's matrices are one
  // stride apart; else one per run of the innermost batch dim (a strided
  // operand's heads); else one per matrix.
  const size_t count = call.offOut.size();
  int64_t sA = 0, sB = 0, sC = 0;
  auto fits = [&](size_t g) {
    return count % g == 0 && g < (1u << 31) && uniform(call.offA, g, &sA) &&
           uniform(call.offB, g, &sB) && uniform(call.offOut, g, &sC);
  };
  size_t group = count;
  if (!fits(group)) {
    group = static_cast<size_t>(call.innerBatch);
    if (group < 2 || !fits(group)) {
      group = 1;
      sA = sB = sC = 0;
    }
  }
  const int32_t batch = static_cast<int32_t>(group);
  const size_t launches = count / group;
  // A strided operand's stored matrix, column-major, reads with its flag
  // flipped (gemm_plan.h).
  const bool tA = call.transA != call.colA, tB = call.transB != call.colB;

  // Column-major: C^T (n x m) = op(B)^T (n x k) * op(A)^T (k x m).
  // Stored (row-major) B is k x n (or n x k transposed): column-major n x k.
  const uint64_t m = call.m, n = call.n, k = call.k;
  const int64_t ldA = call.ldA ? call.ldA : (tA ? m : k);
  const int64_t ldB = call.ldB ? call.ldB : (tB ? k : n);
  const int64_t ldC = call.ldOut ? call.ldOut : static_cast<int64_t>(n);
  // cuBLASLt's A is our B, its B our A, its C and D our out.
  const uint32_t alignA = alignmentOf(b, call.offB, es, group, sB, ldB);
  const uint32_t alignB = alignmentOf(a, call.offA, es, group, sA, ldA);
  const uint32_t alignC = alignmentOf(out, call.offOut, es, group, sC, ldC);
  // clang-format off
  const PlanKey key = {type, compute, tA, tB, static_cast<int64_t>(m), static_cast<int64_t>(n),
                       static_cast<int64_t>(k), ldA, ldB, ldC, batch, sA, sB, sC,
                       alignA, alignB, alignC, scaleType, CUBLASLT_EPILOGUE_DEFAULT, 0};
  // clang-format on
  std::unique_ptr<Plan> &plan = plans()[key];
  if (!plan) {
    auto made = std::make_unique<Plan>();
    ZEROC_RT_RETURN_IF_ERROR(makePlan(*made, type, compute, scaleType, tA, tB, m, n, k, ldA, ldB,
                                      ldC, batch, sA, sB, sC, alignA, alignB, alignC));
    plan = std::move(made);
  }
  const float alphaF = static_cast<float>(alpha), betaF = static_cast<float>(beta);
  const void *alphaP = dtype == ZEROC_RT_DTYPE_F64 ? static_cast<const void *>(&alpha) : &alphaF;
  const void *betaP = dtype == ZEROC_RT_DTYPE_F64 ? static_cast<const void *>(&beta) : &betaF;
  for (size_t i = 0; i < launches; ++i) {
    const size_t first = i * group;
    const char *pa = static_cast<const char *>(a) + call.offA[first] * es;
    const char *pb = static_cast<const char *>(b) + call.offB[first] * es;
    char *po = static_cast<char *>(out) + call.offOut[first] * es;
    const Layouts &l = plan->layouts;
    ZEROC_RT_RETURN_IF_ERROR(lt(cublasLtMatmul(handle, l.desc, alphaP, pb, l.a, pa, l.b, betaP, po,
                                               l.c, po, l.c, &plan->algo, workspace,
                                               kWorkspaceBytes,
                                               static_cast<cudaStream_t>(computeStream())),
                                "a GEMM"));
  }
  return nullptr;
}

namespace {

/// Runs `call` (one dense GEMM, beta 0) as one matmul with `epilogue` and
/// its vector (a bias it adds, or a bias gradient it writes); *done false,
/// and nothing ran, when cuBLASLt has no kernel for it (the plan keeps
/// that, so every later call of the key goes straight to the fallback).
zeroc_rt_status_t runEpilogue(const GemmCall &call, zeroc_rt_dtype_t dtype, const void *a,
                              const void *b, void *out, double alpha, cublasLtEpilogue_t epilogue,
                              const void *vector, bool *done) {
  *done = false;
  // ZEROC_RT_CUDA_GEMM_EPILOGUES=0 runs every such GEMM apart: gpu-check.sh
  // times the benchmark both ways.
  static const bool enabled = [] {
    const char *v = std::getenv("ZEROC_RT_CUDA_GEMM_EPILOGUES");
    return !(v && std::strcmp(v, "0") == 0);
  }();
  if (!enabled)
    return nullptr;
  // One dense product of at least one element each way (the caller's
  // fallback covers the rest).
  if (call.offOut.size() != 1 || call.ldA || call.ldB || call.ldOut || call.colOut || call.m == 0 ||
      call.n == 0 || call.k == 0)
    return nullptr;
  ZEROC_RT_RETURN_IF_ERROR(ensureHandle());
  LtTypes types;
  ZEROC_RT_RETURN_IF_ERROR(ltTypes(dtype, &types));
  const size_t es = zeroc_rt_dtype_size(dtype);
  const bool tA = call.transA, tB = call.transB;
  const uint64_t m = call.m, n = call.n, k = call.k;
  const int64_t ldA = tA ? m : k, ldB = tB ? k : n, ldC = static_cast<int64_t>(n);
  const uint32_t alignA = alignmentOf(b, call.offB, es, 1, 0, ldB);
  const uint32_t alignB = alignmentOf(a, call.offA, es, 1, 0, ldA);
  const uint32_t alignC = alignmentOf(out, call.offOut, es, 1, 0, ldC);
  const uint32_t alignVector = alignmentOf(vector, {0}, es, 1, 0, 0);
  // clang-format off
  const PlanKey key = {types.type, types.compute, tA, tB, static_cast<int64_t>(m),
                       static_cast<int64_t>(n), static_cast<int64_t>(k), ldA, ldB, ldC,
                       1, 0, 0, 0, alignA, alignB, alignC, types.scale, epilogue, alignVector};
  // clang-format on
  std::unique_ptr<Plan> &plan = plans()[key];
  if (!plan) {
    plan = std::make_unique<Plan>();
    // No kernel with this epilogue (or none for these types): the plan
    // says so, and every call of the key runs the fallback.
    if (zeroc_rt_status_t status =
            makePlan(*plan, types.type, types.compute, types.scale, tA, tB, m, n, k, ldA, ldB, ldC,
                     1, 0, 0, 0, alignA, alignB, alignC, epilogue, vector)) {
      zeroc_rt_status_free(status);
      plan->usable = false;
    }
  }
  if (!plan->usable)
    return nullptr;
  const Layouts &l = plan->layouts;
  if (cublasLtMatmulDescSetAttribute(l.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &vector,
                                     sizeof vector) != CUBLAS_STATUS_SUCCESS) {
    plan->usable = false;
    return nullptr;
  }
  const float alphaF = static_cast<float>(alpha), zeroF = 0.0f;
  const double zero = 0.0;
  const bool f64 = dtype == ZEROC_RT_DTYPE_F64;
  const void *alphaP = f64 ? static_cast<const void *>(&alpha) : &alphaF;
  const void *betaP = f64 ? static_cast<const void *>(&zero) : &zeroF;
  // A call cuBLASLt refuses launched nothing: the caller's fallback runs.
  if (cublasLtMatmul(handle, l.desc, alphaP, b, l.a, a, l.b, betaP, out, l.c, out, l.c, &plan->algo,
                     workspace, kWorkspaceBytes,
                     static_cast<cudaStream_t>(computeStream())) != CUBLAS_STATUS_SUCCESS) {
    plan->usable = false;
    return nullptr;
  }
  *done = true;
  return nullptr;
}

} // namespace

zeroc_rt_status_t runGemmBiasGrad(const GemmCall &call, zeroc_rt_dtype_t dtype, const void *a,
                                  const void *b, void *out, bool summedA, void *biasGrad,
                                  bool *done) {
  // cuBLASLt's B is our A: our A's sums over k are its B's (BGRADB, a
  // vector of D's m columns), our B's its A's (BGRADA, D's n rows).
  return runEpilogue(call, dtype, a, b, out, 1.0,
                     summedA ? CUBLASLT_EPILOGUE_BGRADB : CUBLASLT_EPILOGUE_BGRADA, biasGrad, done);
}

zeroc_rt_status_t runGemmBias(const GemmCall &call, zeroc_rt_dtype_t dtype, const void *a,
                              const void *b, void *out, double alpha, const void *bias,
                              bool *done) {
  // A vector of D's n rows (column-major D is our out transposed): one
  // element per column of our out, added to each of its rows.
  return runEpilogue(call, dtype, a, b, out, alpha, CUBLASLT_EPILOGUE_BIAS, bias, done);
}

bool gemmHasTf32() { return true; }

} // namespace zeroc_rt::cuda
