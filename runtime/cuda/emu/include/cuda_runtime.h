//===- cuda_runtime.h (host emulation) - What comm_nccl.cu calls -*- C++ -*-===//
//
// The host emulation compiles comm_nccl.cu itself, as C++, against this
// header and nccl.h beside it (the emulated NCCL, src/nccl_emu.cc): the
// communicator that runs on a GPU runs in the emulation's tests too. Only
// the CUDA runtime API that file uses is here; the rest of the runtime
// calls gpu.h. Not the toolkit's header: nothing else may include it.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_CUDA_EMU_CUDA_RUNTIME_H
#define ZEROC_RT_CUDA_EMU_CUDA_RUNTIME_H

#include <cstddef>

struct CUstream_st;
typedef CUstream_st *cudaStream_t;

enum cudaError_t { cudaSuccess = 0, cudaErrorInvalidValue = 1 };
enum cudaMemcpyKind { cudaMemcpyDeviceToDevice = 3 };

/// A device-to-device copy queued on `stream` (streams_emu.h);
/// cudaErrorInvalidValue for another kind or an end outside device memory.
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream);

#endif // ZEROC_RT_CUDA_EMU_CUDA_RUNTIME_H
