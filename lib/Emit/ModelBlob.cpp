//===- ModelBlob.cpp - model.bin, streamed --------------------------------===//

#include "zeroc/Emit/ModelBlob.h"

#include "zeroc/Support/MappedFiles.h"
#include "zeroc/Support/WriteAll.h"
#include "zeroc_rt/checksum.h"

#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace zeroc {
namespace {

constexpr size_t kChunk = size_t(8) << 20;   // streamed 8 MiB at a time
constexpr size_t kCopyLimit = size_t(4) << 10; // smaller pieces are copied

} // namespace

int64_t ModelBlob::align(int64_t alignment) {
  int64_t pad = (alignment - bytes % alignment) % alignment;
  if (pad) {
    if (!pieces.empty() && pieces.back().borrowed.empty() &&
        !pieces.back().zeros)
      pieces.back().owned.append(static_cast<size_t>(pad), '\0');
    else
      pieces.push_back({std::string(), {}, pad});
    bytes += pad;
  }
  return bytes;
}

void ModelBlob::append(const void *data, size_t n) {
  if (!n)
    return;
  if (pieces.empty() || !pieces.back().borrowed.empty() || pieces.back().zeros)
    pieces.push_back({});
  pieces.back().owned.append(static_cast<const char *>(data), n);
  bytes += static_cast<int64_t>(n);
}

void ModelBlob::reference(llvm::ArrayRef<char> data) {
  if (data.size() < kCopyLimit) {
    append(data.data(), data.size());
    return;
  }
  pieces.push_back({std::string(), data, 0});
  bytes += static_cast<int64_t>(data.size());
}

template <typename Fn> bool ModelBlob::forEachChunk(Fn &&fn) const {
  static const std::string zeros(kChunk, '\0');
  for (const Piece &p : pieces) {
    if (p.zeros) {
      for (int64_t left = p.zeros; left > 0;) {
        size_t n = std::min<int64_t>(left, kChunk);
        if (!fn(zeros.data(), n))
          return false;
        left -= static_cast<int64_t>(n);
      }
    } else if (!p.borrowed.empty()) {
      for (size_t at = 0; at < p.borrowed.size(); at += kChunk) {
        size_t n = std::min(kChunk, p.borrowed.size() - at);
        if (!fn(p.borrowed.data() + at, n))
          return false;
        dropMappedPages(p.borrowed.data() + at, n);
      }
    } else if (!fn(p.owned.data(), p.owned.size())) {
      return false;
    }
  }
  return true;
}

uint64_t ModelBlob::checksum() const {
  // zeroc_rt_checksum_update takes 8-byte words: carry a partial word
  // across chunk boundaries.
  uint64_t h = ZEROC_RT_CHECKSUM_SEED;
  unsigned char carry[8];
  size_t carried = 0;
  forEachChunk([&](const char *p, size_t n) {
    const char *end = p + n;
    while (carried && p < end) {
      carry[carried++] = static_cast<unsigned char>(*p++);
      if (carried == 8) {
        h = zeroc_rt_checksum_update(h, carry, 8);
        carried = 0;
      }
    }
    size_t whole = static_cast<size_t>(end - p) / 8 * 8;
    h = zeroc_rt_checksum_update(h, p, whole);
    p += whole;
    while (p < end)
      carry[carried++] = static_cast<unsigned char>(*p++);
    return true;
  });
  h = zeroc_rt_checksum_update(h, carry, carried);
  return (h ^ static_cast<uint64_t>(bytes)) * ZEROC_RT_CHECKSUM_PRIME;
}

bool ModelBlob::writeTo(int fd, std::string &error) const {
  return forEachChunk(
      [&](const char *p, size_t n) { return writeAll(fd, p, n, error); });
}

} // namespace zeroc
