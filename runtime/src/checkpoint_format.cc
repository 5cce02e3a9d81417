//===- checkpoint_format.cc - safetensors rank files, durably -----*- C++ -*-===//
//
// See zeroc_rt/checkpoint_format.h. Every byte a reader takes from a file is
// untrusted: the header's length, JSON, dtypes, shapes and offsets are
// checked against the file before any tensor is read, and a read outside a
// tensor is an error.
//
//===----------------------------------------------------------------------===//

#include "zeroc_rt/checkpoint_format.h"

#include "kernels/scalar_types.h"
#include "status_internal.h"
#include "zeroc_rt/checksum.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace zeroc_rt::checkpoint {
namespace {

/// safetensors' own limit on the header, which also bounds what a corrupt
/// length field can make the reader allocate.
constexpr uint64_t kMaxHeaderBytes = 100u << 20;
constexpr size_t kChunkBytes = 4u << 20;

struct DtypeName {
  zeroc_rt_dtype_t dtype;
  const char *name;
};
constexpr DtypeName kDtypeNames[] = {
    {ZEROC_RT_DTYPE_F32, "F32"},  {ZEROC_RT_DTYPE_F64, "F64"},
    {ZEROC_RT_DTYPE_F16, "F16"},  {ZEROC_RT_DTYPE_BF16, "BF16"},
    {ZEROC_RT_DTYPE_I64, "I64"},  {ZEROC_RT_DTYPE_I32, "I32"},
    {ZEROC_RT_DTYPE_U8, "U8"},    {ZEROC_RT_DTYPE_BOOL, "BOOL"},
};

/// zeroc_rt_checksum64 over bytes that arrive in pieces of any size.
class StreamingChecksum {
public:
  void update(const void *data, size_t n) {
    const unsigned char *p = static_cast<const unsigned char *>(data);
    total += n;
    if (carryLen) {
      size_t take = std::min(n, sizeof(carry) - carryLen);
      std::memcpy(carry + carryLen, p, take);
      carryLen += take;
      p += take;
      n -= take;
      if (carryLen < sizeof(carry))
        return;
      h = zeroc_rt_checksum_update(h, carry, sizeof(carry));
      carryLen = 0;
    }
    size_t whole = n / 8 * 8;
    h = zeroc_rt_checksum_update(h, p, whole);
    std::memcpy(carry, p + whole, n - whole);
    carryLen = n - whole;
  }
  uint64_t finish() const {
    uint64_t last = zeroc_rt_checksum_update(h, carry, carryLen);
    return (last ^ total) * ZEROC_RT_CHECKSUM_PRIME;
  }
  uint64_t bytes() const { return total; }

private:
  uint64_t h = ZEROC_RT_CHECKSUM_SEED;
  uint64_t total = 0;
  unsigned char carry[8] = {};
  size_t carryLen = 0;
};

std::string tempName(const std::string &path) {
  return path + ".tmp." + std::to_string(static_cast<long>(getpid()));
}

std::string parentDirectory(const std::string &path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  if (slash == 0)
    return "/";
  return path.substr(0, slash);
}

zeroc_rt_status_t writeAll(int fd, const void *data, size_t n,
                           const std::string &path) {
  const char *p = static_cast<const char *>(data);
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "'%s': write failed: %s",
                            path.c_str(),
                            std::strerror(w < 0 ? errno : EIO));
    p += w;
    n -= static_cast<size_t>(w);
  }
  return nullptr;
}

zeroc_rt_status_t readAt(int fd, void *dst, size_t n, uint64_t offset,
                         const std::string &path) {
  char *p = static_cast<char *>(dst);
  while (n > 0) {
    ssize_t r = ::pread(fd, p, n, static_cast<off_t>(offset));
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "'%s': read failed: %s",
                            path.c_str(), std::strerror(errno));
    if (r == 0)
      return ZEROC_RT_ERROR(ZEROC_RT_FORMAT_ERROR,
                            "'%s': truncated (ends before byte %llu)",
                            path.c_str(),
                            static_cast<unsigned long long>(offset));
    p += r;
    n -= static_cast<size_t>(r);
    offset += static_cast<uint64_t>(r);
  }
  return nullptr;
}

/// Opens `path` for reading; not a FIFO or a device (which could block or
/// never end): a regular file only.
zeroc_rt_status_t openRegular(const std::string &path, int &fd,
                              uint64_t &size) {
  fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "'%s': cannot open: %s",
                          path.c_str(), std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fd = -1;
    return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "'%s': not a regular file",
                          path.c_str());
  }
  size = static_cast<uint64_t>(st.st_size);
  return nullptr;
}

/// Writes the file through `fd` (already open on `tmp`).
zeroc_rt_status_t writeBody(int fd, const std::string &tmp,
                            const std::string &header,
                            const std::vector<TensorSource> &tensors,
                            WrittenFile &written) {
  StreamingChecksum sum;
  uint64_t headerLength = header.size();
  unsigned char lengthField[8];
  for (int b = 0; b < 8; ++b)
    lengthField[b] = static_cast<unsigned char>(headerLength >> (8 * b));
  ZEROC_RT_RETURN_IF_ERROR(writeAll(fd, lengthField, 8, tmp));
  sum.update(lengthField, 8);
  ZEROC_RT_RETURN_IF_ERROR(writeAll(fd, header.data(), header.size(), tmp));
  sum.update(header.data(), header.size());
  std::vector<char> chunk;
  for (const TensorSource &t : tensors) {
    size_t bytes = static_cast<size_t>(t.count) * zeroc_rt_dtype_size(t.dtype);
    if (bytes > 0 && chunk.empty())
      chunk.resize(kChunkBytes);
    for (size_t done = 0; done < bytes;) {
      size_t n = std::min(bytes - done, chunk.size());
      ZEROC_RT_RETURN_IF_ERROR(t.read(chunk.data(), done, n));
      ZEROC_RT_RETURN_IF_ERROR(writeAll(fd, chunk.data(), n, tmp));
      sum.update(chunk.data(), n);
      done += n;
    }
  }
  if (::fsync(fd) != 0)
    return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "'%s': fsync failed: %s",
                          tmp.c_str(), std::strerror(errno));
  written.bytes = sum.bytes();
  written.checksum = sum.finish();
  return nullptr;
}

/// Writes `path` through `body` into its temporary name, then renames it.
zeroc_rt_status_t replaceFile(
    const std::string &path,
    const std::function<zeroc_rt_status_t(int fd, const std::string &tmp)>
        &body) {
  std::string tmp = tempName(path);
  int fd = ::open(tmp.c_str(),
                  O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0)
    return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "'%s': cannot create: %s",
                          tmp.c_str(), std::strerror(errno));
  zeroc_rt_status_t status = body(fd, tmp);
  if (::close(fd) != 0 && !status)
    status = ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "'%s': close failed: %s",
                            tmp.c_str(), std::strerror(errno));
  if (!status && ::rename(tmp.c_str(), path.c_str()) != 0)
    status = ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR,
                            "'%s': cannot rename '%s' to it: %s", path.c_str(),
                            tmp.c_str(), std::strerror(errno));
  if (status) {
    ::unlink(tmp.c_str());
    return status;
  }
  return syncDirectory(parentDirectory(path));
}

/// Product of `shape` times `elemSize`, false on a negative dim or overflow.
bool byteCount(const std::vector<int64_t> &shape, size_t elemSize,
               uint64_t &out, int64_t &count) {
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return false;
    if (d != 0 && n > (uint64_t(1) << 62) / static_cast<uint64_t>(d))
      return false;
    n *= static_cast<uint64_t>(d);
  }
  if (n > (uint64_t(1) << 62) / elemSize)
    return false;
  count = static_cast<int64_t>(n);
  out = n * elemSize;
  return true;
}

} // namespace

const char *safetensorsDtype(zeroc_rt_dtype_t dtype) {
  for (const DtypeName &d : kDtypeNames)
    if (d.dtype == dtype)
      return d.name;
  return nullptr;
}

bool dtypeFromSafetensors(const std::string &name, zeroc_rt_dtype_t &out) {
  for (const DtypeName &d : kDtypeNames)
    if (name == d.name) {
      out = d.dtype;
      return true;
    }
  return false;
}

zeroc_rt_status_t syncDirectory(const std::string &dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "'%s': cannot open directory: %s",
                          dir.c_str(), std::strerror(errno));
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  // Some file systems cannot fsync a directory (EINVAL); their renames are
  // as durable as they get.
  if (rc != 0 && err != EINVAL)
    return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "'%s': fsync failed: %s",
                          dir.c_str(), std::strerror(err));
  return nullptr;
}

zeroc_rt_status_t writeFileDurably(const std::string &path,
                                   const std::string &text) {
  return ZEROC_RT_GUARD_EXCEPTIONS(
      replaceFile(path, [&](int fd, const std::string &tmp) -> zeroc_rt_status_t {
        ZEROC_RT_RETURN_IF_ERROR(writeAll(fd, text.data(), text.size(), tmp));
        if (::fsync(fd) != 0)
          return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "'%s': fsync failed: %s",
                                tmp.c_str(), std::strerror(errno));
        return nullptr;
      }));
}

zeroc_rt_status_t writeSafetensors(const std::string &path,
                                   const std::vector<TensorSource> &tensors,
                                   const std::map<std::string, std::string> &metadata,
                                   WrittenFile &written) {
  return ZEROC_RT_GUARD_EXCEPTIONS([&]() -> zeroc_rt_status_t {
    nlohmann::ordered_json header = nlohmann::ordered_json::object();
    uint64_t offset = 0;
    for (const TensorSource &t : tensors) {
      const char *dtype = safetensorsDtype(t.dtype);
      if (!dtype || t.count < 0 || t.name == "__metadata__" ||
          header.contains(t.name))
        return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                              "'%s': cannot write tensor '%s' (dtype %d, %lld "
                              "elements, or a repeated name)",
                              path.c_str(), t.name.c_str(),
                              static_cast<int>(t.dtype),
                              static_cast<long long>(t.count));
      uint64_t bytes = static_cast<uint64_t>(t.count) * zeroc_rt_dtype_size(t.dtype);
      nlohmann::ordered_json shape = nlohmann::ordered_json::array();
      if (t.shape.empty())
        shape.push_back(t.count);
      for (int64_t d : t.shape)
        shape.push_back(d);
      header[t.name] = {{"dtype", dtype},
                        {"shape", shape},
                        {"data_offsets", {offset, offset + bytes}}};
      offset += bytes;
    }
    nlohmann::ordered_json meta = nlohmann::ordered_json::object();
    for (const auto &[key, value] : metadata)
      meta[key] = value;
    header["__metadata__"] = meta;
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' ');
    return replaceFile(path, [&](int fd, const std::string &tmp) {
      return writeBody(fd, tmp, text, tensors, written);
    });
  }());
}

zeroc_rt_status_t readWholeFile(const std::string &path, size_t limit,
                                std::string &out) {
  return ZEROC_RT_GUARD_EXCEPTIONS([&]() -> zeroc_rt_status_t {
    int fd = -1;
    uint64_t size = 0;
    ZEROC_RT_RETURN_IF_ERROR(openRegular(path, fd, size));
    zeroc_rt_status_t status = nullptr;
    if (size > limit)
      status = ZEROC_RT_ERROR(ZEROC_RT_FORMAT_ERROR,
                              "'%s': %llu bytes, more than the %zu expected",
                              path.c_str(), static_cast<unsigned long long>(size),
                              limit);
    else {
      out.assign(static_cast<size_t>(size), '\0');
      status = readAt(fd, out.data(), out.size(), 0, path);
    }
    ::close(fd);
    return status;
  }());
}

zeroc_rt_status_t checksumFile(const std::string &path, WrittenFile &out) {
  return ZEROC_RT_GUARD_EXCEPTIONS([&]() -> zeroc_rt_status_t {
    int fd = -1;
    uint64_t size = 0;
    ZEROC_RT_RETURN_IF_ERROR(openRegular(path, fd, size));
    StreamingChecksum sum;
    std::vector<char> chunk(kChunkBytes);
    zeroc_rt_status_t status = nullptr;
    for (uint64_t done = 0; done < size && !status;) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(size - done, chunk.size()));
      status = readAt(fd, chunk.data(), n, done, path);
      sum.update(chunk.data(), n);
      done += n;
    }
    ::close(fd);
    ZEROC_RT_RETURN_IF_ERROR(status);
    out.bytes = sum.bytes();
    out.checksum = sum.finish();
    return nullptr;
  }());
}

SafetensorsReader::~SafetensorsReader() {
  if (fd >= 0)
    ::close(fd);
}

zeroc_rt_status_t SafetensorsReader::open(const std::string &path,
                                          const WrittenFile *expected) {
  return ZEROC_RT_GUARD_EXCEPTIONS([&]() -> zeroc_rt_status_t {
    filePath = path;
    byName.clear();
    meta.clear();
    if (expected && expected->bytes != 0) {
      WrittenFile actual;
      ZEROC_RT_RETURN_IF_ERROR(checksumFile(path, actual));
      if (actual.bytes != expected->bytes)
        return ZEROC_RT_ERROR(
            ZEROC_RT_FORMAT_ERROR,
            "'%s': has %llu bytes, the checkpoint recorded %llu (truncated or "
            "from another save)",
            path.c_str(), static_cast<unsigned long long>(actual.bytes),
            static_cast<unsigned long long>(expected->bytes));
      if (actual.checksum != expected->checksum)
        return ZEROC_RT_ERROR(
            ZEROC_RT_FORMAT_ERROR,
            "'%s': checksum %016llx, the checkpoint recorded %016llx (the file "
            "is corrupt or from another save)",
            path.c_str(), static_cast<unsigned long long>(actual.checksum),
            static_cast<unsigned long long>(expected->checksum));
    }
    if (fd >= 0)
      ::close(fd);
    uint64_t size = 0;
    ZEROC_RT_RETURN_IF_ERROR(openRegular(path, fd, size));
    if (size < 8)
      return ZEROC_RT_ERROR(ZEROC_RT_FORMAT_ERROR,
                            "'%s': %llu bytes is too short for safetensors",
                            path.c_str(), static_cast<unsigned long long>(size));
    unsigned char lengthField[8];
    ZEROC_RT_RETURN_IF_ERROR(readAt(fd, lengthField, 8, 0, path));
    uint64_t headerLength = 0;
    for (int b = 0; b < 8; ++b)
      headerLength |= static_cast<uint64_t>(lengthField[b]) << (8 * b);
    if (headerLength > kMaxHeaderBytes || headerLength > size - 8)
      return ZEROC_RT_ERROR(ZEROC_RT_FORMAT_ERROR,
                            "'%s': header length %llu exceeds the file or "
                            "safetensors' 100 MB limit",
                            path.c_str(),
                            static_cast<unsigned long long>(headerLength));
    std::string text(static_cast<size_t>(headerLength), '\0');
    ZEROC_RT_RETURN_IF_ERROR(readAt(fd, text.data(), text.size(), 8, path));
    nlohmann::json header = nlohmann::json::parse(text, nullptr, false);
    if (header.is_discarded() || !header.is_object())
      return ZEROC_RT_ERROR(ZEROC_RT_FORMAT_ERROR,
                            "'%s': the header is not a JSON object",
                            path.c_str());
    const uint64_t dataStart = 8 + headerLength;
    const uint64_t dataBytes = size - dataStart;
    std::vector<std::pair<uint64_t, uint64_t>> extents;
    for (auto it = header.begin(); it != header.end(); ++it) {
      const nlohmann::json &v = it.value();
      if (it.key() == "__metadata__") {
        if (!v.is_object())
          return ZEROC_RT_ERROR(ZEROC_RT_FORMAT_ERROR,
                                "'%s': __metadata__ is not an object",
                                path.c_str());
        for (auto m = v.begin(); m != v.end(); ++m) {
          if (!m.value().is_string())
            return ZEROC_RT_ERROR(ZEROC_RT_FORMAT_ERROR,
                                  "'%s': __metadata__ value '%s' is not a string",
                                  path.c_str(), m.key().c_str());
          meta[m.key()] = m.value().get<std::string>();
        }
        continue;
      }
      TensorInfo info;
      auto bad = [&](const char *what) {
        return ZEROC_RT_ERROR(ZEROC_RT_FORMAT_ERROR, "'%s': tensor '%s': %s",
                              path.c_str(), it.key().c_str(), what);
      };
      if (!v.is_object() || !v.contains("dtype") || !v["dtype"].is_string() ||
          !dtypeFromSafetensors(v["dtype"].get<std::string>(), info.dtype))
        return bad("missing or unsupported dtype");
      if (!v.contains("shape") || !v["shape"].is_array() || v["shape"].size() > 8)
        return bad("missing shape");
      for (const nlohmann::json &d : v["shape"]) {
        if (!d.is_number_integer() || d.get<int64_t>() < 0)
          return bad("shape has a negative or non-integer dim");
        info.shape.push_back(d.get<int64_t>());
      }
      const nlohmann::json *offsets =
          v.contains("data_offsets") ? &v["data_offsets"] : nullptr;
      if (!offsets || !offsets->is_array() || offsets->size() != 2 ||
          !(*offsets)[0].is_number_unsigned() || !(*offsets)[1].is_number_unsigned())
        return bad("missing data_offsets");
      uint64_t begin = (*offsets)[0].get<uint64_t>();
      uint64_t end = (*offsets)[1].get<uint64_t>();
      if (begin > end || end > dataBytes)
        return bad("data_offsets outside the file");
      if (!byteCount(info.shape, zeroc_rt_dtype_size(info.dtype), info.bytes,
                     info.count) ||
          info.bytes != end - begin)
        return bad("shape does not match data_offsets");
      info.offset = dataStart + begin;
      extents.push_back({begin, end});
      byName[it.key()] = std::move(info);
    }
    std::sort(extents.begin(), extents.end());
    uint64_t expectedBegin = 0;
    for (const auto &[begin, end] : extents) {
      if (begin != expectedBegin)
        return ZEROC_RT_ERROR(ZEROC_RT_FORMAT_ERROR,
                              "'%s': tensors overlap or leave a gap at byte %llu",
                              path.c_str(),
                              static_cast<unsigned long long>(begin));
      expectedBegin = end;
    }
    if (expectedBegin != dataBytes)
      return ZEROC_RT_ERROR(ZEROC_RT_FORMAT_ERROR,
                            "'%s': %llu bytes after the last tensor",
                            path.c_str(),
                            static_cast<unsigned long long>(dataBytes - expectedBegin));
    return nullptr;
  }());
}

const TensorInfo *SafetensorsReader::find(const std::string &name) const {
  auto it = byName.find(name);
  return it == byName.end() ? nullptr : &it->second;
}

zeroc_rt_status_t SafetensorsReader::read(const TensorInfo &t, int64_t first,
                                          int64_t count, void *dst) const {
  if (fd < 0 || first < 0 || count < 0 || first > t.count ||
      count > t.count - first)
    return ZEROC_RT_ERROR(ZEROC_RT_FORMAT_ERROR,
                          "'%s': elements [%lld, +%lld) are outside a tensor of "
                          "%lld",
                          filePath.c_str(), static_cast<long long>(first),
                          static_cast<long long>(count),
                          static_cast<long long>(t.count));
  size_t elem = zeroc_rt_dtype_size(t.dtype);
  return readAt(fd, dst, static_cast<size_t>(count) * elem,
                t.offset + static_cast<uint64_t>(first) * elem, filePath);
}

zeroc_rt_status_t SafetensorsReader::readAsFloat(const TensorInfo &t,
                                                 int64_t first, int64_t count,
                                                 float *dst) const {
  if (t.dtype == ZEROC_RT_DTYPE_F32)
    return read(t, first, count, dst);
  if (t.dtype != ZEROC_RT_DTYPE_F16 && t.dtype != ZEROC_RT_DTYPE_BF16)
    return ZEROC_RT_ERROR(ZEROC_RT_FORMAT_ERROR,
                          "'%s': a %s tensor does not widen to f32",
                          filePath.c_str(), zeroc_rt_dtype_name(t.dtype));
  // Widened in place, from the end: the 16-bit elements fill the first
  // half of dst, and float i overwrites only 16-bit elements 2i and 2i + 1,
  // already read.
  ZEROC_RT_RETURN_IF_ERROR(read(t, first, count, dst));
  const char *half = reinterpret_cast<const char *>(dst);
  const bool f16 = t.dtype == ZEROC_RT_DTYPE_F16;
  for (int64_t i = count - 1; i >= 0; --i) {
    uint16_t h;
    std::memcpy(&h, half + 2 * i, sizeof h);
    dst[i] = f16 ? kernels::f16BitsToFloat(h) : kernels::bf16BitsToFloat(h);
  }
  return nullptr;
}

} // namespace zeroc_rt::checkpoint
