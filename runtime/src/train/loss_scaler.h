//===- loss_scaler.h - DeepSpeed's loss scaler as a state machine -*- C++ -*-===//
//
// Internal to the runtime (tests include it through the private src/ path).
// zeroc_rt_loss_scaler_update is DeepSpeed's DynamicLossScaler.update_scale
// (runtime/fp16/loss_scaler.py; /work/shared/reference/deepspeed-semantics.md
// §2) as a pure state machine, checked step for step against the Python
// re-implementation in tools/reference/ds_schedules.py.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_SRC_TRAIN_LOSS_SCALER_H
#define ZEROC_RT_SRC_TRAIN_LOSS_SCALER_H

#include "zeroc_rt/train.h"

#include <stddef.h>

ZEROC_RT_EXTERN_C_BEGIN

typedef struct zeroc_rt_loss_scaler_state {
  int32_t dynamic;      ///< 0: a static scale (or scaling disabled: 1)
  double cur_scale;
  double min_scale;
  double scale_factor;  ///< 2
  int64_t scale_window;
  int32_t delayed_shift; ///< hysteresis
  int32_t cur_hysteresis;
  int32_t consecutive_hysteresis;
  int64_t cur_iter;           ///< update calls so far
  int64_t last_overflow_iter; ///< -1 initially
} zeroc_rt_loss_scaler_state_t;

/// The state DeepSpeed's scaler starts in for `config`: disabled: a static
/// scale of 1; static_scale > 0: that static scale; otherwise a dynamic
/// scaler at initial_scale with cur_hysteresis = hysteresis, cur_iter 0,
/// last_overflow_iter -1 (scale_factor 0 in the config means 2).
void zeroc_rt_loss_scaler_init(zeroc_rt_loss_scaler_state_t *state,
                               const zeroc_rt_loss_scaler_config_t *config);

/// One call of update_scale(overflow) after an optimizer step. A static
/// scaler (or disabled scaling: scale 1) never changes; on overflow it logs
/// "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: S,
/// reducing to S" with its unchanged scale (DeepSpeed's ZeRO optimizers
/// print nothing there; zeroc does, so that a run whose steps all overflow
/// is not silent). A dynamic one, on overflow:
///  - delayed_shift == 1 or cur_hysteresis == 1: at cur_scale == min_scale
///    returns a ZEROC_RT_NUMERIC_ERROR "Current loss scale already at minimum
///    - cannot decrease scale anymore. Exiting run." and leaves the state
///    unchanged; otherwise cur_scale = max(cur_scale / factor, min_scale),
///    logging "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss
///    scale: A, reducing to B";
///  - otherwise cur_hysteresis -= 1, logging "[deepspeed] OVERFLOW! Rank 0
///    Skipping step. Attempted loss scale: A, but hysteresis is H. Reducing
///    hysteresis to H-1";
///  - last_overflow_iter = cur_iter.
/// On a clean step: with consecutive_hysteresis, cur_hysteresis =
/// delayed_shift, logging "Consecutive hysteresis is enabled. Restoring
/// hysteresis to H"; if stable = cur_iter - last_overflow_iter - 1 is a
/// positive multiple of scale_window (DeepSpeed >= 0.17.1) the scale is
/// multiplied by the factor (and, without consecutive
/// hysteresis, cur_hysteresis = delayed_shift). cur_iter += 1 on every call
/// that does not fail. Scales are printed as DeepSpeed does, int(scale).
/// The log line (without newline, "" when none) is written to `log_line`
/// (truncated to n - 1 characters) when it is not NULL and n > 0.
ZEROC_RT_MUST_USE zeroc_rt_status_t
zeroc_rt_loss_scaler_update(zeroc_rt_loss_scaler_state_t *state, int overflow,
                            char *log_line, size_t n);

ZEROC_RT_EXTERN_C_END

#ifdef __cplusplus
namespace zeroc_rt::train {

/// The loss-scaler config; messages start with "loss scaler". NULL if valid.
ZEROC_RT_MUST_USE zeroc_rt_status_t
checkLossScaler(const zeroc_rt_loss_scaler_config_t &config);

} // namespace zeroc_rt::train
#endif

#endif // ZEROC_RT_SRC_TRAIN_LOSS_SCALER_H
