//===- checkpoint_load.cc - --load-dir: resume and reshard ------*- C++ -*-===//
//
// Reads checkpoint.json (zeroc_rt/checkpoint_metadata.h), checks that it
// describes this program's model (the same parameters and buffers with the
// same dtypes, shapes and frozen flags, the same optimizer), then fills
// every range this rank keeps from the saved pieces that intersect it, so a
// checkpoint of any world size and stage loads at any other. A rank file is
// believed only after its size and checksum match checkpoint.json.
//
//===----------------------------------------------------------------------===//

#include "train/checkpoint.h"

#include "status_internal.h"

#include <algorithm>

namespace zeroc_rt::train {
namespace {

using namespace checkpoint;

constexpr size_t kChunkBytes = 4u << 20;

std::string shapeText(const std::vector<int64_t> &shape) {
  return shapeString(static_cast<int32_t>(shape.size()), shape.data());
}

class Loader {
public:
  Loader(zeroc_rt_engine &engine, const Metadata &meta)
      : engine(engine), meta(meta), files(meta) {}

  /// The error when this program's model is not the checkpoint's.
  zeroc_rt_status_t checkModel() const;
  zeroc_rt_status_t fillParams();
  zeroc_rt_status_t fillBuffers();

private:
  /// Fills elements [first, first + count) of tensor `name` into `dst`
  /// (device memory of `dtype`) from the saved pieces (coveringPieces).
  zeroc_rt_status_t fill(const std::string &name, zeroc_rt_dtype_t dtype,
                         int64_t n, int64_t stride, int64_t elements,
                         int64_t first, int64_t count, void *dst,
                         int onlyRank = -1);

  zeroc_rt_engine &engine;
  const Metadata &meta;
  RankFiles files;
  std::vector<char> chunk;
};

zeroc_rt_status_t Loader::checkModel() const {
  const ZeroState &st = engine.state;
  const zeroc_rt_program_t &program = *engine.program;
  auto mismatch = [&](const std::string &why) {
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                          "--load-dir: checkpoint '%s' does not match this "
                          "program: %s (a checkpoint of another model or "
                          "configuration?)",
                          meta.dir.c_str(), why.c_str());
  };
  const char *optimizer =
      program.optimizer.type == ZEROC_RT_OPTIMIZER_ADAM ? "adam" : "sgd";
  if (meta.optimizer != optimizer)
    return mismatch(format("it holds %s state, this program's optimizer is %s",
                           meta.optimizer.c_str(), optimizer));
  if (meta.params.size() != st.params.size())
    return mismatch(format("it has %zu parameters, this model %zu",
                           meta.params.size(), st.params.size()));
  for (const ParamState &p : st.params) {
    const std::string name = p.desc->name;
    const SavedParam *sp = meta.findParam(name);
    if (!sp)
      return mismatch(format("it has no parameter '%s'", name.c_str()));
    std::vector<int64_t> shape(p.desc->dims, p.desc->dims + p.desc->rank);
    if (sp->shape != shape)
      return mismatch(format("parameter '%s' has shape %s there, %s here",
                             name.c_str(), shapeText(sp->shape).c_str(),
                             shapeText(shape).c_str()));
    if (sp->dtype != p.dtype || sp->masterDtype != p.masterDtype)
      return mismatch(format(
          "parameter '%s' is %s (master %s) there, %s (master %s) here; "
          "compile with the precision the checkpoint was trained in",
          name.c_str(), zeroc_rt_dtype_name(sp->dtype),
          zeroc_rt_dtype_name(sp->masterDtype), zeroc_rt_dtype_name(p.dtype),
          zeroc_rt_dtype_name(p.masterDtype)));
    if (sp->frozen != p.frozen)
      return mismatch(format("parameter '%s' is %s there, %s here", name.c_str(),
                             sp->frozen ? "frozen" : "trainable",
                             p.frozen ? "frozen" : "trainable"));
  }
  if (meta.buffers.size() != st.buffers.size())
    return mismatch(format("it has %zu buffers, this model %zu",
                           meta.buffers.size(), st.buffers.size()));
  for (const BufferState &b : st.buffers) {
    const SavedBuffer *sb = meta.findBuffer(b.desc->name);
    std::vector<int64_t> shape(b.desc->dims, b.desc->dims + b.desc->rank);
    if (!sb || sb->shape != shape || sb->dtype != b.desc->dtype)
      return mismatch(format("buffer '%s' is missing there or differs in "
                             "shape or dtype",
                             b.desc->name));
  }
  return nullptr;
}

zeroc_rt_status_t Loader::fill(const std::string &name, zeroc_rt_dtype_t dtype,
                               int64_t n, int64_t stride, int64_t elements,
                               int64_t first, int64_t count, void *dst,
                               int onlyRank) {
  const size_t es = zeroc_rt_dtype_size(dtype);
  std::vector<Piece> pieces;
  ZEROC_RT_RETURN_IF_ERROR(coveringPieces(meta, name, n, stride, elements,
                                          first, count, onlyRank, pieces));
  if (chunk.empty() && !pieces.empty())
    chunk.resize(kChunkBytes);
  const int64_t perChunk = static_cast<int64_t>(chunk.size() / es);
  for (const Piece &piece : pieces) {
    const SafetensorsReader *file = nullptr;
    const TensorInfo *t = nullptr;
    ZEROC_RT_RETURN_IF_ERROR(
        files.tensor(piece.rank, name, dtype, piece.pieceCount, file, t));
    for (int64_t at = piece.lo; at < piece.hi;) {
      const int64_t k = std::min(piece.hi - at, perChunk);
      ZEROC_RT_RETURN_IF_ERROR(
          file->read(*t, at - piece.pieceFirst, k, chunk.data()));
      ZEROC_RT_RETURN_IF_ERROR(engine.device->upload(
          static_cast<char *>(dst) + static_cast<size_t>(at - first) * es,
          chunk.data(), static_cast<size_t>(k) * es));
      at += k;
    }
  }
  return nullptr;
}

zeroc_rt_status_t Loader::fillParams() {
  const bool mastersFromParams =
      engine.program->checkpoint.masters_from_params != 0;
  for (ParamState &p : engine.state.params) {
    const std::string name = p.desc->name;
    const SavedParam &sp = *meta.findParam(name);
    void *kept = p.replica ? p.replica : p.shardParam;
    ZEROC_RT_RETURN_IF_ERROR(fill(kParamPrefix + name, p.dtype, p.numel,
                                  sp.paramStride, sp.paramElements, p.keptFirst,
                                  clippedCount(p.keptFirst, p.keptCount, p.numel),
                                  kept));
    if (p.frozen)
      continue;
    const int64_t count = clippedCount(p.updateFirst, p.updateCount, p.numel);
    const std::pair<const char *, void *> state[] = {
        {kMasterPrefix, p.master},
        {kExpAvgPrefix, p.expAvg},
        {kExpAvgSqPrefix, p.expAvgSq},
        {kMomentumPrefix, p.momentum}};
    for (const auto &[prefix, data] : state) {
      if (!data)
        continue;
      if (data == p.master && mastersFromParams) {
        // zero_optimization.load_from_fp32_weights=false: the masters
        // restart from the 16-bit parameters, as DeepSpeed's do.
        if (count > 0)
          ZEROC_RT_RETURN_IF_ERROR(engine.device->convert(
              p.dtype, p.updateParam, p.masterDtype, p.master, count, 1.0));
        continue;
      }
      ZEROC_RT_RETURN_IF_ERROR(fill(prefix + name, p.masterDtype, p.numel,
                                    sp.updateStride, sp.updateElements,
                                    p.updateFirst, count, data));
    }
  }
  return nullptr;
}

zeroc_rt_status_t Loader::fillBuffers() {
  // Each rank's own running statistics at the same world size; rank 0's
  // (what DeepSpeed saves) at another.
  const int from = meta.world == engine.world ? engine.rank : 0;
  for (BufferState &b : engine.state.buffers)
    ZEROC_RT_RETURN_IF_ERROR(fill(kBufferPrefix + std::string(b.desc->name),
                                  b.desc->dtype, b.desc->numel, 0,
                                  b.desc->numel, 0, b.desc->numel, b.data, from));
  return nullptr;
}

} // namespace

zeroc_rt_status_t loadCheckpoint(zeroc_rt_engine &engine, const std::string &dir,
                                 const std::string &tag, TrainPosition &pos) {
  Metadata meta;
  ZEROC_RT_RETURN_IF_ERROR(readMetadata(dir, tag, "--load-dir", "--load-tag", meta));
  Loader loader(engine, meta);
  ZEROC_RT_RETURN_IF_ERROR(loader.checkModel());
  ZEROC_RT_RETURN_IF_ERROR(loader.fillParams());
  ZEROC_RT_RETURN_IF_ERROR(loader.fillBuffers());
  ZEROC_RT_RETURN_IF_ERROR(engine.device->synchronize());

  engine.optimizerSteps = meta.optimizerSteps;
  engine.skippedSteps = meta.skippedSteps;
  zeroc_rt_loss_scaler_state_t &s = engine.scaler;
  if (meta.scalerEnabled && engine.program->loss_scaler.enabled) {
    // A dynamic scaler resumes where it stood; a static one keeps the
    // scale this program was compiled with.
    if (s.dynamic)
      s.cur_scale = std::max(meta.curScale, s.min_scale);
    s.cur_hysteresis = static_cast<int32_t>(
        std::min<int64_t>(meta.curHysteresis, s.delayed_shift));
    s.cur_iter = meta.curIter;
    s.last_overflow_iter = meta.lastOverflowIter;
  }
  pos.globalSteps = meta.globalSteps;
  pos.globalSamples = meta.globalSamples;
  pos.consecutiveSkipped = meta.consecutiveSkipped;
  pos.tag = meta.tag;
  return nullptr;
}

} // namespace zeroc_rt::train
