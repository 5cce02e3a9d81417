//===- MixedPrecision.cpp - fp16/bf16 compute with fp32 master weights ----===//
#include "zeroc/Passes/Passes.h"

#include "zeroc/Dialect/Graph/ElementsData.h"
#include "zeroc/Dialect/Graph/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>
#include <cstring>

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

/// The f32 initial value rounded to `half` (nearest, ties to even), as
/// DeepSpeed's module.half() / .bfloat16() rounds the model; failure (with
/// the first offending value) when a finite value does not fit. A
/// dense_resource value (a large weight) stays one: a new blob, named after
/// the parameter.
FailureOr<ElementsAttr> roundToHalf(ParamOp p, Type half, double &offending) {
  ElementsAttr value = p.getInitialValue();
  const llvm::fltSemantics &sem = llvm::cast<FloatType>(half).getFloatSemantics();
  SmallVector<uint16_t> bits;
  bits.reserve(value.getNumElements());
  auto round = [&](float f) {
    APFloat h(f);
    bool lost = false;
    h.convert(sem, APFloat::rmNearestTiesToEven, &lost);
    if (std::isfinite(f) && !h.isFinite()) {
      offending = f;
      return false;
    }
    bits.push_back(static_cast<uint16_t>(h.bitcastToAPInt().getZExtValue()));
    return true;
  };
  ArrayRef<char> raw = rawElementBytes(value);
  if (!raw.empty()) {
    for (size_t i = 0; i + 4 <= raw.size(); i += 4) {
      float f;
      std::memcpy(&f, raw.data() + i, 4);
      if (!round(f))
        return failure();
    }
  } else if (auto dense = llvm::dyn_cast<DenseElementsAttr>(value)) {
    for (float f : dense.getValues<float>())
      if (!round(f))
        return failure();
  } else {
    return failure();
  }
  auto type = withElement(value.getType(), half);
  ArrayRef<char> bytes(reinterpret_cast<const char *>(bits.data()),
                       bits.size() * sizeof(uint16_t));
  if (llvm::isa<DenseResourceElementsAttr>(value))
    return ElementsAttr(DenseResourceElementsAttr::get(
        type, p.getSymName(),
        HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, alignof(uint64_t))));
  return ElementsAttr(DenseElementsAttr::getFromRawBuffer(type, bytes));
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
    // Trainable parameters become 16-bit with an f32 master copy; frozen
    // ones 16-bit without one (DeepSpeed's module.half() rounds every
    // parameter, and its optimizer keeps fp32 partitions only for the
    // parameters that require grad).
    llvm::StringSet<> halved;
    for (auto p : module.getOps<ParamOp>()) {
      if (!isF32Tensor(p.getType()))
        continue;
      if (!llvm::isa<DenseElementsAttr, DenseResourceElementsAttr>(
              p.getInitialValue())) {
        p.emitOpError("has a non-dense initial value that zero-mixed-precision "
                      "cannot round");
        return signalPassFailure();
      }
      double offending = 0;
      FailureOr<ElementsAttr> rounded = roundToHalf(p, half, offending);
      if (failed(rounded)) {
        p.emitOpError("initial value ")
            << offending << " does not fit in " << half
            << "; train in bf16 or fp32, or rescale the parameter";
        return signalPassFailure();
      }
      p.setInitialValueAttr(*rounded);
      if (p.getTrainable())
        p.setMasterAttr(TypeAttr::get(Float32Type::get(ctx)));
      halved.insert(p.getSymName());
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
      // Parameters are read in the compute type; constants and buffers
      // keep their f32 value and a cast makes the 16-bit compute copy (a
      // buffer's update is cast back to f32 with the other results).
      if (auto ld = llvm::dyn_cast<LoadParamOp>(op))
        if (halved.contains(ld.getParam())) {
          ld.getResult().setType(withElement(ld.getType(), half));
          continue;
        }
      if (llvm::isa<LoadParamOp, LoadBufferOp, ConstantOp>(op)) {
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
