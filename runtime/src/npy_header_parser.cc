//===- npy_header_parser.cc - Parse the .npy header dictionary --*- C++ -*-===//
//
// The header is a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
// padded with spaces and a newline. This is a small strict recursive-descent
// parser for exactly that subset; the text is untrusted.
//
//===----------------------------------------------------------------------===//

#include "npy_format.h"
#include "status_internal.h"

#include <limits>
#include <string>

namespace zeroc_rt {
namespace {

struct DescrEntry {
  std::string_view typeCode; ///< Descr without the byte-order character.
  zeroc_rt_dtype_t dtype;
};

constexpr DescrEntry kDescrTable[] = {
    {"f4", ZEROC_RT_DTYPE_F32},  {"f8", ZEROC_RT_DTYPE_F64},
    {"f2", ZEROC_RT_DTYPE_F16},  {"i8", ZEROC_RT_DTYPE_I64},
    {"i4", ZEROC_RT_DTYPE_I32},  {"u1", ZEROC_RT_DTYPE_U8},
    {"b1", ZEROC_RT_DTYPE_BOOL},
};

class HeaderDictParser {
public:
  HeaderDictParser(std::string_view text, const char *path)
      : text(text), path(path) {}

  zeroc_rt_status_t parse(NpyArrayInfo &info);

private:
  zeroc_rt_status_t error(const char *what) const {
    return ZEROC_RT_ERROR(ZEROC_RT_FORMAT_ERROR,
                          "'%s': malformed .npy header: %s at offset %zu", path,
                          what, pos);
  }
  bool atEnd() const { return pos >= text.size(); }
  char peek() const { return atEnd() ? '\0' : text[pos]; }
  void skipSpace();
  bool consume(char c);
  zeroc_rt_status_t expect(char c, const char *what);
  zeroc_rt_status_t parseString(std::string_view &value);
  zeroc_rt_status_t parseBool(bool &value);
  zeroc_rt_status_t parseDim(int64_t &value);
  zeroc_rt_status_t parseShape(NpyArrayInfo &info);
  zeroc_rt_status_t parseDescr(NpyArrayInfo &info);
  zeroc_rt_status_t parseFortranOrder();

  std::string_view text;
  const char *path;
  size_t pos = 0;
};

void HeaderDictParser::skipSpace() {
  while (!atEnd() &&
         (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r'))
    ++pos;
}

bool HeaderDictParser::consume(char c) {
  skipSpace();
  if (peek() != c || atEnd())
    return false;
  ++pos;
  return true;
}

zeroc_rt_status_t HeaderDictParser::expect(char c, const char *what) {
  return consume(c) ? nullptr : error(what);
}

zeroc_rt_status_t HeaderDictParser::parseString(std::string_view &value) {
  skipSpace();
  char quote = peek();
  if (quote != '\'' && quote != '"')
    return error("expected a quoted string");
  size_t begin = ++pos;
  while (!atEnd() && peek() != quote) {
    if (peek() == '\\')
      return error("escape sequences are not supported in strings");
    ++pos;
  }
  if (atEnd())
    return error("unterminated string");
  value = text.substr(begin, pos - begin);
  ++pos;
  return nullptr;
}

zeroc_rt_status_t HeaderDictParser::parseBool(bool &value) {
  skipSpace();
  std::string_view rest = text.substr(pos);
  if (rest.substr(0, 4) == "True") {
    value = true;
    pos += 4;
    return nullptr;
  }
  if (rest.substr(0, 5) == "False") {
    value = false;
    pos += 5;
    return nullptr;
  }
  return error("expected True or False");
}

zeroc_rt_status_t HeaderDictParser::parseDim(int64_t &value) {
  skipSpace();
  if (peek() == '-')
    return error("negative dimension in 'shape'");
  if (peek() < '0' || peek() > '9')
    return error("expected a dimension in 'shape'");
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  value = 0;
  while (!atEnd() && peek() >= '0' && peek() <= '9') {
    int digit = peek() - '0';
    if (value > (kMax - digit) / 10)
      return error("dimension in 'shape' overflows int64");
    value = value * 10 + digit;
    ++pos;
  }
  if (peek() == 'L' && !atEnd()) // Python 2 long suffix.
    ++pos;
  return nullptr;
}

zeroc_rt_status_t HeaderDictParser::parseShape(NpyArrayInfo &info) {
  ZEROC_RT_RETURN_IF_ERROR(expect('(', "expected '(' starting 'shape'"));
  info.rank = 0;
  bool sawTrailingComma = false;
  while (!consume(')')) {
    if (info.rank == ZEROC_RT_NPY_MAX_RANK)
      return error("'shape' has more than ZEROC_RT_NPY_MAX_RANK (32) dims");
    ZEROC_RT_RETURN_IF_ERROR(parseDim(info.dims[info.rank++]));
    sawTrailingComma = consume(',');
    if (!sawTrailingComma) {
      ZEROC_RT_RETURN_IF_ERROR(expect(')', "expected ',' or ')' in 'shape'"));
      break;
    }
  }
  if (info.rank == 1 && !sawTrailingComma)
    return error("'shape' of rank 1 must be written '(n,)'");
  return nullptr;
}

zeroc_rt_status_t HeaderDictParser::parseDescr(NpyArrayInfo &info) {
  skipSpace();
  if (peek() != '\'' && peek() != '"')
    return ZEROC_RT_ERROR(ZEROC_RT_FORMAT_ERROR,
                          "'%s': unsupported dtype: 'descr' is not a string "
                          "(structured dtypes are not supported)",
                          path);
  std::string_view descr;
  ZEROC_RT_RETURN_IF_ERROR(parseString(descr));
  std::string descrCopy(descr);
  if (descr.empty())
    return ZEROC_RT_ERROR(ZEROC_RT_FORMAT_ERROR, "'%s': unsupported dtype ''",
                          path);
  char order = descr[0];
  std::string_view typeCode = descr.substr(1);
  const DescrEntry *entry = nullptr;
  if (order == '<' || order == '>' || order == '|' || order == '=')
    for (const DescrEntry &candidate : kDescrTable)
      if (candidate.typeCode == typeCode)
        entry = &candidate;
  if (!entry)
    return ZEROC_RT_ERROR(ZEROC_RT_FORMAT_ERROR,
                          "'%s': unsupported dtype '%s' (supported: f4, f8, "
                          "f2, i8, i4, u1, b1)",
                          path, descrCopy.c_str());
  bool multiByte = zeroc_rt_dtype_size(entry->dtype) > 1;
  if (order == '>' && multiByte)
    return ZEROC_RT_ERROR(ZEROC_RT_FORMAT_ERROR,
                          "'%s': big-endian dtype '%s' is not supported", path,
                          descrCopy.c_str());
  if (order == '|' && multiByte)
    return ZEROC_RT_ERROR(ZEROC_RT_FORMAT_ERROR,
                          "'%s': dtype '%s' lacks a byte order", path,
                          descrCopy.c_str());
  // '=' is native order; the runtime only targets little-endian hosts.
  info.dtype = entry->dtype;
  return nullptr;
}

zeroc_rt_status_t HeaderDictParser::parseFortranOrder() {
  bool fortranOrder = false;
  ZEROC_RT_RETURN_IF_ERROR(parseBool(fortranOrder));
  if (fortranOrder)
    return ZEROC_RT_ERROR(ZEROC_RT_FORMAT_ERROR,
                          "'%s': fortran_order=True is not supported; save "
                          "the array in C order",
                          path);
  return nullptr;
}

zeroc_rt_status_t HeaderDictParser::parse(NpyArrayInfo &info) {
  ZEROC_RT_RETURN_IF_ERROR(expect('{', "expected '{'"));
  bool sawDescr = false, sawFortranOrder = false, sawShape = false;
  while (!consume('}')) {
    std::string_view key;
    ZEROC_RT_RETURN_IF_ERROR(parseString(key));
    ZEROC_RT_RETURN_IF_ERROR(expect(':', "expected ':' after key"));
    bool *seen = nullptr;
    if (key == "descr") {
      seen = &sawDescr;
    } else if (key == "fortran_order") {
      seen = &sawFortranOrder;
    } else if (key == "shape") {
      seen = &sawShape;
    } else {
      return error("unexpected key (expected 'descr', 'fortran_order', "
                   "'shape')");
    }
    if (*seen)
      return error("duplicate key");
    *seen = true;
    if (key == "descr")
      ZEROC_RT_RETURN_IF_ERROR(parseDescr(info));
    else if (key == "fortran_order")
      ZEROC_RT_RETURN_IF_ERROR(parseFortranOrder());
    else
      ZEROC_RT_RETURN_IF_ERROR(parseShape(info));
    if (!consume(',')) {
      ZEROC_RT_RETURN_IF_ERROR(expect('}', "expected ',' or '}'"));
      break;
    }
  }
  skipSpace();
  if (!atEnd())
    return error("unexpected text after the dictionary");
  if (!sawDescr || !sawFortranOrder || !sawShape)
    return error("missing key ('descr', 'fortran_order' and 'shape' are all "
                 "required)");
  return computeNpyByteSize(info.dtype, info.rank, info.dims, path,
                            ZEROC_RT_FORMAT_ERROR, info.nbytes);
}

} // namespace

zeroc_rt_status_t parseNpyHeaderDict(std::string_view text, const char *path,
                                     NpyArrayInfo &info) {
  return HeaderDictParser(text, path).parse(info);
}

} // namespace zeroc_rt
