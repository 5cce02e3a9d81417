//===- HostTensor.h - small host tensors for import-time folding -*- C++ -*-===//
//
// The importer folds the shape arithmetic that exporters emit (Shape, Gather
// on shapes, Concat, Reshape targets, masks built from constants) on the host.
// A HostTensor holds such a value: integers and booleans as int64, floats as
// double, with the ONNX element type it stands for.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_IMPORT_HOSTTENSOR_H
#define ZEROC_LIB_IMPORT_HOSTTENSOR_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace zeroc::onnximport {

/// Row-major strides (in elements) of a tensor with `dims`.
inline std::vector<int64_t> stridesOf(const std::vector<int64_t> &dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * dims[i + 1];
  return s;
}

/// Advances a row-major multi-index over `dims` by one element.
inline void nextIndex(std::vector<int64_t> &idx, const std::vector<int64_t> &dims) {
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    if (++idx[d] < dims[d])
      return;
    idx[d] = 0;
  }
}

/// Thrown inside the importer; caught at the API boundary and turned into the
/// one-line error users see.
struct ImportError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Largest tensor the importer folds on the host (elements).
inline constexpr int64_t kMaxFoldElements = int64_t(1) << 22;
/// Largest tensor the importer accepts at all (elements).
inline constexpr int64_t kMaxTensorElements = int64_t(1) << 32;

/// Product of dims; throws on negative dims or overflow past the import cap.
int64_t checkedNumElements(const std::vector<int64_t> &dims);

struct HostTensor {
  int32_t dtype = 0; // onnx::TensorProto_DataType
  std::vector<int64_t> dims;
  std::vector<int64_t> ints;   // for integer and bool dtypes
  std::vector<double> floats;  // for float dtypes

  bool isFloat() const;
  int64_t numElements() const;
  double getAsDouble(int64_t i) const;
  int64_t getAsInt(int64_t i) const;
  void resize(int64_t n);
  void set(int64_t i, double v);

  /// Builds the MLIR attribute for this value, with `type` as its type.
  mlir::DenseElementsAttr toAttr(mlir::RankedTensorType type) const;
};

bool isFloatDType(int32_t dtype);

/// Wraps an integer to the width of an integer dtype (two's complement), as
/// a cast to that type does.
int64_t narrowInt(int64_t v, int32_t dtype);


/// Elementwise map over inputs broadcast to `outDims` (numpy rules, already
/// checked by the caller); `fn` sees the inputs as doubles.
/// A zeroed host tensor of `dtype` and `dims` to fold into; throws when it
/// has more than kMaxFoldElements elements (such folds stay in the IR).
HostTensor newFoldedTensor(int32_t dtype, std::vector<int64_t> dims);

HostTensor foldElementwise(const std::vector<const HostTensor *> &ins,
                           const std::vector<int64_t> &outDims,
                           int32_t outDtype,
                           const std::function<double(const double *)> &fn);

/// Strided slice with one normalized (start, step) and output size per dim.
HostTensor foldSlice(const HostTensor &in, const std::vector<int64_t> &starts,
                     const std::vector<int64_t> &steps,
                     const std::vector<int64_t> &outDims);

HostTensor foldGather(const HostTensor &data, const HostTensor &indices,
                      int64_t axis);
HostTensor foldConcat(const std::vector<const HostTensor *> &ins, int64_t axis);
HostTensor foldTranspose(const HostTensor &in, const std::vector<int64_t> &perm);
HostTensor foldTrilu(const HostTensor &in, bool upper, int64_t k);

} // namespace zeroc::onnximport

#endif // ZEROC_LIB_IMPORT_HOSTTENSOR_H
