//===- Pipeline.h - zeroc's phases and IR dumps -----------------*- C++ -*-===//
#ifndef ZEROC_DRIVER_PIPELINE_H
#define ZEROC_DRIVER_PIPELINE_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "mlir/Pass/PassManager.h"
#include "zeroc/Passes/TrainPipeline.h"

#include <functional>
#include <string>
#include <vector>

namespace zeroc {

/// Runs `phases` on `module`. With a non-empty `dumpDir`, writes
/// DIR/NN-<phase>.mlir after import (NN = 00) and after each phase; files
/// are written only once every phase has succeeded, so a failed run leaves
/// none behind. Returns false and sets `error` on failure.
bool runPhases(mlir::ModuleOp module, const std::vector<Phase> &phases,
               const std::string &dumpDir, std::string &error);

/// --dump-ir prints resource blobs of at least this many bytes empty.
constexpr int64_t kDumpResourceBytes = 1024;

/// Writes `text` to `path` atomically (temporary file + rename).
bool writeFileAtomically(const std::string &path, const std::string &text,
                         std::string &error);
/// The same with the content written by `write` to the temporary file's
/// descriptor (model.bin streams its pieces this way).
bool writeFileAtomically(const std::string &path,
                         llvm::function_ref<bool(int fd, std::string &why)> write,
                         std::string &error);

} // namespace zeroc

#endif // ZEROC_DRIVER_PIPELINE_H
