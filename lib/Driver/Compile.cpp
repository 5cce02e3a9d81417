//===- Compile.cpp - `zeroc compile`: ONNX model to out/train -------------===//
#include "zeroc/Driver/Compile.h"

#include "ProgramChecks.h"
#include "StepAttributes.h"

#include "zeroc/Dialect/Graph/GraphOps.h"
#include "zeroc/Driver/BuildPaths.h"
#include "zeroc/Driver/DsConfig.h"
#include "zeroc/Driver/OutputDir.h"
#include "zeroc/Driver/Pipeline.h"
#include "zeroc/Emit/CpuEmitter.h"
#include "zeroc/Emit/CudaEmitter.h"
#include "zeroc/InitAll.h"
#include "zeroc/Passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
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

/// ds_config (TrainConfig) -> the train pipeline's options; the only
/// place the compiler turns its configuration into pass options.
void setPipelineOptions(MLIRContext &ctx, const TrainConfig &config,
                        TrainPipelineOptions &o) {
  o.stage = config.stage;
  o.worldSize = config.worldSize;
  o.precision = config.precision == TrainConfig::Precision::FP16   ? "fp16"
                : config.precision == TrainConfig::Precision::BF16 ? "bf16"
                                                                   : "fp32";
  o.lossScaling = config.lossScaling;
  o.gradAccumSteps = config.gradAccum;
  o.gradientClipping = config.gradientClipping;
  o.fp32GradAccum = config.gradAccumFp32;
  o.optimizer = optimizerAttrText(ctx, config);
  o.lrSchedule = lrScheduleAttrText(ctx, config);
  o.lossScaler = config.lossScaling ? lossScalerAttrText(ctx, config) : "";
  o.monitor = monitorAttrText(ctx, config);
  o.tf32 = config.tf32;
  o.fuseElementwise = config.fuseElementwise;
  o.fuseAttention = config.fuseAttention;
  o.reduceBucketSize = config.reduceBucketSize;
  o.prefetchBucketSize = config.prefetchBucketSize;
  o.allgatherBucketSize = config.allgatherBucketSize;
  o.persistenceThreshold = config.persistenceThreshold;
  o.maxLiveParameters = config.maxLiveParameters;
  o.maxReuseDistance = config.maxReuseDistance;
  o.modelPersistenceThreshold = config.modelPersistenceThreshold;
  o.overlapComm = config.overlapComm.value_or(config.stage == 3);
  if (config.commAlphaUs)
    o.commAlphaUs = *config.commAlphaUs;
  if (config.commGbps)
    o.commGbps = *config.commGbps;
  if (config.computeGflops)
    o.computeGflops = *config.computeGflops;
  if (config.memoryGBPerS)
    o.memoryGBPerS = *config.memoryGBPerS;
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

/// Runs `argv` (a compiler) with its output in OUT/compile.log; on failure
/// `error` quotes the log's first error line.
bool runCompiler(const std::string &dir, const std::vector<std::string> &argv,
                 llvm::StringRef source, std::string &error) {
  std::string log = dir + "/" + outfile::kCompileLog;
  std::vector<llvm::StringRef> refs(argv.begin(), argv.end());
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(log),
                                                llvm::StringRef(log)};
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(argv.front(), refs, std::nullopt, redirects,
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
  error = ("the C++ compiler failed on the generated " + source +
           " (a zeroc bug; please report it): " + first)
              .str();
  return false;
}

void appendLibraries(std::vector<std::string> &argv, llvm::StringRef libs) {
  for (llvm::StringRef lib : llvm::split(libs, ';'))
    if (!lib.empty())
      argv.push_back(lib.str());
}

/// Compiles OUT/train.cpp (CPU) or OUT/train.cu (CUDA, with nvcc; or with
/// the C++ compiler against the CUDA runtime's host emulation) into
/// OUT/train.
bool compileProgram(const std::string &dir, llvm::StringRef target,
                    std::string &error) {
  const bool cuda = target != "cpu";
  std::string src = dir + "/" + (cuda ? outfile::kCudaSource : outfile::kSource),
              exe = dir + "/" + outfile::kTrain;
  // -O0: the program is one runtime call per op (the kernels are compiled
  // with optimizations in the runtime libraries), so optimizing it buys
  // nothing measurable (a 4-layer GPT: 4.4/3.9 s at -O0, 5.5/4.2 s at -O1
  // for 20 steps) and costs 3-4x the compile time of large models.
  std::vector<std::string> argv;
  // nvcc's -O0 is the host code's: ptxas still optimizes the fused kernels,
  // built for the GPUs the runtime is, and like it without FMA contraction
  // (each op rounds as the runtime's own kernel: runtime/cuda/CMakeLists.txt).
  if (target == "cuda") {
    argv = {ZEROC_NVCC, "-std=c++17", "-O0", "-fmad=false"};
    appendLibraries(argv, ZEROC_NVCC_ARCH_FLAGS);
    argv.insert(argv.end(), {"-I" ZEROC_RUNTIME_INCLUDE_DIR,
                             "-I" ZEROC_RUNTIME_CUDA_INCLUDE_DIR, src, "-o", exe,
                             ZEROC_RUNTIME_CUDA_LIBRARY, ZEROC_RUNTIME_LIBRARY});
  } else if (target == "cuda-emu")
    // -ffp-contract=off: as the emulation's runtime (runtime/cuda/emu).
    argv = {ZEROC_CXX, "-std=c++17", "-O0", "-ffp-contract=off", "-I" ZEROC_RUNTIME_INCLUDE_DIR,
            "-I" ZEROC_RUNTIME_CUDA_INCLUDE_DIR, "-x", "c++", src, "-x", "none",
            "-o", exe, ZEROC_RUNTIME_CUDA_EMU_LIBRARY, ZEROC_RUNTIME_LIBRARY};
  else
    argv = {ZEROC_CXX, "-std=c++17", "-O0", "-I" ZEROC_RUNTIME_INCLUDE_DIR, src,
            "-o", exe, ZEROC_RUNTIME_LIBRARY};
  appendLibraries(argv, ZEROC_RUNTIME_LINK_LIBRARIES);
  if (target == "cuda")
    appendLibraries(argv, ZEROC_CUDA_LINK_LIBRARIES);
  argv.push_back("-lm");
  return runCompiler(dir, argv, llvm::sys::path::filename(src), error);
}

bool writeFile(const std::string &path, const std::string &bytes,
               std::string &error) {
  return writeFileAtomically(path, bytes, error);
}

} // namespace

std::string shellQuote(llvm::StringRef arg) {
  auto safe = [](unsigned char c) {
    return llvm::isAlnum(c) || llvm::StringRef("_-./=:,+@%").contains(c);
  };
  if (!arg.empty() && llvm::all_of(arg, safe))
    return arg.str();
  bool printable = llvm::all_of(
      arg, [](unsigned char c) { return c >= 0x20 && c < 0x7f; });
  if (printable) {
    std::string out = "'";
    for (char c : arg)
      out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
  }
  std::string out = "$'";
  for (unsigned char c : arg) {
    if (c == '\'' || c == '\\')
      out += std::string("\\") + static_cast<char>(c);
    else if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (c >= 0x20 && c < 0x7f)
      out += static_cast<char>(c);
    else
      out += llvm::formatv("\\x{0:x-2}", static_cast<unsigned>(c)).str();
  }
  return out + "'";
}

int runCompile(const CompileArgs &args) {
  StagedOutput output(args.outDir);
  std::string error;
  if (!output.checkTarget(error))
    return fail(error);
  if (args.target == "cuda" && !ZEROC_HAVE_CUDA)
    return fail("--target cuda: this zeroc was built without the CUDA toolkit "
                "(nvcc, cuBLASLt and NCCL; /usr/local/cuda): install it and "
                "rebuild zeroc, or use --target cuda-emu to build the CUDA "
                "program on the host emulation of the CUDA runtime");
  if (!args.dumpDir.empty() && pathWithin(args.dumpDir, args.outDir))
    return fail("--dump-ir '" + messagePath(args.dumpDir) +
                "' lies inside the output directory '" +
                messagePath(args.outDir) +
                "', which zeroc replaces as a whole; dump the IR elsewhere");
  TrainConfig config;
  config.worldSize = args.worldSize;
  config.commAlphaUs = args.commAlphaUs;
  config.commGbps = args.commGbps;
  config.computeGflops = args.computeGflops;
  config.memoryGBPerS = args.memoryGBPerS;
  bool stageGiven = false;
  int64_t trainBatch = 0;
  std::vector<std::string> warnings;
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
  std::vector<ImportMessage> importMessages;
  OwningOpRef<ModuleOp> module =
      importOnnxModel(context, args.model, args.import, error, &importMessages);
  if (!module)
    return fail(error);
  const std::string model = messagePath(args.model);
  if (!checkRuntimeContract(*module, error))
    return fail(model + ": " + error);
  if (!resolveBatchSizes(config, trainBatch, modelBatch(*module), error))
    return fail((args.configPath.empty() ? model
                                         : messagePath(args.configPath)) +
                ": " + error);
  // Stages 0-1 reduce during backward only when the micro-step ends the
  // optimizer step (zero-step-boundary's reduce-in-backward).
  if (config.stage <= 1 && config.overlapComm.value_or(false) &&
      config.gradAccum > 1)
    warnings.push_back(
        "zero_optimization.overlap_comm has no effect at stage " +
        std::to_string(config.stage) + " with gradient_accumulation_steps " +
        std::to_string(config.gradAccum) +
        " (zeroc reduces stage 0-1 gradients during the backward pass only "
        "with one micro-step per optimizer step)");
  if (config.tf32 && args.target == "cpu")
    warnings.push_back("zeroc.tf32 has no effect on the CPU target (a CPU has "
                       "no TF32; its f32 matmuls stay IEEE f32); it applies "
                       "to --target cuda");

  TrainPipelineOptions options;
  setPipelineOptions(context, config, options);
  options.target = args.target == "cpu" ? "cpu" : "cuda";
  if (!runPhases(*module, trainPhases(options), args.dumpDir, error))
    return fail(model + ": " + error);
  if (!checkTrainedParams(*module, error))
    return fail(model + ": " + error);
  // What the trainer's checkpoints save and honour (docs/Checkpoints.md),
  // for the emitter to print.
  {
    Builder mb(&context);
    (*module)->setAttr(
        "zero.checkpoint",
        mb.getDictionaryAttr(
            {mb.getNamedAttr("tag_validation",
                             mb.getI32IntegerAttr(config.tagValidation)),
             mb.getNamedAttr("load_from_fp32_weights",
                             mb.getBoolAttr(config.loadFromFp32Weights)),
             mb.getNamedAttr("ds_config", mb.getStringAttr(config.resolvedJson))}));
  }

  EmittedProgram program;
  std::string diag;
  {
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
      if (diag.empty())
        diag = d.str();
      return success();
    });
    LogicalResult emitted =
        args.target == "cpu"
            ? emitCpuProgram(*module, args.commandLine, program)
            : emitCudaProgram(*module, args.commandLine, program);
    if (failed(emitted))
      return fail(model + ": cannot emit code: " + diag);
  }
  // The config's warnings once the model and the config were accepted, so
  // that a rejected input gets its one error line alone.
  for (const std::string &w : warnings)
    llvm::errs() << "zeroc: warning: " << messagePath(args.configPath) << ": "
                 << w << "\n";

  // Everything is written into a staging folder that replaces OUT as one
  // unit only when the C++ compiler succeeded (OutputDir.h).
  if (!output.create(error))
    return fail(error);
  const std::string &tmp = output.path();
  const char *source = args.target == "cpu" ? outfile::kSource : outfile::kCudaSource;
  if (!writeFile(tmp + "/" + source, program.source, error) ||
      !writeFileAtomically(
          tmp + "/" + outfile::kBlob,
          [&](int fd, std::string &why) { return program.blob.writeTo(fd, why); }, error) ||
      !writeFile(tmp + "/" + outfile::kPlan, planJson(*module, config, args.target), error) ||
      !compileProgram(tmp, args.target, error))
    return fail(error);
  llvm::sys::fs::remove(tmp + "/" + outfile::kCompileLog);
  if (!output.commit(error))
    return fail(error);
  // The model's notes (folded tied weights, unmarked parameters) once the
  // output exists, so that a failed compile prints its one error line alone.
  printImportMessages(args.model, importMessages);
  llvm::outs() << "zeroc: compiled " << shellQuote(args.model) << " -> "
               << shellQuote(args.outDir + "/train") << " (ZeRO stage " << config.stage << ", world size "
               << config.worldSize << ", micro batch " << config.microBatch
               << ", grad accum " << config.gradAccum << ", "
               << config.optimizerName << ")\n";
  return 0;
}

} // namespace zeroc
