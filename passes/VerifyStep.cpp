//===- VerifyStep.cpp - @train_step's invariants for the ZeRO stage -------===//
#include "zeroc/Passes/Passes.h"

#include "zeroc/Dialect/Graph/GraphOps.h"
#include "zeroc/Dialect/Zero/BufferPlanning.h"
#include "zeroc/Dialect/Zero/ZeroOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringSet.h"

#include <map>

namespace zeroc {
#define GEN_PASS_DEF_VERIFYSTEP
#include "zeroc/Passes/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc;

namespace {

struct ParamUses {
  zero::GradAccumulatorOp accumulator;
  Operation *update = nullptr;
  /// The gradient the update reads.
  Value grad;
  /// The replica refresh: a zero.gather_replica or, in a bucket, a
  /// zero.unpack_replica.
  Operation *gather = nullptr;
};

/// Stage 0 bucket: `grad` is a zero.view, at a member's offset, of the
/// all-reduce of a zero.pack whose input at that offset is `acc`.
bool isBucketedAllReduce(Value grad, Value acc) {
  auto view = grad.getDefiningOp<zero::ViewOp>();
  auto ar = view ? view.getBuffer().getDefiningOp<zero::AllReduceOp>()
                 : zero::AllReduceOp();
  auto pack = ar ? ar.getInput().getDefiningOp<zero::PackOp>() : zero::PackOp();
  if (!pack || view.getType() != acc.getType())
    return false;
  for (auto [input, offset] : llvm::zip(pack.getInputs(), pack.getOffsets()))
    if (input == acc &&
        llvm::cast<IntegerAttr>(offset).getInt() ==
            static_cast<int64_t>(view.getOffset()))
      return true;
  return false;
}

/// Stage 1 bucket: `grad` is a zero.shard_slice, at a member's offset, of
/// the reduce-scatter of a zero.pack_shards whose input there is a view
/// (offset 0) of `acc`.
bool isBucketedReduceScatter(Value grad, Value acc) {
  auto slice = grad.getDefiningOp<zero::ShardSliceOp>();
  auto rs = slice ? slice.getShard().getDefiningOp<zero::ReduceScatterOp>()
                  : zero::ReduceScatterOp();
  auto pack = rs ? rs.getBuffer().getDefiningOp<zero::PackShardsOp>()
                 : zero::PackShardsOp();
  if (!pack)
    return false;
  for (auto [input, offset] : llvm::zip(pack.getInputs(), pack.getOffsets())) {
    auto view = input.getDefiningOp<zero::ViewOp>();
    if (view && view.getBuffer() == acc && view.getOffset() == 0 &&
        llvm::cast<IntegerAttr>(offset).getInt() ==
            static_cast<int64_t>(slice.getOffset()))
      return true;
  }
  return false;
}

/// A bucketed replica refresh: `unpack` copies `param` out of the
/// all-gather of a zero.concat_shards whose input at `at` is this rank's
/// zero.replica_slice of the same parameter, of `shard` elements.
LogicalResult verifyUnpackedReplica(zero::UnpackReplicaOp unpack, StringRef param,
                                    int64_t at, int64_t shard) {
  auto gather = unpack.getBuffer().getDefiningOp<zero::AllGatherOp>();
  auto concat = gather ? gather.getShard().getDefiningOp<zero::ConcatShardsOp>()
                       : zero::ConcatShardsOp();
  if (!concat)
    return unpack.emitOpError(
        "unpacked buffer must be a zero.all_gather of zero.concat_shards");
  int64_t offset = 0;
  for (Value input : concat.getInputs()) {
    if (offset == at) {
      auto slice = input.getDefiningOp<zero::ReplicaSliceOp>();
      if (!slice || slice.getParam() != param || slice.getType().getSize() != shard)
        return unpack.emitOpError("offset ")
               << at << " of the bucket is not the " << shard
               << "-element zero.replica_slice of '" << param << "'";
      return success();
    }
    offset += llvm::cast<zero::ShardType>(input.getType()).getSize();
  }
  return unpack.emitOpError("offset ")
         << at << " (of '" << param << "') is not the start of a member of the bucket";
}

struct VerifyStepPass : zeroc::impl::VerifyStepBase<VerifyStepPass> {
  void runOnOperation() override {
    if (failed(verify(getOperation())))
      signalPassFailure();
  }

  LogicalResult verify(ModuleOp module) {
    auto fn = module.lookupSymbol<func::FuncOp>("train_step");
    if (!fn || fn.isExternal())
      return module.emitError("zero-verify-step: no @train_step (run zero-step-boundary)");
    auto stageAttr = module->getAttrOfType<IntegerAttr>("zero.stage");
    auto worldAttr = module->getAttrOfType<IntegerAttr>("zero.world_size");
    if (!stageAttr || !worldAttr)
      return module.emitError("zero-verify-step: module has no zero.stage and zero.world_size");
    const int64_t stage = stageAttr.getInt(), world = worldAttr.getInt();
    auto f64 = RankedTensorType::get({}, Float64Type::get(&getContext()));
    auto i1 = RankedTensorType::get({}, IntegerType::get(&getContext(), 1));
    if (fn.getFunctionType().getNumInputs() != 0 ||
        fn.getFunctionType().getResults() != ArrayRef<Type>{f64, i1, f64})
      return fn.emitOpError("@train_step must take nothing and return "
                            "(tensor<f64>, tensor<i1>, tensor<f64>)");

    SmallVector<zero::IfFiniteOp> guards;
    fn.walk([&](zero::IfFiniteOp g) { guards.push_back(g); });
    if (guards.size() != 1)
      return fn.emitOpError("@train_step must have one zero.if_finite, has ")
             << guards.size();
    zero::IfFiniteOp guard = guards.front();

    // Stage 0-1 accumulators @train_micro_step reduces in place (at once
    // or started) after its accumulation (zero-step-boundary's
    // reduce-in-backward).
    llvm::StringSet<> microStepReduced;
    if (auto micro = module.lookupSymbol<func::FuncOp>("train_micro_step"))
      micro.walk([&](Operation *op) {
        Value input;
        if (auto ar = llvm::dyn_cast<zero::AllReduceOp>(op))
          input = ar.getInput();
        else if (auto ar = llvm::dyn_cast<zero::AllReduceStartOp>(op))
          input = ar.getInput();
        else if (auto rs = llvm::dyn_cast<zero::ReduceScatterOp>(op); rs && rs.getInPlace())
          input = rs.getBuffer();
        else if (auto rs = llvm::dyn_cast<zero::ReduceScatterStartOp>(op);
                 rs && rs.getInPlace())
          input = rs.getBuffer();
        if (auto acc = input ? input.getDefiningOp<zero::GradAccumulatorOp>()
                             : zero::GradAccumulatorOp())
          microStepReduced.insert(acc.getParam());
      });

    llvm::StringMap<ParamUses> uses;
    WalkResult walk = fn.walk([&](Operation *op) -> WalkResult {
      StringRef param;
      if (auto acc = llvm::dyn_cast<zero::GradAccumulatorOp>(op)) {
        ParamUses &u = uses[acc.getParam()];
        if (u.accumulator)
          return acc.emitOpError("second accumulator read of '") << acc.getParam() << "'";
        u.accumulator = acc;
      } else if (llvm::isa<zero::AdamUpdateOp, zero::SgdUpdateOp>(op)) {
        auto ref = op->getAttrOfType<FlatSymbolRefAttr>("param");
        if (failed(addUpdate(uses, op, ref.getValue(), op->getOperand(0), guard)))
          return WalkResult::interrupt();
      } else if (auto adam = llvm::dyn_cast<zero::AdamUpdateMultiOp>(op)) {
        if (failed(addUpdates(uses, op, adam.getParams(), adam.getGrads(), guard)))
          return WalkResult::interrupt();
      } else if (auto sgd = llvm::dyn_cast<zero::SgdUpdateMultiOp>(op)) {
        if (failed(addUpdates(uses, op, sgd.getParams(), sgd.getGrads(), guard)))
          return WalkResult::interrupt();
      } else if (auto gather = llvm::dyn_cast<zero::GatherReplicaOp>(op)) {
        if (failed(addGather(uses, op, gather.getParamAttr(), -1, stage, world)))
          return WalkResult::interrupt();
      } else if (auto unpack = llvm::dyn_cast<zero::UnpackReplicaOp>(op)) {
        for (auto [ref, at] : llvm::zip(unpack.getParams(), unpack.getOffsets()))
          if (failed(addGather(uses, op, llvm::cast<FlatSymbolRefAttr>(ref),
                               llvm::cast<IntegerAttr>(at).getInt(), stage, world)))
            return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();

    for (auto p : module.getOps<graph::ParamOp>()) {
      auto it = uses.find(p.getSymName());
      if (!p.getTrainable()) {
        if (it != uses.end())
          return p.emitOpError("is frozen but @train_step reads or updates it");
        continue;
      }
      if (it == uses.end() || !it->second.accumulator || !it->second.update)
        return p.emitOpError("has no gradient read and update in @train_step");
      ParamUses &u = it->second;
      if (stage >= 1 && zero::keepsReplica(p, stage) && !u.gather)
        return p.emitOpError("is updated but its replica is never gathered");
      if (failed(verifyReduction(p, u, stage, world,
                                 microStepReduced.contains(p.getSymName()))))
        return failure();
    }
    return verifyCarries(module, uses);
  }

  /// The parameters a gather's shard operand reads, in order.
  static SmallVector<StringRef> sentParams(zero::AllGatherStartOp start) {
    SmallVector<StringRef> names;
    for (zero::ParamShardOp read : zero::paramShardsOf(start.getShard()))
      names.push_back(read.getParam());
    return names;
  }

  /// zero-overlap's gathers carried across the step boundary: each carry
  /// of @train_step has one carried start of the same index in
  /// @train_micro_step that gathers the same parameters into the same type,
  /// and follows, in the update block, the update of each parameter it
  /// sends.
  LogicalResult verifyCarries(ModuleOp module,
                              llvm::StringMap<ParamUses> &uses) {
    std::map<int64_t, zero::AllGatherStartOp> carries, carried;
    WalkResult walk = module.walk([&](zero::AllGatherStartOp start) -> WalkResult {
      auto fn = start->getParentOfType<func::FuncOp>();
      std::optional<int64_t> k = start.getCarryIndex();
      if (!k)
        return WalkResult::advance();
      bool isCarry = start.getCarry().has_value();
      StringRef expected = isCarry ? "train_step" : "train_micro_step";
      if (!fn || fn.getSymName() != expected)
        return start.emitOpError(isCarry ? "carry" : "carried start")
               << " must be in @" << expected;
      auto &map = isCarry ? carries : carried;
      if (!map.emplace(*k, start).second)
        return start.emitOpError("second ")
               << (isCarry ? "carry" : "carried start") << " of index " << *k;
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    for (auto &[k, carry] : carries) {
      auto it = carried.find(k);
      if (it == carried.end())
        return carry.emitOpError("carry ")
               << k << " has no carried start in @train_micro_step";
      zero::AllGatherStartOp taken = it->second;
      SmallVector<StringRef> sent = sentParams(carry);
      if (sent.empty() || sent != sentParams(taken) ||
          carry.getType() != taken.getType()) {
        InFlightDiagnostic d = carry.emitOpError("carry ")
                               << k << " does not gather what its carried start gathers";
        d.attachNote(taken.getLoc()) << "the carried start";
        return d;
      }
      for (StringRef name : sent) {
        Operation *update = uses.lookup(name).update;
        if (update && (update->getBlock() != carry->getBlock() ||
                       !update->isBeforeInBlock(carry)))
          return carry.emitOpError("carry ")
                 << k << " must follow the update of '" << name << "'";
      }
    }
    for (auto &[k, taken] : carried)
      if (!carries.count(k))
        return taken.emitOpError("carried start ")
               << k << " has no carry in @train_step";
    return success();
  }

  /// Records `op` as the replica refresh of `ref`: a zero.gather_replica,
  /// or a zero.unpack_replica reading it at `at` of its bucket.
  static LogicalResult addGather(llvm::StringMap<ParamUses> &uses, Operation *op,
                                 FlatSymbolRefAttr ref, int64_t at, int64_t stage,
                                 int64_t world) {
    auto p = SymbolTable::lookupNearestSymbolFrom<graph::ParamOp>(op, ref);
    if (stage == 0 || (p && !zero::keepsReplica(p, stage)))
      return op->emitOpError("only stages 1-2 and zero.persistent stage-3 "
                             "parameters gather replicas, this is stage ")
             << stage;
    ParamUses &u = uses[ref.getValue()];
    if (!u.update || u.gather)
      return op->emitOpError("must follow the one update of '") << ref.getValue() << "'";
    if (auto unpack = llvm::dyn_cast<zero::UnpackReplicaOp>(op);
        unpack && p &&
        failed(verifyUnpackedReplica(
            unpack, ref.getValue(), at,
            zero::shardElements(p.getType().getNumElements(), world))))
      return failure();
    u.gather = op;
    return success();
  }

  /// Records `op` as the one update of `param`, from `grad`.
  static LogicalResult addUpdate(llvm::StringMap<ParamUses> &uses, Operation *op,
                                 StringRef param, Value grad, zero::IfFiniteOp guard) {
    ParamUses &u = uses[param];
    if (u.update)
      return op->emitOpError("second update of '") << param << "'";
    if (op->getParentOp() != guard)
      return op->emitOpError("must be inside the step's zero.if_finite");
    u.update = op;
    u.grad = grad;
    return success();
  }

  /// A multi-tensor update's parameters, each with its gradient.
  static LogicalResult addUpdates(llvm::StringMap<ParamUses> &uses, Operation *op, ArrayAttr params,
                                  ValueRange grads, zero::IfFiniteOp guard) {
    for (auto [ref, grad] : llvm::zip(params, grads))
      if (failed(addUpdate(uses, op, llvm::cast<FlatSymbolRefAttr>(ref).getValue(), grad, guard)))
        return failure();
    return success();
  }

  /// The update reads the stage's reduced gradient.
  /// `reducedInMicroStep`: @train_micro_step reduces the accumulator in
  /// place (reduce-in-backward).
  LogicalResult verifyReduction(graph::ParamOp p, ParamUses &u, int64_t stage,
                                int64_t world, bool reducedInMicroStep) {
    Value acc = u.accumulator.getResult();
    Value grad = u.grad;
    int64_t shard = zero::shardElements(p.getType().getNumElements(), world);
    const char *expected = nullptr;
    if (stage == 0) {
      auto ar = grad.getDefiningOp<zero::AllReduceOp>();
      bool reducedHere = (ar && ar.getInput() == acc) || isBucketedAllReduce(grad, acc);
      bool reducedInBackward = grad == acc && reducedInMicroStep;
      if (!llvm::isa<RankedTensorType>(acc.getType()) ||
          !(reducedHere || reducedInBackward))
        expected = "the all-reduced full accumulator";
    } else if (stage == 1) {
      auto rs = grad.getDefiningOp<zero::ReduceScatterOp>();
      bool reducedHere = llvm::isa<zero::FlatType>(acc.getType()) &&
                         ((rs && rs.getBuffer() == acc) ||
                          isBucketedReduceScatter(grad, acc));
      // Reduced in place during backward: the shard is the accumulator's
      // first elements.
      bool reducedInBackward = grad == acc &&
                               llvm::isa<zero::ShardType>(acc.getType()) &&
                               reducedInMicroStep;
      if (!reducedHere && !reducedInBackward)
        expected = "the reduce-scattered padded accumulator";
    } else if (grad != acc) {
      expected = "the accumulated shard";
    }
    if (!expected)
      if (auto s = llvm::dyn_cast<zero::ShardType>(grad.getType());
          s && s.getSize() != shard)
        expected = "a shard of ceil(numel / world) elements";
    if (expected)
      return u.update->emitOpError("must update '")
             << p.getSymName() << "' from " << expected << " at stage " << stage;
    return success();
  }
};

} // namespace
