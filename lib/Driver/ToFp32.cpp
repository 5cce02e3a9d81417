//===- ToFp32.cpp - zeroc to-fp32: a checkpoint's consolidated weights ---===//
//
//   zeroc to-fp32 CKPT_DIR OUT.safetensors [--tag TAG]
//
// DeepSpeed's zero_to_fp32 for zeroc's checkpoints (docs/Checkpoints.md):
// every parameter whole, in fp32, under the model's initializer names
// (the PyTorch state_dict names when the model was exported with
// zeroc_torch.export), from the fp32 masters where the run kept them and
// otherwise from the parameters (widened from fp16/bf16; f64 stays f64),
// with rank 0's model buffers. Tied weights are written once, as
// safetensors' own save_model does; __metadata__ "zeroc.aliases" lists
// their other names (zeroc_torch.load_fp32 ties them back). The file goes
// through a temporary name, so an error leaves no partial OUT.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Driver/ToFp32.h"

#include "CheckpointWeights.h"

#include <nlohmann/json.hpp>

#include <iostream>
#include <string>
#include <vector>

namespace zeroc {
namespace {

using namespace zeroc_rt::checkpoint;

bool isStateDictName(const std::string &name) {
  return name.rfind("onnx::", 0) != 0 && name.find('/') == std::string::npos;
}

int fail(const std::string &msg) {
  std::cerr << "zeroc: error: " << msg << "\n";
  return 1;
}

} // namespace

int runToFp32(int argc, char **argv) {
  std::vector<std::string> positional;
  std::string tag;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--tag" && i + 1 < argc)
      tag = argv[++i];
    else if (a.rfind("--tag=", 0) == 0)
      tag = a.substr(6);
    else if (a.size() > 1 && a[0] == '-')
      return fail("to-fp32: unknown option '" + a +
                  "'; usage: zeroc to-fp32 CKPT_DIR OUT.safetensors [--tag TAG]");
    else
      positional.push_back(a);
  }
  if (positional.size() != 2)
    return fail("to-fp32: usage: zeroc to-fp32 CKPT_DIR OUT.safetensors [--tag TAG]");
  const std::string &dir = positional[0], &outPath = positional[1];
  if (outPath.size() < 12 ||
      outPath.compare(outPath.size() - 12, 12, ".safetensors") != 0)
    return fail("to-fp32: '" + outPath +
                "': the output must end in .safetensors (the format zeroc writes)");

  Metadata meta;
  if (zeroc_rt_status_t s = readMetadata(dir, tag, "to-fp32", "--tag", meta))
    return fail(takeStatusText(s));
  CheckpointWeights weights(meta);
  std::vector<TensorSource> tensors;
  std::vector<std::string> unnamed;
  for (const WeightTensor &w : weights.tensors()) {
    TensorSource t;
    t.name = w.name;
    t.dtype = w.dtype;
    t.shape = w.shape;
    t.count = w.numel;
    t.read = [&weights, &w](void *dst, size_t offset, size_t bytes) {
      return weights.read(w, dst, offset, bytes);
    };
    tensors.push_back(std::move(t));
    if (!w.buffer && !isStateDictName(w.name))
      unnamed.push_back(w.name);
  }

  nlohmann::json aliases = nlohmann::json::object();
  for (const auto &[alias, name] : meta.aliases)
    aliases[alias] = name;
  std::map<std::string, std::string> metadata = {
      {"format", "pt"},
      {"zeroc.checkpoint", meta.dir},
      {"zeroc.global_steps", std::to_string(meta.globalSteps)},
      {"zeroc.aliases", aliases.dump()}};
  WrittenFile written;
  if (zeroc_rt_status_t s = writeSafetensors(outPath, tensors, metadata, written))
    return fail("to-fp32: " + takeStatusText(s));
  for (size_t i = 0; i < unnamed.size() && i < 3; ++i)
    std::cerr << "zeroc: warning: to-fp32: parameter '" << unnamed[i]
              << "' has an exporter's name, not a state_dict name; export "
                 "the model with python3 -m zeroc_torch.export to keep "
                 "PyTorch's names\n";
  std::cout << "zeroc: wrote " << outPath << ": " << meta.params.size()
            << " parameters and " << meta.buffers.size()
            << " buffers in fp32 from " << meta.dir << " (step "
            << meta.globalSteps << ", saved by " << meta.world << " rank"
            << (meta.world == 1 ? "" : "s") << " at ZeRO stage " << meta.stage
            << ")";
  if (!meta.aliases.empty())
    std::cout << "; " << meta.aliases.size()
              << " tied name(s) in __metadata__ zeroc.aliases";
  std::cout << "\n";
  return 0;
}

} // namespace zeroc
