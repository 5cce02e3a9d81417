//===- PlanBuffers.cpp - static arena offsets for @train_micro_step -------===//
#include "zeroc/Passes/Passes.h"

#include "GradSlab.h"
#include "RowPitch.h"

#include "zeroc/Dialect/Graph/GraphOps.h"
#include "zeroc/Dialect/Zero/BufferPlanning.h"
#include "zeroc/Dialect/Zero/ZeroOps.h"
#include "zeroc/Dialect/Zero/ZeroTypes.h"
#include "zeroc/Support/Strides.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <map>
#include <optional>

namespace zeroc {
#define GEN_PASS_DEF_PLANBUFFERS
#include "zeroc/Passes/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::zero;

namespace {

/// First-fit allocator over a growing arena with coalescing free blocks.
class Arena {
public:
  int64_t allocate(int64_t size) {
    for (auto it = free.begin(); it != free.end(); ++it) {
      if (it->second < size)
        continue;
      int64_t off = it->first, rest = it->second - size;
      free.erase(it);
      if (rest > 0)
        free[off + size] = rest;
      return off;
    }
    int64_t off = bytes;
    bytes += size;
    return off;
  }
  void release(int64_t offset, int64_t size) {
    auto it = free.emplace(offset, size).first;
    auto next = std::next(it);
    if (next != free.end() && it->first + it->second == next->first) {
      it->second += next->second;
      free.erase(next);
    }
    if (it != free.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second == it->first) {
        prev->second += it->second;
        free.erase(it);
      }
    }
  }
  int64_t size() const { return bytes; }

private:
  std::map<int64_t, int64_t> free; // offset -> size
  int64_t bytes = 0;
};

/// With one micro-step per optimizer step, every step's only accumulation
/// of a gradient writes its accumulator (zeroc_rt_engine::firstAccumulation):
/// the gradient can be produced there directly instead of in the arena and
/// copied. Taken when the gradient has the accumulator's element type and
/// nothing but the accumulation uses it or the values between
/// (accumulatorChain: reshapes, a wait for a started reduce-scatter, whose
/// shard is then the gradient, and on one rank that reduce-scatter, the
/// identity, and the pack it reduces), so nothing else reads or writes that
/// storage; the accumulation is marked in_place.
/// Returns the results placed in accumulators.
llvm::DenseSet<Value> placeGradientsInAccumulators(ModuleOp module,
                                                   func::FuncOp micro) {
  llvm::DenseSet<Value> placed;
  auto step = module.lookupSymbol<func::FuncOp>("train_step");
  if (!step || step.isExternal())
    return placed;
  auto steps = step->getAttrOfType<IntegerAttr>(kMicroStepsAttr);
  if (!steps || steps.getInt() != 1)
    return placed;
  llvm::StringMap<Type> accumulatorElement = accumulatorElementTypes(step);
  Block &block = micro.getBody().front();
  // A parameter whose rows are accumulated too (zero.grad_accumulate_rows)
  // has two accumulations in either order: neither overwrites.
  llvm::StringSet<> withRows;
  for (auto rows : block.getOps<GradAccumulateRowsOp>())
    withRows.insert(rows.getParam());
  for (auto accumulate : block.getOps<GradAccumulateOp>()) {
    Value grad = accumulate.getGrad();
    if (withRows.contains(accumulate.getParam()) ||
        bufferElementType(grad.getType()) !=
            accumulatorElement.lookup(accumulate.getParam()))
      continue;
    SmallVector<Value> chain = accumulatorChain(grad);
    Value root = chain.back();
    const bool onlyAccumulated = llvm::all_of(chain, [](Value v) { return v.hasOneUse(); });
    // One use each: no second accumulation of the same storage either.
    Operation *def = root.getDefiningOp();
    if (!onlyAccumulated || !def || !resultsNeedArena(def))
      continue;
    accumulate.setInPlace(true);
    placed.insert(root);
  }
  return placed;
}

/// mark(op, payload) for each collective `Op` in `fn` and each `StartOp`
/// (its started form): the result type of the one, the token's payload of
/// the other, as a `Payload`.
template <typename Op, typename StartOp, typename Payload, typename Mark>
void forEachCollective(func::FuncOp fn, Mark &&mark) {
  fn.walk([&](Operation *op) {
    if (auto c = llvm::dyn_cast<Op>(op))
      mark(c, llvm::cast<Payload>(c.getType()));
    else if (auto c = llvm::dyn_cast<StartOp>(op))
      mark(c, llvm::cast<Payload>(c.getToken().getType().getPayload()));
  });
}

/// On one rank a reduce-scatter's shard is its whole buffer: reducing in
/// place (the shard is the buffer's first elements) moves nothing, where a
/// shard of its own is a copy and a second buffer. Taken when nothing but
/// the reduce-scatter reads the buffer, so that its storage may hold the
/// shard after it; the op is marked in_place.
void reduceScatterInPlaceOnOneRank(func::FuncOp fn) {
  forEachCollective<ReduceScatterOp, ReduceScatterStartOp, ShardType>(
      fn, [](auto rs, ShardType shard) {
        FlatType buffer = rs.getBuffer().getType();
        if (!rs.getInPlace() && buffer.getWorld() == 1 && shard.getSize() == buffer.getSize() &&
            rs.getBuffer().hasOneUse())
          rs.setInPlace(true);
      });
}

/// On one rank a parameter's gather has its shard as its whole buffer: a
/// zero.all_gather(_start) of a zero.param_shard there is marked in_place,
/// so that the gathered parameter is a view of the rank's shard (state, no
/// arena) and nothing is copied; its collective runs nothing.
void gatherInPlaceOnOneRank(func::FuncOp fn) {
  forEachCollective<AllGatherOp, AllGatherStartOp, FlatType>(fn, [](auto gather, FlatType flat) {
    if (gather.getShard().template getDefiningOp<ParamShardOp>() && flat.getWorld() == 1)
      gather.setInPlace(true);
  });
}

/// Where a result that zero-plan-buffers writes inside a graph.concat's
/// storage goes: the concat and its byte offset in it.
struct InConcat {
  zeroc::graph::ConcatOp concat;
  int64_t byteOffset;
};

/// A graph.concat copies its operands into its storage; when each operand
/// is a result (through reshapes, each read by nothing else) of an op that
/// can write it at any strides (writesResultAtStrides), the ops can write
/// them there in the first place: the q, k and v gradients of an attention
/// into the [B, T, 3HD] gradient of the QKV projection. Records each such
/// result's strides (kResultStridesAttr) and marks the concat
/// (kOperandsInPlaceAttr); returns where each result goes. `outside`: the
/// results the plan puts elsewhere (accumulators, carried gathers).
llvm::DenseMap<Value, InConcat> placeConcatOperands(ArrayRef<Operation *> ops,
                                                    const llvm::DenseSet<Value> &outside) {
  llvm::DenseMap<Value, InConcat> placed;
  // A plan decides afresh: no placement is taken from the input.
  for (Operation *op : ops) {
    op->removeAttr(kOperandsInPlaceAttr);
    op->removeAttr(kResultStridesAttr);
  }
  for (Operation *op : ops) {
    auto concat = llvm::dyn_cast<zeroc::graph::ConcatOp>(op);
    if (!concat || !resultsNeedArena(concat) || outside.contains(concat.getResult()))
      continue;
    auto type = llvm::cast<RankedTensorType>(concat.getType());
    const int64_t elements = type.getNumElements(), bytes = storageBytes(type);
    if (!type.hasStaticShape() || elements <= 0 || bytes <= 0 || bytes % elements)
      continue;
    const SmallVector<int64_t> dense = zeroc::rowMajorStrides(type.getShape());
    const int64_t axis = concat.getAxis();
    // Each operand's root result, strides and element offset, or none.
    SmallVector<std::tuple<OpResult, SmallVector<int64_t>, int64_t>> roots;
    int64_t along = 0;
    for (Value in : concat.getInputs()) {
      auto inType = llvm::cast<RankedTensorType>(in.getType());
      const int64_t offset = along * dense[axis];
      along += inType.getDimSize(axis);
      std::optional<SmallVector<int64_t>> strides = SmallVector<int64_t>(dense);
      Value v = in;
      while (v.hasOneUse() && strides) {
        auto reshape = v.getDefiningOp<zeroc::graph::ReshapeOp>();
        if (!reshape)
          break;
        strides = zeroc::reshapedStrides(
            llvm::cast<RankedTensorType>(v.getType()).getShape(), *strides,
            llvm::cast<RankedTensorType>(reshape.getInput().getType()).getShape());
        v = reshape.getInput();
      }
      auto result = llvm::dyn_cast<OpResult>(v);
      if (!strides || !v.hasOneUse() || !result || outside.contains(v) ||
          result.getOwner()->getBlock() != concat->getBlock() ||
          !writesResultAtStrides(result.getOwner(), result.getResultNumber()))
        break;
      roots.emplace_back(result, std::move(*strides), offset);
    }
    if (roots.size() != concat.getInputs().size())
      continue;
    Builder b(concat.getContext());
    for (auto &[result, strides, offset] : roots) {
      Operation *producer = result.getOwner();
      SmallVector<Attribute> all;
      if (auto recorded = producer->getAttrOfType<ArrayAttr>(kResultStridesAttr))
        all.assign(recorded.begin(), recorded.end());
      all.resize(producer->getNumResults(), b.getDenseI64ArrayAttr({}));
      all[result.getResultNumber()] = b.getDenseI64ArrayAttr(strides);
      producer->setAttr(kResultStridesAttr, b.getArrayAttr(all));
      placed[result] = InConcat{concat, offset * (bytes / elements)};
    }
    concat->setAttr(kOperandsInPlaceAttr, b.getUnitAttr());
  }
  return placed;
}

/// A fused cross-entropy's scores gradient written over its scores: when
/// `r` is that result of the op at `index`, the scores' storage is the
/// arena's own (`taken`), of the gradient's size, and nothing reads it
/// after the op, the gradient takes it. Its release moves from the op to
/// the gradient's last use; returns the offset. The kernel reads every
/// score before it writes that score's gradient (kernels/rows.cu,
/// crossEntropyKernel). The logits of a language model's head are the
/// largest tensor of its step (GPT-2-124M at micro batch 8: 823 MB in
/// bf16), and its gradient then needs no second one.
std::optional<int64_t>
writeOverScores(Operation *op, Value r, int index, const llvm::DenseMap<Value, int> &lastUse,
                const llvm::DenseMap<Value, std::pair<int64_t, int64_t>> &taken,
                std::multimap<int, std::pair<int64_t, int64_t>> &releases) {
  auto ce = llvm::dyn_cast<zeroc::graph::FusedSoftmaxCrossEntropyOp>(op);
  if (!ce || r != ce.getGradScores())
    return std::nullopt;
  Value scores = storageRoot(ce.getScores());
  auto it = taken.find(scores);
  if (it == taken.end() || lastUse.lookup(scores) != index ||
      storageBytes(scores.getType()) != storageBytes(r.getType()))
    return std::nullopt;
  const std::pair<int64_t, int64_t> storage = it->second;
  auto [begin, end] = releases.equal_range(index);
  for (auto release = begin; release != end; ++release)
    if (release->second == storage) {
      releases.erase(release);
      releases.insert({lastUse.lookup(storageRoot(r)), storage});
      ce->setAttr(kGradOverScoresAttr, UnitAttr::get(op->getContext()));
      return storage.first;
    }
  return std::nullopt;
}

/// Plans one function's values from offset 0; returns the bytes it needs.
/// Ops are taken in the order they run: each top-level op, then the ops
/// nested in its regions (the step's zero.if_finite runs its body once, in
/// order), so that a bucket inside the step is planned like one outside.
/// Results in `inAccumulator` get kInAccumulatorOffset; rows are padded to
/// `rowPitchAlignment` bytes where padRowPitches says (0: never).
FailureOr<int64_t> planFunction(func::FuncOp fn, const llvm::DenseSet<Value> &inAccumulator = {},
                                int64_t *hostBytes = nullptr, int64_t rowPitchAlignment = 0) {
  Block &block = fn.getBody().front();
  SmallVector<Operation *> ops;
  for (Operation &op : block)
    op.walk<WalkOrder::PreOrder>([&](Operation *o) { ops.push_back(o); });
  for (Operation *op : ops) // a plan decides afresh (writeOverScores)
    op->removeAttr(kGradOverScoresAttr);
  llvm::DenseMap<Value, int> lastUse;
  for (auto [index, op] : llvm::enumerate(ops)) {
    for (Value v : op->getOperands())
      lastUse[storageRoot(v)] = index;
    for (Value r : op->getResults())
      lastUse.try_emplace(storageRoot(r), index);
  }
  // A started collective reads its operand until its wait: the operand's
  // storage lives until then.
  for (auto [index, op] : llvm::enumerate(ops))
    if (auto wait = llvm::dyn_cast<zeroc::zero::WaitOp>(op))
      if (Operation *start = wait.getToken().getDefiningOp())
        for (Value v : start->getOperands()) {
          int &last = lastUse[storageRoot(v)];
          last = std::max(last, static_cast<int>(index));
        }
  Arena arena;
  std::multimap<int, std::pair<int64_t, int64_t>> releases;
  // A gather carried across the step boundary (zero.all_gather_start's
  // carry and carried) reads its packed shards and writes its result from
  // @train_step until the micro-step's wait: both functions place the two
  // first, in carry order, into their empty arena, so their offsets agree.
  // In @train_step they stay taken to its end; in the micro-step the packed
  // shards until the wait, the result until its last use.
  std::map<int64_t, AllGatherStartOp> carried;
  for (Operation *op : ops)
    if (auto start = llvm::dyn_cast<AllGatherStartOp>(op))
      if (std::optional<int64_t> k = start.getCarryIndex())
        carried[*k] = start;
  llvm::DenseMap<Value, int64_t> pinned;
  for (auto &[k, start] : carried) {
    SmallVector<Value, 2> values;
    if (!start.getInPlace()) // else a view of its shard
      values.push_back(start.getToken());
    if (auto packed = start.getShard().getDefiningOp<ConcatShardsOp>())
      values.push_back(packed);
    for (Value v : values) {
      int64_t size = alignToArena(std::max<int64_t>(1, storageBytes(v.getType())));
      int64_t off = arena.allocate(size);
      pinned[v] = off;
      if (start.getCarried())
        releases.insert({lastUse.lookup(v), {off, size}});
    }
  }
  llvm::DenseSet<Value> outside(inAccumulator.begin(), inAccumulator.end());
  for (auto &[v, off] : pinned)
    outside.insert(v);
  const llvm::DenseMap<Value, InConcat> inConcat = placeConcatOperands(ops, outside);
  const llvm::DenseSet<Value> pitched = zeroc::padRowPitches(ops, rowPitchAlignment, outside);
  // Each in-place concat's storage, taken when its first operand is made.
  llvm::DenseMap<Operation *, int64_t> concatBase;
  // Each value the arena holds on its own: its offset and size.
  llvm::DenseMap<Value, std::pair<int64_t, int64_t>> taken;
  Builder b(fn.getContext());
  auto allScalars = [](Operation *op) {
    return llvm::all_of(op->getResultTypes(), [](Type t) {
      auto ranked = llvm::dyn_cast<RankedTensorType>(t);
      return ranked && ranked.getRank() == 0;
    });
  };
  for (auto [index, op] : llvm::enumerate(ops)) {
    if (hostBytes && op->getNumResults() && resultsNeedArena(op) && allScalars(op)) {
      SmallVector<int64_t> offsets;
      for (Value r : op->getResults()) {
        offsets.push_back(*hostBytes);
        *hostBytes += alignToArena(std::max<int64_t>(1, storageBytes(r.getType())));
      }
      op->setAttr(kHostOffsetsAttr, b.getI64ArrayAttr(offsets));
      continue;
    }
    if (op->getNumResults() && resultsNeedArena(op)) {
      SmallVector<int64_t> offsets;
      for (Value r : op->getResults()) {
        if (inAccumulator.contains(r)) {
          offsets.push_back(kInAccumulatorOffset);
          continue;
        }
        if (auto it = pinned.find(r); it != pinned.end()) {
          offsets.push_back(it->second);
          continue;
        }
        // An in-place concat's operand, or the concat: its storage.
        Operation *concat = op->hasAttr(kOperandsInPlaceAttr) ? op : nullptr;
        int64_t within = 0;
        if (auto it = inConcat.find(r); it != inConcat.end()) {
          concat = it->second.concat;
          within = it->second.byteOffset;
        }
        if (concat && concatBase.count(concat)) {
          offsets.push_back(concatBase[concat] + within);
          continue;
        }
        if (std::optional<int64_t> over = writeOverScores(op, r, index, lastUse, taken, releases)) {
          offsets.push_back(*over);
          continue;
        }
        Value stored = concat ? concat->getResult(0) : r;
        int64_t bytes =
            pitched.contains(stored)
                ? zeroc::stridedStorageBytes(stored.getType(), recordedResultStrides(stored))
                : storageBytes(stored.getType());
        if (bytes < 0)
          return op->emitOpError("result type ") << r.getType() << " has no static size to plan";
        int64_t size = alignToArena(std::max<int64_t>(1, bytes));
        int64_t off = arena.allocate(size);
        offsets.push_back(off + within);
        if (concat)
          concatBase[concat] = off;
        else
          taken[r] = {off, size};
        releases.insert({lastUse.lookup(stored), {off, size}});
      }
      op->setAttr(kArenaOffsetsAttr, b.getI64ArrayAttr(offsets));
    }
    auto [begin, end] = releases.equal_range(static_cast<int>(index));
    for (auto it = begin; it != end; ++it)
      arena.release(it->second.first, it->second.second);
  }
  return arena.size();
}

struct PlanBuffersPass : zeroc::impl::PlanBuffersBase<PlanBuffersPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fn = module.lookupSymbol<func::FuncOp>("train_micro_step");
    if (!fn || fn.isExternal()) {
      module.emitError("zero-plan-buffers needs @train_micro_step (run zero-partition)");
      return signalPassFailure();
    }
    // Before the arena: a bucket whose accumulators lie in the gradient
    // slab at its offsets takes no arena storage (planState lays them out).
    zeroc::markPacksInGradSlab(module);
    reduceScatterInPlaceOnOneRank(fn);
    for (StringRef name : {"train_micro_step", "train_step"})
      if (auto f = module.lookupSymbol<func::FuncOp>(name); f && !f.isExternal())
        gatherInPlaceOnOneRank(f);
    // The micro-step and the optimizer step never run at the same time:
    // they share the arena.
    if (rowPitchAlignment < 0) {
      module.emitError("zero-plan-buffers: row-pitch-alignment must be >= 0, got ")
          << static_cast<int64_t>(rowPitchAlignment);
      return signalPassFailure();
    }
    FailureOr<int64_t> bytes =
        planFunction(fn, placeGradientsInAccumulators(module, fn), nullptr, rowPitchAlignment);
    if (failed(bytes))
      return signalPassFailure();
    int64_t total = *bytes;
    if (auto step = module.lookupSymbol<func::FuncOp>("train_step");
        step && !step.isExternal()) {
      int64_t hostBytes = 0;
      FailureOr<int64_t> stepBytes =
          planFunction(step, {}, hostStepScalars ? &hostBytes : nullptr);
      if (failed(stepBytes))
        return signalPassFailure();
      total = std::max(total, *stepBytes);
      if (hostStepScalars)
        module->setAttr(kHostBytesAttr,
                        Builder(&getContext()).getI64IntegerAttr(hostBytes));
    }
    module->setAttr(kArenaBytesAttr, Builder(&getContext()).getI64IntegerAttr(total));
    if (failed(planState(module)))
      return signalPassFailure();
  }

  /// The persistent state of every parameter (#zero.state_layout): the one
  /// place the stage decides what a rank keeps between steps, and where
  /// each gradient accumulator lies in the runtime's slab (GradSlab.h).
  LogicalResult planState(ModuleOp module) {
    auto stageAttr = module->getAttrOfType<IntegerAttr>("zero.stage");
    auto worldAttr = module->getAttrOfType<IntegerAttr>("zero.world_size");
    if (!stageAttr || !worldAttr)
      return module.emitError("zero-plan-buffers needs zero.stage and zero.world_size");
    const int64_t stage = stageAttr.getInt(), world = worldAttr.getInt();
    llvm::StringMap<StateLayoutAttr> layouts;
    for (auto p : module.getOps<zeroc::graph::ParamOp>()) {
      const int64_t n = p.getType().getNumElements();
      const int64_t shard = shardElements(n, world), padded = shard * world;
      // Stage 3's persistent parameters keep the whole replica, as stages
      // 0-2 do; their gradient and optimizer state are partitioned.
      const bool whole = keepsReplica(p, stage);
      int64_t param = whole ? padded : shard;
      int64_t paramStride = whole ? 0 : shard;
      int64_t grad = 0, update = 0, updateStride = 0;
      if (p.getTrainable()) {
        grad = stage == 0 ? n : stage == 1 ? padded : shard;
        update = stage == 0 ? n : shard;
        updateStride = stage == 0 ? 0 : shard;
      }
      layouts[p.getSymName()] =
          StateLayoutAttr::get(&getContext(), param, paramStride, grad, update, updateStride, 0);
    }
    zeroc::GradSlab slab = zeroc::layOutGradSlab(
        module, [&](StringRef name) { return layouts.lookup(name).getGrad(); });
    for (auto p : module.getOps<zeroc::graph::ParamOp>()) {
      StateLayoutAttr l = layouts.lookup(p.getSymName());
      p->setAttr(kStateLayoutAttr,
                 StateLayoutAttr::get(&getContext(), l.getParam(), l.getParamStride(), l.getGrad(),
                                      l.getUpdate(), l.getUpdateStride(),
                                      slab.offsets.lookup(p.getSymName())));
    }
    module->setAttr(kGradSlabBytesAttr, Builder(&getContext()).getI64IntegerAttr(slab.bytes));
    return success();
  }
};

} // namespace
