//===- train_test_model.cc - A hand-written "generated" program -*- C++ -*-===//

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif
#include "train_test_model.h"

#include "train/loss_scaler.h"
#include "train/lr_schedule.h"
#include "zeroc_rt/checksum.h"
#include "zeroc_rt/zeroc_rt.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <sstream>
#include <unistd.h>

namespace zeroc_rt::test::train {

Faults g_faults;
bool g_microStepFlushedDenormals = false;

namespace {

/// The configuration the micro-step was "generated" for.
const ModelConfig *g_current = nullptr;

size_t alignUp(size_t n) { return (n + 63) / 64 * 64; }

/// Byte offsets of the micro-step's scratch buffers inside the arena.
struct ArenaLayout {
  size_t wFull, bFull, xw, pred, diff, sq, loss, coef, dz, dW, db, padW, padB,
      shardW, shardB, total = 0;
  ArenaLayout(const ModelConfig &cfg, int world) {
    size_t es = zeroc_rt_dtype_size(cfg.dtype);
    int64_t pw = (kInFeatures * kOutFeatures + world - 1) / world * world;
    int64_t pb = (kOutFeatures + world - 1) / world * world;
    size_t rows = static_cast<size_t>(cfg.microBatch) * kOutFeatures;
    auto add = [&](int64_t count) {
      size_t off = total;
      total += alignUp(static_cast<size_t>(count) * es);
      return off;
    };
    wFull = add(pw);
    bFull = add(pb);
    xw = add(static_cast<int64_t>(rows));
    pred = add(static_cast<int64_t>(rows));
    diff = add(static_cast<int64_t>(rows));
    sq = add(static_cast<int64_t>(rows));
    loss = add(1);
    coef = add(1);
    dz = add(static_cast<int64_t>(rows));
    dW = add(kInFeatures * kOutFeatures);
    db = add(kOutFeatures);
    padW = add(pw);
    padB = add(pb);
    shardW = add(pw / world);
    shardB = add(pb / world);
  }
};

zeroc_rt_tensor_t tensor(void *data, zeroc_rt_dtype_t dtype,
                         std::initializer_list<int64_t> dims) {
  zeroc_rt_tensor_t t;
  std::memset(&t, 0, sizeof t);
  t.data = data;
  t.dtype = dtype;
  t.rank = static_cast<int32_t>(dims.size());
  int i = 0;
  for (int64_t d : dims)
    t.dims[i++] = d;
  return t;
}

double loadScalar(const void *p, zeroc_rt_dtype_t dtype) {
  return dtype == ZEROC_RT_DTYPE_F32 ? *static_cast<const float *>(p)
                                     : *static_cast<const double *>(p);
}

void storeScalar(void *p, zeroc_rt_dtype_t dtype, double v) {
  if (dtype == ZEROC_RT_DTYPE_F32)
    *static_cast<float *>(p) = static_cast<float>(v);
  else
    *static_cast<double *>(p) = v;
}

double roundTo(double v, zeroc_rt_dtype_t dtype) {
  return dtype == ZEROC_RT_DTYPE_F32 ? static_cast<double>(static_cast<float>(v))
                                     : v;
}

#define RETURN_IF_ERROR(expr)                                                  \
  do {                                                                         \
    zeroc_rt_status_t status_ = (expr);                                        \
    if (status_)                                                               \
      return status_;                                                          \
  } while (0)

zeroc_rt_status_t fail(const std::string &message) {
  return zeroc_rt_status_make(ZEROC_RT_INVALID_ARGUMENT, __FILE__, __LINE__,
                              "%s", message.c_str());
}

/// Stages 2-3: pad the full gradient into a P-buffer, reduce-scatter it into
/// an S-buffer and accumulate the shard.
zeroc_rt_status_t accumulateShard(zeroc_rt_engine_t *engine, int32_t param,
                                  const void *grad, int64_t numel, char *pad,
                                  char *shard, zeroc_rt_dtype_t dtype) {
  zeroc_rt_comm_t *comm = zeroc_rt_engine_comm(engine);
  int world = zeroc_rt_comm_size(comm);
  int64_t padded = (numel + world - 1) / world * world;
  int64_t s = padded / world;
  size_t es = zeroc_rt_dtype_size(dtype);
  zeroc_rt_tensor_t padT = tensor(pad, dtype, {padded});
  RETURN_IF_ERROR(zeroc_rt_k_zero(&padT));
  std::memcpy(pad, grad, static_cast<size_t>(numel) * es);
  RETURN_IF_ERROR(zeroc_rt_comm_reduce_scatter(comm, pad, shard,
                                               static_cast<size_t>(s), dtype,
                                               ZEROC_RT_REDUCE_SUM));
  return zeroc_rt_engine_grad_accumulate(engine, param, shard,
                                         g_faults.wrongGradCount ? s + 1 : s);
}


bool flushingDenormalsNow() {
#if defined(__x86_64__) || defined(__i386__)
  return (_mm_getcsr() & 0x8040u) == 0x8040u;
#elif defined(__aarch64__)
  uint64_t fpcr;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
  return (fpcr >> 24) & 1u;
#else
  return false;
#endif
}

template <int Stage>
zeroc_rt_status_t microStep(zeroc_rt_engine_t *engine,
                            const void *const *inputs, double *lossOut) {
  const ModelConfig &cfg = *g_current;
  const zeroc_rt_dtype_t dt = cfg.dtype;
  zeroc_rt_comm_t *comm = zeroc_rt_engine_comm(engine);
  const int world = zeroc_rt_comm_size(comm), rank = zeroc_rt_comm_rank(comm);
  const int64_t mb = cfg.microBatch;
  ArenaLayout layout(cfg, world);
  char *arena = static_cast<char *>(zeroc_rt_engine_arena(engine));
  if (!arena)
    return fail("arena is NULL");

  // The engine's schedule: counter = s*GAS*W + m, m on rank m % W.
  const uint64_t counter = zeroc_rt_engine_dropout_counter(engine);
  const uint64_t perStep = static_cast<uint64_t>(cfg.gradAccum) * world;
  const int64_t step = static_cast<int64_t>(counter / perStep);
  if (static_cast<int>(counter % perStep % world) != rank)
    return fail("dropout counter " + std::to_string(counter) +
                " does not belong to rank " + std::to_string(rank));
  if (g_faults.errorAtStep == step &&
      (g_faults.errorOnRank < 0 || g_faults.errorOnRank == rank))
    return zeroc_rt_status_make(ZEROC_RT_NUMERIC_ERROR, __FILE__, __LINE__,
                                "injected micro-step failure");
  g_microStepFlushedDenormals = flushingDenormalsNow();
  zeroc_rt_engine_trace_op(engine, 0); // as the emitted code does before op 0
  zeroc_rt_engine_trace_op(engine, 2); // out of range: ignored
  zeroc_rt_engine_trace_op(nullptr, 0);
  const double lossScale = zeroc_rt_engine_loss_scale(engine);
  if (!cfg.scaler.enabled && lossScale != 1.0)
    return fail("loss scale " + std::to_string(lossScale) +
                " without loss scaling");

  // Engine calls by stage.
  if (zeroc_rt_engine_param_replica(engine, 2) ||
      zeroc_rt_engine_param_shard(engine, -1))
    return fail("out-of-range parameter index returned a buffer");
  if (!zeroc_rt_engine_constants(engine))
    return fail("the constants are NULL");
  void *w, *b;
  if (Stage <= 2) {
    if (zeroc_rt_engine_param_shard(engine, 0))
      return fail("param_shard is not NULL in stage " + std::to_string(Stage));
    w = zeroc_rt_engine_param_replica(engine, 0);
    b = zeroc_rt_engine_param_replica(engine, 1);
  } else {
    if (zeroc_rt_engine_param_replica(engine, 0))
      return fail("param_replica is not NULL in stage 3");
    int64_t pw = (kInFeatures * kOutFeatures + world - 1) / world * world;
    int64_t pb = (kOutFeatures + world - 1) / world * world;
    w = arena + layout.wFull;
    b = arena + layout.bFull;
    RETURN_IF_ERROR(zeroc_rt_comm_all_gather(
        comm, zeroc_rt_engine_param_shard(engine, 0), w,
        static_cast<size_t>(pw / world), dt));
    RETURN_IF_ERROR(zeroc_rt_comm_all_gather(
        comm, zeroc_rt_engine_param_shard(engine, 1), b,
        static_cast<size_t>(pb / world), dt));
  }
  if (!w || !b)
    return fail("parameter buffer is NULL");

  // Forward.
  zeroc_rt_tensor_t x = tensor(const_cast<void *>(inputs[0]), dt, {mb, kInFeatures});
  zeroc_rt_tensor_t y = tensor(const_cast<void *>(inputs[1]), dt, {mb, kOutFeatures});
  zeroc_rt_tensor_t wT = tensor(w, dt, {kInFeatures, kOutFeatures});
  zeroc_rt_tensor_t bT = tensor(b, dt, {kOutFeatures});
  zeroc_rt_tensor_t xw = tensor(arena + layout.xw, dt, {mb, kOutFeatures});
  zeroc_rt_tensor_t pred = tensor(arena + layout.pred, dt, {mb, kOutFeatures});
  zeroc_rt_tensor_t diff = tensor(arena + layout.diff, dt, {mb, kOutFeatures});
  zeroc_rt_tensor_t sq = tensor(arena + layout.sq, dt, {mb, kOutFeatures});
  zeroc_rt_tensor_t loss = tensor(arena + layout.loss, dt, {});
  RETURN_IF_ERROR(zeroc_rt_k_matmul(&x, &wT, &xw));
  RETURN_IF_ERROR(zeroc_rt_k_binary(ZEROC_RT_BINARY_ADD, &xw, &bT, &pred));
  RETURN_IF_ERROR(zeroc_rt_k_binary(ZEROC_RT_BINARY_SUB, &pred, &y, &diff));
  RETURN_IF_ERROR(zeroc_rt_k_binary(ZEROC_RT_BINARY_MUL, &diff, &diff, &sq));
  RETURN_IF_ERROR(zeroc_rt_k_reduce(ZEROC_RT_REDUCE_OP_MEAN, &sq, 0x3u, &loss));
  *lossOut = loadScalar(loss.data, dt);
  const bool nan = g_faults.nanAtStep == step &&
                   (g_faults.nanOnRank < 0 || g_faults.nanOnRank == rank);
  if (nan)
    *lossOut = std::numeric_limits<double>::quiet_NaN();
  if (cfg.stashLoss) { // as a CUDA program hands its loss over
    if (nan && dt == ZEROC_RT_DTYPE_F64)
      *static_cast<double *>(loss.data) = std::numeric_limits<double>::quiet_NaN();
    else if (nan)
      *static_cast<float *>(loss.data) = std::numeric_limits<float>::quiet_NaN();
    *lossOut = 12345.0; // not read
    RETURN_IF_ERROR(zeroc_rt_engine_stash_loss(engine, loss.data, dt));
  }

  // The buffer: += the micro-batch's mean of x[:, 0] and x[:, 1] (each
  // rank from its own micro-batches, as a running statistic).
  void *count = zeroc_rt_engine_buffer(engine, 0);
  if (zeroc_rt_engine_buffer(engine, 1) || (cfg.buffer != (count != nullptr)))
    return fail("zeroc_rt_engine_buffer does not match the program's buffers");
  if (count)
    for (int64_t j = 0; j < kOutFeatures; ++j) {
      double sum = 0;
      for (int64_t i = 0; i < mb; ++i)
        sum += loadScalar(static_cast<const char *>(inputs[0]) +
                              (i * kInFeatures + j) * zeroc_rt_dtype_size(dt),
                          dt);
      char *slot = static_cast<char *>(count) + j * zeroc_rt_dtype_size(dt);
      storeScalar(slot, dt, loadScalar(slot, dt) + sum / static_cast<double>(mb));
    }

  zeroc_rt_engine_trace_op(engine, 1);
  zeroc_rt_engine_mark_backward(engine); // as the emitted code does
  zeroc_rt_engine_mark_backward(nullptr); // ignored

  // Backward, seeded with loss scale / GAS (DeepSpeed's scale_wrt_gas):
  // dz = scale / GAS * 2 * diff / (MB * 2); dW = x^T dz; db = sum_rows dz.
  zeroc_rt_tensor_t coef = tensor(arena + layout.coef, dt, {});
  storeScalar(coef.data, dt,
              roundTo(2.0 / static_cast<double>(mb * kOutFeatures), dt) *
                  lossScale / static_cast<double>(cfg.gradAccum));
  zeroc_rt_tensor_t dz = tensor(arena + layout.dz, dt, {mb, kOutFeatures});
  zeroc_rt_tensor_t dW = tensor(arena + layout.dW, dt, {kInFeatures, kOutFeatures});
  zeroc_rt_tensor_t db = tensor(arena + layout.db, dt, {kOutFeatures});
  RETURN_IF_ERROR(zeroc_rt_k_binary(ZEROC_RT_BINARY_MUL, &diff, &coef, &dz));
  RETURN_IF_ERROR(zeroc_rt_k_gemm(&x, &dz, nullptr, 1.0, 0.0, 1, 0, &dW));
  RETURN_IF_ERROR(zeroc_rt_k_reduce(ZEROC_RT_REDUCE_OP_SUM, &dz, 0x1u, &db));
  if (step < 64 && ((g_faults.overflowSteps >> step) & 1u) &&
      (g_faults.overflowOnRank < 0 || g_faults.overflowOnRank == rank))
    storeScalar(dW.data, dt, std::numeric_limits<double>::infinity());

  const int64_t nW = kInFeatures * kOutFeatures, nB = kOutFeatures;
  if (Stage <= 1) {
    RETURN_IF_ERROR(zeroc_rt_engine_grad_accumulate(
        engine, 0, dW.data, g_faults.wrongGradCount ? nW - 1 : nW));
    return zeroc_rt_engine_grad_accumulate(engine, 1, db.data, nB);
  }
  RETURN_IF_ERROR(accumulateShard(engine, 0, dW.data, nW, arena + layout.padW,
                                  arena + layout.shardW, dt));
  return accumulateShard(engine, 1, db.data, nB, arena + layout.padB,
                         arena + layout.shardB, dt);
}

/// The optimizer step as zeroc's @train_step lowers it for `Stage`.
template <int Stage>
zeroc_rt_status_t trainStep(zeroc_rt_engine_t *engine,
                            zeroc_rt_step_result_t *result) {
  const ModelConfig &cfg = *g_current;
  const zeroc_rt_dtype_t dt = cfg.dtype;
  const size_t es = zeroc_rt_dtype_size(dt);
  zeroc_rt_comm_t *comm = zeroc_rt_engine_comm(engine);
  const int world = zeroc_rt_comm_size(comm), rank = zeroc_rt_comm_rank(comm);
  ArenaLayout layout(cfg, world);
  char *arena = static_cast<char *>(zeroc_rt_engine_arena(engine));
  const zeroc_rt_optimizer_config_t &opt = cfg.optimizer;
  const bool adam = opt.type == ZEROC_RT_OPTIMIZER_ADAM;
  const double scale = zeroc_rt_engine_loss_scale(engine);
  const int64_t t = zeroc_rt_engine_step_count(engine);
  double lr = 0, mom = 0;
  RETURN_IF_ERROR(zeroc_rt_engine_lr_schedule(
      engine, t, opt.lr, adam ? opt.beta1 : opt.momentum, &lr, &mom));

  const int64_t numel[2] = {kInFeatures * kOutFeatures, kOutFeatures};
  char *shards[2] = {arena + layout.shardW, arena + layout.shardB};
  char *grads[2];
  int64_t counts[2], shardSizes[2];
  for (int i = 0; i < 2; ++i) {
    const int64_t padded = (numel[i] + world - 1) / world * world;
    shardSizes[i] = padded / world;
    char *acc = static_cast<char *>(zeroc_rt_engine_grad_accumulator(engine, i));
    if (!acc)
      return fail("no gradient accumulator");
    grads[i] = acc;
    counts[i] = Stage == 0 ? numel[i] : shardSizes[i];
    if (Stage == 0)
      RETURN_IF_ERROR(zeroc_rt_comm_all_reduce(comm, acc, acc,
                                               static_cast<size_t>(numel[i]),
                                               dt, ZEROC_RT_REDUCE_SUM));
    if (Stage == 1) {
      RETURN_IF_ERROR(zeroc_rt_comm_reduce_scatter(
          comm, acc, shards[i], static_cast<size_t>(shardSizes[i]), dt,
          ZEROC_RT_REDUCE_SUM));
      grads[i] = shards[i];
    }
  }
  zeroc_rt_engine_mark_reduced(engine);

  uint8_t overflow = 0;
  if (cfg.scaler.enabled) {
    for (int i = 0; i < 2; ++i) {
      int found = 0;
      RETURN_IF_ERROR(zeroc_rt_k_has_inf_or_nan(dt, grads[i], counts[i], &found));
      overflow |= found ? 1 : 0;
    }
    RETURN_IF_ERROR(zeroc_rt_comm_all_reduce(comm, &overflow, &overflow, 1,
                                             ZEROC_RT_DTYPE_U8, ZEROC_RT_REDUCE_MAX));
    RETURN_IF_ERROR(zeroc_rt_engine_update_loss_scale(engine, overflow));
  }
  double sumSquares = 0;
  for (int i = 0; i < 2; ++i) {
    double part = 0;
    RETURN_IF_ERROR(zeroc_rt_k_sum_squares(dt, grads[i], counts[i], &part));
    sumSquares += part;
  }
  if (Stage != 0)
    RETURN_IF_ERROR(zeroc_rt_comm_all_reduce(comm, &sumSquares, &sumSquares, 1,
                                             ZEROC_RT_DTYPE_F64, ZEROC_RT_REDUCE_SUM));
  double norm = 0, factor = 0;
  RETURN_IF_ERROR(zeroc_rt_k_clip_grad_norm(sumSquares, scale, world, cfg.clip,
                                            &norm, &factor));
  const bool cycled = adam && cfg.schedule.type == ZEROC_RT_LR_ONE_CYCLE &&
                      cfg.schedule.cycle_momentum;
  const double beta1 = cycled ? mom : opt.beta1;
  const double beta2 = cycled ? ZEROC_RT_ONE_CYCLE_BETA2 : opt.beta2;
  if (!overflow) {
    // On even steps the update as the CUDA pipeline emits it, both
    // parameters in one call (zero.adam_update_multi, zero.sgd_update_multi);
    // on odd ones a call per parameter, as every CPU program makes them.
    const int32_t params[2] = {0, g_faults.repeatedParam ? 0 : 1};
    void *const multiGrads[2] = {grads[0], grads[g_faults.repeatedParam ? 0 : 1]};
    const int64_t multiCounts[2] = {counts[0], counts[g_faults.repeatedParam ? 0 : 1]};
    if (t % 2 == 0 && adam)
      RETURN_IF_ERROR(zeroc_rt_engine_adam_update_multi(
          engine, 2, params, multiGrads, multiCounts, factor, lr, beta1, beta2,
          opt.eps, opt.weight_decay, opt.adam_w_mode, opt.bias_correction, t + 1));
    else if (t % 2 == 0)
      RETURN_IF_ERROR(zeroc_rt_engine_sgd_update_multi(engine, 2, params, multiGrads, multiCounts,
                                                       factor, lr, opt.momentum, opt.dampening,
                                                       opt.weight_decay, opt.nesterov, t + 1));
    for (int i = 0; i < 2 && t % 2 == 1; ++i)
      RETURN_IF_ERROR(
          adam ? zeroc_rt_engine_adam_update(engine, params[i], multiGrads[i], multiCounts[i],
                                             factor, lr, beta1, beta2, opt.eps, opt.weight_decay,
                                             opt.adam_w_mode, opt.bias_correction, t + 1)
               : zeroc_rt_engine_sgd_update(engine, params[i], multiGrads[i], multiCounts[i],
                                            factor, lr, opt.momentum, opt.dampening,
                                            opt.weight_decay, opt.nesterov, t + 1));
    zeroc_rt_engine_advance_step(engine);
    if (Stage == 1 || Stage == 2)
      for (int i = 0; i < 2; ++i) {
        char *replica = static_cast<char *>(zeroc_rt_engine_param_replica(engine, i));
        RETURN_IF_ERROR(zeroc_rt_comm_all_gather(
            comm, replica + static_cast<size_t>(rank * shardSizes[i]) * es,
            replica, static_cast<size_t>(shardSizes[i]), dt));
      }
  }
  result->grad_norm = norm;
  result->lr = lr;
  result->overflow = overflow;
  return nullptr;
}

zeroc_rt_train_step_fn trainStepFor(int stage) {
  switch (stage) {
  case 0:
    return &trainStep<0>;
  case 1:
    return &trainStep<1>;
  case 2:
    return &trainStep<2>;
  default:
    return &trainStep<3>;
  }
}

zeroc_rt_micro_step_fn microStepFor(int stage) {
  switch (stage) {
  case 0:
    return &microStep<0>;
  case 1:
    return &microStep<1>;
  case 2:
    return &microStep<2>;
  default:
    return &microStep<3>;
  }
}

void setDims(int64_t *dst, std::initializer_list<int64_t> dims) {
  for (int i = 0; i < ZEROC_RT_MAX_RANK; ++i)
    dst[i] = 0;
  int i = 0;
  for (int64_t d : dims)
    dst[i++] = d;
}

/// A small deterministic generator (64-bit LCG, top bits to [-1, 1)).
class Lcg {
public:
  explicit Lcg(uint64_t seed) : state(seed) {}
  double next() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state >> 11) / static_cast<double>(1ULL << 53) *
               2.0 -
           1.0;
  }

private:
  uint64_t state;
};

} // namespace

bool flushingDenormalsHere() { return flushingDenormalsNow(); }

ModelConfig adamwConfig() {
  ModelConfig c;
  c.optimizer = {ZEROC_RT_OPTIMIZER_ADAM, 0.05, 0.9, 0.999, 1e-8, 0.01, 0.0, 1, 1, 0.0, 0};
  return c;
}

ModelConfig adamL2ClipConfig() {
  ModelConfig c;
  c.optimizer = {ZEROC_RT_OPTIMIZER_ADAM, 0.03, 0.8, 0.99, 1e-6, 0.1, 0.0, 0, 1, 0.0, 0};
  c.clip = 0.05;
  return c;
}

zeroc_rt_loss_scaler_config_t dynamicScaler(int64_t window, int hysteresis,
                                            double minScale) {
  zeroc_rt_loss_scaler_config_t c = {};
  c.enabled = 1;
  c.initial_scale = 65536.0;
  c.scale_window = window;
  c.hysteresis = hysteresis;
  c.min_scale = minScale;
  c.scale_factor = 2.0;
  return c;
}

ModelConfig sgdClipConfig() {
  ModelConfig c;
  c.optimizer = {ZEROC_RT_OPTIMIZER_SGD, 0.1, 0.0, 0.0, 0.0, 0.01, 0.9, 0, 1, 0.0, 0};
  c.clip = 0.2;
  return c;
}

TestProgram::TestProgram(const ModelConfig &config, const std::string &blob)
    : cfg(config), blobFile(blob), hint(config.recompileHint),
      csvPath(config.csvPath), csvJob(config.csvJob) {
  params[0].name = "fc.weight";
  params[0].dtype = cfg.dtype;
  params[0].rank = 2;
  setDims(params[0].dims, {kInFeatures, kOutFeatures});
  params[0].numel = kInFeatures * kOutFeatures;
  params[0].blob_offset = 0;
  params[0].master_dtype = cfg.dtype;
  params[0].grad_dtype = cfg.dtype;
  params[0].frozen = 0;
  params[1].name = "fc/bias";
  params[1].dtype = cfg.dtype;
  params[1].rank = 1;
  setDims(params[1].dims, {kOutFeatures});
  params[1].numel = kOutFeatures;
  params[1].blob_offset = kBiasOffset;
  params[1].master_dtype = cfg.dtype;
  params[1].grad_dtype = cfg.dtype;
  params[1].frozen = 0;
  // The layout zero-plan-buffers gives the stage (zero.state_layout): the
  // accumulators 64-byte aligned in the gradient slab, as it places those
  // outside a bucket.
  int64_t slab = 0;
  for (zeroc_rt_param_desc_t &d : params) {
    const int64_t n = d.numel, w = cfg.world;
    const int64_t padded = (n + w - 1) / w * w, shard = padded / w;
    d.param_elements = cfg.stage == 3 ? shard : padded;
    d.param_stride = cfg.stage == 3 ? shard : 0;
    d.grad_elements = cfg.stage == 0 ? n : cfg.stage == 1 ? padded : shard;
    d.update_elements = cfg.stage == 0 ? n : shard;
    d.update_stride = cfg.stage == 0 ? 0 : shard;
    d.grad_offset = (slab + 63) / 64 * 64;
    slab =
        d.grad_offset + d.grad_elements * static_cast<int64_t>(zeroc_rt_dtype_size(d.grad_dtype));
  }
  inputs[0].name = "x";
  inputs[0].dtype = cfg.dtype;
  inputs[0].rank = 2;
  setDims(inputs[0].dims, {cfg.microBatch, kInFeatures});
  inputs[1].name = "y";
  inputs[1].dtype = cfg.dtype;
  inputs[1].rank = 2;
  setDims(inputs[1].dims, {cfg.microBatch, kOutFeatures});

  buffers[0].name = "bn.count";
  buffers[0].dtype = cfg.dtype;
  buffers[0].rank = 1;
  setDims(buffers[0].dims, {kOutFeatures});
  buffers[0].numel = kOutFeatures;
  buffers[0].blob_offset = kBiasOffset;

  std::memset(&program, 0, sizeof program);
  program.abi_version = ZEROC_RT_PROGRAM_ABI_VERSION;
  program.stage = cfg.stage;
  program.world_size = cfg.world;
  program.num_params = 2;
  program.params = params;
  program.num_inputs = 2;
  program.inputs = inputs;
  program.num_buffers = cfg.buffer ? 1 : 0;
  program.buffers = buffers;
  program.num_ops = 2;
  program.op_names = opNames;
  program.blob_file = blobFile.c_str();
  program.blob_bytes = kBlobBytes;
  const std::string expected = blobBytes(cfg.dtype, kBlobBytes);
  program.blob_checksum = zeroc_rt_checksum64(expected.data(), expected.size());
  program.arena_bytes = static_cast<int64_t>(ArenaLayout(cfg, cfg.world).total);
  program.grad_slab_bytes = slab;
  program.micro_batch = cfg.microBatch;
  program.grad_accum = cfg.gradAccum;
  program.gradient_clipping = cfg.clip;
  program.steps_per_print = cfg.stepsPerPrint;
  program.optimizer = cfg.optimizer;
  program.micro_step = microStepFor(cfg.stage);
  program.train_step = trainStepFor(cfg.stage);
  program.micro_step_collectives = cfg.stage >= 2 ? 1 : 0;
  program.recompile_hint = hint.c_str();
  program.lr_schedule = cfg.schedule;
  program.loss_scaler = cfg.scaler;
  program.precision = cfg.precision;
  program.monitor.wall_clock_breakdown = cfg.wallClock ? 1 : 0;
  program.monitor.csv_enabled = cfg.csv ? 1 : 0;
  program.monitor.csv_output_path = csvPath.c_str();
  program.monitor.csv_job_name = csvJob.empty() ? nullptr : csvJob.c_str();
  g_current = &cfg;
}

Data makeData(int64_t samples, zeroc_rt_dtype_t dtype) {
  Lcg rng(12345);
  const double wTrue[6] = {0.5, -1.0, 0.25, 0.75, -0.5, 1.5};
  const double bTrue[2] = {0.3, -0.2};
  Data d;
  for (int64_t s = 0; s < samples; ++s) {
    double x[3];
    for (int i = 0; i < 3; ++i) {
      x[i] = roundTo(rng.next(), dtype);
      d.x.push_back(x[i]);
    }
    for (int o = 0; o < 2; ++o) {
      double v = bTrue[o] + 0.1 * rng.next();
      for (int i = 0; i < 3; ++i)
        v += x[i] * wTrue[i * 2 + o];
      d.y.push_back(roundTo(v, dtype));
    }
  }
  return d;
}

std::vector<double> initialW(zeroc_rt_dtype_t dtype) {
  std::vector<double> w = {0.1, -0.2, 0.3, 0.05, -0.15, 0.25};
  for (double &v : w)
    v = roundTo(v, dtype);
  return w;
}

std::vector<double> initialB(zeroc_rt_dtype_t dtype) {
  return {roundTo(0.01, dtype), roundTo(-0.02, dtype)};
}

namespace {

std::string toBytes(zeroc_rt_dtype_t dtype, const std::vector<double> &values) {
  std::string bytes;
  for (double v : values) {
    if (dtype == ZEROC_RT_DTYPE_F32) {
      float f = static_cast<float>(v);
      bytes.append(reinterpret_cast<const char *>(&f), sizeof f);
    } else {
      bytes.append(reinterpret_cast<const char *>(&v), sizeof v);
    }
  }
  return bytes;
}

} // namespace

std::string saveArray(const std::string &path, zeroc_rt_dtype_t dtype,
                      const std::vector<int64_t> &dims,
                      const std::vector<double> &values) {
  std::string bytes = toBytes(dtype, values);
  zeroc_rt_status_t status =
      zeroc_rt_npy_save(path.c_str(), dtype, static_cast<int32_t>(dims.size()),
                        dims.data(), bytes.data());
  std::string error = status ? zeroc_rt_status_message(status) : "";
  zeroc_rt_status_free(status);
  return error;
}

std::string writeData(const std::string &dir, const Data &data,
                      zeroc_rt_dtype_t dtype) {
  int64_t samples = static_cast<int64_t>(data.x.size()) / kInFeatures;
  std::string e = saveArray(dir + "/x.npy", dtype, {samples, kInFeatures}, data.x);
  if (!e.empty())
    return e;
  return saveArray(dir + "/y.npy", dtype, {samples, kOutFeatures}, data.y);
}

std::string blobBytes(zeroc_rt_dtype_t dtype, int64_t bytes) {
  std::string blob(static_cast<size_t>(std::max<int64_t>(bytes, kBlobBytes)),
                   '\0');
  std::string w = toBytes(dtype, initialW(dtype));
  std::string b = toBytes(dtype, initialB(dtype));
  blob.replace(0, w.size(), w);
  blob.replace(static_cast<size_t>(kBiasOffset), b.size(), b);
  blob.resize(static_cast<size_t>(bytes));
  return blob;
}

std::string writeBlob(const std::string &path, zeroc_rt_dtype_t dtype,
                      int64_t bytes) {
  std::string blob = blobBytes(dtype, bytes);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(blob.data(), static_cast<std::streamsize>(blob.size()));
  return out ? "" : "cannot write " + path;
}

Reference reference(const ModelConfig &cfg, const Data &data, int64_t steps) {
  const zeroc_rt_optimizer_config_t &o = cfg.optimizer;
  Reference r;
  zeroc_rt_loss_scaler_state_t scaler;
  zeroc_rt_loss_scaler_init(&scaler, &cfg.scaler);
  int64_t applied = 0; // optimizer updates = scheduler steps
  std::vector<double> p = initialW(cfg.dtype);
  std::vector<double> b = initialB(cfg.dtype);
  p.insert(p.end(), b.begin(), b.end()); // 8 parameters: W then b
  std::vector<double> m(8, 0.0), v(8, 0.0), buf(8, 0.0);
  const int64_t samples = static_cast<int64_t>(data.x.size()) / kInFeatures;
  const int64_t g = static_cast<int64_t>(cfg.microBatch) * cfg.gradAccum * cfg.world;
  for (int64_t s = 0; s < steps; ++s) {
    std::vector<double> grad(8, 0.0);
    double loss = 0.0;
    const double denom = static_cast<double>(g * kOutFeatures);
    for (int64_t k = 0; k < g; ++k) {
      int64_t idx = (s * g + k) % samples;
      const double *x = &data.x[static_cast<size_t>(idx * kInFeatures)];
      const double *y = &data.y[static_cast<size_t>(idx * kOutFeatures)];
      for (int oo = 0; oo < 2; ++oo) {
        double pred = p[6 + oo];
        for (int i = 0; i < 3; ++i)
          pred += x[i] * p[i * 2 + oo];
        double d = pred - y[oo];
        loss += d * d;
        for (int i = 0; i < 3; ++i)
          grad[i * 2 + oo] += 2.0 * d * x[i] / denom;
        grad[6 + oo] += 2.0 * d / denom;
      }
    }
    loss /= denom;
    double mom = 0.0;
    const double lr = zeroc_rt_lr_at(&cfg.schedule, o.lr, applied, &mom);
    r.losses.push_back(loss);
    r.lrs.push_back(lr);
    r.lossScales.push_back(scaler.cur_scale);
    const bool overflow = cfg.scaler.enabled && s < 64 &&
                          ((g_faults.overflowSteps >> s) & 1u);
    if (cfg.scaler.enabled) {
      zeroc_rt_status_t status =
          zeroc_rt_loss_scaler_update(&scaler, overflow, nullptr, 0);
      if (status) { // the run stops here
        zeroc_rt_status_free(status);
        r.losses.pop_back();
        r.lrs.pop_back();
        r.lossScales.pop_back();
        break;
      }
    }
    r.skipped.push_back(overflow);
    if (overflow) {
      r.gradNorms.push_back(-1.0);
      continue;
    }
    double beta1 = o.beta1, beta2 = o.beta2;
    if (cfg.schedule.type == ZEROC_RT_LR_ONE_CYCLE &&
        cfg.schedule.cycle_momentum && o.type == ZEROC_RT_OPTIMIZER_ADAM) {
      beta1 = mom;
      beta2 = 0.99;
    }
    double sumsq = 0.0;
    for (double gi : grad)
      sumsq += gi * gi;
    double norm = std::sqrt(sumsq);
    if (cfg.clip > 0) {
      double c = (norm + 1e-6) / cfg.clip;
      if (c > 1)
        for (double &gi : grad)
          gi *= 1.0 / c;
    }
    const int64_t t = ++applied;
    for (int i = 0; i < 8; ++i) {
      double gi = grad[i];
      if (o.type == ZEROC_RT_OPTIMIZER_ADAM) {
        if (!o.adam_w_mode)
          gi += o.weight_decay * p[i];
        m[i] = beta1 * m[i] + (1 - beta1) * gi;
        v[i] = beta2 * v[i] + (1 - beta2) * gi * gi;
        double bc1 = 1 - std::pow(beta1, static_cast<double>(t));
        double bc2 = 1 - std::pow(beta2, static_cast<double>(t));
        double u = (m[i] / bc1) / (std::sqrt(v[i] / bc2) + o.eps);
        if (o.adam_w_mode)
          u += o.weight_decay * p[i];
        p[i] -= lr * u;
      } else {
        gi += o.weight_decay * p[i];
        double d = gi;
        if (o.momentum != 0) {
          buf[i] = t == 1 ? gi : o.momentum * buf[i] + gi;
          d = buf[i];
        }
        p[i] -= lr * d;
      }
    }
    r.gradNorms.push_back(norm);
  }
  r.w.assign(p.begin(), p.begin() + 6);
  r.b.assign(p.begin() + 6, p.end());
  return r;
}

namespace {

bool boolField(const std::string &line, const char *key, bool *out) {
  std::string pattern = std::string("\"") + key + "\": ";
  size_t pos = line.find(pattern);
  if (pos == std::string::npos)
    return false;
  if (line.compare(pos + pattern.size(), 4, "true") == 0) {
    *out = true;
    return true;
  }
  *out = false;
  return line.compare(pos + pattern.size(), 5, "false") == 0;
}

bool field(const std::string &line, const char *key, double *out) {
  std::string pattern = std::string("\"") + key + "\": ";
  size_t pos = line.find(pattern);
  if (pos == std::string::npos)
    return false;
  const char *start = line.c_str() + pos + pattern.size();
  if (std::strncmp(start, "null", 4) == 0) {
    *out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  char *end = nullptr;
  *out = std::strtod(start, &end);
  return end != start;
}

} // namespace

std::vector<JsonRecord> readJsonl(const std::string &path) {
  std::vector<JsonRecord> records;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    JsonRecord r;
    bool ok = field(line, "step", &r.step);
    ok = field(line, "loss", &r.loss) && ok;
    ok = field(line, "lr", &r.lr) && ok;
    ok = field(line, "grad_norm", &r.gradNorm) && ok;
    ok = field(line, "time_ms", &r.timeMs) && ok;
    ok = field(line, "samples_per_s", &r.samplesPerS) && ok;
    ok = field(line, "loss_scale", &r.lossScale) && ok;
    ok = boolField(line, "skipped", &r.skipped) && ok;
    ok = field(line, "time_fwd_ms", &r.fwdMs) && ok;
    ok = field(line, "time_bwd_ms", &r.bwdMs) && ok;
    ok = field(line, "time_bwd_inner_ms", &r.bwdInnerMs) && ok;
    ok = field(line, "time_bwd_allreduce_ms", &r.bwdAllreduceMs) && ok;
    ok = field(line, "time_step_ms", &r.stepMs) && ok;
    r.hasAllKeys = ok && line.front() == '{' && line.back() == '}';
    records.push_back(r);
  }
  return records;
}

std::vector<double> readArray(const std::string &path, zeroc_rt_dtype_t *dtype,
                              std::vector<int64_t> *dims, std::string *error) {
  zeroc_rt_npy_t *array = nullptr;
  zeroc_rt_status_t status = zeroc_rt_npy_load(path.c_str(), &array);
  std::vector<double> values;
  if (status) {
    if (error)
      *error = zeroc_rt_status_message(status);
    zeroc_rt_status_free(status);
    return values;
  }
  zeroc_rt_dtype_t dt = zeroc_rt_npy_dtype(array);
  if (dtype)
    *dtype = dt;
  if (dims)
    dims->assign(zeroc_rt_npy_dims(array),
                 zeroc_rt_npy_dims(array) + zeroc_rt_npy_rank(array));
  int64_t n = zeroc_rt_npy_num_elements(array);
  for (int64_t i = 0; i < n; ++i) {
    if (dt == ZEROC_RT_DTYPE_F32)
      values.push_back(static_cast<const float *>(zeroc_rt_npy_data(array))[i]);
    else if (dt == ZEROC_RT_DTYPE_F64)
      values.push_back(static_cast<const double *>(zeroc_rt_npy_data(array))[i]);
  }
  zeroc_rt_npy_free(array);
  return values;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

bool near(double a, double b, double tol) {
  if (std::isnan(a) || std::isnan(b))
    return false;
  double scale = std::max({std::fabs(a), std::fabs(b), 1e-2});
  return std::fabs(a - b) <= tol * scale;
}

namespace {

/// Redirects a file descriptor into a temporary file until finish().
class Capture {
public:
  Capture(int fd, std::FILE *stream) : fd(fd), stream(stream) {
    std::fflush(stream);
    tmp = std::tmpfile();
    saved = ::dup(fd);
    if (tmp && saved >= 0)
      ::dup2(fileno(tmp), fd);
  }
  std::string finish() {
    std::fflush(stream);
    std::string text;
    if (saved >= 0) {
      ::dup2(saved, fd);
      ::close(saved);
      saved = -1;
    }
    if (tmp) {
      std::rewind(tmp);
      char buf[4096];
      size_t n;
      while ((n = std::fread(buf, 1, sizeof buf, tmp)) > 0)
        text.append(buf, n);
      std::fclose(tmp);
      tmp = nullptr;
    }
    return text;
  }
  ~Capture() { finish(); }

private:
  int fd;
  std::FILE *stream;
  std::FILE *tmp = nullptr;
  int saved = -1;
};

} // namespace

RunResult runTrain(const zeroc_rt_program_t *program,
                   const std::vector<std::string> &args) {
  std::vector<std::string> storage = {"train"};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char *> argv;
  for (std::string &s : storage)
    argv.push_back(s.data());
  argv.push_back(nullptr);
  RunResult r;
  Capture out(1, stdout), err(2, stderr);
  r.rc = zeroc_rt_train_main(static_cast<int>(storage.size()), argv.data(),
                             program);
  r.out = out.finish();
  r.err = err.finish();
  return r;
}

ScratchDir::ScratchDir() {
  const char *base = std::getenv("TMPDIR");
  std::string pattern =
      std::string(base && *base ? base : "/tmp") + "/zeroc_rt_train.XXXXXX";
  if (mkdtemp(pattern.data()))
    root = pattern;
}

ScratchDir::ScratchDir(const std::string &fixed) {
  if (fixed.empty()) {
    ScratchDir temp;
    std::swap(root, temp.root); // temp now removes nothing
    return;
  }
  root = fixed;
  keep = true;
  std::error_code ignored;
  std::filesystem::create_directories(root, ignored);
}

ScratchDir::~ScratchDir() {
  if (root.empty() || keep)
    return;
  std::error_code ignored;
  std::filesystem::remove_all(root, ignored);
}

} // namespace zeroc_rt::test::train
