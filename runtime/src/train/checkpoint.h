//===- checkpoint.h - --save-dir / --load-dir -------------------*- C++ -*-===//
//
// The trainer's checkpoints (docs/Checkpoints.md): DIR/<tag>/ with
// rank<r>.safetensors per rank (zeroc_rt/checkpoint_format.h) and
// checkpoint.json, and DIR/latest naming the last complete tag.
//
// What a rank file holds, each tensor 1-D and clipped to the parameter's n
// elements (the ZeRO padding is zero and is not saved):
//   param.<name>                          the rank's kept slice, from element
//                                         rank * param_stride (a replica,
//                                         stride 0: rank 0 only)
//   master. / exp_avg. / exp_avg_sq. /
//   momentum.<name>                       the rank's update slice, from
//                                         element rank * update_stride
//                                         (stage 0, stride 0: rank 0 only)
//   buffer.<name>                         the rank's own model buffer
// so that a loader at any world size and stage fills its own ranges from
// the saved pieces that intersect them.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_SRC_TRAIN_CHECKPOINT_H
#define ZEROC_RT_SRC_TRAIN_CHECKPOINT_H

#include "train/train_internal.h"
#include "zeroc_rt/checkpoint_metadata.h"

#include <string>

namespace zeroc_rt::train {

/// Where the training loop stands, saved with the state.
struct TrainPosition {
  int64_t globalSteps = 0;   ///< optimizer steps run, taken or skipped
  int64_t globalSamples = 0; ///< samples consumed by them
  int64_t consecutiveSkipped = 0;
  std::string tag; ///< of the checkpoint loaded (load only)
};

/// The tag of the checkpoint saved after optimizer step `step`.
std::string checkpointTag(int64_t step);

/// Setup check of --save-dir before any step: DIR exists or can be created
/// and this process may write there.
ZEROC_RT_MUST_USE zeroc_rt_status_t checkCheckpointDir(const std::string &dir);

/// Collective over `comm` (agreement collectives only, so it may run while
/// a stage-3 gather carried into the next micro-step is in flight): writes
/// DIR/global_step<N>/ and moves DIR/latest to it once every rank's file is
/// complete. Every rank returns an error when any rank failed (that rank
/// its own); *commFailed is set when a collective itself failed.
ZEROC_RT_MUST_USE zeroc_rt_status_t saveCheckpoint(zeroc_rt_engine &engine,
                                                   zeroc_rt_comm_t *comm,
                                                   const std::string &dir,
                                                   const TrainPosition &pos,
                                                   bool *commFailed);

/// Local, in setup after buildZeroState: fills this rank's parameters,
/// masters, optimizer state and buffers from DIR/<tag> (tag "": the one
/// DIR/latest names), whatever world size and stage saved it, and sets the
/// engine's step counters and loss scaler and `pos`. Errors name the file
/// and what does not match.
ZEROC_RT_MUST_USE zeroc_rt_status_t loadCheckpoint(zeroc_rt_engine &engine,
                                                   const std::string &dir,
                                                   const std::string &tag,
                                                   TrainPosition &pos);

} // namespace zeroc_rt::train

#endif // ZEROC_RT_SRC_TRAIN_CHECKPOINT_H
