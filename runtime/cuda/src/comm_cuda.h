//===- comm_cuda.h - The CUDA runtime's communicators ------------*- C++ -*-===//
//
// Communicators whose collectives move GPU memory, over the ranks of the
// MPI world communicator `world` (which they use to bootstrap and, for the
// staged one, to move the data). zeroc_rt_comm_finalize releases them and
// leaves `world` alone.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_CUDA_SRC_COMM_CUDA_H
#define ZEROC_RT_CUDA_SRC_COMM_CUDA_H

#include "zeroc_rt/comm.h"

namespace zeroc_rt::cuda {

/// --comm mpi: device buffers staged through host memory (comm_staged.cc).
ZEROC_RT_MUST_USE zeroc_rt_status_t openStagedComm(zeroc_rt_comm_t *world,
                                                   zeroc_rt_comm_t **out);

/// --comm nccl: an NCCL communicator, its unique id broadcast from rank 0
/// over `world`; collectives on the communication stream, ordered against
/// the compute stream by events (comm_nccl.cu). A collective call. Sets
/// *peersMayBeStuck when NCCL's initialization failed on this rank: the
/// others may then wait in NCCL's bootstrap, not in `world`. The host
/// emulation runs the same code over its emulated NCCL (nccl_emu.cc).
ZEROC_RT_MUST_USE zeroc_rt_status_t openNcclComm(zeroc_rt_comm_t *world,
                                                 zeroc_rt_comm_t **out,
                                                 bool *peersMayBeStuck);

/// Whether this build has NCCL (the host emulation's is emulated).
bool haveNccl();

} // namespace zeroc_rt::cuda

#endif // ZEROC_RT_CUDA_SRC_COMM_CUDA_H
