//===- TrainPipeline.h - zeroc's phases as one registered pipeline -*- C++ -*-===//
//
// The phases `zeroc compile` runs after ONNX import, in order, each a named
// pass pipeline whose result --dump-ir writes. The same list is registered
// as `zero-train-pipeline`, so that lit runs exactly what the compiler runs:
//   zeroc-opt --zero-train-pipeline='stage=3 world-size=2' model.mlir
// Configuration flows one way: ds_config -> these options -> pass options ->
// attributes in the IR.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_PASSES_TRAINPIPELINE_H
#define ZEROC_PASSES_TRAINPIPELINE_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "zeroc/Passes/CommCostModel.h"
#include "zeroc/Passes/ComputeCostModel.h"

#include <functional>
#include <string>
#include <vector>

namespace zeroc {

/// A named phase: a pass pipeline whose result can be dumped.
struct Phase {
  std::string name;
  std::function<void(mlir::OpPassManager &)> build;
};

struct TrainPipelineOptions
    : public mlir::PassPipelineOptions<TrainPipelineOptions> {
  Option<int> stage{*this, "stage", llvm::cl::desc("ZeRO stage (0-3)"),
                    llvm::cl::init(0)};
  Option<int> worldSize{*this, "world-size",
                        llvm::cl::desc("number of data-parallel ranks"),
                        llvm::cl::init(1)};
  Option<std::string> precision{
      *this, "precision",
      llvm::cl::desc("compute precision: fp32, fp16 or bf16 (f32 masters)"),
      llvm::cl::init("fp32")};
  Option<bool> lossScaling{
      *this, "loss-scaling",
      llvm::cl::desc("seed backward with the dynamic loss scale (fp16)"),
      llvm::cl::init(false)};
  Option<int64_t> gradAccumSteps{
      *this, "grad-accum-steps",
      llvm::cl::desc("micro-steps per optimizer step (backward is seeded "
                     "with 1 / steps)"),
      llvm::cl::init(1)};
  Option<std::string> optimizer{
      *this, "optimizer",
      llvm::cl::desc("the optimizer: a #zero.adam or #zero.sgd attribute"),
      llvm::cl::init("#zero.adam<>")};
  Option<std::string> lrSchedule{
      *this, "lr-schedule",
      llvm::cl::desc("the LR schedule: a #zero.lr_schedule attribute"),
      llvm::cl::init("#zero.lr_schedule<>")};
  Option<std::string> lossScaler{
      *this, "loss-scaler",
      llvm::cl::desc("the fp16 loss scaler: a #zero.loss_scaler attribute "
                     "(empty: none; loss-scaling needs one)"),
      llvm::cl::init("")};
  Option<double> gradientClipping{
      *this, "gradient-clipping",
      llvm::cl::desc("max global gradient norm (0: no clipping)"),
      llvm::cl::init(1.0)};
  Option<bool> fp32GradAccum{
      *this, "fp32-grad-accum",
      llvm::cl::desc("accumulate 16-bit parameters' gradients in f32"),
      llvm::cl::init(false)};
  Option<std::string> monitor{
      *this, "monitor",
      llvm::cl::desc("what the loop logs: a #zero.monitor attribute"),
      llvm::cl::init("#zero.monitor<>")};
  Option<bool> tf32{
      *this, "tf32",
      llvm::cl::desc("f32 matmuls may use TF32 tensor cores (zero.tf32; CUDA)"),
      llvm::cl::init(false)};
  Option<std::string> target{
      *this, "target",
      llvm::cl::desc("the target the plan is for: cpu, or cuda (device "
                     "arena, the optimizer step's scalars on the host)"),
      llvm::cl::init("cpu")};
  Option<bool> fuseElementwise{
      *this, "fuse-elementwise",
      llvm::cl::desc("cuda: make chains of elementwise ops one kernel "
                     "(zero-fuse-elementwise), and part of the softmaxes "
                     "around them (zero-fuse-softmax); false keeps a kernel "
                     "per op"),
      llvm::cl::init(true)};
  Option<bool> fuseAttention{
      *this, "fuse-attention",
      llvm::cl::desc("cuda, with fuse-elementwise: make each f16/bf16 "
                     "softmax attention and its gradient one kernel each "
                     "(zero-fuse-attention)"),
      llvm::cl::init(true)};
  Option<bool> overlapComm{
      *this, "overlap-comm",
      llvm::cl::desc("start stage 3's parameter gathers one bucket early and "
                     "stage 2-3 gradient reductions during backward, in "
                     "buckets the cost model sizes (zero-bucket, zero-overlap)"),
      llvm::cl::init(false)};
  Option<int64_t> maxLiveParameters{
      *this, "max-live-parameters",
      llvm::cl::desc("stage 3: most gathered parameter elements a prefetch "
                     "keeps alive (DeepSpeed's stage3_max_live_parameters)"),
      llvm::cl::init(1000000000)};
  Option<double> commAlphaUs{
      *this, "comm-alpha-us",
      llvm::cl::desc("the cost model's fixed microseconds per collective step"),
      llvm::cl::init(kDefaultCommAlphaUs)};
  Option<double> commGbps{
      *this, "comm-gbps",
      llvm::cl::desc("the cost model's link bandwidth in Gbit/s"),
      llvm::cl::init(kDefaultCommGbps)};
  Option<double> computeGflops{
      *this, "compute-gflops",
      llvm::cl::desc("the compute cost model's GFLOP/s (zero-overlap)"),
      llvm::cl::init(kDefaultComputeGflops)};
  Option<double> memoryGBPerS{
      *this, "memory-gb-per-s",
      llvm::cl::desc("the compute cost model's memory bandwidth in GB/s"),
      llvm::cl::init(kDefaultMemoryGBPerS)};
  Option<int64_t> reduceBucketSize{
      *this, "reduce-bucket-size",
      llvm::cl::desc("most elements one gradient reduction moves: the "
                     "micro-step's reduce-scatters (stages 2-3), the step's "
                     "all-reduces (stage 0) and reduce-scatters (stage 1) "
                     "(DeepSpeed's reduce_bucket_size; 0: one per gradient)"),
      llvm::cl::init(500000000)};
  Option<int64_t> allgatherBucketSize{
      *this, "allgather-bucket-size",
      llvm::cl::desc("most elements one all-gather of updated replicas "
                     "moves after the optimizer step (stages 1-2, stage 3's "
                     "persistent parameters; DeepSpeed's "
                     "allgather_bucket_size; 0: one per parameter)"),
      llvm::cl::init(500000000)};
  Option<int64_t> persistenceThreshold{
      *this, "persistence-threshold",
      llvm::cl::desc("stage 3: parameters of at most this many elements "
                     "stay whole on every rank (DeepSpeed's "
                     "stage3_param_persistence_threshold; 0: none)"),
      llvm::cl::init(100000)};
  Option<int64_t> maxReuseDistance{
      *this, "max-reuse-distance",
      llvm::cl::desc("stage 3: a parameter used again in backward within "
                     "this many elements of other parameter uses keeps its "
                     "forward gather (DeepSpeed's stage3_max_reuse_distance; "
                     "0: gather again)"),
      llvm::cl::init(1000000000)};
  Option<int64_t> modelPersistenceThreshold{
      *this, "model-persistence-threshold",
      llvm::cl::desc("stage 3: most elements the persistent parameters hold "
                     "together (DeepSpeed's "
                     "stage3_model_persistence_threshold)"),
      llvm::cl::init(INT64_MAX)};
  Option<int64_t> prefetchBucketSize{
      *this, "prefetch-bucket-size",
      llvm::cl::desc("stage 3: most elements one parameter all-gather moves "
                     "(DeepSpeed's stage3_prefetch_bucket_size; 0: one per "
                     "parameter)"),
      llvm::cl::init(50000000)};
  Option<bool> requireLoss{
      *this, "require-loss",
      llvm::cl::desc("the imported graph must mark a loss"),
      llvm::cl::init(true)};
};

/// The phases that check an imported graph (what `zeroc import` runs).
std::vector<Phase> importPhases(bool requireLoss = true);

/// The import phases, then mixed precision (unless fp32), autodiff, loss
/// scaling (with loss scaling or gradient accumulation), the ZeRO
/// partition, the optimizer step, cleanup, bucketing, their verifiers and
/// the buffer plan. An unknown precision is reported by
/// zero-mixed-precision.
std::vector<Phase> trainPhases(const TrainPipelineOptions &options);

/// Registers `zero-train-pipeline` (every phase of trainPhases in order).
void registerTrainPipeline();

} // namespace zeroc

#endif // ZEROC_PASSES_TRAINPIPELINE_H
