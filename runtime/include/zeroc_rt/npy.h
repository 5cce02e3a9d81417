//===- zeroc_rt/npy.h - NumPy .npy reader and writer --------------*- C -*-===//
//
// Reads .npy files (format versions 1.0, 2.0 and 3.0; little-endian, C order)
// and writes version 1.0 files atomically.
// Input files are treated as untrusted: every length is bounds-checked and the
// header size is capped. Every error message names the offending path.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_NPY_H
#define ZEROC_RT_NPY_H

#include "zeroc_rt/common.h"
#include "zeroc_rt/dtype.h"
#include "zeroc_rt/status.h"

#include <stddef.h>
#include <stdint.h>

ZEROC_RT_EXTERN_C_BEGIN

/// Largest rank accepted by the reader and the writer.
#define ZEROC_RT_NPY_MAX_RANK 32
/// Largest header (the dictionary text after the length field) accepted.
#define ZEROC_RT_NPY_MAX_HEADER_BYTES 65536
/// Alignment of the data buffer of a loaded array.
#define ZEROC_RT_NPY_DATA_ALIGNMENT 64

/// An array loaded from a .npy file; owns its (aligned) data buffer.
typedef struct zeroc_rt_npy zeroc_rt_npy_t;

/// Loads the whole file at `path`. On success `*out` owns a new array that must
/// be released with zeroc_rt_npy_free(); on failure `*out` is set to NULL.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_npy_load(const char *path,
                                                      zeroc_rt_npy_t **out);

/// Loads the file at `path` straight into the caller's buffer `dst` of
/// `dst_bytes` bytes after checking that its dtype and shape are exactly
/// `dtype` and `dims[0..rank)`; returns ZEROC_RT_SHAPE_MISMATCH otherwise.
ZEROC_RT_MUST_USE zeroc_rt_status_t
zeroc_rt_npy_load_into(const char *path, zeroc_rt_dtype_t dtype, int32_t rank,
                       const int64_t *dims, void *dst, size_t dst_bytes);

zeroc_rt_dtype_t zeroc_rt_npy_dtype(const zeroc_rt_npy_t *array);
int32_t zeroc_rt_npy_rank(const zeroc_rt_npy_t *array);
/// Pointer to `rank` dimensions (never NULL, even for rank 0).
const int64_t *zeroc_rt_npy_dims(const zeroc_rt_npy_t *array);
/// Product of the dimensions (1 for rank 0).
int64_t zeroc_rt_npy_num_elements(const zeroc_rt_npy_t *array);
/// Data in C order, aligned to ZEROC_RT_NPY_DATA_ALIGNMENT; never NULL for a
/// loaded array (even an empty one). Accessors tolerate a NULL array.
void *zeroc_rt_npy_data(const zeroc_rt_npy_t *array);
/// Size of the data in bytes (num_elements * dtype size).
size_t zeroc_rt_npy_nbytes(const zeroc_rt_npy_t *array);

/// Releases an array. NULL is accepted.
void zeroc_rt_npy_free(zeroc_rt_npy_t *array);

/// Writes a C-order array to `path` atomically: the bytes go to
/// "<path>.tmp.<pid>", which is fsync'ed and then renamed over `path`.
/// ZEROC_RT_DTYPE_BF16 has no .npy encoding and is rejected.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_npy_save(const char *path,
                                                      zeroc_rt_dtype_t dtype,
                                                      int32_t rank,
                                                      const int64_t *dims,
                                                      const void *data);

ZEROC_RT_EXTERN_C_END

#endif // ZEROC_RT_NPY_H
