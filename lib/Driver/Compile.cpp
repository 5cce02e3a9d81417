//===- Compile.cpp - `zeroc compile`: ONNX model to out/train -------------===//
#include "zeroc/Driver/Compile.h"

#include "zeroc/Dialect/Graph/GraphOps.h"
#include "zeroc/Driver/BuildPaths.h"
#include "zeroc/Driver/DsConfig.h"
#include "zeroc/Driver/Pipeline.h"
#include "zeroc/Emit/CpuEmitter.h"
#include "zeroc/InitAll.h"
#include "zeroc/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <unistd.h>

using namespace mlir;

namespace zeroc {

namespace {

int fail(const std::string &msg) {
  llvm::errs() << "zeroc: error: " << msg << "\n";
  return 1;
}

std::vector<Phase> compilePhases(const TrainConfig &config) {
  std::vector<Phase> phases = importPhases();
  if (config.precision != TrainConfig::Precision::FP32)
    phases.push_back({"mixed-precision", [config](OpPassManager &pm) {
                        MixedPrecisionOptions options;
                        options.dtype = config.precision == TrainConfig::Precision::FP16
                                            ? "f16"
                                            : "bf16";
                        pm.addPass(createMixedPrecision(options));
                      }});
  phases.push_back({"autodiff", [](OpPassManager &pm) {
                      pm.addPass(createAutodiff());
                    }});
  if (config.lossScaling || config.gradAccum > 1)
    phases.push_back({"scale-loss", [config](OpPassManager &pm) {
                        ScaleLossOptions options;
                        options.dynamic = config.lossScaling;
                        options.gradAccumSteps = config.gradAccum;
                        pm.addPass(createScaleLoss(options));
                      }});
  phases.push_back({"partition", [config](OpPassManager &pm) {
                      PartitionOptions options;
                      options.stage = config.stage;
                      options.worldSize = config.worldSize;
                      pm.addPass(createPartition(options));
                    }});
  phases.push_back({"cleanup", [](OpPassManager &pm) {
                      pm.addPass(createCanonicalizerPass());
                      pm.addPass(createCSEPass());
                    }});
  phases.push_back({"verify-partition", [](OpPassManager &pm) {
                      pm.addPass(createVerifyPartition());
                    }});
  phases.push_back({"plan-buffers", [](OpPassManager &pm) {
                      pm.addPass(createPlanBuffers());
                    }});
  return phases;
}

/// The model's batch dim: dim 0 of its first data input.
int64_t modelBatch(ModuleOp module) {
  auto fn = module.lookupSymbol<func::FuncOp>("forward");
  for (Type t : fn.getArgumentTypes())
    if (auto rt = llvm::dyn_cast<RankedTensorType>(t))
      if (rt.getRank() > 0)
        return rt.getDimSize(0);
  return 1;
}

/// Compiles OUT/train.cpp into OUT/train with the system C++ compiler.
bool compileCxx(const std::string &dir, std::string &error) {
  std::string src = dir + "/train.cpp", exe = dir + "/train";
  std::string log = dir + "/compile.log";
  std::vector<std::string> argv = {ZEROC_CXX, "-std=c++17", "-O1",
                                   "-I" ZEROC_RUNTIME_INCLUDE_DIR, src, "-o",
                                   exe, ZEROC_RUNTIME_LIBRARY};
  for (llvm::StringRef lib : llvm::split(ZEROC_RUNTIME_LINK_LIBRARIES, ';'))
    if (!lib.empty())
      argv.push_back(lib.str());
  argv.push_back("-lm");
  std::vector<llvm::StringRef> refs(argv.begin(), argv.end());
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(log),
                                                llvm::StringRef(log)};
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(ZEROC_CXX, refs, std::nullopt, redirects,
                                     /*SecondsToWait=*/600, 0, &execError);
  if (rc == 0)
    return true;
  std::string first = execError;
  if (auto buf = llvm::MemoryBuffer::getFile(log)) {
    for (llvm::StringRef l : llvm::split((*buf)->getBuffer(), '\n'))
      if (l.contains("error")) {
        first = l.str();
        break;
      }
  }
  error = "the C++ compiler failed on the generated train.cpp (a zeroc bug; "
          "please report it): " + first;
  return false;
}

bool writeFile(const std::string &path, const std::string &bytes,
               std::string &error) {
  return writeFileAtomically(path, bytes, error);
}

} // namespace

int runCompile(const CompileArgs &args) {
  TrainConfig config;
  config.worldSize = args.worldSize;
  bool stageGiven = false;
  int64_t trainBatch = 0;
  std::vector<std::string> warnings;
  std::string error;
  if (!args.configPath.empty() &&
      !readDsConfig(args.configPath, config, stageGiven, trainBatch, warnings,
                    error, args.maxConfigBytes))
    return fail(error);
  if (args.stage)
    config.stage = *args.stage;

  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  OwningOpRef<ModuleOp> module = importOnnxModel(context, args.model, args.import, error);
  if (!module)
    return fail(error);
  if (!resolveBatchSizes(config, trainBatch, modelBatch(*module), error))
    return fail((args.configPath.empty() ? args.model
                                         : messagePath(args.configPath)) +
                ": " + error);
  if (!runPhases(*module, compilePhases(config), args.dumpDir, error))
    return fail(args.model + ": " + error);

  EmittedProgram program;
  std::string diag;
  {
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
      if (diag.empty())
        diag = d.str();
      return success();
    });
    if (failed(emitCpuProgram(*module, config, args.commandLine, program)))
      return fail(args.model + ": cannot emit code: " + diag);
  }
  // The config's warnings once the model and the config were accepted, so
  // that a rejected input gets its one error line alone.
  for (const std::string &w : warnings)
    llvm::errs() << "zeroc: warning: " << messagePath(args.configPath) << ": "
                 << w << "\n";

  // Stage everything in a temporary directory and move it into place only
  // when the C++ compiler succeeded: a failed compile leaves no train.
  if (std::error_code ec = llvm::sys::fs::create_directories(args.outDir))
    return fail("cannot create output directory '" + args.outDir + "': " + ec.message());
  std::string tmp = args.outDir + "/.zeroc-tmp-" + std::to_string(getpid());
  llvm::sys::fs::remove_directories(tmp);
  if (std::error_code ec = llvm::sys::fs::create_directories(tmp))
    return fail("cannot create '" + tmp + "': " + ec.message());
  auto cleanup = [&] { llvm::sys::fs::remove_directories(tmp); };
  if (!writeFile(tmp + "/train.cpp", program.source, error) ||
      !writeFile(tmp + "/model.bin", program.blob, error) ||
      !writeFile(tmp + "/plan.json", planJson(*module, config), error) ||
      !compileCxx(tmp, error)) {
    cleanup();
    return fail(error);
  }
  for (const char *name : {"train.cpp", "model.bin", "plan.json", "train"}) {
    std::string from = tmp + "/" + name, to = args.outDir + "/" + name;
    if (std::error_code ec = llvm::sys::fs::rename(from, to)) {
      cleanup();
      return fail("cannot move '" + from + "' to '" + to + "': " + ec.message());
    }
  }
  cleanup();
  llvm::outs() << "zeroc: compiled " << args.model << " -> " << args.outDir
               << "/train (ZeRO stage " << config.stage << ", world size "
               << config.worldSize << ", micro batch " << config.microBatch
               << ", grad accum " << config.gradAccum << ", "
               << config.optimizerName << ")\n";
  return 0;
}

} // namespace zeroc
