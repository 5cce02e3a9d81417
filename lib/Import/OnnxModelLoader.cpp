//===- OnnxModelLoader.cpp - read and validate an untrusted ONNX file -----===//
#include "OnnxModelLoader.h"
#include "HostTensor.h"

#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

#include <climits>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <unordered_map>
#include <unordered_set>

namespace zeroc::onnximport {

namespace {

constexpr int64_t kMaxModelBytes = int64_t(2) << 30; // protobuf's own limit

std::string readFile(const std::string &path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    throw ImportError("cannot open the file (does it exist?)");
  if (!S_ISREG(st.st_mode))
    throw ImportError("not a regular file");
  if (st.st_size >= kMaxModelBytes)
    throw ImportError("file is larger than 2 GiB; store the weights as "
                      "external data next to the model");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw ImportError("cannot open the file for reading");
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  in.read(bytes.data(), st.st_size);
  if (in.gcount() != st.st_size)
    throw ImportError("short read");
  return bytes;
}

std::string dirOf(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : path.substr(0, slash + 1);
}

std::string realPath(const std::string &path) {
  char buf[PATH_MAX];
  if (!realpath(path.c_str(), buf))
    return "";
  return buf;
}

int64_t parseNonNegative(const std::string &text, const std::string &what) {
  if (text.empty() || text.size() > 18 ||
      text.find_first_not_of("0123456789") != std::string::npos)
    throw ImportError(what + " '" + text + "' is not a non-negative integer");
  return std::stoll(text);
}

int64_t elementBytes(int32_t dtype) {
  using TP = onnx::TensorProto;
  switch (dtype) {
  case TP::FLOAT: case TP::INT32: return 4;
  case TP::DOUBLE: case TP::INT64: return 8;
  case TP::FLOAT16: case TP::BFLOAT16: return 2;
  case TP::BOOL: case TP::INT8: case TP::UINT8: return 1;
  default: return 0;
  }
}

/// Replaces the external-data reference of `tensor` by its bytes, after
/// checking that the file lies inside the model's directory and holds them.
void loadExternal(onnx::TensorProto &tensor, const std::string &modelDir) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto &entry : tensor.external_data()) {
    if (entry.key() == "location")
      location = entry.value();
    else if (entry.key() == "offset")
      offset = parseNonNegative(entry.value(), "external data offset");
    else if (entry.key() == "length")
      length = parseNonNegative(entry.value(), "external data length");
  }
  std::string what = "initializer '" + tensor.name() + "': external data";
  if (location.empty())
    throw ImportError(what + " has no location");
  if (location[0] == '/' || location.find("..") != std::string::npos)
    throw ImportError(what + " location '" + location +
                      "' escapes the model's directory; keep data files "
                      "inside it and use relative paths");
  std::string dir = realPath(modelDir);
  std::string file = realPath(modelDir + "/" + location);
  if (file.empty())
    throw ImportError(what + " file '" + location + "' does not exist");
  if (dir.empty() || file.compare(0, dir.size() + 1, dir + "/") != 0)
    throw ImportError(what + " location '" + location +
                      "' resolves outside the model's directory (symlink?)");
  struct stat st;
  if (stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    throw ImportError(what + " '" + location + "' is not a regular file");
  int64_t elemBytes = elementBytes(tensor.data_type());
  if (elemBytes == 0)
    throw ImportError(what + " has an unsupported element type");
  std::vector<int64_t> dims(tensor.dims().begin(), tensor.dims().end());
  int64_t need = checkedNumElements(dims) * elemBytes;
  if (length >= 0 && length != need)
    throw ImportError(what + " length " + std::to_string(length) +
                      " does not match the tensor's " + std::to_string(need) +
                      " bytes");
  if (offset > st.st_size || need > st.st_size - offset)
    throw ImportError(what + " '" + location + "' is too short: needs " +
                      std::to_string(need) + " bytes at offset " +
                      std::to_string(offset) + ", file has " +
                      std::to_string(st.st_size));
  if (need >= kMaxModelBytes)
    throw ImportError(what + " is larger than 2 GiB");
  std::ifstream in(file, std::ios::binary);
  in.seekg(offset);
  std::string bytes(static_cast<size_t>(need), '\0');
  in.read(bytes.data(), need);
  if (in.gcount() != need)
    throw ImportError(what + " '" + location + "': short read");
  tensor.set_raw_data(std::move(bytes));
  tensor.clear_external_data();
  tensor.set_data_location(onnx::TensorProto::DEFAULT);
}

void resolveExternalData(onnx::GraphProto &graph, const std::string &dir) {
  for (auto &init : *graph.mutable_initializer())
    if (init.data_location() == onnx::TensorProto::EXTERNAL)
      loadExternal(init, dir);
  for (auto &node : *graph.mutable_node())
    for (auto &attr : *node.mutable_attribute()) {
      if (attr.has_t() && attr.t().data_location() == onnx::TensorProto::EXTERNAL)
        loadExternal(*attr.mutable_t(), dir);
      if (attr.has_g() || attr.graphs_size())
        throw ImportError(describeNode(node, 0) +
                          ": subgraph attributes are not supported");
    }
}

void checkOpset(const onnx::ModelProto &model) {
  bool found = false;
  for (const auto &op : model.opset_import()) {
    if (!op.domain().empty() && op.domain() != "ai.onnx")
      continue;
    found = true;
    if (op.version() < kMinOpset || op.version() > kMaxOpset)
      throw ImportError("default-domain opset " + std::to_string(op.version()) +
                        " is not supported (supported: " +
                        std::to_string(kMinOpset) + " to " +
                        std::to_string(kMaxOpset) +
                        "); re-export with opset_version=17");
  }
  if (!found)
    throw ImportError("the model imports no default-domain opset");
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

std::string dtypeName(int32_t dtype) {
  if (onnx::TensorProto::DataType_IsValid(dtype))
    return onnx::TensorProto::DataType_Name(
        static_cast<onnx::TensorProto::DataType>(dtype));
  return "type #" + std::to_string(dtype);
}

void checkElementTypes(const onnx::GraphProto &graph) {
  const char *hint = "; zeroc supports float, double, float16, bfloat16, "
                     "int64, int32, int8 and bool";
  for (const auto &init : graph.initializer())
    if (!isSupportedDType(init.data_type()))
      throw ImportError("initializer '" + init.name() + "' has unsupported " +
                        "element type " + dtypeName(init.data_type()) + hint);
  auto checkValue = [&](const onnx::ValueInfoProto &v, const char *what) {
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
    for (int d = 0; d < shape->dim_size(); ++d) {
      const auto &dim = shape->dim(d);
      if (dim.has_dim_value() && dim.dim_value() >= 0)
        continue;
      std::string sym = dim.has_dim_param() ? "'" + dim.dim_param() + "'" : "unknown";
      throw ImportError("graph input '" + input.name() + "' dim " +
                        std::to_string(d) + " is symbolic (" + sym +
                        "); bind it with --input-shape " + input.name() +
                        "=D0,D1,...");
    }
  }
  for (const auto &[name, dims] : inputShapes)
    if (!used.count(name))
      throw ImportError("--input-shape names '" + name +
                        "', which is not a data input of the model");
}

} // namespace

std::string describeNode(const onnx::NodeProto &node, int index) {
  std::string name = node.name().empty() ? "#" + std::to_string(index) : node.name();
  return "node '" + name + "' (" + node.op_type() + ")";
}

onnx::ModelProto
loadModel(const std::string &path,
          const std::map<std::string, std::vector<int64_t>> &inputShapes) {
  std::string bytes = readFile(path);
  onnx::ModelProto model;
  if (bytes.empty() || !model.ParseFromString(bytes))
    throw ImportError("not an ONNX model (the protobuf does not parse; is the "
                      "file truncated?)");
  if (!model.has_graph() || model.graph().node_size() == 0)
    throw ImportError("the model has no graph nodes");
  checkOpset(model);
  onnx::GraphProto &graph = *model.mutable_graph();
  checkSupportedOps(graph);
  checkElementTypes(graph);
  checkTopologicalOrder(graph);
  resolveExternalData(graph, dirOf(path));
  bindInputShapes(graph, inputShapes);
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception &e) {
    std::string msg = e.what();
    size_t nl = msg.find('\n');
    if (nl != std::string::npos)
      msg = msg.substr(0, nl);
    throw ImportError("onnx checker: " + msg);
  }
  try {
    onnx::ShapeInferenceOptions options{/*check_type=*/true,
                                        /*error_mode=*/1,
                                        /*enable_data_propagation=*/false};
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(),
                                       options);
  } catch (const std::exception &e) {
    std::string msg = e.what();
    size_t nl = msg.find('\n');
    throw ImportError("onnx shape inference: " +
                      (nl == std::string::npos ? msg : msg.substr(0, nl)));
  }
  return model;
}

} // namespace zeroc::onnximport
