//===- step.cc - Running the compiled optimizer step --------------*- C++ -*-===//
//
// The optimizer step is the program's train_step (zeroc's @train_step):
// every ZeRO decision of it (which reduction, the overflow check, clipping,
// the update, the all-gathers) is compiled. What stays here is not a
// decision: checking the LR schedule for the whole run before it starts,
// calling train_step with its timers, and turning its result into the
// step's outcome (skipped steps, the logged norm, the loss scaler's line).
//
//===----------------------------------------------------------------------===//

#include "train/train_internal.h"

#include "status_internal.h"
#include "train/lr_schedule.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <vector>

namespace zeroc_rt::train {
namespace {

zeroc_rt_status_t checkHyper(const zeroc_rt_program_t &prog, const StepHyper &h,
                             int64_t t) {
  if (!std::isfinite(h.lr))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "the %s schedule gives lr %g after %lld scheduler "
                          "steps",
                          lrScheduleName(prog.lr_schedule.type), h.lr,
                          static_cast<long long>(t));
  if (prog.optimizer.type == ZEROC_RT_OPTIMIZER_ADAM &&
      !(h.beta1 >= 0.0 && h.beta1 < 1.0))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "the OneCycle schedule gives momentum (Adam's beta1) "
                          "%g after %lld scheduler steps, outside [0, 1)",
                          h.beta1, static_cast<long long>(t));
  return nullptr;
}

} // namespace

StepHyper hyperAt(const zeroc_rt_program_t &program, int64_t t) {
  const zeroc_rt_optimizer_config_t &opt = program.optimizer;
  StepHyper h;
  double mom = 0.0;
  h.lr = zeroc_rt_lr_at(&program.lr_schedule, opt.lr, t, &mom);
  h.beta1 = opt.beta1;
  h.beta2 = opt.beta2;
  h.momentum = opt.momentum;
  if (opt.type == ZEROC_RT_OPTIMIZER_ADAM &&
      program.lr_schedule.type == ZEROC_RT_LR_ONE_CYCLE &&
      program.lr_schedule.cycle_momentum) {
    h.beta1 = mom;
    h.beta2 = ZEROC_RT_ONE_CYCLE_BETA2;
  }
  return h;
}

zeroc_rt_status_t checkSchedule(const zeroc_rt_program_t &program,
                                int64_t steps) {
  if (steps <= 0)
    return nullptr;
  // Between consecutive breakpoints of a schedule (warmup end, the end of
  // its decay, OneCycle's peak and cycle end) the lr and the momentum move
  // one way, so checking the breakpoints and the last step, then bisecting a
  // good-to-bad stretch, finds the first bad step of 0..steps-1 (a step
  // skipped for overflow leaves the count behind: never past steps-1).
  const zeroc_rt_lr_schedule_t &s = program.lr_schedule;
  const int64_t last = steps - 1;
  std::vector<int64_t> points = {0, 1, 2, last};
  auto around = [&](int64_t t) {
    for (int64_t d = -1; d <= 2; ++d)
      if (t > INT64_MIN + 1 && t < INT64_MAX - 2)
        points.push_back(t + d);
  };
  around(std::max<int64_t>(2, s.warmup_num_steps));
  around(s.total_num_steps);
  around(s.cycle_first_step_size);
  if (s.cycle_first_step_size <= INT64_MAX - s.cycle_second_step_size)
    around(s.cycle_first_step_size + s.cycle_second_step_size);
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  auto bad = [&](int64_t t) { return checkHyper(program, hyperAt(program, t), t); };
  int64_t good = -1; // the last candidate checked and found good
  for (int64_t t : points) {
    if (t < 0 || t > last)
      continue;
    zeroc_rt_status_t status = bad(t);
    if (!status) {
      good = t;
      continue;
    }
    // The first bad step after `good`: the stretch between is monotone.
    for (int64_t lo = good, hi = t; hi - lo > 1;) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (zeroc_rt_status_t m = bad(mid)) {
        zeroc_rt_status_free(status);
        status = m;
        hi = t = mid;
      } else {
        lo = mid;
      }
    }
    return ZEROC_RT_TRAIN_WRAP(
        status,
        format("--steps %lld: optimizer step %lld would fail: ",
               static_cast<long long>(steps), static_cast<long long>(t + 1)),
        "; fix the schedule or run fewer steps");
  }
  return nullptr;
}

zeroc_rt_status_t runTrainStep(zeroc_rt_engine &engine, StepOutcome &out,
                               bool *agreed) {
  using Clock = std::chrono::steady_clock;
  *agreed = false;
  out = StepOutcome();
  out.lossScale = engine.scaler.cur_scale;
  engine.scalerLog.clear();
  engine.stepErrorAgreed = false;
  engine.reducedMarked = false;
  const Clock::time_point start = Clock::now();
  zeroc_rt_step_result_t result{};
  zeroc_rt_status_t status = engine.program->train_step(&engine, &result);
  engine.tracer.endOp(); // its last op's span (--trace)
  const Clock::time_point end = Clock::now();
  const Clock::time_point reduced = engine.reducedMarked ? engine.reducedAt : start;
  engine.times.bwdAllreduceMs +=
      std::chrono::duration<double, std::milli>(reduced - start).count();
  engine.times.stepMs +=
      std::chrono::duration<double, std::milli>(end - reduced).count();
  if (status) {
    *agreed = engine.stepErrorAgreed;
    return status;
  }
  out.lr = result.lr;
  out.scalerLog = engine.scalerLog;
  out.gradNorm = result.grad_norm;
  if (result.overflow) {
    out.skipped = true;
    // DeepSpeed 0.19 logs the grad norm of an overflow step as inf.
    out.gradNorm = std::numeric_limits<double>::infinity();
    ++engine.skippedSteps;
  }
  return nullptr;
}

} // namespace zeroc_rt::train
