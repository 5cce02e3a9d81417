//===- engine.cc - zeroc_rt_engine_* calls of the micro-step -----*- C++ -*-===//
//
// The generated micro-step reaches the engine's state only through these
// calls. Accessors return NULL for a NULL engine, an out-of-range parameter
// or a buffer the stage does not have (param_replica in stage 3,
// param_shard in stages 0-2).
//
//===----------------------------------------------------------------------===//

#include "train/train_internal.h"

#include "comm_internal.h"
#include "status_internal.h"

#include <cstring>

namespace {

zeroc_rt::train::ParamState *paramOf(zeroc_rt_engine_t *engine, int32_t param) {
  if (!engine || param < 0 ||
      static_cast<size_t>(param) >= engine->state.params.size())
    return nullptr;
  return &engine->state.params[static_cast<size_t>(param)];
}

zeroc_rt_status_t gradAccumulate(zeroc_rt_engine_t *engine, int32_t param,
                                 const void *grad, int64_t count) {
  if (!engine)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "zeroc_rt_engine_grad_accumulate: engine is NULL");
  zeroc_rt::train::ParamState *p = paramOf(engine, param);
  if (!p)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "zeroc_rt_engine_grad_accumulate: parameter index %d "
                          "is outside [0, %zu)",
                          param, engine->state.params.size());
  if (p->frozen)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "zeroc_rt_engine_grad_accumulate: parameter '%s' "
                          "is frozen and has no gradient",
                          p->desc->name);
  if (count != p->accumulateCount)
    return ZEROC_RT_ERROR(
        ZEROC_RT_INVALID_ARGUMENT,
        "zeroc_rt_engine_grad_accumulate: parameter '%s' (%lld elements) "
        "got %lld gradient elements but the micro-step accumulates %lld "
        "(the full gradient, or this rank's shard)",
        p->desc->name, static_cast<long long>(p->numel),
        static_cast<long long>(count),
        static_cast<long long>(p->accumulateCount));
  zeroc_rt_status_t status = nullptr;
  if (engine->firstAccumulation && p->gradDtype == p->dtype)
    std::memcpy(p->grad, grad, static_cast<size_t>(count) * p->gradElemSize);
  else if (engine->firstAccumulation)
    status = zeroc_rt_k_convert(p->dtype, grad, p->gradDtype, p->grad, count, 1.0);
  else if (p->gradDtype == p->dtype)
    status = zeroc_rt_k_accumulate(p->dtype, grad, p->grad, count);
  else
    status = zeroc_rt_k_accumulate_widening(p->dtype, grad, p->gradDtype,
                                            p->grad, count);
  if (status)
    return ZEROC_RT_TRAIN_WRAP(
        status, zeroc_rt::train::format(
                    "zeroc_rt_engine_grad_accumulate: parameter '%s': ",
                    p->desc->name));
  return nullptr;
}

} // namespace

extern "C" {

void *zeroc_rt_engine_arena(zeroc_rt_engine_t *engine) {
  return engine ? engine->arena.data() : nullptr;
}

const void *zeroc_rt_engine_blob(zeroc_rt_engine_t *engine) {
  return engine ? engine->blob.data() : nullptr;
}

zeroc_rt_comm_t *zeroc_rt_engine_comm(zeroc_rt_engine_t *engine) {
  return engine ? engine->comm : nullptr;
}

void *zeroc_rt_engine_param_replica(zeroc_rt_engine_t *engine, int32_t param) {
  zeroc_rt::train::ParamState *p = paramOf(engine, param);
  return p ? p->replica : nullptr;
}

void *zeroc_rt_engine_param_shard(zeroc_rt_engine_t *engine, int32_t param) {
  zeroc_rt::train::ParamState *p = paramOf(engine, param);
  return p ? p->shardParam : nullptr;
}

void zeroc_rt_engine_trace_op(zeroc_rt_engine_t *engine, int32_t op) {
  // Called before every op: started collectives advance between ops.
  if (engine)
    zeroc_rt_comm_progress(engine->comm);
  if (!engine || !engine->tracer.enabled() || op < 0 ||
      op >= engine->program->num_ops)
    return;
  engine->tracer.beginOp(engine->program->op_names[op]);
}

void *zeroc_rt_engine_buffer(zeroc_rt_engine_t *engine, int32_t buffer) {
  if (!engine || buffer < 0 ||
      static_cast<size_t>(buffer) >= engine->state.buffers.size())
    return nullptr;
  return engine->state.buffers[static_cast<size_t>(buffer)].data;
}

zeroc_rt_status_t zeroc_rt_engine_grad_accumulate(zeroc_rt_engine_t *engine,
                                                  int32_t param,
                                                  const void *grad,
                                                  int64_t count) {
  return ZEROC_RT_GUARD_EXCEPTIONS(gradAccumulate(engine, param, grad, count));
}

uint64_t zeroc_rt_engine_dropout_counter(zeroc_rt_engine_t *engine) {
  return engine ? engine->dropoutCounter : 0;
}

double zeroc_rt_engine_loss_scale(zeroc_rt_engine_t *engine) {
  return engine ? engine->scaler.cur_scale : 1.0;
}

void zeroc_rt_engine_mark_backward(zeroc_rt_engine_t *engine) {
  if (!engine)
    return;
  engine->backwardMarked = true;
  engine->backwardStart = std::chrono::steady_clock::now();
  engine->collectiveMsAtBackward =
      engine->comm ? engine->comm->collectiveMs : 0.0;
}

} // extern "C"
