//===- optimizer_step.cc - The per-stage optimizer-step boundary -*- C++ -*-===//
//
// After the GAS micro-steps of an optimizer step every rank holds its
// gradient accumulators (sums over its micro-batches, multiplied by the loss
// scale when loss scaling is on). This file turns them into the update,
// DeepSpeed's way:
//
//   1. reduce: stage 0 all-reduces the full gradients (one call per dtype
//      run of the gradient slab); stage 1 reduce-scatters each zero-padded
//      full gradient into the rank's shard; stages 2-3 already hold the
//      reduced shard (the micro-step reduce-scatters before accumulating);
//   2. loss scaling only: every rank scans its reduced gradients (stage 0:
//      the full, identical gradients; stages 1-3: its shard) for inf/NaN and
//      the flags are all-reduced with MAX; the loss scaler is updated
//      (DynamicLossScaler.update_scale); on overflow the step is skipped:
//      the gradients are zeroed and the parameters, the optimizer state, its
//      step count and the LR scheduler stay as they were;
//   3. global L2 norm of the averaged, unscaled gradients over the full
//      parameters: the sum of squares of the reduced gradients (in double)
//      times a^2, a = 1 / (W * scale) (the micro-step already divided by
//      GAS when it seeded backward); stage 0 from the local full
//      gradients (identical on every rank), stages 1-3 from the shards plus
//      an all-reduce of the sum;
//   4. clip (gradient_clipping > 0, finite norm): c = (norm + 1e-6) / max;
//      DeepSpeed's unscale_and_clip_grads multiplies the gradients by a / c
//      when c > 1, by a otherwise, in one pass;
//   5. Adam / SGD on the rank's elements (zeroc_rt_k_adam_step / sgd_step) at
//      the scheduled lr (and OneCycle's betas), step = 1-based count of
//      updates; padding elements have zero gradient and zero value and stay
//      zero; the scheduler then counts one more step. A parameter with an
//      f32 master (mixed precision) has its 16-bit gradient converted to f32
//      with that factor, the master updated, and the master rounded back
//      into the 16-bit parameter (DeepSpeed's fp32 partition step);
//   6. stages 1-2 all-gather the updated shards back into the replicas (in
//      the parameters' dtype: 16-bit with mixed precision).
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

/// Largest element count per collective call (MPI counts are int).
constexpr size_t kMaxCollectiveCount = size_t(1) << 30;

zeroc_rt_status_t paramError(zeroc_rt_status_t status, const char *what,
                             const ParamState &p) {
  return ZEROC_RT_TRAIN_WRAP(status,
                             format("%s of parameter '%s': ", what, p.desc->name));
}

zeroc_rt_status_t reduceGradients(zeroc_rt_engine &engine) {
  ZeroState &st = engine.state;
  if (st.stage == 0) {
    for (const GradRun &run : st.gradRuns) {
      size_t es = zeroc_rt_dtype_size(run.dtype);
      for (size_t done = 0; done < run.count;) {
        size_t chunk = std::min(kMaxCollectiveCount, run.count - done);
        char *data = run.begin + done * es;
        ZEROC_RT_RETURN_IF_ERROR(ZEROC_RT_TRAIN_WRAP(
            zeroc_rt_comm_all_reduce(engine.comm, data, data, chunk, run.dtype,
                                     ZEROC_RT_REDUCE_SUM),
            "gradient all-reduce: "));
        done += chunk;
      }
    }
  } else if (st.stage == 1) {
    for (ParamState &p : st.params) {
      if (p.frozen)
        continue;
      zeroc_rt_status_t status = zeroc_rt_comm_reduce_scatter(
          engine.comm, p.grad, p.gradShard, static_cast<size_t>(p.shard),
          p.gradDtype, ZEROC_RT_REDUCE_SUM);
      if (status)
        return paramError(status, "gradient reduce-scatter", p);
    }
  }
  return nullptr;
}

/// This rank's sum of squares of its reduced gradients (stages 1-3: of its
/// shard), before averaging and unscaling.
zeroc_rt_status_t localSumSquares(ZeroState &st, double *total) {
  *total = 0.0;
  for (ParamState &p : st.params) {
    if (p.frozen)
      continue;
    double sum = 0.0;
    zeroc_rt_status_t status =
        zeroc_rt_k_sum_squares(p.gradDtype, p.updateGrad, p.updateCount, &sum);
    if (status)
      return paramError(status, "gradient norm", p);
    *total += sum;
  }
  return nullptr;
}

/// Multiplies each gradient by `factor` (averaging, unscaling, clipping) and
/// applies the optimizer: to the parameter itself, or to its master copy,
/// which is then rounded back into the parameter.
zeroc_rt_status_t applyOptimizer(zeroc_rt_engine &engine, const StepHyper &h,
                                 double factor) {
  const zeroc_rt_optimizer_config_t &opt = engine.program->optimizer;
  const int64_t step = ++engine.optimizerSteps;
  for (ParamState &p : engine.state.params) {
    if (p.frozen)
      continue;
    const char *what = "gradient scaling";
    void *param = p.updateParam, *grad = p.updateGrad;
    zeroc_rt_status_t status;
    if (p.hasMaster())
      param = p.master;
    if (p.gradDtype != p.masterDtype) {
      grad = engine.state.masterGrad.data();
      status = zeroc_rt_k_convert(p.gradDtype, p.updateGrad, p.masterDtype,
                                  grad, p.updateCount, factor);
    } else {
      status = zeroc_rt_k_scale(p.gradDtype, grad, p.updateCount, factor);
    }
    if (!status) {
      what = "optimizer update";
      if (opt.type == ZEROC_RT_OPTIMIZER_ADAM)
        status = zeroc_rt_k_adam_step(p.masterDtype, param, grad, p.expAvg,
                                      p.expAvgSq, p.updateCount, h.lr, h.beta1,
                                      h.beta2, opt.eps, opt.weight_decay,
                                      opt.adam_w_mode, opt.bias_correction,
                                      step);
      else
        status = zeroc_rt_k_sgd_step(p.masterDtype, param, grad, p.momentum,
                                     p.updateCount, h.lr, h.momentum,
                                     opt.weight_decay, opt.dampening,
                                     opt.nesterov, step);
    }
    if (!status && p.hasMaster()) {
      what = "rounding the master copy";
      status = zeroc_rt_k_convert(p.masterDtype, p.master, p.dtype,
                                  p.updateParam, p.updateCount, 1.0);
    }
    if (status)
      return paramError(status, what, p);
  }
  return nullptr;
}

/// Whether this rank's reduced gradients hold an inf or NaN.
zeroc_rt_status_t localOverflow(const ZeroState &st, int32_t *flag) {
  *flag = 0;
  for (const ParamState &p : st.params) {
    if (p.frozen)
      continue;
    int found = 0;
    zeroc_rt_status_t status =
        zeroc_rt_k_has_inf_or_nan(p.gradDtype, p.updateGrad, p.updateCount,
                                  &found);
    if (status)
      return paramError(status, "gradient overflow check", p);
    if (found) {
      *flag = 1;
      break;
    }
  }
  return nullptr;
}

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

using Clock = std::chrono::steady_clock;

/// Adds the time `fn` takes to *ms.
template <typename Fn> zeroc_rt_status_t timed(double *ms, Fn &&fn) {
  const Clock::time_point start = Clock::now();
  zeroc_rt_status_t status = fn();
  *ms += std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return status;
}

zeroc_rt_status_t gatherParams(zeroc_rt_engine &engine) {
  ZeroState &st = engine.state;
  if (st.stage != 1 && st.stage != 2)
    return nullptr;
  for (ParamState &p : st.params) {
    if (p.frozen) // unchanged since the start: every replica is current
      continue;
    // In place: the shard already sits at replica + r*S.
    zeroc_rt_status_t status = zeroc_rt_comm_all_gather(
        engine.comm, p.updateParam, p.replica, static_cast<size_t>(p.shard),
        p.dtype);
    if (status)
      return paramError(status, "parameter all-gather", p);
  }
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

zeroc_rt_status_t optimizerStep(zeroc_rt_engine &engine, StepOutcome &out,
                                bool *agreed) {
  const zeroc_rt_program_t &prog = *engine.program;
  ZeroState &st = engine.state;
  StepTimes &times = engine.times;
  *agreed = false;
  out = StepOutcome();

  // Deterministic on every rank: checked before any collective.
  const StepHyper hyper = hyperAt(prog, engine.optimizerSteps);
  out.lr = hyper.lr;
  out.lossScale = engine.scaler.cur_scale;
  if (zeroc_rt_status_t bad = checkHyper(prog, hyper, engine.optimizerSteps)) {
    *agreed = true;
    return bad;
  }

  ZEROC_RT_RETURN_IF_ERROR(
      timed(&times.bwdAllreduceMs, [&] { return reduceGradients(engine); }));

  if (prog.loss_scaler.enabled) {
    int32_t flag = 0;
    ZEROC_RT_RETURN_IF_ERROR(
        timed(&times.stepMs, [&] { return localOverflow(st, &flag); }));
    ZEROC_RT_RETURN_IF_ERROR(timed(&times.stepMs, [&] {
      return ZEROC_RT_TRAIN_WRAP(
          zeroc_rt_comm_all_reduce(engine.comm, &flag, &flag, 1,
                                   ZEROC_RT_DTYPE_I32, ZEROC_RT_REDUCE_MAX),
          "overflow flag all-reduce: ");
    }));
    // Every rank holds the same scaler state and flag: an error here is
    // returned by all of them.
    char log[256];
    if (zeroc_rt_status_t status =
            zeroc_rt_loss_scaler_update(&engine.scaler, flag, log, sizeof log)) {
      *agreed = true;
      return status;
    }
    out.scalerLog = log;
    if (flag) {
      out.skipped = true;
      // DeepSpeed 0.19 logs the grad norm of an overflow step as inf.
      out.gradNorm = std::numeric_limits<double>::infinity();
      ++engine.skippedSteps;
      st.zeroGradients();
      return nullptr;
    }
  }

  // The micro-step seeded backward with loss_scale / GAS (DeepSpeed's
  // scale_wrt_gas), so what is left is the mean over ranks and the scale.
  const double average = 1.0 / (static_cast<double>(engine.world) * out.lossScale);
  double total = 0.0;
  ZEROC_RT_RETURN_IF_ERROR(
      timed(&times.stepMs, [&] { return localSumSquares(st, &total); }));
  if (st.stage != 0)
    ZEROC_RT_RETURN_IF_ERROR(timed(&times.stepMs, [&] {
      return ZEROC_RT_TRAIN_WRAP(
          zeroc_rt_comm_all_reduce(engine.comm, &total, &total, 1,
                                   ZEROC_RT_DTYPE_F64, ZEROC_RT_REDUCE_SUM),
          "gradient norm all-reduce: ");
    }));
  const double norm = std::sqrt(total) * average;
  out.gradNorm = norm;
  double factor = average;
  if (prog.gradient_clipping > 0.0 && std::isfinite(norm)) {
    double clip = (norm + 1e-6) / prog.gradient_clipping;
    if (clip > 1.0)
      factor = average / clip;
  }
  ZEROC_RT_RETURN_IF_ERROR(timed(
      &times.stepMs, [&] { return applyOptimizer(engine, hyper, factor); }));
  return timed(&times.stepMs, [&] { return gatherParams(engine); });
}

} // namespace zeroc_rt::train
