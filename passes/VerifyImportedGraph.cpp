//===- VerifyImportedGraph.cpp - the import phase's contract --------------===//
#include "zeroc/Passes/Passes.h"

#include "zeroc/Dialect/Graph/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringSet.h"

namespace zeroc {
#define GEN_PASS_DEF_VERIFYIMPORTEDGRAPH
#include "zeroc/Passes/Passes.h.inc"
} // namespace zeroc

using namespace mlir;

namespace {

bool isStaticTensor(Type t) {
  auto rt = llvm::dyn_cast<RankedTensorType>(t);
  return rt && rt.hasStaticShape();
}

struct VerifyImportedGraphPass
    : zeroc::impl::VerifyImportedGraphBase<VerifyImportedGraphPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto forward = module.lookupSymbol<func::FuncOp>("forward");
    if (!forward || forward.isExternal()) {
      module.emitError("module has no func.func @forward with a body");
      return signalPassFailure();
    }
    if (failed(verifyForward(forward)))
      return signalPassFailure();
  }

  /// Results tagged graph.buffer_update name a graph.buffer of their type,
  /// each buffer at most once, and are not the loss.
  LogicalResult verifyBufferUpdates(func::FuncOp fn) {
    llvm::StringSet<> updated;
    for (unsigned i = 0; i < fn.getNumResults(); ++i) {
      Attribute attr = fn.getResultAttr(i, zeroc::graph::kBufferUpdateAttrName);
      if (!attr)
        continue;
      auto ref = llvm::dyn_cast<FlatSymbolRefAttr>(attr);
      if (!ref)
        return fn.emitOpError("result ")
               << i << " has a graph.buffer_update that is not a symbol reference";
      auto buffer = SymbolTable::lookupNearestSymbolFrom<zeroc::graph::BufferOp>(fn, ref);
      if (!buffer)
        return fn.emitOpError("result ")
               << i << " updates " << ref << ", which is not a graph.buffer";
      if (buffer.getType() != fn.getResultTypes()[i])
        return fn.emitOpError("result ")
               << i << " of type " << fn.getResultTypes()[i] << " updates "
               << ref << " of type " << buffer.getType();
      if (fn.getResultAttr(i, zeroc::graph::kLossAttrName))
        return fn.emitOpError("loss result ") << i << " cannot update a buffer";
      if (!updated.insert(ref.getValue()).second)
        return fn.emitOpError("result ")
               << i << " updates " << ref << " a second time";
    }
    return success();
  }

  LogicalResult verifyForward(func::FuncOp fn) {
    for (auto [i, t] : llvm::enumerate(fn.getArgumentTypes()))
      if (!isStaticTensor(t))
        return fn.emitOpError("argument ")
               << i << " must be a statically shaped tensor, got " << t;
    int losses = 0;
    for (auto [i, t] : llvm::enumerate(fn.getResultTypes())) {
      if (!isStaticTensor(t))
        return fn.emitOpError("result ")
               << i << " must be a statically shaped tensor, got " << t;
      if (!fn.getResultAttr(i, zeroc::graph::kLossAttrName))
        continue;
      ++losses;
      auto rt = llvm::cast<RankedTensorType>(t);
      if (rt.getRank() != 0 || !llvm::isa<FloatType>(rt.getElementType()))
        return fn.emitOpError("loss result ")
               << i << " must be a floating-point scalar, got " << t;
    }
    if (losses != 1 && (requireLoss || losses > 1))
      return fn.emitOpError("must mark exactly one result with graph.loss, found ")
             << losses;
    if (failed(verifyBufferUpdates(fn)))
      return failure();
    WalkResult walk = fn.walk([&](Operation *op) {
      if (op == fn.getOperation() || llvm::isa<func::ReturnOp>(op))
        return WalkResult::advance();
      if (!llvm::isa<zeroc::graph::GraphDialect>(op->getDialect())) {
        op->emitOpError("is not a graph dialect op; @forward may only hold "
                        "graph ops after import");
        return WalkResult::interrupt();
      }
      for (Type t : op->getResultTypes())
        if (!isStaticTensor(t)) {
          op->emitOpError("result must be a statically shaped tensor, got ") << t;
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
    return failure(walk.wasInterrupted());
  }
};

} // namespace
