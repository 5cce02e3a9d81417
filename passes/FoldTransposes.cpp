//===- FoldTransposes.cpp - transposes into GEMM flags --------------------===//
#include "zeroc/Passes/Passes.h"

#include "zeroc/Dialect/Graph/GraphOps.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace zeroc {
#define GEN_PASS_DEF_FOLDTRANSPOSES
#include "zeroc/Passes/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::graph;

namespace {

/// The input of a rank-2 transpose with perm [1, 0], or null.
Value transposedMatrix(Value v) {
  auto t = v.getDefiningOp<TransposeOp>();
  if (!t || t.getType().getRank() != 2)
    return {};
  auto perm = t.getPerm().getValue();
  if (llvm::cast<IntegerAttr>(perm[0]).getInt() != 1)
    return {};
  return t.getInput();
}

RankedTensorType typeOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }

Value gemm(PatternRewriter &rw, Location loc, RankedTensorType type, Value a,
           Value b, bool transA, bool transB) {
  return rw.create<GemmOp>(loc, type, a, b, /*c=*/Value(),
                           rw.getF64FloatAttr(1.0), rw.getF64FloatAttr(1.0),
                           rw.getBoolAttr(transA), rw.getBoolAttr(transB));
}

/// matmul(x, transpose(w)) and matmul(transpose(x), w) into gemm.
struct MatMulOfTranspose : OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatMulOp op, PatternRewriter &rw) const override {
    RankedTensorType lhs = typeOf(op.getLhs()), rhs = typeOf(op.getRhs());
    RankedTensorType out = op.getType();
    if (rhs.getRank() != 2 || lhs.getRank() < 2)
      return failure();
    Value w = transposedMatrix(op.getRhs());
    Value x = lhs.getRank() == 2 ? transposedMatrix(op.getLhs()) : Value();
    if (!w && !x)
      return failure();
    Location loc = op.getLoc();
    int64_t k = lhs.getDimSize(lhs.getRank() - 1), n = rhs.getDimSize(1);
    int64_t m = lhs.getNumElements() / std::max<int64_t>(k, 1);
    Value a = x ? x : op.getLhs();
    if (!x && lhs.getRank() > 2)
      a = rw.create<ReshapeOp>(loc, RankedTensorType::get({m, k}, lhs.getElementType()), a);
    Value b = w ? w : op.getRhs();
    auto flat = RankedTensorType::get({m, n}, out.getElementType());
    Value product = gemm(rw, loc, flat, a, b, static_cast<bool>(x), static_cast<bool>(w));
    if (flat != out)
      product = rw.create<ReshapeOp>(loc, out, product);
    rw.replaceOp(op, product);
    return success();
  }
};

/// gemm of a transposed operand (no c): flip its flag.
struct GemmOfTranspose : OpRewritePattern<GemmOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GemmOp op, PatternRewriter &rw) const override {
    if (op.getC())
      return failure();
    Value a = transposedMatrix(op.getA()), b = transposedMatrix(op.getB());
    if (!a && !b)
      return failure();
    rw.replaceOpWithNewOp<GemmOp>(
        op, op.getType(), a ? a : op.getA(), b ? b : op.getB(), Value(),
        op.getAlphaAttr(), op.getBetaAttr(),
        rw.getBoolAttr(op.getTransA() != static_cast<bool>(a)),
        rw.getBoolAttr(op.getTransB() != static_cast<bool>(b)));
    return success();
  }
};

/// transpose(gemm(a, b)) = gemm(b, a) with both flags flipped (no c).
struct TransposeOfGemm : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op, PatternRewriter &rw) const override {
    auto g = op.getInput().getDefiningOp<GemmOp>();
    if (!g || g.getC() || !transposedMatrix(op.getResult()) || !g->hasOneUse())
      return failure();
    rw.replaceOpWithNewOp<GemmOp>(op, op.getType(), g.getB(), g.getA(), Value(),
                                  g.getAlphaAttr(), g.getBetaAttr(),
                                  rw.getBoolAttr(!g.getTransB()),
                                  rw.getBoolAttr(!g.getTransA()));
    return success();
  }
};

struct FoldTransposesPass : zeroc::impl::FoldTransposesBase<FoldTransposesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<MatMulOfTranspose, GemmOfTranspose, TransposeOfGemm>(&getContext());
    GreedyRewriteConfig config;
    config.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
  }
};

} // namespace
