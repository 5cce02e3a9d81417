//===- DsConfig.cpp - DeepSpeed config to TrainConfig ---------------------===//
//
// DeepSpeed's semantics on top of the key table of ConfigSchema.cpp: the
// legacy spellings, deprecated keys, "auto" (as the HF Trainer resolves it),
// cross-key validators, the batch-size rule and the TrainConfig fields.
// zeroc follows DeepSpeed 0.19.8 (kDeepSpeedSemantics): the references are
// to snapshot 38327e07 as deepspeed-semantics.md §1 describes it, with that
// document's corrections for 0.19.8 (the fp16 scaler defaults always apply;
// steps_per_print None prints no per-step line).
//
//===----------------------------------------------------------------------===//
#include "zeroc/Driver/DsConfig.h"

#include "ConfigSchema.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

namespace zeroc {

namespace {

using namespace dsconfig;

// The HF Trainer's TrainingArguments defaults, which its DeepSpeed
// integration writes into "auto" keys.
constexpr double kHfLearningRate = 5e-5, kHfBeta1 = 0.9, kHfBeta2 = 0.999,
                 kHfEps = 1e-8, kHfWeightDecay = 0.0, kHfMaxGradNorm = 1.0;

/// DeepSpeed's optimizers that zeroc does not implement (config.py's
/// DEEPSPEED_OPTIMIZERS less adam/adamw).
const std::set<std::string> kOtherDsOptimizers = {
    "adagrad", "lamb",    "onebitadam", "zerooneadam", "onebitlamb",
    "muadam",  "muadamw", "musgd",      "lion"};

/// DeepSpeed keys outside the reference's §1 that zeroc does not read.
const std::set<std::string> kOtherDsKeys = {
    "activation_checkpointing",
    "aio",
    "amp",
    "autotuning",
    "comms_logger",
    "compression_training",
    "curriculum_learning",
    "data_efficiency",
    "dataloader_drop_last",
    "disable_allgather",
    "eigenvalue",
    "elasticity",
    "flops_profiler",
    "hybrid_engine",
    "memory_breakdown",
    "nebula",
    "pipeline",
    "progressive_layer_drop",
    "quantize_training",
    "sparse_attention",
    "sparse_gradients",
    "compile",
    "timers",
    "tensor_parallel",
    "torch_autocast",
    "weight_quantization",
    "seq_parallel_communication_data_type",
    "use_data_before_expert_parallel_",
    "graph_harvesting",
    "vocabulary_size"};

/// Pydantic field names DeepSpeed also accepts for the stage3_* aliases.
const std::vector<std::pair<std::string, std::string>> kZeroFieldNames = {
    {"prefetch_bucket_size", "stage3_prefetch_bucket_size"},
    {"param_persistence_threshold", "stage3_param_persistence_threshold"},
    {"model_persistence_threshold", "stage3_model_persistence_threshold"},
    {"max_live_parameters", "stage3_max_live_parameters"},
    {"max_reuse_distance", "stage3_max_reuse_distance"},
    {"gather_16bit_weights_on_model_save",
     "stage3_gather_16bit_weights_on_model_save"},
    {"module_granularity_threshold", "stage3_module_granularity_threshold"},
    {"use_all_reduce_for_fetch_params",
     "stage3_use_all_reduce_for_fetch_params"},
};

std::string lower(std::string s) {
  for (char &c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// "fp16", "bf16" or "fp32", from the resolved config's fp16/bf16 blocks.
std::string trainingDtypeOf(const ojson &resolved) {
  return resolved.at("fp16").at("enabled") == true   ? "fp16"
         : resolved.at("bf16").at("enabled") == true ? "bf16"
                                                     : "fp32";
}

/// The gradient accumulators' dtype zeroc uses: fp32 with bf16 unless
/// grad_accum_dtype says bf16 (BF16_Optimizer's fp32 accumulation), fp32
/// with fp16 only when it says so, fp32 in fp32 training.
std::string accumulatorDtypeOf(const ojson &resolved) {
  const std::string training = trainingDtypeOf(resolved);
  const ojson &accum = resolved.at("data_types").at("grad_accum_dtype");
  if (training == "bf16")
    return accum == "bf16" ? "bf16" : "fp32";
  if (training == "fp16")
    return accum == "fp32" ? "fp32" : "fp16";
  return "fp32";
}

/// The value at a dotted path of `j` (which must exist).
ojson &at(ojson &j, const std::string &path) {
  ojson *cur = &j;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    cur = &(
        *cur)[path.substr(start, dot == std::string::npos ? dot : dot - start)];
    if (dot == std::string::npos)
      return *cur;
    start = dot + 1;
  }
}

bool isAuto(const ojson &v) {
  return v.is_string() && v.get<std::string>() == "auto";
}

/// Reads and parses the file within zeroc's limits, rejecting duplicate keys
/// as DeepSpeed does and allowing comments (DeepSpeed reads the file with
/// hjson).
ojson loadJson(const std::string &path, uint64_t maxBytes) {
  return parseConfigJson(readConfigFile(path, maxBytes));
}

/// Appends `key: value` to the object `obj`, which must not have `key` yet
/// (ordered_json's operator[] would search the object: quadratic).
void append(ojson &obj, const std::string &key, const ojson &value) {
  obj.get_ref<ojson::object_t &>().emplace_back(key, value);
}

/// Drops from `given` (a params object) the keys that `fields` lacks but
/// another type of the block takes, with a warning naming those types.
ojson dropOtherTypesParams(
    const std::string &prefix, const std::string &type, const ojson &given,
    const std::vector<Field> &fields,
    const std::vector<std::pair<std::string, const std::vector<Field> *>>
        &others,
    std::vector<std::string> &warnings) {
  if (!given.is_object())
    return given;
  ojson kept = ojson::object();
  for (const auto &[key, value] : given.items()) {
    bool known = std::any_of(fields.begin(), fields.end(),
                             [&](const Field &f) { return f.name == key; });
    std::string takers;
    for (const auto &[name, otherFields] : others)
      if (!known && name != type &&
          std::any_of(otherFields->begin(), otherFields->end(),
                      [&](const Field &f) { return f.name == key; }))
        takers += (takers.empty() ? "" : ", ") + name;
    if (takers.empty()) {
      append(kept, key, value);
      continue;
    }
    warnings.push_back(prefix + key + " is not a parameter of " + type +
                       " (ignored; " + takers + " take" +
                       (takers.find(',') == std::string::npos ? "s" : "") +
                       " it)");
  }
  return kept;
}

/// Everything read from one file.
struct Parsed {
  ojson out; ///< the resolved config
  int stage = 0;
  bool stageGiven = false;
  int64_t trainBatch = 0; ///< 0: absent or "auto"
  int64_t microBatch = 0; ///< 0: absent; -1: "auto"
  int64_t gradAccum = 0;  ///< 0: absent
  /// zero_optimization.overlap_comm as given; unset: DeepSpeed's None (true
  /// iff stage 3, with the stage `zeroc compile` ends up with).
  std::optional<bool> overlapComm;
};

class Reader {
public:
  Reader(std::vector<std::string> &warnings) : warnings(warnings) {
    log.warnings = &warnings;
  }

  Parsed read(const std::string &path, std::optional<int> stageOverride,
             uint64_t maxBytes);

private:
  std::vector<std::string> &warnings;
  ReadLog log;
  ojson out;
  int stage = 0;

  bool given(const std::string &path) const {
    return std::any_of(log.given.begin(), log.given.end(),
                       [&](const auto &g) { return g.first == path; });
  }
  void warn(std::string w) { warnings.push_back(std::move(w)); }
  std::string trainingDtype() { return trainingDtypeOf(out); }
  std::string accumulatorDtype() { return accumulatorDtypeOf(out); }

  ojson normalize(const ojson &root);
  void readZero(const ojson &root, std::optional<int> stageOverride, Parsed &p);
  void readOptimizer(const ojson &opt);
  void readScheduler(const ojson &sched);
  void resolveAuto();
  void validate(const ojson &in);
  void resolveRest();
  void noEffectWarnings();
};

/// The legacy spellings DeepSpeed accepts, rewritten to the schema's keys.
ojson Reader::normalize(const ojson &root) {
  ojson in = ojson::object();
  for (const auto &[key, value] : root.items()) {
    if (key == "bfloat16") {
      if (root.contains("bf16"))
        throw ConfigError(
            "bf16 and bfloat16 (its legacy name) are both given; keep bf16");
      append(in, "bf16", value);
    } else if (key == "allgather_size" && root.contains("zero_optimization") &&
               root["zero_optimization"].is_boolean()) {
      continue; // read with the boolean zero_optimization below
    } else if (key == "zero_optimization" && value.is_boolean()) {
      // read_zero_config_deprecated: true is stage 1 (allgather_bucket_size
      // from the top-level allgather_size), false is stage 0.
      ojson z = {{"stage", value.get<bool>() ? 1 : 0}};
      if (value.get<bool>() && root.contains("allgather_size"))
        z["allgather_bucket_size"] = root["allgather_size"];
      warn(std::string("\"zero_optimization\": ") +
           (value.get<bool>() ? "true" : "false") +
           " is DeepSpeed's deprecated form of {\"stage\": " +
           (value.get<bool>() ? "1" : "0") + "}");
      append(in, key, z);
    } else if (key == "zero_optimization" && value.is_object()) {
      ojson z = ojson::object();
      for (const auto &[zk, zv] : value.items()) {
        std::string name = zk;
        for (const auto &[field, alias] : kZeroFieldNames)
          if (zk == field) {
            if (value.contains(alias))
              throw ConfigError("zero_optimization." + field +
                                " and zero_optimization." + alias +
                                " are the same setting; give one");
            name = alias;
          }
        append(z, name, zv);
      }
      append(in, key, z);
    } else if (kOtherDsKeys.count(key)) {
      warn("'" + key + "' is a DeepSpeed key zeroc does not read (ignored)");
    } else {
      append(in, key, value);
    }
  }
  return in;
}

void Reader::readZero(const ojson &in, std::optional<int> stageOverride,
                      Parsed &p) {
  ojson &z = out["zero_optimization"];
  const ojson &s = z["stage"];
  int64_t st = s.get<int64_t>();
  if (st < 0 || st > 3)
    throw ConfigError("zero_optimization.stage must be 0, 1, 2 or 3, got " +
                      std::to_string(st));
  p.stageGiven = in.contains("zero_optimization") &&
                 in["zero_optimization"].is_object() &&
                 in["zero_optimization"].contains("stage");
  stage = stageOverride ? *stageOverride : static_cast<int>(st);
  z["stage"] = stage;

  // Deprecated keys (DeepSpeedConfigModel._process_deprecated_field): each
  // replaces its new key, which must not be given as well.
  const ojson zin =
      in.contains("zero_optimization") ? in["zero_optimization"] : ojson();
  struct Dep {
    const char *old, *replacement;
  };
  for (Dep d : {Dep{"cpu_offload", "offload_optimizer"},
                Dep{"cpu_offload_param", "offload_param"},
                Dep{"stage3_gather_fp16_weights_on_model_save",
                    "stage3_gather_16bit_weights_on_model_save"},
                Dep{"cpu_offload_use_pin_memory", nullptr}}) {
    if (!zin.is_object() || !zin.contains(d.old))
      continue;
    std::string oldPath = std::string("zero_optimization.") + d.old;
    const Field *f = findField(oldPath);
    const ojson &v = zin[d.old];
    std::string w = oldPath + " is deprecated (use zero_optimization." +
                    f->deprecatedFor + ")";
    if (d.replacement) {
      if (zin.contains(d.replacement))
        throw ConfigError("zero_optimization." + std::string(d.old) +
                          " is the deprecated "
                          "form of zero_optimization." +
                          d.replacement + "; give only one of them");
      if (std::string(d.old) == "stage3_gather_fp16_weights_on_model_save") {
        if (!v.is_null())
          z[d.replacement] = v;
      } else if (v.is_boolean() && v.get<bool>()) {
        z[d.replacement]["device"] = "cpu";
      }
    }
    if (v.is_boolean() && v.get<bool>())
      w += "; it has no effect yet (" + f->noEffect + ")";
    warn(w);
  }

  if (z["legacy_stage1"].get<bool>())
    throw ConfigError(
        "zero_optimization.legacy_stage1 was removed in DeepSpeed 0.5.9; "
        "remove it");
  const ojson &oo = z["offload_optimizer"];
  if (oo["ratio"].get<double>() < 1.0 && stage != 3)
    throw ConfigError(
        "zero_optimization.offload_optimizer.ratio is " + show(oo["ratio"]) +
        ", but partial offloading (ratio < 1) needs zero_optimization.stage "
        "3 (DeepSpeed: \"Partial offloading only supported for ZeRO Stage "
        "3.\")");
  for (const char *block : {"offload_param", "offload_optimizer"}) {
    const ojson &o = z[block];
    if (o["device"] == "nvme" && o["nvme_path"].is_null())
      throw ConfigError(std::string("zero_optimization.") + block +
                        ".nvme_path must be set when device is \"nvme\"");
  }
}

void Reader::readOptimizer(const ojson &opt) {
  ojson &o = out["optimizer"];
  o = ojson::object();
  std::string type = "AdamW";
  if (!opt.is_null()) {
    if (!opt.is_object())
      throw ConfigError("optimizer must be an object, got " + show(opt));
    std::vector<std::string> siblings;
    for (const Field &f : optimizerFields())
      siblings.push_back(f.name);
    for (const auto &[key, value] : opt.items())
      if (std::find(siblings.begin(), siblings.end(), key) == siblings.end())
        noteUnknownKey("optimizer.", key, siblings, log);
    if (opt.contains("type")) {
      const ojson &t = opt["type"];
      if (isAuto(t))
        autoUnsupported("optimizer.type");
      if (!t.is_string())
        throw ConfigError("optimizer.type must be a string, got " + show(t));
      type = t.get<std::string>();
    }
  }
  std::string lowerType = lower(type);
  const std::vector<Field> *params = optimizerParams(lowerType);
  if (!params) {
    std::string msg = "optimizer.type '" + echo(type) +
                      "' is not supported (use AdamW, Adam or SGD): ";
    if (kOtherDsOptimizers.count(lowerType))
      msg += "DeepSpeed's " + lowerType +
             " optimizer is not supported by zeroc yet";
    else
      msg += "DeepSpeed would look it up as torch.optim." + echo(type) +
             ", which zeroc cannot run";
    throw ConfigError(msg);
  }
  o["type"] = type;
  ojson given =
      opt.is_object() && opt.contains("params") ? opt["params"] : ojson();
  if (given.is_object() && given.contains("max_grad_norm"))
    // engine._configure_basic_optimizer raises this ValueError.
    throw ConfigError(
        "optimizer.params.max_grad_norm is not supported as an optimizer "
        "parameter, please switch to using the deepspeed parameter "
        "'gradient_clipping'");
  if (isAuto(given))
    autoUnsupported("optimizer.params");
  given = dropOtherTypesParams("optimizer.params.", type, given, *params,
                               {{"Adam/AdamW", optimizerParams("adam")},
                                {"SGD", optimizerParams("sgd")}},
                               warnings);
  readBlock("optimizer.params.", given, *params, o["params"], log);
  ojson legacy = opt.is_object() && opt.contains("legacy_fusion")
                     ? opt["legacy_fusion"]
                     : ojson(false);
  o["legacy_fusion"] =
      readLeaf("optimizer.legacy_fusion", optimizerFields()[2], legacy, log);
  if (opt.is_object() && opt.contains("legacy_fusion"))
    log.given.emplace_back("optimizer.legacy_fusion", &optimizerFields()[2]);

  ojson &p = o["params"];
  if (lowerType == "sgd") {
    if (p["nesterov"].get<bool>() && (p["momentum"].get<double>() <= 0.0 ||
                                      p["dampening"].get<double>() != 0.0))
      throw ConfigError(
          "optimizer.params.nesterov true needs momentum > 0 and dampening 0 "
          "(torch.optim.SGD raises \"Nesterov momentum requires a momentum "
          "and zero dampening\"), got momentum " +
          show(p["momentum"]) + " and dampening " + show(p["dampening"]));
    if (p["maximize"].get<bool>())
      throw ConfigError(
          "optimizer.params.maximize true is not supported by zeroc yet");
    return;
  }
  if (p["amsgrad"].get<bool>())
    throw ConfigError(
        p["torch_adam"].get<bool>()
            ? "optimizer.params.amsgrad true is not supported by zeroc yet"
            : "optimizer.params.amsgrad true is not supported (DeepSpeed's "
              "FusedAdam rejects it too)");
  if (lowerType == "adamw" && !p["adam_w_mode"].get<bool>())
    warn("optimizer.params.adam_w_mode false has no effect with type " + type +
         " (DeepSpeed always decouples weight decay for AdamW)");
}

void Reader::readScheduler(const ojson &sched) {
  ojson &s = out["scheduler"];
  s = nullptr;
  if (sched.is_null())
    return;
  if (!sched.is_object())
    throw ConfigError("scheduler must be an object, got " + show(sched));
  std::vector<std::string> siblings = {"type", "params"};
  for (const auto &[key, value] : sched.items())
    if (key != "type" && key != "params")
      noteUnknownKey("scheduler.", key, siblings, log);
  if (!sched.contains("type") || sched["type"].is_null()) {
    warn("scheduler has no type, so DeepSpeed configures no scheduler "
         "(ignored)");
    return;
  }
  const ojson &t = sched["type"];
  if (isAuto(t))
    autoUnsupported("scheduler.type");
  if (!t.is_string())
    throw ConfigError("scheduler.type must be a string, got " + show(t));
  std::string type = t.get<std::string>();
  const std::vector<Field> *params = schedulerParams(type);
  if (!params)
    throw ConfigError(
        "scheduler.type '" + echo(type) +
        "' is not supported by zeroc yet (use "
        "WarmupLR, WarmupDecayLR, WarmupCosineLR or OneCycle; DeepSpeed "
        "would look it up in torch.optim.lr_scheduler)");
  s = ojson::object();
  s["type"] = type;
  ojson given = sched.contains("params") ? sched["params"] : ojson();
  if (isAuto(given))
    autoUnsupported("scheduler.params");
  std::vector<std::pair<std::string, const std::vector<Field> *>> others;
  for (const std::string &name : schedulerTypes())
    others.emplace_back(name, schedulerParams(name));
  given = dropOtherTypesParams("scheduler.params.", type, given, *params,
                               others, warnings);
  readBlock("scheduler.params.", given, *params, s["params"], log);
}

void Reader::resolveAuto() {
  for (const std::string &path : log.autos) {
    ojson &v = at(out, path);
    if (path == "train_batch_size" ||
        path == "train_micro_batch_size_per_gpu" ||
        path == "gradient_accumulation_steps") {
      continue; // resolveBatchSizes
    } else if (path == "gradient_clipping") {
      v = kHfMaxGradNorm;
    } else if (path == "fp16.enabled" || path == "bf16.enabled") {
      v = false; // the HF Trainer's --fp16/--bf16 default
    } else if (path == "optimizer.params.lr") {
      v = kHfLearningRate;
    } else if (path == "optimizer.params.betas") {
      v = ojson::array({kHfBeta1, kHfBeta2});
    } else if (path == "optimizer.params.eps") {
      v = kHfEps;
    } else if (path == "optimizer.params.weight_decay") {
      v = kHfWeightDecay;
    } else if (path == "scheduler.params.warmup_min_lr") {
      v = 0.0;
    } else if (path == "scheduler.params.warmup_num_steps") {
      v = 0; // HF's warmup_steps/warmup_ratio default
    } else if (path == "scheduler.params.total_num_steps") {
      throw ConfigError(
          path + " is \"auto\", which the HF Trainer fills with the number "
                 "of training steps; zeroc does not know it when "
                 "compiling (out/train --steps comes later); set a value");
    } else if (path == "zero_optimization.reduce_bucket_size" ||
               ((path == "zero_optimization.stage3_prefetch_bucket_size" ||
                 path ==
                     "zero_optimization.stage3_param_persistence_threshold") &&
                stage == 3)) {
      throw ConfigError(
          path + " is \"auto\", which needs the model's hidden size (the HF "
                 "Trainer derives it from hidden_size); set a number");
    } else if (path == "zero_optimization.stage3_prefetch_bucket_size" ||
               path == "zero_optimization.stage3_param_persistence_threshold") {
      // Outside stage 3 the HF Trainer leaves these "auto" and DeepSpeed
      // drops "auto" values: the defaults apply.
      v = findField(path)->def;
    } else if (path != "scheduler.params.warmup_max_lr") {
      autoUnsupported(path);
    }
  }
  // After optimizer.params.lr: warmup_max_lr follows the optimizer's lr.
  if (log.autos.count("scheduler.params.warmup_max_lr"))
    at(out, "scheduler.params.warmup_max_lr") =
        out["optimizer"]["params"]["lr"];
}

void Reader::validate(const ojson &in) {
  if (out["fp16"]["enabled"].get<bool>() && out["bf16"]["enabled"].get<bool>())
    throw ConfigError(
        "fp16.enabled and bf16.enabled are both true; enable at most one");
  if (out["fp16"]["fp16_master_weights_and_grads"].get<bool>()) {
    if (stage != 2)
      throw ConfigError(
          "fp16.fp16_master_weights_and_grads needs zero_optimization.stage 2 "
          "(DeepSpeed: \"Fp16_master_weights_and_grads is only supported "
          "with ZeRO Stage 2 for now.\")");
    if (out["zero_optimization"]["offload_optimizer"]["device"] != "cpu")
      throw ConfigError(
          "fp16.fp16_master_weights_and_grads needs "
          "zero_optimization.offload_optimizer.device \"cpu\" (DeepSpeed keeps "
          "fp16 master weights only with DeepSpeedCPUAdam)");
  }
  // The optimizer step multiplies the gradients by 1 / scale.
  if (out["fp16"]["enabled"].get<bool>())
    for (const char *key : {"loss_scale", "min_loss_scale"}) {
      const ojson &v = out["fp16"][key];
      const double scale = v.get<double>();
      if (scale > 0 && !std::isfinite(1.0 / scale))
        throw ConfigError(std::string("fp16.") + key + " " + show(v) +
                          " is too small: the gradients are unscaled by "
                          "1 / scale, which is not finite; give a larger "
                          "scale" +
                          (std::string(key) == "loss_scale"
                               ? " (0: dynamic)"
                               : ""));
    }
  const ojson &sched = out["scheduler"];
  if (sched.is_object()) {
    std::string type = sched["type"].get<std::string>();
    const ojson &p = sched["params"];
    for (const Field &f : *schedulerParams(type))
      if (f.required && p[f.name].is_null())
        throw ConfigError("scheduler.params." + f.name + " is required for " +
                          type + " (DeepSpeed has no default)");
    // lr_schedules.py divides by total - max(2, warmup) after the warmup.
    if (type == "WarmupCosineLR" &&
        p["total_num_steps"].get<int64_t>() ==
            std::max<int64_t>(2, p["warmup_num_steps"].get<int64_t>()))
      throw ConfigError(
          "scheduler.params.total_num_steps " + show(p["total_num_steps"]) +
          " equals max(2, warmup_num_steps): DeepSpeed's WarmupCosineLR "
          "divides by their difference after the warmup; make it larger");
  }
  (void)in;
}

void Reader::resolveRest() {
  ojson &z = out["zero_optimization"];
  if (z["overlap_comm"].is_null())
    z["overlap_comm"] = stage == 3; // overlap_comm_valid
  // steps_per_print None stays None: no per-step line (DeepSpeed >= 0.15.2).

  ojson &sched = out["scheduler"];
  if (sched.is_object()) {
    std::string type = sched["type"].get<std::string>();
    ojson &p = sched["params"];
    if (p.contains("warmup_type") && p["warmup_type"] != "log" &&
        p["warmup_type"] != "linear") {
      warn("scheduler.params.warmup_type " + show(p["warmup_type"]) +
           " is neither \"log\" nor \"linear\"; DeepSpeed uses \"log\" then, "
           "and so does "
           "zeroc");
      p["warmup_type"] = "log";
    }
    if (p.contains("total_num_steps") &&
        p["total_num_steps"].is_number_integer() &&
        p["total_num_steps"].get<int64_t>() <
            p["warmup_num_steps"].get<int64_t>())
      warn("scheduler.params.total_num_steps " + show(p["total_num_steps"]) +
           " is less than warmup_num_steps " + show(p["warmup_num_steps"]) +
           " (DeepSpeed warns too)");
    if (type == "OneCycle") {
      if (p["cycle_second_step_size"].is_null())
        p["cycle_second_step_size"] = p["cycle_first_step_size"];
      if (p["cycle_second_stair_count"].is_null())
        p["cycle_second_stair_count"] = p["cycle_first_stair_count"];
      if (p["cycle_momentum"].get<bool>() &&
          lower(out["optimizer"]["type"].get<std::string>()) == "sgd") {
        warn("scheduler.params.cycle_momentum is off because optimizer " +
             out["optimizer"]["type"].get<std::string>() +
             " has no betas (DeepSpeed turns it off too)");
        p["cycle_momentum"] = false;
      }
      // The cycled momentum is Adam's beta1 at every step.
      if (p["cycle_momentum"].get<bool>())
        for (const char *key : {"cycle_min_mom", "cycle_max_mom"})
          if (!(p[key].get<double>() < 1.0))
            throw ConfigError(
                std::string("scheduler.params.") + key + " " + show(p[key]) +
                " is outside [0, 1): with cycle_momentum OneCycle sets it as " +
                out["optimizer"]["type"].get<std::string>() +
                "'s beta1; give a value in [0, 1) or set cycle_momentum "
                "false");
    }
  }

  std::string opt = lower(out["optimizer"]["type"].get<std::string>());
  if (stage >= 1 && opt == "sgd" &&
      !out["zero_allow_untested_optimizer"].get<bool>())
    warn("optimizer.type '" + out["optimizer"]["type"].get<std::string>() +
         "' is not one of DeepSpeed's ZeRO-tested optimizers: DeepSpeed "
         "refuses it "
         "with zero_optimization.stage " +
         std::to_string(stage) +
         " unless zero_allow_untested_optimizer is true (zeroc runs it either "
         "way)");
}

void Reader::noEffectWarnings() {
  std::set<std::string> done;
  for (const auto &[path, f] : log.given) {
    if (f->noEffect.empty() || !f->warn || !f->deprecatedFor.empty() ||
        !done.insert(path).second)
      continue;
    ojson def = f->def;
    const ojson &v = at(out, path);
    // Honoured when unset or naming what zeroc does: gradients accumulate in
    // fp32 on request, and are reduced in the accumulators' dtype at the
    // stage 0-1 optimizer step, in the training dtype inside stage 2-3
    // micro-steps.
    if (path == "communication_data_type" ||
        path == "data_types.grad_accum_dtype") {
      if (v.is_null() ||
          (path == "data_types.grad_accum_dtype" && v == "fp32"))
        continue;
      def = path == "communication_data_type" && stage <= 1 ? accumulatorDtype()
                                                            : trainingDtype();
    }
    if (v == def)
      continue;
    warn(path + " has no effect" + (f->never ? "" : " yet") + " (" +
         f->noEffect + ")");
  }
  // DeepSpeed's _do_optimizer_sanity_check raises NotImplementedError for
  // these stage-0 combinations; zeroc can run them.
  const std::string training = trainingDtype(), accum = accumulatorDtype();
  if (stage == 0 && training != "fp32" &&
      (training == "fp16") == (accum == "fp32"))
    warn("data_types.grad_accum_dtype " + accum + " with " + training +
         " at stage 0 is rejected by DeepSpeed (NotImplementedError); zeroc "
         "runs it");
}

Parsed Reader::read(const std::string &path, std::optional<int> stageOverride,
                    uint64_t maxBytes) {
  ojson root = loadJson(path, maxBytes);
  if (!root.is_object())
    throw ConfigError("the config must be a JSON object, got " + show(root));
  ojson in = normalize(root);

  Parsed p;
  readBlock("", in, topLevelFields(), out, log);
  readZero(in, stageOverride, p);
  readOptimizer(in.contains("optimizer") ? in["optimizer"] : ojson());
  readScheduler(in.contains("scheduler") ? in["scheduler"] : ojson());
  resolveAuto();
  validate(in);
  if (const ojson &oc = out["zero_optimization"]["overlap_comm"]; oc.is_boolean())
    p.overlapComm = oc.get<bool>();
  resolveRest();
  noEffectWarnings();
  summarizeUnknownKeys(log);
  for (std::string &w : warnings)
    w = oneLine(w);

  p.stage = stage;
  auto batchKey = [&](const char *key, int64_t autoValue) -> int64_t {
    const ojson &v = out[key];
    if (isAuto(v))
      return autoValue;
    return v.is_null() ? 0 : v.get<int64_t>();
  };
  p.trainBatch = batchKey("train_batch_size", 0);
  p.microBatch = batchKey("train_micro_batch_size_per_gpu", -1);
  p.gradAccum = batchKey("gradient_accumulation_steps", 1);
  p.out = std::move(out);
  return p;
}

/// The non-batch TrainConfig fields from a resolved config.
void fillTrainConfig(const Parsed &p, TrainConfig &c) {
  const ojson &o = p.out;
  c.stage = p.stage;
  c.gradientClipping = o["gradient_clipping"].get<double>();
  c.tf32 = o["zeroc"]["tf32"].get<bool>();
  c.fuseElementwise = o["zeroc"]["fuse_elementwise"].get<bool>();
  c.fuseAttention = o["zeroc"]["fuse_attention"].get<bool>();
  const std::string tagValidation =
      lower(o["checkpoint"]["tag_validation"].get<std::string>());
  c.tagValidation = tagValidation == "ignore" ? 0 : tagValidation == "fail" ? 2 : 1;
  c.loadFromFp32Weights =
      o["zero_optimization"]["load_from_fp32_weights"].get<bool>();
  c.resolvedJson = o.dump();
  // 0: no per-step progress line (None).
  const ojson &spp = o["steps_per_print"];
  c.stepsPerPrint = spp.is_null() ? 0 : spp.get<int64_t>();

  const ojson &opt = o["optimizer"];
  const ojson &op = opt["params"];
  std::string type = opt["type"].get<std::string>();
  c.optimizerName = type;
  c.lr = op["lr"].get<double>();
  c.weightDecay = op["weight_decay"].get<double>();
  if (lower(type) == "sgd") {
    c.optimizer = TrainConfig::Optimizer::SGD;
    c.momentum = op["momentum"].get<double>();
    c.dampening = op["dampening"].get<double>();
    c.nesterov = op["nesterov"].get<bool>();
  } else {
    c.optimizer = TrainConfig::Optimizer::Adam;
    c.beta1 = op["betas"][0].get<double>();
    c.beta2 = op["betas"][1].get<double>();
    c.eps = op["eps"].get<double>();
    // "AdamW" is always decoupled; "Adam" unless adam_w_mode is false.
    c.adamWMode = lower(type) == "adamw" || op["adam_w_mode"].get<bool>();
    c.biasCorrection = op["bias_correction"].get<bool>();
  }

  const ojson &fp16 = o["fp16"];
  c.precision = TrainConfig::Precision::FP32;
  c.lossScaling = false;
  if (fp16["enabled"].get<bool>()) {
    c.precision = TrainConfig::Precision::FP16;
    c.lossScaling = true;
    c.staticLossScale = fp16["loss_scale"].get<double>();
    c.initialScalePower = fp16["initial_scale_power"].get<int64_t>();
    c.lossScaleWindow = fp16["loss_scale_window"].get<int64_t>();
    c.hysteresis = fp16["hysteresis"].get<int64_t>();
    c.consecutiveHysteresis = fp16["consecutive_hysteresis"].get<bool>();
    c.minLossScale = fp16["min_loss_scale"].get<double>();
  } else if (o["bf16"]["enabled"].get<bool>()) {
    c.precision = TrainConfig::Precision::BF16; // loss scale 1
  }
  // bf16 accumulates in fp32 unless grad_accum_dtype says bf16; fp16 in
  // fp16 unless it says fp32 (other values warn and keep the default).
  c.gradAccumFp32 =
      c.precision != TrainConfig::Precision::FP32 && accumulatorDtypeOf(o) == "fp32";

  c.schedule = TrainConfig::Schedule::Constant;
  const ojson &sched = o["scheduler"];
  if (sched.is_object()) {
    std::string st = sched["type"].get<std::string>();
    const ojson &sp = sched["params"];
    auto warmup = [&] {
      // lr_schedules.py uses max(2, warmup_num_steps) throughout.
      c.warmupNumSteps =
          std::max<int64_t>(2, sp["warmup_num_steps"].get<int64_t>());
      c.warmupLog = sp["warmup_type"] == "log";
    };
    if (st == "WarmupLR" || st == "WarmupDecayLR") {
      c.schedule = st == "WarmupLR" ? TrainConfig::Schedule::WarmupLR
                                    : TrainConfig::Schedule::WarmupDecayLR;
      c.warmupMinLr = sp["warmup_min_lr"].get<double>();
      c.warmupMaxLr = sp["warmup_max_lr"].get<double>();
      warmup();
      if (st == "WarmupDecayLR")
        c.totalNumSteps = sp["total_num_steps"].get<int64_t>();
    } else if (st == "WarmupCosineLR") {
      c.schedule = TrainConfig::Schedule::WarmupCosineLR;
      c.warmupMinRatio = sp["warmup_min_ratio"].get<double>();
      c.cosMinRatio = sp["cos_min_ratio"].get<double>();
      c.totalNumSteps = sp["total_num_steps"].get<int64_t>();
      warmup();
    } else if (st == "OneCycle") {
      c.schedule = TrainConfig::Schedule::OneCycle;
      c.cycleMinLr = sp["cycle_min_lr"].get<double>();
      c.cycleMaxLr = sp["cycle_max_lr"].get<double>();
      c.decayLrRate = sp["decay_lr_rate"].get<double>();
      c.cycleFirstStepSize = sp["cycle_first_step_size"].get<int64_t>();
      c.cycleSecondStepSize = sp["cycle_second_step_size"].get<int64_t>();
      c.decayStepSize = sp["decay_step_size"].get<int64_t>();
      c.cycleMomentum = sp["cycle_momentum"].get<bool>();
      c.cycleMinMom = sp["cycle_min_mom"].get<double>();
      c.cycleMaxMom = sp["cycle_max_mom"].get<double>();
      c.decayMomRate = sp["decay_mom_rate"].get<double>();
    } else if (st == "LRRangeTest") {
      c.schedule = TrainConfig::Schedule::LRRangeTest;
      c.rangeMinLr = sp["lr_range_test_min_lr"].get<double>();
      c.rangeStepSize = sp["lr_range_test_step_size"].get<int64_t>();
      c.rangeStepRate = sp["lr_range_test_step_rate"].get<double>();
      c.rangeStaircase = sp["lr_range_test_staircase"].get<bool>();
    }
  }

  const ojson &zero = o["zero_optimization"];
  c.reduceBucketSize = zero["reduce_bucket_size"].get<int64_t>();
  c.prefetchBucketSize = zero["stage3_prefetch_bucket_size"].get<int64_t>();
  c.allgatherBucketSize = zero["allgather_bucket_size"].get<int64_t>();
  c.maxLiveParameters = zero["stage3_max_live_parameters"].get<int64_t>();
  c.maxReuseDistance = zero["stage3_max_reuse_distance"].get<int64_t>();
  c.persistenceThreshold =
      zero["stage3_param_persistence_threshold"].get<int64_t>();
  c.modelPersistenceThreshold =
      zero["stage3_model_persistence_threshold"].get<int64_t>();

  c.wallClockBreakdown = o["wall_clock_breakdown"].get<bool>();
  const ojson &csv = o["csv_monitor"];
  c.csvMonitor = csv["enabled"].get<bool>();
  c.csvOutputPath = csv["output_path"].get<std::string>();
  c.csvJobName = csv["job_name"].get<std::string>();
}

bool parseFile(const std::string &path, int worldSize, std::optional<int> stage,
               uint64_t maxBytes, TrainConfig &c, Parsed &p,
               std::vector<std::string> &warnings, std::string &error) {
  try {
    Reader reader(warnings);
    p = reader.read(path, stage, maxBytes);
  } catch (const ConfigError &e) {
    error = messagePath(path) + ": " + oneLine(e.what());
    return false;
  } catch (const std::bad_alloc &) {
    error = messagePath(path) + ": out of memory reading the config";
    return false;
  } catch (const std::exception &e) {
    // A nlohmann type error would be a zeroc bug; report it, never abort.
    error = messagePath(path) +
            ": cannot read the config (a zeroc bug; please report it): " +
            oneLine(e.what());
    return false;
  }
  c.worldSize = worldSize;
  fillTrainConfig(p, c);
  return true;
}

std::string str(int64_t v) { return std::to_string(v); }

/// DeepSpeed's _set_batch_related_parameters and _batch_assertion, with the
/// micro batch taken from zeroc's model where DeepSpeed would need it.
bool inferBatch(int64_t tb, int64_t &mb, int64_t &gas, int64_t w,
                int64_t modelBatch, const std::string &modelName,
                int64_t &outTb, std::string &error) {
  if (mb < 0 || (tb == 0 && mb == 0)) {
    if (modelBatch <= 0) {
      error =
          mb < 0
              ? "train_micro_batch_size_per_gpu is \"auto\", which zeroc takes "
                "from the model's batch dim; pass the model or --micro-batch N"
              : "neither train_batch_size nor train_micro_batch_size_per_gpu "
                "is "
                "set, so zeroc takes the micro batch from the model's batch "
                "dim; "
                "pass the model or --micro-batch N";
      return false;
    }
    mb = modelBatch;
  }
  std::string how;
  if (tb > 0 && mb > 0 && gas > 0) {
  } else if (tb > 0 && mb > 0) {
    gas = tb / mb / w;
    how = " (inferred as train_batch_size // train_micro_batch_size_per_gpu // "
          "world "
          "size = " +
          str(tb) + " // " + str(mb) + " // " + str(w) + ")";
  } else if (tb > 0 && gas > 0) {
    mb = tb / w / gas;
    how = " (inferred as train_batch_size // world size // "
          "gradient_accumulation_steps "
          "= " +
          str(tb) + " // " + str(w) + " // " + str(gas) + ")";
  } else if (mb > 0 && gas > 0) {
    tb = mb * gas * w;
  } else if (tb > 0) {
    gas = 1;
    mb = tb / w;
    how = " (inferred as train_batch_size // world size = " + str(tb) + " // " +
          str(w) + ")";
  } else {
    tb = mb * w;
    gas = 1;
  }
  if (mb <= 0) {
    error = "Micro batch size per gpu: " + str(mb) +
            " has to be greater than 0" + how;
    return false;
  }
  if (gas <= 0) {
    error = "Gradient accumulation steps: " + str(gas) +
            " has to be greater than 0" + how;
    return false;
  }
  if (tb != mb * gas * w) {
    error = "Check batch related parameters. train_batch_size is not equal to "
            "micro_batch_per_gpu * gradient_acc_step * world_size " +
            str(tb) + " != " + str(mb) + " * " + str(gas) + " * " + str(w) +
            how;
    return false;
  }
  if (modelBatch > 0 && mb != modelBatch) {
    if (modelName == "the model's batch dim")
      error = "the micro batch size is " + str(mb) +
              " but the model's batch dim is " + str(modelBatch) +
              "; export the model with batch " + str(mb) +
              " (or bind it with --input-shape) or set "
              "train_micro_batch_size_per_gpu "
              "to " +
              str(modelBatch);
    else
      error = "the micro batch size is " + str(mb) + " but " + modelName +
              " is " + str(modelBatch);
    return false;
  }
  outTb = tb;
  return true;
}

} // namespace

std::string messagePath(const std::string &path) {
  return echo(path, kMaxEchoPathBytes);
}

bool readDsConfig(const std::string &path, TrainConfig &c, bool &stageGiven,
                  int64_t &trainBatchSize, std::vector<std::string> &warnings,
                  std::string &error, uint64_t maxBytes) {
  Parsed p;
  if (!parseFile(path, c.worldSize, std::nullopt, maxBytes, c, p, warnings,
                 error))
    return false;
  stageGiven = p.stageGiven;
  trainBatchSize = p.trainBatch;
  c.microBatch = p.microBatch;
  c.gradAccum = p.gradAccum;
  c.overlapComm = p.overlapComm;
  return true;
}

bool resolveBatchSizes(TrainConfig &c, int64_t tb, int64_t modelBatch,
                       std::string &error) {
  int64_t mb = c.microBatch, gas = c.gradAccum, outTb = 0;
  if (!inferBatch(tb, mb, gas, c.worldSize, modelBatch, "the model's batch dim",
                  outTb, error))
    return false;
  c.microBatch = mb;
  c.gradAccum = gas;
  return true;
}

bool checkDsConfig(const std::string &path, const ConfigCheckOptions &options,
                   TrainConfig &c, std::string &resolvedJson,
                   std::vector<std::string> &warnings, std::string &error) {
  Parsed p;
  if (!parseFile(path, options.worldSize, options.stage, options.maxBytes, c, p,
                 warnings, error))
    return false;
  int64_t mb = p.microBatch, gas = p.gradAccum, tb = 0;
  if (!inferBatch(p.trainBatch, mb, gas, options.worldSize, options.modelBatch,
                  options.modelBatchName, tb, error)) {
    error = messagePath(path) + ": " + error;
    return false;
  }
  c.microBatch = mb;
  c.gradAccum = gas;
  p.out["train_batch_size"] = tb;
  p.out["train_micro_batch_size_per_gpu"] = mb;
  p.out["gradient_accumulation_steps"] = gas;
  resolvedJson = p.out.dump(2) + "\n";
  return true;
}

std::string dsConfigSchemaMarkdown() { return schemaMarkdown(); }

} // namespace zeroc
