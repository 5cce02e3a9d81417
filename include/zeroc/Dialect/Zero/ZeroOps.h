//===- ZeroOps.h - zero dialect ops -----------------------------*- C++ -*-===//
#ifndef ZEROC_DIALECT_ZERO_ZEROOPS_H
#define ZEROC_DIALECT_ZERO_ZEROOPS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "zeroc/Dialect/Zero/ZeroDialect.h"
#include "zeroc/Dialect/Zero/ZeroTypes.h"

namespace zeroc::zero {

/// The sequence of collective calls. Every rank issues its collectives in the
/// same order, so ops that touch this resource keep their relative order and
/// are never merged or deleted by generic passes.
struct CommResource
    : public mlir::SideEffects::Resource::Base<CommResource> {
  llvm::StringRef getName() final { return "zero.comm"; }
};

/// The persistent training state between micro-steps and steps.
struct StateResource
    : public mlir::SideEffects::Resource::Base<StateResource> {
  llvm::StringRef getName() final { return "zero.state"; }
};


/// Discardable attribute zero-bucket puts on the collective of every bucket
/// of two or more members: the bucket's index in the function, in program
/// order.
inline constexpr llvm::StringLiteral kBucketAttr = "zero.bucket";

/// Unit attribute zero-partition puts on a graph.param that stage 3 keeps
/// whole on every rank (DeepSpeed's stage3_param_persistence_threshold):
/// the micro-step reads its zero.param_replica, its gradient and optimizer
/// state are partitioned, and @train_step refreshes the replica after the
/// update. Stages 0-2 never carry it.
inline constexpr llvm::StringLiteral kPersistentAttr = "zero.persistent";

/// Whether `param` (a graph.param) is kept whole on every rank: at stages
/// 0-2 every parameter is, at stage 3 those marked zero.persistent.
inline bool keepsReplica(mlir::Operation *param, int64_t stage) {
  return stage < 3 || param->hasAttr(kPersistentAttr);
}

/// Elements of one rank's shard of a tensor of `numel` elements: the tensor
/// zero-padded to a multiple of `world`, divided by `world`.
inline int64_t shardElements(int64_t numel, int64_t world) {
  return numel / world + (numel % world != 0);
}

} // namespace zeroc::zero

#define GET_OP_CLASSES
#include "zeroc/Dialect/Zero/ZeroOps.h.inc"

#endif // ZEROC_DIALECT_ZERO_ZEROOPS_H
