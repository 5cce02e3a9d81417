//===- Bucket.cpp - zero-bucket: collectives merged into buckets ----------===//
//
// Groups zero-partition's per-parameter collectives of @train_micro_step
// into buckets: the gradient reduce-scatters of stages 2-3 by
// reduce-bucket-size, the stage-3 parameter all-gathers by
// prefetch-bucket-size. A bucket is laid out rank-major (zero.pack_shards,
// zero.concat_shards), so its collective gives every rank exactly the shards
// the members' own collectives would. The buckets of @train_step are
// BucketStep.cpp's.
//
//===----------------------------------------------------------------------===//
#include "zeroc/Passes/Passes.h"

#include "Bucket.h"

#include "zeroc/Dialect/Zero/BufferPlanning.h"
#include "zeroc/Dialect/Zero/ZeroOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <cmath>
#include <limits>

namespace zeroc {
#define GEN_PASS_DEF_BUCKET
#include "zeroc/Passes/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::zero;
using zeroc::bucket::splitIntoBuckets;

namespace {

/// One gradient's reduction as zero-partition emits it:
/// pack(grad) -> reduce_scatter -> grad_accumulate.
struct GradReduction {
  PackOp pack;
  ReduceScatterOp scatter;
  GradAccumulateOp accumulate;

  Value grad() { return pack.getInputs().front(); }
  FlatType flat() { return pack.getType(); }
};

/// One parameter gather as zero-partition emits it: param_shard ->
/// all_gather -> view (offset 0) ... release.
struct ParamGather {
  ParamShardOp shard;
  AllGatherOp gather;
  ViewOp view;
  ReleaseOp release;
  bool backward;

  FlatType flat() { return gather.getType(); }
};

/// The buffer holds exactly `numel` elements padded to a multiple of its
/// world size, so that its shard is the member shard a bucket lays out.
bool holdsExactly(FlatType flat, int64_t numel) {
  return flat.getShardSize() == shardElements(numel, flat.getWorld());
}

std::optional<GradReduction> matchGradReduction(ReduceScatterOp scatter) {
  auto pack = scatter.getBuffer().getDefiningOp<PackOp>();
  if (!pack || !pack->hasOneUse() || pack.getInputs().size() != 1 ||
      llvm::cast<IntegerAttr>(pack.getOffsets()[0]).getInt() != 0 ||
      pack->getBlock() != scatter->getBlock())
    return std::nullopt;
  if (scatter->hasAttr(kBucketAttr) || !scatter->hasOneUse() ||
      pack.getType().getKind() != BufferKind::Grads)
    return std::nullopt;
  auto accumulate = llvm::dyn_cast<GradAccumulateOp>(*scatter->user_begin());
  auto tensor = llvm::cast<RankedTensorType>(pack.getInputs()[0].getType());
  if (!accumulate || !holdsExactly(pack.getType(), tensor.getNumElements()))
    return std::nullopt;
  return GradReduction{pack, scatter, accumulate};
}

std::optional<ParamGather> matchParamGather(AllGatherOp gather,
                                            Operation *forwardEnd) {
  auto shard = gather.getShard().getDefiningOp<ParamShardOp>();
  if (!shard || gather->hasAttr(kBucketAttr) ||
      gather.getType().getKind() != BufferKind::Params)
    return std::nullopt;
  ViewOp view;
  ReleaseOp release;
  for (Operation *user : gather->getUsers()) {
    if (auto v = llvm::dyn_cast<ViewOp>(user); v && !view && v.getOffset() == 0)
      view = v;
    else if (auto r = llvm::dyn_cast<ReleaseOp>(user); r && !release)
      release = r;
    else
      return std::nullopt;
  }
  if (!view || !release ||
      !holdsExactly(gather.getType(), view.getType().getNumElements()))
    return std::nullopt;
  bool backward = forwardEnd && forwardEnd->isBeforeInBlock(gather);
  return ParamGather{shard, gather, view, release, backward};
}

struct BucketPass : zeroc::impl::BucketBase<BucketPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto [name, size] :
         {std::pair{"reduce-bucket-size", int64_t(reduceBucketSize)},
          std::pair{"prefetch-bucket-size", int64_t(prefetchBucketSize)},
          std::pair{"allgather-bucket-size", int64_t(allgatherBucketSize)}})
      if (size < 0) {
        module.emitError("zero-bucket: ")
            << name << " must be >= 0, got " << size;
        return signalPassFailure();
      }
    for (auto [name, value] : {std::pair{"comm-alpha-us", double(commAlphaUs)},
                               std::pair{"comm-gbps", double(commGbps)}})
      if (!(value > 0.0) || !std::isfinite(value)) {
        module.emitError("zero-bucket: ")
            << name << " must be a positive number, got " << value;
        return signalPassFailure();
      }
    auto fn = module.lookupSymbol<func::FuncOp>("train_micro_step");
    if (!fn || fn.isExternal()) {
      module.emitError(
          "zero-bucket needs @train_micro_step (run zero-partition first)");
      return signalPassFailure();
    }
    Block &block = fn.getBody().front();
    SmallPtrSet<Operation *, 16> collectives;
    bucketGathers(block, collectives);
    bucketGradients(block, collectives);
    numberBuckets(fn, collectives);
    // The optimizer step's reductions and replica gathers (DeepSpeed's
    // reduce_bucket_size at stages 0-1 and allgather_bucket_size).
    auto step = module.lookupSymbol<func::FuncOp>("train_step");
    auto world = module->getAttrOfType<IntegerAttr>("zero.world_size");
    if (step && !step.isExternal() && world) {
      SmallPtrSet<Operation *, 16> stepCollectives;
      // A replica at least this large is gathered on its own, in place:
      // a bucket would copy it twice for fixed costs it barely has.
      zeroc::CommCostModel model{commAlphaUs, commGbps};
      int64_t alone = model.efficientBytes(world.getInt(), zeroc::kOverlapFixedShare);
      zeroc::bucket::bucketStep(step, world.getInt(), reduceBucketSize,
                                allgatherBucketSize, alone, stepCollectives);
      numberBuckets(step, stepCollectives);
    }
  }

  /// Numbers the buckets of `fn` in program order, nested ops included
  /// (earlier runs' buckets too).
  void numberBuckets(func::FuncOp fn,
                     const SmallPtrSetImpl<Operation *> &collectives) {
    OpBuilder b(&getContext());
    int64_t index = 0;
    fn.getBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (collectives.contains(op) || op->hasAttr(kBucketAttr))
        op->setAttr(kBucketAttr, b.getI64IntegerAttr(index++));
    });
  }

  void bucketGradients(Block &block,
                       SmallPtrSetImpl<Operation *> &collectives) {
    SmallVector<GradReduction> reductions;
    for (auto scatter : block.getOps<ReduceScatterOp>())
      if (auto r = matchGradReduction(scatter))
        reductions.push_back(*r);
    auto compatible = [](GradReduction a, GradReduction b) {
      return a.flat().getElementType() == b.flat().getElementType() &&
             a.flat().getWorld() == b.flat().getWorld() &&
             a.scatter.getReduction() == b.scatter.getReduction() &&
             a.scatter.getScaleAttr() == b.scatter.getScaleAttr();
    };
    // overlap_comm: a bucket closes once its reduction is worth starting
    // on its own (the cost model).
    zeroc::CommCostModel model{commAlphaUs, commGbps};
    auto closeAt = [&](GradReduction m) -> int64_t {
      FlatType flat = m.flat();
      int64_t bytes =
          model.efficientBytes(flat.getWorld(), zeroc::kOverlapFixedShare);
      int64_t elem = elementBytes(flat.getElementType());
      return (bytes + elem - 1) / elem;
    };
    auto size = [](GradReduction m) { return m.flat().getSize(); };
    auto moved = [](int64_t n) { return n; };
    for (auto &bucket : splitIntoBuckets<GradReduction>(
             reductions, reduceBucketSize, size, moved, compatible,
             overlap ? llvm::function_ref<int64_t(GradReduction)>(closeAt)
                     : nullptr))
      if (bucket.size() > 1)
        collectives.insert(reduceBucket(bucket));
  }

  /// One reduce-scatter for the bucket where the last member's was, then
  /// each member's accumulation of its slice of the reduced shard.
  Operation *reduceBucket(ArrayRef<GradReduction> members) {
    GradReduction last = members.back();
    FlatType like = last.flat();
    SmallVector<Value> grads;
    SmallVector<int64_t> offsets;
    SmallVector<Location> locs;
    int64_t shardSize = 0;
    for (GradReduction m : members) {
      grads.push_back(m.grad());
      offsets.push_back(shardSize);
      locs.push_back(m.scatter.getLoc());
      shardSize += m.flat().getShardSize();
    }
    MLIRContext *ctx = &getContext();
    OpBuilder b(last.pack);
    Location loc = b.getFusedLoc(locs);
    auto flatType = FlatType::get(ctx, BufferKind::Grads, like.getElementType(),
                                  shardSize * like.getWorld(), like.getWorld());
    auto shardType =
        ShardType::get(ctx, BufferKind::Grads, like.getElementType(), shardSize,
                       MemorySpace::Device);
    Value bucket = b.create<PackShardsOp>(loc, flatType, grads,
                                          b.getI64ArrayAttr(offsets));
    auto scatter = b.create<ReduceScatterOp>(loc, shardType, bucket,
                                             last.scatter.getReductionAttr(),
                                             last.scatter.getScaleAttr(),
                                             /*in_place=*/UnitAttr());
    for (auto [i, offset] : llvm::enumerate(offsets)) {
      GradReduction m = members[i];
      Value slice =
          b.create<ShardSliceOp>(m.scatter.getLoc(), m.scatter.getType(),
                                 scatter, b.getI64IntegerAttr(offset));
      b.create<GradAccumulateOp>(m.accumulate.getLoc(),
                                 m.accumulate.getParamAttr(), slice,
                                 /*in_place=*/UnitAttr());
    }
    for (GradReduction m : members) {
      m.accumulate.erase();
      m.scatter.erase();
      m.pack.erase();
    }
    return scatter;
  }

  void bucketGathers(Block &block, SmallPtrSetImpl<Operation *> &collectives) {
    Operation *forwardEnd = nullptr;
    for (Operation &op : block)
      if (op.hasAttr(kForwardEndAttr))
        forwardEnd = &op;
    // On one rank a parameter's gather moves nothing: zero-plan-buffers
    // makes it in place, a view of the shard, where a bucket would copy the
    // shards in and the parameters out.
    SmallVector<ParamGather> gathers;
    for (auto gather : block.getOps<AllGatherOp>())
      if (auto g = matchParamGather(gather, forwardEnd); g && g->flat().getWorld() > 1)
        gathers.push_back(*g);
    auto compatible = [](ParamGather a, ParamGather b) {
      return a.flat().getElementType() == b.flat().getElementType() &&
             a.flat().getWorld() == b.flat().getWorld() &&
             a.backward == b.backward;
    };
    auto size = [](ParamGather m) { return m.flat().getSize(); };
    auto moved = [](int64_t n) { return n; };
    for (auto &bucket : splitIntoBuckets<ParamGather>(
             gathers, prefetchBucketSize, size, moved, compatible))
      if (bucket.size() > 1)
        collectives.insert(gatherBucket(bucket));
  }

  /// One all-gather for the bucket where the first member's was (before the
  /// first use of any member), a copy of each member out of it, and its
  /// release after the copies.
  Operation *gatherBucket(ArrayRef<ParamGather> members) {
    ParamGather first = members.front();
    FlatType like = first.flat();
    SmallVector<Value> shards;
    SmallVector<Location> locs;
    int64_t shardSize = 0;
    for (ParamGather m : members) {
      // A later member's shard read moves up to the bucket's gather; the
      // shards are not written inside the micro-step.
      if (first.gather->isBeforeInBlock(m.shard))
        m.shard->moveBefore(first.gather);
      shards.push_back(m.shard);
      locs.push_back(m.gather.getLoc());
      shardSize += m.flat().getShardSize();
    }
    MLIRContext *ctx = &getContext();
    OpBuilder b(first.gather);
    Location loc = b.getFusedLoc(locs);
    auto shardType =
        ShardType::get(ctx, BufferKind::Params, like.getElementType(),
                       shardSize, MemorySpace::Device);
    auto flatType =
        FlatType::get(ctx, BufferKind::Params, like.getElementType(),
                      shardSize * like.getWorld(), like.getWorld());
    Value shard = b.create<ConcatShardsOp>(loc, shardType, shards);
    auto gather = b.create<AllGatherOp>(loc, flatType, shard);
    // Every member in one op: one call (on a GPU, one launch).
    int64_t offset = 0;
    SmallVector<Type> types;
    SmallVector<int64_t> offsets;
    SmallVector<Location> memberLocs;
    for (ParamGather m : members) {
      types.push_back(m.view.getType());
      offsets.push_back(offset);
      memberLocs.push_back(m.view.getLoc());
      offset += m.flat().getShardSize();
    }
    auto unpack = b.create<UnpackShardsOp>(b.getFusedLoc(memberLocs), types, gather,
                                           b.getI64ArrayAttr(offsets));
    for (auto [i, m] : llvm::enumerate(members)) {
      ViewOp view = m.view;
      view.replaceAllUsesWith(unpack.getResult(i));
    }
    b.create<ReleaseOp>(loc, gather);
    for (ParamGather m : members) {
      m.release.erase();
      m.view.erase();
      m.gather.erase();
    }
    return gather;
  }
};

} // namespace
