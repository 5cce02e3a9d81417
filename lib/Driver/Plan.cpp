//===- Plan.cpp - per-rank memory and communication of a ZeRO plan --------===//
//
// plan.json states, for the compiled stage and world size, the model-state
// bytes each rank holds in the paper's categories and the elements each
// optimizer step communicates, read from the planned IR: the bytes from
// every parameter's #zero.state_layout (what the runtime allocates), the
// elements from the collectives of @train_micro_step and @train_step. The
// runtime allocates these plus, with mixed precision, one parameter's update
// in f32 for the optimizer (transient in DeepSpeed too); stage 1's
// reduce-scattered gradient shards and the step's buckets live in the arena.
// With Adam and mixed precision (16-bit parameters and gradients, an f32
// master, m and v: K = 12) they are the ZeRO paper's formulas: 16Ψ (stage
// 0), 4Ψ + 12Ψ/W (1), 2Ψ + 14Ψ/W (2), 16Ψ/W (3); in fp32 (K = 8) 16Ψ,
// 8Ψ + 8Ψ/W, 4Ψ + 12Ψ/W, 16Ψ/W; up to the padding of each parameter to a
// multiple of W. Stage 3's persistent parameters (zero.persistent) count
// as at stage 2: 2Ψp + 14Ψp/W. With fp32 gradient accumulation (bf16's
// default) the gradients count 4 bytes instead of 2. Communication: 2Ψ
// elements for stages 0-2 and 3Ψ for stage 3 per step without gradient
// accumulation (a persistent parameter: its reduce-scatter per micro-step
// and one all-gather per step), up to padding.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Driver/Compile.h"

#include "zeroc/Dialect/Graph/GraphOps.h"
#include "zeroc/Dialect/Zero/BufferPlanning.h"
#include "zeroc/Dialect/Zero/ZeroOps.h"

#include "zeroc_rt/contract.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace zeroc {

std::string planJson(ModuleOp module, const TrainConfig &config, llvm::StringRef target) {
  int64_t stage = config.stage, w = config.worldSize;
  int64_t statePerElem = config.optimizer == TrainConfig::Optimizer::Adam
                             ? 2
                             : (config.momentum != 0.0 ? 1 : 0);
  // Per parameter, what zero-plan-buffers' #zero.state_layout says the
  // runtime allocates: the kept parameter elements and the gradient
  // accumulator in their dtypes, the optimizer state (plus the master copy
  // with mixed precision) in the master dtype for the updated elements.
  int64_t psi = 0, padded = 0, bytesPerElem = 4, gradBytesPerElem = 0;
  // gradBytesPerElem: the accumulators' configured element size. The
  // trainable elements whose accumulator is narrower: with one rank and one
  // micro-step, a 16-bit parameter's accumulator that only ever holds its
  // one gradient is in the training dtype (zero-step-boundary).
  int64_t narrowGradElems = 0;
  // The optimizer step's scratch, where it converts a gradient that is not
  // in its master's dtype (zeroc_rt_optimizer_scratch_bytes).
  int64_t optimizerScratchBytes = 0;
  int64_t stateBytesPerElem = 0, params = 0, grads = 0, state = 0;
  // Frozen parameters: stored (and at stage 3 sharded unless persistent)
  // like the others, but no gradient, no optimizer state, no step-boundary
  // collective.
  int64_t frozenCount = 0, frozenElems = 0, frozenBytes = 0;
  // Stage 3's trainable zero.persistent parameters (whole on every rank).
  int64_t persistentCount = 0, persistentElems = 0;
  // The accumulators' element type, as @train_step reads them.
  llvm::StringMap<Type> gradType;
  auto step = module.lookupSymbol<func::FuncOp>("train_step");
  if (step)
    gradType = zero::accumulatorElementTypes(step);
  for (auto p : module.getOps<graph::ParamOp>()) {
    auto layout =
        p->getAttrOfType<zero::StateLayoutAttr>(zero::kStateLayoutAttr);
    int64_t n = p.getType().getNumElements();
    int64_t b = zero::elementBytes(p.getType().getElementType());
    int64_t kept = layout ? layout.getParam() : 0;
    if (!p.getTrainable()) {
      ++frozenCount;
      frozenElems += n;
      frozenBytes += kept * b;
      continue;
    }
    int64_t pad = (n + w - 1) / w * w;
    int64_t m = zero::elementBytes(p.getMasterElementType());
    int64_t g = zero::elementBytes(gradType.lookup(p.getSymName())
                                       ? gradType.lookup(p.getSymName())
                                       : p.getType().getElementType());
    int64_t copies = statePerElem + (p.getMaster() ? 1 : 0);
    psi += n;
    padded += pad;
    if (p->hasAttr(zero::kPersistentAttr)) {
      ++persistentCount;
      persistentElems += n;
    }
    bytesPerElem = b;
    // The accumulator's dtype as configured (data_types.grad_accum_dtype).
    const int64_t configured = p.getMaster() && config.gradAccumFp32 ? 4 : b;
    if (g < configured)
      narrowGradElems += n;
    Type gradElement = gradType.lookup(p.getSymName());
    if (p.getMaster() && gradElement && gradElement != p.getMasterElementType() && layout)
      optimizerScratchBytes =
          std::max(optimizerScratchBytes, zeroc_rt_optimizer_scratch_bytes(layout.getUpdate(), m));
    gradBytesPerElem = std::max(gradBytesPerElem, configured);
    stateBytesPerElem = copies * m;
    params += kept * b;
    grads += (layout ? layout.getGrad() : 0) * g;
    state += copies * (layout ? layout.getUpdate() : 0) * m;
  }

  if (gradBytesPerElem == 0)
    gradBytesPerElem = bytesPerElem; // nothing trainable

  // Parameters whose gradient moves only as rows (zero.grad_accumulate_rows
  // and no dense accumulation): their padded elements, which no
  // reduce-scatter moves.
  int64_t rowsOnly = 0;
  if (auto micro = module.lookupSymbol<func::FuncOp>("train_micro_step")) {
    llvm::StringSet<> dense;
    micro.walk([&](zero::GradAccumulateOp a) { dense.insert(a.getParam()); });
    micro.walk([&](zero::GradAccumulateRowsOp r) {
      auto p = module.lookupSymbol<graph::ParamOp>(r.getParamAttr());
      if (p && !dense.contains(r.getParam()))
        rowsOnly += (p.getType().getNumElements() + w - 1) / w * w;
    });
  }

  // Buffers (BatchNormalization's running statistics): whole on every rank.
  int64_t bufferCount = 0, bufferElems = 0, bufferBytes = 0;
  for (auto buf : module.getOps<graph::BufferOp>()) {
    ++bufferCount;
    bufferElems += buf.getType().getNumElements();
    bufferBytes += buf.getType().getNumElements() *
                   zero::elementBytes(buf.getType().getElementType());
  }

  // The collectives, read from the IR: those of one micro-step (times the
  // accumulation steps), then those of @train_step, each in its elements'
  // dtype. An all-reduce of gradients counts twice (reduce-scatter plus
  // all-gather); the overflow flag's and the norm's scalars are left out.
  // Embedding rows (zero.grad_accumulate_rows) count apart: every rank's
  // rows, which each rank gathers.
  int64_t gatherElems = 0, scatterElems = 0, allReduceElems = 0, rowElems = 0,
          bytes = 0;
  auto count = [&](Operation *op, int64_t &elems, int64_t times) {
    Type type;
    int64_t n = 0;
    if (auto g = llvm::dyn_cast<zero::AllGatherOp>(op)) {
      type = g.getType();
      n = g.getType().getSize();
    } else if (auto g = llvm::dyn_cast<zero::AllGatherStartOp>(op)) {
      auto flat = llvm::cast<zero::FlatType>(g.getToken().getType().getPayload());
      type = flat;
      n = flat.getSize();
    } else if (llvm::isa<zero::ReduceScatterOp, zero::ReduceScatterStartOp>(op)) {
      auto flat = llvm::cast<zero::FlatType>(op->getOperand(0).getType());
      type = flat;
      n = flat.getSize();
    } else if (llvm::isa<zero::AllReduceOp, zero::AllReduceStartOp>(op)) {
      Value input = op->getOperand(0);
      type = input.getType();
      auto flat = llvm::dyn_cast<zero::FlatType>(type);
      auto rt = llvm::dyn_cast<RankedTensorType>(type);
      if (flat)
        n = 2 * flat.getSize();
      else if (rt && input.getDefiningOp<zero::GradAccumulatorOp>())
        n = 2 * rt.getNumElements();
    } else if (auto g = llvm::dyn_cast<zero::GatherReplicaOp>(op)) {
      type = g.getShard();
      n = llvm::cast<zero::ShardType>(type).getSize() * w;
    } else if (auto r = llvm::dyn_cast<zero::GradAccumulateRowsOp>(op)) {
      // Every rank's rows and (i64) indices.
      auto rows = llvm::cast<RankedTensorType>(r.getRows().getType());
      auto indices = llvm::cast<RankedTensorType>(r.getIndices().getType());
      type = rows;
      n = rows.getNumElements() * w;
      bytes += indices.getNumElements() * w * 8 * times;
    }
    if (!n)
      return;
    elems += n * times;
    bytes += n * times * zero::elementBytes(zero::bufferElementType(type));
  };
  auto countFunction = [&](func::FuncOp fn, int64_t times) {
    fn.walk([&](Operation *op) {
      // A gather carried across the step boundary is issued by @train_step
      // for the first micro-step of the next step, by the micro-step only
      // in the later ones (and on the very first step, not counted).
      if (auto g = llvm::dyn_cast<zero::AllGatherStartOp>(op); g && g.getCarried())
        count(op, gatherElems, times - 1);
      else if (llvm::isa<zero::AllGatherOp, zero::AllGatherStartOp,
                         zero::GatherReplicaOp>(op))
        count(op, gatherElems, times);
      else if (llvm::isa<zero::GradAccumulateRowsOp>(op))
        count(op, rowElems, times);
      else if (llvm::isa<zero::ReduceScatterOp, zero::ReduceScatterStartOp>(op))
        count(op, scatterElems, times);
      else if (llvm::isa<zero::AllReduceOp, zero::AllReduceStartOp>(op))
        count(op, allReduceElems, times);
    });
  };
  if (auto fn = module.lookupSymbol<func::FuncOp>("train_micro_step"))
    countFunction(fn, config.gradAccum);
  if (step)
    countFunction(step, 1);
  int64_t total = allReduceElems + gatherElems + scatterElems + rowElems;

  // The micro-step's (and optimizer step's) scratch: on the CUDA target,
  // device memory next to the model state.
  int64_t arenaBytes = 0;
  if (auto a = module->getAttrOfType<IntegerAttr>(zero::kArenaBytesAttr))
    arenaBytes = a.getInt();
  // Where the runtime gathers every rank's embedding rows and their i64
  // indices (and keeps its own indices): two buffers, each as large as the
  // largest zero.grad_accumulate_rows needs (runtime/src/train/engine.cc).
  int64_t rowValueBytes = 0, rowIndexBytes = 0;
  if (auto fn = module.lookupSymbol<func::FuncOp>("train_micro_step"))
    fn.walk([&](zero::GradAccumulateRowsOp r) {
      auto rows = llvm::cast<RankedTensorType>(r.getRows().getType());
      auto indices = llvm::cast<RankedTensorType>(r.getIndices().getType());
      rowValueBytes = std::max<int64_t>(
          rowValueBytes,
          rows.getNumElements() * w * zero::elementBytes(rows.getElementType()));
      rowIndexBytes =
          std::max<int64_t>(rowIndexBytes, indices.getNumElements() * (w + 1) * 8);
    });
  const int64_t modelStateBytes = params + grads + state + frozenBytes + bufferBytes;
  const int64_t rowExchangeBytes = rowValueBytes + rowIndexBytes;
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "{\n"
     << "  \"world_size\": " << w << ",\n"
     << "  \"target\": \"" << target << "\",\n"
     << "  \"stage\": " << stage << ",\n"
     << "  \"parameters\": " << psi << ",\n"
     << "  \"padded_parameters\": " << padded << ",\n"
     << "  \"row_gradient_parameters\": " << rowsOnly << ",\n"
     << "  \"frozen_parameters\": " << frozenCount << ",\n"
     << "  \"frozen_parameter_elements\": " << frozenElems << ",\n"
     << "  \"persistent_parameters\": " << persistentCount << ",\n"
     << "  \"persistent_parameter_elements\": " << persistentElems << ",\n"
     << "  \"buffers\": " << bufferCount << ",\n"
     << "  \"buffer_elements\": " << bufferElems << ",\n"
     << "  \"dtype_bytes\": " << bytesPerElem << ",\n"
     << "  \"grad_dtype_bytes\": " << gradBytesPerElem << ",\n"
     << "  \"narrow_gradient_elements\": " << narrowGradElems << ",\n"
     << "  \"micro_batch\": " << config.microBatch << ",\n"
     << "  \"gradient_accumulation_steps\": " << config.gradAccum << ",\n"
     << "  \"optimizer\": \"" << config.optimizerName << "\",\n"
     << "  \"optimizer_state_bytes_per_parameter\": " << stateBytesPerElem << ",\n"
     << "  \"model_state_bytes\": {\"params\": " << params << ", \"grads\": " << grads
     << ", \"optimizer_state\": " << state << ", \"frozen_params\": " << frozenBytes
     << ", \"buffers\": " << bufferBytes << ", \"total\": " << modelStateBytes << "},\n"
     << "  \"communication_elements_per_step\": {\"all_reduce\": " << allReduceElems
     << ", \"reduce_scatter\": " << scatterElems << ", \"all_gather\": " << gatherElems
     << ", \"embedding_rows\": " << rowElems << ", \"total\": " << total << "},\n"
     << "  \"communication_bytes_per_step\": " << bytes << ",\n"
     << "  \"arena_bytes\": " << arenaBytes << ",\n"
     << "  \"row_exchange_bytes\": " << rowExchangeBytes << ",\n"
     << "  \"optimizer_scratch_bytes\": " << optimizerScratchBytes << ",\n"
     << "  \"allocated_bytes\": "
     << modelStateBytes + arenaBytes + rowExchangeBytes + optimizerScratchBytes << "\n"
     << "}\n";
  return s;
}

} // namespace zeroc
