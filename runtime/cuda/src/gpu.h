//===- gpu.h - The CUDA runtime calls the CUDA backend makes -----*- C++ -*-===//
//
// Memory, copies, streams and events of the process's one GPU, as statuses
// that carry CUDA's error string. Two implementations: gpu_cuda.cu (the CUDA
// runtime API) and gpu_emu.cc (the host emulation: host memory, work done
// at once, events that are always complete).
//
// Streams: kernels and the engine's copies run in order on the compute
// stream; collectives run on the communication stream, ordered against the
// compute stream by events (comm_nccl.cu).
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_CUDA_SRC_GPU_H
#define ZEROC_RT_CUDA_SRC_GPU_H

#include "train/device.h"
#include "zeroc_rt/status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace zeroc_rt::cuda {

/// Selects GPU `device` (of the ones CUDA_VISIBLE_DEVICES shows) for this
/// process and creates its streams; *description names it ("NVIDIA H200,
/// 139 GiB" or "host emulation"). *count is the number of GPUs seen.
ZEROC_RT_MUST_USE zeroc_rt_status_t gpuOpen(int device, int *count,
                                            std::string *description);
/// The number of GPUs this process sees (0 on error).
int gpuCount();
void gpuClose();
/// The opened GPU's UUID (the host emulation's: one fixed value), which
/// tells the ranks that share a GPU apart from the ones that only see the
/// same device number through their own CUDA_VISIBLE_DEVICES.
void gpuUuid(unsigned char out[16]);

ZEROC_RT_MUST_USE zeroc_rt_status_t gpuMalloc(size_t bytes, const char *what,
                                              void **out);
void gpuFree(void *p);
/// The bytes gpuMalloc handed out and gpuFree did not take back yet, at
/// their peak so far (train/allocation_meter.h; gpu_common.cc keeps the
/// count for both builds through noteGpuMalloc and noteGpuFree).
size_t gpuMaxAllocated();
void noteGpuMalloc(const void *p, size_t bytes);
void noteGpuFree(const void *p);
/// The status of a gpuMalloc of `bytes` for `what` that the GPU's free
/// memory cannot hold, with its free and total bytes and what lowers a
/// rank's memory (both builds say the same).
zeroc_rt_status_t gpuOutOfMemory(const char *what, size_t bytes, size_t freeBytes,
                                 size_t totalBytes);

/// Ordered on the compute stream. upload returns when `src` may be reused;
/// download when `dst` holds the data.
ZEROC_RT_MUST_USE zeroc_rt_status_t gpuUpload(void *dst, const void *src,
                                              size_t bytes);
ZEROC_RT_MUST_USE zeroc_rt_status_t gpuDownload(void *dst, const void *src,
                                                size_t bytes);
ZEROC_RT_MUST_USE zeroc_rt_status_t gpuCopy(void *dst, const void *src,
                                            size_t bytes);
ZEROC_RT_MUST_USE zeroc_rt_status_t gpuZero(void *dst, size_t bytes);
/// Waits for the compute stream; reports an asynchronous CUDA error and the
/// first error a kernel flagged (see kernelError).
ZEROC_RT_MUST_USE zeroc_rt_status_t gpuSynchronize();

/// Waits for `stream` (the compute stream when NULL) like gpuSynchronize,
/// without reading the kernel error words.
ZEROC_RT_MUST_USE zeroc_rt_status_t gpuStreamSynchronize(void *stream,
                                                         const char *what);

/// What every host wait for the GPU also watches (gpuDownload,
/// gpuSynchronize, gpuStreamSynchronize, gpuFree). A collective whose peer
/// died never completes, and neither does a stream that waits for it: the
/// NCCL communicator sets a watcher that reports NCCL's asynchronous error
/// instead (and aborts the communicator), and marks the wait for the
/// --collective-timeout watchdog.
class HostWaitWatcher {
public:
  virtual ~HostWaitWatcher() = default;
  virtual void begin() = 0;
  /// Called now and then while the GPU is not done; a status ends the wait.
  virtual zeroc_rt_status_t poll() = 0;
  virtual void end() = 0;
};
/// NULL: no watcher (a plain wait).
void setHostWaitWatcher(HostWaitWatcher *watcher);

/// The compute stream (cudaStream_t; NULL when emulated).
void *computeStream();
/// The communication stream (cudaStream_t; NULL when emulated).
void *commStream();
/// Events: `record` on a stream, make a stream wait for one, block on one.
ZEROC_RT_MUST_USE zeroc_rt_status_t gpuEventCreate(void **event);
void gpuEventDestroy(void *event);
ZEROC_RT_MUST_USE zeroc_rt_status_t gpuEventRecord(void *event, void *stream);
ZEROC_RT_MUST_USE zeroc_rt_status_t gpuStreamWait(void *stream, void *event);
ZEROC_RT_MUST_USE zeroc_rt_status_t gpuEventSynchronize(void *event);
/// An event that keeps the time it completes at (--trace's GPU timeline,
/// gpu_timeline.cc), and the milliseconds from `from` to `to`, both
/// recorded and complete.
ZEROC_RT_MUST_USE zeroc_rt_status_t gpuTimedEventCreate(void **event);
ZEROC_RT_MUST_USE zeroc_rt_status_t gpuEventElapsed(void *from, void *to, float *ms);

/// --trace's GPU timeline (gpu_timeline.cc): while it is on, a timed event
/// on the compute stream where each op starts and on the communication
/// stream before and after each collective; once they complete, their
/// times as spans on the host's steady clock (the timeline's origin is an
/// event recorded on an idle GPU, at a host time).
ZEROC_RT_MUST_USE zeroc_rt_status_t gpuTimelineStart();
/// The compute stream starts op `op` of setOpNames' names here (-1: the
/// ops stop here: before a wait for the GPU, the compute stream's wait for
/// a collective, the end of a micro-step).
void gpuTimelineOp(int32_t op);
/// Collective `name` (a static string) starts (`begin`) or ends here on
/// the communication stream.
void gpuTimelineCollective(const char *name, bool begin);
/// Waits for the marks recorded so far and appends their spans to `out`
/// (an op still open at the last mark stays open); the first error in
/// recording a mark, if any.
ZEROC_RT_MUST_USE zeroc_rt_status_t gpuTimelineTake(std::vector<train::DeviceSpan> &out);

/// Eight doubles of device memory for one reduction's result at a time
/// (sum_squares, has_inf_or_nan), read back by the call that made it.
double *deviceScalars();

/// A device buffer of at least `bytes` for one kernel call's temporaries
/// (kept and grown; the previous contents are lost when it grows).
ZEROC_RT_MUST_USE zeroc_rt_status_t gpuScratch(size_t bytes, void **out);

/// Whether `p` is memory the host allocated (not the GPU's).
bool isHostPointer(const void *p);

/// A launch's CUDA error as a status naming the kernel (NULL when fine).
ZEROC_RT_MUST_USE zeroc_rt_status_t launchStatus(int error, const char *kernel);

/// Kernels that find bad data (an index out of range) cannot return a
/// status: they set the word at kernelErrorWord() (device memory, 0 when
/// fine) to their error code, and gpuSynchronize reports the first one, with
/// the op that was running (setCurrentOp, from the generated code's trace
/// marks).
/// Two words: the error code (1: an index out of range) and the op.
unsigned *kernelErrorWord();
/// The program's op names (program.op_names) and the op now running.
void setOpNames(const char *const *names, int32_t count);
void setCurrentOp(int32_t op);
/// Op `op`'s name, or NULL.
const char *opName(int32_t op);
/// The op index to pass to a kernel that may flag an error.
int32_t currentOp();
/// "an index is out of range in op graph.gather /wte/Gather" for the two
/// words a kernel set.
std::string kernelErrorText(unsigned code, unsigned op);

} // namespace zeroc_rt::cuda

#endif // ZEROC_RT_CUDA_SRC_GPU_H
