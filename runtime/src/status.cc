//===- status.cc - Error status objects -------------------------*- C++ -*-===//
//
// Implements the zeroc_rt_status_t C API. Creating a status never fails: when
// allocation fails a static out-of-memory status stands in for it.
//
//===----------------------------------------------------------------------===//

#include "zeroc_rt/status.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>

struct zeroc_rt_status {
  zeroc_rt_status_code_t code;
  std::string file; ///< Basename of the creating source file.
  int line;
  std::string message; ///< Already prefixed with "file:line: ".
};

namespace {

zeroc_rt_status outOfMemoryStatus{ZEROC_RT_OUT_OF_MEMORY, "status.cc", 0,
                                  "status.cc:0: out of memory while creating "
                                  "an error status"};

const char *baseName(const char *path) {
  if (!path)
    return "<unknown>";
  const char *slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}

std::string formatMessage(const char *format, va_list args) {
  if (!format)
    return "";
  va_list sizingArgs;
  va_copy(sizingArgs, args);
  int length = std::vsnprintf(nullptr, 0, format, sizingArgs);
  va_end(sizingArgs);
  if (length < 0)
    return std::string("<bad format string: ") + format + ">";
  std::string text(static_cast<size_t>(length) + 1, '\0');
  std::vsnprintf(text.data(), text.size(), format, args);
  text.resize(static_cast<size_t>(length));
  return text;
}

} // namespace

extern "C" {

zeroc_rt_status_code_t zeroc_rt_status_code(zeroc_rt_status_t status) {
  return status ? status->code : ZEROC_RT_OK;
}

const char *zeroc_rt_status_message(zeroc_rt_status_t status) {
  return status ? status->message.c_str() : "OK";
}

const char *zeroc_rt_status_text(zeroc_rt_status_t status) {
  const char *message = zeroc_rt_status_message(status);
  if (!status || status->code == ZEROC_RT_INTERNAL)
    return message;
  const std::string prefix =
      status->file + ":" + std::to_string(status->line) + ": ";
  if (status->message.compare(0, prefix.size(), prefix) == 0)
    return message + prefix.size();
  return message;
}

const char *zeroc_rt_status_file(zeroc_rt_status_t status) {
  return status ? status->file.c_str() : "";
}

int zeroc_rt_status_line(zeroc_rt_status_t status) {
  return status ? status->line : 0;
}

const char *zeroc_rt_status_code_name(zeroc_rt_status_code_t code) {
  switch (code) {
  case ZEROC_RT_OK:
    return "OK";
  case ZEROC_RT_INVALID_ARGUMENT:
    return "INVALID_ARGUMENT";
  case ZEROC_RT_IO_ERROR:
    return "IO_ERROR";
  case ZEROC_RT_FORMAT_ERROR:
    return "FORMAT_ERROR";
  case ZEROC_RT_SHAPE_MISMATCH:
    return "SHAPE_MISMATCH";
  case ZEROC_RT_OUT_OF_MEMORY:
    return "OUT_OF_MEMORY";
  case ZEROC_RT_COMM_ERROR:
    return "COMM_ERROR";
  case ZEROC_RT_NUMERIC_ERROR:
    return "NUMERIC_ERROR";
  case ZEROC_RT_INTERNAL:
    return "INTERNAL";
  }
  return "UNKNOWN";
}

void zeroc_rt_status_free(zeroc_rt_status_t status) {
  if (status != &outOfMemoryStatus)
    delete status;
}

zeroc_rt_status_t zeroc_rt_status_makev(zeroc_rt_status_code_t code,
                                        const char *file, int line,
                                        const char *format, va_list args) {
  if (code == ZEROC_RT_OK)
    return nullptr;
  try {
    const char *shortFile = baseName(file);
    std::string message = std::string(shortFile) + ":" + std::to_string(line) +
                          ": " + formatMessage(format, args);
    return new zeroc_rt_status{code, shortFile, line, std::move(message)};
  } catch (...) {
    return &outOfMemoryStatus;
  }
}

zeroc_rt_status_t zeroc_rt_status_make(zeroc_rt_status_code_t code,
                                       const char *file, int line,
                                       const char *format, ...) {
  va_list args;
  va_start(args, format);
  zeroc_rt_status_t status =
      zeroc_rt_status_makev(code, file, line, format, args);
  va_end(args);
  return status;
}

} // extern "C"
