//===- monitor.cc - DeepSpeed-style console lines and csv_monitor -*- C++ -*-===//

#include "train/monitor.h"

#include "status_internal.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace zeroc_rt::train {

std::string pyFloat(double v) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  if (v == 0)
    return std::signbit(v) ? "-0.0" : "0.0";
  // Shortest round-trip digits in scientific form: [-]d[.ddd]e[+-]XX.
  char buf[64];
  std::to_chars_result r =
      std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string sci(buf, r.ptr);
  std::string sign;
  if (sci[0] == '-') {
    sign = "-";
    sci.erase(0, 1);
  }
  size_t e = sci.find('e');
  std::string digits = sci.substr(0, e);
  int exponent = std::atoi(sci.c_str() + e + 1);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  // Python's float_repr_style 'short', mode 'r': decpt is the position of the
  // decimal point relative to the digits (value = 0.DIGITS * 10^decpt).
  const int decpt = exponent + 1;
  const int n = static_cast<int>(digits.size());
  std::string out;
  if (decpt <= -4 || decpt > 16) {
    out = digits.substr(0, 1);
    if (n > 1)
      out += "." + digits.substr(1);
    char ex[16];
    std::snprintf(ex, sizeof ex, "e%c%02d", exponent < 0 ? '-' : '+',
                  std::abs(exponent));
    out += ex;
  } else if (decpt <= 0) {
    out = "0." + std::string(static_cast<size_t>(-decpt), '0') + digits;
  } else if (decpt >= n) {
    out = digits + std::string(static_cast<size_t>(decpt - n), '0') + ".0";
  } else {
    out = digits.substr(0, static_cast<size_t>(decpt)) + "." +
          digits.substr(static_cast<size_t>(decpt));
  }
  return sign + out;
}

std::string dsProgressLine(const zeroc_rt_program_t &program, int64_t step,
                           int64_t skipped, const StepHyper &hyper) {
  std::string mom =
      program.optimizer.type == ZEROC_RT_OPTIMIZER_ADAM
          ? "(" + pyFloat(hyper.beta1) + ", " + pyFloat(hyper.beta2) + ")"
          : pyFloat(hyper.momentum);
  return format("[Rank 0] step=%lld, skipped=%lld, lr=[%s], mom=[%s]",
                static_cast<long long>(step), static_cast<long long>(skipped),
                pyFloat(hyper.lr).c_str(), mom.c_str());
}

std::string wallClockLine(const StepTimes &t, bool micro) {
  const char *sfx = micro ? "_microstep" : "";
  return format("[Rank 0] time (ms) | fwd%s: %.2f | bwd%s: %.2f | "
                "bwd_inner%s: %.2f | bwd_allreduce%s: %.2f | step%s: %.2f",
                sfx, t.fwdMs, sfx, t.bwdMs(), sfx, t.bwdInnerMs, sfx,
                t.bwdAllreduceMs, sfx, t.stepMs);
}

std::string csvDirectory(const zeroc_rt_monitor_config_t &monitor) {
  std::string base = monitor.csv_output_path ? monitor.csv_output_path : "";
  std::string job = monitor.csv_job_name && *monitor.csv_job_name
                        ? monitor.csv_job_name
                        : "DeepSpeedJobName";
  if (job[0] == '/' || base.empty())
    return job;
  return base + (base.back() == '/' ? "" : "/") + job;
}

namespace {

const char *const kEvents[] = {
    "Train/Samples/train_loss",
    "Train/Samples/lr",
    "Train/Samples/loss_scale",
    "Train/Samples/elapsed_time_ms_forward",
    "Train/Samples/elapsed_time_ms_backward",
    "Train/Samples/elapsed_time_ms_backward_inner",
    "Train/Samples/elapsed_time_ms_backward_allreduce",
    "Train/Samples/elapsed_time_ms_step",
};
constexpr size_t kBasicEvents = 3, kAllEvents = 8;

std::string eventFile(const std::string &event) {
  std::string name = event;
  for (char &c : name)
    if (c == '/' || c == ' ')
      c = '_';
  return name + ".csv";
}

std::string eventHeader(const std::string &event) {
  return event.substr(event.rfind('/') + 1);
}

} // namespace

CsvMonitor::~CsvMonitor() {
  for (File &f : files)
    if (f.stream)
      std::fclose(f.stream);
}

zeroc_rt_status_t CsvMonitor::open(const zeroc_rt_program_t &program) {
  if (!program.monitor.csv_enabled)
    return nullptr;
  dir = csvDirectory(program.monitor);
  wallClock = program.monitor.wall_clock_breakdown != 0;
  ZEROC_RT_RETURN_IF_ERROR(
      ZEROC_RT_TRAIN_WRAP(makeDirectories(dir), "csv_monitor: "));
  const size_t count = wallClock ? kAllEvents : kBasicEvents;
  for (size_t i = 0; i < count; ++i) {
    File f;
    f.path = dir + "/" + eventFile(kEvents[i]);
    f.stream = openForWriting(f.path);
    if (!f.stream)
      return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR,
                            "csv_monitor: '%s': cannot create: %s",
                            f.path.c_str(), std::strerror(errno));
    files.push_back(f);
    std::string header = "step," + eventHeader(kEvents[i]) + "\r\n";
    if (std::fputs(header.c_str(), f.stream) < 0 || std::fflush(f.stream) != 0)
      return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR,
                            "csv_monitor: '%s': write failed: %s",
                            f.path.c_str(), std::strerror(errno));
  }
  return nullptr;
}

zeroc_rt_status_t CsvMonitor::write(const StepRecord &r, int64_t samplesSeen) {
  const double values[kAllEvents] = {
      r.loss,          r.lr,
      r.lossScale,     r.times.fwdMs,
      r.times.bwdMs(), r.times.bwdInnerMs,
      r.times.bwdAllreduceMs, r.times.stepMs};
  for (size_t i = 0; i < files.size(); ++i) {
    std::string row = std::to_string(samplesSeen) + "," + pyFloat(values[i]) +
                      "\r\n";
    if (std::fputs(row.c_str(), files[i].stream) < 0 ||
        std::fflush(files[i].stream) != 0)
      return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR,
                            "csv_monitor: '%s': write failed: %s",
                            files[i].path.c_str(), std::strerror(errno));
  }
  return nullptr;
}

zeroc_rt_status_t CsvMonitor::close() {
  zeroc_rt_status_t first = nullptr;
  for (File &f : files) {
    if (!f.stream)
      continue;
    int rc = std::fclose(f.stream);
    f.stream = nullptr;
    if (rc != 0 && !first)
      first = ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR,
                             "csv_monitor: '%s': close failed: %s",
                             f.path.c_str(), std::strerror(errno));
  }
  files.clear();
  return first;
}

} // namespace zeroc_rt::train
