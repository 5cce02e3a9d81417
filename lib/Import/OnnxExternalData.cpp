//===- OnnxExternalData.cpp - load external tensor data safely ------------===//
//
// ONNX tensors may keep their bytes in a file next to the model. The model is
// untrusted, so a location may only name a regular file inside the model's
// directory (no absolute paths, no "..", no symlink escaping it), and the
// offset and length are checked against the file and the tensor before a
// single byte is read.
//
//===----------------------------------------------------------------------===//

#include "OnnxGraphChecks.h"

#include "zeroc/Support/MappedFiles.h"
#include "HostTensor.h"
#include "OnnxModelLoader.h"

#include <climits>
#include <cstdlib>
#include <fstream>
#include <sys/stat.h>

namespace zeroc::onnximport {

namespace {

constexpr int64_t kMaxExternalBytes = int64_t(2) << 30;

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

} // namespace

/// Replaces the external-data reference of `tensor` by its bytes, after
/// checking that the file lies inside the model's directory and holds them.
void loadExternal(onnx::TensorProto &tensor, const std::string &modelDir,
                  MappedInitializers *mapped) {
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
  if (need >= kMaxExternalBytes)
    throw ImportError(what + " is larger than 2 GiB");
  bool isFloat = tensor.data_type() == onnx::TensorProto::FLOAT ||
                 tensor.data_type() == onnx::TensorProto::DOUBLE ||
                 tensor.data_type() == onnx::TensorProto::FLOAT16 ||
                 tensor.data_type() == onnx::TensorProto::BFLOAT16;
  if (mapped && isFloat && need >= kMapExternalBytes) {
    std::string error;
    llvm::ArrayRef<char> bytes = mapFileRange(file, static_cast<uint64_t>(offset),
                                              static_cast<uint64_t>(need), error);
    if (bytes.empty())
      throw ImportError(what + " '" + location + "': " + error);
    (*mapped)[tensor.name()] = bytes;
    return;
  }
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

void resolveExternalData(onnx::GraphProto &graph, const std::string &dir,
                         MappedInitializers *mapped) {
  for (auto &init : *graph.mutable_initializer())
    if (init.data_location() == onnx::TensorProto::EXTERNAL)
      loadExternal(init, dir, mapped);
  for (auto &node : *graph.mutable_node())
    for (auto &attr : *node.mutable_attribute()) {
      if (attr.has_t() && attr.t().data_location() == onnx::TensorProto::EXTERNAL)
        loadExternal(*attr.mutable_t(), dir, nullptr);
      if (attr.has_g() || attr.graphs_size())
        throw ImportError(describeNode(node, 0) +
                          ": subgraph attributes are not supported");
    }
}

} // namespace zeroc::onnximport
