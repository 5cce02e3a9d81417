//===- FoldGemmBiasGrad.cpp - A bias gradient summed in its weight's GEMM -===//
//
// docs/CudaTarget.md, "Bias gradients in the GEMM": a linear layer's
// backward pass sums its output gradient down the columns (the bias
// gradient) and multiplies it with the layer's input (the weight
// gradient); one graph.fused_gemm_bias_grad does both, so that the CUDA
// runtime reads the output gradient once, in cuBLASLt's epilogue.
//
//===----------------------------------------------------------------------===//

#include "Fusion.h"

#include "zeroc/Passes/Passes.h"

#include "zeroc/Dialect/Graph/GraphOps.h"

#include "mlir/IR/Builders.h"

namespace zeroc {
#define GEN_PASS_DEF_FOLDGEMMBIASGRAD
#include "zeroc/Passes/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::graph;

namespace {

/// A GEMM that reads `operand` (the sum's input as [K, L]) as the one
/// whose columns the sum gives: `summed` 0 for a (read transposed), 1 for
/// b (read as stored).
struct WeightGemm {
  GemmOp gemm;
  Value operand;
  int64_t summed = 0;
};

/// L when `sum` sums every dim of its input but the last, L long, into L
/// elements ([L] or [1, ..., 1, L]); else 0.
int64_t biasLength(SumToOp sum) {
  auto in = llvm::cast<RankedTensorType>(sum.getInput().getType());
  auto out = llvm::cast<RankedTensorType>(sum.getType());
  if (in.getRank() < 2 || out.getRank() < 1)
    return 0;
  const int64_t l = in.getShape().back();
  return l > 0 && out.getShape().back() == l && out.getNumElements() == l ? l : 0;
}

/// The GEMM in `sum`'s block that reads `operand` as its summed operand
/// (WeightGemm), if any.
std::optional<WeightGemm> gemmReading(SumToOp sum, Value operand) {
  for (Operation *user : operand.getUsers()) {
    auto gemm = llvm::dyn_cast<GemmOp>(user);
    if (!gemm || gemm->getBlock() != sum->getBlock() || gemm.getC() ||
        gemm.getAlpha().convertToDouble() != 1.0)
      continue;
    if (gemm.getA() == operand && gemm.getTransA())
      return WeightGemm{gemm, operand, 0};
    if (gemm.getB() == operand && !gemm.getTransB())
      return WeightGemm{gemm, operand, 1};
  }
  return std::nullopt;
}

/// The weight gradient's GEMM of `sum`'s input x: one reading x as [K, L]
/// (x itself, the value x is a reshape of, or a reshape of either).
std::optional<WeightGemm> weightGemmOf(SumToOp sum) {
  const int64_t l = biasLength(sum);
  if (!l)
    return std::nullopt;
  Value x = sum.getInput();
  Value root = x;
  while (auto reshape = root.getDefiningOp<ReshapeOp>())
    root = reshape.getInput();
  auto in = llvm::cast<RankedTensorType>(x.getType());
  const SmallVector<int64_t> matrix = {in.getNumElements() / l, l};
  auto isMatrix = [&](Value v) {
    return llvm::cast<RankedTensorType>(v.getType()).getShape() == ArrayRef<int64_t>(matrix);
  };
  SmallVector<Value> candidates;
  for (Value v : {x, root}) {
    if (isMatrix(v))
      candidates.push_back(v);
    for (Operation *user : v.getUsers())
      if (auto reshape = llvm::dyn_cast<ReshapeOp>(user); reshape && isMatrix(reshape))
        candidates.push_back(reshape.getResult());
  }
  for (Value operand : candidates)
    if (std::optional<WeightGemm> found = gemmReading(sum, operand))
      return found;
  return std::nullopt;
}

/// Folds `sum` and its weight GEMM into one op at the first of the two;
/// false (nothing changed) when the op cannot read there what they read.
bool fold(SumToOp sum, const WeightGemm &w) {
  GemmOp gemm = w.gemm;
  const bool sumFirst = sum->isBeforeInBlock(gemm);
  Operation *first = sumFirst ? sum.getOperation() : gemm.getOperation();
  Operation *later = sumFirst ? gemm.getOperation() : sum.getOperation();
  Value other = w.summed ? gemm.getA() : gemm.getB();
  if (other != w.operand && !zeroc::fusion::definedBefore(other, first))
    return false;
  // What the op reads where `first` stands must be what the later op read.
  SmallVector<Value> movedReads = {sum.getInput()};
  if (sumFirst)
    movedReads = {gemm.getA(), gemm.getB()};
  if (zeroc::fusion::writesStorageBetween(first, later, movedReads))
    return false;
  // An operand made after `first` is made again there, from the sum's input.
  const bool remake = !zeroc::fusion::definedBefore(w.operand, first);
  if (remake && !zeroc::fusion::definedBefore(sum.getInput(), first))
    return false;

  OpBuilder b(first);
  Value operand = w.operand;
  if (remake)
    operand = b.create<ReshapeOp>(operand.getLoc(), operand.getType(), sum.getInput());
  auto pick = [&](Value v) { return v == w.operand ? operand : v; };
  auto fused = b.create<FusedGemmBiasGradOp>(
      b.getFusedLoc({gemm.getLoc(), sum.getLoc()}), gemm.getType(), sum.getType(),
      pick(gemm.getA()), pick(gemm.getB()), b.getBoolAttr(gemm.getTransA()),
      b.getBoolAttr(gemm.getTransB()), b.getI64IntegerAttr(w.summed));
  Value x = sum.getInput();
  gemm.getResult().replaceAllUsesWith(fused.getResult());
  sum.getResult().replaceAllUsesWith(fused.getBiasGrad());
  gemm->erase();
  sum->erase();
  // Reshapes only the two read (x may be the operand itself).
  SmallVector<Value, 2> reshaped = {w.operand};
  if (x != w.operand)
    reshaped.push_back(x);
  for (Value v : reshaped)
    if (auto reshape = v.getDefiningOp<ReshapeOp>(); reshape && reshape->use_empty())
      reshape->erase();
  return true;
}

struct FoldGemmBiasGradPass : zeroc::impl::FoldGemmBiasGradBase<FoldGemmBiasGradPass> {
  void runOnOperation() override {
    SmallVector<SumToOp> sums;
    getOperation().walk([&](SumToOp s) { sums.push_back(s); });
    for (SumToOp sum : sums)
      if (std::optional<WeightGemm> w = weightGemmOf(sum))
        fold(sum, *w);
  }
};

} // namespace
