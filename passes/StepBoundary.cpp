//===- StepBoundary.cpp - the optimizer step as @train_step ---------------===//
//
// Builds the code that runs once per optimizer step, after the micro-steps:
// the stage's gradient reduction, the overflow check and loss-scaler update,
// the global norm and clipping factor, the scheduled hyperparameters, and the
// updates with the all-gathers of the replicas (stages 1-2, and stage 3's
// persistent parameters). Every ZeRO decision of
// the step is made here; see docs/RationaleZero.md, "The optimizer step".
//
//===----------------------------------------------------------------------===//
#include "zeroc/Passes/Passes.h"

#include "zeroc/Dialect/Graph/GraphOps.h"
#include "zeroc/Dialect/Zero/BufferPlanning.h"
#include "zeroc/Dialect/Zero/ZeroOps.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"

namespace zeroc {
#define GEN_PASS_DEF_STEPBOUNDARY
#include "zeroc/Passes/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc;

namespace {

/// Beta2 when OneCycle cycles Adam's momentum: DeepSpeed's OneCycle writes
/// (momentum, 0.99) into the optimizer's betas.
constexpr double kOneCycleBeta2 = 0.99;

struct Reduced {
  graph::ParamOp param;
  Value grad; ///< what the update reads
};

/// The parameters that @train_micro_step accumulates once, with a gradient
/// of the parameter's own element type: no second accumulation and no rows
/// (zero.grad_accumulate_rows) add to it, so with one micro-step and one
/// rank their accumulator only ever holds that gradient.
llvm::StringSet<> accumulatedOnce(ModuleOp module) {
  llvm::StringMap<int> accumulations;
  llvm::StringSet<> once;
  auto micro = module.lookupSymbol<func::FuncOp>("train_micro_step");
  micro.walk([&](Operation *op) {
    if (auto rows = llvm::dyn_cast<zero::GradAccumulateRowsOp>(op))
      accumulations[rows.getParam()] += 2;
    else if (auto acc = llvm::dyn_cast<zero::GradAccumulateOp>(op)) {
      auto param = module.lookupSymbol<graph::ParamOp>(acc.getParamAttr());
      const bool own = param && zero::bufferElementType(acc.getGrad().getType()) ==
                                    param.getType().getElementType();
      accumulations[acc.getParam()] += own ? 1 : 2;
    }
  });
  for (const auto &[param, count] : accumulations)
    if (count == 1)
      once.insert(param);
  return once;
}

struct StepBoundaryPass : zeroc::impl::StepBoundaryBase<StepBoundaryPass> {
  using Base::Base;

  /// Parses option `name`'s text as an attribute of type AttrT.
  template <typename AttrT>
  AttrT parseOption(const std::string &text, const char *name) {
    Attribute attr = parseAttribute(text, &getContext());
    auto typed = llvm::dyn_cast_or_null<AttrT>(attr);
    if (!typed)
      getOperation().emitError("zero-step-boundary: option ")
          << name << " '" << text << "' is not a valid " << AttrT::getMnemonic()
          << " attribute";
    return typed;
  }

  Value f64Constant(OpBuilder &b, Location loc, double v) {
    auto t = RankedTensorType::get({}, b.getF64Type());
    return b.create<graph::ConstantOp>(loc, t, DenseElementsAttr::get(t, v));
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto stageAttr = module->getAttrOfType<IntegerAttr>("zero.stage");
    auto worldAttr = module->getAttrOfType<IntegerAttr>("zero.world_size");
    if (!stageAttr || !worldAttr || !module.lookupSymbol<func::FuncOp>("train_micro_step")) {
      module.emitError("zero-step-boundary needs @train_micro_step, zero.stage "
                       "and zero.world_size (run zero-partition first)");
      return signalPassFailure();
    }
    if (module.lookupSymbol("train_step")) {
      module.emitError("zero-step-boundary: the module already has @train_step");
      return signalPassFailure();
    }
    const int64_t stage = stageAttr.getInt(), world = worldAttr.getInt();
    Attribute opt = parseAttribute(optimizer, &getContext());
    auto adam = llvm::dyn_cast_or_null<zero::AdamAttr>(opt);
    auto sgd = llvm::dyn_cast_or_null<zero::SgdAttr>(opt);
    if (!adam && !sgd) {
      module.emitError("zero-step-boundary: option optimizer '")
          << optimizer << "' is not a #zero.adam or #zero.sgd attribute";
      return signalPassFailure();
    }
    auto schedule = parseOption<zero::LrScheduleAttr>(lrSchedule, "lr-schedule");
    zero::LossScalerAttr scaler;
    if (!lossScaler.empty())
      scaler = parseOption<zero::LossScalerAttr>(lossScaler, "loss-scaler");
    if (!schedule || (!lossScaler.empty() && !scaler))
      return signalPassFailure();
    auto monitorAttr = parseOption<zero::MonitorAttr>(monitor, "monitor");
    if (!monitorAttr)
      return signalPassFailure();
    if (gradAccumSteps < 1) {
      module.emitError("zero-step-boundary: grad-accum-steps must be >= 1, got ")
          << static_cast<int64_t>(gradAccumSteps);
      return signalPassFailure();
    }
    if (!(gradientClipping >= 0.0)) {
      module.emitError("zero-step-boundary: gradient-clipping must be >= 0, got ")
          << gradientClipping;
      return signalPassFailure();
    }

    OpBuilder b(&getContext());
    Location loc = module.getLoc();
    b.setInsertionPointToEnd(module.getBody());
    auto f64 = RankedTensorType::get({}, b.getF64Type());
    auto i1 = RankedTensorType::get({}, b.getI1Type());
    auto i64 = RankedTensorType::get({}, b.getI64Type());
    auto fn = b.create<func::FuncOp>(
        loc, "train_step", b.getFunctionType({}, {f64, i1, f64}));
    fn->setAttr(zero::kMicroStepsAttr, b.getI64IntegerAttr(gradAccumSteps));
    fn->setAttr(zero::kMonitorAttr, monitorAttr);
    if (tf32)
      fn->setAttr(zero::kTf32Attr, b.getUnitAttr());
    b.setInsertionPointToStart(fn.addEntryBlock());

    // The scale this step's backward used (read before its update); 1
    // without a loss scaler.
    Value scale;
    if (!lossScaler.empty())
      scale = b.create<zero::LossScaleOp>(loc, f64);
    Value step = b.create<zero::StepCountOp>(loc, i64);
    if (!scale)
      scale = f64Constant(b, loc, 1.0);
    double baseLr = adam ? adam.getLr().convertToDouble() : sgd.getLr().convertToDouble();
    double baseMomentum =
        adam ? adam.getBeta1().convertToDouble() : sgd.getMomentum().convertToDouble();
    auto hyper = b.create<zero::LrScheduleOp>(
        loc, f64, f64, step, schedule, b.getF64FloatAttr(baseLr),
        b.getF64FloatAttr(baseMomentum));

    // Stages 0-1 with one micro-step may reduce during backward: each
    // accumulator is final after the micro-step's one accumulation.
    const bool inBackward = reduceInBackward && stage <= 1 && gradAccumSteps == 1;
    llvm::StringMap<zero::GradAccumulateOp> accumulation;
    if (inBackward)
      module.lookupSymbol<func::FuncOp>("train_micro_step").walk(
          [&](zero::GradAccumulateOp acc) { accumulation[acc.getParam()] = acc; });

    // f32 accumulators for 16-bit parameters, except where one would only
    // ever hold one 16-bit gradient exactly: one rank, one micro-step and
    // one accumulation (docs/RationaleZero.md, "Accumulators that hold one
    // gradient").
    const llvm::StringSet<> exactInTrainingDtype =
        world == 1 && gradAccumSteps == 1 ? accumulatedOnce(module) : llvm::StringSet<>();

    // 1. The reduction, parameter by parameter in declaration order.
    SmallVector<Reduced> reduced;
    SmallVector<Value> grads;
    Operation *lastReduction = nullptr;
    for (auto p : module.getOps<graph::ParamOp>()) {
      if (!p.getTrainable())
        continue;
      auto t = p.getType();
      Type gradElem = t.getElementType();
      if (p.getMaster() && fp32GradAccum && !exactInTrainingDtype.contains(p.getSymName()))
        gradElem = b.getF32Type();
      const int64_t shard = zero::shardElements(t.getNumElements(), world);
      const int64_t padded = shard * world;
      Value grad;
      auto shardType = zero::ShardType::get(&getContext(), zero::BufferKind::Grads,
                                            gradElem, shard, zero::MemorySpace::Device);
      if (inBackward) {
        zero::GradAccumulateOp accumulate = accumulation.lookup(p.getSymName());
        if (!accumulate) {
          p.emitOpError("has no gradient accumulation in @train_micro_step to reduce after");
          return signalPassFailure();
        }
        OpBuilder mb(accumulate);
        mb.setInsertionPointAfter(accumulate);
        if (stage == 0) {
          // In place: @train_step reads the all-reduced accumulator.
          auto type = RankedTensorType::get(t.getShape(), gradElem);
          Value acc = mb.create<zero::GradAccumulatorOp>(p.getLoc(), type,
                                                         p.getSymName());
          mb.create<zero::AllReduceOp>(p.getLoc(), type, acc,
                                       zero::ReduceKind::Sum, nullptr);
          grad = b.create<zero::GradAccumulatorOp>(p.getLoc(), type, p.getSymName());
        } else {
          // In place: this rank's reduced shard is the padded accumulator's
          // first elements, which @train_step reads as a shard.
          Value acc = mb.create<zero::GradAccumulatorOp>(
              p.getLoc(),
              zero::FlatType::get(&getContext(), zero::BufferKind::Grads,
                                  gradElem, padded, world),
              p.getSymName());
          mb.create<zero::ReduceScatterOp>(p.getLoc(), shardType, acc,
                                           zero::ReduceKind::Sum, nullptr,
                                           /*in_place=*/true);
          grad = b.create<zero::GradAccumulatorOp>(p.getLoc(), shardType,
                                                   p.getSymName());
        }
      } else if (stage == 0) {
        Value acc = b.create<zero::GradAccumulatorOp>(
            p.getLoc(), RankedTensorType::get(t.getShape(), gradElem),
            p.getSymName());
        auto ar = b.create<zero::AllReduceOp>(p.getLoc(), acc.getType(), acc,
                                              zero::ReduceKind::Sum, nullptr);
        grad = ar;
        lastReduction = ar;
      } else if (stage == 1) {
        Value acc = b.create<zero::GradAccumulatorOp>(
            p.getLoc(),
            zero::FlatType::get(&getContext(), zero::BufferKind::Grads, gradElem,
                                padded, world),
            p.getSymName());
        auto rs = b.create<zero::ReduceScatterOp>(
            p.getLoc(),
            zero::ShardType::get(&getContext(), zero::BufferKind::Grads, gradElem,
                                 shard, zero::MemorySpace::Device),
            acc, zero::ReduceKind::Sum, nullptr, /*in_place=*/false);
        grad = rs;
        lastReduction = rs;
      } else {
        grad = b.create<zero::GradAccumulatorOp>(
            p.getLoc(),
            zero::ShardType::get(&getContext(), zero::BufferKind::Grads, gradElem,
                                 shard, zero::MemorySpace::Device),
            p.getSymName());
      }
      reduced.push_back({p, grad});
      grads.push_back(grad);
    }
    if (lastReduction)
      lastReduction->setAttr(zero::kReductionEndAttr, b.getUnitAttr());

    // 2. Overflow: skip the step on any rank's inf/NaN.
    Value overflow;
    if (scaler) {
      Value local = b.create<zero::HasOverflowOp>(loc, i1, grads);
      overflow = b.create<zero::AllReduceOp>(loc, i1, local,
                                             zero::ReduceKind::Max, nullptr);
      b.create<zero::UpdateLossScaleOp>(loc, overflow, scaler);
    } else {
      overflow = b.create<graph::ConstantOp>(loc, i1, DenseElementsAttr::get(i1, false));
    }

    // 3. The global norm: stage 0's gradients are whole (and equal) on
    // every rank, the other stages' are shards.
    Value sumSquares = b.create<zero::SumSquaresOp>(loc, f64, grads);
    if (stage != 0)
      sumSquares = b.create<zero::AllReduceOp>(loc, f64, sumSquares,
                                               zero::ReduceKind::Sum, nullptr);
    auto clip = b.create<zero::ClipGradNormOp>(
        loc, f64, f64, sumSquares, scale, b.getI64IntegerAttr(world),
        b.getF64FloatAttr(gradientClipping));

    // 4. Adam's betas of this step.
    Value beta1, beta2;
    if (adam) {
      bool cycled = schedule.getKind() == zero::LrScheduleKind::OneCycle &&
                    schedule.getCycleMomentum();
      beta1 = cycled ? hyper.getMomentum()
                     : f64Constant(b, loc, adam.getBeta1().convertToDouble());
      beta2 = f64Constant(b, loc, cycled ? kOneCycleBeta2
                                         : adam.getBeta2().convertToDouble());
    }

    // 5. The update, unless the step overflowed.
    auto guard = b.create<zero::IfFiniteOp>(loc, overflow);
    b.createBlock(&guard.getBody());
    for (Reduced &r : reduced) {
      if (adam)
        b.create<zero::AdamUpdateOp>(r.param.getLoc(), r.param.getSymName(),
                                     r.grad, clip.getFactor(), hyper.getLr(),
                                     beta1, beta2, step, adam);
      else
        b.create<zero::SgdUpdateOp>(r.param.getLoc(), r.param.getSymName(),
                                    r.grad, clip.getFactor(), hyper.getLr(),
                                    step, sgd);
    }
    b.create<zero::AdvanceStepOp>(loc);
    // Stages 1-2, and stage 3's persistent parameters (zero-partition's
    // zero.persistent): every rank updated its slice of the replica.
    for (Reduced &r : reduced)
      if (stage >= 1 && zero::keepsReplica(r.param, stage)) {
        auto t = r.param.getType();
        b.create<zero::GatherReplicaOp>(
            r.param.getLoc(), FlatSymbolRefAttr::get(r.param.getSymNameAttr()),
            TypeAttr::get(zero::ShardType::get(
                &getContext(), zero::BufferKind::Params, t.getElementType(),
                zero::shardElements(t.getNumElements(), world),
                zero::MemorySpace::Device)));
      }
    b.setInsertionPointAfter(guard);
    b.create<func::ReturnOp>(loc, ValueRange{clip.getNorm(), overflow, hyper.getLr()});
  }
};

} // namespace
