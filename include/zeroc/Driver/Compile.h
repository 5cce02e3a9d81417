//===- Compile.h - `zeroc compile`: ONNX model to out/train ------*- C++ -*-===//
#ifndef ZEROC_DRIVER_COMPILE_H
#define ZEROC_DRIVER_COMPILE_H

#include "zeroc/Driver/DsConfig.h"
#include "zeroc/Import/OnnxImporter.h"
#include "zeroc/Support/TrainConfig.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>

namespace zeroc {

struct CompileArgs {
  std::string model, outDir, configPath, dumpDir;
  std::optional<int> stage; ///< --stage overrides zero_optimization.stage
  int worldSize = 1;
  uint64_t maxConfigBytes = kDefaultMaxConfigBytes; ///< --max-config-bytes
  OnnxImportOptions import;
  std::string commandLine; ///< for the recompile hint in out/train's errors
  bool verbose = false;
};

/// Runs the whole pipeline: import, autodiff, ZeRO partitioning, emission,
/// and the system C++ compiler. Writes OUT/train, OUT/model.bin,
/// OUT/train.cpp and OUT/plan.json only when every step succeeded. Returns
/// the process exit code after printing one "zeroc: error:" line on failure.
int runCompile(const CompileArgs &args);

/// The memory and communication plan of a partitioned module (plan.json).
std::string planJson(mlir::ModuleOp module, const TrainConfig &config);

} // namespace zeroc

#endif // ZEROC_DRIVER_COMPILE_H
