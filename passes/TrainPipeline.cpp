//===- TrainPipeline.cpp - zeroc's phases as one registered pipeline ------===//
#include "zeroc/Passes/TrainPipeline.h"

#include "zeroc/Passes/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace zeroc {

std::vector<Phase> importPhases(bool requireLoss) {
  return {
      {"canonicalize",
       [](OpPassManager &pm) {
         pm.addPass(createCanonicalizerPass());
         pm.addPass(createCSEPass());
       }},
      {"verify-imported-graph",
       [requireLoss](OpPassManager &pm) {
         VerifyImportedGraphOptions options;
         options.requireLoss = requireLoss;
         pm.addPass(createVerifyImportedGraph(options));
       }},
  };
}

std::vector<Phase> trainPhases(const TrainPipelineOptions &o) {
  std::vector<Phase> phases = importPhases(o.requireLoss);
  const std::string precision = o.precision;
  if (precision != "fp32")
    phases.push_back({"mixed-precision", [precision](OpPassManager &pm) {
                        MixedPrecisionOptions options;
                        options.dtype = precision == "fp16"   ? "f16"
                                        : precision == "bf16" ? "bf16"
                                                              : precision;
                        pm.addPass(createMixedPrecision(options));
                      }});
  phases.push_back({"autodiff", [](OpPassManager &pm) {
                      pm.addPass(createAutodiff());
                    }});
  const bool dynamic = o.lossScaling;
  const int64_t gradAccum = o.gradAccumSteps;
  if (dynamic || gradAccum > 1)
    phases.push_back({"scale-loss", [dynamic, gradAccum](OpPassManager &pm) {
                        ScaleLossOptions options;
                        options.dynamic = dynamic;
                        options.gradAccumSteps = gradAccum;
                        pm.addPass(createScaleLoss(options));
                      }});
  PartitionOptions partition;
  partition.stage = o.stage;
  partition.worldSize = o.worldSize;
  partition.persistenceThreshold = o.persistenceThreshold;
  partition.modelPersistenceThreshold = o.modelPersistenceThreshold;
  partition.maxReuseDistance = o.maxReuseDistance;
  phases.push_back({"partition", [partition](OpPassManager &pm) {
                      pm.addPass(createPartition(partition));
                    }});
  StepBoundaryOptions step;
  step.optimizer = o.optimizer;
  step.lrSchedule = o.lrSchedule;
  step.lossScaler = o.lossScaler;
  if (o.lossScaling && step.lossScaler.empty())
    step.lossScaler = "#zero.loss_scaler<>";
  step.gradientClipping = o.gradientClipping;
  step.fp32GradAccum = o.fp32GradAccum;
  step.gradAccumSteps = o.gradAccumSteps;
  step.monitor = o.monitor;
  step.tf32 = o.tf32;
  step.reduceInBackward = o.overlapComm;
  phases.push_back({"step-boundary", [step](OpPassManager &pm) {
                      pm.addPass(createStepBoundary(step));
                      pm.addPass(createOverflowFromNorm());
                    }});
  phases.push_back({"cleanup", [](OpPassManager &pm) {
                      pm.addPass(createFoldTransposes());
                      pm.addPass(createMergeSliceGrads());
                      pm.addPass(createWidenGatherGrad());
                      pm.addPass(createCanonicalizerPass());
                      pm.addPass(createCSEPass());
                    }});
  // After cleanup: the bucket pass sees the ops that are emitted, and no
  // later CSE merges pure bucket ops of two buckets into one buffer that
  // lives across the step (docs/RationaleZero.md, "Bucketing").
  BucketOptions bucket;
  bucket.reduceBucketSize = o.reduceBucketSize;
  bucket.prefetchBucketSize = o.prefetchBucketSize;
  bucket.allgatherBucketSize = o.allgatherBucketSize;
  bucket.overlap = o.overlapComm;
  bucket.commAlphaUs = o.commAlphaUs;
  bucket.commGbps = o.commGbps;
  phases.push_back({"bucket", [bucket](OpPassManager &pm) {
                      pm.addPass(createBucket(bucket));
                    }});
  if (o.overlapComm) {
    OverlapOptions overlap;
    overlap.maxLiveParameters = o.maxLiveParameters;
    overlap.prefetchBucketSize = o.prefetchBucketSize;
    overlap.commAlphaUs = o.commAlphaUs;
    overlap.commGbps = o.commGbps;
    overlap.computeGflops = o.computeGflops;
    overlap.memoryGBPerS = o.memoryGBPerS;
    phases.push_back({"overlap", [overlap](OpPassManager &pm) {
                        pm.addPass(createOverlap(overlap));
                      }});
  }
  phases.push_back({"verify-partition", [](OpPassManager &pm) {
                      pm.addPass(createVerifyPartition());
                      pm.addPass(createVerifyStep());
                    }});
  // A GPU pays a launch per kernel and a pass over memory per op; the CPU's
  // kernels are compiled ahead of time, and its runtime would loop over the
  // parameters anyway (docs/CudaTarget.md, "Elementwise fusion" and "The
  // optimizer step").
  if (o.target == "cuda" && o.fuseElementwise) {
    phases.push_back({"fuse-elementwise", [](OpPassManager &pm) {
                        pm.addPass(createFuseElementwise());
                        pm.addPass(createRematerializeElementwise());
                        pm.addPass(createFuseLayerNormGradAdd());
                      }});
    phases.push_back({"fuse-softmax", [](OpPassManager &pm) {
                        pm.addPass(createFuseSoftmax());
                        pm.addPass(createFuseCrossEntropy());
                      }});
  }
  // A GEMM reads attention's head split and writes its transposed products
  // at strides (docs/CudaTarget.md, "Strided matmul operands"); the CPU
  // runtime's GEMMs read and write dense tensors only.
  if (o.target == "cuda") {
    phases.push_back({"fold-matmul-views", [](OpPassManager &pm) {
                        pm.addPass(createFoldMatmulViews());
                      }});
    // After the views: the fused attention reads q, k and v at their
    // strides (docs/CudaTarget.md, "Attention in one kernel").
    if (o.fuseElementwise && o.fuseAttention)
      phases.push_back({"fuse-attention", [](OpPassManager &pm) {
                          pm.addPass(createFuseAttention());
                          pm.addPass(createFuseAttentionBias());
                        }});
    // A bias gradient is summed by its weight gradient's GEMM
    // (docs/CudaTarget.md, "Bias gradients in the GEMM").
    if (o.fuseElementwise)
      phases.push_back({"fold-gemm-bias-grad", [](OpPassManager &pm) {
                          pm.addPass(createFoldGemmBiasGrad());
                        }});
    phases.push_back({"fuse-optimizer-step", [](OpPassManager &pm) {
                        pm.addPass(createFuseOptimizerStep());
                      }});
  }
  PlanBuffersOptions plan;
  plan.hostStepScalars = o.target == "cuda";
  // The GPU's aligned GEMM kernels need 16-byte leading dimensions
  // (docs/CudaTarget.md, "The logits' rows at a pitch").
  plan.rowPitchAlignment = o.target == "cuda" ? 16 : 0;
  phases.push_back({"plan-buffers", [plan](OpPassManager &pm) {
                      pm.addPass(createPlanBuffers(plan));
                    }});
  return phases;
}

void registerTrainPipeline() {
  PassPipelineRegistration<TrainPipelineOptions>(
      "zero-train-pipeline",
      "every phase of `zeroc compile` after import, in order: checks of the "
      "imported graph, mixed precision, autodiff, loss scaling, the ZeRO "
      "partition, the optimizer step, cleanup, bucketing, their verifiers, "
      "the buffer plan",
      [](OpPassManager &pm, const TrainPipelineOptions &options) {
        for (const Phase &phase : trainPhases(options))
          phase.build(pm);
      });
}

} // namespace zeroc
