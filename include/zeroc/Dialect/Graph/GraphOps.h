//===- GraphOps.h - graph dialect ops ---------------------------*- C++ -*-===//
#ifndef ZEROC_DIALECT_GRAPH_GRAPHOPS_H
#define ZEROC_DIALECT_GRAPH_GRAPHOPS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "zeroc/Dialect/Graph/GraphDialect.h"

#include "zeroc/Dialect/Graph/GraphInterfaces.h.inc"

#define GET_OP_CLASSES
#include "zeroc/Dialect/Graph/GraphOps.h.inc"

namespace zeroc::graph {

/// Name of the unit attribute that marks the loss among @forward's results.
inline constexpr llvm::StringLiteral kLossAttrName = "graph.loss";
/// Names of the argument/result attributes carrying ONNX value names.
inline constexpr llvm::StringLiteral kInputAttrName = "graph.input";
inline constexpr llvm::StringLiteral kOutputAttrName = "graph.output";
/// Result attribute of @forward (and @forward_backward) naming the
/// graph.buffer the result is the new value of.
inline constexpr llvm::StringLiteral kBufferUpdateAttrName = "graph.buffer_update";

/// The ONNX node or initializer name the importer put into `loc` (a
/// NameLoc, possibly inside a FusedLoc), or "".
inline std::string onnxNameOf(mlir::Location loc) {
  if (auto name = llvm::dyn_cast<mlir::NameLoc>(loc))
    return name.getName().str();
  if (auto fused = llvm::dyn_cast<mlir::FusedLoc>(loc))
    for (mlir::Location l : fused.getLocations())
      if (std::string n = onnxNameOf(l); !n.empty())
        return n;
  return "";
}

/// Computes the numpy broadcast of two static shapes; fails when a dim pair
/// is neither equal nor 1.
mlir::FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);

/// Number of elements of the normalized slice [start:end:step] (step != 0);
/// safe for steps of any magnitude, including INT64_MIN.
int64_t sliceSize(int64_t start, int64_t end, int64_t step);

/// The result shape of graph.pad of a tensor of shape `in` (pads: begins,
/// then ends), checking what `mode` needs of every dim; on failure `why`
/// says what is wrong. The importer folds constant Pads with the same rule.
mlir::FailureOr<llvm::SmallVector<int64_t>>
padShape(llvm::ArrayRef<int64_t> in, llvm::ArrayRef<int64_t> pads,
         llvm::StringRef mode, std::string &why);

/// Whether `op` computes each element of its result from the same element
/// of its (broadcast) operands alone, in a way one fused kernel can repeat
/// exactly: the float unary ops, add/sub/mul/div/max/min, gelu, unary_grad
/// and training-mode dropout (its mask is a function of the element index),
/// every operand and the result of one float element type; and where, with
/// an i1 condition. The ops a graph.fused_elementwise body may hold.
bool isFusableElementwise(mlir::Operation *op);

/// Fails with "axis N is out of range for rank R" on `op` unless
/// 0 <= axis < rank.
mlir::LogicalResult verifyAxis(mlir::Operation *op, int64_t axis, int64_t rank);

/// Whether `op` is in the body of a fused op (graph.fused_elementwise,
/// fused_softmax, fused_softmax_grad, fused_attention(_grad)): a value of
/// one element at a time, which a kernel keeps in registers.
bool isInFusedBody(mlir::Operation *op);

/// The loss type of a softmax cross-entropy of `scores` against `labels`
/// with `reduction` (the scores' element type; the labels' shape for
/// "none", a scalar for "mean" and "sum"); failure, with an error at `loc`
/// naming `opName`, for shapes or a reduction it does not take.
mlir::FailureOr<mlir::RankedTensorType>
crossEntropyLossType(std::optional<mlir::Location> loc, llvm::StringRef opName,
                     mlir::Type scores, mlir::Type labels, mlir::StringAttr reduction);

/// Whether graph.fused_attention's kernels take heads of `d` elements and
/// elements of `type`: 16, 32, 64 or 128 of f16 or bf16 (tensor cores).
bool isAttentionHead(int64_t d);
bool isAttentionElement(mlir::Type type);

} // namespace zeroc::graph

#endif // ZEROC_DIALECT_GRAPH_GRAPHOPS_H
