//===- ZeroTypes.td - zero dialect types -------------------*- tablegen -*-===//
//
// Flat partitioned buffers, one rank's shard of them, and tokens for
// in-flight asynchronous collectives.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_DIALECT_ZERO_ZEROTYPES_TD
#define ZEROC_DIALECT_ZERO_ZEROTYPES_TD

include "mlir/IR/AttrTypeBase.td"
include "zeroc/Dialect/Zero/ZeroAttrs.td"

class Zero_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Zero_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

//===----------------------------------------------------------------------===//
// FlatType
//===----------------------------------------------------------------------===//

def Zero_FlatType : Zero_Type<"Flat", "flat"> {
  let summary = "a flat per-dtype buffer partitioned across the ranks";
  let description = [{
    A one-dimensional buffer of `size` elements of `elementType` holding
    model state of one `kind`, laid out identically on every rank. `size` is
    padded to a multiple of `world`, the data-parallel world size, so that
    rank `r` owns the contiguous slice `[r * size / world, (r + 1) * size /
    world)`, a `!zero.shard` of `size / world` elements. Padding elements
    are zero and belong to no tensor.

    A value of this type is the whole buffer: the packed parameters before
    partitioning, the gathered parameters after `zero.all_gather`, or the
    full local gradient buffer before `zero.reduce_scatter`.

    ```mlir
    !zero.flat<params, f16, 8192, 4>
    ```
  }];
  let parameters = (ins
    EnumParameter<Zero_BufferKind>:$kind,
    "::mlir::Type":$elementType,
    "int64_t":$size,
    "int64_t":$world
  );
  let assemblyFormat = "`<` $kind `,` $elementType `,` $size `,` $world `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Number of elements each rank owns.
    int64_t getShardSize() const { return getSize() / getWorld(); }
    /// The type of one rank's slice of this buffer in `space`.
    ShardType getShardType(MemorySpace space = MemorySpace::Device) const;
  }];
}

//===----------------------------------------------------------------------===//
// ShardType
//===----------------------------------------------------------------------===//

def Zero_ShardType : Zero_Type<"Shard", "shard"> {
  let summary = "one rank's contiguous slice of a flat buffer";
  let description = [{
    The `size` elements of a `!zero.flat` buffer that the current rank owns,
    `size` being the flat size divided by the world size. `space` says
    whether the slice is in device memory or was offloaded to host memory.
    Optimizer steps run on shards; collectives turn shards into flat buffers
    and back.

    ```mlir
    !zero.shard<optim_state, f32, 2048, host>
    ```
  }];
  let parameters = (ins
    EnumParameter<Zero_BufferKind>:$kind,
    "::mlir::Type":$elementType,
    "int64_t":$size,
    EnumParameter<Zero_MemorySpace>:$space
  );
  let assemblyFormat = "`<` $kind `,` $elementType `,` $size `,` $space `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// TokenType
//===----------------------------------------------------------------------===//

def Zero_TokenType : Zero_Type<"Token", "token"> {
  let summary = "an in-flight asynchronous collective";
  let description = [{
    Produced by a `zero.*_start` op and consumed by exactly one `zero.wait`,
    which yields the collective's result, a value of type `payload`. Between
    the two, the collective runs on the communication stream while the
    compute stream continues.

    ```mlir
    !zero.token<!zero.shard<grads, f32, 2048, device>>
    ```
  }];
  let parameters = (ins "::mlir::Type":$payload);
  let assemblyFormat = "`<` $payload `>`";
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

/// A token whose payload satisfies `payload`.
class Zero_TokenOf<Type payload> : Type<
    And<[Zero_TokenType.predicate,
         SubstLeaves<"$_self",
             "::llvm::cast<::zeroc::zero::TokenType>($_self).getPayload()",
             payload.predicate>]>,
    "token of " # payload.summary, "::zeroc::zero::TokenType">;

/// What zero.all_reduce reduces: a flat buffer or a statically shaped tensor.
def Zero_AllReducible : AnyTypeOf<[Zero_FlatType, AnyStaticShapeTensor],
    "flat buffer or statically shaped tensor">;

#endif // ZEROC_DIALECT_ZERO_ZEROTYPES_TD
