//===- Plan.cpp - per-rank memory and communication of a ZeRO plan --------===//
//
// plan.json states, for the compiled stage and world size, the model-state
// bytes each rank holds in the paper's categories and the elements each
// optimizer step communicates, computed from the partitioned IR. The runtime
// allocates these plus, with mixed precision, one parameter's update in f32
// for the optimizer (transient in DeepSpeed too); stage 1's reduce-scattered
// gradient shards live in the arena of @train_step.
// With Adam and mixed precision (16-bit parameters and gradients, an f32
// master, m and v: K = 12) they are the ZeRO paper's formulas: 16Ψ (stage
// 0), 4Ψ + 12Ψ/W (1), 2Ψ + 14Ψ/W (2), 16Ψ/W (3); in fp32 (K = 8) 16Ψ,
// 8Ψ + 8Ψ/W, 4Ψ + 12Ψ/W, 16Ψ/W; up to the padding of each parameter to a
// multiple of W. With fp32 gradient accumulation (bf16's default) the
// gradients count 4 bytes instead of 2. Communication: 2Ψ elements for stages 0-2 and 3Ψ for stage
// 3 per step without gradient accumulation, in the parameters' dtype.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Driver/Compile.h"

#include "zeroc/Dialect/Graph/GraphOps.h"
#include "zeroc/Dialect/Zero/BufferPlanning.h"
#include "zeroc/Dialect/Zero/ZeroOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace zeroc {

std::string planJson(ModuleOp module, const TrainConfig &config) {
  int64_t stage = config.stage, w = config.worldSize;
  int64_t statePerElem = config.optimizer == TrainConfig::Optimizer::Adam
                             ? 2
                             : (config.momentum != 0.0 ? 1 : 0);
  // Per parameter, as the runtime allocates: the parameter and gradient in
  // its dtype, the optimizer state (plus the master copy with mixed
  // precision) in the master dtype, for the elements the rank updates.
  int64_t psi = 0, padded = 0, bytesPerElem = 4, gradBytesPerElem = 4;
  int64_t stateBytesPerElem = 0, params = 0, grads = 0, state = 0;
  // Frozen parameters: stored (and at stage 3 sharded) like the others, but
  // no gradient, no optimizer state, no step-boundary collective.
  int64_t frozenCount = 0, frozenElems = 0, frozenBytes = 0;
  // The accumulators' element type, as @train_step reads them.
  llvm::StringMap<Type> gradType;
  if (auto step = module.lookupSymbol<func::FuncOp>("train_step"))
    step.walk([&](zero::GradAccumulatorOp acc) {
      gradType[acc.getParam()] = zero::bufferElementType(acc.getType());
    });
  for (auto p : module.getOps<graph::ParamOp>()) {
    if (!p.getTrainable()) {
      int64_t n = p.getType().getNumElements();
      int64_t pad = (n + w - 1) / w * w;
      ++frozenCount;
      frozenElems += n;
      frozenBytes += (stage == 3 ? pad / w : pad) *
                     zero::elementBytes(p.getType().getElementType());
      continue;
    }
    int64_t n = p.getType().getNumElements();
    int64_t pad = (n + w - 1) / w * w, shard = pad / w;
    int64_t b = zero::elementBytes(p.getType().getElementType());
    int64_t m = zero::elementBytes(p.getMasterElementType());
    int64_t g = zero::elementBytes(gradType.lookup(p.getSymName())
                                       ? gradType.lookup(p.getSymName())
                                       : p.getType().getElementType());
    int64_t copies = statePerElem + (p.getMaster() ? 1 : 0);
    psi += n;
    padded += pad;
    bytesPerElem = b;
    gradBytesPerElem = g;
    stateBytesPerElem = copies * m;
    params += (stage == 3 ? shard : pad) * b;
    grads += (stage >= 2 ? shard : n) * g;
    state += copies * (stage >= 1 ? shard : n) * m;
  }

  // Buffers (BatchNormalization's running statistics): whole on every rank.
  int64_t bufferCount = 0, bufferElems = 0, bufferBytes = 0;
  for (auto buf : module.getOps<graph::BufferOp>()) {
    ++bufferCount;
    bufferElems += buf.getType().getNumElements();
    bufferBytes += buf.getType().getNumElements() *
                   zero::elementBytes(buf.getType().getElementType());
  }

  // Collectives inside one micro-step (from the IR), then at the step.
  int64_t gatherElems = 0, scatterElems = 0;
  if (auto fn = module.lookupSymbol<func::FuncOp>("train_micro_step")) {
    fn.walk([&](zero::AllGatherOp g) { gatherElems += g.getType().getSize(); });
    fn.walk([&](zero::AllGatherStartOp g) {
      gatherElems +=
          llvm::cast<zero::FlatType>(g.getToken().getType().getPayload()).getSize();
    });
    fn.walk([&](zero::ReduceScatterOp r) {
      scatterElems += r.getBuffer().getType().getSize();
    });
    fn.walk([&](zero::ReduceScatterStartOp r) {
      scatterElems += r.getBuffer().getType().getSize();
    });
  }
  gatherElems *= config.gradAccum;
  scatterElems *= config.gradAccum;
  // The micro-step's collectives move the parameters' dtype; the step
  // boundary reduces the gradient accumulators (their dtype) and gathers
  // the parameters.
  int64_t bytes = (gatherElems + scatterElems) * bytesPerElem;
  int64_t allReduceElems = 0;
  if (stage == 0)
    allReduceElems = 2 * psi; // reduce-scatter + all-gather of the gradients
  if (stage == 1)
    scatterElems += padded;
  if (stage == 1 || stage == 2)
    gatherElems += padded;
  bytes += (stage == 0 ? allReduceElems : stage == 1 ? padded : 0) * gradBytesPerElem;
  bytes += (stage == 1 || stage == 2 ? padded : 0) * bytesPerElem;
  int64_t total = allReduceElems + gatherElems + scatterElems;

  std::string s;
  llvm::raw_string_ostream os(s);
  os << "{\n"
     << "  \"world_size\": " << w << ",\n"
     << "  \"stage\": " << stage << ",\n"
     << "  \"parameters\": " << psi << ",\n"
     << "  \"padded_parameters\": " << padded << ",\n"
     << "  \"frozen_parameters\": " << frozenCount << ",\n"
     << "  \"frozen_parameter_elements\": " << frozenElems << ",\n"
     << "  \"buffers\": " << bufferCount << ",\n"
     << "  \"buffer_elements\": " << bufferElems << ",\n"
     << "  \"dtype_bytes\": " << bytesPerElem << ",\n"
     << "  \"grad_dtype_bytes\": " << gradBytesPerElem << ",\n"
     << "  \"micro_batch\": " << config.microBatch << ",\n"
     << "  \"gradient_accumulation_steps\": " << config.gradAccum << ",\n"
     << "  \"optimizer\": \"" << config.optimizerName << "\",\n"
     << "  \"optimizer_state_bytes_per_parameter\": " << stateBytesPerElem << ",\n"
     << "  \"model_state_bytes\": {\"params\": " << params << ", \"grads\": "
     << grads << ", \"optimizer_state\": " << state
     << ", \"frozen_params\": " << frozenBytes << ", \"buffers\": "
     << bufferBytes << ", \"total\": "
     << params + grads + state + frozenBytes + bufferBytes << "},\n"
     << "  \"communication_elements_per_step\": {\"all_reduce\": "
     << allReduceElems << ", \"reduce_scatter\": " << scatterElems
     << ", \"all_gather\": " << gatherElems << ", \"total\": " << total
     << "},\n"
     << "  \"communication_bytes_per_step\": " << bytes << "\n"
     << "}\n";
  return s;
}

} // namespace zeroc
