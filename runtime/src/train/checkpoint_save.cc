//===- checkpoint_save.cc - --save-dir: an atomic checkpoint ----*- C++ -*-===//
//
// The protocol (docs/Checkpoints.md), with an agreement after each phase so
// that every rank learns of any rank's failure:
//  1. rank 0 empties or creates DIR/<tag>.partial;
//  2. every rank writes its rank file there (a temporary name, fsync,
//     rename) and the ranks all-gather {failed, bytes, checksum};
//  3. rank 0 writes checkpoint.json (with every file's size and checksum)
//     there, renames DIR/<tag>.partial to DIR/<tag> (an existing DIR/<tag>
//     is first renamed DIR/<tag>.replaced, which a loader falls back to,
//     and removed after), fsyncs DIR and then rewrites DIR/latest durably.
// A process killed at any point leaves DIR/latest naming a complete
// checkpoint (the previous one until the last step), and a partial
// directory that the next save clears.
//
//===----------------------------------------------------------------------===//

#include "train/checkpoint.h"

#include "status_internal.h"
#include "zeroc_rt/checkpoint_format.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

namespace zeroc_rt::train {
namespace {

using namespace checkpoint;
using checkpoint::TensorSource;
using checkpoint::WrittenFile;
using Json = nlohmann::ordered_json;

bool exists(const std::string &path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

/// Removes the files of directory `dir` (a checkpoint directory holds no
/// subdirectories) and `dir` itself; a missing `dir` is fine.
zeroc_rt_status_t removeCheckpointDirectory(const std::string &dir) {
  DIR *d = ::opendir(dir.c_str());
  if (!d) {
    if (errno == ENOENT)
      return nullptr;
    return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "'%s': cannot open: %s",
                          dir.c_str(), std::strerror(errno));
  }
  zeroc_rt_status_t status = nullptr;
  while (dirent *e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..")
      continue;
    std::string path = dir + "/" + name;
    if (::unlink(path.c_str()) != 0 && !status)
      status = ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "'%s': cannot remove: %s",
                              path.c_str(), std::strerror(errno));
  }
  ::closedir(d);
  if (!status && ::rmdir(dir.c_str()) != 0)
    status = ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "'%s': cannot remove: %s",
                            dir.c_str(), std::strerror(errno));
  return status;
}

/// agreeOnFailures, with "saving a checkpoint: " before what this rank did
/// not cause itself.
zeroc_rt_status_t agreeOn(zeroc_rt_comm_t *comm, zeroc_rt_status_t local,
                          const char *phase, bool *commFailed) {
  const bool mine = local != nullptr;
  zeroc_rt_status_t status = agreeOnFailures(comm, local, phase, commFailed);
  return status && !mine ? ZEROC_RT_TRAIN_WRAP(status, "saving a checkpoint: ")
                         : status;
}

/// A source reading `count` elements of `dtype` at `data` (device memory).
TensorSource deviceSource(Device &device, std::string name,
                          zeroc_rt_dtype_t dtype, const void *data,
                          int64_t count) {
  TensorSource t;
  t.name = std::move(name);
  t.dtype = dtype;
  t.count = count;
  t.read = [&device, data](void *dst, size_t offset, size_t bytes) {
    return device.download(dst, static_cast<const char *>(data) + offset, bytes);
  };
  return t;
}

/// This rank's tensors, in the order of the header comment of checkpoint.h.
std::vector<TensorSource> rankTensors(const zeroc_rt_engine &engine) {
  const ZeroState &st = engine.state;
  Device &device = *st.device;
  const int rank = st.rank;
  std::vector<TensorSource> out;
  for (const ParamState &p : st.params) {
    const std::string name = p.desc->name;
    if (p.desc->param_stride != 0 || rank == 0) {
      const void *kept = p.replica ? p.replica : p.shardParam;
      out.push_back(deviceSource(device, kParamPrefix + name, p.dtype, kept,
                                 clippedCount(p.keptFirst, p.keptCount, p.numel)));
    }
    if (p.frozen || (p.desc->update_stride == 0 && rank != 0))
      continue;
    const int64_t count = clippedCount(p.updateFirst, p.updateCount, p.numel);
    const std::pair<const char *, const void *> state[] = {
        {kMasterPrefix, p.master},
        {kExpAvgPrefix, p.expAvg},
        {kExpAvgSqPrefix, p.expAvgSq},
        {kMomentumPrefix, p.momentum}};
    for (const auto &[prefix, data] : state)
      if (data)
        out.push_back(deviceSource(device, prefix + name, p.masterDtype, data,
                                   count));
  }
  for (const BufferState &b : st.buffers)
    out.push_back(deviceSource(device, kBufferPrefix + std::string(b.desc->name),
                               b.desc->dtype, b.data, b.desc->numel));
  return out;
}

const char *precisionName(zeroc_rt_precision_t p) {
  return p == ZEROC_RT_PRECISION_FP16   ? "fp16"
         : p == ZEROC_RT_PRECISION_BF16 ? "bf16"
                                        : "fp32";
}

Json shapeOf(int32_t rank, const int64_t *dims) {
  Json shape = Json::array();
  for (int32_t k = 0; k < rank; ++k)
    shape.push_back(dims[k]);
  return shape;
}

/// checkpoint.json.
std::string metadataText(const zeroc_rt_engine &engine, const std::string &tag,
                         const TrainPosition &pos,
                         const std::vector<WrittenFile> &files) {
  const zeroc_rt_program_t &program = *engine.program;
  const zeroc_rt_loss_scaler_state_t &s = engine.scaler;
  Json j;
  j["format"] = checkpoint::kFormat;
  j["version"] = checkpoint::kVersion;
  j["tag"] = tag;
  j["global_steps"] = pos.globalSteps;
  j["global_samples"] = pos.globalSamples;
  j["optimizer_steps"] = engine.optimizerSteps;
  j["skipped_steps"] = engine.skippedSteps;
  j["consecutive_skipped_steps"] = pos.consecutiveSkipped;
  j["stage"] = program.stage;
  j["world_size"] = engine.world;
  j["precision"] = precisionName(program.precision);
  j["optimizer"] = program.optimizer.type == ZEROC_RT_OPTIMIZER_ADAM ? "adam" : "sgd";
  j["micro_batch"] = program.micro_batch;
  j["grad_accum"] = program.grad_accum;
  // The scheduler's only state is the count of updates it stepped.
  j["lr_scheduler"] = {{"last_batch_iteration", engine.optimizerSteps}};
  j["loss_scaler"] = {{"enabled", program.loss_scaler.enabled != 0},
                      {"dynamic", s.dynamic != 0},
                      {"cur_scale", s.cur_scale},
                      {"cur_hysteresis", s.cur_hysteresis},
                      {"cur_iter", s.cur_iter},
                      {"last_overflow_iter", s.last_overflow_iter}};
  Json params = Json::array();
  for (const ParamState &p : engine.state.params) {
    const zeroc_rt_param_desc_t &d = *p.desc;
    params.push_back({{"name", d.name},
                      {"dtype", checkpoint::safetensorsDtype(p.dtype)},
                      {"master_dtype", checkpoint::safetensorsDtype(p.masterDtype)},
                      {"shape", shapeOf(d.rank, d.dims)},
                      {"numel", d.numel},
                      {"frozen", p.frozen},
                      {"param_elements", d.param_elements},
                      {"param_stride", d.param_stride},
                      {"update_elements", p.frozen ? 0 : d.update_elements},
                      {"update_stride", d.update_stride}});
  }
  j["params"] = params;
  Json buffers = Json::array();
  for (const BufferState &b : engine.state.buffers)
    buffers.push_back({{"name", b.desc->name},
                       {"dtype", checkpoint::safetensorsDtype(b.desc->dtype)},
                       {"shape", shapeOf(b.desc->rank, b.desc->dims)},
                       {"numel", b.desc->numel}});
  j["buffers"] = buffers;
  Json fileList = Json::array();
  for (size_t r = 0; r < files.size(); ++r)
    fileList.push_back({{"rank", r},
                        {"file", rankFileName(static_cast<int>(r))},
                        {"bytes", files[r].bytes},
                        {"checksum", format("%016llx", static_cast<unsigned long long>(
                                                           files[r].checksum))}});
  j["files"] = fileList;
  // The config the run was compiled with and the tied weights' other names,
  // as JSON where they parse.
  auto embed = [](const char *text) -> Json {
    if (!text || !*text)
      return Json::object();
    Json v = Json::parse(text, nullptr, false);
    return v.is_discarded() ? Json(text) : v;
  };
  j["ds_config"] = embed(program.checkpoint.ds_config);
  j["aliases"] = embed(program.checkpoint.aliases);
  return j.dump(1) + "\n";
}

/// Rank 0's last phase: the metadata, then the renames that publish it.
zeroc_rt_status_t publish(const zeroc_rt_engine &engine, const std::string &dir,
                          const std::string &tag, const TrainPosition &pos,
                          const std::vector<WrittenFile> &files) {
  const std::string final = dir + "/" + tag, partial = final + ".partial",
                    replaced = final + ".replaced";
  ZEROC_RT_RETURN_IF_ERROR(checkpoint::writeFileDurably(
      partial + "/checkpoint.json", metadataText(engine, tag, pos, files)));
  ZEROC_RT_RETURN_IF_ERROR(removeCheckpointDirectory(replaced));
  const bool had = exists(final);
  if (had && ::rename(final.c_str(), replaced.c_str()) != 0)
    return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "'%s': cannot rename to '%s': %s",
                          final.c_str(), replaced.c_str(), std::strerror(errno));
  if (::rename(partial.c_str(), final.c_str()) != 0)
    return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "'%s': cannot rename to '%s': %s",
                          partial.c_str(), final.c_str(), std::strerror(errno));
  ZEROC_RT_RETURN_IF_ERROR(checkpoint::syncDirectory(dir));
  ZEROC_RT_RETURN_IF_ERROR(checkpoint::writeFileDurably(dir + "/latest", tag + "\n"));
  return had ? removeCheckpointDirectory(replaced) : nullptr;
}

zeroc_rt_status_t prepare(const std::string &dir, const std::string &partial) {
  ZEROC_RT_RETURN_IF_ERROR(makeDirectories(dir));
  ZEROC_RT_RETURN_IF_ERROR(removeCheckpointDirectory(partial));
  if (::mkdir(partial.c_str(), 0777) != 0)
    return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "'%s': cannot create: %s",
                          partial.c_str(), std::strerror(errno));
  return checkpoint::syncDirectory(dir);
}

} // namespace

std::string checkpointTag(int64_t step) {
  return format("global_step%lld", static_cast<long long>(step));
}

zeroc_rt_status_t checkCheckpointDir(const std::string &dir) {
  ZEROC_RT_RETURN_IF_ERROR(ZEROC_RT_TRAIN_WRAP(makeDirectories(dir), "--save-dir: "));
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "--save-dir: '%s': not writable: %s",
                          dir.c_str(), std::strerror(errno));
  return nullptr;
}

zeroc_rt_status_t saveCheckpoint(zeroc_rt_engine &engine, zeroc_rt_comm_t *comm,
                                 const std::string &dir,
                                 const TrainPosition &pos, bool *commFailed) {
  const int rank = engine.rank, world = engine.world;
  const std::string tag = checkpointTag(pos.globalSteps);
  const std::string partial = dir + "/" + tag + ".partial";
  zeroc_rt_status_t status = rank == 0 ? prepare(dir, partial) : nullptr;
  ZEROC_RT_RETURN_IF_ERROR(
      agreeOn(comm, status, "to create the checkpoint directory", commFailed));

  WrittenFile mine;
  status = ZEROC_RT_GUARD_EXCEPTIONS(checkpoint::writeSafetensors(
      partial + "/" + rankFileName(rank), rankTensors(engine),
      {{"format", "zeroc-checkpoint-rank"}, {"rank", std::to_string(rank)}},
      mine));
  uint64_t record[3] = {status ? 1u : 0u, mine.bytes, mine.checksum};
  std::vector<uint64_t> all(static_cast<size_t>(world) * 3);
  zeroc_rt_status_t gathered = zeroc_rt_comm_all_gather(
      comm, record, all.data(), 3, ZEROC_RT_DTYPE_I64);
  if (gathered) {
    *commFailed = true;
    zeroc_rt_status_free(status);
    return ZEROC_RT_TRAIN_WRAP(gathered, "saving a checkpoint: ");
  }
  if (status)
    return status;
  for (int r = 0; r < world; ++r)
    if (all[static_cast<size_t>(r) * 3] != 0)
      return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR,
                            "saving a checkpoint: rank %d failed to write its "
                            "file (see its error)",
                            r);
  std::vector<WrittenFile> files(static_cast<size_t>(world));
  for (int r = 0; r < world; ++r) {
    files[static_cast<size_t>(r)].bytes = all[static_cast<size_t>(r) * 3 + 1];
    files[static_cast<size_t>(r)].checksum = all[static_cast<size_t>(r) * 3 + 2];
  }
  status = rank == 0 ? ZEROC_RT_GUARD_EXCEPTIONS(
                           publish(engine, dir, tag, pos, files))
                     : nullptr;
  return agreeOn(comm, status, "to publish the checkpoint", commFailed);
}

} // namespace zeroc_rt::train
