//===- WriteAll.h - write a buffer to a file descriptor, whole ---*- C++ -*-===//
#ifndef ZEROC_SUPPORT_WRITEALL_H
#define ZEROC_SUPPORT_WRITEALL_H

#include <cerrno>
#include <cstring>
#include <string>
#include <unistd.h>

namespace zeroc {

/// Writes all `n` bytes to `fd` (retrying short writes and EINTR); false and
/// `why` (strerror) on failure.
inline bool writeAll(int fd, const char *p, size_t n, std::string &why) {
  while (n) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      why = std::strerror(w < 0 ? errno : EIO);
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

} // namespace zeroc

#endif // ZEROC_SUPPORT_WRITEALL_H
