//===- CheckpointWeights.cpp - a checkpoint's consolidated weights -------===//

#include "CheckpointWeights.h"

namespace zeroc {

using namespace zeroc_rt::checkpoint;

std::string takeStatusText(zeroc_rt_status_t status) {
  std::string text = zeroc_rt_status_text(status);
  zeroc_rt_status_free(status);
  return text;
}

CheckpointWeights::CheckpointWeights(const Metadata &meta)
    : meta(meta), files(meta) {
  for (const SavedParam &p : meta.params) {
    WeightTensor t;
    t.name = p.name;
    t.shape = p.shape;
    t.numel = p.numel;
    if (p.hasMaster()) {
      t.tensor = kMasterPrefix + p.name;
      t.savedDtype = p.masterDtype;
      t.stride = p.updateStride;
      t.elements = p.updateElements;
    } else {
      t.tensor = kParamPrefix + p.name;
      t.savedDtype = p.dtype;
      t.stride = p.paramStride;
      t.elements = p.paramElements;
    }
    t.dtype = t.savedDtype == ZEROC_RT_DTYPE_F64 ? ZEROC_RT_DTYPE_F64
                                                 : ZEROC_RT_DTYPE_F32;
    all.push_back(std::move(t));
  }
  for (const SavedBuffer &b : meta.buffers) {
    WeightTensor t;
    t.name = b.name;
    t.shape = b.shape;
    t.numel = t.elements = b.numel;
    t.buffer = true;
    t.tensor = kBufferPrefix + b.name;
    t.savedDtype = t.dtype = b.dtype;
    t.onlyRank = 0;
    all.push_back(std::move(t));
  }
}

zeroc_rt_status_t CheckpointWeights::read(const WeightTensor &t, void *dst,
                                          size_t offset, size_t bytes) {
  const size_t oes = zeroc_rt_dtype_size(t.dtype);
  const int64_t first = static_cast<int64_t>(offset / oes);
  const int64_t count = static_cast<int64_t>(bytes / oes);
  std::vector<Piece> pieces;
  if (zeroc_rt_status_t s = coveringPieces(meta, t.tensor, t.numel, t.stride,
                                           t.elements, first, count, t.onlyRank,
                                           pieces))
    return s;
  for (const Piece &p : pieces) {
    const SafetensorsReader *file = nullptr;
    const TensorInfo *info = nullptr;
    if (zeroc_rt_status_t s =
            files.tensor(p.rank, t.tensor, t.savedDtype, p.pieceCount, file, info))
      return s;
    const int64_t k = p.hi - p.lo;
    char *to = static_cast<char *>(dst) + static_cast<size_t>(p.lo - first) * oes;
    if (zeroc_rt_status_t s =
            t.dtype == ZEROC_RT_DTYPE_F64
                ? file->read(*info, p.lo - p.pieceFirst, k, to)
                : file->readAsFloat(*info, p.lo - p.pieceFirst, k,
                                    reinterpret_cast<float *>(to)))
      return s;
  }
  return nullptr;
}

} // namespace zeroc
