//===- OnnxModelLoader.h - read and validate an untrusted ONNX file -*- C++ -*-===//
//
// Everything that happens to a model file before IR is built: size limits,
// protobuf parsing, the opset range, the list of unsupported ops, external
// data confined to the model's directory, topological order, input shape
// binding, per-node checks by op version (OpVersions.h), and onnx::checker
// and onnx::shape_inference where libonnx knows every node's version. Each step throws
// ImportError with a message naming the node, input or initializer at fault.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_IMPORT_ONNXMODELLOADER_H
#define ZEROC_LIB_IMPORT_ONNXMODELLOADER_H

#include "OnnxGraphChecks.h"
#include "OpVersions.h"

#include "onnx/onnx_pb.h"

#include <map>
#include <string>
#include <vector>

namespace zeroc::onnximport {

/// "node 'name' (OpType)" for messages; names the node by index if unnamed.
std::string describeNode(const onnx::NodeProto &node, int index);

/// Whether the importer has a conversion for this default-domain op type.
bool isSupportedOpType(const std::string &opType);

/// Reads and validates `path`, returning a model whose tensors are all
/// in memory (or, for large float initializers with external data, mapped
/// into `mapped` when it is given), whose graph inputs have the shapes bound
/// by `inputShapes`, and whose value_info holds onnx::shape_inference's
/// results.
onnx::ModelProto
loadModel(const std::string &path,
          const std::map<std::string, std::vector<int64_t>> &inputShapes,
          MappedInitializers *mapped = nullptr);

} // namespace zeroc::onnximport

#endif // ZEROC_LIB_IMPORT_ONNXMODELLOADER_H
