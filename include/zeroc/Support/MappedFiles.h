//===- MappedFiles.h - read-only mappings of model weight files -*- C++ -*-===//
//
// Weights of real models (GPT-2-XL: 6 GB) live in external-data files. zeroc
// never copies them into memory: the importer maps each tensor's byte range
// read-only, the IR refers to the mapping (a dense_resource blob), and the
// emitter streams it into model.bin, dropping the pages it has written, so
// that the compiler's resident memory stays small whatever the model's size.
// Mappings stay valid until the process ends.
//
//===----------------------------------------------------------------------===//
#ifndef ZEROC_SUPPORT_MAPPEDFILES_H
#define ZEROC_SUPPORT_MAPPEDFILES_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string>

namespace zeroc {

/// Maps `length` bytes of `path` from `offset` read-only. Returns the bytes,
/// or an empty range and sets `error` (one line, naming the file).
llvm::ArrayRef<char> mapFileRange(const std::string &path, uint64_t offset,
                                  uint64_t length, std::string &error);

/// Whether [p, p + n) lies inside one range mapFileRange returned.
bool isMappedRange(const char *p, size_t n);

/// Drops the resident pages that lie wholly inside [p, p + n) of a mapped
/// range; they are read from the file again if touched. A no-op for memory
/// that mapFileRange did not return.
void dropMappedPages(const char *p, size_t n);

} // namespace zeroc

#endif // ZEROC_SUPPORT_MAPPEDFILES_H
