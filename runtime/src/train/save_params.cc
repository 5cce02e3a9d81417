//===- save_params.cc - --save-params: the final parameters -----*- C++ -*-===//
//
// Every rank reconstructs the full parameters (stage 3 all-gathers each
// shard; stages 0-2 hold full replicas) and writes DIR/rank<r>/<file>.npy,
// so a test can check that all ranks agree. With mixed precision the saved
// values are the f32 masters, as DeepSpeed's zero_to_fp32 recovers them
// (stage 0 holds the whole master; stages 1-3 all-gather the partitions).
// Frozen parameters are saved too, unchanged (widened to f32 when they are
// 16-bit). Each rank also writes its own model buffers (BatchNormalization's
// running statistics, updated from that rank's micro-batches; rank 0's are
// what DeepSpeed saves) into its folder. Rank 0 also writes
// DIR/params.json in the format of tools/reference/onnx_torch_train.py:
//   {"psi": N, "num_params": K, "params": [
//     {"name": ..., "file": ..., "shape": [...], "numel": n, "dtype": ...},
//   ...], "buffers": [ entries like the parameters' ]}
//
//===----------------------------------------------------------------------===//

#include "train/train_internal.h"

#include "status_internal.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <initializer_list>
#include <map>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <vector>

namespace zeroc_rt::train {
namespace {

const char *numpyDtypeName(zeroc_rt_dtype_t dtype) {
  return dtype == ZEROC_RT_DTYPE_F64 ? "float64" : "float32";
}

/// One params.json entry (no trailing comma or newline).
std::string jsonEntry(const char *name, int32_t rank, const int64_t *dims,
                      int64_t numel, zeroc_rt_dtype_t saved) {
  std::string shape = "[";
  for (int32_t k = 0; k < rank; ++k)
    shape += format("%s%lld", k ? ", " : "", static_cast<long long>(dims[k]));
  shape += "]";
  return format("  {\"name\": %s, \"file\": %s, \"shape\": %s, "
                "\"numel\": %lld, \"dtype\": \"%s\"}",
                jsonString(name).c_str(), jsonString(paramFileName(name)).c_str(),
                shape.c_str(), static_cast<long long>(numel),
                numpyDtypeName(saved));
}

zeroc_rt_status_t writeParamsJson(const ZeroState &st, const std::string &dir) {
  std::string text = format("{\"psi\": %lld, \"num_params\": %zu, \"params\": [\n",
                            static_cast<long long>(st.psi), st.params.size());
  for (size_t i = 0; i < st.params.size(); ++i) {
    const zeroc_rt_param_desc_t &d = *st.params[i].desc;
    text += jsonEntry(d.name, d.rank, d.dims, d.numel, st.params[i].masterDtype) +
            (i + 1 < st.params.size() ? ",\n" : "\n");
  }
  text += "], \"buffers\": [\n";
  for (size_t i = 0; i < st.buffers.size(); ++i) {
    const zeroc_rt_buffer_desc_t &d = *st.buffers[i].desc;
    text += jsonEntry(d.name, d.rank, d.dims, d.numel, d.dtype) +
            (i + 1 < st.buffers.size() ? ",\n" : "\n");
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

/// `text` for an error line: its first 80 bytes, then "..." if longer.
std::string shortened(const std::string &text) {
  return text.size() <= 80 ? text : text.substr(0, 80) + "...";
}

/// The bytes one saved .npy takes: the header (padded to 64 bytes; at most
/// a few hundred for ZEROC_RT_MAX_RANK dims) and the data, in whole blocks.
uint64_t npyBytes(const ParamState &p, uint64_t block) {
  uint64_t bytes = 512 + static_cast<uint64_t>(p.numel) * std::max<size_t>(p.masterElemSize, 4);
  return block ? (bytes + block - 1) / block * block : bytes;
}

/// An error when `path` exists and is not a regular file (a directory
/// there makes the final rename fail, after all the steps).
zeroc_rt_status_t checkTargetFile(const std::string &path) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0 || S_ISREG(info.st_mode))
    return nullptr;
  return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR,
                        "--save-params: '%s' is %s, where the save writes a "
                        "file; remove it or pass another --save-params DIR",
                        path.c_str(),
                        S_ISDIR(info.st_mode) ? "a directory"
                                              : "not a regular file");
}

/// Writes `numel` elements of `dtype` at `data` to the .npy `path`; 16-bit
/// values widened to f32 (through `widened`).
zeroc_rt_status_t saveAsNpy(const std::string &path, zeroc_rt_dtype_t dtype,
                            int32_t rank, const int64_t *dims, int64_t numel,
                            const void *data, AlignedBuffer &widened) {
  if (zeroc_rt_dtype_is_half(dtype)) {
    ZEROC_RT_RETURN_IF_ERROR(
        widened.allocate(static_cast<size_t>(numel) * 4, "--save-params"));
    ZEROC_RT_RETURN_IF_ERROR(zeroc_rt_k_convert(dtype, data, ZEROC_RT_DTYPE_F32,
                                                widened.data(), numel, 1.0));
    dtype = ZEROC_RT_DTYPE_F32;
    data = widened.data();
  }
  return zeroc_rt_npy_save(path.c_str(), dtype, rank, dims, data);
}

} // namespace

zeroc_rt_status_t checkSaveTarget(const ZeroState &st, const std::string &dir,
                                  int rank, SaveSpace &space) {
  const std::string rankDir = dir + "/rank" + std::to_string(rank);
  if (zeroc_rt_status_t status = makeDirectories(rankDir))
    return ZEROC_RT_TRAIN_WRAP(status, "--save-params: ",
                               "; pass a --save-params DIR that can be created");
  // A file can be created there (a read-only file system, permissions).
  const std::string pid = std::to_string(static_cast<long>(getpid()));
  const std::string probe = rankDir + "/.zeroc-save-check." + pid;
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR,
                          "--save-params: cannot create files in '%s': %s; "
                          "pass a writable --save-params DIR",
                          rankDir.c_str(), std::strerror(errno));
  ::close(fd);
  ::unlink(probe.c_str());

  errno = 0;
  long nameMax = ::pathconf(rankDir.c_str(), _PC_NAME_MAX);
  if (nameMax <= 0)
    nameMax = NAME_MAX;
  long pathMax = ::pathconf(rankDir.c_str(), _PC_PATH_MAX);
  if (pathMax <= 0)
    pathMax = PATH_MAX;
  // zeroc_rt_npy_save writes "<file>.tmp.<pid>" and renames it.
  const size_t tmpSuffix = std::string(".tmp.").size() + pid.size();
  // Every file the save writes: the parameters', then the buffers'.
  std::vector<std::pair<const char *, const char *>> saved; // kind, name
  for (const ParamState &p : st.params)
    saved.emplace_back("parameter", p.desc->name);
  for (const BufferState &buf : st.buffers)
    saved.emplace_back("buffer", buf.desc->name);
  for (const auto &[kind, name] : saved) {
    const std::string file = paramFileName(name);
    const size_t longest = file.size() + tmpSuffix;
    if (longest > static_cast<size_t>(nameMax))
      return ZEROC_RT_ERROR(
          ZEROC_RT_INVALID_ARGUMENT,
          "--save-params: %s '%s' would be saved as '%s' (%zu bytes, %zu "
          "while it is written as '<file>.tmp.<pid>'), longer than the %ld "
          "bytes the file system of '%s' allows in a file name; rename the "
          "%s (its ONNX initializer) or save to another file system",
          kind, shortened(name).c_str(), shortened(file).c_str(), file.size(),
          longest, nameMax, rankDir.c_str(), kind);
    if (rankDir.size() + 1 + longest >= static_cast<size_t>(pathMax))
      return ZEROC_RT_ERROR(
          ZEROC_RT_INVALID_ARGUMENT,
          "--save-params: the path of %s '%s' ('%s/%s') would be %zu bytes, "
          "over the file system's limit of %ld; pass a shorter "
          "--save-params DIR",
          kind, shortened(name).c_str(), rankDir.c_str(),
          shortened(file).c_str(), rankDir.size() + 1 + longest, pathMax);
    ZEROC_RT_RETURN_IF_ERROR(checkTargetFile(rankDir + "/" + file));
  }
  if (rank == 0)
    for (const char *name : {"/params.json", "/params.json.tmp"})
      ZEROC_RT_RETURN_IF_ERROR(checkTargetFile(dir + name));

  struct statvfs fs;
  if (::statvfs(rankDir.c_str(), &fs) != 0)
    return nullptr; // no free-space figure: the save itself will tell
  const uint64_t block = fs.f_frsize ? fs.f_frsize : fs.f_bsize;
  uint64_t need = 0;
  for (const ParamState &p : st.params)
    need += npyBytes(p, block);
  for (const BufferState &buf : st.buffers) {
    uint64_t bytes = 512 + static_cast<uint64_t>(buf.desc->numel) * 8;
    need += block ? (bytes + block - 1) / block * block : bytes;
  }
  if (rank == 0) // params.json: a line per parameter
    for (const ParamState &p : st.params)
      need += 2 * paramFileName(p.desc->name).size() + 160;
  const uint64_t avail = static_cast<uint64_t>(fs.f_bavail) * block;
  space.fsKey = static_cast<int64_t>(
      (hostHash() * 1000003u) ^
      static_cast<uint64_t>(fs.f_fsid)) | 1; // never 0
  space.need = static_cast<int64_t>(std::min<uint64_t>(need, INT64_MAX));
  space.avail = static_cast<int64_t>(std::min<uint64_t>(avail, INT64_MAX));
  if (need > avail)
    return ZEROC_RT_ERROR(
        ZEROC_RT_IO_ERROR,
        "--save-params: '%s' has %llu bytes (%.1f MiB) free but saving the "
        "parameters needs %llu bytes (%.1f MiB); free some space or pass "
        "another --save-params DIR",
        rankDir.c_str(), static_cast<unsigned long long>(avail),
        static_cast<double>(avail) / (1 << 20),
        static_cast<unsigned long long>(need),
        static_cast<double>(need) / (1 << 20));
  return nullptr;
}

zeroc_rt_status_t checkSaveSpace(zeroc_rt_comm_t *comm, const SaveSpace &mine,
                                 const std::string &dir, bool *commFailed) {
  *commFailed = false;
  const int world = zeroc_rt_comm_size(comm);
  const int64_t send[3] = {mine.fsKey, mine.need, mine.avail};
  std::vector<int64_t> all(static_cast<size_t>(world) * 3);
  if (zeroc_rt_status_t status = zeroc_rt_comm_all_gather(
          comm, send, all.data(), 3, ZEROC_RT_DTYPE_I64)) {
    *commFailed = true;
    return ZEROC_RT_TRAIN_WRAP(status, "--save-params: checking free space: ");
  }
  // Every rank decides from the same table, so all agree: the ranks of one
  // (host, file system) need the sum of their bytes; the least free space
  // any of them saw is what they share.
  struct Group {
    int64_t need = 0, avail = INT64_MAX, ranks = 0;
  };
  std::map<int64_t, Group> groups;
  for (int r = 0; r < world; ++r) {
    const int64_t key = all[3 * r], need = all[3 * r + 1], avail = all[3 * r + 2];
    if (!key)
      continue;
    Group &g = groups[key];
    g.need = g.need > INT64_MAX - need ? INT64_MAX : g.need + need;
    g.avail = std::min(g.avail, avail);
    ++g.ranks;
  }
  for (const auto &[key, g] : groups)
    if (g.need > g.avail)
      return ZEROC_RT_ERROR(
          ZEROC_RT_IO_ERROR,
          "--save-params: the %lld ranks that save into '%s' on one file "
          "system need %lld bytes (%.1f MiB) together but it has %lld bytes "
          "(%.1f MiB) free; free some space or pass another --save-params DIR",
          static_cast<long long>(g.ranks), dir.c_str(),
          static_cast<long long>(g.need),
          static_cast<double>(g.need) / (1 << 20),
          static_cast<long long>(g.avail),
          static_cast<double>(g.avail) / (1 << 20));
  return nullptr;
}

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
    return p.replica ? p.replica : p.shardParam;
  };
  // The master holds the updated elements, the parameter the kept ones: a
  // rank's part of the padded buffer is gathered.
  auto needsGather = [&](const ParamState &p) {
    return p.hasMaster() ? p.updateCount < p.numel : p.keptCount < p.padded;
  };
  Device &device = *engine.device;
  DeviceBuffer gathered;
  AlignedBuffer widened, onHost;
  size_t maxBytes = 0;
  for (const ParamState &p : st.params)
    if (needsGather(p))
      maxBytes = std::max(maxBytes, static_cast<size_t>(p.padded) * p.masterElemSize);
  // What is written is read on the host: a device's memory is downloaded.
  auto readable = [&](const void *data, size_t bytes, const void **out) {
    *out = data;
    if (device.hostMemory())
      return zeroc_rt_status_t(nullptr);
    ZEROC_RT_RETURN_IF_ERROR(onHost.allocate(bytes, "--save-params"));
    *out = onHost.data();
    return device.download(onHost.data(), data, bytes);
  };
  if (zeroc_rt_status_t status =
          gathered.allocate(device, maxBytes, "--save-params")) {
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
    first = ZEROC_RT_TRAIN_WRAP(
        readable(full, static_cast<size_t>(p.numel) * p.masterElemSize, &full),
        prefix);
    if (first)
      continue;
    // A frozen 16-bit parameter (no f32 master) is saved widened to f32,
    // like the trained ones.
    first = ZEROC_RT_TRAIN_WRAP(saveAsNpy(rankDir + "/" + paramFileName(p.desc->name),
                                          p.masterDtype, p.desc->rank,
                                          p.desc->dims, p.numel, full, widened),
                                prefix);
  }
  for (const BufferState &buf : st.buffers) {
    if (first)
      break;
    const zeroc_rt_buffer_desc_t &d = *buf.desc;
    const void *data = nullptr;
    first = ZEROC_RT_TRAIN_WRAP(
        readable(buf.data,
                 static_cast<size_t>(d.numel) * zeroc_rt_dtype_size(d.dtype),
                 &data),
        prefix);
    if (first)
      break;
    first = ZEROC_RT_TRAIN_WRAP(saveAsNpy(rankDir + "/" + paramFileName(d.name),
                                          d.dtype, d.rank, d.dims, d.numel,
                                          data, widened),
                                prefix);
  }
  if (!first && engine.rank == 0)
    first = ZEROC_RT_TRAIN_WRAP(writeParamsJson(st, dir), prefix);
  return first;
}

} // namespace zeroc_rt::train
