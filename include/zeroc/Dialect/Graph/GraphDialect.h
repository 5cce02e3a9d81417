//===- GraphDialect.h - graph dialect declaration ---------------*- C++ -*-===//
#ifndef ZEROC_DIALECT_GRAPH_GRAPHDIALECT_H
#define ZEROC_DIALECT_GRAPH_GRAPHDIALECT_H

#include "mlir/IR/Dialect.h"

#include "zeroc/Dialect/Graph/GraphOpsDialect.h.inc"

#endif // ZEROC_DIALECT_GRAPH_GRAPHDIALECT_H
