//===- ElementsData.h - the bytes of a constant or initial value -*- C++ -*-===//
//
// Parameters' initial values are `dense_resource` blobs when they are large
// (the importer maps them from the weight file; nothing copies them) and
// `dense` attributes otherwise. Code that needs the element bytes (the
// emitter, mixed precision, tied-weight detection) reads them through here.
//
//===----------------------------------------------------------------------===//
#ifndef ZEROC_DIALECT_GRAPH_ELEMENTSDATA_H
#define ZEROC_DIALECT_GRAPH_ELEMENTSDATA_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/Support/Endian.h"

namespace zeroc::graph {

/// The bytes of `attr` when they are stored one element after the other in
/// little-endian order (a dense_resource blob, or a dense attribute that is
/// neither a splat nor i1), else an empty range.
inline llvm::ArrayRef<char> rawElementBytes(mlir::ElementsAttr attr) {
  static_assert(llvm::endianness::native == llvm::endianness::little,
                "zeroc stores tensors little-endian");
  if (auto res = llvm::dyn_cast<mlir::DenseResourceElementsAttr>(attr)) {
    if (mlir::AsmResourceBlob *b = res.getRawHandle().getBlob())
      return b->getData();
    return {};
  }
  auto dense = llvm::dyn_cast<mlir::DenseElementsAttr>(attr);
  if (!dense || dense.isSplat() || dense.getElementType().isInteger(1))
    return {};
  return dense.getRawData();
}

} // namespace zeroc::graph

#endif // ZEROC_DIALECT_GRAPH_ELEMENTSDATA_H
