//===- kernels_test_util.cc - Helpers for the kernel tests ------*- C++ -*-===//

#include "kernels_test_util.h"

#include "kernels/scalar_types.h" // reference f16/bf16 conversions

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace zeroc_rt::test {

int64_t numel(const Dims &dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

std::string dimsName(const Dims &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

HostTensor::HostTensor(zeroc_rt_dtype_t dtype, Dims dims)
    : shape(std::move(dims)) {
  if (shape.size() > ZEROC_RT_MAX_RANK)
    throw std::invalid_argument("HostTensor: rank > 8");
  d.dtype = dtype;
  d.rank = static_cast<int32_t>(shape.size());
  for (size_t i = 0; i < shape.size(); ++i)
    d.dims[i] = shape[i];
  storage.assign((bytes() + 7) / 8 + 1, 0);
}

double HostTensor::get(int64_t i) const {
  switch (d.dtype) {
  case ZEROC_RT_DTYPE_F32:
    return as<float>()[i];
  case ZEROC_RT_DTYPE_F64:
    return as<double>()[i];
  case ZEROC_RT_DTYPE_I64:
    return static_cast<double>(as<int64_t>()[i]);
  case ZEROC_RT_DTYPE_I32:
    return as<int32_t>()[i];
  case ZEROC_RT_DTYPE_U8:
  case ZEROC_RT_DTYPE_BOOL:
    return as<uint8_t>()[i];
  case ZEROC_RT_DTYPE_F16:
    return zeroc_rt::kernels::decodeF16(as<uint16_t>()[i]);
  case ZEROC_RT_DTYPE_BF16:
    return zeroc_rt::kernels::decodeBF16(as<uint16_t>()[i]);
  default:
    throw std::invalid_argument("HostTensor::get: unsupported dtype");
  }
}

void HostTensor::set(int64_t i, double value) {
  switch (d.dtype) {
  case ZEROC_RT_DTYPE_F32:
    as<float>()[i] = static_cast<float>(value);
    return;
  case ZEROC_RT_DTYPE_F64:
    as<double>()[i] = value;
    return;
  case ZEROC_RT_DTYPE_I64:
    as<int64_t>()[i] = static_cast<int64_t>(value);
    return;
  case ZEROC_RT_DTYPE_I32:
    as<int32_t>()[i] = static_cast<int32_t>(value);
    return;
  case ZEROC_RT_DTYPE_U8:
  case ZEROC_RT_DTYPE_BOOL:
    as<uint8_t>()[i] = static_cast<uint8_t>(value);
    return;
  case ZEROC_RT_DTYPE_F16:
    as<uint16_t>()[i] = zeroc_rt::kernels::encodeF16(value);
    return;
  case ZEROC_RT_DTYPE_BF16:
    as<uint16_t>()[i] = zeroc_rt::kernels::encodeBF16(value);
    return;
  default:
    throw std::invalid_argument("HostTensor::set: unsupported dtype");
  }
}

std::vector<double> HostTensor::values() const {
  std::vector<double> v(static_cast<size_t>(size()));
  for (int64_t i = 0; i < size(); ++i)
    v[i] = get(i);
  return v;
}

void HostTensor::setValues(const std::vector<double> &values) {
  if (static_cast<int64_t>(values.size()) != size())
    throw std::invalid_argument("HostTensor::setValues: size mismatch");
  for (int64_t i = 0; i < size(); ++i)
    set(i, values[i]);
}

void HostTensor::fill(double value) {
  for (int64_t i = 0; i < size(); ++i)
    set(i, value);
}

HostTensor randomTensor(zeroc_rt_dtype_t dtype, const Dims &dims,
                        std::mt19937_64 &rng, double lo, double hi) {
  HostTensor t(dtype, dims);
  bool isFloat = dtype == ZEROC_RT_DTYPE_F32 || dtype == ZEROC_RT_DTYPE_F64 ||
                 dtype == ZEROC_RT_DTYPE_F16 || dtype == ZEROC_RT_DTYPE_BF16;
  std::uniform_real_distribution<double> real(lo, hi);
  std::uniform_int_distribution<int64_t> integer(static_cast<int64_t>(lo),
                                                 static_cast<int64_t>(hi));
  for (int64_t i = 0; i < t.size(); ++i)
    t.set(i, isFloat ? real(rng) : static_cast<double>(integer(rng)));
  return t;
}

HostTensor randomAwayFromZero(zeroc_rt_dtype_t dtype, const Dims &dims,
                              std::mt19937_64 &rng, double lo, double hi) {
  HostTensor t(dtype, dims);
  std::uniform_real_distribution<double> real(lo, hi);
  std::bernoulli_distribution sign(0.5);
  for (int64_t i = 0; i < t.size(); ++i)
    t.set(i, sign(rng) ? real(rng) : -real(rng));
  return t;
}

std::vector<double> randomVector(size_t n, std::mt19937_64 &rng, double lo,
                                 double hi) {
  std::uniform_real_distribution<double> real(lo, hi);
  std::vector<double> v(n);
  for (double &x : v)
    x = real(rng);
  return v;
}

Dims unravel(int64_t linear, const Dims &dims) {
  Dims index(dims.size(), 0);
  for (size_t i = dims.size(); i-- > 0;) {
    index[i] = linear % dims[i];
    linear /= dims[i];
  }
  return index;
}

int64_t ravel(const Dims &index, const Dims &dims) {
  int64_t linear = 0;
  for (size_t i = 0; i < dims.size(); ++i)
    linear = linear * dims[i] + index[i];
  return linear;
}

int64_t broadcastSource(const Dims &outIndex, const Dims &inDims) {
  size_t lead = outIndex.size() - inDims.size();
  Dims index(inDims.size());
  for (size_t i = 0; i < inDims.size(); ++i)
    index[i] = inDims[i] == 1 ? 0 : outIndex[i + lead];
  return ravel(index, inDims);
}

Dims broadcastDims(const Dims &a, const Dims &b) {
  size_t rank = std::max(a.size(), b.size());
  Dims out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i + a.size() >= rank ? a[i + a.size() - rank] : 1;
    int64_t db = i + b.size() >= rank ? b[i + b.size() - rank] : 1;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

void expectClose(const HostTensor &got, const std::vector<double> &want,
                 double tol, const std::string &what) {
  ASSERT_EQ(static_cast<size_t>(got.size()), want.size()) << what;
  int failures = 0;
  for (int64_t i = 0; i < got.size(); ++i) {
    double g = got.get(i), w = want[i];
    bool ok = (std::isnan(w) && std::isnan(g)) || g == w ||
              std::fabs(g - w) <= tol * (1.0 + std::fabs(w));
    if (!ok && ++failures <= 5)
      ADD_FAILURE() << what << ": element " << i << " "
                    << dimsName(unravel(i, got.dims())) << " is " << g
                    << ", expected " << w;
  }
}

void expectGradient(const std::function<std::vector<double>(
                        const std::vector<double> &)> &f,
                    const std::vector<double> &x, const std::vector<double> &w,
                    const std::vector<double> &analytic,
                    const std::string &what, double eps, double tol) {
  ASSERT_EQ(x.size(), analytic.size()) << what;
  auto functional = [&](const std::vector<double> &point) {
    std::vector<double> y = f(point);
    EXPECT_EQ(y.size(), w.size()) << what;
    double sum = 0.0;
    for (size_t i = 0; i < y.size() && i < w.size(); ++i)
      sum += w[i] * y[i];
    return sum;
  };
  int failures = 0;
  std::vector<double> point = x;
  for (size_t i = 0; i < x.size(); ++i) {
    point[i] = x[i] + eps;
    double plus = functional(point);
    point[i] = x[i] - eps;
    double minus = functional(point);
    point[i] = x[i];
    double numeric = (plus - minus) / (2.0 * eps);
    double bound = tol * std::max(1.0, std::fabs(analytic[i]));
    if (!(std::fabs(numeric - analytic[i]) <= bound) && ++failures <= 5)
      ADD_FAILURE() << what << ": d/dx[" << i << "] analytic " << analytic[i]
                    << " vs finite difference " << numeric;
  }
}

} // namespace zeroc_rt::test
