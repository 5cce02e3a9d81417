//===- FoldMatmulViews.cpp - movement chains into strided GEMM operands ---===//
//
// A matmul operand made by slices, reshapes and transposes of one stored
// tensor is, as often as not, that tensor read at strides: attention's head
// split slices q, k and v out of the QKV projection, reshapes them to
// [B, T, H, D] and transposes them to [B, H, T, D], three copies a GEMM
// with a leading dimension and a batch stride never needed. The chain
// becomes one graph.strided_view of the stored tensor; the copies left
// without users are erased. Likewise a product that only a transpose
// reads (attention's output back to [B, T, H, D], the gradients of q, k
// and v) is written transposed by its GEMM: the matmul's result_perm.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Passes/Passes.h"

#include "zeroc/Dialect/Graph/GraphOps.h"
#include "zeroc/Dialect/Zero/BufferPlanning.h"
#include "zeroc/Dialect/Zero/ZeroOps.h"
#include "zeroc/Support/Strides.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"

namespace zeroc {
#define GEN_PASS_DEF_FOLDMATMULVIEWS
#include "zeroc/Passes/Passes.h.inc"
} // namespace zeroc

using namespace mlir;
using namespace zeroc::graph;

namespace {

/// Elements of a row-major tensor at strides: element (i0, ..., in) is
/// number offset + sum(ik * strides[k]).
struct Strided {
  int64_t offset = 0;
  SmallVector<int64_t> sizes, strides;
};

Strided rowMajor(RankedTensorType t) {
  Strided s;
  s.sizes.assign(t.getShape().begin(), t.getShape().end());
  s.strides = zeroc::rowMajorStrides(s.sizes);
  return s;
}

int64_t intAt(ArrayAttr a, size_t i) {
  return llvm::cast<IntegerAttr>(a[i]).getInt();
}

/// A slice of `s` with positive steps.
LogicalResult applySlice(SliceOp op, Strided &s) {
  for (size_t i = 0; i < s.sizes.size(); ++i) {
    const int64_t start = intAt(op.getStarts(), i), step = intAt(op.getSteps(), i);
    if (step < 1 || start < 0)
      return failure();
    s.offset += start * s.strides[i];
    s.strides[i] *= step;
    s.sizes[i] = op.getType().getDimSize(i);
  }
  return success();
}

void applyTranspose(TransposeOp op, Strided &s) {
  Strided t = s;
  for (size_t i = 0; i < s.sizes.size(); ++i) {
    const int64_t from = intAt(op.getPerm(), i);
    t.sizes[i] = s.sizes[from];
    t.strides[i] = s.strides[from];
  }
  s = std::move(t);
}

/// A reshape of `s` to `shape`: dims of size 1 take any stride; the other
/// dims form groups of equal element counts, and a group of several input
/// dims must be one run of memory (each dim's stride the next one's stride
/// times its size) to split into other dims.
LogicalResult applyReshape(ArrayRef<int64_t> shape, Strided &s) {
  SmallVector<int64_t> inSizes, inStrides;
  for (auto [size, stride] : llvm::zip(s.sizes, s.strides))
    if (size != 1) {
      inSizes.push_back(size);
      inStrides.push_back(stride);
    }
  Strided out;
  out.offset = s.offset;
  out.sizes.assign(shape.begin(), shape.end());
  out.strides.assign(shape.size(), 0);
  size_t i = 0, j = 0;
  while (j < shape.size()) {
    if (shape[j] == 1) {
      ++j;
      continue;
    }
    if (i == inSizes.size())
      return failure();
    // One group: input dims [i, iEnd), output dims [j, jEnd) of one count.
    size_t iEnd = i + 1, jEnd = j + 1;
    int64_t inCount = inSizes[i], outCount = shape[j];
    while (inCount != outCount) {
      if (inCount < outCount) {
        if (iEnd == inSizes.size())
          return failure();
        inCount *= inSizes[iEnd++];
      } else {
        if (jEnd == shape.size())
          return failure();
        outCount *= shape[jEnd++];
      }
    }
    for (size_t k = i; k + 1 < iEnd; ++k)
      if (inStrides[k] != inStrides[k + 1] * inSizes[k + 1])
        return failure();
    int64_t stride = inStrides[iEnd - 1];
    for (size_t k = jEnd; k-- > j;) {
      out.strides[k] = stride;
      stride *= shape[k];
    }
    i = iEnd;
    j = jEnd;
  }
  if (i != inSizes.size())
    return failure();
  s = std::move(out);
  return success();
}

bool isMovement(Operation *op) {
  return llvm::isa_and_nonnull<SliceOp, ReshapeOp, TransposeOp>(op);
}

/// `operand` as a strided view of the stored tensor its movement chain
/// starts from, or failure when there is no copy to save or the strides
/// are not a GEMM operand's.
FailureOr<std::pair<Value, Strided>> viewOf(Value operand) {
  SmallVector<Operation *> chain;
  Value root = operand;
  bool copies = false;
  while (isMovement(root.getDefiningOp())) {
    Operation *def = root.getDefiningOp();
    copies |= llvm::isa<SliceOp, TransposeOp>(def);
    chain.push_back(def);
    root = def->getOperand(0);
  }
  if (!copies)
    return failure();
  // The view is read where the matmuls are, after the chain's ops: memory
  // released in between (a stage-3 gathered parameter, released after its
  // last direct reader) stays a copy.
  if (zeroc::zero::isReleased(root))
    return failure();
  Strided s = rowMajor(llvm::cast<RankedTensorType>(root.getType()));
  for (Operation *op : llvm::reverse(chain)) {
    if (auto slice = llvm::dyn_cast<SliceOp>(op)) {
      if (failed(applySlice(slice, s)))
        return failure();
    } else if (auto t = llvm::dyn_cast<TransposeOp>(op)) {
      applyTranspose(t, s);
    } else if (failed(applyReshape(llvm::cast<ReshapeOp>(op).getType().getShape(), s))) {
      return failure();
    }
  }
  // A matrix a GEMM reads: unit stride along one of the last two dims, a
  // leading dimension at least as long as that dim.
  const size_t r = s.sizes.size();
  if (r < 2)
    return failure();
  const int64_t rows = s.sizes[r - 2], cols = s.sizes[r - 1];
  const bool rowMajorMatrix = s.strides[r - 1] == 1 && s.strides[r - 2] >= cols;
  const bool colMajorMatrix = s.strides[r - 2] == 1 && s.strides[r - 1] >= rows;
  if (!rowMajorMatrix && !colMajorMatrix)
    return failure();
  return std::make_pair(root, std::move(s));
}

struct FoldMatmulViews
    : public zeroc::impl::FoldMatmulViewsBase<FoldMatmulViews> {
  void runOnOperation() override {
    SmallVector<MatMulOp> matmuls;
    getOperation().walk([&](MatMulOp op) { matmuls.push_back(op); });
    SmallVector<Operation *> maybeDead;
    DenseMap<Value, Value> viewFor; // one view per folded operand value
    for (MatMulOp mm : matmuls) {
      for (OpOperand &operand : mm->getOpOperands()) {
        Value v = operand.get();
        if (Value made = viewFor.lookup(v)) {
          operand.set(made);
          continue;
        }
        if (v.getDefiningOp<StridedViewOp>())
          continue;
        FailureOr<std::pair<Value, Strided>> view = viewOf(v);
        if (failed(view))
          continue;
        Operation *def = v.getDefiningOp();
        OpBuilder b(def);
        b.setInsertionPointAfter(def);
        auto made = b.create<StridedViewOp>(
            def->getLoc(), v.getType(), view->first,
            b.getI64IntegerAttr(view->second.offset),
            b.getDenseI64ArrayAttr(view->second.strides));
        operand.set(made);
        viewFor[v] = made;
        maybeDead.push_back(def);
      }
    }
    // A product only a transpose reads is stored transposed by the GEMM
    // itself (result_perm) when a matrix dim stays last.
    SmallVector<TransposeOp> transposes;
    getOperation().walk([&](TransposeOp t) { transposes.push_back(t); });
    for (TransposeOp t : transposes) {
      auto mm = t.getInput().getDefiningOp<MatMulOp>();
      // A vector operand drops a dim: the product's last two dims are then
      // not the GEMM's rows and columns.
      if (!mm || mm.getResultPerm() || !mm->hasOneUse() ||
          mm.getLhs().getType().getRank() < 2 || mm.getRhs().getType().getRank() < 2)
        continue;
      const int64_t r = t.getType().getRank();
      SmallVector<int64_t> perm;
      for (size_t i = 0; i < t.getPerm().size(); ++i)
        perm.push_back(intAt(t.getPerm(), i));
      if (r < 2 || perm.back() < r - 2)
        continue;
      OpBuilder b(mm);
      auto stored = b.create<MatMulOp>(mm.getLoc(), t.getType(), mm.getLhs(), mm.getRhs(),
                                       mm.getTransA(), mm.getTransB(),
                                       b.getDenseI64ArrayAttr(perm));
      t.replaceAllUsesWith(stored.getResult());
      t->erase();
      mm->erase();
    }
    // The chains' copies left without users, from the matmuls' end back.
    llvm::SetVector<Operation *> worklist(maybeDead.begin(), maybeDead.end());
    while (!worklist.empty()) {
      Operation *op = worklist.pop_back_val();
      if (!op->use_empty())
        continue;
      for (Value in : op->getOperands())
        if (isMovement(in.getDefiningOp()))
          worklist.insert(in.getDefiningOp());
      op->erase();
    }
  }
};

} // namespace
