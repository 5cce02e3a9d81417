//===- util.cc - Small helpers of the training engine -----------*- C++ -*-===//

#include "train/train_internal.h"

#include "status_internal.h"
#include "zeroc_rt/checksum.h"
#include "zeroc_rt/contract.h"

#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <pmmintrin.h>
#include <xmmintrin.h>
#endif

namespace zeroc_rt::train {

DenormalModeScope::DenormalModeScope(bool flush) {
#if defined(__x86_64__) || defined(__i386__)
  saved = _mm_getcsr();
  _MM_SET_FLUSH_ZERO_MODE(flush ? _MM_FLUSH_ZERO_ON : _MM_FLUSH_ZERO_OFF);
  _MM_SET_DENORMALS_ZERO_MODE(flush ? _MM_DENORMALS_ZERO_ON : _MM_DENORMALS_ZERO_OFF);
#elif defined(__aarch64__)
  uint64_t fpcr;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
  saved = fpcr;
  const uint64_t fz = uint64_t(1) << 24;
  fpcr = flush ? (fpcr | fz) : (fpcr & ~fz);
  __asm__ __volatile__("msr fpcr, %0" : : "r"(fpcr));
#else
  (void)flush;
#endif
}

DenormalModeScope::~DenormalModeScope() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_setcsr(static_cast<unsigned>(saved));
#elif defined(__aarch64__)
  __asm__ __volatile__("msr fpcr, %0" : : "r"(saved));
#endif
}

zeroc_rt_status_t AlignedBuffer::allocate(size_t bytes, const char *what) {
  size_t rounded = roundUp(bytes == 0 ? 1 : bytes, kAlignment);
  if (rounded < bytes)
    return ZEROC_RT_ERROR(ZEROC_RT_OUT_OF_MEMORY,
                          "out of memory: %s needs %zu bytes", what, bytes);
  // Memory the machine does not have would only be faulted in by the
  // memset below until the kernel kills the process.
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0 &&
      rounded / static_cast<size_t>(page) > static_cast<size_t>(pages))
    return ZEROC_RT_ERROR(ZEROC_RT_OUT_OF_MEMORY,
                          "out of memory: %s needs %zu bytes but this machine "
                          "has %zu bytes of memory",
                          what, bytes,
                          static_cast<size_t>(pages) * static_cast<size_t>(page));
  void *p = std::aligned_alloc(kAlignment, rounded);
  if (!p)
    return ZEROC_RT_ERROR(ZEROC_RT_OUT_OF_MEMORY,
                          "out of memory: %s needs %zu bytes", what, bytes);
  std::memset(p, 0, rounded);
  ptr.reset(p);
  sizeBytes = bytes;
  return nullptr;
}

std::string statusText(zeroc_rt_status_t status) {
  return zeroc_rt_status_text(status);
}

zeroc_rt_status_t wrapStatus(const char *file, int line,
                             zeroc_rt_status_t inner, const std::string &prefix,
                             const std::string &suffix) {
  if (!inner)
    return nullptr;
  zeroc_rt_status_code_t code = zeroc_rt_status_code(inner);
  std::string text = prefix + statusText(inner) + suffix;
  zeroc_rt_status_free(inner);
  return zeroc_rt_status_make(code, file, line, "%s", text.c_str());
}

zeroc_rt_status_t agreeOnFailures(zeroc_rt_comm_t *comm, zeroc_rt_status_t local,
                                  const char *phase, bool *commFailed) {
  const int world = zeroc_rt_comm_size(comm), rank = zeroc_rt_comm_rank(comm);
  int32_t mine = local ? world - rank : 0, worst = 0;
  zeroc_rt_status_t status = zeroc_rt_comm_all_reduce(
      comm, &mine, &worst, 1, ZEROC_RT_DTYPE_I32, ZEROC_RT_REDUCE_MAX);
  if (status) {
    *commFailed = true;
    zeroc_rt_status_free(local);
    return ZEROC_RT_TRAIN_WRAP(status, "agreeing on errors: ");
  }
  if (local || worst == 0)
    return local;
  return ZEROC_RT_ERROR(ZEROC_RT_COMM_ERROR, "rank %d failed %s (see its error)",
                        world - worst, phase);
}

std::string format(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list copy;
  va_copy(copy, args);
  int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::string out;
  if (n > 0) {
    out.resize(static_cast<size_t>(n) + 1);
    std::vsnprintf(out.data(), out.size(), fmt, args);
    out.resize(static_cast<size_t>(n));
  }
  va_end(args);
  return out;
}

std::string shapeString(int32_t rank, const int64_t *dims, bool sampleDim) {
  std::string out = "(";
  for (int32_t i = 0; i < rank; ++i) {
    if (i)
      out += ", ";
    out += (i == 0 && sampleDim) ? std::string("S") : std::to_string(dims[i]);
  }
  if (rank == 1)
    out += ",";
  return out + ")";
}

uint64_t hostHash() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0)
    return 0;
  return zeroc_rt_checksum64(name, std::strlen(name));
}

int envInt(std::initializer_list<const char *> names, int fallback) {
  for (const char *name : names)
    if (const char *v = std::getenv(name); v && *v) {
      char *end = nullptr;
      long n = std::strtol(v, &end, 10);
      if (end && *end == '\0' && n >= 0 && n < (1 << 20))
        return static_cast<int>(n);
    }
  return fallback;
}

int64_t elementCount(int32_t rank, const int64_t *dims) {
  int64_t n = 1;
  for (int32_t i = 0; i < rank; ++i) {
    if (dims[i] < 0)
      return -1;
    if (dims[i] != 0 && n > INT64_MAX / dims[i])
      return -1;
    n *= dims[i];
  }
  return n;
}

namespace {

/// The length of the well-formed UTF-8 sequence at text[i] (no overlong
/// forms, surrogates or code points past U+10FFFF), or 0.
size_t utf8Length(const std::string &text, size_t i) {
  auto byte = [&](size_t k) {
    return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0u;
  };
  auto cont = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xbf) {
    return byte(k) >= lo && byte(k) <= hi;
  };
  const unsigned c = byte(0);
  if (c < 0x80)
    return 1;
  if (c >= 0xc2 && c <= 0xdf)
    return cont(1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    const unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
    return cont(1, lo, hi) && cont(2) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    const unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
    return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

} // namespace

std::string jsonString(const std::string &text) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const size_t n = utf8Length(text, i);
    if (n > 1) { // valid UTF-8 passes through
      out.append(text, i, n);
      i += n;
      continue;
    }
    ++i;
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      // Control characters, and each byte that is not valid UTF-8, as
      // \u00XX (so the file stays valid JSON; see docs/Training.md).
      if (c < 0x20 || n == 0)
        out += format("\\u%04x", c);
      else
        out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string paramFileName(const std::string &name) {
  return zeroc_rt_param_file_name_string(name);
}

std::FILE *openForWriting(const std::string &path) {
  int fd = ::open(path.c_str(),
                  O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0)
    return nullptr;
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
    const int err = errno;
    ::close(fd);
    errno = err;
    return nullptr;
  }
  std::FILE *file = ::fdopen(fd, "w");
  if (!file) {
    const int err = errno;
    ::close(fd);
    errno = err;
  }
  return file;
}

zeroc_rt_status_t makeDirectories(const std::string &path) {
  if (path.empty())
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "empty directory path");
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    std::string prefix = path.substr(0, pos);
    if (prefix.empty())
      continue;
    if (::mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST)
      return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "'%s': cannot create: %s",
                            prefix.c_str(), std::strerror(errno));
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "'%s': not a directory",
                          path.c_str());
  return nullptr;
}

zeroc_rt_status_t executableDirectory(std::string &out) {
  std::string buf(4096, '\0');
  for (;;) {
    ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size());
    if (n < 0)
      return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR,
                            "cannot locate the executable: readlink "
                            "/proc/self/exe: %s",
                            std::strerror(errno));
    if (static_cast<size_t>(n) < buf.size()) {
      buf.resize(static_cast<size_t>(n));
      break;
    }
    buf.resize(buf.size() * 2);
  }
  size_t slash = buf.rfind('/');
  out = slash == std::string::npos ? "." : slash == 0 ? "/" : buf.substr(0, slash);
  return nullptr;
}

} // namespace zeroc_rt::train
