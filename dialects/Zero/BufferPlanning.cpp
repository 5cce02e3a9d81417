//===- BufferPlanning.cpp - storage rules shared by planner and emitters --===//
#include "zeroc/Dialect/Zero/BufferPlanning.h"

#include "zeroc/Dialect/Graph/GraphOps.h"
#include "zeroc/Dialect/Zero/ZeroOps.h"

using namespace mlir;

namespace zeroc::zero {

Value inPlaceOperand(Operation *op) {
  if (auto ar = llvm::dyn_cast<AllReduceOp>(op))
    return ar.getInput();
  if (auto ar = llvm::dyn_cast<AllReduceStartOp>(op))
    return ar.getInput();
  if (auto rs = llvm::dyn_cast<ReduceScatterOp>(op); rs && rs.getInPlace())
    return rs.getBuffer();
  if (auto rs = llvm::dyn_cast<ReduceScatterStartOp>(op); rs && rs.getInPlace())
    return rs.getBuffer();
  if (auto ag = llvm::dyn_cast<AllGatherOp>(op); ag && ag.getInPlace())
    return ag.getShard();
  if (auto ag = llvm::dyn_cast<AllGatherStartOp>(op); ag && ag.getInPlace())
    return ag.getShard();
  return Value();
}

bool isPlainGemmProduct(Operation *op) {
  auto g = llvm::dyn_cast<graph::GemmOp>(op);
  return g && g.getAlpha().convertToDouble() == 1.0 &&
         (!g.getC() || g.getBeta().convertToDouble() == 0.0);
}

Value storageRoot(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto r = llvm::dyn_cast<graph::ReshapeOp>(def))
      v = r.getInput();
    else if (auto sv = llvm::dyn_cast<graph::StridedViewOp>(def))
      v = sv.getInput();
    else if (auto view = llvm::dyn_cast<ViewOp>(def))
      v = view.getBuffer();
    else if (auto w = llvm::dyn_cast<WaitOp>(def))
      v = w.getToken(); // the start op's payload storage
    else if (Value in = inPlaceOperand(def))
      v = in;
    else if (auto slice = llvm::dyn_cast<ShardSliceOp>(def))
      v = slice.getShard();
    else if (Value storage =
                 llvm::isa<PackOp>(def) ? packStorage(llvm::cast<PackOp>(def)) : Value())
      v = storage;
    else
      break;
  }
  return v;
}

bool isReleased(Value v) {
  return llvm::any_of(storageRoot(v).getUsers(),
                      [](Operation *u) { return llvm::isa<ReleaseOp>(u); });
}

bool packRenamesInput(PackOp pack) {
  if (pack.getInputs().size() != 1 ||
      llvm::cast<IntegerAttr>(pack.getOffsets()[0]).getInt() != 0)
    return false;
  Value in = pack.getInputs().front();
  auto type = llvm::dyn_cast<RankedTensorType>(in.getType());
  if (!type || !type.hasStaticShape() ||
      type.getNumElements() != pack.getType().getSize() ||
      type.getElementType() != pack.getType().getElementType())
    return false;
  for (Value v = in;; v = v.getDefiningOp<graph::ReshapeOp>().getInput()) {
    if (!v.hasOneUse())
      return false;
    Operation *def = v.getDefiningOp();
    if (!def)
      return false;
    if (!llvm::isa<graph::ReshapeOp>(def))
      return resultsNeedArena(def);
  }
}

Value packStorage(PackOp pack) {
  if (packRenamesInput(pack))
    return pack.getInputs().front();
  if (!pack->hasAttr(kInGradSlabAttr))
    return Value();
  for (auto [input, offset] : llvm::zip(pack.getInputs(), pack.getOffsets()))
    if (llvm::cast<IntegerAttr>(offset).getInt() == 0)
      return input;
  return Value();
}

llvm::StringMap<Type> accumulatorElementTypes(Operation *scope) {
  llvm::StringMap<Type> types;
  scope->walk(
      [&](GradAccumulatorOp acc) { types[acc.getParam()] = bufferElementType(acc.getType()); });
  return types;
}

SmallVector<Value> accumulatorChain(Value grad) {
  SmallVector<Value> chain = {grad};
  for (Value v = grad;; chain.push_back(v)) {
    Operation *def = v.getDefiningOp();
    if (auto r = llvm::dyn_cast_or_null<graph::ReshapeOp>(def)) {
      v = r.getInput();
    } else if (auto w = llvm::dyn_cast_or_null<WaitOp>(def);
               w && w.getToken().getDefiningOp<ReduceScatterStartOp>()) {
      v = w.getToken(); // the started reduce-scatter's shard
    } else if (llvm::isa_and_nonnull<ReduceScatterOp, ReduceScatterStartOp>(def) &&
               inPlaceOperand(def)) {
      // On one rank: the shard is the whole buffer.
      Value buffer = inPlaceOperand(def);
      auto flat = llvm::cast<FlatType>(buffer.getType());
      if (flat.getWorld() != 1)
        break;
      v = buffer;
    } else if (auto pack = llvm::dyn_cast_or_null<PackOp>(def); pack && packRenamesInput(pack)) {
      v = pack.getInputs().front();
    } else {
      break;
    }
  }
  return chain;
}

Value accumulatorStorageOf(Value grad) { return accumulatorChain(grad).back(); }

bool writesResultAtStrides(Operation *op, unsigned index) {
  return llvm::isa<graph::FusedAttentionGradOp>(op) && index < 3;
}

SmallVector<int64_t> recordedResultStrides(Value result) {
  auto r = llvm::dyn_cast<OpResult>(result);
  auto all = r ? r.getOwner()->getAttrOfType<ArrayAttr>(kResultStridesAttr) : ArrayAttr();
  if (!all || r.getResultNumber() >= all.size())
    return {};
  auto strides = llvm::dyn_cast<DenseI64ArrayAttr>(all[r.getResultNumber()]);
  return strides ? SmallVector<int64_t>(strides.asArrayRef()) : SmallVector<int64_t>();
}

bool resultsNeedArena(Operation *op) {
  // A fused op's body computes one element at a time: its values are the
  // kernel's registers.
  if (graph::isInFusedBody(op))
    return false;
  if (inPlaceOperand(op)) // the result is that operand's storage
    return false;
  if (auto pack = llvm::dyn_cast<PackOp>(op); pack && packStorage(pack))
    return false;
  return !llvm::isa<graph::ReshapeOp, graph::StridedViewOp, ViewOp, ShardSliceOp, graph::ConstantOp,
                    graph::LoadParamOp, graph::LoadBufferOp, ParamReplicaOp, ParamShardOp,
                    ReplicaSliceOp, BufferLoadOp, GradAccumulatorOp, WaitOp>(op);
}

SmallVector<ParamShardOp, 4> paramShardsOf(Value shard) {
  if (auto read = shard.getDefiningOp<ParamShardOp>())
    return {read};
  auto concat = shard.getDefiningOp<ConcatShardsOp>();
  if (!concat)
    return {};
  SmallVector<ParamShardOp, 4> reads;
  for (Value in : concat.getInputs()) {
    auto read = in.getDefiningOp<ParamShardOp>();
    if (!read)
      return {};
    reads.push_back(read);
  }
  return reads;
}

int64_t gatheredElementsOf(Value v) {
  if (auto w = v.getDefiningOp<WaitOp>())
    v = w.getToken();
  if (auto s = v.getDefiningOp<AllGatherStartOp>())
    return llvm::cast<FlatType>(s.getToken().getType().getPayload()).getSize();
  if (auto g = v.getDefiningOp<AllGatherOp>())
    return g.getType().getSize();
  return 0;
}

GatheredElements gatheredElementsAt(Block *block, Operation *point) {
  // Keyed by the gather's result or start's token; released through the
  // buffer (a gather's result or a wait's), waited for through the token.
  llvm::DenseMap<Value, int64_t> live, inFlight;
  GatheredElements total;
  auto key = [](Value v) {
    auto w = v.getDefiningOp<WaitOp>();
    return w ? w.getToken() : v;
  };
  for (Operation &op : *block) {
    if (llvm::isa<AllGatherOp, AllGatherStartOp>(op)) {
      int64_t n = gatheredElementsOf(op.getResult(0));
      live[op.getResult(0)] = n;
      total.live += n;
      if (llvm::isa<AllGatherStartOp>(op)) {
        inFlight[op.getResult(0)] = n;
        total.inFlight += n;
      }
    } else if (auto w = llvm::dyn_cast<WaitOp>(op)) {
      total.inFlight -= inFlight.lookup(w.getToken());
      inFlight.erase(w.getToken());
    } else if (auto r = llvm::dyn_cast<ReleaseOp>(op)) {
      Value buffer = key(r.getBuffer());
      total.live -= live.lookup(buffer);
      live.erase(buffer);
    }
    if (&op == point)
      break;
  }
  return total;
}

int64_t elementBytes(Type elem) {
  return elem.isInteger(1) ? 1 : (elem.getIntOrFloatBitWidth() + 7) / 8;
}

Type bufferElementType(Type type) {
  if (auto tok = llvm::dyn_cast<TokenType>(type))
    type = tok.getPayload(); // where the collective writes
  if (auto rt = llvm::dyn_cast<RankedTensorType>(type))
    return rt.getElementType();
  if (auto f = llvm::dyn_cast<FlatType>(type))
    return f.getElementType();
  if (auto s = llvm::dyn_cast<ShardType>(type))
    return s.getElementType();
  return {};
}

int64_t storageBytes(Type type) {
  if (auto tok = llvm::dyn_cast<TokenType>(type))
    type = tok.getPayload();
  int64_t n = 0;
  if (auto rt = llvm::dyn_cast<RankedTensorType>(type)) {
    if (!rt.hasStaticShape())
      return -1;
    n = rt.getNumElements();
  } else if (auto f = llvm::dyn_cast<FlatType>(type)) {
    n = f.getSize();
  } else if (auto s = llvm::dyn_cast<ShardType>(type)) {
    n = s.getSize();
  } else {
    return -1;
  }
  Type elem = bufferElementType(type);
  if (!elem.isIntOrFloat())
    return -1;
  return n * elementBytes(elem);
}

} // namespace zeroc::zero
