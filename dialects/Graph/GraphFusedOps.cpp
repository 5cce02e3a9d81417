//===- GraphFusedOps.cpp - graph.fused_elementwise --------------------------===//
//
// Which ops a fused elementwise kernel computes, and the verifier of the op
// that holds them (GraphFusedOps.td).
//
//===----------------------------------------------------------------------===//

#include "zeroc/Dialect/Graph/GraphOps.h"

using namespace mlir;
using namespace zeroc::graph;

namespace zeroc::graph {

bool isFusableElementwise(Operation *op) {
  // A select: an i1 condition, its values of the result's float type.
  if (auto where = llvm::dyn_cast<WhereOp>(op)) {
    Type element = where.getType().getElementType();
    return llvm::isa<FloatType>(element) &&
           where.getOnTrue().getType().getElementType() == element &&
           where.getOnFalse().getType().getElementType() == element;
  }
  if (!llvm::isa<NegOp, SqrtOp, ReciprocalOp, ReluOp, TanhOp, SigmoidOp, ErfOp,
                 ExpOp, LogOp, CosOp, SinOp, AbsOp, SignOp, FloorOp, CeilOp,
                 RoundOp, AddOp, SubOp, MulOp, DivOp, MaxOp, MinOp, GeluOp,
                 UnaryGradOp, DropoutOp>(op) ||
      op->getNumResults() != 1)
    return false;
  if (auto dropout = llvm::dyn_cast<DropoutOp>(op); dropout && !dropout.getTraining())
    return false;
  Type element = llvm::cast<ShapedType>(op->getResult(0).getType()).getElementType();
  if (!llvm::isa<FloatType>(element))
    return false;
  return llvm::all_of(op->getOperandTypes(), [&](Type t) {
    return llvm::cast<ShapedType>(t).getElementType() == element;
  });
}

} // namespace zeroc::graph

bool zeroc::graph::isAttentionHead(int64_t d) {
  return d == 16 || d == 32 || d == 64 || d == 128;
}

bool zeroc::graph::isAttentionElement(Type type) { return type.isF16() || type.isBF16(); }

OperandRange FusedElementwiseOp::getYielded() {
  return llvm::cast<YieldOp>(getBody().front().getTerminator()).getValues();
}

namespace {

/// Verifies a fused op's body, which computes values of `type` one element
/// at a time: its arguments are `leading` values of `type` and then one per
/// input (of the input's type, which broadcasts to `type`, of its element
/// type or i1 for a where's condition), it holds only fusable elementwise
/// ops of `type`, and it yields `numYields` values of `type`.
LogicalResult verifyElementwiseBody(Operation *op, Block &body, unsigned leading,
                                    ValueRange inputs, RankedTensorType type,
                                    unsigned numYields) {
  if (body.getNumArguments() != leading + inputs.size()) {
    if (leading)
      return op->emitOpError("body has ")
             << body.getNumArguments() << " arguments; expected "
             << leading + inputs.size() << " (the gradient, then one per input)";
    return op->emitOpError("has ") << inputs.size() << " inputs but its body "
                                   << body.getNumArguments() << " arguments";
  }
  for (BlockArgument arg : body.getArguments().take_front(leading))
    if (arg.getType() != type)
      return op->emitOpError("body argument ")
             << arg.getArgNumber() << " has type " << arg.getType()
             << ", not the result type " << type;
  for (auto [i, input, arg] :
       llvm::enumerate(inputs, body.getArguments().drop_front(leading))) {
    if (input.getType() != arg.getType())
      return op->emitOpError("body argument ")
             << arg.getArgNumber() << " has type " << arg.getType() << ", its input "
             << input.getType();
    auto t = llvm::cast<RankedTensorType>(arg.getType());
    FailureOr<SmallVector<int64_t>> shape = broadcastShapes(t.getShape(), type.getShape());
    const bool elementOk = t.getElementType() == type.getElementType() ||
                           t.getElementType().isInteger(1);
    if (!elementOk || failed(shape) || ArrayRef<int64_t>(*shape) != type.getShape())
      return op->emitOpError("input ") << i << " of type " << t
                                       << " does not broadcast to the result type "
                                       << type;
  }
  auto yield = llvm::dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return op->emitOpError("body must end in graph.yield");
  if (yield.getValues().size() != numYields)
    return op->emitOpError("yields ")
           << yield.getValues().size() << " values but has " << numYields
           << (numYields == 1 ? " result" : " results");
  for (auto [i, v] : llvm::enumerate(yield.getValues()))
    if (v.getType() != type)
      return op->emitOpError("yields value ")
             << i << " of type " << v.getType() << ", not the result type " << type;
  for (Operation &inner : body.without_terminator()) {
    if (!isFusableElementwise(&inner))
      return op->emitOpError("body holds '")
                 .append(inner.getName().getStringRef(),
                         "', which is no fusable elementwise op")
                 .attachNote(inner.getLoc())
             << "here";
    if (inner.getResult(0).getType() != type)
      return op->emitOpError("body op '")
                 .append(inner.getName().getStringRef(), "' has type ")
             << inner.getResult(0).getType() << ", not the result type " << type;
  }
  return success();
}

/// `logical` stored transposed by `perm` (graph.matmul's result_perm:
/// stored dim j is logical dim perm[j]); failure when perm is no
/// permutation of its dims.
FailureOr<RankedTensorType> permuted(RankedTensorType logical,
                                     std::optional<ArrayRef<int64_t>> perm) {
  if (!perm)
    return logical;
  if (static_cast<int64_t>(perm->size()) != logical.getRank())
    return failure();
  SmallVector<int64_t> dims;
  SmallVector<bool> seen(perm->size(), false);
  for (int64_t p : *perm) {
    if (p < 0 || p >= logical.getRank() || seen[p])
      return failure();
    seen[p] = true;
    dims.push_back(logical.getDimSize(p));
  }
  return RankedTensorType::get(dims, logical.getElementType());
}

/// Checks that `value` (named `what`) has type `logical` stored by `perm`.
LogicalResult verifyStored(Operation *op, StringRef what, Value value, RankedTensorType logical,
                           std::optional<ArrayRef<int64_t>> perm) {
  FailureOr<RankedTensorType> want = permuted(logical, perm);
  if (failed(want))
    return op->emitOpError("the perm of ") << what << " is no permutation of its 4 dims";
  if (value.getType() != *want)
    return op->emitOpError() << what << " has type " << value.getType() << "; expected "
                             << *want;
  return success();
}

/// The scores' type, [B, H, Tq, Tk], of an attention of q [B, H, Tq, D]
/// and kt [B, H, D, Tk].
RankedTensorType scoresTypeOf(Value q, Value kt) {
  auto qt = llvm::cast<RankedTensorType>(q.getType());
  auto ktt = llvm::cast<RankedTensorType>(kt.getType());
  return RankedTensorType::get({qt.getDimSize(0), qt.getDimSize(1), qt.getDimSize(2),
                                ktt.getDimSize(3)},
                               qt.getElementType());
}

/// The shapes of an attention's q [B, H, Tq, D], kt [B, H, D, Tk] and
/// v [B, H, Tk, D]: checks them and returns the scores' type [B, H, Tq, Tk].
FailureOr<RankedTensorType> verifyAttentionOperands(Operation *op, Value q, Value kt,
                                                    Value v) {
  auto qt = llvm::cast<RankedTensorType>(q.getType());
  auto ktt = llvm::cast<RankedTensorType>(kt.getType());
  auto vt = llvm::cast<RankedTensorType>(v.getType());
  Type element = qt.getElementType();
  if (!isAttentionElement(element))
    return op->emitOpError("needs f16 or bf16 operands (tensor cores), not ") << element;
  if (ktt.getElementType() != element || vt.getElementType() != element)
    return op->emitOpError("q, kt and v must have one element type");
  if (qt.getRank() != 4 || ktt.getRank() != 4 || vt.getRank() != 4)
    return op->emitOpError("q, kt and v must be rank 4: [B, H, Tq, D], [B, H, D, Tk], "
                           "[B, H, Tk, D]");
  ArrayRef<int64_t> a = qt.getShape(), b = ktt.getShape(), c = vt.getShape();
  if (b[0] != a[0] || c[0] != a[0] || b[1] != a[1] || c[1] != a[1] || b[2] != a[3] ||
      c[3] != a[3] || c[2] != b[3])
    return op->emitOpError("q ")
           << qt << ", kt " << ktt << " and v " << vt
           << " are not [B, H, Tq, D], [B, H, D, Tk] and [B, H, Tk, D]";
  const int64_t d = a[3];
  if (!isAttentionHead(d))
    return op->emitOpError("has heads of ") << d << " elements; the kernels take 16, 32, 64 "
                                                 "or 128";
  return scoresTypeOf(q, kt);
}

/// An attention's q_bias, kt_bias and v_bias: each absent or of its
/// operand's type.
LogicalResult verifyAttentionBiases(Operation *op, ValueRange operands, ArrayRef<Value> biases) {
  static constexpr const char *kNames[] = {"q_bias", "kt_bias", "v_bias"};
  for (auto [k, bias] : llvm::enumerate(biases))
    if (bias && bias.getType() != operands[k].getType())
      return op->emitOpError(kNames[k])
             << " has type " << bias.getType() << "; it must have its operand's, "
             << operands[k].getType();
  return success();
}

/// lse or delta: f32 [B, H, Tq] of an attention whose scores are `scores`.
LogicalResult verifyRowStatistic(Operation *op, StringRef what, Value value,
                                 RankedTensorType scores) {
  auto want = RankedTensorType::get(scores.getShape().take_front(3),
                                    Float32Type::get(op->getContext()));
  if (value.getType() != want)
    return op->emitOpError() << what << " has type " << value.getType() << "; expected "
                             << want;
  return success();
}

/// A fused attention's dropout: a ratio in [0, 1) and a seed, or neither.
LogicalResult verifyAttentionDropout(Operation *op, std::optional<APFloat> ratio,
                                     std::optional<uint64_t> seed) {
  if (ratio.has_value() != seed.has_value())
    return op->emitOpError("needs both dropout_ratio and dropout_seed, or neither");
  if (!ratio)
    return success();
  const double r = ratio->convertToDouble();
  if (!(r >= 0.0 && r < 1.0))
    return op->emitOpError("dropout_ratio must be in [0, 1), got ") << r;
  return success();
}

} // namespace

bool zeroc::graph::isInFusedBody(Operation *op) {
  return llvm::isa_and_nonnull<FusedElementwiseOp, FusedSoftmaxOp, FusedSoftmaxGradOp,
                               FusedAttentionOp, FusedAttentionGradOp>(op->getParentOp());
}

LogicalResult FusedElementwiseOp::verifyRegions() {
  if (getNumResults() == 0)
    return emitOpError("has no results");
  RankedTensorType type = getResultType();
  for (Type t : getResultTypes())
    if (t != type)
      return emitOpError("results have types ") << type << " and " << t
                                                << "; all must have one type";
  return verifyElementwiseBody(*this, getBody().front(), 0, getInputs(), type,
                               getNumResults());
}

LogicalResult FusedSoftmaxOp::verifyRegions() {
  auto type = llvm::cast<RankedTensorType>(getType());
  if (failed(verifyAxis(*this, getAxis(), type.getRank())))
    return failure();
  return verifyElementwiseBody(*this, getBody().front(), 0, getInputs(), type, 1);
}

LogicalResult FusedSoftmaxGradOp::verifyRegions() {
  auto type = llvm::cast<RankedTensorType>(getType());
  if (failed(verifyAxis(*this, getAxis(), type.getRank())))
    return failure();
  return verifyElementwiseBody(*this, getBody().front(), 1, getInputs(), type, 1);
}

LogicalResult FusedSoftmaxCrossEntropyOp::verify() {
  FailureOr<RankedTensorType> loss =
      crossEntropyLossType(getLoc(), getOperationName(), getScores().getType(),
                           getLabels().getType(), getReductionAttr());
  if (failed(loss))
    return failure();
  if (getLoss().getType() != *loss)
    return emitOpError("loss has type ") << getLoss().getType() << "; expected " << *loss;
  return success();
}

LogicalResult FusedGemmBiasGradOp::verify() {
  auto a = llvm::cast<RankedTensorType>(getA().getType());
  auto b = llvm::cast<RankedTensorType>(getB().getType());
  if (a.getRank() != 2 || b.getRank() != 2)
    return emitOpError("a and b must have rank 2");
  const int64_t m = a.getDimSize(getTransA() ? 1 : 0), k = a.getDimSize(getTransA() ? 0 : 1);
  const int64_t kb = b.getDimSize(getTransB() ? 1 : 0), n = b.getDimSize(getTransB() ? 0 : 1);
  if (k != kb)
    return emitOpError("inner dimensions differ: ") << k << " and " << kb;
  auto result = llvm::cast<RankedTensorType>(getResult().getType());
  if (result.getShape() != ArrayRef<int64_t>{m, n})
    return emitOpError("result has type ") << result << "; expected " << m << "x" << n;
  const int64_t summed = getSummed();
  if (summed != 0 && summed != 1)
    return emitOpError("summed must be 0 (a) or 1 (b), got ") << summed;
  if (summed == 0 && !getTransA())
    return emitOpError("sums a's columns over the inner dimension, so a must be read "
                       "transposed (transA)");
  if (summed == 1 && getTransB())
    return emitOpError("sums b's columns over the inner dimension, so b must be read as "
                       "stored (no transB)");
  const int64_t l = summed ? n : m;
  auto bias = llvm::cast<RankedTensorType>(getBiasGrad().getType());
  if (bias.getRank() < 1 || bias.getShape().back() != l || bias.getNumElements() != l)
    return emitOpError("bias_grad has type ")
           << bias << "; expected " << l << " elements, in shape [" << l << "] or [1, ..., " << l
           << "]";
  return success();
}

RankedTensorType FusedAttentionOp::getScoresType() { return scoresTypeOf(getQ(), getKt()); }

RankedTensorType FusedAttentionGradOp::getScoresType() {
  return scoresTypeOf(getQ(), getKt());
}

bool FusedAttentionGradOp::walksScoresOnce() {
  return llvm::cast<RankedTensorType>(getQ().getType()).getDimSize(3) <= 64;
}

LogicalResult FusedAttentionOp::verifyRegions() {
  FailureOr<RankedTensorType> scores = verifyAttentionOperands(*this, getQ(), getKt(), getV());
  if (failed(scores))
    return failure();
  if (failed(verifyAttentionBiases(*this, {getQ(), getKt(), getV()},
                                   {getQBias(), getKtBias(), getVBias()})) ||
      failed(verifyStored(*this, "out", getOut(), llvm::cast<RankedTensorType>(getQ().getType()),
                          getOutPerm())) ||
      failed(verifyRowStatistic(*this, "lse", getLse(), *scores)) ||
      failed(verifyAttentionDropout(*this, getDropoutRatio(), getDropoutSeed())))
    return failure();
  return verifyElementwiseBody(*this, getPrologue().front(), 1, getInputs(), *scores, 1);
}

LogicalResult FusedAttentionGradOp::verifyRegions() {
  FailureOr<RankedTensorType> scores = verifyAttentionOperands(*this, getQ(), getKt(), getV());
  if (failed(scores))
    return failure();
  auto q = llvm::cast<RankedTensorType>(getQ().getType());
  if (failed(verifyAttentionBiases(*this, {getQ(), getKt(), getV()},
                                   {getQBias(), getKtBias(), getVBias()})) ||
      failed(verifyStored(*this, "out", getOut(), q, getOutPerm())) ||
      failed(verifyStored(*this, "grad", getGrad(), q, std::nullopt)) ||
      failed(verifyRowStatistic(*this, "lse", getLse(), *scores)) ||
      failed(verifyStored(*this, "grad_q", getGradQ(), q, getGradQPerm())) ||
      failed(verifyStored(*this, "grad_kt", getGradKt(),
                          llvm::cast<RankedTensorType>(getKt().getType()), getGradKtPerm())) ||
      failed(verifyStored(*this, "grad_v", getGradV(),
                          llvm::cast<RankedTensorType>(getV().getType()), getGradVPerm())) ||
      failed(verifyRowStatistic(*this, "delta", getDelta(), *scores)) ||
      failed(verifyAttentionDropout(*this, getDropoutRatio(), getDropoutSeed())))
    return failure();
  if (failed(verifyElementwiseBody(*this, getPrologue().front(), 1, getPrologueInputs(),
                                   *scores, 1)))
    return failure();
  return verifyElementwiseBody(*this, getEpilogue().front(), 1, getEpilogueInputs(), *scores,
                               1);
}
