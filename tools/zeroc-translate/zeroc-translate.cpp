//===- zeroc-translate.cpp - zeroc's mlir-translate for lit tests ---------===//
//
// Prints what the emitters make of a planned module, so that test/Emit can
// FileCheck it:
//   zeroc-opt --zero-train-pipeline='stage=1 world-size=2' m.mlir | zeroc-translate --emit-cpu
//
//===----------------------------------------------------------------------===//
#include "zeroc/Emit/CpuEmitter.h"
#include "zeroc/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"

int main(int argc, char **argv) {
  mlir::TranslateFromMLIRRegistration emitCpu(
      "emit-cpu", "the CPU target's train.cpp for a planned module",
      [](mlir::Operation *op, llvm::raw_ostream &os) -> mlir::LogicalResult {
        auto module = llvm::dyn_cast<mlir::ModuleOp>(op);
        if (!module)
          return op->emitError("--emit-cpu needs a module");
        zeroc::EmittedProgram program;
        if (mlir::failed(zeroc::emitCpuProgram(module, "", program)))
          return mlir::failure();
        os << program.source;
        return mlir::success();
      },
      [](mlir::DialectRegistry &registry) { zeroc::registerAllDialects(registry); });
  return mlir::failed(mlir::mlirTranslateMain(argc, argv, "zeroc translate driver\n"));
}
