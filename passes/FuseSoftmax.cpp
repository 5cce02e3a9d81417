//===- FuseSoftmax.cpp - Softmaxes with their elementwise neighbours ------===//
//
// docs/CudaTarget.md, "Softmax fusion": the elementwise chain that computes
// a softmax's input becomes the softmax's prologue (graph.fused_softmax),
// and the chain that reads a softmax gradient becomes its epilogue
// (graph.fused_softmax_grad), so the value between them is never stored.
//
//===----------------------------------------------------------------------===//

#include "Fusion.h"

#include "zeroc/Passes/Passes.h"

#include "zeroc/Dialect/Graph/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace zeroc {
#define GEN_PASS_DEF_FUSESOFTMAX
#include "zeroc/Passes/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::graph;

namespace {

/// Whether `op` is an elementwise chain a fused softmax can take as its
/// body: a graph.fused_elementwise of one result, or one fusable
/// elementwise op.
bool isChain(Operation *op) {
  if (auto fused = llvm::dyn_cast<FusedElementwiseOp>(op))
    return fused.getNumResults() == 1;
  return isFusableElementwise(op);
}

/// The values `chain` reads: a fused op's inputs, an op's operands.
OperandRange chainInputs(Operation *chain) {
  if (auto fused = llvm::dyn_cast<FusedElementwiseOp>(chain))
    return fused.getInputs();
  return chain->getOperands();
}

/// Clones `chain`'s computation at `b`'s insertion point, reading its k-th
/// input (chainInputs) as `args[k]`, and returns the value it yields.
Value cloneChain(OpBuilder &b, Operation *chain, ValueRange args) {
  IRMapping map;
  auto fused = llvm::dyn_cast<FusedElementwiseOp>(chain);
  if (!fused) {
    for (auto [operand, arg] : llvm::zip(chain->getOperands(), args))
      map.map(operand, arg);
    return b.clone(*chain, map)->getResult(0);
  }
  Block &body = fused.getBody().front();
  map.map(body.getArguments(), args);
  for (Operation &op : body.without_terminator())
    b.clone(op, map);
  return map.lookup(fused.getYielded()[0]);
}

/// Whether `later` may read in `earlier`'s place what `earlier` reads:
/// both in one block, `earlier` first, and nothing between them writes.
bool canMoveReadsTo(Operation *earlier, Operation *later) {
  return earlier->getBlock() == later->getBlock() &&
         !zeroc::fusion::writesBetween(earlier, later);
}

/// softmax(chain(...)) as one graph.fused_softmax at the softmax, when the
/// chain's value has no other reader.
void fusePrologue(Operation *softmax, int64_t axis, bool log) {
  Value input = softmax->getOperand(0);
  Operation *chain = input.getDefiningOp();
  if (!chain || !isChain(chain) || !input.hasOneUse() || !canMoveReadsTo(chain, softmax))
    return;
  OpBuilder b(softmax);
  Location loc = b.getFusedLoc({softmax->getLoc(), chain->getLoc()});
  auto fused = b.create<FusedSoftmaxOp>(loc, softmax->getResultTypes(),
                                        chainInputs(chain), axis, log);
  Block *body = b.createBlock(&fused.getBody());
  SmallVector<Value> args;
  for (Value v : chainInputs(chain))
    args.push_back(body->addArgument(v.getType(), v.getLoc()));
  b.create<YieldOp>(loc, cloneChain(b, chain, args));
  softmax->getResult(0).replaceAllUsesWith(fused.getResult());
  softmax->erase();
  chain->erase();
}

/// chain(softmax_grad(...), ...) as one graph.fused_softmax_grad at the
/// chain, when the chain is the gradient's only reader.
void fuseEpilogue(SoftmaxGradOp grad) {
  Value gx = grad.getResult();
  Operation *chain = nullptr;
  for (Operation *user : gx.getUsers()) {
    if (chain && user != chain)
      return;
    chain = user;
  }
  if (!chain || !isChain(chain) || chain->getResult(0).getType() != gx.getType() ||
      !canMoveReadsTo(grad, chain))
    return;
  SmallVector<Value> inputs;
  for (Value v : chainInputs(chain))
    if (v != gx)
      inputs.push_back(v);
  OpBuilder b(chain);
  Location loc = b.getFusedLoc({chain->getLoc(), grad.getLoc()});
  auto fused = b.create<FusedSoftmaxGradOp>(loc, gx.getType(), grad.getY(), grad.getGrad(),
                                            inputs, grad.getAxis(), grad.getLog());
  Block *body = b.createBlock(&fused.getBody());
  Value gradArg = body->addArgument(gx.getType(), grad.getLoc());
  SmallVector<Value> args;
  for (Value v : chainInputs(chain))
    args.push_back(v == gx ? gradArg : body->addArgument(v.getType(), v.getLoc()));
  b.create<YieldOp>(loc, cloneChain(b, chain, args));
  chain->getResult(0).replaceAllUsesWith(fused.getResult());
  chain->erase();
  grad.erase();
}

struct FuseSoftmaxPass : zeroc::impl::FuseSoftmaxBase<FuseSoftmaxPass> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      SmallVector<Operation *> softmaxes;
      SmallVector<SoftmaxGradOp> grads;
      for (Operation &op : fn.getBody().front()) {
        if (llvm::isa<SoftmaxOp, LogSoftmaxOp>(op))
          softmaxes.push_back(&op);
        else if (auto g = llvm::dyn_cast<SoftmaxGradOp>(op))
          grads.push_back(g);
      }
      for (Operation *op : softmaxes) {
        if (auto s = llvm::dyn_cast<SoftmaxOp>(op))
          fusePrologue(s, s.getAxis(), /*log=*/false);
        else if (auto s = llvm::dyn_cast<LogSoftmaxOp>(op))
          fusePrologue(s, s.getAxis(), /*log=*/true);
      }
      for (SoftmaxGradOp g : grads)
        fuseEpilogue(g);
    }
  }
};

} // namespace
