//===- FuseElementwise.cpp - Elementwise chains as one kernel -------------===//
//
// docs/CudaTarget.md, "Elementwise fusion": a chain of elementwise ops of
// one type becomes one graph.fused_elementwise, which yields the values
// that other ops read, and which the CUDA emitter prints as one kernel.
//
//===----------------------------------------------------------------------===//

#include "Fusion.h"

#include "zeroc/Passes/Passes.h"

#include "zeroc/Dialect/Graph/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

namespace zeroc {
#define GEN_PASS_DEF_FUSEELEMENTWISE
#include "zeroc/Passes/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::graph;

namespace {

/// Whether `p` can join `group`, whose last op is `root`: a fusable
/// producer in root's block of root's type, each of whose uses is in the
/// group or after root (the fused op yields its value for those), and whose
/// operands nothing between it and root may write or free
/// (fusion::writesStorageBetween). Other writes between them, such as a
/// stage-3 gather that zero-overlap started there, do not keep it apart.
bool canJoin(Operation *p, Operation *root, const llvm::SetVector<Operation *> &group,
             const llvm::DenseSet<Operation *> &taken) {
  if (group.contains(p) || taken.contains(p) || p->getBlock() != root->getBlock() ||
      !isFusableElementwise(p) || p->getResult(0).getType() != root->getResult(0).getType())
    return false;
  for (Operation *user : p->getUsers()) {
    if (group.contains(user))
      continue;
    Operation *at = root->getBlock()->findAncestorOpInBlock(*user);
    if (!at || !root->isBeforeInBlock(at))
      return false;
  }
  return !zeroc::fusion::writesStorageBetween(p, root, p->getOperands());
}

/// The ops that fuse into `root`: root and, transitively, the producers
/// that can join (canJoin). In block order.
SmallVector<Operation *> groupOf(Operation *root, const llvm::DenseSet<Operation *> &taken) {
  llvm::SetVector<Operation *> group;
  group.insert(root);
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t i = 0; i < group.size(); ++i)
      for (Value operand : group[i]->getOperands())
        if (Operation *p = operand.getDefiningOp(); p && canJoin(p, root, group, taken)) {
          group.insert(p);
          grew = true;
        }
  }
  SmallVector<Operation *> ops(group.begin(), group.end());
  llvm::sort(ops, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ops;
}

/// Replaces `ops` (in block order, the last the root) by one
/// graph.fused_elementwise at the root, which yields the root's value and
/// every other member's that an op outside the group reads.
void fuse(ArrayRef<Operation *> ops) {
  Operation *root = ops.back();
  llvm::DenseSet<Operation *> members(ops.begin(), ops.end());
  llvm::SetVector<Value> inputs;
  SmallVector<Value> outputs;
  for (Operation *op : ops) {
    for (Value v : op->getOperands())
      if (!members.contains(v.getDefiningOp()))
        inputs.insert(v);
    Value r = op->getResult(0);
    if (op == root || llvm::any_of(r.getUsers(), [&](Operation *u) {
          return !members.contains(u);
        }))
      outputs.push_back(r);
  }
  SmallVector<Location> locs = {root->getLoc()};
  for (Operation *op : ops.drop_back())
    locs.push_back(op->getLoc());
  OpBuilder b(root);
  SmallVector<Type> types(outputs.size(), root->getResult(0).getType());
  auto fused = b.create<FusedElementwiseOp>(b.getFusedLoc(locs), types,
                                            inputs.getArrayRef());
  Block *body = b.createBlock(&fused.getBody());
  IRMapping map;
  for (Value v : inputs)
    map.map(v, body->addArgument(v.getType(), v.getLoc()));
  for (Operation *op : ops)
    b.clone(*op, map);
  SmallVector<Value> yielded;
  for (Value v : outputs)
    yielded.push_back(map.lookup(v));
  b.create<YieldOp>(root->getLoc(), yielded);
  for (auto [v, r] : llvm::zip(outputs, fused.getResults()))
    v.replaceUsesWithIf(r, [&](OpOperand &use) { return !members.contains(use.getOwner()); });
  for (Operation *op : llvm::reverse(ops))
    op->erase();
}

struct FuseElementwisePass : zeroc::impl::FuseElementwiseBase<FuseElementwisePass> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      Block &block = fn.getBody().front();
      llvm::DenseSet<Operation *> taken;
      SmallVector<SmallVector<Operation *>> groups;
      for (Operation &op : llvm::reverse(block)) {
        if (taken.contains(&op) || !isFusableElementwise(&op))
          continue;
        SmallVector<Operation *> group = groupOf(&op, taken);
        taken.insert(group.begin(), group.end());
        if (group.size() > 1)
          groups.push_back(std::move(group));
      }
      for (ArrayRef<Operation *> group : groups)
        fuse(group);
    }
  }
};

} // namespace
