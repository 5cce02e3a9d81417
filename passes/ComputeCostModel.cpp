//===- ComputeCostModel.cpp - the time an op of the micro-step takes -----===//
#include "zeroc/Passes/ComputeCostModel.h"

#include "zeroc/Dialect/Graph/GraphOps.h"
#include "zeroc/Dialect/Zero/BufferPlanning.h"
#include "zeroc/Dialect/Zero/ZeroOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <algorithm>

using namespace mlir;

namespace zeroc {

namespace {

double numel(Type t) {
  auto rt = llvm::dyn_cast<RankedTensorType>(t);
  return rt && rt.hasStaticShape() ? static_cast<double>(rt.getNumElements()) : 0.0;
}

int64_t dim(Value v, int64_t i) {
  auto rt = llvm::cast<RankedTensorType>(v.getType());
  return rt.getRank() > i ? rt.getDimSize(i) : 1;
}

/// A rank-2 GEMM's 2MNK: the result's elements times 2K, K being `a`'s
/// second dim, or its first when `a` is read transposed.
double gemmFlops(Value a, bool transA, Type result) {
  return 2.0 * numel(result) * static_cast<double>(dim(a, transA ? 0 : 1));
}

/// 2 * (convolution output elements) * (weight elements per output channel).
double convFlops(Value output, Value weight) {
  double perChannel = numel(weight.getType()) / std::max<int64_t>(1, dim(weight, 0));
  return 2.0 * numel(output.getType()) * perChannel;
}

/// The (query, key) pairs an attention of `tq` queries and `tk` keys
/// scores: all, or when causal each query's keys up to its own index.
double attentionPairs(int64_t tq, int64_t tk, bool causal) {
  if (!causal)
    return static_cast<double>(tq) * static_cast<double>(tk);
  // Query q scores min(q + 1, tk) keys: 1 + 2 + .. + m, then tk each.
  const int64_t m = std::min(tq, tk);
  return static_cast<double>(m) * static_cast<double>(m + 1) / 2.0 +
         static_cast<double>(tq - m) * static_cast<double>(tk);
}

/// The products of an attention on q [B, H, Tq, D] and kt [B, H, D, Tk],
/// `products` matrix products of 2 FLOPs per pair per head element: the
/// forward kernel's q kt and p v are 2; the gradient's compute q kt and
/// dout vt again, then dq, dk and dv: 5 in one walk over the scores, 7
/// when dq's kernel computes the first two apart (walksScoresOnce).
double attentionFlops(Value q, Value kt, bool causal, double products) {
  const double heads = static_cast<double>(dim(q, 0) * dim(q, 1) * dim(q, 3));
  return products * 2.0 * heads * attentionPairs(dim(q, 2), dim(kt, 3), causal);
}

/// Views and aliases, and a concat whose operands zero-plan-buffers had
/// written in its storage: they move nothing.
bool onlyNamesMemory(Operation *op) {
  return op->getNumResults() > 0 &&
         (!zero::resultsNeedArena(op) || op->hasAttr(zero::kOperandsInPlaceAttr));
}

/// A collective (an op with effects on the sequence of collectives, and
/// zero.release of what one gathered): the communication cost model's.
bool isCommunication(Operation *op) {
  if (llvm::isa<zero::ReleaseOp>(op))
    return true;
  auto effects = llvm::dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return false;
  SmallVector<MemoryEffects::EffectInstance> list;
  effects.getEffectsOnResource(zero::CommResource::get(), list);
  return !list.empty();
}

double elementsOf(Type t) {
  if (auto s = llvm::dyn_cast<zero::ShardType>(t))
    return static_cast<double>(s.getSize());
  return numel(t);
}

/// Bytes an optimizer update of `param` (its gradient `grad`) moves
/// besides reading the gradient: the master copy, `stateCopies` more of
/// its size (Adam's two moments, SGD's momentum) each read and written,
/// and the 16-bit copy written where the parameter has a master.
double updateBytes(Operation *op, Attribute param, Value grad, int stateCopies) {
  auto p = SymbolTable::lookupNearestSymbolFrom<graph::ParamOp>(
      op, llvm::cast<FlatSymbolRefAttr>(param));
  if (!p)
    return 0.0;
  const double n = elementsOf(grad.getType());
  const double master = static_cast<double>(zero::elementBytes(p.getMasterElementType()));
  const double copy =
      p.getMaster() ? static_cast<double>(zero::elementBytes(p.getType().getElementType())) : 0.0;
  return n * (2.0 * master * (1 + stateCopies) + copy);
}

} // namespace

TrainingStateCost TrainingStateCost::of(ModuleOp module) {
  TrainingStateCost cost;
  cost.accumulators = zero::accumulatorElementTypes(module);
  module.walk([&](func::FuncOp fn) {
    if (auto steps = fn->getAttrOfType<IntegerAttr>(zero::kMicroStepsAttr))
      cost.microSteps = std::max<int64_t>(1, steps.getInt());
  });
  return cost;
}

double ComputeCostModel::flops(Operation *op) {
  if (onlyNamesMemory(op))
    return 0.0;
  if (auto mm = llvm::dyn_cast<graph::MatMulOp>(op)) {
    auto lhs = llvm::cast<RankedTensorType>(mm.getLhs().getType());
    const int64_t r = lhs.getRank();
    int64_t k = r == 0 ? 1 : lhs.getDimSize(mm.getTransA() ? r - 2 : r - 1);
    return 2.0 * numel(mm.getType()) * static_cast<double>(k);
  }
  if (auto g = llvm::dyn_cast<graph::GemmOp>(op))
    return gemmFlops(g.getA(), g.getTransA(), g.getType());
  if (auto g = llvm::dyn_cast<graph::FusedGemmBiasGradOp>(op)) {
    // The product's, and an add per element of the summed operand.
    Value summed = g.getSummed() ? g.getB() : g.getA();
    return gemmFlops(g.getA(), g.getTransA(), g.getResult().getType()) + numel(summed.getType());
  }
  if (auto a = llvm::dyn_cast<graph::FusedAttentionOp>(op))
    return attentionFlops(a.getQ(), a.getKt(), a.getCausal(), 2.0);
  if (auto a = llvm::dyn_cast<graph::FusedAttentionGradOp>(op))
    return attentionFlops(a.getQ(), a.getKt(), a.getCausal(), a.walksScoresOnce() ? 5.0 : 7.0);
  if (auto c = llvm::dyn_cast<graph::ConvOp>(op))
    return convFlops(c.getResult(), c.getWeight());
  if (auto c = llvm::dyn_cast<graph::ConvGradInputOp>(op))
    return convFlops(c.getGrad(), c.getWeight());
  if (auto c = llvm::dyn_cast<graph::ConvGradWeightOp>(op))
    return convFlops(c.getGrad(), c.getResult());
  double n = 0.0;
  for (Type t : op->getResultTypes())
    n += numel(t);
  return n;
}

double ComputeCostModel::bytes(Operation *op) const {
  // A rows accumulation gathers every rank's rows (a collective) and adds
  // them into this rank's accumulator: that addition is compute.
  if (onlyNamesMemory(op) || (isCommunication(op) && !llvm::isa<zero::GradAccumulateRowsOp>(op)))
    return 0.0;
  // Written where it was produced (zero-plan-buffers): nothing moves.
  if (auto acc = llvm::dyn_cast<zero::GradAccumulateOp>(op); acc && acc.getInPlace())
    return 0.0;
  double total = 0.0;
  auto add = [&](Type t) {
    if (llvm::isa<RankedTensorType, zero::FlatType, zero::ShardType>(t))
      total += static_cast<double>(zero::storageBytes(t));
  };
  // `n` elements of a parameter's accumulator, each written once and read
  // `reads` times.
  auto accumulator = [&](llvm::StringRef param, Type grad, double n, double reads) {
    Type elem = state.accumulators.lookup(param);
    const double bytes =
        static_cast<double>(zero::elementBytes(elem ? elem : zero::bufferElementType(grad)));
    total += n * bytes * (1.0 + reads);
  };
  const double steps = static_cast<double>(state.microSteps);
  if (auto acc = llvm::dyn_cast<zero::GradAccumulateOp>(op))
    // Read after the step's first micro-step, which writes.
    accumulator(acc.getParam(), acc.getGrad().getType(), elementsOf(acc.getGrad().getType()),
                (steps - 1.0) / steps);
  else if (auto rows = llvm::dyn_cast<zero::GradAccumulateRowsOp>(op))
    // Each row's elements read and written (the accumulator was zeroed).
    accumulator(rows.getParam(), rows.getRows().getType(), numel(rows.getRows().getType()), 1.0);
  else if (auto u = llvm::dyn_cast<zero::AdamUpdateOp>(op))
    total += updateBytes(op, u.getParamAttr(), u.getGrad(), 2);
  else if (auto u = llvm::dyn_cast<zero::AdamUpdateMultiOp>(op))
    for (auto [param, grad] : llvm::zip(u.getParams(), u.getGrads()))
      total += updateBytes(op, param, grad, 2);
  else if (auto u = llvm::dyn_cast<zero::SgdUpdateOp>(op))
    total += updateBytes(op, u.getParamAttr(), u.getGrad(),
                         u.getOptimizer().getMomentum().isZero() ? 0 : 1);
  else if (auto u = llvm::dyn_cast<zero::SgdUpdateMultiOp>(op))
    for (auto [param, grad] : llvm::zip(u.getParams(), u.getGrads()))
      total += updateBytes(op, param, grad, u.getOptimizer().getMomentum().isZero() ? 0 : 1);
  for (Value v : op->getOperands()) {
    // A strided view reads each element it names once: one per index of
    // its dims of nonzero stride (a broadcast bias: its own elements).
    auto view = v.getDefiningOp<graph::StridedViewOp>();
    const double n = numel(v.getType());
    if (!view || n == 0.0) {
      add(v.getType());
      continue;
    }
    double distinct = 1.0;
    for (auto [dim, stride] : llvm::zip(view.getType().getShape(), view.getStrides()))
      distinct *= stride ? static_cast<double>(dim) : 1.0;
    total += static_cast<double>(zero::storageBytes(v.getType())) / n * distinct;
  }
  for (Type t : op->getResultTypes())
    add(t);
  return total;
}

double ComputeCostModel::opUs(Operation *op) const {
  // GFLOP/s and GB/s are thousands of FLOPs and bytes per microsecond.
  return std::max(flops(op) / (gflops * 1e3), bytes(op) / (memoryGBPerS * 1e3));
}

} // namespace zeroc
