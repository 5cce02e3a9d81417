//===- engine_step.cc - zeroc_rt_engine_* calls of the optimizer step -----===//
//
// The generated train_step reaches the optimizer state through these calls.
// They apply what the compiler decided (which elements, which factor, which
// step) to the engine's buffers; none of them looks at the ZeRO stage.
//
//===----------------------------------------------------------------------===//

#include "train/train_internal.h"

#include "status_internal.h"
#include "train/lr_schedule.h"

#include <cmath>
#include <cstring>
#include <vector>

namespace {

using zeroc_rt::train::AdamHyper;
using zeroc_rt::train::Device;
using zeroc_rt::train::ParamState;
using zeroc_rt::train::SgdHyper;

/// The trainable parameter `param`, or NULL after setting *status.
ParamState *trainableParam(zeroc_rt_engine_t *engine, int32_t param,
                           int64_t count, const char *what,
                           zeroc_rt_status_t *status) {
  *status = nullptr;
  if (!engine || param < 0 ||
      static_cast<size_t>(param) >= engine->state.params.size()) {
    *status = ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                             "%s: no parameter %d", what, param);
    return nullptr;
  }
  ParamState &p = engine->state.params[static_cast<size_t>(param)];
  if (p.frozen || count != p.updateCount) {
    *status = ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                             "%s: parameter '%s' %s (%lld elements given, "
                             "this rank updates %lld)",
                             what, p.desc->name,
                             p.frozen ? "is frozen" : "has another layout",
                             static_cast<long long>(count),
                             static_cast<long long>(p.updateCount));
    return nullptr;
  }
  return &p;
}

/// The multi-tensor step's view of parameter `p`'s update from `grad`.
void describeUpdate(ParamState &p, void *grad, zeroc_rt::train::UpdateTensor &t) {
  t.name = p.desc->name;
  t.gradDtype = p.gradDtype;
  t.grad = grad;
  t.dtype = p.masterDtype;
  t.param = p.hasMaster() ? p.master : p.updateParam;
  t.roundedDtype = p.dtype;
  t.rounded = p.hasMaster() ? p.updateParam : nullptr;
  t.count = p.updateCount;
}
void describeState(ParamState &p, zeroc_rt::train::AdamTensor &t) {
  t.expAvg = p.expAvg;
  t.expAvgSq = p.expAvgSq;
}
void describeState(ParamState &p, zeroc_rt::train::SgdTensor &t) { t.momentumBuf = p.momentum; }

/// The tensors of a multi-tensor update of `count` parameters, each
/// trainable, with the count its layout gives this rank, and given once.
template <typename Tensor>
zeroc_rt_status_t describeUpdates(zeroc_rt_engine_t *engine, int32_t count, const int32_t *params,
                                  void *const *grads, const int64_t *counts, const char *what,
                                  std::vector<Tensor> &tensors) {
  if (!engine || count < 0 || (count > 0 && (!params || !grads || !counts)))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: NULL engine or table, or count %d", what,
                          count);
  tensors.reserve(static_cast<size_t>(count));
  std::vector<bool> seen(engine->state.params.size());
  for (int32_t i = 0; i < count; ++i) {
    zeroc_rt_status_t status;
    ParamState *p = trainableParam(engine, params[i], counts[i], what, &status);
    if (!p)
      return status;
    if (seen[static_cast<size_t>(params[i])])
      return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                            "%s: parameter '%s' is given twice", what, p->desc->name);
    seen[static_cast<size_t>(params[i])] = true;
    Tensor t{};
    describeUpdate(*p, grads[i], t);
    describeState(*p, t);
    tensors.push_back(t);
  }
  return nullptr;
}

/// A multi-tensor update (`Device::adamStepMulti` or `sgdStepMulti`) of
/// `count` parameters.
template <typename Tensor, typename Hyper>
zeroc_rt_status_t
updateMulti(zeroc_rt_engine_t *engine, int32_t count, const int32_t *params, void *const *grads,
            const int64_t *counts, const Hyper &hyper, const char *what,
            zeroc_rt_status_t (zeroc_rt::train::Device::*step)(const Tensor *, int64_t,
                                                               const Hyper &, void *)) {
  std::vector<Tensor> tensors;
  ZEROC_RT_RETURN_IF_ERROR(describeUpdates(engine, count, params, grads, counts, what, tensors));
  return (engine->device->*step)(tensors.data(), count, hyper, engine->state.masterGrad.data());
}

zeroc_rt_status_t updateLossScale(zeroc_rt_engine_t *engine, int overflow) {
  if (!engine)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "zeroc_rt_engine_update_loss_scale: engine is NULL");
  char log[256];
  zeroc_rt_status_t status =
      zeroc_rt_loss_scaler_update(&engine->scaler, overflow, log, sizeof log);
  // Every rank holds the same scaler state and flag: an error here is
  // returned by all of them.
  if (status) {
    engine->stepErrorAgreed = true;
    return status;
  }
  engine->scalerLog = log;
  return nullptr;
}

zeroc_rt_status_t lrSchedule(zeroc_rt_engine_t *engine, int64_t t,
                             double baseLr, double baseMomentum, double *lr,
                             double *momentum) {
  if (!engine || !lr || !momentum)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "zeroc_rt_engine_lr_schedule: NULL argument");
  double cycled = 0.0;
  *lr = zeroc_rt_lr_at(&engine->program->lr_schedule, baseLr, t, &cycled);
  *momentum = std::isnan(cycled) ? baseMomentum : cycled;
  return nullptr;
}

zeroc_rt_status_t stashLoss(zeroc_rt_engine_t *engine, const void *loss,
                            zeroc_rt_dtype_t dtype) {
  const char *k = "zeroc_rt_engine_stash_loss";
  if (!engine || !engine->program || !loss)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: NULL engine or loss", k);
  if (dtype != ZEROC_RT_DTYPE_F32 && dtype != ZEROC_RT_DTYPE_F64)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: the loss is %s, not f32 or f64",
                          k, zeroc_rt_dtype_name(dtype));
  const int slots = engine->program->grad_accum;
  if (engine->stashedLosses >= slots)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: a %d-th loss in a step of %d micro-steps", k,
                          engine->stashedLosses + 1, slots);
  if (engine->stashedLosses > 0 && dtype != engine->stashedDtype)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: the step's losses change dtype (%s, then %s)", k,
                          zeroc_rt_dtype_name(engine->stashedDtype),
                          zeroc_rt_dtype_name(dtype));
  if (!engine->lossSlots.data())
    ZEROC_RT_RETURN_IF_ERROR(engine->lossSlots.allocate(
        *engine->device, static_cast<size_t>(slots) * 8, "the micro-steps' losses"));
  engine->stashedDtype = dtype;
  return engine->device->copy(engine->lossSlots.bytes() + 8 * engine->stashedLosses++,
                              loss, zeroc_rt_dtype_size(dtype));
}

} // namespace

namespace zeroc_rt::train {

zeroc_rt_status_t readStashedLosses(zeroc_rt_engine_t &engine, double *sum) {
  const int n = engine.stashedLosses;
  engine.stashedLosses = 0;
  *sum = 0.0;
  std::vector<unsigned char> slots(static_cast<size_t>(n) * 8);
  if (n > 0)
    ZEROC_RT_RETURN_IF_ERROR(
        engine.device->download(slots.data(), engine.lossSlots.data(), slots.size()));
  for (int i = 0; i < n; ++i) {
    if (engine.stashedDtype == ZEROC_RT_DTYPE_F64) {
      double v;
      std::memcpy(&v, slots.data() + 8 * i, sizeof v);
      *sum += v;
    } else {
      float v;
      std::memcpy(&v, slots.data() + 8 * i, sizeof v);
      *sum += static_cast<double>(v);
    }
  }
  return nullptr;
}

} // namespace zeroc_rt::train

extern "C" {

zeroc_rt_status_t zeroc_rt_engine_stash_loss(zeroc_rt_engine_t *engine, const void *loss,
                                             zeroc_rt_dtype_t dtype) {
  return ZEROC_RT_GUARD_EXCEPTIONS(stashLoss(engine, loss, dtype));
}

void *zeroc_rt_engine_grad_accumulator(zeroc_rt_engine_t *engine, int32_t param) {
  if (!engine || param < 0 ||
      static_cast<size_t>(param) >= engine->state.params.size())
    return nullptr;
  ParamState &p = engine->state.params[static_cast<size_t>(param)];
  return p.frozen ? nullptr : p.grad;
}

int64_t zeroc_rt_engine_step_count(zeroc_rt_engine_t *engine) {
  return engine ? engine->optimizerSteps : 0;
}

void zeroc_rt_engine_advance_step(zeroc_rt_engine_t *engine) {
  if (engine)
    ++engine->optimizerSteps;
}

zeroc_rt_status_t zeroc_rt_engine_lr_schedule(zeroc_rt_engine_t *engine,
                                              int64_t t, double base_lr,
                                              double base_momentum, double *lr,
                                              double *momentum) {
  return ZEROC_RT_GUARD_EXCEPTIONS(
      lrSchedule(engine, t, base_lr, base_momentum, lr, momentum));
}

zeroc_rt_status_t zeroc_rt_engine_update_loss_scale(zeroc_rt_engine_t *engine,
                                                    int overflow) {
  return ZEROC_RT_GUARD_EXCEPTIONS(updateLossScale(engine, overflow));
}

zeroc_rt_status_t zeroc_rt_engine_adam_update(
    zeroc_rt_engine_t *engine, int32_t param, void *grad, int64_t count,
    double factor, double lr, double beta1, double beta2, double eps,
    double weight_decay, int adam_w_mode, int bias_correction, int64_t step) {
  return ZEROC_RT_GUARD_EXCEPTIONS(updateMulti(
      engine, 1, &param, &grad, &count,
      AdamHyper{factor, lr, beta1, beta2, eps, weight_decay, adam_w_mode, bias_correction, step},
      "zeroc_rt_engine_adam_update", &Device::adamStepMulti));
}

zeroc_rt_status_t zeroc_rt_engine_adam_update_multi(
    zeroc_rt_engine_t *engine, int32_t count, const int32_t *params,
    void *const *grads, const int64_t *counts, double factor, double lr,
    double beta1, double beta2, double eps, double weight_decay,
    int adam_w_mode, int bias_correction, int64_t step) {
  return ZEROC_RT_GUARD_EXCEPTIONS(updateMulti(
      engine, count, params, grads, counts,
      AdamHyper{factor, lr, beta1, beta2, eps, weight_decay, adam_w_mode, bias_correction, step},
      "zeroc_rt_engine_adam_update_multi", &Device::adamStepMulti));
}

zeroc_rt_status_t zeroc_rt_engine_sgd_update(
    zeroc_rt_engine_t *engine, int32_t param, void *grad, int64_t count,
    double factor, double lr, double momentum, double dampening,
    double weight_decay, int nesterov, int64_t step) {
  return ZEROC_RT_GUARD_EXCEPTIONS(
      updateMulti(engine, 1, &param, &grad, &count,
                  SgdHyper{factor, lr, momentum, dampening, weight_decay, nesterov, step},
                  "zeroc_rt_engine_sgd_update", &Device::sgdStepMulti));
}

zeroc_rt_status_t zeroc_rt_engine_sgd_update_multi(zeroc_rt_engine_t *engine, int32_t count,
                                                   const int32_t *params, void *const *grads,
                                                   const int64_t *counts, double factor, double lr,
                                                   double momentum, double dampening,
                                                   double weight_decay, int nesterov,
                                                   int64_t step) {
  return ZEROC_RT_GUARD_EXCEPTIONS(
      updateMulti(engine, count, params, grads, counts,
                  SgdHyper{factor, lr, momentum, dampening, weight_decay, nesterov, step},
                  "zeroc_rt_engine_sgd_update_multi", &Device::sgdStepMulti));
}

void zeroc_rt_engine_mark_reduced(zeroc_rt_engine_t *engine) {
  if (!engine)
    return;
  engine->reducedMarked = true;
  engine->reducedAt = std::chrono::steady_clock::now();
}

} // extern "C"
