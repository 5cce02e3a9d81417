//===- DsConfig.h - DeepSpeed config to TrainConfig --------------*- C++ -*-===//
#ifndef ZEROC_DRIVER_DSCONFIG_H
#define ZEROC_DRIVER_DSCONFIG_H

#include "zeroc/Support/TrainConfig.h"

#include <string>
#include <vector>

namespace zeroc {

/// Reads the training keys of a DeepSpeed config (ds_config.json) into
/// `config`: zero_optimization.stage, the three batch-size keys,
/// gradient_clipping, steps_per_print and the optimizer block, with
/// DeepSpeed's names and defaults. Keys outside that set are reported in
/// `warnings` (they have no effect yet). Returns false with `error` naming
/// the file and the key path.
bool readDsConfig(const std::string &path, TrainConfig &config,
                  bool &stageGiven, int64_t &trainBatchSize,
                  std::vector<std::string> &warnings, std::string &error);

/// DeepSpeed's batch-size rule: train_batch_size = micro batch x grad accum x
/// world size, inferring whichever is missing. `modelBatch` is the model's
/// static batch dim; the micro batch must equal it. Returns false with
/// DeepSpeed's message (and what to do) in `error`.
bool resolveBatchSizes(TrainConfig &config, int64_t trainBatchSize,
                       int64_t modelBatch, std::string &error);

} // namespace zeroc

#endif // ZEROC_DRIVER_DSCONFIG_H
