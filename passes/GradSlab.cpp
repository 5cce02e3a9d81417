//===- GradSlab.cpp - where zero-plan-buffers puts the accumulators -------===//
#include "GradSlab.h"

#include "zeroc/Dialect/Graph/GraphOps.h"
#include "zeroc/Dialect/Zero/BufferPlanning.h"
#include "zeroc/Dialect/Zero/ZeroOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"

using namespace mlir;
using namespace zeroc::zero;

namespace zeroc {
namespace {

/// Whether every input of `pack` is a whole accumulator (the parameter's
/// elements), the only one of its parameter, read by the pack alone, and
/// one of them starts the pack.
bool inSlab(ModuleOp module, PackOp pack, const llvm::StringMap<int> &accumulatorsOf) {
  bool atZero = false;
  for (auto [input, offset] : llvm::zip(pack.getInputs(), pack.getOffsets())) {
    auto acc = input.getDefiningOp<GradAccumulatorOp>();
    auto type = llvm::dyn_cast<RankedTensorType>(input.getType());
    auto param = acc ? module.lookupSymbol<graph::ParamOp>(acc.getParam()) : graph::ParamOp();
    if (!acc || !input.hasOneUse() || !type || !param ||
        accumulatorsOf.lookup(acc.getParam()) != 1 ||
        type.getNumElements() != param.getType().getNumElements())
      return false;
    atZero |= llvm::cast<IntegerAttr>(offset).getInt() == 0;
  }
  return atZero;
}

} // namespace

void markPacksInGradSlab(ModuleOp module) {
  auto stage = module->getAttrOfType<IntegerAttr>("zero.stage");
  auto step = module.lookupSymbol<func::FuncOp>("train_step");
  if (!stage || stage.getInt() != 0 || !step || step.isExternal())
    return;
  llvm::StringMap<int> accumulatorsOf;
  module.walk([&](GradAccumulatorOp acc) { ++accumulatorsOf[acc.getParam()]; });
  step.walk([&](PackOp pack) {
    if (inSlab(module, pack, accumulatorsOf))
      pack->setAttr(kInGradSlabAttr, UnitAttr::get(module.getContext()));
  });
}

GradSlab layOutGradSlab(ModuleOp module,
                        llvm::function_ref<int64_t(llvm::StringRef)> gradElements) {
  GradSlab slab;
  // The accumulators' element types as @train_step reads them, which the
  // emitter writes into the descriptors (grad_dtype).
  llvm::StringMap<Type> gradTypes;
  if (auto step = module.lookupSymbol<func::FuncOp>("train_step")) {
    gradTypes = accumulatorElementTypes(step);
    step.walk([&](PackOp pack) {
      if (!pack->hasAttr(kInGradSlabAttr))
        return;
      const int64_t base = alignToArena(slab.bytes);
      const int64_t elem = elementBytes(pack.getType().getElementType());
      for (auto [input, offset] : llvm::zip(pack.getInputs(), pack.getOffsets()))
        slab.offsets[input.getDefiningOp<GradAccumulatorOp>().getParam()] =
            base + llvm::cast<IntegerAttr>(offset).getInt() * elem;
      slab.bytes = base + pack.getType().getSize() * elem;
    });
  }
  SmallVector<std::pair<graph::ParamOp, Type>> rest;
  for (auto p : module.getOps<graph::ParamOp>()) {
    Type type = gradTypes.lookup(p.getSymName());
    if (gradElements(p.getSymName()) > 0 && !slab.offsets.count(p.getSymName()))
      rest.push_back({p, type ? type : p.getType().getElementType()});
  }
  Builder b(module.getContext());
  for (Type dtype :
       {Type(b.getF32Type()), Type(b.getF64Type()), Type(b.getF16Type()), Type(b.getBF16Type())})
    for (auto [p, type] : rest) {
      if (type != dtype)
        continue;
      const int64_t base = alignToArena(slab.bytes);
      slab.offsets[p.getSymName()] = base;
      slab.bytes = base + gradElements(p.getSymName()) * elementBytes(type);
    }
  return slab;
}

} // namespace zeroc
