//===- npy_format.h - .npy header encoding and decoding ---------*- C++ -*-===//
//
// Internal pieces shared by the .npy reader and writer: the magic string, the
// dtype <-> descr mapping, the header dictionary parser and formatter, and the
// overflow-checked byte size computation.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_SRC_NPY_FORMAT_H
#define ZEROC_RT_SRC_NPY_FORMAT_H

#include "zeroc_rt/npy.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace zeroc_rt {

/// "\x93NUMPY", the first six bytes of every .npy file.
inline constexpr std::string_view kNpyMagic{"\x93NUMPY", 6};
/// Magic + major + minor version bytes.
inline constexpr size_t kNpyVersionEnd = 8;

/// dtype, shape and data size described by a parsed header.
struct NpyArrayInfo {
  zeroc_rt_dtype_t dtype = ZEROC_RT_DTYPE_F32;
  int32_t rank = 0;
  int64_t dims[ZEROC_RT_NPY_MAX_RANK] = {};
  size_t nbytes = 0;
};

/// Returns the little-endian descr string ("<f4", "|b1", ...) of `dtype`, or
/// nullptr when the dtype has no .npy encoding.
const char *npyDescrOf(zeroc_rt_dtype_t dtype);

/// Parses the header dictionary text (everything after the header length
/// field) into `info`, including the data size. `path` is used in messages.
zeroc_rt_status_t parseNpyHeaderDict(std::string_view text, const char *path,
                                     NpyArrayInfo &info);

/// Formats the dictionary numpy writes, e.g.
///   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
/// The dtype must have a descr and the dims must be non-negative.
std::string formatNpyHeaderDict(zeroc_rt_dtype_t dtype, int32_t rank,
                                const int64_t *dims);

/// Computes elements * element size. Negative dims fail with
/// ZEROC_RT_INVALID_ARGUMENT, a size overflowing int64_t with `overflowCode`.
/// `path` is used in messages.
zeroc_rt_status_t computeNpyByteSize(zeroc_rt_dtype_t dtype, int32_t rank,
                                     const int64_t *dims, const char *path,
                                     zeroc_rt_status_code_t overflowCode,
                                     size_t &nbytes);

/// Renders a dtype and shape for messages, e.g. "f32[3,4]" or "i64[]".
std::string formatTypedShape(zeroc_rt_dtype_t dtype, int32_t rank,
                             const int64_t *dims);

} // namespace zeroc_rt

#endif // ZEROC_RT_SRC_NPY_FORMAT_H
