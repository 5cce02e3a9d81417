//===- CpuEmitter.h - @train_micro_step to C++ for the CPU runtime -*- C++ -*-===//
#ifndef ZEROC_EMIT_CPUEMITTER_H
#define ZEROC_EMIT_CPUEMITTER_H

#include "zeroc/Emit/ModelBlob.h"
#include "zeroc/Support/TrainConfig.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace zeroc {

struct EmittedProgram {
  std::string source;    ///< train.cpp
  ModelBlob blob;        ///< model.bin: initial parameter values, constants
  int64_t arenaBytes = 0;
};

/// Emits the C++ program for a module that went through zero-partition and
/// zero-plan-buffers: its @train_micro_step becomes the engine's micro-step
/// (one runtime kernel call per graph op, one communicator or engine call
/// per zero op, every tensor at its planned arena offset), and the program
/// table carries the parameters, inputs and `config`.
/// Fails with a diagnostic on an op it cannot emit.
mlir::LogicalResult emitCpuProgram(mlir::ModuleOp module,
                                   const TrainConfig &config,
                                   const std::string &recompileHint,
                                   EmittedProgram &out);

/// The element type the runtime accumulates `param`'s gradients in: f32 for
/// a parameter with a master copy when config.gradAccumFp32, else the
/// parameter's own type. plan.json counts the gradient bytes with it.
mlir::Type gradAccumulatorType(mlir::Operation *param, const TrainConfig &config);

} // namespace zeroc

#endif // ZEROC_EMIT_CPUEMITTER_H
