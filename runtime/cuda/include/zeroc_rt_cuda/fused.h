//===- zeroc_rt_cuda/fused.h - What generated fused kernels use -*- C++ -*-===//
//
// A graph.fused_elementwise becomes a kernel in the generated train.cu
// (docs/CudaTarget.md, "Elementwise fusion"). It is written against
// zeroc_rt_cuda/compat.h like the runtime's kernels, so nvcc builds it for
// the GPU and the host compiler for the emulation, and it computes each op
// of the chain with the runtime's own element arithmetic (scalar_ops.h),
// rounding each op's value to the storage type as that op's kernel would.
// A graph.fused_softmax or fused_softmax_grad is the runtime's softmax rows
// (zeroc_rt_cuda/rows.h) with such a chain in its element reads or writes,
// and a graph.fused_attention (_grad) zeroc_rt_cuda/attention.h's kernels
// with the softmax's chains as their prologue and epilogue.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_CUDA_FUSED_H
#define ZEROC_RT_CUDA_FUSED_H

#include "zeroc_rt_cuda/attention.h"
#include "zeroc_rt_cuda/chunk.h"
#include "zeroc_rt_cuda/compat.h"
#include "zeroc_rt_cuda/rows.h"
#include "zeroc_rt_cuda/scalar_ops.h"

#include "zeroc_rt/status.h"

ZEROC_RT_EXTERN_C_BEGIN

/// The status of a generated kernel's launch: NULL when `error` (a
/// cudaError_t, 0 on the emulation) is 0, else a ZEROC_RT_INTERNAL status
/// naming `kernel` and carrying CUDA's error string.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_launch_status(int error,
                                                                const char *kernel);

/// *out: the kernels' scratch buffer in device memory, at least `bytes`
/// long, valid until the next call that asks for more (one buffer, used on
/// the compute stream in order). The one-walk attention gradient keeps its
/// float dq accumulator there.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_kernel_scratch(size_t bytes, void **out);

ZEROC_RT_EXTERN_C_END

#endif // ZEROC_RT_CUDA_FUSED_H
