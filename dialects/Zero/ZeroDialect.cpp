//===- ZeroDialect.cpp - zero dialect registration ------------------------===//
#include "zeroc/Dialect/Zero/ZeroDialect.h"
#include "zeroc/Dialect/Zero/ZeroOps.h"
#include "zeroc/Dialect/Zero/ZeroTypes.h"

using namespace mlir;
using namespace zeroc::zero;

#include "zeroc/Dialect/Zero/ZeroDialect.cpp.inc"

void ZeroDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "zeroc/Dialect/Zero/ZeroOps.cpp.inc"
      >();
  registerAttributes();
  registerTypes();
}
