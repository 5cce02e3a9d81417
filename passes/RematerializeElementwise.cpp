//===- RematerializeElementwise.cpp - Recompute what a fused op saved -----===//
//
// docs/CudaTarget.md, "Recomputing saved values": a fused elementwise op
// that reads a value another one stored, and that can compute it again from
// what it reads anyway, computes it; the value is no longer stored when no
// other op reads it.
//
//===----------------------------------------------------------------------===//

#include "Fusion.h"

#include "zeroc/Passes/Passes.h"

#include "zeroc/Dialect/Graph/GraphOps.h"
#include "zeroc/Dialect/Zero/BufferPlanning.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace zeroc {
#define GEN_PASS_DEF_REMATERIALIZEELEMENTWISE
#include "zeroc/Passes/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::graph;

namespace {

/// The result of `producer` that yields `inner`, a value of its body, and
/// that `reads` holds; null when there is none.
Value readResult(FusedElementwiseOp producer, Value inner, const llvm::DenseSet<Value> &reads) {
  for (auto [result, yielded] : llvm::zip(producer.getResults(), producer.getYielded()))
    if (yielded == inner && reads.contains(result))
      return result;
  return nullptr;
}

/// Recomputes, in one fused op's body, inputs that other fused ops yield.
class Recompute {
public:
  explicit Recompute(FusedElementwiseOp consumer) : consumer(consumer) {
    for (Value v : consumer.getInputs())
      reads.insert(v);
  }

  /// Whether the consumer can compute `input` (the result of another fused
  /// op of its type) from its other inputs and shared scalars.
  bool canRecompute(Value input) {
    auto producer = input.getDefiningOp<FusedElementwiseOp>();
    if (!producer || producer == consumer || producer.getResultType() != consumer.getResultType())
      return false;
    Value yielded = producer.getYielded()[llvm::cast<OpResult>(input).getResultNumber()];
    Operation *def = yielded.getDefiningOp();
    return def && computable(producer, def);
  }

  /// Makes the consumer compute `inputs` (each passed canRecompute) in its
  /// body and stop reading them.
  void recompute(ArrayRef<Value> inputs) {
    recomputed.insert(inputs.begin(), inputs.end());
    Block &body = consumer.getBody().front();
    builder.setInsertionPointToStart(&body);
    SmallVector<unsigned> dropped;
    // outer() may append inputs (a shared scalar the consumer did not read).
    SmallVector<Value> before(consumer.getInputs());
    for (auto [i, input] : llvm::enumerate(before))
      if (recomputed.contains(input)) {
        body.getArgument(i).replaceAllUsesWith(outer(input));
        dropped.push_back(i);
      }
    for (unsigned i : llvm::reverse(dropped)) {
      body.eraseArgument(i);
      consumer->eraseOperand(i);
    }
  }

private:
  FusedElementwiseOp consumer;
  llvm::DenseSet<Value> reads;               ///< the consumer's inputs
  llvm::DenseSet<Value> recomputed;          ///< of those, the ones it recomputes
  llvm::DenseMap<Value, Value> atConsumer;   ///< an outside value in its body
  llvm::DenseMap<Value, Value> cloned;       ///< a producer's body value in its body
  llvm::DenseMap<Operation *, bool> checked; ///< computable's answers
  llvm::DenseMap<std::pair<Operation *, Value>, bool> kept; ///< unchanged's answers
  OpBuilder builder{consumer.getContext()};

  /// Whether `v` holds at the consumer what it held at `producer`: no op
  /// between them writes or frees its storage (an in-place collective, a
  /// release, a write of the state it views).
  bool unchanged(FusedElementwiseOp producer, Value v) {
    auto [it, inserted] = kept.try_emplace({producer, v}, false);
    if (inserted)
      it->second = !zeroc::fusion::writesStorageBetween(producer, consumer, v);
    return it->second;
  }

  /// Whether `op`, in `producer`'s body, computes from values the consumer
  /// may read: the producer's inputs that the consumer reads or that are of
  /// rank 0, and the producer's results that it reads, none of them written
  /// in between. A dropout's mask depends on the launch, so it is never
  /// recomputed.
  bool computable(FusedElementwiseOp producer, Operation *op) {
    if (llvm::isa<DropoutOp>(op))
      return false;
    if (auto known = checked.find(op); known != checked.end())
      return known->second;
    const bool ok = llvm::all_of(op->getOperands(), [&](Value v) {
      if (auto arg = llvm::dyn_cast<BlockArgument>(v)) {
        Value input = producer.getInputs()[arg.getArgNumber()];
        auto type = llvm::cast<RankedTensorType>(input.getType());
        return (reads.contains(input) || type.getRank() == 0) && unchanged(producer, input);
      }
      if (Value result = readResult(producer, v, reads))
        return unchanged(producer, result);
      return computable(producer, v.getDefiningOp());
    });
    checked[op] = ok;
    return ok;
  }

  /// The value of `v`, which the consumer reads, recomputes or is a scalar
  /// (computable), inside its body: a new input for a scalar it did not
  /// read.
  Value outer(Value v) {
    if (Value known = atConsumer.lookup(v))
      return known;
    Value inside;
    if (recomputed.contains(v)) {
      auto producer = v.getDefiningOp<FusedElementwiseOp>();
      Value yielded = producer.getYielded()[llvm::cast<OpResult>(v).getResultNumber()];
      inside = cloneDef(producer, yielded);
    } else {
      auto inputs = consumer.getInputs();
      auto it = llvm::find(inputs, v);
      Block &body = consumer.getBody().front();
      if (it != inputs.end()) {
        inside = body.getArgument(it - inputs.begin());
      } else {
        consumer->insertOperands(consumer->getNumOperands(), v);
        inside = body.addArgument(v.getType(), v.getLoc());
      }
    }
    atConsumer[v] = inside;
    return inside;
  }

  /// `v`, a value of `producer`'s body, in the consumer's body.
  Value inner(FusedElementwiseOp producer, Value v) {
    if (Value known = cloned.lookup(v))
      return known;
    Value inside;
    if (auto arg = llvm::dyn_cast<BlockArgument>(v))
      inside = outer(producer.getInputs()[arg.getArgNumber()]);
    else if (Value result = readResult(producer, v, reads))
      inside = outer(result);
    else
      inside = cloneDef(producer, v);
    cloned[v] = inside;
    return inside;
  }

  /// Clones the op of `producer`'s body that defines `v` into the consumer's
  /// body, after the values it reads.
  Value cloneDef(FusedElementwiseOp producer, Value v) {
    if (Value known = cloned.lookup(v))
      return known;
    Operation *def = v.getDefiningOp();
    IRMapping map;
    for (Value operand : def->getOperands())
      map.map(operand, inner(producer, operand));
    Value inside = builder.clone(*def, map)->getResult(0);
    cloned[v] = inside;
    return inside;
  }
};

/// Drops the results of `fused` that nothing reads (its body's values
/// stay, and are no longer stored); erases it when nothing reads any.
void dropUnread(FusedElementwiseOp fused) {
  if (llvm::all_of(fused.getResults(), [](Value r) { return !r.use_empty(); }))
    return;
  if (fused->use_empty()) {
    fused->erase();
    return;
  }
  SmallVector<Value> kept, yielded;
  for (auto [result, value] : llvm::zip(fused.getResults(), fused.getYielded()))
    if (!result.use_empty()) {
      kept.push_back(result);
      yielded.push_back(value);
    }
  OpBuilder b(fused);
  SmallVector<Type> types(kept.size(), fused.getResultType());
  auto slim = b.create<FusedElementwiseOp>(fused.getLoc(), types, fused.getInputs());
  slim->setAttrs(fused->getAttrs());
  slim.getBody().takeBody(fused.getBody());
  Operation *yield = slim.getBody().front().getTerminator();
  b.setInsertionPoint(yield);
  b.create<YieldOp>(yield->getLoc(), yielded);
  yield->erase();
  for (auto [old, now] : llvm::zip(kept, slim.getResults()))
    old.replaceAllUsesWith(now);
  fused->erase();
}

struct RematerializeElementwisePass
    : zeroc::impl::RematerializeElementwiseBase<RematerializeElementwisePass> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      SmallVector<FusedElementwiseOp> fusedOps(fn.getBody().getOps<FusedElementwiseOp>());
      for (FusedElementwiseOp consumer : fusedOps) {
        Recompute recompute(consumer);
        SmallVector<Value> inputs;
        for (Value input : consumer.getInputs())
          if (recompute.canRecompute(input))
            inputs.push_back(input);
        if (!inputs.empty())
          recompute.recompute(inputs);
      }
      for (FusedElementwiseOp fused : fusedOps)
        dropUnread(fused);
    }
  }
};

} // namespace
