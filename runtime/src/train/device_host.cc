//===- device_host.cc - The host as the engine's device and platform ------===//
//
// CPU programs keep the training state in host memory and run the engine's
// element work with the zeroc_rt_k_* kernels; their collectives run on the
// MPI world communicator itself.
//
//===----------------------------------------------------------------------===//

#include "train/allocation_meter.h"
#include "train/device.h"
#include "train/train_internal.h"
#include "zeroc_rt/contract.h"

#include "status_internal.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace zeroc_rt::train {
namespace {

class HostDevice final : public Device {
public:
  std::string describe() const override { return "host"; }
  bool hostMemory() const override { return true; }

  zeroc_rt_status_t allocate(size_t bytes, const char *what,
                             void **out) override {
    AlignedBuffer buffer;
    ZEROC_RT_RETURN_IF_ERROR(buffer.allocate(bytes, what));
    *out = buffer.release();
    meter.allocated(*out, bytes);
    return nullptr;
  }
  void release(void *p) override {
    meter.released(p);
    std::free(p);
  }
  size_t maxAllocatedBytes() const override { return meter.peak(); }

  zeroc_rt_status_t upload(void *dst, const void *src, size_t bytes) override {
    return copy(dst, src, bytes);
  }
  zeroc_rt_status_t download(void *dst, const void *src,
                             size_t bytes) override {
    return copy(dst, src, bytes);
  }
  zeroc_rt_status_t copy(void *dst, const void *src, size_t bytes) override {
    if (bytes && dst != src)
      std::memmove(dst, src, bytes);
    return nullptr;
  }
  zeroc_rt_status_t zero(void *dst, size_t bytes) override {
    if (bytes)
      std::memset(dst, 0, bytes);
    return nullptr;
  }

  zeroc_rt_status_t convert(zeroc_rt_dtype_t from, const void *src,
                            zeroc_rt_dtype_t to, void *dst, int64_t count,
                            double scale) override {
    return zeroc_rt_k_convert(from, src, to, dst, count, scale);
  }
  zeroc_rt_status_t scale(zeroc_rt_dtype_t dtype, void *data, int64_t count,
                          double factor) override {
    return zeroc_rt_k_scale(dtype, data, count, factor);
  }
  zeroc_rt_status_t accumulate(zeroc_rt_dtype_t dtype, const void *src,
                               void *dst, int64_t count) override {
    return zeroc_rt_k_accumulate(dtype, src, dst, count);
  }
  zeroc_rt_status_t accumulateWidening(zeroc_rt_dtype_t from, const void *src,
                                       zeroc_rt_dtype_t to, void *dst,
                                       int64_t count) override {
    return zeroc_rt_k_accumulate_widening(from, src, to, dst, count);
  }
  zeroc_rt_status_t adamStep(zeroc_rt_dtype_t dtype, void *param,
                             const void *grad, void *expAvg, void *expAvgSq,
                             int64_t count, double lr, double beta1,
                             double beta2, double eps, double weightDecay,
                             int adamW, int biasCorrection,
                             int64_t step) override {
    return zeroc_rt_k_adam_step(dtype, param, grad, expAvg, expAvgSq, count, lr,
                                beta1, beta2, eps, weightDecay, adamW,
                                biasCorrection, step);
  }
  zeroc_rt_status_t sgdStep(zeroc_rt_dtype_t dtype, void *param,
                            const void *grad, void *momentumBuf, int64_t count,
                            double lr, double momentum, double weightDecay,
                            double dampening, int nesterov,
                            int64_t step) override {
    return zeroc_rt_k_sgd_step(dtype, param, grad, momentumBuf, count, lr,
                               momentum, weightDecay, dampening, nesterov, step);
  }
  zeroc_rt_status_t synchronize() override { return nullptr; }

private:
  AllocationMeter meter;
};

class HostPlatform final : public Platform {
public:
  zeroc_rt_status_t open(const Args &args, const zeroc_rt_program_t &,
                         zeroc_rt_comm_t *) override {
    if (!args.comm.empty() && args.comm != "mpi")
      return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                            "--comm %s: a CPU program's collectives run over "
                            "MPI (--comm mpi); --comm nccl is for programs "
                            "compiled with --target cuda",
                            args.comm.c_str());
    return nullptr;
  }
  Device &device() override { return hostDevice(); }
  zeroc_rt_status_t openComm(const Args &, zeroc_rt_comm_t *world,
                             zeroc_rt_comm_t **out, bool *) override {
    *out = world;
    return nullptr;
  }
  void closeComm(zeroc_rt_comm_t *, zeroc_rt_comm_t *) override {}
};

} // namespace

namespace {

zeroc_rt_status_t tensorError(zeroc_rt_status_t status, const char *what, const UpdateTensor &t) {
  return ZEROC_RT_TRAIN_WRAP(status, format("%s of parameter '%s': ", what, t.name));
}

/// `p` advanced by `first` elements of `dtype` (NULL stays NULL).
void *elementAt(void *p, int64_t first, zeroc_rt_dtype_t dtype) {
  return p ? static_cast<char *>(p) + first * static_cast<int64_t>(zeroc_rt_dtype_size(dtype))
           : nullptr;
}

void advanceState(AdamTensor &t, int64_t first) {
  t.expAvg = elementAt(t.expAvg, first, t.dtype);
  t.expAvgSq = elementAt(t.expAvgSq, first, t.dtype);
}

void advanceState(SgdTensor &t, int64_t first) {
  t.momentumBuf = elementAt(t.momentumBuf, first, t.dtype);
}

/// Elements [first, first + count) of `t`'s update: every update is
/// elementwise, so its parts update the whole.
template <typename Tensor> Tensor part(const Tensor &t, int64_t first, int64_t count) {
  Tensor p = t;
  p.grad = elementAt(t.grad, first, t.gradDtype);
  p.param = elementAt(t.param, first, t.dtype);
  p.rounded = elementAt(t.rounded, first, t.roundedDtype);
  advanceState(p, first);
  p.count = count;
  return p;
}

/// A multi-tensor step one tensor at a time: the gradient times the
/// factor (converted into `scratch` when the dtypes differ, at most
/// ZEROC_RT_OPTIMIZER_CHUNK_ELEMENTS at a time, else scaled in place),
/// `update(tensor, gradient)`, the master rounded.
template <typename Tensor, typename Update>
zeroc_rt_status_t eachTensor(Device &device, const Tensor *tensors, int64_t count, double factor,
                             void *scratch, Update &&update) {
  for (int64_t i = 0; i < count; ++i) {
    const Tensor &t = tensors[i];
    const bool converted = t.gradDtype != t.dtype;
    const int64_t chunk = converted ? ZEROC_RT_OPTIMIZER_CHUNK_ELEMENTS : t.count;
    for (int64_t first = 0; first < t.count; first += chunk) {
      const Tensor p = part(t, first, std::min(chunk, t.count - first));
      void *g = converted ? scratch : p.grad;
      zeroc_rt_status_t status =
          converted ? device.convert(p.gradDtype, p.grad, p.dtype, g, p.count, factor)
                    : device.scale(p.gradDtype, g, p.count, factor);
      if (status)
        return tensorError(status, "gradient scaling", t);
      if ((status = update(p, g)))
        return tensorError(status, "optimizer update", t);
      if (p.rounded &&
          (status = device.convert(p.dtype, p.param, p.roundedDtype, p.rounded, p.count, 1.0)))
        return tensorError(status, "rounding the master copy", t);
    }
  }
  return nullptr;
}

} // namespace

zeroc_rt_status_t Device::adamStepMulti(const AdamTensor *tensors, int64_t count,
                                        const AdamHyper &h, void *scratch) {
  return eachTensor(*this, tensors, count, h.factor, scratch, [&](const AdamTensor &t, void *g) {
    return adamStep(t.dtype, t.param, g, t.expAvg, t.expAvgSq, t.count, h.lr, h.beta1, h.beta2,
                    h.eps, h.weightDecay, h.adamW, h.biasCorrection, h.step);
  });
}

zeroc_rt_status_t Device::sgdStepMulti(const SgdTensor *tensors, int64_t count, const SgdHyper &h,
                                       void *scratch) {
  return eachTensor(*this, tensors, count, h.factor, scratch, [&](const SgdTensor &t, void *g) {
    return sgdStep(t.dtype, t.param, g, t.momentumBuf, t.count, h.lr, h.momentum, h.weightDecay,
                   h.dampening, h.nesterov, h.step);
  });
}

Device &hostDevice() {
  static HostDevice device;
  return device;
}

Platform &hostPlatform() {
  static HostPlatform platform;
  return platform;
}

} // namespace zeroc_rt::train
