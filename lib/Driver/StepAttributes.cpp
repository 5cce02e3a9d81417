//===- StepAttributes.cpp - ds_config to @train_step's attributes ---------===//
#include "StepAttributes.h"

#include "zeroc/Dialect/Zero/ZeroTypes.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace zeroc {
namespace {

std::string text(Attribute attr) {
  std::string s;
  llvm::raw_string_ostream os(s);
  attr.print(os);
  return s;
}

APFloat f(double v) { return APFloat(v); }

zero::LrScheduleKind kindOf(TrainConfig::Schedule s) {
  switch (s) {
  case TrainConfig::Schedule::Constant: return zero::LrScheduleKind::Constant;
  case TrainConfig::Schedule::WarmupLR: return zero::LrScheduleKind::WarmupLR;
  case TrainConfig::Schedule::WarmupDecayLR: return zero::LrScheduleKind::WarmupDecayLR;
  case TrainConfig::Schedule::WarmupCosineLR: return zero::LrScheduleKind::WarmupCosineLR;
  case TrainConfig::Schedule::OneCycle: return zero::LrScheduleKind::OneCycle;
  case TrainConfig::Schedule::LRRangeTest: return zero::LrScheduleKind::LRRangeTest;
  }
  return zero::LrScheduleKind::Constant;
}

} // namespace

std::string optimizerAttrText(MLIRContext &ctx, const TrainConfig &c) {
  ctx.getOrLoadDialect<zero::ZeroDialect>();
  if (c.optimizer == TrainConfig::Optimizer::SGD)
    return text(zero::SgdAttr::get(&ctx, f(c.lr), f(c.momentum), f(c.dampening),
                                   f(c.weightDecay), c.nesterov));
  return text(zero::AdamAttr::get(&ctx, f(c.lr), f(c.beta1), f(c.beta2), f(c.eps),
                                  f(c.weightDecay), c.adamWMode, c.biasCorrection));
}

std::string lrScheduleAttrText(MLIRContext &ctx, const TrainConfig &c) {
  ctx.getOrLoadDialect<zero::ZeroDialect>();
  return text(zero::LrScheduleAttr::get(
      &ctx, kindOf(c.schedule), f(c.warmupMinLr), f(c.warmupMaxLr),
      c.warmupNumSteps, c.warmupLog, c.totalNumSteps, f(c.warmupMinRatio),
      f(c.cosMinRatio), f(c.cycleMinLr), f(c.cycleMaxLr), f(c.decayLrRate),
      c.cycleFirstStepSize, c.cycleSecondStepSize, c.decayStepSize,
      c.cycleMomentum, f(c.cycleMinMom), f(c.cycleMaxMom), f(c.decayMomRate),
      f(c.rangeMinLr), f(c.rangeStepRate), c.rangeStepSize, c.rangeStaircase));
}

std::string lossScalerAttrText(MLIRContext &ctx, const TrainConfig &c) {
  ctx.getOrLoadDialect<zero::ZeroDialect>();
  double initialScale = 1.0; // 2^initial_scale_power, exactly
  for (int64_t i = 0; i < c.initialScalePower; ++i)
    initialScale *= 2.0;
  return text(zero::LossScalerAttr::get(
      &ctx, f(c.staticLossScale), f(initialScale), c.lossScaleWindow,
      c.hysteresis, c.consecutiveHysteresis, f(c.minLossScale), f(2.0)));
}

std::string monitorAttrText(MLIRContext &ctx, const TrainConfig &c) {
  ctx.getOrLoadDialect<zero::ZeroDialect>();
  return text(zero::MonitorAttr::get(&ctx, c.stepsPerPrint, c.wallClockBreakdown,
                                     c.csvMonitor, c.csvOutputPath, c.csvJobName));
}

} // namespace zeroc
