//===- kernels/gemm.cc - matmul and gemm on the GPU's GEMMs ---------------===//
//
// Checks the shapes (numpy.matmul, ONNX Gemm), plans the batched GEMMs and
// hands them to runGemm. Gemm's C is broadcast into out first and
// accumulated with beta.
//
//===----------------------------------------------------------------------===//

#include "kernels/gemm_plan.h"

#include "zeroc_rt_cuda/kernels.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace zeroc_rt::cuda {

namespace {

/// The leading dimension and storage order of a strided operand's matrix
/// (its last two dims, rows x cols, at strides[rank-2], strides[rank-1]).
zeroc_rt_status_t stridedMatrix(const char *name, const zeroc_rt_tensor_t &t,
                                const int64_t *strides, int64_t *ld, bool *colMajor) {
  const int64_t rows = t.dims[t.rank - 2], cols = t.dims[t.rank - 1];
  const int64_t sr = strides[t.rank - 2], sc = strides[t.rank - 1];
  if (sc == 1 && (sr >= cols || rows == 1)) {
    *ld = rows == 1 ? cols : sr;
    *colMajor = false;
  } else if (sr == 1 && (sc >= rows || cols == 1)) {
    *ld = cols == 1 ? rows : sc;
    *colMajor = true;
  } else {
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                          "matmul_strided: %s's last two strides (%lld, %lld) are not a "
                          "matrix's: one must be 1 and the other at least that dim",
                          name, static_cast<long long>(sr), static_cast<long long>(sc));
  }
  return nullptr;
}

} // namespace

zeroc_rt_status_t planMatmul(const zeroc_rt_tensor_t *a, const zeroc_rt_tensor_t *b,
                             bool transA, bool transB, const zeroc_rt_tensor_t *out,
                             GemmCall &call, const int64_t *stridesA,
                             const int64_t *stridesB, const int64_t *stridesOut) {
  using namespace zeroc_rt::kernels;
  const char *k = "matmul";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "a", a));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "b", b));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "b", *b, "a", *a));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "out", *out, "a", *a));
  if (a->rank < 1 || b->rank < 1)
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH, "matmul: rank-0 operand");
  if ((transA && a->rank < 2) || (transB && b->rank < 2))
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                          "matmul: a transposed operand must have rank >= 2 (%s, %s)",
                          describe(*a).c_str(), describe(*b).c_str());
  // Promote rank-1 operands: a (K) -> (1, K), b (K) -> (K, 1). A transposed
  // operand's last two dims are read swapped (its block is as large).
  const int64_t m = a->rank == 1 ? 1 : a->dims[a->rank - (transA ? 1 : 2)];
  const int64_t ka = a->dims[a->rank - (transA ? 2 : 1)];
  const int64_t kb = b->rank == 1 ? b->dims[0] : b->dims[b->rank - (transB ? 1 : 2)];
  const int64_t n = b->rank == 1 ? 1 : b->dims[b->rank - (transB ? 2 : 1)];
  if (ka != kb)
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH, "matmul: %s and %s do not multiply",
                          describe(*a).c_str(), describe(*b).c_str());
  const int batchA = a->rank > 2 ? a->rank - 2 : 0, batchB = b->rank > 2 ? b->rank - 2 : 0;
  const int batch = batchA > batchB ? batchA : batchB;
  int64_t dims[ZEROC_RT_MAX_RANK], count = 1;
  for (int d = 0; d < batch; ++d) {
    const int ea = d - (batch - batchA), eb = d - (batch - batchB);
    const int64_t da = ea >= 0 ? a->dims[ea] : 1, db = eb >= 0 ? b->dims[eb] : 1;
    if (da != db && da != 1 && db != 1)
      return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH, "matmul: batch dims of %s and %s differ",
                            describe(*a).c_str(), describe(*b).c_str());
    dims[d] = da > db ? da : db;
    count *= dims[d];
  }
  if (count * m * n != numElements(*out))
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH, "matmul: out %s is not the product of %s and %s",
                          describe(*out).c_str(), describe(*a).c_str(), describe(*b).c_str());
  call.m = m;
  call.n = n;
  call.k = ka;
  call.transA = transA;
  call.transB = transB;
  call.offA.clear();
  call.offB.clear();
  call.offOut.clear();
  call.ldA = call.ldB = call.ldOut = 0;
  call.colA = call.colB = call.colOut = false;
  call.innerBatch = batch > 0 ? dims[batch - 1] : 1;
  if ((stridesA && a->rank < 2) || (stridesB && b->rank < 2))
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                          "matmul_strided: a strided operand must have rank >= 2");
  if (stridesA)
    ZEROC_RT_RETURN_IF_ERROR(stridedMatrix("a", *a, stridesA, &call.ldA, &call.colA));
  if (stridesB)
    ZEROC_RT_RETURN_IF_ERROR(stridedMatrix("b", *b, stridesB, &call.ldB, &call.colB));
  if (stridesOut && (out->rank < 2 || out->rank != batch + 2))
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                          "matmul_strided: a strided out must have the product's dims "
                          "(rank %d)", batch + 2);
  if (stridesOut) {
    ZEROC_RT_RETURN_IF_ERROR(
        stridedMatrix("out", *out, stridesOut, &call.ldOut, &call.colOut));
    // Every element at an address of its own: in order of their strides,
    // each dim starts past the whole extent of the ones before (a
    // permutation of a row-major tensor's strides, or rows padded to a
    // pitch: zero-plan-buffers' row pitch).
    std::vector<std::pair<int64_t, int64_t>> byStride; // (stride, dim)
    for (int d = 0; d < out->rank; ++d)
      if (out->dims[d] != 1)
        byStride.emplace_back(stridesOut[d], out->dims[d]);
    std::sort(byStride.begin(), byStride.end());
    int64_t extent = 1;
    for (const auto &[stride, dim] : byStride) {
      if (stride < extent)
        return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                              "matmul_strided: out's strides store two elements at one "
                              "address");
      extent = stride * dim;
    }
  }
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i, oa = 0, ob = 0, sa = m * ka, sb = ka * n;
    // A strided out has the batch's dims, unbroadcast.
    int64_t oo = stridesOut ? 0 : i * m * n;
    for (int d = batch - 1; d >= 0; --d) {
      const int64_t idx = rest % dims[d];
      rest /= dims[d];
      if (stridesOut)
        oo += idx * stridesOut[d];
      const int ea = d - (batch - batchA), eb = d - (batch - batchB);
      if (ea >= 0) {
        if (a->dims[ea] != 1)
          oa += idx * (stridesA ? stridesA[ea] : sa);
        sa *= a->dims[ea];
      }
      if (eb >= 0) {
        if (b->dims[eb] != 1)
          ob += idx * (stridesB ? stridesB[eb] : sb);
        sb *= b->dims[eb];
      }
    }
    call.offA.push_back(oa);
    call.offB.push_back(ob);
    call.offOut.push_back(oo);
  }
  return nullptr;
}

GemmCall withRowMajorOut(const GemmCall &call) {
  if (!call.colOut)
    return call;
  GemmCall t = call;
  t.m = call.n;
  t.n = call.m;
  t.transA = !call.transB;
  t.transB = !call.transA;
  t.offA = call.offB;
  t.offB = call.offA;
  t.ldA = call.ldB;
  t.ldB = call.ldA;
  t.colA = call.colB;
  t.colB = call.colA;
  t.colOut = false;
  return t;
}

namespace {

bool tf32Allowed = false;
int64_t epilogues[2] = {0, 0}; ///< in a cuBLASLt epilogue, apart

/// The GEMM of rank-2 a and b, read transposed as the flags say, into
/// rank-2 out (kernel `k`'s checks and messages).
zeroc_rt_status_t planGemm(const char *k, zrt_ct a, zrt_ct b, bool transA, bool transB, zrt_ct out,
                           GemmCall &call) {
  using namespace zeroc_rt::kernels;
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "a", a));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "b", b));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "b", *b, "a", *a));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "out", *out, "a", *a));
  if (a->rank != 2 || b->rank != 2 || out->rank != 2)
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH, "%s: a, b and out must have rank 2", k);
  call.transA = transA;
  call.transB = transB;
  call.m = transA ? a->dims[1] : a->dims[0];
  call.k = transA ? a->dims[0] : a->dims[1];
  const int64_t kb = transB ? b->dims[1] : b->dims[0];
  call.n = transB ? b->dims[0] : b->dims[1];
  if (kb != call.k || out->dims[0] != call.m || out->dims[1] != call.n)
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH, "%s: %s x %s does not give %s", k,
                          describe(*a).c_str(), describe(*b).c_str(), describe(*out).c_str());
  call.offA = {0};
  call.offB = {0};
  call.offOut = {0};
  return nullptr;
}

} // namespace

void gemmEpilogueCounts(int64_t *inEpilogue, int64_t *apart) {
  *inEpilogue = epilogues[0];
  *apart = epilogues[1];
}

void setGemmTf32(bool allowed) { tf32Allowed = allowed; }
bool gemmTf32() { return tf32Allowed; }

} // namespace zeroc_rt::cuda

using namespace zeroc_rt::cuda;

extern "C" {

zeroc_rt_status_t zeroc_rt_cuda_k_matmul(zrt_ct a, zrt_ct b, zrt_ct out) {
  return zeroc_rt_cuda_k_matmul_trans(a, b, 0, 0, out);
}

zeroc_rt_status_t zeroc_rt_cuda_k_matmul_trans(zrt_ct a, zrt_ct b, int trans_a, int trans_b,
                                               zrt_ct out) {
  GemmCall call;
  ZEROC_RT_RETURN_IF_ERROR(planMatmul(a, b, trans_a != 0, trans_b != 0, out, call));
  return runGemm(call, out->dtype, a->data, b->data, out->data, 1.0, 0.0);
}

zeroc_rt_status_t zeroc_rt_cuda_k_matmul_strided(zrt_ct a, const int64_t *a_strides, zrt_ct b,
                                                 const int64_t *b_strides, int trans_a,
                                                 int trans_b, zrt_ct out,
                                                 const int64_t *out_strides) {
  GemmCall call;
  ZEROC_RT_RETURN_IF_ERROR(planMatmul(a, b, trans_a != 0, trans_b != 0, out, call, a_strides,
                                      b_strides, out_strides));
  return runGemm(call, out->dtype, a->data, b->data, out->data, 1.0, 0.0);
}

zeroc_rt_status_t zeroc_rt_cuda_k_gemm(zrt_ct a, zrt_ct b, zrt_ct c, double alpha, double beta,
                                       int trans_a, int trans_b, zrt_ct out) {
  const char *k = "gemm";
  GemmCall call;
  ZEROC_RT_RETURN_IF_ERROR(planGemm(k, a, b, trans_a != 0, trans_b != 0, out, call));
  const bool useC = c && beta != 0.0;
  if (useC) {
    ZEROC_RT_RETURN_IF_ERROR(zeroc_rt::kernels::checkTensor(k, "c", c));
    // A bias (one row of c, added once): in the GEMM's epilogue when the
    // executor has one, so that c is never broadcast into out.
    if (beta == 1.0 && c->dtype == out->dtype && c->rank >= 1 && c->rank <= 2 &&
        c->dims[c->rank - 1] == call.n && zeroc_rt::kernels::numElements(*c) == call.n) {
      bool done = false;
      ZEROC_RT_RETURN_IF_ERROR(
          runGemmBias(call, out->dtype, a->data, b->data, out->data, alpha, c->data, &done));
      ++epilogues[done ? 0 : 1];
      if (done)
        return nullptr;
    }
    ZEROC_RT_RETURN_IF_ERROR(zeroc_rt_cuda_k_broadcast(c, out));
  }
  return runGemm(call, out->dtype, a->data, b->data, out->data, alpha, useC ? beta : 0.0);
}

zeroc_rt_status_t zeroc_rt_cuda_k_gemm_bias_grad(zrt_ct a, zrt_ct b, int trans_a, int trans_b,
                                                 int summed, zrt_ct out, zrt_ct bias_grad) {
  using namespace zeroc_rt::kernels;
  const char *k = "gemm_bias_grad";
  GemmCall call;
  ZEROC_RT_RETURN_IF_ERROR(planGemm(k, a, b, trans_a != 0, trans_b != 0, out, call));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "bias_grad", bias_grad));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "bias_grad", *bias_grad, "a", *a));
  if (summed != 0 && summed != 1)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "gemm_bias_grad: summed must be 0 (a) or 1 (b), got %d", summed);
  // The summed operand is stored [K, L]: a read transposed, b as stored.
  if (summed == 0 ? !call.transA : call.transB)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "gemm_bias_grad: %s is summed over the inner dimension, so it must be "
                          "stored [K, L] (a with trans_a, b without trans_b)",
                          summed == 0 ? "a" : "b");
  const int64_t l = summed == 0 ? call.m : call.n;
  if (bias_grad->rank < 1 || bias_grad->dims[bias_grad->rank - 1] != l ||
      numElements(*bias_grad) != l)
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                          "gemm_bias_grad: bias_grad %s must have the %lld elements of %s's "
                          "columns, in shape [%lld] or [1, ..., %lld]",
                          describe(*bias_grad).c_str(), static_cast<long long>(l),
                          summed == 0 ? "a" : "b", static_cast<long long>(l),
                          static_cast<long long>(l));
  bool done = false;
  ZEROC_RT_RETURN_IF_ERROR(runGemmBiasGrad(call, out->dtype, a->data, b->data, out->data,
                                           summed == 0, bias_grad->data, &done));
  ++epilogues[done ? 0 : 1];
  if (done)
    return nullptr;
  ZEROC_RT_RETURN_IF_ERROR(runGemm(call, out->dtype, a->data, b->data, out->data, 1.0, 0.0));
  // The vector as [L]: sum_to of the [K, L] operand (bias_grad may have
  // more dims, all 1 but the last, than the operand).
  zeroc_rt_tensor_t vector = *bias_grad;
  vector.rank = 1;
  vector.dims[0] = l;
  return zeroc_rt_cuda_k_sum_to(summed == 0 ? a : b, &vector);
}

} // extern "C"
