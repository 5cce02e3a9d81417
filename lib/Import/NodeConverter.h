//===- NodeConverter.h - one ONNX node to graph ops -------------*- C++ -*-===//
#ifndef ZEROC_LIB_IMPORT_NODECONVERTER_H
#define ZEROC_LIB_IMPORT_NODECONVERTER_H

#include "GraphBuilder.h"

#include "mlir/IR/OperationSupport.h"

namespace zeroc::onnximport {

/// Accessors for one node's attributes and inputs, plus helpers that create
/// graph ops with inferred, verified result types. Conversions of the
/// individual op types live in Convert*.cpp and use only this interface.
class NodeConverter {
public:
  NodeConverter(GraphBuilder &gb, const onnx::NodeProto &node, int index);

  const onnx::NodeProto &node;
  GraphBuilder &gb;
  mlir::Location loc;

  // Attributes (type-checked; throw ImportError on a wrong type).
  const onnx::AttributeProto *attr(const char *name) const;
  int64_t attrInt(const char *name, int64_t dflt) const;
  /// A float attribute that configures the op: it must be finite.
  float attrFloat(const char *name, float dflt) const;
  /// A float attribute that is data (a constant's value): any float.
  float attrFloatValue(const char *name, float dflt) const;
  std::string attrString(const char *name, const std::string &dflt) const;
  std::optional<std::vector<int64_t>> attrInts(const char *name) const;

  // Inputs.
  bool hasInput(int i) const;
  Entry &input(int i);
  mlir::Value value(int i);
  mlir::RankedTensorType type(int i) { return input(i).type; }
  bool isConst(int i) { return hasInput(i) && input(i).constant != nullptr; }
  bool allConst();
  const HostTensor &constInput(int i, const char *what);
  std::vector<int64_t> constInts(int i, const char *what);

  // Outputs.
  void setOutput(int i, mlir::Value v);
  void setOutput(int i, HostTensor h);
  void forward(int out, int in) { gb.valueTable()[node.output(out)] = input(in); }
  /// Marks outputs [from, n) as not modelled, failing later if one is read.
  void unmodeledOutputs(int from, const std::string &why);

  /// Normalizes a possibly negative axis against `rank`.
  int64_t normAxis(int64_t axis, int64_t rank) const;

  /// Creates an op whose result types its inferReturnTypes computes.
  mlir::Operation *create(llvm::StringRef opName, mlir::ValueRange operands,
                          llvm::ArrayRef<mlir::NamedAttribute> attrs,
                          mlir::TypeRange explicitTypes = {});
  mlir::NamedAttribute named(llvm::StringRef name, mlir::Attribute a) {
    return gb.builder().getNamedAttr(name, a);
  }
  mlir::ArrayAttr i64Array(llvm::ArrayRef<int64_t> v) {
    return gb.builder().getI64ArrayAttr(v);
  }
  mlir::RankedTensorType typeWith(const std::vector<int64_t> &dims, int32_t dtype) {
    return gb.tensorType(dims, dtype);
  }
  int32_t dtype(int i) { return gb.dtypeOf(type(i).getElementType()); }

private:
  int index;
};

/// The dims of a static tensor type as a vector (the host folding API).
inline std::vector<int64_t> shapeVector(mlir::RankedTensorType t) {
  return std::vector<int64_t>(t.getShape().begin(), t.getShape().end());
}

/// The double with the shortest decimal form that rounds to `f` (so a float
/// attribute 0.1f becomes 0.1, not 0.10000000149011612).
double shortestDouble(float f);

/// Re-types input 0 to `dims` (same element count): folds when constant,
/// else graph.reshape (ConvertShapeOps.cpp).
void reshapeTo(NodeConverter &c, const std::vector<int64_t> &dims);

/// Per-category conversions; each returns false when it does not handle the
/// node's op type.
bool convertShapeOp(NodeConverter &c);
bool convertComputeOp(NodeConverter &c);
/// Comparisons, logic, IsNaN/IsInf, float math, Max/Min, Clip, Gelu,
/// CastLike (ConvertElementwiseOps.cpp).
bool convertElementwiseOp(NodeConverter &c);

/// Cast of input 0 to ONNX element type `to` (folded on constants).
void convertCastTo(NodeConverter &c, int64_t to);
bool convertSequenceOp(NodeConverter &c);
bool convertConvOp(NodeConverter &c);
/// Pad, Tile, Flatten, GatherElements, GatherND, ScatterND, ScatterElements,
/// CumSum (ConvertMovementOps.cpp).
bool convertMovementOp(NodeConverter &c);
/// Range, NonZero, OneHot, ReduceMin, ReduceProd: folded at import only
/// (ConvertFoldOnlyOps.cpp).
bool convertFoldOnlyOp(NodeConverter &c);

} // namespace zeroc::onnximport

#endif // ZEROC_LIB_IMPORT_NODECONVERTER_H
