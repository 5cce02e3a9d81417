//===- comm_half_ops.h - f16/bf16 reduction arithmetic ----------*- C++ -*-===//
//
// MPI has no 16-bit float types, so the MPI backend reduces f16 and bf16 as
// MPI_UINT16_T under user-defined ops that call reduceHalf. Each pair of
// elements is widened to float, added (or maxed) and rounded back to nearest
// even, as NCCL does for half sums. Kept free of mpi.h so that the
// arithmetic can be unit-tested without MPI.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_SRC_COMM_HALF_OPS_H
#define ZEROC_RT_SRC_COMM_HALF_OPS_H

#include "zeroc_rt/comm.h"

#include <cstddef>

namespace zeroc_rt {

/// inout[i] = in[i] op inout[i] for i < count, on F16 or BF16 bit patterns
/// (any alignment). Bitwise commutative, so that every rank of an all-reduce
/// gets the same bits whatever operand order MPI picks: any NaN result is the
/// positive quiet NaN (NaN in any operand, or inf + -inf, gives NaN, which the
/// training engine's overflow check relies on), and max(+0, -0) is +0.
void reduceHalf(zeroc_rt_dtype_t dtype, zeroc_rt_reduce_op_t op, const void *in,
                void *inout, size_t count);

} // namespace zeroc_rt

#endif // ZEROC_RT_SRC_COMM_HALF_OPS_H
