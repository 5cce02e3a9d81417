//===- ProgramPrinter.cpp - The target-neutral emission core --------------===//
//
// Every decision (partition, collectives, their order, the arena offset of
// every tensor) was made by passes on the zero dialect. The printer names
// values, reads the plan, stores constants in the blob and prints the
// functions around the ops; reshapes, views and shard slices alias their
// source. What an op computes or moves is the target's (TargetPrinter).
//
//===----------------------------------------------------------------------===//

#include "zeroc/Emit/ProgramPrinter.h"
#include "zeroc/Emit/CxxText.h"
#include "zeroc/Emit/EmitTypes.h"

#include "zeroc/Dialect/Zero/BufferPlanning.h"

#include "llvm/Support/FormatVariadic.h"

#include <utility>

using namespace mlir;

namespace zeroc {

TargetPrinter::~TargetPrinter() = default;

void ProgramPrinter::call(const llvm::Twine &expr, llvm::StringRef indent) {
  std::string text = expr.str();
  constexpr llvm::StringLiteral kKernel = "zeroc_rt_k_";
  if (llvm::StringRef(text).starts_with(kKernel)) {
    llvm::StringRef name = llvm::StringRef(text).drop_front(kKernel.size());
    if (!target.hasKernel(name.take_until([](char c) { return c == '('; })) &&
        missingKernel.empty())
      missingKernel = name.take_until([](char c) { return c == '('; }).str();
    text = kernel(name);
  }
  line(indent + "ZRT_TRY(" + text + ");");
}

std::string ProgramPrinter::storeScalar(Value v, StringRef cxxType,
                                        StringRef value) const {
  if (hostOffset.count(v))
    return ("*(" + cxxType + " *)" + var(v) + " = " + value + ";").str();
  return target.storeArenaScalar(cxxType, var(v), value);
}

std::string TargetPrinter::loadArenaScalar(StringRef cxxType, StringRef ptr,
                                           StringRef dest) const {
  return (dest + " = (double)*(" + cxxType + " *)" + ptr + ";").str();
}

std::string TargetPrinter::storeArenaScalar(StringRef cxxType, StringRef ptr,
                                            StringRef value) const {
  return ("*(" + cxxType + " *)" + ptr + " = " + value + ";").str();
}

namespace {

/// Ops per generated function of the micro-step.
constexpr int kOpsPerChunk = 200;

/// Ops that run code worth a span in --trace: kernels, collectives and
/// state updates, not the views, constants and parameter reads that only
/// name memory.
bool isTraced(Operation *op) {
  if (llvm::isa<zero::ReleaseOp, zero::IfFiniteOp>(op))
    return false;
  if (llvm::isa<zero::WaitOp>(op)) // the time the compute waits for a start
    return true;
  return op->getNumResults() == 0 || zero::resultsNeedArena(op);
}

} // namespace

LogicalResult ProgramPrinter::unsupported(Operation *op) const {
  return op->emitOpError("is not supported by the ")
         << target.name() << " emitter yet";
}

LogicalResult ProgramPrinter::collectParams() {
  StringRef name = target.name();
  // Trainable and frozen parameters alike are the engine's ZeRO state.
  for (auto p : module.getOps<graph::ParamOp>()) {
    if (!dtypeName(p.getType().getElementType()) ||
        !dtypeName(p.getMasterElementType()))
      return p.emitOpError("has an element type the ")
             << name << " target does not support";
    if (p.getMaster() && !p.getMasterElementType().isF32())
      return p.emitOpError("has master type ")
             << p.getMasterElementType() << "; the " << name
             << " runtime keeps f32 masters only";
    paramIndices[p.getSymName()] = params.size();
    params.push_back(p);
  }
  // Buffers (updated by the micro-step, never partitioned) are the
  // engine's state too.
  for (auto buf : module.getOps<graph::BufferOp>()) {
    if (!dtypeName(buf.getType().getElementType()))
      return buf.emitOpError("has an element type the ")
             << name << " target does not support";
    bufferIndices[buf.getSymName()] = buffers.size();
    buffers.push_back(buf);
  }
  // Initial values first, parameters then buffers, each 64-byte aligned.
  for (auto p : params) {
    blob.align(kBlobAlignment);
    if (failed(appendElements(p, p.getInitialValue(), blob, name)))
      return failure();
  }
  for (auto buf : buffers) {
    blob.align(kBlobAlignment);
    if (failed(appendElements(buf, buf.getInitialValue(), blob, name)))
      return failure();
  }
  // The constants the program reads follow (K in the generated code): a
  // GPU holds only them; the initial values are read once, on the host.
  constantsOffset = blob.align(kBlobAlignment);
  return success();
}

int64_t ProgramPrinter::blobConstant(Operation *op, ElementsAttr value) {
  int64_t offset = blob.align(kBlobAlignment);
  if (failed(appendElements(op, value, blob, target.name())))
    return -1;
  return offset;
}

/// Reads zero-plan-buffers' offsets: every result that needs arena storage
/// must have one.
LogicalResult ProgramPrinter::readPlan(func::FuncOp fn) {
  auto bytes = module->getAttrOfType<IntegerAttr>(zero::kArenaBytesAttr);
  if (!bytes)
    return module.emitError("module has no buffer plan (run zero-plan-buffers)");
  arenaBytes = bytes.getInt();
  // The gradients planned into their accumulators (kInAccumulatorOffset).
  fn.walk([&](zero::GradAccumulateOp acc) {
    if (acc.getInPlace())
      accumulatorOf[zero::accumulatorStorageOf(acc.getGrad())] = acc.getParam();
  });
  // Nested ops too: a bucket inside the step's zero.if_finite.
  if (auto host = module->getAttrOfType<IntegerAttr>(zero::kHostBytesAttr))
    hostBytes = host.getInt();
  WalkResult walk = fn.getBody().walk([&](Operation *op) {
    if (!op->getNumResults() || !zero::resultsNeedArena(op))
      return WalkResult::advance();
    if (auto host = op->getAttrOfType<ArrayAttr>(zero::kHostOffsetsAttr)) {
      if (host.size() != op->getNumResults() || hostBytes < 0) {
        op->emitOpError("has host offsets but the module no zero.host_bytes "
                        "(run zero-plan-buffers)");
        return WalkResult::interrupt();
      }
      for (auto [r, off] : llvm::zip(op->getResults(), host))
        hostOffset[r] = llvm::cast<IntegerAttr>(off).getInt();
      return WalkResult::advance();
    }
    auto offsets = op->getAttrOfType<ArrayAttr>(zero::kArenaOffsetsAttr);
    if (!offsets || offsets.size() != op->getNumResults()) {
      op->emitOpError("has no arena offsets (run zero-plan-buffers)");
      return WalkResult::interrupt();
    }
    for (auto [r, off] : llvm::zip(op->getResults(), offsets)) {
      int64_t offset = llvm::cast<IntegerAttr>(off).getInt();
      if (offset == zero::kInAccumulatorOffset && !accumulatorOf.count(r)) {
        op->emitOpError("has arena offset -1 but no in-place "
                        "zero.grad_accumulate of its result");
        return WalkResult::interrupt();
      }
      arenaOffset[r] = offset;
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

std::string ProgramPrinter::requestSlotOf(Value token) {
  auto start = token.getDefiningOp<zero::AllGatherStartOp>();
  if (std::optional<int64_t> k = start ? start.getCarryIndex() : std::nullopt) {
    // A carry and its carried start share a slot.
    Carry &carry = carries[*k];
    if (carry.slot.empty())
      carry.slot = "Q[" + std::to_string(nextSlot++) + "]";
    if (start.getCarried())
      carry.wait = llvm::cast<zero::WaitOp>(*token.getUsers().begin());
    (start.getCarried() ? carry.carried : carry.carry) = start;
    return requestSlot[token] = carry.slot;
  }
  return requestSlot[token] = "Q[" + std::to_string(nextSlot++) + "]";
}

std::string ProgramPrinter::descOf(const std::string &ptr, Type t) const {
  std::optional<Shape> s = shapeOf(t);
  return llvm::formatv("T({0}, {1}, {2}, {3})", ptr, dtypeName(s->elem),
                       s->dims.size(), dimsInit(s->dims))
      .str();
}

LogicalResult ProgramPrinter::printOp(Operation *op) {
  // Name results; arena-backed ones get their pointer here.
  for (Value r : op->getResults()) {
    std::string n = "V[" + std::to_string(nextVar++) + "]";
    names[r] = n;
    auto it = arenaOffset.find(r);
    if (it != arenaOffset.end() && it->second == zero::kInAccumulatorOffset)
      line(n + " = (char *)zeroc_rt_engine_grad_accumulator(e, " +
           std::to_string(paramIndex(accumulatorOf.lookup(r))) + ");");
    else if (it != arenaOffset.end())
      line(n + " = A + " + std::to_string(it->second) + ";");
    else if (auto host = hostOffset.find(r); host != hostOffset.end())
      line(n + " = H + " + std::to_string(host->second) + ";");
    if (!shapeOf(r.getType()) || !dtypeName(shapeOf(r.getType())->elem))
      return op->emitOpError("produces a type the ")
             << target.name() << " target does not support: " << r.getType();
  }
  if (isTraced(op)) { // the micro-step's and @train_step's
    line("zeroc_rt_engine_trace_op(e, " + std::to_string(opNames.size()) + ");");
    std::string name = op->getName().getStringRef().str();
    if (std::string node = graph::onnxNameOf(op->getLoc()); !node.empty())
      name += " " + node;
    opNames.push_back(std::move(name));
  }
  LogicalResult printed = llvm::isa<zero::ZeroDialect>(op->getDialect())
                              ? printZeroOp(op)
                              : printGraphOp(op);
  if (succeeded(printed) && !missingKernel.empty()) {
    std::string kernelName = std::exchange(missingKernel, "");
    return op->emitOpError("is not supported by the ")
           << target.name() << " target yet: its runtime has no "
           << kernelName << " kernel";
  }
  return printed;
}

/// Constants and parameter reads name blob data, reshapes their input's
/// storage; every other graph op is a kernel call.
LogicalResult ProgramPrinter::printGraphOp(Operation *op) {
  std::string r = op->getNumResults() ? var(op->getResult(0)) : "";
  if (auto c = llvm::dyn_cast<graph::ConstantOp>(op)) {
    int64_t off = blobConstant(op, c.getValue());
    if (off < 0)
      return failure();
    line(r + " = K + " + std::to_string(off - constantsOffset) + ";");
    return success();
  }
  if (auto ld = llvm::dyn_cast<graph::LoadParamOp>(op)) {
    auto p = module.lookupSymbol<graph::ParamOp>(ld.getParamAttr());
    int64_t off = blobConstant(op, p.getInitialValue());
    if (off < 0)
      return failure();
    line(r + " = K + " + std::to_string(off - constantsOffset) + "; // " +
         cxxStringLiteral(ld.getParam()));
    return success();
  }
  if (auto rs = llvm::dyn_cast<graph::ReshapeOp>(op)) {
    line(r + " = " + var(rs.getInput()) + ";");
    return success();
  }
  if (auto sv = llvm::dyn_cast<graph::StridedViewOp>(op)) {
    int64_t bytes = sv.getOffset() * zero::elementBytes(sv.getType().getElementType());
    line(r + " = " + var(sv.getInput()) + " + " + std::to_string(bytes) + ";");
    return success();
  }
  return target.printKernelCall(*this, op);
}

/// Views, slices and releases only name memory; the step's zero.if_finite
/// is a C++ block; collectives get their request slot and in-place storage
/// here and their call from the target, as does every other zero op.
LogicalResult ProgramPrinter::printZeroOp(Operation *op) {
  std::string r = op->getNumResults() ? var(op->getResult(0)) : "";
  if (auto view = llvm::dyn_cast<zero::ViewOp>(op)) {
    int64_t bytes = view.getOffset() * zero::elementBytes(view.getType().getElementType());
    line(r + " = " + var(view.getBuffer()) + " + " +
         std::to_string(bytes) + ";");
    return success();
  }
  if (auto slice = llvm::dyn_cast<zero::ShardSliceOp>(op)) {
    int64_t bytes = slice.getOffset() *
                    zero::elementBytes(slice.getType().getElementType());
    line(r + " = " + var(slice.getShard()) + " + " + std::to_string(bytes) +
         ";");
    return success();
  }
  if (llvm::isa<zero::ReleaseOp>(op)) {
    line("// " + var(op->getOperand(0)) + " released: its arena space is reused");
    return success();
  }
  if (auto guard = llvm::dyn_cast<zero::IfFiniteOp>(op)) {
    line("if (!*(unsigned char *)" + var(guard.getOverflow()) + ") {");
    for (Operation &nested : guard.getBody().front())
      if (failed(printOp(&nested)))
        return failure();
    line("}");
    return success();
  }
  if (auto wait = llvm::dyn_cast<zero::WaitOp>(op)) {
    auto it = requestSlot.find(wait.getToken());
    if (it == requestSlot.end())
      return op->emitOpError("waits for a collective the ")
             << target.name() << " target did not start";
    // The result is the storage the start wrote into.
    line(r + " = " + var(wait.getToken()) + ";");
    return target.printWait(*this, wait, it->second);
  }
  bool started = llvm::isa<zero::AllGatherStartOp, zero::ReduceScatterStartOp,
                           zero::AllReduceStartOp>(op);
  if (started || llvm::isa<zero::AllGatherOp, zero::ReduceScatterOp,
                           zero::AllReduceOp, zero::GatherReplicaOp>(op)) {
    std::string slot = started ? requestSlotOf(op->getResult(0)) : "";
    if (Value in = zero::inPlaceOperand(op))
      line(r + " = " + var(in) + ";");
    if (!started)
      return target.printCollective(*this, op);
    auto gather = llvm::dyn_cast<zero::AllGatherStartOp>(op);
    if (gather && gather.getCarried()) {
      // Started already when the previous @train_step's carry ran.
      std::string flag = "C[" + std::to_string(*gather.getCarried()) + "]";
      line("if (!" + flag + ") {");
      if (failed(target.printStart(*this, op, slot)))
        return failure();
      line("}");
      line(flag + " = 0;");
      return success();
    }
    if (failed(target.printStart(*this, op, slot)))
      return failure();
    if (gather && gather.getCarry())
      line("C[" + std::to_string(*gather.getCarry()) + "] = 1;");
    return success();
  }
  if (auto packed = llvm::dyn_cast<zero::ConcatShardsOp>(op); packed && packed->hasOneUse())
    if (auto start = llvm::dyn_cast<zero::AllGatherStartOp>(*op->user_begin());
        start && start.getCarried()) {
      // A carried gather's packing runs only when the gather is issued.
      line("if (!C[" + std::to_string(*start.getCarried()) + "]) {");
      if (failed(target.printZeroOp(*this, op)))
        return failure();
      line("}");
      return success();
    }
  return target.printZeroOp(*this, op);
}

/// The micro-step is printed as functions of kOpsPerChunk ops each: the C++
/// compiler's optimizer is superlinear in the size of one function, and a
/// model of 20,000 small parameters made one function take minutes.
LogicalResult ProgramPrinter::printMicroStep(func::FuncOp fn,
                                             std::vector<std::string> &chunks) {
  Block &block = fn.getBody().front();
  int opsInChunk = 0;
  for (Operation &op : block.without_terminator()) {
    if (failed(printOp(&op)))
      return failure();
    if (op.hasAttr(zero::kForwardEndAttr)) // set by zero-partition
      line("zeroc_rt_engine_mark_backward(e);");
    if (++opsInChunk == kOpsPerChunk) {
      chunks.push_back(std::move(body));
      body.clear();
      opsInChunk = 0;
    }
  }
  if (!body.empty())
    chunks.push_back(std::move(body));
  body.clear();
  return success();
}

LogicalResult ProgramPrinter::printTrainStep(std::string &out) {
  auto fn = module.lookupSymbol<func::FuncOp>("train_step");
  if (failed(readPlan(fn)))
    return failure();
  body.clear();
  Block &block = fn.getBody().front();
  for (Operation &op : block.without_terminator()) {
    if (failed(printOp(&op)))
      return failure();
    if (op.hasAttr(zero::kReductionEndAttr))
      line("zeroc_rt_engine_mark_reduced(e);");
  }
  auto ret = llvm::cast<func::ReturnOp>(block.getTerminator());
  if (ret.getNumOperands() != 3)
    return fn.emitOpError("must return the norm, the overflow flag and the lr");
  line("result->grad_norm = *(double *)" + var(ret.getOperand(0)) + ";");
  line("result->overflow = *(unsigned char *)" + var(ret.getOperand(1)) + ";");
  line("result->lr = *(double *)" + var(ret.getOperand(2)) + ";");
  out = "zeroc_rt_status_t trainStep(zeroc_rt_engine_t *e, zeroc_rt_step_result_t *result) {\n"
        "  char *A = (char *)zeroc_rt_engine_arena(e);\n"
        "  char *K = (char *)zeroc_rt_engine_constants(e);\n"
        "  zeroc_rt_comm_t *comm = zeroc_rt_engine_comm(e);\n"
        "  (void)A; (void)K; (void)comm;\n" +
        body + "  return nullptr;\n}\n\n";
  body.clear();
  return printFinishCarries(out);
}

/// The program's end: waits for each carry that the last @train_step
/// started and no micro-step took.
LogicalResult ProgramPrinter::printFinishCarries(std::string &out) {
  body.clear();
  // Where a start's result and packed shards are (zero-plan-buffers).
  auto storage = [](zero::AllGatherStartOp start) {
    auto offsets = [](Operation *op) {
      auto a = op ? op->getAttrOfType<ArrayAttr>(zero::kArenaOffsetsAttr) : ArrayAttr();
      return a ? llvm::cast<IntegerAttr>(a[0]).getInt() : int64_t(-2);
    };
    return std::pair{offsets(start), offsets(start.getShard().getDefiningOp())};
  };
  for (auto &[k, carry] : carries) {
    if (!carry.wait || !carry.carry)
      return module.emitError("carry ")
             << k << " has no start in @train_step or no carried start in "
             << "@train_micro_step (run zero-verify-step)";
    if (storage(carry.carry) != storage(carry.carried))
      return carry.carried.emitOpError("has other arena offsets than carry ")
             << k << " (run zero-plan-buffers)";
    std::string flag = "C[" + std::to_string(k) + "]";
    line("if (" + flag + ") {");
    line("  " + flag + " = 0;");
    if (failed(target.printWait(*this, carry.wait, carry.slot)))
      return failure();
    line("}");
  }
  out += "zeroc_rt_status_t finishCarries(zeroc_rt_engine_t *e) {\n"
         "  zeroc_rt_comm_t *comm = zeroc_rt_engine_comm(e);\n"
         "  (void)comm;\n" +
         body + "  return nullptr;\n}\n\n";
  body.clear();
  return success();
}

/// The generated-by comment, the target's #include lines, and the helpers
/// every printed statement uses: ZRT_TRY, the tensor descriptor T and P,
/// and the value and request tables V and Q.
void ProgramPrinter::printHeader(raw_ostream &os) {
  int64_t stage = module->getAttrOfType<IntegerAttr>("zero.stage").getInt();
  int64_t world = module->getAttrOfType<IntegerAttr>("zero.world_size").getInt();
  os << cxxCommentLine("Generated by zeroc: ", hint)
     << "// ZeRO stage " << stage << ", world size " << world
     << ". Do not edit; recompile the model instead.\n";
  target.printPrologue(os);
  os << "#include <cmath>\n#include <initializer_list>\n\n"
     << "#define ZRT_TRY(expr)                                      \\\n"
     << "  do {                                                     \\\n"
     << "    zeroc_rt_status_t zrt_status_ = (expr);                \\\n"
     << "    if (zrt_status_) return zrt_status_;                   \\\n"
     << "  } while (0)\n\n"
     << "namespace {\n\n"
     << "inline zeroc_rt_tensor_t T(void *data, zeroc_rt_dtype_t dtype, int32_t rank,\n"
     << "                           std::initializer_list<int64_t> dims) {\n"
     << "  zeroc_rt_tensor_t t{};\n  t.data = data;\n  t.dtype = dtype;\n"
     << "  t.rank = rank;\n  int i = 0;\n  for (int64_t d : dims) t.dims[i++] = d;\n"
     << "  return t;\n}\n\n"
     << "// The temporary lives until the end of the full expression (the call).\n"
     << "inline const zeroc_rt_tensor_t *P(const zeroc_rt_tensor_t &t) { return &t; }\n\n"
     << "// Every value's pointer: into the arena, the blob's constants (K), the inputs or the\n"
     << "// engine's parameter buffers.\n"
     << "char *V[" << std::max(1, nextVar) << "];\n"
     << "// The request of each started collective, until its wait.\n"
     << "[[maybe_unused]] int64_t Q[" << std::max(1, nextSlot) << "];\n"
     << "// 1: the last @train_step started carry k, which no micro-step took.\n"
     << "[[maybe_unused]] unsigned char C[" << std::max<size_t>(1, carries.size()) << "];\n";
  if (hostBytes >= 0)
    os << "// The optimizer step's scalars (zero.host_offsets), in host memory.\n"
       << "alignas(64) char H[" << std::max<int64_t>(1, hostBytes) << "];\n";
  os << "\n";
  target.printDefinitions(os);
}

LogicalResult ProgramPrinter::print(EmittedProgram &out) {
  auto fn = module.lookupSymbol<func::FuncOp>("train_micro_step");
  if (!fn)
    return module.emitError("no @train_micro_step to emit (run zero-partition)");
  if (failed(collectParams()))
    return failure();
  if (failed(readPlan(fn)))
    return failure();
  Block &block = fn.getBody().front();
  for (auto [i, arg] : llvm::enumerate(block.getArguments())) {
    names[arg] = "((char *)inputs[" + std::to_string(i) + "])";
    if (!shapeOf(arg.getType()) || !dtypeName(shapeOf(arg.getType())->elem))
      return fn.emitOpError("input ")
             << i << " has a type the " << target.name()
             << " target does not support";
  }
  std::vector<std::string> chunks;
  if (failed(printMicroStep(fn, chunks)))
    return failure();
  std::string stepSource;
  if (failed(readStepConfig()) || failed(printTrainStep(stepSource)))
    return failure();
  auto ret = llvm::cast<func::ReturnOp>(block.getTerminator());
  Value loss = ret.getOperand(0);
  Type lossElem = llvm::cast<RankedTensorType>(loss.getType()).getElementType();
  if (!lossElem.isF32() && !lossElem.isF64())
    return fn.emitOpError("the loss must be f32 or f64 on the ")
           << target.name() << " target";

  std::string src;
  llvm::raw_string_ostream os(src);
  printHeader(os);
  if (failed(printTables(os, fn)))
    return failure();
  for (auto [i, chunk] : llvm::enumerate(chunks))
    os << "__attribute__((noinline)) zeroc_rt_status_t\n"
       << "part" << i << "(zeroc_rt_engine_t *e, const void *const *inputs, "
       << "char *A, char *K,\n      zeroc_rt_comm_t *comm) {\n"
       << "  (void)e; (void)inputs; (void)A; (void)K; (void)comm;\n"
       << chunk << "  return nullptr;\n}\n\n";
  os << "zeroc_rt_status_t microStep(zeroc_rt_engine_t *e, const void *const *inputs,\n"
     << "                            double *loss) {\n"
     << "  char *A = (char *)zeroc_rt_engine_arena(e);\n"
     << "  char *K = (char *)zeroc_rt_engine_constants(e);\n"
     << "  zeroc_rt_comm_t *comm = zeroc_rt_engine_comm(e);\n";
  for (size_t i = 0; i < chunks.size(); ++i)
    os << "  ZRT_TRY(part" << i << "(e, inputs, A, K, comm));\n";
  os << "  "
     << target.lossOut(lossElem.isF32() ? "float" : "double",
                       lossElem.isF32() ? "ZEROC_RT_DTYPE_F32" : "ZEROC_RT_DTYPE_F64",
                       var(loss))
     << "\n"
     << "  return nullptr;\n}\n\n" << stepSource << "} // namespace\n\n";
  printMain(os, fn);
  out.source = std::move(src);
  out.blob = std::move(blob);
  out.arenaBytes = arenaBytes;
  return success();
}

} // namespace zeroc
