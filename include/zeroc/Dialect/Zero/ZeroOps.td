//===- ZeroOps.td - zero dialect ops -----------------------*- tablegen -*-===//
//
// Ops of the zero dialect: packing tensors into flat buffers, partitioning,
// the three collectives in sync and async form, buffer lifetime, host
// offload, and dynamic loss scaling. This file includes the dialect, enum and
// type definitions, so it is the root for the generated dialect docs.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_DIALECT_ZERO_ZEROOPS_TD
#define ZEROC_DIALECT_ZERO_ZEROOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "zeroc/Dialect/Zero/ZeroDialect.td"
include "zeroc/Dialect/Zero/ZeroAttrs.td"
include "zeroc/Dialect/Zero/ZeroTypes.td"

//===----------------------------------------------------------------------===//
// Side-effect resources
//===----------------------------------------------------------------------===//

// The sequence of collective calls. Every rank must issue collectives in the
// same order, so ops touching this resource are never reordered, merged or
// deleted by generic passes.
def Zero_CommResource : Resource<"::zeroc::zero::CommResource">;

// The host/device copy queue used by offload and fetch.
def Zero_TransferResource : Resource<"::zeroc::zero::TransferResource">;

// The persistent training state the runtime keeps between micro-steps:
// parameter replicas or shards, and the gradient accumulators.
def Zero_StateResource : Resource<"::zeroc::zero::StateResource">;

// A collective: reads and writes the collective sequence.
defvar Zero_CommEffects = MemoryEffects<[MemRead<Zero_CommResource>,
                                         MemWrite<Zero_CommResource>]>;

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

class Zero_Op<string mnemonic, list<Trait> traits = []>
    : Op<Zero_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Packing and partitioning
//===----------------------------------------------------------------------===//

def Zero_PackOp : Zero_Op<"pack", [Pure]> {
  let summary = "copies tensors into a flat buffer at element offsets";
  let description = [{
    Builds a flat buffer holding `inputs[i]`, flattened in row-major order,
    at element range `[offsets[i], offsets[i] + numel(inputs[i]))`. There is
    one offset per input, ranges lie inside the buffer and do not overlap,
    and every input has the buffer's element type. Elements covered by no
    range (alignment and world-size padding) are zero.

    ```mlir
    %flat = zero.pack %w, %b {offsets = [0, 12]}
        : (tensor<3x4xf32>, tensor<3xf32>) -> !zero.flat<params, f32, 16, 4>
    ```
  }];
  let arguments = (ins Variadic<AnyStaticShapeTensor>:$inputs,
                   I64ArrayAttr:$offsets);
  let results = (outs Zero_FlatType:$result);
  let assemblyFormat = [{
    $inputs attr-dict `:` functional-type($inputs, results)
  }];
  let hasVerifier = 1;
}

def Zero_ViewOp : Zero_Op<"view", [Pure]> {
  let summary = "a tensor view of a gathered flat buffer";
  let description = [{
    Reads `numel(result)` elements starting at element `offset` of a whole
    (packed or gathered) flat buffer, reshaped row-major to the result type.
    The range lies inside the buffer and the element types agree; it is the
    inverse of one `zero.pack` input.

    ```mlir
    %w = zero.view %flat {offset = 0} : !zero.flat<params, f32, 16, 4> -> tensor<3x4xf32>
    ```
  }];
  let arguments = (ins Zero_FlatType:$buffer,
                   ConfinedAttr<I64Attr, [IntNonNegative]>:$offset);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $buffer attr-dict `:` qualified(type($buffer)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Zero_PartitionOp : Zero_Op<"partition", [Pure]> {
  let summary = "this rank's slice of a flat buffer";
  let description = [{
    Takes the contiguous `size / world` elements of `buffer` that the
    current rank owns, into device memory. Used once at initialization,
    after which the full buffer of a partitioned kind is never materialized
    again outside collectives.

    ```mlir
    %s = zero.partition %flat : !zero.flat<params, f32, 16, 4> -> !zero.shard<params, f32, 4, device>
    ```
  }];
  let arguments = (ins Zero_FlatType:$buffer);
  let results = (outs Zero_ShardType:$result);
  let assemblyFormat = [{
    $buffer attr-dict `:` qualified(type($buffer)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Synchronous collectives
//===----------------------------------------------------------------------===//

def Zero_AllGatherOp : Zero_Op<"all_gather", [Zero_CommEffects]> {
  let summary = "rebuilds a flat buffer from every rank's shard";
  let description = [{
    Concatenates the device shards of all `world` ranks in rank order. The
    result has the shard's kind and element type and `world` times its
    size. In stage 3 this gathers a layer's parameters before use; in
    stages 1 and 2 it distributes the updated parameter shards after the
    optimizer step.

    ```mlir
    %f = zero.all_gather %s : !zero.shard<params, f16, 2048, device> -> !zero.flat<params, f16, 8192, 4>
    ```
  }];
  let arguments = (ins Zero_ShardType:$shard);
  let results = (outs Zero_FlatType:$result);
  let assemblyFormat = [{
    $shard attr-dict `:` qualified(type($shard)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Zero_ReduceScatterOp : Zero_Op<"reduce_scatter", [Zero_CommEffects]> {
  let summary = "reduces a flat buffer across ranks and keeps this rank's slice";
  let description = [{
    Reduces `buffer` elementwise across all ranks with `reduction` (`sum` or
    `avg`), multiplies by `scale` when present, and returns the current
    rank's device shard of the result. This is how stage 2 and 3 gradients
    reach the rank that owns their optimizer state. `scale` carries extra
    linear factors such as DeepSpeed's `gradient_predivide_factor`; the
    lowering may apply it before or after the reduction.

    ```mlir
    %g = zero.reduce_scatter %grads {reduction = #zero<reduction avg>}
        : !zero.flat<grads, f32, 8192, 4> -> !zero.shard<grads, f32, 2048, device>
    ```
  }];
  let arguments = (ins Zero_FlatType:$buffer, Zero_ReduceKindAttr:$reduction,
                   OptionalAttr<F64Attr>:$scale);
  let results = (outs Zero_ShardType:$result);
  let assemblyFormat = [{
    $buffer attr-dict `:` qualified(type($buffer)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Zero_AllReduceOp : Zero_Op<"all_reduce",
    [Zero_CommEffects, AllTypesMatch<["input", "result"]>]> {
  let summary = "reduces a value across ranks, every rank keeping the result";
  let description = [{
    Reduces `input` elementwise across all ranks with `reduction` and
    multiplies by `scale` when present. The operand is a whole flat buffer
    (stage 0 gradients) or a statically shaped tensor: the local overflow
    flag (`tensor<i1>`, reduced with `max`) or a partial squared gradient
    norm (reduced with `sum`). `avg` needs a floating-point element type and
    an `i1` value can only be reduced with `max`.

    ```mlir
    %any = zero.all_reduce %overflow {reduction = #zero<reduction max>} : tensor<i1>
    %g = zero.all_reduce %grads {reduction = #zero<reduction avg>} : !zero.flat<grads, f32, 8192, 4>
    ```
  }];
  let arguments = (ins Zero_AllReducible:$input,
                   Zero_ReduceKindAttr:$reduction,
                   OptionalAttr<F64Attr>:$scale);
  let results = (outs Zero_AllReducible:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input))";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Asynchronous collectives
//===----------------------------------------------------------------------===//

class Zero_StartOp<string mnemonic, string syncOp>
    : Zero_Op<mnemonic, [Zero_CommEffects]> {
  // The start/wait pair shown in the description; it ends in a newline and
  // two spaces, so the closing fence lines up with the text.
  string example = ?;
  let summary = "starts a `zero." # syncOp # "` without waiting for it";
  let description = [{
    Issues the same collective as `zero.}] # syncOp # [{`, with the same
    operands, attributes and type rules, on the communication stream, and
    returns a token whose payload is the type the synchronous op would
    return. The token has exactly one use, a `zero.wait`, which produces
    the value; the collective's buffers must not be touched in between.

    ```mlir}] # example # [{  ```
  }];
  let hasVerifier = 1;
}

def Zero_AllGatherStartOp : Zero_StartOp<"all_gather_start", "all_gather"> {
  let example = [{
    %t = zero.all_gather_start %s : !zero.shard<params, f16, 2048, device> -> !zero.token<!zero.flat<params, f16, 8192, 4>>
    %f = zero.wait %t : !zero.token<!zero.flat<params, f16, 8192, 4>> -> !zero.flat<params, f16, 8192, 4>
  }];
  let arguments = (ins Zero_ShardType:$shard);
  let results = (outs Zero_TokenOf<Zero_FlatType>:$token);
  let assemblyFormat = [{
    $shard attr-dict `:` qualified(type($shard)) `->` qualified(type($token))
  }];
}

def Zero_ReduceScatterStartOp : Zero_StartOp<"reduce_scatter_start",
    "reduce_scatter"> {
  let example = [{
    %t = zero.reduce_scatter_start %g {reduction = #zero<reduction avg>} : !zero.flat<grads, f32, 8192, 4> -> !zero.token<!zero.shard<grads, f32, 2048, device>>
    %s = zero.wait %t : !zero.token<!zero.shard<grads, f32, 2048, device>> -> !zero.shard<grads, f32, 2048, device>
  }];
  let arguments = (ins Zero_FlatType:$buffer, Zero_ReduceKindAttr:$reduction,
                   OptionalAttr<F64Attr>:$scale);
  let results = (outs Zero_TokenOf<Zero_ShardType>:$token);
  let assemblyFormat = [{
    $buffer attr-dict `:` qualified(type($buffer)) `->` qualified(type($token))
  }];
}

def Zero_AllReduceStartOp : Zero_StartOp<"all_reduce_start", "all_reduce"> {
  let example = [{
    %t = zero.all_reduce_start %norm2 {reduction = #zero<reduction sum>} : tensor<f32> -> !zero.token<tensor<f32>>
    %n = zero.wait %t : !zero.token<tensor<f32>> -> tensor<f32>
  }];
  let arguments = (ins Zero_AllReducible:$input,
                   Zero_ReduceKindAttr:$reduction,
                   OptionalAttr<F64Attr>:$scale);
  let results = (outs Zero_TokenOf<Zero_AllReducible>:$token);
  let assemblyFormat = [{
    $input attr-dict `:` qualified(type($input)) `->` qualified(type($token))
  }];
}

def Zero_WaitOp : Zero_Op<"wait", [Zero_CommEffects]> {
  let summary = "completes an asynchronous collective";
  let description = [{
    Blocks the compute stream until the collective that produced `token`
    has finished and returns its result, whose type is the token's payload.

    ```mlir
    %f = zero.wait %t : !zero.token<!zero.flat<params, f16, 8192, 4>> -> !zero.flat<params, f16, 8192, 4>
    ```
  }];
  let arguments = (ins Zero_TokenType:$token);
  let results = (outs AnyType:$result);
  let assemblyFormat = [{
    $token attr-dict `:` qualified(type($token)) `->` qualified(type($result))
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$token), [{
      build($_builder, $_state,
            ::llvm::cast<TokenType>(token.getType()).getPayload(), token);
    }]>
  ];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Buffer lifetime and offload
//===----------------------------------------------------------------------===//

def Zero_ReleaseOp : Zero_Op<"release"> {
  let summary = "ends the lifetime of a gathered parameter buffer";
  let description = [{
    Frees the memory of a flat parameter buffer produced by `zero.all_gather`
    (or by the `zero.wait` of a `zero.all_gather_start`). The release is the
    buffer's last use in its block; the memory planner reuses the space.
    Stage 3 releases each layer's gathered parameters after their last use
    in the forward and again in the backward pass.

    ```mlir
    zero.release %f : !zero.flat<params, f16, 8192, 4>
    ```
  }];
  let arguments = (ins Arg<Zero_FlatType, "the gathered buffer",
                           [MemFree]>:$buffer);
  let assemblyFormat = "$buffer attr-dict `:` qualified(type($buffer))";
  let hasVerifier = 1;
}

def Zero_OffloadOp : Zero_Op<"offload",
    [MemoryEffects<[MemRead<Zero_TransferResource>,
                    MemWrite<Zero_TransferResource>]>]> {
  let summary = "copies a shard from device memory to host memory";
  let description = [{
    ZeRO-Offload: moves a shard to host memory, where the CPU optimizer step
    runs on it (optimizer state and fp32 gradients) or where it waits until
    it is fetched again (stage 3 parameters). Kind, element type and size
    are unchanged.

    ```mlir
    %h = zero.offload %g : !zero.shard<grads, f32, 2048, device> -> !zero.shard<grads, f32, 2048, host>
    ```
  }];
  let arguments = (ins Zero_ShardType:$shard);
  let results = (outs Zero_ShardType:$result);
  let assemblyFormat = [{
    $shard attr-dict `:` qualified(type($shard)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Zero_FetchOp : Zero_Op<"fetch",
    [MemoryEffects<[MemRead<Zero_TransferResource>,
                    MemWrite<Zero_TransferResource>]>]> {
  let summary = "copies a shard from host memory to device memory";
  let description = [{
    The reverse of `zero.offload`: brings an offloaded shard (typically the
    updated parameters) back to device memory. Kind, element type and size
    are unchanged.

    ```mlir
    %d = zero.fetch %h : !zero.shard<params, f16, 2048, host> -> !zero.shard<params, f16, 2048, device>
    ```
  }];
  let arguments = (ins Zero_ShardType:$shard);
  let results = (outs Zero_ShardType:$result);
  let assemblyFormat = [{
    $shard attr-dict `:` qualified(type($shard)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Loss scaling
//===----------------------------------------------------------------------===//

def Zero_ScaleLossOp : Zero_Op<"scale_loss",
    [Pure, AllTypesMatch<["loss", "result"]>]> {
  let summary = "multiplies the loss by the loss scale";
  let description = [{
    Returns `loss * scale`, the value the backward pass differentiates, so
    that small fp16 gradients do not flush to zero. `loss` is a
    floating-point scalar, `scale` the current fp32 loss scale.

    ```mlir
    %l = zero.scale_loss %loss, %scale : tensor<f16>, tensor<f32> -> tensor<f16>
    ```
  }];
  let arguments = (ins 0DTensorOf<[AnyFloat]>:$loss, 0DTensorOf<[F32]>:$scale);
  let results = (outs 0DTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $loss `,` $scale attr-dict `:` type($loss) `,` type($scale) `->`
    type($result)
  }];
}

def Zero_UnscaleOp : Zero_Op<"unscale",
    [Pure, AllTypesMatch<["grads", "result"]>]> {
  let summary = "divides a gradient shard by the loss scale and checks it";
  let description = [{
    Returns `grads / scale` and the local overflow flag, true when any
    element of `grads` is inf or NaN. Each rank checks only its own shard;
    the flags are then combined with `zero.all_reduce` and reduction `max`
    before `zero.update_scale` and the (possibly skipped) optimizer step.

    ```mlir
    %g, %of = zero.unscale %gs, %scale
        : !zero.shard<grads, f32, 2048, device>, tensor<f32> -> !zero.shard<grads, f32, 2048, device>, tensor<i1>
    ```
  }];
  let arguments = (ins Zero_ShardType:$grads, 0DTensorOf<[F32]>:$scale);
  let results = (outs Zero_ShardType:$result, 0DTensorOf<[I1]>:$overflow);
  let assemblyFormat = [{
    $grads `,` $scale attr-dict `:` qualified(type($grads)) `,` type($scale)
    `->` qualified(type($result)) `,` type($overflow)
  }];
  let hasVerifier = 1;
}

def Zero_UpdateScaleOp : Zero_Op<"update_scale", [Pure]> {
  let summary = "one step of DeepSpeed's dynamic loss scaler";
  let description = [{
    Computes the loss-scaler state after a step from the state before it and
    the globally reduced overflow flag, following DeepSpeed's
    `DynamicLossScaler.update_scale`. The state is the `scale`, `good_steps`
    (the number of clean steps since the last overflow, 0 initially) and
    `hysteresis` (the overflows still tolerated before the scale drops,
    `delayed_shift` initially). The attributes are DeepSpeed's scaler
    arguments: `scale_window` (`loss_scale_window`, 1000), `min_scale`
    (`min_loss_scale`, 1), `scale_factor` (2), `delayed_shift`
    (`hysteresis`, 2) and `consecutive_hysteresis` (false).

    On overflow (the step is skipped):
    - if `delayed_shift == 1` or `hysteresis == 1`, the scale becomes
      `max(scale / scale_factor, min_scale)` and hysteresis is unchanged;
    - otherwise the scale is kept and `hysteresis` decreases by one;
    - `good_steps` becomes 0.

    On a clean step:
    - `good_steps` increases by one;
    - with `consecutive_hysteresis`, `hysteresis` is reset to
      `delayed_shift`;
    - if the `good_steps` before the step is a positive multiple of
      `scale_window` (DeepSpeed >= 0.17.1), the scale is
      multiplied by `scale_factor` (without a cap) and, without
      `consecutive_hysteresis`, `hysteresis` is reset to `delayed_shift`.

    DeepSpeed stops the run when an overflow hits a scale already equal to
    `min_scale`; this op's result is then `min_scale`, and the lowering
    reports the error.

    ```mlir
    %s, %n, %h = zero.update_scale %scale, %good, %hyst, %overflow
        {scale_window = 1000 : i64, min_scale = 1.0 : f64, delayed_shift = 2 : i64}
        : tensor<f32>, tensor<i64>, tensor<i64>, tensor<i1> -> tensor<f32>, tensor<i64>, tensor<i64>
    ```
  }];
  let arguments = (ins 0DTensorOf<[F32]>:$scale,
                   0DTensorOf<[I64]>:$good_steps,
                   0DTensorOf<[I64]>:$hysteresis,
                   0DTensorOf<[I1]>:$overflow,
                   ConfinedAttr<I64Attr, [IntMinValue<1>]>:$scale_window,
                   F64Attr:$min_scale,
                   DefaultValuedAttr<F64Attr, "2.0">:$scale_factor,
                   ConfinedAttr<I64Attr, [IntMinValue<1>]>:$delayed_shift,
                   UnitAttr:$consecutive_hysteresis);
  let results = (outs 0DTensorOf<[F32]>:$new_scale,
                      0DTensorOf<[I64]>:$new_good_steps,
                      0DTensorOf<[I64]>:$new_hysteresis);
  let assemblyFormat = [{
    $scale `,` $good_steps `,` $hysteresis `,` $overflow attr-dict `:`
    type($scale) `,` type($good_steps) `,` type($hysteresis) `,` type($overflow)
    `->` type($new_scale) `,` type($new_good_steps) `,` type($new_hysteresis)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Persistent training state
//===----------------------------------------------------------------------===//

def Zero_ParamReplicaOp : Zero_Op<"param_replica",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     MemoryEffects<[MemRead<Zero_StateResource>]>]> {
  let summary = "the full, replicated value of a parameter (stages 0-2)";
  let description = [{
    Reads this rank's replica of the trainable `graph.param` named by
    `param`. Stages 0, 1 and 2 keep every parameter replicated; the
    optimizer step updates the replicas (stage 0) or all-gathers them from
    the updated shards (stages 1 and 2).

    ```mlir
    %w = zero.param_replica @fc.weight : tensor<7x10xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$param attr-dict `:` type($result)";
}

def Zero_ParamShardOp : Zero_Op<"param_shard",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     MemoryEffects<[MemRead<Zero_StateResource>]>]> {
  let summary = "this rank's slice of a partitioned parameter (stage 3)";
  let description = [{
    Reads this rank's contiguous slice of the parameter's flat buffer, which
    is the parameter flattened and zero-padded to a multiple of the world
    size. `zero.all_gather` rebuilds the whole buffer and `zero.view` the
    tensor.

    ```mlir
    %s = zero.param_shard @fc.weight : !zero.shard<params, f32, 18, device>
    %f = zero.all_gather %s : !zero.shard<params, f32, 18, device> -> !zero.flat<params, f32, 72, 4>
    %w = zero.view %f {offset = 0} : !zero.flat<params, f32, 72, 4> -> tensor<7x10xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param);
  let results = (outs Zero_ShardType:$result);
  let assemblyFormat = "$param attr-dict `:` qualified(type($result))";
}

def Zero_BufferLoadOp : Zero_Op<"buffer_load",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     MemoryEffects<[MemRead<Zero_StateResource>]>]> {
  let summary = "this rank's value of a model buffer (every stage)";
  let description = [{
    Reads this rank's copy of the `graph.buffer` named by `buffer` (a
    BatchNormalization's running statistic). Buffers are never partitioned:
    at every stage each rank keeps the whole buffer, as DeepSpeed keeps
    module buffers, and updates it from its own micro-batches.

    ```mlir
    %m = zero.buffer_load @bn.running_mean : tensor<8xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$buffer);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$buffer attr-dict `:` type($result)";
}

def Zero_BufferStoreOp : Zero_Op<"buffer_store",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     MemoryEffects<[MemRead<Zero_StateResource>, MemWrite<Zero_StateResource>]>]> {
  let summary = "stores a buffer's new value at the end of the micro-step";
  let description = [{
    Writes `value` into this rank's copy of the `graph.buffer` named by
    `buffer`. `zero-partition` places the stores after every other op of
    the micro-step, so that every `zero.buffer_load` of it (and every value
    computed from one, in the forward and the backward pass) sees the value
    the micro-step started with.

    ```mlir
    zero.buffer_store @bn.running_mean, %new : tensor<8xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$buffer, AnyStaticShapeTensor:$value);
  let assemblyFormat = "$buffer `,` $value attr-dict `:` type($value)";
}

def Zero_LossScaleOp : Zero_Op<"loss_scale",
    [MemoryEffects<[MemRead<Zero_StateResource>]>]> {
  let summary = "the current loss scale of the dynamic loss scaler";
  let description = [{
    Reads the scale the runtime's loss scaler chose for this optimizer step
    (DeepSpeed's `cur_scale`). `zero-scale-loss` seeds the backward pass with
    it, so every gradient comes out multiplied by the scale; the optimizer
    step unscales them and skips the step on overflow.

    ```mlir
    %s = zero.loss_scale : tensor<f32>
    ```
  }];
  let results = (outs 0DTensorOf<[F32]>:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def Zero_GradAccumulateOp : Zero_Op<"grad_accumulate",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     MemoryEffects<[MemRead<Zero_StateResource>, MemWrite<Zero_StateResource>]>]> {
  let summary = "adds a micro-batch gradient to the parameter's accumulator";
  let description = [{
    Stages 0 and 1 accumulate the full gradient tensor (the reduction happens
    once per optimizer step); stages 2 and 3 accumulate this rank's
    reduce-scattered shard of the gradient's flat buffer. The runtime zeroes
    the accumulators at the start of each optimizer step and averages them
    (divides by world size times accumulation steps) once at its end.

    ```mlir
    zero.grad_accumulate @fc.weight, %g : tensor<7x10xf32>
    zero.grad_accumulate @fc.weight, %s : !zero.shard<grads, f32, 18, device>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param,
                   AnyTypeOf<[AnyStaticShapeTensor, Zero_ShardType]>:$grad);
  let assemblyFormat = "$param `,` $grad attr-dict `:` qualified(type($grad))";
}

#endif // ZEROC_DIALECT_ZERO_ZEROOPS_TD
