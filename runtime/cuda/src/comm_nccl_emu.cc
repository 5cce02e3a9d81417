//===- comm_nccl_emu.cc - No NCCL in the host emulation -------------------===//

#include "comm_cuda.h"

#include "status_internal.h"

namespace zeroc_rt::cuda {

bool haveNccl() { return false; }

zeroc_rt_status_t openNcclComm(zeroc_rt_comm_t *, zeroc_rt_comm_t **, bool *) {
  return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                        "--comm nccl: the host emulation of the CUDA runtime has "
                        "no NCCL; use --comm mpi");
}

} // namespace zeroc_rt::cuda
