//===- npy_load.cc - Read .npy files ----------------------------*- C++ -*-===//
//
// Reads the preamble (magic, version, header length, header dictionary),
// checks the file holds exactly the advertised number of data bytes, then
// reads the data into an aligned buffer (or a caller-provided one).
//
//===----------------------------------------------------------------------===//

#include "npy_format.h"
#include "status_internal.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

struct zeroc_rt_npy {
  zeroc_rt::NpyArrayInfo info;
  void *data = nullptr; ///< From std::aligned_alloc; released with free().

  ~zeroc_rt_npy() { std::free(data); }
};

namespace zeroc_rt {
namespace {

struct FileCloser {
  void operator()(std::FILE *file) const { std::fclose(file); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

/// An open .npy file positioned at its first data byte.
struct OpenedNpy {
  FilePtr file;
  NpyArrayInfo info;
};

uint32_t readLittleEndian(const unsigned char *bytes, size_t count) {
  uint32_t value = 0;
  for (size_t i = count; i-- > 0;)
    value = (value << 8) | bytes[i];
  return value;
}

zeroc_rt_status_t readExactly(std::FILE *file, void *dst, size_t size,
                              const char *path, const char *what) {
  if (size == 0 || std::fread(dst, 1, size, file) == size)
    return nullptr;
  return ZEROC_RT_ERROR(
      ZEROC_RT_IO_ERROR, "'%s': failed to read %s: %s", path, what,
      std::ferror(file) ? std::strerror(errno) : "unexpected end of file");
}

/// Opens `path` for reading, refusing anything but a regular file. O_NONBLOCK
/// keeps a FIFO from blocking the open; it is a no-op for regular files.
zeroc_rt_status_t openRegularFile(const char *path, FilePtr &file,
                                  uint64_t &fileSize) {
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "'%s': cannot open: %s", path,
                          std::strerror(errno));
  struct stat fileStat;
  if (fstat(fd, &fileStat) != 0) {
    int savedErrno = errno;
    close(fd);
    return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "'%s': cannot stat: %s", path,
                          std::strerror(savedErrno));
  }
  if (!S_ISREG(fileStat.st_mode)) {
    close(fd);
    return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "'%s': not a regular file", path);
  }
  file.reset(fdopen(fd, "rb"));
  if (!file) {
    int savedErrno = errno;
    close(fd);
    return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "'%s': cannot open: %s", path,
                          std::strerror(savedErrno));
  }
  fileSize = static_cast<uint64_t>(fileStat.st_size);
  return nullptr;
}

/// Reads and checks magic, version and header length, then the header text.
/// On success the file is positioned at the first data byte.
zeroc_rt_status_t readHeaderText(std::FILE *file, uint64_t fileSize,
                                 const char *path, std::string &header,
                                 uint64_t &dataOffset) {
  unsigned char prefix[kNpyVersionEnd + 4];
  if (fileSize < kNpyVersionEnd)
    return ZEROC_RT_ERROR(ZEROC_RT_FORMAT_ERROR,
                          "'%s': bad magic: file is too short (%llu bytes) to "
                          "be a .npy file",
                          path, static_cast<unsigned long long>(fileSize));
  ZEROC_RT_RETURN_IF_ERROR(
      readExactly(file, prefix, kNpyVersionEnd, path, "the magic string"));
  if (std::memcmp(prefix, kNpyMagic.data(), kNpyMagic.size()) != 0)
    return ZEROC_RT_ERROR(ZEROC_RT_FORMAT_ERROR,
                          "'%s': bad magic: not a .npy file (expected "
                          "\\x93NUMPY)",
                          path);
  unsigned major = prefix[6], minor = prefix[7];
  size_t lengthBytes;
  if (major == 1 && minor == 0)
    lengthBytes = 2;
  else if ((major == 2 || major == 3) && minor == 0)
    lengthBytes = 4;
  else
    return ZEROC_RT_ERROR(ZEROC_RT_FORMAT_ERROR,
                          "'%s': unsupported .npy format version %u.%u "
                          "(supported: 1.0, 2.0, 3.0)",
                          path, major, minor);
  uint64_t preambleSize = kNpyVersionEnd + lengthBytes;
  if (fileSize < preambleSize)
    return ZEROC_RT_ERROR(ZEROC_RT_FORMAT_ERROR,
                          "'%s': truncated: file ends inside the header "
                          "length field",
                          path);
  ZEROC_RT_RETURN_IF_ERROR(readExactly(file, prefix + kNpyVersionEnd,
                                       lengthBytes, path, "the header length"));
  uint32_t headerLength =
      readLittleEndian(prefix + kNpyVersionEnd, lengthBytes);
  if (headerLength > ZEROC_RT_NPY_MAX_HEADER_BYTES)
    return ZEROC_RT_ERROR(ZEROC_RT_FORMAT_ERROR,
                          "'%s': header length %u exceeds the limit of %d "
                          "bytes",
                          path, headerLength, ZEROC_RT_NPY_MAX_HEADER_BYTES);
  dataOffset = preambleSize + headerLength;
  if (fileSize < dataOffset)
    return ZEROC_RT_ERROR(
        ZEROC_RT_FORMAT_ERROR,
        "'%s': truncated: header needs %u bytes but the file ends after %llu",
        path, headerLength,
        static_cast<unsigned long long>(fileSize - preambleSize));
  header.assign(headerLength, '\0');
  return readExactly(file, header.data(), headerLength, path, "the header");
}

/// The bytes after the header must be exactly the array data.
zeroc_rt_status_t checkDataSize(const NpyArrayInfo &info,
                                uint64_t dataAvailable, const char *path) {
  if (dataAvailable == info.nbytes)
    return nullptr;
  std::string shape = formatTypedShape(info.dtype, info.rank, info.dims);
  if (dataAvailable < info.nbytes)
    return ZEROC_RT_ERROR(
        ZEROC_RT_FORMAT_ERROR,
        "'%s': truncated: %s needs %zu data bytes but the file has %llu", path,
        shape.c_str(), info.nbytes,
        static_cast<unsigned long long>(dataAvailable));
  return ZEROC_RT_ERROR(
      ZEROC_RT_FORMAT_ERROR,
      "'%s': %llu unexpected trailing bytes after the data of %s", path,
      static_cast<unsigned long long>(dataAvailable - info.nbytes),
      shape.c_str());
}

zeroc_rt_status_t openNpy(const char *path, OpenedNpy &opened) {
  if (!path)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "path is NULL");
  uint64_t fileSize = 0, dataOffset = 0;
  ZEROC_RT_RETURN_IF_ERROR(openRegularFile(path, opened.file, fileSize));
  std::string header;
  ZEROC_RT_RETURN_IF_ERROR(
      readHeaderText(opened.file.get(), fileSize, path, header, dataOffset));
  ZEROC_RT_RETURN_IF_ERROR(parseNpyHeaderDict(header, path, opened.info));
  return checkDataSize(opened.info, fileSize - dataOffset, path);
}

zeroc_rt_status_t loadNpy(const char *path, zeroc_rt_npy_t **out) {
  OpenedNpy opened;
  ZEROC_RT_RETURN_IF_ERROR(openNpy(path, opened));
  auto array = std::make_unique<zeroc_rt_npy>();
  array->info = opened.info;
  size_t alignment = ZEROC_RT_NPY_DATA_ALIGNMENT;
  size_t allocSize = (opened.info.nbytes / alignment + 1) * alignment;
  array->data = std::aligned_alloc(alignment, allocSize);
  if (!array->data)
    return ZEROC_RT_ERROR(ZEROC_RT_OUT_OF_MEMORY,
                          "'%s': cannot allocate %zu bytes for the data", path,
                          opened.info.nbytes);
  ZEROC_RT_RETURN_IF_ERROR(readExactly(opened.file.get(), array->data,
                                       opened.info.nbytes, path, "the data"));
  *out = array.release();
  return nullptr;
}

bool sameShape(const NpyArrayInfo &info, int32_t rank, const int64_t *dims) {
  if (info.rank != rank)
    return false;
  for (int32_t i = 0; i < rank; ++i)
    if (info.dims[i] != dims[i])
      return false;
  return true;
}

zeroc_rt_status_t loadNpyInto(const char *path, zeroc_rt_dtype_t dtype,
                              int32_t rank, const int64_t *dims, void *dst,
                              size_t dstBytes) {
  if (rank < 0 || rank > ZEROC_RT_NPY_MAX_RANK || (rank > 0 && !dims))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "'%s': invalid expected shape (rank %d, dims %p)",
                          path ? path : "(null)", rank,
                          static_cast<const void *>(dims));
  OpenedNpy opened;
  ZEROC_RT_RETURN_IF_ERROR(openNpy(path, opened));
  const NpyArrayInfo &info = opened.info;
  if (info.dtype != dtype || !sameShape(info, rank, dims))
    return ZEROC_RT_ERROR(
        ZEROC_RT_SHAPE_MISMATCH, "'%s': expected %s but the file holds %s",
        path, formatTypedShape(dtype, rank, dims).c_str(),
        formatTypedShape(info.dtype, info.rank, info.dims).c_str());
  if (info.nbytes > 0 && !dst)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "'%s': destination buffer is NULL", path);
  if (dstBytes < info.nbytes)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "'%s': destination holds %zu bytes but the data "
                          "needs %zu",
                          path, dstBytes, info.nbytes);
  return readExactly(opened.file.get(), dst, info.nbytes, path, "the data");
}

} // namespace
} // namespace zeroc_rt

extern "C" {

zeroc_rt_status_t zeroc_rt_npy_load(const char *path, zeroc_rt_npy_t **out) {
  if (!out)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "'%s': output pointer is NULL",
                          path ? path : "(null)");
  *out = nullptr;
  return ZEROC_RT_GUARD_EXCEPTIONS(zeroc_rt::loadNpy(path, out));
}

zeroc_rt_status_t zeroc_rt_npy_load_into(const char *path,
                                         zeroc_rt_dtype_t dtype, int32_t rank,
                                         const int64_t *dims, void *dst,
                                         size_t dst_bytes) {
  return ZEROC_RT_GUARD_EXCEPTIONS(
      zeroc_rt::loadNpyInto(path, dtype, rank, dims, dst, dst_bytes));
}

zeroc_rt_dtype_t zeroc_rt_npy_dtype(const zeroc_rt_npy_t *array) {
  return array ? array->info.dtype : ZEROC_RT_DTYPE_F32;
}

int32_t zeroc_rt_npy_rank(const zeroc_rt_npy_t *array) {
  return array ? array->info.rank : 0;
}

const int64_t *zeroc_rt_npy_dims(const zeroc_rt_npy_t *array) {
  static const int64_t kNoDims[1] = {0};
  return array ? array->info.dims : kNoDims;
}

int64_t zeroc_rt_npy_num_elements(const zeroc_rt_npy_t *array) {
  if (!array)
    return 0;
  // The loader verified that the byte size fits in int64, so unless some
  // dimension is 0 (checked first) this product cannot overflow.
  for (int32_t i = 0; i < array->info.rank; ++i)
    if (array->info.dims[i] == 0)
      return 0;
  int64_t count = 1;
  for (int32_t i = 0; i < array->info.rank; ++i)
    count *= array->info.dims[i];
  return count;
}

void *zeroc_rt_npy_data(const zeroc_rt_npy_t *array) {
  return array ? array->data : nullptr;
}

size_t zeroc_rt_npy_nbytes(const zeroc_rt_npy_t *array) {
  return array ? array->info.nbytes : 0;
}

void zeroc_rt_npy_free(zeroc_rt_npy_t *array) { delete array; }

} // extern "C"
