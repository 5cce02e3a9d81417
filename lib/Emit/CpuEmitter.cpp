//===- CpuEmitter.cpp - @train_micro_step to C++ for the CPU runtime ------===//
//
// The emitter is the last, target-specific step: every decision (partition,
// collectives, their order, the arena offset of every tensor) was made by
// passes on the zero dialect. It prints one runtime call per op; reshapes and
// views alias their source; constants and initial parameter values go to the
// blob file.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Emit/CpuEmitter.h"
#include "zeroc/Emit/CxxText.h"
#include "zeroc/Emit/ModelBlob.h"

#include "zeroc/Dialect/Graph/ElementsData.h"
#include "zeroc/Dialect/Graph/GraphOps.h"
#include "zeroc/Dialect/Zero/BufferPlanning.h"
#include "zeroc/Dialect/Zero/ZeroOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstdio>


using namespace mlir;

namespace zeroc {
namespace {

constexpr int64_t kAlign = 64;
/// Ops per generated function of the micro-step.
constexpr int kOpsPerChunk = 200;

int64_t alignUp(int64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

/// Element type and shape of anything the emitter stores: ranked tensors
/// and zero buffers (as rank-1 tensors of their size).
struct Shape {
  Type elem;
  SmallVector<int64_t> dims;
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : dims)
      n *= d;
    return n;
  }
};

std::optional<Shape> shapeOf(Type t) {
  if (auto tok = llvm::dyn_cast<zero::TokenType>(t))
    t = tok.getPayload(); // a started collective's storage is its payload's
  if (auto rt = llvm::dyn_cast<RankedTensorType>(t))
    return Shape{rt.getElementType(), SmallVector<int64_t>(rt.getShape())};
  if (auto f = llvm::dyn_cast<zero::FlatType>(t))
    return Shape{f.getElementType(), {f.getSize()}};
  if (auto s = llvm::dyn_cast<zero::ShardType>(t))
    return Shape{s.getElementType(), {s.getSize()}};
  return std::nullopt;
}

const char *dtypeName(Type t) {
  if (t.isF32()) return "ZEROC_RT_DTYPE_F32";
  if (t.isF64()) return "ZEROC_RT_DTYPE_F64";
  if (t.isF16()) return "ZEROC_RT_DTYPE_F16";
  if (t.isBF16()) return "ZEROC_RT_DTYPE_BF16";
  if (t.isInteger(64)) return "ZEROC_RT_DTYPE_I64";
  if (t.isInteger(32)) return "ZEROC_RT_DTYPE_I32";
  if (t.isInteger(1)) return "ZEROC_RT_DTYPE_BOOL";
  return nullptr;
}

std::string dimsInit(ArrayRef<int64_t> dims) {
  std::string s = "{";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "}";
}

std::string i64Array(ArrayAttr a) {
  SmallVector<int64_t> v;
  for (Attribute x : a)
    v.push_back(llvm::cast<IntegerAttr>(x).getInt());
  return dimsInit(v);
}

/// A zeroc_rt_window_t initializer for a conv or pooling op's window
/// attributes (kernel empty for conv: the runtime reads the weight's dims).
std::string windowInit(ArrayAttr kernel, ArrayAttr strides, ArrayAttr pads,
                       ArrayAttr dilations, bool ceilMode) {
  auto ints = [](ArrayAttr a, size_t from, size_t n) {
    SmallVector<int64_t> v;
    for (size_t i = from; i < from + n; ++i)
      v.push_back(llvm::cast<IntegerAttr>(a[i]).getInt());
    return dimsInit(v);
  };
  size_t r = strides.size();
  return llvm::formatv("{{{0}, {1}, {2}, {3}, {4}, {5}, {6}}", r, int(ceilMode),
                       kernel ? ints(kernel, 0, r) : std::string("{0}"),
                       ints(strides, 0, r), ints(dilations, 0, r),
                       ints(pads, 0, r), ints(pads, r, r))
      .str();
}

/// Appends `attr`'s elements to `blob` in the runtime's layout. Raw data
/// (weights) is referenced, not copied: ModelBlob streams it at the end.
LogicalResult appendElements(Operation *where, ElementsAttr attr,
                             ModelBlob &blob) {
  Type elem = attr.getElementType();
  if (!dtypeName(elem))
    return where->emitOpError("has a constant of element type ")
           << elem << " the CPU target does not support";
  ArrayRef<char> raw = graph::rawElementBytes(attr);
  int64_t bytesPerElem = elem.isInteger(1) ? 1 : elem.getIntOrFloatBitWidth() / 8;
  if (!raw.empty() || attr.getNumElements() == 0) {
    if (static_cast<int64_t>(raw.size()) != attr.getNumElements() * bytesPerElem)
      return where->emitOpError("has a constant whose data does not match its type");
    blob.reference(raw);
    return success();
  }
  if (llvm::isa<DenseResourceElementsAttr>(attr))
    return where->emitOpError("has a dense_resource constant without data");
  auto dense = llvm::dyn_cast<DenseElementsAttr>(attr);
  if (!dense)
    return where->emitOpError("has a non-dense constant the emitter cannot store");
  std::string bytes;
  auto put = [&](const void *p, size_t n) {
    bytes.append(static_cast<const char *>(p), n);
  };
  if (elem.isF32()) {
    for (float v : dense.getValues<float>()) put(&v, 4);
  } else if (elem.isF64()) {
    for (double v : dense.getValues<double>()) put(&v, 8);
  } else if (elem.isInteger(64)) {
    for (int64_t v : dense.getValues<int64_t>()) put(&v, 8);
  } else if (elem.isInteger(32)) {
    for (int32_t v : dense.getValues<int32_t>()) put(&v, 4);
  } else if (elem.isInteger(1)) {
    for (bool v : dense.getValues<bool>()) {
      uint8_t b = v;
      put(&b, 1);
    }
  } else {
    for (APFloat v : dense.getValues<APFloat>()) {
      uint16_t bits = static_cast<uint16_t>(v.bitcastToAPInt().getZExtValue());
      put(&bits, 2);
    }
  }
  blob.append(bytes.data(), bytes.size());
  return success();
}

/// Ops that run code worth a span in --trace: kernels, collectives and
/// state updates, not the views, constants and parameter reads that only
/// name memory.
bool isTraced(Operation *op) {
  if (llvm::isa<zero::ReleaseOp>(op))
    return false;
  if (llvm::isa<zero::WaitOp>(op)) // the time the compute waits for a start
    return true;
  return op->getNumResults() == 0 || zero::resultsNeedArena(op);
}

class Emitter {
public:
  Emitter(ModuleOp module, const std::string &hint)
      : module(module), hint(hint) {}

  LogicalResult run(EmittedProgram &out);

private:
  LogicalResult collectParams();
  LogicalResult readPlan(func::FuncOp fn);
  LogicalResult emitOp(Operation *op);
  LogicalResult emitGraphOp(Operation *op);
  LogicalResult emitZeroOp(Operation *op);
  LogicalResult emitStepOp(Operation *op);
  LogicalResult emitTrainStep(std::string &out);
  LogicalResult readStepConfig();
  std::string var(Value v);
  /// A new request slot (Q[i]) for a started collective's token.
  std::string requestSlotOf(Value token);
  std::string desc(Value v);
  std::string descOf(const std::string &ptr, Type t);
  /// Copies a tensor of `numel` elements at `tensor` into (`toBucket`) or
  /// out of its shards at element `offset` of every rank slice of `bucket`.
  void copyShards(const std::string &tensor, const std::string &bucket,
                  int64_t offset, int64_t numel, zero::FlatType flat,
                  bool toBucket);
  void line(const Twine &text) { body += "  " + text.str() + "\n"; }
  void call(const Twine &expr) { line("ZRT_TRY(" + expr + ");"); }
  int64_t blobConstant(Operation *op, ElementsAttr value);

  ModuleOp module;
  std::string hint;
  std::string body;
  ModelBlob blob;
  llvm::StringMap<int> paramIndex;
  SmallVector<graph::ParamOp> params;
  llvm::StringMap<int> bufferIndex;
  SmallVector<graph::BufferOp> buffers;
  llvm::DenseMap<Value, std::string> names;
  /// --trace's name of each traced op, in program order.
  std::vector<std::string> opNames;
  llvm::DenseMap<Value, int64_t> arenaOffset;
  int64_t arenaBytes = 0;
  int nextVar = 0;
  /// Off while printing @train_step: --trace spans only the micro-step's ops.
  bool tracing = true;
  /// The request slot (Q[i]) of each started collective's token.
  llvm::DenseMap<Value, std::string> requestSlot;
  /// Read from @train_step's ops by readStepConfig.
  zero::AdamAttr adam;
  zero::SgdAttr sgd;
  zero::LrScheduleAttr schedule;
  zero::LossScalerAttr scaler;
  double maxNorm = 0.0;
  int64_t microSteps = 1;
  zero::MonitorAttr monitor;
  llvm::StringMap<Type> gradElementType;
};

LogicalResult Emitter::collectParams() {
  // Trainable and frozen parameters alike are the engine's ZeRO state.
  for (auto p : module.getOps<graph::ParamOp>()) {
    if (!dtypeName(p.getType().getElementType()) ||
        !dtypeName(p.getMasterElementType()))
      return p.emitOpError("has an element type the CPU target does not support");
    if (p.getMaster() && !p.getMasterElementType().isF32())
      return p.emitOpError("has master type ")
             << p.getMasterElementType()
             << "; the CPU runtime keeps f32 masters only";
    paramIndex[p.getSymName()] = params.size();
    params.push_back(p);
  }
  // Buffers (updated by the micro-step, never partitioned) are the
  // engine's state too.
  for (auto buf : module.getOps<graph::BufferOp>()) {
    if (!dtypeName(buf.getType().getElementType()))
      return buf.emitOpError("has an element type the CPU target does not support");
    bufferIndex[buf.getSymName()] = buffers.size();
    buffers.push_back(buf);
  }
  // Initial values first, parameters then buffers, each 64-byte aligned.
  for (auto p : params) {
    blob.align(kAlign);
    if (failed(appendElements(p, p.getInitialValue(), blob)))
      return failure();
  }
  for (auto buf : buffers) {
    blob.align(kAlign);
    if (failed(appendElements(buf, buf.getInitialValue(), blob)))
      return failure();
  }
  return success();
}

int64_t Emitter::blobConstant(Operation *op, ElementsAttr value) {
  int64_t offset = blob.align(kAlign);
  if (failed(appendElements(op, value, blob)))
    return -1;
  return offset;
}

/// Reads zero-plan-buffers' offsets: every result that needs arena storage
/// must have one.
LogicalResult Emitter::readPlan(func::FuncOp fn) {
  auto bytes = module->getAttrOfType<IntegerAttr>(zero::kArenaBytesAttr);
  if (!bytes)
    return module.emitError("module has no buffer plan (run zero-plan-buffers)");
  arenaBytes = bytes.getInt();
  // Nested ops too: a bucket inside the step's zero.if_finite.
  WalkResult walk = fn.getBody().walk([&](Operation *op) {
    if (!op->getNumResults() || !zero::resultsNeedArena(op))
      return WalkResult::advance();
    auto offsets = op->getAttrOfType<ArrayAttr>(zero::kArenaOffsetsAttr);
    if (!offsets || offsets.size() != op->getNumResults()) {
      op->emitOpError("has no arena offsets (run zero-plan-buffers)");
      return WalkResult::interrupt();
    }
    for (auto [r, off] : llvm::zip(op->getResults(), offsets))
      arenaOffset[r] = llvm::cast<IntegerAttr>(off).getInt();
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

std::string Emitter::var(Value v) { return names.lookup(v); }

std::string Emitter::requestSlotOf(Value token) {
  std::string slot = "Q[" + std::to_string(requestSlot.size()) + "]";
  requestSlot[token] = slot;
  return slot;
}

std::string Emitter::descOf(const std::string &ptr, Type t) {
  std::optional<Shape> s = shapeOf(t);
  return llvm::formatv("T({0}, {1}, {2}, {3})", ptr, dtypeName(s->elem),
                       s->dims.size(), dimsInit(s->dims))
      .str();
}

std::string Emitter::desc(Value v) { return descOf(var(v), v.getType()); }

void Emitter::copyShards(const std::string &tensor, const std::string &bucket,
                         int64_t offset, int64_t numel, zero::FlatType flat,
                         bool toBucket) {
  int64_t world = flat.getWorld();
  int64_t shard = zero::shardElements(numel, world);
  int64_t elemBytes = zero::elementBytes(flat.getElementType());
  const char *dtype = dtypeName(flat.getElementType());
  // Rank r's shard: elements [r * shard, (r + 1) * shard) of the tensor, at
  // element r * slice + offset of the bucket; the last shards may be short
  // or empty (padding).
  std::string inTensor =
      llvm::formatv("{0} + zrt_r * {1}", tensor, shard * elemBytes);
  std::string inBucket = llvm::formatv("{0} + zrt_r * {1}", bucket,
                                       flat.getShardSize() * elemBytes);
  if (offset)
    inBucket += " + " + std::to_string(offset * elemBytes);
  const std::string &src = toBucket ? inTensor : inBucket;
  const std::string &dst = toBucket ? inBucket : inTensor;
  line(
      llvm::formatv("for (int64_t zrt_r = 0; zrt_r < {0}; ++zrt_r) {{", world));
  line(llvm::formatv("  const int64_t zrt_n = {0} - zrt_r * {1} < {1} ? {0} - "
                     "zrt_r * {1} : {1};",
                     numel, shard));
  line(llvm::formatv(
      "  if (zrt_n > 0) ZRT_TRY(zeroc_rt_k_copy(P(T({0}, {1}, 1, {{zrt_n})), "
      "P(T({2}, {1}, 1, {{zrt_n}))));",
      src, dtype, dst));
  line("}");
}

LogicalResult Emitter::emitZeroOp(Operation *op) {
  auto paramOf = [&](FlatSymbolRefAttr ref) {
    return std::to_string(paramIndex.lookup(ref.getValue()));
  };
  std::string r = op->getNumResults() ? var(op->getResult(0)) : "";
  if (auto rep = llvm::dyn_cast<zero::ParamReplicaOp>(op)) {
    line(r + " = (char *)zeroc_rt_engine_param_replica(e, " +
         paramOf(rep.getParamAttr()) + ");");
    return success();
  }
  if (auto sh = llvm::dyn_cast<zero::ParamShardOp>(op)) {
    line(r + " = (char *)zeroc_rt_engine_param_shard(e, " +
         paramOf(sh.getParamAttr()) + ");");
    return success();
  }
  if (auto ld = llvm::dyn_cast<zero::BufferLoadOp>(op)) {
    line(r + " = (char *)zeroc_rt_engine_buffer(e, " +
         std::to_string(bufferIndex.lookup(ld.getBuffer())) + ");");
    return success();
  }
  if (auto st = llvm::dyn_cast<zero::BufferStoreOp>(op)) {
    std::string dst = descOf("zeroc_rt_engine_buffer(e, " +
                                 std::to_string(bufferIndex.lookup(st.getBuffer())) + ")",
                             st.getValue().getType());
    call("zeroc_rt_k_copy(P(" + desc(st.getValue()) + "), P(" + dst + "))");
    return success();
  }
  if (auto view = llvm::dyn_cast<zero::ViewOp>(op)) {
    int64_t bytes = view.getOffset() * zero::elementBytes(view.getType().getElementType());
    line(r + " = " + var(view.getBuffer()) + " + " +
         std::to_string(bytes) + ";");
    return success();
  }
  if (auto gather = llvm::dyn_cast<zero::AllGatherOp>(op)) {
    auto shard = gather.getShard().getType();
    call(llvm::formatv("zeroc_rt_comm_all_gather(comm, {0}, {1}, {2}, {3})",
                       var(gather.getShard()), r, shard.getSize(),
                       dtypeName(shard.getElementType())));
    return success();
  }
  if (auto start = llvm::dyn_cast<zero::AllGatherStartOp>(op)) {
    auto shard = start.getShard().getType();
    call(llvm::formatv("zeroc_rt_comm_all_gather_start(comm, {0}, {1}, {2}, {3}, &{4})",
                       var(start.getShard()), r, shard.getSize(),
                       dtypeName(shard.getElementType()),
                       requestSlotOf(start.getToken())));
    return success();
  }
  if (auto wait = llvm::dyn_cast<zero::WaitOp>(op)) {
    auto it = requestSlot.find(wait.getToken());
    if (it == requestSlot.end())
      return op->emitOpError("waits for a collective the CPU target did not start");
    // The result is the storage the start wrote into.
    line(r + " = " + var(wait.getToken()) + ";");
    call("zeroc_rt_comm_wait(comm, " + it->second + ")");
    return success();
  }
  // The blocking and the started reduce-scatter: the same operands and
  // attributes; the started one also passes its request slot.
  auto reduceScatter = [&](auto rs, zero::ShardType shard,
                           const std::string &slot) -> LogicalResult {
    if (rs.getReduction() != zero::ReduceKind::Sum || rs.getScale())
      return op->emitOpError("the CPU target emits only unscaled sum reduce-scatters");
    if (rs.getInPlace()) // the result is the buffer's first elements
      line(r + " = " + var(rs.getBuffer()) + ";");
    std::string args = llvm::formatv("comm, {0}, {1}, {2}, {3}, ZEROC_RT_REDUCE_SUM",
                                     var(rs.getBuffer()), r, shard.getSize(),
                                     dtypeName(shard.getElementType()));
    if (slot.empty())
      call("zeroc_rt_comm_reduce_scatter(" + args + ")");
    else
      call("zeroc_rt_comm_reduce_scatter_start(" + args + ", &" + slot + ")");
    return success();
  };
  if (auto rs = llvm::dyn_cast<zero::ReduceScatterOp>(op))
    return reduceScatter(rs, rs.getType(), "");
  if (auto rs = llvm::dyn_cast<zero::ReduceScatterStartOp>(op))
    return reduceScatter(
        rs, llvm::cast<zero::ShardType>(rs.getToken().getType().getPayload()),
        requestSlotOf(rs.getToken()));
  if (auto ar = llvm::dyn_cast<zero::AllReduceStartOp>(op)) {
    std::optional<Shape> s = shapeOf(ar.getInput().getType());
    if (ar.getScale() || ar.getReduction() != zero::ReduceKind::Sum || !s ||
        s->elem.isInteger(1))
      return op->emitOpError("the CPU target starts only unscaled sum all-reduces of numbers");
    // In place: the token's storage is the operand's.
    line(r + " = " + var(ar.getInput()) + ";");
    call(llvm::formatv("zeroc_rt_comm_all_reduce_start(comm, {0}, {0}, {1}, {2}, "
                       "ZEROC_RT_REDUCE_SUM, &{3})",
                       r, s->numel(), dtypeName(s->elem),
                       requestSlotOf(ar.getToken())));
    return success();
  }
  if (auto pack = llvm::dyn_cast<zero::PackOp>(op)) {
    call("zeroc_rt_k_zero(P(" + desc(pack.getResult()) + "))");
    Type elem = pack.getType().getElementType();
    for (auto [in, off] : llvm::zip(pack.getInputs(), pack.getOffsets())) {
      int64_t bytes = llvm::cast<IntegerAttr>(off).getInt() * zero::elementBytes(elem);
      std::string dst = descOf(r + " + " + std::to_string(bytes), in.getType());
      call("zeroc_rt_k_copy(P(" + desc(in) + "), P(" + dst + "))");
    }
    return success();
  }
  if (auto pack = llvm::dyn_cast<zero::PackShardsOp>(op)) {
    zero::FlatType flat = pack.getType();
    call("zeroc_rt_k_zero(P(" + desc(pack.getResult()) + "))");
    for (auto [in, off] : llvm::zip(pack.getInputs(), pack.getOffsets()))
      copyShards(var(in), r, llvm::cast<IntegerAttr>(off).getInt(),
                 shapeOf(in.getType())->numel(), flat, /*toBucket=*/true);
    return success();
  }
  if (auto unpack = llvm::dyn_cast<zero::UnpackShardsOp>(op)) {
    copyShards(r, var(unpack.getBuffer()), unpack.getOffset(),
               unpack.getType().getNumElements(), unpack.getBuffer().getType(),
               /*toBucket=*/false);
    return success();
  }
  if (auto concat = llvm::dyn_cast<zero::ConcatShardsOp>(op)) {
    int64_t offset = 0;
    int64_t elemBytes = zero::elementBytes(concat.getType().getElementType());
    for (Value in : concat.getInputs()) {
      std::string dst =
          descOf(r + " + " + std::to_string(offset * elemBytes), in.getType());
      call("zeroc_rt_k_copy(P(" + desc(in) + "), P(" + dst + "))");
      offset += llvm::cast<zero::ShardType>(in.getType()).getSize();
    }
    return success();
  }
  if (auto slice = llvm::dyn_cast<zero::ShardSliceOp>(op)) {
    int64_t bytes = slice.getOffset() *
                    zero::elementBytes(slice.getType().getElementType());
    line(r + " = " + var(slice.getShard()) + " + " + std::to_string(bytes) +
         ";");
    return success();
  }
  if (auto acc = llvm::dyn_cast<zero::GradAccumulateOp>(op)) {
    std::optional<Shape> s = shapeOf(acc.getGrad().getType());
    call(llvm::formatv("zeroc_rt_engine_grad_accumulate(e, {0}, {1}, {2})",
                       paramOf(acc.getParamAttr()), var(acc.getGrad()),
                       s->numel()));
    return success();
  }
  if (auto ls = llvm::dyn_cast<zero::LossScaleOp>(op)) {
    if (ls.getType().getElementType().isF64())
      line("*(double *)" + r + " = zeroc_rt_engine_loss_scale(e);");
    else
      line("*(float *)" + r + " = (float)zeroc_rt_engine_loss_scale(e);");
    return success();
  }
  if (llvm::isa<zero::ReleaseOp>(op)) {
    line("// " + var(op->getOperand(0)) + " released: its arena space is reused");
    return success();
  }
  return emitStepOp(op);
}

/// The ops of @train_step (zero-step-boundary): engine calls, collectives
/// and the step's scalar arithmetic, printed as the IR says.
LogicalResult Emitter::emitStepOp(Operation *op) {
  auto paramOf = [&](StringRef name) {
    return std::to_string(paramIndex.lookup(name));
  };
  auto f64 = [&](Value v) { return "*(double *)" + var(v); };
  auto count = [&](Value v) { return std::to_string(shapeOf(v.getType())->numel()); };
  auto dtype = [&](Value v) { return std::string(dtypeName(shapeOf(v.getType())->elem)); };
  std::string r = op->getNumResults() ? var(op->getResult(0)) : "";
  if (auto acc = llvm::dyn_cast<zero::GradAccumulatorOp>(op)) {
    line(r + " = (char *)zeroc_rt_engine_grad_accumulator(e, " +
         paramOf(acc.getParam()) + ");");
    return success();
  }
  if (auto ar = llvm::dyn_cast<zero::AllReduceOp>(op)) {
    if (ar.getScale() || ar.getReduction() == zero::ReduceKind::Avg)
      return op->emitOpError("the CPU target emits only unscaled sum and max all-reduces");
    // In place: the result is the operand's storage. A flag is a byte.
    Type elem = shapeOf(ar.getType())->elem;
    std::string dt = elem.isInteger(1) ? "ZEROC_RT_DTYPE_U8" : dtype(ar.getInput());
    line(r + " = " + var(ar.getInput()) + ";");
    call(llvm::formatv("zeroc_rt_comm_all_reduce(comm, {0}, {0}, {1}, {2}, {3})", r,
                       count(ar.getInput()), dt,
                       ar.getReduction() == zero::ReduceKind::Max
                           ? "ZEROC_RT_REDUCE_MAX"
                           : "ZEROC_RT_REDUCE_SUM"));
    return success();
  }
  if (auto of = llvm::dyn_cast<zero::HasOverflowOp>(op)) {
    line("{");
    line("  int zrt_found = 0, zrt_any = 0;");
    for (Value g : of.getGrads()) {
      line(llvm::formatv("  ZRT_TRY(zeroc_rt_k_has_inf_or_nan({0}, {1}, {2}, &zrt_found));",
                         dtype(g), var(g), count(g)));
      line("  zrt_any |= zrt_found;");
    }
    line("  *(unsigned char *)" + r + " = zrt_any ? 1 : 0;");
    line("}");
    return success();
  }
  if (auto ss = llvm::dyn_cast<zero::SumSquaresOp>(op)) {
    line("{");
    line("  double zrt_total = 0.0, zrt_part = 0.0;");
    for (Value g : ss.getGrads()) {
      line(llvm::formatv("  ZRT_TRY(zeroc_rt_k_sum_squares({0}, {1}, {2}, &zrt_part));",
                         dtype(g), var(g), count(g)));
      line("  zrt_total += zrt_part;");
    }
    line("  *(double *)" + r + " = zrt_total;");
    line("}");
    return success();
  }
  if (auto clip = llvm::dyn_cast<zero::ClipGradNormOp>(op)) {
    call(llvm::formatv("zeroc_rt_k_clip_grad_norm({0}, {1}, {2}, {3}, (double *){4}, "
                       "(double *){5})",
                       f64(clip.getSumSquares()), f64(clip.getScale()),
                       clip.getWorldSize(), cxxDouble(clip.getMaxNorm().convertToDouble()),
                       var(clip.getNorm()), var(clip.getFactor())));
    return success();
  }
  if (llvm::isa<zero::StepCountOp>(op)) {
    line("*(int64_t *)" + r + " = zeroc_rt_engine_step_count(e);");
    return success();
  }
  if (llvm::isa<zero::AdvanceStepOp>(op)) {
    line("zeroc_rt_engine_advance_step(e);");
    return success();
  }
  if (auto lr = llvm::dyn_cast<zero::LrScheduleOp>(op)) {
    call(llvm::formatv("zeroc_rt_engine_lr_schedule(e, *(int64_t *){0}, {1}, {2}, "
                       "(double *){3}, (double *){4})",
                       var(lr.getStep()), cxxDouble(lr.getBaseLr().convertToDouble()),
                       cxxDouble(lr.getBaseMomentum().convertToDouble()),
                       var(lr.getLr()), var(lr.getMomentum())));
    return success();
  }
  if (auto up = llvm::dyn_cast<zero::UpdateLossScaleOp>(op)) {
    call("zeroc_rt_engine_update_loss_scale(e, *(unsigned char *)" +
         var(up.getOverflow()) + ")");
    return success();
  }
  if (auto guard = llvm::dyn_cast<zero::IfFiniteOp>(op)) {
    line("if (!*(unsigned char *)" + var(guard.getOverflow()) + ") {");
    for (Operation &nested : guard.getBody().front())
      if (failed(emitOp(&nested)))
        return failure();
    line("}");
    return success();
  }
  if (auto up = llvm::dyn_cast<zero::AdamUpdateOp>(op)) {
    zero::AdamAttr a = up.getOptimizer();
    call(llvm::formatv(
        "zeroc_rt_engine_adam_update(e, {0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, "
        "{9}, {10}, *(int64_t *){11} + 1)",
        paramOf(up.getParam()), var(up.getGrad()), count(up.getGrad()),
        f64(up.getFactor()), f64(up.getLr()), f64(up.getBeta1()), f64(up.getBeta2()),
        cxxDouble(a.getEps().convertToDouble()),
        cxxDouble(a.getWeightDecay().convertToDouble()), int(a.getAdamWMode()),
        int(a.getBiasCorrection()), var(up.getStep())));
    return success();
  }
  if (auto up = llvm::dyn_cast<zero::SgdUpdateOp>(op)) {
    zero::SgdAttr o = up.getOptimizer();
    call(llvm::formatv(
        "zeroc_rt_engine_sgd_update(e, {0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}, "
        "*(int64_t *){9} + 1)",
        paramOf(up.getParam()), var(up.getGrad()), count(up.getGrad()),
        f64(up.getFactor()), f64(up.getLr()),
        cxxDouble(o.getMomentum().convertToDouble()),
        cxxDouble(o.getDampening().convertToDouble()),
        cxxDouble(o.getWeightDecay().convertToDouble()), int(o.getNesterov()),
        var(up.getStep())));
    return success();
  }
  if (auto g = llvm::dyn_cast<zero::GatherReplicaOp>(op)) {
    auto shard = llvm::cast<zero::ShardType>(g.getShard());
    int64_t es = zero::elementBytes(shard.getElementType());
    line("{");
    line("  char *zrt_replica = (char *)zeroc_rt_engine_param_replica(e, " +
         paramOf(g.getParam()) + ");");
    line(llvm::formatv("  ZRT_TRY(zeroc_rt_comm_all_gather(comm, zrt_replica + "
                       "(size_t)zeroc_rt_comm_rank(comm) * {0}, zrt_replica, {1}, {2}));",
                       shard.getSize() * es, shard.getSize(),
                       dtypeName(shard.getElementType())));
    line("}");
    return success();
  }
  if (auto slice = llvm::dyn_cast<zero::ReplicaSliceOp>(op)) {
    int64_t bytes = slice.getType().getSize() *
                    zero::elementBytes(slice.getType().getElementType());
    line(llvm::formatv("{0} = (char *)zeroc_rt_engine_param_replica(e, {1}) + "
                       "(size_t)zeroc_rt_comm_rank(comm) * {2};",
                       r, paramOf(slice.getParam()), bytes));
    return success();
  }
  if (auto unpack = llvm::dyn_cast<zero::UnpackReplicaOp>(op)) {
    auto p = params[paramIndex.lookup(unpack.getParam())];
    copyShards("((char *)zeroc_rt_engine_param_replica(e, " +
                   paramOf(unpack.getParam()) + "))",
               var(unpack.getBuffer()), unpack.getOffset(),
               p.getType().getNumElements(), unpack.getBuffer().getType(),
               /*toBucket=*/false);
    return success();
  }
  return op->emitOpError("is not supported by the CPU emitter yet");
}

/// The configuration the program table reports (the optimizer, the schedule,
/// the scaler, clipping, each accumulator's dtype), read from @train_step.
LogicalResult Emitter::readStepConfig() {
  auto fn = module.lookupSymbol<func::FuncOp>("train_step");
  if (!fn || fn.isExternal())
    return module.emitError("no @train_step to emit (run zero-step-boundary)");
  fn.walk([&](Operation *op) {
    if (auto up = llvm::dyn_cast<zero::AdamUpdateOp>(op))
      adam = up.getOptimizer();
    else if (auto up = llvm::dyn_cast<zero::SgdUpdateOp>(op))
      sgd = up.getOptimizer();
    else if (auto lr = llvm::dyn_cast<zero::LrScheduleOp>(op))
      schedule = lr.getSchedule();
    else if (auto up = llvm::dyn_cast<zero::UpdateLossScaleOp>(op))
      scaler = up.getScaler();
    else if (auto clip = llvm::dyn_cast<zero::ClipGradNormOp>(op))
      maxNorm = clip.getMaxNorm().convertToDouble();
    else if (auto acc = llvm::dyn_cast<zero::GradAccumulatorOp>(op))
      gradElementType[acc.getParam()] = shapeOf(acc.getType())->elem;
  });
  if (!schedule)
    return fn.emitOpError("has no zero.lr_schedule");
  auto steps = fn->getAttrOfType<IntegerAttr>(zero::kMicroStepsAttr);
  monitor = fn->getAttrOfType<zero::MonitorAttr>(zero::kMonitorAttr);
  if (!steps || steps.getInt() < 1 || !monitor)
    return fn.emitOpError("needs zero.micro_steps >= 1 and zero.monitor (run zero-step-boundary)");
  microSteps = steps.getInt();
  if (adam && sgd)
    return fn.emitOpError("mixes Adam and SGD updates");
  if (!adam && !sgd)
    adam = zero::AdamAttr::get(module.getContext(), APFloat(1e-3), APFloat(0.9),
                               APFloat(0.999), APFloat(1e-8), APFloat(0.0), true,
                               true); // no trainable parameter: nothing is updated
  return success();
}

LogicalResult Emitter::emitTrainStep(std::string &out) {
  auto fn = module.lookupSymbol<func::FuncOp>("train_step");
  if (failed(readPlan(fn)))
    return failure();
  tracing = false;
  body.clear();
  Block &block = fn.getBody().front();
  for (Operation &op : block.without_terminator()) {
    if (failed(emitOp(&op)))
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
        "  char *blob = (char *)zeroc_rt_engine_blob(e);\n"
        "  zeroc_rt_comm_t *comm = zeroc_rt_engine_comm(e);\n"
        "  (void)A; (void)blob; (void)comm;\n" +
        body + "  return nullptr;\n}\n\n";
  body.clear();
  return success();
}

LogicalResult Emitter::emitGraphOp(Operation *op) {
  std::string r = op->getNumResults() ? var(op->getResult(0)) : "";
  auto d = [&](Value v) { return "P(" + desc(v) + ")"; };
  auto out = [&](unsigned i = 0) { return "P(" + desc(op->getResult(i)) + ")"; };
  static const llvm::StringMap<const char *> unary = {
      {"graph.neg", "NEG"},   {"graph.sqrt", "SQRT"},
      {"graph.reciprocal", "RECIPROCAL"}, {"graph.relu", "RELU"},
      {"graph.tanh", "TANH"}, {"graph.sigmoid", "SIGMOID"},
      {"graph.erf", "ERF"},   {"graph.exp", "EXP"},
      {"graph.log", "LOG"},   {"graph.cos", "COS"},
      {"graph.sin", "SIN"},   {"graph.abs", "ABS"},
      {"graph.sign", "SIGN"}, {"graph.floor", "FLOOR"},
      {"graph.ceil", "CEIL"}, {"graph.round", "ROUND"}};
  static const llvm::StringMap<const char *> binary = {
      {"graph.add", "ADD"}, {"graph.sub", "SUB"}, {"graph.mul", "MUL"},
      {"graph.div", "DIV"}, {"graph.pow", "POW"}, {"graph.equal", "EQUAL"},
      {"graph.max", "MAX"}, {"graph.min", "MIN"}};
  StringRef name = op->getName().getStringRef();
  if (auto it = unary.find(name); it != unary.end()) {
    call(llvm::formatv("zeroc_rt_k_unary(ZEROC_RT_UNARY_{0}, {1}, {2})",
                       it->second, d(op->getOperand(0)), out()));
    return success();
  }
  if (auto it = binary.find(name); it != binary.end()) {
    call(llvm::formatv("zeroc_rt_k_binary(ZEROC_RT_BINARY_{0}, {1}, {2}, {3})",
                       it->second, d(op->getOperand(0)), d(op->getOperand(1)),
                       out()));
    return success();
  }
  // Masks, gelu and clip (GraphElementwiseOps.td): attributes name the
  // runtime enum or the bounds.
  if (auto g = llvm::dyn_cast<graph::GeluOp>(op)) {
    call(llvm::formatv("zeroc_rt_k_unary(ZEROC_RT_UNARY_{0}, {1}, {2})",
                       g.getApproximate() == "tanh" ? "GELU_TANH" : "GELU",
                       d(g.getInput()), out()));
    return success();
  }
  if (auto c = llvm::dyn_cast<graph::CompareOp>(op)) {
    static const llvm::StringMap<const char *> preds = {
        {"lt", "LESS"}, {"le", "LESS_EQUAL"}, {"gt", "GREATER"},
        {"ge", "GREATER_EQUAL"}};
    call(llvm::formatv("zeroc_rt_k_binary(ZEROC_RT_BINARY_{0}, {1}, {2}, {3})",
                       preds.lookup(c.getPredicate()), d(c.getLhs()),
                       d(c.getRhs()), out()));
    return success();
  }
  if (auto l = llvm::dyn_cast<graph::LogicalOp>(op)) {
    call(llvm::formatv("zeroc_rt_k_binary(ZEROC_RT_BINARY_{0}, {1}, {2}, {3})",
                       l.getOp().upper(), d(l.getLhs()), d(l.getRhs()), out()));
    return success();
  }
  if (llvm::isa<graph::NotOp, graph::IsNaNOp, graph::IsInfOp>(op)) {
    const char *kind = "NOT";
    if (llvm::isa<graph::IsNaNOp>(op))
      kind = "IS_NAN";
    if (auto inf = llvm::dyn_cast<graph::IsInfOp>(op))
      kind = !inf.getDetectNegative()   ? "IS_POS_INF"
             : !inf.getDetectPositive() ? "IS_NEG_INF"
                                        : "IS_INF";
    call(llvm::formatv("zeroc_rt_k_predicate(ZEROC_RT_PREDICATE_{0}, {1}, {2})",
                       kind, d(op->getOperand(0)), out()));
    return success();
  }
  auto bounds = [&](std::optional<APFloat> lo, std::optional<APFloat> hi) {
    return llvm::formatv("{0}, {1}, {2}, {3}", int(lo.has_value()),
                         cxxDouble(lo ? lo->convertToDouble() : 0.0),
                         int(hi.has_value()),
                         cxxDouble(hi ? hi->convertToDouble() : 0.0))
        .str();
  };
  if (auto c = llvm::dyn_cast<graph::ClipOp>(op)) {
    call(llvm::formatv("zeroc_rt_k_clip({0}, {1}, {2})", d(c.getInput()),
                       bounds(c.getMin(), c.getMax()), out()));
    return success();
  }
  if (auto c = llvm::dyn_cast<graph::ClipGradOp>(op)) {
    call(llvm::formatv("zeroc_rt_k_clip_grad({0}, {1}, {2}, {3})", d(c.getX()),
                       bounds(c.getMin(), c.getMax()), d(c.getGrad()), out()));
    return success();
  }
  if (auto c = llvm::dyn_cast<graph::ConstantOp>(op)) {
    int64_t off = blobConstant(op, c.getValue());
    if (off < 0)
      return failure();
    line(r + " = blob + " + std::to_string(off) + ";");
    return success();
  }
  if (auto ld = llvm::dyn_cast<graph::LoadParamOp>(op)) {
    auto p = module.lookupSymbol<graph::ParamOp>(ld.getParamAttr());
    int64_t off = blobConstant(op, p.getInitialValue());
    if (off < 0)
      return failure();
    line(r + " = blob + " + std::to_string(off) + "; // " +
         cxxStringLiteral(ld.getParam()));
    return success();
  }
  if (auto rs = llvm::dyn_cast<graph::ReshapeOp>(op)) {
    line(r + " = " + var(rs.getInput()) + ";");
    return success();
  }
  if (auto ug = llvm::dyn_cast<graph::UnaryGradOp>(op)) {
    std::string kind = ug.getOp().upper();
    call(llvm::formatv("zeroc_rt_k_unary_grad(ZEROC_RT_UNARY_{0}, {1}, {2}, {3}, {4})",
                       kind, d(ug.getX()), d(ug.getY()), d(ug.getGrad()), out()));
    return success();
  }
  if (auto w = llvm::dyn_cast<graph::WhereOp>(op)) {
    call(llvm::formatv("zeroc_rt_k_where({0}, {1}, {2}, {3})", d(w.getCondition()),
                       d(w.getOnTrue()), d(w.getOnFalse()), out()));
    return success();
  }
  if (llvm::isa<graph::CastOp>(op)) {
    call("zeroc_rt_k_cast(" + d(op->getOperand(0)) + ", " + out() + ")");
    return success();
  }
  if (llvm::isa<graph::ExpandOp>(op)) {
    call("zeroc_rt_k_broadcast(" + d(op->getOperand(0)) + ", " + out() + ")");
    return success();
  }
  if (llvm::isa<graph::SumToOp>(op)) {
    call("zeroc_rt_k_sum_to(" + d(op->getOperand(0)) + ", " + out() + ")");
    return success();
  }
  if (auto dr = llvm::dyn_cast<graph::DropoutOp>(op)) {
    call(llvm::formatv("zeroc_rt_k_dropout({0}, {1}, {2}ull, "
                       "zeroc_rt_engine_dropout_counter(e), {3})",
                       d(dr.getInput()), cxxDouble(dr.getRatio().convertToDouble()),
                       dr.getSeed(), out()));
    return success();
  }
  if (auto mm = llvm::dyn_cast<graph::MatMulOp>(op)) {
    call("zeroc_rt_k_matmul(" + d(mm.getLhs()) + ", " + d(mm.getRhs()) + ", " +
         out() + ")");
    return success();
  }
  if (auto g = llvm::dyn_cast<graph::GemmOp>(op)) {
    call(llvm::formatv("zeroc_rt_k_gemm({0}, {1}, {2}, {3}, {4}, {5}, {6}, {7})",
                       d(g.getA()), d(g.getB()), g.getC() ? d(g.getC()) : "nullptr",
                       cxxDouble(g.getAlpha().convertToDouble()), cxxDouble(g.getBeta().convertToDouble()),
                       int(g.getTransA()), int(g.getTransB()), out()));
    return success();
  }
  auto reduce = [&](const char *kind, Value in, ArrayAttr axes) {
    uint32_t mask = 0;
    for (Attribute a : axes)
      mask |= 1u << llvm::cast<IntegerAttr>(a).getInt();
    call(llvm::formatv("zeroc_rt_k_reduce(ZEROC_RT_REDUCE_OP_{0}, {1}, {2}u, {3})",
                       kind, d(in), mask, out()));
    return success();
  };
  if (auto rs = llvm::dyn_cast<graph::ReduceSumOp>(op))
    return reduce("SUM", rs.getInput(), rs.getAxes());
  if (auto rm = llvm::dyn_cast<graph::ReduceMeanOp>(op))
    return reduce("MEAN", rm.getInput(), rm.getAxes());
  if (auto rx = llvm::dyn_cast<graph::ReduceMaxOp>(op))
    return reduce("MAX", rx.getInput(), rx.getAxes());
  if (auto sm = llvm::dyn_cast<graph::SoftmaxOp>(op)) {
    call(llvm::formatv("zeroc_rt_k_softmax({0}, {1}, 0, {2})", d(sm.getInput()),
                       sm.getAxis(), out()));
    return success();
  }
  if (auto sm = llvm::dyn_cast<graph::LogSoftmaxOp>(op)) {
    call(llvm::formatv("zeroc_rt_k_softmax({0}, {1}, 1, {2})", d(sm.getInput()),
                       sm.getAxis(), out()));
    return success();
  }
  if (auto sg = llvm::dyn_cast<graph::SoftmaxGradOp>(op)) {
    call(llvm::formatv("zeroc_rt_k_softmax_grad({0}, {1}, {2}, {3}, {4})",
                       d(sg.getY()), d(sg.getGrad()), sg.getAxis(),
                       int(sg.getLog()), out()));
    return success();
  }
  if (auto ln = llvm::dyn_cast<graph::LayerNormOp>(op)) {
    call(llvm::formatv("zeroc_rt_k_layer_norm({0}, {1}, {2}, {3}, {4}, {5})",
                       d(ln.getInput()), d(ln.getScale()),
                       ln.getBias() ? d(ln.getBias()) : "nullptr", ln.getAxis(),
                       cxxDouble(ln.getEpsilon().convertToDouble()), out()));
    return success();
  }
  if (auto lg = llvm::dyn_cast<graph::LayerNormGradOp>(op)) {
    call(llvm::formatv("zeroc_rt_k_layer_norm_grad({0}, {1}, {2}, {3}, {4}, {5}, {6}, {7})",
                       d(lg.getInput()), d(lg.getScale()), lg.getAxis(),
                       cxxDouble(lg.getEpsilon().convertToDouble()), d(lg.getGrad()), out(0),
                       out(1), out(2)));
    return success();
  }
  auto reduction = [](StringRef r) {
    return r == "sum" ? "ZEROC_RT_LOSS_SUM"
                      : (r == "none" ? "ZEROC_RT_LOSS_NONE" : "ZEROC_RT_LOSS_MEAN");
  };
  if (auto l = llvm::dyn_cast<graph::SoftmaxCrossEntropyLossOp>(op)) {
    auto ignore = l.getIgnoreIndex();
    call(llvm::formatv("zeroc_rt_k_softmax_cross_entropy({0}, {1}, {2}, {3}, {4}ll, {5})",
                       d(l.getScores()), d(l.getLabels()), reduction(l.getReduction()),
                       int(ignore.has_value()), ignore.value_or(0), out()));
    return success();
  }
  if (auto l = llvm::dyn_cast<graph::SoftmaxCrossEntropyLossGradOp>(op)) {
    auto ignore = l.getIgnoreIndex();
    call(llvm::formatv("zeroc_rt_k_softmax_cross_entropy_grad({0}, {1}, {2}, {3}, "
                       "{4}ll, {5}, {6})",
                       d(l.getScores()), d(l.getLabels()), reduction(l.getReduction()),
                       int(ignore.has_value()), ignore.value_or(0), d(l.getGrad()),
                       out()));
    return success();
  }
  if (auto g = llvm::dyn_cast<graph::GatherOp>(op)) {
    call(llvm::formatv("zeroc_rt_k_gather({0}, {1}, {2}, {3})", d(g.getData()),
                       d(g.getIndices()), g.getAxis(), out()));
    return success();
  }
  if (auto g = llvm::dyn_cast<graph::GatherGradOp>(op)) {
    if (auto pad = g.getPaddingIdx()) {
      call(llvm::formatv("zeroc_rt_k_gather_grad_padded({0}, {1}, {2}ll, {3})",
                         d(g.getGrad()), d(g.getIndices()), *pad, out()));
      return success();
    }
    call(llvm::formatv("zeroc_rt_k_gather_grad({0}, {1}, {2}, {3})", d(g.getGrad()),
                       d(g.getIndices()), g.getAxis(), out()));
    return success();
  }
  if (auto t = llvm::dyn_cast<graph::TransposeOp>(op)) {
    line("{ static const int64_t perm[] = " + i64Array(t.getPerm()) + ";");
    call("zeroc_rt_k_transpose(" + d(t.getInput()) + ", perm, " + out() + ")");
    line("}");
    return success();
  }
  if (auto s = llvm::dyn_cast<graph::SliceOp>(op)) {
    line("{ static const int64_t starts[] = " + i64Array(s.getStarts()) +
         ", steps[] = " + i64Array(s.getSteps()) + ";");
    call("zeroc_rt_k_slice(" + d(s.getInput()) + ", starts, steps, " + out() + ")");
    line("}");
    return success();
  }
  if (auto s = llvm::dyn_cast<graph::SliceGradOp>(op)) {
    line("{ static const int64_t starts[] = " + i64Array(s.getStarts()) +
         ", steps[] = " + i64Array(s.getSteps()) + ";");
    call("zeroc_rt_k_slice_grad(" + d(s.getGrad()) + ", starts, steps, " + out() + ")");
    line("}");
    return success();
  }
  if (auto c = llvm::dyn_cast<graph::ConcatOp>(op)) {
    std::string list;
    for (auto [i, in] : llvm::enumerate(c.getInputs())) {
      line(llvm::formatv("zeroc_rt_tensor_t cat{0}_{1} = {2};", nextVar, i, desc(in)));
      list += llvm::formatv("{0}&cat{1}_{2}", i ? ", " : "", nextVar, i).str();
    }
    line(llvm::formatv("{ const zeroc_rt_tensor_t *cats[] = {{{0}};", list));
    call(llvm::formatv("zeroc_rt_k_concat(cats, {0}, {1}, {2})",
                       c.getInputs().size(), c.getAxis(), out()));
    line("}");
    ++nextVar;
    return success();
  }
  if (auto t = llvm::dyn_cast<graph::TriluOp>(op)) {
    call(llvm::formatv("zeroc_rt_k_trilu({0}, {1}, {2}, {3})", d(t.getInput()),
                       int(t.getUpper()), t.getK(), out()));
    return success();
  }
  // Convolution, pooling, batch norm: one runtime call each, the window
  // as a static zeroc_rt_window_t.
  auto windowCall = [&](const std::string &init, const std::string &callText) {
    line("{ static const zeroc_rt_window_t win = " + init + ";");
    call(callText);
    line("}");
    return success();
  };
  if (auto c = llvm::dyn_cast<graph::ConvOp>(op))
    return windowCall(
        windowInit({}, c.getStrides(), c.getPads(), c.getDilations(), false),
        llvm::formatv("zeroc_rt_k_conv({0}, {1}, {2}, &win, {3}, {4})",
                      d(c.getInput()), d(c.getWeight()),
                      c.getBias() ? d(c.getBias()) : "nullptr", c.getGroup(), out()));
  if (auto c = llvm::dyn_cast<graph::ConvGradInputOp>(op))
    return windowCall(
        windowInit({}, c.getStrides(), c.getPads(), c.getDilations(), false),
        llvm::formatv("zeroc_rt_k_conv_grad_input({0}, {1}, &win, {2}, {3})",
                      d(c.getWeight()), d(c.getGrad()), c.getGroup(), out()));
  if (auto c = llvm::dyn_cast<graph::ConvGradWeightOp>(op))
    return windowCall(
        windowInit({}, c.getStrides(), c.getPads(), c.getDilations(), false),
        llvm::formatv("zeroc_rt_k_conv_grad_weight({0}, {1}, &win, {2}, {3})",
                      d(c.getInput()), d(c.getGrad()), c.getGroup(), out()));
  if (auto p = llvm::dyn_cast<graph::MaxPoolOp>(op))
    return windowCall(windowInit(p.getKernelShape(), p.getStrides(), p.getPads(),
                                 p.getDilations(), p.getCeilMode()),
                      "zeroc_rt_k_pool(ZEROC_RT_POOL_MAX, " + d(p.getInput()) +
                          ", &win, 0, " + out() + ")");
  if (auto p = llvm::dyn_cast<graph::AvgPoolOp>(op))
    return windowCall(windowInit(p.getKernelShape(), p.getStrides(), p.getPads(),
                                 p.getDilations(), p.getCeilMode()),
                      llvm::formatv("zeroc_rt_k_pool(ZEROC_RT_POOL_AVG, {0}, &win, {1}, {2})",
                                    d(p.getInput()), int(p.getCountIncludePad()), out()));
  if (auto p = llvm::dyn_cast<graph::MaxPoolGradOp>(op))
    return windowCall(windowInit(p.getKernelShape(), p.getStrides(), p.getPads(),
                                 p.getDilations(), p.getCeilMode()),
                      llvm::formatv("zeroc_rt_k_pool_grad(ZEROC_RT_POOL_MAX, {0}, {1}, &win, 0, {2})",
                                    d(p.getInput()), d(p.getGrad()), out()));
  if (auto p = llvm::dyn_cast<graph::AvgPoolGradOp>(op))
    return windowCall(windowInit(p.getKernelShape(), p.getStrides(), p.getPads(),
                                 p.getDilations(), p.getCeilMode()),
                      llvm::formatv("zeroc_rt_k_pool_grad(ZEROC_RT_POOL_AVG, nullptr, {0}, &win, {1}, {2})",
                                    d(p.getGrad()), int(p.getCountIncludePad()), out()));
  if (auto bn = llvm::dyn_cast<graph::BatchNormOp>(op)) {
    call(llvm::formatv("zeroc_rt_k_batch_norm({0}, {1}, {2}, {3}, {4})",
                       d(bn.getInput()), d(bn.getScale()), d(bn.getBias()),
                       cxxDouble(bn.getEpsilon().convertToDouble()), out()));
    return success();
  }
  if (auto bg = llvm::dyn_cast<graph::BatchNormGradOp>(op)) {
    call(llvm::formatv("zeroc_rt_k_batch_norm_grad({0}, {1}, {2}, {3}, {4}, {5}, {6})",
                       d(bg.getInput()), d(bg.getScale()),
                       cxxDouble(bg.getEpsilon().convertToDouble()), d(bg.getGrad()),
                       out(0), out(1), out(2)));
    return success();
  }
  // Pad, element gathers, scatters, cumsum (GraphMovementOps.td).
  auto padMode = [](StringRef m) {
    return m == "reflect" ? "ZEROC_RT_PAD_REFLECT"
           : m == "edge"  ? "ZEROC_RT_PAD_EDGE"
           : m == "wrap"  ? "ZEROC_RT_PAD_WRAP"
                          : "ZEROC_RT_PAD_CONSTANT";
  };
  if (auto p = llvm::dyn_cast<graph::PadOp>(op)) {
    line("{ static const int64_t pads[] = " + i64Array(p.getPads()) + ";");
    call(llvm::formatv("zeroc_rt_k_pad({0}, pads, {1}, {2}, {3})",
                       d(p.getInput()), padMode(p.getMode()),
                       cxxDouble(p.getValue().convertToDouble()), out()));
    line("}");
    return success();
  }
  if (auto p = llvm::dyn_cast<graph::PadGradOp>(op)) {
    line("{ static const int64_t pads[] = " + i64Array(p.getPads()) + ";");
    call(llvm::formatv("zeroc_rt_k_pad_grad({0}, pads, {1}, {2})",
                       d(p.getGrad()), padMode(p.getMode()), out()));
    line("}");
    return success();
  }
  if (auto g = llvm::dyn_cast<graph::GatherElementsOp>(op)) {
    call(llvm::formatv("zeroc_rt_k_gather_elements({0}, {1}, {2}, {3})",
                       d(g.getData()), d(g.getIndices()), g.getAxis(), out()));
    return success();
  }
  if (auto g = llvm::dyn_cast<graph::GatherElementsGradOp>(op)) {
    call(llvm::formatv("zeroc_rt_k_gather_elements_grad({0}, {1}, {2}, {3})",
                       d(g.getGrad()), d(g.getIndices()), g.getAxis(), out()));
    return success();
  }
  if (auto g = llvm::dyn_cast<graph::GatherNDOp>(op)) {
    call(llvm::formatv("zeroc_rt_k_gather_nd({0}, {1}, {2})", d(g.getData()),
                       d(g.getIndices()), out()));
    return success();
  }
  auto scatterReduction = [](StringRef r) {
    return r == "add"   ? "ZEROC_RT_SCATTER_ADD"
           : r == "mul" ? "ZEROC_RT_SCATTER_MUL"
                        : "ZEROC_RT_SCATTER_NONE";
  };
  if (auto s = llvm::dyn_cast<graph::ScatterNDOp>(op)) {
    call(llvm::formatv("zeroc_rt_k_scatter_nd({0}, {1}, {2}, {3}, {4})",
                       d(s.getData()), d(s.getIndices()), d(s.getUpdates()),
                       scatterReduction(s.getReduction()), out()));
    return success();
  }
  if (auto s = llvm::dyn_cast<graph::ScatterElementsOp>(op)) {
    call(llvm::formatv("zeroc_rt_k_scatter_elements({0}, {1}, {2}, {3}, {4}, {5})",
                       d(s.getData()), d(s.getIndices()), d(s.getUpdates()),
                       s.getAxis(), scatterReduction(s.getReduction()), out()));
    return success();
  }
  if (auto c = llvm::dyn_cast<graph::CumSumOp>(op)) {
    call(llvm::formatv("zeroc_rt_k_cumsum({0}, {1}, {2}, {3}, {4})",
                       d(c.getInput()), c.getAxis(), int(c.getExclusive()),
                       int(c.getReverse()), out()));
    return success();
  }
  return op->emitOpError("is not supported by the CPU emitter yet");
}

LogicalResult Emitter::emitOp(Operation *op) {
  // Name results; arena-backed ones get their pointer here.
  for (Value r : op->getResults()) {
    std::string n = "V[" + std::to_string(nextVar++) + "]";
    names[r] = n;
    auto it = arenaOffset.find(r);
    if (it != arenaOffset.end())
      line(n + " = A + " + std::to_string(it->second) + ";");
    if (!shapeOf(r.getType()) || !dtypeName(shapeOf(r.getType())->elem))
      return op->emitOpError("produces a type the CPU target does not support: ")
             << r.getType();
  }
  if (tracing && isTraced(op)) {
    line("zeroc_rt_engine_trace_op(e, " + std::to_string(opNames.size()) + ");");
    std::string name = op->getName().getStringRef().str();
    if (std::string node = graph::onnxNameOf(op->getLoc()); !node.empty())
      name += " " + node;
    opNames.push_back(std::move(name));
  }
  if (llvm::isa<zero::ZeroDialect>(op->getDialect()))
    return emitZeroOp(op);
  return emitGraphOp(op);
}

LogicalResult Emitter::run(EmittedProgram &out) {
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
      return fn.emitOpError("input ") << i << " has a type the CPU target does not support";
  }
  // The micro-step is printed as functions of kOpsPerChunk ops each: the C++
  // compiler's optimizer is superlinear in the size of one function, and a
  // model of 20,000 small parameters made one function take minutes.
  std::vector<std::string> chunks;
  int opsInChunk = 0;
  for (Operation &op : block.without_terminator()) {
    if (failed(emitOp(&op)))
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
  std::string stepSource;
  if (failed(readStepConfig()) || failed(emitTrainStep(stepSource)))
    return failure();
  auto ret = llvm::cast<func::ReturnOp>(block.getTerminator());
  Value loss = ret.getOperand(0);
  Type lossElem = llvm::cast<RankedTensorType>(loss.getType()).getElementType();
  if (!lossElem.isF32() && !lossElem.isF64())
    return fn.emitOpError("the loss must be f32 or f64 on the CPU target");

  // The micro-batch is dim 0 of the inputs (the driver set it to
  // train_micro_batch_size_per_gpu); a model without batched inputs has 1.
  int64_t microBatch = 1;
  for (Type t : block.getArgumentTypes())
    if (auto rt = llvm::dyn_cast<RankedTensorType>(t); rt && rt.getRank() > 0) {
      microBatch = rt.getDimSize(0);
      break;
    }
  int64_t stage = module->getAttrOfType<IntegerAttr>("zero.stage").getInt();
  int64_t world = module->getAttrOfType<IntegerAttr>("zero.world_size").getInt();
  std::string src;
  llvm::raw_string_ostream os(src);
  os << cxxCommentLine("Generated by zeroc: ", hint)
     << "// ZeRO stage " << stage << ", world size " << world
     << ". Do not edit; recompile the model instead.\n"
     << "#include \"zeroc_rt/train.h\"\n\n#include <initializer_list>\n\n"
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
     << "// Every value's pointer: into the arena, the blob, the inputs or the\n"
     << "// engine's parameter buffers.\n"
     << "char *V[" << std::max(1, nextVar) << "];\n"
     << "// The request of each started collective, until its wait.\n"
     << "int64_t Q[" << std::max<size_t>(1, requestSlot.size()) << "];\n\n"
     << "const zeroc_rt_param_desc_t kParams[] = {\n";
  // Initial values lead the blob, in parameter order (collectParams).
  int64_t offset = 0;
  for (auto [i, p] : llvm::enumerate(params)) {
    auto t = p.getType();
    os << "    {" << cxxStringLiteral(p.getSymName()) << ", " << dtypeName(t.getElementType())
       << ", " << t.getRank() << ", " << dimsInit(t.getShape()) << ", "
       << t.getNumElements() << ", " << offset << ", "
       << dtypeName(p.getMasterElementType()) << ", "
       << dtypeName(gradElementType.lookup(p.getSymName())
                        ? gradElementType.lookup(p.getSymName())
                        : t.getElementType()) << ", "
       << (p.getTrainable() ? 0 : 1);
    auto layout = p->getAttrOfType<zero::StateLayoutAttr>(zero::kStateLayoutAttr);
    if (!layout)
      return p.emitOpError("has no zero.state_layout (run zero-plan-buffers)");
    os << ", " << layout.getParam() << ", " << layout.getParamStride() << ", "
       << layout.getGrad() << ", " << layout.getUpdate() << ", "
       << layout.getUpdateStride() << "},\n";
    offset = alignUp(offset + t.getNumElements() *
                                  zero::elementBytes(t.getElementType()));
  }
  if (params.empty())
    os << "    {\"\", ZEROC_RT_DTYPE_F32, 0, {}, 0, 0, ZEROC_RT_DTYPE_F32, "
          "ZEROC_RT_DTYPE_F32, 0, 0, 0, 0, 0, 0},\n";
  os << "};\n\nconst zeroc_rt_buffer_desc_t kBuffers[] = {\n";
  for (auto buf : buffers) {
    offset = alignUp(offset);
    auto t = buf.getType();
    os << "    {" << cxxStringLiteral(buf.getSymName()) << ", "
       << dtypeName(t.getElementType()) << ", " << t.getRank() << ", "
       << dimsInit(t.getShape()) << ", " << t.getNumElements() << ", " << offset
       << "},\n";
    offset = alignUp(offset + t.getNumElements() *
                                  zero::elementBytes(t.getElementType()));
  }
  if (buffers.empty())
    os << "    {\"\", ZEROC_RT_DTYPE_F32, 0, {}, 0, 0},\n";
  os << "};\n\nconst zeroc_rt_input_desc_t kInputs[] = {\n";
  for (auto [i, arg] : llvm::enumerate(block.getArguments())) {
    auto t = llvm::cast<RankedTensorType>(arg.getType());
    auto nameAttr = fn.getArgAttrOfType<StringAttr>(i, graph::kInputAttrName);
    std::string name = nameAttr ? nameAttr.str() : "input" + std::to_string(i);
    os << "    {" << cxxStringLiteral(name) << ", " << dtypeName(t.getElementType()) << ", "
       << t.getRank() << ", " << dimsInit(t.getShape()) << "},\n";
  }
  os << "};\n\nconst char *const kOpNames[] = {\n";
  for (const std::string &name : opNames)
    os << "    " << cxxStringLiteral(name) << ",\n";
  if (opNames.empty())
    os << "    \"\",\n";
  os << "};\n\n";
  for (auto [i, chunk] : llvm::enumerate(chunks))
    os << "__attribute__((noinline)) zeroc_rt_status_t\n"
       << "part" << i << "(zeroc_rt_engine_t *e, const void *const *inputs, "
       << "char *A, char *blob,\n      zeroc_rt_comm_t *comm) {\n"
       << "  (void)e; (void)inputs; (void)A; (void)blob; (void)comm;\n"
       << chunk << "  return nullptr;\n}\n\n";
  os << "zeroc_rt_status_t microStep(zeroc_rt_engine_t *e, const void *const *inputs,\n"
     << "                            double *loss) {\n"
     << "  char *A = (char *)zeroc_rt_engine_arena(e);\n"
     << "  char *blob = (char *)zeroc_rt_engine_blob(e);\n"
     << "  zeroc_rt_comm_t *comm = zeroc_rt_engine_comm(e);\n";
  for (size_t i = 0; i < chunks.size(); ++i)
    os << "  ZRT_TRY(part" << i << "(e, inputs, A, blob, comm));\n";
  os << llvm::formatv("  *loss = (double)*({0} *){1};\n",
                      lossElem.isF32() ? "float" : "double", var(loss))
     << "  return nullptr;\n}\n\n" << stepSource << "} // namespace\n\n";
  os << "int main(int argc, char **argv) {\n";
  auto d = [](const APFloat &v) { return cxxDouble(v.convertToDouble()); };
  os << "  static zeroc_rt_program_t program{};\n"
     << "  program.abi_version = ZEROC_RT_PROGRAM_ABI_VERSION;\n"
     << "  program.stage = " << stage << ";\n"
     << "  program.world_size = " << world << ";\n"
     << "  program.num_params = " << params.size() << ";\n"
     << "  program.params = kParams;\n"
     << "  program.num_buffers = " << buffers.size() << ";\n"
     << "  program.buffers = kBuffers;\n"
     << "  program.num_ops = " << opNames.size() << ";\n"
     << "  program.op_names = kOpNames;\n"
     << "  program.num_inputs = " << block.getNumArguments() << ";\n"
     << "  program.inputs = kInputs;\n"
     << "  program.blob_file = \"model.bin\";\n"
     << "  program.blob_bytes = " << blob.size() << ";\n"
     << "  program.blob_checksum = "
     << llvm::format_hex(blob.checksum(), 18)
     << "ull;\n"
     << "  program.arena_bytes = " << arenaBytes << ";\n"
     << "  program.micro_batch = " << microBatch << ";\n"
     << "  program.grad_accum = " << microSteps << ";\n"
     << "  program.gradient_clipping = " << cxxDouble(maxNorm) << ";\n"
     << "  program.steps_per_print = " << monitor.getStepsPerPrint() << ";\n";
  if (adam)
    os << "  program.optimizer.type = ZEROC_RT_OPTIMIZER_ADAM;\n"
       << "  program.optimizer.lr = " << d(adam.getLr()) << ";\n"
       << "  program.optimizer.beta1 = " << d(adam.getBeta1()) << ";\n"
       << "  program.optimizer.beta2 = " << d(adam.getBeta2()) << ";\n"
       << "  program.optimizer.eps = " << d(adam.getEps()) << ";\n"
       << "  program.optimizer.weight_decay = " << d(adam.getWeightDecay()) << ";\n"
       << "  program.optimizer.adam_w_mode = " << int(adam.getAdamWMode()) << ";\n"
       << "  program.optimizer.bias_correction = " << int(adam.getBiasCorrection()) << ";\n";
  else
    os << "  program.optimizer.type = ZEROC_RT_OPTIMIZER_SGD;\n"
       << "  program.optimizer.lr = " << d(sgd.getLr()) << ";\n"
       << "  program.optimizer.weight_decay = " << d(sgd.getWeightDecay()) << ";\n"
       << "  program.optimizer.momentum = " << d(sgd.getMomentum()) << ";\n"
       << "  program.optimizer.dampening = " << d(sgd.getDampening()) << ";\n"
       << "  program.optimizer.nesterov = " << int(sgd.getNesterov()) << ";\n";
  bool collectives = false;
  fn.walk([&](Operation *op) {
    collectives |= llvm::isa<zero::AllGatherOp, zero::ReduceScatterOp,
                             zero::AllReduceOp, zero::AllGatherStartOp,
                             zero::ReduceScatterStartOp,
                             zero::AllReduceStartOp>(op);
  });
  os << "  program.train_step = trainStep;\n"
     << "  program.micro_step_collectives = " << int(collectives) << ";\n"
     << "  program.micro_step = microStep;\n"
     << "  program.recompile_hint = " << cxxStringLiteral(hint) << ";\n";
  // ABI 2: LR schedule, loss scaler, precision, monitoring.
  const char *kind = "ZEROC_RT_LR_CONSTANT";
  switch (schedule.getKind()) {
  case zero::LrScheduleKind::Constant: kind = "ZEROC_RT_LR_CONSTANT"; break;
  case zero::LrScheduleKind::WarmupLR: kind = "ZEROC_RT_LR_WARMUP"; break;
  case zero::LrScheduleKind::WarmupDecayLR: kind = "ZEROC_RT_LR_WARMUP_DECAY"; break;
  case zero::LrScheduleKind::WarmupCosineLR: kind = "ZEROC_RT_LR_WARMUP_COSINE"; break;
  case zero::LrScheduleKind::OneCycle: kind = "ZEROC_RT_LR_ONE_CYCLE"; break;
  case zero::LrScheduleKind::LRRangeTest: kind = "ZEROC_RT_LR_RANGE_TEST"; break;
  }
  // The compute precision is what zero-mixed-precision made the trainable
  // parameters: 16-bit with an f32 master.
  const char *precision = "ZEROC_RT_PRECISION_FP32";
  for (auto p : params)
    if (p.getMaster() && p.getType().getElementType().isF16())
      precision = "ZEROC_RT_PRECISION_FP16";
    else if (p.getMaster() && p.getType().getElementType().isBF16())
      precision = "ZEROC_RT_PRECISION_BF16";
  os << "  program.lr_schedule.type = " << kind << ";\n"
     << "  program.lr_schedule.warmup_min_lr = " << d(schedule.getWarmupMinLr()) << ";\n"
     << "  program.lr_schedule.warmup_max_lr = " << d(schedule.getWarmupMaxLr()) << ";\n"
     << "  program.lr_schedule.warmup_num_steps = " << schedule.getWarmupNumSteps() << ";\n"
     << "  program.lr_schedule.warmup_type_log = " << int(schedule.getWarmupTypeLog()) << ";\n"
     << "  program.lr_schedule.total_num_steps = " << schedule.getTotalNumSteps() << ";\n"
     << "  program.lr_schedule.warmup_min_ratio = " << d(schedule.getWarmupMinRatio()) << ";\n"
     << "  program.lr_schedule.cos_min_ratio = " << d(schedule.getCosMinRatio()) << ";\n"
     << "  program.lr_schedule.cycle_min_lr = " << d(schedule.getCycleMinLr()) << ";\n"
     << "  program.lr_schedule.cycle_max_lr = " << d(schedule.getCycleMaxLr()) << ";\n"
     << "  program.lr_schedule.decay_lr_rate = " << d(schedule.getDecayLrRate()) << ";\n"
     << "  program.lr_schedule.cycle_first_step_size = " << schedule.getCycleFirstStepSize() << ";\n"
     << "  program.lr_schedule.cycle_second_step_size = " << schedule.getCycleSecondStepSize() << ";\n"
     << "  program.lr_schedule.decay_step_size = " << schedule.getDecayStepSize() << ";\n"
     << "  program.lr_schedule.cycle_momentum = " << int(schedule.getCycleMomentum()) << ";\n"
     << "  program.lr_schedule.cycle_min_mom = " << d(schedule.getCycleMinMom()) << ";\n"
     << "  program.lr_schedule.cycle_max_mom = " << d(schedule.getCycleMaxMom()) << ";\n"
     << "  program.lr_schedule.decay_mom_rate = " << d(schedule.getDecayMomRate()) << ";\n"
     << "  program.lr_schedule.range_min_lr = " << d(schedule.getRangeMinLr()) << ";\n"
     << "  program.lr_schedule.range_step_rate = " << d(schedule.getRangeStepRate()) << ";\n"
     << "  program.lr_schedule.range_step_size = " << schedule.getRangeStepSize() << ";\n"
     << "  program.lr_schedule.range_staircase = " << int(schedule.getRangeStaircase()) << ";\n"
     << "  program.loss_scaler.enabled = " << int(bool(scaler)) << ";\n";
  // Without a scaler the table still lists #zero.loss_scaler<>'s defaults
  // (the runtime reads them only when the scaler is enabled).
  zero::LossScalerAttr sc =
      scaler ? scaler
             : zero::LossScalerAttr::get(module.getContext(), APFloat(0.0),
                                         APFloat(65536.0), 1000, 2, false,
                                         APFloat(1.0), APFloat(2.0));
  os << "  program.loss_scaler.static_scale = " << d(sc.getStaticScale()) << ";\n"
       << "  program.loss_scaler.initial_scale = " << d(sc.getInitialScale()) << ";\n"
       << "  program.loss_scaler.scale_window = " << sc.getScaleWindow() << ";\n"
       << "  program.loss_scaler.hysteresis = " << sc.getHysteresis() << ";\n"
       << "  program.loss_scaler.consecutive_hysteresis = " << int(sc.getConsecutiveHysteresis()) << ";\n"
       << "  program.loss_scaler.min_scale = " << d(sc.getMinScale()) << ";\n"
       << "  program.loss_scaler.scale_factor = " << d(sc.getScaleFactor()) << ";\n";
  os << "  program.precision = " << precision << ";\n"

     << "  program.monitor.wall_clock_breakdown = " << int(monitor.getWallClockBreakdown()) << ";\n"
     << "  program.monitor.csv_enabled = " << int(monitor.getCsv()) << ";\n"
     << "  program.monitor.csv_output_path = " << cxxStringLiteral(monitor.getCsvOutputPath().str()) << ";\n"
     << "  program.monitor.csv_job_name = " << cxxStringLiteral(monitor.getCsvJobName().str()) << ";\n"
     << "  return zeroc_rt_train_process_main(argc, argv, &program);\n}\n";
  out.source = std::move(src);
  out.blob = std::move(blob);
  out.arenaBytes = arenaBytes;
  return success();
}

} // namespace

LogicalResult emitCpuProgram(ModuleOp module, const std::string &recompileHint,
                             EmittedProgram &out) {
  return Emitter(module, recompileHint).run(out);
}

} // namespace zeroc
