//===- OnnxImporter.cpp - public entry point of the ONNX importer ---------===//
#include "zeroc/Import/OnnxImporter.h"

#include "GraphBuilder.h"

#include "zeroc/Support/MessageText.h"
#include "OnnxModelLoader.h"

namespace zeroc {

mlir::OwningOpRef<mlir::ModuleOp>
importOnnxModel(mlir::MLIRContext &context, const std::string &path,
                const OnnxImportOptions &options, std::string &error) {
  try {
    onnximport::MappedInitializers mapped;
    onnx::ModelProto model =
        onnximport::loadModel(path, options.inputShapes, &mapped);
    onnximport::GraphBuilder builder(context, model, path, options.allowNoLoss,
                                     std::move(mapped));
    builder.setMaxConstantBytes(options.maxConstantBytes);
    return builder.build();
  } catch (const onnximport::ImportError &e) {
    error = path + ": " + e.what();
  } catch (const std::bad_alloc &) {
    error = path + ": out of memory while importing (is a dim or size field corrupt?)";
  } catch (const std::exception &e) {
    error = path + ": " + e.what();
  }
  // One line, always: names from the model may hold any bytes.
  error = messageText(error, std::string::npos);
  return nullptr;
}

bool parseInputShapeFlag(const std::string &flag,
                         std::map<std::string, std::vector<int64_t>> &shapes,
                         std::string &error) {
  size_t eq = flag.rfind('=');
  if (eq == std::string::npos || eq == 0) {
    error = "--input-shape '" + flag + "' must look like NAME=D0,D1,...";
    return false;
  }
  std::string name = flag.substr(0, eq), dims = flag.substr(eq + 1);
  std::vector<int64_t> out;
  size_t pos = 0;
  while (pos <= dims.size() && !dims.empty()) {
    size_t comma = dims.find(',', pos);
    std::string item = dims.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (item.empty() || item.size() > 12 ||
        item.find_first_not_of("0123456789") != std::string::npos ||
        std::stoll(item) == 0) {
      error = "--input-shape '" + flag + "': '" + item +
              "' is not a positive dimension";
      return false;
    }
    out.push_back(std::stoll(item));
    if (comma == std::string::npos)
      break;
    pos = comma + 1;
  }
  shapes[name] = out;
  return true;
}

} // namespace zeroc
