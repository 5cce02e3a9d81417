//===- zeroc_rt/checkpoint_metadata.h - A checkpoint's index -----*- C++ -*-===//
//
// DIR/<tag>/checkpoint.json (docs/Checkpoints.md) read and checked, and the
// saved pieces of a parameter: the one reader of a checkpoint's layout, for
// the trainer's --load-dir and for zeroc to-fp32 / export-onnx.
//
// A saved rank r holds elements [r * stride, r * stride + elements) of a
// parameter, clipped to its n elements; stride 0 (a replica, or stage 0's
// optimizer state) means rank 0 alone holds it.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_CHECKPOINT_METADATA_H
#define ZEROC_RT_CHECKPOINT_METADATA_H

#include "zeroc_rt/checkpoint_format.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace zeroc_rt::checkpoint {

constexpr int kVersion = 1;
constexpr const char *kFormat = "zeroc-checkpoint";
/// The longest tag (one path component).
constexpr size_t kMaxTagBytes = 200;

/// The tensor kinds of a rank file, as name prefixes.
constexpr const char *kParamPrefix = "param.";
constexpr const char *kMasterPrefix = "master.";
constexpr const char *kExpAvgPrefix = "exp_avg.";
constexpr const char *kExpAvgSqPrefix = "exp_avg_sq.";
constexpr const char *kMomentumPrefix = "momentum.";
constexpr const char *kBufferPrefix = "buffer.";

/// The number of elements of a piece [first, first + elements) inside
/// [0, n).
inline int64_t clippedCount(int64_t first, int64_t elements, int64_t n) {
  if (first >= n)
    return 0;
  return elements < n - first ? elements : n - first;
}

/// "" when `tag` may name DIR/<tag>; otherwise why not.
std::string tagProblem(const std::string &tag);

/// "rank<r>.safetensors".
std::string rankFileName(int rank);

struct SavedParam {
  std::string name;
  zeroc_rt_dtype_t dtype = ZEROC_RT_DTYPE_F32, masterDtype = ZEROC_RT_DTYPE_F32;
  std::vector<int64_t> shape;
  int64_t numel = 0;
  bool frozen = false;
  int64_t paramElements = 0, paramStride = 0;
  int64_t updateElements = 0, updateStride = 0;
  bool hasMaster() const { return !frozen && masterDtype != dtype; }
};

struct SavedBuffer {
  std::string name;
  zeroc_rt_dtype_t dtype = ZEROC_RT_DTYPE_F32;
  std::vector<int64_t> shape;
  int64_t numel = 0;
};

struct Metadata {
  std::string dir; ///< DIR/<tag> (or DIR/<tag>.replaced) that was read
  std::string tag;
  int64_t globalSteps = 0, globalSamples = 0, optimizerSteps = 0,
          skippedSteps = 0, consecutiveSkipped = 0;
  int world = 0, stage = 0;
  std::string optimizer; ///< "adam" or "sgd"
  bool scalerEnabled = false;
  double curScale = 1;
  int64_t curHysteresis = 0, curIter = 0, lastOverflowIter = -1;
  std::vector<SavedParam> params; ///< in the saved order
  std::vector<SavedBuffer> buffers;
  std::vector<WrittenFile> files; ///< per rank
  /// Tied weights' other state_dict names -> the parameter's name.
  std::map<std::string, std::string> aliases;

  const SavedParam *findParam(const std::string &name) const;
  const SavedBuffer *findBuffer(const std::string &name) const;
};

/// Reads DIR/<tag>/checkpoint.json; tag "" is the one DIR/latest names. A
/// tag whose directory is missing falls back to DIR/<tag>.replaced (what a
/// save killed between its two renames leaves). `what` starts the
/// messages ("--load-dir", "to-fp32") and `tagFlag` is the caller's option
/// that names a tag; every error names the file.
ZEROC_RT_MUST_USE zeroc_rt_status_t readMetadata(const std::string &dir,
                                                 const std::string &tag,
                                                 const char *what,
                                                 const char *tagFlag,
                                                 Metadata &out);

/// A saved rank's share of [first, first + count): elements [lo, hi), which
/// are elements [lo - pieceFirst, hi - pieceFirst) of its tensor of
/// pieceCount elements.
struct Piece {
  int rank = 0;
  int64_t pieceFirst = 0, pieceCount = 0;
  int64_t lo = 0, hi = 0;
};

/// The pieces that cover [first, first + count) of an n-element parameter
/// saved with `stride` / `elements`; with onlyRank >= 0, that rank's whole
/// tensor alone (a buffer). Empty pieces are left out; an error when they
/// do not cover the range.
ZEROC_RT_MUST_USE zeroc_rt_status_t
coveringPieces(const Metadata &meta, const std::string &tensor, int64_t n,
               int64_t stride, int64_t elements, int64_t first, int64_t count,
               int onlyRank, std::vector<Piece> &out);

/// The rank files of a checkpoint, each opened (and its checksum checked)
/// when first asked for.
class RankFiles {
public:
  explicit RankFiles(const Metadata &meta);
  ~RankFiles();
  /// Rank `rank`'s tensor `name`, checked to be `count` elements of `dtype`.
  ZEROC_RT_MUST_USE zeroc_rt_status_t tensor(int rank, const std::string &name,
                                             zeroc_rt_dtype_t dtype, int64_t count,
                                             const SafetensorsReader *&file,
                                             const TensorInfo *&info);

private:
  const Metadata &meta;
  std::vector<std::unique_ptr<SafetensorsReader>> readers;
};

} // namespace zeroc_rt::checkpoint

#endif // ZEROC_RT_CHECKPOINT_METADATA_H
