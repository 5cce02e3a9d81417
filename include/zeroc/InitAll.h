//===- InitAll.h - register every zeroc dialect and pass --------*- C++ -*-===//
#ifndef ZEROC_INITALL_H
#define ZEROC_INITALL_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "zeroc/Dialect/Graph/GraphDialect.h"
#include "zeroc/Passes/Passes.h"
#include "zeroc/Passes/TrainPipeline.h"
#include "zeroc/Dialect/Zero/ZeroDialect.h"

namespace zeroc {

inline void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::func::FuncDialect, graph::GraphDialect,
                  zero::ZeroDialect>();
}

inline void registerAllPasses() {
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  zeroc::registerZerocPasses();
  zeroc::registerTrainPipeline();
}

} // namespace zeroc

#endif // ZEROC_INITALL_H
