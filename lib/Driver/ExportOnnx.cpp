//===- ExportOnnx.cpp - zeroc export-onnx: the trained model ------------===//
//
//   zeroc export-onnx CKPT_DIR MODEL.onnx -o OUT.onnx [--tag TAG]
//
// Writes MODEL.onnx with a checkpoint's consolidated weights
// (CheckpointWeights.h) in place of the initializers of the same names, so
// that an ONNX runtime runs the trained model. Every trained tensor must be
// an initializer of the model with the same shape and a float dtype of its
// own width (FLOAT for f32, DOUBLE for f64); anything else is one error and
// no output. The rest of the file is kept byte for byte as protobuf
// re-serializes it; metadata "zeroc.checkpoint" names the checkpoint.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Driver/ToFp32.h"

#include "CheckpointWeights.h"

#include "onnx/onnx_pb.h"

#include <iostream>
#include <map>

namespace zeroc {
namespace {

using namespace zeroc_rt::checkpoint;

constexpr const char *kUsage =
    "usage: zeroc export-onnx CKPT_DIR MODEL.onnx -o OUT.onnx [--tag TAG]";
constexpr int64_t kMaxModelBytes = int64_t(2) << 30; // protobuf's own limit

/// One error line; `msg` names the file at fault.
int fail(const std::string &msg) {
  std::cerr << "zeroc: error: export-onnx: " << msg << "\n";
  return 1;
}

/// One error line of a status that already starts with "export-onnx: ".
int failWith(zeroc_rt_status_t status) {
  std::cerr << "zeroc: error: " << takeStatusText(status) << "\n";
  return 1;
}

bool readModel(const std::string &path, onnx::ModelProto &model,
               std::string &error) {
  std::string bytes;
  if (zeroc_rt_status_t s = readWholeFile(path, kMaxModelBytes - 1, bytes)) {
    error = takeStatusText(s) +
            " (a model over 2 GiB needs external data, not supported yet)";
    return false;
  }
  if (bytes.empty() || !model.ParseFromString(bytes) || !model.has_graph()) {
    error = "'" + path + "': not an ONNX model (the protobuf does not parse)";
    return false;
  }
  return true;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

} // namespace

int runExportOnnx(int argc, char **argv) {
  std::vector<std::string> positional;
  std::string tag, outPath;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if ((a == "--tag" || a == "-o") && i + 1 < argc)
      (a == "-o" ? outPath : tag) = argv[++i];
    else if (a.rfind("--tag=", 0) == 0)
      tag = a.substr(6);
    else if (a.size() > 1 && a[0] == '-')
      return fail("unknown option '" + a + "'; " + kUsage);
    else
      positional.push_back(a);
  }
  if (positional.size() != 2 || outPath.empty())
    return fail(kUsage);
  const std::string &dir = positional[0], &modelPath = positional[1];

  Metadata meta;
  if (zeroc_rt_status_t s = readMetadata(dir, tag, "export-onnx", "--tag", meta))
    return failWith(s);
  onnx::ModelProto model;
  std::string error;
  if (!readModel(modelPath, model, error))
    return fail(error);
  std::map<std::string, onnx::TensorProto *> inits;
  for (onnx::TensorProto &t : *model.mutable_graph()->mutable_initializer())
    inits[t.name()] = &t;

  CheckpointWeights weights(meta);
  for (const WeightTensor &w : weights.tensors()) {
    auto it = inits.find(w.name);
    if (it == inits.end())
      return fail("'" + modelPath + "' has no initializer '" + w.name +
                  "', which checkpoint '" + meta.dir +
                  "' trained (a checkpoint of another model?)");
    onnx::TensorProto &t = *it->second;
    const int want = w.dtype == ZEROC_RT_DTYPE_F64 ? onnx::TensorProto::DOUBLE
                                                   : onnx::TensorProto::FLOAT;
    std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
    if (t.data_type() != want || dims != w.shape)
      return fail("initializer '" + w.name + "' of '" + modelPath + "' is " +
                  onnx::TensorProto::DataType_Name(
                      static_cast<onnx::TensorProto::DataType>(t.data_type())) +
                  " " + shapeText(dims) + ", the checkpoint's is " +
                  zeroc_rt_dtype_name(w.dtype) + " " + shapeText(w.shape) +
                  " (another model, or a 16-bit initializer, which is not "
                  "supported yet)");
    if (t.data_location() == onnx::TensorProto::EXTERNAL)
      return fail("initializer '" + w.name + "' of '" + modelPath +
                  "' is external data, which export-onnx does not write yet");
    std::string bytes(static_cast<size_t>(w.numel) * zeroc_rt_dtype_size(w.dtype), '\0');
    if (zeroc_rt_status_t s = weights.read(w, bytes.data(), 0, bytes.size()))
      return fail(takeStatusText(s));
    t.clear_float_data();
    t.clear_double_data();
    t.set_raw_data(std::move(bytes));
  }
  auto *prop = model.add_metadata_props();
  prop->set_key("zeroc.checkpoint");
  prop->set_value(meta.dir + " (step " + std::to_string(meta.globalSteps) + ")");
  std::string out;
  if (!model.SerializeToString(&out))
    return fail("cannot serialize the model (larger than 2 GiB?)");
  if (zeroc_rt_status_t s = writeFileDurably(outPath, out))
    return fail(takeStatusText(s));
  std::cout << "zeroc: wrote " << outPath << ": " << modelPath << " with the "
            << weights.tensors().size() << " trained tensors of " << meta.dir
            << " (step " << meta.globalSteps << ")\n";
  return 0;
}

} // namespace zeroc
