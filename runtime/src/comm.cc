//===- comm.cc - Communicator C API and argument validation -----*- C++ -*-===//
//
// Backend-independent entry points: validate, skip empty transfers, catch
// exceptions, dispatch to the backend.
//
//===----------------------------------------------------------------------===//

#include "comm_internal.h"
#include "status_internal.h"

#include <chrono>
#include <cstdint>
#include <limits>

namespace zeroc_rt {
namespace {

/// Runs one backend collective, adding its wall-clock time to
/// comm->collectiveMs and reporting it to comm->onCollective.
template <typename Fn>
zeroc_rt_status_t timed(zeroc_rt_comm_t *comm, const char *name, size_t bytes,
                        Fn &&fn) {
  const auto start = std::chrono::steady_clock::now();
  zeroc_rt_status_t status = nullptr;
  {
    zeroc_rt_comm::BlockedScope blocked(*comm, name);
    status = fn();
  }
  const auto end = std::chrono::steady_clock::now();
  comm->collectiveMs += std::chrono::duration<double, std::milli>(end - start).count();
  if (comm->onCollective)
    comm->onCollective(name, bytes, start, end);
  return status;
}

bool isReducibleDtype(zeroc_rt_dtype_t dtype) {
  switch (dtype) {
  case ZEROC_RT_DTYPE_F32:
  case ZEROC_RT_DTYPE_F64:
  case ZEROC_RT_DTYPE_F16:
  case ZEROC_RT_DTYPE_BF16:
  case ZEROC_RT_DTYPE_I64:
  case ZEROC_RT_DTYPE_I32:
  case ZEROC_RT_DTYPE_U8:
    return true;
  default:
    return false;
  }
}

/// Half-open byte ranges [a, a + aBytes) and [b, b + bBytes) intersect.
bool overlaps(const void *a, size_t aBytes, const void *b, size_t bBytes) {
  auto aBegin = reinterpret_cast<uintptr_t>(a);
  auto bBegin = reinterpret_cast<uintptr_t>(b);
  return aBytes > 0 && bBytes > 0 && aBegin < bBegin + bBytes &&
         bBegin < aBegin + aBytes;
}

zeroc_rt_status_t checkComm(const zeroc_rt_comm_t *comm, const char *what) {
  if (!comm)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: comm is NULL", what);
  return nullptr;
}

/// Checks dtype (and op when `reduces`), and computes `elements * dtype size *
/// multiplier` into `bytes` without overflow (`multiplier` covers the
/// size-times-larger buffers of all_gather and reduce_scatter).
zeroc_rt_status_t checkTransfer(const char *what, zeroc_rt_dtype_t dtype,
                                bool reduces, zeroc_rt_reduce_op_t op,
                                size_t elements, size_t multiplier,
                                size_t &blockBytes, size_t &totalBytes) {
  size_t elementSize = zeroc_rt_dtype_size(dtype);
  if (elementSize == 0)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: invalid dtype %d",
                          what, static_cast<int>(dtype));
  if (reduces && !isReducibleDtype(dtype))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: reductions do not support dtype %s (supported: "
                          "f32, f64, f16, bf16, i64, i32, u8)",
                          what, zeroc_rt_dtype_name(dtype));
  if (reduces && op != ZEROC_RT_REDUCE_SUM && op != ZEROC_RT_REDUCE_MAX)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: invalid reduce op %d",
                          what, static_cast<int>(op));
  constexpr size_t kMax = std::numeric_limits<size_t>::max();
  if (elements > kMax / elementSize ||
      elements * elementSize > kMax / multiplier)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: %zu elements of %s overflow the address space",
                          what, elements, zeroc_rt_dtype_name(dtype));
  blockBytes = elements * elementSize;
  totalBytes = blockBytes * multiplier;
  return nullptr;
}

zeroc_rt_status_t checkBuffers(const char *what, const void *send,
                               const void *recv) {
  if (!send || !recv)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: %s buffer is NULL",
                          what, send ? "receive" : "send");
  return nullptr;
}

zeroc_rt_status_t barrier(zeroc_rt_comm_t *comm) {
  ZEROC_RT_RETURN_IF_ERROR(checkComm(comm, "barrier"));
  return timed(comm, "barrier", 0, [&] { return comm->barrier(); });
}

/// Runs a backend start (which sets *request) and records it as pending
/// under `name`, so that its trace span runs from the start to the wait.
template <typename Fn>
zeroc_rt_status_t started(zeroc_rt_comm_t *comm, const char *name,
                          size_t bytes, int64_t *request, Fn &&start) {
  const auto begin = std::chrono::steady_clock::now();
  zeroc_rt_status_t status = start();
  if (!status && *request >= 0)
    comm->pending.push_back({*request, name, bytes, begin});
  return status;
}

/// Each collective below is one function for its blocking and its started
/// (`*_start`) entry point: the same checks, then the backend's blocking
/// call, timed, or its start, pending until the wait. `what` names the
/// entry point in errors, `name` the collective in the trace.
template <typename Blocking, typename Start>
zeroc_rt_status_t dispatch(zeroc_rt_comm_t *comm, const char *name,
                           size_t bytes, bool startedForm, int64_t *request,
                           Blocking &&blocking, Start &&start) {
  if (!startedForm)
    return timed(comm, name, bytes, blocking);
  return started(comm, name, bytes, request, start);
}

/// On one rank a collective in place is the identity (a sum or a maximum
/// over one value, one rank's block gathered where it is): nothing runs,
/// and a started one's request stays -1. A GPU's communicator would
/// otherwise still order its two streams around it (comm_nccl.cu), and the
/// staged one copy the buffer to the host and back.
bool identityOnOneRank(const zeroc_rt_comm_t *comm, const void *send, const void *recv) {
  return comm->size == 1 && send == recv;
}

/// A started form's request must be given; it reads -1 until the start
/// succeeds.
zeroc_rt_status_t checkRequest(const char *what, bool startedForm,
                               int64_t *request) {
  if (!startedForm)
    return nullptr;
  if (!request)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: request is NULL", what);
  *request = -1;
  return nullptr;
}

/// all_reduce / all_reduce_start: a valid transfer, buffers for a non-zero
/// count, in place or disjoint.
zeroc_rt_status_t allReduce(zeroc_rt_comm_t *comm, const void *send, void *recv,
                            size_t count, zeroc_rt_dtype_t dtype,
                            zeroc_rt_reduce_op_t op, bool startedForm,
                            int64_t *request) {
  const char *what = startedForm ? "all_reduce_start" : "all_reduce";
  ZEROC_RT_RETURN_IF_ERROR(checkRequest(what, startedForm, request));
  ZEROC_RT_RETURN_IF_ERROR(checkComm(comm, what));
  size_t bytes = 0, unused = 0;
  ZEROC_RT_RETURN_IF_ERROR(
      checkTransfer(what, dtype, true, op, count, 1, bytes, unused));
  if (count == 0)
    return nullptr;
  ZEROC_RT_RETURN_IF_ERROR(checkBuffers(what, send, recv));
  if (send != recv && overlaps(send, bytes, recv, bytes))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: send and receive buffers partially overlap "
                          "(pass the same pointer for in-place)",
                          what);
  if (identityOnOneRank(comm, send, recv))
    return nullptr;
  return dispatch(
      comm, "all_reduce", bytes, startedForm, request,
      [&] { return comm->allReduce(send, recv, count, dtype, op); },
      [&] { return comm->allReduceStart(send, recv, count, dtype, op, request); });
}

/// all_gather / all_gather_start: a valid transfer, buffers for a non-zero
/// count, and no overlap other than the in-place one.
zeroc_rt_status_t allGather(zeroc_rt_comm_t *comm, const void *send, void *recv,
                            size_t countPerRank, zeroc_rt_dtype_t dtype,
                            bool startedForm, int64_t *request) {
  const char *what = startedForm ? "all_gather_start" : "all_gather";
  ZEROC_RT_RETURN_IF_ERROR(checkRequest(what, startedForm, request));
  ZEROC_RT_RETURN_IF_ERROR(checkComm(comm, what));
  size_t blockBytes = 0, totalBytes = 0;
  ZEROC_RT_RETURN_IF_ERROR(checkTransfer(what, dtype, false,
                                         ZEROC_RT_REDUCE_SUM, countPerRank,
                                         comm->size, blockBytes, totalBytes));
  if (countPerRank == 0)
    return nullptr;
  ZEROC_RT_RETURN_IF_ERROR(checkBuffers(what, send, recv));
  const void *ownBlock =
      static_cast<const char *>(recv) + blockBytes * comm->rank;
  if (send != ownBlock && overlaps(send, blockBytes, recv, totalBytes))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: send buffer overlaps the receive buffer other "
                          "than at this rank's block (in-place form)",
                          what);
  if (identityOnOneRank(comm, send, recv))
    return nullptr;
  return dispatch(
      comm, "all_gather", blockBytes, startedForm, request,
      [&] { return comm->allGather(send, recv, countPerRank, dtype); },
      [&] {
        return comm->allGatherStart(send, recv, countPerRank, dtype, request);
      });
}

/// Completes request `id` and reports the collective from its start to now
/// (the time spent waiting is what the step waited for it).
zeroc_rt_status_t wait(zeroc_rt_comm_t *comm, int64_t id) {
  ZEROC_RT_RETURN_IF_ERROR(checkComm(comm, "wait"));
  const auto waitStart = std::chrono::steady_clock::now();
  zeroc_rt_status_t status = nullptr;
  {
    // Named after the started collective it completes.
    const char *name = "wait";
    for (const zeroc_rt_comm::Pending &p : comm->pending)
      if (p.id == id)
        name = p.name;
    zeroc_rt_comm::BlockedScope blocked(*comm, name);
    status = comm->wait(id);
  }
  const auto end = std::chrono::steady_clock::now();
  comm->collectiveMs +=
      std::chrono::duration<double, std::milli>(end - waitStart).count();
  for (size_t i = 0; i < comm->pending.size(); ++i) {
    if (comm->pending[i].id != id)
      continue;
    const zeroc_rt_comm::Pending p = comm->pending[i];
    comm->pending.erase(comm->pending.begin() + static_cast<long>(i));
    if (comm->onCollective)
      comm->onCollective(p.name, p.bytes, p.start, end);
    break;
  }
  return status;
}

/// reduce_scatter / reduce_scatter_start: a valid transfer, buffers for a
/// non-zero count, in place (the same pointer) or disjoint.
zeroc_rt_status_t reduceScatter(zeroc_rt_comm_t *comm, const void *send,
                                void *recv, size_t countPerRank,
                                zeroc_rt_dtype_t dtype,
                                zeroc_rt_reduce_op_t op, bool startedForm,
                                int64_t *request) {
  const char *what = startedForm ? "reduce_scatter_start" : "reduce_scatter";
  ZEROC_RT_RETURN_IF_ERROR(checkRequest(what, startedForm, request));
  ZEROC_RT_RETURN_IF_ERROR(checkComm(comm, what));
  size_t blockBytes = 0, totalBytes = 0;
  ZEROC_RT_RETURN_IF_ERROR(checkTransfer(what, dtype, true, op, countPerRank,
                                         comm->size, blockBytes, totalBytes));
  if (countPerRank == 0)
    return nullptr;
  ZEROC_RT_RETURN_IF_ERROR(checkBuffers(what, send, recv));
  if (send != recv && overlaps(send, totalBytes, recv, blockBytes))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: send and receive buffers overlap (pass the "
                          "same pointer for in-place)",
                          what);
  if (identityOnOneRank(comm, send, recv))
    return nullptr;
  return dispatch(
      comm, "reduce_scatter", totalBytes, startedForm, request,
      [&] { return comm->reduceScatter(send, recv, countPerRank, dtype, op); },
      [&] {
        return comm->reduceScatterStart(send, recv, countPerRank, dtype, op,
                                        request);
      });
}

zeroc_rt_status_t broadcast(zeroc_rt_comm_t *comm, void *buf, size_t count,
                            zeroc_rt_dtype_t dtype, int root) {
  const char *what = "broadcast";
  ZEROC_RT_RETURN_IF_ERROR(checkComm(comm, what));
  size_t bytes = 0, unused = 0;
  ZEROC_RT_RETURN_IF_ERROR(checkTransfer(
      what, dtype, false, ZEROC_RT_REDUCE_SUM, count, 1, bytes, unused));
  if (root < 0 || root >= comm->size)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: root %d is outside [0, %d)", what, root,
                          comm->size);
  if (count == 0)
    return nullptr;
  ZEROC_RT_RETURN_IF_ERROR(checkBuffers(what, buf, buf));
  return timed(comm, what, bytes,
               [&] { return comm->broadcast(buf, count, dtype, root); });
}

} // namespace
} // namespace zeroc_rt

extern "C" {

const char *zeroc_rt_comm_backend(const zeroc_rt_comm_t *comm) {
  return comm ? comm->backendName() : "";
}

int zeroc_rt_comm_rank(const zeroc_rt_comm_t *comm) {
  return comm ? comm->rank : -1;
}

int zeroc_rt_comm_size(const zeroc_rt_comm_t *comm) {
  return comm ? comm->size : 0;
}

zeroc_rt_status_t zeroc_rt_comm_barrier(zeroc_rt_comm_t *comm) {
  return ZEROC_RT_GUARD_EXCEPTIONS(zeroc_rt::barrier(comm));
}

zeroc_rt_status_t zeroc_rt_comm_all_reduce(zeroc_rt_comm_t *comm,
                                           const void *sendbuf, void *recvbuf,
                                           size_t count, zeroc_rt_dtype_t dtype,
                                           zeroc_rt_reduce_op_t op) {
  return ZEROC_RT_GUARD_EXCEPTIONS(
      zeroc_rt::allReduce(comm, sendbuf, recvbuf, count, dtype, op,
                          /*startedForm=*/false, nullptr));
}

zeroc_rt_status_t zeroc_rt_comm_all_gather(zeroc_rt_comm_t *comm,
                                           const void *sendbuf, void *recvbuf,
                                           size_t count_per_rank,
                                           zeroc_rt_dtype_t dtype) {
  return ZEROC_RT_GUARD_EXCEPTIONS(
      zeroc_rt::allGather(comm, sendbuf, recvbuf, count_per_rank, dtype,
                          /*startedForm=*/false, nullptr));
}

zeroc_rt_status_t
zeroc_rt_comm_reduce_scatter(zeroc_rt_comm_t *comm, const void *sendbuf,
                             void *recvbuf, size_t count_per_rank,
                             zeroc_rt_dtype_t dtype, zeroc_rt_reduce_op_t op) {
  return ZEROC_RT_GUARD_EXCEPTIONS(
      zeroc_rt::reduceScatter(comm, sendbuf, recvbuf, count_per_rank, dtype,
                              op, /*startedForm=*/false, nullptr));
}

zeroc_rt_status_t zeroc_rt_comm_broadcast(zeroc_rt_comm_t *comm, void *buf,
                                          size_t count, zeroc_rt_dtype_t dtype,
                                          int root) {
  return ZEROC_RT_GUARD_EXCEPTIONS(
      zeroc_rt::broadcast(comm, buf, count, dtype, root));
}

zeroc_rt_status_t zeroc_rt_comm_all_gather_start(zeroc_rt_comm_t *comm,
                                                 const void *sendbuf,
                                                 void *recvbuf,
                                                 size_t count_per_rank,
                                                 zeroc_rt_dtype_t dtype,
                                                 int64_t *request) {
  return ZEROC_RT_GUARD_EXCEPTIONS(
      zeroc_rt::allGather(comm, sendbuf, recvbuf, count_per_rank, dtype,
                          /*startedForm=*/true, request));
}

zeroc_rt_status_t zeroc_rt_comm_all_reduce_start(
    zeroc_rt_comm_t *comm, const void *sendbuf, void *recvbuf, size_t count,
    zeroc_rt_dtype_t dtype, zeroc_rt_reduce_op_t op, int64_t *request) {
  return ZEROC_RT_GUARD_EXCEPTIONS(
      zeroc_rt::allReduce(comm, sendbuf, recvbuf, count, dtype, op,
                          /*startedForm=*/true, request));
}

zeroc_rt_status_t zeroc_rt_comm_reduce_scatter_start(
    zeroc_rt_comm_t *comm, const void *sendbuf, void *recvbuf,
    size_t count_per_rank, zeroc_rt_dtype_t dtype, zeroc_rt_reduce_op_t op,
    int64_t *request) {
  return ZEROC_RT_GUARD_EXCEPTIONS(
      zeroc_rt::reduceScatter(comm, sendbuf, recvbuf, count_per_rank, dtype,
                              op, /*startedForm=*/true, request));
}

zeroc_rt_status_t zeroc_rt_comm_wait(zeroc_rt_comm_t *comm, int64_t request) {
  if (request < 0)
    return nullptr; // ran at once, or moved nothing
  return ZEROC_RT_GUARD_EXCEPTIONS(zeroc_rt::wait(comm, request));
}

void zeroc_rt_comm_progress(zeroc_rt_comm_t *comm) {
  if (comm && !comm->pending.empty())
    comm->progress();
}

zeroc_rt_status_t zeroc_rt_comm_finalize(zeroc_rt_comm_t *comm) {
  if (!comm)
    return nullptr;
  zeroc_rt_status_t status = ZEROC_RT_GUARD_EXCEPTIONS(comm->finalize());
  delete comm;
  return status;
}

} // extern "C"
