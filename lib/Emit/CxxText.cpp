//===- CxxText.cpp - Text from outside, printed as C++ source -------------===//
#include "zeroc/Emit/CxxText.h"

#include <cmath>
#include <cstdio>

namespace zeroc {

std::string cxxStringLiteral(llvm::StringRef bytes) {
  std::string out = "\"";
  out.reserve(bytes.size() + 2);
  for (unsigned char c : bytes) {
    switch (c) {
    case '"': out += "\\\""; continue;
    case '\\': out += "\\\\"; continue;
    case '?': out += "\\?"; continue;
    case '\n': out += "\\n"; continue;
    case '\t': out += "\\t"; continue;
    case '\r': out += "\\r"; continue;
    default: break;
    }
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
      continue;
    }
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\%03o", static_cast<unsigned>(c));
    out += buf;
  }
  return out + "\"";
}

std::string cxxCommentLine(llvm::StringRef label, llvm::StringRef text) {
  // Only zeroc's own labels (plain ASCII, no backslash) are printed raw.
  std::string line = "// " + label.str();
  return line + cxxStringLiteral(text) + "\n";
}

std::string cxxDouble(double v) {
  if (std::isnan(v))
    return "__builtin_nan(\"\")";
  if (std::isinf(v))
    return v > 0 ? "__builtin_inf()" : "(-__builtin_inf())";
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos)
    s += ".0";
  return s;
}

std::string cxxInt64(int64_t v) {
  if (v == INT64_MIN)
    return "(-9223372036854775807ll - 1)";
  return v < 0 ? "(" + std::to_string(v) + "ll)" : std::to_string(v) + "ll";
}

} // namespace zeroc
