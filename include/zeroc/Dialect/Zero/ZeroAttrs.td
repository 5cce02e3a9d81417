//===- ZeroAttrs.td - zero dialect enums and attributes ----*- tablegen -*-===//
//
// Enumerations used as zero type parameters and op attributes: what a buffer
// holds, how a collective reduces, and where a shard lives.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_DIALECT_ZERO_ZEROATTRS_TD
#define ZEROC_DIALECT_ZERO_ZEROATTRS_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "zeroc/Dialect/Zero/ZeroDialect.td"

//===----------------------------------------------------------------------===//
// BufferKind
//===----------------------------------------------------------------------===//

def Zero_BufferKind : I32EnumAttr<"BufferKind",
    "the model state a flat buffer holds", [
      I32EnumAttrCase<"Params", 0, "params">,
      I32EnumAttrCase<"Grads", 1, "grads">,
      I32EnumAttrCase<"OptimState", 2, "optim_state">
    ]> {
  let cppNamespace = "::zeroc::zero";
  let genSpecializedAttr = 0;
}

def Zero_BufferKindAttr : EnumAttr<Zero_Dialect, Zero_BufferKind, "kind"> {
  let summary = "the model state a flat buffer holds";
  let description = [{
    `params` are the (compute-precision) model parameters, `grads` their
    gradients, `optim_state` the fp32 master weights and optimizer moments.
    ZeRO stage 1 partitions `optim_state`, stage 2 also `grads`, stage 3 also
    `params`. The kind is a parameter of `!zero.flat` and `!zero.shard`; the
    attribute form exists for passes that record a kind on an op.

    ```mlir
    #zero<kind optim_state>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// ReduceKind
//===----------------------------------------------------------------------===//

def Zero_ReduceKind : I32EnumAttr<"ReduceKind",
    "the reduction a collective applies across ranks", [
      I32EnumAttrCase<"Sum", 0, "sum">,
      I32EnumAttrCase<"Avg", 1, "avg">,
      I32EnumAttrCase<"Max", 2, "max">
    ]> {
  let cppNamespace = "::zeroc::zero";
  let genSpecializedAttr = 0;
}

def Zero_ReduceKindAttr : EnumAttr<Zero_Dialect, Zero_ReduceKind, "reduction"> {
  let summary = "the reduction a collective applies across ranks";
  let description = [{
    `sum` and `avg` (the sum divided by the world size, NCCL's `ncclAvg`) for
    gradients; `max` for the overflow flag, which DeepSpeed all-reduces with
    MAX over the data-parallel group.

    ```mlir
    %g = zero.all_reduce %flag {reduction = #zero<reduction max>} : tensor<i1>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// MemorySpace
//===----------------------------------------------------------------------===//

def Zero_MemorySpace : I32EnumAttr<"MemorySpace",
    "where a shard lives", [
      I32EnumAttrCase<"Device", 0, "device">,
      I32EnumAttrCase<"Host", 1, "host">
    ]> {
  let cppNamespace = "::zeroc::zero";
  let genSpecializedAttr = 0;
}

def Zero_MemorySpaceAttr : EnumAttr<Zero_Dialect, Zero_MemorySpace, "space"> {
  let summary = "where a shard lives";
  let description = [{
    `device` is accelerator memory (or the compute memory of the CPU target);
    `host` is the pinned host memory that ZeRO-Offload moves optimizer state
    and, in stage 3, parameters to.

    ```mlir
    #zero<space host>
    ```
  }];
}

#endif // ZEROC_DIALECT_ZERO_ZEROATTRS_TD
