//===- state.cc - ZeRO layout of parameters, gradients, optimizer state ---===//
//
// Per parameter with n elements on W ranks: P = ceil(n / W) * W, S = P / W.
// What a rank keeps is the compiler's plan (zeroc_rt_param_desc_t's
// param/grad/update fields, zero.state_layout in the IR); for the ZeRO
// stages zero-plan-buffers gives:
//
//   stage | params        | grad accumulator       | optimizer state, update
//   0     | replica (P)   | n, all-reduced         | n, the full parameter
//   1     | replica (P)   | P, reduce-scattered    | S, replica + r*S
//   2     | replica (P)   | S (micro-step scatters)| S, replica + r*S
//   3     | shard (S)     | S (micro-step scatters)| S, the shard
//
// This file only allocates and initializes what the descriptors say; it
// does not know the stage.
//
// With mixed precision (a 16-bit parameter with an f32 master dtype) the
// parameter and gradient columns hold 16-bit elements and the optimizer
// state adds the f32 master of the update elements (n in stage 0, S in
// stages 1-3); Adam's m and v are f32. Per element with Adam that is
// DeepSpeed's 2 + 2 + 12 bytes: 16Ψ, 4Ψ + 12Ψ/W, 2Ψ + 14Ψ/W, 16Ψ/W.
//
// A model buffer (a BatchNormalization's running statistic) is whole on
// every rank at every stage, in a fourth slab.
//
// A frozen parameter (requires_grad=False) has its parameter column only:
// DeepSpeed partitions it at stage 3 like the others, but keeps no
// gradient, no optimizer state and no fp32 copy of it.
//
// The ZeRO buffers live in three 64-byte aligned slabs (parameters, gradients,
// optimizer state). The parameters' and the optimizer state's sub-buffers are
// 64-byte aligned here; the gradient slab is laid out by the compiler
// (zero-plan-buffers: each descriptor's grad_offset, the program's
// grad_slab_bytes), so that a stage-0 bucket of accumulators is a stretch of
// it, all-reduced where it lies. Stage 1's reduce-scattered gradient shards
// are not state: the optimizer step (@train_step) reduces into its arena.
//
//===----------------------------------------------------------------------===//

#include "train/train_internal.h"
#include "zeroc_rt/contract.h"

#include "status_internal.h"

#include <algorithm>
#include <cstring>

namespace zeroc_rt::train {
namespace {

/// Assigns 64-byte aligned offsets inside one slab.
class SlabPlan {
public:
  size_t add(size_t bytes) {
    size_t offset = total;
    total += roundUp(bytes, kAlignment);
    return offset;
  }
  size_t size() const { return total; }

private:
  size_t total = 0;
};

constexpr size_t kNone = static_cast<size_t>(-1);

struct Offsets {
  size_t param = kNone, grad = kNone, master = kNone,
         expAvg = kNone, expAvgSq = kNone, momentum = kNone;
};

void *at(const DeviceBuffer &slab, size_t offset) {
  return offset == kNone ? nullptr : slab.bytes() + offset;
}

} // namespace

zeroc_rt_status_t ZeroState::zeroGradientTails() {
  for (ParamState &p : params)
    if (p.grad && p.gradCount > p.accumulateCount)
      ZEROC_RT_RETURN_IF_ERROR(device->zero(
          static_cast<char *>(p.grad) +
              static_cast<size_t>(p.accumulateCount) * p.gradElemSize,
          static_cast<size_t>(p.gradCount - p.accumulateCount) *
              p.gradElemSize));
  return nullptr;
}

zeroc_rt_status_t buildZeroState(const zeroc_rt_program_t &program,
                                 const char *blob, int rank, int world,
                                 Device &device, ZeroState &state) {
  state.device = &device;
  state.rank = rank;
  state.world = world;
  state.psi = 0;
  state.frozen = 0;
  state.params.assign(static_cast<size_t>(program.num_params), ParamState());
  const zeroc_rt_optimizer_config_t &opt = program.optimizer;
  const bool adam = opt.type == ZEROC_RT_OPTIMIZER_ADAM;
  const bool momentum = !adam && opt.momentum != 0.0;

  for (int32_t i = 0; i < program.num_params; ++i) {
    ParamState &p = state.params[static_cast<size_t>(i)];
    p.desc = &program.params[i];
    p.dtype = p.desc->dtype;
    p.elemSize = zeroc_rt_dtype_size(p.dtype);
    p.masterDtype = p.desc->master_dtype;
    p.masterElemSize = zeroc_rt_dtype_size(p.masterDtype);
    p.gradDtype = p.desc->grad_dtype;
    p.gradElemSize = zeroc_rt_dtype_size(p.gradDtype);
    p.numel = p.desc->numel;
    p.padded = (p.numel + world - 1) / world * world;
    p.shard = p.padded / world;
    p.frozen = p.desc->frozen != 0;
    // What the compiler planned this rank to keep (zero.state_layout).
    p.keptCount = p.desc->param_elements;
    p.keptFirst = static_cast<int64_t>(rank) * p.desc->param_stride;
    p.gradCount = p.frozen ? 0 : p.desc->grad_elements;
    p.updateCount = p.frozen ? 0 : p.desc->update_elements;
    p.updateFirst = static_cast<int64_t>(rank) * p.desc->update_stride;
    // The micro-step accumulates the full gradient (n of a full or padded
    // accumulator) or the rank's shard.
    p.accumulateCount = std::min(p.gradCount, p.numel);
    (p.frozen ? state.frozen : state.psi) += p.numel;
  }

  // Plan the three slabs.
  std::vector<Offsets> off(state.params.size());
  SlabPlan paramPlan, optimPlan;
  size_t masterGradBytes = 0;
  for (size_t i = 0; i < state.params.size(); ++i) {
    const ParamState &p = state.params[i];
    size_t es = p.elemSize;
    off[i].param = paramPlan.add(static_cast<size_t>(p.keptCount) * es);
    if (p.frozen)
      continue;
    size_t update = static_cast<size_t>(p.updateCount) * p.masterElemSize;
    if (p.hasMaster()) {
      off[i].master = optimPlan.add(update);
      if (p.gradDtype != p.masterDtype) // else scaled in place
        masterGradBytes =
            std::max(masterGradBytes, static_cast<size_t>(zeroc_rt_optimizer_scratch_bytes(
                                          p.updateCount, static_cast<int64_t>(p.masterElemSize))));
    }
    if (adam) {
      off[i].expAvg = optimPlan.add(update);
      off[i].expAvgSq = optimPlan.add(update);
    } else if (momentum) {
      off[i].momentum = optimPlan.add(update);
    }
  }
  // The accumulators where the compiler placed them (grad_offset, checked
  // inside the slab by validateProgram).
  for (size_t i = 0; i < state.params.size(); ++i)
    if (!state.params[i].frozen)
      off[i].grad = static_cast<size_t>(state.params[i].desc->grad_offset);
  ZEROC_RT_RETURN_IF_ERROR(
      state.paramStorage.allocate(device, paramPlan.size(), "the parameters"));
  ZEROC_RT_RETURN_IF_ERROR(state.gradStorage.allocate(
      device, static_cast<size_t>(program.grad_slab_bytes), "the gradients"));
  ZEROC_RT_RETURN_IF_ERROR(
      state.optimStorage.allocate(device, optimPlan.size(), "the optimizer state"));
  ZEROC_RT_RETURN_IF_ERROR(state.masterGrad.allocate(device, 
      masterGradBytes, "the optimizer's gradient copy"));

  for (size_t i = 0; i < state.params.size(); ++i) {
    ParamState &p = state.params[i];
    const size_t es = p.elemSize;
    const char *init = blob + p.desc->blob_offset;
    void *param = at(state.paramStorage, off[i].param);
    // Elements [keptFirst, keptFirst + keptCount) of the padded initial
    // value (the padding is zero).
    {
      const int64_t begin = p.keptFirst;
      const int64_t end = std::min(begin + p.keptCount, p.numel);
      if (end > begin)
        ZEROC_RT_RETURN_IF_ERROR(
            device.upload(param, init + static_cast<size_t>(begin) * es,
                          static_cast<size_t>(end - begin) * es));
    }
    // A rank keeping the buffer from element 0 of every rank holds the
    // replica (zero.param_replica reads it); one keeping its own slice holds
    // a shard (zero.param_shard), even when one rank's slice is all of it.
    if (p.desc->param_stride == 0)
      p.replica = param;
    else
      p.shardParam = param;
    p.updateParam = static_cast<char *>(param) +
                    static_cast<size_t>(p.updateFirst - p.keptFirst) * es;
    p.master = at(state.optimStorage, off[i].master);
    if (p.master) {
      // DeepSpeed's partition.clone().float(): the master starts from the
      // 16-bit value (padding stays zero), uploaded just above.
      int64_t begin = p.updateFirst;
      int64_t end = std::min(begin + p.updateCount, p.numel);
      if (end > begin)
        ZEROC_RT_RETURN_IF_ERROR(ZEROC_RT_TRAIN_WRAP(
            device.convert(p.dtype, p.updateParam, p.masterDtype, p.master,
                           end - begin, 1.0),
            format("initial master copy of parameter '%s': ", p.desc->name)));
    }
    p.grad = at(state.gradStorage, off[i].grad);
    p.expAvg = at(state.optimStorage, off[i].expAvg);
    p.expAvgSq = at(state.optimStorage, off[i].expAvgSq);
    p.momentum = at(state.optimStorage, off[i].momentum);
  }

  // Buffers: whole on every rank, from their initial values.
  SlabPlan bufferPlan;
  std::vector<size_t> bufferOffsets;
  for (int32_t i = 0; i < program.num_buffers; ++i)
    bufferOffsets.push_back(bufferPlan.add(
        static_cast<size_t>(program.buffers[i].numel) *
        zeroc_rt_dtype_size(program.buffers[i].dtype)));
  ZEROC_RT_RETURN_IF_ERROR(
      state.bufferStorage.allocate(device, bufferPlan.size(), "the model's buffers"));
  state.buffers.assign(static_cast<size_t>(program.num_buffers), BufferState());
  for (size_t i = 0; i < state.buffers.size(); ++i) {
    BufferState &buf = state.buffers[i];
    buf.desc = &program.buffers[i];
    buf.data = state.bufferStorage.bytes() + bufferOffsets[i];
    ZEROC_RT_RETURN_IF_ERROR(device.upload(
        buf.data, blob + buf.desc->blob_offset,
        static_cast<size_t>(buf.desc->numel) *
            zeroc_rt_dtype_size(buf.desc->dtype)));
  }
  return nullptr;
}

} // namespace zeroc_rt::train
