//===- ParamLookup.h - symbol checks shared by zero op verifiers -*- C++ -*-===//
#ifndef ZEROC_DIALECT_ZERO_PARAMLOOKUP_H
#define ZEROC_DIALECT_ZERO_PARAMLOOKUP_H

#include "zeroc/Dialect/Graph/GraphOps.h"
#include "zeroc/Dialect/Zero/ZeroTypes.h"

#include "mlir/IR/SymbolTable.h"

namespace zeroc::zero {

/// The graph.param named by `ref` (a trainable one if `trainable`), or null
/// after a diagnostic on `op`.
graph::ParamOp lookupParam(mlir::Operation *op, mlir::FlatSymbolRefAttr ref,
                           mlir::SymbolTableCollection &symbols,
                           bool trainable);

/// The graph.param named by `ref` whose params shard `shard` is (its kind
/// params, its element type the parameter's), or null after a diagnostic on
/// `op` naming the shard as `what` ("result", "shard").
graph::ParamOp lookupParamOfShard(mlir::Operation *op,
                                  mlir::FlatSymbolRefAttr ref, ShardType shard,
                                  llvm::StringRef what,
                                  mlir::SymbolTableCollection &symbols,
                                  bool trainable);

} // namespace zeroc::zero

#endif // ZEROC_DIALECT_ZERO_PARAMLOOKUP_H
