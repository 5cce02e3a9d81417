//===- Passes.td - zeroc pass definitions ------------------*- tablegen -*-===//
#ifndef ZEROC_PASSES_PASSES_TD
#define ZEROC_PASSES_PASSES_TD

include "mlir/Pass/PassBase.td"

def VerifyImportedGraph : Pass<"zero-verify-imported-graph", "::mlir::ModuleOp"> {
  let summary = "checks the contract of an imported forward graph";
  let description = [{
    The phase-boundary verifier after ONNX import. It checks what every later
    pass relies on:

    * the module has exactly one `func.func @forward`;
    * every value in it (arguments, op results) is a statically shaped ranked
      tensor;
    * exactly one result carries `graph.loss`, and it is a floating-point
      scalar (`tensor<f32>` and friends);
    * every op in @forward belongs to the `graph` dialect or is `func.return`.

    Example of IR it rejects:

    ```mlir
    func.func @forward(%x: tensor<?x4xf32>) -> (tensor<f32> {graph.loss}) {
      ...
    }
    // error: 'func.func' op argument 0 must be a statically shaped tensor, got tensor<?x4xf32>
    ```
  }];
  let dependentDialects = ["::zeroc::graph::GraphDialect"];
  let options = [
    Option<"requireLoss", "require-loss", "bool", /*default=*/"true",
           "Require exactly one graph.loss result (off for inference graphs)">,
  ];
}

def Autodiff : Pass<"zero-autodiff", "::mlir::ModuleOp"> {
  let summary = "builds @forward_backward: the loss and every parameter's gradient";
  let description = [{
    Reverse-mode automatic differentiation of `@forward` through
    `DifferentiableOpInterface`. The pass adds

    ```mlir
    func.func @forward_backward(<@forward's arguments>)
        -> (tensor<f32> {graph.loss},
            tensor<...> {graph.grad_of = @p0}, tensor<...> {graph.grad_of = @p1}, ...)
    ```

    with one gradient per trainable `graph.param`, in declaration order. Only
    values that depend on a trainable parameter are differentiated, so
    integer and boolean paths (indices, masks, labels) and constants carry no
    gradient. A parameter loaded once and used several times (tied
    embeddings) accumulates its gradients with `graph.add`. A parameter the
    loss does not depend on gets a zero gradient. Dropout ops get distinct
    seeds so the backward pass replays their masks.

    Before: `%w = graph.load_param @w; %y = graph.mul %x, %w; ...`.
    After, in @forward_backward: the same forward ops, then
    `%gw = graph.sum_to (graph.mul %dy, %x)` and `return %loss, %gw`.
  }];
  let dependentDialects = ["::zeroc::graph::GraphDialect",
                           "::mlir::func::FuncDialect"];
}

def Partition : Pass<"zero-partition", "::mlir::ModuleOp"> {
  let summary = "turns @forward_backward into a ZeRO-sharded @train_micro_step";
  let description = [{
    Rewrites the parameter reads and gradient results of `@forward_backward`
    for a ZeRO stage and world size W. Every parameter, trainable or frozen,
    is a flat buffer of its elements zero-padded to a multiple of W; rank r
    owns the contiguous slice [r*S, (r+1)*S) with S = padded/W. Frozen
    parameters are read the same way but have no gradient to reduce.

    * Stages 0-2: `graph.load_param` becomes `zero.param_replica`.
    * Stage 3: before the first use in the forward pass, `zero.param_shard`
      + `zero.all_gather` + `zero.view`; `zero.release` after the last
      forward use; the same again around the backward uses.
    * Stage 3, reuse distance (DeepSpeed's `stage3_max_reuse_distance`):
      a parameter whose backward use comes before `max-reuse-distance`
      elements of other parameter uses (each other parameter's forward and
      backward use counted with its elements, as DeepSpeed counts the
      parameters of the modules it traverses) is gathered once, before its
      first forward use, and released after its last backward use; the
      gathered copy is reused instead of gathered again. 0: every pass
      gathers its own copy.
    * Stage 3, persistent parameters (DeepSpeed's
      `stage3_param_persistence_threshold` and
      `stage3_model_persistence_threshold`): in `graph.param` declaration
      order (DeepSpeed's `named_parameters`), a parameter, trainable or
      frozen, of at most `persistence-threshold` elements is persistent
      unless it would take the persistent elements so far past
      `model-persistence-threshold` (then it is skipped and later, smaller
      ones may still fit). A persistent parameter gets the unit attribute
      `zero.persistent` and is read through `zero.param_replica`, whole on
      every rank, as at stages 0-2; its gradient is reduce-scattered and its
      optimizer state partitioned like every stage-3 parameter's, and
      zero-step-boundary refreshes its replica after the update. Every
      later pass reads the attribute; none decides again.
    * Stages 0-1: each gradient is added to its full accumulator with
      `zero.grad_accumulate`.
    * Stages 2-3: each gradient is packed into its padded flat buffer,
      `zero.reduce_scatter`ed (sum) right after it is computed, and this
      rank's shard accumulated.

    The result is `func.func @train_micro_step(<inputs>) -> tensor<f32>`
    returning the micro-batch loss; the module gets `zero.stage` and
    `zero.world_size`. The op defining the returned loss, the last op of the
    forward pass, gets the unit attribute `zero.forward_end` (the backward
    pass starts after it; the emitter marks that point for
    wall_clock_breakdown's fwd/bwd timers). The per-step averaging (divide by W times the
    accumulation steps), the stage-0/1 reduction and the optimizer belong to
    the optimizer step that follows the micro-steps.
  }];
  let dependentDialects = ["::zeroc::graph::GraphDialect",
                           "::zeroc::zero::ZeroDialect"];
  let options = [
    Option<"stage", "stage", "int", /*default=*/"0", "ZeRO stage (0-3)">,
    Option<"worldSize", "world-size", "int", /*default=*/"1",
           "Number of data-parallel ranks">,
    Option<"persistenceThreshold", "persistence-threshold", "int64_t",
           /*default=*/"100000",
           "Stage 3: parameters of at most this many elements stay whole on "
           "every rank (DeepSpeed's stage3_param_persistence_threshold; 0: none)">,
    Option<"modelPersistenceThreshold", "model-persistence-threshold", "int64_t",
           /*default=*/"9223372036854775807",
           "Stage 3: most elements all persistent parameters hold together "
           "(DeepSpeed's stage3_model_persistence_threshold)">,
    Option<"maxReuseDistance", "max-reuse-distance", "int64_t",
           /*default=*/"1000000000",
           "Stage 3: a parameter used again in the backward pass within this "
           "many elements of other parameter uses keeps its forward gather "
           "(DeepSpeed's stage3_max_reuse_distance; 0: gather again)">,
  ];
}

def Bucket : Pass<"zero-bucket", "::mlir::ModuleOp"> {
  let summary = "merges consecutive per-parameter collectives into buckets";
  let description = [{
    DeepSpeed's `reduce_bucket_size` and `stage3_prefetch_bucket_size`: a
    bucket is one collective of a flat buffer laid out rank-major (rank r's
    slice is the concatenation of rank r's shard of every member), so that
    each rank receives exactly the shards its members' own collectives
    would give it. Sizes count the elements the collective moves: a
    member's numel padded to a multiple of the world size.

    * Stages 2-3, gradients: the `zero.pack` + `zero.reduce_scatter` +
      `zero.grad_accumulate` of each gradient are taken in program order
      (the order zero-partition put them in: the order gradients become
      final); consecutive ones of one element type are collected until the
      next would take the bucket past `reduce-bucket-size` (a gradient
      larger than that is a bucket of its own). A bucket of two or more is
      one `zero.pack_shards` + `zero.reduce_scatter`, placed where the last
      member's reduce-scatter was (right after its gradient is computed),
      and one `zero.shard_slice` + `zero.grad_accumulate` per member.
    * Stage 3, parameters: the `zero.param_shard` + `zero.all_gather` +
      `zero.view` + `zero.release` of each gathered parameter are bucketed
      the same way by `prefetch-bucket-size`, in program order, forward and
      backward gathers apart. A bucket is one `zero.concat_shards` +
      `zero.all_gather` before the first member's first use, one
      `zero.unpack_shards` copy per member, and the `zero.release` of the
      gathered bucket right after the copies; each member's copy lives
      until its own last use. On one rank the gathers stay apart: a gather
      moves nothing there (zero-plan-buffers makes it in place, a view of
      the rank's shard), where a bucket would copy the shards in and the
      parameters out.

    * `@train_step`, stages 0-1, by `reduce-bucket-size`: stage 0's
      `zero.all_reduce` of each full accumulator becomes one `zero.pack`
      of the accumulators end to end (padded once, at its end), one
      all-reduce and a `zero.view` per member; stage 1's
      `zero.reduce_scatter` of each padded accumulator becomes a
      rank-major `zero.pack_shards` of views of the accumulators, one
      reduce-scatter and a `zero.shard_slice` per member. The bucket goes
      where the last member's reduction was.
    * `@train_step`, by `allgather-bucket-size`: the `zero.gather_replica`
      ops (stages 1-2, stage 3's `zero.persistent` parameters), in order,
      become this rank's `zero.replica_slice` of each member, one
      `zero.concat_shards` + `zero.all_gather` and a `zero.unpack_replica`
      per member, where the last member's gather was. A replica whose
      gather is at least the cost model's efficient size (below) keeps its
      own `zero.gather_replica`, which writes into it in place; the
      smaller ones are bucketed. On one rank every replica keeps its own
      (in place, it runs nothing there).

    With `overlap` (overlap_comm), a gradient bucket also closes as soon as
    it holds enough elements that its ring reduce-scatter spends at most 2%
    of its time on fixed costs in the α–β model of `comm-alpha-us` and
    `comm-gbps` (`W α B (1 - 0.02) / 0.02` bytes): buckets stay at most
    `reduce-bucket-size`, and become small enough that zero-overlap has
    something to overlap (one 5e8-element bucket of a smaller model would
    only be reduced at the end of the backward pass).

    Every bucket's collective gets `zero.bucket = <index>` (program order,
    per function). A bucket of one member is left exactly as it was, so a
    size of 0, or one smaller than every member, changes nothing.

    ```mlir
    %b = zero.pack_shards %gw, %gb {offsets = [0, 6]}
        : (tensor<4x3xf32>, tensor<3xf32>) -> !zero.flat<grads, f32, 16, 2>
    %s = zero.reduce_scatter %b {reduction = #zero<reduction sum>, zero.bucket = 0 : i64}
        : !zero.flat<grads, f32, 16, 2> -> !zero.shard<grads, f32, 8, device>
    %sw = zero.shard_slice %s {offset = 0 : i64} : !zero.shard<grads, f32, 8, device> -> !zero.shard<grads, f32, 6, device>
    zero.grad_accumulate @w, %sw : !zero.shard<grads, f32, 6, device>
    %sb = zero.shard_slice %s {offset = 6 : i64} : !zero.shard<grads, f32, 8, device> -> !zero.shard<grads, f32, 2, device>
    zero.grad_accumulate @b, %sb : !zero.shard<grads, f32, 2, device>
    ```
  }];
  let dependentDialects = ["::zeroc::zero::ZeroDialect"];
  let options = [
    Option<"reduceBucketSize", "reduce-bucket-size", "int64_t",
           /*default=*/"500000000",
           "Most elements one gradient reduce-scatter moves (0: one per gradient)">,
    Option<"prefetchBucketSize", "prefetch-bucket-size", "int64_t",
           /*default=*/"50000000",
           "Most elements one stage-3 parameter all-gather moves (0: one per parameter)">,
    Option<"overlap", "overlap", "bool", /*default=*/"false",
           "overlap_comm: gradient buckets also close once their reduction "
           "is large enough to be worth overlapping (the cost model)">,
    Option<"commAlphaUs", "comm-alpha-us", "double",
           /*default=*/"::zeroc::kDefaultCommAlphaUs",
           "Microseconds of fixed cost per collective step (the cost model)">,
    Option<"commGbps", "comm-gbps", "double",
           /*default=*/"::zeroc::kDefaultCommGbps",
           "Link bandwidth in Gbit/s (the cost model)">,
    Option<"allgatherBucketSize", "allgather-bucket-size", "int64_t",
           /*default=*/"500000000",
           "Most elements one all-gather of updated replicas in @train_step "
           "moves (0: one per parameter)">,
  ];
}

def VerifyPartition : Pass<"zero-verify-partition", "::mlir::ModuleOp"> {
  let summary = "checks the ZeRO stage's invariants after zero-partition";
  let description = [{
    The phase-boundary verifier of the ZeRO passes:

    * `@train_micro_step` exists, returns one float scalar, and contains no
      `graph.load_param` of a trainable parameter;
    * stages 0-2 read parameters only through `zero.param_replica`; stage 3
      only through `zero.view` of a gathered buffer, and every gathered
      buffer is released (`zero.release`'s verifier forbids later uses),
      except its `zero.persistent` parameters, read only through
      `zero.param_replica`; only stage 3 has `zero.persistent` (a unit
      attribute) parameters;
    * every trainable parameter has exactly one `zero.grad_accumulate`:
      of a full tensor in stages 0-1, of a reduce-scattered grads shard of
      the right size in stages 2-3 (for a bucket: the `zero.shard_slice`
      of the reduced bucket that is one member's shard, taken by no other
      accumulation);
    * stage 3: a parameter read out of a bucket (`zero.unpack_shards`)
      comes from the all-gather of a `zero.concat_shards`, at the offset of
      a `zero.param_shard` of a parameter of its type;
    * every flat buffer has the module's world size and shard sizes match.
  }];
  let dependentDialects = ["::zeroc::zero::ZeroDialect"];
}

def MergeSliceGrads : Pass<"zero-merge-slice-grads", "::mlir::ModuleOp"> {
  let summary = "turns sums of slice gradients that tile a tensor into a concat";
  let description = [{
    The gradient of a tensor split into slices (a fused QKV projection's
    output split into q, k and v) is, as autodiff writes it, one
    `graph.slice_grad` per slice (each a tensor of the whole shape, zero
    outside its slice) and the sum of them. In every function,
    `add(slice_grad(a), slice_grad(b))` of one type, where both slices
    take every element along all axes but one (steps 1), and are adjacent
    along that one, is `slice_grad(concat(a, b))` over their joint range,
    or the concat alone when that range is the whole axis. An input that
    is a concat along the same axis which nothing else reads gives the
    concat its inputs instead.
    So GPT-2's `[B, T, 3C]` QKV gradient is one concat of the three
    `[B, T, C]` gradients, where four tensors of that size were written and
    three read.

    The sums compute the same values: each element is one slice's
    gradient plus zeros, except that `-0 + 0` is `+0` where the concat
    keeps `-0`.

    ```mlir
    %0 = graph.slice_grad %a {starts = [0, 0], ends = [2, 4], steps = [1, 1]} : tensor<2x4xf32> -> tensor<2x8xf32>
    %1 = graph.slice_grad %b {starts = [0, 4], ends = [2, 8], steps = [1, 1]} : tensor<2x4xf32> -> tensor<2x8xf32>
    %2 = graph.add %0, %1 : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
    // becomes
    %2 = graph.concat %a, %b {axis = 1 : i64} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
    ```
  }];
  let dependentDialects = ["::zeroc::graph::GraphDialect"];
}

def WidenGatherGrad : Pass<"zero-widen-gather-grad", "::mlir::ModuleOp"> {
  let summary = "sums an f16 or bf16 gather gradient in a planned f32 tensor";
  let description = [{
    An embedding's gradient (`graph.gather_grad`) adds the rows of repeated
    indices, and in f16 or bf16 those sums stall (in bf16, 256 + 1 is
    256). The runtimes' kernels therefore sum into an f32 tensor of the
    result's shape and round once at the end; without this pass that
    tensor is the kernels' own scratch, which no plan counts (GPT-2's
    token embedding: 154 MB next to a 77 MB gradient).

    In every function, an f16 or bf16 `graph.gather_grad` becomes one with
    an f32 result and a `graph.cast` of it to the original type. The f32
    tensor is then a value like any other: zero-plan-buffers places it
    (at the end of the backward pass, where the activations are dead) and
    plan.json counts it. The values are the same bits: the kernel sums in
    f32 as before, and the cast rounds each sum to nearest even as the
    kernel did.

    ```mlir
    %g = graph.gather_grad %d, %i {axis = 0 : i64} : tensor<2x8x32xbf16>, tensor<2x8xi64> -> tensor<61x32xbf16>
    // becomes
    %s = graph.gather_grad %d, %i {axis = 0 : i64} : tensor<2x8x32xbf16>, tensor<2x8xi64> -> tensor<61x32xf32>
    %g = graph.cast %s : tensor<61x32xf32> -> tensor<61x32xbf16>
    ```
  }];
  let dependentDialects = ["::zeroc::graph::GraphDialect"];
}

def FoldTransposes : Pass<"zero-fold-transposes", "::mlir::ModuleOp"> {
  let summary = "turns matrix products of transposed matrices into GEMMs with transpose flags";
  let description = [{
    A transpose that only feeds a matrix product is a copy the BLAS never
    needs: GEMM reads either operand transposed. In every function:

    * `graph.matmul(x, transpose(w))` with a rank-2 `w` and `x` of rank
      2 or more becomes `reshape(gemm(reshape(x, [M, K]), w {transB}))`
      (the batch dims of `x` folded into M: numpy's matmul broadcasts a
      rank-2 operand over them); likewise a transposed rank-2 `x` with a
      rank-2 `w` gives `transA`;
    * `graph.gemm` of a transposed operand (no `c`) flips that operand's
      flag;
    * `transpose(gemm(a, b))` of a rank-2 product without `c` is
      `gemm(b, a)` with both flags flipped: (op(a) op(b))^T = op(b)^T op(a)^T;
    * `sum_to(matmul(transpose(x), g))`, the weight gradient of a linear
      layer applied to a batch (`x` `[b..., T, K]` and `g` `[b..., T, N]`
      with the same batch dims, the last two of `x` swapped, the product
      summed down to `[K, N]`), is `gemm(reshape(x, [M, K]),
      reshape(g, [M, N])) {transA}` with the batch folded into M: the sum
      over the batch of `x_b^T g_b` is one product, and the `[b..., K, N]`
      products are never stored;
    * any other `graph.matmul` of an operand whose last two dims a
      transpose swapped (batch dims in place) reads the transpose's input
      with that operand's `transA`/`transB` flag flipped: batched
      attention's `q k^T`, and its gradients' products with `k`, `q`, `v`
      and the attention probabilities (a `[B, H, T, T]` copy per layer).

    A transpose left without users is erased. The tied output head of a
    GPT (`matmul(h, transpose(wte))`) and the weight gradients of every
    linear layer lose their transposes this way: at stage 3 each
    transpose also copied the gathered parameter.

    ```mlir
    %t = graph.transpose %w {perm = [1, 0]} : tensor<7x10xf32> -> tensor<10x7xf32>
    %y = graph.matmul %x, %t : tensor<8x10xf32>, tensor<10x7xf32> -> tensor<8x7xf32>
    // becomes
    %y = graph.gemm %x, %w {transB = true} : (tensor<8x10xf32>, tensor<7x10xf32>) -> tensor<8x7xf32>
    ```
  }];
}

def FoldMatmulViews : Pass<"zero-fold-matmul-views", "::mlir::ModuleOp"> {
  let summary = "reads a matmul operand made by slices, reshapes and transposes as a strided view, and stores a product only a transpose reads transposed";
  let description = [{
    CUDA target. A `graph.matmul` operand computed from one stored tensor
    by `graph.slice` (positive steps), `graph.reshape` and
    `graph.transpose` ops, at least one of them a copy (a slice or a
    transpose), becomes a `graph.strided_view` of that tensor when the
    strides are a GEMM operand's: unit stride along one of the last two
    dims and a leading dimension at least that matrix dim. A reshape
    splits any dim; it merges dims only when they are one run of memory.
    The chain's ops left without users are erased. A matmul whose only
    reader is a `graph.transpose` that keeps one of the product's last two
    dims last stores its product transposed instead (`result_perm`), and
    the transpose is erased.

    Attention's head split is this chain: `q`, `k` and `v` are slices of
    the QKV projection `[B, T, 3C]`, reshaped to `[B, T, H, D]` and
    transposed to `[B, H, T, D]` (`k` to `[B, H, D, T]`), and the output
    projection's gradient is transposed back to `[B, H, T, D]`. Each copy
    wrote and read a `[B, T, C]` tensor; the GEMMs now read the stored
    tensor with a leading dimension of `3C` (or `C`) and one GEMM batch per
    `B`, of `H` matrices `D` apart. Attention's output and the gradients of
    q, k and v, transposed back to `[B, T, H, D]`, are written so by their
    GEMMs.

    ```mlir
    %s = graph.slice %qkv {starts = [0, 0, 768], ends = [8, 1024, 1536], steps = [1, 1, 1]} : tensor<8x1024x2304xbf16> -> tensor<8x1024x768xbf16>
    %r = graph.reshape %s : tensor<8x1024x768xbf16> -> tensor<8x1024x12x64xbf16>
    %k = graph.transpose %r {perm = [0, 2, 3, 1]} : tensor<8x1024x12x64xbf16> -> tensor<8x12x64x1024xbf16>
    // becomes
    %k = graph.strided_view %qkv {offset = 768 : i64, strides = array<i64: 2359296, 64, 1, 2304>} : tensor<8x1024x2304xbf16> -> tensor<8x12x64x1024xbf16>
    ```
  }];
  let dependentDialects = ["::zeroc::graph::GraphDialect"];
}

def FoldGemmBiasGrad : Pass<"zero-fold-gemm-bias-grad", "::mlir::ModuleOp"> {
  let summary = "computes a bias gradient in the GEMM of its weight's gradient";
  let description = [{
    CUDA target. A `graph.sum_to` that sums every dim of its input `x` but
    the last (a linear layer's bias gradient, `x` its output gradient)
    becomes one `graph.fused_gemm_bias_grad` with a `graph.gemm` (alpha 1,
    no `c`) that reads `x`, or `x` reshaped to [K, L], as the operand whose
    columns the same sum gives: `a` read transposed, or `b` read as stored
    (the weight gradient, `x^T h` or `h^T x`). The fused op stands where
    the first of the two stood; the GEMM's other operand must be defined
    there, and a reshape of `x` is made there when the GEMM's is made
    later. Its results replace the GEMM's and the sum's.

    The CUDA runtime sums the operand in cuBLASLt's bias-gradient epilogue
    (BGRADA, BGRADB) where cuBLASLt has one for the shapes, and otherwise
    runs the GEMM and then `sum_to`: a transformer's bias gradients read
    their output gradients once, with the GEMM that reads them anyway
    (docs/CudaTarget.md, "Bias gradients in the GEMM").

    ```mlir
    %b = graph.sum_to %gy : tensor<2x4x3xf32> -> tensor<3xf32>
    %r = graph.reshape %gy : tensor<2x4x3xf32> -> tensor<8x3xf32>
    %w = graph.gemm %r, %x {transA = true} : (tensor<8x3xf32>, tensor<8x5xf32>) -> tensor<3x5xf32>
    // becomes
    %r = graph.reshape %gy : tensor<2x4x3xf32> -> tensor<8x3xf32>
    %w, %b = graph.fused_gemm_bias_grad %r, %x {summed = 0 : i64, transA = true} : (tensor<8x3xf32>, tensor<8x5xf32>) -> (tensor<3x5xf32>, tensor<3xf32>)
    ```
  }];
  let dependentDialects = ["::zeroc::graph::GraphDialect"];
}

def StepBoundary : Pass<"zero-step-boundary", "::mlir::ModuleOp"> {
  let summary = "builds @train_step: the optimizer step after the micro-steps";
  let description = [{
    Adds `func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>)`
    (the global gradient norm, whether the step overflowed, the step's lr):
    what happens once per optimizer step after the gradient-accumulation
    micro-steps of `@train_micro_step`, for the module's `zero.stage` and
    `zero.world_size`, following DeepSpeed:

    1. the reduction: stage 0 all-reduces each full gradient accumulator
       (sum, in place), stage 1 reduce-scatters each padded accumulator into
       the rank's shard; stages 2-3 already hold their reduced shard. With
       `reduce-in-backward` and one micro-step, the reduction of an
       accumulator goes into `@train_micro_step`, right after the
       accumulation that makes it final (zero-overlap then starts it
       there): stage 0's in-place all-reduce, stage 1's in-place
       reduce-scatter (`in_place`: the rank's shard lands in the padded
       accumulator's first elements, which `@train_step` reads as a shard);
    2. with a loss scaler: the local overflow flag of the reduced gradients,
       all-reduced with `max`, then the loss-scaler update;
    3. the sum of squares of the reduced gradients (all-reduced in stages
       1-3), the global norm of the averaged, unscaled gradients and the
       factor `1 / (W * scale)`, clipped at `gradient-clipping`;
    4. the scheduled lr (and OneCycle's cycled momentum, Adam's beta1 with
       beta2 0.99) from the step count;
    5. unless the step overflowed (`zero.if_finite`): the optimizer update of
       every trainable parameter's partition, one more step counted, and in
       stages 1-2, and for stage 3's `zero.persistent` parameters (set by
       zero-partition), the all-gather of the updated replicas.

    With `fp32-grad-accum` a 16-bit parameter's accumulator is f32, except
    where it only ever holds one gradient exactly: one rank
    (`zero.world_size` 1), one micro-step, and one `zero.grad_accumulate`
    of a gradient of the parameter's own type (no second one, no
    `zero.grad_accumulate_rows`). That accumulator keeps the training dtype
    (docs/RationaleZero.md, "Accumulators that hold one gradient").

    The optimizer, the schedule and the scaler are pass options written as
    the attributes they become (`#zero.adam<...>`, `#zero.sgd<...>`,
    `#zero.lr_schedule<...>`, `#zero.loss_scaler<...>`; no scaler: "").
    `@train_step` also records the run around it: `zero.micro_steps` (the
    gradient accumulation steps), `zero.monitor` (what the loop logs) and,
    with `tf32`, `zero.tf32` (f32 matmuls may use TF32 tensor cores).

    ```mlir
    func.func @train_step() -> (tensor<f64>, tensor<i1>, tensor<f64>) {
      %scale = zero.loss_scale : tensor<f64>
      %g = zero.grad_accumulator @w : tensor<4x3xf32>
      %r = zero.all_reduce %g {reduction = #zero<reduction sum>} : tensor<4x3xf32>
      ...
    }
    ```
  }];
  let dependentDialects = ["::zeroc::graph::GraphDialect",
                           "::zeroc::zero::ZeroDialect",
                           "::mlir::func::FuncDialect"];
  let options = [
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"#zero.adam<>\"",
           "The optimizer: a #zero.adam or #zero.sgd attribute">,
    Option<"lrSchedule", "lr-schedule", "std::string",
           /*default=*/"\"#zero.lr_schedule<>\"",
           "The LR schedule: a #zero.lr_schedule attribute">,
    Option<"lossScaler", "loss-scaler", "std::string", /*default=*/"\"\"",
           "The fp16 loss scaler: a #zero.loss_scaler attribute, or empty for none">,
    Option<"gradientClipping", "gradient-clipping", "double", /*default=*/"1.0",
           "Max global gradient norm (0: no clipping)">,
    Option<"fp32GradAccum", "fp32-grad-accum", "bool", /*default=*/"false",
           "Accumulate 16-bit parameters' gradients in f32 (except, with one "
           "rank and one micro-step, where an accumulator holds one gradient)">,
    Option<"gradAccumSteps", "grad-accum-steps", "int64_t", /*default=*/"1",
           "Micro-steps per optimizer step (recorded as zero.micro_steps)">,
    Option<"monitor", "monitor", "std::string", /*default=*/"\"#zero.monitor<>\"",
           "What the loop logs: a #zero.monitor attribute (recorded as zero.monitor)">,
    Option<"tf32", "tf32", "bool", /*default=*/"false",
           "f32 matmuls may run on TF32 tensor cores (recorded as zero.tf32; "
           "the CUDA runtime honours it, the CPU has no TF32)">,
    Option<"reduceInBackward", "reduce-in-backward", "bool", /*default=*/"false",
           "Stages 0-1 with one micro-step: reduce each gradient accumulator "
           "in place in @train_micro_step right after its accumulation, as "
           "DDP does during backward, instead of in @train_step">,
  ];
}

def OverflowFromNorm : Pass<"zero-overflow-from-norm", "::mlir::ModuleOp"> {
  let summary = "reads the loss scaler's overflow flag off the global norm";
  let description = [{
    DeepSpeed's fp16 optimizer checks for overflow by the norm
    (`check_using_norm`): the global sum of squares of the gradients is inf
    or NaN exactly when one of their elements is. In `@train_step`, a
    `zero.has_overflow` whose flag is all-reduced with `max`, over the same
    gradients as the `zero.sum_squares` that `zero.clip_grad_norm` reads
    (all-reduced with `sum`, or stage 0's, equal on every rank), becomes a
    `zero.non_finite` of that sum; the loss-scaler update moves after it.
    The step then passes over the gradients once and reduces one scalar
    instead of two: one collective and, on a device, one read back fewer.

    Only for gradients of 16-bit floats and f32, whose squares cannot
    overflow f64 (a square of a finite f32 is below 2^256); f64 gradients
    keep `zero.has_overflow`, as does a flag used in another way.

    ```mlir
    %of = zero.has_overflow %g : tensor<4xf16> -> tensor<i1>
    %m = zero.all_reduce %of {reduction = #zero<reduction max>} : tensor<i1>
    zero.update_loss_scale %m {scaler = #zero.loss_scaler<>} : tensor<i1>
    %ss = zero.sum_squares %g : tensor<4xf16> -> tensor<f64>
    %t = zero.all_reduce %ss {reduction = #zero<reduction sum>} : tensor<f64>
    // becomes
    %ss = zero.sum_squares %g : tensor<4xf16> -> tensor<f64>
    %t = zero.all_reduce %ss {reduction = #zero<reduction sum>} : tensor<f64>
    %m = zero.non_finite %t : tensor<f64> -> tensor<i1>
    zero.update_loss_scale %m {scaler = #zero.loss_scaler<>} : tensor<i1>
    ```
  }];
  let dependentDialects = ["::zeroc::zero::ZeroDialect"];
}

def PrintComputeCost : Pass<"zero-print-compute-cost", "::mlir::ModuleOp"> {
  let summary = "prints each function's FLOPs, bytes and roofline time per op name";
  let description = [{
    For every function with a body, sums the compute cost model's
    floating-point operations and bytes (zeroc::ComputeCostModel: a GEMM's
    2MNK; a fused attention's matrix products, 2 in the forward kernel and
    7 in the gradient's two, over the (query, key) pairs it scores; one per
    result element otherwise; every tensor, flat-buffer and shard operand
    and result read or written once, and the state a gradient
    accumulation or an optimizer update moves besides: the accumulator,
    the master copy and the moments or the momentum, the 16-bit copy;
    nothing for a collective) over the ops of each name, outside fused
    bodies,
    and prints them to stdout as a table of comments, with each op's time
    at `gflops` or `memory-gb-per-s`, whichever is longer, most costly
    first. The IR is unchanged. The defaults are an H200's dense bf16
    tensor-core rate and memory bandwidth. It shows what a fusion pass
    saves without a GPU (docs/CudaTarget.md, "What the step moves"); a
    kernel that reads an operand twice is not modelled.

    ```
    zeroc-opt ir/16-plan-buffers.mlir -zero-print-compute-cost -o /dev/null
    // @train_micro_step: each op's FLOPs and bytes (...)
    //   op                                        count        GFLOP         GB         us
    //   graph.gemm                                  147       6089.0     10.500     6156.9
    ```
  }];
  let options = [
    Option<"gflops", "gflops", "double", "989000.0",
           "the peak rate, in GFLOP/s">,
    Option<"memoryGBPerS", "memory-gb-per-s", "double", "4800.0",
           "the memory bandwidth, in GB/s">,
    Option<"byNode", "by-node", "bool", "false",
           "one row per op name and ONNX node (the name the trainer's --trace "
           "gives an op: scripts/trace_ops.py joins the two) instead of per op name">,
  ];
}

def FuseElementwise : Pass<"zero-fuse-elementwise", "::mlir::ModuleOp"> {
  let summary = "makes chains of elementwise ops one graph.fused_elementwise";
  let description = [{
    In the body of every function, walking from its end: an elementwise op
    (`zeroc::graph::isFusableElementwise`) takes in each fusable producer
    of its own type (shape and element type) whose every use is in the
    group or after its last op, transitively, and the group becomes one
    `graph.fused_elementwise` at the place of its last op. Its inputs are
    the values the group reads from outside; it yields the last op's value
    and each member's that an op outside reads (the activations autodiff
    saved for the backward pass). A group of one op stays as it is. A
    producer stays out
    when an op between it and the group's last op may write or free
    what the producer reads (an in-place collective, `zero.release` of a
    gathered parameter, a write of the state ops name by symbol where the
    producer reads such state): the fused op reads its inputs where the
    last op stood. Other writes between them, such as a stage-3 gather that
    zero-overlap started there, do not keep it out.

    The values a group does not yield are never stored, so the buffer plan
    after it has no room for them, and the CUDA emitter prints each fused
    op as one kernel. The CUDA pipeline runs it; the CPU's kernels are compiled
    ahead of time, so the CPU target keeps one kernel call per op.

    ```mlir
    %s = graph.add %x, %b : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
    %e = graph.erf %s : tensor<2x8xf32>
    // becomes
    %e = graph.fused_elementwise %x, %b : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32> {
    ^bb0(%a: tensor<2x8xf32>, %c: tensor<8xf32>):
      %0 = graph.add %a, %c : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
      %1 = graph.erf %0 : tensor<2x8xf32>
      graph.yield %1 : tensor<2x8xf32>
    }
    ```
  }];
  let dependentDialects = ["::zeroc::graph::GraphDialect"];
}

def RematerializeElementwise
    : Pass<"zero-rematerialize-elementwise", "::mlir::ModuleOp"> {
  let summary = "recomputes in a fused elementwise op the values another one stored for it";
  let description = [{
    Runs after zero-fuse-elementwise. A `graph.fused_elementwise` that
    reads a result of another one of its type (an activation the forward
    chain saved for the backward chain) computes that value in its own body
    instead, when the producer's body computes it from values the consumer
    reads anyway: the producer's inputs that the consumer reads too, its
    results that the consumer reads too, and rank-0 values (a GELU's
    constants; the consumer takes those as new inputs), none of whose
    storage an op between the two writes or frees (an in-place collective,
    a `zero.release`, a write of the state the value views, as
    zero-fuse-elementwise decides it; views share their value's storage).
    A training-mode dropout is never computed again (its mask belongs to
    the launch). The producer stops yielding a result that nothing reads
    any more, and a value it no longer yields is never stored.

    Every value in a fused body is rounded to the element type as its op
    stores it, so the recomputed value has the stored value's bits. A GELU
    after a bias add then stores its input and its result, not also
    `x / sqrt 2` and `1 + erf` (docs/CudaTarget.md, "Recomputing saved
    values").

    ```mlir
    %h, %e = graph.fused_elementwise %x, %b, %c : (tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> (tensor<8xf32>, tensor<8xf32>) {
    ^bb0(%a: tensor<8xf32>, %d: tensor<8xf32>, %k: tensor<f32>):
      %0 = graph.add %a, %d : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
      %1 = graph.div %0, %k : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
      %2 = graph.erf %1 : tensor<8xf32>
      graph.yield %0, %2 : tensor<8xf32>, tensor<8xf32>
    }
    %g = graph.fused_elementwise %dy, %h, %e : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
    ^bb0(%a: tensor<8xf32>, %d: tensor<8xf32>, %f: tensor<8xf32>):
      %0 = graph.mul %a, %d : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
      %1 = graph.mul %0, %f : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
      graph.yield %1 : tensor<8xf32>
    }
    // becomes a producer that yields %h only, and
    %g = graph.fused_elementwise %dy, %h, %c : (tensor<8xf32>, tensor<8xf32>, tensor<f32>) -> tensor<8xf32> {
    ^bb0(%a: tensor<8xf32>, %d: tensor<8xf32>, %k: tensor<f32>):
      %0 = graph.div %d, %k : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
      %1 = graph.erf %0 : tensor<8xf32>
      %2 = graph.mul %a, %d : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
      %3 = graph.mul %2, %1 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
      graph.yield %3 : tensor<8xf32>
    }
    ```
  }];
  let dependentDialects = ["::zeroc::graph::GraphDialect"];
}

def FuseLayerNormGradAdd
    : Pass<"zero-fuse-layer-norm-grad-add", "::mlir::ModuleOp"> {
  let summary = "makes a layer norm gradient write its input gradient added to the residual's";
  let description = [{
    Runs after zero-fuse-elementwise. A `graph.layer_norm_grad` whose input
    gradient only a `graph.add` reads, with an operand of its type defined
    before the layer norm gradient that no op writes or frees up to the
    add, becomes one `graph.fused_layer_norm_grad_add` at the layer norm
    gradient's place: its first result is the add's, its others the
    parameter gradients. The CUDA runtime rounds each input gradient
    element as it would store it and adds it as the add would, so the sum
    has the two ops' bits; the input gradient is never stored
    (docs/CudaTarget.md, "A layer norm's gradient and the residual add").

    ```mlir
    %gx, %gs, %gb = graph.layer_norm_grad %x, %s, %gy {axis = 1 : i64, epsilon = 1.0e-05 : f64} : tensor<2x4xf32>, tensor<4xf32>
    %sum = graph.add %r, %gx : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
    // becomes
    %sum, %gs, %gb = graph.fused_layer_norm_grad_add %x, %s, %gy, %r {axis = 1 : i64, epsilon = 1.0e-05 : f64} : tensor<2x4xf32>, tensor<4xf32>
    ```
  }];
  let dependentDialects = ["::zeroc::graph::GraphDialect"];
}

def FuseSoftmax : Pass<"zero-fuse-softmax", "::mlir::ModuleOp"> {
  let summary = "makes a softmax's elementwise prologue and a softmax gradient's epilogue part of it";
  let description = [{
    Runs after zero-fuse-elementwise. A `graph.softmax` or
    `graph.log_softmax` whose input an elementwise chain computes (a
    `graph.fused_elementwise` of one result, or one fusable elementwise op)
    read by nothing else becomes one `graph.fused_softmax` at the softmax's
    place, the chain its body. A `graph.softmax_grad` whose value only an
    elementwise chain of its type reads becomes, with that chain, one
    `graph.fused_softmax_grad` at the chain's place, the chain its body
    (its first argument the gradient). Neither happens when an op between
    the two may write or free memory: the fused op reads every input where
    it stands.

    The value between the two ops is never stored: attention's scaled and
    masked scores before its softmax, and the probabilities' gradient
    before the mask and scale of the backward pass (docs/CudaTarget.md,
    "Softmax fusion"). The CUDA emitter prints each as one kernel that
    computes the bits the two ops compute one after the other.

    ```mlir
    %s = graph.fused_elementwise %x, %k : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32> {
    ^bb0(%a: tensor<2x8xf32>, %b: tensor<f32>):
      %0 = graph.mul %a, %b : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
      graph.yield %0 : tensor<2x8xf32>
    }
    %p = graph.softmax %s {axis = 1 : i64} : tensor<2x8xf32>
    // becomes
    %p = graph.fused_softmax %x, %k {axis = 1 : i64, log = false} : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32> {
    ^bb0(%a: tensor<2x8xf32>, %b: tensor<f32>):
      %0 = graph.mul %a, %b : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
      graph.yield %0 : tensor<2x8xf32>
    }
    ```
  }];
  let dependentDialects = ["::zeroc::graph::GraphDialect"];
}

def FuseCrossEntropy : Pass<"zero-fuse-cross-entropy", "::mlir::ModuleOp"> {
  let summary = "makes a softmax cross-entropy loss and its gradient one op that reads the scores once";
  let description = [{
    A `graph.softmax_cross_entropy_loss_grad` and the
    `graph.softmax_cross_entropy_loss` before it in its block, of the same
    scores, labels, reduction and ignore_index, become one
    `graph.fused_softmax_cross_entropy` at the loss's place, when the
    loss's gradient is defined before the loss (the training step's seed)
    and no op between the two writes or frees the storage of what the
    gradient reads. The CUDA runtime computes each row's max and sum of
    exponentials once for both, with the two kernels' arithmetic: the same
    bits, where the loss read the scores once and its gradient twice
    (docs/CudaTarget.md, "The loss and its gradient in one pass"). The
    CUDA pipeline runs it in the fuse-softmax phase.

    ```mlir
    %l = graph.softmax_cross_entropy_loss %s, %t {reduction = "mean"} : tensor<16x61xf32>, tensor<16xi64> -> tensor<f32>
    %gs = graph.softmax_cross_entropy_loss_grad %s, %t, %g {reduction = "mean"} : tensor<16x61xf32>, tensor<16xi64>, tensor<f32>
    // becomes
    %l, %gs = graph.fused_softmax_cross_entropy %s, %t, %g {reduction = "mean"} : tensor<16x61xf32>, tensor<16xi64>, tensor<f32>
    ```
  }];
  let dependentDialects = ["::zeroc::graph::GraphDialect"];
}

def FuseAttention : Pass<"zero-fuse-attention", "::mlir::ModuleOp"> {
  let summary = "makes a softmax attention, and its gradient, one kernel each that never stores the scores";
  let description = [{
    CUDA target, after zero-fuse-softmax and zero-fold-matmul-views. An
    attention `o = softmax(prologue(q kt)) v` over the last axis, f16 or
    bf16, `q` `[B, H, Tq, D]` and `kt` `[B, H, D, Tk]` with `D` 16, 32, 64
    or 128, becomes one `graph.fused_attention` at the place of `o`'s
    matmul, when the probabilities have no reader but that matmul and their
    gradient's ops. Those, in the training step (`dv = p^T do`,
    `dp = do v^T`, the softmax gradient with its epilogue, `dq = ds kt^T`,
    `dkt = q^T ds`), become one `graph.fused_attention_grad` at the place
    of the last of them. The prologue is the `graph.fused_softmax`'s body
    (the scale and the causal mask), the epilogue the
    `graph.fused_softmax_grad`'s; each result keeps the layout its matmul
    stored (`result_perm`). Where the scores read k's rows with `transB`
    (`dq = ds k`: Hugging Face exports after zero-fold-transposes), `kt` is
    a new `graph.strided_view` of k's storage. Nothing is fused when an op
    between the forward ops, or between the backward ones, may write or
    free memory, when a gradient has a reader before the last backward op,
    or when a body holds a dropout. A constant mask that drops exactly the
    keys after each query to `-inf`, with an epilogue that keeps zero zero,
    makes the ops `causal`: the kernels mask those keys themselves and
    skip the tiles above the diagonal, so the prologue's `graph.where` goes
    (and the reads of the mask and the `-inf` per score), and so does the
    epilogue's where that zeroes those keys' gradients when it is the
    gradient's only reader and its zero a `+0` constant.

    The kernels (zeroc_rt_cuda/attention.h) keep the `[B, H, Tq, Tk]`
    scores, probabilities and their gradients out of memory: the forward
    kernel keeps a running softmax per row and saves its log-sum-exp, the
    backward kernels recompute the probabilities from it
    (docs/CudaTarget.md, "Attention in one kernel").

    ```mlir
    %s = graph.matmul %q, %kt : tensor<2x4x64x16xbf16>, tensor<2x4x16x64xbf16> -> tensor<2x4x64x64xbf16>
    %p = graph.fused_softmax %s, %k {axis = 3 : i64, log = false} : (tensor<2x4x64x64xbf16>, tensor<bf16>) -> tensor<2x4x64x64xbf16> { ... }
    %o = graph.matmul %p, %v : tensor<2x4x64x64xbf16>, tensor<2x4x64x16xbf16> -> tensor<2x4x64x16xbf16>
    // becomes
    %o, %lse = graph.fused_attention %q, %kt, %v prologue(%k : tensor<bf16>) : (tensor<2x4x64x16xbf16>, tensor<2x4x16x64xbf16>, tensor<2x4x64x16xbf16>) -> (tensor<2x4x64x16xbf16>, tensor<2x4x64xf32>) { ... }
    ```
  }];
  let dependentDialects = ["::zeroc::graph::GraphDialect"];
}

def FuseAttentionBias : Pass<"zero-fuse-attention-bias", "::mlir::ModuleOp"> {
  let summary = "has the attention kernels add a QKV projection's bias as they load q, k and v";
  let description = [{
    CUDA target, after zero-fuse-attention. A `graph.add` of a tensor `x`
    and a bias along its last dim (`[N]` or `[1, .., 1, N]`), whose readers
    are all `graph.strided_view`s that fused attention ops (forward and
    gradient) read as `q`, `kt` or `v` and nothing else reads, goes: each
    view becomes the same view of `x`, and the attention ops get the bias,
    viewed with the offset and strides modulo N (strides 0 along batch and
    time), as `q_bias`, `kt_bias` or `v_bias`. The kernels add it as they
    load, rounding each sum as the add stored it, so the results have the
    add's bits and the `[B, T, 3HD]` sum is never stored (GPT-2's `c_attn`
    bias: docs/CudaTarget.md, "Attention in one kernel"). Nothing is
    folded when a view's row would run past the end of the bias (its bias
    index would not be affine), or when an op between the add and an
    attention op may write or free `x`'s or the bias's storage (a stage-3
    bias, released after the forward pass, stays an add).

    ```mlir
    %qkv = graph.add %b, %x : tensor<48xbf16>, tensor<2x8x48xbf16> -> tensor<2x8x48xbf16>
    %q = graph.strided_view %qkv {offset = 0 : i64, strides = array<i64: 384, 16, 48, 1>} : tensor<2x8x48xbf16> -> tensor<2x1x8x16xbf16>
    // becomes
    %q = graph.strided_view %x {offset = 0 : i64, strides = array<i64: 384, 16, 48, 1>} : tensor<2x8x48xbf16> -> tensor<2x1x8x16xbf16>
    %qb = graph.strided_view %b {offset = 0 : i64, strides = array<i64: 0, 16, 0, 1>} : tensor<48xbf16> -> tensor<2x1x8x16xbf16>
    %o, %lse = graph.fused_attention %q, %kt, %v q_bias(%qb : tensor<2x1x8x16xbf16>) ...
    ```
  }];
  let dependentDialects = ["::zeroc::graph::GraphDialect"];
}

def FuseOptimizerStep : Pass<"zero-fuse-optimizer-step", "::mlir::ModuleOp"> {
  let summary = "makes consecutive Adam or SGD updates one multi-tensor update";
  let description = [{
    In `@train_step`'s `zero.if_finite`, each run of two or more
    consecutive `zero.adam_update`s with the same factor, learning rate,
    betas, step and `#zero.adam` becomes one `zero.adam_update_multi`, at
    the place of the run's last update; each run of `zero.sgd_update`s
    with the same factor, learning rate, step and `#zero.sgd` becomes one
    `zero.sgd_update_multi` the same way. Only consecutive updates: what
    zero-overlap put between them (a gather started as soon as its
    parameters are updated) stays where it is, and no gradient lives longer
    than before. The CUDA pipeline runs it (one launch for the step instead
    of up to three per parameter, as DeepSpeed's FusedAdam); on the CPU the
    runtime would run the same per-parameter loop, so it is not run there.

    ```mlir
    zero.adam_update @w, %gw, %f, %lr, %b1, %b2, %t {optimizer = #zero.adam<>} : ...
    zero.adam_update @b, %gb, %f, %lr, %b1, %b2, %t {optimizer = #zero.adam<>} : ...
    // becomes
    zero.adam_update_multi [@w, @b] (%gw, %gb), %f, %lr, %b1, %b2, %t {optimizer = #zero.adam<>} : ...
    ```
  }];
  let dependentDialects = ["::zeroc::zero::ZeroDialect"];
}

def VerifyStep : Pass<"zero-verify-step", "::mlir::ModuleOp"> {
  let summary = "checks @train_step against the ZeRO stage";
  let description = [{
    The phase-boundary verifier of `zero-step-boundary`:

    * `@train_step` exists and returns (tensor<f64>, tensor<i1>, tensor<f64>);
    * every trainable parameter has one `zero.grad_accumulator` of its
      stage's form (stage 0: the full tensor, stage 1: the padded flat
      buffer, stages 2-3: the shard) and exactly one update, inside the one
      `zero.if_finite`; frozen parameters have neither;
    * the update reads the reduced gradient: the all-reduced accumulator in
      stage 0, the reduce-scattered one in stage 1 (or the accumulator, when
      `@train_micro_step` reduces it in place, at once or started), the
      accumulator in 2-3 (in a zero-bucket bucket: the member's view or
      slice of it);
    * stages 1-2 and stage 3's `zero.persistent` parameters gather every
      updated replica after its update, and only they do; a bucketed
      gather copies each replica out of the all-gather of a
      `zero.concat_shards` whose input at its offset is the parameter's
      own `zero.replica_slice`.
  }];
  let dependentDialects = ["::zeroc::zero::ZeroDialect"];
}

def Overlap : Pass<"zero-overlap", "::mlir::ModuleOp"> {
  let summary = "starts the micro-step's collectives early (overlap_comm)";
  let description = [{
    Turns the collectives of `@train_micro_step` into start/wait pairs
    placed so that communication runs during compute:

    * Stage 3, parameters: every `zero.all_gather` (one parameter's, or a
      bucket's) becomes a `zero.all_gather_start` and a `zero.wait`: the
      wait sits where the gather was, right before the first use of what it
      gathers; the start moves up, with the reads of the shards it sends
      (`zero.param_shard`, `zero.concat_shards`), over the ops before it
      until the compute they are estimated to take (the compute cost
      model: max(FLOPs / `compute-gflops`, bytes / `memory-gb-per-s`) per
      op) covers twice the gather's ring time (the α–β model of
      `comm-alpha-us` and `comm-gbps`). It moves at most to right after
      the previous gather's wait, so that the next bucket travels while
      the current one computes, in the forward and the backward pass; and
      further, to right after the previous gather's start, only while the
      gathered elements in flight together stay within
      `prefetch-bucket-size` (DeepSpeed's `stage3_prefetch_bucket_size`:
      how much it prefetches ahead). The first gather starts where it was.
    * Stages 2-3, gradients: every gradient `zero.reduce_scatter` (one
      gradient's, or a bucket's) becomes a `zero.reduce_scatter_start`
      where it was, as soon as its bucket is packed, and a `zero.wait`
      that moves, with the accumulations of what it reduced, to right
      before the next gradient reduction's start (the last one's to the end
      of the micro-step, before its buffer stores). Each reduction travels
      while backward computes the next bucket's gradients; at most two
      packed gradient buckets are alive at a time.

    ```mlir
    %t1 = zero.all_gather_start %s1 : ... -> !zero.token<!zero.flat<...>>   // during bucket 0's compute
    ...
    %f1 = zero.wait %t1 : ... -> !zero.flat<...>                           // before bucket 1's first use

    %r0 = zero.reduce_scatter_start %g0 {...} : ... -> !zero.token<!zero.shard<...>>
    ...                                                 // backward of the next bucket
    %s0 = zero.wait %r0 : ... -> !zero.shard<...>
    zero.grad_accumulate @w0, %s0 : ...
    %r1 = zero.reduce_scatter_start %g1 {...} : ...
    ```

    `max-live-parameters` (DeepSpeed's `stage3_max_live_parameters`)
    bounds the prefetch: a gather starts early only if the gathered
    parameter elements alive at its early position, its own included, stay
    within the limit; otherwise it starts where its wait is. The limit is
    recorded on `@train_micro_step` as `zero.max_live_parameters`, which
    zero-verify-partition checks.
  }];
  let dependentDialects = ["::zeroc::zero::ZeroDialect"];
  let options = [
    Option<"maxLiveParameters", "max-live-parameters", "int64_t",
           /*default=*/"1000000000",
           "Most gathered parameter elements a prefetch may keep alive">,
    Option<"prefetchBucketSize", "prefetch-bucket-size", "int64_t",
           /*default=*/"50000000",
           "Most gathered parameter elements in flight together (DeepSpeed's "
           "stage3_prefetch_bucket_size)">,
    Option<"commAlphaUs", "comm-alpha-us", "double",
           /*default=*/"::zeroc::kDefaultCommAlphaUs",
           "The cost model's fixed microseconds per collective step">,
    Option<"commGbps", "comm-gbps", "double",
           /*default=*/"::zeroc::kDefaultCommGbps",
           "The cost model's link bandwidth in Gbit/s">,
    Option<"computeGflops", "compute-gflops", "double",
           /*default=*/"::zeroc::kDefaultComputeGflops",
           "The compute cost model's GFLOP/s">,
    Option<"memoryGBPerS", "memory-gb-per-s", "double",
           /*default=*/"::zeroc::kDefaultMemoryGBPerS",
           "The compute cost model's memory bandwidth in GB/s">,
  ];
}

def PlanBuffers : Pass<"zero-plan-buffers", "::mlir::ModuleOp"> {
  let summary = "assigns every tensor of @train_micro_step a static arena offset";
  let description = [{
    The target-neutral memory plan. Every op result that needs its own
    storage (not a reshape or view of another buffer, not runtime state, not
    a constant) gets a byte offset in one arena, `zero.arena_offsets` (one
    per result); the module gets `zero.arena_bytes`. Offsets are 64-byte
    aligned and chosen first-fit; a buffer's space is reused after its last
    use (for a gathered parameter that is its `zero.release`), never by a
    result of the op that last reads it, so no op writes into storage it
    reads (one exception below, for an op that reads each element before
    it writes it). `@train_step` is planned the same way into the same arena (the
    two never run at once: `zero.arena_bytes` is the larger need).

    With one micro-step per optimizer step (`@train_step`'s
    `zero.micro_steps` = 1) a gradient of its accumulator's element type,
    used only by its `zero.grad_accumulate` (through reshapes and a
    `zero.wait`; `zero::accumulatorChain`), is produced in the accumulator
    itself: its op's offset is -1 and the accumulation is marked `in_place`
    (no copy, no arena space). At stages 2-3 that op is the reduce-scatter
    (started or not), which writes the rank's shard there; on one rank,
    where the reduce-scatter is in place and its shard the whole buffer, it
    is the op whose result the `zero.pack` of it alone renames (a weight
    gradient's GEMM).

    A `graph.concat` whose every operand is a result (through reshapes,
    each read by nothing else) of an op whose emitters write that result at
    any strides (`writesResultAtStrides`: a `graph.fused_attention_grad`'s
    q, k and v gradients) copies nothing: its storage is taken when its
    first operand is made, each operand's op writes it there at its byte
    offset and the concat's strides (`zero.result_strides` on that op, one
    array per result, empty for a dense one), and the concat is marked
    `zero.operands_in_place`. GPT-2's QKV projection then gets its gradient
    straight from the attention's kernels.

    ```mlir
    %dq, %dkt, %dv, %delta = graph.fused_attention_grad ... {...,
        zero.arena_offsets = [0, 32, 64, 1536],
        zero.result_strides = [array<i64: 384, 48, 16, 1>, ..., array<i64>]}
    %c = graph.concat %rq, %rk, %rv {axis = 2 : i64, zero.arena_offsets = [0],
                                     zero.operands_in_place}
    ```

    A `graph.fused_softmax_cross_entropy` whose scores nothing reads after
    it writes their gradient over them: `grad_scores` takes the scores'
    offset (their storage, the arena's own and of the same size), which
    stays taken until the gradient's last reader, and the op is marked
    `zero.grad_over_scores`. Its kernels read every score before they write
    its gradient. A language model's logits are the largest tensor of its
    step (GPT-2-124M at micro batch 8: 823 MB in bf16); their gradient then
    needs no second one.

    ```mlir
    %l, %gs = graph.fused_softmax_cross_entropy %s, %t, %g {reduction = "mean",
        zero.arena_offsets = [1024, 0], zero.grad_over_scores} : ...
    ```

    With `row-pitch-alignment` (bytes; the CUDA target's 16) the rows of a
    fused cross-entropy's rank-2 scores and of their gradient are stored
    from a multiple of it when a row is not one already: each row `pitch`
    elements after the one before, the elements in between unused. Taken
    where nothing else sees the rows: the scores are a `graph.gemm`'s
    result read by the loss alone, the gradient is read only as the a or b
    of GEMMs, and every GEMM has alpha 1 and no c. Both ops record the
    strides (`zero.result_strides`, the pitch then 1), the storage is the
    padded size, and the emitters pass the pitch to the GEMMs (as a leading
    dimension) and to the loss. GPT-2's logits (50,257 bf16 a row) get a
    pitch of 50,264, so that the head's three GEMMs can run the GPU's
    aligned kernels.

    ```mlir
    %s = graph.gemm %h, %w {transB = true, zero.arena_offsets = [0],
        zero.result_strides = [array<i64: 64, 1>]} : ... -> tensor<8x61xbf16>
    ```

    On one rank a reduce-scatter's shard is its whole buffer: a
    `zero.reduce_scatter(_start)` whose buffer nothing else reads is marked
    `in_place` there, so that its shard is the buffer's storage (stage 2's
    and 3's per-gradient reductions then neither copy nor take a second
    buffer). Likewise a `zero.all_gather(_start)` of a `zero.param_shard`
    on one rank is marked `in_place`: the gathered parameter is a view of
    the rank's shard, in its state, and takes no arena storage (stage 3 on
    one GPU then holds no second copy of its parameters).

    Ops nested in a region (the step's `zero.if_finite`, which may hold a
    bucket of replica gathers) are planned in the order they run: each
    top-level op, then the ops of its region.

    The pass also plans the persistent state: every `graph.param` gets
    `zero.state_layout = #zero.state_layout<...>`, what each rank keeps of
    the parameter, its gradient accumulator and its optimizer state for the
    module's stage (a stage-3 `zero.persistent` parameter keeps its whole
    replica, as at stage 2), and where the accumulator lies in the
    runtime's gradient slab (`grad_offset`, bytes; the module gets
    `zero.grad_slab_bytes`). A stage-0 `zero.pack` of `@train_step` whose
    inputs are whole accumulators, each the only one of its parameter and
    read by the pack alone, is the slab: its accumulators lie where it holds
    them (from a 64-byte boundary, its padding after them), it is marked
    `zero.in_grad_slab`, takes no arena storage and copies nothing, and its
    all-reduce runs in the accumulators. The other accumulators follow,
    each from a 64-byte boundary, grouped by dtype (f32, f64, f16, bf16).

    ```mlir
    %p = zero.pack %w, %b {offsets = [0, 12], zero.in_grad_slab}
        : (tensor<4x3xf32>, tensor<3xf32>) -> !zero.flat<grads, f32, 16, 2>
    ``` Emitters only read the plan.

    ```mlir
    %7 = graph.relu %6 {zero.arena_offsets = [256]} : tensor<8x7xf32>
    ```

    With `host-step-scalars` (the CUDA target, whose arena is device
    memory) an op of `@train_step` whose results are all scalars gets
    `zero.host_offsets` instead, offsets into host memory of
    `zero.host_bytes` (on the module): the optimizer step's scalar
    arithmetic runs on the host, and only the ops that reduce device
    tensors into a scalar (the overflow check, the sum of squares) move
    data between the two.
  }];
  let options = [
    Option<"hostStepScalars", "host-step-scalars", "bool", /*default=*/"false",
           "Place @train_step's scalar results in host memory">,
    Option<"rowPitchAlignment", "row-pitch-alignment", "int64_t", /*default=*/"0",
           "Store a fused cross-entropy's score rows (and their gradient's) "
           "from multiples of this many bytes; 0: dense">,
  ];
  let dependentDialects = ["::zeroc::zero::ZeroDialect"];
}

def MixedPrecision : Pass<"zero-mixed-precision", "::mlir::ModuleOp"> {
  let summary = "runs @forward in fp16 or bf16 with fp32 master parameters";
  let description = [{
    DeepSpeed's fp16/bf16 training stores the model in 16 bits (its
    `module.half()`), computes in 16 bits, and keeps fp32 master weights only
    inside the optimizer. This pass rewrites the module before autodiff:
    every trainable f32 `graph.param` becomes a 16-bit parameter with
    `master(f32)` (its initial value rounded to nearest even; a value outside
    the 16-bit range is an error), so its reads, its gradient and every
    collective the ZeRO passes put around them are 16-bit. Float data
    inputs, float constants and non-trainable parameters are cast to the
    16-bit type, every float op then computes in it, and the loss is cast
    back to f32.

    ```mlir
    graph.param trainable @w master(f32) = dense<...> : tensor<4x3xf16>
    %w = graph.load_param @w : tensor<4x3xf16>
    %y = graph.matmul %x16, %w : tensor<2x4xf16>, tensor<4x3xf16> -> tensor<2x3xf16>
    ```
  }];
  let dependentDialects = ["::zeroc::graph::GraphDialect"];
  let options = [
    Option<"dtype", "dtype", "std::string", /*default=*/"\"f16\"",
           "The compute type: f16 or bf16">,
  ];
}

def ScaleLoss : Pass<"zero-scale-loss", "::mlir::ModuleOp"> {
  let summary = "seeds the backward pass with loss_scale / accumulation steps";
  let description = [{
    Replaces the constant 1 that seeds `@forward_backward`'s reverse sweep
    (marked `graph.loss_seed` by zero-autodiff) with what DeepSpeed's
    `engine.backward` differentiates: the loss divided by the gradient
    accumulation steps (`scale_wrt_gas`) and, with `dynamic`, multiplied by
    the loss scale (`zero.loss_scale`, DeepSpeed's `backward(loss * scale)`).
    Every micro-batch gradient is then already averaged over the
    accumulation steps, so 16-bit accumulators and collectives see the
    magnitudes DeepSpeed's do (and overflow when DeepSpeed's would); the
    runtime divides by the world size and unscales at the optimizer step.

    ```mlir
    %s = zero.loss_scale : tensor<f32>
    %g = graph.constant dense<2.500000e-01> : tensor<f32>
    %seed = graph.mul %s, %g : tensor<f32>, tensor<f32> -> tensor<f32>
    ```
  }];
  let dependentDialects = ["::zeroc::zero::ZeroDialect"];
  let options = [
    Option<"dynamic", "dynamic", "bool", /*default=*/"true",
           "Multiply the seed by zero.loss_scale (fp16 loss scaling)">,
    Option<"gradAccumSteps", "grad-accum-steps", "int64_t", /*default=*/"1",
           "Divide the seed by this many gradient accumulation steps">,
  ];
}

#endif // ZEROC_PASSES_PASSES_TD
