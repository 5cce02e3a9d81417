//===- zeroc-opt.cpp - zeroc's mlir-opt for lit tests ---------------------===//
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "zeroc/InitAll.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  zeroc::registerAllDialects(registry);
  zeroc::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "zeroc optimizer driver\n", registry));
}
