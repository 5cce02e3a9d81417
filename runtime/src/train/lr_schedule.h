//===- lr_schedule.h - DeepSpeed's LR schedules as a pure function -*- C++ -*-===//
//
// Internal to the runtime (the tests include it through the private src/
// include path). zeroc_rt_lr_at is a pure function of the schedule, the
// optimizer's lr and the scheduler step count, so that it can be checked
// value for value against tools/reference/ds_schedules.py, the Python
// formula module the PyTorch reference trainer uses too.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_SRC_TRAIN_LR_SCHEDULE_H
#define ZEROC_RT_SRC_TRAIN_LR_SCHEDULE_H

#include "zeroc_rt/train.h"

#include <stddef.h>

ZEROC_RT_EXTERN_C_BEGIN

/// The lr of an optimizer step taken after `t` scheduler steps (t >= 0).
/// DeepSpeed builds the scheduler with last_batch_iteration = -1, which sets
/// the optimizer's initial lr (and OneCycle's initial momentum), and calls
/// scheduler.step() after every optimizer step that was not skipped for
/// overflow; so step t of this function is last_batch_iteration = t - 1:
///   t = 0: WarmupLR / WarmupDecayLR: warmup_min_lr; WarmupCosineLR: 0 (its
///          get_lr() before the first step); OneCycle: cycle_min_lr (and
///          momentum cycle_min_mom); constant: base_lr.
///   t > 0: the class's get_lr() with last_batch_iteration = t - 1
///          (DeepSpeed's runtime/lr_schedules.py, same operation order).
/// `base_lr` is the optimizer's lr (WarmupCosineLR scales it; the constant
/// schedule returns it). When `momentum_out` is not NULL it receives
/// OneCycle's cycled momentum (Adam's beta1; DeepSpeed sets beta2 to 0.99
/// alongside it) when cycle_momentum is on, and NaN otherwise. A negative t
/// or a NULL schedule gives NaN.
double zeroc_rt_lr_at(const zeroc_rt_lr_schedule_t *schedule, double base_lr,
                      int64_t t, double *momentum_out);

/// The beta2 DeepSpeed's OneCycle writes next to the cycled beta1.
#define ZEROC_RT_ONE_CYCLE_BETA2 0.99

ZEROC_RT_EXTERN_C_END

#ifdef __cplusplus
namespace zeroc_rt::train {

/// The schedule's fields for its type; messages start with "lr schedule".
/// NULL when valid.
ZEROC_RT_MUST_USE zeroc_rt_status_t
checkLrSchedule(const zeroc_rt_lr_schedule_t &schedule);

/// "WarmupLR", ... ("constant" for ZEROC_RT_LR_CONSTANT).
const char *lrScheduleName(zeroc_rt_lr_schedule_type_t type);

} // namespace zeroc_rt::train
#endif

#endif // ZEROC_RT_SRC_TRAIN_LR_SCHEDULE_H
