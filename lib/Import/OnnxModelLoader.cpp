//===- OnnxModelLoader.cpp - read and validate an untrusted ONNX file -----===//
#include "OnnxModelLoader.h"
#include "HostTensor.h"
#include "OnnxGraphChecks.h"

#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

#include <algorithm>
#include <fstream>
#include <sys/stat.h>

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

void checkOpset(const onnx::ModelProto &model) {
  int found = 0;
  for (const auto &op : model.opset_import()) {
    if (!op.domain().empty() && op.domain() != "ai.onnx")
      continue;
    if (++found > 1)
      throw ImportError("opset_import lists the default domain more than "
                        "once; keep one entry");
    if (op.version() < kMinOpset || op.version() > kMaxOpset)
      throw ImportError("default-domain opset " + std::to_string(op.version()) +
                        " is not supported (zeroc imports opsets " +
                        std::to_string(kMinOpset) + " to " +
                        std::to_string(kMaxOpset) +
                        "); re-export with an opset_version from " +
                        std::to_string(kMinOpset) + " to " +
                        std::to_string(kMaxOpset));
  }
  if (!found)
    throw ImportError("the model imports no default-domain opset");
}

void checkIrVersion(const onnx::ModelProto &model) {
  if (!model.has_ir_version() || model.ir_version() <= 0)
    throw ImportError("the model has no ONNX IR version (ir_version is not "
                      "set); re-export the model");
  if (model.ir_version() < kMinIrVersion || model.ir_version() > kMaxIrVersion)
    throw ImportError("ONNX IR version " + std::to_string(model.ir_version()) +
                      " is not supported (zeroc reads IR versions " +
                      std::to_string(kMinIrVersion) + " to " +
                      std::to_string(kMaxIrVersion) +
                      "); re-export the model with an ONNX release that "
                      "writes one of them");
}

/// Runs `fn` with the model's IR version and default-domain opset clamped
/// to the newest libonnx knows; callers ensure that every node's schema is
/// the same there (checkNodes returned true).
template <typename Fn>
void asLibonnxSees(onnx::ModelProto &model, const MappedInitializers *mapped,
                   Fn fn) {
  // Mapped initializers stay external in the proto, and libonnx's checker
  // would look for their files relative to the working directory (it is not
  // told the model's): it sees them as graph inputs of their type instead.
  // Their location and size were checked when they were mapped.
  onnx::GraphProto &graph = *model.mutable_graph();
  google::protobuf::RepeatedPtrField<onnx::TensorProto> all;
  int addedInputs = 0;
  bool hide = mapped && !mapped->empty();
  if (hide) {
    all.Swap(graph.mutable_initializer());
    for (auto &init : all) {
      if (init.data_location() == onnx::TensorProto::EXTERNAL &&
          mapped->count(init.name())) {
        onnx::ValueInfoProto *in = graph.add_input();
        in->set_name(init.name());
        auto *tt = in->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(init.data_type());
        for (int64_t d : init.dims())
          tt->mutable_shape()->add_dim()->set_dim_value(d);
        ++addedInputs;
      } else {
        graph.add_initializer()->Swap(&init);
      }
    }
  }
  int64_t ir = model.ir_version();
  std::vector<int64_t> versions;
  for (auto &op : *model.mutable_opset_import()) {
    versions.push_back(op.version());
    if (op.domain().empty())
      op.set_version(std::min<int64_t>(op.version(), kLibonnxMaxOpset));
  }
  model.set_ir_version(std::min<int64_t>(ir, kLibonnxMaxIrVersion));
  auto restore = [&] {
    model.set_ir_version(ir);
    for (int i = 0; i < model.opset_import_size(); ++i)
      model.mutable_opset_import(i)->set_version(versions[i]);
    if (hide) {
      int next = 0;
      for (auto &init : all)
        if (!(init.data_location() == onnx::TensorProto::EXTERNAL &&
              mapped->count(init.name())))
          init.Swap(graph.mutable_initializer(next++));
      graph.mutable_initializer()->Swap(&all);
      for (int i = 0; i < addedInputs; ++i)
        graph.mutable_input()->RemoveLast();
    }
  };
  try {
    fn();
  } catch (...) {
    restore();
    throw;
  }
  restore();
}

/// The node a placeholder "#<index>" stands for (see loadModel), or null.
const std::string *placeholderNode(const std::string &text,
                                   const std::vector<std::string> &nodeNames) {
  if (text.size() < 2 || text.size() > 10 || text[0] != '#' ||
      text.find_first_not_of("0123456789", 1) != std::string::npos)
    return nullptr;
  size_t index = std::stoul(text.substr(1));
  return index < nodeNames.size() ? &nodeNames[index] : nullptr;
}

/// The first line of an ONNX exception, with shape inference's
/// "(op_type:Op, node name: n): [XError] msg" rewritten as "node 'n' (Op): msg".
std::string onnxMessage(const std::exception &e,
                        const std::vector<std::string> &nodeNames) {
  std::string msg = e.what();
  size_t nl = msg.find('\n');
  if (nl != std::string::npos)
    msg = msg.substr(0, nl);
  // The checker's "Node (#<index>) ...": the real name, quoted.
  for (size_t at = msg.find("(#"); at != std::string::npos;
       at = msg.find("(#", at + 1)) {
    size_t close = msg.find(')', at);
    if (close == std::string::npos)
      break;
    if (const std::string *name =
            placeholderNode(msg.substr(at + 1, close - at - 1), nodeNames))
      msg.replace(at, close - at + 1, "('" + *name + "')");
  }
  const std::string opTag = "(op_type:", nameTag = ", node name: ";
  size_t a = msg.find(opTag), b = msg.find(nameTag, a == std::string::npos ? 0 : a);
  size_t c = msg.find("): ", b == std::string::npos ? 0 : b);
  if (a != std::string::npos && b != std::string::npos &&
      c != std::string::npos && a < b && b < c) {
    std::string op = msg.substr(a + opTag.size(), b - a - opTag.size());
    std::string name = msg.substr(b + nameTag.size(), c - b - nameTag.size());
    if (const std::string *real = placeholderNode(name, nodeNames))
      name = *real;
    std::string rest = msg.substr(c + 3);
    if (!rest.empty() && rest[0] == '[') {
      size_t close = rest.find("] ");
      if (close != std::string::npos)
        rest = rest.substr(close + 2);
    }
    return "node '" + name + "' (" + op + "): " + rest;
  }
  return msg;
}

} // namespace

onnx::ModelProto
loadModel(const std::string &path,
          const std::map<std::string, std::vector<int64_t>> &inputShapes,
          MappedInitializers *mapped) {
  std::string bytes = readFile(path);
  onnx::ModelProto model;
  if (bytes.empty() || !model.ParseFromString(bytes))
    throw ImportError("not an ONNX model (the protobuf does not parse; is the "
                      "file truncated?)");
  if (!model.has_graph() || model.graph().node_size() == 0)
    throw ImportError("the model has no graph nodes");
  checkIrVersion(model);
  checkOpset(model);
  onnx::GraphProto &graph = *model.mutable_graph();
  for (auto &op : *model.mutable_opset_import())
    if (op.domain() == "ai.onnx")
      op.set_domain("");
  normalizeDomains(graph);
  checkNoLocalFunctions(model);
  checkSupportedOps(graph);
  checkElementTypes(graph);
  checkSingleAssignment(graph);
  checkTopologicalOrder(graph);
  resolveExternalData(graph, dirOf(path), mapped);
  checkInitializers(graph);
  bindInputShapes(graph, inputShapes);
  bool libonnxKnowsAll = checkNodes(model);
  // ONNX's messages name nodes raw and are cut at their first newline; a
  // node name may hold any bytes, so ONNX sees "#<index>" instead and the
  // message gets the real name back.
  std::vector<std::string> nodeNames;
  for (auto &node : *graph.mutable_node()) {
    nodeNames.push_back(node.name());
    node.set_name("#" + std::to_string(nodeNames.size() - 1));
  }
  // libonnx's whole-model checks need every node's schema: they run when
  // each node's op version is one libonnx 1.12 has (docs/Import.md).
  if (libonnxKnowsAll)
    asLibonnxSees(model, mapped, [&] {
      try {
        onnx::checker::check_model(model);
      } catch (const std::exception &e) {
        throw ImportError("onnx checker: " + onnxMessage(e, nodeNames));
      }
      try {
        onnx::ShapeInferenceOptions options{/*check_type=*/true,
                                            /*error_mode=*/1,
                                            /*enable_data_propagation=*/false};
        onnx::shape_inference::InferShapes(
            model, onnx::OpSchemaRegistry::Instance(), options);
      } catch (const std::exception &e) {
        throw ImportError(onnxMessage(e, nodeNames));
      }
    });
  for (int i = 0; i < graph.node_size(); ++i)
    graph.mutable_node(i)->set_name(nodeNames[static_cast<size_t>(i)]);
  return model;
}

} // namespace zeroc::onnximport
