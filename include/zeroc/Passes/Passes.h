//===- Passes.h - zeroc passes ----------------------------------*- C++ -*-===//
#ifndef ZEROC_PASSES_PASSES_H
#define ZEROC_PASSES_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "zeroc/Dialect/Graph/GraphDialect.h"
#include "zeroc/Dialect/Zero/ZeroDialect.h"
#include "zeroc/Passes/CommCostModel.h"
#include "zeroc/Passes/ComputeCostModel.h"

namespace zeroc {

#define GEN_PASS_DECL
#include "zeroc/Passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "zeroc/Passes/Passes.h.inc"

} // namespace zeroc

#endif // ZEROC_PASSES_PASSES_H
