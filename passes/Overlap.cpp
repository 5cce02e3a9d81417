//===- Overlap.cpp - collectives of the micro-step started early ---------===//
//
// overlap_comm: stage 3's parameter gathers each start early enough that
// the compute before their use (the cost models' estimate) covers their
// travel, at most one bucket ahead unless stage3_prefetch_bucket_size
// allows more; the gradient reduce-scatters of stages 2-3 start
// as soon as their bucket is packed and are waited for when the next one
// starts, so each travels while backward computes the next bucket. See
// docs/RationaleZero.md, "Overlap".
//
//===----------------------------------------------------------------------===//
#include "zeroc/Passes/Passes.h"

#include "zeroc/Passes/CommCostModel.h"
#include "zeroc/Passes/ComputeCostModel.h"

#include "zeroc/Dialect/Graph/GraphOps.h"
#include "zeroc/Dialect/Zero/BufferPlanning.h"
#include "zeroc/Dialect/Zero/ZeroOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <cmath>

namespace zeroc {
#define GEN_PASS_DEF_OVERLAP
#include "zeroc/Passes/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc;

namespace {

/// The ops that make a gather's operand: its zero.param_shard reads
/// (zero::paramShardsOf), then the zero.concat_shards of a bucket, whose
/// reads it alone uses, in program order; empty when the operand comes
/// from anything else (it then cannot move).
SmallVector<Operation *> shardReads(Value shard) {
  auto concat = shard.getDefiningOp<zero::ConcatShardsOp>();
  SmallVector<Operation *> ops;
  for (zero::ParamShardOp read : zero::paramShardsOf(shard)) {
    if (concat && !read->hasOneUse())
      return {};
    ops.push_back(read);
  }
  if (concat && !ops.empty())
    ops.push_back(concat);
  return ops;
}

/// The ops after `root` in its block that use its result, directly or
/// through one another, in program order; empty when one of them has a
/// user outside the set (they then cannot move apart from that user).
SmallVector<Operation *> dependents(Operation *root) {
  llvm::SmallPtrSet<Operation *, 8> set{root};
  SmallVector<Operation *> ops;
  for (Operation *op = root->getNextNode(); op; op = op->getNextNode())
    if (llvm::any_of(op->getOperands(), [&](Value v) {
          return set.contains(v.getDefiningOp());
        })) {
      set.insert(op);
      ops.push_back(op);
    }
  for (Operation *op : ops)
    for (Operation *user : op->getUsers())
      if (!set.contains(user))
        return {};
  return ops;
}

struct OverlapPass : zeroc::impl::OverlapBase<OverlapPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto stage = module->getAttrOfType<IntegerAttr>("zero.stage");
    auto fn = module.lookupSymbol<func::FuncOp>("train_micro_step");
    if (!stage || !fn) {
      module.emitError("zero-overlap needs @train_micro_step and zero.stage (run zero-partition)");
      return signalPassFailure();
    }
    if (stage.getInt() == 3) {
      overlapGathers(fn);
      if (auto step = module.lookupSymbol<func::FuncOp>("train_step");
          step && !step.isExternal())
        carryLeadingGathers(fn, step);
    }
    overlapReductions(fn);
  }

  /// Stage 3: the gathers the micro-step starts before its first wait have
  /// no compute before them to hide their travel. @train_step starts each
  /// of them too, as a carry, right after the update of the parameters it
  /// sends, which move to the front of the update block: the rest of the
  /// optimizer step then computes while they travel, and the next
  /// micro-step's start, marked carried, only waits (see
  /// zero.all_gather_start). Nothing is carried when an update reads a
  /// value the update block computes.
  void carryLeadingGathers(func::FuncOp micro, func::FuncOp step) {
    SmallVector<zero::AllGatherStartOp> leading;
    for (Operation &op : micro.getBody().front()) {
      if (auto start = llvm::dyn_cast<zero::AllGatherStartOp>(op))
        leading.push_back(start);
      else if (!llvm::isa<zero::ParamShardOp, zero::ParamReplicaOp,
                          zero::ConcatShardsOp, graph::ConstantOp>(op))
        break;
    }
    auto guards = step.getBody().front().getOps<zero::IfFiniteOp>();
    if (leading.empty() || guards.empty())
      return;
    Block &updates = (*guards.begin()).getBody().front();
    Block::iterator at = updates.begin();
    auto moveHere = [&](Operation *op) {
      if (&*at == op)
        ++at;
      else
        op->moveBefore(&updates, at);
    };
    auto definedInBlock = [&](Value v) {
      Operation *def = v.getDefiningOp();
      return def && updates.getParent()->isAncestor(def->getParentRegion());
    };
    OpBuilder b(&getContext());
    int64_t index = 0;
    for (zero::AllGatherStartOp start : leading) {
      SmallVector<Operation *> reads = shardReads(start.getShard());
      SmallVector<Operation *> sent; // the updates of what it sends
      for (Operation *read : reads)
        if (auto shard = llvm::dyn_cast<zero::ParamShardOp>(read))
          for (Operation &op : updates)
            if (llvm::isa<zero::AdamUpdateOp, zero::SgdUpdateOp>(op) &&
                op.getAttrOfType<FlatSymbolRefAttr>("param").getAttr() ==
                    shard.getParamAttr().getAttr())
              sent.push_back(&op);
      if (reads.empty() || llvm::any_of(sent, [&](Operation *op) {
            return llvm::any_of(op->getOperands(), definedInBlock);
          }))
        return;
      for (Operation *op : sent)
        moveHere(op);
      b.setInsertionPoint(&updates, at);
      IRMapping sends;
      for (Operation *read : reads)
        b.clone(*read, sends);
      auto carry = llvm::cast<zero::AllGatherStartOp>(b.clone(*start, sends));
      carry.setCarry(index);
      start.setCarried(index);
      ++index;
    }
  }

  /// Stage 3: every gather becomes a start and a wait where it was; the
  /// start then moves up, with the reads of what it sends, over the ops
  /// before it until the compute they are estimated to take covers
  /// kPrefetchSlack times its ring time. It may move up to right after the
  /// previous gather's wait, and further, to right after the previous
  /// start, only while the elements in flight with it stay within
  /// prefetch-bucket-size; never past a point where the gathered elements
  /// alive with it would exceed max-live-parameters.
  void overlapGathers(func::FuncOp fn) {
    if (maxLiveParameters < 0 || prefetchBucketSize < 0) {
      fn.emitOpError("zero-overlap: max-live-parameters and "
                     "prefetch-bucket-size must be >= 0, got ")
          << static_cast<int64_t>(maxLiveParameters) << " and "
          << static_cast<int64_t>(prefetchBucketSize);
      return signalPassFailure();
    }
    for (auto [name, value] :
         {std::pair{"comm-alpha-us", double(commAlphaUs)},
          std::pair{"comm-gbps", double(commGbps)},
          std::pair{"compute-gflops", double(computeGflops)},
          std::pair{"memory-gb-per-s", double(memoryGBPerS)}})
      if (!(value > 0.0) || !std::isfinite(value)) {
        fn.emitOpError("zero-overlap: ")
            << name << " must be a positive number, got " << value;
        return signalPassFailure();
      }
    fn->setAttr(zero::kMaxLiveParametersAttr,
                OpBuilder(&getContext()).getI64IntegerAttr(maxLiveParameters));
    const CommCostModel comm{commAlphaUs, commGbps};
    const ComputeCostModel compute{computeGflops, memoryGBPerS,
                                   TrainingStateCost::of(fn->getParentOfType<ModuleOp>())};
    SmallVector<zero::AllGatherOp> gathers(fn.getOps<zero::AllGatherOp>());
    OpBuilder b(&getContext());
    Operation *previousStart = nullptr;
    for (zero::AllGatherOp gather : gathers) {
      zero::FlatType flat = gather.getType();
      b.setInsertionPoint(gather);
      auto tokenType = zero::TokenType::get(&getContext(), flat);
      auto start = b.create<zero::AllGatherStartOp>(gather.getLoc(), tokenType,
                                                    gather.getShard());
      start->setAttrs(gather->getDiscardableAttrDictionary());
      auto wait = b.create<zero::WaitOp>(gather.getLoc(), start.getToken());
      gather.replaceAllUsesWith(wait.getResult());
      gather.erase();
      SmallVector<Operation *> reads = shardReads(start.getShard());
      if (previousStart && !reads.empty())
        if (Operation *before =
                startPoint(reads.front(), previousStart, flat, comm, compute)) {
          for (Operation *read : reads)
            read->moveBefore(before);
          start->moveBefore(before);
        }
      previousStart = start;
    }
  }

  /// The op before which a gather of `flat` whose shard reads begin at
  /// `firstRead` starts (see overlapGathers), or null to start it there.
  Operation *startPoint(Operation *firstRead, Operation *previousStart,
                        zero::FlatType flat, const CommCostModel &comm,
                        const ComputeCostModel &compute) {
    const int64_t own = flat.getSize();
    const double need =
        kPrefetchSlack *
        comm.ringUs(own * zero::elementBytes(flat.getElementType()), flat.getWorld());
    // What is alive and in flight right before the reads, updated op by op
    // walking up: above a release its buffer is alive, above a start its
    // gather is not; above a wait its gather is in flight.
    zero::GatheredElements at;
    if (Operation *before = firstRead->getPrevNode())
      at = zero::gatheredElementsAt(firstRead->getBlock(), before);
    auto [live, inFlight] = at;
    Operation *point = nullptr;
    double covered = 0.0;
    for (Operation *op = firstRead->getPrevNode(); op && op != previousStart;
         op = op->getPrevNode()) {
      if (auto r = llvm::dyn_cast<zero::ReleaseOp>(op)) {
        live += zero::gatheredElementsOf(r.getBuffer());
      } else if (auto w = llvm::dyn_cast<zero::WaitOp>(op)) {
        inFlight += zero::gatheredElementsOf(w.getToken());
      } else if (llvm::isa<zero::AllGatherOp, zero::AllGatherStartOp>(op)) {
        int64_t n = zero::gatheredElementsOf(op->getResult(0));
        live -= n;
        inFlight -= llvm::isa<zero::AllGatherStartOp>(op) ? n : 0;
      }
      if (live + own > maxLiveParameters ||
          (inFlight > 0 && inFlight + own > prefetchBucketSize))
        break;
      point = op;
      covered += compute.opUs(op);
      if (covered >= need)
        break;
    }
    return point;
  }

  /// Each gradient reduce-scatter starts where it was (its bucket is
  /// final and packed); its wait, with the accumulations of what it
  /// reduced, moves to the next reduce-scatter's start, the last one's to
  /// the end of the micro-step (before its buffer stores). One reduction
  /// travels at a time, during the backward compute of the next bucket,
  /// and at most two packed buckets are alive.
  void overlapReductions(func::FuncOp fn) {
    SmallVector<Operation *> reductions;
    for (Operation &op : fn.getBody().front())
      if (auto rs = llvm::dyn_cast<zero::ReduceScatterOp>(op);
          rs && rs.getBuffer().getType().getKind() == zero::BufferKind::Grads)
        reductions.push_back(rs);
      else if (auto ar = llvm::dyn_cast<zero::AllReduceOp>(op);
               ar && ar.getInput().getDefiningOp<zero::GradAccumulatorOp>())
        reductions.push_back(ar);
    OpBuilder b(&getContext());
    SmallVector<Operation *> pending; // the previous wait and its dependents
    auto movePendingBefore = [&](Operation *point) {
      for (Operation *op : pending)
        op->moveBefore(point);
      pending.clear();
    };
    for (Operation *reduction : reductions) {
      b.setInsertionPoint(reduction);
      auto tokenType =
          zero::TokenType::get(&getContext(), reduction->getResult(0).getType());
      Operation *start;
      if (auto rs = llvm::dyn_cast<zero::ReduceScatterOp>(reduction))
        start = b.create<zero::ReduceScatterStartOp>(
            rs.getLoc(), tokenType, rs.getBuffer(), rs.getReductionAttr(),
            rs.getScaleAttr(), rs.getInPlaceAttr());
      else {
        auto ar = llvm::cast<zero::AllReduceOp>(reduction);
        start = b.create<zero::AllReduceStartOp>(ar.getLoc(), tokenType,
                                                 ar.getInput(),
                                                 ar.getReductionAttr(),
                                                 ar.getScaleAttr());
      }
      for (NamedAttribute attr : reduction->getDiscardableAttrs())
        start->setAttr(attr.getName(), attr.getValue());
      auto wait = b.create<zero::WaitOp>(reduction->getLoc(), start->getResult(0));
      reduction->getResult(0).replaceAllUsesWith(wait.getResult());
      reduction->erase();
      movePendingBefore(start);
      SmallVector<Operation *> users = dependents(wait);
      if (users.empty() && !wait->use_empty())
        continue; // read where it is: waited for at once
      pending.push_back(wait);
      pending.append(users.begin(), users.end());
    }
    // The micro-step ends with its buffer stores (zero-partition).
    Operation *end = fn.getBody().front().getTerminator();
    while (end->getPrevNode() && llvm::isa<zero::BufferStoreOp>(end->getPrevNode()))
      end = end->getPrevNode();
    movePendingBefore(end);
  }
};

} // namespace
