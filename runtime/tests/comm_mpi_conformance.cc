//===- comm_mpi_conformance.cc - MPI backend conformance driver -*- C++ -*-===//
//
// Run under mpiexec with any number of ranks. Checks every collective through
// the MPI backend, then the MPI lifetime rules (nested communicators, MPI
// finalized with the last one, no re-initialization). Prints
// "rank R: N passed, M failed" per rank and exits non-zero on any failure.
//
//===----------------------------------------------------------------------===//

#include "comm_conformance.h"

#include "zeroc_rt/zeroc_rt.h"

#include <cstdio>
#include <string>

using zeroc_rt::test::CheckCounter;

namespace {

bool checkOk(CheckCounter &counter, zeroc_rt_status_t status,
             const std::string &what) {
  bool ok =
      counter.check(status == nullptr, what, zeroc_rt_status_message(status));
  zeroc_rt_status_free(status);
  return ok;
}

/// A second communicator may coexist with the first; finalizing it must not
/// finalize MPI while the first is alive.
void checkNestedCommunicator(zeroc_rt_comm_t *first, CheckCounter &counter) {
  zeroc_rt_comm_t *second = nullptr;
  if (!checkOk(counter, zeroc_rt_comm_init_mpi(nullptr, nullptr, &second),
               "second init_mpi"))
    return;
  int64_t mine = 1, sum = 0;
  checkOk(counter,
          zeroc_rt_comm_all_reduce(second, &mine, &sum, 1, ZEROC_RT_DTYPE_I64,
                                   ZEROC_RT_REDUCE_SUM),
          "all_reduce on the second communicator");
  counter.check(sum == zeroc_rt_comm_size(first), "second communicator sum");
  checkOk(counter, zeroc_rt_comm_finalize(second), "finalize second");
  checkOk(counter, zeroc_rt_comm_barrier(first),
          "first communicator still works after finalizing the second");
}

} // namespace

int main(int argc, char **argv) {
  zeroc_rt_comm_t *comm = nullptr;
  zeroc_rt_status_t status = zeroc_rt_comm_init_mpi(&argc, &argv, &comm);
  if (status) {
    std::fprintf(stderr, "init_mpi failed: %s\n",
                 zeroc_rt_status_message(status));
    zeroc_rt_status_free(status);
    return 1;
  }
  int rank = zeroc_rt_comm_rank(comm), size = zeroc_rt_comm_size(comm);
  CheckCounter counter("[rank " + std::to_string(rank) + "] ");
  counter.check(std::string(zeroc_rt_comm_backend(comm)) == "mpi", "backend");
  counter.check(rank >= 0 && rank < size && size >= 1, "rank/size");

  zeroc_rt::test::runCommConformance(comm, counter);
  checkNestedCommunicator(comm, counter);

  // Global tally before MPI goes away (if the comm works at all).
  int64_t local[2] = {counter.passed(), counter.failed()}, global[2] = {0, 0};
  zeroc_rt_status_t tally = zeroc_rt_comm_all_reduce(
      comm, local, global, 2, ZEROC_RT_DTYPE_I64, ZEROC_RT_REDUCE_SUM);
  bool haveGlobalTally = tally == nullptr;
  zeroc_rt_status_free(tally);

  checkOk(counter, zeroc_rt_comm_finalize(comm), "finalize");
  zeroc_rt_comm_t *again = nullptr;
  status = zeroc_rt_comm_init_mpi(nullptr, nullptr, &again);
  counter.check(zeroc_rt_status_code(status) == ZEROC_RT_COMM_ERROR &&
                    again == nullptr,
                "init_mpi after MPI_Finalize fails with COMM_ERROR",
                zeroc_rt_status_message(status));
  zeroc_rt_status_free(status);

  std::printf("rank %d: %d passed, %d failed\n", rank, counter.passed(),
              counter.failed());
  if (rank == 0 && haveGlobalTally)
    std::printf("all %d ranks (before finalize): %lld passed, %lld failed\n",
                size, static_cast<long long>(global[0]),
                static_cast<long long>(global[1]));
  return counter.failed() == 0 ? 0 : 1;
}
