//===- ConfigSchema.cpp - the ds_config.json keys zeroc knows -------------===//
//
// Defaults are DeepSpeed's code defaults, not its docs: snapshot 38327e07 as
// shared/reference/deepspeed-semantics.md §1 lists them, corrected where
// DeepSpeed 0.19.8 behaves differently (zeroc follows 0.19.8).
//
//===----------------------------------------------------------------------===//
#include "ConfigSchema.h"

#include "zeroc/Support/MessageText.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>

namespace zeroc::dsconfig {

//===----------------------------------------------------------------------===//
// Field constructors
//===----------------------------------------------------------------------===//

Field Field::boolean(std::string name, bool def) {
  Field f;
  f.name = std::move(name);
  f.kind = Kind::Bool;
  f.def = def;
  return f;
}

Field Field::integer(std::string name, int64_t def) {
  Field f;
  f.name = std::move(name);
  f.kind = Kind::Int;
  f.def = def;
  return f;
}

Field Field::integerOrNull(std::string name) {
  Field f;
  f.name = std::move(name);
  f.kind = Kind::Int;
  f.nullable = true;
  return f;
}

Field Field::number(std::string name, double def) {
  Field f;
  f.name = std::move(name);
  f.kind = Kind::Number;
  f.def = def;
  return f;
}

Field Field::numberOrNull(std::string name) {
  Field f;
  f.name = std::move(name);
  f.kind = Kind::Number;
  f.nullable = true;
  return f;
}

Field Field::string(std::string name, ojson def) {
  Field f;
  f.name = std::move(name);
  f.kind = Kind::String;
  f.def = std::move(def);
  f.nullable = f.def.is_null();
  return f;
}

Field Field::choice(std::string name, ojson def,
                    std::vector<std::string> choices) {
  Field f;
  f.name = std::move(name);
  f.kind = Kind::Choice;
  f.def = std::move(def);
  f.nullable = f.def.is_null();
  f.choices = std::move(choices);
  return f;
}

Field Field::dtype(std::string name) {
  Field f;
  f.name = std::move(name);
  f.kind = Kind::Dtype;
  f.nullable = true;
  return f;
}

Field Field::betas(std::string name) {
  Field f;
  f.name = std::move(name);
  f.kind = Kind::Betas;
  f.def = ojson::array({0.9, 0.999});
  return f;
}

Field Field::dict(std::string name) {
  Field f;
  f.name = std::move(name);
  f.kind = Kind::Dict;
  f.nullable = true;
  return f;
}

Field Field::block(std::string name, std::vector<Field> sub) {
  Field f;
  f.name = std::move(name);
  f.kind = Kind::Block;
  f.sub = std::move(sub);
  return f;
}

//===----------------------------------------------------------------------===//
// The tables
//===----------------------------------------------------------------------===//

namespace {

using F = Field;

constexpr double kInt32Max = std::numeric_limits<int32_t>::max();

// Why keys have no effect yet, shared by several keys.
const char *kCollectives = "zeroc picks the collectives of each stage itself";
const char *kStage3 = "zeroc's stage 3 all-gathers parameters around their "
                      "uses, bucketed by stage3_prefetch_bucket_size, keeps "
                      "those within stage3_param_persistence_threshold whole, "
                      "bounds its prefetch by stage3_max_live_parameters, "
                      "keeps a forward gather for the backward pass within "
                      "stage3_max_reuse_distance, and does no "
                      "module-granularity tuning";
const char *kOffload = "zeroc has no offload; the CPU target keeps every tensor "
                       "in host memory, the CUDA target in GPU memory";
const char *kZeroPP = "zeroc has no ZeRO++";
const char *kTorchModule = "a PyTorch-module detail of DeepSpeed's stage 3; "
                           "zeroc compiles the whole graph";
const char *kCheckpoint = "zeroc's checkpoints are its own (docs/Checkpoints.md)";
const char *kMonitor = "zeroc writes only the csv_monitor";
const char *kGradDivide = "zeroc divides the summed gradients once by world "
                          "size x gradient_accumulation_steps";

std::vector<Field> offloadParamFields() {
  return {
      F::choice("device", "none", {"none", "cpu", "nvme"}).ignored(kOffload),
      F::string("nvme_path", nullptr).ignored(kOffload).quiet(),
      F::integer("buffer_count", 5).atLeast(0).ignored(kOffload).quiet(),
      F::integer("buffer_size", 100000000).atLeast(0).ignored(kOffload).quiet(),
      F::integer("max_in_cpu", 1000000000).atLeast(0).ignored(kOffload).quiet(),
      F::boolean("pin_memory", false).ignored(kOffload).quiet(),
  };
}

std::vector<Field> offloadOptimizerFields() {
  return {
      F::choice("device", "none", {"none", "cpu", "nvme"}).ignored(kOffload),
      F::string("nvme_path", nullptr).ignored(kOffload).quiet(),
      F::integer("buffer_count", 4).atLeast(0).ignored(kOffload).quiet(),
      F::boolean("pin_memory", false).ignored(kOffload).quiet(),
      F::boolean("pipeline_read", false).ignored(kOffload).quiet(),
      F::boolean("pipeline_write", false).ignored(kOffload).quiet(),
      F::boolean("fast_init", false).ignored(kOffload).quiet(),
      F::number("ratio", 1.0)
          .atLeast(0)
          .atMost(1)
          .ignored(kOffload)
          .quiet()
          .withNote("< 1 (partial offload) requires stage 3"),
  };
}

std::vector<Field> zeroFields() {
  const int64_t maxsize = std::numeric_limits<int64_t>::max();
  return {
      F::integer("stage", 0)
          .withNote("0-3; `\"zero_optimization\": true` means 1"),
      F::boolean("contiguous_gradients", true).ignored(kCollectives),
      F::boolean("reduce_scatter", true).ignored(kCollectives),
      F::integer("reduce_bucket_size", 500000000)
          .atLeast(0)
          .autoValue()
          .withNote("elements per gradient reduction: the micro-step's "
                    "reduce-scatters (stages 2-3), the step's all-reduces "
                    "(0) and reduce-scatters (1); \"auto\" needs the hidden "
                    "size: error"),
      F::boolean("use_multi_rank_bucket_allreduce", true).ignored(kCollectives),
      F::boolean("allgather_partitions", true).ignored(kCollectives),
      F::integer("allgather_bucket_size", 500000000)
          .atLeast(0)
          .withNote("elements per all-gather of the updated replicas after "
                    "the optimizer step (stages 1-2, stage 3's persistent "
                    "parameters)"),
      F::boolean("overlap_comm", false)
          .noneByDefault()
          .withNote("None → true iff stage 3 (docs: false); zeroc overlaps "
                    "stage 3's parameter gathers and the gradient reductions "
                    "(stages 0-1: with one micro-step) during backward "
                    "(zero-overlap)"),
      F::boolean("load_from_fp32_weights", true)
          .withNote("false: a resumed run's fp32 masters restart from the "
                    "saved 16-bit parameters"),
      F::boolean("elastic_checkpoint", false).ignored(kCheckpoint),
      F::block("offload_param", offloadParamFields())
          .withNote("DeepSpeed uses it with stage 3 only"),
      F::block("offload_optimizer", offloadOptimizerFields()),
      F::integer("sub_group_size", 1000000000)
          .atLeast(0)
          .ignored("zeroc steps the optimizer on whole shards"),
      F::boolean("cpu_offload_param", false)
          .noneByDefault()
          .deprecated("offload_param")
          .ignored(kOffload),
      F::boolean("cpu_offload_use_pin_memory", false)
          .noneByDefault()
          .deprecated("offload_param or offload_optimizer")
          .ignored(kOffload),
      F::boolean("cpu_offload", false)
          .noneByDefault()
          .deprecated("offload_optimizer")
          .ignored(kOffload),
      F::integer("stage3_prefetch_bucket_size", 50000000)
          .atLeast(0)
          .autoValue()
          .withNote("stage 3: elements per parameter all-gather; docs: 5e8; "
                    "\"auto\": error with stage 3, the default otherwise"),
      F::integer("stage3_param_persistence_threshold", 100000)
          .atLeast(0)
          .autoValue()
          .withNote("stage 3: parameters of at most this many elements stay "
                    "whole on every rank (not gathered in the micro-step); "
                    "\"auto\": error with stage 3, the default otherwise"),
      F::integer("stage3_model_persistence_threshold", maxsize)
          .atLeast(0)
          .withNote("sys.maxsize; stage 3: most elements all persistent "
                    "parameters hold together"),
      F::integer("stage3_max_live_parameters", 1000000000)
          .atLeast(0)
          .withNote("stage 3 with overlap_comm: a gather is prefetched only "
                    "while the gathered elements alive stay within it"),
      F::integer("stage3_max_reuse_distance", 1000000000)
          .atLeast(0)
          .withNote("stage 3: a parameter used again in the backward pass "
                    "within this many elements of other parameter uses "
                    "keeps its forward gather instead of gathering again"),
      F::boolean("stage3_gather_16bit_weights_on_model_save", false)
          .ignored("out/train --save-params writes whole parameters"),
      F::integer("stage3_module_granularity_threshold", 0).ignored(kStage3),
      F::boolean("stage3_use_all_reduce_for_fetch_params", false)
          .ignored(kStage3),
      F::boolean("stage3_gather_fp16_weights_on_model_save", false)
          .noneByDefault()
          .deprecated("stage3_gather_16bit_weights_on_model_save")
          .ignored("out/train --save-params writes whole parameters"),
      F::boolean("ignore_unused_parameters", true)
          .ignoredForever("DeepSpeed uses it only to report unused parameters "
                          "at run time"),
      F::boolean("legacy_stage1", false)
          .withNote("true: error (removed in DeepSpeed 0.5.9)"),
      F::boolean("round_robin_gradients", false).ignored(kOffload),
      F::integer("zero_hpz_partition_size", 1).atLeast(0).ignored(kZeroPP),
      F::boolean("zero_quantized_weights", false).ignored(kZeroPP),
      F::boolean("zero_quantized_nontrainable_weights", false).ignored(kZeroPP),
      F::boolean("zero_quantized_gradients", false).ignored(kZeroPP),
      F::dict("zeropp_loco_param").ignored(kZeroPP),
      F::integer("mics_shard_size", -1).ignored("zeroc has no MiCS"),
      F::boolean("mics_hierarchical_params_gather", false)
          .ignored("zeroc has no MiCS"),
      F::boolean("memory_efficient_linear", true).ignoredForever(kTorchModule),
      F::boolean("pipeline_loading_checkpoint", false).ignored(kCheckpoint),
      F::boolean("override_module_apply", true).ignoredForever(kTorchModule),
      F::boolean("log_trace_cache_warnings", false)
          .ignoredForever(kTorchModule),
  };
}

std::vector<Field> fp16Fields() {
  return {
      F::boolean("enabled", false)
          .autoValue()
          .withNote("\"auto\" → false (HF --fp16 default)"),
      F::boolean("auto_cast", false).ignored("zeroc does not cast the inputs"),
      F::number("loss_scale", 0.0)
          .atLeast(0)
          .withNote("0: dynamic; > 0: static scale"),
      F::integer("initial_scale_power", 16)
          .atLeast(0)
          .atMost(1023)
          .withNote("applies without other scaler keys (DeepSpeed 0.19.x; "
                    "older releases used 2^32)"),
      F::integer("loss_scale_window", 1000).atLeast(1),
      F::integer("hysteresis", 2)
          .atLeast(1)
          .atMost(std::numeric_limits<int32_t>::max())
          .withNote("applies without other scaler keys (DeepSpeed 0.19.x; "
                    "older releases used 1)"),
      F::boolean("consecutive_hysteresis", false),
      F::number("min_loss_scale", 1.0).atLeast(0, /*exclusive=*/true),
      F::boolean("fp16_master_weights_and_grads", false)
          .ignored("zeroc keeps fp32 master weights and gradients")
          .withNote("requires stage 2 and offload_optimizer.device cpu"),
  };
}

std::vector<Field> bf16Fields() {
  return {
      F::boolean("enabled", false)
          .autoValue()
          .withNote("\"auto\" → false (HF --bf16 default)"),
      F::boolean("immediate_grad_update", false)
          .ignored("zeroc has no BF16_Optimizer"),
  };
}

std::vector<Field> monitorFields(const char *why) {
  return {
      F::boolean("enabled", false).ignored(why),
      F::string("output_path", "").ignored(why).quiet(),
      F::string("job_name", "DeepSpeedJobName").ignored(why).quiet(),
  };
}

std::vector<Field> makeTopLevel() {
  std::vector<Field> csv = {
      F::boolean("enabled", false),
      F::string("output_path", "").withNote("\"\": the current directory"),
      F::string("job_name", "DeepSpeedJobName"),
  };
  std::vector<Field> wandb = {
      F::boolean("enabled", false).ignored(kMonitor),
      F::string("group", nullptr).ignored(kMonitor).quiet(),
      F::string("team", nullptr).ignored(kMonitor).quiet(),
      F::string("project", "deepspeed").ignored(kMonitor).quiet(),
  };
  std::vector<Field> comet = {
      F::boolean("enabled", false).ignored(kMonitor),
      F::integer("samples_log_interval", 100)
          .atLeast(1)
          .ignored(kMonitor)
          .quiet(),
      F::string("project", nullptr).ignored(kMonitor).quiet(),
      F::string("workspace", nullptr).ignored(kMonitor).quiet(),
      F::string("api_key", nullptr).ignored(kMonitor).quiet(),
      F::string("experiment_name", nullptr).ignored(kMonitor).quiet(),
      F::string("experiment_key", nullptr).ignored(kMonitor).quiet(),
      F::boolean("online", false).noneByDefault().ignored(kMonitor).quiet(),
      F::string("mode", nullptr).ignored(kMonitor).quiet(),
  };
  std::vector<Field> checkpoint = {
      F::choice("tag_validation", "Warn", {"Ignore", "Warn", "Fail"})
          .withNote("whether every rank resumes from the same tag (--load-dir)"),
      F::boolean("load_universal", false)
          .ignored("zeroc reshards every checkpoint on load (any world size "
                   "and stage); no universal conversion is needed"),
      F::boolean("use_node_local_storage", false)
          .ignored("every rank reads the files it needs from --load-dir, "
                   "which must be visible to all ranks"),
      F::block("parallel_write",
               {F::boolean("pipeline_stage", false).ignored(kCheckpoint)}),
  };
  checkpoint[0].caseInsensitive = true;

  std::vector<Field> top = {
      F::integerOrNull("train_batch_size")
          .atLeast(1)
          .autoValue()
          .withNote("inferred (§1.5); \"auto\" = micro x accum x world"),
      F::integerOrNull("train_micro_batch_size_per_gpu")
          .atLeast(1)
          .atMost(kInt32Max)
          .autoValue()
          .withNote("inferred; \"auto\" = the model's batch dim"),
      F::integerOrNull("gradient_accumulation_steps")
          .atLeast(1)
          .atMost(kInt32Max)
          .autoValue()
          .withNote("inferred; \"auto\" = 1 (HF default)"),
      F::integerOrNull("steps_per_print")
          .atLeast(1)
          .atMost(kInt32Max)
          .withNote("None (absent or null): no per-step line, as DeepSpeed "
                    "≥ 0.15.2 (out/train prints only its header line)"),
      F::number("gradient_clipping", 1.0)
          .atLeast(0)
          .autoValue()
          .withNote("DeepSpeed 0.19.8's GRADIENT_CLIPPING_DEFAULT (an absent "
                    "key clips at 1.0); 0 disables; \"auto\" → 1.0 (HF "
                    "max_grad_norm)"),
      F::boolean("prescale_gradients", false).ignored(kGradDivide),
      F::number("gradient_predivide_factor", 1.0).atLeast(0, true).ignored(kGradDivide),
      F::choice("communication_data_type", nullptr, {"fp32", "fp16", "bf16"})
          .ignored("zeroc reduces gradients in the accumulators' dtype at "
                   "the stage 0-1 optimizer step and in the training dtype "
                   "inside stage 2-3 micro-steps")
          .withNote("None: follows fp16/bf16; other values warn"),
      F::block("data_types", {F::dtype("grad_accum_dtype")
                                  .ignored("zeroc accumulates gradients in fp32 or in the "
                                           "training dtype")
                                  .withNote("None: fp16 with fp16, fp32 with bf16 (as "
                                            "BF16_Optimizer) and fp32; \"fp32\" or the "
                                            "training dtype are honoured, others warn")}),
      F::boolean("wall_clock_breakdown", false),
      F::boolean("dump_state", false).ignored("zeroc does not dump the engine state"),
      F::boolean("zero_allow_untested_optimizer", false)
          .withNote("without it, SGD with stage ≥ 1 draws a warning"),
      F::boolean("zero_force_ds_cpu_optimizer", true).ignored(kOffload),
      F::dict("optimizer").withNote("see the optimizer tables"),
      F::dict("scheduler").withNote("see the scheduler tables"),
      F::block("fp16", fp16Fields()),
      F::block("bf16", bf16Fields()).withNote("legacy name: bfloat16"),
      F::block("zero_optimization", zeroFields()),
      F::block("tensorboard", monitorFields(kMonitor)),
      F::block("csv_monitor", csv),
      F::block("wandb", wandb),
      F::block("comet", comet),
      F::block("checkpoint", checkpoint),
      F::block("zeroc", {F::boolean("tf32", false)
                             .withNote("zeroc's own (DeepSpeed ignores the block): "
                                       "CUDA f32 matmuls on TF32 tensor cores, as "
                                       "torch.backends.cuda.matmul.allow_tf32; the "
                                       "CPU target warns"),
                         F::boolean("fuse_elementwise", true)
                             .withNote("zeroc's own: the CUDA target computes each "
                                       "chain of elementwise ops in one kernel, a "
                                       "softmax with its chains, a loss with its "
                                       "gradient, a layer norm gradient with the "
                                       "residual add, a bias gradient with its weight "
                                       "gradient's GEMM; false keeps one kernel per op "
                                       "(to compare or bisect); the CPU target has "
                                       "no fusion"),
                         F::boolean("fuse_attention", true)
                             .withNote("zeroc's own: the CUDA target computes each "
                                       "f16/bf16 softmax attention, and its gradient, "
                                       "in one kernel that never stores the scores, "
                                       "adding a QKV projection's bias as it loads "
                                       "(with fuse_elementwise); false keeps the "
                                       "matmuls, the softmax and the bias's add")}),
  };
  return top;
}

std::vector<Field> makeOptimizerFields() {
  return {
      F::string("type", "AdamW")
          .withNote("DeepSpeed: None (the client's optimizer), zeroc: AdamW; "
                    "AdamW/Adam/SGD, DeepSpeed's other types: error"),
      F::dict("params"),
      F::boolean("legacy_fusion", false)
          .ignored("zeroc has no fused-kernel variants"),
  };
}

std::vector<Field> adamParams() {
  return {
      F::number("lr", 1e-3)
          .atLeast(0)
          .autoValue()
          .withNote("\"auto\" → 5e-5 (HF)"),
      F::betas("betas").autoValue().withNote("\"auto\" → [0.9, 0.999] (HF)"),
      F::number("eps", 1e-8)
          .atLeast(0)
          .autoValue()
          .withNote("\"auto\" → 1e-8 (HF)"),
      F::number("weight_decay", 0.0)
          .atLeast(0)
          .autoValue()
          .withNote("\"auto\" → 0.0 (HF)"),
      F::boolean("bias_correction", true)
          .withNote("false: FusedAdam without bias correction"),
      F::boolean("adam_w_mode", true)
          .withNote("ignored for AdamW (always decoupled)"),
      F::boolean("torch_adam", false)
          .ignoredForever("zeroc's Adam computes the same update as "
                          "torch.optim.Adam/AdamW"),
      F::boolean("amsgrad", false).withNote("true: error"),
      F::boolean("set_grad_none", true)
          .quiet()
          .ignoredForever("zeroc zeroes the gradient accumulators itself"),
  };
}

std::vector<Field> sgdParams() {
  return {
      F::number("lr", 1e-3)
          .atLeast(0)
          .autoValue()
          .withNote("\"auto\" → 5e-5 (HF)"),
      F::number("momentum", 0.0).atLeast(0),
      F::number("weight_decay", 0.0)
          .atLeast(0)
          .autoValue()
          .withNote("\"auto\" → 0.0 (HF)"),
      F::number("dampening", 0.0).withNote("torch.optim.SGD's"),
      F::boolean("nesterov", false)
          .withNote("needs momentum > 0 and dampening 0 (torch's rule)"),
      F::boolean("maximize", false).withNote("true: error (not supported yet)"),
  };
}

std::vector<Field> warmupParams(bool decay) {
  std::vector<Field> p = {
      F::number("warmup_min_lr", 0.0)
          .atLeast(0)
          .autoValue()
          .withNote("\"auto\" → 0"),
      F::number("warmup_max_lr", 1e-3)
          .atLeast(0)
          .autoValue()
          .withNote("\"auto\" → optimizer.params.lr"),
      F::integer("warmup_num_steps", 1000)
          .atLeast(0)
          .autoValue()
          .withNote("\"auto\" → 0; used as max(2, n)"),
      F::string("warmup_type", "log")
          .withNote("log or linear; others: log, with a warning"),
  };
  if (decay)
    p.push_back(F::integerOrNull("total_num_steps")
                    .atLeast(1)
                    .mustBeGiven()
                    .autoValue()
                    .withNote("required; \"auto\": error"));
  return p;
}

std::vector<Field> cosineParams() {
  return {
      F::integerOrNull("total_num_steps")
          .atLeast(1)
          .mustBeGiven()
          .autoValue()
          .withNote("required; \"auto\": error"),
      F::number("warmup_min_ratio", 0.0).atLeast(0),
      F::integer("warmup_num_steps", 1000)
          .atLeast(0)
          .autoValue()
          .withNote("\"auto\" → 0; used as max(2, n)"),
      F::number("cos_min_ratio", 1e-4).atLeast(0),
      F::string("warmup_type", "log")
          .withNote("log or linear; others: log, with a warning"),
  };
}

std::vector<Field> oneCycleParams() {
  return {
      F::numberOrNull("cycle_min_lr")
          .atLeast(0)
          .mustBeGiven()
          .withNote("required"),
      F::numberOrNull("cycle_max_lr")
          .atLeast(0)
          .mustBeGiven()
          .withNote("required"),
      F::number("decay_lr_rate", 0.0).atLeast(0),
      F::integer("cycle_first_step_size", 2000).atLeast(1),
      F::integerOrNull("cycle_second_step_size")
          .atLeast(0)
          .withNote("None → cycle_first_step_size"),
      F::integer("cycle_first_stair_count", 0)
          .atLeast(0)
          .ignored("zeroc's OneCycle has no staircase"),
      F::integerOrNull("cycle_second_stair_count")
          .atLeast(0)
          .ignored("zeroc's OneCycle has no staircase")
          .withNote("None → cycle_first_stair_count"),
      F::integer("decay_step_size", 0).atLeast(0).withNote("0: no decay"),
      F::boolean("cycle_momentum", true)
          .withNote("off for SGD (no betas), as DeepSpeed"),
      F::number("cycle_min_mom", 0.8).atLeast(0),
      F::number("cycle_max_mom", 0.9).atLeast(0),
      F::number("decay_mom_rate", 0.0).atLeast(0),
  };
}

std::vector<Field> rangeTestParams() {
  return {
      F::number("lr_range_test_min_lr", 1e-3).atLeast(0),
      F::integer("lr_range_test_step_size", 2000).atLeast(1),
      F::number("lr_range_test_step_rate", 1.0).atLeast(0),
      F::boolean("lr_range_test_staircase", false),
  };
}

const std::vector<std::pair<std::string, std::vector<Field>>> &
schedulerTable() {
  static const std::vector<std::pair<std::string, std::vector<Field>>> table = {
      {"LRRangeTest", rangeTestParams()}, {"OneCycle", oneCycleParams()},
      {"WarmupLR", warmupParams(false)},  {"WarmupDecayLR", warmupParams(true)},
      {"WarmupCosineLR", cosineParams()},
  };
  return table;
}

const Field *findIn(const std::vector<Field> &fields, const std::string &name) {
  for (const Field &f : fields)
    if (f.name == name)
      return &f;
  return nullptr;
}

std::string kindName(const Field &f) {
  switch (f.kind) {
  case Kind::Bool:
    return "true or false";
  case Kind::Int:
    return "an integer";
  case Kind::Number:
    return "a number";
  case Kind::String:
    return "a string";
  case Kind::Choice:
  case Kind::Dtype:
    return "a string";
  case Kind::Betas:
    return "a list of two numbers";
  case Kind::Dict:
  case Kind::Block:
    return "an object";
  }
  return "a value";
}

std::string lower(std::string s) {
  for (char &c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string fmtBound(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15)
    return std::to_string(static_cast<int64_t>(v));
  return show(ojson(v));
}

void checkRange(const std::string &path, const Field &f, double v,
                const std::string &text) {
  if (f.min && (f.minExclusive ? v <= *f.min : v < *f.min))
    throw ConfigError(path + " must be " + (f.minExclusive ? "> " : ">= ") +
                      fmtBound(*f.min) + ", got " + text);
  if (f.max && (f.maxExclusive ? v >= *f.max : v > *f.max))
    throw ConfigError(path + " must be " + (f.maxExclusive ? "< " : "<= ") +
                      fmtBound(*f.max) + ", got " + text);
}

size_t editDistance(const std::string &a, const std::string &b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t prev = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cur = row[j];
      row[j] = std::min(
          {row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] == b[j - 1] ? 0 : 1)});
      prev = cur;
    }
  }
  return row[b.size()];
}

/// Every leaf path of the schema, for suggestions across blocks.
void allPaths(const std::string &prefix, const std::vector<Field> &fields,
              std::vector<std::string> &out) {
  for (const Field &f : fields) {
    out.push_back(prefix + f.name);
    if (f.kind == Kind::Block)
      allPaths(prefix + f.name + ".", f.sub, out);
  }
}

} // namespace

const std::vector<Field> &topLevelFields() {
  static const std::vector<Field> fields = makeTopLevel();
  return fields;
}

const std::vector<Field> &optimizerFields() {
  static const std::vector<Field> fields = makeOptimizerFields();
  return fields;
}

const std::vector<Field> *optimizerParams(const std::string &lowerType) {
  static const std::vector<Field> adam = adamParams(), sgd = sgdParams();
  if (lowerType == "adam" || lowerType == "adamw")
    return &adam;
  if (lowerType == "sgd")
    return &sgd;
  return nullptr;
}

const std::vector<Field> *schedulerParams(const std::string &type) {
  for (const auto &[name, fields] : schedulerTable())
    if (name == type)
      return &fields;
  return nullptr;
}

const std::vector<std::string> &schedulerTypes() {
  static const std::vector<std::string> types = [] {
    std::vector<std::string> t;
    for (const auto &entry : schedulerTable())
      t.push_back(entry.first);
    return t;
  }();
  return types;
}

const Field *findField(const std::string &path) {
  const std::vector<Field> *fields = &topLevelFields();
  const Field *f = nullptr;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    std::string part =
        path.substr(start, dot == std::string::npos ? dot : dot - start);
    f = findIn(*fields, part);
    if (!f || dot == std::string::npos)
      return f;
    if (f->kind != Kind::Block)
      return nullptr;
    fields = &f->sub;
    start = dot + 1;
  }
}

namespace {

} // namespace

std::string echo(const std::string &s, size_t limit) {
  return messageText(s, limit);
}

std::string oneLine(const std::string &s) {
  return messageText(s, std::string::npos);
}

std::string show(const ojson &v) {
  // The replace handler keeps dump() from throwing on bytes that are not
  // UTF-8 (the parser rejects them, but values may come from elsewhere).
  return echo(v.dump(-1, ' ', false, ojson::error_handler_t::replace));
}

[[noreturn]] void autoUnsupported(const std::string &path) {
  throw ConfigError(
      path + " is \"auto\", which zeroc can only resolve for the batch sizes, "
             "gradient_clipping, fp16.enabled, bf16.enabled, "
             "optimizer.params.{lr,betas,eps,weight_decay} and "
             "scheduler.params.{warmup_min_lr,warmup_max_lr,warmup_num_steps}; "
             "set a value");
}

ojson readLeaf(const std::string &path, const Field &f, const ojson &v,
               ReadLog &log) {
  if (v.is_string() && v.get<std::string>() == "auto" &&
      f.kind != Kind::String && f.kind != Kind::Dict) {
    if (!f.autoOk)
      autoUnsupported(path);
    log.autos.insert(path);
    return v;
  }
  if (v.is_null()) {
    if (f.nullable)
      return v;
    throw ConfigError(path + " must be " + kindName(f) + ", got null");
  }
  auto wrongType = [&]() -> ConfigError {
    return ConfigError(path + " must be " + kindName(f) + ", got " + show(v));
  };
  switch (f.kind) {
  case Kind::Bool:
    if (!v.is_boolean())
      throw wrongType();
    return v;
  case Kind::Int: {
    int64_t i;
    if (v.is_number_integer()) {
      if (v.is_number_unsigned() &&
          v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
        throw ConfigError(path + " is too large, got " + show(v));
      i = v.get<int64_t>();
    } else if (v.is_number_float()) {
      double d = v.get<double>();
      if (d != std::floor(d) || !std::isfinite(d))
        throw wrongType();
      if (std::fabs(d) >= 9.2e18)
        throw ConfigError(path + " is too large, got " + show(v));
      i = static_cast<int64_t>(d);
    } else {
      throw wrongType();
    }
    checkRange(path, f, static_cast<double>(i), show(v));
    return ojson(i);
  }
  case Kind::Number:
    if (!v.is_number())
      throw wrongType();
    if (!std::isfinite(v.get<double>()))
      throw ConfigError(path + " must be finite, got " + show(v));
    checkRange(path, f, v.get<double>(), show(v));
    return v.is_number_float() ? v : ojson(v.get<double>());
  case Kind::String:
    if (!v.is_string())
      throw wrongType();
    return v;
  case Kind::Choice: {
    if (!v.is_string())
      throw wrongType();
    std::string s = v.get<std::string>();
    for (const std::string &c : f.choices)
      if (s == c || (f.caseInsensitive && lower(s) == lower(c)))
        return ojson(c);
    // DeepSpeed lower-cases communication_data_type.
    if (path == "communication_data_type")
      for (const std::string &c : f.choices)
        if (lower(s) == c)
          return ojson(c);
    std::string list;
    for (const std::string &c : f.choices)
      list += (list.empty() ? "\"" : ", \"") + c + "\"";
    throw ConfigError(path + " must be one of " + list + ", got " + show(v));
  }
  case Kind::Dtype: {
    if (!v.is_string())
      throw wrongType();
    // DeepSpeed's DtypeEnum spellings.
    static const std::vector<std::pair<std::vector<std::string>, std::string>>
        names = {
            {{"fp32", "float32", "float", "torch.float32"}, "fp32"},
            {{"fp16", "float16", "half", "torch.float16"}, "fp16"},
            {{"bf16", "bfloat16", "torch.bfloat16"}, "bf16"},
        };
    std::string s = v.get<std::string>();
    for (const auto &[spellings, canonical] : names)
      if (std::find(spellings.begin(), spellings.end(), s) != spellings.end())
        return ojson(canonical);
    throw ConfigError(path + " must be \"fp32\", \"fp16\" or \"bf16\", got " +
                      show(v));
  }
  case Kind::Betas: {
    if (!v.is_array() || v.size() != 2 || !v[0].is_number() ||
        !v[1].is_number())
      throw ConfigError(path + " must be a list of two numbers, got " +
                        show(v));
    ojson out = ojson::array();
    for (int i = 0; i < 2; ++i) {
      double b = v[i].get<double>();
      if (b < 0 || b >= 1)
        throw ConfigError(path + "[" + std::to_string(i) +
                          "] must be in [0, 1), got " + show(v[i]));
      out.push_back(b);
    }
    return out;
  }
  case Kind::Dict:
    if (!v.is_object())
      throw wrongType();
    return v;
  case Kind::Block:
    break;
  }
  throw wrongType();
}

ojson defaults(const std::vector<Field> &fields) {
  ojson out = ojson::object();
  for (const Field &f : fields) {
    if (!f.deprecatedFor.empty())
      continue;
    out[f.name] = f.kind == Kind::Block ? defaults(f.sub) : f.def;
  }
  return out;
}

std::string closestKey(const std::string &key,
                       const std::vector<std::string> &candidates) {
  std::string best;
  size_t bestDist = std::max<size_t>(2, key.size() / 4) + 1;
  std::string lk = lower(key);
  for (const std::string &c : candidates) {
    // The distance is at least the length difference: skip the O(n m) work
    // (a megabyte key against the schema's names).
    size_t gap = key.size() > c.size() ? key.size() - c.size()
                                       : c.size() - key.size();
    if (gap >= bestDist)
      continue;
    size_t d = editDistance(lk, lower(c));
    if (d < bestDist) {
      bestDist = d;
      best = c;
    }
  }
  return best;
}

/// The schema's leaf paths, computed once.
const std::vector<std::string> &schemaPaths() {
  static const std::vector<std::string> paths = [] {
    std::vector<std::string> p;
    allPaths("", topLevelFields(), p);
    return p;
  }();
  return paths;
}

std::string unknownKeyWarning(const std::string &prefix, const std::string &key,
                              const std::vector<std::string> &siblings) {
  std::string path = prefix + key, suggestion;
  std::string near = closestKey(key, siblings);
  if (!near.empty()) {
    suggestion = prefix + near;
  } else {
    // The right key in the wrong block ("overlap_comm" at the top level).
    for (const std::string &p : schemaPaths()) {
      size_t d = p.rfind('.');
      if (p.compare(d == std::string::npos ? 0 : d + 1, std::string::npos,
                    key) == 0 &&
          p != path) {
        suggestion = p;
        break;
      }
    }
  }
  std::string w = "unknown key '" + prefix + echo(key) + "' (ignored";
  if (!suggestion.empty())
    w += "; did you mean '" + suggestion + "'?";
  return w + ")";
}

void noteUnknownKey(const std::string &prefix, const std::string &key,
                    const std::vector<std::string> &siblings, ReadLog &log) {
  if (!log.warnings || log.unknownKeys++ >= kMaxUnknownKeyWarnings)
    return;
  log.warnings->push_back(unknownKeyWarning(prefix, key, siblings));
  log.lastUnknownWarning = log.warnings->size() - 1;
}

void summarizeUnknownKeys(ReadLog &log) {
  if (!log.warnings || log.unknownKeys <= kMaxUnknownKeyWarnings)
    return;
  std::vector<std::string> &w = *log.warnings;
  w.insert(w.begin() + static_cast<std::ptrdiff_t>(log.lastUnknownWarning) + 1,
           "... and " +
               std::to_string(log.unknownKeys - kMaxUnknownKeyWarnings) +
               " more unknown keys (ignored; only the first " +
               std::to_string(kMaxUnknownKeyWarnings) + " are listed)");
}

void readBlock(const std::string &prefix, const ojson &in,
               const std::vector<Field> &fields, ojson &out, ReadLog &log) {
  if (!out.is_object())
    out = ojson::object();
  for (const Field &f : fields)
    if (f.deprecatedFor.empty() && !out.contains(f.name))
      out[f.name] = f.kind == Kind::Block ? defaults(f.sub) : f.def;
  if (in.is_null())
    return;
  std::string blockName =
      prefix.empty() ? "the config" : prefix.substr(0, prefix.size() - 1);
  if (!in.is_object())
    throw ConfigError(blockName + " must be an object, got " + show(in));
  std::vector<std::string> siblings;
  for (const Field &f : fields)
    siblings.push_back(f.name);
  for (const auto &[key, value] : in.items()) {
    std::string path = prefix + key;
    const Field *f = findIn(fields, key);
    if (!f) {
      noteUnknownKey(prefix, key, siblings, log);
      continue;
    }
    if (f->kind == Kind::Block) {
      if (value.is_string() && value.get<std::string>() == "auto")
        autoUnsupported(path);
      if (value.is_null())
        continue; // None: DeepSpeed's defaults
      if (!value.is_object())
        throw ConfigError(path + " must be an object, got " + show(value));
      readBlock(path + ".", value, f->sub, out[key], log);
      continue;
    }
    ojson v = readLeaf(path, *f, value, log);
    if (f->deprecatedFor.empty())
      out[key] = v;
    log.given.emplace_back(path, f);
  }
}

//===----------------------------------------------------------------------===//
// The schema as Markdown
//===----------------------------------------------------------------------===//

namespace {

std::string typeName(const Field &f) {
  std::string t;
  switch (f.kind) {
  case Kind::Bool:
    t = "bool";
    break;
  case Kind::Int:
    t = "int";
    break;
  case Kind::Number:
    t = "number";
    break;
  case Kind::String:
    t = "string";
    break;
  case Kind::Choice: {
    for (const std::string &c : f.choices)
      t += (t.empty() ? "" : "/") + c;
    break;
  }
  case Kind::Dtype:
    t = "fp32/fp16/bf16";
    break;
  case Kind::Betas:
    t = "[number, number]";
    break;
  case Kind::Dict:
  case Kind::Block:
    t = "object";
    break;
  }
  if (f.min || f.max) {
    std::string range;
    if (f.min)
      range += (f.minExclusive ? "> " : "≥ ") + fmtBound(*f.min);
    if (f.max)
      range += std::string(range.empty() ? "" : ", ") +
               (f.maxExclusive ? "< " : "≤ ") + fmtBound(*f.max);
    t += " (" + range + ")";
  }
  if (f.nullable && !f.required && f.kind != Kind::Dict)
    t += " or null";
  return t;
}

std::string defaultText(const Field &f) {
  if (f.required)
    return "required";
  if (f.def.is_null())
    return "None";
  return "`" + f.def.dump() + "`";
}

std::string effectText(const Field &f) {
  if (!f.deprecatedFor.empty())
    return "deprecated → `" + f.deprecatedFor + "`; no effect: " + f.noEffect;
  if (f.noEffect.empty())
    return "**yes**";
  return std::string(f.never ? "no (never): " : "not yet: ") + f.noEffect;
}

void rows(const std::string &prefix, const std::vector<Field> &fields,
          std::ostringstream &os, const char *effect = nullptr) {
  for (const Field &f : fields) {
    if (f.kind == Kind::Block) {
      rows(prefix + f.name + ".", f.sub, os, effect);
      continue;
    }
    if (prefix.empty() && (f.name == "optimizer" || f.name == "scheduler"))
      continue;
    std::string note = f.note;
    for (char &c : note)
      if (c == '|')
        c = '/';
    os << "| `" << prefix << f.name << "` | " << typeName(f) << " | "
       << defaultText(f) << " | " << (effect ? effect : effectText(f)) << " | "
       << note << " |\n";
  }
}

const char *kHeader =
    "| key | type | DeepSpeed code default | effect in zeroc now | notes |\n"
    "|---|---|---|---|---|\n";

} // namespace

std::string schemaMarkdown() {
  std::ostringstream os;
  os << "### Top level, fp16/bf16, zero_optimization, monitors, checkpoint\n\n"
     << kHeader;
  rows("", topLevelFields(), os);
  os << "\n### optimizer\n\n" << kHeader;
  rows("optimizer.", optimizerFields(), os);
  os << "\n#### optimizer.params for Adam and AdamW\n\n" << kHeader;
  rows("optimizer.params.", *optimizerParams("adam"), os);
  os << "\n#### optimizer.params for SGD\n\n" << kHeader;
  rows("optimizer.params.", *optimizerParams("sgd"), os);
  for (const std::string &type : schedulerTypes()) {
    os << "\n### scheduler.params for " << type << "\n\n" << kHeader;
    rows("scheduler.params.", *schedulerParams(type), os);
  }
  return os.str();
}

} // namespace zeroc::dsconfig
