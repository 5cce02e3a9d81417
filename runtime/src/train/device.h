//===- device.h - Where the engine keeps the training state ------*- C++ -*-===//
//
// The engine's memory and the element work it does on it (initial copies,
// gradient accumulation, the optimizer updates, saving) go through one
// Device: the host (memory from aligned_alloc, zeroc_rt_k_* kernels) for CPU
// programs, a GPU for CUDA programs (runtime/cuda, its own library). A
// Platform pairs the device with the communicator the generated code's
// collectives run on (their buffers are the device's memory). Nothing here
// decides anything about ZeRO: the engine calls the device where it used to
// touch memory itself.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_SRC_TRAIN_DEVICE_H
#define ZEROC_RT_SRC_TRAIN_DEVICE_H

#include "zeroc_rt/comm.h"
#include "zeroc_rt/dtype.h"
#include "zeroc_rt/status.h"
#include "zeroc_rt/train.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace zeroc_rt::train {

/// One parameter of a multi-tensor optimizer step (Device::adamStepMulti,
/// Device::sgdStepMulti): what every optimizer reads and writes.
struct UpdateTensor {
  const char *name; ///< the parameter, for messages
  /// `count` gradient elements, multiplied by the factor into `dtype`.
  zeroc_rt_dtype_t gradDtype;
  void *grad;
  /// What the optimizer updates (the f32 master of a 16-bit parameter, or
  /// the parameter) and its state, all `dtype` (f32 or f64).
  zeroc_rt_dtype_t dtype;
  void *param;
  /// The 16-bit parameter the master is rounded into, or NULL.
  zeroc_rt_dtype_t roundedDtype;
  void *rounded;
  int64_t count;
};

/// One parameter of a multi-tensor Adam step, with its m and v.
struct AdamTensor : UpdateTensor {
  void *expAvg;
  void *expAvgSq;
};

/// The scalars every tensor of a multi-tensor Adam step shares.
struct AdamHyper {
  double factor, lr, beta1, beta2, eps, weightDecay;
  int adamW, biasCorrection;
  int64_t step;
};

/// One parameter of a multi-tensor SGD step, with its momentum buffer
/// (NULL without momentum).
struct SgdTensor : UpdateTensor {
  void *momentumBuf;
};

/// The scalars every tensor of a multi-tensor SGD step shares.
struct SgdHyper {
  double factor, lr, momentum, dampening, weightDecay;
  int nesterov;
  int64_t step;
};

/// A span of a device's own timeline (Device::takeTimeline): on its
/// compute (stream 0) or communication (stream 1) queue, named by a static
/// string or one of the program's op names, on the host's steady clock.
struct DeviceSpan {
  int stream;
  const char *name;
  std::chrono::steady_clock::time_point begin, end;
};

class Device {
public:
  virtual ~Device() = default;
  /// "host" or the GPU's description, for messages.
  virtual std::string describe() const = 0;
  /// Whether the host can read and write the device's memory directly.
  virtual bool hostMemory() const = 0;

  /// `bytes` of zeroed memory, at least 64-byte aligned; never NULL on
  /// success, even for 0 bytes. OUT_OF_MEMORY names `what`.
  ZEROC_RT_MUST_USE virtual zeroc_rt_status_t
  allocate(size_t bytes, const char *what, void **out) = 0;
  virtual void release(void *p) = 0;
  /// The bytes allocate() handed out and not yet released, at their
  /// peak so far (allocation_meter.h).
  virtual size_t maxAllocatedBytes() const = 0;

  /// Host to device; `src` may be reused when it returns.
  ZEROC_RT_MUST_USE virtual zeroc_rt_status_t
  upload(void *dst, const void *src, size_t bytes) = 0;
  /// Device to host, after all work queued before it; complete on return.
  ZEROC_RT_MUST_USE virtual zeroc_rt_status_t
  download(void *dst, const void *src, size_t bytes) = 0;
  ZEROC_RT_MUST_USE virtual zeroc_rt_status_t copy(void *dst, const void *src,
                                                   size_t bytes) = 0;
  ZEROC_RT_MUST_USE virtual zeroc_rt_status_t zero(void *dst, size_t bytes) = 0;

  // zeroc_rt_k_convert, _scale, _accumulate, _accumulate_widening,
  // _adam_step and _sgd_step (zeroc_rt/kernels.h) on device memory.
  ZEROC_RT_MUST_USE virtual zeroc_rt_status_t
  convert(zeroc_rt_dtype_t from, const void *src, zeroc_rt_dtype_t to,
          void *dst, int64_t count, double scale) = 0;
  ZEROC_RT_MUST_USE virtual zeroc_rt_status_t
  scale(zeroc_rt_dtype_t dtype, void *data, int64_t count, double factor) = 0;
  ZEROC_RT_MUST_USE virtual zeroc_rt_status_t
  accumulate(zeroc_rt_dtype_t dtype, const void *src, void *dst,
             int64_t count) = 0;
  ZEROC_RT_MUST_USE virtual zeroc_rt_status_t
  accumulateWidening(zeroc_rt_dtype_t from, const void *src,
                     zeroc_rt_dtype_t to, void *dst, int64_t count) = 0;
  ZEROC_RT_MUST_USE virtual zeroc_rt_status_t
  adamStep(zeroc_rt_dtype_t dtype, void *param, const void *grad, void *expAvg,
           void *expAvgSq, int64_t count, double lr, double beta1, double beta2,
           double eps, double weightDecay, int adamW, int biasCorrection,
           int64_t step) = 0;
  ZEROC_RT_MUST_USE virtual zeroc_rt_status_t
  sgdStep(zeroc_rt_dtype_t dtype, void *param, const void *grad,
          void *momentumBuf, int64_t count, double lr, double momentum,
          double weightDecay, double dampening, int nesterov,
          int64_t step) = 0;

  /// Adam on `count` tensors, each as one zeroc_rt_engine_adam_update:
  /// its gradient times the factor (converted into `scratch`, which holds
  /// zeroc_rt_optimizer_scratch_bytes of the largest such tensor, a part
  /// at a time, when the dtypes differ, else scaled in place), adamStep,
  /// the rounding. A GPU overrides it with one
  /// pass that reads the gradients and writes no copy. Errors name the
  /// parameter.
  ZEROC_RT_MUST_USE virtual zeroc_rt_status_t
  adamStepMulti(const AdamTensor *tensors, int64_t count, const AdamHyper &h,
                void *scratch);
  /// SGD on `count` tensors, each as one zeroc_rt_engine_sgd_update, as
  /// adamStepMulti is Adam's.
  ZEROC_RT_MUST_USE virtual zeroc_rt_status_t sgdStepMulti(const SgdTensor *tensors, int64_t count,
                                                           const SgdHyper &h, void *scratch);

  /// The generated code starts op `op` of program.op_names (its trace
  /// mark): a device names it in the errors its kernels flag (-1: no op
  /// runs now, as between micro-steps).
  virtual void beginOp(int32_t op) { (void)op; }

  /// Waits for the work queued so far and reports what failed in it.
  ZEROC_RT_MUST_USE virtual zeroc_rt_status_t synchronize() = 0;

  /// --trace: the device's own timeline, where its work runs later than the
  /// host queues it (a GPU's compute and communication streams), from
  /// startTimeline on; takeTimeline appends the spans completed so far.
  /// The host runs its work as it is queued and keeps none.
  ZEROC_RT_MUST_USE virtual zeroc_rt_status_t startTimeline() { return nullptr; }
  ZEROC_RT_MUST_USE virtual zeroc_rt_status_t takeTimeline(std::vector<DeviceSpan> &spans) {
    (void)spans;
    return nullptr;
  }
};

/// The host: aligned_alloc'ed memory and the CPU kernels.
Device &hostDevice();

/// A block of a device's memory, zeroed, released with the buffer.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  DeviceBuffer(DeviceBuffer &&other) noexcept { *this = std::move(other); }
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept {
    if (this != &other) {
      reset();
      dev = other.dev;
      ptr = other.ptr;
      sizeBytes = other.sizeBytes;
      other.dev = nullptr;
      other.ptr = nullptr;
      other.sizeBytes = 0;
    }
    return *this;
  }

  ZEROC_RT_MUST_USE zeroc_rt_status_t allocate(Device &device, size_t bytes,
                                               const char *what) {
    reset();
    void *p = nullptr;
    if (zeroc_rt_status_t status = device.allocate(bytes, what, &p))
      return status;
    dev = &device;
    ptr = p;
    sizeBytes = bytes;
    return nullptr;
  }
  void reset() {
    if (dev && ptr)
      dev->release(ptr);
    dev = nullptr;
    ptr = nullptr;
    sizeBytes = 0;
  }
  void *data() const { return ptr; }
  char *bytes() const { return static_cast<char *>(ptr); }
  size_t size() const { return sizeBytes; }

private:
  Device *dev = nullptr;
  void *ptr = nullptr;
  size_t sizeBytes = 0;
};

struct Args;

/// What a target's runtime gives the engine: its device and the
/// communicator of the generated code's collectives.
class Platform {
public:
  virtual ~Platform() = default;
  /// Called once MPI is up, before anything is allocated: picks and
  /// initializes the device (a CUDA platform picks its GPU from the local
  /// rank). Errors are this rank's.
  ZEROC_RT_MUST_USE virtual zeroc_rt_status_t
  open(const Args &args, const zeroc_rt_program_t &program,
       zeroc_rt_comm_t *world) = 0;
  virtual Device &device() = 0;
  /// The communicator over `world`'s ranks whose collectives move the
  /// device's memory: `world` itself on the host. A collective call. On a
  /// failure that may leave other ranks blocked outside `world` (in NCCL's
  /// own bootstrap), sets *peersMayBeStuck: the ranks cannot then agree on
  /// the failure over `world`, and this rank ends without MPI_Finalize so
  /// that the launcher ends the job.
  ZEROC_RT_MUST_USE virtual zeroc_rt_status_t
  openComm(const Args &args, zeroc_rt_comm_t *world, zeroc_rt_comm_t **out,
           bool *peersMayBeStuck) = 0;
  /// Releases what openComm made (not `world`).
  virtual void closeComm(zeroc_rt_comm_t *comm, zeroc_rt_comm_t *world) = 0;
};

/// The CPU target's platform: the host and the MPI world communicator.
Platform &hostPlatform();

/// zeroc_rt_train_main on `platform`.
int trainMain(int argc, char **argv, const zeroc_rt_program_t *program,
              Platform &platform);

} // namespace zeroc_rt::train

#endif // ZEROC_RT_SRC_TRAIN_DEVICE_H
