//===- GraphBuilder.cpp - ONNX graph to func.func @forward ----------------===//
#include "GraphBuilder.h"
#include "OnnxGraphChecks.h"
#include "OnnxModelLoader.h"
#include "OpVersions.h"
#include "ParameterMarker.h"

#include "zeroc/Dialect/Graph/ElementsData.h"
#include "zeroc/Dialect/Graph/GraphOps.h"

#include "llvm/ADT/APFloat.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Verifier.h"

#include <cstring>
#include <unordered_set>

using namespace mlir;

namespace zeroc::onnximport {

namespace {

/// The tensor's elements as packed little-endian bytes, whichever field of
/// the proto holds them; throws when the count does not match the dims.
std::string packedBytes(const onnx::TensorProto &t, int64_t count) {
  using TP = onnx::TensorProto;
  int64_t width = elementBytes(t.data_type());
  if (width == 0)
    throw ImportError("tensor '" + t.name() + "' has an unsupported element type");
  auto mismatch = [&](int64_t have) {
    return ImportError("tensor '" + t.name() + "' holds " + std::to_string(have) +
                       " elements but its dims need " + std::to_string(count));
  };
  if (t.data_location() == TP::EXTERNAL)
    throw ImportError("tensor '" + t.name() + "' still refers to external data");
  if (t.has_raw_data()) {
    if (static_cast<int64_t>(t.raw_data().size()) != count * width)
      throw mismatch(static_cast<int64_t>(t.raw_data().size()) / width);
    return t.raw_data();
  }
  std::string out;
  auto fill = [&](const auto &field, auto convert) {
    if (field.size() != count)
      throw mismatch(field.size());
    out.assign(static_cast<size_t>(count * width), '\0');
    for (int64_t i = 0; i < count; ++i) {
      auto v = convert(field.Get(i));
      std::memcpy(&out[i * width], &v, width);
    }
  };
  switch (t.data_type()) {
  case TP::FLOAT: fill(t.float_data(), [](float v) { return v; }); break;
  case TP::DOUBLE: fill(t.double_data(), [](double v) { return v; }); break;
  case TP::INT64: fill(t.int64_data(), [](int64_t v) { return v; }); break;
  case TP::INT32: fill(t.int32_data(), [](int32_t v) { return v; }); break;
  case TP::INT8: fill(t.int32_data(), [](int32_t v) { return int8_t(v); }); break;
  case TP::BOOL: fill(t.int32_data(), [](int32_t v) { return uint8_t(v != 0); }); break;
  case TP::FLOAT16:
  case TP::BFLOAT16: fill(t.int32_data(), [](int32_t v) { return uint16_t(v); }); break;
  default: throw ImportError("tensor '" + t.name() + "' has an unsupported element type");
  }
  return out;
}

std::vector<int64_t> dimsOf(const onnx::TensorProto &t) {
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  checkedNumElements(dims);
  return dims;
}

} // namespace

GraphBuilder::GraphBuilder(MLIRContext &ctx, const onnx::ModelProto &model,
                           const std::string &path, bool allowNoLoss,
                           MappedInitializers mapped)
    : ctx(ctx), model(model), path(path), mapped(std::move(mapped)), b(&ctx),
      allowNoLoss(allowNoLoss) {}

Type GraphBuilder::elementType(int32_t dtype) const {
  using TP = onnx::TensorProto;
  MLIRContext *c = &ctx;
  switch (dtype) {
  case TP::FLOAT: return Float32Type::get(c);
  case TP::DOUBLE: return Float64Type::get(c);
  case TP::FLOAT16: return Float16Type::get(c);
  case TP::BFLOAT16: return BFloat16Type::get(c);
  case TP::INT64: return IntegerType::get(c, 64);
  case TP::INT32: return IntegerType::get(c, 32);
  case TP::INT8: return IntegerType::get(c, 8);
  case TP::BOOL: return IntegerType::get(c, 1);
  default:
    throw ImportError("unsupported element type " + onnxTypeName(dtype));
  }
}

int32_t GraphBuilder::dtypeOf(Type t) const {
  using TP = onnx::TensorProto;
  if (t.isF32()) return TP::FLOAT;
  if (t.isF64()) return TP::DOUBLE;
  if (t.isF16()) return TP::FLOAT16;
  if (t.isBF16()) return TP::BFLOAT16;
  if (t.isInteger(64)) return TP::INT64;
  if (t.isInteger(32)) return TP::INT32;
  if (t.isInteger(8)) return TP::INT8;
  if (t.isInteger(1)) return TP::BOOL;
  throw ImportError("internal: no ONNX dtype for an MLIR element type");
}

RankedTensorType GraphBuilder::tensorType(const std::vector<int64_t> &dims,
                                          int32_t dtype) const {
  checkedNumElements(dims);
  return RankedTensorType::get(dims, elementType(dtype));
}

DenseElementsAttr GraphBuilder::toAttr(const onnx::TensorProto &t) const {
  std::vector<int64_t> dims = dimsOf(t);
  RankedTensorType type = tensorType(dims, t.data_type());
  std::string bytes = packedBytes(t, type.getNumElements());
  if (t.data_type() == onnx::TensorProto::BOOL) {
    SmallVector<bool> bits(bytes.begin(), bytes.end());
    return DenseElementsAttr::get(type, ArrayRef<bool>(bits));
  }
  return DenseElementsAttr::getFromRawBuffer(
      type, ArrayRef<char>(bytes.data(), bytes.size()));
}

ElementsAttr GraphBuilder::initializerValue(const onnx::TensorProto &t) const {
  // Large enough that the IR's hex printing and uniquing would cost more
  // than the resource's indirection; small weights stay readable in dumps.
  constexpr int64_t kResourceBytes = int64_t(64) << 10;
  auto it = mapped.find(t.name());
  if (it == mapped.end()) {
    int64_t width = elementBytes(t.data_type());
    std::vector<int64_t> dims = dimsOf(t);
    if (checkedNumElements(dims) * width < kResourceBytes)
      return toAttr(t);
  }
  RankedTensorType type = tensorType(dimsOf(t), t.data_type());
  int64_t need = type.getNumElements() * elementBytes(t.data_type());
  if (it != mapped.end()) {
    if (static_cast<int64_t>(it->second.size()) != need)
      throw ImportError("tensor '" + t.name() + "': mapped data has the wrong size");
    // The mapping lives until the process ends (MappedFiles.h).
    return DenseResourceElementsAttr::get(
        type, t.name(),
        AsmResourceBlob(it->second, /*dataAlignment=*/1, /*deleter=*/nullptr,
                        /*dataIsMutable=*/false));
  }
  std::string bytes = packedBytes(t, type.getNumElements());
  return DenseResourceElementsAttr::get(
      type, t.name(),
      HeapAsmResourceBlob::allocateAndCopyWithAlign(
          ArrayRef<char>(bytes.data(), bytes.size()), alignof(uint64_t)));
}

HostTensor GraphBuilder::toHost(const onnx::TensorProto &t) const {
  using TP = onnx::TensorProto;
  HostTensor h;
  h.dtype = t.data_type();
  h.dims = dimsOf(t);
  int64_t n = checkedNumElements(h.dims);
  std::string bytes = packedBytes(t, n);
  h.resize(n);
  const char *p = bytes.data();
  for (int64_t i = 0; i < n; ++i) {
    switch (h.dtype) {
    case TP::FLOAT: { float v; std::memcpy(&v, p + 4 * i, 4); h.floats[i] = v; break; }
    case TP::DOUBLE: { double v; std::memcpy(&v, p + 8 * i, 8); h.floats[i] = v; break; }
    case TP::INT64: { int64_t v; std::memcpy(&v, p + 8 * i, 8); h.ints[i] = v; break; }
    case TP::INT32: { int32_t v; std::memcpy(&v, p + 4 * i, 4); h.ints[i] = v; break; }
    case TP::INT8: h.ints[i] = static_cast<int8_t>(p[i]); break;
    case TP::BOOL: h.ints[i] = p[i] != 0; break;
    case TP::FLOAT16:
    case TP::BFLOAT16: {
      uint16_t bits;
      std::memcpy(&bits, p + 2 * i, 2);
      APFloat f(h.dtype == TP::FLOAT16 ? APFloat::IEEEhalf() : APFloat::BFloat(),
                APInt(16, bits));
      h.floats[i] = f.convertToDouble();
      break;
    }
    default: throw ImportError("tensor '" + t.name() + "' has an unsupported element type");
    }
  }
  return h;
}

namespace {

/// Float initializers that a training-mode BatchNormalization reads as its
/// running mean or variance (inputs 3 and 4) and whose updated value it
/// outputs (outputs 1 and 2): model buffers that training updates, never
/// parameters, whatever a marker says (no framework trains running
/// statistics by gradient).
std::unordered_set<std::string> updatedRunningStats(const onnx::GraphProto &g,
                                                    int64_t opset) {
  std::unordered_set<std::string> names;
  for (const auto &node : g.node()) {
    if (node.op_type() != "BatchNormalization" || node.input_size() < 5)
      continue;
    bool training = node.output_size() > 1; // opset 9-13
    if (opset >= 14) {
      training = false;
      for (const auto &a : node.attribute())
        if (a.name() == "training_mode")
          training = a.i() != 0;
    }
    if (!training)
      continue;
    for (int i : {3, 4})
      if (node.output_size() > i - 2 && !node.output(i - 2).empty())
        names.insert(node.input(i));
  }
  return names;
}

} // namespace

void GraphBuilder::setBufferUpdate(const std::string &name, Value value,
                                   const std::string &by) {
  auto [it, inserted] = bufferUpdatedBy.emplace(name, by);
  if (!inserted)
    throw ImportError("updates the running statistic '" + name +
                      "', which node '" + it->second +
                      "' updates already; zeroc keeps one update of a buffer "
                      "per micro-step: give each BatchNormalization its own "
                      "running statistics");
  bufferUpdates.emplace_back(name, value);
}

void GraphBuilder::declareParams(OpBuilder &mb) {
  std::vector<std::pair<std::string, ElementsAttr>> floats;
  std::unordered_set<std::string> floatNames;
  for (const auto &init : model.graph().initializer()) {
    try {
      if (values.count(init.name()) || floatNames.count(init.name()))
        throw ImportError("defined twice");
      if (isFloatDType(init.data_type())) {
        floats.emplace_back(init.name(), initializerValue(init));
        floatNames.insert(init.name());
        continue;
      }
      declareConstantInit(init);
    } catch (const ImportError &e) {
      throw ImportError("initializer '" + init.name() + "': " + e.what());
    }
  }
  // An exporter that merges initializers holding equal values (torch.onnx's
  // eval-mode export) leaves "Identity(kept) -> merged name" for each one it
  // dropped; the values were equal, so each name gets its own copy back.
  std::vector<ImportMessage> unmergeNotes;
  {
    std::unordered_map<std::string, size_t> floatIndex;
    for (size_t i = 0; i < floats.size(); ++i)
      floatIndex[floats[i].first] = i;
    for (const auto &node : model.graph().node()) {
      if (node.op_type() != "Identity" || node.input_size() != 1 ||
          node.output_size() != 1)
        continue;
      const std::string &out = node.output(0);
      auto src = floatIndex.find(node.input(0));
      llvm::StringRef o(out);
      if (src == floatIndex.end() || floatNames.count(out) || values.count(out) ||
          o.starts_with("/") || o.contains("::") || !o.contains('.'))
        continue;
      floats.emplace_back(out, floats[src->second].second);
      floatNames.insert(out);
      unmerged.insert(out);
      unmergeNotes.push_back(
          {false, "initializer '" + out + "' is an Identity of '" + node.input(0) +
                      "' (an exporter merged initializers that held equal "
                      "values): zeroc gives it its own copy again, so each "
                      "trains on its own"});
    }
  }
  // What each float initializer is: decided in ParameterMarker.cpp.
  ParameterPlan plan = planParameters(model, floats, paramFlags);
  messages = std::move(plan.messages);
  if (unmergeNotes.size() > 3) {
    unmergeNotes.resize(1);
    unmergeNotes[0].text += " (and " + std::to_string(unmerged.size() - 1) +
                            " more like it)";
  }
  messages.insert(messages.end(), unmergeNotes.begin(), unmergeNotes.end());
  paddingIdx = std::move(plan.paddingIdx);
  if (!plan.aliases.empty()) {
    llvm::SmallVector<NamedAttribute> aliases;
    for (const auto &[alias, name] : plan.aliases)
      aliases.push_back(b.getNamedAttr(alias, b.getStringAttr(name)));
    module->setAttr("graph.aliases", b.getDictionaryAttr(aliases));
  }
  std::unordered_set<std::string> runningStats =
      updatedRunningStats(model.graph(), opset);
  for (auto &[name, value] : floats) {
    Location loc = NameLoc::get(StringAttr::get(&ctx, name),
                                FileLineColLoc::get(&ctx, path, 0, 0));
    if (runningStats.count(name) && !plan.ties.count(name)) {
      mb.create<graph::BufferOp>(loc, StringAttr::get(&ctx, name), value);
      buffers[name] = llvm::cast<RankedTensorType>(value.getShapedType());
      continue;
    }
    auto tie = plan.ties.find(name);
    if (tie != plan.ties.end()) {
      tied[name] = tie->second;
      continue;
    }
    InitRole role = plan.roles.at(name);
    if (role == InitRole::Constant) {
      // A constant's value is uniqued and foldable: a dense attribute.
      Entry e;
      e.type = llvm::cast<RankedTensorType>(value.getShapedType());
      e.attr = llvm::isa<DenseElementsAttr>(value)
                   ? llvm::cast<DenseElementsAttr>(value)
                   : DenseElementsAttr::getFromRawBuffer(
                         e.type, graph::rawElementBytes(value));
      values[name] = e;
      continue;
    }
    mb.create<graph::ParamOp>(
        loc, StringAttr::get(&ctx, name), value,
        role == InitRole::Trainable ? mb.getUnitAttr() : UnitAttr(),
        /*master=*/TypeAttr());
    params[name] = llvm::cast<RankedTensorType>(value.getShapedType());
    if (role == InitRole::Trainable)
      trainableParams.insert(name);
  }
}

void GraphBuilder::declareConstantInit(const onnx::TensorProto &init) {
  Entry e;
  e.type = tensorType(dimsOf(init), init.data_type());
  if (e.type.getNumElements() <= kMaxFoldElements)
    e.constant = std::make_shared<HostTensor>(toHost(init));
  else
    e.attr = toAttr(init);
  values[init.name()] = e;
}

Entry &GraphBuilder::lookup(const std::string &name) {
  auto it = values.find(name);
  if (it != values.end())
    return it->second;
  auto um = unmodeled.find(name);
  if (um != unmodeled.end())
    throw ImportError("input '" + name + "' " + um->second);
  if (sequences.count(name))
    throw ImportError("input '" + name + "' is a sequence; zeroc resolves "
                      "sequences at import, and only sequence ops may read one");
  auto tie = tied.find(name);
  if (tie != tied.end()) {
    // A folded tied weight: the original parameter's load (transposed).
    Value v = lookup(tie->second.original).value;
    Entry e;
    e.type = llvm::cast<RankedTensorType>(v.getType());
    if (tie->second.transposed) {
      SmallVector<int64_t> perm, shape(e.type.getShape());
      for (int64_t i = 0; i < e.type.getRank(); ++i)
        perm.push_back(i);
      std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
      std::swap(shape[shape.size() - 1], shape[shape.size() - 2]);
      e.type = RankedTensorType::get(shape, e.type.getElementType());
      Location loc = NameLoc::get(StringAttr::get(&ctx, name),
                                  FileLineColLoc::get(&ctx, path, 0, 0));
      v = b.create<graph::TransposeOp>(loc, e.type, v, b.getI64ArrayAttr(perm));
    }
    e.value = v;
    return values[name] = e;
  }
  auto param = params.find(name);
  auto buffer = buffers.find(name);
  if (param == params.end() && buffer == buffers.end())
    throw ImportError("input '" + name + "' is not defined");
  OpBuilder::InsertionGuard guard(b);
  if (lastParamLoad)
    b.setInsertionPointAfter(lastParamLoad);
  else
    b.setInsertionPointToStart(entryBlock);
  Location loc = NameLoc::get(StringAttr::get(&ctx, name),
                              FileLineColLoc::get(&ctx, path, 0, 0));
  Entry e;
  if (buffer != buffers.end()) {
    e.type = buffer->second;
    lastParamLoad = b.create<graph::LoadBufferOp>(loc, e.type, name);
    e.value = lastParamLoad->getResult(0);
    return values[name] = e;
  }
  e.type = param->second;
  lastParamLoad = b.create<graph::LoadParamOp>(loc, e.type, name);
  e.value = lastParamLoad->getResult(0);
  return values[name] = e;
}

void GraphBuilder::chargeConstant(const std::string &name, int64_t elements,
                                  int64_t width) {
  int64_t bytes = 0, total = 0;
  if (__builtin_mul_overflow(elements, width, &bytes) ||
      __builtin_add_overflow(constantBytes, bytes, &total) ||
      total > maxConstantBytes)
    throw ImportError(
        "constant '" + name + "' (" + std::to_string(elements) +
        " elements of " + std::to_string(width) + " bytes) would take the "
        "constant data zeroc holds and writes into model.bin past its limit "
        "of " + std::to_string(maxConstantBytes) +
        " bytes; --max-constant-bytes raises it");
  constantBytes = total;
}

Value GraphBuilder::materialize(Entry &e, Location loc,
                                const std::string &name) {
  if (e.value)
    return e.value;
  // Constants folded on the host were counted when they were made.
  if (!e.constant)
    chargeConstant(name, e.type.getNumElements(),
                   std::max<int64_t>(1, e.type.getElementTypeBitWidth() / 8));
  DenseElementsAttr attr = e.attr ? e.attr : e.constant->toAttr(e.type);
  e.value = b.create<graph::ConstantOp>(loc, attr);
  return e.value;
}

void GraphBuilder::checkAgainstShapeInference(const std::string &name,
                                              const Entry &e) {
  auto it = inferred.find(name);
  if (it == inferred.end() || !it->second->has_tensor_type())
    return;
  const auto &tt = it->second->tensor_type();
  if (tt.elem_type() != 0 && tt.elem_type() != dtypeOf(e.type.getElementType()))
    throw ImportError("value '" + name + "': element type differs from ONNX "
                      "shape inference");
  if (!tt.has_shape())
    return;
  if (tt.shape().dim_size() != e.type.getRank())
    throw ImportError("value '" + name + "': rank " +
                      std::to_string(e.type.getRank()) +
                      " differs from ONNX shape inference's " +
                      std::to_string(tt.shape().dim_size()));
  for (int i = 0; i < tt.shape().dim_size(); ++i) {
    const auto &d = tt.shape().dim(i);
    if (d.has_dim_value() && d.dim_value() != e.type.getDimSize(i))
      throw ImportError("value '" + name + "': dim " + std::to_string(i) +
                        " is " + std::to_string(e.type.getDimSize(i)) +
                        " but ONNX shape inference says " +
                        std::to_string(d.dim_value()));
  }
}

func::FuncOp GraphBuilder::buildForward() {
  const onnx::GraphProto &g = model.graph();
  Location fileLoc = FileLineColLoc::get(&ctx, path, 0, 0);
  SmallVector<Type> argTypes;
  SmallVector<const onnx::ValueInfoProto *> args;
  for (const auto &in : g.input()) {
    if (params.count(in.name()) || values.count(in.name()))
      continue; // an initializer listed as an input (older exporters)
    std::vector<int64_t> dims;
    for (const auto &d : in.type().tensor_type().shape().dim())
      dims.push_back(d.dim_value());
    try {
      argTypes.push_back(tensorType(dims, in.type().tensor_type().elem_type()));
    } catch (const ImportError &e) {
      throw ImportError("graph input '" + in.name() + "': " + e.what());
    }
    args.push_back(&in);
  }

  // Converting the body determines the result types; build a placeholder
  // function type and fix it up once the outputs are known.
  auto fn = func::FuncOp::create(fileLoc, "forward",
                                 b.getFunctionType(argTypes, {}));
  Block *entry = fn.addEntryBlock();
  entryBlock = entry;
  b.setInsertionPointToStart(entry);
  for (size_t i = 0; i < args.size(); ++i) {
    fn.setArgAttr(i, graph::kInputAttrName, b.getStringAttr(args[i]->name()));
    Entry e;
    e.value = entry->getArgument(i);
    e.type = llvm::cast<RankedTensorType>(argTypes[i]);
    values[args[i]->name()] = e;
  }

  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto &node = g.node(i);
    try {
      convertNode(*this, node, i);
      for (const auto &out : node.output())
        if (!out.empty() && values.count(out))
          checkAgainstShapeInference(out, values[out]);
    } catch (const ImportError &e) {
      throw ImportError(describeNode(node, i) + ": " + e.what());
    }
  }

  // Results: every graph output; the first scalar float one is the loss.
  SmallVector<Value> results;
  int lossIndex = -1;
  std::string outputsSeen;
  for (const auto &out : g.output()) {
    Entry *found;
    try {
      found = &lookup(out.name());
    } catch (const ImportError &) {
      auto um = unmodeled.find(out.name());
      throw ImportError("graph output '" + out.name() + "' " +
                        (um != unmodeled.end() ? um->second
                                               : "is produced by no node"));
    }
    Entry &e = *found;
    materialize(e, fileLoc, out.name());
    if (lossIndex < 0 && e.type.getRank() == 0 &&
        llvm::isa<FloatType>(e.type.getElementType()))
      lossIndex = results.size();
    std::string typeStr;
    llvm::raw_string_ostream os(typeStr);
    os << e.type;
    outputsSeen += (outputsSeen.empty() ? "'" : ", '") + out.name() + "' (" +
                   os.str() + ")";
    results.push_back(e.value);
  }
  if (lossIndex < 0 && !allowNoLoss)
    throw ImportError("the model has no scalar floating-point output to train "
                      "on (outputs: " + outputsSeen +
                      "); export a model whose forward returns the loss");
  // Then the new values of the buffers, stored after the micro-step.
  size_t numOutputs = results.size();
  for (const auto &[name, value] : bufferUpdates)
    results.push_back(value);
  b.create<func::ReturnOp>(fileLoc, results);
  fn.setFunctionType(b.getFunctionType(argTypes, ValueRange(results).getTypes()));
  for (size_t i = 0; i < numOutputs; ++i)
    fn.setResultAttr(i, graph::kOutputAttrName,
                     b.getStringAttr(g.output(i).name()));
  for (size_t i = 0; i < bufferUpdates.size(); ++i)
    fn.setResultAttr(numOutputs + i, graph::kBufferUpdateAttrName,
                     FlatSymbolRefAttr::get(&ctx, bufferUpdates[i].first));
  if (lossIndex >= 0)
    fn.setResultAttr(lossIndex, graph::kLossAttrName, b.getUnitAttr());
  return fn;
}

OwningOpRef<ModuleOp> GraphBuilder::build() {
  OwningOpRef<ModuleOp> owned = ModuleOp::create(FileLineColLoc::get(&ctx, path, 0, 0));
  module = *owned;
  module->setAttr("graph.source", b.getStringAttr(path));
  for (const auto &op : model.opset_import())
    if (op.domain().empty() || op.domain() == "ai.onnx")
      opset = op.version();
  for (const auto &vi : model.graph().value_info())
    inferred[vi.name()] = &vi.type();
  for (const auto &vi : model.graph().output())
    inferred[vi.name()] = &vi.type();

  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error && lastDiagnostic.empty())
      lastDiagnostic = diag.str();
    return success();
  });
  OpBuilder mb(&ctx);
  mb.setInsertionPointToEnd(module.getBody());
  declareParams(mb);
  func::FuncOp fn = buildForward();
  module.getBody()->push_back(fn);
  if (!bufferUpdates.empty())
    messages.push_back(
        {false, std::to_string(bufferUpdates.size()) +
                    " BatchNormalization running statistics ('" +
                    bufferUpdates.front().first + "'" +
                    (bufferUpdates.size() > 1 ? ", ..." : "") +
                    ") are buffers: no gradient, each rank updates its own "
                    "from its micro-batches, --save-params saves them" +
                    (model.producer_name() == "pytorch"
                         ? std::string("; running variances use the unbiased "
                                       "batch variance, as PyTorch's BatchNorm "
                                       "(the model comes from PyTorch)")
                         : std::string("; running variances use the biased "
                                       "batch variance, as the ONNX operator"))});
  // A padding_idx that no lookup carries would silently train that row.
  for (const auto &[name, idx] : paddingIdx) {
    bool applied = false;
    fn.walk([&](graph::GatherOp g) {
      auto ld = g.getData().getDefiningOp<graph::LoadParamOp>();
      if (ld && ld.getParam() == name && g.getPaddingIdx())
        applied = true;
    });
    if (!applied)
      messages.push_back(
          {true, "padding_idx " + std::to_string(idx) + " of '" + name +
                     "' is not applied: no Gather along axis 0 reads it (the "
                     "exporter wrote the lookup another way), so zeroc trains "
                     "that row, where PyTorch's nn.Embedding keeps its "
                     "gradient zero"});
  }
  if (failed(verify(module)))
    throw ImportError("internal: the imported IR does not verify: " + lastDiagnostic);
  return owned;
}

} // namespace zeroc::onnximport
