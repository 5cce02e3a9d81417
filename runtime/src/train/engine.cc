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

#include <algorithm>
#include <cstring>
#include <vector>

namespace {

zeroc_rt::train::ParamState *paramOf(zeroc_rt_engine_t *engine, int32_t param) {
  if (!engine || param < 0 ||
      static_cast<size_t>(param) >= engine->state.params.size())
    return nullptr;
  return &engine->state.params[static_cast<size_t>(param)];
}

/// Whether this accumulation of `p` writes its accumulator instead of
/// adding: the first of the parameter's accumulations (its gradient, its
/// rows) in the first micro-step of an optimizer step.
bool firstWrite(zeroc_rt_engine_t *engine, zeroc_rt::train::ParamState &p) {
  const bool first = engine->firstAccumulation &&
                     p.accumulatedInMicroStep != engine->microStepSerial;
  p.accumulatedInMicroStep = engine->microStepSerial;
  return first;
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
  zeroc_rt::train::Device &device = *engine->device;
  const bool write = firstWrite(engine, *p);
  if (write && p->gradDtype == p->dtype)
    status = device.copy(p->grad, grad, static_cast<size_t>(count) * p->gradElemSize);
  else if (write)
    status = device.convert(p->dtype, grad, p->gradDtype, p->grad, count, 1.0);
  else if (p->gradDtype == p->dtype)
    status = device.accumulate(p->dtype, grad, p->grad, count);
  else
    status = device.accumulateWidening(p->dtype, grad, p->gradDtype, p->grad,
                                       count);
  if (status)
    return ZEROC_RT_TRAIN_WRAP(
        status, zeroc_rt::train::format(
                    "zeroc_rt_engine_grad_accumulate: parameter '%s': ",
                    p->desc->name));
  return nullptr;
}

/// zeroc_rt_engine_grad_accumulate_rows: every rank's rows, added into
/// this rank's shard of the flat gradient in rank order.
zeroc_rt_status_t gradAccumulateRows(zeroc_rt_engine_t *engine, int32_t param,
                                     const void *rows, const void *indices,
                                     zeroc_rt_dtype_t indexDtype, int64_t n,
                                     int32_t hasPaddingIdx, int64_t paddingIdx) {
  const char *k = "zeroc_rt_engine_grad_accumulate_rows";
  zeroc_rt::train::ParamState *p = paramOf(engine, param);
  if (!p || p->frozen)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: no trainable parameter %d", k, param);
  const zeroc_rt_param_desc_t &d = *p->desc;
  if (engine->program->stage < 2 || p->accumulateCount != p->shard ||
      d.rank < 1 || d.dims[0] < 1 || n < 0 ||
      (indexDtype != ZEROC_RT_DTYPE_I64 && indexDtype != ZEROC_RT_DTYPE_I32))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: parameter '%s': rows are accumulated at stages "
                          "2-3 only, into a parameter with rows, from i32 or "
                          "i64 indices (got %lld)",
                          k, d.name, static_cast<long long>(n));
  const int64_t numRows = d.dims[0], rowElems = p->numel / numRows;
  if (hasPaddingIdx && (paddingIdx < 0 || paddingIdx >= numRows))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: parameter '%s': padding_idx %lld is not a row", k,
                          d.name, static_cast<long long>(paddingIdx));
  const size_t world = static_cast<size_t>(engine->world);
  const size_t count = static_cast<size_t>(n);
  zeroc_rt::train::Device &device = *engine->device;
  // Every rank's indices (as i64) and rows, in the device's memory; the
  // indices are read on the host to place the rows.
  std::vector<int64_t> &allIndices = engine->rowIndices;
  allIndices.resize(count * (world + 1));
  int64_t *own = allIndices.data() + count * world;
  const size_t indexBytes = count * zeroc_rt_dtype_size(indexDtype);
  std::vector<char> ownIndices(indexBytes);
  if (indexBytes)
    ZEROC_RT_RETURN_IF_ERROR(device.download(ownIndices.data(), indices, indexBytes));
  for (size_t i = 0; i < count; ++i)
    own[i] = indexDtype == ZEROC_RT_DTYPE_I64
                 ? reinterpret_cast<const int64_t *>(ownIndices.data())[i]
                 : reinterpret_cast<const int32_t *>(ownIndices.data())[i];
  const size_t rowBytes = static_cast<size_t>(rowElems) * p->elemSize;
  if (engine->rowValues.size() < count * world * rowBytes)
    ZEROC_RT_RETURN_IF_ERROR(engine->rowValues.allocate(
        device, count * world * rowBytes, "the embedding rows of every rank"));
  if (engine->rowIndicesOnDevice.size() < count * (world + 1) * sizeof(int64_t))
    ZEROC_RT_RETURN_IF_ERROR(engine->rowIndicesOnDevice.allocate(
        device, count * (world + 1) * sizeof(int64_t),
        "the embedding indices of every rank"));
  int64_t *ownOnDevice =
      reinterpret_cast<int64_t *>(engine->rowIndicesOnDevice.bytes()) + count * world;
  ZEROC_RT_RETURN_IF_ERROR(device.upload(ownOnDevice, own, count * sizeof(int64_t)));
  ZEROC_RT_RETURN_IF_ERROR(zeroc_rt_comm_all_gather(
      engine->comm, ownOnDevice, engine->rowIndicesOnDevice.data(), n,
      ZEROC_RT_DTYPE_I64));
  ZEROC_RT_RETURN_IF_ERROR(zeroc_rt_comm_all_gather(
      engine->comm, rows, engine->rowValues.data(), n * rowElems, p->dtype));
  ZEROC_RT_RETURN_IF_ERROR(device.download(allIndices.data(),
                                           engine->rowIndicesOnDevice.data(),
                                           count * world * sizeof(int64_t)));
  if (firstWrite(engine, *p))
    ZEROC_RT_RETURN_IF_ERROR(
        device.zero(p->grad, static_cast<size_t>(p->shard) * p->gradElemSize));
  const int64_t first = static_cast<int64_t>(engine->rank) * p->shard;
  const int64_t last = first + p->shard;
  for (size_t i = 0; i < count * world; ++i) {
    int64_t row = allIndices[i] < 0 ? allIndices[i] + numRows : allIndices[i];
    if (row < 0 || row >= numRows)
      return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                            "%s: parameter '%s': index %lld of rank %zu is "
                            "outside [-%lld, %lld)",
                            k, d.name, static_cast<long long>(allIndices[i]),
                            i / count, static_cast<long long>(numRows),
                            static_cast<long long>(numRows));
    if (hasPaddingIdx && row == paddingIdx)
      continue;
    const int64_t lo = std::max(row * rowElems, first);
    const int64_t hi = std::min((row + 1) * rowElems, last);
    if (lo >= hi)
      continue;
    const char *src = engine->rowValues.bytes() + i * rowBytes +
                      static_cast<size_t>(lo - row * rowElems) * p->elemSize;
    char *dst = static_cast<char *>(p->grad) +
                static_cast<size_t>(lo - first) * p->gradElemSize;
    zeroc_rt_status_t st =
        p->gradDtype == p->dtype
            ? device.accumulate(p->dtype, src, dst, hi - lo)
            : device.accumulateWidening(p->dtype, src, p->gradDtype, dst,
                                        hi - lo);
    if (st)
      return st;
  }
  return nullptr;
}

} // namespace

extern "C" {

void *zeroc_rt_engine_arena(zeroc_rt_engine_t *engine) {
  return engine ? engine->arena.data() : nullptr;
}

const void *zeroc_rt_engine_constants(zeroc_rt_engine_t *engine) {
  if (!engine)
    return nullptr;
  return engine->device->hostMemory() ? engine->constants.data()
                                      : engine->deviceConstants.data();
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
  if (engine) {
    zeroc_rt_comm_progress(engine->comm);
    engine->device->beginOp(op);
  }
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

zeroc_rt_status_t zeroc_rt_engine_grad_accumulate_rows(
    zeroc_rt_engine_t *engine, int32_t param, const void *rows,
    const void *indices, zeroc_rt_dtype_t index_dtype, int64_t num_indices,
    int32_t has_padding_idx, int64_t padding_idx) {
  if (!engine)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "zeroc_rt_engine_grad_accumulate_rows: engine is NULL");
  return ZEROC_RT_GUARD_EXCEPTIONS(gradAccumulateRows(
      engine, param, rows, indices, index_dtype, num_indices, has_padding_idx,
      padding_idx));
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
