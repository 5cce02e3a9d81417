//===- OnnxGraphChecks.cpp - structural checks of an untrusted graph ------===//
//
// Checks that run before onnx::checker, so that each problem is reported with
// the node, input or initializer at fault: supported ops and element types,
// initializer dims and data sizes, graph input shapes, single assignment and
// topological order, and per-node attributes.
//
//===----------------------------------------------------------------------===//

#include "OnnxGraphChecks.h"
#include "HostTensor.h"
#include "OnnxModelLoader.h"
#include "OpVersions.h"

#include "onnx/checker.h"
#include "onnx/defs/schema.h"

#include <set>
#include <unordered_map>
#include <unordered_set>

namespace zeroc::onnximport {

int64_t elementBytes(int32_t dtype) {
  using TP = onnx::TensorProto;
  switch (dtype) {
  case TP::FLOAT: case TP::INT32: return 4;
  case TP::DOUBLE: case TP::INT64: return 8;
  case TP::FLOAT16: case TP::BFLOAT16: return 2;
  case TP::BOOL: case TP::INT8: return 1;
  default: return 0;
  }
}

void checkSupportedOps(const onnx::GraphProto &graph) {
  std::vector<std::string> unknown;
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto &node = graph.node(i);
    bool defaultDomain = node.domain().empty() || node.domain() == "ai.onnx";
    if (defaultDomain && isSupportedOpType(node.op_type()))
      continue;
    std::string name = node.name().empty() ? "#" + std::to_string(i) : node.name();
    unknown.push_back("'" + name + "' (" +
                      (defaultDomain ? "" : node.domain() + "::") +
                      node.op_type() + ")");
  }
  if (unknown.empty())
    return;
  std::string msg = std::to_string(unknown.size()) + " unsupported op" +
                    (unknown.size() == 1 ? "" : "s") + ": ";
  for (size_t i = 0; i < unknown.size(); ++i)
    msg += (i ? ", " : "") + unknown[i];
  throw ImportError(msg + "; zeroc supports the ops listed in docs/Import.md");
}

bool isSupportedDType(int32_t dtype) {
  using TP = onnx::TensorProto;
  return dtype == TP::FLOAT || dtype == TP::DOUBLE || dtype == TP::FLOAT16 ||
         dtype == TP::BFLOAT16 || dtype == TP::INT64 || dtype == TP::INT32 ||
         dtype == TP::INT8 || dtype == TP::BOOL;
}

std::string dtypeName(int32_t dtype) { return onnxTypeName(dtype); }

void checkElementTypes(const onnx::GraphProto &graph) {
  const char *hint = "; zeroc supports float, double, float16, bfloat16, "
                     "int64, int32, int8 and bool";
  for (const auto &init : graph.initializer())
    if (!isSupportedDType(init.data_type()))
      throw ImportError("initializer '" + init.name() + "' has unsupported " +
                        "element type " + dtypeName(init.data_type()) + hint);
  auto checkValue = [&](const onnx::ValueInfoProto &v, const char *what) {
    if (!v.has_type())
      throw ImportError(std::string(what) + " '" + v.name() + "' has no type");
    if (!v.type().has_tensor_type())
      throw ImportError(std::string(what) + " '" + v.name() +
                        "' is not a tensor (sequences, maps and optionals are "
                        "not supported)");
    int32_t dtype = v.type().tensor_type().elem_type();
    if (!isSupportedDType(dtype))
      throw ImportError(std::string(what) + " '" + v.name() +
                        "' has unsupported element type " + dtypeName(dtype) +
                        hint);
  };
  for (const auto &in : graph.input())
    checkValue(in, "graph input");
  for (const auto &out : graph.output())
    checkValue(out, "graph output");
}

void checkTopologicalOrder(const onnx::GraphProto &graph) {
  std::unordered_set<std::string> defined;
  for (const auto &in : graph.input())
    defined.insert(in.name());
  for (const auto &init : graph.initializer())
    defined.insert(init.name());
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < graph.node_size(); ++i)
    for (const auto &out : graph.node(i).output())
      if (!out.empty())
        producer.emplace(out, i);
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto &node = graph.node(i);
    for (const auto &in : node.input()) {
      if (in.empty() || defined.count(in))
        continue;
      auto it = producer.find(in);
      if (it == producer.end())
        throw ImportError(describeNode(node, i) + ": input '" + in +
                          "' is produced by no node, initializer or graph input");
      if (it->second == i)
        throw ImportError(describeNode(node, i) + ": input '" + in +
                          "' is the node's own output (the graph has a cycle)");
      throw ImportError(describeNode(node, i) + ": input '" + in +
                        "' is produced later, by " +
                        describeNode(graph.node(it->second), it->second) +
                        ": nodes are not topologically sorted or form a "
                        "cycle; re-export the model");
    }
    for (const auto &out : node.output())
      if (!out.empty())
        defined.insert(out);
  }
  for (const auto &out : graph.output())
    if (!defined.count(out.name()))
      throw ImportError("graph output '" + out.name() + "' is produced by no node");
}

void bindInputShapes(
    onnx::GraphProto &graph,
    const std::map<std::string, std::vector<int64_t>> &inputShapes) {
  std::set<std::string> used;
  std::unordered_set<std::string> inits;
  for (const auto &init : graph.initializer())
    inits.insert(init.name());
  for (auto &input : *graph.mutable_input()) {
    if (inits.count(input.name()))
      continue;
    if (!input.type().has_tensor_type())
      throw ImportError("graph input '" + input.name() + "' is not a tensor");
    auto *tt = input.mutable_type()->mutable_tensor_type();
    if (!tt->has_shape())
      throw ImportError("graph input '" + input.name() +
                        "' has no shape; bind it with --input-shape " +
                        input.name() + "=D0,D1,...");
    auto bound = inputShapes.find(input.name());
    auto *shape = tt->mutable_shape();
    if (bound != inputShapes.end()) {
      used.insert(input.name());
      if (static_cast<int>(bound->second.size()) != shape->dim_size())
        throw ImportError("--input-shape " + input.name() + " has " +
                          std::to_string(bound->second.size()) +
                          " dims but the input has rank " +
                          std::to_string(shape->dim_size()));
      for (int d = 0; d < shape->dim_size(); ++d) {
        auto *dim = shape->mutable_dim(d);
        int64_t want = bound->second[d];
        if (dim->has_dim_value() && dim->dim_value() != want)
          throw ImportError("--input-shape " + input.name() + ": dim " +
                            std::to_string(d) + " is fixed to " +
                            std::to_string(dim->dim_value()) +
                            " by the model, not " + std::to_string(want));
        dim->set_dim_value(want);
      }
    }
    std::vector<int64_t> dims;
    for (int d = 0; d < shape->dim_size(); ++d) {
      const auto &dim = shape->dim(d);
      if (dim.has_dim_value() && dim.dim_value() < 0)
        throw ImportError("graph input '" + input.name() + "' dim " +
                          std::to_string(d) + " is negative (" +
                          std::to_string(dim.dim_value()) + ")");
      if (dim.has_dim_value()) {
        dims.push_back(dim.dim_value());
        continue;
      }
      std::string sym = dim.has_dim_param() ? "'" + dim.dim_param() + "'" : "unknown";
      throw ImportError("graph input '" + input.name() + "' dim " +
                        std::to_string(d) + " is symbolic (" + sym +
                        "); bind it with --input-shape " + input.name() +
                        "=D0,D1,...");
    }
    try {
      checkedNumElements(dims);
    } catch (const ImportError &e) {
      throw ImportError("graph input '" + input.name() + "': " + e.what());
    }
  }
  for (const auto &[name, dims] : inputShapes)
    if (!used.count(name))
      throw ImportError("--input-shape names '" + name +
                        "', which is not a data input of the model");
}

void normalizeDomains(onnx::GraphProto &graph) {
  for (auto &node : *graph.mutable_node())
    if (node.domain() == "ai.onnx")
      node.set_domain("");
}

void checkSingleAssignment(const onnx::GraphProto &graph) {
  // A sparse initializer is a definition zeroc cannot represent.
  if (graph.sparse_initializer_size() > 0)
    throw ImportError("sparse initializer '" +
                      graph.sparse_initializer(0).values().name() +
                      "' is not supported; store the tensor densely");
  std::unordered_map<std::string, std::string> definedBy;
  auto define = [&](const std::string &name, const std::string &what) {
    auto [it, inserted] = definedBy.emplace(name, what);
    if (!inserted)
      throw ImportError(what + " redefines '" + name + "', already defined by " +
                        it->second + " (ONNX graphs are single-assignment)");
  };
  std::unordered_set<std::string> inits;
  for (const auto &init : graph.initializer()) {
    if (init.name().empty())
      throw ImportError("an initializer has no name");
    if (!inits.insert(init.name()).second)
      throw ImportError("initializer '" + init.name() + "' is defined twice");
  }
  for (const auto &in : graph.input()) {
    if (in.name().empty())
      throw ImportError("a graph input has no name");
    // Older exporters list initializers among the inputs too: that is fine.
    if (!inits.count(in.name()))
      define(in.name(), "graph input '" + in.name() + "'");
  }
  for (const auto &name : inits)
    if (!definedBy.count(name))
      definedBy.emplace(name, "initializer '" + name + "'");
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto &node = graph.node(i);
    if (node.output_size() == 0)
      throw ImportError(describeNode(node, i) + ": has no outputs");
    for (const auto &out : node.output())
      if (!out.empty())
        define(out, describeNode(node, i));
  }
}

void checkInitializers(const onnx::GraphProto &graph) {
  std::unordered_map<std::string, const onnx::ValueInfoProto *> inputs;
  for (const auto &in : graph.input())
    inputs[in.name()] = &in;
  for (const auto &init : graph.initializer()) {
    std::string what = "initializer '" + init.name() + "'";
    std::vector<int64_t> dims(init.dims().begin(), init.dims().end());
    int64_t count;
    try {
      count = checkedNumElements(dims);
    } catch (const ImportError &e) {
      throw ImportError(what + ": " + e.what());
    }
    int64_t width = elementBytes(init.data_type());
    int64_t have = -1;
    switch (init.data_type()) {
    case onnx::TensorProto::FLOAT: have = init.float_data_size(); break;
    case onnx::TensorProto::DOUBLE: have = init.double_data_size(); break;
    case onnx::TensorProto::INT64: have = init.int64_data_size(); break;
    default: have = init.int32_data_size(); break;
    }
    if (init.data_location() == onnx::TensorProto::EXTERNAL) {
      // Mapped by resolveExternalData, which checked its size.
    } else if (init.has_raw_data()) {
      if (static_cast<int64_t>(init.raw_data().size()) != count * width)
        throw ImportError(what + ": raw_data has " +
                          std::to_string(init.raw_data().size()) +
                          " bytes but dims need " + std::to_string(count * width));
    } else if (have != count) {
      throw ImportError(what + ": holds " + std::to_string(have) +
                        " elements but its dims need " + std::to_string(count));
    }
    auto in = inputs.find(init.name());
    if (in == inputs.end() || !in->second->type().tensor_type().has_shape())
      continue;
    const auto &shape = in->second->type().tensor_type().shape();
    bool same = shape.dim_size() == static_cast<int>(dims.size());
    for (int d = 0; same && d < shape.dim_size(); ++d)
      same = !shape.dim(d).has_dim_value() || shape.dim(d).dim_value() == dims[d];
    if (!same)
      throw ImportError(what + " and the graph input of the same name have "
                        "different shapes");
  }
}

bool checkNodes(const onnx::ModelProto &model) {
  int64_t opset = defaultOpset(model);
  // libonnx sees at most the opset and IR version it knows; for the nodes
  // it checks, the schema is the same there (their version is <= 17).
  onnx::checker::CheckerContext ctx;
  ctx.set_ir_version(static_cast<int>(
      std::min<int64_t>(model.ir_version(), kLibonnxMaxIrVersion)));
  std::unordered_map<std::string, int> opsets;
  for (const auto &op : model.opset_import())
    opsets[op.domain() == "ai.onnx" ? "" : op.domain()] =
        static_cast<int>(op.version());
  opsets[""] = static_cast<int>(std::min(opset, kLibonnxMaxOpset));
  ctx.set_opset_imports(opsets);
  onnx::checker::LexicalScopeContext scope;
  const onnx::GraphProto &graph = model.graph();
  for (const auto &in : graph.input())
    scope.add(in.name());
  for (const auto &init : graph.initializer())
    scope.add(init.name());
  bool libonnxKnowsAll = true;
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto &node = graph.node(i);
    std::set<std::string> names;
    for (const auto &attr : node.attribute())
      if (!names.insert(attr.name()).second)
        throw ImportError(describeNode(node, i) + ": attribute '" +
                          attr.name() + "' appears more than once");
    const OpVersion *version;
    try {
      version = &resolveOpVersion(node.op_type(), opset);
      if (version->since > kLibonnxMaxOpset) {
        libonnxKnowsAll = false;
        checkOwnSignature(node, *version);
      }
    } catch (const ImportError &e) {
      throw ImportError(describeNode(node, i) + ": " + e.what());
    }
    if (version->since <= kLibonnxMaxOpset) {
      try {
        onnx::checker::check_node(node, ctx, scope);
      } catch (const std::exception &e) {
        std::string msg = e.what();
        size_t nl = msg.find('\n');
        throw ImportError(describeNode(node, i) + ": " +
                          (nl == std::string::npos ? msg : msg.substr(0, nl)));
      }
    }
    for (const auto &out : node.output())
      scope.add(out);
  }
  return libonnxKnowsAll;
}

void checkNoLocalFunctions(const onnx::ModelProto &model) {
  if (model.functions_size() == 0)
    return;
  std::set<std::pair<std::string, std::string>> local;
  for (const auto &f : model.functions())
    local.insert({f.domain(), f.name()});
  const onnx::GraphProto &graph = model.graph();
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto &node = graph.node(i);
    if (local.count({node.domain(), node.op_type()}))
      throw ImportError(describeNode(node, i) + ": calls the model-local "
                        "function '" + node.domain() + "::" + node.op_type() +
                        "', which zeroc does not inline; export the model "
                        "without local functions (torch.onnx.export writes "
                        "none by default)");
  }
}

int64_t defaultOpset(const onnx::ModelProto &model) {
  for (const auto &op : model.opset_import())
    if (op.domain().empty() || op.domain() == "ai.onnx")
      return op.version();
  return 0;
}

std::string describeNode(const onnx::NodeProto &node, int index) {
  std::string name = node.name().empty() ? "#" + std::to_string(index) : node.name();
  return "node '" + name + "' (" + node.op_type() + ")";
}

} // namespace zeroc::onnximport
