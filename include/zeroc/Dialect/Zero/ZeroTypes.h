//===- ZeroTypes.h - zero dialect enums, attributes and types ---*- C++ -*-===//
#ifndef ZEROC_DIALECT_ZERO_ZEROTYPES_H
#define ZEROC_DIALECT_ZERO_ZEROTYPES_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/Types.h"
#include "zeroc/Dialect/Zero/ZeroDialect.h"

#include "zeroc/Dialect/Zero/ZeroEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "zeroc/Dialect/Zero/ZeroAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "zeroc/Dialect/Zero/ZeroTypes.h.inc"

#endif // ZEROC_DIALECT_ZERO_ZEROTYPES_H
