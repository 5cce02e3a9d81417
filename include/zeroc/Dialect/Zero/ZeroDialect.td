//===- ZeroDialect.td - zero dialect definition ------------*- tablegen -*-===//
//
// The zero dialect spells out the ZeRO contract: flat per-dtype buffers
// partitioned across the data-parallel ranks, the collectives that move them,
// host offload, and dynamic loss scaling. See docs/RationaleZero.md.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_DIALECT_ZERO_ZERODIALECT_TD
#define ZEROC_DIALECT_ZERO_ZERODIALECT_TD

include "mlir/IR/OpBase.td"

def Zero_Dialect : Dialect {
  let name = "zero";
  let cppNamespace = "::zeroc::zero";
  let summary = "ZeRO-sharded training state and its collectives";
  let description = [{
    The `zero` dialect makes the contract of DeepSpeed's ZeRO stages 0-3
    explicit in the IR. Trainable tensors of one element type are packed into
    a flat buffer (`!zero.flat`) whose size is padded to a multiple of the
    data-parallel world size, so that every rank owns one contiguous slice of
    it (`!zero.shard`). Which buffers are partitioned depends on the stage:
    optimizer state from stage 1, gradients from stage 2, parameters in
    stage 3.

    Collectives convert between the two views: `zero.all_gather` rebuilds a
    flat buffer from every rank's shard, `zero.reduce_scatter` reduces a flat
    gradient buffer and leaves each rank its shard, `zero.all_reduce` reduces
    a whole value (stage 0 gradients, the overflow flag, the gradient norm).
    Each collective has an asynchronous `_start` form returning a
    `!zero.token` that one `zero.wait` completes, so that passes can overlap
    communication with compute. `zero.release` ends the life of a gathered
    parameter buffer, `zero.offload`/`zero.fetch` move shards between device
    and host memory, and `zero.scale_loss`/`zero.unscale`/`zero.update_scale`
    implement DeepSpeed's dynamic loss scaler.

    A stage 3 forward reads a layer's weight like this:

    ```mlir
    %t = zero.all_gather_start %w_shard
        : !zero.shard<params, f16, 2048, device> -> !zero.token<!zero.flat<params, f16, 8192, 4>>
    // ... compute that does not need the weight ...
    %w_flat = zero.wait %t
        : !zero.token<!zero.flat<params, f16, 8192, 4>> -> !zero.flat<params, f16, 8192, 4>
    %w = zero.view %w_flat {offset = 0} : !zero.flat<params, f16, 8192, 4> -> tensor<64x128xf16>
    // ... last use of %w ...
    zero.release %w_flat : !zero.flat<params, f16, 8192, 4>
    ```
  }];
  let usePropertiesForAttributes = 0;
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    // Defined in ZeroTypes.cpp, next to the generated storage classes.
    void registerAttributes();
    void registerTypes();
  }];
}

#endif // ZEROC_DIALECT_ZERO_ZERODIALECT_TD
