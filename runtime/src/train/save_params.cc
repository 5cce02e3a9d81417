//===- save_params.cc - --save-params: the final parameters -----*- C++ -*-===//
//
// Every rank reconstructs the full parameters (stage 3 all-gathers each
// shard; stages 0-2 hold full replicas) and writes DIR/rank<r>/<file>.npy,
// so a test can check that all ranks agree. Rank 0 also writes
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
                   static_cast<long long>(d.numel), numpyDtypeName(d.dtype),
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

  AlignedBuffer gathered;
  if (st.stage == 3) {
    size_t maxBytes = 0;
    for (const ParamState &p : st.params)
      maxBytes = std::max(maxBytes, static_cast<size_t>(p.padded) * p.elemSize);
    zeroc_rt_status_t status = gathered.allocate(maxBytes, "--save-params");
    if (status) {
      zeroc_rt_status_free(first);
      *desynced = true;
      return status;
    }
  }
  for (const ParamState &p : st.params) {
    const void *full = p.replica;
    if (st.stage == 3) {
      zeroc_rt_status_t status =
          zeroc_rt_comm_all_gather(engine.comm, p.shardParam, gathered.data(),
                                   static_cast<size_t>(p.shard), p.dtype);
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
    first = ZEROC_RT_TRAIN_WRAP(zeroc_rt_npy_save(path.c_str(), p.dtype,
                                                  p.desc->rank, p.desc->dims,
                                                  full),
                                prefix);
  }
  if (!first && engine.rank == 0)
    first = ZEROC_RT_TRAIN_WRAP(writeParamsJson(st, dir), prefix);
  return first;
}

} // namespace zeroc_rt::train
