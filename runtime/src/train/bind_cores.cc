//===- bind_cores.cc - train --bind-core-list: a rank's share of CPUs -----===//
//
// DeepSpeed's --bind_cores_to_rank --bind_core_list CPUS starts each rank
// under `numactl -C` with an equal share of CPUS, in local-rank order. The
// trainer does the same itself, so that the numbers mean what they mean to
// numactl (Linux's CPU numbers; Open MPI's binding counts hwloc's logical
// ones) and numactl need not be installed: after MPI starts, the ranks
// learn which of them share a host, and each binds every thread it has
// then (OpenBLAS's pool, MPI's) to its share. Threads started later
// inherit the binding. Memory follows through Linux's first-touch policy.
//
//===----------------------------------------------------------------------===//

#include "train/train_internal.h"

#include "status_internal.h"
#include "zeroc_rt/cpu_list.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <memory>
#include <sched.h>
#include <set>
#include <sys/types.h>

namespace zeroc_rt::train {
namespace {

/// A CPU set large enough for every number a list may name.
class CpuSet {
public:
  CpuSet() : set(CPU_ALLOC(kMaxCpuNumber + 1)), bytes(CPU_ALLOC_SIZE(kMaxCpuNumber + 1)) {
    if (set)
      CPU_ZERO_S(bytes, set);
  }
  ~CpuSet() {
    if (set)
      CPU_FREE(set);
  }
  CpuSet(const CpuSet &) = delete;
  CpuSet &operator=(const CpuSet &) = delete;

  cpu_set_t *set;
  size_t bytes;

  std::vector<int> cpus() const {
    std::vector<int> out;
    for (int c = 0; c <= kMaxCpuNumber; ++c)
      if (CPU_ISSET_S(static_cast<size_t>(c), bytes, set))
        out.push_back(c);
    return out;
  }
};

/// What each rank tells the others to find its place on its host.
struct HostPlace {
  uint64_t host;      ///< its host name's hash
  int32_t worldRank;  ///< OMPI_COMM_WORLD_RANK, or -1
  int32_t localRank;  ///< OMPI_COMM_WORLD_LOCAL_RANK, or -1
  int32_t localRanks; ///< OMPI_COMM_WORLD_LOCAL_SIZE, or -1
  int32_t pad;
};

/// This rank's place among the ranks on its host: Open MPI's when every
/// rank has valid values for this communicator, otherwise (another
/// launcher, values inherited from an outer job) hosts told apart by their
/// names' hashes, as the CUDA platform tells shared GPUs apart (containers
/// that share a name would look like one host). Every rank takes part in
/// the all-gather and decides from the same table.
zeroc_rt_status_t localRankOf(zeroc_rt_comm_t *comm, int *localRank, int *localRanks) {
  const int rank = zeroc_rt_comm_rank(comm), size = zeroc_rt_comm_size(comm);
  const HostPlace mine{hostHash(), envInt({"OMPI_COMM_WORLD_RANK"}, -1),
                       envInt({"OMPI_COMM_WORLD_LOCAL_RANK"}, -1),
                       envInt({"OMPI_COMM_WORLD_LOCAL_SIZE"}, -1), 0};
  std::vector<HostPlace> all(static_cast<size_t>(size));
  ZEROC_RT_RETURN_IF_ERROR(
      zeroc_rt_comm_all_gather(comm, &mine, all.data(), sizeof mine, ZEROC_RT_DTYPE_U8));
  bool openMpi = true;
  for (int r = 0; r < size; ++r) {
    const HostPlace &p = all[static_cast<size_t>(r)];
    openMpi = openMpi && p.worldRank == r && p.localRank >= 0 && p.localRank < p.localRanks;
  }
  if (openMpi) {
    *localRank = mine.localRank;
    *localRanks = mine.localRanks;
    return nullptr;
  }
  *localRank = *localRanks = 0;
  for (int r = 0; r < size; ++r)
    if (all[static_cast<size_t>(r)].host == mine.host) {
      *localRank += r < rank;
      ++*localRanks;
    }
  return nullptr;
}

/// Binds every thread of this process to `set`, and checks that each now
/// runs on `set` alone; `threads` counts them.
/// Threads that exit meanwhile are skipped; the walk repeats until it
/// finds no thread it has not bound (one started by a thread that was not
/// bound yet would not inherit the binding).
zeroc_rt_status_t bindThreads(const CpuSet &set, int *threads) {
  CpuSet now;
  if (!now.set)
    return ZEROC_RT_ERROR(ZEROC_RT_OUT_OF_MEMORY, "--bind-core-list: out of memory");
  std::set<long> bound;
  for (bool found = true; found;) {
    found = false;
    DIR *dir = ::opendir("/proc/self/task");
    if (!dir)
      return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR,
                            "--bind-core-list: cannot list this process's threads "
                            "(/proc/self/task): %s",
                            std::strerror(errno));
    std::unique_ptr<DIR, int (*)(DIR *)> closer(dir, ::closedir);
    while (const dirent *entry = ::readdir(dir)) {
      char *end = nullptr;
      const long tid = std::strtol(entry->d_name, &end, 10);
      if (end == entry->d_name || *end || bound.count(tid))
        continue;
      // What Linux then holds for the thread, not only what was asked.
      if (::sched_setaffinity(static_cast<pid_t>(tid), set.bytes, set.set) != 0 ||
          ::sched_getaffinity(static_cast<pid_t>(tid), now.bytes, now.set) != 0) {
        if (errno == ESRCH)
          continue;
        return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "--bind-core-list: binding thread %ld: %s",
                              tid, std::strerror(errno));
      }
      if (!CPU_EQUAL_S(set.bytes, now.set, set.set))
        return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                              "--bind-core-list: thread %ld runs on CPUs %s after binding "
                              "it to %s",
                              tid, formatCpuList(now.cpus()).c_str(),
                              formatCpuList(set.cpus()).c_str());
      bound.insert(tid);
      found = true;
    }
  }
  *threads = static_cast<int>(bound.size());
  return nullptr;
}

} // namespace

zeroc_rt_status_t bindCores(const std::vector<int> &cpus, zeroc_rt_comm_t *comm,
                            std::string *summary) {
  int localRank = 0, localRanks = 1;
  ZEROC_RT_RETURN_IF_ERROR(localRankOf(comm, &localRank, &localRanks));
  const std::vector<int> share = cpusOfLocalRank(cpus, localRank, localRanks);
  if (share.empty())
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "--bind-core-list %s names %zu CPU%s for the %d ranks on this "
                          "host; give at least one per rank",
                          formatCpuList(cpus).c_str(), cpus.size(), cpus.size() == 1 ? "" : "s",
                          localRanks);
  CpuSet allowed, wanted;
  if (!allowed.set || !wanted.set)
    return ZEROC_RT_ERROR(ZEROC_RT_OUT_OF_MEMORY, "--bind-core-list: out of memory");
  if (::sched_getaffinity(0, allowed.bytes, allowed.set) != 0)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "--bind-core-list: cannot read this rank's CPUs: %s",
                          std::strerror(errno));
  for (int c : share) {
    if (!CPU_ISSET_S(static_cast<size_t>(c), allowed.bytes, allowed.set))
      return ZEROC_RT_ERROR(
          ZEROC_RT_INVALID_ARGUMENT,
          "--bind-core-list: CPU %d, of local rank %d's share %s, is not one this rank "
          "may run on (it may run on %s); name CPUs this host has, and start the ranks "
          "unbound (mpirun --bind-to none; zeroc launch --bind_core_list does)",
          c, localRank, formatCpuList(share).c_str(), formatCpuList(allowed.cpus()).c_str());
    CPU_SET_S(static_cast<size_t>(c), wanted.bytes, wanted.set);
  }
  int threads = 0;
  ZEROC_RT_RETURN_IF_ERROR(bindThreads(wanted, &threads));
  *summary =
      format("rank %d (local rank %d of %d) bound with its %d thread%s to CPU%s %s "
             "(--bind-core-list)",
             zeroc_rt_comm_rank(comm), localRank, localRanks, threads, threads == 1 ? "" : "s",
             share.size() == 1 ? "" : "s", formatCpuList(share).c_str());
  return nullptr;
}

} // namespace zeroc_rt::train
