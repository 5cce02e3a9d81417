//===- zeroc_rt/common.h - Shared macros of the C API -------------*- C -*-===//
//
// Linkage and attribute macros used by every public runtime header.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_COMMON_H
#define ZEROC_RT_COMMON_H

#ifdef __cplusplus
#define ZEROC_RT_EXTERN_C_BEGIN extern "C" {
#define ZEROC_RT_EXTERN_C_END }
#else
#define ZEROC_RT_EXTERN_C_BEGIN
#define ZEROC_RT_EXTERN_C_END
#endif

/// Declares an ABI enum. C++ gets a fixed `int` underlying type so that any
/// int a C caller passes is a valid value (range-checked by the runtime)
/// rather than undefined behavior; C enums are int-sized already.
#ifdef __cplusplus
#define ZEROC_RT_ENUM(name) enum name : int
#else
#define ZEROC_RT_ENUM(name) enum name
#endif

#if defined(__GNUC__) || defined(__clang__)
/// Marks functions whose returned status must not be silently dropped.
#define ZEROC_RT_MUST_USE __attribute__((warn_unused_result))
/// printf-style format checking; FMT and ARGS are 1-based parameter indices.
#define ZEROC_RT_PRINTF(FMT, ARGS) __attribute__((format(printf, FMT, ARGS)))
#else
#define ZEROC_RT_MUST_USE
#define ZEROC_RT_PRINTF(FMT, ARGS)
#endif

#endif // ZEROC_RT_COMMON_H
