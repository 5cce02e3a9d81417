//===- OnnxImporter.h - ONNX model to graph dialect -------------*- C++ -*-===//
#ifndef ZEROC_IMPORT_ONNXIMPORTER_H
#define ZEROC_IMPORT_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <map>
#include <string>
#include <vector>

namespace zeroc {

struct OnnxImportOptions {
  /// Static dims for graph inputs, from --input-shape NAME=D0,D1,...
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// Accept a model without a scalar float output (nothing is marked
  /// graph.loss): for inspecting inference graphs and ONNX's node tests.
  bool allowNoLoss = false;
  /// The most bytes of constant data (tensors the graph computes from no
  /// input, which zeroc writes into model.bin) the model may hold in all:
  /// an 8 KB ConstantOfShape must not become a 4 GB file. From
  /// --max-constant-bytes.
  int64_t maxConstantBytes = kDefaultMaxConstantBytes;
  static constexpr int64_t kDefaultMaxConstantBytes = int64_t(256) << 20;
  /// --freeze GLOB / --trainable GLOB, in command-line order: `freeze`
  /// true moves the parameters matching `glob` to frozen, false makes the
  /// matching frozen parameters trainable (docs/Import.md, "Parameters").
  struct ParamFlag {
    bool freeze;
    std::string glob;
  };
  std::vector<ParamFlag> paramFlags;
};

/// What the importer tells the user besides errors: "note: ..." or
/// "warning: ..." lines (without the file name), printed by the driver
/// once the import succeeded.
struct ImportMessage {
  bool warning;
  std::string text;
};

/// Imports the ONNX model at `path` into a module holding graph.param symbols
/// and func.func @forward. The model is untrusted: on any problem this returns
/// null and sets `error` to one line naming the file and the ONNX node, input
/// or initializer at fault.
mlir::OwningOpRef<mlir::ModuleOp> importOnnxModel(mlir::MLIRContext &context,
                                                  const std::string &path,
                                                  const OnnxImportOptions &options,
                                                  std::string &error,
                                                  std::vector<ImportMessage> *messages = nullptr);

/// Prints `messages` as "zeroc: warning|note: MODEL: TEXT" lines to stderr.
void printImportMessages(const std::string &path,
                         const std::vector<ImportMessage> &messages);

/// Parses "NAME=D0,D1,..." into `shapes`; returns false with `error` set.
bool parseInputShapeFlag(const std::string &flag,
                         std::map<std::string, std::vector<int64_t>> &shapes,
                         std::string &error);

} // namespace zeroc

#endif // ZEROC_IMPORT_ONNXIMPORTER_H
