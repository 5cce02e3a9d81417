//===- zeroc_rt/comm.h - Collective communication -----------------*- C -*-===//
//
// A communicator over a fixed group of ranks with the collectives ZeRO needs.
// Two backends: MPI (a private duplicate of MPI_COMM_WORLD with
// MPI_ERRORS_RETURN, so MPI failures become statuses) and "self", a
// single-process world of size 1 that needs no MPI at all.
//
// Buffer rules, checked up front (ZEROC_RT_INVALID_ARGUMENT otherwise):
//  - all_reduce: recvbuf == sendbuf means in place; no other overlap.
//  - all_gather: sendbuf == recvbuf + rank * count_per_rank elements means in
//    place; no other overlap.
//  - reduce_scatter: recvbuf == sendbuf means in place (this rank's block
//    of the result lands in the first count_per_rank elements); no other
//    overlap.
//  - buffers may be NULL only when the element count is 0; a zero count is a
//    local no-op (no communication happens), and so is an in-place
//    collective on a communicator of one rank (the identity).
// Reductions support F32, F64, F16, BF16, I64, I32 and U8; all_gather and
// broadcast move any dtype. F16/BF16 reduce pairwise in float, each partial
// result rounded to nearest even (as NCCL does), so with more than two ranks
// the rounding may depend on the backend's reduction order; a NaN anywhere
// (or inf + -inf) gives NaN, and sums past the 16-bit range give +-inf.
// Integer sums that overflow are implementation-defined (Open MPI 4.1
// saturates 8-bit sums on its AVX path, open-mpi/ompi#8045).
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_COMM_H
#define ZEROC_RT_COMM_H

#include "zeroc_rt/common.h"
#include "zeroc_rt/dtype.h"
#include "zeroc_rt/status.h"

#include <stddef.h>
#include <stdint.h>

ZEROC_RT_EXTERN_C_BEGIN

typedef struct zeroc_rt_comm zeroc_rt_comm_t;

typedef ZEROC_RT_ENUM(zeroc_rt_reduce_op){
    ZEROC_RT_REDUCE_SUM = 0,
    ZEROC_RT_REDUCE_MAX = 1,
} zeroc_rt_reduce_op_t;

/// Creates a world of size 1 (rank 0). Needs no MPI.
ZEROC_RT_MUST_USE zeroc_rt_status_t
zeroc_rt_comm_init_self(zeroc_rt_comm_t **out);

/// Initializes MPI if nobody has yet (then MPI_Finalize runs when the last MPI
/// communicator is finalized) and returns a communicator spanning
/// MPI_COMM_WORLD. `argc`/`argv` may be NULL. Fails once MPI is finalized.
ZEROC_RT_MUST_USE zeroc_rt_status_t
zeroc_rt_comm_init_mpi(int *argc, char ***argv, zeroc_rt_comm_t **out);

/// "mpi" or "self"; "" for NULL.
const char *zeroc_rt_comm_backend(const zeroc_rt_comm_t *comm);
/// Rank of the calling process; -1 for NULL.
int zeroc_rt_comm_rank(const zeroc_rt_comm_t *comm);
/// Number of ranks; 0 for NULL.
int zeroc_rt_comm_size(const zeroc_rt_comm_t *comm);

ZEROC_RT_MUST_USE zeroc_rt_status_t
zeroc_rt_comm_barrier(zeroc_rt_comm_t *comm);

/// recvbuf[i] = op over all ranks of sendbuf[i], for i < count.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_comm_all_reduce(
    zeroc_rt_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
    zeroc_rt_dtype_t dtype, zeroc_rt_reduce_op_t op);

/// recvbuf[r * count_per_rank + i] = sendbuf[i] of rank r (rank-contiguous).
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_comm_all_gather(
    zeroc_rt_comm_t *comm, const void *sendbuf, void *recvbuf,
    size_t count_per_rank, zeroc_rt_dtype_t dtype);

/// sendbuf holds size * count_per_rank elements; rank r receives in recvbuf
/// the reduction over all ranks of block r: sendbuf[r * count_per_rank + i].
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_comm_reduce_scatter(
    zeroc_rt_comm_t *comm, const void *sendbuf, void *recvbuf,
    size_t count_per_rank, zeroc_rt_dtype_t dtype, zeroc_rt_reduce_op_t op);

/// Copies `count` elements of `buf` on rank `root` into `buf` on every rank.
ZEROC_RT_MUST_USE zeroc_rt_status_t
zeroc_rt_comm_broadcast(zeroc_rt_comm_t *comm, void *buf, size_t count,
                        zeroc_rt_dtype_t dtype, int root);

/// Starts the all_gather above (same buffer rules) without waiting for it:
/// *request is what zeroc_rt_comm_wait takes (-1 when it already finished:
/// a zero count, in place on one rank, or a backend without asynchronous
/// collectives). Neither
/// buffer may be touched until the wait. Every rank starts and waits its
/// collectives in the same order.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_comm_all_gather_start(
    zeroc_rt_comm_t *comm, const void *sendbuf, void *recvbuf,
    size_t count_per_rank, zeroc_rt_dtype_t dtype, int64_t *request);
/// Starts the all_reduce above (same buffer rules); see all_gather_start.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_comm_all_reduce_start(
    zeroc_rt_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
    zeroc_rt_dtype_t dtype, zeroc_rt_reduce_op_t op, int64_t *request);
/// Starts the reduce_scatter above (same buffer rules); see
/// all_gather_start.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_comm_reduce_scatter_start(
    zeroc_rt_comm_t *comm, const void *sendbuf, void *recvbuf,
    size_t count_per_rank, zeroc_rt_dtype_t dtype, zeroc_rt_reduce_op_t op,
    int64_t *request);
/// Blocks until the started collective `request` has finished (-1: returns
/// at once).
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_comm_wait(zeroc_rt_comm_t *comm,
                                                       int64_t request);
/// Lets started collectives advance (MPI makes progress only inside its
/// calls); cheap when none is pending. The engine calls it between ops.
void zeroc_rt_comm_progress(zeroc_rt_comm_t *comm);
/// Releases the communicator's resources and the handle itself (always, even
/// when an error is reported). NULL is accepted.
ZEROC_RT_MUST_USE zeroc_rt_status_t
zeroc_rt_comm_finalize(zeroc_rt_comm_t *comm);

ZEROC_RT_EXTERN_C_END

#endif // ZEROC_RT_COMM_H
