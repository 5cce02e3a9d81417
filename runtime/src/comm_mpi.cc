//===- comm_mpi.cc - MPI communicator backend -------------------*- C++ -*-===//
//
// Each communicator owns a duplicate of MPI_COMM_WORLD whose error handler is
// MPI_ERRORS_RETURN, so failures come back as codes and become statuses
// instead of aborting the job. MPI is initialized on demand; if this backend
// initialized it, MPI_Finalize runs when the last communicator is finalized.
// f16 and bf16 reductions use user-defined MPI_Ops (comm_half_ops.h) that
// each communicator creates with itself and frees when finalized.
//
//===----------------------------------------------------------------------===//

#include "comm_half_ops.h"
#include "comm_internal.h"
#include "comm_mpi_internal.h"
#include "comm_mpi_ring.h"
#include "status_internal.h"

#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mpi.h>
#include <mutex>
#include <new>
#include <thread>
#include <utility>
#include <vector>

namespace zeroc_rt {

zeroc_rt_status_t mpiError(int code, const char *call, const char *file,
                           int line) {
  char text[MPI_MAX_ERROR_STRING] = {0};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    text[0] = '\0';
  int errorClass = code;
  MPI_Error_class(code, &errorClass);
  return zeroc_rt_status_make(ZEROC_RT_COMM_ERROR, file, line,
                              "%s failed: %s (MPI error class %d)", call, text,
                              errorClass);
}

namespace {

/// Process-wide MPI lifetime bookkeeping. Not locked: communicators are
/// created and finalized from the thread that initializes MPI.
struct MpiLifetime {
  bool initializedByUs = false;
  int liveComms = 0;
  /// MPI_THREAD_MULTIPLE was granted: a progress thread may test requests
  /// while the caller's thread computes or runs other collectives.
  bool multiple = false;
};
MpiLifetime mpiLifetime;

/// MPI datatype and element count for a transfer. f16 and bf16 travel as
/// MPI_UINT16_T (their reductions need HalfOps); bool, never reduced (comm.cc
/// validates), is moved as bytes.
struct MpiBuffer {
  MPI_Datatype type;
  int count;
};

zeroc_rt_status_t toMpiBuffer(zeroc_rt_dtype_t dtype, size_t count,
                              const char *what, MpiBuffer &out) {
  out.type = MPI_DATATYPE_NULL;
  switch (dtype) {
  case ZEROC_RT_DTYPE_F32:
    out.type = MPI_FLOAT;
    break;
  case ZEROC_RT_DTYPE_F64:
    out.type = MPI_DOUBLE;
    break;
  case ZEROC_RT_DTYPE_I64:
    out.type = MPI_INT64_T;
    break;
  case ZEROC_RT_DTYPE_I32:
    out.type = MPI_INT32_T;
    break;
  case ZEROC_RT_DTYPE_U8:
    out.type = MPI_UINT8_T;
    break;
  case ZEROC_RT_DTYPE_F16:
  case ZEROC_RT_DTYPE_BF16:
    out.type = MPI_UINT16_T;
    break;
  case ZEROC_RT_DTYPE_BOOL:
    out.type = MPI_BYTE;
    break;
  }
  if (out.type == MPI_DATATYPE_NULL)
    return ZEROC_RT_ERROR(ZEROC_RT_INTERNAL, "%s: unmapped dtype %d", what,
                          static_cast<int>(dtype));
  if (count > static_cast<size_t>(INT_MAX))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: %zu MPI elements exceed the MPI int count "
                          "limit of %d",
                          what, count, INT_MAX);
  out.count = static_cast<int>(count);
  return nullptr;
}

/// The MPI_User_function of reduceHalf for one dtype and op, applied to
/// MPI_UINT16_T buffers (so `len` counts elements).
template <zeroc_rt_dtype_t Dtype, zeroc_rt_reduce_op_t Op>
void halfReduceFunction(void *in, void *inout, int *len, MPI_Datatype *) {
  reduceHalf(Dtype, Op, in, inout, static_cast<size_t>(*len));
}

/// The user-defined ops of f16/bf16 reductions, indexed by [bf16][op].
/// Created per communicator rather than per process so that their lifetime
/// ends with the communicator's, before any MPI_Finalize.
class HalfOps {
public:
  /// Creates all ops; on failure frees those created and returns the code.
  int create() {
    static MPI_User_function *const functions[2][2] = {
        {halfReduceFunction<ZEROC_RT_DTYPE_F16, ZEROC_RT_REDUCE_SUM>,
         halfReduceFunction<ZEROC_RT_DTYPE_F16, ZEROC_RT_REDUCE_MAX>},
        {halfReduceFunction<ZEROC_RT_DTYPE_BF16, ZEROC_RT_REDUCE_SUM>,
         halfReduceFunction<ZEROC_RT_DTYPE_BF16, ZEROC_RT_REDUCE_MAX>}};
    for (int type = 0; type < 2; ++type)
      for (int op = 0; op < 2; ++op) {
        // Commutative lets MPI pick any reduction order; reduceHalf's
        // results do not depend on operand order.
        int rc =
            MPI_Op_create(functions[type][op], /*commute=*/1, &ops[type][op]);
        if (rc != MPI_SUCCESS) {
          ops[type][op] = MPI_OP_NULL;
          release();
          return rc;
        }
      }
    return MPI_SUCCESS;
  }

  /// Frees every created op (even after a failure); returns the first error.
  int release() {
    int firstError = MPI_SUCCESS;
    for (auto &row : ops)
      for (MPI_Op &op : row) {
        if (op == MPI_OP_NULL)
          continue;
        int rc = MPI_Op_free(&op);
        if (rc != MPI_SUCCESS && firstError == MPI_SUCCESS)
          firstError = rc;
        op = MPI_OP_NULL;
      }
    return firstError;
  }

  MPI_Op get(zeroc_rt_dtype_t dtype, zeroc_rt_reduce_op_t op) const {
    return ops[dtype == ZEROC_RT_DTYPE_BF16][op == ZEROC_RT_REDUCE_MAX];
  }

private:
  MPI_Op ops[2][2] = {{MPI_OP_NULL, MPI_OP_NULL}, {MPI_OP_NULL, MPI_OP_NULL}};
};

/// The progress thread's interval when ZEROC_RT_PROGRESS_US is unset and
/// the ranks span several nodes.
constexpr int kMultiNodeProgressUs = 200;

/// Whether Open MPI placed fewer ranks on this node than the job has (its
/// launcher's OMPI_COMM_WORLD_LOCAL_SIZE / OMPI_COMM_WORLD_SIZE, known
/// before MPI_Init): the collectives then cross a network, whose
/// transport (TCP) moves data only while some thread is inside MPI.
bool ranksSpanNodes() {
  const char *local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  const char *world = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (!local || !world)
    return false;
  char *end1 = nullptr, *end2 = nullptr;
  long l = std::strtol(local, &end1, 10), w = std::strtol(world, &end2, 10);
  return !*end1 && !*end2 && l > 0 && l < w;
}

/// Microseconds between the progress thread's tests of started
/// collectives: ZEROC_RT_PROGRESS_US, 1 to 1000000 (0: no thread); unset
/// or invalid: kMultiNodeProgressUs when the ranks span nodes, otherwise
/// no thread, and started collectives advance only between ops (the
/// engine's zeroc_rt_comm_progress). docs/Training.md has the
/// measurements behind both defaults.
int progressIntervalUs() {
  const int byTopology = ranksSpanNodes() ? kMultiNodeProgressUs : 0;
  const char *text = std::getenv("ZEROC_RT_PROGRESS_US");
  if (!text || !*text)
    return byTopology;
  char *end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (*end || v < 0 || v > 1000000)
    return byTopology;
  return static_cast<int>(v);
}

class MpiComm final : public zeroc_rt_comm {
public:
  MpiComm(MPI_Comm comm, const HalfOps &halfOps, int rank, int size)
      : zeroc_rt_comm(rank, size), comm(comm), halfOps(halfOps) {
    const int interval = progressIntervalUs();
    if (mpiLifetime.multiple && interval > 0 && size > 1)
      progressThread = std::thread([this, interval] { progressLoop(interval); });
  }

  const char *backendName() const override { return "mpi"; }

  zeroc_rt_status_t barrier() override {
    ZEROC_RT_MPI_CALL(MPI_Barrier(comm));
    return nullptr;
  }

  zeroc_rt_status_t allReduce(const void *send, void *recv, size_t count,
                              zeroc_rt_dtype_t dtype,
                              zeroc_rt_reduce_op_t op) override {
    MpiBuffer buf;
    ZEROC_RT_RETURN_IF_ERROR(toMpiBuffer(dtype, count, "all_reduce", buf));
    const void *source = send == recv ? MPI_IN_PLACE : send;
    ZEROC_RT_MPI_CALL(MPI_Allreduce(source, recv, buf.count, buf.type,
                                    toMpiOp(dtype, op), comm));
    return nullptr;
  }

  zeroc_rt_status_t allGather(const void *send, void *recv, size_t countPerRank,
                              zeroc_rt_dtype_t dtype) override {
    MpiBuffer buf;
    ZEROC_RT_RETURN_IF_ERROR(
        toMpiBuffer(dtype, countPerRank, "all_gather", buf));
    const void *ownBlock = static_cast<const char *>(recv) +
                           countPerRank * zeroc_rt_dtype_size(dtype) * rank;
    if (send == ownBlock)
      ZEROC_RT_MPI_CALL(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv,
                                      buf.count, buf.type, comm));
    else
      ZEROC_RT_MPI_CALL(MPI_Allgather(send, buf.count, buf.type, recv,
                                      buf.count, buf.type, comm));
    return nullptr;
  }

  zeroc_rt_status_t allGatherStart(const void *send, void *recv,
                                   size_t countPerRank, zeroc_rt_dtype_t dtype,
                                   int64_t *id) override {
    MpiBuffer buf;
    ZEROC_RT_RETURN_IF_ERROR(
        toMpiBuffer(dtype, countPerRank, "all_gather_start", buf));
    const void *ownBlock = static_cast<const char *>(recv) +
                           countPerRank * zeroc_rt_dtype_size(dtype) * rank;
    MPI_Request request = MPI_REQUEST_NULL;
    if (send == ownBlock)
      ZEROC_RT_MPI_CALL(MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv,
                                       buf.count, buf.type, comm, &request));
    else
      ZEROC_RT_MPI_CALL(MPI_Iallgather(send, buf.count, buf.type, recv,
                                       buf.count, buf.type, comm, &request));
    *id = track(Pending::of(request));
    return nullptr;
  }

  zeroc_rt_status_t allReduceStart(const void *send, void *recv, size_t count,
                                   zeroc_rt_dtype_t dtype,
                                   zeroc_rt_reduce_op_t op,
                                   int64_t *id) override {
    MpiBuffer buf;
    ZEROC_RT_RETURN_IF_ERROR(
        toMpiBuffer(dtype, count, "all_reduce_start", buf));
    const void *source = send == recv ? MPI_IN_PLACE : send;
    MPI_Request request = MPI_REQUEST_NULL;
    ZEROC_RT_MPI_CALL(MPI_Iallreduce(source, recv, buf.count, buf.type,
                                     toMpiOp(dtype, op), comm, &request));
    *id = track(Pending::of(request));
    return nullptr;
  }

  zeroc_rt_status_t reduceScatterStart(const void *send, void *recv,
                                       size_t countPerRank,
                                       zeroc_rt_dtype_t dtype,
                                       zeroc_rt_reduce_op_t op,
                                       int64_t *id) override {
    MpiBuffer buf;
    ZEROC_RT_RETURN_IF_ERROR(
        toMpiBuffer(dtype, countPerRank, "reduce_scatter_start", buf));
    if (RingReduceScatter::supports(dtype, op, size)) {
      auto ring = std::make_unique<RingReduceScatter>(
          comm, rank, size, nextRingTag(), send, recv, countPerRank, dtype,
          scratch);
      ZEROC_RT_RETURN_IF_ERROR(ring->start());
      *id = track(Pending::of(std::move(ring)));
      return nullptr;
    }
    MPI_Request request = MPI_REQUEST_NULL;
    ZEROC_RT_MPI_CALL(MPI_Ireduce_scatter_block(
        send == recv ? MPI_IN_PLACE : send, recv, buf.count, buf.type,
        toMpiOp(dtype, op), comm, &request));
    *id = track(Pending::of(request));
    return nullptr;
  }

  zeroc_rt_status_t wait(int64_t id) override {
    Pending pending;
    bool found = false;
    {
      // Taken out of the list first: the progress thread must not test a
      // request this thread waits for.
      std::lock_guard<std::mutex> lock(mutex);
      for (size_t i = 0; i < requests.size() && !found; ++i)
        if (requests[i].first == id) {
          pending = std::move(requests[i].second);
          requests.erase(requests.begin() + static_cast<long>(i));
          found = true;
        }
    }
    if (!found)
      return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                            "wait: no started collective has request %lld",
                            static_cast<long long>(id));
    if (pending.error)
      return pending.error.release(); // the caller frees it
    if (pending.ring)
      return pending.ring->finish();
    ZEROC_RT_MPI_CALL(MPI_Wait(&pending.request, MPI_STATUS_IGNORE));
    return nullptr;
  }

  void progress() override {
    std::lock_guard<std::mutex> lock(mutex);
    testAll();
  }

  zeroc_rt_status_t reduceScatter(const void *send, void *recv,
                                  size_t countPerRank, zeroc_rt_dtype_t dtype,
                                  zeroc_rt_reduce_op_t op) override {
    MpiBuffer buf;
    ZEROC_RT_RETURN_IF_ERROR(
        toMpiBuffer(dtype, countPerRank, "reduce_scatter", buf));
    if (RingReduceScatter::supports(dtype, op, size)) {
      RingReduceScatter ring(comm, rank, size, nextRingTag(), send, recv,
                             countPerRank, dtype, scratch);
      ZEROC_RT_RETURN_IF_ERROR(ring.start());
      return ring.finish();
    }
    ZEROC_RT_MPI_CALL(MPI_Reduce_scatter_block(send == recv ? MPI_IN_PLACE : send,
                                               recv, buf.count, buf.type,
                                               toMpiOp(dtype, op), comm));
    return nullptr;
  }

  zeroc_rt_status_t broadcast(void *data, size_t count, zeroc_rt_dtype_t dtype,
                              int root) override {
    MpiBuffer buf;
    ZEROC_RT_RETURN_IF_ERROR(toMpiBuffer(dtype, count, "broadcast", buf));
    ZEROC_RT_MPI_CALL(MPI_Bcast(data, buf.count, buf.type, root, comm));
    return nullptr;
  }

  zeroc_rt_status_t finalize() override {
    if (progressThread.joinable()) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        stopping = true;
      }
      wake.notify_all();
      progressThread.join();
    }
    // The ops go first: MPI_Finalize must not find user-defined ops alive.
    int rc = halfOps.release();
    const char *failedCall = "MPI_Op_free";
    int commRc = MPI_Comm_free(&comm);
    if (rc == MPI_SUCCESS && commRc != MPI_SUCCESS) {
      rc = commRc;
      failedCall = "MPI_Comm_free";
    }
    if (--mpiLifetime.liveComms == 0 && mpiLifetime.initializedByUs) {
      mpiLifetime.initializedByUs = false;
      int finalizeRc = MPI_Finalize();
      if (rc == MPI_SUCCESS && finalizeRc != MPI_SUCCESS) {
        rc = finalizeRc;
        failedCall = "MPI_Finalize";
      }
    }
    if (rc != MPI_SUCCESS)
      return mpiError(rc, failedCall, __FILE__, __LINE__);
    return nullptr;
  }

private:
  struct StatusFree {
    void operator()(zeroc_rt_status_t s) const { zeroc_rt_status_free(s); }
  };

  /// A started collective: an MPI request, or a ring zeroc runs itself.
  struct Pending {
    MPI_Request request = MPI_REQUEST_NULL;
    std::unique_ptr<RingReduceScatter> ring;
    /// The ring's error met by the progress thread, for wait to return.
    std::unique_ptr<zeroc_rt_status, StatusFree> error;
    /// Whether the progress thread still has something to advance.
    bool pending() const {
      return ring ? !error && !ring->done() : request != MPI_REQUEST_NULL;
    }
    static Pending of(MPI_Request request) {
      Pending p;
      p.request = request;
      return p;
    }
    static Pending of(std::unique_ptr<RingReduceScatter> ring) {
      Pending p;
      p.ring = std::move(ring);
      return p;
    }
  };

  /// Keeps a started collective until its wait; returns its id.
  int64_t track(Pending pending) {
    int64_t id;
    {
      std::lock_guard<std::mutex> lock(mutex);
      requests.push_back({nextRequest, std::move(pending)});
      id = nextRequest++;
    }
    wake.notify_one();
    return id;
  }

  /// The tag of the next ring's messages: every rank starts collectives in
  /// the same order, so the counts agree; two rings in flight never share
  /// one (far fewer than 32767, MPI's least MPI_TAG_UB, are ever pending).
  int nextRingTag() { return static_cast<int>(ringCount++ % 32767); }

  /// MPI_Test drives a nonblocking collective's next round, advance() a
  /// ring's; completion is looked at by wait (a completed request becomes
  /// MPI_REQUEST_NULL). Called with `mutex` held. A ring that fails here
  /// is marked, and its wait reports the error.
  void testAll() {
    for (auto &entry : requests) {
      Pending &p = entry.second;
      if (p.ring) {
        bool done = false;
        if (p.pending())
          if (zeroc_rt_status_t status = p.ring->advance(&done))
            p.error.reset(status);
        continue;
      }
      int done = 0;
      if (p.request != MPI_REQUEST_NULL)
        MPI_Test(&p.request, &done, MPI_STATUS_IGNORE);
    }
  }

  /// The progress thread: while collectives are started, tests them every
  /// `intervalUs`, so that they advance during long kernels (Open MPI
  /// moves a nonblocking collective only inside MPI calls); sleeps while
  /// none is.
  void progressLoop(int intervalUs) {
    std::unique_lock<std::mutex> lock(mutex);
    while (!stopping) {
      bool pending = false;
      for (auto &entry : requests)
        pending |= entry.second.pending();
      if (!pending) {
        wake.wait(lock);
        continue;
      }
      testAll();
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::microseconds(intervalUs));
      lock.lock();
    }
  }

  MPI_Op toMpiOp(zeroc_rt_dtype_t dtype, zeroc_rt_reduce_op_t op) const {
    if (zeroc_rt_dtype_is_half(dtype))
      return halfOps.get(dtype, op);
    return op == ZEROC_RT_REDUCE_MAX ? MPI_MAX : MPI_SUM;
  }

  MPI_Comm comm;
  int64_t nextRequest = 0;
  /// Guards requests and stopping (the progress thread reads them).
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  std::vector<std::pair<int64_t, Pending>> requests;
  ScratchPool scratch;
  int64_t ringCount = 0;
  HalfOps halfOps;
  std::thread progressThread;
};

/// Open MPI's nonblocking MPI_Iallreduce (libnbc) runs as a binomial tree
/// below 4 ranks: at 2 ranks over shared memory 2.0-2.5x the time of its
/// ring, which is as fast as the blocking MPI_Allreduce at every size
/// (docs/Training.md, "Collective algorithms"). The ring, unless the user
/// chose an algorithm (OMPI_MCA_coll_libnbc_iallreduce_algorithm); read
/// by MPI_Init, ignored by other MPI libraries.
void preferRingIallreduce() {
  ::setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "1", /*overwrite=*/0);
}

zeroc_rt_status_t ensureMpiInitialized(int *argc, char ***argv) {
  int finalized = 0;
  ZEROC_RT_MPI_CALL(MPI_Finalized(&finalized));
  if (finalized)
    return ZEROC_RT_ERROR(ZEROC_RT_COMM_ERROR,
                          "comm_init_mpi: MPI is already finalized and cannot "
                          "be initialized again");
  int initialized = 0;
  ZEROC_RT_MPI_CALL(MPI_Initialized(&initialized));
  if (initialized) {
    int level = MPI_THREAD_SINGLE;
    ZEROC_RT_MPI_CALL(MPI_Query_thread(&level));
    mpiLifetime.multiple = level >= MPI_THREAD_MULTIPLE;
    return nullptr;
  }
  // Serialized: the runtime calls MPI from one thread at a time. With a
  // progress thread (ZEROC_RT_PROGRESS_US) multiple: that thread tests
  // started collectives while the caller's thread runs others; where the
  // library grants less, progress happens only between ops.
  preferRingIallreduce();
  int provided = 0;
  ZEROC_RT_MPI_CALL(MPI_Init_thread(
      argc, argv,
      progressIntervalUs() > 0 ? MPI_THREAD_MULTIPLE : MPI_THREAD_SERIALIZED,
      &provided));
  mpiLifetime.initializedByUs = true;
  mpiLifetime.multiple = provided >= MPI_THREAD_MULTIPLE;
  // Errors on MPI_COMM_WORLD itself (e.g. while duplicating it) must not
  // abort either. Only done when we own MPI, to respect an embedding program.
  ZEROC_RT_MPI_CALL(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  return nullptr;
}

zeroc_rt_status_t createMpiComm(int *argc, char ***argv,
                                zeroc_rt_comm_t **out) {
  ZEROC_RT_RETURN_IF_ERROR(ensureMpiInitialized(argc, argv));
  MPI_Comm comm = MPI_COMM_NULL;
  ZEROC_RT_MPI_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
  int rank = 0, size = 0;
  HalfOps halfOps;
  int rc = MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  if (rc == MPI_SUCCESS)
    rc = MPI_Comm_rank(comm, &rank);
  if (rc == MPI_SUCCESS)
    rc = MPI_Comm_size(comm, &size);
  if (rc == MPI_SUCCESS)
    rc = halfOps.create();
  MpiComm *mpiComm = nullptr;
  if (rc == MPI_SUCCESS) // The communicator takes over comm and the ops.
    mpiComm = new (std::nothrow) MpiComm(comm, halfOps, rank, size);
  if (!mpiComm) {
    halfOps.release();
    MPI_Comm_free(&comm);
    if (rc != MPI_SUCCESS)
      return mpiError(rc, "comm_init_mpi: setting up the communicator",
                      __FILE__, __LINE__);
    return ZEROC_RT_ERROR(ZEROC_RT_OUT_OF_MEMORY,
                          "comm_init_mpi: cannot allocate the communicator");
  }
  ++mpiLifetime.liveComms;
  *out = mpiComm;
  return nullptr;
}

} // namespace
} // namespace zeroc_rt

extern "C" zeroc_rt_status_t zeroc_rt_comm_init_mpi(int *argc, char ***argv,
                                                    zeroc_rt_comm_t **out) {
  if (!out)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "comm_init_mpi: output pointer is NULL");
  *out = nullptr;
  return ZEROC_RT_GUARD_EXCEPTIONS(zeroc_rt::createMpiComm(argc, argv, out));
}
