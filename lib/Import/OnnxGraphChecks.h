//===- OnnxGraphChecks.h - structural checks of an untrusted graph -*- C++ -*-===//
//
// The steps of loadModel() before onnx::checker, each throwing ImportError
// with the node, input or initializer at fault (see docs/Import.md).
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_IMPORT_ONNXGRAPHCHECKS_H
#define ZEROC_LIB_IMPORT_ONNXGRAPHCHECKS_H

#include "llvm/ADT/ArrayRef.h"
#include "onnx/onnx_pb.h"

#include <map>
#include <string>
#include <unordered_map>
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
/// Initializer name -> its bytes, mapped from the external-data file
/// (zeroc/Support/MappedFiles.h) rather than read.
using MappedInitializers = std::unordered_map<std::string, llvm::ArrayRef<char>>;
/// External data of initializers at least this large (float ones only) is
/// mapped, not read: a GPT-2-XL's 6 GB of weights never enter the heap.
constexpr int64_t kMapExternalBytes = int64_t(64) << 10;
/// Loads external tensor data, confined to the model's directory; large
/// float initializers are mapped into `mapped` instead (when given) and stay
/// external in the proto.
void resolveExternalData(onnx::GraphProto &graph, const std::string &modelDir,
                         MappedInitializers *mapped = nullptr);
/// Initializer names, dims and data sizes; no sparse initializers.
void checkInitializers(const onnx::GraphProto &graph);
/// Binds --input-shape dims and requires every data input dim to be static.
void bindInputShapes(onnx::GraphProto &graph,
                     const std::map<std::string, std::vector<int64_t>> &shapes);
/// Per-node checks, named by node: duplicate attributes, then each node's op
/// version at the model's opset (OpVersions.h) checked by
/// onnx::checker::check_node where libonnx has its schema (since <= 17),
/// else against zeroc's own signature. Returns whether libonnx knew every
/// node's version (then onnx::checker::check_model and shape inference
/// apply to the whole model).
bool checkNodes(const onnx::ModelProto &model);
/// A node that calls a model-local function (ModelProto.functions).
void checkNoLocalFunctions(const onnx::ModelProto &model);

/// The default-domain opset the model imports (0 if none).
int64_t defaultOpset(const onnx::ModelProto &model);

/// Bytes per element of a supported dtype, 0 for others.
int64_t elementBytes(int32_t dtype);

} // namespace zeroc::onnximport

#endif // ZEROC_LIB_IMPORT_ONNXGRAPHCHECKS_H
