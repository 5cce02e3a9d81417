//===- Autodiff.cpp - reverse-mode differentiation of @forward ------------===//
#include "zeroc/Passes/Passes.h"

#include "zeroc/Dialect/Graph/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

namespace zeroc {
#define GEN_PASS_DEF_AUTODIFF
#include "zeroc/Passes/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::graph;

namespace {

/// Name of the result attribute naming the parameter a gradient belongs to.
constexpr llvm::StringLiteral kGradOfAttr = "graph.grad_of";
/// Marks the constant 1 that seeds the reverse sweep (d loss / d loss).
constexpr llvm::StringLiteral kLossSeedAttr = "graph.loss_seed";

struct AutodiffPass : zeroc::impl::AutodiffBase<AutodiffPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto forward = module.lookupSymbol<func::FuncOp>("forward");
    if (!forward) {
      module.emitError("zero-autodiff needs a func.func @forward");
      return signalPassFailure();
    }
    if (module.lookupSymbol("forward_backward")) {
      module.emitError("module already has a @forward_backward");
      return signalPassFailure();
    }
    assignDropoutSeeds(forward);
    auto fb = llvm::cast<func::FuncOp>(forward->clone());
    fb.setSymName("forward_backward");
    module.push_back(fb);
    if (failed(differentiate(module, fb)))
      return signalPassFailure();
  }

  static void assignDropoutSeeds(func::FuncOp fn) {
    int64_t seed = 0;
    OpBuilder b(fn.getContext());
    fn.walk([&](DropoutOp op) { op.setSeedAttr(b.getI64IntegerAttr(++seed)); });
  }

  LogicalResult differentiate(ModuleOp module, func::FuncOp fn) {
    Block &body = fn.getBody().front();
    auto ret = llvm::cast<func::ReturnOp>(body.getTerminator());
    int lossIndex = -1;
    for (unsigned i = 0; i < fn.getNumResults(); ++i)
      if (fn.getResultAttr(i, kLossAttrName))
        lossIndex = i;
    if (lossIndex < 0)
      return fn.emitOpError("has no result marked graph.loss");
    Value loss = ret.getOperand(lossIndex);

    // Forward activity: values that depend on a trainable parameter.
    llvm::DenseSet<Value> active;
    llvm::StringMap<ParamOp> trainable;
    for (ParamOp p : module.getOps<ParamOp>())
      if (p.getTrainable())
        trainable[p.getSymName()] = p;
    for (Operation &op : body.without_terminator()) {
      bool dependent = false;
      if (auto load = llvm::dyn_cast<LoadParamOp>(op))
        dependent = trainable.count(load.getParam());
      for (Value v : op.getOperands())
        dependent |= active.contains(v);
      if (dependent)
        for (Value r : op.getResults())
          if (llvm::isa<FloatType>(
                  llvm::cast<ShapedType>(r.getType()).getElementType()))
            active.insert(r);
    }

    OpBuilder b(ret);
    llvm::DenseMap<Value, Value> adjoint;
    auto accumulate = [&](Value v, Value g, Location loc) {
      auto [it, inserted] = adjoint.try_emplace(v, g);
      if (!inserted)
        it->second = b.create<AddOp>(loc, it->second, g);
    };
    auto lossType = llvm::cast<RankedTensorType>(loss.getType());
    auto seed = b.create<ConstantOp>(
        loss.getLoc(), DenseElementsAttr::get(
                           lossType, b.getFloatAttr(lossType.getElementType(), 1.0)));
    // zero-scale-loss replaces the seed by the loss scale under fp16.
    seed->setAttr(kLossSeedAttr, b.getUnitAttr());
    accumulate(loss, seed, loss.getLoc());

    // Reverse sweep over the forward ops (collected first: the sweep appends
    // gradient ops to the same block).
    SmallVector<Operation *> forwardOps;
    for (Operation &op : body.without_terminator())
      forwardOps.push_back(&op);
    for (Operation *op : llvm::reverse(forwardOps)) {
      if (llvm::isa<LoadParamOp, LoadBufferOp, ConstantOp>(op))
        continue;
      SmallVector<Value> resultGrads;
      bool any = false;
      for (Value r : op->getResults()) {
        Value g = active.contains(r) ? adjoint.lookup(r) : Value();
        resultGrads.push_back(g);
        any |= static_cast<bool>(g);
      }
      if (!any)
        continue;
      auto diff = llvm::dyn_cast<DifferentiableOpInterface>(op);
      if (!diff)
        return op->emitOpError("is not differentiable");
      SmallVector<bool> needed;
      for (auto [i, v] : llvm::enumerate(op->getOperands()))
        needed.push_back(active.contains(v) && diff.isOperandDifferentiable(i));
      SmallVector<Value> operandGrads;
      if (failed(diff.buildGradients(b, resultGrads, needed, operandGrads)))
        return failure();
      if (operandGrads.size() != op->getNumOperands())
        return op->emitOpError("gradient rule returned ")
               << operandGrads.size() << " gradients for "
               << op->getNumOperands() << " operands";
      for (auto [v, g] : llvm::zip(op->getOperands(), operandGrads))
        if (g && active.contains(v))
          accumulate(v, g, op->getLoc());
    }

    // Results: the loss, then one gradient per trainable parameter, then
    // the buffer updates.
    llvm::StringMap<Value> loaded;
    for (Operation &op : body.without_terminator())
      if (auto load = llvm::dyn_cast<LoadParamOp>(op))
        if (Value g = adjoint.lookup(load.getResult())) {
          Value &slot = loaded[load.getParam()];
          slot = slot ? b.create<AddOp>(load.getLoc(), slot, g).getResult() : g;
        }
    SmallVector<Value> results{loss};
    SmallVector<Attribute> paramRefs;
    for (ParamOp p : module.getOps<ParamOp>()) {
      if (!p.getTrainable())
        continue;
      Value g = loaded.lookup(p.getSymName());
      if (!g)
        g = b.create<ConstantOp>(
            p.getLoc(), DenseElementsAttr::get(
                            p.getType(), b.getFloatAttr(p.getType().getElementType(), 0.0)));
      results.push_back(g);
      paramRefs.push_back(FlatSymbolRefAttr::get(p.getSymNameAttr()));
    }
    // Then the buffers' new values (BatchNormalization's running
    // statistics), still tagged with the buffer they update.
    SmallVector<Attribute> bufferRefs;
    for (unsigned i = 0; i < fn.getNumResults(); ++i)
      if (Attribute ref = fn.getResultAttr(i, kBufferUpdateAttrName)) {
        results.push_back(ret.getOperand(i));
        bufferRefs.push_back(ref);
      }
    b.create<func::ReturnOp>(ret.getLoc(), results);
    ret.erase();
    fn.setFunctionType(b.getFunctionType(fn.getArgumentTypes(),
                                         ValueRange(results).getTypes()));
    SmallVector<DictionaryAttr> resultAttrs;
    resultAttrs.push_back(b.getDictionaryAttr(
        {b.getNamedAttr(kLossAttrName, b.getUnitAttr())}));
    for (Attribute ref : paramRefs)
      resultAttrs.push_back(b.getDictionaryAttr({b.getNamedAttr(kGradOfAttr, ref)}));
    for (Attribute ref : bufferRefs)
      resultAttrs.push_back(
          b.getDictionaryAttr({b.getNamedAttr(kBufferUpdateAttrName, ref)}));
    fn.setAllResultAttrs(resultAttrs);
    return success();
  }
};

} // namespace
