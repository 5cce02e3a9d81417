//===- zeroc.cpp - the zeroc user driver ----------------------------------===//
//
//   zeroc import model.onnx [--input-shape NAME=D0,D1,...]... [--dump-ir DIR]
//                           [-o FILE] [--elide-constants]
//
// Errors are one line on stderr, "zeroc: error: FILE: ...", exit code 1;
// usage errors exit with 2. Nothing is written when an error occurs.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Driver/Pipeline.h"
#include "zeroc/Import/OnnxImporter.h"
#include "zeroc/InitAll.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <string>
#include <vector>

namespace {

const char *kUsage =
    "usage: zeroc <command> [options]\n"
    "\n"
    "commands:\n"
    "  import MODEL.onnx   print the graph-dialect IR of an ONNX model\n"
    "\n"
    "import options:\n"
    "  --input-shape NAME=D0,D1,...  bind the dims of a graph input (repeatable)\n"
    "  --dump-ir DIR                 write one .mlir file per phase into DIR\n"
    "  -o FILE                       write the IR to FILE instead of stdout\n"
    "  --elide-constants             print large constants as __elided__\n"
    "  --allow-no-loss               accept a model without a scalar loss output\n"
    "                                (inference graphs, ONNX node tests)\n";

int usageError(const std::string &msg) {
  llvm::errs() << "zeroc: error: " << msg << "\n" << kUsage;
  return 2;
}

int fail(const std::string &msg) {
  llvm::errs() << "zeroc: error: " << msg << "\n";
  return 1;
}

struct ImportArgs {
  std::string model, dumpDir, output;
  bool elide = false;
  zeroc::OnnxImportOptions options;
};

int runImport(int argc, char **argv) {
  ImportArgs args;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char *flag) -> const char * {
      if (a.rfind(std::string(flag) + "=", 0) == 0)
        return argv[i] + std::strlen(flag) + 1;
      if (a == flag && i + 1 < argc)
        return argv[++i];
      return nullptr;
    };
    if (a == "-h" || a == "--help") {
      llvm::outs() << kUsage;
      return 0;
    }
    if (a.rfind("--input-shape", 0) == 0) {
      const char *v = value("--input-shape");
      std::string error;
      if (!v)
        return usageError("--input-shape needs NAME=D0,D1,...");
      if (!zeroc::parseInputShapeFlag(v, args.options.inputShapes, error))
        return usageError(error);
    } else if (a.rfind("--dump-ir", 0) == 0) {
      const char *v = value("--dump-ir");
      if (!v)
        return usageError("--dump-ir needs a directory");
      args.dumpDir = v;
    } else if (a == "-o") {
      if (i + 1 >= argc)
        return usageError("-o needs a file name");
      args.output = argv[++i];
    } else if (a == "--allow-no-loss") {
      args.options.allowNoLoss = true;
    } else if (a == "--elide-constants") {
      args.elide = true;
    } else if (!a.empty() && a[0] == '-') {
      return usageError("unknown option '" + a + "'");
    } else if (args.model.empty()) {
      args.model = a;
    } else {
      return usageError("more than one model given ('" + args.model + "', '" + a + "')");
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
  mlir::OwningOpRef<mlir::ModuleOp> module =
      zeroc::importOnnxModel(context, args.model, args.options, error);
  if (!module)
    return fail(error);
  if (!zeroc::runPhases(*module, zeroc::importPhases(!args.options.allowNoLoss),
                        args.dumpDir, error))
    return fail(args.model + ": " + error);

  std::string text;
  llvm::raw_string_ostream os(text);
  mlir::OpPrintingFlags flags;
  if (args.elide)
    flags.elideLargeElementsAttrs(16);
  module->print(os, flags);
  if (args.output.empty()) {
    llvm::outs() << text;
    return 0;
  }
  if (!zeroc::writeFileAtomically(args.output, text, error))
    return fail(error);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2)
    return usageError("no command given");
  std::string cmd = argv[1];
  if (cmd == "-h" || cmd == "--help" || cmd == "help") {
    llvm::outs() << kUsage;
    return 0;
  }
  if (cmd == "import")
    return runImport(argc - 2, argv + 2);
  return usageError("unknown command '" + cmd + "'");
}
