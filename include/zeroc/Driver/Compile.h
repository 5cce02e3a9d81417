//===- Compile.h - `zeroc compile`: ONNX model to out/train ------*- C++ -*-===//
#ifndef ZEROC_DRIVER_COMPILE_H
#define ZEROC_DRIVER_COMPILE_H

#include "zeroc/Driver/DsConfig.h"
#include "zeroc/Import/OnnxImporter.h"
#include "zeroc/Support/TrainConfig.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace zeroc {

struct CompileArgs {
  std::string model, outDir, configPath, dumpDir;
  std::optional<int> stage; ///< --stage overrides zero_optimization.stage
  int worldSize = 1;
  /// --comm-alpha-us / --comm-gbps: the link's cost model (unset: defaults).
  std::optional<double> commAlphaUs, commGbps;
  /// --compute-gflops, --memory-gb-per-s: the compute cost model.
  std::optional<double> computeGflops, memoryGBPerS;
  uint64_t maxConfigBytes = kDefaultMaxConfigBytes; ///< --max-config-bytes
  OnnxImportOptions import;
  std::string commandLine; ///< for the recompile hint in out/train's errors
  bool verbose = false;
  /// --target: "cpu" (train.cpp on the CPU runtime), "cuda" (train.cu on
  /// the CUDA runtime, built with nvcc) or "cuda-emu" (the same train.cu on
  /// the CUDA runtime's host emulation: for testing without a GPU).
  std::string target = "cpu";
};

/// Runs the whole pipeline: import, autodiff, ZeRO partitioning, emission,
/// and the system C++ compiler. OUT (with train, model.bin, train.cpp and
/// plan.json) is replaced as one unit only when every step succeeded
/// (OutputDir.h). Returns
/// the process exit code after printing one "zeroc: error:" line on failure.
int runCompile(const CompileArgs &args);

/// `arg` as a POSIX shell word, printable on one line: as is when it holds
/// only safe characters, else in single quotes, or as $'...' with escapes
/// when it holds control characters or non-ASCII bytes. The recompile hint
/// is built from these, so a trainer's error line stays one line.
std::string shellQuote(llvm::StringRef arg);

/// The memory and communication plan of a partitioned module (plan.json),
/// and the --target it was compiled for (zeroc launch reads it).
std::string planJson(mlir::ModuleOp module, const TrainConfig &config, llvm::StringRef target);

} // namespace zeroc

#endif // ZEROC_DRIVER_COMPILE_H
