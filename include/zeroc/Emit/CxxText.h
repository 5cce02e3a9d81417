//===- CxxText.h - Text from outside, printed as C++ source -----*- C++ -*-===//
//
// Every string that reaches generated C++ from outside zeroc (file names, the
// command line, ONNX names, config strings) goes through cxxStringLiteral:
// there is no other way to print one. Comments never carry outside text
// raw; they carry it as a string literal.
//
//===----------------------------------------------------------------------===//
#ifndef ZEROC_EMIT_CXXTEXT_H
#define ZEROC_EMIT_CXXTEXT_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace zeroc {

/// `bytes` as a C++ string literal (with its quotes) that reads back to the
/// same bytes. The literal holds printable ASCII only: no newline, no '?'
/// (so no trigraph), no byte the compiler could take for source; quotes,
/// backslashes and every other byte are escaped, the latter as three-digit
/// octal escapes (which never absorb a following digit). A NUL byte is
/// escaped too; a consumer that reads the literal as a C string stops there.
std::string cxxStringLiteral(llvm::StringRef bytes);

/// A `//` comment line (with its newline) that shows `text` as a string
/// literal: the comment ends where the line does, whatever `text` holds.
std::string cxxCommentLine(llvm::StringRef label, llvm::StringRef text);

/// A double as C++ source that reads back to the same value, including NaN
/// and the infinities (as GCC/Clang builtins).
std::string cxxDouble(double v);

/// An int64_t as C++ source of that type and value, INT64_MIN included
/// (whose digits alone do not fit the type).
std::string cxxInt64(int64_t v);

} // namespace zeroc

#endif // ZEROC_EMIT_CXXTEXT_H
