//===- RuntimeZeroOps.cpp - Zero ops as engine and kernel calls -----------===//
//
// The zero ops that are neither views nor collectives: zeroc_rt_engine_*
// calls for the training state the engine keeps (parameter replicas and
// shards, buffers, gradient accumulation, the loss scale, the step count,
// the optimizer updates), and kernel copies and loops for packing flat
// buffers and for @train_step's overflow check, norm and clipping.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTarget.h"

#include "zeroc/Emit/CxxText.h"
#include "zeroc/Emit/EmitTypes.h"

#include "zeroc/Dialect/Zero/BufferPlanning.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <tuple>

using namespace mlir;

namespace zeroc {
namespace {

/// The copies of one bucket op (a member into or out of the bucket, or one
/// shard per rank of it), printed as a table the code fills and one
/// zeroc_rt_k_copy_multi call, which a device runtime runs in one launch.
class CopyTable {
public:
  /// A table of at most `capacity` copies.
  CopyTable(ProgramPrinter &p, int64_t capacity) : p(p) {
    p.line("{");
    // Static (thread_local): a bucket's table may have thousands of
    // entries; C++ has no empty arrays.
    p.line("  static thread_local zeroc_rt_copy_t zrt_copies[" +
           std::to_string(std::max<int64_t>(capacity, 1)) + "];");
    p.line("  int64_t zrt_c = 0;");
  }
  ~CopyTable() {
    p.call("zeroc_rt_k_copy_multi(zrt_c, zrt_copies)", "  ");
    p.line("}");
  }

  /// `bytes` bytes from the char * expression `src` to `dst`.
  void add(const std::string &src, const std::string &dst, int64_t bytes) {
    p.line(llvm::formatv("  zrt_copies[zrt_c++] = {{{0}, {1}, {2}};", src, dst, bytes));
  }

  /// A tensor of `numel` elements at `tensor`, into (`toBucket`) or out of
  /// its shards at element `offset` of every rank slice of `bucket`: one
  /// copy per rank whose shard is not empty.
  void addShards(const std::string &tensor, const std::string &bucket, int64_t offset,
                 int64_t numel, zero::FlatType flat, bool toBucket) {
    int64_t world = flat.getWorld();
    int64_t shard = zero::shardElements(numel, world);
    int64_t elemBytes = zero::elementBytes(flat.getElementType());
    // Rank r's shard: elements [r * shard, (r + 1) * shard) of the tensor, at
    // element r * slice + offset of the bucket; the last shards may be short
    // or empty (padding).
    std::string inTensor =
        llvm::formatv("{0} + zrt_r * {1}", tensor, shard * elemBytes);
    std::string inBucket = llvm::formatv("{0} + zrt_r * {1}", bucket,
                                         flat.getShardSize() * elemBytes);
    if (offset)
      inBucket += " + " + std::to_string(offset * elemBytes);
    const std::string &src = toBucket ? inTensor : inBucket;
    const std::string &dst = toBucket ? inBucket : inTensor;
    p.line(llvm::formatv("  for (int64_t zrt_r = 0; zrt_r < {0}; ++zrt_r) {{", world));
    p.line(llvm::formatv("    const int64_t zrt_n = {0} - zrt_r * {1} < {1} ? {0} - "
                         "zrt_r * {1} : {1};",
                         numel, shard));
    p.line(llvm::formatv("    if (zrt_n > 0) zrt_copies[zrt_c++] = {{{0}, {1}, zrt_n * {2}};",
                         src, dst, elemBytes));
    p.line("  }");
  }

private:
  ProgramPrinter &p;
};

/// The arrays a *_multi kernel takes for `tensors` (zrt_count, zrt_dtypes,
/// zrt_xs, zrt_ns): the step's checks over every gradient are one call, so
/// that a device runtime reads its result back once.
void printTensorList(ProgramPrinter &p, ValueRange tensors) {
  std::string dtypes, xs, ns;
  for (Value t : tensors) {
    const char *sep = dtypes.empty() ? "" : ", ";
    dtypes += sep + std::string(dtypeName(shapeOf(t.getType())->elem));
    xs += sep + p.var(t);
    ns += sep + std::to_string(shapeOf(t.getType())->numel());
  }
  if (tensors.empty()) // C++ has no empty arrays; count 0 reads none
    std::tie(dtypes, xs, ns) = std::make_tuple("ZEROC_RT_DTYPE_F32", "nullptr", "0");
  p.line("  const int64_t zrt_count = " + std::to_string(tensors.size()) + ";");
  p.line("  static const zeroc_rt_dtype_t zrt_dtypes[] = {" + dtypes + "};");
  p.line("  const void *const zrt_xs[] = {" + xs + "};");
  p.line("  static const int64_t zrt_ns[] = {" + ns + "};");
}

} // namespace

LogicalResult RuntimeTarget::printZeroOp(ProgramPrinter &p, Operation *op) {
  auto paramOf = [&](StringRef name) {
    return std::to_string(p.paramIndex(name));
  };
  auto f64 = [&](Value v) { return "*(double *)" + p.var(v); };
  auto count = [&](Value v) { return std::to_string(shapeOf(v.getType())->numel()); };
  std::string r = op->getNumResults() ? p.var(op->getResult(0)) : "";
  if (auto rep = llvm::dyn_cast<zero::ParamReplicaOp>(op)) {
    p.line(r + " = (char *)zeroc_rt_engine_param_replica(e, " +
           paramOf(rep.getParam()) + ");");
    return success();
  }
  if (auto sh = llvm::dyn_cast<zero::ParamShardOp>(op)) {
    p.line(r + " = (char *)zeroc_rt_engine_param_shard(e, " +
           paramOf(sh.getParam()) + ");");
    return success();
  }
  if (auto ld = llvm::dyn_cast<zero::BufferLoadOp>(op)) {
    p.line(r + " = (char *)zeroc_rt_engine_buffer(e, " +
           std::to_string(p.bufferIndex(ld.getBuffer())) + ");");
    return success();
  }
  if (auto st = llvm::dyn_cast<zero::BufferStoreOp>(op)) {
    std::string dst = p.descOf("zeroc_rt_engine_buffer(e, " +
                                   std::to_string(p.bufferIndex(st.getBuffer())) + ")",
                               st.getValue().getType());
    p.call("zeroc_rt_k_copy(P(" + p.desc(st.getValue()) + "), P(" + dst + "))");
    return success();
  }
  if (auto pack = llvm::dyn_cast<zero::PackOp>(op)) {
    // The buffer is its input's storage, or its inputs' stretch of the
    // gradient slab (zero.in_grad_slab).
    if (Value storage = zero::packStorage(pack)) {
      p.line(r + " = " + p.var(storage) + ";");
      return success();
    }
    p.call("zeroc_rt_k_zero(P(" + p.desc(pack.getResult()) + "))");
    int64_t elemBytes = zero::elementBytes(pack.getType().getElementType());
    CopyTable copies(p, pack.getInputs().size());
    for (auto [in, off] : llvm::zip(pack.getInputs(), pack.getOffsets()))
      copies.add(p.var(in),
                 r + " + " + std::to_string(llvm::cast<IntegerAttr>(off).getInt() * elemBytes),
                 shapeOf(in.getType())->numel() * elemBytes);
    return success();
  }
  if (auto pack = llvm::dyn_cast<zero::PackShardsOp>(op)) {
    zero::FlatType flat = pack.getType();
    p.call("zeroc_rt_k_zero(P(" + p.desc(pack.getResult()) + "))");
    CopyTable copies(p, pack.getInputs().size() * flat.getWorld());
    for (auto [in, off] : llvm::zip(pack.getInputs(), pack.getOffsets()))
      copies.addShards(p.var(in), r, llvm::cast<IntegerAttr>(off).getInt(),
                       shapeOf(in.getType())->numel(), flat, /*toBucket=*/true);
    return success();
  }
  if (auto unpack = llvm::dyn_cast<zero::UnpackShardsOp>(op)) {
    zero::FlatType flat = unpack.getBuffer().getType();
    CopyTable copies(p, flat.getWorld() * static_cast<int64_t>(unpack.getNumResults()));
    for (auto [result, offset] : llvm::zip(unpack.getResults(), unpack.getOffsets()))
      copies.addShards(p.var(result), p.var(unpack.getBuffer()),
                       llvm::cast<IntegerAttr>(offset).getInt(),
                       shapeOf(result.getType())->numel(), flat, /*toBucket=*/false);
    return success();
  }
  if (auto concat = llvm::dyn_cast<zero::ConcatShardsOp>(op)) {
    int64_t offset = 0;
    int64_t elemBytes = zero::elementBytes(concat.getType().getElementType());
    CopyTable copies(p, concat.getInputs().size());
    for (Value in : concat.getInputs()) {
      int64_t size = llvm::cast<zero::ShardType>(in.getType()).getSize();
      copies.add(p.var(in), r + " + " + std::to_string(offset * elemBytes),
                 size * elemBytes);
      offset += size;
    }
    return success();
  }
  if (auto acc = llvm::dyn_cast<zero::GradAccumulateOp>(op)) {
    if (acc.getInPlace()) // its gradient was written into the accumulator
      return success();
    std::optional<Shape> s = shapeOf(acc.getGrad().getType());
    p.call(llvm::formatv("zeroc_rt_engine_grad_accumulate(e, {0}, {1}, {2})",
                         paramOf(acc.getParam()), p.var(acc.getGrad()),
                         s->numel()));
    return success();
  }
  if (auto rows = llvm::dyn_cast<zero::GradAccumulateRowsOp>(op)) {
    auto indices = llvm::cast<RankedTensorType>(rows.getIndices().getType());
    std::optional<int64_t> pad = rows.getPaddingIdx();
    p.call(llvm::formatv("zeroc_rt_engine_grad_accumulate_rows(e, {0}, {1}, {2}, "
                         "{3}, {4}, {5}, {6})",
                         paramOf(rows.getParam()), p.var(rows.getRows()),
                         p.var(rows.getIndices()),
                         dtypeName(indices.getElementType()),
                         indices.getNumElements(), pad ? 1 : 0, pad.value_or(0)));
    return success();
  }
  if (auto ls = llvm::dyn_cast<zero::LossScaleOp>(op)) {
    if (ls.getType().getElementType().isF64())
      p.line(p.storeScalar(ls.getResult(), "double", "zeroc_rt_engine_loss_scale(e)"));
    else
      p.line(p.storeScalar(ls.getResult(), "float", "(float)zeroc_rt_engine_loss_scale(e)"));
    return success();
  }
  // The ops of @train_step (zero-step-boundary): engine calls and the
  // step's scalar arithmetic, printed as the IR says.
  if (auto acc = llvm::dyn_cast<zero::GradAccumulatorOp>(op)) {
    p.line(r + " = (char *)zeroc_rt_engine_grad_accumulator(e, " +
           paramOf(acc.getParam()) + ");");
    return success();
  }
  if (auto of = llvm::dyn_cast<zero::HasOverflowOp>(op)) {
    p.line("{");
    printTensorList(p, of.getGrads());
    p.line("  int zrt_found = 0;");
    p.call("zeroc_rt_k_has_inf_or_nan_multi(zrt_count, zrt_dtypes, zrt_xs, "
           "zrt_ns, &zrt_found)",
           "  ");
    p.line("  *(unsigned char *)" + r + " = zrt_found ? 1 : 0;");
    p.line("}");
    return success();
  }
  if (auto ss = llvm::dyn_cast<zero::SumSquaresOp>(op)) {
    p.line("{");
    printTensorList(p, ss.getGrads());
    p.call("zeroc_rt_k_sum_squares_multi(zrt_count, zrt_dtypes, zrt_xs, zrt_ns, "
           "(double *)" + r + ")",
           "  ");
    p.line("}");
    return success();
  }
  if (auto nf = llvm::dyn_cast<zero::NonFiniteOp>(op)) {
    p.line("*(unsigned char *)" + r + " = std::isfinite(" + f64(nf.getSumSquares()) +
           ") ? 0 : 1;");
    return success();
  }
  if (auto clip = llvm::dyn_cast<zero::ClipGradNormOp>(op)) {
    p.call(llvm::formatv("zeroc_rt_k_clip_grad_norm({0}, {1}, {2}, {3}, (double *){4}, "
                         "(double *){5})",
                         f64(clip.getSumSquares()), f64(clip.getScale()),
                         clip.getWorldSize(), cxxDouble(clip.getMaxNorm().convertToDouble()),
                         p.var(clip.getNorm()), p.var(clip.getFactor())));
    return success();
  }
  if (llvm::isa<zero::StepCountOp>(op)) {
    p.line("*(int64_t *)" + r + " = zeroc_rt_engine_step_count(e);");
    return success();
  }
  if (llvm::isa<zero::AdvanceStepOp>(op)) {
    p.line("zeroc_rt_engine_advance_step(e);");
    return success();
  }
  if (auto lr = llvm::dyn_cast<zero::LrScheduleOp>(op)) {
    p.call(llvm::formatv("zeroc_rt_engine_lr_schedule(e, *(int64_t *){0}, {1}, {2}, "
                         "(double *){3}, (double *){4})",
                         p.var(lr.getStep()), cxxDouble(lr.getBaseLr().convertToDouble()),
                         cxxDouble(lr.getBaseMomentum().convertToDouble()),
                         p.var(lr.getLr()), p.var(lr.getMomentum())));
    return success();
  }
  if (auto up = llvm::dyn_cast<zero::UpdateLossScaleOp>(op)) {
    p.call("zeroc_rt_engine_update_loss_scale(e, *(unsigned char *)" +
           p.var(up.getOverflow()) + ")");
    return success();
  }
  // Adam's scalars after the gradients, the same for one parameter and many:
  // factor, lr, betas, eps, weight decay, modes, the 1-based step.
  auto adamScalars = [&](auto up) {
    zero::AdamAttr a = up.getOptimizer();
    return llvm::formatv("{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, *(int64_t *){8} + 1",
                         f64(up.getFactor()), f64(up.getLr()), f64(up.getBeta1()),
                         f64(up.getBeta2()), cxxDouble(a.getEps().convertToDouble()),
                         cxxDouble(a.getWeightDecay().convertToDouble()),
                         int(a.getAdamWMode()), int(a.getBiasCorrection()),
                         p.var(up.getStep()))
        .str();
  };
  // SGD's scalars after the gradients, the same for one parameter and many:
  // factor, lr, momentum, dampening, weight decay, nesterov, the 1-based step.
  auto sgdScalars = [&](auto up) {
    zero::SgdAttr o = up.getOptimizer();
    return llvm::formatv("{0}, {1}, {2}, {3}, {4}, {5}, *(int64_t *){6} + 1", f64(up.getFactor()),
                         f64(up.getLr()), cxxDouble(o.getMomentum().convertToDouble()),
                         cxxDouble(o.getDampening().convertToDouble()),
                         cxxDouble(o.getWeightDecay().convertToDouble()), int(o.getNesterov()),
                         p.var(up.getStep()))
        .str();
  };
  // A multi-tensor update: its tables of parameter indices, gradients and
  // counts in a block, then `fn(e, n, tables..., scalars)`.
  auto multiUpdate = [&](ArrayAttr params, ValueRange grads, StringRef fn,
                         const std::string &scalars) {
    std::string indices, pointers, counts;
    for (auto [i, ref, grad] : llvm::enumerate(params, grads)) {
      const char *sep = i ? ", " : "";
      indices += sep + paramOf(llvm::cast<FlatSymbolRefAttr>(ref).getValue());
      pointers += sep + p.var(grad);
      counts += sep + count(grad);
    }
    p.line("{");
    p.line("  static const int32_t zrt_params[] = {" + indices + "};");
    p.line("  void *const zrt_grads[] = {" + pointers + "};");
    p.line("  static const int64_t zrt_counts[] = {" + counts + "};");
    p.call(llvm::formatv("{0}(e, {1}, zrt_params, zrt_grads, zrt_counts, {2})", fn, grads.size(),
                         scalars),
           "  ");
    p.line("}");
  };
  if (auto up = llvm::dyn_cast<zero::AdamUpdateOp>(op)) {
    p.call(llvm::formatv("zeroc_rt_engine_adam_update(e, {0}, {1}, {2}, {3})",
                         paramOf(up.getParam()), p.var(up.getGrad()), count(up.getGrad()),
                         adamScalars(up)));
    return success();
  }
  if (auto up = llvm::dyn_cast<zero::AdamUpdateMultiOp>(op)) {
    multiUpdate(up.getParams(), up.getGrads(), "zeroc_rt_engine_adam_update_multi",
                adamScalars(up));
    return success();
  }
  if (auto up = llvm::dyn_cast<zero::SgdUpdateOp>(op)) {
    p.call(llvm::formatv("zeroc_rt_engine_sgd_update(e, {0}, {1}, {2}, {3})",
                         paramOf(up.getParam()), p.var(up.getGrad()), count(up.getGrad()),
                         sgdScalars(up)));
    return success();
  }
  if (auto up = llvm::dyn_cast<zero::SgdUpdateMultiOp>(op)) {
    multiUpdate(up.getParams(), up.getGrads(), "zeroc_rt_engine_sgd_update_multi", sgdScalars(up));
    return success();
  }
  if (auto slice = llvm::dyn_cast<zero::ReplicaSliceOp>(op)) {
    int64_t bytes = slice.getType().getSize() *
                    zero::elementBytes(slice.getType().getElementType());
    p.line(llvm::formatv("{0} = (char *)zeroc_rt_engine_param_replica(e, {1}) + "
                         "(size_t)zeroc_rt_comm_rank(comm) * {2};",
                         r, paramOf(slice.getParam()), bytes));
    return success();
  }
  if (auto unpack = llvm::dyn_cast<zero::UnpackReplicaOp>(op)) {
    zero::FlatType flat = unpack.getBuffer().getType();
    CopyTable copies(p, flat.getWorld() * static_cast<int64_t>(unpack.getParams().size()));
    for (auto [ref, offset] : llvm::zip(unpack.getParams(), unpack.getOffsets())) {
      StringRef name = llvm::cast<FlatSymbolRefAttr>(ref).getValue();
      copies.addShards("((char *)zeroc_rt_engine_param_replica(e, " + paramOf(name) + "))",
                       p.var(unpack.getBuffer()), llvm::cast<IntegerAttr>(offset).getInt(),
                       p.param(name).getType().getNumElements(), flat,
                       /*toBucket=*/false);
    }
    return success();
  }
  return p.unsupported(op);
}

} // namespace zeroc
