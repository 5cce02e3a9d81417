//===- kernels_test_util.h - Helpers for the kernel tests -------*- C++ -*-===//
//
// Owning host tensors with zeroc_rt_tensor_t descriptors, random fills, index
// helpers for naive reference loops, and a central finite-difference checker
// of <w, f(x)>.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_TESTS_KERNELS_TEST_UTIL_H
#define ZEROC_RT_TESTS_KERNELS_TEST_UTIL_H

#include "test_support.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace zeroc_rt::test {

using Dims = std::vector<int64_t>;

template <typename T> constexpr zeroc_rt_dtype_t dtypeOf() {
  if constexpr (std::is_same_v<T, float>)
    return ZEROC_RT_DTYPE_F32;
  else if constexpr (std::is_same_v<T, double>)
    return ZEROC_RT_DTYPE_F64;
  else if constexpr (std::is_same_v<T, int64_t>)
    return ZEROC_RT_DTYPE_I64;
  else if constexpr (std::is_same_v<T, int32_t>)
    return ZEROC_RT_DTYPE_I32;
  else
    return ZEROC_RT_DTYPE_U8;
}

/// Relative tolerance of F32/F64 kernels against double references.
template <typename T> constexpr double tolOf() {
  return std::is_same_v<T, float> ? 2e-5 : 1e-12;
}

/// The float element types of typed tests, named F32 / F64.
using FloatTypes = ::testing::Types<float, double>;
struct FloatTypeNames {
  template <typename T> static std::string GetName(int) {
    return std::is_same_v<T, float> ? "F32" : "F64";
  }
};

int64_t numel(const Dims &dims);
std::string dimsName(const Dims &dims);

/// A dense row-major tensor owning its (8-byte aligned) storage.
class HostTensor {
public:
  HostTensor() : HostTensor(ZEROC_RT_DTYPE_F32, {}) {}
  HostTensor(zeroc_rt_dtype_t dtype, Dims dims);

  /// Descriptor pointing at the storage (NULL data when empty).
  const zeroc_rt_tensor_t *desc() {
    d.data = bytes() ? storage.data() : nullptr;
    return &d;
  }
  zeroc_rt_tensor_t &raw() { return d; } // for tests that corrupt it

  const Dims &dims() const { return shape; }
  zeroc_rt_dtype_t dtype() const { return d.dtype; }
  int64_t size() const { return numel(shape); }
  size_t bytes() const {
    return static_cast<size_t>(size()) * zeroc_rt_dtype_size(d.dtype);
  }
  void *data() { return storage.data(); }
  template <typename T> T *as() { return reinterpret_cast<T *>(storage.data()); }
  template <typename T> const T *as() const {
    return reinterpret_cast<const T *>(storage.data());
  }

  /// Element i as double (every dtype; f16/bf16 decode exactly, and set
  /// rounds to nearest even).
  double get(int64_t i) const;
  void set(int64_t i, double value);
  std::vector<double> values() const;
  void setValues(const std::vector<double> &values);
  void fill(double value);

private:
  zeroc_rt_tensor_t d{};
  Dims shape;
  std::vector<uint64_t> storage;
};

/// Uniform values in [lo, hi) (integers for integer dtypes: [lo, hi]).
HostTensor randomTensor(zeroc_rt_dtype_t dtype, const Dims &dims,
                        std::mt19937_64 &rng, double lo = -1.0,
                        double hi = 1.0);
/// Like randomTensor but |x| in [lo, hi) with a random sign.
HostTensor randomAwayFromZero(zeroc_rt_dtype_t dtype, const Dims &dims,
                              std::mt19937_64 &rng, double lo, double hi);
std::vector<double> randomVector(size_t n, std::mt19937_64 &rng,
                                 double lo = -1.0, double hi = 1.0);

/// Multi-index of a linear row-major index and back.
Dims unravel(int64_t linear, const Dims &dims);
int64_t ravel(const Dims &index, const Dims &dims);
/// Linear index into `inDims` of the element that numpy broadcasting maps
/// to multi-index `outIndex` of the (larger) broadcast shape.
int64_t broadcastSource(const Dims &outIndex, const Dims &inDims);
/// numpy broadcast of two shapes (assumes compatibility).
Dims broadcastDims(const Dims &a, const Dims &b);

/// EXPECT that every element of `got` is within tol * (1 + |want|).
void expectClose(const HostTensor &got, const std::vector<double> &want,
                 double tol, const std::string &what);

/// Central finite differences of L(x) = <w, f(x)> against `analytic`
/// (dL/dx): |numeric - analytic| <= tol * max(1, |analytic|) per element.
void expectGradient(const std::function<std::vector<double>(
                        const std::vector<double> &)> &f,
                    const std::vector<double> &x, const std::vector<double> &w,
                    const std::vector<double> &analytic,
                    const std::string &what, double eps = 1e-6,
                    double tol = 1e-6);

} // namespace zeroc_rt::test

/// Expects `expr` to fail with `code` and a message that starts (after the
/// "file:line: " stamp) with "<kernel>:" and contains `needle`.
#define EXPECT_KERNEL_ERROR(expr, code, kernel, needle)                        \
  do {                                                                         \
    ::zeroc_rt::test::StatusPtr kernelErr_(expr);                              \
    std::string kernelMsg_ = zeroc_rt_status_message(kernelErr_.get());        \
    EXPECT_EQ(zeroc_rt_status_code(kernelErr_.get()), (code)) << kernelMsg_;   \
    EXPECT_NE(kernelMsg_.find(std::string(": ") + (kernel) + ": "),            \
              std::string::npos)                                               \
        << "message '" << kernelMsg_ << "' does not name " << (kernel);        \
    EXPECT_NE(kernelMsg_.find(needle), std::string::npos)                      \
        << "message '" << kernelMsg_ << "' lacks '" << (needle) << "'";        \
  } while (0)

#endif // ZEROC_RT_TESTS_KERNELS_TEST_UTIL_H
