//===- VerifyPartition.cpp - the ZeRO stage's invariants ------------------===//
#include "zeroc/Passes/Passes.h"

#include "zeroc/Dialect/Graph/GraphOps.h"
#include "zeroc/Dialect/Zero/BufferPlanning.h"
#include "zeroc/Dialect/Zero/ZeroOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

namespace zeroc {
#define GEN_PASS_DEF_VERIFYPARTITION
#include "zeroc/Passes/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc;

namespace {

struct VerifyPartitionPass
    : zeroc::impl::VerifyPartitionBase<VerifyPartitionPass> {
  void runOnOperation() override {
    if (failed(verify(getOperation())))
      signalPassFailure();
  }

  /// The buffer a reduce-scatter reduced into `shard`: a zero.reduce_scatter,
  /// or the zero.wait of a zero.reduce_scatter_start; null otherwise.
  static Value reducedBuffer(Value shard) {
    if (auto rs = shard.getDefiningOp<zero::ReduceScatterOp>())
      return rs.getBuffer();
    if (auto wait = shard.getDefiningOp<zero::WaitOp>())
      if (auto start = wait.getToken().getDefiningOp<zero::ReduceScatterStartOp>())
        return start.getBuffer();
    return {};
  }

  /// Stages 2-3: the accumulated shard is a gradient reduce-scatter's
  /// result or, for a bucket, the slice of it that holds exactly one
  /// member's shard of a tensor of the parameter's `numel` elements, a
  /// slice no other accumulation takes (`taken`: bucket and offset).
  static LogicalResult
  verifyReducedShard(zero::GradAccumulateOp acc, int64_t numel,
                     llvm::DenseSet<std::pair<Operation *, int64_t>> &taken) {
    Value grad = acc.getGrad();
    if (reducedBuffer(grad))
      return success();
    auto slice = grad.getDefiningOp<zero::ShardSliceOp>();
    Value reduced = slice ? reducedBuffer(slice.getShard()) : Value();
    if (!reduced)
      return acc.emitOpError(
          "accumulated shard must come from zero.reduce_scatter");
    Operation *scatter = slice.getShard().getDefiningOp();
    auto bucket = reduced.getDefiningOp<zero::PackShardsOp>();
    if (!bucket)
      return acc.emitOpError("accumulated slice must be of a reduce-scattered "
                             "zero.pack_shards bucket");
    for (auto [input, offset] :
         llvm::zip(bucket.getInputs(), bucket.getOffsets()))
      if (llvm::cast<IntegerAttr>(offset).getInt() ==
              static_cast<int64_t>(slice.getOffset()) &&
          llvm::cast<RankedTensorType>(input.getType()).getNumElements() ==
              numel &&
          slice.getType().getSize() ==
              zero::shardElements(numel, bucket.getType().getWorld())) {
        if (!taken.insert({scatter, slice.getOffset()}).second)
          return acc.emitOpError("accumulates bucket member at offset ")
                 << slice.getOffset() << " a second time";
        return success();
      }
    return acc.emitOpError("accumulated slice [")
           << slice.getOffset() << ", "
           << slice.getOffset() + slice.getType().getSize()
           << ") is not the shard of a " << numel
           << "-element member of its bucket";
  }

  /// Stage 3: a parameter copied out of a bucket comes from the bucket's
  /// gather, at the offset where zero.concat_shards put the shard of a
  /// parameter of its type.
  static LogicalResult verifyUnpackedParam(zero::UnpackShardsOp unpack) {
    // The gathered bucket: a zero.all_gather's, or the zero.wait of a
    // zero.all_gather_start's (zero-overlap).
    Value sent;
    int64_t world = 0;
    if (auto gather = unpack.getBuffer().getDefiningOp<zero::AllGatherOp>()) {
      sent = gather.getShard();
      world = gather.getType().getWorld();
    } else if (auto wait = unpack.getBuffer().getDefiningOp<zero::WaitOp>()) {
      if (auto start = wait.getToken().getDefiningOp<zero::AllGatherStartOp>()) {
        sent = start.getShard();
        world = llvm::cast<zero::FlatType>(wait.getType()).getWorld();
      }
    }
    auto concat = sent ? sent.getDefiningOp<zero::ConcatShardsOp>()
                       : zero::ConcatShardsOp();
    if (!concat)
      return unpack.emitOpError(
          "unpacked buffer must be a zero.all_gather of zero.concat_shards");
    for (auto [i, result, offsetAttr] :
         llvm::enumerate(unpack.getResults(), unpack.getOffsets()))
      if (failed(verifyUnpackedMember(unpack, i, result,
                                      llvm::cast<IntegerAttr>(offsetAttr).getInt(),
                                      concat, world)))
        return failure();
    return success();
  }

  /// Result `i` of `unpack`, at `at`: the shard zero.concat_shards put
  /// there is a zero.param_shard of a parameter of the result's type.
  static LogicalResult verifyUnpackedMember(zero::UnpackShardsOp unpack, size_t i,
                                            Value result, int64_t at,
                                            zero::ConcatShardsOp concat, int64_t world) {
    auto type = llvm::cast<RankedTensorType>(result.getType());
    int64_t offset = 0, numel = type.getNumElements();
    for (Value input : concat.getInputs()) {
      auto shard = llvm::cast<zero::ShardType>(input.getType());
      if (offset == at && shard.getSize() == zero::shardElements(numel, world)) {
        auto read = input.getDefiningOp<zero::ParamShardOp>();
        auto param = read
                         ? SymbolTable::lookupNearestSymbolFrom<graph::ParamOp>(
                               read, read.getParamAttr())
                         : graph::ParamOp();
        if (!param || param.getType() != type)
          return unpack.emitOpError("unpacked shard ")
                 << i << " is not a zero.param_shard of a parameter of type " << type;
        return success();
      }
      offset += shard.getSize();
    }
    return unpack.emitOpError("offset ")
           << at << " (result " << i << ") is not the start of a "
           << zero::shardElements(numel, world)
           << "-element shard of the gathered bucket";
  }

  LogicalResult verify(ModuleOp module) {
    auto stageAttr = module->getAttrOfType<IntegerAttr>("zero.stage");
    auto worldAttr = module->getAttrOfType<IntegerAttr>("zero.world_size");
    if (!stageAttr || !worldAttr)
      return module.emitError("module has no zero.stage and zero.world_size");
    int64_t stage = stageAttr.getInt(), world = worldAttr.getInt();
    auto fn = module.lookupSymbol<func::FuncOp>("train_micro_step");
    if (!fn || fn.isExternal())
      return module.emitError("module has no func.func @train_micro_step");
    if (fn.getNumResults() != 1 ||
        llvm::cast<RankedTensorType>(fn.getResultTypes()[0]).getRank() != 0)
      return fn.emitOpError("must return exactly the scalar micro-batch loss");

    llvm::StringMap<graph::ParamOp> trainable;
    for (auto p : module.getOps<graph::ParamOp>()) {
      if (p->hasAttr(zero::kPersistentAttr) && stage != 3)
        return p.emitOpError("is zero.persistent at stage ")
               << stage << "; only stage 3 has persistent parameters";
      if (p->hasAttr(zero::kPersistentAttr) &&
          !llvm::isa<UnitAttr>(p->getAttr(zero::kPersistentAttr)))
        return p.emitOpError("zero.persistent must be a unit attribute");
      if (p.getTrainable())
        trainable[p.getSymName()] = p;
    }
    llvm::StringMap<int> accumulated, rowAccumulated;
    llvm::DenseSet<std::pair<Operation *, int64_t>> takenSlices;
    llvm::StringSet<> stored;

    WalkResult walk = fn.walk([&](Operation *op) -> WalkResult {
      if (auto ld = llvm::dyn_cast<graph::LoadParamOp>(op))
        return op->emitOpError("reads parameter @")
               << ld.getParam() << " without the ZeRO state ops";
      if (auto ld = llvm::dyn_cast<graph::LoadBufferOp>(op))
        return op->emitOpError("reads buffer @")
               << ld.getBuffer() << " without the ZeRO state ops";
      if (auto st = llvm::dyn_cast<zero::BufferStoreOp>(op)) {
        if (!stored.insert(st.getBuffer()).second)
          return op->emitOpError("stores buffer @")
                 << st.getBuffer() << " a second time in one micro-step";
        for (Operation *next = op->getNextNode(); next; next = next->getNextNode())
          if (!llvm::isa<zero::BufferStoreOp, func::ReturnOp>(next)) {
            InFlightDiagnostic diag =
                op->emitOpError("must follow every other op of the micro-step");
            diag.attachNote(next->getLoc()) << "followed by this op";
            return diag;
          }
      }
      if (auto rep = llvm::dyn_cast<zero::ParamReplicaOp>(op)) {
        auto p = SymbolTable::lookupNearestSymbolFrom<graph::ParamOp>(
            rep, rep.getParamAttr());
        if (stage == 3 && p && !p->hasAttr(zero::kPersistentAttr))
          return op->emitOpError(
              "stage 3 keeps replicas of zero.persistent parameters only");
      }
      if (auto sh = llvm::dyn_cast<zero::ParamShardOp>(op)) {
        if (stage != 3)
          return op->emitOpError("only stage 3 partitions parameters");
        auto p = SymbolTable::lookupNearestSymbolFrom<graph::ParamOp>(
            sh, sh.getParamAttr());
        if (p && p->hasAttr(zero::kPersistentAttr))
          return op->emitOpError("reads a shard of @")
                 << sh.getParam()
                 << ", which is zero.persistent (whole on every rank)";
      }
      SmallVector<Type> types(op->getOperandTypes());
      llvm::append_range(types, op->getResultTypes());
      for (Type t : types)
        if (auto flat = llvm::dyn_cast<zero::FlatType>(t))
          if (flat.getWorld() != world)
            return op->emitOpError("flat buffer world size ")
                   << flat.getWorld() << " differs from the module's " << world;
      if (auto acc = llvm::dyn_cast<zero::GradAccumulateOp>(op)) {
        ++accumulated[acc.getParam()];
        bool isShard = llvm::isa<zero::ShardType>(acc.getGrad().getType());
        if (isShard != (stage >= 2))
          return op->emitOpError(stage >= 2 ? "stages 2-3 accumulate reduce-scattered shards"
                                            : "stages 0-1 accumulate full gradients");
        if (isShard) {
          auto shard = llvm::cast<zero::ShardType>(acc.getGrad().getType());
          int64_t numel = trainable.lookup(acc.getParam()).getType().getNumElements();
          if (shard.getSize() * world < numel || shard.getSize() * world >= numel + world)
            return op->emitOpError("gradient shard of ")
                   << shard.getSize() << " elements does not partition "
                   << numel << " elements over " << world << " ranks";
          if (failed(verifyReducedShard(acc, numel, takenSlices)))
            return failure();
        }
      }
      if (auto rows = llvm::dyn_cast<zero::GradAccumulateRowsOp>(op)) {
        if (stage < 2)
          return op->emitOpError("only stages 2-3 accumulate gradient rows");
        if (rowAccumulated[rows.getParam()]++)
          return op->emitOpError("second row accumulation of @") << rows.getParam();
      }
      if (auto unpack = llvm::dyn_cast<zero::UnpackShardsOp>(op))
        if (failed(verifyUnpackedParam(unpack)))
          return failure();
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    if (stage == 3) {
      auto released = [](Value v) {
        return llvm::any_of(v.getUsers(), [](Operation *u) {
          return llvm::isa<zero::ReleaseOp>(u);
        });
      };
      for (auto gather : fn.getOps<zero::AllGatherOp>())
        if (!released(gather))
          return gather.emitOpError("gathered parameter buffer is never released");
      for (auto wait : fn.getOps<zero::WaitOp>())
        if (llvm::isa<zero::FlatType>(wait.getType()) && !released(wait))
          return wait.emitOpError("gathered parameter buffer is never released");
    }
    // zero-overlap's live-parameter limit: a prefetched gather (one not
    // waited for right after its start) keeps at most that many gathered
    // elements alive, its own included.
    if (auto limit = fn->getAttrOfType<IntegerAttr>(zero::kMaxLiveParametersAttr))
      for (auto start : fn.getOps<zero::AllGatherStartOp>()) {
        Operation *next = start->getNextNode();
        if (next && llvm::isa<zero::WaitOp>(next))
          continue;
        int64_t live = zero::gatheredElementsAt(start->getBlock(), start).live;
        if (live > limit.getInt())
          return start.emitOpError("prefetched gather keeps ")
                 << live << " gathered parameter elements alive, more than "
                 << "zero.max_live_parameters = " << limit.getInt();
      }
    // One accumulation of the gradient, or of its rows and at most one of
    // a dense part (zero.grad_accumulate_rows).
    for (auto &[name, param] : trainable)
      if (accumulated.lookup(name) != 1 &&
          !(rowAccumulated.lookup(name) == 1 && accumulated.lookup(name) == 0))
        return fn.emitOpError("parameter @")
               << name << " has " << accumulated.lookup(name)
               << " gradient accumulations, expected 1";
    return success();
  }
};

} // namespace
