//===- BucketStep.cpp - zero-bucket's buckets of @train_step ---------------===//
//
// The optimizer step's collectives, as zero-step-boundary emits them one per
// parameter, grouped into buckets:
//   * stage 0: zero.all_reduce of each full accumulator -> one zero.pack of
//     the accumulators end to end, one all-reduce, a zero.view per member;
//   * stage 1: zero.reduce_scatter of each padded accumulator -> one
//     rank-major zero.pack_shards, one reduce-scatter, a zero.shard_slice
//     per member (the layout of the micro-step's gradient buckets);
//   * zero.gather_replica (stages 1-2, stage 3's persistent parameters) ->
//     zero.replica_slice per member, one zero.concat_shards + zero.all_gather,
//     a zero.unpack_replica per member (the layout of stage 3's gathers);
//     a replica large enough that the cost model sees no gain in bucketing
//     it keeps its own gather, which writes into it in place.
// See docs/RationaleZero.md, "Bucketing".
//
//===----------------------------------------------------------------------===//
#include "Bucket.h"

#include "zeroc/Dialect/Graph/GraphOps.h"
#include "zeroc/Dialect/Zero/BufferPlanning.h"
#include "zeroc/Dialect/Zero/ZeroOps.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace zeroc::zero;

namespace zeroc::bucket {
namespace {

/// One step reduction as zero-step-boundary emits it: the accumulator read
/// and its all-reduce (stage 0) or reduce-scatter (stage 1).
struct StepReduction {
  mutable GradAccumulatorOp acc; // op handles are not const-correct
  Operation *reduce;

  /// Elements of a stage-0 (full tensor) accumulator.
  int64_t numel() const {
    return llvm::cast<RankedTensorType>(acc.getType()).getNumElements();
  }
};

/// One zero.gather_replica.
struct ReplicaGather {
  mutable GatherReplicaOp op;
  int64_t world;

  ShardType shard() const { return llvm::cast<ShardType>(op.getShard()); }
};

int64_t roundUp(int64_t n, int64_t world) {
  return (n + world - 1) / world * world;
}

/// Every use of `v` comes after `op` in its block (uses nested in a later
/// op count), so that a bucket built at `op` dominates them.
bool usedAfter(Value v, Operation *op) {
  return llvm::all_of(v.getUsers(), [&](Operation *user) {
    Operation *top = op->getBlock()->findAncestorOpInBlock(*user);
    return top && op->isBeforeInBlock(top);
  });
}

std::optional<StepReduction> matchReduction(Operation &op) {
  if (op.hasAttr(kBucketAttr))
    return std::nullopt;
  Value input;
  if (auto ar = llvm::dyn_cast<AllReduceOp>(op);
      ar && llvm::isa<RankedTensorType>(ar.getType()))
    input = ar.getInput();
  else if (auto rs = llvm::dyn_cast<ReduceScatterOp>(op))
    input = rs.getBuffer();
  auto acc = input ? input.getDefiningOp<GradAccumulatorOp>()
                   : GradAccumulatorOp();
  if (!acc || !acc->hasOneUse() || acc->getBlock() != op.getBlock())
    return std::nullopt;
  return StepReduction{acc, &op};
}

/// The reduction's kind and scale, which a bucket's members share.
std::pair<Attribute, Attribute> reductionOf(Operation *op) {
  if (auto ar = llvm::dyn_cast<AllReduceOp>(op))
    return {ar.getReductionAttr(), ar.getScaleAttr()};
  auto rs = llvm::cast<ReduceScatterOp>(op);
  return {rs.getReductionAttr(), rs.getScaleAttr()};
}

struct StepBucketer {
  func::FuncOp step;
  int64_t world;
  OpBuilder b;

  /// Stage 0: the accumulators end to end in one flat buffer (padded at
  /// its end to a multiple of W), all-reduced in place, each member read
  /// back as a view.
  Operation *allReduceBucket(ArrayRef<StepReduction> members) {
    StepReduction last = members.back();
    b.setInsertionPoint(last.reduce);
    auto [kind, scale] = reductionOf(last.reduce);
    SmallVector<Value> accs;
    SmallVector<int64_t> offsets;
    SmallVector<Location> locs;
    int64_t size = 0;
    for (const StepReduction &m : members) {
      accs.push_back(m.acc);
      offsets.push_back(size);
      locs.push_back(m.reduce->getLoc());
      size += m.numel();
    }
    Type elem = bufferElementType(last.acc.getType());
    auto flat = FlatType::get(b.getContext(), BufferKind::Grads, elem,
                              roundUp(size, world), world);
    Location loc = b.getFusedLoc(locs);
    Value packed =
        b.create<PackOp>(loc, flat, accs, b.getI64ArrayAttr(offsets));
    auto reduce = b.create<AllReduceOp>(
        loc, flat, packed, llvm::cast<ReduceKindAttr>(kind),
        llvm::cast_or_null<FloatAttr>(scale));
    for (auto [m, offset] : llvm::zip(members, offsets)) {
      Value view = b.create<ViewOp>(m.reduce->getLoc(), m.acc.getType(),
                                    reduce, b.getI64IntegerAttr(offset));
      m.reduce->getResult(0).replaceAllUsesWith(view);
    }
    return reduce;
  }

  /// Stage 1: the accumulators' shards rank-major in one bucket, one
  /// reduce-scatter, each member's shard a slice of the result.
  Operation *reduceScatterBucket(ArrayRef<StepReduction> members) {
    StepReduction last = members.back();
    b.setInsertionPoint(last.reduce);
    auto [kind, scale] = reductionOf(last.reduce);
    Type elem = bufferElementType(last.acc.getType());
    SmallVector<Value> grads;
    SmallVector<int64_t> offsets;
    SmallVector<Location> locs;
    int64_t shardSize = 0;
    for (const StepReduction &m : members) {
      auto param = SymbolTable::lookupNearestSymbolFrom<graph::ParamOp>(
          step, m.acc.getParamAttr());
      auto tensor =
          RankedTensorType::get(param.getType().getShape(), elem);
      grads.push_back(b.create<ViewOp>(m.acc.getLoc(), tensor, m.acc,
                                       b.getI64IntegerAttr(0)));
      offsets.push_back(shardSize);
      locs.push_back(m.reduce->getLoc());
      shardSize += llvm::cast<FlatType>(m.acc.getType()).getShardSize();
    }
    Location loc = b.getFusedLoc(locs);
    auto flat = FlatType::get(b.getContext(), BufferKind::Grads, elem,
                              shardSize * world, world);
    auto shard = ShardType::get(b.getContext(), BufferKind::Grads, elem,
                                shardSize, MemorySpace::Device);
    Value bucket =
        b.create<PackShardsOp>(loc, flat, grads, b.getI64ArrayAttr(offsets));
    auto reduce = b.create<ReduceScatterOp>(
        loc, shard, bucket, llvm::cast<ReduceKindAttr>(kind),
        llvm::cast_or_null<FloatAttr>(scale), /*in_place=*/UnitAttr());
    for (auto [m, offset] : llvm::zip(members, offsets)) {
      Value slice = b.create<ShardSliceOp>(
          m.reduce->getLoc(), m.reduce->getResult(0).getType(), reduce,
          b.getI64IntegerAttr(offset));
      m.reduce->getResult(0).replaceAllUsesWith(slice);
    }
    return reduce;
  }

  void bucketReductions(int64_t limit,
                        SmallPtrSetImpl<Operation *> &collectives) {
    SmallVector<StepReduction> reductions;
    for (Operation &op : step.getBody().front())
      if (auto r = matchReduction(op))
        reductions.push_back(*r);
    auto compatible = [](const StepReduction &a, const StepReduction &c) {
      return a.reduce->getName() == c.reduce->getName() &&
             bufferElementType(a.acc.getType()) ==
                 bufferElementType(c.acc.getType()) &&
             reductionOf(a.reduce) == reductionOf(c.reduce);
    };
    // Stage 0 moves the members end to end (padded once, at the bucket's
    // end); stage 1 each member's padded buffer.
    auto size = [&](const StepReduction &m) {
      return llvm::isa<AllReduceOp>(m.reduce)
                 ? m.numel()
                 : llvm::cast<FlatType>(m.acc.getType()).getSize();
    };
    auto moved = [&](int64_t n) { return roundUp(n, world); };
    for (auto &bucket : splitIntoBuckets<StepReduction>(reductions, limit, size,
                                                        moved, compatible)) {
      if (bucket.size() < 2)
        continue;
      // The members' results are read only after the last reduction (the
      // overflow check, the norm, the updates); a bucket is built there.
      if (!llvm::all_of(bucket, [&](const StepReduction &m) {
            return usedAfter(m.reduce->getResult(0), bucket.back().reduce);
          }))
        continue;
      bool end = llvm::any_of(bucket, [](const StepReduction &m) {
        return m.reduce->hasAttr(kReductionEndAttr);
      });
      Operation *reduce = llvm::isa<AllReduceOp>(bucket.back().reduce)
                              ? allReduceBucket(bucket)
                              : reduceScatterBucket(bucket);
      if (end)
        reduce->setAttr(kReductionEndAttr, b.getUnitAttr());
      for (const StepReduction &m : bucket)
        m.reduce->erase();
      collectives.insert(reduce);
    }
  }

  /// One all-gather for the bucket where the last member's gather was
  /// (after every member's update): this rank's updated slices end to end,
  /// gathered, and each member copied into its replica.
  Operation *gatherBucket(ArrayRef<ReplicaGather> members) {
    ReplicaGather last = members.back();
    b.setInsertionPoint(last.op);
    Type elem = last.shard().getElementType();
    SmallVector<Value> slices;
    SmallVector<Location> locs;
    int64_t shardSize = 0;
    for (const ReplicaGather &m : members) {
      slices.push_back(b.create<ReplicaSliceOp>(m.op.getLoc(), m.shard(),
                                                m.op.getParamAttr()));
      locs.push_back(m.op.getLoc());
      shardSize += m.shard().getSize();
    }
    Location loc = b.getFusedLoc(locs);
    auto shard = ShardType::get(b.getContext(), BufferKind::Params, elem,
                                shardSize, MemorySpace::Device);
    auto flat = FlatType::get(b.getContext(), BufferKind::Params, elem,
                              shardSize * world, world);
    Value sent = b.create<ConcatShardsOp>(loc, shard, slices);
    auto gather = b.create<AllGatherOp>(loc, flat, sent);
    // Every member in one op: one call (on a GPU, one launch).
    int64_t offset = 0;
    SmallVector<Attribute> params;
    SmallVector<int64_t> offsets;
    for (const ReplicaGather &m : members) {
      params.push_back(m.op.getParamAttr());
      offsets.push_back(offset);
      offset += m.shard().getSize();
    }
    b.create<UnpackReplicaOp>(loc, b.getArrayAttr(params), gather,
                              b.getI64ArrayAttr(offsets));
    for (const ReplicaGather &m : members)
      m.op.erase();
    return gather;
  }

  void bucketGathers(int64_t limit, int64_t aloneBytes,
                     SmallPtrSetImpl<Operation *> &collectives) {
    // A large replica's own gather writes into it in place; in a bucket it
    // would be copied out of the replica and back. On one rank every
    // replica's is in place and runs nothing (zeroc_rt_comm_*).
    auto alone = [&](GatherReplicaOp op) {
      auto shard = llvm::cast<ShardType>(op.getShard());
      return world == 1 ||
             (aloneBytes > 0 &&
              shard.getSize() * world * elementBytes(shard.getElementType()) >= aloneBytes);
    };
    SmallVector<ReplicaGather> gathers;
    step.walk([&](GatherReplicaOp op) {
      if (!alone(op))
        gathers.push_back({op, world});
    });
    auto compatible = [](const ReplicaGather &a, const ReplicaGather &c) {
      return a.op->getBlock() == c.op->getBlock() &&
             a.shard().getElementType() == c.shard().getElementType();
    };
    auto size = [](const ReplicaGather &m) {
      return m.shard().getSize() * m.world;
    };
    auto moved = [](int64_t n) { return n; };
    for (auto &bucket : splitIntoBuckets<ReplicaGather>(gathers, limit, size,
                                                        moved, compatible))
      if (bucket.size() > 1)
        collectives.insert(gatherBucket(bucket));
  }
};

} // namespace

void bucketStep(func::FuncOp step, int64_t world, int64_t reduceLimit,
                int64_t gatherLimit, int64_t aloneBytes,
                SmallPtrSetImpl<Operation *> &collectives) {
  StepBucketer bucketer{step, world, OpBuilder(step.getContext())};
  bucketer.bucketReductions(reduceLimit, collectives);
  bucketer.bucketGathers(gatherLimit, aloneBytes, collectives);
}

} // namespace zeroc::bucket
