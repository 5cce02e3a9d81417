//===- comm_staged.cc - Collectives on GPU memory through host MPI --------===//
//
// --comm mpi: each collective copies its device operands to host memory,
// runs on the MPI world communicator and copies the result back. Slower
// than NCCL, but it runs wherever MPI does, several ranks on one GPU
// included (NCCL refuses that). Started collectives complete at once.
// Host operands (the optimizer step's scalars) go to MPI directly.
//
//===----------------------------------------------------------------------===//

#include "comm_cuda.h"
#include "gpu.h"

#include "comm_internal.h"
#include "status_internal.h"

#include <vector>

namespace zeroc_rt::cuda {
namespace {

class StagedComm final : public zeroc_rt_comm {
public:
  explicit StagedComm(zeroc_rt_comm_t *world)
      : zeroc_rt_comm(world->rank, world->size), world(world) {}

  const char *backendName() const override { return "mpi (staged through host memory)"; }
  zeroc_rt_status_t barrier() override { return world->barrier(); }

  zeroc_rt_status_t allReduce(const void *send, void *recv, size_t count,
                              zeroc_rt_dtype_t dtype, zeroc_rt_reduce_op_t op) override {
    if (isHostPointer(recv))
      return world->allReduce(send, recv, count, dtype, op);
    const size_t bytes = count * zeroc_rt_dtype_size(dtype);
    in.resize(bytes);
    ZEROC_RT_RETURN_IF_ERROR(gpuDownload(in.data(), send, bytes));
    ZEROC_RT_RETURN_IF_ERROR(world->allReduce(in.data(), in.data(), count, dtype, op));
    return gpuUpload(recv, in.data(), bytes);
  }

  zeroc_rt_status_t allGather(const void *send, void *recv, size_t countPerRank,
                              zeroc_rt_dtype_t dtype) override {
    const size_t bytes = countPerRank * zeroc_rt_dtype_size(dtype);
    out.resize(bytes * static_cast<size_t>(size));
    in.resize(bytes);
    ZEROC_RT_RETURN_IF_ERROR(gpuDownload(in.data(), send, bytes));
    ZEROC_RT_RETURN_IF_ERROR(world->allGather(in.data(), out.data(), countPerRank, dtype));
    return gpuUpload(recv, out.data(), out.size());
  }

  zeroc_rt_status_t reduceScatter(const void *send, void *recv, size_t countPerRank,
                                  zeroc_rt_dtype_t dtype, zeroc_rt_reduce_op_t op) override {
    const size_t bytes = countPerRank * zeroc_rt_dtype_size(dtype);
    in.resize(bytes * static_cast<size_t>(size));
    out.resize(bytes);
    ZEROC_RT_RETURN_IF_ERROR(gpuDownload(in.data(), send, in.size()));
    ZEROC_RT_RETURN_IF_ERROR(world->reduceScatter(in.data(), out.data(), countPerRank, dtype, op));
    return gpuUpload(recv, out.data(), bytes);
  }

  zeroc_rt_status_t broadcast(void *buf, size_t count, zeroc_rt_dtype_t dtype,
                              int root) override {
    const size_t bytes = count * zeroc_rt_dtype_size(dtype);
    in.resize(bytes);
    ZEROC_RT_RETURN_IF_ERROR(gpuDownload(in.data(), buf, bytes));
    ZEROC_RT_RETURN_IF_ERROR(world->broadcast(in.data(), count, dtype, root));
    return gpuUpload(buf, in.data(), bytes);
  }

  zeroc_rt_status_t finalize() override { return nullptr; } // not the world's

private:
  zeroc_rt_comm_t *world;
  std::vector<char> in, out;
};

} // namespace

zeroc_rt_status_t openStagedComm(zeroc_rt_comm_t *world, zeroc_rt_comm_t **out) {
  *out = new StagedComm(world);
  return nullptr;
}

} // namespace zeroc_rt::cuda
