//===- gpu_emu.cc - The host emulation of gpu.h ---------------------------===//
//
// Host memory (64-byte aligned, zeroed), copies done at once, one stream,
// events that are always complete. Kernels run through compat.h's launch,
// one block after the other.
//
//===----------------------------------------------------------------------===//

#include "compat.h"
#include "gpu.h"

#include "status_internal.h"

#include <cstdlib>
#include <cstring>

namespace zeroc_rt::cuda {

namespace emu {
thread_local int64_t currentBlock = 0, currentGrid = 1;
} // namespace emu

namespace {
unsigned errorWords[2];
double scalars[8];
int eventToken;
} // namespace

void *computeStream() { return nullptr; }
void *commStream() { return nullptr; }

zeroc_rt_status_t gpuOpen(int device, int *count, std::string *description) {
  *count = 1;
  if (device != 0)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "the host emulation has one device, not %d",
                          device + 1);
  *description = "host emulation (no GPU)";
  return nullptr;
}
int gpuCount() { return 1; }
void gpuClose() {}

zeroc_rt_status_t gpuMalloc(size_t bytes, const char *what, void **out) {
  const size_t rounded = (bytes + 255) / 256 * 256 + 256;
  void *p = std::aligned_alloc(256, rounded);
  if (!p)
    return ZEROC_RT_ERROR(ZEROC_RT_OUT_OF_MEMORY,
                          "out of memory: %s needs %zu bytes", what, bytes);
  std::memset(p, 0, rounded);
  *out = p;
  return nullptr;
}
void gpuFree(void *p) { std::free(p); }

zeroc_rt_status_t gpuUpload(void *dst, const void *src, size_t bytes) {
  return gpuCopy(dst, src, bytes);
}
zeroc_rt_status_t gpuDownload(void *dst, const void *src, size_t bytes) {
  return gpuCopy(dst, src, bytes);
}
zeroc_rt_status_t gpuCopy(void *dst, const void *src, size_t bytes) {
  if (bytes && dst != src)
    std::memmove(dst, src, bytes);
  return nullptr;
}
zeroc_rt_status_t gpuZero(void *dst, size_t bytes) {
  if (bytes)
    std::memset(dst, 0, bytes);
  return nullptr;
}

zeroc_rt_status_t gpuEventCreate(void **event) {
  *event = &eventToken;
  return nullptr;
}
void gpuEventDestroy(void *) {}
zeroc_rt_status_t gpuEventRecord(void *, void *) { return nullptr; }
zeroc_rt_status_t gpuStreamWait(void *, void *) { return nullptr; }
zeroc_rt_status_t gpuEventSynchronize(void *) { return nullptr; }
bool isHostPointer(const void *) { return false; }

zeroc_rt_status_t launchStatus(int, const char *) { return nullptr; }

unsigned *kernelErrorWord() { return errorWords; }
double *deviceScalars() { return scalars; }

zeroc_rt_status_t gpuSynchronize() {
  if (errorWords[0] == 0)
    return nullptr;
  const std::string text = kernelErrorText(errorWords[0], errorWords[1]);
  errorWords[0] = errorWords[1] = 0;
  return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s", text.c_str());
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
