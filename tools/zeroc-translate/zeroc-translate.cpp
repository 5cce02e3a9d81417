//===- zeroc-translate.cpp - zeroc's mlir-translate for lit tests ---------===//
//
// Prints what the emitters make of a planned module, so that test/Emit can
// FileCheck it:
//   zeroc-opt --zero-train-pipeline='stage=1 world-size=2' m.mlir | zeroc-translate --emit-cpu
//   zeroc-opt --zero-train-pipeline='stage=3 world-size=2 target=cuda' m.mlir | zeroc-translate --emit-cuda
//
//===----------------------------------------------------------------------===//
#include "zeroc/Emit/CpuEmitter.h"
#include "zeroc/Emit/CudaEmitter.h"
#include "zeroc/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"

namespace {

using Emitter = mlir::LogicalResult (*)(mlir::ModuleOp, const std::string &,
                                        zeroc::EmittedProgram &);

/// --emit-<target>: the program `emit` prints for a planned module.
void registerEmitter(const char *flag, const char *description, Emitter emit) {
  mlir::TranslateFromMLIRRegistration(
      flag, description,
      [flag, emit](mlir::Operation *op, llvm::raw_ostream &os) -> mlir::LogicalResult {
        auto module = llvm::dyn_cast<mlir::ModuleOp>(op);
        if (!module)
          return op->emitError("--") << flag << " needs a module";
        zeroc::EmittedProgram program;
        if (mlir::failed(emit(module, "", program)))
          return mlir::failure();
        os << program.source;
        return mlir::success();
      },
      [](mlir::DialectRegistry &registry) { zeroc::registerAllDialects(registry); });
}

} // namespace

int main(int argc, char **argv) {
  registerEmitter("emit-cpu", "the CPU target's train.cpp for a planned module",
                  zeroc::emitCpuProgram);
  registerEmitter("emit-cuda", "the CUDA target's train.cu for a planned module",
                  zeroc::emitCudaProgram);
  return mlir::failed(mlir::mlirTranslateMain(argc, argv, "zeroc translate driver\n"));
}
