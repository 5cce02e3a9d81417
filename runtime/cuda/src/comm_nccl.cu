//===- comm_nccl.cu - Collectives on GPU memory over NCCL -----------------===//
//
// Every collective waits (on the GPU) for the compute stream's work before
// it, runs on the communication stream and records a completion event. A
// blocking collective makes the compute stream wait for that event (stream
// order: the host does not wait); a started one keeps the event as its
// request, and zero.wait's zeroc_rt_comm_wait makes the compute stream wait
// for it then. Host operands (the optimizer step's scalars) are staged
// through device memory and waited for.
//
// A collective whose peer died or whose network failed never completes,
// and neither does a host wait for a stream that depends on it: the
// communicator watches every host wait (gpu.h's HostWaitWatcher), reports
// NCCL's asynchronous error and aborts itself, and marks the wait as
// blocked for the --collective-timeout watchdog (a peer that hangs
// without an error).
//
//===----------------------------------------------------------------------===//

#include "comm_cuda.h"
#include "gpu.h"

#include "comm_internal.h"
#include "status_internal.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <vector>

namespace zeroc_rt::cuda {
namespace {

zeroc_rt_status_t ncclStatus(ncclResult_t result, const char *what) {
  if (result == ncclSuccess)
    return nullptr;
  return ZEROC_RT_ERROR(ZEROC_RT_COMM_ERROR, "NCCL: %s: %s", what, ncclGetErrorString(result));
}

ncclDataType_t ncclType(zeroc_rt_dtype_t dtype) {
  switch (dtype) {
  case ZEROC_RT_DTYPE_F32: return ncclFloat32;
  case ZEROC_RT_DTYPE_F64: return ncclFloat64;
  case ZEROC_RT_DTYPE_F16: return ncclFloat16;
  case ZEROC_RT_DTYPE_BF16: return ncclBfloat16;
  case ZEROC_RT_DTYPE_I64: return ncclInt64;
  case ZEROC_RT_DTYPE_I32: return ncclInt32;
  default: return ncclUint8;
  }
}

class NcclComm final : public zeroc_rt_comm, public HostWaitWatcher {
public:
  NcclComm(zeroc_rt_comm_t *world, ncclComm_t comm)
      : zeroc_rt_comm(world->rank, world->size), nccl(comm), world(world) {}

  /// A host wait for the GPU is where a rank blocks on its collectives.
  /// The --collective-timeout watchdog watches the world communicator
  /// (train_main.cc), which outlives this one: the wait is marked there.
  void begin() override {
    world->blocked("a wait for the GPU's queued kernels and NCCL collectives");
  }
  void end() override { world->unblocked(); }
  zeroc_rt_status_t poll() override {
    if (aborted)
      return nullptr;
    ncclResult_t async = ncclSuccess;
    const ncclResult_t asked = ncclCommGetAsyncError(nccl, &async);
    if (asked != ncclSuccess)
      async = asked;
    if (async == ncclSuccess || async == ncclInProgress)
      return nullptr;
    const char *detail = ncclGetLastError(nccl);
    zeroc_rt_status_t status = ZEROC_RT_ERROR(
        ZEROC_RT_COMM_ERROR,
        "NCCL: a collective failed: %s%s%s (a peer rank ended or the network "
        "failed; its own error says more); this rank's communicator was aborted",
        ncclGetErrorString(async), detail && *detail ? ": " : "", detail ? detail : "");
    abort();
    return status;
  }

  const char *backendName() const override { return "nccl"; }

  /// A one-word all_reduce that the host waits for: every rank has
  /// reached it when it returns, as with MPI's barrier (the collective
  /// alone would only order the streams).
  zeroc_rt_status_t barrier() override {
    void *word = nullptr;
    ZEROC_RT_RETURN_IF_ERROR(gpuScratch(sizeof(float), &word));
    ZEROC_RT_RETURN_IF_ERROR(allReduce(word, word, 1, ZEROC_RT_DTYPE_F32, ZEROC_RT_REDUCE_SUM));
    return gpuStreamSynchronize(computeStream(), "a barrier");
  }

  zeroc_rt_status_t allReduce(const void *send, void *recv, size_t count,
                              zeroc_rt_dtype_t dtype, zeroc_rt_reduce_op_t op) override {
    if (isHostPointer(recv))
      return staged(send, recv, count * zeroc_rt_dtype_size(dtype), [&](void *dev) {
        return allReduceOn(dev, dev, count, dtype, op, nullptr);
      });
    return allReduceOn(send, recv, count, dtype, op, nullptr);
  }
  zeroc_rt_status_t allGather(const void *send, void *recv, size_t countPerRank,
                              zeroc_rt_dtype_t dtype) override {
    return allGatherOn(send, recv, countPerRank, dtype, nullptr);
  }
  zeroc_rt_status_t reduceScatter(const void *send, void *recv, size_t countPerRank,
                                  zeroc_rt_dtype_t dtype, zeroc_rt_reduce_op_t op) override {
    return reduceScatterOn(send, recv, countPerRank, dtype, op, nullptr);
  }
  zeroc_rt_status_t broadcast(void *buf, size_t count, zeroc_rt_dtype_t dtype,
                              int root) override {
    return enqueue("broadcast", nullptr, [&](cudaStream_t s) {
      return ncclStatus(ncclBroadcast(buf, buf, count * zeroc_rt_dtype_size(dtype), ncclUint8,
                                      root, nccl, s),
                        "broadcast");
    });
  }

  zeroc_rt_status_t allGatherStart(const void *send, void *recv, size_t countPerRank,
                                   zeroc_rt_dtype_t dtype, int64_t *id) override {
    return allGatherOn(send, recv, countPerRank, dtype, id);
  }
  zeroc_rt_status_t allReduceStart(const void *send, void *recv, size_t count,
                                   zeroc_rt_dtype_t dtype, zeroc_rt_reduce_op_t op,
                                   int64_t *id) override {
    return allReduceOn(send, recv, count, dtype, op, id);
  }
  zeroc_rt_status_t reduceScatterStart(const void *send, void *recv, size_t countPerRank,
                                       zeroc_rt_dtype_t dtype, zeroc_rt_reduce_op_t op,
                                       int64_t *id) override {
    return reduceScatterOn(send, recv, countPerRank, dtype, op, id);
  }
  /// A request waited for once returns its event to the free list; a
  /// second wait for it (or for an id never issued) waits for nothing.
  zeroc_rt_status_t wait(int64_t id) override {
    if (id < 0 || static_cast<size_t>(id) >= events.size() || !busy[id])
      return nullptr;
    // The compute stream's stall is no op's time (--trace's GPU timeline).
    gpuTimelineOp(-1);
    ZEROC_RT_RETURN_IF_ERROR(gpuStreamWait(computeStream(), events[id]));
    gpuTimelineOp(currentOp());
    busy[id] = false;
    free.push_back(id);
    return nullptr;
  }

  zeroc_rt_status_t finalize() override {
    zeroc_rt_status_t drained =
        aborted ? nullptr : gpuStreamSynchronize(commStream(), "finishing the collectives");
    setHostWaitWatcher(nullptr);
    for (void *e : events)
      gpuEventDestroy(e);
    gpuEventDestroy(before);
    events.clear();
    if (aborted || drained) {
      abort();
      return drained;
    }
    return ncclStatus(ncclCommDestroy(nccl), "destroying the communicator");
  }

  ncclComm_t nccl;
  zeroc_rt_comm_t *world; ///< where a host wait is marked for the watchdog
  void *before = nullptr; ///< the compute stream's point a collective waits for

private:
  std::vector<void *> events;
  std::vector<bool> busy; ///< by event: a request not waited for yet
  std::vector<int64_t> free;
  bool aborted = false;

  /// Ends the communicator's work on the GPU (its kernels return) so that
  /// the streams drain; every later collective fails.
  void abort() {
    if (!aborted)
      ncclCommAbort(nccl);
    aborted = true;
  }

  /// Runs `issue(commStream)` after the compute stream's queued work and
  /// records its completion: into a request (*id) or, blocking, into the
  /// compute stream's order.
  template <typename Issue>
  zeroc_rt_status_t enqueue(const char *name, int64_t *id, Issue &&issue) {
    if (aborted)
      return ZEROC_RT_ERROR(ZEROC_RT_COMM_ERROR,
                            "NCCL: the communicator was aborted after an earlier "
                            "failed collective");
    cudaStream_t comm = static_cast<cudaStream_t>(commStream());
    ZEROC_RT_RETURN_IF_ERROR(gpuEventRecord(before, computeStream()));
    ZEROC_RT_RETURN_IF_ERROR(gpuStreamWait(comm, before));
    gpuTimelineCollective(name, true);
    ZEROC_RT_RETURN_IF_ERROR(issue(comm));
    gpuTimelineCollective(name, false);
    int64_t slot;
    if (!free.empty()) {
      slot = free.back();
      free.pop_back();
    } else {
      void *e = nullptr;
      ZEROC_RT_RETURN_IF_ERROR(gpuEventCreate(&e));
      events.push_back(e);
      busy.push_back(false);
      slot = static_cast<int64_t>(events.size()) - 1;
    }
    busy[slot] = true;
    ZEROC_RT_RETURN_IF_ERROR(gpuEventRecord(events[slot], comm));
    if (id) {
      *id = slot;
      return nullptr;
    }
    return wait(slot);
  }

  template <typename Run>
  zeroc_rt_status_t staged(const void *send, void *recv, size_t bytes, Run &&run) {
    void *dev = nullptr;
    ZEROC_RT_RETURN_IF_ERROR(gpuScratch(bytes, &dev));
    ZEROC_RT_RETURN_IF_ERROR(gpuUpload(dev, send, bytes));
    ZEROC_RT_RETURN_IF_ERROR(run(dev));
    return gpuDownload(recv, dev, bytes);
  }

  zeroc_rt_status_t allReduceOn(const void *send, void *recv, size_t count,
                                zeroc_rt_dtype_t dtype, zeroc_rt_reduce_op_t op, int64_t *id) {
    return enqueue("all_reduce", id, [&](cudaStream_t s) {
      return ncclStatus(ncclAllReduce(send, recv, count, ncclType(dtype),
                                      op == ZEROC_RT_REDUCE_MAX ? ncclMax : ncclSum, nccl, s),
                        "all_reduce");
    });
  }
  zeroc_rt_status_t allGatherOn(const void *send, void *recv, size_t countPerRank,
                                zeroc_rt_dtype_t dtype, int64_t *id) {
    return enqueue("all_gather", id, [&](cudaStream_t s) {
      return ncclStatus(ncclAllGather(send, recv, countPerRank, ncclType(dtype), nccl, s),
                        "all_gather");
    });
  }
  /// zeroc_rt's in-place reduce-scatter leaves the rank's block at the
  /// buffer's start; NCCL's leaves it at the rank's offset: moved after.
  zeroc_rt_status_t reduceScatterOn(const void *send, void *recv, size_t countPerRank,
                                    zeroc_rt_dtype_t dtype, zeroc_rt_reduce_op_t op,
                                    int64_t *id) {
    const size_t bytes = countPerRank * zeroc_rt_dtype_size(dtype);
    const bool inPlace = send == recv;
    char *dst = static_cast<char *>(recv) + (inPlace ? bytes * static_cast<size_t>(rank) : 0);
    return enqueue("reduce_scatter", id, [&](cudaStream_t s) -> zeroc_rt_status_t {
      ZEROC_RT_RETURN_IF_ERROR(ncclStatus(
          ncclReduceScatter(send, dst, countPerRank, ncclType(dtype),
                            op == ZEROC_RT_REDUCE_MAX ? ncclMax : ncclSum, nccl, s),
          "reduce_scatter"));
      if (inPlace && rank > 0 && bytes)
        return cudaMemcpyAsync(recv, dst, bytes, cudaMemcpyDeviceToDevice, s) == cudaSuccess
                   ? nullptr
                   : ZEROC_RT_ERROR(ZEROC_RT_INTERNAL, "CUDA: moving a reduce-scatter's block");
      return nullptr;
    });
  }
};

} // namespace

bool haveNccl() { return true; }

zeroc_rt_status_t openNcclComm(zeroc_rt_comm_t *world, zeroc_rt_comm_t **out,
                               bool *peersMayBeStuck) {
  // The id and whether rank 0 could make it: every rank takes part in the
  // broadcast, rank 0 even on failure, and then every rank fails.
  struct {
    ncclUniqueId id;
    unsigned char made;
  } bootstrap{};
  zeroc_rt_status_t status = nullptr;
  if (world->rank == 0) {
    status = ncclStatus(ncclGetUniqueId(&bootstrap.id), "making the unique id");
    bootstrap.made = status ? 0 : 1;
  }
  zeroc_rt_status_t sent =
      world->broadcast(&bootstrap, sizeof bootstrap, ZEROC_RT_DTYPE_U8, 0);
  if (status || sent) {
    zeroc_rt_status_free(sent);
    return status ? status : sent;
  }
  if (!bootstrap.made)
    return ZEROC_RT_ERROR(ZEROC_RT_COMM_ERROR,
                          "NCCL: rank 0 could not make the communicator's unique "
                          "id (its own error says why)");
  const ncclUniqueId &id = bootstrap.id;
  // NCCL's bootstrap connects the ranks over its own sockets, outside
  // `world`: a peer that failed before joining leaves this rank here, and
  // a peer that hangs keeps it here. The --collective-timeout watchdog
  // watches this wait as it watches a collective; a rank whose own
  // initialization failed tells its caller that the others may be stuck
  // here, so it ends without an MPI agreement they could never join and
  // the launcher ends them.
  ncclComm_t comm = nullptr;
  ncclResult_t init;
  {
    zeroc_rt_comm::BlockedScope blocked(*world, "initializing NCCL (ncclCommInitRank)");
    init = ncclCommInitRank(&comm, world->size, id, world->rank);
  }
  if (init != ncclSuccess) {
    *peersMayBeStuck = world->size > 1;
    return ncclStatus(init, "initializing the communicator");
  }
  auto *nc = new NcclComm(world, comm);
  if (zeroc_rt_status_t e = gpuEventCreate(&nc->before)) {
    ncclCommDestroy(comm);
    delete nc;
    return e;
  }
  setHostWaitWatcher(nc);
  *out = nc;
  return nullptr;
}

} // namespace zeroc_rt::cuda
