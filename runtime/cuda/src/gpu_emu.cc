//===- gpu_emu.cc - The host emulation of gpu.h ---------------------------===//
//
// Host memory (256-byte aligned, zeroed), copies done at once, one stream,
// events that are always complete. Kernels run through compat.h's launch,
// one block after the other (simt_emu.cc runs a block's threads). The
// emulation remembers which blocks are "device memory" and fails a copy
// whose ends are on the wrong side, as cudaMemcpy would on a GPU, so that
// tests here catch a host pointer where device memory belongs (and
// isHostPointer answers as on a GPU).
//
//===----------------------------------------------------------------------===//

#include "zeroc_rt_cuda/compat.h"
#include "gpu.h"

#include "status_internal.h"

#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>

namespace zeroc_rt::cuda {

namespace {
unsigned errorWords[2];
double scalars[8];
int eventToken;

/// The emulated device allocations: start -> bytes.
std::map<const char *, size_t> &allocations() {
  static std::map<const char *, size_t> blocks;
  return blocks;
}

bool onDevice(const void *p, size_t bytes) {
  const char *c = static_cast<const char *>(p);
  if (c == reinterpret_cast<const char *>(errorWords) ||
      c == reinterpret_cast<const char *>(scalars))
    return true;
  auto &blocks = allocations();
  auto it = blocks.upper_bound(c);
  if (it == blocks.begin())
    return false;
  --it;
  return c >= it->first && c + bytes <= it->first + it->second;
}

zeroc_rt_status_t sides(const char *what, const void *dst, bool dstDevice,
                        const void *src, bool srcDevice, size_t bytes) {
  if (!bytes)
    return nullptr;
  if ((dst && onDevice(dst, bytes) != dstDevice) || (src && onDevice(src, bytes) != srcDevice))
    return ZEROC_RT_ERROR(ZEROC_RT_INTERNAL,
                          "host emulation: %s of %zu bytes from %s memory to %s "
                          "memory got %s",
                          what, bytes, srcDevice ? "device" : "host",
                          dstDevice ? "device" : "host",
                          onDevice(dst, bytes) != dstDevice ? "a wrong destination"
                                                            : "a wrong source");
  return nullptr;
}
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
/// Every process's "GPU" on a host is the same one.
void gpuUuid(unsigned char out[16]) {
  static const char kEmulation[16] = "host emulation";
  std::memcpy(out, kEmulation, 16);
}
/// Work is done when it is called: nothing to wait for or watch.
void setHostWaitWatcher(HostWaitWatcher *) {}
zeroc_rt_status_t gpuStreamSynchronize(void *, const char *) { return nullptr; }

zeroc_rt_status_t gpuMalloc(size_t bytes, const char *what, void **out) {
  const size_t rounded = (bytes + 255) / 256 * 256 + 256;
  void *p = std::aligned_alloc(256, rounded);
  if (!p)
    return ZEROC_RT_ERROR(ZEROC_RT_OUT_OF_MEMORY,
                          "out of memory: %s needs %zu bytes", what, bytes);
  std::memset(p, 0, rounded);
  allocations()[static_cast<const char *>(p)] = rounded;
  noteGpuMalloc(p, bytes);
  *out = p;
  return nullptr;
}
void gpuFree(void *p) {
  noteGpuFree(p);
  allocations().erase(static_cast<const char *>(p));
  std::free(p);
}

zeroc_rt_status_t gpuUpload(void *dst, const void *src, size_t bytes) {
  ZEROC_RT_RETURN_IF_ERROR(sides("an upload", dst, true, src, false, bytes));
  if (bytes)
    std::memmove(dst, src, bytes);
  return nullptr;
}
zeroc_rt_status_t gpuDownload(void *dst, const void *src, size_t bytes) {
  ZEROC_RT_RETURN_IF_ERROR(sides("a download", dst, false, src, true, bytes));
  if (bytes)
    std::memmove(dst, src, bytes);
  return nullptr;
}
zeroc_rt_status_t gpuCopy(void *dst, const void *src, size_t bytes) {
  ZEROC_RT_RETURN_IF_ERROR(sides("a device copy", dst, true, src, true, bytes));
  if (bytes && dst != src)
    std::memmove(dst, src, bytes);
  return nullptr;
}
zeroc_rt_status_t gpuZero(void *dst, size_t bytes) {
  ZEROC_RT_RETURN_IF_ERROR(sides("a memset", dst, true, nullptr, false, bytes));
  if (bytes)
    std::memset(dst, 0, bytes);
  return nullptr;
}

zeroc_rt_status_t gpuEventCreate(void **event) {
  *event = &eventToken;
  return nullptr;
}
// A timed event: the work before it is done when it is recorded, so it
// completes then.
struct TimedEvent {
  std::chrono::steady_clock::time_point at;
};
zeroc_rt_status_t gpuTimedEventCreate(void **event) {
  *event = new TimedEvent{std::chrono::steady_clock::now()};
  return nullptr;
}
zeroc_rt_status_t gpuEventElapsed(void *from, void *to, float *ms) {
  *ms = std::chrono::duration<float, std::milli>(static_cast<TimedEvent *>(to)->at -
                                                 static_cast<TimedEvent *>(from)->at)
            .count();
  return nullptr;
}
void gpuEventDestroy(void *event) {
  if (event != &eventToken)
    delete static_cast<TimedEvent *>(event);
}
zeroc_rt_status_t gpuEventRecord(void *event, void *) {
  if (event != &eventToken)
    static_cast<TimedEvent *>(event)->at = std::chrono::steady_clock::now();
  return nullptr;
}
zeroc_rt_status_t gpuStreamWait(void *, void *) { return nullptr; }
zeroc_rt_status_t gpuEventSynchronize(void *) { return nullptr; }
bool isHostPointer(const void *p) { return !onDevice(p, 1); }

zeroc_rt_status_t launchStatus(int error, const char *kernel) {
  if (!error)
    return nullptr;
  return ZEROC_RT_ERROR(ZEROC_RT_INTERNAL,
                        "host emulation: kernel %s breaks a rule of the GPU's: %s",
                        kernel, emu::violation());
}

unsigned *kernelErrorWord() { return errorWords; }
double *deviceScalars() { return scalars; }

zeroc_rt_status_t gpuSynchronize() {
  if (errorWords[0] == 0)
    return nullptr;
  const std::string text = kernelErrorText(errorWords[0], errorWords[1]);
  errorWords[0] = errorWords[1] = 0;
  return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s", text.c_str());
}

} // namespace zeroc_rt::cuda
