//===- OnnxGraphChecks.h - structural checks of an untrusted graph -*- C++ -*-===//
//
// The steps of loadModel() before onnx::checker, each throwing ImportError
// with the node, input or initializer at fault (see docs/Import.md).
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_IMPORT_ONNXGRAPHCHECKS_H
#define ZEROC_LIB_IMPORT_ONNXGRAPHCHECKS_H

#include "onnx/onnx_pb.h"

#include <map>
#include <string>
#include <vector>

namespace zeroc::onnximport {

/// Rewrites the "ai.onnx" domain alias to "" (what onnx::checker expects).
void normalizeDomains(onnx::GraphProto &graph);
/// Lists every node whose op type zeroc has no conversion for.
void checkSupportedOps(const onnx::GraphProto &graph);
/// Graph inputs, outputs and initializers have supported element types.
void checkElementTypes(const onnx::GraphProto &graph);
/// Every value has one producer: no duplicate inputs/initializers, no node
/// output that redefines an input, an initializer or another node's output.
void checkSingleAssignment(const onnx::GraphProto &graph);
/// Every node input is defined by an earlier node, an input or initializer.
void checkTopologicalOrder(const onnx::GraphProto &graph);
/// Loads external tensor data, confined to the model's directory.
void resolveExternalData(onnx::GraphProto &graph, const std::string &modelDir);
/// Initializer names, dims and data sizes; no sparse initializers.
void checkInitializers(const onnx::GraphProto &graph);
/// Binds --input-shape dims and requires every data input dim to be static.
void bindInputShapes(onnx::GraphProto &graph,
                     const std::map<std::string, std::vector<int64_t>> &shapes);
/// Per-node attribute checks and onnx::checker::check_node, named by node.
void checkNodes(const onnx::ModelProto &model);

/// Bytes per element of a supported dtype, 0 for others.
int64_t elementBytes(int32_t dtype);

} // namespace zeroc::onnximport

#endif // ZEROC_LIB_IMPORT_ONNXGRAPHCHECKS_H
