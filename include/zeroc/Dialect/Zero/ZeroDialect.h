//===- ZeroDialect.h - zero dialect declaration -----------------*- C++ -*-===//
#ifndef ZEROC_DIALECT_ZERO_ZERODIALECT_H
#define ZEROC_DIALECT_ZERO_ZERODIALECT_H

#include "mlir/IR/Dialect.h"

#include "zeroc/Dialect/Zero/ZeroDialect.h.inc"

#endif // ZEROC_DIALECT_ZERO_ZERODIALECT_H
