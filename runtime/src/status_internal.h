//===- status_internal.h - Helpers for creating statuses --------*- C++ -*-===//
//
// Internal to the runtime library: macros that stamp statuses with the
// creating __FILE__/__LINE__, early-return propagation, and a guard that turns
// C++ exceptions into statuses before they can cross the C ABI.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_SRC_STATUS_INTERNAL_H
#define ZEROC_RT_SRC_STATUS_INTERNAL_H

#include "zeroc_rt/status.h"

#include <exception>
#include <new>

/// Creates a status of `code` with a printf-style message, e.g.
///   return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "cannot open '%s'", path);
#define ZEROC_RT_ERROR(code, ...)                                              \
  zeroc_rt_status_make((code), __FILE__, __LINE__, __VA_ARGS__)

/// Evaluates `expr` (a zeroc_rt_status_t) and returns it if it is an error.
#define ZEROC_RT_RETURN_IF_ERROR(expr)                                         \
  do {                                                                         \
    zeroc_rt_status_t zeroc_rt_status_tmp_ = (expr);                           \
    if (zeroc_rt_status_tmp_)                                                  \
      return zeroc_rt_status_tmp_;                                             \
  } while (0)

/// Evaluates the status expression and converts any escaping C++ exception
/// into a status, so C ABI entry points never throw, e.g.
///   return ZEROC_RT_GUARD_EXCEPTIONS(zeroc_rt::loadNpy(path, out));
#define ZEROC_RT_GUARD_EXCEPTIONS(...)                                         \
  ::zeroc_rt::detail::guardExceptions(                                         \
      __FILE__, __LINE__, [&]() -> zeroc_rt_status_t { return __VA_ARGS__; })

namespace zeroc_rt::detail {

template <typename Fn>
zeroc_rt_status_t guardExceptions(const char *file, int line, Fn &&fn) {
  try {
    return fn();
  } catch (const std::bad_alloc &) {
    return zeroc_rt_status_make(ZEROC_RT_OUT_OF_MEMORY, file, line,
                                "out of memory");
  } catch (const std::exception &e) {
    return zeroc_rt_status_make(ZEROC_RT_INTERNAL, file, line,
                                "unexpected exception: %s", e.what());
  } catch (...) {
    return zeroc_rt_status_make(ZEROC_RT_INTERNAL, file, line,
                                "unexpected non-standard exception");
  }
}

} // namespace zeroc_rt::detail

#endif // ZEROC_RT_SRC_STATUS_INTERNAL_H
