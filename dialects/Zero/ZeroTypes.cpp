//===- ZeroTypes.cpp - zero dialect enums, attributes and types -----------===//
#include "zeroc/Dialect/Zero/ZeroTypes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace zeroc::zero;

#include "zeroc/Dialect/Zero/ZeroEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "zeroc/Dialect/Zero/ZeroAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "zeroc/Dialect/Zero/ZeroTypes.cpp.inc"

void ZeroDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "zeroc/Dialect/Zero/ZeroAttrs.cpp.inc"
      >();
}

void ZeroDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "zeroc/Dialect/Zero/ZeroTypes.cpp.inc"
      >();
}

/// Buffers hold numbers: any float or signless/signed/unsigned integer type.
static bool isBufferElementType(Type type) {
  return llvm::isa<FloatType, IntegerType>(type);
}

//===----------------------------------------------------------------------===//
// FlatType
//===----------------------------------------------------------------------===//

LogicalResult FlatType::verify(function_ref<InFlightDiagnostic()> emitError,
                               BufferKind kind, Type elementType, int64_t size,
                               int64_t world) {
  if (size <= 0)
    return emitError() << "flat buffer size must be positive, got " << size;
  if (world < 1)
    return emitError() << "flat buffer world size must be at least 1, got "
                       << world;
  if (size % world != 0)
    return emitError() << "flat buffer size " << size
                       << " is not padded to a multiple of the world size "
                       << world;
  if (!isBufferElementType(elementType))
    return emitError()
           << "flat buffer element type must be a float or integer type, got "
           << elementType;
  return success();
}

ShardType FlatType::getShardType(MemorySpace space) const {
  return ShardType::get(getContext(), getKind(), getElementType(),
                        getShardSize(), space);
}

//===----------------------------------------------------------------------===//
// ShardType
//===----------------------------------------------------------------------===//

LogicalResult ShardType::verify(function_ref<InFlightDiagnostic()> emitError,
                                BufferKind kind, Type elementType,
                                int64_t size, MemorySpace space) {
  if (size <= 0)
    return emitError() << "shard size must be positive, got " << size;
  if (!isBufferElementType(elementType))
    return emitError()
           << "shard element type must be a float or integer type, got "
           << elementType;
  return success();
}

//===----------------------------------------------------------------------===//
// TokenType
//===----------------------------------------------------------------------===//

LogicalResult TokenType::verify(function_ref<InFlightDiagnostic()> emitError,
                                Type payload) {
  auto tensor = llvm::dyn_cast<RankedTensorType>(payload);
  if (llvm::isa<FlatType, ShardType>(payload) ||
      (tensor && tensor.hasStaticShape()))
    return success();
  return emitError() << "token payload must be a !zero.flat, a !zero.shard or "
                        "a statically shaped tensor, got "
                     << payload;
}
