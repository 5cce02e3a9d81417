//===- DsConfig.h - DeepSpeed config to TrainConfig --------------*- C++
//-*-===//
//
// zeroc reads DeepSpeed's ds_config.json with DeepSpeed's key names and code
// defaults (docs/Config.md has the table). Every key DeepSpeed documents is
// accepted and validated; keys zeroc does not honour yet draw one warning
// when set to a non-default value, unknown keys draw a warning naming the key
// path, and bad values are an error naming the key path.
//
//===----------------------------------------------------------------------===//
#ifndef ZEROC_DRIVER_DSCONFIG_H
#define ZEROC_DRIVER_DSCONFIG_H

#include "zeroc/Support/TrainConfig.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace zeroc {

/// The DeepSpeed release whose config semantics zeroc follows.
constexpr const char *kDeepSpeedSemantics = "0.19.8";

/// The largest config file zeroc reads unless --max-config-bytes raises it
/// (16 MiB). Deeper nesting than 64 levels is always refused.
constexpr uint64_t kDefaultMaxConfigBytes = uint64_t(16) << 20;

/// A file name as zeroc's messages print it: control characters and bytes
/// that are not UTF-8 escaped (\n, \xHH), so that a message is one line.
std::string messagePath(const std::string &path);

/// Reads a DeepSpeed config (ds_config.json) into `config`: the ZeRO stage,
/// gradient_clipping, steps_per_print, the optimizer and scheduler blocks,
/// fp16/bf16 (precision and loss scaler), wall_clock_breakdown and
/// csv_monitor, with DeepSpeed's names and defaults; "auto" values are
/// resolved as the HF Trainer does where zeroc knows the value.
/// `config.worldSize` must be set. `warnings` gets one line per unknown key
/// (the first 20, then one line counting the rest) and per key set to a
/// value that has no effect yet (without the "zeroc: warning: FILE: "
/// prefix). Returns false with `error` ("FILE: KEY ...", one line) on an
/// unreadable file, one that is not a regular file or is larger than
/// `maxBytes`, bad JSON, nesting deeper than 64 levels, a bad value or an
/// unresolvable "auto"; nothing else is meaningful then. Echoed keys and
/// values are cut after 64 bytes and escaped.
///
/// The batch keys are left for resolveBatchSizes: `trainBatchSize` is 0
/// unless the file gives it (a number), `config.microBatch` is 0 when the
/// file lacks it and -1 when it is "auto", and `config.gradAccum` is 0 when
/// the file lacks it ("auto" is 1, the HF default). Validation that depends
/// on the stage uses the file's stage (a later --stage does not re-check).
bool readDsConfig(const std::string &path, TrainConfig &config,
                  bool &stageGiven, int64_t &trainBatchSize,
                  std::vector<std::string> &warnings, std::string &error,
                  uint64_t maxBytes = kDefaultMaxConfigBytes);

/// DeepSpeed's batch-size rule (runtime/config.py): train_batch_size = micro
/// batch x grad accum x world size, inferring whichever is missing with
/// DeepSpeed's integer divisions, then DeepSpeed's checks and messages.
/// `modelBatch` is the model's static batch dim; the micro batch must equal
/// it. Where DeepSpeed would need the micro batch (neither train_batch_size
/// nor train_micro_batch_size_per_gpu given, or the latter "auto"), zeroc
/// takes the model's. Returns false with the message (and what to do) in
/// `error`.
bool resolveBatchSizes(TrainConfig &config, int64_t trainBatchSize,
                       int64_t modelBatch, std::string &error);

/// `zeroc config-check` settings.
struct ConfigCheckOptions {
  int worldSize = 1;
  /// --stage: replaces the file's stage before validation.
  std::optional<int> stage;
  /// The micro batch zeroc would take from the model (the model's batch dim
  /// or --micro-batch); 0 when unknown, which is an error only where the
  /// config leaves the micro batch to the model.
  int64_t modelBatch = 0;
  /// How to name modelBatch in messages ("the model's batch dim",
  /// "--micro-batch").
  std::string modelBatchName = "the model's batch dim";
  /// --max-config-bytes: the largest file read.
  uint64_t maxBytes = kDefaultMaxConfigBytes;
};

/// Reads, validates and resolves the config as readDsConfig and
/// resolveBatchSizes do, and returns the whole resolved config (every key of
/// the schema, defaults spelled out, batch sizes inferred, "auto" resolved)
/// as pretty-printed JSON in `resolvedJson`.
bool checkDsConfig(const std::string &path, const ConfigCheckOptions &options,
                   TrainConfig &config, std::string &resolvedJson,
                   std::vector<std::string> &warnings, std::string &error);

/// The schema (key, type, DeepSpeed code default, effect in zeroc now) as
/// Markdown tables; docs/Config.md embeds it.
std::string dsConfigSchemaMarkdown();

} // namespace zeroc

#endif // ZEROC_DRIVER_DSCONFIG_H
