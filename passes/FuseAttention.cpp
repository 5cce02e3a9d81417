//===- FuseAttention.cpp - Softmax attention as one kernel each way -------===//
//
// docs/CudaTarget.md, "Attention in one kernel". After zero-fuse-softmax
// and zero-fold-matmul-views an attention is, forward,
//   s = q kt; p = fused_softmax(s){scale, mask}; o = p v
// and, in the training step's backward pass,
//   dv = p^T do; dp = do v^T; ds = fused_softmax_grad(p, dp){mask, scale};
//   dq = ds kt^T; dkt = q^T ds
// or, where zero-fold-transposes read k's rows with transB (s = q k^T,
// dq = ds k), the same with kt a view of k with its last two strides
// swapped. Their scores, probabilities and the gradients of both are
// [B, H, Tq, Tk] tensors in memory. A graph.dropout in training mode may
// stand between p and the products (pd = dropout(p): o = pd v, dv = pd^T do)
// and then, with the same ratio and seed, between dp and the softmax
// gradient (its backward pass); its mask is a function of the seed, the
// micro-step and the element's index, so the kernels draw it again per
// score. The forward ops become one graph.fused_attention
// (o and each row's log-sum-exp), the backward ops one
// graph.fused_attention_grad that recomputes p from the log-sum-exp: no
// [B, H, Tq, Tk] tensor is stored. An attention whose probabilities have
// any other reader (a returned value) stays as it is, as does
// one whose ops another op that writes memory separates. When the mask is
// a constant that drops exactly the keys after each query (to -inf), and
// the gradient's epilogue keeps zero zero, the fused ops are `causal`: the
// kernels mask those keys themselves (the where that did leaves the bodies)
// and skip the tiles above the diagonal, whose scores add nothing (but
// in a row masked entirely, NaN already in the unfused program:
// docs/CudaTarget.md, "Attention in one kernel").
//
//===----------------------------------------------------------------------===//

#include "Fusion.h"

#include "zeroc/Passes/Passes.h"

#include "zeroc/Dialect/Graph/GraphOps.h"
#include "zeroc/Dialect/Zero/BufferPlanning.h"
#include "zeroc/Support/Strides.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace zeroc {
#define GEN_PASS_DEF_FUSEATTENTION
#include "zeroc/Passes/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::graph;

namespace {

/// The ops of one attention (module comment); the backward ones are null in
/// a function without its gradient (@forward).
struct Attention {
  MatMulOp scores, out;
  /// The scores read k [B, H, Tk, D] with transB (zero-fold-transposes'
  /// form: Hugging Face exports) rather than a kt [B, H, D, Tk] view.
  bool kRows = false;
  Operation *softmax = nullptr; ///< graph.softmax or graph.fused_softmax
  /// The dropout of the probabilities, or null; backward, the same dropout
  /// of their gradient.
  DropoutOp drop, gradDrop;
  MatMulOp gradV, gradP, gradQ, gradKt;
  Operation *softmaxGrad = nullptr; ///< graph.softmax_grad or fused_softmax_grad
};

bool plain(MatMulOp m, bool transA, bool transB) {
  return m.getTransA() == transA && m.getTransB() == transB;
}

/// `t` with its last two dims swapped.
RankedTensorType swapLastTwo(RankedTensorType t) {
  SmallVector<int64_t> dims(t.getShape());
  std::swap(dims[dims.size() - 1], dims[dims.size() - 2]);
  return RankedTensorType::get(dims, t.getElementType());
}

/// Whether q, kt and v are [B, H, Tq, D], [B, H, D, Tk] and [B, H, Tk, D]
/// of f16 or bf16 with a head the kernels take (`kRows`: k is [B, H, Tk, D]).
bool isAttention(Value q, Value k, bool kRows, Value v) {
  auto a = llvm::dyn_cast<RankedTensorType>(q.getType());
  auto b = llvm::dyn_cast<RankedTensorType>(k.getType());
  auto c = llvm::dyn_cast<RankedTensorType>(v.getType());
  if (!a || !b || !c || a.getRank() != 4 || b.getRank() != 4 || c.getRank() != 4)
    return false;
  if (kRows)
    b = swapLastTwo(b);
  Type e = a.getElementType();
  if (!isAttentionElement(e) || b.getElementType() != e || c.getElementType() != e)
    return false;
  ArrayRef<int64_t> x = a.getShape(), y = b.getShape(), z = c.getShape();
  const int64_t d = x[3];
  return y[0] == x[0] && z[0] == x[0] && y[1] == x[1] && z[1] == x[1] && y[2] == d &&
         z[3] == d && z[2] == y[3] && isAttentionHead(d);
}

bool isLastAxis(int64_t axis) { return axis == 3 || axis == -1; }

/// The softmax `op` of the scores `s` alone: a graph.softmax over the last
/// axis, or a graph.fused_softmax whose prologue reads s once.
bool isSoftmaxOfScores(Operation *op, Value s) {
  if (auto sm = llvm::dyn_cast<SoftmaxOp>(op))
    return isLastAxis(sm.getAxis());
  auto fused = llvm::dyn_cast<FusedSoftmaxOp>(op);
  return fused && !fused.getLog() && isLastAxis(fused.getAxis()) &&
         llvm::count(fused.getInputs(), s) == 1;
}

bool isSoftmaxGradOf(Operation *op, Value p) {
  if (auto g = llvm::dyn_cast<SoftmaxGradOp>(op))
    return g.getY() == p && g.getGrad() != p && !g.getLog() && isLastAxis(g.getAxis());
  auto g = llvm::dyn_cast<FusedSoftmaxGradOp>(op);
  return g && g.getY() == p && g.getGrad() != p && !g.getLog() && isLastAxis(g.getAxis()) &&
         !llvm::is_contained(g.getInputs(), p);
}

/// Whether a fused softmax's body holds a dropout (whose mask the
/// attention kernels cannot draw).
bool hasDropout(Operation *op) {
  bool found = false;
  op->walk([&](DropoutOp) { found = true; });
  return found;
}

/// Whether `d` draws the mask `forward` draws (the same ratio and seed, in
/// training mode): the dropout of a gradient in the same micro-step.
bool isSameDropout(DropoutOp d, DropoutOp forward) {
  return d && d.getTraining() && d.getRatio() == forward.getRatio() &&
         d.getSeed() == forward.getSeed() && d.getType() == forward.getType();
}

/// The attention whose scores `s` computes, when its ops are all there.
std::optional<Attention> match(MatMulOp s) {
  Attention a;
  a.scores = s;
  a.kRows = plain(s, false, true);
  if ((!plain(s, false, false) && !a.kRows) || s.getResultPerm() ||
      !s.getResult().hasOneUse())
    return std::nullopt;
  Value q = s.getLhs(), k = s.getRhs(); // kt, or k when kRows
  a.softmax = *s.getResult().getUsers().begin();
  // The probabilities have the scores' type: a prologue input that
  // broadcasts them to more dims (a per-example bias over a shared q) is
  // no attention the kernels compute.
  if (!isSoftmaxOfScores(a.softmax, s.getResult()) ||
      a.softmax->getResult(0).getType() != s.getType() || hasDropout(a.softmax))
    return std::nullopt;
  Value p = a.softmax->getResult(0);
  // pd: the probabilities the products read, after a dropout when there is one.
  Value pd = p;
  for (Operation *user : p.getUsers())
    if (auto d = llvm::dyn_cast<DropoutOp>(user); d && d.getTraining() && !a.drop) {
      a.drop = d;
      pd = d.getResult();
    }
  for (Operation *user : p.getUsers()) {
    if (user == a.drop.getOperation())
      continue;
    if (isSoftmaxGradOf(user, p) && !a.softmaxGrad) {
      a.softmaxGrad = user;
      continue;
    }
    if (a.drop)
      return std::nullopt;
  }
  for (Operation *user : pd.getUsers()) {
    auto m = llvm::dyn_cast<MatMulOp>(user);
    if (m && m.getLhs() == pd && m.getRhs() != pd && plain(m, false, false) && !a.out)
      a.out = m;
    else if (m && m.getLhs() == pd && m.getRhs() != pd && plain(m, true, false) && !a.gradV)
      a.gradV = m;
    else if (user != a.softmaxGrad)
      return std::nullopt;
  }
  if (!a.out || !isAttention(q, k, a.kRows, a.out.getRhs()))
    return std::nullopt;
  if (!a.gradV && !a.softmaxGrad)
    return a; // forward only
  if (!a.gradV || !a.softmaxGrad || hasDropout(a.softmaxGrad))
    return std::nullopt;
  Value v = a.out.getRhs(), dout = a.gradV.getRhs();
  Value dp = a.softmaxGrad->getOperand(1);
  if (a.drop) {
    a.gradDrop = dp.getDefiningOp<DropoutOp>();
    if (!isSameDropout(a.gradDrop, a.drop) || !dp.hasOneUse())
      return std::nullopt;
    dp = a.gradDrop.getInput();
  }
  a.gradP = dp.getDefiningOp<MatMulOp>();
  if (!a.gradP || !dp.hasOneUse() || !plain(a.gradP, false, true) ||
      a.gradP.getResultPerm() || a.gradP.getLhs() != dout || a.gradP.getRhs() != v ||
      dout.getType() != q.getType())
    return std::nullopt;
  Value ds = a.softmaxGrad->getResult(0);
  for (Operation *user : ds.getUsers()) {
    auto m = llvm::dyn_cast<MatMulOp>(user);
    if (m && m.getLhs() == ds && m.getRhs() == k && plain(m, false, !a.kRows) && !a.gradQ)
      a.gradQ = m;
    else if (m && m.getLhs() == q && m.getRhs() == ds && plain(m, true, false) && !a.gradKt)
      a.gradKt = m;
    else
      return std::nullopt;
  }
  if (!a.gradQ || !a.gradKt)
    return std::nullopt;
  return a;
}

/// The ancestor of `op` in `block`.
Operation *inBlock(Operation *op, Block *block) { return block->findAncestorOpInBlock(*op); }

/// Whether the fused ops may stand where they would: every op of `a` in one
/// block; no op that writes memory between the forward ops or between the
/// backward ops (the fused op reads all their operands at its place, the
/// last of them, which goes to `backwardLast`); the backward ops after the
/// forward ones; and no reader of a gradient before the fused gradient's
/// place.
bool canFuse(Attention a, Operation *&backwardLast) {
  Block *block = a.scores->getBlock();
  if (a.kRows && zeroc::zero::isReleased(a.scores.getRhs()))
    return false;
  if (a.softmax->getBlock() != block || a.out->getBlock() != block ||
      (a.drop && a.drop->getBlock() != block) || zeroc::fusion::writesBetween(a.scores, a.out))
    return false;
  if (!a.gradV)
    return true;
  SmallVector<Operation *> backward = {a.gradV, a.gradP, a.softmaxGrad, a.gradQ, a.gradKt};
  if (a.gradDrop)
    backward.push_back(a.gradDrop);
  Operation *backwardFirst = backward.front();
  backwardLast = backward.front();
  for (Operation *op : backward) {
    if (op->getBlock() != block)
      return false;
    if (op->isBeforeInBlock(backwardFirst))
      backwardFirst = op;
    if (backwardLast->isBeforeInBlock(op))
      backwardLast = op;
  }
  if (!a.out->isBeforeInBlock(backwardFirst) ||
      zeroc::fusion::writesBetween(backwardFirst, backwardLast))
    return false;
  for (MatMulOp grad : {a.gradV, a.gradQ, a.gradKt})
    for (Operation *user : grad.getResult().getUsers()) {
      Operation *at = inBlock(user, block);
      if (!at || !backwardLast->isBeforeInBlock(at))
        return false;
    }
  return true;
}

/// The constant `v` holds: a graph.constant's value, through casts.
DenseElementsAttr constantOf(Value v) {
  while (auto cast = v.getDefiningOp<CastOp>())
    v = cast.getInput();
  auto c = v.getDefiningOp<ConstantOp>();
  return c ? llvm::dyn_cast<DenseElementsAttr>(c.getValue()) : DenseElementsAttr();
}

/// The input of the fused op that body argument `v` stands for (the first
/// argument is the score or gradient: none).
Value inputOf(Value v, ValueRange inputs) {
  auto arg = llvm::dyn_cast<BlockArgument>(v);
  if (!arg || arg.getArgNumber() == 0)
    return {};
  return inputs[arg.getArgNumber() - 1];
}

/// Whether `v` is a constant whose every element, as `v` holds it (rounded
/// through each cast on the way: an f32 1e5 is an f16 inf), is `want(x)`.
bool isFloatConstant(Value v, llvm::function_ref<bool(const APFloat &)> want) {
  if (!v)
    return false;
  SmallVector<FloatType> casts; // from the constant's type to v's
  Value at = v;
  while (auto cast = at.getDefiningOp<CastOp>()) {
    auto to = llvm::dyn_cast<FloatType>(getElementTypeOrSelf(cast.getType()));
    if (!to)
      return false;
    casts.push_back(to);
    at = cast.getInput();
  }
  DenseElementsAttr c = constantOf(at);
  if (!c || !llvm::isa<FloatType>(c.getElementType()))
    return false;
  return llvm::all_of(c.getValues<APFloat>(), [&](APFloat x) {
    for (FloatType t : llvm::reverse(casts)) {
      bool losesInfo = false;
      x.convert(t.getFloatSemantics(), APFloat::rmNearestTiesToEven, &losesInfo);
    }
    return want(x);
  });
}

/// Whether `mask` ([..., tq, tk], its other dims 1) is true exactly where
/// a key comes after its query (or exactly where it does not: `after`
/// false).
bool isCausalMask(Value v, int64_t tq, int64_t tk, bool after) {
  DenseElementsAttr mask = v ? constantOf(v) : DenseElementsAttr();
  if (!mask || !mask.getElementType().isInteger(1))
    return false;
  auto type = llvm::cast<ShapedType>(mask.getType());
  ArrayRef<int64_t> shape = type.getShape();
  if (shape.size() < 2 || shape[shape.size() - 2] != tq || shape.back() != tk ||
      type.getNumElements() != tq * tk)
    return false;
  int64_t k = 0;
  for (bool m : mask.getValues<bool>()) {
    const int64_t i = k / tk, j = k % tk;
    ++k;
    if (m != (after ? j > i : j <= i))
      return false;
  }
  return true;
}

/// When the prologue's value is a graph.where that makes the score of
/// every key after its query -inf and keeps the others: the other branch.
Value causalWhereKept(Block &body, ValueRange inputs, RankedTensorType scores) {
  auto where = body.getTerminator()->getOperand(0).getDefiningOp<WhereOp>();
  if (!where)
    return {};
  const int64_t tq = scores.getDimSize(2), tk = scores.getDimSize(3);
  auto negInf = [](const APFloat &x) { return x.isInfinity() && x.isNegative(); };
  Value cond = inputOf(where.getCondition(), inputs);
  if (isFloatConstant(inputOf(where.getOnTrue(), inputs), negInf) &&
      isCausalMask(cond, tq, tk, /*after=*/true))
    return where.getOnFalse();
  if (isFloatConstant(inputOf(where.getOnFalse(), inputs), negInf) &&
      isCausalMask(cond, tq, tk, /*after=*/false))
    return where.getOnTrue();
  return {};
}

/// Whether the prologue's value is such a graph.where: the kernels may
/// skip those scores.
bool isCausalPrologue(Block &body, ValueRange inputs, RankedTensorType scores) {
  return static_cast<bool>(causalWhereKept(body, inputs, scores));
}

/// Erases the arguments after the leading one of `body` that nothing
/// reads, and the op's inputs they stand for.
void eraseUnreadInputs(Block &body, MutableOperandRange inputs) {
  for (unsigned k = body.getNumArguments(); k-- > 1;)
    if (body.getArgument(k).use_empty()) {
      body.eraseArgument(k);
      inputs.erase(k - 1);
    }
}

/// A causal op's kernels make the score of each key after its query -inf
/// themselves: the prologue's masking where (causalWhereKept) goes, and
/// with it the reads of the mask and of the -inf, per score.
void dropPrologueMask(Block &body, MutableOperandRange inputs, RankedTensorType scores) {
  Operation *yield = body.getTerminator();
  Value kept = causalWhereKept(body, OperandRange(inputs), scores);
  if (!kept || kept.getType() != yield->getOperand(0).getType())
    return;
  Operation *where = yield->getOperand(0).getDefiningOp();
  yield->setOperand(0, kept);
  if (where->use_empty())
    where->erase();
  eraseUnreadInputs(body, inputs);
}

/// And a causal gradient's kernels give the epilogue +0 as the gradient of
/// each such score: a where that makes exactly those gradients a +0
/// constant, the only reader of the gradient, goes too.
void dropEpilogueMask(Block &body, MutableOperandRange inputs, RankedTensorType scores) {
  BlockArgument grad = body.getArgument(0);
  if (!grad.hasOneUse())
    return;
  auto where = llvm::dyn_cast<WhereOp>(*grad.getUsers().begin());
  if (!where)
    return;
  const bool zeroAfter = where.getOnFalse() == grad;
  Value zero = zeroAfter ? where.getOnTrue() : where.getOnFalse();
  auto positiveZero = [](const APFloat &x) { return x.isPosZero(); };
  const OperandRange in = inputs;
  if (!isFloatConstant(inputOf(zero, in), positiveZero) ||
      !isCausalMask(inputOf(where.getCondition(), in), scores.getDimSize(2),
                    scores.getDimSize(3), /*after=*/zeroAfter) ||
      where.getType() != grad.getType())
    return;
  where.getResult().replaceAllUsesWith(grad);
  where->erase();
  eraseUnreadInputs(body, inputs);
}

/// Whether the epilogue maps a zero gradient to zero: it only multiplies
/// the gradient by finite constants, divides it by nonzero ones, negates it
/// and selects between it and zeros.
bool keepsZero(Block &body, ValueRange inputs) {
  llvm::DenseSet<Value> grad = {body.getArgument(0)};
  auto finite = [](const APFloat &x) { return x.isFinite(); };
  auto nonzero = [](const APFloat &x) { return x.isFinite() && !x.isZero(); };
  auto zero = [](const APFloat &x) { return x.isZero(); };
  for (Operation &op : body.without_terminator()) {
    bool ok = false;
    if (llvm::isa<MulOp>(op)) {
      Value a = op.getOperand(0), b = op.getOperand(1);
      ok = (grad.contains(a) && isFloatConstant(inputOf(b, inputs), finite)) ||
           (grad.contains(b) && isFloatConstant(inputOf(a, inputs), finite));
    } else if (llvm::isa<DivOp>(op)) {
      ok = grad.contains(op.getOperand(0)) &&
           isFloatConstant(inputOf(op.getOperand(1), inputs), nonzero);
    } else if (llvm::isa<NegOp>(op)) {
      ok = grad.contains(op.getOperand(0));
    } else if (auto where = llvm::dyn_cast<WhereOp>(op)) {
      auto branch = [&](Value v) {
        return grad.contains(v) || isFloatConstant(inputOf(v, inputs), zero);
      };
      ok = branch(where.getOnTrue()) && branch(where.getOnFalse()) &&
           (grad.contains(where.getOnTrue()) || grad.contains(where.getOnFalse()));
    }
    if (!ok)
      return false;
    grad.insert(op.getResult(0));
  }
  return grad.contains(body.getTerminator()->getOperand(0));
}

/// Fills `region` with one block: an argument of `scores` type, then one
/// per `inputs`, computing `body`'s value for it (`leading`: the body's
/// argument that takes the score; the others are the inputs in order), or
/// yielding the score when `body` is null.
void buildBody(OpBuilder &b, Region &region, RankedTensorType scores, ValueRange inputs,
               Block *body, unsigned leading, Location loc) {
  OpBuilder::InsertionGuard guard(b);
  Block *block = b.createBlock(&region);
  Value score = block->addArgument(scores, loc);
  SmallVector<Value> args;
  for (Value v : inputs)
    args.push_back(block->addArgument(v.getType(), v.getLoc()));
  if (!body) {
    b.create<YieldOp>(loc, score);
    return;
  }
  IRMapping map;
  unsigned k = 0;
  for (BlockArgument arg : body->getArguments())
    map.map(arg, arg.getArgNumber() == leading ? score : args[k++]);
  for (Operation &op : *body)
    b.clone(op, map);
}

/// k [B, H, Tk, D] read as kt [B, H, D, Tk]: a view with its last two
/// strides swapped, of k's own storage when k is a view.
Value ktView(OpBuilder &b, Value k) {
  auto type = llvm::cast<RankedTensorType>(k.getType());
  Value root = k;
  int64_t offset = 0;
  SmallVector<int64_t> strides = zeroc::rowMajorStrides(type.getShape());
  if (auto view = k.getDefiningOp<StridedViewOp>()) {
    root = view.getInput();
    offset = view.getOffset();
    strides.assign(view.getStrides().begin(), view.getStrides().end());
  }
  std::swap(strides[2], strides[3]);
  return b.create<StridedViewOp>(k.getLoc(), swapLastTwo(type), root,
                                 b.getI64IntegerAttr(offset),
                                 b.getDenseI64ArrayAttr(strides));
}

/// Replaces `a`'s ops by the fused ones, the gradient's at `backwardLast`;
/// adds the ops it erases to `erased`.
void fuse(Attention a, Operation *backwardLast, llvm::DenseSet<Operation *> &erased) {
  Value q = a.scores.getLhs(), v = a.out.getRhs(), kt = a.scores.getRhs();
  if (a.kRows) {
    OpBuilder b(a.scores);
    kt = ktView(b, kt);
  }
  auto scoresType = llvm::cast<RankedTensorType>(a.scores.getType());
  auto rowsType = RankedTensorType::get(scoresType.getShape().take_front(3),
                                        Float32Type::get(q.getContext()));
  // The prologue: a fused softmax's body, its score argument first.
  SmallVector<Value> prologueInputs;
  Block *prologue = nullptr;
  unsigned scoreArg = 0;
  if (auto fused = llvm::dyn_cast<FusedSoftmaxOp>(a.softmax)) {
    prologue = &fused.getBody().front();
    for (auto [k, in] : llvm::enumerate(fused.getInputs())) {
      if (in == a.scores.getResult())
        scoreArg = k;
      else
        prologueInputs.push_back(in);
    }
  }
  OpBuilder b(a.out);
  FloatAttr ratio;
  IntegerAttr seed;
  if (a.drop) {
    ratio = a.drop.getRatioAttr();
    seed = b.getI64IntegerAttr(a.drop.getSeed());
  }
  Location loc = b.getFusedLoc({a.scores.getLoc(), a.softmax->getLoc(), a.out.getLoc()});
  auto forward =
      b.create<FusedAttentionOp>(loc, a.out.getType(), rowsType, q, kt, v,
                                 /*q_bias=*/Value(), /*kt_bias=*/Value(),
                                 /*v_bias=*/Value(), prologueInputs, a.out.getResultPermAttr(),
                                 /*causal=*/UnitAttr(), ratio, seed);
  buildBody(b, forward.getPrologue(), scoresType, prologueInputs, prologue, scoreArg, loc);
  const bool causal =
      isCausalPrologue(forward.getPrologue().front(), prologueInputs, scoresType);
  forward.setCausal(causal);
  if (causal)
    dropPrologueMask(forward.getPrologue().front(), forward.getInputsMutable(), scoresType);
  a.out.getResult().replaceAllUsesWith(forward.getOut());
  if (a.gradV) {
    SmallVector<Value> epilogueInputs;
    Block *epilogue = nullptr;
    if (auto fused = llvm::dyn_cast<FusedSoftmaxGradOp>(a.softmaxGrad)) {
      epilogue = &fused.getBody().front();
      epilogueInputs.append(fused.getInputs().begin(), fused.getInputs().end());
    }
    b.setInsertionPoint(backwardLast);
    Location gradLoc = b.getFusedLoc({a.gradV.getLoc(), a.gradP.getLoc(),
                                      a.softmaxGrad->getLoc(), a.gradQ.getLoc(),
                                      a.gradKt.getLoc()});
    auto grad = b.create<FusedAttentionGradOp>(
        gradLoc, a.gradQ.getType(), a.gradKt.getType(), a.gradV.getType(), rowsType, q, kt, v,
        forward.getOut(), forward.getLse(), a.gradV.getRhs(), /*q_bias=*/Value(),
        /*kt_bias=*/Value(), /*v_bias=*/Value(), prologueInputs, epilogueInputs,
        a.out.getResultPermAttr(), a.gradQ.getResultPermAttr(), a.gradKt.getResultPermAttr(),
        a.gradV.getResultPermAttr(), /*causal=*/UnitAttr(), ratio, seed);
    buildBody(b, grad.getPrologue(), scoresType, prologueInputs, prologue, scoreArg, loc);
    buildBody(b, grad.getEpilogue(), scoresType, epilogueInputs, epilogue, 0, gradLoc);
    grad.setCausal(causal && keepsZero(grad.getEpilogue().front(), epilogueInputs));
    if (grad.getCausal()) {
      dropPrologueMask(grad.getPrologue().front(), grad.getPrologueInputsMutable(), scoresType);
      dropEpilogueMask(grad.getEpilogue().front(), grad.getEpilogueInputsMutable(), scoresType);
    }
    a.gradQ.getResult().replaceAllUsesWith(grad.getGradQ());
    a.gradKt.getResult().replaceAllUsesWith(grad.getGradKt());
    a.gradV.getResult().replaceAllUsesWith(grad.getGradV());
    for (Operation *op : {a.gradQ.getOperation(), a.gradKt.getOperation(), a.softmaxGrad,
                          a.gradDrop.getOperation(), a.gradP.getOperation(),
                          a.gradV.getOperation()}) {
      if (!op)
        continue;
      erased.insert(op);
      op->erase();
    }
  }
  Value k = a.scores.getRhs();
  for (Operation *op : {a.out.getOperation(), a.drop.getOperation(), a.softmax,
                        a.scores.getOperation()}) {
    if (!op)
      continue;
    erased.insert(op);
    op->erase();
  }
  // k's own view, when the scores read its rows, now has no reader.
  if (Operation *def = k.getDefiningOp(); def && a.kRows && isOpTriviallyDead(def))
    def->erase();
}

struct FuseAttentionPass : zeroc::impl::FuseAttentionBase<FuseAttentionPass> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (fn.isExternal())
        continue;
      SmallVector<MatMulOp> products;
      fn.walk([&](MatMulOp m) { products.push_back(m); });
      llvm::DenseSet<Operation *> erased;
      for (MatMulOp s : products) {
        if (erased.contains(s))
          continue;
        std::optional<Attention> a = match(s);
        Operation *last = nullptr;
        if (a && canFuse(*a, last))
          fuse(*a, last, erased);
      }
    }
  }
};

} // namespace
