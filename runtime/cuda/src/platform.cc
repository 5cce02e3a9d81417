//===- platform.cc - The engine on a GPU ----------------------------------===//
//
// The CUDA runtime's Device (memory and the engine's element work on the
// GPU, through gpu.h and the zeroc_rt_cuda_k_* kernels) and Platform (one GPU
// per rank from its local rank, the collectives' communicator: NCCL unless
// two ranks share a GPU, told apart by UUID), and the
// process entry point of programs emitted with --target cuda. The same
// source builds the host emulation, where "the GPU" is host memory.
//
//===----------------------------------------------------------------------===//

#include "comm_cuda.h"
#include "gpu.h"
#include "kernels/gemm_plan.h"

#include "status_internal.h"
#include "train/device.h"
#include "train/train_internal.h"
#include "zeroc_rt_cuda/program.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace zeroc_rt::cuda {
namespace {

using train::Args;

/// A multi-tensor optimizer step in one launch per master dtype (f32, then
/// f64; in practice one): `launch(dtype, table, &failed)` over the
/// tensors' kernel rows (`rowOf`); its errors name the parameter.
template <typename Tensor, typename RowOf, typename Launch>
zeroc_rt_status_t perMasterDtype(const Tensor *tensors, int64_t count, RowOf &&rowOf,
                                 Launch &&launch) {
  for (int64_t i = 0; i < count; ++i)
    if (tensors[i].dtype != ZEROC_RT_DTYPE_F32 && tensors[i].dtype != ZEROC_RT_DTYPE_F64)
      return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                            "optimizer update of parameter '%s': dtype %s is not f32 or f64",
                            tensors[i].name, zeroc_rt_dtype_name(tensors[i].dtype));
  for (zeroc_rt_dtype_t dtype : {ZEROC_RT_DTYPE_F32, ZEROC_RT_DTYPE_F64}) {
    std::vector<decltype(rowOf(tensors[0]))> table;
    std::vector<const Tensor *> of;
    for (int64_t i = 0; i < count; ++i) {
      if (tensors[i].dtype != dtype)
        continue;
      table.push_back(rowOf(tensors[i]));
      of.push_back(&tensors[i]);
    }
    if (table.empty())
      continue;
    int64_t failed = -1;
    if (zeroc_rt_status_t status = launch(dtype, table, &failed))
      return ZEROC_RT_TRAIN_WRAP(status, failed >= 0
                                             ? train::format("optimizer update of parameter '%s': ",
                                                             of[static_cast<size_t>(failed)]->name)
                                             : std::string("optimizer update: "));
  }
  return nullptr;
}

class CudaDevice final : public train::Device {
public:
  std::string describe() const override { return description; }
  bool hostMemory() const override { return false; }
  zeroc_rt_status_t allocate(size_t bytes, const char *what, void **out) override {
    return gpuMalloc(bytes, what, out);
  }
  void release(void *p) override { gpuFree(p); }
  size_t maxAllocatedBytes() const override { return gpuMaxAllocated(); }
  zeroc_rt_status_t upload(void *dst, const void *src, size_t bytes) override {
    return gpuUpload(dst, src, bytes);
  }
  zeroc_rt_status_t download(void *dst, const void *src, size_t bytes) override {
    return gpuDownload(dst, src, bytes);
  }
  zeroc_rt_status_t copy(void *dst, const void *src, size_t bytes) override {
    return gpuCopy(dst, src, bytes);
  }
  zeroc_rt_status_t zero(void *dst, size_t bytes) override { return gpuZero(dst, bytes); }
  zeroc_rt_status_t convert(zeroc_rt_dtype_t from, const void *src, zeroc_rt_dtype_t to,
                            void *dst, int64_t count, double scale) override {
    return zeroc_rt_cuda_k_convert(from, src, to, dst, count, scale);
  }
  zeroc_rt_status_t scale(zeroc_rt_dtype_t dtype, void *data, int64_t count,
                          double factor) override {
    return zeroc_rt_cuda_k_scale(dtype, data, count, factor);
  }
  zeroc_rt_status_t accumulate(zeroc_rt_dtype_t dtype, const void *src, void *dst,
                               int64_t count) override {
    return zeroc_rt_cuda_k_accumulate(dtype, src, dst, count);
  }
  zeroc_rt_status_t accumulateWidening(zeroc_rt_dtype_t from, const void *src,
                                       zeroc_rt_dtype_t to, void *dst,
                                       int64_t count) override {
    return zeroc_rt_cuda_k_accumulate_widening(from, src, to, dst, count);
  }
  zeroc_rt_status_t adamStep(zeroc_rt_dtype_t dtype, void *param, const void *grad,
                             void *expAvg, void *expAvgSq, int64_t count, double lr,
                             double beta1, double beta2, double eps, double weightDecay,
                             int adamW, int biasCorrection, int64_t step) override {
    return zeroc_rt_cuda_k_adam_step(dtype, param, grad, expAvg, expAvgSq, count, lr, beta1,
                                     beta2, eps, weightDecay, adamW, biasCorrection, step);
  }
  zeroc_rt_status_t sgdStep(zeroc_rt_dtype_t dtype, void *param, const void *grad,
                            void *momentumBuf, int64_t count, double lr, double momentum,
                            double weightDecay, double dampening, int nesterov,
                            int64_t step) override {
    return zeroc_rt_cuda_k_sgd_step(dtype, param, grad, momentumBuf, count, lr, momentum,
                                    weightDecay, dampening, nesterov, step);
  }
  /// One launch per master dtype (in practice one): the scaling, the
  /// update and the rounding of every tensor in one pass.
  zeroc_rt_status_t adamStepMulti(const train::AdamTensor *tensors, int64_t count,
                                  const train::AdamHyper &h, void *) override {
    return perMasterDtype(
        tensors, count,
        [](const train::AdamTensor &t) {
          return zeroc_rt_cuda_adam_tensor_t{t.gradDtype, t.grad,         t.param,   t.expAvg,
                                             t.expAvgSq,  t.roundedDtype, t.rounded, t.count};
        },
        [&](zeroc_rt_dtype_t dtype, const auto &table, int64_t *failed) {
          return zeroc_rt_cuda_k_adam_step_multi(
              dtype, static_cast<int64_t>(table.size()), table.data(), h.factor, h.lr, h.beta1,
              h.beta2, h.eps, h.weightDecay, h.adamW, h.biasCorrection, h.step, failed);
        });
  }
  zeroc_rt_status_t sgdStepMulti(const train::SgdTensor *tensors, int64_t count,
                                 const train::SgdHyper &h, void *) override {
    return perMasterDtype(
        tensors, count,
        [](const train::SgdTensor &t) {
          return zeroc_rt_cuda_sgd_tensor_t{t.gradDtype,    t.grad,    t.param, t.momentumBuf,
                                            t.roundedDtype, t.rounded, t.count};
        },
        [&](zeroc_rt_dtype_t dtype, const auto &table, int64_t *failed) {
          return zeroc_rt_cuda_k_sgd_step_multi(
              dtype, static_cast<int64_t>(table.size()), table.data(), h.factor, h.lr, h.momentum,
              h.weightDecay, h.dampening, h.nesterov, h.step, failed);
        });
  }
  void beginOp(int32_t op) override {
    setCurrentOp(op);
    gpuTimelineOp(op);
  }
  zeroc_rt_status_t synchronize() override {
    gpuTimelineOp(-1); // the ops stop here: the wait is no op's
    return gpuSynchronize();
  }
  zeroc_rt_status_t startTimeline() override { return gpuTimelineStart(); }
  zeroc_rt_status_t takeTimeline(std::vector<train::DeviceSpan> &spans) override {
    return gpuTimelineTake(spans);
  }

  std::string description;
};

/// What each rank tells the others after opening its GPU: whether it
/// could, its host and its GPU's UUID.
struct GpuRecord {
  uint64_t host;
  unsigned char uuid[16];
  unsigned char opened;
  unsigned char pad[7];
};
static_assert(sizeof(GpuRecord) == 32, "exchanged as bytes");

/// The first two ranks that share a GPU (same host, same UUID), or false.
bool findSharedGpu(const std::vector<GpuRecord> &all, int *a, int *b) {
  for (size_t i = 0; i < all.size(); ++i)
    for (size_t j = i + 1; j < all.size(); ++j)
      if (all[i].host == all[j].host &&
          std::memcmp(all[i].uuid, all[j].uuid, sizeof all[i].uuid) == 0) {
        *a = static_cast<int>(i);
        *b = static_cast<int>(j);
        return true;
      }
  return false;
}

class CudaPlatform final : public train::Platform {
public:
  /// Opens GPU (local rank mod the GPUs this process sees), then every rank
  /// learns every other's GPU: the ranks agree on whether any two share
  /// one, and so on the communicator (NCCL refuses a shared GPU). Every
  /// rank takes part in that exchange, one that could not open its GPU too.
  zeroc_rt_status_t open(const Args &args, const zeroc_rt_program_t &program,
                         zeroc_rt_comm_t *world) override {
    const int rank = zeroc_rt_comm_rank(world);
    const int size = zeroc_rt_comm_size(world);
    const int localRank = train::envInt(
        {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", "LOCAL_RANK"}, rank);
    const int gpus = gpuCount();
    zeroc_rt_status_t opened = nullptr;
    int count = 0;
    if (gpus <= 0)
      opened = ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                              "this program was compiled with --target cuda but this "
                              "process sees no GPU (check the driver and "
                              "CUDA_VISIBLE_DEVICES), or recompile without --target cuda");
    else
      opened = gpuOpen(localRank % gpus, &count, &gpu.description);
    GpuRecord mine{};
    mine.host = train::hostHash();
    mine.opened = opened ? 0 : 1;
    if (!opened)
      gpuUuid(mine.uuid);
    std::vector<GpuRecord> all(static_cast<size_t>(size));
    zeroc_rt_status_t told = zeroc_rt_comm_all_gather(world, &mine, all.data(), sizeof mine,
                                                      ZEROC_RT_DTYPE_U8);
    if (opened || told) {
      zeroc_rt_status_free(told);
      return opened ? opened : told;
    }
    // A rank that failed reports it; train's agreement names it to the rest.
    for (const GpuRecord &r : all)
      if (!r.opened)
        return nullptr;
    int a = 0, b = 0;
    shared = findSharedGpu(all, &a, &b);
    comm = args.comm.empty() ? (shared || !haveNccl() ? "mpi" : "nccl") : args.comm;
    if (comm == "nccl" && shared)
      return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                            "--comm nccl: ranks %d and %d share one GPU and NCCL needs "
                            "a GPU per rank; start at most one rank per GPU (check "
                            "CUDA_VISIBLE_DEVICES), or pass --comm mpi",
                            a, b);
    setOpNames(program.op_names, program.num_ops);
    setGemmTf32(program.tf32 != 0);
    if (rank == 0 && !args.quiet) {
      std::printf("zeroc: CUDA runtime on %s, collectives over %s%s%s\n",
                  gpu.description.c_str(), comm.c_str(),
                  args.comm.empty() && shared ? " (ranks share a GPU)" : "",
                  !program.tf32   ? ""
                  : gemmHasTf32() ? ", f32 matmuls on TF32 tensor cores (zeroc.tf32)"
                                  : ", zeroc.tf32 not emulated (f32 matmuls in IEEE f32)");
      std::fflush(stdout);
    }
    return nullptr;
  }
  train::Device &device() override { return gpu; }
  zeroc_rt_status_t openComm(const Args &, zeroc_rt_comm_t *world,
                             zeroc_rt_comm_t **out, bool *peersMayBeStuck) override {
    return comm == "nccl" ? openNcclComm(world, out, peersMayBeStuck)
                          : openStagedComm(world, out);
  }
  void closeComm(zeroc_rt_comm_t *c, zeroc_rt_comm_t *) override {
    zeroc_rt_status_free(zeroc_rt_comm_finalize(c));
  }

private:
  CudaDevice gpu;
  bool shared = false;
  std::string comm;
};

} // namespace
} // namespace zeroc_rt::cuda

extern "C" int zeroc_rt_cuda_train_process_main(int argc, char **argv,
                                                const zeroc_rt_program_t *program) {
  static zeroc_rt::cuda::CudaPlatform platform;
  int rc = zeroc_rt::train::trainMain(argc, argv, program, platform);
  zeroc_rt::cuda::gpuClose();
  return rc;
}

extern "C" zeroc_rt_status_t zeroc_rt_cuda_download(void *dst, const void *src, size_t bytes) {
  return zeroc_rt::cuda::gpuDownload(dst, src, bytes);
}

extern "C" zeroc_rt_status_t zeroc_rt_cuda_upload(void *dst, const void *src, size_t bytes) {
  return zeroc_rt::cuda::gpuUpload(dst, src, bytes);
}
