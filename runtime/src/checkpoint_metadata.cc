//===- checkpoint_metadata.cc - checkpoint.json, checked ----------*- C++ -*-===//
//
// See zeroc_rt/checkpoint_metadata.h. checkpoint.json is untrusted: every
// field is type-checked (a wrong type is one error naming the file), sizes
// and counts are bounded, and the rank file names are rebuilt here, never
// taken from the file.
//
//===----------------------------------------------------------------------===//

#include "zeroc_rt/checkpoint_metadata.h"

#include "status_internal.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <sys/stat.h>

namespace zeroc_rt::checkpoint {
namespace {

using Json = nlohmann::json;

/// The most bytes checkpoint.json may have.
constexpr size_t kMaxMetadataBytes = 64u << 20;

std::string fmt(const char *format, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char *format, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, format);
  std::vsnprintf(buf, sizeof buf, format, ap);
  va_end(ap);
  return buf;
}

bool isDirectory(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

zeroc_rt_dtype_t dtypeField(const Json &j, const char *key) {
  zeroc_rt_dtype_t d;
  const std::string name = j.at(key).get<std::string>();
  if (!dtypeFromSafetensors(name, d))
    throw std::runtime_error(fmt("unknown dtype '%.40s'", name.c_str()));
  return d;
}

std::vector<int64_t> shapeField(const Json &j, int64_t numel) {
  std::vector<int64_t> shape;
  int64_t product = 1;
  for (const Json &d : j.at("shape")) {
    int64_t v = d.get<int64_t>();
    if (v < 0 || shape.size() >= 8 || (v != 0 && product > INT64_MAX / v))
      throw std::runtime_error("a shape is negative, too long or overflows");
    product *= v;
    shape.push_back(v);
  }
  if (product != numel)
    throw std::runtime_error("a shape does not match its numel");
  return shape;
}

int64_t nonNegative(const Json &j, const char *key) {
  int64_t v = j.at(key).get<int64_t>();
  if (v < 0)
    throw std::runtime_error(fmt("\"%s\" is negative", key));
  return v;
}

/// Fills `m` from `j`; "" or what is wrong (JSON type errors throw).
std::string parse(const Json &j, Metadata &m) {
  if (!j.is_object() || !j.contains("format") || !j["format"].is_string() ||
      j["format"].get<std::string>() != kFormat)
    return "it is not a zeroc checkpoint (no \"format\": \"zeroc-checkpoint\")";
  const int version = j.at("version").get<int>();
  if (version != kVersion)
    return fmt("it has format version %d; this zeroc reads version %d "
               "(use the zeroc that saved it)",
               version, kVersion);
  m.globalSteps = nonNegative(j, "global_steps");
  m.globalSamples = nonNegative(j, "global_samples");
  m.optimizerSteps = nonNegative(j, "optimizer_steps");
  m.skippedSteps = nonNegative(j, "skipped_steps");
  m.consecutiveSkipped = nonNegative(j, "consecutive_skipped_steps");
  m.world = j.at("world_size").get<int>();
  m.stage = j.at("stage").get<int>();
  m.optimizer = j.at("optimizer").get<std::string>();
  if (m.world < 1 || m.world > (1 << 20))
    return "its world_size is out of range";
  const Json &s = j.at("loss_scaler");
  m.scalerEnabled = s.at("enabled").get<bool>();
  m.curScale = s.at("cur_scale").get<double>();
  m.curHysteresis = s.at("cur_hysteresis").get<int64_t>();
  m.curIter = s.at("cur_iter").get<int64_t>();
  m.lastOverflowIter = s.at("last_overflow_iter").get<int64_t>();
  if (!(m.curScale > 0) || m.curHysteresis < 0 || m.curIter < 0)
    return "its loss scaler state is out of range";
  for (const Json &p : j.at("params")) {
    SavedParam sp;
    sp.name = p.at("name").get<std::string>();
    sp.dtype = dtypeField(p, "dtype");
    sp.masterDtype = dtypeField(p, "master_dtype");
    sp.numel = nonNegative(p, "numel");
    sp.shape = shapeField(p, sp.numel);
    sp.frozen = p.at("frozen").get<bool>();
    sp.paramElements = nonNegative(p, "param_elements");
    sp.paramStride = nonNegative(p, "param_stride");
    sp.updateElements = nonNegative(p, "update_elements");
    sp.updateStride = nonNegative(p, "update_stride");
    if (m.findParam(sp.name))
      return fmt("parameter '%.200s' is listed twice", sp.name.c_str());
    m.params.push_back(std::move(sp));
  }
  for (const Json &b : j.at("buffers")) {
    SavedBuffer sb;
    sb.name = b.at("name").get<std::string>();
    sb.dtype = dtypeField(b, "dtype");
    sb.numel = nonNegative(b, "numel");
    sb.shape = shapeField(b, sb.numel);
    m.buffers.push_back(std::move(sb));
  }
  const Json &files = j.at("files");
  if (!files.is_array() || files.size() != static_cast<size_t>(m.world))
    return "its \"files\" do not list one file per rank";
  for (size_t r = 0; r < files.size(); ++r) {
    const Json &f = files[r];
    if (f.at("rank").get<int64_t>() != static_cast<int64_t>(r) ||
        f.at("file").get<std::string>() != rankFileName(static_cast<int>(r)))
      return fmt("its \"files\"[%zu] is not rank %zu's file", r, r);
    WrittenFile w;
    w.bytes = f.at("bytes").get<uint64_t>();
    const std::string sum = f.at("checksum").get<std::string>();
    char *end = nullptr;
    errno = 0;
    w.checksum = std::strtoull(sum.c_str(), &end, 16);
    if (sum.size() != 16 || errno || *end || w.bytes == 0)
      return fmt("its \"files\"[%zu] has no valid size and checksum", r);
    m.files.push_back(w);
  }
  if (j.contains("aliases") && j["aliases"].is_object())
    for (auto it = j["aliases"].begin(); it != j["aliases"].end(); ++it)
      m.aliases[it.key()] = it.value().get<std::string>();
  return "";
}

} // namespace

std::string rankFileName(int rank) {
  return "rank" + std::to_string(rank) + ".safetensors";
}

std::string tagProblem(const std::string &tag) {
  if (tag.empty())
    return "it is empty";
  if (tag.size() > kMaxTagBytes)
    return fmt("it is longer than %zu bytes", kMaxTagBytes);
  if (tag == "." || tag == "..")
    return "it is '.' or '..'";
  for (unsigned char c : tag)
    if (c == '/' || c < 0x20 || c == 0x7f)
      return "it holds a '/' or a control character";
  return "";
}

const SavedParam *Metadata::findParam(const std::string &name) const {
  for (const SavedParam &p : params)
    if (p.name == name)
      return &p;
  return nullptr;
}

const SavedBuffer *Metadata::findBuffer(const std::string &name) const {
  for (const SavedBuffer &b : buffers)
    if (b.name == name)
      return &b;
  return nullptr;
}

zeroc_rt_status_t readMetadata(const std::string &dir, const std::string &given,
                               const char *what, const char *tagFlag,
                               Metadata &out) {
  return ZEROC_RT_GUARD_EXCEPTIONS([&]() -> zeroc_rt_status_t {
    out = Metadata();
    std::string tag = given;
    if (tag.empty()) {
      std::string text;
      const std::string latest = dir + "/latest";
      if (zeroc_rt_status_t s = readWholeFile(latest, kMaxTagBytes + 2, text)) {
        zeroc_rt_status_free(s);
        return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR,
                              "%s: '%s' is missing or unreadable (no checkpoint "
                              "was completed in '%s'? name one with %s TAG)",
                              what, latest.c_str(), dir.c_str(), tagFlag);
      }
      while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
        text.pop_back();
      tag = text;
    }
    if (std::string why = tagProblem(tag); !why.empty())
      return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                            "%s: '%s': the checkpoint tag is not usable: %s",
                            what, dir.c_str(), why.c_str());
    std::string path = dir + "/" + tag;
    if (!isDirectory(path) && isDirectory(path + ".replaced"))
      path += ".replaced";
    if (!isDirectory(path))
      return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR,
                            "%s: checkpoint '%s' does not exist", what,
                            path.c_str());
    const std::string metaPath = path + "/checkpoint.json";
    std::string text;
    ZEROC_RT_RETURN_IF_ERROR(readWholeFile(metaPath, kMaxMetadataBytes, text));
    std::string problem;
    try {
      problem = parse(Json::parse(text), out);
    } catch (const std::exception &e) {
      problem = fmt("it is not the JSON zeroc writes (%.300s)", e.what());
    }
    if (!problem.empty())
      return ZEROC_RT_ERROR(ZEROC_RT_FORMAT_ERROR, "%s: '%s': %s", what,
                            metaPath.c_str(), problem.c_str());
    out.dir = path;
    out.tag = tag;
    return nullptr;
  }());
}

zeroc_rt_status_t coveringPieces(const Metadata &meta, const std::string &tensor,
                                 int64_t n, int64_t stride, int64_t elements,
                                 int64_t first, int64_t count, int onlyRank,
                                 std::vector<Piece> &out) {
  out.clear();
  int64_t covered = 0;
  for (int r = 0; r < meta.world && covered < count; ++r) {
    if (onlyRank >= 0 ? r != onlyRank : (stride == 0 && r != 0))
      continue;
    Piece p;
    p.rank = r;
    p.pieceFirst = onlyRank >= 0 ? 0 : static_cast<int64_t>(r) * stride;
    p.pieceCount = clippedCount(p.pieceFirst, elements, n);
    p.lo = std::max(first, p.pieceFirst);
    p.hi = std::min(first + count, p.pieceFirst + p.pieceCount);
    if (p.hi <= p.lo)
      continue;
    covered += p.hi - p.lo;
    out.push_back(p);
  }
  if (covered != count)
    return ZEROC_RT_ERROR(ZEROC_RT_FORMAT_ERROR,
                          "checkpoint '%s': the saved pieces of '%s' do not "
                          "cover elements [%lld, %lld)",
                          meta.dir.c_str(), tensor.c_str(),
                          static_cast<long long>(first),
                          static_cast<long long>(first + count));
  return nullptr;
}

RankFiles::RankFiles(const Metadata &meta)
    : meta(meta), readers(static_cast<size_t>(meta.world)) {}

RankFiles::~RankFiles() = default;

zeroc_rt_status_t RankFiles::tensor(int rank, const std::string &name,
                                    zeroc_rt_dtype_t dtype, int64_t count,
                                    const SafetensorsReader *&file,
                                    const TensorInfo *&info) {
  auto &slot = readers.at(static_cast<size_t>(rank));
  if (!slot) {
    auto r = std::make_unique<SafetensorsReader>();
    ZEROC_RT_RETURN_IF_ERROR(r->open(meta.dir + "/" + rankFileName(rank),
                                     &meta.files.at(static_cast<size_t>(rank))));
    slot = std::move(r);
  }
  file = slot.get();
  info = file->find(name);
  if (!info || info->dtype != dtype || info->count != count)
    return ZEROC_RT_ERROR(ZEROC_RT_FORMAT_ERROR,
                          "'%s': tensor '%s' is missing or is not %lld "
                          "elements of %s",
                          file->path().c_str(), name.c_str(),
                          static_cast<long long>(count),
                          zeroc_rt_dtype_name(dtype));
  return nullptr;
}

} // namespace zeroc_rt::checkpoint
