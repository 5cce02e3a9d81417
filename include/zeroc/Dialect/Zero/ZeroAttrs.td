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


//===----------------------------------------------------------------------===//
// The optimizer step's configuration
//===----------------------------------------------------------------------===//

// A double parameter (an f64 APFloat, so that it hashes) printed so that it
// parses back to the same value.
class Zero_F64Parameter<string desc, string default>
    : AttrOrTypeParameter<"::llvm::APFloat", desc> {
  let parser = [{ [&]() -> ::mlir::FailureOr<::llvm::APFloat> {
    double value = 0;
    if ($_parser.parseFloat(value))
      return ::mlir::failure();
    return ::llvm::APFloat(value);
  }() }];
  let printer = [{ $_printer.printFloat($_self) }];
  let comparator = "$_lhs.bitwiseIsEqual($_rhs)";
  let defaultValue = "::llvm::APFloat(double(" # default # "))";
}

class Zero_BoolParameter<string desc, string default>
    : AttrOrTypeParameter<"bool", desc> {
  let parser = [{ [&]() -> ::mlir::FailureOr<bool> {
    if (succeeded($_parser.parseOptionalKeyword("true")))
      return true;
    if (succeeded($_parser.parseOptionalKeyword("false")))
      return false;
    return $_parser.emitError($_parser.getCurrentLocation(),
                              "expected true or false");
  }() }];
  let printer = [{ $_printer << ($_self ? "true" : "false") }];
  let defaultValue = default;
}

class Zero_I64Parameter<string desc, string default>
    : AttrOrTypeParameter<"int64_t", desc> {
  let defaultValue = default;
}

def Zero_AdamAttr : AttrDef<Zero_Dialect, "Adam"> {
  let mnemonic = "adam";
  let summary = "DeepSpeed's Adam/AdamW (FusedAdam) and its hyperparameters";
  let description = [{
    The `optimizer` block of a ds_config with type Adam or AdamW. `lr`,
    `beta1` and `beta2` are the base values; the LR schedule
    (`zero.lr_schedule`) gives the value of each step. `adam_w_mode`:
    decoupled weight decay (AdamW) instead of L2; `bias_correction`:
    FusedAdam's default.

    ```mlir
    #zero.adam<lr = 1.000000e-03, weight_decay = 1.000000e-02>
    ```
  }];
  let parameters = (ins
    Zero_F64Parameter<"base learning rate", "1e-3">:$lr,
    Zero_F64Parameter<"", "0.9">:$beta1,
    Zero_F64Parameter<"", "0.999">:$beta2,
    Zero_F64Parameter<"", "1e-8">:$eps,
    Zero_F64Parameter<"", "0.0">:$weight_decay,
    Zero_BoolParameter<"", "true">:$adam_w_mode,
    Zero_BoolParameter<"", "true">:$bias_correction);
  let assemblyFormat = "`<` struct(params) `>`";
}

def Zero_SgdAttr : AttrDef<Zero_Dialect, "Sgd"> {
  let mnemonic = "sgd";
  let summary = "torch.optim.SGD and its hyperparameters";
  let description = [{
    The `optimizer` block of a ds_config with type SGD. `nesterov` needs a
    positive momentum and zero dampening.

    ```mlir
    #zero.sgd<lr = 1.000000e-01, momentum = 9.000000e-01>
    ```
  }];
  let parameters = (ins
    Zero_F64Parameter<"base learning rate", "1e-3">:$lr,
    Zero_F64Parameter<"", "0.0">:$momentum,
    Zero_F64Parameter<"", "0.0">:$dampening,
    Zero_F64Parameter<"", "0.0">:$weight_decay,
    Zero_BoolParameter<"", "false">:$nesterov);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Zero_LrScheduleKind : I32EnumAttr<"LrScheduleKind",
    "DeepSpeed's LR scheduler", [
      I32EnumAttrCase<"Constant", 0, "constant">,
      I32EnumAttrCase<"WarmupLR", 1, "warmup">,
      I32EnumAttrCase<"WarmupDecayLR", 2, "warmup_decay">,
      I32EnumAttrCase<"WarmupCosineLR", 3, "warmup_cosine">,
      I32EnumAttrCase<"OneCycle", 4, "one_cycle">,
      I32EnumAttrCase<"LRRangeTest", 5, "range_test">
    ]> {
  let cppNamespace = "::zeroc::zero";
  let genSpecializedAttr = 0;
}

def Zero_LrScheduleAttr : AttrDef<Zero_Dialect, "LrSchedule"> {
  let mnemonic = "lr_schedule";
  let summary = "a ds_config `scheduler` block";
  let description = [{
    DeepSpeed's LR schedulers (runtime/lr_schedules.py) with their
    parameters under DeepSpeed's names (`warmup_type_log` is
    `warmup_type == "log"`). `constant` keeps the optimizer's lr. The
    schedule is evaluated after t scheduler steps, t the number of
    optimizer updates taken so far (skipped steps do not count).

    ```mlir
    #zero.lr_schedule<kind = warmup_decay, warmup_max_lr = 1.000000e-03, warmup_num_steps = 10, total_num_steps = 100>
    ```
  }];
  let parameters = (ins
    DefaultValuedParameter<"::zeroc::zero::LrScheduleKind",
                           "::zeroc::zero::LrScheduleKind::Constant">:$kind,
    Zero_F64Parameter<"", "0.0">:$warmup_min_lr,
    Zero_F64Parameter<"", "1e-3">:$warmup_max_lr,
    Zero_I64Parameter<"", "1000">:$warmup_num_steps,
    Zero_BoolParameter<"", "true">:$warmup_type_log,
    Zero_I64Parameter<"", "0">:$total_num_steps,
    Zero_F64Parameter<"", "0.0">:$warmup_min_ratio,
    Zero_F64Parameter<"", "1e-4">:$cos_min_ratio,
    Zero_F64Parameter<"", "0.0">:$cycle_min_lr,
    Zero_F64Parameter<"", "0.0">:$cycle_max_lr,
    Zero_F64Parameter<"", "0.0">:$decay_lr_rate,
    Zero_I64Parameter<"", "2000">:$cycle_first_step_size,
    Zero_I64Parameter<"", "0">:$cycle_second_step_size,
    Zero_I64Parameter<"", "0">:$decay_step_size,
    Zero_BoolParameter<"", "true">:$cycle_momentum,
    Zero_F64Parameter<"", "0.8">:$cycle_min_mom,
    Zero_F64Parameter<"", "0.9">:$cycle_max_mom,
    Zero_F64Parameter<"", "0.0">:$decay_mom_rate,
    Zero_F64Parameter<"", "1e-3">:$range_min_lr,
    Zero_F64Parameter<"", "1.0">:$range_step_rate,
    Zero_I64Parameter<"", "2000">:$range_step_size,
    Zero_BoolParameter<"", "false">:$range_staircase);
  let assemblyFormat = "`<` struct(params) `>`";
}

def Zero_LossScalerAttr : AttrDef<Zero_Dialect, "LossScaler"> {
  let mnemonic = "loss_scaler";
  let summary = "DeepSpeed's fp16 loss scaler";
  let description = [{
    The `fp16` block's loss scaling. `static_scale > 0` is a static scale
    (`fp16.loss_scale`) that never changes; otherwise the dynamic scaler
    starts at `initial_scale` (2^`initial_scale_power`) and follows
    `DynamicLossScaler.update_scale` with `scale_window`
    (`loss_scale_window`), `hysteresis`, `consecutive_hysteresis`,
    `min_scale` (`min_loss_scale`) and `scale_factor`. Either way an
    overflow skips the step.

    ```mlir
    #zero.loss_scaler<initial_scale = 6.553600e+04, scale_window = 100>
    ```
  }];
  let parameters = (ins
    Zero_F64Parameter<"", "0.0">:$static_scale,
    Zero_F64Parameter<"", "65536.0">:$initial_scale,
    Zero_I64Parameter<"", "1000">:$scale_window,
    Zero_I64Parameter<"", "2">:$hysteresis,
    Zero_BoolParameter<"", "false">:$consecutive_hysteresis,
    Zero_F64Parameter<"", "1.0">:$min_scale,
    Zero_F64Parameter<"", "2.0">:$scale_factor);
  let assemblyFormat = "`<` struct(params) `>`";
}

def Zero_MonitorAttr : AttrDef<Zero_Dialect, "Monitor"> {
  let mnemonic = "monitor";
  let summary = "what the training loop around the step logs";
  let description = [{
    DeepSpeed's `steps_per_print` (0: no progress line), `wall_clock_breakdown`
    and `csv_monitor` (`csv` with its `output_path` and `job_name`). The
    loop, not the step, acts on them; `zero-step-boundary` records them on
    `@train_step` so that the emitter reads the whole configuration from the
    module.

    ```mlir
    #zero.monitor<steps_per_print = 10, csv = true, csv_job_name = "run1">
    ```
  }];
  let parameters = (ins
    Zero_I64Parameter<"", "0">:$steps_per_print,
    Zero_BoolParameter<"", "false">:$wall_clock_breakdown,
    Zero_BoolParameter<"", "false">:$csv,
    StringRefParameter<"", "\"\"">:$csv_output_path,
    StringRefParameter<"", "\"DeepSpeedJobName\"">:$csv_job_name);
  let assemblyFormat = "`<` struct(params) `>`";
}

def Zero_StateLayoutAttr : AttrDef<Zero_Dialect, "StateLayout"> {
  let mnemonic = "state_layout";
  let summary = "what of a parameter's state each rank keeps";
  let description = [{
    `zero-plan-buffers` puts one on every `graph.param` (as
    `zero.state_layout`) from the module's ZeRO stage, so that the runtime
    allocates the state without knowing the stage. In the parameter's flat
    buffer, zero-padded to P elements (a multiple of the world size W), rank
    r keeps elements `[r * param_stride, r * param_stride + param)` of the
    parameter (P and 0: the whole replica; S = P / W and S: its shard), a
    gradient accumulator of `grad` elements (n, P or S; 0 when frozen), and
    updates elements `[r * update_stride, r * update_stride + update)`
    (n and 0 in stage 0, S and S otherwise), for which it keeps the
    optimizer state (and an f32 master with mixed precision).

    The accumulator lies `grad_offset` bytes into the rank's gradient slab
    (the module's `zero.grad_slab_bytes`): a stage-0 bucket's accumulators
    at their offsets in its flat buffer, so that the bucket is the slab
    (`zero.in_grad_slab`), the others 64-byte aligned after them.

    ```mlir
    graph.param trainable @w = dense<0.5> : tensor<7x10xf32> {zero.state_layout = #zero.state_layout<param = 72, grad = 18, update = 18, update_stride = 18, grad_offset = 64>}
    ```
  }];
  let parameters = (ins
    Zero_I64Parameter<"", "0">:$param,
    Zero_I64Parameter<"", "0">:$param_stride,
    Zero_I64Parameter<"", "0">:$grad,
    Zero_I64Parameter<"", "0">:$update,
    Zero_I64Parameter<"", "0">:$update_stride,
    Zero_I64Parameter<"", "0">:$grad_offset);
  let assemblyFormat = "`<` struct(params) `>`";
}

#endif // ZEROC_DIALECT_ZERO_ZEROATTRS_TD
