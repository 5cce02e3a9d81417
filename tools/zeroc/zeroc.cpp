//===- zeroc.cpp - the zeroc user driver ----------------------------------===//
//
//   zeroc import model.onnx [--input-shape NAME=D0,D1,...]... [--dump-ir DIR]
//                           [-o FILE] [--elide-constants]
//   zeroc compile model.onnx -o DIR [--stage N] [--world-size W] [--config F]
//                 [--target cpu|cuda|cuda-emu] [--max-config-bytes N]
//   zeroc config-check ds_config.json [MODEL.onnx] [--world-size W]
//                      [--micro-batch N] [--stage N] [--max-config-bytes N]
//   zeroc config-check --schema
//   zeroc launch [--num_gpus N] [--hostfile F] [--include S | --exclude S]
//                [--dry-run] OUT [train args...]
//   zeroc to-fp32 CKPT_DIR OUT.safetensors [--tag TAG]
//   zeroc export-onnx CKPT_DIR MODEL.onnx -o OUT.onnx [--tag TAG]
//
// Errors are one line on stderr, "zeroc: error: FILE: ...", exit code 1;
// usage errors exit with 2 (an empty config file name is an error of its
// own: one line, exit 1). Nothing is written when an error occurs.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Driver/Compile.h"
#include "zeroc/Driver/DsConfig.h"
#include "zeroc/Driver/Launch.h"
#include "zeroc/Driver/Pipeline.h"
#include "zeroc/Driver/ToFp32.h"
#include "zeroc/Import/OnnxImporter.h"
#include "zeroc/InitAll.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/GlobPattern.h"

#include <cmath>
#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

const char *kUsage =
    "usage: zeroc <command> [options]\n"
    "\n"
    "commands:\n"
    "  import MODEL.onnx   print the graph-dialect IR of an ONNX model\n"
    "  compile MODEL.onnx  build a ZeRO-sharded trainer: OUT/train (run it with\n"
    "                      mpirun -np W OUT/train --data DIR --steps N)\n"
    "  config-check FILE [MODEL.onnx]\n"
    "                      print a DeepSpeed config (ds_config.json) as zeroc\n"
    "                      resolves it: every key with its default, batch sizes\n"
    "                      inferred, \"auto\" resolved (warnings on stderr),\n"
    "                      with DeepSpeed 0.19.8's semantics\n"
    "  launch [options] OUT [train args...]\n"
    "                      run OUT/train under mpirun on the ranks DeepSpeed's\n"
    "                      launcher would choose (docs/Launch.md)\n"
    "  to-fp32 CKPT_DIR OUT.safetensors [--tag TAG]\n"
    "                      DeepSpeed's zero_to_fp32: a checkpoint's weights,\n"
    "                      whole and in fp32, under the model's names (the\n"
    "                      tag DIR/latest names by default; docs/Checkpoints.md)\n"
    "  export-onnx CKPT_DIR MODEL.onnx -o OUT.onnx [--tag TAG]\n"
    "                      MODEL.onnx with the checkpoint's trained weights\n"
    "\n"
    "import options:\n"
    "  --input-shape NAME=D0,D1,...  bind the dims of a graph input (repeatable)\n"
    "  --dump-ir DIR                 write one .mlir file per phase into DIR\n"
    "  -o FILE                       write the IR to FILE instead of stdout\n"
    "  --elide-constants             print large constants as __elided__\n"
    "  --allow-no-loss               accept a model without a scalar loss output\n"
    "                                (inference graphs, ONNX node tests)\n"
    "  --max-constant-bytes N        the most constant data (bytes, or with K/M/G)\n"
    "                                the model may compute from no input; zeroc\n"
    "                                writes it into model.bin (default 256M)\n"
    "  --freeze GLOB                 make the parameters matching GLOB (fnmatch\n"
    "                                style, over initializer names) frozen:\n"
    "                                no gradient, not updated (repeatable)\n"
    "  --trainable GLOB              make the frozen parameters matching GLOB\n"
    "                                trainable (repeatable; applied in order)\n"
    "\n"
    "compile options:\n"
    "  -o DIR                        output directory (train, model.bin, plan.json)\n"
    "  --stage N                     ZeRO stage 0-3 (overrides the config's)\n"
    "  --world-size W                number of data-parallel ranks (default 1)\n"
    "  --target T                    cpu (default: train.cpp, Open MPI), cuda\n"
    "                                (train.cu: one GPU per rank, NCCL) or\n"
    "                                cuda-emu (train.cu on the CUDA runtime's\n"
    "                                host emulation, for tests without a GPU)\n"
    "  --config FILE                 DeepSpeed config (ds_config.json)\n"
    "  --max-config-bytes N          read configs of up to N bytes (or with\n"
    "                                K/M/G; default 16M)\n"
    "  --comm-alpha-us A             the link's cost model: fixed microseconds\n"
    "                                per collective step (default 1)\n"
    "  --comm-gbps G                 ... and its bandwidth in Gbit/s (default\n"
    "                                25); bench/netprobe measures both\n"
    "  --compute-gflops F            the compute cost model: GFLOP/s of the\n"
    "                                kernels (default 50)\n"
    "  --memory-gb-per-s M           ... and their memory bandwidth in GB/s\n"
    "                                (default 10)\n"
    "  --input-shape, --dump-ir,     as for import\n"
    "  --max-constant-bytes,\n"
    "  --freeze, --trainable\n"
    "\n"
    "config-check options:\n"
    "  --world-size W                number of data-parallel ranks (default 1)\n"
    "  --micro-batch N               the micro batch when the config leaves it to\n"
    "                                the model and no model is given\n"
    "  --stage N                     ZeRO stage 0-3 (replaces the config's)\n"
    "  --input-shape                 as for import (with MODEL.onnx)\n"
    "  --max-config-bytes N          as for compile\n"
    "  --schema                      print the table of known keys (Markdown)\n"
    "\n"
    "launch options (before OUT; the arguments after OUT go to OUT/train):\n"
    "  --num_gpus N, --num_ranks N   ranks per node (default: the compiled\n"
    "                                world size, in plan.json)\n"
    "  --num_nodes K                 the hostfile's first K hosts\n"
    "  --hostfile FILE               DeepSpeed hostfile: 'HOST slots=N' lines\n"
    "  --include SPEC, --exclude SPEC  slots to use or skip: HOST[:SLOT,...]\n"
    "                                [@HOST...] (one of them, not with --num_*)\n"
    "  --master_addr A, --master_port P  exported as MASTER_ADDR/MASTER_PORT\n"
    "  --threads_per_rank T          OpenMP/OpenBLAS threads and cores per\n"
    "                                rank (default: cores / ranks per node)\n"
    "  --dry-run                     print the mpirun command line, run nothing\n"
    "  --launcher_args 'ARGS'        mpirun's options, with --launcher openmpi\n"
    "  --bind_core_list CPUS         the CPUs each host's ranks share out, e.g.\n"
    "                                0-15,32-47 (Linux's numbers, as numactl's)\n"
    "  --launcher pdsh|openmpi, --force_multi, --bind_cores_to_rank,\n"
    "  --no_local_rank, --no_ssh_check  DeepSpeed's, accepted (docs/Launch.md)\n";

int usageError(const std::string &msg) {
  llvm::errs() << "zeroc: error: " << msg << "\n" << kUsage;
  return 2;
}

int fail(const std::string &msg) {
  llvm::errs() << "zeroc: error: " << msg << "\n";
  return 1;
}

/// Walks a command's arguments; accepts `--flag value` and `--flag=value`.
struct ArgCursor {
  int argc;
  char **argv;
  int i = -1;
  std::string arg;

  bool next() {
    if (++i >= argc)
      return false;
    arg = argv[i];
    return true;
  }
  bool is(const char *flag) const {
    return arg == flag || arg.rfind(std::string(flag) + "=", 0) == 0;
  }
  /// The flag's value, consuming the next argument for the `--flag value`
  /// form; null when it is missing.
  const char *value(const char *flag) {
    if (arg.rfind(std::string(flag) + "=", 0) == 0)
      return argv[i] + std::strlen(flag) + 1;
    if (arg == flag && i + 1 < argc)
      return argv[++i];
    return nullptr;
  }
};

/// A byte count: digits with an optional K, M or G suffix (powers of 1024).
bool parseBytes(const char *text, int64_t &out) {
  char *end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (!*text || !std::isdigit(static_cast<unsigned char>(*text)) || errno)
    return false;
  int shift = 0;
  if (*end == 'K' || *end == 'k') shift = 10, ++end;
  else if (*end == 'M' || *end == 'm') shift = 20, ++end;
  else if (*end == 'G' || *end == 'g') shift = 30, ++end;
  if (*end || v > (static_cast<unsigned long long>(INT64_MAX) >> shift))
    return false;
  out = static_cast<int64_t>(v << shift);
  return true;
}

/// Options every model command takes.
struct ModelArgs {
  std::string model, dumpDir;
  zeroc::OnnxImportOptions options;
};

/// Handles the options shared by import and compile and the positional
/// model. Returns an exit code when parsing must stop (help or an error).
std::optional<int> parseModelArg(ArgCursor &c, ModelArgs &args) {
  if (c.arg == "-h" || c.arg == "--help") {
    llvm::outs() << kUsage;
    return 0;
  }
  if (c.is("--input-shape")) {
    const char *v = c.value("--input-shape");
    std::string error;
    if (!v)
      return usageError("--input-shape needs NAME=D0,D1,...");
    if (!zeroc::parseInputShapeFlag(v, args.options.inputShapes, error))
      return usageError(error);
    return std::nullopt;
  }
  if (c.is("--max-constant-bytes")) {
    const char *v = c.value("--max-constant-bytes");
    if (!v || !parseBytes(v, args.options.maxConstantBytes))
      return usageError("--max-constant-bytes needs a byte count (e.g. "
                        "268435456 or 256M)");
    return std::nullopt;
  }
  for (const char *flag : {"--freeze", "--trainable"})
    if (c.is(flag)) {
      const char *v = c.value(flag);
      if (!v || !*v)
        return usageError(std::string(flag) + " needs a glob over parameter names");
      if (auto pattern = llvm::GlobPattern::create(v); !pattern) {
        llvm::consumeError(pattern.takeError());
        return usageError(std::string(flag) + " '" + v + "' is not a valid glob");
      }
      args.options.paramFlags.push_back({flag == std::string("--freeze"), v});
      return std::nullopt;
    }
  if (c.is("--dump-ir")) {
    const char *v = c.value("--dump-ir");
    if (!v)
      return usageError("--dump-ir needs a directory");
    args.dumpDir = v;
    return std::nullopt;
  }
  if (!c.arg.empty() && c.arg[0] == '-')
    return usageError("unknown option '" + c.arg + "'");
  if (!args.model.empty())
    return usageError("more than one model given ('" + args.model + "', '" +
                      c.arg + "')");
  args.model = c.arg;
  return std::nullopt;
}

int runImport(int argc, char **argv) {
  ModelArgs args;
  std::string output;
  bool elide = false;
  ArgCursor c{argc, argv};
  while (c.next()) {
    if (c.arg == "-o") {
      const char *v = c.value("-o");
      if (!v)
        return usageError("-o needs a file name");
      output = v;
    } else if (c.arg == "--allow-no-loss") {
      args.options.allowNoLoss = true;
    } else if (c.arg == "--elide-constants") {
      elide = true;
    } else if (std::optional<int> rc = parseModelArg(c, args)) {
      return *rc;
    }
  }
  if (args.model.empty())
    return usageError("import needs a model file");

  mlir::DialectRegistry registry;
  zeroc::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);

  std::string error;
  std::vector<zeroc::ImportMessage> messages;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      zeroc::importOnnxModel(context, args.model, args.options, error, &messages);
  if (!module)
    return fail(error);
  if (!zeroc::runPhases(*module, zeroc::importPhases(!args.options.allowNoLoss),
                        args.dumpDir, error))
    return fail(args.model + ": " + error);
  zeroc::printImportMessages(args.model, messages);

  std::string text;
  llvm::raw_string_ostream os(text);
  mlir::OpPrintingFlags flags;
  if (elide)
    flags.elideLargeElementsAttrs(16);
  module->print(os, flags);
  if (output.empty()) {
    llvm::outs() << text;
    return 0;
  }
  if (!zeroc::writeFileAtomically(output, text, error))
    return fail(error);
  return 0;
}

/// --max-config-bytes: a byte count (as parseBytes) from 1 to 2^40.
bool parseConfigByteLimit(const char *text, uint64_t &out) {
  int64_t v = 0;
  if (!parseBytes(text, v) || v < 1 || v > (int64_t(1) << 40))
    return false;
  out = static_cast<uint64_t>(v);
  return true;
}

/// An empty config file name: an error of its own (one line, exit 1)
/// rather than no config.
int emptyConfigName(const char *what) {
  return fail(std::string(what) +
              ": the config file name is empty (give a ds_config.json path)");
}

bool parseInt(const char *text, int min, int max, int &out) {
  char *end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (!*text || *end || v < min || v > max)
    return false;
  out = static_cast<int>(v);
  return true;
}

/// A cost-model constant: a finite number in (0, 1e9].
bool parseCostConstant(const char *text, double &out) {
  llvm::StringRef s(text);
  if (s.empty() || s.trim() != s || s.getAsDouble(out))
    return false;
  return std::isfinite(out) && out > 0.0 && out <= 1e9;
}

/// The cost models' constants on the command line: flag, where it goes,
/// and what the usage error adds.
struct CostFlag {
  const char *name;
  std::optional<double> zeroc::CompileArgs::*field;
  const char *hint;
};
constexpr CostFlag kCostFlags[] = {
    {"--comm-alpha-us", &zeroc::CompileArgs::commAlphaUs,
     " (bench/netprobe measures a link's)"},
    {"--comm-gbps", &zeroc::CompileArgs::commGbps,
     " (bench/netprobe measures a link's)"},
    {"--compute-gflops", &zeroc::CompileArgs::computeGflops, ""},
    {"--memory-gb-per-s", &zeroc::CompileArgs::memoryGBPerS, ""},
};

const CostFlag *costFlag(const ArgCursor &c) {
  for (const CostFlag &flag : kCostFlags)
    if (c.is(flag.name))
      return &flag;
  return nullptr;
}

int runCompileCommand(int argc, char **argv, const std::string &commandLine) {
  zeroc::CompileArgs args;
  args.commandLine = commandLine;
  ModelArgs model;
  ArgCursor c{argc, argv};
  while (c.next()) {
    if (c.arg == "-o" || c.is("--output")) {
      const char *v = c.value(c.arg == "-o" ? "-o" : "--output");
      if (!v)
        return usageError("-o needs a directory");
      args.outDir = v;
    } else if (c.is("--stage")) {
      const char *v = c.value("--stage");
      int stage;
      if (!v || !parseInt(v, 0, 3, stage))
        return usageError("--stage must be 0, 1, 2 or 3");
      args.stage = stage;
    } else if (c.is("--world-size")) {
      const char *v = c.value("--world-size");
      if (!v || !parseInt(v, 1, 1 << 20, args.worldSize))
        return usageError("--world-size must be a positive integer");
    } else if (c.is("--target")) {
      const char *v = c.value("--target");
      llvm::StringRef t = v ? v : "";
      if (t != "cpu" && t != "cuda" && t != "cuda-emu")
        return usageError("--target must be cpu, cuda or cuda-emu");
      args.target = t.str();
    } else if (c.is("--config")) {
      const char *v = c.value("--config");
      if (!v)
        return usageError("--config needs a file");
      if (!*v)
        return emptyConfigName("--config");
      args.configPath = v;
    } else if (c.is("--max-config-bytes")) {
      const char *v = c.value("--max-config-bytes");
      if (!v || !parseConfigByteLimit(v, args.maxConfigBytes))
        return usageError("--max-config-bytes must be a byte count from 1 to "
                          "2^40");
    } else if (const CostFlag *flag = costFlag(c)) {
      const char *v = c.value(flag->name);
      double x;
      if (!v || !parseCostConstant(v, x))
        return usageError(std::string(flag->name) +
                          " must be a number in (0, 1e9]" + flag->hint);
      args.*(flag->field) = x;
    } else if (std::optional<int> rc = parseModelArg(c, model)) {
      return *rc;
    }
  }
  args.model = model.model;
  args.dumpDir = model.dumpDir;
  args.import = model.options;
  if (args.model.empty())
    return usageError("compile needs a model file");
  if (args.outDir.empty())
    return usageError("compile needs an output directory (-o DIR)");
  return zeroc::runCompile(args);
}

/// The model's batch dim as `zeroc compile` takes it: dim 0 of the first
/// ranked input of `forward`.
int64_t modelBatchDim(mlir::ModuleOp module) {
  auto fn = module.lookupSymbol<mlir::func::FuncOp>("forward");
  if (fn)
    for (mlir::Type t : fn.getArgumentTypes())
      if (auto rt = llvm::dyn_cast<mlir::RankedTensorType>(t))
        if (rt.getRank() > 0)
          return rt.getDimSize(0);
  return 1;
}

int runConfigCheck(int argc, char **argv) {
  zeroc::ConfigCheckOptions options;
  std::string configPath;
  ModelArgs model;
  int microBatch = 0;
  bool schema = false, configGiven = false;
  ArgCursor c{argc, argv};
  while (c.next()) {
    if (c.arg == "--schema") {
      schema = true;
    } else if (c.is("--world-size")) {
      const char *v = c.value("--world-size");
      if (!v || !parseInt(v, 1, 1 << 20, options.worldSize))
        return usageError("--world-size must be a positive integer");
    } else if (c.is("--micro-batch")) {
      const char *v = c.value("--micro-batch");
      if (!v || !parseInt(v, 1, 1 << 30, microBatch))
        return usageError("--micro-batch must be a positive integer");
    } else if (c.is("--stage")) {
      const char *v = c.value("--stage");
      int stage;
      if (!v || !parseInt(v, 0, 3, stage))
        return usageError("--stage must be 0, 1, 2 or 3");
      options.stage = stage;
    } else if (c.is("--max-config-bytes")) {
      const char *v = c.value("--max-config-bytes");
      if (!v || !parseConfigByteLimit(v, options.maxBytes))
        return usageError("--max-config-bytes must be a byte count from 1 to "
                          "2^40");
    } else if (!configGiven && (c.arg.empty() || c.arg[0] != '-')) {
      if (c.arg.empty())
        return emptyConfigName("config-check");
      configGiven = true;
      configPath = c.arg;
    } else if (std::optional<int> rc = parseModelArg(c, model)) {
      return *rc;
    }
  }
  if (schema) {
    llvm::outs() << zeroc::dsConfigSchemaMarkdown();
    return 0;
  }
  if (configPath.empty())
    return usageError("config-check needs a config file");
  if (microBatch && !model.model.empty())
    return usageError("give either --micro-batch or a model, not both");

  std::string error;
  if (!model.model.empty()) {
    mlir::DialectRegistry registry;
    zeroc::registerAllDialects(registry);
    mlir::MLIRContext context(registry);
    context.loadAllAvailableDialects();
    context.printOpOnDiagnostic(false);
    mlir::OwningOpRef<mlir::ModuleOp> module =
        zeroc::importOnnxModel(context, model.model, model.options, error);
    if (!module)
      return fail(error);
    options.modelBatch = modelBatchDim(*module);
  } else if (microBatch) {
    options.modelBatch = microBatch;
    options.modelBatchName = "--micro-batch";
  }

  zeroc::TrainConfig config;
  std::string resolved;
  std::vector<std::string> warnings;
  if (!zeroc::checkDsConfig(configPath, options, config, resolved, warnings,
                            error))
    return fail(error);
  std::string name = zeroc::messagePath(configPath);
  llvm::errs() << "zeroc: note: " << name << ": resolved with DeepSpeed "
               << zeroc::kDeepSpeedSemantics << " semantics\n";
  for (const std::string &w : warnings)
    llvm::errs() << "zeroc: warning: " << name << ": " << w << "\n";
  llvm::outs() << resolved;
  return 0;
}


/// An allocation the machine cannot serve ends the compile with one line
/// (the output is staged, so nothing that looks valid is left behind).
[[noreturn]] void outOfMemory() {
  static const char msg[] = "zeroc: error: out of memory (the model needs "
                            "more memory than this machine has)\n";
  (void)!::write(2, msg, sizeof msg - 1);
  std::_Exit(1);
}

int dispatch(int argc, char **argv) {
  if (argc < 2)
    return usageError("no command given");
  std::string cmd = argv[1];
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    llvm::outs() << kUsage;
    return 0;
  }
  if (cmd == "import")
    return runImport(argc - 2, argv + 2);
  if (cmd == "compile") {
    // The recompile hint: the command line without its --world-size,
    // which the trainer appends with the world it was started in.
    std::string line = "zeroc";
    for (int i = 1; i < argc; ++i) {
      llvm::StringRef arg = argv[i];
      if (arg == "--world-size" && i + 1 < argc) {
        ++i;
        continue;
      }
      if (arg.starts_with("--world-size="))
        continue;
      line += " " + zeroc::shellQuote(arg);
    }
    return runCompileCommand(argc - 2, argv + 2, line);
  }
  if (cmd == "config-check")
    return runConfigCheck(argc - 2, argv + 2);
  // Launch's errors are all one line with exit 1 (a launcher's callers
  // check for failure, not for usage), so it parses its own flags.
  if (cmd == "launch")
    return zeroc::launch::runLaunch(argc - 2, argv + 2, kUsage);
  if (cmd == "to-fp32")
    return zeroc::runToFp32(argc - 2, argv + 2);
  if (cmd == "export-onnx")
    return zeroc::runExportOnnx(argc - 2, argv + 2);
  return usageError("unknown command '" + cmd + "'");
}

} // namespace

int main(int argc, char **argv) {
  std::set_new_handler(outOfMemory);
  // LLVM's own allocations (SmallVector growth, safe_malloc) report here.
  llvm::install_bad_alloc_error_handler(
      [](void *, const char *, bool) { outOfMemory(); });
  int rc = dispatch(argc, argv);
  // A stdout that cannot be written (a full disk, a closed pipe) is one
  // error line, not LLVM's fatal "IO failure on output stream".
  llvm::outs().flush();
  if (llvm::outs().has_error()) {
    std::error_code ec = llvm::outs().error();
    llvm::outs().clear_error();
    llvm::errs() << "zeroc: error: cannot write to standard output: "
                 << ec.message() << "\n";
    return 1;
  }
  return rc;
}
