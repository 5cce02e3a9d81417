//===- TrainConfig.h - what a compiled trainer is configured with -*- C++ -*-===//
#ifndef ZEROC_SUPPORT_TRAINCONFIG_H
#define ZEROC_SUPPORT_TRAINCONFIG_H

#include <cstdint>
#include <optional>
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
  /// DeepSpeed 0.19.8's GRADIENT_CLIPPING_DEFAULT: without a config (or
  /// the key) the global gradient norm is clipped at 1.0.
  double gradientClipping = 1.0;
  /// steps_per_print; 0 (DeepSpeed's None, its default since 0.15.2): no
  /// per-step progress line.
  int64_t stepsPerPrint = 0;
  /// zeroc.tf32: f32 matmuls may use TF32 tensor cores (CUDA). Off, as
  /// torch.backends.cuda.matmul.allow_tf32 is by default.
  bool tf32 = false;
  /// zeroc.fuse_elementwise: the CUDA target fuses elementwise chains.
  bool fuseElementwise = true;
  /// zeroc.fuse_attention: the CUDA target fuses softmax attentions
  /// (zero-fuse-attention), when fuseElementwise.
  bool fuseAttention = true;
  /// checkpoint.tag_validation: 0 Ignore, 1 Warn, 2 Fail.
  int tagValidation = 1;
  /// zero_optimization.load_from_fp32_weights.
  bool loadFromFp32Weights = true;
  /// The resolved config as compact JSON, saved with each checkpoint.
  std::string resolvedJson;
  enum class Optimizer { Adam, SGD } optimizer = Optimizer::Adam;
  bool adamWMode = true;
  bool biasCorrection = true; ///< Adam (FusedAdam's bias_correction)
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double weightDecay = 0.0, momentum = 0.0;
  double dampening = 0.0; ///< SGD
  bool nesterov = false;  ///< SGD
  std::string optimizerName = "AdamW"; ///< as written in the config, for logs

  // ZeRO buckets (zero_optimization), in elements; 0: one collective per
  // tensor.
  int64_t reduceBucketSize = 500000000;  ///< gradient reductions
  int64_t prefetchBucketSize = 50000000; ///< stage 3 parameter gathers
  /// allgather_bucket_size: the all-gathers of the updated replicas after
  /// the optimizer step (stages 1-2, stage 3's persistent parameters).
  int64_t allgatherBucketSize = 500000000;
  /// stage3_param_persistence_threshold: stage-3 parameters of at most
  /// this many elements stay whole on every rank.
  int64_t persistenceThreshold = 100000;
  /// stage3_max_live_parameters: the prefetch's bound (zero-overlap).
  int64_t maxLiveParameters = 1000000000;
  /// stage3_max_reuse_distance: a parameter reused in backward within this
  /// many elements keeps its forward gather (zero-partition).
  int64_t maxReuseDistance = 1000000000;
  /// stage3_model_persistence_threshold: the most elements the persistent
  /// parameters hold together (sys.maxsize).
  int64_t modelPersistenceThreshold = INT64_MAX;
  /// zero_optimization.overlap_comm; unset: DeepSpeed's default, true iff
  /// stage 3 (zeroc overlaps stage 3's parameter gathers and stage 2-3
  /// gradient reductions).
  std::optional<bool> overlapComm;
  /// The link's cost model (zeroc compile --comm-alpha-us / --comm-gbps;
  /// not ds_config keys): fixed microseconds per collective step, Gbit/s;
  /// unset: the pipeline's defaults (zeroc/Passes/CommCostModel.h).
  std::optional<double> commAlphaUs, commGbps;
  /// The compute cost model (zeroc compile --compute-gflops /
  /// --memory-gb-per-s); unset: zeroc/Passes/ComputeCostModel.h's defaults.
  std::optional<double> computeGflops, memoryGBPerS;

  // Mixed precision (fp16 / bf16 blocks).
  enum class Precision { FP32, FP16, BF16 } precision = Precision::FP32;
  bool lossScaling = false;          ///< fp16: dynamic or static scaling
  double staticLossScale = 0.0;      ///< fp16.loss_scale; 0 = dynamic
  int64_t initialScalePower = 16;
  int64_t lossScaleWindow = 1000;
  int64_t hysteresis = 2;
  bool consecutiveHysteresis = false;
  double minLossScale = 1.0;
  /// Accumulate the gradients of 16-bit parameters in fp32
  /// (data_types.grad_accum_dtype "fp32"; bf16's default).
  bool gradAccumFp32 = false;

  // Scheduler block (DeepSpeed's names and defaults).
  enum class Schedule {
    Constant,
    WarmupLR,
    WarmupDecayLR,
    WarmupCosineLR,
    OneCycle,
    LRRangeTest
  } schedule = Schedule::Constant;
  double warmupMinLr = 0.0, warmupMaxLr = 1e-3;
  int64_t warmupNumSteps = 1000;
  bool warmupLog = true;
  int64_t totalNumSteps = 0;
  double warmupMinRatio = 0.0, cosMinRatio = 1e-4;
  double cycleMinLr = 0.0, cycleMaxLr = 0.0, decayLrRate = 0.0;
  int64_t cycleFirstStepSize = 2000, cycleSecondStepSize = 0, decayStepSize = 0;
  bool cycleMomentum = true;
  double cycleMinMom = 0.8, cycleMaxMom = 0.9, decayMomRate = 0.0;
  double rangeMinLr = 1e-3, rangeStepRate = 1.0;
  int64_t rangeStepSize = 2000;
  bool rangeStaircase = false;

  // Monitoring.
  bool wallClockBreakdown = false;
  bool csvMonitor = false;
  std::string csvOutputPath, csvJobName = "DeepSpeedJobName";
};

} // namespace zeroc

#endif // ZEROC_SUPPORT_TRAINCONFIG_H
