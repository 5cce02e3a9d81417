//===- lr_schedule.cc - DeepSpeed's LR schedules ----------------*- C++ -*-===//
//
// The formulas of DeepSpeed's runtime/lr_schedules.py (the version the team's
// reference notes describe, /work/shared/reference/deepspeed-semantics.md
// §1.4), evaluated in double in Python's operation order so that the values
// equal tools/reference/ds_schedules.py to the last bit or nearly:
//
//   N = max(2, warmup_num_steps), i = last_batch_iteration = t - 1
//   WarmupLR:       lr = min + (max - min) * g;  g = ln(i+1)/ln(N) ("log") or
//                   i/N ("linear") for i < N, else 1
//   WarmupDecayLR:  g after warmup = max(0, (T - i) / max(1, T - N))
//   WarmupCosineLR: lr = base_lr * r; r = wmin + g * (1 - wmin) in warmup,
//                   then max(0, c + (1 - c) * (1 + cos(pi*(i-N+1)/(T-N)))/2)
//   OneCycle:       b = i + 1; x = 1 + b/total - floor(1 + b/total);
//                   s = x/ratio if x <= ratio else (x-1)/(ratio-1);
//                   lr = min + (max - min) * s, mom = max_mom - (max_mom -
//                   min_mom) * s while i < total; then decay with
//                   k = i - total + 1: lr = min / (1 + rate * k / size),
//                   mom = max_mom * (1 + mom_rate * k / size) (no decay when
//                   the size or the rate is 0).
//   LRRangeTest:    lr = min * (1 + rate * x); x = (i + 1) / size, floor'ed
//                   with staircase (the newer DeepSpeed's interval; the
//                   initial lr is min).
//
//===----------------------------------------------------------------------===//

#include "train/lr_schedule.h"

#include "status_internal.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kPi = 3.141592653589793; ///< Python's math.pi

/// Python's max(a, b) for floats: a unless b > a.
double pyMax(double a, double b) { return b > a ? b : a; }

int64_t warmupSteps(const zeroc_rt_lr_schedule_t &s) {
  return std::max<int64_t>(2, s.warmup_num_steps);
}

/// WarmupLR._get_gamma during warmup (i < N).
double warmupGamma(const zeroc_rt_lr_schedule_t &s, int64_t i, int64_t n) {
  if (s.warmup_type_log) {
    const double inverseLog = 1.0 / std::log(static_cast<double>(n));
    return inverseLog * std::log(static_cast<double>(i + 1));
  }
  return static_cast<double>(i) / static_cast<double>(n);
}

double warmupLr(const zeroc_rt_lr_schedule_t &s, int64_t i, bool decay) {
  if (i < 0)
    return s.warmup_min_lr;
  const int64_t n = warmupSteps(s);
  double gamma;
  if (i < n) {
    gamma = warmupGamma(s, i, n);
  } else if (!decay) {
    gamma = 1.0;
  } else {
    const double denom =
        pyMax(1.0, static_cast<double>(s.total_num_steps - n));
    gamma = pyMax(0.0, static_cast<double>(s.total_num_steps - i) / denom);
  }
  const double delta = s.warmup_max_lr - s.warmup_min_lr;
  return s.warmup_min_lr + delta * gamma;
}

double cosineLr(const zeroc_rt_lr_schedule_t &s, double baseLr, int64_t i) {
  if (i < 0)
    return 0.0; // WarmupCosineLR.get_lr() before its first step
  const int64_t n = warmupSteps(s);
  double ratio;
  if (i < n) {
    ratio = warmupGamma(s, i, n);
    const double delta = 1. - s.warmup_min_ratio;
    ratio = s.warmup_min_ratio + ratio * delta;
  } else {
    const int64_t realLast = i - n + 1;
    const int64_t realTotal = s.total_num_steps - n; // != 0 (validated)
    const double delta = 1. - s.cos_min_ratio;
    ratio = (1 + std::cos(kPi * static_cast<double>(realLast) /
                          static_cast<double>(realTotal))) /
            2;
    ratio = pyMax(0.0, s.cos_min_ratio + delta * ratio);
  }
  return baseLr * ratio;
}

double oneCycleLr(const zeroc_rt_lr_schedule_t &s, int64_t i, double *mom) {
  const bool cycleMom = s.cycle_momentum != 0;
  if (i < 0) {
    *mom = cycleMom ? s.cycle_min_mom : kNaN;
    return s.cycle_min_lr;
  }
  const double first = static_cast<double>(s.cycle_first_step_size);
  const double second = static_cast<double>(s.cycle_second_step_size);
  const double total = first + second;
  const double stepRatio = first / total;
  if (static_cast<double>(i) < total) {
    const double b = static_cast<double>(i + 1);
    const double cycle = std::floor(1 + b / total);
    const double x = 1. + b / total - cycle;
    const double scale =
        x <= stepRatio ? x / stepRatio : (x - 1) / (stepRatio - 1);
    *mom = cycleMom ? s.cycle_max_mom - (s.cycle_max_mom - s.cycle_min_mom) * scale
                    : kNaN;
    return s.cycle_min_lr + (s.cycle_max_lr - s.cycle_min_lr) * scale;
  }
  const double k = static_cast<double>(i) - total + 1;
  const double size = static_cast<double>(s.decay_step_size);
  if (cycleMom) {
    if (s.decay_step_size == 0 || s.decay_mom_rate == 0.0)
      *mom = s.cycle_max_mom;
    else
      *mom = s.cycle_max_mom * (1 + s.decay_mom_rate * (k / size));
  } else {
    *mom = kNaN;
  }
  if (s.decay_step_size == 0 || s.decay_lr_rate == 0.0)
    return s.cycle_min_lr;
  return s.cycle_min_lr / (1 + s.decay_lr_rate * (k / size));
}

double rangeTestLr(const zeroc_rt_lr_schedule_t &s, int64_t i) {
  if (i < 0)
    return s.range_min_lr;
  double x = static_cast<double>(i + 1) / static_cast<double>(s.range_step_size);
  if (s.range_staircase)
    x = std::floor(x);
  return s.range_min_lr * (1 + s.range_step_rate * x);
}

} // namespace

extern "C" double zeroc_rt_lr_at(const zeroc_rt_lr_schedule_t *schedule,
                                 double base_lr, int64_t t,
                                 double *momentum_out) {
  double mom = kNaN, lr = kNaN;
  if (schedule && t >= 0) {
    const zeroc_rt_lr_schedule_t &s = *schedule;
    const int64_t i = t - 1;
    switch (s.type) {
    case ZEROC_RT_LR_CONSTANT:
      lr = base_lr;
      break;
    case ZEROC_RT_LR_WARMUP:
      lr = warmupLr(s, i, false);
      break;
    case ZEROC_RT_LR_WARMUP_DECAY:
      lr = warmupLr(s, i, true);
      break;
    case ZEROC_RT_LR_WARMUP_COSINE:
      lr = cosineLr(s, base_lr, i);
      break;
    case ZEROC_RT_LR_ONE_CYCLE:
      lr = oneCycleLr(s, i, &mom);
      break;
    case ZEROC_RT_LR_RANGE_TEST:
      lr = rangeTestLr(s, i);
      break;
    }
  }
  if (momentum_out)
    *momentum_out = mom;
  return lr;
}

namespace zeroc_rt::train {

const char *lrScheduleName(zeroc_rt_lr_schedule_type_t type) {
  switch (type) {
  case ZEROC_RT_LR_CONSTANT:
    return "constant";
  case ZEROC_RT_LR_WARMUP:
    return "WarmupLR";
  case ZEROC_RT_LR_WARMUP_DECAY:
    return "WarmupDecayLR";
  case ZEROC_RT_LR_WARMUP_COSINE:
    return "WarmupCosineLR";
  case ZEROC_RT_LR_ONE_CYCLE:
    return "OneCycle";
  case ZEROC_RT_LR_RANGE_TEST:
    return "LRRangeTest";
  }
  return "unknown";
}

zeroc_rt_status_t checkLrSchedule(const zeroc_rt_lr_schedule_t &s) {
  auto finite = [](double v) { return std::isfinite(v); };
  switch (s.type) {
  case ZEROC_RT_LR_CONSTANT:
    return nullptr;
  case ZEROC_RT_LR_WARMUP:
  case ZEROC_RT_LR_WARMUP_DECAY:
    if (!finite(s.warmup_min_lr) || !finite(s.warmup_max_lr))
      return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                            "lr schedule %s: warmup_min_lr %g and "
                            "warmup_max_lr %g must be finite",
                            lrScheduleName(s.type), s.warmup_min_lr,
                            s.warmup_max_lr);
    return nullptr;
  case ZEROC_RT_LR_WARMUP_COSINE:
    if (!finite(s.warmup_min_ratio) || !finite(s.cos_min_ratio))
      return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                            "lr schedule WarmupCosineLR: warmup_min_ratio %g "
                            "and cos_min_ratio %g must be finite",
                            s.warmup_min_ratio, s.cos_min_ratio);
    if (s.total_num_steps == warmupSteps(s))
      return ZEROC_RT_ERROR(
          ZEROC_RT_INVALID_ARGUMENT,
          "lr schedule WarmupCosineLR: total_num_steps %lld equals "
          "max(2, warmup_num_steps): DeepSpeed divides by "
          "total_num_steps - warmup_num_steps after the warmup",
          static_cast<long long>(s.total_num_steps));
    return nullptr;
  case ZEROC_RT_LR_ONE_CYCLE:
    if (s.cycle_first_step_size < 1 || s.cycle_second_step_size < 0 ||
        s.decay_step_size < 0)
      return ZEROC_RT_ERROR(
          ZEROC_RT_INVALID_ARGUMENT,
          "lr schedule OneCycle: cycle_first_step_size %lld must be >= 1, "
          "cycle_second_step_size %lld and decay_step_size %lld >= 0",
          static_cast<long long>(s.cycle_first_step_size),
          static_cast<long long>(s.cycle_second_step_size),
          static_cast<long long>(s.decay_step_size));
    if (!finite(s.cycle_min_lr) || !finite(s.cycle_max_lr) ||
        !finite(s.decay_lr_rate) || !finite(s.cycle_min_mom) ||
        !finite(s.cycle_max_mom) || !finite(s.decay_mom_rate))
      return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                            "lr schedule OneCycle: lrs, momenta and decay "
                            "rates must be finite");
    return nullptr;
  case ZEROC_RT_LR_RANGE_TEST:
    if (s.range_step_size < 1 || !finite(s.range_min_lr) ||
        !finite(s.range_step_rate))
      return ZEROC_RT_ERROR(
          ZEROC_RT_INVALID_ARGUMENT,
          "lr schedule LRRangeTest: lr_range_test_step_size %lld must be >= "
          "1, lr_range_test_min_lr %g and lr_range_test_step_rate %g finite",
          static_cast<long long>(s.range_step_size), s.range_min_lr,
          s.range_step_rate);
    return nullptr;
  }
  return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                        "unknown lr schedule type %d", static_cast<int>(s.type));
}

} // namespace zeroc_rt::train
