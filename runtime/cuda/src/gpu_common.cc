//===- gpu_common.cc - What both builds of gpu.h share --------------------===//
//
// Which op a kernel error belongs to: the generated code marks each op
// (zeroc_rt_engine_trace_op); kernels that can find bad data get the
// running op's index and store it with their error code, which
// gpuSynchronize turns into one message. The kernels' scratch buffer, the
// status of a generated kernel's launch, and the count of gpuMalloc's
// bytes.
//
//===----------------------------------------------------------------------===//

#include "gpu.h"

#include "status_internal.h"
#include "train/allocation_meter.h"
#include "zeroc_rt_cuda/fused.h"

namespace zeroc_rt::cuda {
namespace {
const char *const *opNames = nullptr;
int32_t numOps = 0, runningOp = -1;

train::AllocationMeter &meter() {
  static train::AllocationMeter m;
  return m;
}
} // namespace

void noteGpuMalloc(const void *p, size_t bytes) { meter().allocated(p, bytes); }
void noteGpuFree(const void *p) { meter().released(p); }
size_t gpuMaxAllocated() { return meter().peak(); }

zeroc_rt_status_t gpuOutOfMemory(const char *what, size_t bytes, size_t freeBytes,
                                 size_t totalBytes) {
  return ZEROC_RT_ERROR(ZEROC_RT_OUT_OF_MEMORY,
                        "out of GPU memory for %s: %zu bytes, and %zu of the GPU's %zu are "
                        "free (plan.json's allocated_bytes is what a rank allocates; a higher "
                        "ZeRO stage, a smaller train_micro_batch_size_per_gpu, more ranks or "
                        "a GPU of its own per rank lower it)",
                        what, bytes, freeBytes, totalBytes);
}

void setOpNames(const char *const *names, int32_t count) {
  opNames = names;
  numOps = count;
}
void setCurrentOp(int32_t op) { runningOp = op; }
const char *opName(int32_t op) {
  return opNames && op >= 0 && op < numOps ? opNames[op] : nullptr;
}
int32_t currentOp() { return runningOp; }

std::string kernelErrorText(unsigned code, unsigned op) {
  // The codes of kernels/common.h.
  std::string what;
  switch (code) {
  case 1: what = "an index is out of range"; break;
  case 2: what = "an integer division by zero"; break;
  case 3: what = "an integer power with a negative exponent"; break;
  case 4: what = "two indices of a scatter without reduction address one element or slice (reduction none needs distinct indices)"; break;
  default: what = "a kernel found bad data (code " + std::to_string(code) + ")";
  }
  if (opNames && op < static_cast<unsigned>(numOps) && opNames[op])
    return what + " in op " + opNames[op];
  return what;
}

zeroc_rt_status_t gpuScratch(size_t bytes, void **out) {
  static void *buffer = nullptr;
  static size_t size = 0;
  if (bytes > size) {
    gpuFree(buffer);
    buffer = nullptr;
    size = 0;
    ZEROC_RT_RETURN_IF_ERROR(gpuMalloc(bytes, "a kernel's scratch", &buffer));
    size = bytes;
  }
  *out = buffer;
  return nullptr;
}

} // namespace zeroc_rt::cuda

zeroc_rt_status_t zeroc_rt_cuda_launch_status(int error, const char *kernel) {
  return zeroc_rt::cuda::launchStatus(error, kernel);
}

zeroc_rt_status_t zeroc_rt_cuda_kernel_scratch(size_t bytes, void **out) {
  if (!out)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_cuda_kernel_scratch: out is NULL");
  return zeroc_rt::cuda::gpuScratch(bytes ? bytes : 1, out);
}
