//===- Bucket.h - zero-bucket's shared parts ----------------------*- C++ -*-===//
//
// zero-bucket (passes/Bucket.cpp) buckets the collectives of
// @train_micro_step; passes/BucketStep.cpp those of @train_step. Both split
// their members the same way.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_PASSES_BUCKET_H
#define ZEROC_PASSES_BUCKET_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"

namespace zeroc::bucket {

/// Splits `members` (in program order) into runs of consecutive members:
/// a run takes the next member while it is `compatible` with the run, the
/// elements the run's collective moves, `moved(sum of size(member))`, stay
/// within `limit`, and the run holds fewer than `closeAt(first member)`
/// elements (none: no such bound); a member larger than `limit` is a run
/// of its own.
template <typename Member, typename Size, typename Moved, typename Compatible>
llvm::SmallVector<llvm::SmallVector<Member>> splitIntoBuckets(
    llvm::ArrayRef<Member> members, int64_t limit, Size size, Moved moved,
    Compatible compatible,
    llvm::function_ref<int64_t(Member)> closeAt = nullptr) {
  llvm::SmallVector<llvm::SmallVector<Member>> buckets;
  int64_t elements = 0;
  for (const Member &m : members) {
    int64_t n = size(m);
    if (buckets.empty() || moved(elements + n) > limit ||
        (closeAt && elements >= closeAt(buckets.back().front())) ||
        !compatible(buckets.back().front(), m)) {
      buckets.emplace_back();
      elements = 0;
    }
    buckets.back().push_back(m);
    elements += n;
  }
  return buckets;
}

/// @train_step: buckets the per-parameter gradient reductions (stage 0's
/// all-reduces of the accumulators, stage 1's reduce-scatters) by
/// `reduceLimit` elements and the all-gathers of updated replicas
/// (zero.gather_replica) by `gatherLimit`, except that a replica of at least
/// `aloneBytes` bytes keeps its own in-place gather (0: no such bound);
/// adds each bucket's collective to `collectives`.
void bucketStep(mlir::func::FuncOp step, int64_t world, int64_t reduceLimit,
                int64_t gatherLimit, int64_t aloneBytes,
                llvm::SmallPtrSetImpl<mlir::Operation *> &collectives);

} // namespace zeroc::bucket

#endif // ZEROC_PASSES_BUCKET_H
