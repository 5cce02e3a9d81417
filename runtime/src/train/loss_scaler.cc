//===- loss_scaler.cc - DeepSpeed's DynamicLossScaler.update_scale -------===//

#include "train/loss_scaler.h"

#include "status_internal.h"

#include <cmath>
#include <cstdio>
#include <string>

namespace {

/// Python's f"{int(x)}" for a positive scale (truncation toward zero).
std::string pyInt(double x) {
  if (!std::isfinite(x))
    return x > 0 ? "inf" : "nan";
  char buf[400];
  std::snprintf(buf, sizeof buf, "%.0f", std::trunc(x));
  return buf;
}

void writeLog(const std::string &text, char *out, size_t n) {
  if (!out || n == 0)
    return;
  std::snprintf(out, n, "%s", text.c_str());
}

zeroc_rt_status_t update(zeroc_rt_loss_scaler_state_t &s, bool overflow,
                         char *out, size_t n) {
  writeLog("", out, n);
  std::string log;
  if (!s.dynamic) {
    // A static scale never changes. DeepSpeed's ZeRO optimizers log nothing
    // for it (LossScaler.update_scale is a no-op), which leaves a run whose
    // every step overflows silent; zeroc prints the OVERFLOW line with the
    // unchanged scale, as FP16_Optimizer's "Attempted loss scale: S,
    // reducing to S" does for a static scale.
    if (overflow)
      writeLog("[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss "
               "scale: " +
                   pyInt(s.cur_scale) + ", reducing to " + pyInt(s.cur_scale),
               out, n);
    return nullptr;
  }
  if (overflow) {
    if (s.delayed_shift == 1 || s.cur_hysteresis == 1) {
      if (s.cur_scale == s.min_scale)
        return ZEROC_RT_ERROR(ZEROC_RT_NUMERIC_ERROR,
                              "Current loss scale already at minimum - cannot "
                              "decrease scale anymore. Exiting run.");
      double next = s.cur_scale / s.scale_factor;
      if (s.min_scale > next)
        next = s.min_scale;
      log = "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss "
            "scale: " +
            pyInt(s.cur_scale) + ", reducing to " + pyInt(next);
      s.cur_scale = next;
    } else {
      log = "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss "
            "scale: " +
            pyInt(s.cur_scale) + ", but hysteresis is " +
            std::to_string(s.cur_hysteresis) + ". Reducing hysteresis to " +
            std::to_string(s.cur_hysteresis - 1);
      s.cur_hysteresis -= 1;
    }
    s.last_overflow_iter = s.cur_iter;
  } else {
    if (s.consecutive_hysteresis) {
      log = "Consecutive hysteresis is enabled. Restoring hysteresis to " +
            std::to_string(s.delayed_shift);
      s.cur_hysteresis = s.delayed_shift;
    }
    // DeepSpeed >= 0.17.1 (PR #6976) counts the stable steps after the
    // last overflow: the scale grows after scale_window of them.
    const int64_t stable = s.cur_iter - s.last_overflow_iter - 1;
    if (stable > 0 && stable % s.scale_window == 0) {
      if (!s.consecutive_hysteresis)
        s.cur_hysteresis = s.delayed_shift;
      s.cur_scale *= s.scale_factor;
    }
  }
  s.cur_iter += 1;
  writeLog(log, out, n);
  return nullptr;
}

} // namespace

extern "C" {

void zeroc_rt_loss_scaler_init(zeroc_rt_loss_scaler_state_t *state,
                               const zeroc_rt_loss_scaler_config_t *config) {
  if (!state)
    return;
  zeroc_rt_loss_scaler_state_t s = {};
  s.cur_scale = 1.0;
  s.scale_factor = 2.0;
  s.scale_window = 1;
  s.delayed_shift = 1;
  s.cur_hysteresis = 1;
  s.last_overflow_iter = -1;
  if (config && config->enabled) {
    if (config->static_scale > 0) {
      s.cur_scale = config->static_scale;
    } else {
      s.dynamic = 1;
      s.cur_scale = config->initial_scale;
      s.min_scale = config->min_scale;
      if (config->scale_factor > 0)
        s.scale_factor = config->scale_factor;
      s.scale_window = config->scale_window;
      s.delayed_shift = config->hysteresis;
      s.cur_hysteresis = config->hysteresis;
      s.consecutive_hysteresis = config->consecutive_hysteresis ? 1 : 0;
    }
  }
  *state = s;
}

zeroc_rt_status_t
zeroc_rt_loss_scaler_update(zeroc_rt_loss_scaler_state_t *state, int overflow,
                            char *log_line, size_t n) {
  if (!state)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "zeroc_rt_loss_scaler_update: state is NULL");
  if (state->dynamic && state->scale_window < 1)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "zeroc_rt_loss_scaler_update: scale_window %lld",
                          static_cast<long long>(state->scale_window));
  return ZEROC_RT_GUARD_EXCEPTIONS(update(*state, overflow != 0, log_line, n));
}

} // extern "C"

namespace zeroc_rt::train {

zeroc_rt_status_t checkLossScaler(const zeroc_rt_loss_scaler_config_t &c) {
  if (!c.enabled)
    return nullptr;
  if (!std::isfinite(c.static_scale) || c.static_scale < 0)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "loss scaler: static_scale %g must be finite and "
                          ">= 0 (0: dynamic)",
                          c.static_scale);
  // The optimizer step unscales the gradients by 1 / scale.
  auto invertible = [](double scale) {
    return std::isfinite(scale) && scale > 0 && std::isfinite(1.0 / scale);
  };
  if (c.static_scale > 0) {
    if (!invertible(c.static_scale))
      return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                            "loss scaler: static_scale %g is so small that "
                            "1 / static_scale is not finite",
                            c.static_scale);
    return nullptr;
  }
  if (!invertible(c.initial_scale) || !invertible(c.min_scale))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "loss scaler: initial_scale %g and min_scale %g "
                          "must be finite and > 0, with a finite reciprocal",
                          c.initial_scale, c.min_scale);
  if (c.scale_window < 1 || c.hysteresis < 1)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "loss scaler: scale_window %lld and hysteresis %d "
                          "must be >= 1",
                          static_cast<long long>(c.scale_window), c.hysteresis);
  if (!std::isfinite(c.scale_factor) || c.scale_factor < 0 ||
      (c.scale_factor > 0 && c.scale_factor <= 1))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "loss scaler: scale_factor %g must be > 1 (0: 2)",
                          c.scale_factor);
  return nullptr;
}

} // namespace zeroc_rt::train
