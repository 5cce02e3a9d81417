//===- zeroc_rt/dtype.h - Element types of runtime buffers --------*- C -*-===//
//
// The element types understood by the .npy reader/writer and the
// communicator. The numeric values are part of the ABI: never renumber.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_DTYPE_H
#define ZEROC_RT_DTYPE_H

#include "zeroc_rt/common.h"

#include <stddef.h>

ZEROC_RT_EXTERN_C_BEGIN

typedef ZEROC_RT_ENUM(zeroc_rt_dtype){
    ZEROC_RT_DTYPE_F32 = 0,  ZEROC_RT_DTYPE_F64 = 1, ZEROC_RT_DTYPE_F16 = 2,
    ZEROC_RT_DTYPE_BF16 = 3, ///< No .npy representation; comm only.
    ZEROC_RT_DTYPE_I64 = 4,  ZEROC_RT_DTYPE_I32 = 5, ZEROC_RT_DTYPE_U8 = 6,
    ZEROC_RT_DTYPE_BOOL = 7, ///< One byte per element, 0 or 1 (numpy '|b1').
} zeroc_rt_dtype_t;

/// Number of dtypes; valid values are [0, ZEROC_RT_DTYPE_COUNT).
#define ZEROC_RT_DTYPE_COUNT 8

/// Element size in bytes; 0 for an invalid dtype.
size_t zeroc_rt_dtype_size(zeroc_rt_dtype_t dtype);

/// Short lower-case name ("f32", "bool", ...); "invalid" for an invalid dtype.
const char *zeroc_rt_dtype_name(zeroc_rt_dtype_t dtype);

/// Whether `dtype` is one of the 16-bit floats (f16, bf16): the types whose
/// arithmetic the runtime does in f32 and whose parameters keep an f32
/// master copy.
static inline int zeroc_rt_dtype_is_half(zeroc_rt_dtype_t dtype) {
  return dtype == ZEROC_RT_DTYPE_F16 || dtype == ZEROC_RT_DTYPE_BF16;
}

ZEROC_RT_EXTERN_C_END

#endif // ZEROC_RT_DTYPE_H
