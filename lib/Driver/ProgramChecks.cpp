//===- ProgramChecks.cpp - What out/train can run, checked at compile time ===//
#include "ProgramChecks.h"

#include "zeroc/Dialect/Graph/GraphOps.h"
#include "zeroc/Emit/CxxText.h"
#include "zeroc_rt/contract.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"

#include <map>

using namespace mlir;

namespace zeroc {

namespace {

/// A name as the error shows it: quoted and escaped, cut at 80 bytes.
std::string shown(llvm::StringRef name) {
  if (name.size() <= 80)
    return cxxStringLiteral(name);
  return cxxStringLiteral(name.take_front(80)) + "... (" +
         std::to_string(name.size()) + " bytes)";
}

bool checkInputName(llvm::StringRef name, std::string &error) {
  const char *why = nullptr;
  if (name.empty())
    why = "is empty";
  else if (name.contains('\0'))
    why = "holds a NUL byte";
  else if (name.contains('/'))
    why = "holds a '/'";
  else if (name == "." || name == "..")
    why = "is a directory name";
  else if (name.size() > 250)
    why = "is longer than 250 bytes";
  if (!why)
    return true;
  error = "model input " + shown(name) + " " + why +
          ", so it cannot name its data file (--data DIR/<input>.npy); "
          "rename the input when exporting the model";
  return false;
}

bool checkInputs(func::FuncOp fn, std::string &error) {
  std::string first;
  int64_t batch = -1;
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
    auto nameAttr = fn.getArgAttrOfType<StringAttr>(i, graph::kInputAttrName);
    std::string name =
        nameAttr ? nameAttr.str() : "input" + std::to_string(i);
    if (!checkInputName(name, error))
      return false;
    auto type = llvm::dyn_cast<RankedTensorType>(fn.getArgumentTypes()[i]);
    if (!type)
      continue;
    if (type.getElementType().isBF16()) {
      error = "model input " + shown(name) +
              " is bfloat16, which a .npy data file cannot hold; make the "
              "input float32 (and cast inside the model)";
      return false;
    }
    if (type.getRank() == 0) {
      error = "model input " + shown(name) +
              " is a scalar; every input needs a leading batch dim (the "
              "trainer reads (samples, ...) arrays)";
      return false;
    }
    if (batch < 0) {
      batch = type.getDimSize(0);
      first = name;
    } else if (type.getDimSize(0) != batch) {
      error = "model input " + shown(name) + " has batch dim " +
              std::to_string(type.getDimSize(0)) + " but input " +
              shown(first) + " has " + std::to_string(batch) +
              "; every input needs the same leading batch dim (export the "
              "model with one batch size, or bind it with --input-shape)";
      return false;
    }
  }
  return true;
}

bool checkParams(ModuleOp module, std::string &error) {
  std::map<std::string, std::string> byFile;
  // Frozen parameters and buffers are saved too.
  SmallVector<llvm::StringRef> names;
  for (auto p : module.getOps<graph::ParamOp>())
    names.push_back(p.getSymName());
  for (auto buf : module.getOps<graph::BufferOp>())
    names.push_back(buf.getSymName());
  for (llvm::StringRef name : names) {
    if (name.empty() || name.contains('\0')) {
      error = "initializer " + shown(name) + " " +
              (name.empty() ? "has no name" : "holds a NUL byte") +
              "; the trainer names parameters with C strings: rename it";
      return false;
    }
    std::string n = name.str();
    std::string file = zeroc_rt_param_file_name_string(n);
    auto [it, inserted] = byFile.emplace(file, n);
    if (!inserted) {
      error = "initializers " + shown(it->second) + " and " + shown(n) +
              " would both be saved as " + shown(file) +
              " (--save-params writes '/' as '_'); rename one of them";
      return false;
    }
  }
  return true;
}

bool rankTooHigh(Type t) {
  auto rt = llvm::dyn_cast<RankedTensorType>(t);
  return rt && rt.getRank() > ZEROC_RT_MAX_RANK;
}

std::string rankError(const std::string &what, Type t) {
  return what + " has rank " +
         std::to_string(llvm::cast<RankedTensorType>(t).getRank()) +
         "; the trainer's tensors have at most " +
         std::to_string(ZEROC_RT_MAX_RANK) + " dims";
}

bool checkRanks(ModuleOp module, func::FuncOp fn, std::string &error) {
  for (auto p : module.getOps<graph::ParamOp>())
    if (rankTooHigh(p.getType())) {
      error = rankError("initializer " + shown(p.getSymName()), p.getType());
      return false;
    }
  if (!fn)
    return true;
  for (auto [i, t] : llvm::enumerate(fn.getArgumentTypes()))
    if (rankTooHigh(t)) {
      error = rankError("model input " + std::to_string(i), t);
      return false;
    }
  WalkResult r = fn.walk([&](Operation *op) {
    for (Type t : op->getResultTypes())
      if (rankTooHigh(t)) {
        error = rankError("node " + shown(graph::onnxNameOf(op->getLoc())) + " (" +
                              op->getName().getStringRef().str() +
                              ") makes a value that",
                          t);
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return !r.wasInterrupted();
}

/// The runtime's dtype of a float element type (F32 for anything else:
/// only float parameters are trained).
zeroc_rt_dtype_t runtimeDtype(Type t) {
  if (t.isF64())
    return ZEROC_RT_DTYPE_F64;
  if (t.isF16())
    return ZEROC_RT_DTYPE_F16;
  if (t.isBF16())
    return ZEROC_RT_DTYPE_BF16;
  return ZEROC_RT_DTYPE_F32;
}

} // namespace

bool checkRuntimeContract(ModuleOp module, std::string &error) {
  auto fn = module.lookupSymbol<func::FuncOp>("forward");
  if (fn && !checkInputs(fn, error))
    return false;
  return checkRanks(module, fn, error) && checkParams(module, error);
}

bool checkTrainedParams(ModuleOp module, std::string &error) {
  for (auto p : module.getOps<graph::ParamOp>()) {
    if (!p.getTrainable())
      continue;
    Type elem = p.getType().getElementType();
    if (zeroc_rt_param_master_ok(runtimeDtype(elem),
                                 runtimeDtype(p.getMasterElementType())))
      continue;
    std::string type;
    llvm::raw_string_ostream os(type);
    os << elem;
    error = "initializer " + shown(p.getSymName()) + " is " + type +
            ", which zeroc trains only with an f32 master copy, and this "
            "compile gives it none; export the model in float32 (zeroc's "
            "fp16/bf16 config makes the 16-bit copies)";
    return false;
  }
  return true;
}

} // namespace zeroc
