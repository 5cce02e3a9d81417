//===- comm_mpi_internal.h - MPI backend helpers ----------------*- C++ -*-===//
//
// What the MPI backend's files share: turning an MPI error code into a
// status, and the macro that returns one from a failed call.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_SRC_COMM_MPI_INTERNAL_H
#define ZEROC_RT_SRC_COMM_MPI_INTERNAL_H

#include "zeroc_rt/status.h"

#include <mpi.h>

namespace zeroc_rt {

/// A COMM_ERROR status naming `call`, MPI's error string and class.
zeroc_rt_status_t mpiError(int code, const char *call, const char *file,
                           int line);

} // namespace zeroc_rt

/// Evaluates an MPI call and returns a COMM_ERROR status if it fails.
#define ZEROC_RT_MPI_CALL(call)                                                \
  do {                                                                         \
    int zeroc_rt_mpi_rc_ = (call);                                             \
    if (zeroc_rt_mpi_rc_ != MPI_SUCCESS)                                       \
      return ::zeroc_rt::mpiError(zeroc_rt_mpi_rc_, #call, __FILE__,           \
                                  __LINE__);                                   \
  } while (0)

#endif // ZEROC_RT_SRC_COMM_MPI_INTERNAL_H
