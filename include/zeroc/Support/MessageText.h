//===- MessageText.h - Outside text shown in one error line -----*- C++ -*-===//
//
// Names, paths and values from a model or config appear in errors and
// warnings through messageText: control characters, line separators and
// bytes that are not UTF-8 are escaped (\n, \xHH, \uHHHH), so one error
// stays one line and a name cannot drive the terminal. Header-only: the
// importer and the driver share it.
//
//===----------------------------------------------------------------------===//
#ifndef ZEROC_SUPPORT_MESSAGETEXT_H
#define ZEROC_SUPPORT_MESSAGETEXT_H

#include <cstddef>
#include <string>

namespace zeroc {
namespace message_text_detail {

/// The length of the UTF-8 sequence at s[i], or 0 when it is not one
/// (RFC 3629: no overlong forms, surrogates or code points past U+10FFFF).
inline size_t utf8Length(const std::string &s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3
                        : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size())
    return 0;
  for (size_t k = 1; k < n; ++k)
    if ((byte(i + k) & 0xC0) != 0x80)
      return 0;
  unsigned char c1 = n > 1 ? byte(i + 1) : 0;
  if ((n == 2 && c < 0xC2) || (n == 3 && c == 0xE0 && c1 < 0xA0) ||
      (n == 3 && c == 0xED && c1 >= 0xA0) ||
      (n == 4 && c == 0xF0 && c1 < 0x90) || (n == 4 && c > 0xF4) ||
      (n == 4 && c == 0xF4 && c1 >= 0x90))
    return 0;
  return n;
}

/// Appends s[i]'s character (or byte) to `out`, escaped; returns how many
/// bytes of `s` it took.
inline size_t appendEscaped(const std::string &s, size_t i, std::string &out) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  if (c == '\n' || c == '\t' || c == '\r') {
    out += c == '\n' ? "\\n" : c == '\t' ? "\\t" : "\\r";
    return 1;
  }
  static const char hex[] = "0123456789abcdef";
  size_t n = utf8Length(s, i);
  if (n == 0 || c < 0x20 || c == 0x7F) {
    out += "\\x";
    out += hex[c >> 4];
    out += hex[c & 0xF];
    return 1;
  }
  // C1 controls and the line/paragraph separators end a line for some
  // readers (Python's splitlines): \u0085, \u2028.
  unsigned c1 = n > 1 ? static_cast<unsigned char>(s[i + 1]) : 0;
  unsigned c2 = n > 2 ? static_cast<unsigned char>(s[i + 2]) : 0;
  unsigned cp = n == 2 ? ((c & 0x1Fu) << 6) | (c1 & 0x3Fu)
                : n == 3 ? ((c & 0x0Fu) << 12) | ((c1 & 0x3Fu) << 6) | (c2 & 0x3Fu)
                         : 0;
  if ((cp >= 0x80 && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029) {
    out += "\\u";
    for (int shift = 12; shift >= 0; shift -= 4)
      out += hex[(cp >> shift) & 0xF];
    return n;
  }
  out.append(s, i, n);
  return n;
}

} // namespace message_text_detail

/// `s` escaped for an error line, cut after `limit` bytes of `s` with
/// "...(N bytes)".
inline std::string messageText(const std::string &s, size_t limit) {
  std::string out;
  size_t i = 0;
  while (i < s.size() && i < limit)
    i += message_text_detail::appendEscaped(s, i, out);
  if (i < s.size())
    out += "...(" + std::to_string(s.size()) + " bytes)";
  return out;
}


} // namespace zeroc

#endif // ZEROC_SUPPORT_MESSAGETEXT_H
