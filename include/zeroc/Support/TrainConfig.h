//===- TrainConfig.h - what a compiled trainer is configured with -*- C++ -*-===//
#ifndef ZEROC_SUPPORT_TRAINCONFIG_H
#define ZEROC_SUPPORT_TRAINCONFIG_H

#include <cstdint>
#include <string>

namespace zeroc {

/// The training settings baked into out/train: ZeRO stage, world size,
/// batch sizes and optimizer, resolved from --stage/--world-size and the
/// DeepSpeed config (DeepSpeed's key names and defaults).
struct TrainConfig {
  int stage = 0;
  int worldSize = 1;
  int64_t microBatch = 0; ///< 0: the model's batch dim
  int64_t gradAccum = 1;
  double gradientClipping = 0.0;
  int64_t stepsPerPrint = 10;
  enum class Optimizer { Adam, SGD } optimizer = Optimizer::Adam;
  bool adamWMode = true;
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double weightDecay = 0.0, momentum = 0.0;
  std::string optimizerName = "AdamW"; ///< as written in the config, for logs
};

} // namespace zeroc

#endif // ZEROC_SUPPORT_TRAINCONFIG_H
