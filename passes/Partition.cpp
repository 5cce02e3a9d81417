//===- Partition.cpp - ZeRO stage rewrite of @forward_backward ------------===//
#include "zeroc/Passes/Passes.h"

#include "zeroc/Dialect/Graph/GraphOps.h"
#include "zeroc/Dialect/Zero/BufferPlanning.h"
#include "zeroc/Dialect/Zero/ZeroOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace zeroc {
#define GEN_PASS_DEF_PARTITION
#include "zeroc/Passes/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc;

namespace {

int64_t paddedSize(int64_t numel, int64_t world) {
  return (numel + world - 1) / world * world;
}

struct PartitionPass : zeroc::impl::PartitionBase<PartitionPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (stage < 0 || stage > 3 || worldSize < 1) {
      module.emitError("zero-partition needs stage in 0-3 and world-size >= 1, got stage ")
          << static_cast<int>(stage) << " and world-size " << static_cast<int>(worldSize);
      return signalPassFailure();
    }
    auto fn = module.lookupSymbol<func::FuncOp>("forward_backward");
    if (!fn) {
      module.emitError("zero-partition needs @forward_backward (run zero-autodiff first)");
      return signalPassFailure();
    }
    if (persistenceThreshold < 0 || modelPersistenceThreshold < 0) {
      module.emitError("zero-partition: persistence-threshold and "
                       "model-persistence-threshold must be >= 0, got ")
          << static_cast<int64_t>(persistenceThreshold) << " and "
          << static_cast<int64_t>(modelPersistenceThreshold);
      return signalPassFailure();
    }
    if (stage == 3)
      markPersistent(module);
    Block &body = fn.getBody().front();
    auto ret = llvm::cast<func::ReturnOp>(body.getTerminator());
    Operation *lossDef = ret.getOperand(0).getDefiningOp();
    // The forward/backward boundary (Autodiff appends every gradient op
    // after the forward ops): recorded for the emitter's backward marker.
    if (lossDef)
      lossDef->setAttr(zero::kForwardEndAttr, UnitAttr::get(&getContext()));

    // Every parameter, trainable or frozen, is ZeRO state: DeepSpeed
    // partitions requires_grad=False parameters at stage 3 as well. Stages
    // 0-2, and stage 3's persistent parameters, read the whole replica.
    if (maxReuseDistance < 0) {
      module.emitError("zero-partition: max-reuse-distance must be >= 0, got ")
          << static_cast<int64_t>(maxReuseDistance);
      return signalPassFailure();
    }
    OpBuilder b(&getContext());
    SmallVector<graph::LoadParamOp> loads, gathered;
    fn.walk([&](graph::LoadParamOp ld) { loads.push_back(ld); });
    for (graph::LoadParamOp ld : loads) {
      auto param = SymbolTable::lookupNearestSymbolFrom<graph::ParamOp>(
          ld, ld.getParamAttr());
      if (stage < 3 || (param && zero::keepsReplica(param, stage))) {
        b.setInsertionPoint(ld);
        Value r = b.create<zero::ParamReplicaOp>(ld.getLoc(), ld.getType(),
                                                 ld.getParamAttr());
        ld.replaceAllUsesWith(r);
        ld.erase();
        continue;
      }
      gathered.push_back(ld);
    }
    llvm::DenseSet<Operation *> reused =
        loadsReusedInBackward(body, gathered, lossDef);
    for (graph::LoadParamOp ld : gathered) {
      rematerializeForBackward(b, ld, lossDef);
      gatherAroundUses(b, ld, lossDef, reused.contains(ld));
    }

    // Buffers are whole on every rank at every stage (DeepSpeed does not
    // partition module buffers).
    SmallVector<graph::LoadBufferOp> bufferLoads;
    fn.walk([&](graph::LoadBufferOp ld) { bufferLoads.push_back(ld); });
    for (graph::LoadBufferOp ld : bufferLoads) {
      b.setInsertionPoint(ld);
      ld.replaceAllUsesWith(b.create<zero::BufferLoadOp>(
          ld.getLoc(), ld.getType(), ld.getBufferAttr()).getResult());
      ld.erase();
    }

    // Gradients: results 1.. are tagged graph.grad_of = @param, then come
    // the buffer updates (graph.buffer_update = @buffer).
    unsigned numGrads = 1;
    while (numGrads < ret.getNumOperands() &&
           !fn.getResultAttr(numGrads, graph::kBufferUpdateAttrName))
      ++numGrads;
    for (unsigned i = 1; i < numGrads; ++i) {
      auto ref = fn.getResultAttrOfType<FlatSymbolRefAttr>(i, "graph.grad_of");
      if (!ref) {
        fn.emitOpError("result ") << i << " has no graph.grad_of";
        return signalPassFailure();
      }
      accumulateGrad(b, ret.getOperand(i), ref, ret);
    }

    // Buffer stores last: every read of a buffer in this micro-step, in
    // the forward and the backward pass, sees the value it started with.
    b.setInsertionPoint(ret);
    for (unsigned i = numGrads; i < ret.getNumOperands(); ++i) {
      auto ref = fn.getResultAttrOfType<FlatSymbolRefAttr>(i, graph::kBufferUpdateAttrName);
      if (!ref) {
        fn.emitOpError("result ") << i << " follows the buffer updates but has no graph.buffer_update";
        return signalPassFailure();
      }
      b.create<zero::BufferStoreOp>(ret.getLoc(), ref, ret.getOperand(i));
    }
    Value loss = ret.getOperand(0);
    b.create<func::ReturnOp>(ret.getLoc(), loss);
    ret.erase();
    fn.setSymName("train_micro_step");
    fn.setFunctionType(b.getFunctionType(fn.getArgumentTypes(), loss.getType()));
    SmallVector<DictionaryAttr> resultAttrs{b.getDictionaryAttr(
        {b.getNamedAttr(graph::kLossAttrName, b.getUnitAttr())})};
    fn.setAllResultAttrs(resultAttrs);
    module->setAttr("zero.stage", b.getI64IntegerAttr(stage));
    module->setAttr("zero.world_size", b.getI64IntegerAttr(worldSize));
  }

  /// Stage 3: DeepSpeed's mark_persistent_parameters, in declaration
  /// order (its named_parameters): a parameter of at most
  /// persistence-threshold elements persists unless it would take the
  /// persistent total past model-persistence-threshold, in which case it is
  /// skipped and later ones are still considered.
  void markPersistent(ModuleOp module) {
    int64_t total = 0;
    for (auto p : module.getOps<graph::ParamOp>()) {
      const int64_t n = p.getType().getNumElements();
      if (n > modelPersistenceThreshold - total || n > persistenceThreshold)
        continue;
      p->setAttr(zero::kPersistentAttr, UnitAttr::get(&getContext()));
      total += n;
    }
  }

  /// Ops cheap enough to recompute from a re-gathered parameter instead of
  /// keeping their result alive from the forward into the backward pass.
  static bool isRematerializable(Operation *op) {
    return op->getNumOperands() == 1 && op->getNumResults() == 1 &&
           llvm::isa<graph::TransposeOp, graph::ReshapeOp, graph::CastOp,
                     graph::ExpandOp, graph::SliceOp>(op);
  }

  /// Stage 3: values computed from the parameter alone (its transpose, a
  /// reshape...) that the backward pass reads are recomputed there from the
  /// parameter, so that neither the gathered buffer nor a copy of it stays
  /// alive between the forward and the backward pass.
  void rematerializeForBackward(OpBuilder &b, graph::LoadParamOp ld,
                                Operation *lossDef) {
    if (!lossDef)
      return;
    auto isBackward = [&](Operation *user) {
      return user != lossDef && lossDef->isBeforeInBlock(user);
    };
    // Parameter-derived ops in program order.
    SmallVector<Operation *> derived;
    llvm::DenseSet<Value> derivedValues{ld.getResult()};
    for (Operation *op = ld->getNextNode(); op && op != lossDef; op = op->getNextNode())
      if (isRematerializable(op) && derivedValues.contains(op->getOperand(0)) &&
          !isBackward(op)) {
        derived.push_back(op);
        derivedValues.insert(op->getResult(0));
      }
    Operation *firstBackwardUse = nullptr;
    for (Operation *op : derived)
      for (Operation *user : op->getResult(0).getUsers())
        if (isBackward(user) &&
            (!firstBackwardUse || user->isBeforeInBlock(firstBackwardUse)))
          firstBackwardUse = user;
    if (!firstBackwardUse)
      return;
    b.setInsertionPoint(firstBackwardUse);
    IRMapping mapping;
    for (Operation *op : derived) {
      Operation *clone = b.clone(*op, mapping);
      Value fwd = op->getResult(0), bwd = clone->getResult(0);
      fwd.replaceUsesWithIf(bwd, [&](OpOperand &use) {
        return isBackward(use.getOwner()) && use.getOwner() != clone;
      });
    }
    // Clones nobody reads in the backward pass are dead.
    for (Operation *op : llvm::reverse(derived))
      if (Value v = mapping.lookupOrNull(op->getResult(0)))
        if (v.use_empty())
          v.getDefiningOp()->erase();
  }

  /// Stage 3, stage3_max_reuse_distance: the loads whose forward gather
  /// the backward pass reuses, decided on the micro-step as the importer
  /// left it. A parameter's uses are its users and those of what the
  /// rematerializable ops derive from it; the distance of its reuse is the
  /// elements of the other gathered parameters whose forward or backward
  /// use starts between its last forward and its first backward use.
  llvm::DenseSet<Operation *>
  loadsReusedInBackward(Block &body, ArrayRef<graph::LoadParamOp> loads,
                        Operation *lossDef) {
    llvm::DenseSet<Operation *> reused;
    if (!lossDef || maxReuseDistance == 0)
      return reused;
    llvm::DenseMap<Operation *, int64_t> position;
    for (auto [i, op] : llvm::enumerate(body))
      position[&op] = i;
    const int64_t forwardEnd = position.lookup(lossDef);
    struct Span {
      int64_t forwardFirst = INT64_MAX, forwardLast = -1;
      int64_t backwardFirst = INT64_MAX;
      int64_t numel = 0;
    };
    SmallVector<Span> spans;
    for (graph::LoadParamOp ld : loads) {
      Span span;
      span.numel = ld.getType().getNumElements();
      SmallVector<Value> values{ld.getResult()};
      while (!values.empty()) {
        Value v = values.pop_back_val();
        for (Operation *user : v.getUsers()) {
          Operation *top = body.findAncestorOpInBlock(*user);
          if (!top)
            continue;
          int64_t at = position.lookup(top);
          if (at <= forwardEnd) {
            span.forwardFirst = std::min(span.forwardFirst, at);
            span.forwardLast = std::max(span.forwardLast, at);
          } else {
            span.backwardFirst = std::min(span.backwardFirst, at);
          }
          if (isRematerializable(user))
            values.push_back(user->getResult(0));
        }
      }
      spans.push_back(span);
    }
    for (auto [i, ld] : llvm::enumerate(loads)) {
      const Span &p = spans[i];
      if (p.forwardLast < 0 || p.backwardFirst == INT64_MAX)
        continue;
      auto between = [&](int64_t at) {
        return at > p.forwardLast && at < p.backwardFirst;
      };
      int64_t distance = 0;
      for (auto [j, q] : llvm::enumerate(spans))
        if (j != i)
          distance += (between(q.forwardFirst) ? q.numel : 0) +
                      (between(q.backwardFirst) ? q.numel : 0);
      if (distance < maxReuseDistance)
        reused.insert(ld);
    }
    return reused;
  }

  /// Stage 3: gathers the parameter before its first forward use and again
  /// before its first backward use, releasing after the last use of each;
  /// a parameter `reused` in backward keeps its forward gather until its
  /// last backward use.
  void gatherAroundUses(OpBuilder &b, graph::LoadParamOp ld, Operation *lossDef,
                        bool reused) {
    SmallVector<OpOperand *> forwardUses, backwardUses;
    for (OpOperand &use : ld->getUses()) {
      Operation *user = use.getOwner();
      bool isForward = reused || (lossDef && (user == lossDef ||
                                              user->isBeforeInBlock(lossDef)));
      (isForward ? forwardUses : backwardUses).push_back(&use);
    }
    auto type = ld.getType();
    int64_t padded = paddedSize(type.getNumElements(), worldSize);
    auto shardType = zero::ShardType::get(&getContext(), zero::BufferKind::Params,
                                          type.getElementType(), padded / worldSize,
                                          zero::MemorySpace::Device);
    auto flatType = zero::FlatType::get(&getContext(), zero::BufferKind::Params,
                                        type.getElementType(), padded, worldSize);
    for (auto *group : {&forwardUses, &backwardUses}) {
      if (group->empty())
        continue;
      Operation *first = (*group)[0]->getOwner(), *last = first;
      for (OpOperand *use : *group) {
        if (use->getOwner()->isBeforeInBlock(first))
          first = use->getOwner();
        if (last->isBeforeInBlock(use->getOwner()))
          last = use->getOwner();
      }
      b.setInsertionPoint(first);
      Value shard = b.create<zero::ParamShardOp>(ld.getLoc(), shardType, ld.getParamAttr());
      Value flat = b.create<zero::AllGatherOp>(ld.getLoc(), flatType, shard);
      Value view = b.create<zero::ViewOp>(ld.getLoc(), type, flat,
                                          b.getI64IntegerAttr(0));
      for (OpOperand *use : *group)
        use->set(view);
      b.setInsertionPointAfter(last);
      b.create<zero::ReleaseOp>(ld.getLoc(), flat);
    }
    ld.erase();
  }

  /// An embedding's row gradient in `grad`: a graph.gather_grad on axis 0
  /// of grad's type, alone or added to a dense part of that type (a tied
  /// head's), used by nothing else.
  struct RowGradient {
    graph::GatherGradOp rows;
    Value dense; ///< null: the gradient is the rows alone
  };
  static std::optional<RowGradient> rowGradient(Value grad) {
    auto type = llvm::cast<RankedTensorType>(grad.getType());
    auto rowsOf = [&](Value v) {
      auto g = v.getDefiningOp<graph::GatherGradOp>();
      return g && g.getAxis() == 0 && g.getType() == type && g->hasOneUse()
                 ? g
                 : graph::GatherGradOp();
    };
    if (auto rows = rowsOf(grad))
      return RowGradient{rows, Value()};
    auto add = grad.getDefiningOp<graph::AddOp>();
    if (!add || !add->hasOneUse())
      return std::nullopt;
    for (int i : {0, 1})
      if (auto rows = rowsOf(add->getOperand(i));
          rows && add->getOperand(1 - i).getType() == type)
        return RowGradient{rows, add->getOperand(1 - i)};
    return std::nullopt;
  }

  void accumulateGrad(OpBuilder &b, Value grad, FlatSymbolRefAttr param,
                      Operation *ret) {
    Location loc = ret->getLoc();
    // Stages 2-3: an embedding's rows reach the ranks' shards as rows
    // (zero.grad_accumulate_rows) when all ranks' rows are fewer elements
    // than the gradient; a dense part is reduce-scattered on its own, from
    // where it is final (for a tied head, early in the backward pass). The
    // dead gather_grad and add go with the cleanup.
    auto rowsAreFewer = [&](graph::GatherGradOp rows) {
      auto gathered = llvm::cast<ShapedType>(rows.getGrad().getType());
      return gathered.getNumElements() * worldSize <= rows.getType().getNumElements();
    };
    if (stage >= 2)
      if (std::optional<RowGradient> g = rowGradient(grad);
          g && rowsAreFewer(g->rows)) {
        b.setInsertionPointAfter(g->rows);
        b.create<zero::GradAccumulateRowsOp>(
            loc, param, g->rows.getGrad(), g->rows.getIndices(),
            g->rows.getPaddingIdxAttr());
        if (!g->dense)
          return;
        grad = g->dense;
      }
    if (Operation *def = grad.getDefiningOp())
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPoint(ret);
    if (stage < 2) {
      b.create<zero::GradAccumulateOp>(loc, param, grad, /*in_place=*/UnitAttr());
      return;
    }
    auto type = llvm::cast<RankedTensorType>(grad.getType());
    int64_t padded = paddedSize(type.getNumElements(), worldSize);
    auto flatType = zero::FlatType::get(&getContext(), zero::BufferKind::Grads,
                                        type.getElementType(), padded, worldSize);
    auto shardType = zero::ShardType::get(&getContext(), zero::BufferKind::Grads,
                                          type.getElementType(), padded / worldSize,
                                          zero::MemorySpace::Device);
    Value flat = b.create<zero::PackOp>(loc, flatType, ValueRange{grad},
                                        b.getI64ArrayAttr({0}));
    Value shard = b.create<zero::ReduceScatterOp>(
        loc, shardType, flat,
        zero::ReduceKindAttr::get(&getContext(), zero::ReduceKind::Sum),
        FloatAttr(), /*in_place=*/UnitAttr());
    b.create<zero::GradAccumulateOp>(loc, param, shard, /*in_place=*/UnitAttr());
  }
};

} // namespace
