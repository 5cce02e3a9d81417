//===- MixedPrecision.cpp - fp16/bf16 compute with fp32 master weights ----===//
#include "zeroc/Passes/Passes.h"

#include "zeroc/Dialect/Graph/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace zeroc {
#define GEN_PASS_DEF_MIXEDPRECISION
#include "zeroc/Passes/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::graph;

namespace {

bool isF32Tensor(Type t) {
  auto rt = llvm::dyn_cast<RankedTensorType>(t);
  return rt && rt.getElementType().isF32();
}

RankedTensorType withElement(Type t, Type elem) {
  auto rt = llvm::cast<RankedTensorType>(t);
  return RankedTensorType::get(rt.getShape(), elem);
}

struct MixedPrecisionPass
    : zeroc::impl::MixedPrecisionBase<MixedPrecisionPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    Type half;
    if (dtype == "f16")
      half = Float16Type::get(ctx);
    else if (dtype == "bf16")
      half = BFloat16Type::get(ctx);
    else {
      module.emitError("zero-mixed-precision: dtype must be f16 or bf16, got '")
          << dtype << "'";
      return signalPassFailure();
    }
    auto fn = module.lookupSymbol<func::FuncOp>("forward");
    if (!fn) {
      module.emitError("zero-mixed-precision needs @forward");
      return signalPassFailure();
    }
    Block &body = fn.getBody().front();
    OpBuilder b(ctx);
    auto castToHalf = [&](Value v, Location loc) -> Value {
      return b.create<CastOp>(loc, withElement(v.getType(), half), v);
    };

    // Float inputs: cast once at entry.
    b.setInsertionPointToStart(&body);
    for (BlockArgument arg : body.getArguments())
      if (isF32Tensor(arg.getType())) {
        Value h = castToHalf(arg, fn.getLoc());
        arg.replaceAllUsesExcept(h, h.getDefiningOp());
      }

    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      ops.push_back(&op);
    for (Operation *op : ops) {
      // Parameters and constants keep their f32 value; a cast makes the
      // 16-bit compute copy.
      if (llvm::isa<LoadParamOp, ConstantOp>(op)) {
        Value r = op->getResult(0);
        if (!isF32Tensor(r.getType()))
          continue;
        b.setInsertionPointAfter(op);
        Value h = castToHalf(r, op->getLoc());
        r.replaceAllUsesExcept(h, h.getDefiningOp());
        continue;
      }
      if (llvm::isa<CastOp>(op)) {
        // A cast to f32 now yields the compute type; from f32 input it
        // converts from the compute type.
        Value r = op->getResult(0);
        if (isF32Tensor(r.getType()))
          r.setType(withElement(r.getType(), half));
        continue;
      }
      for (Value r : op->getResults())
        if (isF32Tensor(r.getType()))
          r.setType(withElement(r.getType(), half));
    }

    // The loss (and any other float result) goes back to f32.
    auto ret = llvm::cast<func::ReturnOp>(body.getTerminator());
    b.setInsertionPoint(ret);
    SmallVector<Type> resultTypes;
    for (OpOperand &operand : ret->getOpOperands()) {
      Value v = operand.get();
      auto rt = llvm::dyn_cast<RankedTensorType>(v.getType());
      if (rt && rt.getElementType() == half) {
        Value f = b.create<CastOp>(ret.getLoc(), withElement(rt, b.getF32Type()), v);
        operand.set(f);
      }
      resultTypes.push_back(operand.get().getType());
    }
    fn.setFunctionType(b.getFunctionType(fn.getArgumentTypes(), resultTypes));
    // Casts between equal types (f16 -> f16 after retyping) fold away.
    SmallVector<CastOp> casts;
    fn.walk([&](CastOp c) { casts.push_back(c); });
    for (CastOp c : casts)
      if (c.getInput().getType() == c.getType()) {
        c.getResult().replaceAllUsesWith(c.getInput());
        c.erase();
      }
  }
};

} // namespace
