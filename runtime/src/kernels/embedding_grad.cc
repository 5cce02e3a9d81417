//===- embedding_grad.cc - gather_grad of an nn.Embedding with padding_idx -===//
//
// The adjoint of an embedding lookup whose padding_idx row gets no gradient
// (torch.nn.Embedding(padding_idx=p)): the row p of grad_data can only
// receive contributions from positions whose index is p, so the gather's
// adjoint followed by zeroing that row skips exactly those positions.
//
//===----------------------------------------------------------------------===//

#include "zeroc_rt/kernels.h"

#include "status_internal.h"

#include <cstring>

extern "C" zeroc_rt_status_t
zeroc_rt_k_gather_grad_padded(const zeroc_rt_tensor_t *grad_out,
                              const zeroc_rt_tensor_t *indices,
                              int64_t padding_idx,
                              const zeroc_rt_tensor_t *grad_data) {
  const char *k = "zeroc_rt_k_gather_grad_padded";
  zeroc_rt_status_t st = zeroc_rt_k_gather_grad(grad_out, indices, 0, grad_data);
  if (st)
    return st;
  if (grad_data->rank < 1 || padding_idx < 0 || padding_idx >= grad_data->dims[0])
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: padding_idx %lld is not a row of grad_data", k,
                          static_cast<long long>(padding_idx));
  int64_t row = 1;
  for (int32_t d = 1; d < grad_data->rank; ++d)
    row *= grad_data->dims[d];
  size_t bytes = static_cast<size_t>(row) * zeroc_rt_dtype_size(grad_data->dtype);
  if (bytes)
    std::memset(static_cast<char *>(grad_data->data) + padding_idx * bytes, 0, bytes);
  return nullptr;
}
