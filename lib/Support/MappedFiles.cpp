//===- MappedFiles.cpp - read-only mappings of model weight files ---------===//

#include "zeroc/Support/MappedFiles.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace zeroc {
namespace {

struct Mapping {
  const char *data; // the caller's first byte
  size_t size;      // the caller's byte count
};

std::mutex &registryMutex() {
  static std::mutex m;
  return m;
}

std::vector<Mapping> &registry() {
  static std::vector<Mapping> r;
  return r;
}

size_t pageSize() {
  static const size_t p = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return p;
}

} // namespace

llvm::ArrayRef<char> mapFileRange(const std::string &path, uint64_t offset,
                                  uint64_t length, std::string &error) {
  if (length == 0)
    return {};
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    error = path + ": " + std::strerror(errno);
    return {};
  }
  uint64_t start = offset - offset % pageSize();
  size_t span = static_cast<size_t>(length + (offset - start));
  void *base = ::mmap(nullptr, span, PROT_READ, MAP_PRIVATE, fd,
                      static_cast<off_t>(start));
  int savedErrno = errno;
  ::close(fd);
  if (base == MAP_FAILED) {
    error = path + ": cannot map " + std::to_string(length) + " bytes: " +
            std::strerror(savedErrno);
    return {};
  }
  const char *data = static_cast<const char *>(base) + (offset - start);
  std::lock_guard<std::mutex> lock(registryMutex());
  registry().push_back({data, static_cast<size_t>(length)});
  return {data, static_cast<size_t>(length)};
}

bool isMappedRange(const char *p, size_t n) {
  std::lock_guard<std::mutex> lock(registryMutex());
  return std::any_of(registry().begin(), registry().end(), [&](const Mapping &m) {
    return p >= m.data && p + n <= m.data + m.size;
  });
}

void dropMappedPages(const char *p, size_t n) {
  if (!isMappedRange(p, n))
    return;
  uintptr_t begin = reinterpret_cast<uintptr_t>(p);
  uintptr_t end = begin + n;
  uintptr_t first = (begin + pageSize() - 1) / pageSize() * pageSize();
  uintptr_t last = end / pageSize() * pageSize();
  if (last > first)
    ::madvise(reinterpret_cast<void *>(first), last - first, MADV_DONTNEED);
}

} // namespace zeroc
