//===- gpu_emu.cc - The host emulation of gpu.h ---------------------------===//
//
// Host memory (256-byte aligned, zeroed), copies done at once (the
// streams and events: streams_emu.cc). Kernels run through compat.h's launch,
// one block after the other (simt_emu.cc runs a block's threads). The
// emulation remembers which blocks are "device memory" and fails a copy
// whose ends are on the wrong side, as cudaMemcpy would on a GPU, so that
// tests here catch a host pointer where device memory belongs (and
// isHostPointer answers as on a GPU).
//
//===----------------------------------------------------------------------===//

#include "gpu.h"
#include "streams_emu.h"
#include "zeroc_rt_cuda/compat.h"

#include "status_internal.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <vector>

namespace zeroc_rt::cuda {

namespace {
unsigned errorWords[2];
double scalars[8];

/// The emulated device allocations: start -> bytes.
std::map<const char *, size_t> &allocations() {
  static std::map<const char *, size_t> blocks;
  return blocks;
}

} // namespace

bool emuOnDevice(const void *p, size_t bytes) {
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

namespace {
zeroc_rt_status_t sides(const char *what, const void *dst, bool dstDevice,
                        const void *src, bool srcDevice, size_t bytes) {
  if (!bytes)
    return nullptr;
  if ((dst && emuOnDevice(dst, bytes) != dstDevice) ||
      (src && emuOnDevice(src, bytes) != srcDevice))
    return ZEROC_RT_ERROR(ZEROC_RT_INTERNAL,
                          "host emulation: %s of %zu bytes from %s memory to %s "
                          "memory got %s",
                          what, bytes, srcDevice ? "device" : "host", dstDevice ? "device" : "host",
                          emuOnDevice(dst, bytes) != dstDevice ? "a wrong destination"
                                                               : "a wrong source");
  return nullptr;
}

/// ZEROC_RT_CUDA_EMU_GPUS: how many GPUs the emulated machine has (0 when
/// unset: one, shared by every process), -1 when it is not a number from 1
/// to 64.
int emulatedGpus() {
  const char *v = std::getenv("ZEROC_RT_CUDA_EMU_GPUS");
  if (!v || !*v)
    return 0;
  char *end = nullptr;
  const long n = std::strtol(v, &end, 10);
  return *end || n < 1 || n > 64 ? -1 : static_cast<int>(n);
}

/// The machine's GPUs this process sees, in CUDA's numbering: with
/// ZEROC_RT_CUDA_EMU_GPUS set, those CUDA_VISIBLE_DEVICES lists (as zeroc
/// launch sets it from a host's slots), up to the first entry that names
/// none, CUDA's rule (a repeated or unknown number, a UUID); all of them
/// when it is unset. Without ZEROC_RT_CUDA_EMU_GPUS, GPU 0 alone, whatever
/// CUDA_VISIBLE_DEVICES says (a GPU machine's own value).
std::vector<int> visibleGpus(int gpus) {
  std::vector<int> visible;
  const char *list = std::getenv("CUDA_VISIBLE_DEVICES");
  if (gpus <= 0 || !list) {
    for (int g = 0; g < std::max(gpus, 1); ++g)
      visible.push_back(g);
    return visible;
  }
  for (const char *p = list; *p;) {
    char *end = nullptr;
    const long g = std::strtol(p, &end, 10);
    if (end == p || (*end && *end != ',') || g < 0 || g >= gpus ||
        std::find(visible.begin(), visible.end(), g) != visible.end())
      break;
    visible.push_back(static_cast<int>(g));
    p = *end ? end + 1 : end;
  }
  return visible;
}
int openedGpu = 0;

/// ZEROC_RT_CUDA_EMU_MEMORY: the emulated GPU's memory in bytes (0 when
/// unset: as much as the host gives), -1 when it is not a number from 1
/// to 2^50; so that a program's out-of-memory path runs without a GPU.
int64_t emulatedMemory() {
  const char *v = std::getenv("ZEROC_RT_CUDA_EMU_MEMORY");
  if (!v || !*v)
    return 0;
  char *end = nullptr;
  errno = 0;
  const long long bytes = std::strtoll(v, &end, 10);
  if (errno || *end || end == v || bytes < 1 || bytes > (1LL << 50))
    return -1;
  return bytes;
}
/// The bytes of the emulated GPU's blocks now (rounded as gpuMalloc
/// allocates them).
size_t emulatedUsed = 0;
} // namespace

zeroc_rt_status_t gpuOpen(int device, int *count, std::string *description) {
  const int gpus = emulatedGpus();
  if (gpus < 0)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "ZEROC_RT_CUDA_EMU_GPUS is '%s': the host emulation takes a "
                          "number of GPUs from 1 to 64",
                          std::getenv("ZEROC_RT_CUDA_EMU_GPUS"));
  if (emulatedMemory() < 0)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "ZEROC_RT_CUDA_EMU_MEMORY is '%s': the host emulation takes the "
                          "emulated GPU's memory in bytes, from 1 to 2^50",
                          std::getenv("ZEROC_RT_CUDA_EMU_MEMORY"));
  const std::vector<int> visible = visibleGpus(gpus);
  *count = static_cast<int>(visible.size());
  if (device < 0 || device >= *count)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "the host emulation shows %d device(s), not %d (set "
                          "ZEROC_RT_CUDA_EMU_GPUS, check CUDA_VISIBLE_DEVICES)",
                          *count, device + 1);
  openedGpu = visible[device];
  *description = "host emulation (no GPU)";
  if (gpus > 1)
    *description += ", emulated GPU " + std::to_string(openedGpu) + " of " + std::to_string(gpus);
  return nullptr;
}
int gpuCount() {
  const int gpus = emulatedGpus();
  return gpus < 0 ? 1 : static_cast<int>(visibleGpus(gpus).size()); // gpuOpen reports a bad value
}
/// As cudaDeviceReset: the device's queued work is done first.
void gpuClose() { zeroc_rt_status_free(emuDrainCommStream()); }
/// The processes on a host that open the machine's GPU n share it (one UUID
/// per n): with ZEROC_RT_CUDA_EMU_GPUS unset every rank's is GPU 0, so the
/// ranks share one GPU and take --comm mpi; with one emulated GPU per rank
/// they take NCCL (the emulated one, nccl_emu.cc), as on a machine with a
/// GPU per rank.
void gpuUuid(unsigned char out[16]) {
  static const char kEmulation[16] = "host emulation";
  std::memcpy(out, kEmulation, 16);
  out[15] = static_cast<unsigned char>(openedGpu);
}

zeroc_rt_status_t gpuMalloc(size_t bytes, const char *what, void **out) {
  const size_t rounded = (bytes + 255) / 256 * 256 + 256;
  if (const int64_t memory = emulatedMemory(); memory > 0) {
    const size_t total = static_cast<size_t>(memory);
    const size_t freeBytes = total - std::min(emulatedUsed, total);
    if (rounded > freeBytes)
      return gpuOutOfMemory(what, bytes, freeBytes, total);
  }
  void *p = std::aligned_alloc(256, rounded);
  if (!p)
    return ZEROC_RT_ERROR(ZEROC_RT_OUT_OF_MEMORY,
                          "out of memory: %s needs %zu bytes", what, bytes);
  std::memset(p, 0, rounded);
  allocations()[static_cast<const char *>(p)] = rounded;
  emulatedUsed += rounded;
  noteGpuMalloc(p, bytes);
  *out = p;
  return nullptr;
}
/// As cudaFree, which waits for the device: the communication stream's
/// held work may still use the block (a failure stays that stream's, for
/// its next wait to report).
void gpuFree(void *p) {
  zeroc_rt_status_free(emuDrainCommStream());
  noteGpuFree(p);
  auto block = allocations().find(static_cast<const char *>(p));
  if (block != allocations().end()) {
    emulatedUsed -= block->second;
    allocations().erase(block);
  }
  std::free(p);
}

zeroc_rt_status_t gpuUpload(void *dst, const void *src, size_t bytes) {
  emuNoteComputeWork();
  ZEROC_RT_RETURN_IF_ERROR(sides("an upload", dst, true, src, false, bytes));
  if (bytes)
    std::memmove(dst, src, bytes);
  return nullptr;
}
zeroc_rt_status_t gpuDownload(void *dst, const void *src, size_t bytes) {
  emuNoteComputeWork();
  ZEROC_RT_RETURN_IF_ERROR(sides("a download", dst, false, src, true, bytes));
  if (bytes)
    std::memmove(dst, src, bytes);
  return nullptr;
}
zeroc_rt_status_t gpuCopy(void *dst, const void *src, size_t bytes) {
  emuNoteComputeWork();
  ZEROC_RT_RETURN_IF_ERROR(sides("a device copy", dst, true, src, true, bytes));
  if (bytes && dst != src)
    std::memmove(dst, src, bytes);
  return nullptr;
}
zeroc_rt_status_t gpuZero(void *dst, size_t bytes) {
  emuNoteComputeWork();
  ZEROC_RT_RETURN_IF_ERROR(sides("a memset", dst, true, nullptr, false, bytes));
  if (bytes)
    std::memset(dst, 0, bytes);
  return nullptr;
}

bool isHostPointer(const void *p) { return !emuOnDevice(p, 1); }

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
