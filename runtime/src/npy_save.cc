//===- npy_save.cc - Write .npy files atomically ----------------*- C++ -*-===//
//
// Writes format 1.0 with the header padded so the data starts on a 64-byte
// boundary, as numpy does. The bytes go to "<path>.tmp.<pid>", are flushed and
// fsync'ed, and the file is renamed over `path`, so readers never observe a
// partially written file.
//
//===----------------------------------------------------------------------===//

#include "npy_format.h"
#include "status_internal.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>

namespace zeroc_rt {
namespace {

constexpr size_t kHeaderAlignment = 64;

/// Magic, version 1.0, length field and the dictionary padded with spaces and
/// a newline so that the data starts on a 64-byte boundary. With ranks capped
/// at ZEROC_RT_NPY_MAX_RANK the header is far below the 65535-byte limit of
/// version 1.0, so version 2.0 is never needed.
std::string buildPreamble(zeroc_rt_dtype_t dtype, int32_t rank,
                          const int64_t *dims) {
  constexpr size_t kLengthFieldBytes = 2;
  std::string dict = formatNpyHeaderDict(dtype, rank, dims);
  size_t unpadded = kNpyVersionEnd + kLengthFieldBytes + dict.size() + 1;
  size_t padded =
      (unpadded + kHeaderAlignment - 1) / kHeaderAlignment * kHeaderAlignment;
  size_t headerLength = padded - kNpyVersionEnd - kLengthFieldBytes;
  std::string preamble(kNpyMagic);
  preamble += '\x01';
  preamble += '\x00';
  preamble += static_cast<char>(headerLength & 0xFF);
  preamble += static_cast<char>((headerLength >> 8) & 0xFF);
  preamble += dict;
  preamble.append(padded - preamble.size() - 1, ' ');
  preamble += '\n';
  return preamble;
}

zeroc_rt_status_t validateSaveArguments(const char *path,
                                        zeroc_rt_dtype_t dtype, int32_t rank,
                                        const int64_t *dims, const void *data,
                                        size_t &nbytes) {
  if (!path || !*path)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "path is NULL or empty");
  if (zeroc_rt_dtype_size(dtype) == 0)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "'%s': invalid dtype value %d", path,
                          static_cast<int>(dtype));
  if (!npyDescrOf(dtype))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "'%s': dtype %s has no .npy encoding", path,
                          zeroc_rt_dtype_name(dtype));
  if (rank < 0 || rank > ZEROC_RT_NPY_MAX_RANK)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "'%s': rank %d is outside [0, %d]", path, rank,
                          ZEROC_RT_NPY_MAX_RANK);
  if (rank > 0 && !dims)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "'%s': dims is NULL for rank %d", path, rank);
  ZEROC_RT_RETURN_IF_ERROR(computeNpyByteSize(
      dtype, rank, dims, path, ZEROC_RT_INVALID_ARGUMENT, nbytes));
  if (nbytes > 0 && !data)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "'%s': data is NULL for %zu bytes", path, nbytes);
  return nullptr;
}

zeroc_rt_status_t writeFile(const std::string &tmpPath, const char *path,
                            const std::string &preamble, const void *data,
                            size_t nbytes) {
  errno = 0;
  std::FILE *file = std::fopen(tmpPath.c_str(), "wb");
  if (!file)
    return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR,
                          "'%s': cannot create temporary file '%s': %s", path,
                          tmpPath.c_str(), std::strerror(errno));
  int firstError = 0;
  auto check = [&](bool ok) {
    if (!ok && firstError == 0)
      firstError = errno ? errno : EIO;
  };
  check(std::fwrite(preamble.data(), 1, preamble.size(), file) ==
        preamble.size());
  if (!firstError && nbytes > 0)
    check(std::fwrite(data, 1, nbytes, file) == nbytes);
  if (!firstError)
    check(std::fflush(file) == 0);
  if (!firstError)
    check(fsync(fileno(file)) == 0);
  check(std::fclose(file) == 0);
  if (!firstError && std::rename(tmpPath.c_str(), path) == 0)
    return nullptr;
  check(false);
  std::remove(tmpPath.c_str());
  return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR,
                        "'%s': writing via temporary file '%s' failed: %s",
                        path, tmpPath.c_str(), std::strerror(firstError));
}

zeroc_rt_status_t saveNpy(const char *path, zeroc_rt_dtype_t dtype,
                          int32_t rank, const int64_t *dims, const void *data) {
  size_t nbytes = 0;
  ZEROC_RT_RETURN_IF_ERROR(
      validateSaveArguments(path, dtype, rank, dims, data, nbytes));
  std::string preamble = buildPreamble(dtype, rank, dims);
  std::string tmpPath =
      std::string(path) + ".tmp." + std::to_string(static_cast<long>(getpid()));
  return writeFile(tmpPath, path, preamble, data, nbytes);
}

} // namespace
} // namespace zeroc_rt

extern "C" zeroc_rt_status_t
zeroc_rt_npy_save(const char *path, zeroc_rt_dtype_t dtype, int32_t rank,
                  const int64_t *dims, const void *data) {
  return ZEROC_RT_GUARD_EXCEPTIONS(
      zeroc_rt::saveNpy(path, dtype, rank, dims, data));
}
