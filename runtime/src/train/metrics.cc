//===- metrics.cc - JSONL step log and console lines ------------*- C++ -*-===//
//
// Rank 0 only. --log-jsonl FILE is truncated at start and gets one object per
// optimizer step, flushed per line:
//   {"step": 1, "loss": 0.51234567890123456, "lr": 0.001, "grad_norm": 0.25,
//    "loss_scale": 65536.0, "skipped": false, "time_ms": 1.234,
//    "samples_per_s": 6482.1, "time_fwd_ms": 0.5, "time_bwd_ms": 0.6,
//    "time_bwd_inner_ms": 0.55, "time_bwd_allreduce_ms": 0.05,
//    "time_step_ms": 0.08, "max_allocated_bytes": 123456}
// loss, lr and grad_norm use 17 significant digits (exact doubles). The grad
// norm of a step skipped for a gradient overflow is inf, as DeepSpeed 0.19
// logs it, written as Infinity (what Python's json module writes and reads
// for float('inf')); any other non-finite grad norm is logged as -1 (as
// DeepSpeed and the reference do), any other non-finite number as null.
// loss is the unscaled loss, lr the lr the step used (or would have used,
// when skipped), loss_scale the scale of the step's backward as Python prints
// a float (1.0 without loss scaling), skipped whether a gradient overflow
// skipped the update; the phase times are DeepSpeed's wall_clock_breakdown
// timers fwd, bwd, bwd_inner, bwd_allreduce and step summed over the step's
// micro-steps (train_internal.h's StepTimes); max_allocated_bytes rank 0's
// device allocations at their peak so far, torch.cuda.max_memory_allocated's
// figure (train/allocation_meter.h), which plan.json's allocated_bytes
// predicts.
//
//===----------------------------------------------------------------------===//

#include "train/train_internal.h"

#include "status_internal.h"
#include "train/monitor.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>

namespace zeroc_rt::train {
namespace {

std::string jsonNumber(double v, const char *fmt) {
  return std::isfinite(v) ? format(fmt, v) : std::string("null");
}

} // namespace

JsonlLog::~JsonlLog() {
  if (file)
    std::fclose(file);
}

zeroc_rt_status_t JsonlLog::open(const std::string &p) {
  path = p;
  file = openForWriting(path);
  if (!file) {
    const int err = errno;
    return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR,
                          "--log-jsonl: '%s': cannot create: %s%s",
                          path.c_str(), std::strerror(err),
                          err == ENOENT   ? " (create its directory first)"
                          : err == ENXIO ? " (a FIFO that no process reads)"
                                         : "");
  }
  return nullptr;
}

zeroc_rt_status_t JsonlLog::write(const StepRecord &r) {
  if (!file)
    return nullptr;
  double perSecond = r.seconds > 0 ? static_cast<double>(r.samples) / r.seconds
                                   : std::nan("");
  // Python's json reads Infinity as float inf.
  const std::string norm = std::isinf(r.gradNorm)
                               ? std::string(r.gradNorm > 0 ? "Infinity"
                                                            : "-Infinity")
                               : jsonNumber(r.gradNorm, "%.17g");
  std::string line = format(
      "{\"step\": %lld, \"loss\": %s, \"lr\": %s, \"grad_norm\": %s, "
      "\"loss_scale\": %s, \"skipped\": %s, "
      "\"time_ms\": %s, \"samples_per_s\": %s, \"time_fwd_ms\": %s, "
      "\"time_bwd_ms\": %s, \"time_bwd_inner_ms\": %s, "
      "\"time_bwd_allreduce_ms\": %s, \"time_step_ms\": %s, "
      "\"max_allocated_bytes\": %llu}\n",
      static_cast<long long>(r.step), jsonNumber(r.loss, "%.17g").c_str(),
      jsonNumber(r.lr, "%.17g").c_str(), norm.c_str(),
      std::isfinite(r.lossScale) ? pyFloat(r.lossScale).c_str() : "null",
      r.skipped ? "true" : "false", jsonNumber(r.seconds * 1e3, "%.3f").c_str(),
      jsonNumber(perSecond, "%.1f").c_str(),
      jsonNumber(r.times.fwdMs, "%.3f").c_str(),
      jsonNumber(r.times.bwdMs(), "%.3f").c_str(),
      jsonNumber(r.times.bwdInnerMs, "%.3f").c_str(),
      jsonNumber(r.times.bwdAllreduceMs, "%.3f").c_str(),
      jsonNumber(r.times.stepMs, "%.3f").c_str(),
      static_cast<unsigned long long>(r.maxAllocatedBytes));
  if (std::fputs(line.c_str(), file) < 0 || std::fflush(file) != 0)
    return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "--log-jsonl: '%s': write failed: %s",
                          path.c_str(), std::strerror(errno));
  return nullptr;
}

zeroc_rt_status_t JsonlLog::close() {
  if (!file)
    return nullptr;
  int rc = std::fclose(file);
  file = nullptr;
  if (rc != 0)
    return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "--log-jsonl: '%s': close failed: %s",
                          path.c_str(), std::strerror(errno));
  return nullptr;
}

std::string headerLine(const zeroc_rt_program_t &p, int64_t psi,
                       int64_t samples) {
  return format("zeroc train: stage %d, world size %d, %d parameters (%lld "
                "elements), micro batch %d, grad accum %d, %lld samples",
                p.stage, p.world_size, p.num_params, static_cast<long long>(psi),
                p.micro_batch, p.grad_accum, static_cast<long long>(samples));
}

std::string consoleLine(const StepRecord &r) {
  double perSecond =
      r.seconds > 0 ? static_cast<double>(r.samples) / r.seconds : 0.0;
  const double norm = r.gradNorm;
  return format("step %lld/%lld | loss %.6f | lr %.3e | loss_scale %.6g | "
                "grad_norm %.4f | %.1f ms | %.0f samples/s%s",
                static_cast<long long>(r.step), static_cast<long long>(r.steps),
                r.loss, r.lr, r.lossScale, norm, r.seconds * 1e3, perSecond,
                r.skipped ? " | skipped" : "");
}

} // namespace zeroc_rt::train
