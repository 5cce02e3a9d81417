//===- CpuEmitter.h - @train_micro_step to C++ for the CPU runtime -*- C++ -*-===//
#ifndef ZEROC_EMIT_CPUEMITTER_H
#define ZEROC_EMIT_CPUEMITTER_H

#include "zeroc/Emit/EmittedProgram.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace zeroc {

/// Emits the C++ program for a module that went through the train pipeline
/// (zero-partition, zero-step-boundary, zero-plan-buffers): its
/// @train_micro_step becomes the engine's micro-step (one runtime kernel call
/// per graph op, one communicator or engine call per zero op, every tensor
/// at its planned arena offset), its @train_step the optimizer step, and the
/// program table carries the parameters, inputs and the configuration the
/// IR records. Reads nothing but the module (and the command line to print
/// as the recompile hint). Fails with a diagnostic on an op it cannot emit.
/// The target-neutral part is ProgramPrinter (ProgramPrinter.h); this is
/// its CPU target (docs/Emitter.md).
mlir::LogicalResult emitCpuProgram(mlir::ModuleOp module,
                                   const std::string &recompileHint,
                                   EmittedProgram &out);

} // namespace zeroc

#endif // ZEROC_EMIT_CPUEMITTER_H
