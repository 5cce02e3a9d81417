//===- GraphDialect.cpp - graph dialect registration ----------------------===//
#include "zeroc/Dialect/Graph/GraphDialect.h"
#include "zeroc/Dialect/Graph/GraphOps.h"

using namespace mlir;
using namespace zeroc::graph;

#include "zeroc/Dialect/Graph/GraphOpsDialect.cpp.inc"
#include "zeroc/Dialect/Graph/GraphInterfaces.cpp.inc"

void GraphDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "zeroc/Dialect/Graph/GraphOps.cpp.inc"
      >();
}

Operation *GraphDialect::materializeConstant(OpBuilder &builder,
                                             Attribute value, Type type,
                                             Location loc) {
  auto elements = llvm::dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return builder.create<ConstantOp>(loc, type, elements);
}
