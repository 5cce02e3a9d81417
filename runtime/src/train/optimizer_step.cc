//===- optimizer_step.cc - The per-stage optimizer-step boundary -*- C++ -*-===//
//
// After the GAS micro-steps of an optimizer step every rank holds its
// gradient accumulators (sums over its micro-batches). This file turns them
// into the update, DeepSpeed's way:
//
//   1. reduce: stage 0 all-reduces the full gradients (one call per dtype
//      run of the gradient slab); stage 1 reduce-scatters each zero-padded
//      full gradient into the rank's shard; stages 2-3 already hold the
//      reduced shard (the micro-step reduce-scatters before accumulating);
//   2. average: multiply by 1 / (W * GAS);
//   3. global L2 norm over the full parameters: stage 0 from the local full
//      gradients (identical on every rank), stages 1-3 from the shards plus an
//      all-reduce of the sum of squares;
//   4. clip (gradient_clipping > 0, finite norm): c = (norm + 1e-6) / max;
//      if c > 1 the gradients are multiplied by 1 / c;
//   5. Adam / SGD on the rank's elements (zeroc_rt_k_adam_step / sgd_step),
//      step = 1-based count of updates; padding elements have zero gradient
//      and zero value and stay zero;
//   6. stages 1-2 all-gather the updated shards back into the replicas.
//
//===----------------------------------------------------------------------===//

#include "train/train_internal.h"

#include "status_internal.h"

#include <algorithm>
#include <cmath>

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
      zeroc_rt_status_t status = zeroc_rt_comm_reduce_scatter(
          engine.comm, p.grad, p.gradShard, static_cast<size_t>(p.shard),
          p.dtype, ZEROC_RT_REDUCE_SUM);
      if (status)
        return paramError(status, "gradient reduce-scatter", p);
    }
  }
  return nullptr;
}

zeroc_rt_status_t scaleGradients(ZeroState &st, double factor) {
  for (ParamState &p : st.params) {
    zeroc_rt_status_t status =
        zeroc_rt_k_scale(p.dtype, p.updateGrad, p.updateCount, factor);
    if (status)
      return paramError(status, "gradient scaling", p);
  }
  return nullptr;
}

zeroc_rt_status_t globalNorm(zeroc_rt_engine &engine, double *norm) {
  ZeroState &st = engine.state;
  double total = 0.0;
  for (ParamState &p : st.params) {
    double sum = 0.0;
    zeroc_rt_status_t status =
        zeroc_rt_k_sum_squares(p.dtype, p.updateGrad, p.updateCount, &sum);
    if (status)
      return paramError(status, "gradient norm", p);
    total += sum;
  }
  if (st.stage != 0)
    ZEROC_RT_RETURN_IF_ERROR(ZEROC_RT_TRAIN_WRAP(
        zeroc_rt_comm_all_reduce(engine.comm, &total, &total, 1,
                                 ZEROC_RT_DTYPE_F64, ZEROC_RT_REDUCE_SUM),
        "gradient norm all-reduce: "));
  *norm = std::sqrt(total);
  return nullptr;
}

zeroc_rt_status_t applyOptimizer(zeroc_rt_engine &engine) {
  const zeroc_rt_optimizer_config_t &opt = engine.program->optimizer;
  const int64_t step = ++engine.optimizerSteps;
  for (ParamState &p : engine.state.params) {
    zeroc_rt_status_t status;
    if (opt.type == ZEROC_RT_OPTIMIZER_ADAM)
      status = zeroc_rt_k_adam_step(p.dtype, p.updateParam, p.updateGrad,
                                    p.expAvg, p.expAvgSq, p.updateCount, opt.lr,
                                    opt.beta1, opt.beta2, opt.eps,
                                    opt.weight_decay, opt.adam_w_mode, step);
    else
      status = zeroc_rt_k_sgd_step(p.dtype, p.updateParam, p.updateGrad,
                                   p.momentum, p.updateCount, opt.lr,
                                   opt.momentum, opt.weight_decay, step);
    if (status)
      return paramError(status, "optimizer update", p);
  }
  return nullptr;
}

zeroc_rt_status_t gatherParams(zeroc_rt_engine &engine) {
  ZeroState &st = engine.state;
  if (st.stage != 1 && st.stage != 2)
    return nullptr;
  for (ParamState &p : st.params) {
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

zeroc_rt_status_t optimizerStep(zeroc_rt_engine &engine, double *gradNorm) {
  const zeroc_rt_program_t &prog = *engine.program;
  ZEROC_RT_RETURN_IF_ERROR(reduceGradients(engine));
  ZEROC_RT_RETURN_IF_ERROR(scaleGradients(
      engine.state, 1.0 / (static_cast<double>(engine.world) * prog.grad_accum)));
  double norm = 0.0;
  ZEROC_RT_RETURN_IF_ERROR(globalNorm(engine, &norm));
  *gradNorm = norm;
  if (prog.gradient_clipping > 0.0 && std::isfinite(norm)) {
    double clip = (norm + 1e-6) / prog.gradient_clipping;
    if (clip > 1.0)
      ZEROC_RT_RETURN_IF_ERROR(scaleGradients(engine.state, 1.0 / clip));
  }
  ZEROC_RT_RETURN_IF_ERROR(applyOptimizer(engine));
  return gatherParams(engine);
}

} // namespace zeroc_rt::train
