//===- EmitTypes.cpp - Types and data as the runtime ABI spells them ------===//
#include "zeroc/Emit/EmitTypes.h"

#include "zeroc/Dialect/Graph/ElementsData.h"
#include "zeroc/Dialect/Zero/ZeroOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace zeroc {

std::optional<Shape> shapeOf(Type t) {
  if (auto tok = llvm::dyn_cast<zero::TokenType>(t))
    t = tok.getPayload(); // a started collective's storage is its payload's
  if (auto rt = llvm::dyn_cast<RankedTensorType>(t))
    return Shape{rt.getElementType(), SmallVector<int64_t>(rt.getShape())};
  if (auto f = llvm::dyn_cast<zero::FlatType>(t))
    return Shape{f.getElementType(), {f.getSize()}};
  if (auto s = llvm::dyn_cast<zero::ShardType>(t))
    return Shape{s.getElementType(), {s.getSize()}};
  return std::nullopt;
}

const char *dtypeName(Type t) {
  if (t.isF32()) return "ZEROC_RT_DTYPE_F32";
  if (t.isF64()) return "ZEROC_RT_DTYPE_F64";
  if (t.isF16()) return "ZEROC_RT_DTYPE_F16";
  if (t.isBF16()) return "ZEROC_RT_DTYPE_BF16";
  if (t.isInteger(64)) return "ZEROC_RT_DTYPE_I64";
  if (t.isInteger(32)) return "ZEROC_RT_DTYPE_I32";
  if (t.isInteger(1)) return "ZEROC_RT_DTYPE_BOOL";
  return nullptr;
}

std::string dimsInit(ArrayRef<int64_t> dims) {
  std::string s = "{";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "}";
}

LogicalResult appendElements(Operation *where, ElementsAttr attr,
                             ModelBlob &blob, StringRef target) {
  Type elem = attr.getElementType();
  if (!dtypeName(elem))
    return where->emitOpError("has a constant of element type ")
           << elem << " the " << target << " target does not support";
  ArrayRef<char> raw = graph::rawElementBytes(attr);
  int64_t bytesPerElem = elem.isInteger(1) ? 1 : elem.getIntOrFloatBitWidth() / 8;
  if (!raw.empty() || attr.getNumElements() == 0) {
    if (static_cast<int64_t>(raw.size()) != attr.getNumElements() * bytesPerElem)
      return where->emitOpError("has a constant whose data does not match its type");
    blob.reference(raw);
    return success();
  }
  if (llvm::isa<DenseResourceElementsAttr>(attr))
    return where->emitOpError("has a dense_resource constant without data");
  auto dense = llvm::dyn_cast<DenseElementsAttr>(attr);
  if (!dense)
    return where->emitOpError("has a non-dense constant the emitter cannot store");
  std::string bytes;
  auto put = [&](const void *p, size_t n) {
    bytes.append(static_cast<const char *>(p), n);
  };
  if (elem.isF32()) {
    for (float v : dense.getValues<float>()) put(&v, 4);
  } else if (elem.isF64()) {
    for (double v : dense.getValues<double>()) put(&v, 8);
  } else if (elem.isInteger(64)) {
    for (int64_t v : dense.getValues<int64_t>()) put(&v, 8);
  } else if (elem.isInteger(32)) {
    for (int32_t v : dense.getValues<int32_t>()) put(&v, 4);
  } else if (elem.isInteger(1)) {
    for (bool v : dense.getValues<bool>()) {
      uint8_t b = v;
      put(&b, 1);
    }
  } else {
    for (APFloat v : dense.getValues<APFloat>()) {
      uint16_t bits = static_cast<uint16_t>(v.bitcastToAPInt().getZExtValue());
      put(&bits, 2);
    }
  }
  blob.append(bytes.data(), bytes.size());
  return success();
}

} // namespace zeroc
