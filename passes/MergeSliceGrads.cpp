//===- MergeSliceGrads.cpp - Sums of tiling slice gradients as a concat ---===//
//
// A split's gradient as autodiff writes it is a slice_grad per piece, each
// of the whole shape, and their sum; when the pieces tile the tensor along
// one axis that is a concat of the pieces' gradients (Passes.td,
// zero-merge-slice-grads).
//
//===----------------------------------------------------------------------===//

#include "zeroc/Passes/Passes.h"

#include "zeroc/Dialect/Graph/GraphOps.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <optional>

namespace zeroc {
#define GEN_PASS_DEF_MERGESLICEGRADS
#include "zeroc/Passes/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::graph;

namespace {

/// A slice that takes every element along all axes but `axis` (steps 1),
/// and [begin, end) along it.
struct Band {
  int64_t axis, begin, end;
};

/// The band `g` places its gradient in, when it is one: the first axis
/// whose range is not the whole dim (axis 0 when every range is), or none
/// when another axis is not whole either, a step is not 1, or a range is
/// not within its dim.
std::optional<Band> bandOf(SliceGradOp g) {
  ArrayRef<int64_t> dims = g.getType().getShape();
  auto ints = [](ArrayAttr a) {
    return llvm::to_vector(llvm::map_range(
        a, [](Attribute v) { return llvm::cast<IntegerAttr>(v).getInt(); }));
  };
  SmallVector<int64_t> starts = ints(g.getStarts()), ends = ints(g.getEnds()),
                       steps = ints(g.getSteps());
  if (starts.size() != dims.size() || ends.size() != dims.size() ||
      steps.size() != dims.size() || dims.empty())
    return std::nullopt;
  std::optional<Band> band;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (steps[d] != 1 || starts[d] < 0 || starts[d] > ends[d] || ends[d] > dims[d])
      return std::nullopt;
    if (starts[d] == 0 && ends[d] == dims[d])
      continue;
    if (band)
      return std::nullopt;
    band = Band{static_cast<int64_t>(d), starts[d], ends[d]};
  }
  return band ? band : Band{0, 0, dims[0]};
}

/// add(slice_grad(a), slice_grad(b)) of adjacent bands along one axis:
/// slice_grad(concat(a, b)) over the joint band (the concat alone when the
/// band is the whole axis).
struct AddOfAdjacentSliceGrads : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp add, PatternRewriter &rewriter) const override {
    auto lhs = add.getLhs().getDefiningOp<SliceGradOp>();
    auto rhs = add.getRhs().getDefiningOp<SliceGradOp>();
    if (!lhs || !rhs || lhs == rhs || lhs.getType() != add.getType() ||
        rhs.getType() != add.getType() || !lhs->hasOneUse() || !rhs->hasOneUse())
      return failure();
    std::optional<Band> a = bandOf(lhs), b = bandOf(rhs);
    if (!a || !b)
      return failure();
    // Bands along two axes overlap (a band of the whole tensor is along
    // axis 0).
    if (a->axis != b->axis)
      return failure();
    SliceGradOp first = lhs, second = rhs;
    Band lo = *a, hi = *b;
    if (lo.end != hi.begin) {
      std::swap(first, second);
      std::swap(lo, hi);
      if (lo.end != hi.begin)
        return failure();
    }
    Location loc = rewriter.getFusedLoc({add.getLoc(), first.getLoc(), second.getLoc()});
    // A concat along the axis that only this sum reads gives its inputs.
    SmallVector<Value> inputs;
    for (SliceGradOp g : {first, second}) {
      auto inner = g.getGrad().getDefiningOp<ConcatOp>();
      if (inner && static_cast<int64_t>(inner.getAxis()) == lo.axis && inner->hasOneUse())
        llvm::append_range(inputs, inner.getInputs());
      else
        inputs.push_back(g.getGrad());
    }
    Value merged = rewriter.create<ConcatOp>(loc, inputs, lo.axis);
    auto type = add.getType();
    if (lo.begin != 0 || hi.end != type.getDimSize(lo.axis)) {
      SmallVector<int64_t> starts(type.getRank(), 0), ends(type.getShape()),
          steps(type.getRank(), 1);
      starts[lo.axis] = lo.begin;
      ends[lo.axis] = hi.end;
      merged = rewriter.create<SliceGradOp>(loc, type, merged, rewriter.getI64ArrayAttr(starts),
                                            rewriter.getI64ArrayAttr(ends),
                                            rewriter.getI64ArrayAttr(steps));
    }
    rewriter.replaceOp(add, merged);
    return success();
  }
};

struct MergeSliceGradsPass : zeroc::impl::MergeSliceGradsBase<MergeSliceGradsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<AddOfAdjacentSliceGrads>(&getContext());
    GreedyRewriteConfig config;
    config.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
  }
};

} // namespace
