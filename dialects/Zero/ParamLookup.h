//===- ParamLookup.h - symbol checks shared by zero op verifiers -*- C++ -*-===//
#ifndef ZEROC_DIALECT_ZERO_PARAMLOOKUP_H
#define ZEROC_DIALECT_ZERO_PARAMLOOKUP_H

#include "zeroc/Dialect/Graph/GraphOps.h"

#include "mlir/IR/SymbolTable.h"

namespace zeroc::zero {

/// The graph.param named by `ref` (a trainable one if `trainable`), or null
/// after a diagnostic on `op`.
graph::ParamOp lookupParam(mlir::Operation *op, mlir::FlatSymbolRefAttr ref,
                           mlir::SymbolTableCollection &symbols,
                           bool trainable);

} // namespace zeroc::zero

#endif // ZEROC_DIALECT_ZERO_PARAMLOOKUP_H
