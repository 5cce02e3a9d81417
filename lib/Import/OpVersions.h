//===- OpVersions.h - which ONNX operator versions zeroc accepts -*- C++ -*-===//
//
// ONNX versions each operator separately: a model imports the default domain
// at opset N, and each node's op then has the newest version ("since
// version") that is <= N. zeroc accepts opsets kMinOpset..kMaxOpset; for
// every op it converts, OpVersions.cpp lists the versions in effect in that
// range, and for those newer than Debian's libonnx 1.12 knows (since > 17),
// the arity and attributes zeroc checks itself. docs/Import.md states the
// policy.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_IMPORT_OPVERSIONS_H
#define ZEROC_LIB_IMPORT_OPVERSIONS_H

#include "onnx/onnx_pb.h"

#include <string>
#include <vector>

namespace zeroc::onnximport {

/// The default-domain opsets zeroc imports.
inline constexpr int64_t kMinOpset = 13;
inline constexpr int64_t kMaxOpset = 21;
/// The newest opset Debian's libonnx 1.12 has schemas for: nodes whose op
/// version is at most this are checked by onnx::checker.
inline constexpr int64_t kLibonnxMaxOpset = 17;
/// The ONNX IR versions zeroc reads, and the newest libonnx 1.12 knows.
inline constexpr int64_t kMinIrVersion = 3;
inline constexpr int64_t kMaxIrVersion = 10;
inline constexpr int64_t kLibonnxMaxIrVersion = 8;

/// One attribute of an op version that zeroc checks itself.
struct AttrSpec {
  const char *name;
  onnx::AttributeProto::AttributeType type;
  bool required = false;
};

/// One version of an op: from `since` until the next version.
struct OpVersion {
  int since;
  /// What this version changed (docs/Import.md lists it).
  const char *change;
  /// Only for versions libonnx lacks (since > kLibonnxMaxOpset): the
  /// signature zeroc checks the node against.
  int minInputs = 0, maxInputs = 0, minOutputs = 0, maxOutputs = 0;
  std::vector<AttrSpec> attrs;
};

/// The versions of `opType` in effect at opsets kMinOpset..kMaxOpset, oldest
/// first, or null when the table does not list the op.
const std::vector<OpVersion> *opVersions(const std::string &opType);

/// The version of `opType` in effect at `opset`. Throws ImportError when the
/// op does not exist at that opset or the table does not list it.
const OpVersion &resolveOpVersion(const std::string &opType, int64_t opset);

/// Checks a node whose op version libonnx lacks against the table's
/// signature: input and output counts, attribute names, types and required
/// attributes. Throws ImportError (without the node's name; callers add it).
void checkOwnSignature(const onnx::NodeProto &node, const OpVersion &version);

/// The name of an ONNX element type, including those newer than libonnx
/// 1.12 (FLOAT8E4M3FN, ..., INT4), or "type #N".
std::string onnxTypeName(int32_t dtype);
/// Whether `dtype` is one of ONNX's 8-, 4- or 2-bit float/int types.
bool isSubByteOrFloat8Type(int32_t dtype);

} // namespace zeroc::onnximport

#endif // ZEROC_LIB_IMPORT_OPVERSIONS_H
