//===- ModelBlob.h - model.bin, streamed -------------------------*- C++ -*-===//
//
// model.bin holds the initial parameter values and the constants, each at a
// 64-byte aligned offset. It is as large as the model (6 GB for GPT-2-XL), so
// it is never assembled in memory: small pieces are copied, large ones are
// referenced where they already are (attribute storage, or the weight file
// mapped by the importer, zeroc/Support/MappedFiles.h) and streamed out when
// the file is written. The checksum (zeroc_rt/checksum.h) is computed the
// same way.
//
//===----------------------------------------------------------------------===//
#ifndef ZEROC_EMIT_MODELBLOB_H
#define ZEROC_EMIT_MODELBLOB_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace zeroc {

class ModelBlob {
public:
  /// Zero-pads to a multiple of `alignment`; returns the new size.
  int64_t align(int64_t alignment = 64);
  int64_t size() const { return bytes; }

  /// Appends a copy of `n` bytes.
  void append(const void *data, size_t n);
  /// Appends bytes by reference: they must stay valid and unchanged until
  /// the blob is written.
  void reference(llvm::ArrayRef<char> data);

  /// The checksum zeroc_rt_checksum64 would compute over the whole blob.
  uint64_t checksum() const;
  /// Writes the blob to `fd`; false and `error` on a failed write.
  bool writeTo(int fd, std::string &error) const;

private:
  struct Piece {
    std::string owned;              // copied bytes, or
    llvm::ArrayRef<char> borrowed;  // referenced bytes, or
    int64_t zeros = 0;              // padding
  };
  /// Calls `fn(ptr, n)` over the blob's bytes in order, in chunks of at most
  /// a few MiB, dropping the written pages of mapped weight files.
  template <typename Fn> bool forEachChunk(Fn &&fn) const;

  std::vector<Piece> pieces;
  int64_t bytes = 0;
};

} // namespace zeroc

#endif // ZEROC_EMIT_MODELBLOB_H
