//===- RuntimeCollectives.cpp - Collectives as communicator calls ---------===//
//
// zeroc_rt_comm_* calls (zeroc_rt/comm.h, Open MPI underneath): the blocking
// collectives, and the started ones, which record their request in the Q[i]
// slot ProgramPrinter gave their token and complete at zeroc_rt_comm_wait.
// ProgramPrinter has pointed in-place results at their operand already.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTarget.h"

#include "zeroc/Emit/EmitTypes.h"

#include "zeroc/Dialect/Zero/BufferPlanning.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace zeroc {
namespace {

/// The blocking and the started reduce-scatter: the same operands and
/// attributes; the started one also passes its request slot.
template <typename ReduceScatter>
LogicalResult printReduceScatter(ProgramPrinter &p, ReduceScatter rs,
                                 zero::ShardType shard, StringRef slot) {
  if (rs.getReduction() != zero::ReduceKind::Sum || rs.getScale())
    return rs->emitOpError("the CPU target emits only unscaled sum reduce-scatters");
  std::string args = llvm::formatv("comm, {0}, {1}, {2}, {3}, ZEROC_RT_REDUCE_SUM",
                                   p.var(rs.getBuffer()), p.var(rs->getResult(0)),
                                   shard.getSize(),
                                   dtypeName(shard.getElementType()));
  if (slot.empty())
    p.call("zeroc_rt_comm_reduce_scatter(" + args + ")");
  else
    p.call("zeroc_rt_comm_reduce_scatter_start(" + args + ", &" + slot + ")");
  return success();
}

} // namespace

LogicalResult RuntimeTarget::printCollective(ProgramPrinter &p, Operation *op) {
  std::string r = op->getNumResults() ? p.var(op->getResult(0)) : "";
  if (auto gather = llvm::dyn_cast<zero::AllGatherOp>(op)) {
    auto shard = gather.getShard().getType();
    p.call(llvm::formatv("zeroc_rt_comm_all_gather(comm, {0}, {1}, {2}, {3})",
                         p.var(gather.getShard()), r, shard.getSize(),
                         dtypeName(shard.getElementType())));
    return success();
  }
  if (auto rs = llvm::dyn_cast<zero::ReduceScatterOp>(op))
    return printReduceScatter(p, rs, rs.getType(), "");
  if (auto ar = llvm::dyn_cast<zero::AllReduceOp>(op)) {
    if (ar.getScale() || ar.getReduction() == zero::ReduceKind::Avg)
      return op->emitOpError("the CPU target emits only unscaled sum and max all-reduces");
    // In place (the result is the operand's storage). A flag is a byte.
    std::optional<Shape> in = shapeOf(ar.getInput().getType());
    std::string dt = shapeOf(ar.getType())->elem.isInteger(1)
                         ? "ZEROC_RT_DTYPE_U8"
                         : dtypeName(in->elem);
    p.call(llvm::formatv("zeroc_rt_comm_all_reduce(comm, {0}, {0}, {1}, {2}, {3})", r,
                         in->numel(), dt,
                         ar.getReduction() == zero::ReduceKind::Max
                             ? "ZEROC_RT_REDUCE_MAX"
                             : "ZEROC_RT_REDUCE_SUM"));
    return success();
  }
  if (auto g = llvm::dyn_cast<zero::GatherReplicaOp>(op)) {
    // Every rank's slice of the parameter's replica from its shard there.
    auto shard = llvm::cast<zero::ShardType>(g.getShard());
    int64_t es = zero::elementBytes(shard.getElementType());
    p.line("{");
    p.line("  char *zrt_replica = (char *)zeroc_rt_engine_param_replica(e, " +
           std::to_string(p.paramIndex(g.getParam())) + ");");
    p.line(llvm::formatv("  ZRT_TRY(zeroc_rt_comm_all_gather(comm, zrt_replica + "
                         "(size_t)zeroc_rt_comm_rank(comm) * {0}, zrt_replica, {1}, {2}));",
                         shard.getSize() * es, shard.getSize(),
                         dtypeName(shard.getElementType())));
    p.line("}");
    return success();
  }
  return p.unsupported(op);
}

LogicalResult RuntimeTarget::printStart(ProgramPrinter &p, Operation *op,
                                    StringRef slot) {
  std::string r = p.var(op->getResult(0));
  if (auto start = llvm::dyn_cast<zero::AllGatherStartOp>(op)) {
    auto shard = start.getShard().getType();
    p.call(llvm::formatv("zeroc_rt_comm_all_gather_start(comm, {0}, {1}, {2}, {3}, &{4})",
                         p.var(start.getShard()), r, shard.getSize(),
                         dtypeName(shard.getElementType()), slot));
    return success();
  }
  if (auto rs = llvm::dyn_cast<zero::ReduceScatterStartOp>(op))
    return printReduceScatter(
        p, rs, llvm::cast<zero::ShardType>(rs.getToken().getType().getPayload()),
        slot);
  if (auto ar = llvm::dyn_cast<zero::AllReduceStartOp>(op)) {
    std::optional<Shape> s = shapeOf(ar.getInput().getType());
    if (ar.getScale() || ar.getReduction() != zero::ReduceKind::Sum || !s ||
        s->elem.isInteger(1))
      return op->emitOpError("the CPU target starts only unscaled sum all-reduces of numbers");
    // In place: the token's storage is the operand's.
    p.call(llvm::formatv("zeroc_rt_comm_all_reduce_start(comm, {0}, {0}, {1}, {2}, "
                         "ZEROC_RT_REDUCE_SUM, &{3})",
                         r, s->numel(), dtypeName(s->elem), slot));
    return success();
  }
  return p.unsupported(op);
}

LogicalResult RuntimeTarget::printWait(ProgramPrinter &p, zero::WaitOp op,
                                   StringRef slot) {
  p.call("zeroc_rt_comm_wait(comm, " + slot + ")");
  return success();
}

} // namespace zeroc
