//===- comm_internal.h - Communicator backend interface ---------*- C++ -*-===//
//
// zeroc_rt_comm_t is a C++ object with one subclass per backend. The C entry
// points in comm.cc validate all arguments (dtypes, ops, roots, NULL buffers,
// overlap, overflow) and skip zero counts before dispatching, so backends may
// assume well-formed calls.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_SRC_COMM_INTERNAL_H
#define ZEROC_RT_SRC_COMM_INTERNAL_H

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>
#include "zeroc_rt/comm.h"

struct zeroc_rt_comm {
  zeroc_rt_comm(int rank, int size) : rank(rank), size(size) {}
  virtual ~zeroc_rt_comm() = default;
  zeroc_rt_comm(const zeroc_rt_comm &) = delete;
  zeroc_rt_comm &operator=(const zeroc_rt_comm &) = delete;

  virtual const char *backendName() const = 0;
  virtual zeroc_rt_status_t barrier() = 0;
  /// `recv == send` means in place.
  virtual zeroc_rt_status_t allReduce(const void *send, void *recv,
                                      size_t count, zeroc_rt_dtype_t dtype,
                                      zeroc_rt_reduce_op_t op) = 0;
  /// `send == recv + rank * countPerRank` means in place.
  virtual zeroc_rt_status_t allGather(const void *send, void *recv,
                                      size_t countPerRank,
                                      zeroc_rt_dtype_t dtype) = 0;
  virtual zeroc_rt_status_t reduceScatter(const void *send, void *recv,
                                          size_t countPerRank,
                                          zeroc_rt_dtype_t dtype,
                                          zeroc_rt_reduce_op_t op) = 0;
  virtual zeroc_rt_status_t broadcast(void *buf, size_t count,
                                      zeroc_rt_dtype_t dtype, int root) = 0;
  /// Starts an all_gather and returns its request id in *id; wait(id)
  /// completes it. The default runs it at once (a backend without
  /// asynchronous collectives): wait then has nothing to do.
  virtual zeroc_rt_status_t allGatherStart(const void *send, void *recv,
                                           size_t countPerRank,
                                           zeroc_rt_dtype_t dtype, int64_t *id) {
    *id = -1;
    return allGather(send, recv, countPerRank, dtype);
  }
  /// The started all_reduce and reduce_scatter, with the same default.
  virtual zeroc_rt_status_t allReduceStart(const void *send, void *recv,
                                           size_t count, zeroc_rt_dtype_t dtype,
                                           zeroc_rt_reduce_op_t op,
                                           int64_t *id) {
    *id = -1;
    return allReduce(send, recv, count, dtype, op);
  }
  virtual zeroc_rt_status_t reduceScatterStart(const void *send, void *recv,
                                               size_t countPerRank,
                                               zeroc_rt_dtype_t dtype,
                                               zeroc_rt_reduce_op_t op,
                                               int64_t *id) {
    *id = -1;
    return reduceScatter(send, recv, countPerRank, dtype, op);
  }
  /// Blocks until request `id` (-1: none) has finished.
  virtual zeroc_rt_status_t wait(int64_t /*id*/) { return nullptr; }
  /// Lets the started collectives advance; cheap when none is pending.
  virtual void progress() {}
  /// Releases backend resources; called exactly once, before destruction.
  virtual zeroc_rt_status_t finalize() = 0;

  const int rank;
  const int size;
  /// Wall-clock milliseconds spent so far in this communicator's
  /// collectives (the backend calls behind the C entry points), for the
  /// training engine's wall_clock_breakdown.
  double collectiveMs = 0;
  /// When set, called after every collective with its name, the bytes this
  /// rank sends (its whole buffer, or its block for all_gather) and its
  /// start and end (the training engine's --trace).
  std::function<void(const char *name, size_t bytes,
                     std::chrono::steady_clock::time_point start,
                     std::chrono::steady_clock::time_point end)>
      onCollective;
  /// Started collectives not waited for yet: start time, name and bytes of
  /// each, by request id, so that the trace spans start to wait.
  struct Pending {
    int64_t id;
    const char *name;
    size_t bytes;
    std::chrono::steady_clock::time_point start;
  };
  std::vector<Pending> pending;

  /// What this rank's thread is blocked in right now, for a watchdog on
  /// another thread (train/watchdog.h): the collective's name (NULL when in
  /// none), since when (steady_clock nanoseconds) and how many collectives
  /// and waits it has entered so far.
  std::atomic<const char *> blockedIn{nullptr};
  std::atomic<int64_t> blockedSinceNs{0};
  std::atomic<uint64_t> entered{0};

  /// This rank's thread blocks in `name` from now on, until unblocked().
  void blocked(const char *name) {
    blockedSinceNs.store(std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::steady_clock::now().time_since_epoch())
                             .count(),
                         std::memory_order_relaxed);
    entered.fetch_add(1, std::memory_order_relaxed);
    blockedIn.store(name, std::memory_order_release);
  }
  void unblocked() { blockedIn.store(nullptr, std::memory_order_release); }

  /// Marks the scope of one blocking backend call.
  class BlockedScope {
  public:
    BlockedScope(zeroc_rt_comm &comm, const char *name) : comm(comm) {
      comm.blocked(name);
    }
    ~BlockedScope() { comm.unblocked(); }
    BlockedScope(const BlockedScope &) = delete;
    BlockedScope &operator=(const BlockedScope &) = delete;

  private:
    zeroc_rt_comm &comm;
  };
};

#endif // ZEROC_RT_SRC_COMM_INTERNAL_H
