//===- nccl_emu.cc - The host emulation's NCCL, over MPI ------------------===//
//
// What comm_nccl.cu calls (emu/include/nccl.h), with NCCL's meanings: a
// communicator of `nranks` ranks made from a unique id, and collectives on
// device buffers, queued on a stream. The emulation's collectives run on
// an MPI communicator of their own (the CPU runtime's, duplicated from
// MPI_COMM_WORLD, whose f16 and bf16 sums they take) when the stream gets
// to them: the communication stream holds them until the program waits
// for them (streams_emu.h). Arguments are checked when a call is made, as
// NCCL checks them: device memory (a host pointer is ncclInvalidArgument),
// the types and reductions comm_nccl.cu passes; and a collective queued
// on the communication stream must follow a wait for the compute stream's
// work so far (emuCheckCommAfterCompute). A held collective whose operand
// changed before it ran (the compute stream wrote it without waiting)
// fails when it runs. A collective that fails when it runs sets the
// communicator's asynchronous error.
//
//===----------------------------------------------------------------------===//

#include "gpu.h"
#include "streams_emu.h"

#include "comm_internal.h"
#include "status_internal.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

using zeroc_rt::cuda::emuOnDevice;
using zeroc_rt::cuda::emuStreamRun;

struct ncclComm {
  zeroc_rt_comm_t *mpi = nullptr;
  int rank = 0, size = 0;
  ncclResult_t asyncError = ncclSuccess;
  std::string lastError;
  bool aborted = false; ///< held collectives then do nothing, as NCCL's return
};

namespace {

ncclResult_t fail(ncclComm_t comm, ncclResult_t result, std::string why) {
  if (comm)
    comm->lastError = std::move(why);
  return result;
}

bool dtypeOf(ncclDataType_t type, zeroc_rt_dtype_t *out) {
  switch (type) {
  case ncclUint8:
    *out = ZEROC_RT_DTYPE_U8;
    return true;
  case ncclInt32:
    *out = ZEROC_RT_DTYPE_I32;
    return true;
  case ncclInt64:
    *out = ZEROC_RT_DTYPE_I64;
    return true;
  case ncclFloat16:
    *out = ZEROC_RT_DTYPE_F16;
    return true;
  case ncclFloat32:
    *out = ZEROC_RT_DTYPE_F32;
    return true;
  case ncclFloat64:
    *out = ZEROC_RT_DTYPE_F64;
    return true;
  case ncclBfloat16:
    *out = ZEROC_RT_DTYPE_BF16;
    return true;
  default:
    return false;
  }
}

/// One collective's checked arguments.
struct Call {
  zeroc_rt_dtype_t dtype = ZEROC_RT_DTYPE_U8;
  zeroc_rt_reduce_op_t op = ZEROC_RT_REDUCE_SUM;
  size_t elementBytes = 1;
};

ncclResult_t check(ncclComm_t comm, const char *name, ncclDataType_t type, const ncclRedOp_t *op,
                   const void *send, size_t sendElems, const void *recv, size_t recvElems,
                   Call *call) {
  if (!comm)
    return ncclInvalidArgument;
  if (comm->aborted)
    return fail(comm, ncclInvalidUsage, std::string(name) + ": the communicator was aborted");
  if (!dtypeOf(type, &call->dtype))
    return fail(comm, ncclInvalidArgument,
                std::string(name) + ": the emulated NCCL has no data type " +
                    std::to_string(static_cast<int>(type)));
  call->elementBytes = zeroc_rt_dtype_size(call->dtype);
  if (op) {
    if (*op != ncclSum && *op != ncclMax)
      return fail(comm, ncclInvalidArgument,
                  std::string(name) + ": the emulated NCCL sums and takes maxima only");
    call->op = *op == ncclMax ? ZEROC_RT_REDUCE_MAX : ZEROC_RT_REDUCE_SUM;
  }
  const size_t sendBytes = sendElems * call->elementBytes,
               recvBytes = recvElems * call->elementBytes;
  if ((sendBytes && !emuOnDevice(send, sendBytes)) || (recvBytes && !emuOnDevice(recv, recvBytes)))
    return fail(comm, ncclInvalidArgument,
                std::string(name) + ": a buffer is not (all) device memory");
  return ncclSuccess;
}

/// Queues `run` on `stream`: when it fails there, the communicator's
/// asynchronous error says so and the stream's wait reports it.
template <typename Run>
ncclResult_t enqueue(ncclComm_t comm, const char *name, cudaStream_t stream, Run run) {
  zeroc_rt_status_t queued = emuStreamRun(stream, [comm, name, run]() -> zeroc_rt_status_t {
    if (comm->aborted)
      return nullptr;
    zeroc_rt_status_t s = run();
    if (!s)
      return nullptr;
    comm->asyncError = ncclSystemError;
    comm->lastError = std::string(name) + ": " + zeroc_rt_status_message(s);
    zeroc_rt_status_free(s);
    return ZEROC_RT_ERROR(ZEROC_RT_COMM_ERROR, "emulated NCCL: %s", comm->lastError.c_str());
  });
  if (!queued)
    return ncclSuccess;
  // The compute stream (NULL) runs it at once.
  zeroc_rt_status_free(queued);
  return ncclSystemError;
}

std::vector<char> bytesOf(const void *p, size_t bytes) {
  const char *c = static_cast<const char *>(p);
  return std::vector<char>(c, c + bytes);
}

size_t ranks(ncclComm_t comm) { return comm ? static_cast<size_t>(comm->size) : 0; }

/// What the communication stream's held work will write (collectives'
/// results, copies): a collective whose operand one of them overlaps may
/// see it change before it runs, in stream order.
class HeldWrites {
public:
  uint64_t add(const void *p, size_t bytes) {
    ranges[++last] = {static_cast<const char *>(p), bytes};
    return last;
  }
  void done(uint64_t id) { ranges.erase(id); }
  bool overlap(const void *p, size_t bytes) const {
    const char *c = static_cast<const char *>(p);
    for (const auto &[id, r] : ranges)
      if (c < r.first + r.second && r.first < c + bytes)
        return true;
    return false;
  }

private:
  std::map<uint64_t, std::pair<const char *, size_t>> ranges;
  uint64_t last = 0;
};

HeldWrites &heldWrites() {
  static HeldWrites writes;
  return writes;
}

/// One collective, through host copies of its buffers (NCCL's in-place
/// forms alias them): checks the arguments now and queues the rest, where
/// run(in, out, call) moves the `sendElems` elements read at `send` into
/// the `recvElems` written at `recv`, over MPI.
template <typename Run>
ncclResult_t collective(ncclComm_t comm, const char *name, cudaStream_t stream, ncclDataType_t type,
                        const ncclRedOp_t *op, const void *send, size_t sendElems, void *recv,
                        size_t recvElems, Run run) {
  Call c;
  if (ncclResult_t r = check(comm, name, type, op, send, sendElems, recv, recvElems, &c))
    return r;
  // Held on the communication stream (the compute stream runs it at once).
  const bool held = zeroc_rt::cuda::emuHolds(stream);
  if (held)
    if (zeroc_rt_status_t s = zeroc_rt::cuda::emuCheckCommAfterCompute(name)) {
      // NCCL_DEBUG=WARN's line: comm_nccl.cu reports the result's string.
      std::fprintf(stderr, "NCCL WARN (host emulation) %s\n", zeroc_rt_status_message(s));
      ncclResult_t r = fail(comm, ncclInvalidUsage, zeroc_rt_status_message(s));
      zeroc_rt_status_free(s);
      return r;
    }
  const size_t inBytes = sendElems * c.elementBytes, outBytes = recvElems * c.elementBytes;
  // The operand as queued: when the collective runs it must still be so,
  // unless held work before it writes there. A change is the compute
  // stream's write before the collective ran, without waiting for it: on a
  // GPU, a race with the collective's read.
  std::vector<char> queued;
  if (held && !heldWrites().overlap(send, inBytes))
    queued = bytesOf(send, inBytes);
  const bool compare = queued.size() == inBytes && inBytes;
  const uint64_t writes = held ? heldWrites().add(recv, outBytes) : 0;
  return enqueue(comm, name, stream, [=]() -> zeroc_rt_status_t {
    if (held)
      heldWrites().done(writes);
    if (!outBytes)
      return nullptr;
    std::vector<char> in = bytesOf(send, inBytes), out(outBytes);
    if (compare && in != queued)
      return ZEROC_RT_ERROR(ZEROC_RT_INTERNAL,
                            "host emulation: the operand of %s changed after the call queued "
                            "it and before it ran: the compute stream wrote it without waiting "
                            "for the collective (on a GPU, a race with its read)",
                            name);
    ZEROC_RT_RETURN_IF_ERROR(run(in.data(), out.data(), c));
    std::memcpy(recv, out.data(), outBytes);
    return nullptr;
  });
}

} // namespace

const char *ncclGetErrorString(ncclResult_t result) {
  switch (result) {
  case ncclSuccess:
    return "no error";
  case ncclUnhandledCudaError:
    return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
  case ncclSystemError:
    return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
  case ncclInternalError:
    return "internal error - please report this issue to the NCCL developers";
  case ncclInvalidArgument:
    return "invalid argument (run with NCCL_DEBUG=WARN for details)";
  case ncclInvalidUsage:
    return "invalid usage (run with NCCL_DEBUG=WARN for details)";
  case ncclRemoteError:
    return "remote process exited or there was a network error";
  case ncclInProgress:
    return "NCCL operation in progress";
  }
  return "unknown result code";
}

const char *ncclGetLastError(ncclComm_t comm) { return comm ? comm->lastError.c_str() : ""; }

ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  if (!id)
    return ncclInvalidArgument;
  std::memset(id, 0, sizeof *id);
  std::snprintf(id->internal, sizeof id->internal, "zeroc host emulation, pid %ld",
                static_cast<long>(::getpid()));
  return ncclSuccess;
}

/// A collective call on every rank (MPI_Comm_dup of MPI_COMM_WORLD): the
/// ranks are MPI's, and every rank must pass the id rank 0 made.
ncclResult_t ncclCommInitRank(ncclComm_t *out, int nranks, ncclUniqueId id, int rank) {
  if (!out)
    return ncclInvalidArgument;
  *out = nullptr;
  zeroc_rt_comm_t *mpi = nullptr;
  if (zeroc_rt_status_t s = zeroc_rt_comm_init_mpi(nullptr, nullptr, &mpi)) {
    zeroc_rt_status_free(s);
    return ncclSystemError;
  }
  auto *comm = new ncclComm;
  comm->mpi = mpi;
  comm->rank = zeroc_rt_comm_rank(mpi);
  comm->size = zeroc_rt_comm_size(mpi);
  std::vector<ncclUniqueId> ids(static_cast<size_t>(comm->size));
  zeroc_rt_status_t s = mpi->allGather(&id, ids.data(), sizeof id, ZEROC_RT_DTYPE_U8);
  bool same = !s;
  for (const ncclUniqueId &other : ids)
    same = same && std::memcmp(&other, &id, sizeof id) == 0;
  zeroc_rt_status_free(s);
  if (!same || nranks != comm->size || rank != comm->rank) {
    zeroc_rt_status_free(zeroc_rt_comm_finalize(mpi));
    delete comm;
    return ncclInvalidArgument;
  }
  *out = comm;
  return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError) {
  if (!comm || !asyncError)
    return ncclInvalidArgument;
  *asyncError = comm->asyncError;
  return ncclSuccess;
}

/// The held collectives return without running, as an aborted NCCL's
/// kernels do. The communicator stays allocated (they hold it); its MPI
/// communicator is freed (MPI_Comm_free is local; the world communicator
/// keeps MPI up), so that MPI can still finalize.
ncclResult_t ncclCommAbort(ncclComm_t comm) {
  if (!comm)
    return ncclInvalidArgument;
  if (!comm->aborted)
    zeroc_rt_status_free(zeroc_rt_comm_finalize(comm->mpi));
  comm->aborted = true;
  comm->mpi = nullptr;
  return ncclSuccess;
}

/// After its collectives completed (comm_nccl.cu waits for its stream).
ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (!comm || comm->aborted)
    return ncclInvalidArgument;
  zeroc_rt_status_t s = zeroc_rt_comm_finalize(comm->mpi);
  delete comm;
  if (!s)
    return ncclSuccess;
  zeroc_rt_status_free(s);
  return ncclSystemError;
}

ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, ncclDataType_t type,
                           ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return collective(comm, "ncclAllReduce", stream, type, &op, send, count, recv, count,
                    [=](char *in, char *out, const Call &c) {
                      return comm->mpi->allReduce(in, out, count, c.dtype, c.op);
                    });
}

/// In place when send == recv + rank * sendCount, as NCCL's.
ncclResult_t ncclAllGather(const void *send, void *recv, size_t sendCount, ncclDataType_t type,
                           ncclComm_t comm, cudaStream_t stream) {
  return collective(comm, "ncclAllGather", stream, type, nullptr, send, sendCount, recv,
                    sendCount * ranks(comm), [=](char *in, char *out, const Call &c) {
                      return comm->mpi->allGather(in, out, sendCount, c.dtype);
                    });
}

/// In place when recv == send + rank * recvCount, as NCCL's: the rank's
/// block stays at its offset.
ncclResult_t ncclReduceScatter(const void *send, void *recv, size_t recvCount, ncclDataType_t type,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return collective(comm, "ncclReduceScatter", stream, type, &op, send, recvCount * ranks(comm),
                    recv, recvCount, [=](char *in, char *out, const Call &c) {
                      return comm->mpi->reduceScatter(in, out, recvCount, c.dtype, c.op);
                    });
}

/// `send` is read on the root only.
ncclResult_t ncclBroadcast(const void *send, void *recv, size_t count, ncclDataType_t type,
                           int root, ncclComm_t comm, cudaStream_t stream) {
  if (comm && (root < 0 || root >= comm->size))
    return fail(comm, ncclInvalidArgument, "ncclBroadcast: no rank " + std::to_string(root));
  const bool isRoot = comm && comm->rank == root;
  return collective(comm, "ncclBroadcast", stream, type, nullptr, send, isRoot ? count : 0, recv,
                    count, [=](char *in, char *out, const Call &c) {
                      if (isRoot)
                        std::memcpy(out, in, count * c.elementBytes);
                      return comm->mpi->broadcast(out, count, c.dtype, root);
                    });
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream) {
  if (kind != cudaMemcpyDeviceToDevice ||
      (bytes && (!emuOnDevice(dst, bytes) || !emuOnDevice(src, bytes))))
    return cudaErrorInvalidValue;
  const bool held = zeroc_rt::cuda::emuHolds(stream);
  const uint64_t writes = held ? heldWrites().add(dst, bytes) : 0;
  zeroc_rt_status_t s = emuStreamRun(stream, [=]() -> zeroc_rt_status_t {
    if (held)
      heldWrites().done(writes);
    std::memmove(dst, src, bytes);
    return nullptr;
  });
  zeroc_rt_status_free(s);
  return cudaSuccess;
}
