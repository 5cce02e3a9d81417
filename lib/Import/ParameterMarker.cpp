//===- ParameterMarker.cpp - trainable, frozen, constant, tied ------------===//
//
// One place decides what every float initializer becomes (ParameterMarker.h,
// docs/Import.md "Parameters"); GraphBuilder records the decision in the IR.
//
//===----------------------------------------------------------------------===//
#include "ParameterMarker.h"

#include "zeroc/Dialect/Graph/ElementsData.h"

#include "HostTensor.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/GlobPattern.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/xxhash.h"

#include <map>
#include <set>
#include <unordered_set>

using namespace mlir;

namespace zeroc::onnximport {

namespace {

constexpr const char *kMarkerKey = "zeroc.parameters";
constexpr const char *kHelper = "python3 -m zeroc_torch.export";

/// What the model says about its initializers.
struct Marker {
  std::string source; ///< for messages: "metadata 'zeroc.parameters'", ...
  std::vector<std::string> trainable, frozen, buffers;
  std::map<std::string, int64_t> paddingIdx;
  /// Tied weights' other state_dict names -> the initializer's name.
  std::map<std::string, std::string> aliases;
  /// What to do when a listed parameter is not an initializer.
  std::string reexport;
};

ImportError markerError(const std::string &what) {
  return ImportError(std::string("metadata '") + kMarkerKey + "' " + what +
                     "; re-export the model with " + kHelper);
}

std::vector<std::string> stringList(const llvm::json::Object &o,
                                    llvm::StringRef key) {
  std::vector<std::string> out;
  const llvm::json::Value *v = o.get(key);
  if (!v)
    return out;
  const llvm::json::Array *a = v->getAsArray();
  if (!a)
    throw markerError("has \"" + key.str() + "\" that is not a list of names");
  for (const llvm::json::Value &e : *a) {
    std::optional<llvm::StringRef> s = e.getAsString();
    if (!s)
      throw markerError("has \"" + key.str() + "\" with an entry that is not a string");
    out.push_back(s->str());
  }
  return out;
}

std::optional<Marker> readZerocMarker(const onnx::ModelProto &model) {
  const onnx::StringStringEntryProto *entry = nullptr;
  for (const auto &p : model.metadata_props())
    if (p.key() == kMarkerKey) {
      if (entry)
        throw markerError("is given twice");
      entry = &p;
    }
  if (!entry)
    return std::nullopt;
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(entry->value());
  if (!parsed) {
    std::string why = llvm::toString(parsed.takeError());
    throw markerError("is not valid JSON (" + why + ")");
  }
  const llvm::json::Object *o = parsed->getAsObject();
  if (!o)
    throw markerError("is not a JSON object");
  std::optional<int64_t> format = o->getInteger("format");
  if (!format)
    throw markerError("has no integer \"format\"");
  if (*format != 1)
    throw ImportError(std::string("metadata '") + kMarkerKey + "' has format " +
                      std::to_string(*format) +
                      "; this zeroc reads format 1 (export with the helper "
                      "of this zeroc: " + kHelper + ")");
  for (const auto &kv : *o) {
    llvm::StringRef k = kv.first;
    if (k != "format" && k != "trainable" && k != "frozen" && k != "buffers" &&
        k != "padding_idx" && k != "aliases")
      throw markerError("has the unknown key \"" + k.str() + "\"");
  }
  if (!o->get("trainable"))
    throw markerError("has no \"trainable\" list");
  // "aliases": the other state_dict names of tied weights (name -> the
  // initializer's name); recorded for the saved weights, nothing to train.
  if (const llvm::json::Value *v = o->get("aliases")) {
    const llvm::json::Object *al = v->getAsObject();
    if (!al)
      throw markerError("has \"aliases\" that is not an object");
    for (const auto &kv : *al)
      if (!kv.second.getAsString())
        throw markerError("has alias '" + kv.first.str() +
                          "' whose value is not a name");
  }
  Marker m;
  if (const llvm::json::Object *al = o->getObject("aliases"))
    for (const auto &kv : *al)
      m.aliases[kv.first.str()] = kv.second.getAsString()->str();
  m.source = std::string("metadata '") + kMarkerKey + "'";
  m.reexport = std::string("the exporter folded or merged it (constant "
                           "folding turns a Linear weight into its "
                           "transpose); re-export the model with ") +
               kHelper + " or with do_constant_folding=False";
  m.trainable = stringList(*o, "trainable");
  m.frozen = stringList(*o, "frozen");
  m.buffers = stringList(*o, "buffers");
  if (const llvm::json::Value *v = o->get("padding_idx")) {
    const llvm::json::Object *pad = v->getAsObject();
    if (!pad)
      throw markerError("has \"padding_idx\" that is not an object");
    for (const auto &kv : *pad) {
      std::optional<int64_t> idx = kv.second.getAsInteger();
      if (!idx)
        throw markerError("has padding_idx of '" + kv.first.str() +
                          "' that is not an integer");
      m.paddingIdx[kv.first.str()] = *idx;
    }
  }
  return m;
}

/// The graph signature torch's dynamo exporter records
/// (metadata "pkg.torch.export.ExportedProgram.graph_signature"): one line
/// per lifted input, "<name>: PARAMETER target='<fqn>'", "... BUFFER
/// target='<fqn>' persistent=...", "... CONSTANT_TENSOR target='<fqn>'".
/// Its parameters are the initializers named by their targets; every other
/// float initializer (its optimizer's folded masks and tables) is a constant.
std::optional<Marker> readExportedProgramSignature(const onnx::ModelProto &model) {
  const std::string *text = nullptr;
  for (const auto &p : model.metadata_props())
    if (p.key() == "pkg.torch.export.ExportedProgram.graph_signature")
      text = &p.value();
  if (!text)
    return std::nullopt;
  Marker m;
  m.source = "the dynamo exporter's graph signature";
  m.reexport = std::string("the exporter's optimizer merged it with an "
                           "initializer of equal value or folded it "
                           "(torch.onnx.export(..., optimize=True), the "
                           "default); re-export with optimize=False, or "
                           "with ") + kHelper;
  std::set<std::string> seen;
  for (llvm::StringRef line : llvm::split(*text, '\n')) {
    auto [head, rest] = line.split(": ");
    if (rest.empty())
      continue;
    auto [kind, attrs] = rest.split(' ');
    size_t at = attrs.find("target='");
    if (at == llvm::StringRef::npos)
      continue;
    llvm::StringRef target = attrs.drop_front(at + 8);
    target = target.take_until([](char c) { return c == '\''; });
    if (!seen.insert(target.str()).second)
      continue;
    if (kind == "PARAMETER")
      m.trainable.push_back(target.str());
    else if (kind == "BUFFER" || kind == "CONSTANT_TENSOR")
      m.buffers.push_back(target.str());
  }
  if (m.trainable.empty())
    return std::nullopt;
  return m;
}

/// ONNX's own marker: the initializers a TrainingInfoProto updates.
std::optional<Marker> readTrainingInfo(const onnx::ModelProto &model) {
  if (model.training_info_size() == 0)
    return std::nullopt;
  Marker m;
  m.source = "training_info's update_binding";
  m.reexport = "training_info names an initializer the graph does not have; "
               "re-export the model";
  std::set<std::string> seen;
  for (const auto &info : model.training_info())
    for (const auto &binding : info.update_binding())
      if (seen.insert(binding.key()).second)
        m.trainable.push_back(binding.key());
  return m;
}

bool hasScope(const std::string &name) {
  return name.find("::") != std::string::npos;
}

/// A name an exporter made, not the module: TorchScript's "onnx::MatMul_12"
/// and "/path/..." constants, the dynamo exporter's "val_26".
bool exporterMade(const std::string &name) {
  if (hasScope(name) || (!name.empty() && name[0] == '/'))
    return true;
  llvm::StringRef n(name);
  return n.consume_front("val_") && !n.empty() &&
         llvm::all_of(n, [](char ch) { return ch >= '0' && ch <= '9'; });
}

/// Without a marker, every float initializer would train. That is what
/// the module means only for an export that kept the module's tensors as
/// they are. Two exports are known not to, and are refused unless
/// --freeze/--trainable say what trains:
///  - initializers the exporter made (TorchScript's "onnx::MatMul_12" and
///    "/path/..." constants, the dynamo exporter's "val_26") that are read
///    by anything but MatMul/Gemm: constant folding wrote them, and they are
///    folded masks and position tables or parameter expressions, which
///    zeroc cannot tell apart (one read only by MatMul/Gemm is a folded
///    Linear weight, and trains);
///  - graphs from torch's dynamo exporter (its node names, "node_..."): its
///    optimizer folds BatchNorm into Conv weights and merges initializers
///    that hold equal values.
void checkUnmarkedExport(
    const onnx::ModelProto &model, ParameterPlan &plan,
    const std::vector<std::pair<std::string, ElementsAttr>> &floatInits,
    const std::unordered_set<std::string> &flagged, bool anyFlags) {
  const char *advice =
      "; export with python3 -m zeroc_torch.export (or torch.onnx.export "
      "with training=TrainingMode.TRAINING and do_constant_folding=False), "
      "or say what trains: --trainable GLOB trains the matching initializers, "
      "--freeze GLOB keeps them constant";
  int dynamoNodes = 0;
  for (const auto &node : model.graph().node())
    dynamoNodes += llvm::StringRef(node.name()).starts_with("node_");
  if (!anyFlags && model.graph().node_size() > 0 &&
      dynamoNodes * 2 > model.graph().node_size())
    throw ImportError(
        std::string("the model comes from torch's dynamo exporter and does not "
                    "mark its parameters: its optimizer (optimize=True, the "
                    "default) folds BatchNorm into Conv weights and merges "
                    "initializers that hold equal values, so its initializers "
                    "need not be the module's parameters") + advice +
        " (zeroc_torch.export --exporter dynamo runs it without the optimizer)");
  // A tensor whose elements are all equal (a fresh LayerNorm weight, a zero
  // bias) read by nodes of several modules (TorchScript names nodes by their
  // module's scope, "/transformer/h.1/ln_2/LayerNormalization") is what an
  // exporter that merges equal initializers leaves (torch.onnx's eval-mode
  // export, the dynamo optimizer); random tied weights are never uniform.
  std::unordered_map<std::string, std::set<std::string>> scopes;
  for (const auto &node : model.graph().node()) {
    llvm::StringRef n(node.name());
    if (!n.starts_with("/") || !n.contains('/'))
      continue;
    std::string scope = n.substr(0, n.rfind('/')).str();
    for (const std::string &in : node.input())
      scopes[in].insert(scope);
  }
  for (const auto &[name, value] : floatInits) {
    auto role = plan.roles.find(name);
    if (anyFlags || role == plan.roles.end() || role->second != InitRole::Trainable ||
        value.getNumElements() < 2 || !isUniform(value))
      continue;
    auto it = scopes.find(name);
    if (it == scopes.end() || it->second.size() < 2)
      continue;
    throw ImportError(
        "initializer '" + name + "' (every element equal) is read by nodes of " +
        std::to_string(it->second.size()) + " modules ('" + *it->second.begin() +
        "', '" + *std::next(it->second.begin()) + "', ...): the exporter "
        "merged initializers that held equal values (torch.onnx's eval-mode "
        "export does), which would train one tensor for all of them" + advice);
  }
  // A folded initializer read only by MatMul/Gemm is a folded Linear weight
  // (the transpose of a weight whose name is gone): it trains as a
  // parameter, exactly (Adam and weight decay are elementwise).
  std::unordered_map<std::string, bool> onlyMatmul;
  for (const auto &node : model.graph().node())
    for (const std::string &in : node.input()) {
      bool mm = node.op_type() == "MatMul" || node.op_type() == "Gemm";
      auto [it, fresh] = onlyMatmul.emplace(in, mm);
      if (!fresh)
        it->second = it->second && mm;
    }
  std::vector<std::string> refused;
  size_t folded = 0;
  std::string firstFolded;
  for (const auto &[name, role] : plan.roles) {
    if (role != InitRole::Trainable || flagged.count(name) || !exporterMade(name))
      continue;
    auto use = onlyMatmul.find(name);
    if (use != onlyMatmul.end() && use->second) {
      if (!folded++ || name < firstFolded)
        firstFolded = name;
      continue;
    }
    refused.push_back(name);
  }
  if (folded)
    plan.messages.push_back(
        {false, std::to_string(folded) + " initializer" + (folded == 1 ? "" : "s") +
                    " named by the exporter (e.g. '" + firstFolded +
                    "') feed only MatMul/Gemm: folded Linear weights, trained "
                    "as parameters under those names"});
  if (refused.empty())
    return;
  std::sort(refused.begin(), refused.end());
  std::string list;
  for (size_t i = 0; i < refused.size() && i < 4; ++i)
    list += (i ? ", '" : "'") + refused[i] + "'";
  if (refused.size() > 4)
    list += ", ...";
  throw ImportError(
      std::to_string(refused.size()) + " float initializer" +
      (refused.size() == 1 ? " was" : "s were") + " made by the exporter, not "
      "taken from the module (" + list + "): constant folding wrote folded "
      "weights, masks or position tables, or parameter expressions, which "
      "zeroc cannot tell apart" + advice);
}

} // namespace

ParameterPlan planParameters(
    const onnx::ModelProto &model,
    const std::vector<std::pair<std::string, ElementsAttr>> &floatInits,
    const std::vector<OnnxImportOptions::ParamFlag> &flags) {
  ParameterPlan plan;
  std::unordered_map<std::string, size_t> floatIndex;
  for (size_t i = 0; i < floatInits.size(); ++i)
    floatIndex[floatInits[i].first] = i;
  std::unordered_set<std::string> allInits;
  for (const auto &t : model.graph().initializer())
    allInits.insert(t.name());

  std::optional<Marker> marker = readZerocMarker(model);
  if (!marker)
    marker = readTrainingInfo(model);
  if (!marker)
    marker = readExportedProgramSignature(model);

  std::vector<bool> isOriginal(floatInits.size()), isCandidate(floatInits.size());
  std::vector<size_t> order;
  if (marker) {
    std::unordered_map<std::string, const char *> listed;
    auto take = [&](const std::vector<std::string> &names, const char *list,
                    InitRole role) {
      for (const std::string &name : names) {
        auto [it, fresh] = listed.emplace(name, list);
        if (!fresh)
          throw ImportError(
              marker->source + " lists '" + name + "' " +
              (it->second == list ? std::string("twice in \"") + list + "\""
                                  : std::string("in both \"") + it->second +
                                        "\" and \"" + list + "\"") +
              "; re-export the model with " + kHelper);
        if (role == InitRole::Constant) {
          // A buffer need not be a float initializer: integer buffers are
          // constants anyway, and exporters drop or fold unused ones.
          if (floatIndex.count(name))
            plan.roles[name] = role;
          continue;
        }
        if (!allInits.count(name))
          throw ImportError(
              marker->source + " lists parameter '" + name +
              "' but the graph has no initializer of that name: " +
              marker->reexport);
        auto f = floatIndex.find(name);
        if (f == floatIndex.end())
          throw ImportError(marker->source + " lists '" + name +
                            "' as a parameter but initializer '" + name +
                            "' is not a floating-point tensor; only float "
                            "tensors can be parameters");
        plan.roles[name] = role;
        isOriginal[f->second] = true;
      }
    };
    take(marker->trainable, "trainable", InitRole::Trainable);
    take(marker->frozen, "frozen", InitRole::Frozen);
    take(marker->buffers, "buffers", InitRole::Constant);
    for (size_t i = 0; i < floatInits.size(); ++i) {
      order.push_back(i);
      if (!listed.count(floatInits[i].first))
        isCandidate[i] = true;
    }
    for (const auto &[name, idx] : marker->paddingIdx) {
      auto role = plan.roles.find(name);
      if (role == plan.roles.end() || role->second == InitRole::Constant)
        throw markerError("gives padding_idx for '" + name +
                          "', which it does not list as a parameter");
      auto type = llvm::cast<RankedTensorType>(
          floatInits[floatIndex[name]].second.getShapedType());
      if (type.getRank() != 2 || idx < 0 || idx >= type.getDimSize(0))
        throw markerError("gives padding_idx " + std::to_string(idx) +
                          " for '" + name + "', which is not a row of that " +
                          std::to_string(type.getRank()) +
                          "-D initializer (an nn.Embedding weight is 2-D and "
                          "its padding_idx in [0, rows))");
      plan.paddingIdx[name] = idx;
    }
    for (const auto &[alias, name] : marker->aliases) {
      auto role = plan.roles.find(name);
      if (role == plan.roles.end() || role->second == InitRole::Constant)
        throw markerError("ties '" + alias + "' to '" + name +
                          "', which it does not list as a parameter");
      plan.aliases[alias] = name;
    }
  } else {
    // Every float initializer trains; only exporter-made names are
    // candidates for a folded tie (two parameters of the module may
    // legitimately hold equal values), tied to the model's own names.
    for (size_t i = 0; i < floatInits.size(); ++i) {
      isOriginal[i] = true;
      isCandidate[i] = exporterMade(floatInits[i].first);
      if (!hasScope(floatInits[i].first))
        order.push_back(i);
    }
    for (size_t i = 0; i < floatInits.size(); ++i)
      if (hasScope(floatInits[i].first))
        order.push_back(i);
    if (!floatInits.empty())
      plan.messages.push_back(
          {true, std::string("the model does not mark its parameters (no '") +
                     kMarkerKey + "' metadata, no training_info): every float "
                     "initializer is trained, registered buffers included; "
                     "export with " + kHelper +
                     ", or choose with --freeze GLOB / --trainable GLOB"});
    // Equal-valued tensors (ones, zeros) are never re-tied, and cannot be
    // told apart from an exporter's merge of several into one.
    std::unordered_map<uint64_t, int> uniformSeen;
    for (const auto &[name, value] : floatInits)
      if (isUniform(value)) {
        ArrayRef<char> raw = zeroc::graph::storedBytes(value);
        uint64_t h = llvm::xxh3_64bits(ArrayRef<uint8_t>(
            reinterpret_cast<const uint8_t *>(raw.data()),
            zeroc::graph::isSplatElements(value) ? raw.size() : raw.size() / value.getNumElements()));
        h ^= static_cast<uint64_t>(mlir::hash_value(value.getShapedType())) * 31;
        if (++uniformSeen[h] == 2) {
          plan.messages.push_back(
              {true, "several float initializers hold the same constant "
                     "value (e.g. '" + name + "'): zeroc trains each as its "
                     "own parameter, but an exporter that merges equal "
                     "initializers (the dynamo exporter's optimizer) makes "
                     "them one tensor that would train as one; the export "
                     "helper (" + std::string(kHelper) + ") avoids it"});
          break;
        }
      }
  }

  for (auto &[name, tie] :
       findTiedInitializers(floatInits, order, isOriginal, isCandidate)) {
    plan.roles.erase(name);
    plan.messages.push_back(
        {false, "initializer '" + name + "' is " +
                    (tie.transposed ? "the transpose" : "a copy") +
                    " of parameter '" + tie.original +
                    "' (an exporter folded a tied weight): zeroc reads it as " +
                    (tie.transposed ? "graph.transpose of " : "") + "'" +
                    tie.original + "', so both uses train one parameter"});
    plan.ties[name] = std::move(tie);
  }
  for (const auto &[name, value] : floatInits)
    if (!plan.ties.count(name) && !plan.roles.count(name))
      plan.roles[name] = marker ? InitRole::Constant : InitRole::Trainable;

  // --freeze / --trainable, in command-line order.
  std::unordered_set<std::string> flagged;
  for (const auto &flag : flags) {
    const char *opt = flag.freeze ? "--freeze" : "--trainable";
    llvm::Expected<llvm::GlobPattern> pattern = llvm::GlobPattern::create(flag.glob);
    if (!pattern) {
      llvm::consumeError(pattern.takeError());
      throw ImportError(std::string(opt) + " '" + flag.glob + "' is not a valid glob");
    }
    bool matched = false;
    for (const auto &[name, value] : floatInits) {
      auto role = plan.roles.find(name);
      if (role == plan.roles.end() || !pattern->match(name))
        continue;
      if (role->second == InitRole::Constant) {
        if (!flag.freeze)
          throw ImportError("--trainable '" + flag.glob + "' matches '" + name +
                            "', which the model marks as a buffer (a "
                            "constant, not a parameter); narrow the glob");
        continue;
      }
      matched = true;
      flagged.insert(name);
      role->second = flag.freeze ? InitRole::Frozen : InitRole::Trainable;
    }
    if (!matched)
      throw ImportError(std::string(opt) + " '" + flag.glob +
                        "' matches no parameter of the model; check the "
                        "initializer names (zeroc import shows them)");
  }
  if (!marker)
    checkUnmarkedExport(model, plan, floatInits, flagged, !flags.empty());
  size_t trainable = 0, frozen = 0;
  for (const auto &[name, role] : plan.roles) {
    trainable += role == InitRole::Trainable;
    frozen += role == InitRole::Frozen;
  }
  if (frozen && !trainable)
    throw ImportError("no parameter is left trainable (" + std::to_string(frozen) +
                      " frozen); unfreeze some with --trainable GLOB");
  if (marker && !trainable && !frozen && !floatInits.empty())
    throw ImportError(marker->source + " marks no trainable parameter; "
                      "there is nothing to train");
  return plan;
}

} // namespace zeroc::onnximport
