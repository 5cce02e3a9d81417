//===- monitor.h - DeepSpeed-style console lines and csv_monitor -*- C++ -*-===//
//
// Rank 0 only. DeepSpeed's progress line (engine._report_progress), its
// wall_clock_breakdown timer line (timers.log) and its csv_monitor files
// (monitor/csv_monitor.py), with numbers printed as Python prints them.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_SRC_TRAIN_MONITOR_H
#define ZEROC_RT_SRC_TRAIN_MONITOR_H

#include "train/train_internal.h"

#include <cstdio>
#include <string>
#include <vector>

namespace zeroc_rt::train {

/// Python's repr() of a float: the shortest round-tripping digits, fixed
/// notation for 1e-4 <= |v| < 1e16 (with ".0" when integral), otherwise
/// d.ddde+XX; "inf", "-inf", "nan".
std::string pyFloat(double v);

/// DeepSpeed's progress line, after the scheduler step of step `step`:
///   [Rank 0] step=10, skipped=1, lr=[0.001], mom=[(0.9, 0.999)]
/// `hyper` is what the optimizer's param group holds then (the lr and betas
/// of the next update); mom is [(beta1, beta2)] for Adam, [momentum] for SGD.
std::string dsProgressLine(const zeroc_rt_program_t &program, int64_t step,
                           int64_t skipped, const StepHyper &hyper);

/// DeepSpeed 0.19's timers.log lines (engine.step, with
/// wall_clock_breakdown; the numbers as Python's "{:.2f}"). After every
/// micro-step (micro):
///   [Rank 0] time (ms) | fwd_microstep: 1.23 | bwd_microstep: 2.34 |
///   bwd_inner_microstep: 2.10 | bwd_allreduce_microstep: 0.24 |
///   step_microstep: 0.12
/// and after each optimizer step, over its micro-steps (global):
///   [Rank 0] time (ms) | fwd: .. | bwd: .. | bwd_inner: .. |
///   bwd_allreduce: .. | step: ..
std::string wallClockLine(const StepTimes &times, bool micro);

/// csv_monitor: one file per event under <output_path>/<job_name>/, named
/// after the event with '/' -> '_' plus ".csv", with the header
/// "step,<last path component of the event>" and one row per optimizer step
/// "<samples seen after the step>,<value as Python prints it>", lines ended
/// by "\r\n" (Python's csv module). Events: Train/Samples/train_loss, lr,
/// loss_scale, and with wall_clock_breakdown DeepSpeed's
/// elapsed_time_ms_{forward,backward,backward_inner,backward_allreduce,step}
/// (the step's global timers). The files are truncated
/// when the run starts.
class CsvMonitor {
public:
  ~CsvMonitor();
  /// Creates the directory and the files (nothing when csv is disabled).
  ZEROC_RT_MUST_USE zeroc_rt_status_t open(const zeroc_rt_program_t &program);
  ZEROC_RT_MUST_USE zeroc_rt_status_t write(const StepRecord &record,
                                            int64_t samplesSeen);
  ZEROC_RT_MUST_USE zeroc_rt_status_t close();
  const std::string &directory() const { return dir; }

private:
  struct File {
    std::string path;
    std::FILE *stream = nullptr;
  };
  std::string dir;
  bool wallClock = false;
  std::vector<File> files;
};

/// The directory csv_monitor writes into: output_path joined with job_name
/// as Python's os.path.join does ("" output path: the job name alone, i.e.
/// relative to the working directory; NULL/"" job name: DeepSpeedJobName).
std::string csvDirectory(const zeroc_rt_monitor_config_t &monitor);

} // namespace zeroc_rt::train

#endif // ZEROC_RT_SRC_TRAIN_MONITOR_H
