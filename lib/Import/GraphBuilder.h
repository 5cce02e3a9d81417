//===- GraphBuilder.h - state of one ONNX graph import ----------*- C++ -*-===//
//
// GraphBuilder walks the (validated) ONNX graph in order and keeps, for every
// ONNX value name, its SSA value and, when it is known at compile time, its
// host value. Shape arithmetic folds on the host; everything else becomes a
// graph-dialect op whose result type the op's own inference computes.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_IMPORT_GRAPHBUILDER_H
#define ZEROC_LIB_IMPORT_GRAPHBUILDER_H

#include "HostTensor.h"
#include "OnnxGraphChecks.h"
#include "ParameterMarker.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "onnx/onnx_pb.h"

#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace zeroc::onnximport {

struct Entry {
  mlir::Value value;                          // null until materialized
  std::shared_ptr<const HostTensor> constant; // set when known at compile time
  mlir::DenseElementsAttr attr;               // large constants, made on use
  mlir::RankedTensorType type;
};

class GraphBuilder {
public:
  GraphBuilder(mlir::MLIRContext &ctx, const onnx::ModelProto &model,
               const std::string &path, bool allowNoLoss = false,
               MappedInitializers mapped = {});
  mlir::OwningOpRef<mlir::ModuleOp> build();

  // Element types and tensors.
  mlir::Type elementType(int32_t dtype) const;
  int32_t dtypeOf(mlir::Type elementType) const;
  mlir::RankedTensorType tensorType(const std::vector<int64_t> &dims,
                                    int32_t dtype) const;
  HostTensor toHost(const onnx::TensorProto &tensor) const;
  mlir::DenseElementsAttr toAttr(const onnx::TensorProto &tensor) const;
  /// A float initializer's value: a dense_resource blob when it is at least
  /// kResourceBytes (its mapped bytes, or a copy of the proto's), so that
  /// weights are neither uniqued, hashed nor printed into textual IR; a
  /// dense attribute otherwise.
  mlir::ElementsAttr initializerValue(const onnx::TensorProto &tensor) const;
  /// Whether `name` is a trainable parameter (graph.param trainable).
  bool isTrainableParam(const std::string &name) const {
    return trainableParams.count(name) != 0;
  }
  /// Whether `name` is a buffer the forward pass updates (graph.buffer: a
  /// training-mode BatchNormalization's running statistic).
  bool isBuffer(const std::string &name) const { return buffers.count(name) != 0; }
  /// Records `value` as buffer `name`'s new value (a result of @forward
  /// tagged graph.buffer_update); `by` names the node, for errors.
  void setBufferUpdate(const std::string &name, mlir::Value value,
                       const std::string &by);
  /// The exporter that wrote the model (ModelProto.producer_name).
  const std::string &producerName() const { return model.producer_name(); }
  /// The padding_idx the parameter marker records for parameter `name`
  /// (an nn.Embedding weight), if any.
  std::optional<int64_t> paddingIdxOf(const std::string &name) const {
    auto it = paddingIdx.find(name);
    if (it == paddingIdx.end())
      return std::nullopt;
    return it->second;
  }

  /// The SSA value of ONNX value `name`: loads parameters and materializes
  /// constants on first use.
  Entry &lookup(const std::string &name);
  /// `name` is the ONNX value's, for errors.
  mlir::Value materialize(Entry &e, mlir::Location loc,
                          const std::string &name);
  /// The most bytes of constant data the model may put into model.bin.
  void setMaxConstantBytes(int64_t bytes) { maxConstantBytes = bytes; }
  void setParamFlags(std::vector<OnnxImportOptions::ParamFlag> flags) {
    paramFlags = std::move(flags);
  }
  /// Notes and warnings of the import (folded tied weights, no marker).
  std::vector<ImportMessage> &importMessages() { return messages; }

  /// Counts a constant of `elements` x `width` bytes against that limit:
  /// every tensor folded on the host when it is made (as the 8-byte values
  /// zeroc holds), every other constant when it becomes IR.
  void chargeConstant(const std::string &name, int64_t elements,
                      int64_t width);

  mlir::MLIRContext &getContext() { return ctx; }
  mlir::OpBuilder &builder() { return b; }
  const std::string &getPath() const { return path; }
  int64_t opsetVersion() const { return opset; }
  std::unordered_map<std::string, Entry> &valueTable() { return values; }
  /// ONNX sequence values, resolved into their tensors (ConvertSequenceOps).
  std::unordered_map<std::string, std::vector<Entry>> &sequenceTable() {
    return sequences;
  }
  /// Records that output `name` exists in ONNX but has no IR value.
  void markUnmodeled(const std::string &name, const std::string &reason) {
    unmodeled[name] = reason;
  }
  /// Takes the first error diagnostic emitted since the last call.
  std::string takeDiagnostic() {
    std::string d = lastDiagnostic.empty() ? "invalid operation" : lastDiagnostic;
    lastDiagnostic.clear();
    return d;
  }

private:
  void declareParams(mlir::OpBuilder &moduleBuilder);
  void declareConstantInit(const onnx::TensorProto &init);
  void checkAgainstShapeInference(const std::string &name, const Entry &e);
  mlir::func::FuncOp buildForward();

  mlir::MLIRContext &ctx;
  const onnx::ModelProto &model;
  std::string path;
  MappedInitializers mapped;
  std::unordered_map<std::string, int64_t> paddingIdx;
  std::unordered_set<std::string> trainableParams;
  /// Initializers an exporter merged, restored (declareParams); their
  /// Identity nodes are skipped.
  std::unordered_set<std::string> unmerged;

public:
  bool isUnmerged(const std::string &name) const { return unmerged.count(name) != 0; }

private:
  mlir::ModuleOp module;
  mlir::OpBuilder b;
  std::unordered_map<std::string, Entry> values;
  std::unordered_map<std::string, std::vector<Entry>> sequences;
  std::unordered_map<std::string, std::string> unmodeled; // name -> reason
  std::unordered_map<std::string, mlir::RankedTensorType> params;
  std::unordered_map<std::string, mlir::RankedTensorType> buffers;
  /// Buffer name -> (new value, the node that computes it), in node order.
  std::vector<std::pair<std::string, mlir::Value>> bufferUpdates;
  std::unordered_map<std::string, std::string> bufferUpdatedBy;
  std::unordered_map<std::string, TiedInit> tied;
  std::vector<OnnxImportOptions::ParamFlag> paramFlags;
  std::vector<ImportMessage> messages;
  std::unordered_map<std::string, const onnx::TypeProto *> inferred;
  std::string lastDiagnostic;
  int64_t opset = 17;
  bool allowNoLoss;
  int64_t maxConstantBytes = INT64_MAX;
  int64_t constantBytes = 0;
  mlir::Block *entryBlock = nullptr;
  mlir::Operation *lastParamLoad = nullptr;
};

/// Converts one node; defined in NodeConverter.cpp.
void convertNode(GraphBuilder &builder, const onnx::NodeProto &node, int index);

} // namespace zeroc::onnximport

#endif // ZEROC_LIB_IMPORT_GRAPHBUILDER_H
