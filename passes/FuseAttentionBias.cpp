//===- FuseAttentionBias.cpp - A QKV projection's bias added as q, k, v load ===//
//
// docs/CudaTarget.md, "Attention in one kernel": a GPT-2 block adds its
// QKV projection's bias to the [B, T, 3HD] product in an add of its own,
// whose result the fused attention and its gradient read as q, k and v
// views. The kernels add the bias as they load instead (AttnIn in
// zeroc_rt_cuda/attention.h), with the add's rounding: the biased tensor is
// never stored.
//
//===----------------------------------------------------------------------===//

#include "Fusion.h"

#include "zeroc/Passes/Passes.h"

#include "zeroc/Dialect/Graph/GraphOps.h"

#include "mlir/IR/Builders.h"

namespace zeroc {
#define GEN_PASS_DEF_FUSEATTENTIONBIAS
#include "zeroc/Passes/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::graph;

namespace {

/// An attention op's read of a view as q (0), kt (1) or v (2).
struct Read {
  Operation *attention;
  unsigned slot;
};

/// Where an attention op reads q, kt and v, and their biases.
std::array<OpOperand *, 3> operandSlots(Operation *op) {
  if (auto f = llvm::dyn_cast<FusedAttentionOp>(op))
    return {&f.getQMutable(), &f.getKtMutable(), &f.getVMutable()};
  auto g = llvm::cast<FusedAttentionGradOp>(op);
  return {&g.getQMutable(), &g.getKtMutable(), &g.getVMutable()};
}
std::array<MutableOperandRange, 3> biasSlots(Operation *op) {
  if (auto f = llvm::dyn_cast<FusedAttentionOp>(op))
    return {f.getQBiasMutable(), f.getKtBiasMutable(), f.getVBiasMutable()};
  auto g = llvm::cast<FusedAttentionGradOp>(op);
  return {g.getQBiasMutable(), g.getKtBiasMutable(), g.getVBiasMutable()};
}

/// The add's operand of its own type and its bias along the last dim
/// ([N], or [1, .., 1, N]), when it has them.
std::pair<Value, Value> splitBias(AddOp add) {
  auto type = llvm::cast<RankedTensorType>(add.getType());
  if (type.getRank() < 1 || !type.hasStaticShape() || type.getShape().back() < 1)
    return {};
  const int64_t n = type.getShape().back();
  auto isBias = [&](Value v) {
    auto t = llvm::cast<RankedTensorType>(v.getType());
    if (t.getElementType() != type.getElementType() || t.getRank() < 1 ||
        t.getRank() > type.getRank() || t.getShape().back() != n)
      return false;
    return llvm::all_of(t.getShape().drop_back(), [](int64_t d) { return d == 1; });
  };
  if (add.getLhs().getType() == type && isBias(add.getRhs()))
    return {add.getLhs(), add.getRhs()};
  if (add.getRhs().getType() == type && isBias(add.getLhs()))
    return {add.getRhs(), add.getLhs()};
  return {};
}

/// The view of the [N] bias that gives each element of `view` (of the
/// add's result, whose last dim is N) its bias: offset and strides modulo
/// N, when no row of the view runs past the end of a row of the add's
/// result (so that the bias index is affine).
std::optional<std::pair<int64_t, SmallVector<int64_t>>> biasView(StridedViewOp view, int64_t n) {
  const int64_t offset = view.getOffset() % n;
  SmallVector<int64_t> strides;
  int64_t last = offset;
  for (auto [dim, stride] : llvm::zip(view.getType().getShape(), view.getStrides())) {
    strides.push_back(stride % n);
    last += (dim - 1) * strides.back();
  }
  if (last >= n)
    return std::nullopt;
  return std::pair{offset, strides};
}

struct FuseAttentionBiasPass : zeroc::impl::FuseAttentionBiasBase<FuseAttentionBiasPass> {
  void runOnOperation() override {
    SmallVector<AddOp> adds;
    getOperation().walk([&](AddOp add) { adds.push_back(add); });
    for (AddOp add : adds)
      fold(add);
  }

  /// Folds `add` into the attention ops that read its views, when every
  /// reader of its result is such a view and every reader of those an
  /// attention op's q, kt or v without a bias, and no op between the add
  /// and a reader writes or frees x's or the bias's storage.
  void fold(AddOp add) {
    auto [x, bias] = splitBias(add);
    if (!x || add.getResult().use_empty())
      return;
    const int64_t n = llvm::cast<RankedTensorType>(add.getType()).getShape().back();
    SmallVector<StridedViewOp> views;
    SmallVector<std::pair<int64_t, SmallVector<int64_t>>> biasViews;
    SmallVector<SmallVector<Read>> reads;
    for (Operation *user : add.getResult().getUsers()) {
      auto view = llvm::dyn_cast<StridedViewOp>(user);
      if (!view || view->getBlock() != add->getBlock())
        return;
      auto onBias = biasView(view, n);
      if (!onBias)
        return;
      SmallVector<Read> viewReads;
      for (OpOperand &use : view.getResult().getUses()) {
        Operation *reader = use.getOwner();
        if (!llvm::isa<FusedAttentionOp, FusedAttentionGradOp>(reader) ||
            reader->getBlock() != add->getBlock() ||
            zeroc::fusion::writesStorageBetween(add, reader, {x, bias}))
          return;
        const std::array<OpOperand *, 3> slots = operandSlots(reader);
        const auto slot = static_cast<unsigned>(llvm::find(slots, &use) - slots.begin());
        if (slot >= 3 || !biasSlots(reader)[slot].empty())
          return;
        viewReads.push_back({reader, slot});
      }
      views.push_back(view);
      biasViews.push_back(std::move(*onBias));
      reads.push_back(std::move(viewReads));
    }
    OpBuilder b(add);
    Value flat = bias;
    auto biasType = llvm::cast<RankedTensorType>(bias.getType());
    if (biasType.getRank() != 1)
      flat = b.create<ReshapeOp>(bias.getLoc(),
                                 RankedTensorType::get({n}, biasType.getElementType()), bias);
    for (auto [view, onBias, viewReads] : llvm::zip(views, biasViews, reads)) {
      b.setInsertionPoint(view);
      auto xView = b.create<StridedViewOp>(view.getLoc(), view.getType(), x, view.getOffsetAttr(),
                                           view.getStridesAttr());
      auto bView = b.create<StridedViewOp>(view.getLoc(), view.getType(), flat,
                                           b.getI64IntegerAttr(onBias.first),
                                           b.getDenseI64ArrayAttr(onBias.second));
      for (Read r : viewReads) {
        operandSlots(r.attention)[r.slot]->set(xView);
        biasSlots(r.attention)[r.slot].assign(bView);
      }
      view.erase();
    }
    add.erase();
  }
};

} // namespace
