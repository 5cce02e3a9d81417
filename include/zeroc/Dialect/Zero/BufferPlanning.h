//===- BufferPlanning.h - storage rules shared by planner and emitters -*- C++ -*-===//
//
// After zero-plan-buffers every tensor of @train_micro_step lives either in
// state the runtime owns (parameter replicas and shards), in the blob
// (constants), in the micro-step's inputs, in the arena at a planned offset,
// or aliases one of those (reshapes, views and shard slices). These helpers
// say which, so that the planner and every target's emitter agree.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_DIALECT_ZERO_BUFFERPLANNING_H
#define ZEROC_DIALECT_ZERO_BUFFERPLANNING_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

namespace zeroc::zero {

class PackOp;
class ParamShardOp;

/// Attribute on an op: the arena byte offset of each result.
inline constexpr llvm::StringLiteral kArenaOffsetsAttr = "zero.arena_offsets";
/// Attribute on the module: the arena size in bytes.
inline constexpr llvm::StringLiteral kArenaBytesAttr = "zero.arena_bytes";
/// With zero-plan-buffers' host-step-scalars (targets whose arena is device
/// memory): on an op of @train_step whose results are all scalars (rank 0),
/// the byte offset of each in host memory instead of the arena, and on the
/// module the size of that host memory. The optimizer step's scalar
/// arithmetic (the overflow flag, the norm, the lr, the step count) then
/// runs on the host.
inline constexpr llvm::StringLiteral kHostOffsetsAttr = "zero.host_offsets";
inline constexpr llvm::StringLiteral kHostBytesAttr = "zero.host_bytes";
/// Attribute zero-plan-buffers puts on an op that writes some of its
/// results inside another value's storage (a graph.concat's, placed in
/// place): one DenseI64ArrayAttr per result, that result's element strides
/// (empty: dense, as everywhere else). Only ops for which
/// writesResultAtStrides holds get it; their emitters print these strides.
inline constexpr llvm::StringLiteral kResultStridesAttr = "zero.result_strides";
/// Unit attribute zero-plan-buffers puts on a graph.concat whose operands'
/// producers wrote them into its storage: it copies nothing.
inline constexpr llvm::StringLiteral kOperandsInPlaceAttr = "zero.operands_in_place";
/// Unit attribute zero-plan-buffers puts on a graph.fused_softmax_cross_entropy
/// whose scores' gradient it places over the scores (the same arena
/// offset): nothing reads the scores after the op.
inline constexpr llvm::StringLiteral kGradOverScoresAttr = "zero.grad_over_scores";
/// Unit attribute zero-plan-buffers puts on a zero.pack of @train_step whose
/// inputs are gradient accumulators that it laid out in the runtime's
/// gradient slab at the pack's offsets (#zero.state_layout's grad_offset):
/// the pack's buffer is that stretch of the slab, it copies nothing and the
/// all-reduce runs in the slab.
inline constexpr llvm::StringLiteral kInGradSlabAttr = "zero.in_grad_slab";
/// Attribute zero-plan-buffers puts on the module: the bytes of the
/// runtime's gradient slab, in which every accumulator lies at its
/// #zero.state_layout grad_offset (a pack in the slab with its padding).
inline constexpr llvm::StringLiteral kGradSlabBytesAttr = "zero.grad_slab_bytes";
/// Alignment of every arena buffer, in bytes.
inline constexpr int64_t kArenaAlignment = 64;
/// `bytes` rounded up to a multiple of kArenaAlignment.
inline int64_t alignToArena(int64_t bytes) {
  return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}
/// Unit attribute zero-partition puts on the last op of the forward pass of
/// @train_micro_step (the op defining the returned loss): every op after it
/// belongs to the backward pass. The emitter marks that point for the
/// runtime's wall_clock_breakdown (fwd vs bwd timers).
inline constexpr llvm::StringLiteral kForwardEndAttr = "zero.forward_end";

/// Unit attribute zero-step-boundary puts on the last gradient reduction of
/// @train_step (stages 0-1): the emitter marks that point so that
/// wall_clock_breakdown's bwd_allreduce timer ends there.
inline constexpr llvm::StringLiteral kReductionEndAttr = "zero.reduction_end";

/// Attributes zero-step-boundary puts on @train_step: the micro-steps per
/// optimizer step (an i64) and what the loop logs (#zero.monitor).
inline constexpr llvm::StringLiteral kMicroStepsAttr = "zero.micro_steps";
inline constexpr llvm::StringLiteral kMonitorAttr = "zero.monitor";
/// Unit attribute zero-step-boundary puts on @train_step when f32 matmuls
/// may use TF32 tensor cores (the config's zeroc.tf32; CUDA only).
inline constexpr llvm::StringLiteral kTf32Attr = "zero.tf32";

/// Attribute zero-plan-buffers puts on every graph.param: its
/// #zero.state_layout.
inline constexpr llvm::StringLiteral kStateLayoutAttr = "zero.state_layout";

/// Attribute zero-overlap puts on @train_micro_step: the most gathered
/// parameter elements its prefetch keeps alive (stage3_max_live_parameters).
inline constexpr llvm::StringLiteral kMaxLiveParametersAttr =
    "zero.max_live_parameters";

/// The elements of the gathered parameter buffer `v` is: a zero.all_gather's
/// result, a zero.all_gather_start's token or the zero.wait of one; 0 for
/// any other value.
int64_t gatheredElementsOf(mlir::Value v);

/// Gathered parameter elements at a point of a block: `live` are those of
/// the buffers gathered or started and not released (zero.release) yet;
/// `inFlight`, of those, the ones started and not waited for yet.
struct GatheredElements {
  int64_t live = 0;
  int64_t inFlight = 0;
};

/// The zero.param_shard reads that make a gather's shard operand, in
/// order: the operand itself, or the inputs of the zero.concat_shards that
/// makes it (a bucket); empty when anything else makes it.
llvm::SmallVector<ParamShardOp, 4> paramShardsOf(mlir::Value shard);

/// The gathered parameter elements in `block` right after `point` (an op
/// of it), counting from the block's start.
GatheredElements gatheredElementsAt(mlir::Block *block, mlir::Operation *point);

/// The operand whose storage a collective's result is: an all-reduce's
/// (all-reduces reduce in place), an in-place reduce-scatter's buffer (the
/// shard is its first elements) and an in-place gather's shard (one rank:
/// the shard is the buffer); null for any other op.
mlir::Value inPlaceOperand(mlir::Operation *op);

/// The value whose storage `v` shares: through graph.reshape, zero.view,
/// zero.shard_slice, a collective's inPlaceOperand and a zero.pack that
/// copies nothing (packStorage).
mlir::Value storageRoot(mlir::Value v);

/// Whether `op` is a graph.gemm whose alpha * op(a) * op(b) + beta * c is
/// op(a) * op(b) alone (alpha 1, no c or beta 0): the product the
/// runtime's strided matmul computes, and the only GEMM whose rows
/// zero-plan-buffers pads (passes/RowPitch.h).
bool isPlainGemmProduct(mlir::Operation *op);

/// Whether `pack` only renames its input's storage: one input at offset 0
/// that fills the whole flat buffer (no padding to zero), of its element
/// type, made by an op into the arena and used by nothing else (reshapes
/// between included), so that the buffer can be that storage.
bool packRenamesInput(PackOp pack);

/// The input whose storage a zero.pack's buffer starts at when the pack
/// copies nothing: its only input when it renames it (packRenamesInput),
/// or its input at offset 0 when its inputs lie in the gradient slab at
/// its offsets (kInGradSlabAttr). Null when the pack copies its inputs
/// into storage of its own.
mlir::Value packStorage(PackOp pack);

/// Whether the storage `v` names (storageRoot) is freed by a zero.release
/// in its function (a stage-3 gathered parameter, released after its last
/// direct reader): a view of it read later would read freed memory.
bool isReleased(mlir::Value v);

/// The arena offset zero-plan-buffers gives a result that is not in the
/// arena but in its parameter's gradient accumulator: the result is the
/// storage of a gradient that an in-place zero.grad_accumulate consumes
/// (accumulatorStorageOf).
inline constexpr int64_t kInAccumulatorOffset = -1;

/// The values from a zero.grad_accumulate's gradient to the op result that
/// holds its storage: through graph.reshape and a zero.wait to its
/// reduce-scatter's token (stages 2-3, whose shard is the storage), and on
/// one rank, where the reduce-scatter is in place and its shard the whole
/// buffer, on to that buffer's zero.pack when it renames its one input.
llvm::SmallVector<mlir::Value> accumulatorChain(mlir::Value grad);

/// The value holding the storage of an in-place zero.grad_accumulate's
/// gradient (accumulatorChain's last): the op result that zero-plan-buffers
/// places in the accumulator.
mlir::Value accumulatorStorageOf(mlir::Value grad);

/// Whether every target's emitter writes result `index` of `op` at any
/// element strides zero-plan-buffers records (kResultStridesAttr): the
/// gradients of a graph.fused_attention_grad, whose kernels take each
/// operand's strides.
bool writesResultAtStrides(mlir::Operation *op, unsigned index);

/// The element strides zero-plan-buffers recorded for `result`
/// (kResultStridesAttr), in the order of its type's dims; empty when it is
/// stored dense.
llvm::SmallVector<int64_t> recordedResultStrides(mlir::Value result);

/// Whether `op`'s results are arena buffers (as opposed to aliases, runtime
/// state, constants or the per-element values of a fused op's body).
bool resultsNeedArena(mlir::Operation *op);

/// The element type of a tensor, flat buffer, shard or token (its payload's);
/// null for anything else.
mlir::Type bufferElementType(mlir::Type type);

/// Each parameter's gradient accumulator element type, as the
/// zero.grad_accumulator ops inside `scope` read them.
llvm::StringMap<mlir::Type> accumulatorElementTypes(mlir::Operation *scope);

/// Bytes of one element of an int or float type (i1 takes a byte).
int64_t elementBytes(mlir::Type elementType);

/// Bytes one value of `type` (ranked tensor, !zero.flat, !zero.shard)
/// occupies, unaligned; -1 for other types.
int64_t storageBytes(mlir::Type type);

} // namespace zeroc::zero

#endif // ZEROC_DIALECT_ZERO_BUFFERPLANNING_H
