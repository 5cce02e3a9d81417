//===- gpu_cuda.cu - gpu.h on the CUDA runtime API ------------------------===//
//
// One GPU per process, a compute and a communication stream (non-blocking:
// they never synchronize with the legacy default stream), and the kernel
// error words in device memory.
//
//===----------------------------------------------------------------------===//

#include "zeroc_rt_cuda/compat.h"
#include "gpu.h"

#include "status_internal.h"

#include <cuda_runtime.h>

#include <cstring>
#include <thread>

namespace zeroc_rt::cuda {
namespace {
cudaStream_t compute = nullptr, comm = nullptr;
unsigned *errorWords = nullptr;
double *scalars = nullptr;
unsigned char uuid[16];
HostWaitWatcher *watcher = nullptr;

zeroc_rt_status_t cudaStatus(cudaError_t error, const char *what) {
  if (error == cudaSuccess)
    return nullptr;
  // The status reports it: a later launch's cudaGetLastError must not
  // report it again against its own kernel (a sticky error stays anyway).
  (void)cudaGetLastError();
  return ZEROC_RT_ERROR(ZEROC_RT_INTERNAL, "CUDA: %s: %s (%s)", what,
                        cudaGetErrorString(error), cudaGetErrorName(error));
}
/// cudaStreamSynchronize, or with a watcher: query the stream, yielding
/// between queries (what CUDA's default wait does when the host has fewer
/// free cores than GPUs), and poll the watcher every 64 queries.
zeroc_rt_status_t waitFor(cudaStream_t stream, const char *what) {
  if (!watcher)
    return cudaStatus(cudaStreamSynchronize(stream), what);
  watcher->begin();
  zeroc_rt_status_t status = nullptr;
  for (unsigned queries = 1;; ++queries) {
    const cudaError_t done = cudaStreamQuery(stream);
    if (done != cudaErrorNotReady) {
      status = cudaStatus(done, what);
      break;
    }
    if (queries % 64 == 0 && (status = watcher->poll()))
      break;
    std::this_thread::yield();
  }
  watcher->end();
  return status;
}
/// A kernel that does nothing: whether the GPU can run this library's
/// code (gpuOpen).
__global__ void probeKernel() {}
} // namespace

void setHostWaitWatcher(HostWaitWatcher *w) { watcher = w; }
void gpuUuid(unsigned char out[16]) { std::memcpy(out, uuid, sizeof uuid); }

zeroc_rt_status_t gpuStreamSynchronize(void *stream, const char *what) {
  return waitFor(stream ? static_cast<cudaStream_t>(stream) : compute, what);
}

void *computeStream() { return compute; }
void *commStream() { return comm; }

int gpuCount() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

zeroc_rt_status_t gpuOpen(int device, int *count, std::string *description) {
  *count = 0;
  ZEROC_RT_RETURN_IF_ERROR(cudaStatus(cudaGetDeviceCount(count),
                                      "counting the GPUs"));
  if (device < 0 || device >= *count)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "GPU %d does not exist: this process sees %d GPU%s "
                          "(CUDA_VISIBLE_DEVICES)",
                          device, *count, *count == 1 ? "" : "s");
  ZEROC_RT_RETURN_IF_ERROR(cudaStatus(cudaSetDevice(device), "selecting the GPU"));
  cudaDeviceProp prop{};
  ZEROC_RT_RETURN_IF_ERROR(
      cudaStatus(cudaGetDeviceProperties(&prop, device), "reading the GPU's properties"));
  static_assert(sizeof prop.uuid == sizeof uuid, "a CUDA UUID is 16 bytes");
  std::memcpy(uuid, &prop.uuid, sizeof uuid);
  *description = std::string(prop.name) + " (GPU " + std::to_string(device) +
                 ", " + std::to_string(prop.totalGlobalMem >> 30) + " GiB, sm_" +
                 std::to_string(prop.major) + std::to_string(prop.minor) + ")";
  // A GPU older than the architectures the program was built for (sm_80
  // and sm_90 by default) has no code to run: say so now, not at the
  // first op's launch after the setup.
  cudaFuncAttributes probe{};
  const cudaError_t image = cudaFuncGetAttributes(&probe, probeKernel);
  if (image == cudaErrorNoKernelImageForDevice || image == cudaErrorInvalidDeviceFunction) {
    (void)cudaGetLastError();
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: this program has no code for the GPU: it was built for %s "
                          "(the runtime's CMAKE_CUDA_ARCHITECTURES), and its attention and "
                          "16-bit kernels need sm_80 or later; train on such a GPU, or "
                          "compile with --target cpu",
                          description->c_str(), ZEROC_RT_CUDA_ARCHITECTURES);
  }
  ZEROC_RT_RETURN_IF_ERROR(cudaStatus(image, "reading a kernel's attributes"));
  ZEROC_RT_RETURN_IF_ERROR(cudaStatus(
      cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking), "creating a stream"));
  ZEROC_RT_RETURN_IF_ERROR(cudaStatus(
      cudaStreamCreateWithFlags(&comm, cudaStreamNonBlocking), "creating a stream"));
  ZEROC_RT_RETURN_IF_ERROR(cudaStatus(
      cudaMalloc(reinterpret_cast<void **>(&errorWords), 2 * sizeof(unsigned)),
      "allocating the kernel error words"));
  ZEROC_RT_RETURN_IF_ERROR(cudaStatus(
      cudaMalloc(reinterpret_cast<void **>(&scalars), 8 * sizeof(double)),
      "allocating the reduction results"));
  // On the compute stream, which does not wait for the legacy one.
  return cudaStatus(cudaMemsetAsync(errorWords, 0, 2 * sizeof(unsigned), compute),
                    "clearing the kernel error words");
}

void gpuClose() {
  if (errorWords)
    cudaFree(errorWords);
  if (scalars)
    cudaFree(scalars);
  scalars = nullptr;
  if (compute)
    cudaStreamDestroy(compute);
  if (comm)
    cudaStreamDestroy(comm);
  errorWords = nullptr;
  compute = comm = nullptr;
}

zeroc_rt_status_t gpuMalloc(size_t bytes, const char *what, void **out) {
  void *p = nullptr;
  cudaError_t error = cudaMalloc(&p, bytes ? bytes : 256);
  if (error == cudaErrorMemoryAllocation) {
    cudaGetLastError(); // not sticky: clear it
    size_t freeBytes = 0, total = 0;
    cudaMemGetInfo(&freeBytes, &total);
    return gpuOutOfMemory(what, bytes, freeBytes, total);
  }
  ZEROC_RT_RETURN_IF_ERROR(cudaStatus(error, what));
  // Zeroed like the host's buffers, in order before any use.
  if (zeroc_rt_status_t e =
          cudaStatus(cudaMemsetAsync(p, 0, bytes ? bytes : 256, compute), what)) {
    cudaFree(p);
    return e;
  }
  noteGpuMalloc(p, bytes);
  *out = p;
  return nullptr;
}

void gpuFree(void *p) {
  if (p) {
    noteGpuFree(p);
    zeroc_rt_status_free(waitFor(compute, "freeing GPU memory"));
    cudaFree(p);
  }
}

zeroc_rt_status_t gpuUpload(void *dst, const void *src, size_t bytes) {
  if (!bytes)
    return nullptr;
  // From pageable memory the call returns once `src` has been staged.
  return cudaStatus(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, compute),
                    "copying to the GPU");
}

zeroc_rt_status_t gpuDownload(void *dst, const void *src, size_t bytes) {
  if (!bytes)
    return nullptr;
  ZEROC_RT_RETURN_IF_ERROR(cudaStatus(
      cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, compute),
      "copying from the GPU"));
  return waitFor(compute, "copying from the GPU");
}

zeroc_rt_status_t gpuCopy(void *dst, const void *src, size_t bytes) {
  if (!bytes || dst == src)
    return nullptr;
  return cudaStatus(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, compute),
                    "copying on the GPU");
}

zeroc_rt_status_t gpuZero(void *dst, size_t bytes) {
  if (!bytes)
    return nullptr;
  return cudaStatus(cudaMemsetAsync(dst, 0, bytes, compute), "zeroing GPU memory");
}

zeroc_rt_status_t gpuSynchronize() {
  ZEROC_RT_RETURN_IF_ERROR(waitFor(compute, "running the step's kernels"));
  unsigned words[2] = {0, 0};
  ZEROC_RT_RETURN_IF_ERROR(cudaStatus(
      cudaMemcpy(words, errorWords, sizeof words, cudaMemcpyDeviceToHost),
      "reading the kernel error words"));
  if (words[0] == 0)
    return nullptr;
  // Cleared in stream order, before the kernels launched after this.
  cudaMemsetAsync(errorWords, 0, sizeof words, compute);
  return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s",
                        kernelErrorText(words[0], words[1]).c_str());
}

zeroc_rt_status_t gpuEventCreate(void **event) {
  cudaEvent_t e = nullptr;
  ZEROC_RT_RETURN_IF_ERROR(cudaStatus(
      cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "creating an event"));
  *event = e;
  return nullptr;
}
zeroc_rt_status_t gpuTimedEventCreate(void **event) {
  cudaEvent_t e = nullptr;
  ZEROC_RT_RETURN_IF_ERROR(cudaStatus(cudaEventCreate(&e), "creating a timed event"));
  *event = e;
  return nullptr;
}
zeroc_rt_status_t gpuEventElapsed(void *from, void *to, float *ms) {
  return cudaStatus(cudaEventElapsedTime(ms, static_cast<cudaEvent_t>(from),
                                         static_cast<cudaEvent_t>(to)),
                    "timing two events");
}
void gpuEventDestroy(void *event) {
  if (event)
    cudaEventDestroy(static_cast<cudaEvent_t>(event));
}
zeroc_rt_status_t gpuEventRecord(void *event, void *stream) {
  return cudaStatus(cudaEventRecord(static_cast<cudaEvent_t>(event),
                                    static_cast<cudaStream_t>(stream)),
                    "recording an event");
}
zeroc_rt_status_t gpuStreamWait(void *stream, void *event) {
  return cudaStatus(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream),
                                        static_cast<cudaEvent_t>(event), 0),
                    "ordering two streams");
}
zeroc_rt_status_t gpuEventSynchronize(void *event) {
  return cudaStatus(cudaEventSynchronize(static_cast<cudaEvent_t>(event)),
                    "waiting for an event");
}

bool isHostPointer(const void *p) {
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    cudaGetLastError();
    return true;
  }
  return attr.type == cudaMemoryTypeHost || attr.type == cudaMemoryTypeUnregistered;
}

zeroc_rt_status_t launchStatus(int error, const char *kernel) {
  return cudaStatus(static_cast<cudaError_t>(error), kernel);
}

unsigned *kernelErrorWord() { return errorWords; }
double *deviceScalars() { return scalars; }

} // namespace zeroc_rt::cuda
