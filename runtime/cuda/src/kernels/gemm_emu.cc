//===- kernels/gemm_emu.cc - The host emulation's GEMMs -------------------===//
//
// The emulation's device memory is host memory: each GEMM of the plan is
// the CPU runtime's zeroc_rt_k_gemm on rank-2 views (a strided operand's
// matrix copied dense first).
//
//===----------------------------------------------------------------------===//

#include "kernels/gemm_plan.h"
#include "streams_emu.h"

#include <cstring>
#include <vector>

namespace zeroc_rt::cuda {

namespace {

/// Element (r, c) of a stored matrix with leading dimension ld, column-major
/// when `col`.
int64_t storedAt(int64_t ld, bool col, int64_t r, int64_t c) {
  return col ? c * ld + r : r * ld + c;
}

/// A strided operand's matrix (rows x cols as the matmul reads it before
/// its trans flag) copied dense and row-major into `dense`: the copy the
/// unfolded program's slices and transposes made, so that the GEMM below
/// is the same call on the same bits.
const void *denseMatrix(const void *base, int64_t off, size_t es, int64_t rows, int64_t cols,
                        int64_t ld, bool col, std::vector<char> &dense) {
  dense.resize(static_cast<size_t>(rows * cols) * es);
  const char *src = static_cast<const char *>(base) + off * es;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      std::memcpy(&dense[static_cast<size_t>(r * cols + c) * es],
                  src + static_cast<size_t>(storedAt(ld, col, r, c)) * es, es);
  return dense.data();
}

} // namespace

zeroc_rt_status_t runGemm(const GemmCall &call, zeroc_rt_dtype_t dtype, const void *a,
                          const void *b, void *out, double alpha, double beta) {
  emuNoteComputeWork();
  const size_t es = zeroc_rt_dtype_size(dtype);
  if (call.ldOut && beta != 0.0)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "gemm: a strided out is written, never accumulated (beta %g)",
                          beta);
  // A strided out: each product dense first, then stored at its strides
  // (the copy a transpose after the product made).
  std::vector<char> denseA, denseB, product;
  for (size_t i = 0; i < call.offOut.size(); ++i) {
    auto view = [&](const void *base, int64_t off, int64_t r, int64_t c) {
      zeroc_rt_tensor_t t{};
      t.data = const_cast<char *>(static_cast<const char *>(base)) + off * es;
      t.dtype = dtype;
      t.rank = 2;
      t.dims[0] = r;
      t.dims[1] = c;
      return t;
    };
    zeroc_rt_tensor_t ta = call.transA ? view(a, call.offA[i], call.k, call.m)
                                       : view(a, call.offA[i], call.m, call.k);
    zeroc_rt_tensor_t tb = call.transB ? view(b, call.offB[i], call.n, call.k)
                                       : view(b, call.offB[i], call.k, call.n);
    if (call.ldA) {
      ta.data = const_cast<void *>(denseMatrix(a, call.offA[i], es, ta.dims[0], ta.dims[1],
                                               call.ldA, call.colA, denseA));
    }
    if (call.ldB) {
      tb.data = const_cast<void *>(denseMatrix(b, call.offB[i], es, tb.dims[0], tb.dims[1],
                                               call.ldB, call.colB, denseB));
    }
    zeroc_rt_tensor_t to = view(out, call.offOut[i], call.m, call.n);
    if (call.ldOut) {
      product.resize(static_cast<size_t>(call.m * call.n) * es);
      to.data = product.data();
    }
    // beta * out: out's old value as a separate C (kernels reject aliases).
    std::vector<char> old;
    zeroc_rt_tensor_t tc = to;
    if (beta != 0.0) {
      old.assign(static_cast<const char *>(to.data),
                 static_cast<const char *>(to.data) + call.m * call.n * es);
      tc.data = old.data();
    }
    ZEROC_RT_RETURN_IF_ERROR(zeroc_rt_k_gemm(&ta, &tb, beta != 0.0 ? &tc : nullptr, alpha,
                                             beta, call.transA, call.transB, &to));
    if (call.ldOut) {
      char *dst = static_cast<char *>(out) + call.offOut[i] * es;
      for (int64_t r = 0; r < call.m; ++r)
        for (int64_t c = 0; c < call.n; ++c)
          std::memcpy(dst + static_cast<size_t>(storedAt(call.ldOut, call.colOut, r, c)) * es,
                      &product[static_cast<size_t>(r * call.n + c) * es], es);
    }
  }
  return nullptr;
}

/// The emulation runs a bias gradient's GEMM and its sum as the unfused
/// program does (the caller's fallback), so that it computes their bits.
zeroc_rt_status_t runGemmBiasGrad(const GemmCall &, zeroc_rt_dtype_t, const void *, const void *,
                                  void *, bool, void *, bool *done) {
  *done = false;
  return nullptr;
}

/// Likewise a GEMM with a bias: the emulation broadcasts c and runs the
/// GEMM with beta 1, as before the bias had an epilogue.
zeroc_rt_status_t runGemmBias(const GemmCall &, zeroc_rt_dtype_t, const void *, const void *,
                              void *, double, const void *, bool *done) {
  *done = false;
  return nullptr;
}

bool gemmHasTf32() { return false; }

} // namespace zeroc_rt::cuda
