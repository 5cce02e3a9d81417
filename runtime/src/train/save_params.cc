//===- save_params.cc - --save-params: the final parameters -----*- C++ -*-===//
//
// Every rank reconstructs the full parameters (stage 3 all-gathers each
// shard; stages 0-2 hold full replicas) and writes DIR/rank<r>/<file>.npy,
// so a test can check that all ranks agree. With mixed precision the saved
// values are the f32 masters, as DeepSpeed's zero_to_fp32 recovers them
// (stage 0 holds the whole master; stages 1-3 all-gather the partitions). Rank 0 also writes
// DIR/params.json in the format of tools/reference/onnx_torch_train.py:
//   {"psi": N, "num_params": K, "params": [
//     {"name": ..., "file": ..., "shape": [...], "numel": n, "dtype": ...},
//   ...]}
//
//===----------------------------------------------------------------------===//

#include "train/train_internal.h"

#include "status_internal.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace zeroc_rt::train {
namespace {

const char *numpyDtypeName(zeroc_rt_dtype_t dtype) {
  return dtype == ZEROC_RT_DTYPE_F64 ? "float64" : "float32";
}

zeroc_rt_status_t writeParamsJson(const ZeroState &st, const std::string &dir) {
  std::string text = format("{\"psi\": %lld, \"num_params\": %zu, \"params\": [\n",
                            static_cast<long long>(st.psi), st.params.size());
  for (size_t i = 0; i < st.params.size(); ++i) {
    const zeroc_rt_param_desc_t &d = *st.params[i].desc;
    std::string shape = "[";
    for (int32_t k = 0; k < d.rank; ++k)
      shape += format("%s%lld", k ? ", " : "", static_cast<long long>(d.dims[k]));
    shape += "]";
    text += format("  {\"name\": %s, \"file\": %s, \"shape\": %s, "
                   "\"numel\": %lld, \"dtype\": \"%s\"}%s\n",
                   jsonString(d.name).c_str(),
                   jsonString(paramFileName(d.name)).c_str(), shape.c_str(),
                   static_cast<long long>(d.numel),
                   numpyDtypeName(st.params[i].masterDtype),
                   i + 1 < st.params.size() ? "," : "");
  }
  text += "]}\n";
  std::string path = dir + "/params.json", tmp = path + ".tmp";
  std::FILE *f = std::fopen(tmp.c_str(), "wb");
  if (!f)
    return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "'%s': cannot create: %s",
                          tmp.c_str(), std::strerror(errno));
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = std::fclose(f) == 0 && ok;
  if (!ok)
    return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "'%s': write failed", tmp.c_str());
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "'%s': cannot rename to '%s': %s",
                          tmp.c_str(), path.c_str(), std::strerror(errno));
  return nullptr;
}

} // namespace

zeroc_rt_status_t saveParams(zeroc_rt_engine &engine, const std::string &dir,
                             bool *desynced) {
  ZeroState &st = engine.state;
  *desynced = false;
  const std::string prefix = "--save-params: ";
  std::string rankDir = dir + "/rank" + std::to_string(engine.rank);
  // Write errors are remembered, but the stage-3 all-gathers still run on
  // every rank so that nobody is left waiting in a collective.
  zeroc_rt_status_t first = ZEROC_RT_TRAIN_WRAP(makeDirectories(rankDir), prefix);

  // What is saved: the master copy when there is one, else the parameter;
  // a full local buffer, or a rank's S elements to all-gather.
  auto source = [&](const ParamState &p) -> const void * {
    if (p.hasMaster())
      return p.master;
    return st.stage == 3 ? p.shardParam : p.replica;
  };
  auto needsGather = [&](const ParamState &p) {
    return p.hasMaster() ? st.stage != 0 : st.stage == 3;
  };
  AlignedBuffer gathered;
  size_t maxBytes = 0;
  for (const ParamState &p : st.params)
    if (needsGather(p))
      maxBytes = std::max(maxBytes, static_cast<size_t>(p.padded) * p.masterElemSize);
  if (zeroc_rt_status_t status = gathered.allocate(maxBytes, "--save-params")) {
    zeroc_rt_status_free(first);
    *desynced = true;
    return status;
  }
  for (const ParamState &p : st.params) {
    const void *full = source(p);
    if (needsGather(p)) {
      zeroc_rt_status_t status = zeroc_rt_comm_all_gather(
          engine.comm, full, gathered.data(), static_cast<size_t>(p.shard),
          p.masterDtype);
      if (status) {
        zeroc_rt_status_free(first);
        *desynced = true;
        return ZEROC_RT_TRAIN_WRAP(
            status, format("%sgathering parameter '%s': ", prefix.c_str(),
                           p.desc->name));
      }
      full = gathered.data();
    }
    if (first)
      continue;
    std::string path = rankDir + "/" + paramFileName(p.desc->name);
    first = ZEROC_RT_TRAIN_WRAP(zeroc_rt_npy_save(path.c_str(), p.masterDtype,
                                                  p.desc->rank, p.desc->dims,
                                                  full),
                                prefix);
  }
  if (!first && engine.rank == 0)
    first = ZEROC_RT_TRAIN_WRAP(writeParamsJson(st, dir), prefix);
  return first;
}

} // namespace zeroc_rt::train
