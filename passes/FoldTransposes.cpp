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

/// Whether every dim of `t` but the last two is 1: a matrix with unit
/// batch dims, whose rank-2 reshape is a view.
bool isUnitBatch(RankedTensorType t) {
  return t.getRank() >= 2 &&
         llvm::all_of(t.getShape().drop_back(2), [](int64_t d) { return d == 1; });
}

/// The transpose defining `v` when it swaps the last two dims of a
/// unit-batch tensor (a matrix transpose), or null.
TransposeOp matrixTranspose(Value v) {
  auto t = v.getDefiningOp<TransposeOp>();
  if (!t || !isUnitBatch(t.getType()) || !isUnitBatch(t.getInput().getType()))
    return {};
  auto perm = t.getPerm().getValue();
  const int64_t r = t.getType().getRank();
  auto at = [&](int64_t i) { return llvm::cast<IntegerAttr>(perm[i]).getInt(); };
  if (at(r - 2) != r - 1 || at(r - 1) != r - 2)
    return {};
  return t;
}

/// The transpose defining `v` when it swaps the last two dims and keeps
/// the batch dims in place (any batch dims), or null.
TransposeOp lastTwoSwapped(Value v) {
  auto t = v.getDefiningOp<TransposeOp>();
  if (!t || t.getType().getRank() < 2)
    return {};
  auto perm = t.getPerm().getValue();
  const int64_t r = t.getType().getRank();
  for (int64_t i = 0; i < r; ++i) {
    const int64_t want = i < r - 2 ? i : (i == r - 2 ? r - 1 : r - 2);
    if (llvm::cast<IntegerAttr>(perm[i]).getInt() != want)
      return {};
  }
  return t;
}

/// The input of a rank-2 matrix transpose, or null.
Value transposedMatrix(Value v) {
  TransposeOp t = matrixTranspose(v);
  return t && t.getType().getRank() == 2 ? t.getInput() : Value();
}

RankedTensorType typeOf(Value v) { return llvm::cast<RankedTensorType>(v.getType()); }

/// `v` as a [rows, last dim] matrix: itself when rank 2, else a reshape.
Value asMatrix(PatternRewriter &rw, Location loc, Value v) {
  RankedTensorType t = typeOf(v);
  if (t.getRank() == 2)
    return v;
  const int64_t cols = t.getShape().back();
  const int64_t rows = t.getNumElements() / std::max<int64_t>(cols, 1);
  return rw.create<ReshapeOp>(loc, RankedTensorType::get({rows, cols}, t.getElementType()), v);
}

Value gemm(PatternRewriter &rw, Location loc, RankedTensorType type, Value a,
           Value b, bool transA, bool transB) {
  return rw.create<GemmOp>(loc, type, a, b, /*c=*/Value(),
                           rw.getF64FloatAttr(1.0), rw.getF64FloatAttr(1.0),
                           rw.getBoolAttr(transA), rw.getBoolAttr(transB));
}

/// matmul(x, transpose(w)) and matmul(transpose(x), w) into gemm: w a
/// matrix, or both operands matrices with unit batch dims (x's other
/// leading dims fold into the rows when it is not transposed).
struct MatMulOfTranspose : OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatMulOp op, PatternRewriter &rw) const override {
    if (op.getTransA() || op.getTransB())
      return failure();
    RankedTensorType lhs = typeOf(op.getLhs()), rhs = typeOf(op.getRhs());
    RankedTensorType out = op.getType();
    const bool unitBatch = isUnitBatch(lhs) && isUnitBatch(rhs);
    if (lhs.getRank() < 2 || !(rhs.getRank() == 2 || unitBatch))
      return failure();
    TransposeOp w = matrixTranspose(op.getRhs());
    TransposeOp x = unitBatch ? matrixTranspose(op.getLhs()) : TransposeOp();
    if (!w && !x)
      return failure();
    Location loc = op.getLoc();
    int64_t k = lhs.getDimSize(lhs.getRank() - 1), n = rhs.getDimSize(rhs.getRank() - 1);
    int64_t m = lhs.getNumElements() / std::max<int64_t>(k, 1);
    Value a = asMatrix(rw, loc, x ? x.getInput() : op.getLhs());
    Value b = asMatrix(rw, loc, w ? w.getInput() : op.getRhs());
    auto flat = RankedTensorType::get({m, n}, out.getElementType());
    Value product = gemm(rw, loc, flat, a, b, static_cast<bool>(x), static_cast<bool>(w));
    if (flat != out)
      product = rw.create<ReshapeOp>(loc, out, product);
    rw.replaceOp(op, product);
    return success();
  }
};

/// matmul of an operand whose last two dims a transpose swapped (batch dims
/// in place): the GEMM reads the transpose's input transposed instead (the
/// operand's flag flips). Batched attention's q k^T and its gradients; the
/// cases that become one rank-2 gemm go to MatMulOfTranspose first.
struct BatchedMatMulOfTranspose : OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatMulOp op, PatternRewriter &rw) const override {
    TransposeOp x = lastTwoSwapped(op.getLhs()), y = lastTwoSwapped(op.getRhs());
    if (!x && !y)
      return failure();
    rw.replaceOpWithNewOp<MatMulOp>(op, op.getType(), x ? x.getInput() : op.getLhs(),
                                    y ? y.getInput() : op.getRhs(),
                                    op.getTransA() != static_cast<bool>(x),
                                    op.getTransB() != static_cast<bool>(y));
    return success();
  }
};

/// sum_to that only drops or adds unit dims sums nothing: a reshape.
struct SumToOfUnitDims : OpRewritePattern<SumToOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SumToOp op, PatternRewriter &rw) const override {
    if (op.getInput().getType().getNumElements() != op.getType().getNumElements())
      return failure();
    rw.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), op.getInput());
    return success();
  }
};

/// The batch-summed weight gradient of a linear layer applied to a batch,
/// sum_to(matmul(transpose(x), g)) with x [b..., T, K] and g [b..., T, N]
/// of the same batch dims, summed down to [K, N]: the sum over the batch of
/// x_b^T g_b is X^T G with the batch folded into the rows, one GEMM that
/// never materializes the [b..., K, N] products.
struct SumToOfBatchedProduct : OpRewritePattern<SumToOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SumToOp op, PatternRewriter &rw) const override {
    auto mm = op.getInput().getDefiningOp<MatMulOp>();
    if (!mm || !mm->hasOneUse() || mm.getTransB())
      return failure();
    // x^T as a transpose, or as the flag BatchedMatMulOfTranspose left.
    Value xv = mm.getLhs();
    if (!mm.getTransA()) {
      TransposeOp xt = lastTwoSwapped(mm.getLhs());
      if (!xt)
        return failure();
      xv = xt.getInput();
    }
    RankedTensorType x = typeOf(xv), g = typeOf(mm.getRhs());
    RankedTensorType sum = op.getType();
    const int64_t r = x.getRank();
    if (g.getRank() != r || x.getShape().drop_back(2) != g.getShape().drop_back(2) ||
        x.getDimSize(r - 2) != g.getDimSize(r - 2) || sum.getRank() < 2 ||
        !llvm::all_of(sum.getShape().drop_back(2), [](int64_t d) { return d == 1; }))
      return failure();
    const int64_t k = x.getDimSize(r - 1), n = g.getDimSize(r - 1);
    if (sum.getDimSize(sum.getRank() - 2) != k || sum.getDimSize(sum.getRank() - 1) != n)
      return failure();
    Location loc = op.getLoc();
    auto product = RankedTensorType::get({k, n}, sum.getElementType());
    Value w = gemm(rw, loc, product, asMatrix(rw, loc, xv),
                   asMatrix(rw, loc, mm.getRhs()), /*transA=*/true, /*transB=*/false);
    if (product != sum)
      w = rw.create<ReshapeOp>(loc, sum, w);
    rw.replaceOp(op, w);
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
    // MatMulOfTranspose before BatchedMatMulOfTranspose on the same matmul:
    // a rank-2 gemm (the batch folded into M) beats a batched one.
    patterns.add<MatMulOfTranspose>(&getContext(), /*benefit=*/2);
    patterns.add<BatchedMatMulOfTranspose, GemmOfTranspose, TransposeOfGemm, SumToOfUnitDims,
                 SumToOfBatchedProduct>(&getContext());
    GreedyRewriteConfig config;
    config.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
  }
};

} // namespace
