//===- zeroc_rt/zeroc_rt.h - ZeroC runtime C API ------------------*- C -*-===//
//
// Umbrella header of the runtime linked into every executable zeroc emits.
// Usable from C and C++. Conventions:
//  - fallible functions return zeroc_rt_status_t: NULL on success, otherwise
//    an owned error object (see status.h); the runtime never exits/aborts;
//  - objects returned through `T **out` are owned by the caller and released
//    with the matching *_free / *_finalize function; `*out` is NULL on error.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_ZEROC_RT_H
#define ZEROC_RT_ZEROC_RT_H

#include "zeroc_rt/checksum.h"
#include "zeroc_rt/comm.h"
#include "zeroc_rt/contract.h"
#include "zeroc_rt/common.h"
#include "zeroc_rt/dtype.h"
#include "zeroc_rt/gemm.h"
#include "zeroc_rt/kernels.h"
#include "zeroc_rt/npy.h"
#include "zeroc_rt/status.h"

#endif // ZEROC_RT_ZEROC_RT_H
