//===- kernels/gemm_emu.cc - The host emulation's GEMMs -------------------===//
//
// The emulation's device memory is host memory: each GEMM of the plan is
// the CPU runtime's zeroc_rt_k_gemm on rank-2 views.
//
//===----------------------------------------------------------------------===//

#include "kernels/gemm_plan.h"

#include <vector>

namespace zeroc_rt::cuda {

zeroc_rt_status_t runGemm(const GemmCall &call, zeroc_rt_dtype_t dtype, const void *a,
                          const void *b, void *out, double alpha, double beta) {
  const size_t es = zeroc_rt_dtype_size(dtype);
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
    zeroc_rt_tensor_t to = view(out, call.offOut[i], call.m, call.n);
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
  }
  return nullptr;
}

bool gemmHasTf32() { return false; }

} // namespace zeroc_rt::cuda
