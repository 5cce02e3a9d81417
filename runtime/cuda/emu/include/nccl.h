//===- nccl.h (host emulation) - The NCCL API comm_nccl.cu calls -*- C++ -*-===//
//
// The emulated NCCL (src/nccl_emu.cc): the calls comm_nccl.cu makes, with
// NCCL's names and meanings, over MPI. A collective is held on its stream
// and runs when the program waits for it (streams_emu.h). C++ names, not
// NCCL's C symbols: a program never links both.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_CUDA_EMU_NCCL_H
#define ZEROC_RT_CUDA_EMU_NCCL_H

#include "cuda_runtime.h"

#include <cstddef>

struct ncclComm;
typedef ncclComm *ncclComm_t;

struct ncclUniqueId {
  char internal[128];
};

enum ncclResult_t {
  ncclSuccess,
  ncclUnhandledCudaError,
  ncclSystemError,
  ncclInternalError,
  ncclInvalidArgument,
  ncclInvalidUsage,
  ncclRemoteError,
  ncclInProgress,
};

enum ncclDataType_t {
  ncclInt8,
  ncclUint8,
  ncclInt32,
  ncclUint32,
  ncclInt64,
  ncclUint64,
  ncclFloat16,
  ncclFloat32,
  ncclFloat64,
  ncclBfloat16,
};

enum ncclRedOp_t { ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg };

const char *ncclGetErrorString(ncclResult_t result);
const char *ncclGetLastError(ncclComm_t comm);
ncclResult_t ncclGetUniqueId(ncclUniqueId *id);
ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank);
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError);
ncclResult_t ncclCommAbort(ncclComm_t comm);
ncclResult_t ncclCommDestroy(ncclComm_t comm);

ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, ncclDataType_t type,
                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclAllGather(const void *send, void *recv, size_t sendCount, ncclDataType_t type,
                           ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclReduceScatter(const void *send, void *recv, size_t recvCount, ncclDataType_t type,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclBroadcast(const void *send, void *recv, size_t count, ncclDataType_t type,
                           int root, ncclComm_t comm, cudaStream_t stream);

#endif // ZEROC_RT_CUDA_EMU_NCCL_H
