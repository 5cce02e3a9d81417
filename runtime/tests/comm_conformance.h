//===- comm_conformance.h - Collective checks for any backend ---*- C++ -*-===//
//
// Checks every collective of a communicator against values computed locally:
// all_reduce (sum/max, in and out of place), all_gather (in and out of
// place), reduce_scatter (sum/max) and broadcast from every root, for f32,
// f64, i64, i32 and u8 with counts 1, 7 and 1000; f16 and bf16 reductions
// (exact sums and maxima, round-to-nearest-even sums, inf/NaN propagation and
// overflow, bf16 values beyond the f16 range); moves of f16/bool bits.
// Must be called collectively by every rank of `comm`.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_TESTS_COMM_CONFORMANCE_H
#define ZEROC_RT_TESTS_COMM_CONFORMANCE_H

#include "check_counter.h"

#include "zeroc_rt/comm.h"

namespace zeroc_rt::test {

void runCommConformance(zeroc_rt_comm_t *comm, CheckCounter &counter);

} // namespace zeroc_rt::test

#endif // ZEROC_RT_TESTS_COMM_CONFORMANCE_H
