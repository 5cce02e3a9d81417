//===- ProgramChecks.h - What out/train can run, checked at compile time -===//
//
// The trainer validates its program table at start-up and calls a mismatch
// "invalid program (recompile it with this runtime)". That message is right
// for a real ABI mismatch and wrong for a model the runtime can never run:
// recompiling does not help. zeroc therefore refuses such models here, with
// the names at fault, before it writes anything.
//
//===----------------------------------------------------------------------===//
#ifndef ZEROC_LIB_DRIVER_PROGRAMCHECKS_H
#define ZEROC_LIB_DRIVER_PROGRAMCHECKS_H

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace zeroc {

/// Checks the imported module's ranks (at most ZEROC_RT_MAX_RANK), inputs (each names a data file
/// `<input>.npy`, has a leading batch dim equal to every other input's, and
/// a dtype .npy holds) and trainable parameters (names are C strings whose
/// save files are distinct). Returns false with one line in `error`.
bool checkRuntimeContract(mlir::ModuleOp module, std::string &error);

/// After the pipeline: every trainable parameter has the master copy the
/// runtime trains it with (zeroc_rt_param_master_ok).
bool checkTrainedParams(mlir::ModuleOp module, std::string &error);

} // namespace zeroc

#endif // ZEROC_LIB_DRIVER_PROGRAMCHECKS_H
