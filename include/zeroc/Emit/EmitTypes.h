//===- EmitTypes.h - Types and data as the runtime ABI spells them -*- C++ -*-===//
//
// Shared by the target-neutral ProgramPrinter and every target printer: the
// element type and shape of a stored value, its zeroc_rt_dtype_t, and a
// constant's bytes in the layout the runtime reads from model.bin.
//
//===----------------------------------------------------------------------===//
#ifndef ZEROC_EMIT_EMITTYPES_H
#define ZEROC_EMIT_EMITTYPES_H

#include "zeroc/Emit/ModelBlob.h"

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Types.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace zeroc {

/// Alignment of every entry of model.bin (initial values, constants), in
/// bytes.
inline constexpr int64_t kBlobAlignment = 64;

/// Element type and shape of anything the emitter stores: ranked tensors
/// and zero buffers (as rank-1 tensors of their size).
struct Shape {
  mlir::Type elem;
  llvm::SmallVector<int64_t> dims;
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : dims)
      n *= d;
    return n;
  }
};

/// The shape of a ranked tensor, !zero.flat, !zero.shard or token (its
/// payload's: a started collective's storage); nullopt for anything else.
std::optional<Shape> shapeOf(mlir::Type t);

/// The zeroc_rt_dtype_t enumerator of an element type; null if the runtime
/// has none.
const char *dtypeName(mlir::Type t);

/// A braced initializer list of `dims`: "{2, 3}".
std::string dimsInit(llvm::ArrayRef<int64_t> dims);

/// Appends `attr`'s elements to `blob` in the runtime's layout. Raw data
/// (weights) is referenced, not copied: ModelBlob streams it at the end.
/// Diagnostics go to `where` and name `target` ("CPU").
mlir::LogicalResult appendElements(mlir::Operation *where,
                                   mlir::ElementsAttr attr, ModelBlob &blob,
                                   llvm::StringRef target);

} // namespace zeroc

#endif // ZEROC_EMIT_EMITTYPES_H
