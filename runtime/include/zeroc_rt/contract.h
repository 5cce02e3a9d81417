//===- zeroc_rt/contract.h - What a program must be to run ------*- C -*-===//
//
// Rules the runtime checks in a program's table (validateProgram) that a
// model can break: zeroc checks the same rules at compile time, through
// these header-only definitions, so that such a model gets a compile error
// naming the input or initializer instead of "invalid program (recompile
// it with this runtime)", which recompiling does not fix.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_CONTRACT_H
#define ZEROC_RT_CONTRACT_H

#include "zeroc_rt/dtype.h"
#include "zeroc_rt/kernels.h" // ZEROC_RT_MAX_RANK

#include <stddef.h>
#include <string.h>

/// Whether the engine trains a parameter of `dtype` whose master copy has
/// `master`: f32 and f64 parameters are their own masters, f16 and bf16
/// ones need an f32 master.
static inline int zeroc_rt_param_master_ok(zeroc_rt_dtype_t dtype,
                                           zeroc_rt_dtype_t master) {
  if (dtype == ZEROC_RT_DTYPE_F32 || dtype == ZEROC_RT_DTYPE_F64)
    return master == dtype;
  if (zeroc_rt_dtype_is_half(dtype))
    return master == ZEROC_RT_DTYPE_F32;
  return 0;
}

/// The optimizer step converts a gradient whose dtype is not its master's
/// (a 16-bit accumulator of a 16-bit parameter) into a scratch buffer, at
/// most this many elements at a time; the engine allocates it once, and
/// plan.json counts it (zeroc_rt_optimizer_scratch_bytes).
#define ZEROC_RT_OPTIMIZER_CHUNK_ELEMENTS ((int64_t)1 << 18)

/// The scratch buffer's bytes for the largest such update of `elements`
/// master elements of `master_size` bytes (0 when there is none).
static inline int64_t zeroc_rt_optimizer_scratch_bytes(int64_t elements, int64_t master_size) {
  return (elements < ZEROC_RT_OPTIMIZER_CHUNK_ELEMENTS ? elements
                                                       : ZEROC_RT_OPTIMIZER_CHUNK_ELEMENTS) *
         master_size;
}

/// The trainer saves parameter P as `<P with '/' as '_'>.npy` (`_.npy` and
/// `_..npy` for "." and ".."), so two parameters whose names differ only
/// there would overwrite each other.

/// Writes the save-file name of parameter `name` (NUL-terminated) into
/// `out` when it fits in `capacity` bytes, and returns its length (without
/// the NUL) either way.
static inline size_t zeroc_rt_param_file_name(const char *name, char *out,
                                              size_t capacity) {
  const int dots = strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
  const size_t n = strlen(name);
  const size_t length = (dots ? 1 : 0) + n + 4;
  if (out && capacity > length) {
    size_t k = 0;
    if (dots)
      out[k++] = '_';
    for (size_t i = 0; i < n; ++i)
      out[k++] = name[i] == '/' ? '_' : name[i];
    memcpy(out + k, ".npy", 5);
  }
  return length;
}

#ifdef __cplusplus
#include <string>

/// zeroc_rt_param_file_name as a std::string.
inline std::string zeroc_rt_param_file_name_string(const std::string &name) {
  std::string file(zeroc_rt_param_file_name(name.c_str(), nullptr, 0), '\0');
  zeroc_rt_param_file_name(name.c_str(), &file[0], file.size() + 1);
  return file;
}
#endif

#endif // ZEROC_RT_CONTRACT_H
