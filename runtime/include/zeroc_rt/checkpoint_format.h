//===- zeroc_rt/checkpoint_format.h - One rank's checkpoint file -*- C++ -*-===//
//
// A zeroc checkpoint (docs/Checkpoints.md) is DIR/<tag>/ with one file per
// rank, rank<r>.safetensors, and checkpoint.json. A rank file is a
// safetensors file (https://huggingface.co/docs/safetensors): an 8-byte
// little-endian header length N, N bytes of JSON
//   {"<tensor>": {"dtype": "F32", "shape": [k], "data_offsets": [b, e]}, ...,
//    "__metadata__": {"format": "zeroc-checkpoint-rank", ...}}
// padded with spaces to a multiple of 8, then the tensors' bytes, packed in
// the header's order. Each tensor is one rank's contiguous piece of a flat
// parameter, optimizer-state or buffer array (which piece is in
// checkpoint.json), so any safetensors reader opens it.
//
// The writer streams the tensors (a device's memory goes through a host
// buffer a chunk at a time) and checksums every byte of the file
// (zeroc_rt/checksum.h); the reader checks the size and checksum that
// checkpoint.json recorded before it believes anything in the file, then
// validates the header against the file (offsets inside the data, packed,
// shapes matching the byte counts). Shared by the trainer (save, load) and
// zeroc's `to-fp32` / `export-onnx`.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_CHECKPOINT_FORMAT_H
#define ZEROC_RT_CHECKPOINT_FORMAT_H

#include "zeroc_rt/dtype.h"
#include "zeroc_rt/status.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace zeroc_rt::checkpoint {

/// safetensors' dtype name ("F32", "BF16", ...); NULL for a dtype it lacks.
const char *safetensorsDtype(zeroc_rt_dtype_t dtype);
/// The inverse; false for a name zeroc does not read.
bool dtypeFromSafetensors(const std::string &name, zeroc_rt_dtype_t &out);

/// One tensor to write: `count` elements of `dtype`, produced by `read`,
/// which fills `bytes` bytes at `dst` with the tensor's bytes starting at
/// byte `offset` (so that device memory can be copied out in chunks).
struct TensorSource {
  std::string name;
  zeroc_rt_dtype_t dtype = ZEROC_RT_DTYPE_F32;
  int64_t count = 0;
  /// Its shape in the header; empty: 1-D of `count`.
  std::vector<int64_t> shape;
  std::function<zeroc_rt_status_t(void *dst, size_t offset, size_t bytes)> read;
};

/// What a written file holds, for checkpoint.json.
struct WrittenFile {
  uint64_t bytes = 0;
  uint64_t checksum = 0;
};

/// Writes `path` as a safetensors file of `tensors` (in order) with
/// `metadata` (string values) in __metadata__: into `path`.tmp.<pid>, then
/// fsync, rename to `path` and fsync of the directory. On an error the
/// temporary file is removed and `path` is untouched.
ZEROC_RT_MUST_USE zeroc_rt_status_t
writeSafetensors(const std::string &path, const std::vector<TensorSource> &tensors,
                 const std::map<std::string, std::string> &metadata,
                 WrittenFile &written);

/// A tensor of an opened file.
struct TensorInfo {
  zeroc_rt_dtype_t dtype = ZEROC_RT_DTYPE_F32;
  std::vector<int64_t> shape;
  int64_t count = 0;
  uint64_t offset = 0; ///< from the start of the file
  uint64_t bytes = 0;
};

class SafetensorsReader {
public:
  SafetensorsReader() = default;
  ~SafetensorsReader();
  SafetensorsReader(const SafetensorsReader &) = delete;
  SafetensorsReader &operator=(const SafetensorsReader &) = delete;

  /// Opens `path`; with `expected` (bytes != 0) checks that the file has
  /// exactly that size and checksum first. Every error names `path`.
  ZEROC_RT_MUST_USE zeroc_rt_status_t open(const std::string &path,
                                           const WrittenFile *expected);
  /// NULL when the file has no tensor `name`.
  const TensorInfo *find(const std::string &name) const;
  const std::map<std::string, TensorInfo> &tensors() const { return byName; }
  const std::map<std::string, std::string> &metadata() const { return meta; }
  /// Elements [first, first + count) of tensor `t` into `dst` (host).
  ZEROC_RT_MUST_USE zeroc_rt_status_t read(const TensorInfo &t, int64_t first,
                                           int64_t count, void *dst) const;
  /// The same elements of an F32, F16 or BF16 tensor as floats (16-bit
  /// ones widened exactly).
  ZEROC_RT_MUST_USE zeroc_rt_status_t readAsFloat(const TensorInfo &t,
                                                  int64_t first, int64_t count,
                                                  float *dst) const;
  const std::string &path() const { return filePath; }

private:
  int fd = -1;
  std::string filePath;
  std::map<std::string, TensorInfo> byName;
  std::map<std::string, std::string> meta;
};

/// The checksum of a whole file (zeroc_rt_checksum64 of its bytes) and its
/// size, read in chunks.
ZEROC_RT_MUST_USE zeroc_rt_status_t checksumFile(const std::string &path,
                                                 WrittenFile &out);

/// Reads the regular file `path` (not a FIFO or a device, which could block
/// or never end) whole into `out`; more than `limit` bytes is an error.
ZEROC_RT_MUST_USE zeroc_rt_status_t readWholeFile(const std::string &path,
                                                  size_t limit, std::string &out);

/// Writes `text` to `path` atomically and durably: `path`.tmp.<pid>, fsync,
/// rename, fsync of the directory.
ZEROC_RT_MUST_USE zeroc_rt_status_t writeFileDurably(const std::string &path,
                                                     const std::string &text);

/// fsync of directory `dir` (after a rename into it).
ZEROC_RT_MUST_USE zeroc_rt_status_t syncDirectory(const std::string &dir);

} // namespace zeroc_rt::checkpoint

#endif // ZEROC_RT_CHECKPOINT_FORMAT_H
