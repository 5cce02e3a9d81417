//===- zeroc_rt/status.h - Error statuses of the C API ------------*- C -*-===//
//
// Every fallible runtime function returns a zeroc_rt_status_t. NULL means
// success; anything else is a heap object owned by the caller, who must
// release it with zeroc_rt_status_free(). The runtime never exits or aborts
// on errors.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_STATUS_H
#define ZEROC_RT_STATUS_H

#include "zeroc_rt/common.h"

#include <stdarg.h>

ZEROC_RT_EXTERN_C_BEGIN

typedef ZEROC_RT_ENUM(zeroc_rt_status_code){
    ZEROC_RT_OK = 0,         ZEROC_RT_INVALID_ARGUMENT,
    ZEROC_RT_IO_ERROR,       ZEROC_RT_FORMAT_ERROR,
    ZEROC_RT_SHAPE_MISMATCH, ZEROC_RT_OUT_OF_MEMORY,
    ZEROC_RT_COMM_ERROR,     ZEROC_RT_NUMERIC_ERROR,
    ZEROC_RT_INTERNAL} zeroc_rt_status_code_t;

/// Opaque error object; NULL means OK.
typedef struct zeroc_rt_status *zeroc_rt_status_t;

/// Returns the code of `status`; ZEROC_RT_OK for NULL.
zeroc_rt_status_code_t zeroc_rt_status_code(zeroc_rt_status_t status);

/// Returns "file:line: message" (file is the basename of the source file that
/// created the status); "OK" for NULL. Valid until the status is freed.
const char *zeroc_rt_status_message(zeroc_rt_status_t status);

/// The message for users: without its "file:line: " prefix, which only an
/// INTERNAL error (a runtime bug worth locating) keeps. Valid until the
/// status is freed.
const char *zeroc_rt_status_text(zeroc_rt_status_t status);

/// Basename of the source file that created the status; "" for NULL.
const char *zeroc_rt_status_file(zeroc_rt_status_t status);

/// Source line that created the status; 0 for NULL.
int zeroc_rt_status_line(zeroc_rt_status_t status);

/// Stable upper-case name of a code, e.g. "IO_ERROR"; "UNKNOWN" if invalid.
const char *zeroc_rt_status_code_name(zeroc_rt_status_code_t code);

/// Releases a status. NULL is accepted.
void zeroc_rt_status_free(zeroc_rt_status_t status);

/// Creates a status with a printf-style message. Returns NULL when `code` is
/// ZEROC_RT_OK. Never fails: if memory is exhausted a shared, static
/// ZEROC_RT_OUT_OF_MEMORY status is returned (freeing it is a no-op).
ZEROC_RT_MUST_USE zeroc_rt_status_t
zeroc_rt_status_make(zeroc_rt_status_code_t code, const char *file, int line,
                     const char *format, ...) ZEROC_RT_PRINTF(4, 5);

/// va_list flavour of zeroc_rt_status_make().
ZEROC_RT_MUST_USE zeroc_rt_status_t
zeroc_rt_status_makev(zeroc_rt_status_code_t code, const char *file, int line,
                      const char *format, va_list args) ZEROC_RT_PRINTF(4, 0);

ZEROC_RT_EXTERN_C_END

#endif // ZEROC_RT_STATUS_H
