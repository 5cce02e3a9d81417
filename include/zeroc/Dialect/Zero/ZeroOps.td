//===- ZeroOps.td - zero dialect ops -----------------------*- tablegen -*-===//
//
// Ops of the zero dialect: packing tensors into flat buffers, buckets, the
// three collectives in sync and async form, buffer lifetime, the persistent
// training state, and the optimizer step. This file includes the dialect, enum and
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

//===----------------------------------------------------------------------===//
// Buckets: several tensors in one collective (zero-bucket)
//===----------------------------------------------------------------------===//

// A bucket is a flat buffer laid out rank-major: rank r's slice is the
// concatenation of rank r's shard of every member, so one reduce-scatter or
// all-gather of the bucket moves each member exactly as its own collective
// would. A member's shard is its tensor flattened, zero-padded to a multiple
// of the world size W, and cut into W equal parts (rank r owns part r):
// ceil(numel / W) elements.

def Zero_PackShardsOp : Zero_Op<"pack_shards", [Pure]> {
  let summary = "copies tensors into a bucket, every rank's slice holding its shards";
  let description = [{
    Builds a flat buffer of `world` slices of `size / world` elements each
    in which rank `r`'s slice holds rank `r`'s shard of `inputs[i]` at
    element offset `offsets[i]`. A shard of a tensor of `n` elements is
    `k = ceil(n / world)` elements: rank `r`'s are elements
    `[r * k, (r + 1) * k)` of the tensor flattened row-major and
    zero-padded to `world * k`. Elements covered by no shard are zero.

    A `zero.reduce_scatter` of the result leaves each rank the
    concatenation of its shards of every input, the same values each input's
    own `zero.pack` and `zero.reduce_scatter` would give it; `zero.shard_slice`
    takes them apart. There is one offset per input; shard ranges
    `[offsets[i], offsets[i] + k)` lie inside one slice and do not overlap,
    and every input has the buffer's element type.

    ```mlir
    // World 2: rank 0's slice is [a0 a1 a2 b0 b1], rank 1's [a3 a4 0 b2 b3].
    %bucket = zero.pack_shards %a, %b {offsets = [0, 3]}
        : (tensor<5xf32>, tensor<2x2xf32>) -> !zero.flat<grads, f32, 10, 2>
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

def Zero_ShardSliceOp : Zero_Op<"shard_slice", [Pure]> {
  let summary = "a contiguous part of a shard, without a copy";
  let description = [{
    Names the `size(result)` elements of `shard` starting at element
    `offset`: one member's shard in the reduce-scattered shard of a bucket.
    Kind, element type and memory space are the operand's, and the range
    lies inside it. Like `zero.view` it aliases its operand's storage.

    ```mlir
    %s = zero.reduce_scatter %bucket {reduction = #zero<reduction sum>}
        : !zero.flat<grads, f32, 10, 2> -> !zero.shard<grads, f32, 5, device>
    %b = zero.shard_slice %s {offset = 3}
        : !zero.shard<grads, f32, 5, device> -> !zero.shard<grads, f32, 2, device>
    ```
  }];
  let arguments = (ins Zero_ShardType:$shard,
                   ConfinedAttr<I64Attr, [IntNonNegative]>:$offset);
  let results = (outs Zero_ShardType:$result);
  let assemblyFormat = [{
    $shard attr-dict `:` qualified(type($shard)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Zero_ConcatShardsOp : Zero_Op<"concat_shards", [Pure]> {
  let summary = "copies shards end to end into one shard";
  let description = [{
    Lays the input shards end to end in operand order: this rank's slice of
    a bucket, built from its shard of each member. Every input has the
    result's kind, element type and memory space, and the result's size is
    the sum of theirs. Stage 3 gathers a parameter bucket this way; member
    `i`'s shards then lie at the sum of the sizes before it in every slice
    of the gathered buffer.

    ```mlir
    %s = zero.concat_shards %a, %b
        : (!zero.shard<params, f32, 3, device>, !zero.shard<params, f32, 2, device>)
        -> !zero.shard<params, f32, 5, device>
    ```
  }];
  let arguments = (ins Variadic<Zero_ShardType>:$inputs);
  let results = (outs Zero_ShardType:$result);
  let assemblyFormat = [{
    $inputs attr-dict `:` functional-type($inputs, results)
  }];
  let hasVerifier = 1;
}

def Zero_UnpackShardsOp : Zero_Op<"unpack_shards", [Pure]> {
  let summary = "copies tensors out of a bucket's shards";
  let description = [{
    The inverse of `zero.pack_shards` inputs: result `i` reads the `k`
    elements at `offsets[i]` of each of the `world` slices of `buffer`, in
    rank order, and keeps the first `numel(result)` of them, reshaped
    row-major to the result type (`k = ceil(numel(result) / world)`).
    Unlike `zero.view` it copies, because a member's elements are spread
    over every slice. Stage 3 reads the parameters of a gathered bucket
    this way, all of them in one op (one call, on a GPU one launch). Each
    range `[offset, offset + k)` lies inside a slice and the element types
    agree.

    ```mlir
    %f = zero.all_gather %s : !zero.shard<params, f32, 5, device> -> !zero.flat<params, f32, 10, 2>
    %a, %b = zero.unpack_shards %f {offsets = [0, 3]} : !zero.flat<params, f32, 10, 2> -> tensor<5xf32>, tensor<2x2xf32>
    ```
  }];
  let arguments = (ins Zero_FlatType:$buffer, I64ArrayAttr:$offsets);
  let results = (outs Variadic<AnyStaticShapeTensor>:$results);
  let assemblyFormat = [{
    $buffer attr-dict `:` qualified(type($buffer)) `->` qualified(type($results))
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

    With `in_place` (zero-plan-buffers, one rank only, where the shard is
    its whole buffer) the result is the shard's storage: a stage-3
    parameter gathered on one rank is a view of the rank's shard, and the
    gather moves nothing.
  }];
  let arguments = (ins Zero_ShardType:$shard, UnitAttr:$in_place);
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

    With `in_place`, the result is written over the first shard-size
    elements of `buffer` itself and is that storage (MPI's `MPI_IN_PLACE`):
    stage 1 reduces its gradient accumulators this way during backward, and
    `@train_step` reads the shard as the accumulator's first elements.

    ```mlir
    %g = zero.reduce_scatter %grads {reduction = #zero<reduction avg>}
        : !zero.flat<grads, f32, 8192, 4> -> !zero.shard<grads, f32, 2048, device>
    ```
  }];
  let arguments = (ins Zero_FlatType:$buffer, Zero_ReduceKindAttr:$reduction,
                   OptionalAttr<F64Attr>:$scale, UnitAttr:$in_place);
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
  // More paragraphs of the description (empty, or ending in a blank line).
  string notes = "";
  let summary = "starts a `zero." # syncOp # "` without waiting for it";
  let description = [{
    Issues the same collective as `zero.}] # syncOp # [{`, with the same
    operands, attributes and type rules, on the communication stream, and
    returns a token whose payload is the type the synchronous op would
    return. The token has exactly one use, a `zero.wait`, which produces
    the value; the collective's buffers must not be touched in between.

    }] # notes # [{```mlir}] # example # [{  ```
  }];
  let hasVerifier = 1;
}

def Zero_AllGatherStartOp : Zero_StartOp<"all_gather_start", "all_gather"> {
  let example = [{
    %t = zero.all_gather_start %s : !zero.shard<params, f16, 2048, device> -> !zero.token<!zero.flat<params, f16, 8192, 4>>
    %f = zero.wait %t : !zero.token<!zero.flat<params, f16, 8192, 4>> -> !zero.flat<params, f16, 8192, 4>
  }];
  let notes = [{Across the step boundary (zero-overlap, stage 3): a start in
    `@train_step` with `carry = N` is waited for by the next
    `@train_micro_step`, not in its own function; its token has no use.
    That micro-step's start with `carried = N` (the same shard, type and
    arena storage) issues its gather, and packs its shards when a
    `zero.concat_shards` used only by it makes its operand, only when the
    carry did not run (the first step, a step skipped on overflow, the
    later micro-steps of a step); either way its `zero.wait` completes the
    gather. The program's end waits for a carry no micro-step took.

    }];
  let arguments = (ins Zero_ShardType:$shard, OptionalAttr<I64Attr>:$carry,
                   OptionalAttr<I64Attr>:$carried, UnitAttr:$in_place);
  let results = (outs Zero_TokenOf<Zero_FlatType>:$token);
  let extraClassDeclaration = [{
    /// N of a carry or a carried start; none for any other start.
    std::optional<int64_t> getCarryIndex() {
      std::optional<uint64_t> k = getCarry() ? getCarry() : getCarried();
      return k ? std::optional<int64_t>(static_cast<int64_t>(*k)) : std::nullopt;
    }
  }];
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
                   OptionalAttr<F64Attr>:$scale, UnitAttr:$in_place);
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
// Buffer lifetime
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
  let results = (outs 0DTensorOf<[F32, F64]>:$result);
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

    With `in_place` (zero-plan-buffers, one micro-step per optimizer step,
    the gradient of the accumulator's element type and used by nothing
    else) the op that produces the gradient writes it into the accumulator
    itself, and this op only marks where the accumulation is complete.
  }];
  let arguments = (ins FlatSymbolRefAttr:$param,
                   AnyTypeOf<[AnyStaticShapeTensor, Zero_ShardType]>:$grad,
                   UnitAttr:$in_place);
  let assemblyFormat = "$param `,` $grad attr-dict `:` qualified(type($grad))";
}


def Zero_GradAccumulateRowsOp : Zero_Op<"grad_accumulate_rows",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>, Zero_CommEffects,
     MemoryEffects<[MemRead<Zero_StateResource>, MemWrite<Zero_StateResource>]>]> {
  let summary = "adds every rank's embedding-row gradient to this rank's accumulator";
  let description = [{
    Stages 2-3 (zero-partition): the gradient of an embedding lookup (a
    `graph.gather_grad` on axis 0 of the parameter's shape) is `rows` (the
    lookup's result gradient: the indices' shape followed by one parameter
    row's) added at `indices`. Instead of materializing that mostly-zero
    tensor and reduce-scattering it, every rank all-gathers every rank's
    indices and rows and adds, in rank order, the rows that fall into its
    own shard of the flat, zero-padded gradient to its accumulator;
    repeated indices accumulate, a negative index counts from the end, and
    rows at `padding_idx` add nothing. The result is the reduce-scatter of
    the dense gradient up to the order of the additions. A parameter may
    have one such accumulation besides its `zero.grad_accumulate` (a tied
    embedding's dense head gradient).

    ```mlir
    zero.grad_accumulate_rows @wte, %dy, %idx : tensor<2x8x32xf32>, tensor<2x8xi64>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param, AnyStaticShapeTensor:$rows,
                   AnyStaticShapeTensor:$indices,
                   OptionalAttr<I64Attr>:$padding_idx);
  let assemblyFormat = [{
    $param `,` $rows `,` $indices attr-dict `:` type($rows) `,` type($indices)
  }];
}

//===----------------------------------------------------------------------===//
// The optimizer step
//===----------------------------------------------------------------------===//

def Zero_GradAccumulatorOp : Zero_Op<"grad_accumulator",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     MemoryEffects<[MemRead<Zero_StateResource>]>]> {
  let summary = "the gradient a parameter accumulated over the micro-steps";
  let description = [{
    In `@train_step`: this rank's accumulator of the trainable parameter
    `param`, the sum of its micro-batch gradients (already divided by the
    accumulation steps and multiplied by the loss scale). Stage 0 holds the
    full gradient (a tensor of the parameter's shape), stage 1 the full
    gradient zero-padded to the flat buffer, stages 2-3 the rank's
    reduce-scattered shard. The value is the accumulator itself: a
    `zero.all_reduce` of it reduces in place.

    ```mlir
    %g = zero.grad_accumulator @fc.weight : tensor<7x10xf32>
    %g1 = zero.grad_accumulator @fc.weight : !zero.flat<grads, f32, 72, 4>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param);
  let results = (outs AnyTypeOf<[AnyStaticShapeTensor, Zero_FlatType,
                                 Zero_ShardType]>:$result);
  let assemblyFormat = "$param attr-dict `:` qualified(type($result))";
}

def Zero_HasOverflowOp : Zero_Op<"has_overflow", [Pure]> {
  let summary = "whether any element of the gradients is inf or NaN";
  let description = [{
    The local overflow flag of DeepSpeed's loss scaler: true when an element
    of any operand is inf or NaN. Each rank checks the gradients it reduced
    (stage 0: the full ones, stages 1-3: its shards); `zero.all_reduce` with
    `max` makes the flag global.

    ```mlir
    %of = zero.has_overflow %g0, %g1 : tensor<7x10xf32>, !zero.shard<grads, f32, 2, device> -> tensor<i1>
    ```
  }];
  let arguments = (ins Variadic<AnyTypeOf<[AnyStaticShapeTensor, Zero_FlatType,
                                           Zero_ShardType]>>:$grads);
  let results = (outs 0DTensorOf<[I1]>:$result);
  let assemblyFormat = [{
    $grads attr-dict `:` qualified(type($grads)) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Zero_SumSquaresOp : Zero_Op<"sum_squares", [Pure]> {
  let summary = "the sum of squares of the gradients, in f64";
  let description = [{
    Adds the squares of every element of every operand, in operand order and
    in double precision: this rank's part of the global gradient norm
    (stage 0: of the full gradients; stages 1-3 of its shards, summed over
    ranks with `zero.all_reduce`).

    ```mlir
    %ss = zero.sum_squares %g0, %g1 : tensor<7x10xf32>, tensor<7xf32> -> tensor<f64>
    ```
  }];
  let arguments = (ins Variadic<AnyTypeOf<[AnyStaticShapeTensor, Zero_FlatType,
                                           Zero_ShardType]>>:$grads);
  let results = (outs 0DTensorOf<[F64]>:$result);
  let assemblyFormat = [{
    $grads attr-dict `:` qualified(type($grads)) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Zero_NonFiniteOp : Zero_Op<"non_finite", [Pure]> {
  let summary = "whether a sum of squares is inf or NaN";
  let description = [{
    True when `sum_squares` is inf or NaN. zero-overflow-from-norm reads the
    loss scaler's overflow flag this way off the global sum of squares of
    16-bit or f32 gradients: a square of a finite f32 is below 2^256, so in
    f64 the sum is non-finite exactly when an element of some rank's
    gradients is inf or NaN (the flag `zero.has_overflow` and an all-reduce
    `max` would give).

    ```mlir
    %of = zero.non_finite %ss : tensor<f64> -> tensor<i1>
    ```
  }];
  let arguments = (ins 0DTensorOf<[F64]>:$sum_squares);
  let results = (outs 0DTensorOf<[I1]>:$result);
  let assemblyFormat = [{
    $sum_squares attr-dict `:` type($sum_squares) `->` type($result)
  }];
}

def Zero_ClipGradNormOp : Zero_Op<"clip_grad_norm", [Pure]> {
  let summary = "the global gradient norm and the factor the update applies";
  let description = [{
    From the global sum of squares of the summed, still loss-scaled
    gradients: `norm = sqrt(sum_squares) / (world_size * scale)`, the L2
    norm of the averaged, unscaled gradients, and the factor every gradient
    is multiplied by before the update: `1 / (world_size * scale)`, divided
    by `(norm + 1e-6) / max_norm` when `max_norm > 0`, the norm is finite and
    that quotient exceeds 1 (DeepSpeed's `unscale_and_clip_grads`).
    `max_norm` 0 disables clipping.

    ```mlir
    %norm, %factor = zero.clip_grad_norm %ss, %scale {world_size = 2 : i64, max_norm = 1.0 : f64}
        : tensor<f64>, tensor<f64> -> tensor<f64>, tensor<f64>
    ```
  }];
  let arguments = (ins 0DTensorOf<[F64]>:$sum_squares, 0DTensorOf<[F64]>:$scale,
                   ConfinedAttr<I64Attr, [IntMinValue<1>]>:$world_size,
                   F64Attr:$max_norm);
  let results = (outs 0DTensorOf<[F64]>:$norm, 0DTensorOf<[F64]>:$factor);
  let assemblyFormat = [{
    $sum_squares `,` $scale attr-dict `:` type($sum_squares) `,` type($scale)
    `->` type($norm) `,` type($factor)
  }];
  let hasVerifier = 1;
}

def Zero_StepCountOp : Zero_Op<"step_count",
    [MemoryEffects<[MemRead<Zero_StateResource>]>]> {
  let summary = "the number of optimizer updates taken so far";
  let description = [{
    Adam's step count before this step and the LR scheduler's step: steps
    skipped for an overflow do not count. `zero.advance_step` increments it.

    ```mlir
    %t = zero.step_count : tensor<i64>
    ```
  }];
  let results = (outs 0DTensorOf<[I64]>:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def Zero_AdvanceStepOp : Zero_Op<"advance_step",
    [HasParent<"IfFiniteOp">,
     MemoryEffects<[MemRead<Zero_StateResource>, MemWrite<Zero_StateResource>]>]> {
  let summary = "counts one optimizer update";
  let description = [{
    Increments the count `zero.step_count` reads, once per update taken.

    ```mlir
    zero.advance_step
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def Zero_LrScheduleOp : Zero_Op<"lr_schedule", [Pure]> {
  let summary = "the learning rate and momentum of an optimizer step";
  let description = [{
    Evaluates `schedule` after `step` scheduler steps with `base_lr` the
    optimizer's lr: the step's `lr` and, for OneCycle with
    `cycle_momentum`, the cycled momentum (`base_momentum` otherwise).

    ```mlir
    %lr, %mom = zero.lr_schedule %t {schedule = #zero.lr_schedule<kind = warmup, warmup_num_steps = 10>,
        base_lr = 1.0e-3 : f64, base_momentum = 0.9 : f64} : tensor<i64> -> tensor<f64>, tensor<f64>
    ```
  }];
  let arguments = (ins 0DTensorOf<[I64]>:$step, Zero_LrScheduleAttr:$schedule,
                   F64Attr:$base_lr, F64Attr:$base_momentum);
  let results = (outs 0DTensorOf<[F64]>:$lr, 0DTensorOf<[F64]>:$momentum);
  let assemblyFormat = [{
    $step attr-dict `:` type($step) `->` type($lr) `,` type($momentum)
  }];
}

def Zero_UpdateLossScaleOp : Zero_Op<"update_loss_scale",
    [MemoryEffects<[MemRead<Zero_StateResource>, MemWrite<Zero_StateResource>]>]> {
  let summary = "one step of DeepSpeed's loss scaler";
  let description = [{
    Updates the scale `zero.loss_scale` reads from the global overflow flag,
    as `DynamicLossScaler.update_scale` does (a static scale never changes).
    On overflow:
    - if `hysteresis` is 1 or has run down to 1, the scale becomes
      `max(scale / scale_factor, min_scale)`; otherwise the scale is kept and
      one more overflow is tolerated less;
    - an overflow at a scale already equal to `min_scale` ends the run on
      every rank, as DeepSpeed does.
    On a clean step, after `scale_window` clean steps in a row the scale is
    multiplied by `scale_factor`, and `consecutive_hysteresis` restores the
    hysteresis. The engine logs DeepSpeed's `OVERFLOW!` line.

    ```mlir
    zero.update_loss_scale %overflow {scaler = #zero.loss_scaler<scale_window = 100>} : tensor<i1>
    ```
  }];
  let arguments = (ins 0DTensorOf<[I1]>:$overflow, Zero_LossScalerAttr:$scaler);
  let assemblyFormat = "$overflow attr-dict `:` type($overflow)";
}

def Zero_IfFiniteOp : Zero_Op<"if_finite",
    [SingleBlock, NoTerminator, RecursiveMemoryEffects]> {
  let summary = "runs the update unless the step overflowed";
  let description = [{
    Runs its region when `overflow` (the global flag) is false: the
    optimizer updates, the step count and the parameter all-gathers of a
    step that was not skipped. Every rank holds the same flag, so every
    rank runs the same collectives.

    ```mlir
    zero.if_finite %overflow : tensor<i1> {
      zero.adam_update @fc.weight, %g, %factor, %lr, %b1, %b2, %t {optimizer = #zero.adam<>}
          : tensor<7x10xf32>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<i64>
      zero.advance_step
    }
    ```
  }];
  let arguments = (ins 0DTensorOf<[I1]>:$overflow);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$overflow attr-dict `:` type($overflow) $body";
}

def Zero_AdamUpdateOp : Zero_Op<"adam_update",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     MemoryEffects<[MemRead<Zero_StateResource>, MemWrite<Zero_StateResource>]>]> {
  let summary = "one Adam/AdamW update of this rank's part of a parameter";
  let description = [{
    Multiplies `grad` (the reduced accumulator: the full gradient in stage
    0, the rank's shard in stages 1-3) by `factor`, in the optimizer's f32
    when the parameter has a master, and updates the parameter's elements
    this rank owns (stage 0: all of them; stages 1-2: its slice of the
    replica; stage 3: its shard) with Adam at step `step + 1`, learning rate
    `lr` and betas `beta1`, `beta2`; `optimizer` gives eps, weight decay and
    the modes. A parameter with an f32 master updates the master and rounds
    it back into the 16-bit parameter. Adam's m and v are this op's state.

    ```mlir
    zero.adam_update @fc.weight, %g, %factor, %lr, %b1, %b2, %t {optimizer = #zero.adam<weight_decay = 1.000000e-02>}
        : !zero.shard<grads, f32, 18, device>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<i64>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param,
                   AnyTypeOf<[AnyStaticShapeTensor, Zero_ShardType]>:$grad,
                   0DTensorOf<[F64]>:$factor, 0DTensorOf<[F64]>:$lr,
                   0DTensorOf<[F64]>:$beta1, 0DTensorOf<[F64]>:$beta2,
                   0DTensorOf<[I64]>:$step, Zero_AdamAttr:$optimizer);
  let assemblyFormat = [{
    $param `,` $grad `,` $factor `,` $lr `,` $beta1 `,` $beta2 `,` $step
    attr-dict `:` qualified(type($grad)) `,` type($factor) `,` type($lr) `,`
    type($beta1) `,` type($beta2) `,` type($step)
  }];
}

def Zero_AdamUpdateMultiOp : Zero_Op<"adam_update_multi",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     MemoryEffects<[MemRead<Zero_StateResource>, MemWrite<Zero_StateResource>]>]> {
  let summary = "the Adam updates of several parameters in one pass";
  let description = [{
    `zero.adam_update` of each parameter of `params` from the gradient of
    the same position in `grads`, with one factor, learning rate, betas,
    step and `optimizer`: the updates in one call (on a GPU, one launch).
    zero-fuse-optimizer-step makes it from consecutive `zero.adam_update`s
    that share those operands.

    ```mlir
    zero.adam_update_multi [@fc.weight, @fc.bias] (%gw, %gb), %factor, %lr, %b1, %b2, %t {optimizer = #zero.adam<>}
        : (!zero.shard<grads, f32, 35, device>, !zero.shard<grads, f32, 4, device>), tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<i64>
    ```
  }];
  let arguments = (ins FlatSymbolRefArrayAttr:$params,
                   Variadic<AnyTypeOf<[AnyStaticShapeTensor, Zero_ShardType]>>:$grads,
                   0DTensorOf<[F64]>:$factor, 0DTensorOf<[F64]>:$lr,
                   0DTensorOf<[F64]>:$beta1, 0DTensorOf<[F64]>:$beta2,
                   0DTensorOf<[I64]>:$step, Zero_AdamAttr:$optimizer);
  let assemblyFormat = [{
    $params `(` $grads `)` `,` $factor `,` $lr `,` $beta1 `,` $beta2 `,` $step
    attr-dict `:` `(` qualified(type($grads)) `)` `,` type($factor) `,`
    type($lr) `,` type($beta1) `,` type($beta2) `,` type($step)
  }];
  let hasVerifier = 1;
}

def Zero_SgdUpdateOp : Zero_Op<"sgd_update",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     MemoryEffects<[MemRead<Zero_StateResource>, MemWrite<Zero_StateResource>]>]> {
  let summary = "one SGD update of this rank's part of a parameter";
  let description = [{
    As `zero.adam_update`, with torch.optim.SGD's rule at learning rate
    `lr`; `optimizer` gives momentum, dampening, weight decay and nesterov.
    With a non-zero momentum its buffer is this op's state.

    ```mlir
    zero.sgd_update @fc.weight, %g, %factor, %lr, %t {optimizer = #zero.sgd<momentum = 9.000000e-01>}
        : tensor<7x10xf32>, tensor<f64>, tensor<f64>, tensor<i64>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param,
                   AnyTypeOf<[AnyStaticShapeTensor, Zero_ShardType]>:$grad,
                   0DTensorOf<[F64]>:$factor, 0DTensorOf<[F64]>:$lr,
                   0DTensorOf<[I64]>:$step, Zero_SgdAttr:$optimizer);
  let assemblyFormat = [{
    $param `,` $grad `,` $factor `,` $lr `,` $step attr-dict `:`
    qualified(type($grad)) `,` type($factor) `,` type($lr) `,` type($step)
  }];
}

def Zero_SgdUpdateMultiOp : Zero_Op<"sgd_update_multi",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     MemoryEffects<[MemRead<Zero_StateResource>, MemWrite<Zero_StateResource>]>]> {
  let summary = "the SGD updates of several parameters in one pass";
  let description = [{
    `zero.sgd_update` of each parameter of `params` from the gradient of
    the same position in `grads`, with one factor, learning rate, step and
    `optimizer`: the updates in one call (on a GPU, one launch).
    zero-fuse-optimizer-step makes it from consecutive `zero.sgd_update`s
    that share those operands.

    ```mlir
    zero.sgd_update_multi [@fc.weight, @fc.bias] (%gw, %gb), %factor, %lr, %t {optimizer = #zero.sgd<momentum = 9.000000e-01>}
        : (tensor<7x10xf32>, tensor<10xf32>), tensor<f64>, tensor<f64>, tensor<i64>
    ```
  }];
  let arguments = (ins FlatSymbolRefArrayAttr:$params,
                   Variadic<AnyTypeOf<[AnyStaticShapeTensor, Zero_ShardType]>>:$grads,
                   0DTensorOf<[F64]>:$factor, 0DTensorOf<[F64]>:$lr,
                   0DTensorOf<[I64]>:$step, Zero_SgdAttr:$optimizer);
  let assemblyFormat = [{
    $params `(` $grads `)` `,` $factor `,` $lr `,` $step attr-dict `:`
    `(` qualified(type($grads)) `)` `,` type($factor) `,` type($lr) `,`
    type($step)
  }];
  let hasVerifier = 1;
}

def Zero_GatherReplicaOp : Zero_Op<"gather_replica",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>, Zero_CommEffects,
     MemoryEffects<[MemRead<Zero_StateResource>, MemWrite<Zero_StateResource>]>]> {
  let summary = "all-gathers the updated slices of a replicated parameter";
  let description = [{
    Stages 1-2, and stage 3's `zero.persistent` parameters: every rank
    updated its `shard`-element slice of the parameter's padded replica;
    this all-gathers the slices in place, so that every replica holds the
    updated parameter. zero-bucket replaces consecutive ones with a bucket
    (`zero.replica_slice`, `zero.concat_shards`, `zero.all_gather`,
    `zero.unpack_replica`).

    ```mlir
    zero.gather_replica @fc.weight : !zero.shard<params, f32, 18, device>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param, TypeAttrOf<Zero_ShardType>:$shard);
  let assemblyFormat = "$param attr-dict `:` $shard";
}

def Zero_ReplicaSliceOp : Zero_Op<"replica_slice",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     MemoryEffects<[MemRead<Zero_StateResource>]>]> {
  let summary = "this rank's updated slice of a parameter's replica";
  let description = [{
    Names elements `[r * S, (r + 1) * S)` of rank `r`'s padded replica of
    the trainable parameter `param` (`S` the result's size), the slice the
    rank's update wrote: what a `zero.gather_replica` of the parameter
    sends. It aliases the replica (no copy). A bucket of replica gathers
    lays several of them end to end with `zero.concat_shards`.

    ```mlir
    %s = zero.replica_slice @fc.weight : !zero.shard<params, f32, 18, device>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$param);
  let results = (outs Zero_ShardType:$result);
  let assemblyFormat = "$param attr-dict `:` qualified(type($result))";
}

def Zero_UnpackReplicaOp : Zero_Op<"unpack_replica",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     MemoryEffects<[MemRead<Zero_StateResource>, MemWrite<Zero_StateResource>]>]> {
  let summary = "copies parameters out of a gathered bucket into their replicas";
  let description = [{
    The end of a bucketed `zero.gather_replica`: for parameter `i` of
    `params`, reads the `k` elements at `offsets[i]` of each of the `world`
    slices of the gathered `buffer`, in rank order, and writes the first
    `numel` of them into the replica of that trainable parameter
    (`k = ceil(numel / world)`), as `zero.unpack_shards` copies tensors
    out, but into the parameters' state: all of a bucket's members in one
    op (one call, on a GPU one launch). The buffer holds parameters of each
    parameter's element type and each range `[offset, offset + k)` lies
    inside a slice.

    ```mlir
    %f = zero.all_gather %c {zero.bucket = 0 : i64} : !zero.shard<params, f32, 20, device> -> !zero.flat<params, f32, 40, 2>
    zero.unpack_replica [@fc.weight, @fc.bias], %f {offsets = [0, 18]} : !zero.flat<params, f32, 40, 2>
    ```
  }];
  let arguments = (ins FlatSymbolRefArrayAttr:$params, Zero_FlatType:$buffer,
                   I64ArrayAttr:$offsets);
  let assemblyFormat = [{
    $params `,` $buffer attr-dict `:` qualified(type($buffer))
  }];
}

#endif // ZEROC_DIALECT_ZERO_ZEROOPS_TD
