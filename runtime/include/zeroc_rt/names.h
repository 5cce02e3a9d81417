//===- zeroc_rt/names.h - File names the trainer derives from names -*- C -*-===//
//
// The trainer saves parameter P as `<P with '/' as '_'>.npy` (`_.npy` and
// `_..npy` for "." and ".."), so two parameters whose names differ only
// there would overwrite each other. zeroc refuses such a model at compile
// time and the runtime refuses such a program, both through this one
// header-only definition.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_NAMES_H
#define ZEROC_RT_NAMES_H

#include <stddef.h>
#include <string.h>

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

#endif // ZEROC_RT_NAMES_H
