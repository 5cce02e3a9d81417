//===- ParameterMarker.h - which initializers are parameters ----*- C++ -*-===//
//
// Decides, once per model, what each float initializer is: a trainable
// parameter, a frozen parameter, a constant (a registered buffer), or a
// copy / transpose of a parameter that a constant-folding exporter made
// (re-tied to it). The sources, in order: the `zeroc.parameters` metadata
// the export helper writes, else ONNX's TrainingInfoProto update_binding,
// else every float initializer is trainable (with a warning); then
// --freeze / --trainable. docs/Import.md, "Parameters", has the rules.
//
//===----------------------------------------------------------------------===//
#ifndef ZEROC_LIB_IMPORT_PARAMETERMARKER_H
#define ZEROC_LIB_IMPORT_PARAMETERMARKER_H

#include "zeroc/Import/OnnxImporter.h"

#include "mlir/IR/BuiltinAttributes.h"

#include "onnx/onnx_pb.h"

#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace zeroc::onnximport {

enum class InitRole { Trainable, Frozen, Constant };

/// An initializer the graph reads as a parameter's value (`transposed`:
/// with its last two dims swapped) instead of as a parameter of its own.
struct TiedInit {
  std::string original;
  bool transposed = false;
};

struct ParameterPlan {
  /// Every float initializer that is not in `ties`.
  std::unordered_map<std::string, InitRole> roles;
  std::unordered_map<std::string, TiedInit> ties;
  /// nn.Embedding(padding_idx=...) of a parameter, from the marker.
  std::unordered_map<std::string, int64_t> paddingIdx;
  /// Tied weights' other state_dict names -> the parameter's name, from the
  /// marker (recorded as graph.aliases, for the saved weights).
  std::map<std::string, std::string> aliases;
  std::vector<ImportMessage> messages;
};

/// The float initializers of `model` with their values, in initializer
/// order; throws ImportError naming the marker entry or flag at fault.
ParameterPlan
planParameters(const onnx::ModelProto &model,
               const std::vector<std::pair<std::string, mlir::ElementsAttr>>
                   &floatInits,
               const std::vector<OnnxImportOptions::ParamFlag> &flags);

/// Finds float initializers that are bitwise copies or transposes (last two
/// dims swapped) of an original; TiedWeights.cpp. `isOriginal` and
/// `isCandidate` select by index into `inits`; candidates are tied to the
/// first original (in `order`) they equal. Tensors whose elements are all
/// equal are never tied. The ties come in `order`.
std::vector<std::pair<std::string, TiedInit>> findTiedInitializers(
    const std::vector<std::pair<std::string, mlir::ElementsAttr>> &inits,
    const std::vector<size_t> &order, const std::vector<bool> &isOriginal,
    const std::vector<bool> &isCandidate);

/// Whether every element of `value` has the same bytes (ones, zeros).
bool isUniform(mlir::ElementsAttr value);

} // namespace zeroc::onnximport

#endif // ZEROC_LIB_IMPORT_PARAMETERMARKER_H
