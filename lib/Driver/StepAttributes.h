//===- StepAttributes.h - ds_config to @train_step's attributes -*- C++ -*-===//
//
// The optimizer step's configuration as the zero attributes zero-step-boundary
// puts in the IR, written as the text its pass options take.
//
//===----------------------------------------------------------------------===//
#ifndef ZEROC_LIB_DRIVER_STEPATTRIBUTES_H
#define ZEROC_LIB_DRIVER_STEPATTRIBUTES_H

#include "zeroc/Support/TrainConfig.h"

#include "mlir/IR/MLIRContext.h"

#include <string>

namespace zeroc {

/// `#zero.adam<...>` or `#zero.sgd<...>` for the optimizer block.
std::string optimizerAttrText(mlir::MLIRContext &ctx, const TrainConfig &config);
/// `#zero.lr_schedule<...>` for the scheduler block.
std::string lrScheduleAttrText(mlir::MLIRContext &ctx, const TrainConfig &config);
/// `#zero.loss_scaler<...>` for the fp16 block's loss scaling.
std::string lossScalerAttrText(mlir::MLIRContext &ctx, const TrainConfig &config);

/// `#zero.monitor<...>` for steps_per_print, wall_clock_breakdown and
/// csv_monitor.
std::string monitorAttrText(mlir::MLIRContext &ctx, const TrainConfig &config);

} // namespace zeroc

#endif // ZEROC_LIB_DRIVER_STEPATTRIBUTES_H
