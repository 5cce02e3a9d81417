//===- CheckpointWeights.h - a checkpoint's consolidated weights -*- C++ -*-===//
//
// The whole fp32 value of every parameter and buffer of a zeroc checkpoint
// (docs/Checkpoints.md), assembled from the saved ranks' pieces: from the
// fp32 masters where the run kept them, otherwise from the parameters
// (fp16/bf16 widened; f64 stays f64); buffers from rank 0. Shared by
// `zeroc to-fp32` and `zeroc export-onnx`.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_DRIVER_CHECKPOINTWEIGHTS_H
#define ZEROC_LIB_DRIVER_CHECKPOINTWEIGHTS_H

#include "zeroc_rt/checkpoint_metadata.h"

#include <cstdint>
#include <string>
#include <vector>

namespace zeroc {

/// One consolidated tensor.
struct WeightTensor {
  std::string name; ///< the model's initializer name
  std::vector<int64_t> shape;
  int64_t numel = 0;
  zeroc_rt_dtype_t dtype = ZEROC_RT_DTYPE_F32; ///< F32, or F64
  bool buffer = false;
  // Where its elements are saved.
  std::string tensor;
  zeroc_rt_dtype_t savedDtype = ZEROC_RT_DTYPE_F32;
  int64_t stride = 0, elements = 0;
  int onlyRank = -1;
};

class CheckpointWeights {
public:
  explicit CheckpointWeights(const zeroc_rt::checkpoint::Metadata &meta);
  const std::vector<WeightTensor> &tensors() const { return all; }
  /// Fills `bytes` bytes at `dst` with bytes [offset, offset + bytes) of
  /// tensor `t`'s consolidated value (offset and bytes multiples of its
  /// element size); errors name the rank file.
  zeroc_rt_status_t read(const WeightTensor &t, void *dst, size_t offset,
                         size_t bytes);

private:
  const zeroc_rt::checkpoint::Metadata &meta;
  zeroc_rt::checkpoint::RankFiles files;
  std::vector<WeightTensor> all;
};

/// The user's text of a status (without its source location); frees it.
std::string takeStatusText(zeroc_rt_status_t status);

} // namespace zeroc

#endif // ZEROC_LIB_DRIVER_CHECKPOINTWEIGHTS_H
