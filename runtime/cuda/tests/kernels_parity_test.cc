//===- kernels_parity_test.cc - CUDA kernels against the CPU kernels -*- C++ -*-===//
//
// Every zeroc_rt_cuda_k_* kernel against its CPU twin zeroc_rt_k_*: the same
// deterministic random inputs (fixed seeds) in host memory for the CPU kernel
// and in device memory (gpuMalloc, gpuUpload) for the CUDA kernel; the CUDA
// outputs are downloaded and compared elementwise with the CPU's.
//
// One source, two programs (tests/CMakeLists.txt):
//  - zeroc_rt_cuda_emu_kernel_tests, on the host emulation (ctest cuda_emu.*):
//    the kernels' index math and arithmetic, every block with one thread;
//  - zeroc_rt_cuda_gpu_kernel_tests, on the GPU build (ctest
//    cuda_gpu_kernel_tests): the same on a GPU, with real blocks, warp
//    reductions and atomics. Without a GPU it prints "no GPU: skipped" and
//    exits with 77, which ctest reports as skipped.
//
// Tolerance: |cuda - cpu| <= abs + rel * |cpu|; NaN matches NaN, infinities
// must be equal. Per dtype:
//   F32       rel 1e-5 + abs 1e-6; rel 1e-4 + abs 1e-5 for kernels that sum
//             (reductions, sum_to, softmax(_grad), layer_norm(_grad), the
//             loss, matmul, gemm, gather_grad, gather_elements_grad): the
//             CUDA kernels sum in float in a parallel order, the CPU kernels
//             in double in a fixed one;
//   F64       rel 1e-10 + abs 1e-12;
//   F16/BF16  rel 1e-2 + abs 1e-3 (an ULP or two of the 16-bit type);
//   exact     data movement (broadcast, where, copy, zero, gather, transpose,
//             slice(_grad), concat, trilu, pad, gather_elements, gather_nd,
//             scatter_nd and scatter_elements none), casts that round once,
//             integer arithmetic, comparisons, logic and predicates,
//             clip(_grad), pow by a scalar 2 or 3, cumsum and scatter_nd and
//             scatter_elements add/mul on F32/F64 (both combine in double in
//             index order), and dropout on F32/F64 (bit for bit: the same
//             mask and scaling). pad_grad and gather_grad_padded sum as the
//             kernels that sum. Host-side errors of the element and ND
//             kernels have the CPU kernels' codes and messages.
//
//===----------------------------------------------------------------------===//

#include "gpu.h"
#include "kernels/gemm_plan.h"
#include "kernels/scalar_types.h"
#include "zeroc_rt/kernels.h"
#include "zeroc_rt_cuda/kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace {

namespace zc = zeroc_rt::cuda;
namespace zk = zeroc_rt::kernels;

using Dims = std::vector<int64_t>;
using Rng = std::mt19937_64;

constexpr zeroc_rt_dtype_t F32 = ZEROC_RT_DTYPE_F32, F64 = ZEROC_RT_DTYPE_F64,
                           F16 = ZEROC_RT_DTYPE_F16, BF16 = ZEROC_RT_DTYPE_BF16,
                           I64 = ZEROC_RT_DTYPE_I64, I32 = ZEROC_RT_DTYPE_I32,
                           U8 = ZEROC_RT_DTYPE_U8, BOOL = ZEROC_RT_DTYPE_BOOL;

constexpr uint64_t kSeed = 20261203;
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

//===----------------------------------------------------------------------===//
// Statuses
//===----------------------------------------------------------------------===//

/// The message of `status`, which it frees.
std::string takeMessage(zeroc_rt_status_t status) {
  std::string message = zeroc_rt_status_message(status);
  zeroc_rt_status_free(status);
  return message;
}

/// Asserts that a status expression is OK, printing its message otherwise.
#define ASSERT_OK(expr)                                                        \
  do {                                                                         \
    zeroc_rt_status_t okStatus_ = (expr);                                      \
    ASSERT_TRUE(okStatus_ == nullptr) << #expr << ": "                         \
                                      << takeMessage(okStatus_);               \
  } while (0)

/// ASSERT_OK of a CUDA kernel call, then of the synchronization that reports
/// what the kernel flagged (an index out of range) and asynchronous errors.
#define ASSERT_GPU_OK(expr)                                                    \
  do {                                                                         \
    ASSERT_OK(expr);                                                           \
    ASSERT_OK(zc::gpuSynchronize());                                           \
  } while (0)

//===----------------------------------------------------------------------===//
// Tensors in two copies
//===----------------------------------------------------------------------===//

int64_t numel(const Dims &dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

std::string dimsText(const Dims &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

bool isFloat(zeroc_rt_dtype_t dtype) {
  return dtype == F32 || dtype == F64 || dtype == F16 || dtype == BF16;
}

/// Element i of `bytes` (of `dtype`) as a double; f16/bf16 decode exactly.
double decodeElement(zeroc_rt_dtype_t dtype, const unsigned char *bytes, int64_t i) {
  const unsigned char *p = bytes + i * static_cast<int64_t>(zeroc_rt_dtype_size(dtype));
  switch (dtype) {
  case F32: {
    float v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  case F64: {
    double v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  case F16:
  case BF16: {
    uint16_t bits;
    std::memcpy(&bits, p, sizeof bits);
    return dtype == F16 ? zk::decodeF16(bits) : zk::decodeBF16(bits);
  }
  case I64: {
    int64_t v;
    std::memcpy(&v, p, sizeof v);
    return static_cast<double>(v);
  }
  case I32: {
    int32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  default:
    return *p;
  }
}

/// Stores `value` as element i of `bytes` (rounding to nearest even).
void encodeElement(zeroc_rt_dtype_t dtype, unsigned char *bytes, int64_t i, double value) {
  unsigned char *p = bytes + i * static_cast<int64_t>(zeroc_rt_dtype_size(dtype));
  auto put = [p](auto v) { std::memcpy(p, &v, sizeof v); };
  switch (dtype) {
  case F32: put(static_cast<float>(value)); break;
  case F64: put(value); break;
  case F16: put(zk::encodeF16(value)); break;
  case BF16: put(zk::encodeBF16(value)); break;
  case I64: put(static_cast<int64_t>(value)); break;
  case I32: put(static_cast<int32_t>(value)); break;
  case BOOL: put(static_cast<uint8_t>(value != 0.0)); break;
  default: put(static_cast<uint8_t>(value)); break;
  }
}

/// A dense row-major tensor in two copies: host memory, for the CPU kernel,
/// and device memory (gpuMalloc), for the CUDA kernel, each with its
/// descriptor. upload() copies the host copy to the device; the copies are
/// independent after that, so that in-place kernels each update their own.
class Tensor {
public:
  Tensor(zeroc_rt_dtype_t dtype, Dims dims)
      : shape(std::move(dims)),
        host(static_cast<size_t>(numel(shape)) * zeroc_rt_dtype_size(dtype) / 8 + 1, 0) {
    zeroc_rt_tensor_t d{};
    d.dtype = dtype;
    d.rank = static_cast<int32_t>(shape.size());
    for (size_t i = 0; i < shape.size(); ++i)
      d.dims[i] = shape[i];
    hostDesc = deviceDesc = d;
    hostDesc.data = host.data();
    if (zeroc_rt_status_t s = zc::gpuMalloc(bytes(), "a test tensor", &device))
      ADD_FAILURE() << "gpuMalloc: " << takeMessage(s);
    deviceDesc.data = device;
  }
  Tensor(Tensor &&other) noexcept
      : shape(std::move(other.shape)), host(std::move(other.host)),
        device(other.device), hostDesc(other.hostDesc), deviceDesc(other.deviceDesc) {
    other.device = nullptr;
  }
  Tensor(const Tensor &) = delete;
  Tensor &operator=(const Tensor &) = delete;
  Tensor &operator=(Tensor &&) = delete;
  ~Tensor() { zc::gpuFree(device); }

  /// The descriptors of the host and of the device copy.
  const zeroc_rt_tensor_t *cpu() const { return &hostDesc; }
  const zeroc_rt_tensor_t *gpu() const { return &deviceDesc; }
  void *hostData() { return host.data(); }
  void *deviceData() { return device; }

  zeroc_rt_dtype_t dtype() const { return hostDesc.dtype; }
  const Dims &dims() const { return shape; }
  int64_t size() const { return numel(shape); }
  size_t bytes() const {
    return static_cast<size_t>(size()) * zeroc_rt_dtype_size(hostDesc.dtype);
  }

  /// Element i of the host copy.
  double get(int64_t i) const { return decodeElement(dtype(), hostBytes(), i); }
  void set(int64_t i, double value) { encodeElement(dtype(), hostBytes(), i, value); }

  /// Copies the host copy to the device.
  void upload() {
    if (zeroc_rt_status_t s = zc::gpuUpload(device, host.data(), bytes()))
      ADD_FAILURE() << "gpuUpload: " << takeMessage(s);
  }

  std::vector<unsigned char> hostCopy() const {
    return std::vector<unsigned char>(hostBytes(), hostBytes() + bytes());
  }
  /// The device copy, downloaded.
  std::vector<unsigned char> deviceCopy() const {
    std::vector<unsigned char> out(bytes());
    if (zeroc_rt_status_t s = zc::gpuDownload(out.data(), device, bytes()))
      ADD_FAILURE() << "gpuDownload: " << takeMessage(s);
    return out;
  }

private:
  const unsigned char *hostBytes() const {
    return reinterpret_cast<const unsigned char *>(host.data());
  }
  unsigned char *hostBytes() { return reinterpret_cast<unsigned char *>(host.data()); }

  Dims shape;
  std::vector<uint64_t> host; // 8-byte aligned
  void *device = nullptr;
  zeroc_rt_tensor_t hostDesc{}, deviceDesc{};
};

/// Uniform values in [lo, hi), the same (rounded to the dtype) in both copies.
Tensor randomTensor(zeroc_rt_dtype_t dtype, const Dims &dims, Rng &rng, double lo = -1.0,
                    double hi = 1.0) {
  Tensor t(dtype, dims);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int64_t i = 0; i < t.size(); ++i)
    t.set(i, dist(rng));
  t.upload();
  return t;
}

/// |x| uniform in [lo, hi) with a random sign (divisors).
Tensor awayFromZero(zeroc_rt_dtype_t dtype, const Dims &dims, Rng &rng, double lo, double hi) {
  Tensor t(dtype, dims);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::bernoulli_distribution negative(0.5);
  for (int64_t i = 0; i < t.size(); ++i)
    t.set(i, negative(rng) ? -dist(rng) : dist(rng));
  t.upload();
  return t;
}

/// An output: both copies hold a sentinel, so that an element the CUDA
/// kernel leaves unwritten differs from the CPU kernel's.
Tensor outputTensor(zeroc_rt_dtype_t dtype, const Dims &dims) {
  Tensor t(dtype, dims);
  for (int64_t i = 0; i < t.size(); ++i)
    t.set(i, -77.0);
  t.upload();
  return t;
}

/// Integer (or BOOL) elements, given exactly.
Tensor intTensor(zeroc_rt_dtype_t dtype, const Dims &dims, const std::vector<int64_t> &values) {
  Tensor t(dtype, dims);
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.size()) << "intTensor " << dimsText(dims);
  const size_t es = zeroc_rt_dtype_size(dtype);
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < t.size(); ++i) {
    const int64_t v = values[i];
    std::memcpy(static_cast<unsigned char *>(t.hostData()) + i * es, &v, es); // little-endian
  }
  t.upload();
  return t;
}

/// Random integers in [lo, hi].
Tensor randomInts(zeroc_rt_dtype_t dtype, const Dims &dims, Rng &rng, int64_t lo, int64_t hi) {
  std::uniform_int_distribution<int64_t> dist(lo, hi);
  std::vector<int64_t> values(static_cast<size_t>(numel(dims)));
  for (int64_t &v : values)
    v = dist(rng);
  return intTensor(dtype, dims, values);
}

//===----------------------------------------------------------------------===//
// Comparison
//===----------------------------------------------------------------------===//

struct Tol {
  double rel, abs;
};
constexpr Tol kExact{0.0, 0.0};

/// The tolerances of the header comment; `sums`: the kernel accumulates.
Tol tolOf(zeroc_rt_dtype_t dtype, bool sums = false) {
  switch (dtype) {
  case F32: return sums ? Tol{1e-4, 1e-5} : Tol{1e-5, 1e-6};
  case F64: return {1e-10, 1e-12};
  case F16:
  case BF16: return {1e-2, 1e-3};
  default: return kExact;
  }
}

bool close(double got, double want, Tol tol) {
  if (std::isnan(got) || std::isnan(want))
    return std::isnan(got) && std::isnan(want);
  if (std::isinf(got) || std::isinf(want))
    return got == want;
  return std::fabs(got - want) <= tol.abs + tol.rel * std::fabs(want);
}

std::string number(double v) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

/// Expects every element of `t`'s device copy (the CUDA kernel's result) to
/// be within `tol` of its host copy (the CPU kernel's). Integer and BOOL
/// tensors compare bit for bit.
void expectClose(const Tensor &t, Tol tol, const std::string &what) {
  const std::vector<unsigned char> want = t.hostCopy(), got = t.deviceCopy();
  const bool exactBits = !isFloat(t.dtype());
  int64_t bad = 0;
  for (int64_t i = 0; i < t.size(); ++i) {
    const double w = decodeElement(t.dtype(), want.data(), i);
    const double g = decodeElement(t.dtype(), got.data(), i);
    const size_t es = zeroc_rt_dtype_size(t.dtype());
    const bool ok = exactBits ? std::memcmp(&want[i * es], &got[i * es], es) == 0
                              : close(g, w, tol);
    if (!ok && ++bad <= 5)
      ADD_FAILURE() << what << ": element " << i << " of " << zeroc_rt_dtype_name(t.dtype())
                    << dimsText(t.dims()) << ": cuda " << number(g) << ", cpu " << number(w)
                    << " (tolerance rel " << tol.rel << " + abs " << tol.abs << ")";
  }
  if (bad > 5)
    ADD_FAILURE() << what << ": " << bad << " of " << t.size() << " elements differ";
}

/// Expects the two copies of `t` to be equal bit for bit.
void expectSameBits(const Tensor &t, const std::string &what) {
  const std::vector<unsigned char> want = t.hostCopy(), got = t.deviceCopy();
  const size_t es = zeroc_rt_dtype_size(t.dtype());
  int64_t bad = 0;
  for (int64_t i = 0; i < t.size(); ++i)
    if (std::memcmp(&want[i * es], &got[i * es], es) != 0 && ++bad <= 5)
      ADD_FAILURE() << what << ": element " << i << " differs in its bits: cuda "
                    << number(decodeElement(t.dtype(), got.data(), i)) << ", cpu "
                    << number(decodeElement(t.dtype(), want.data(), i));
  if (bad > 5)
    ADD_FAILURE() << what << ": " << bad << " of " << t.size() << " elements differ";
}

void expectSameDouble(double got, double want, const std::string &what) {
  EXPECT_TRUE(std::memcmp(&got, &want, sizeof got) == 0 || (std::isnan(got) && std::isnan(want)))
      << what << ": cuda " << number(got) << ", cpu " << number(want);
}

//===----------------------------------------------------------------------===//
// Fixtures
//===----------------------------------------------------------------------===//

std::string dtypeTestName(const ::testing::TestParamInfo<zeroc_rt_dtype_t> &info) {
  return zeroc_rt_dtype_name(info.param);
}

/// Kernels on every float dtype (F32, F64, F16, BF16).
class KernelParity : public ::testing::TestWithParam<zeroc_rt_dtype_t> {
protected:
  zeroc_rt_dtype_t dt() const { return GetParam(); }
  Tol tol(bool sums = false) const { return tolOf(GetParam(), sums); }
  Tensor random(const Dims &dims, double lo = -1.0, double hi = 1.0) {
    return randomTensor(dt(), dims, rng, lo, hi);
  }
  Tensor output(const Dims &dims) { return outputTensor(dt(), dims); }

  Rng rng{kSeed};
};
INSTANTIATE_TEST_SUITE_P(Float, KernelParity, ::testing::Values(F32, F64, F16, BF16),
                         dtypeTestName);

/// The optimizer steps (F32 and F64).
class OptimizerParity : public KernelParity {
protected:
  /// One tensor of a multi-tensor step: its gradient's dtype, its rounded
  /// copy's (BOOL: none) and its elements.
  struct MultiSpec {
    zeroc_rt_dtype_t grad, rounded;
    int64_t n;
  };
  /// A multi-tensor step's tensors; `state`: Adam's m and v, or SGD's
  /// momentum buffer (and one unused).
  struct MultiSet {
    std::vector<Tensor> grad, param, state[2], rounded;
  };

  /// SGD's options, each with momentum, and none.
  struct SgdCase {
    const char *name;
    double momentum, dampening;
    int nesterov;
  };
  static std::vector<SgdCase> sgdCases() {
    return {{"momentum", 0.9, 0.0, 0},
            {"nesterov", 0.9, 0.0, 1},
            {"dampening", 0.9, 0.1, 0},
            {"no momentum", 0.0, 0.0, 0}};
  }

  /// Tensors of 16-bit and wide gradients (f32 into an f64 master too),
  /// with and without a rounded copy, one spanning chunks (70000
  /// elements), and an empty one.
  std::vector<MultiSpec> multiSpecs() const {
    return {{F16, F16, 257}, {BF16, BF16, 70000}, {dt(), BOOL, 3},
            {F32, BOOL, 5},  {F64, BF16, 33},     {F32, BOOL, 0}};
  }

  /// Two steps of a multi-tensor update, `fused(set, step)`, against the
  /// engine's per-tensor path: the gradient scaled or converted by
  /// `factor`, `single(cpu, set, i, g, step)` on it, the rounding; on the
  /// CPU (fused's host copies) and with the CUDA kernels one by one
  /// (single's device copies). The fused step is within the tolerance of
  /// the former and the same bits as the latter.
  template <typename Single, typename Fused>
  void checkMultiStep(double factor, const char *const (&states)[2], Single &&single,
                      Fused &&fused) {
    const std::vector<MultiSpec> specs = multiSpecs();
    auto makeSet = [&](uint64_t seed) {
      Rng r{seed};
      MultiSet set;
      for (const MultiSpec &s : specs) {
        set.grad.push_back(randomTensor(s.grad, {s.n}, r));
        set.param.push_back(randomTensor(dt(), {s.n}, r));
        set.state[0].push_back(randomTensor(dt(), {s.n}, r, 0.0, 0.1));
        set.state[1].push_back(randomTensor(dt(), {s.n}, r, 0.0, 0.01));
        set.rounded.push_back(outputTensor(s.rounded == BOOL ? F16 : s.rounded, {s.n}));
      }
      return set;
    };
    const int64_t count = static_cast<int64_t>(specs.size());
    MultiSet many = makeSet(kSeed + 7), one = makeSet(kSeed + 7);
    for (int64_t step = 1; step <= 2; ++step) {
      SCOPED_TRACE("step " + std::to_string(step));
      // Fresh gradients every step (the per-tensor path scales in place).
      Rng gradRng{kSeed + 100 + static_cast<uint64_t>(step)};
      std::uniform_real_distribution<double> dist(-1.0, 1.0);
      for (int64_t i = 0; i < count; ++i) {
        for (int64_t j = 0; j < specs[i].n; ++j) {
          const double x = dist(gradRng);
          many.grad[i].set(j, x);
          one.grad[i].set(j, x);
        }
        many.grad[i].upload();
        one.grad[i].upload();
      }
      for (int64_t i = 0; i < count; ++i) {
        const MultiSpec &s = specs[i];
        Tensor scratch = outputTensor(dt(), {s.n});
        for (bool cpu : {true, false}) {
          MultiSet &set = cpu ? many : one;
          auto data = [&](Tensor &t) { return cpu ? t.hostData() : t.deviceData(); };
          void *g = s.grad == dt() ? data(set.grad[i]) : data(scratch);
          if (s.grad == dt())
            ASSERT_OK(cpu ? zeroc_rt_k_scale(dt(), g, s.n, factor)
                          : zeroc_rt_cuda_k_scale(dt(), g, s.n, factor));
          else
            ASSERT_OK(
                cpu ? zeroc_rt_k_convert(s.grad, data(set.grad[i]), dt(), g, s.n, factor)
                    : zeroc_rt_cuda_k_convert(s.grad, data(set.grad[i]), dt(), g, s.n, factor));
          ASSERT_OK(single(cpu, set, i, g, step));
          if (s.rounded != BOOL)
            ASSERT_OK((cpu ? zeroc_rt_k_convert : zeroc_rt_cuda_k_convert)(
                dt(), data(set.param[i]), s.rounded, data(set.rounded[i]), s.n, 1.0));
        }
      }
      int64_t failed = 7;
      ASSERT_GPU_OK(fused(many, step, &failed));
      EXPECT_EQ(failed, -1);
      for (int64_t i = 0; i < count; ++i) {
        SCOPED_TRACE("tensor " + std::to_string(i));
        expectClose(many.param[i], tol(), "param");
        for (int k = 0; k < 2; ++k)
          if (states[k])
            expectClose(many.state[k][i], tol(), states[k]);
        for (auto [a, b, what] : {std::tuple{&many.param[i], &one.param[i], "param"},
                                  std::tuple{&many.state[0][i], &one.state[0][i], "state 0"},
                                  std::tuple{&many.state[1][i], &one.state[1][i], "state 1"},
                                  std::tuple{&many.rounded[i], &one.rounded[i], "rounded"}})
          EXPECT_TRUE(a->deviceCopy() == b->deviceCopy())
              << what << ": the fused step's bits differ from the kernels' one by one";
        if (specs[i].rounded != BOOL)
          expectClose(many.rounded[i], tolOf(specs[i].rounded), "rounded");
      }
    }
  }
};
INSTANTIATE_TEST_SUITE_P(Wide, OptimizerParity, ::testing::Values(F32, F64), dtypeTestName);

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

const char *const kUnaryNames[] = {
    "neg", "sqrt", "reciprocal", "relu",  "tanh", "sigmoid",   "erf",
    "exp", "log",  "cos",        "sin",   "abs",  "sign",      "floor",
    "ceil", "round", "gelu",     "gelu_tanh"};
static_assert(sizeof kUnaryNames / sizeof *kUnaryNames == ZEROC_RT_UNARY_GELU_TANH + 1,
              "a name per unary op");

bool positiveDomain(int op) {
  return op == ZEROC_RT_UNARY_SQRT || op == ZEROC_RT_UNARY_LOG ||
         op == ZEROC_RT_UNARY_RECIPROCAL;
}
/// The forward operands zeroc_rt_k_unary_grad reads (zeroc_rt/kernels.h);
/// the test passes NULL for the other.
bool gradReadsX(int op) {
  switch (op) {
  case ZEROC_RT_UNARY_RELU: case ZEROC_RT_UNARY_ERF: case ZEROC_RT_UNARY_LOG:
  case ZEROC_RT_UNARY_COS: case ZEROC_RT_UNARY_SIN: case ZEROC_RT_UNARY_ABS:
  case ZEROC_RT_UNARY_GELU: case ZEROC_RT_UNARY_GELU_TANH:
    return true;
  default:
    return false;
  }
}
bool gradReadsY(int op) {
  switch (op) {
  case ZEROC_RT_UNARY_TANH: case ZEROC_RT_UNARY_SIGMOID: case ZEROC_RT_UNARY_EXP:
  case ZEROC_RT_UNARY_SQRT: case ZEROC_RT_UNARY_RECIPROCAL:
    return true;
  default:
    return false;
  }
}

/// Inputs of unary op `op`: positive for sqrt/log/reciprocal, else in
/// [-3, 3) starting with zero and rounding ties.
Tensor unaryInput(int op, zeroc_rt_dtype_t dtype, const Dims &dims, Rng &rng) {
  if (positiveDomain(op))
    return randomTensor(dtype, dims, rng, 0.1, 4.0);
  Tensor x = randomTensor(dtype, dims, rng, -3.0, 3.0);
  const double specials[] = {0.0, -0.5, 0.5, 1.5, 2.5, -2.5, 1.0, -1.0};
  for (size_t i = 0; i < sizeof specials / sizeof *specials; ++i)
    x.set(static_cast<int64_t>(i), specials[i]);
  x.upload();
  return x;
}

TEST_P(KernelParity, Unary) {
  for (int op = ZEROC_RT_UNARY_NEG; op <= ZEROC_RT_UNARY_GELU_TANH; ++op) {
    SCOPED_TRACE(kUnaryNames[op]);
    const auto uop = static_cast<zeroc_rt_unary_op_t>(op);
    Tensor x = unaryInput(op, dt(), {3, 7, 5}, rng);
    Tensor y = output({3, 7, 5});
    ASSERT_OK(zeroc_rt_k_unary(uop, x.cpu(), y.cpu()));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_unary(uop, x.gpu(), y.gpu()));
    expectClose(y, tol(), std::string("unary ") + kUnaryNames[op]);
  }
}

TEST_P(KernelParity, UnaryGrad) {
  for (int op = ZEROC_RT_UNARY_NEG; op <= ZEROC_RT_UNARY_GELU_TANH; ++op) {
    SCOPED_TRACE(kUnaryNames[op]);
    const auto uop = static_cast<zeroc_rt_unary_op_t>(op);
    const Dims dims{4, 33};
    Tensor x = unaryInput(op, dt(), dims, rng);
    Tensor y(dt(), dims); // the forward output, from the CPU kernel
    ASSERT_OK(zeroc_rt_k_unary(uop, x.cpu(), y.cpu()));
    y.upload();
    Tensor gy = random(dims);
    Tensor gx = output(dims);
    const bool rx = gradReadsX(op), ry = gradReadsY(op);
    ASSERT_OK(zeroc_rt_k_unary_grad(uop, rx ? x.cpu() : nullptr, ry ? y.cpu() : nullptr,
                                    gy.cpu(), gx.cpu()));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_unary_grad(uop, rx ? x.gpu() : nullptr,
                                             ry ? y.gpu() : nullptr, gy.gpu(), gx.gpu()));
    expectClose(gx, tol(), std::string("unary_grad ") + kUnaryNames[op]);
  }
}

/// Operand shapes of the broadcasting kernels and their result's.
struct BroadcastCase {
  Dims a, b, out;
};
const BroadcastCase kBroadcastCases[] = {
    {{4, 1, 5}, {3, 1}, {4, 3, 5}}, // numpy broadcasting both ways
    {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}}, // same shape
    {{}, {3, 4}, {3, 4}},              // a scalar
    {{5}, {2, 3, 5}, {2, 3, 5}},       // a lower-rank left operand
};

TEST_P(KernelParity, Binary) {
  const std::pair<zeroc_rt_binary_op_t, const char *> ops[] = {
      {ZEROC_RT_BINARY_ADD, "add"}, {ZEROC_RT_BINARY_SUB, "sub"},
      {ZEROC_RT_BINARY_MUL, "mul"}, {ZEROC_RT_BINARY_DIV, "div"},
      {ZEROC_RT_BINARY_POW, "pow"}, {ZEROC_RT_BINARY_MAX, "max"},
      {ZEROC_RT_BINARY_MIN, "min"}};
  for (const auto &[op, name] : ops)
    for (const BroadcastCase &c : kBroadcastCases) {
      SCOPED_TRACE(std::string(name) + " " + dimsText(c.a) + " " + dimsText(c.b));
      Tensor a = op == ZEROC_RT_BINARY_POW ? random(c.a, 0.25, 2.0) : random(c.a, -2.0, 2.0);
      Tensor b = op == ZEROC_RT_BINARY_DIV ? awayFromZero(dt(), c.b, rng, 0.5, 2.0)
                                           : random(c.b, -2.0, 2.0);
      if ((op == ZEROC_RT_BINARY_MAX || op == ZEROC_RT_BINARY_MIN) && b.size() > 1) {
        b.set(1, kNaN); // NaN propagates
        b.upload();
      }
      Tensor out = output(c.out);
      ASSERT_OK(zeroc_rt_k_binary(op, a.cpu(), b.cpu(), out.cpu()));
      ASSERT_GPU_OK(zeroc_rt_cuda_k_binary(op, a.gpu(), b.gpu(), out.gpu()));
      expectClose(out, tol(), std::string("binary ") + name);
    }
}

TEST(KernelParityFixed, IntegerBinary) {
  Rng rng(kSeed);
  const std::pair<zeroc_rt_binary_op_t, const char *> ops[] = {
      {ZEROC_RT_BINARY_ADD, "add"}, {ZEROC_RT_BINARY_SUB, "sub"},
      {ZEROC_RT_BINARY_MUL, "mul"}, {ZEROC_RT_BINARY_MAX, "max"},
      {ZEROC_RT_BINARY_MIN, "min"}};
  for (zeroc_rt_dtype_t dtype : {I64, I32})
    for (const auto &[op, name] : ops)
      for (const BroadcastCase &c : kBroadcastCases) {
        SCOPED_TRACE(std::string(zeroc_rt_dtype_name(dtype)) + " " + name + " " +
                     dimsText(c.a) + " " + dimsText(c.b));
        Tensor a = randomInts(dtype, c.a, rng, -1000, 1000);
        Tensor b = randomInts(dtype, c.b, rng, -1000, 1000);
        // Wrap-around at the type's bounds.
        const int64_t hi = dtype == I64 ? std::numeric_limits<int64_t>::max()
                                        : std::numeric_limits<int32_t>::max();
        std::memcpy(a.hostData(), &hi, zeroc_rt_dtype_size(dtype));
        a.upload();
        Tensor out = outputTensor(dtype, c.out);
        ASSERT_OK(zeroc_rt_k_binary(op, a.cpu(), b.cpu(), out.cpu()));
        ASSERT_GPU_OK(zeroc_rt_cuda_k_binary(op, a.gpu(), b.gpu(), out.gpu()));
        expectClose(out, kExact, std::string("binary ") + name);
      }
}

TEST_P(KernelParity, Where) {
  struct Case {
    Dims cond, a, b, out;
  };
  const Case cases[] = {{{4, 1, 5}, {3, 1}, {5}, {4, 3, 5}},
                        {{3, 1}, {4, 3, 5}, {}, {4, 3, 5}},
                        {{2, 6}, {2, 6}, {2, 6}, {2, 6}}};
  for (const Case &c : cases) {
    SCOPED_TRACE(dimsText(c.cond) + " " + dimsText(c.a) + " " + dimsText(c.b));
    Tensor cond = randomInts(BOOL, c.cond, rng, 0, 1);
    Tensor a = random(c.a), b = random(c.b);
    Tensor out = output(c.out);
    ASSERT_OK(zeroc_rt_k_where(cond.cpu(), a.cpu(), b.cpu(), out.cpu()));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_where(cond.gpu(), a.gpu(), b.gpu(), out.gpu()));
    expectClose(out, kExact, "where");
  }
}

TEST(KernelParityFixed, WhereOtherElementSizes) {
  Rng rng(kSeed);
  for (zeroc_rt_dtype_t dtype : {I64, I32, U8}) {
    SCOPED_TRACE(zeroc_rt_dtype_name(dtype));
    Tensor cond = randomInts(BOOL, {4, 1, 5}, rng, 0, 1);
    Tensor a = randomInts(dtype, {3, 1}, rng, 0, 100);
    Tensor b = randomInts(dtype, {5}, rng, 0, 100);
    Tensor out = outputTensor(dtype, {4, 3, 5});
    ASSERT_OK(zeroc_rt_k_where(cond.cpu(), a.cpu(), b.cpu(), out.cpu()));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_where(cond.gpu(), a.gpu(), b.gpu(), out.gpu()));
    expectClose(out, kExact, "where");
  }
}

TEST(KernelParityFixed, Cast) {
  Rng rng(kSeed);
  // Random values and the edges of the 16-bit types: signed zeros, f16
  // subnormals and overflow, ties of f16 (1 + 2^-11, 1 + 3 * 2^-11) and of
  // bf16 (1 + 2^-8, 1 + 3 * 2^-8), infinities, NaN, a value beyond f32.
  const double specials[] = {0.0,        -0.0,          1e-6,       6e-8,
                             -3e-5,      65504.0,       65519.0,    65520.0,
                             70000.0,    1.00048828125, 1.00146484375,
                             1.00390625, 1.01171875,    kInf,       -kInf,
                             kNaN,       3e38,          -1e39};
  const std::pair<zeroc_rt_dtype_t, zeroc_rt_dtype_t> pairs[] = {
      {F32, F16}, {F32, BF16}, {F32, F64}, {F16, F32}, {BF16, F32}, {F64, F32},
      {F16, F64}, {BF16, F64}, {F16, BF16}, {BF16, F16}, {F64, F16}, {F64, BF16}};
  for (const auto &[from, to] : pairs) {
    SCOPED_TRACE(std::string(zeroc_rt_dtype_name(from)) + " -> " + zeroc_rt_dtype_name(to));
    Tensor in = randomTensor(from, {7, 11}, rng, -4.0, 4.0);
    for (size_t i = 0; i < sizeof specials / sizeof *specials; ++i)
      in.set(static_cast<int64_t>(i), specials[i]);
    in.upload();
    Tensor out = outputTensor(to, {7, 11});
    ASSERT_OK(zeroc_rt_k_cast(in.cpu(), out.cpu()));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_cast(in.gpu(), out.gpu()));
    // One rounding: exact. F64 to 16 bits rounds through float on the GPU
    // (zeroc_rt_cuda/kernels.h), within the 16-bit tolerance.
    expectClose(out, from == F64 && (to == F16 || to == BF16) ? tolOf(to) : kExact, "cast");
  }
}

TEST(KernelParityFixed, CastAnyDtypes) {
  // Every pair of dtypes: float to integer truncates, maps NaN to 0 and
  // saturates; integers wrap; anything to BOOL is != 0 (NaN is true); BOOL
  // reads any non-zero byte as 1.
  Rng rng(kSeed);
  const zeroc_rt_dtype_t all[] = {F32, F64, F16, BF16, I64, I32, U8, BOOL};
  const double floats[] = {0.0,   -0.0,  0.5,   -0.5, 1.75,  -2.9,   255.5,  256.0,
                           -1.0,  300.0, 65504, 1e10, -1e10, 3e9,    -3e9,   kNaN,
                           kInf,  -kInf, 1e19,  -1e19, 9.3e18, -9.3e18, 2147483520.0, 7.0};
  const std::vector<int64_t> ints = {0,   1,    -1,    255,        256,        -129,
                                     300, 2049, 65519, 65520,      16777217,   -16777217,
                                     (int64_t{1} << 40) + 3, std::numeric_limits<int64_t>::max(),
                                     std::numeric_limits<int64_t>::min(), 2147483648LL,
                                     -2147483649LL, 7, 3, 2, 100, -100, 77, 9};
  const Dims dims{4, 6};
  for (zeroc_rt_dtype_t from : all)
    for (zeroc_rt_dtype_t to : all) {
      SCOPED_TRACE(std::string(zeroc_rt_dtype_name(from)) + " -> " + zeroc_rt_dtype_name(to));
      Tensor in(from, dims);
      if (isFloat(from)) {
        for (int64_t i = 0; i < in.size(); ++i)
          in.set(i, floats[i]);
      } else {
        const size_t es = zeroc_rt_dtype_size(from);
        for (int64_t i = 0; i < in.size(); ++i) {
          int64_t v = ints[static_cast<size_t>(i)];
          if (from == BOOL)
            v = i % 4; // bytes 2 and 3 read as true
          std::memcpy(static_cast<unsigned char *>(in.hostData()) + i * es, &v, es);
        }
      }
      in.upload();
      Tensor out = intTensor(to, dims, std::vector<int64_t>(numel(dims), 0x5a));
      ASSERT_OK(zeroc_rt_k_cast(in.cpu(), out.cpu()));
      ASSERT_GPU_OK(zeroc_rt_cuda_k_cast(in.gpu(), out.gpu()));
      // F64 and integers to F16/BF16 round through float on the GPU.
      const bool narrow = (to == F16 || to == BF16) && (from == F64 || !isFloat(from));
      expectClose(out, narrow ? tolOf(to) : kExact, "cast");
    }
}

TEST_P(KernelParity, Broadcast) {
  const std::pair<Dims, Dims> cases[] = {
      {{3, 1}, {4, 3, 5}}, {{5}, {2, 5}}, {{}, {2, 3}}, {{2, 1, 3}, {2, 4, 3}}};
  for (const auto &[in, outDims] : cases) {
    SCOPED_TRACE(dimsText(in) + " -> " + dimsText(outDims));
    Tensor x = random(in);
    Tensor out = output(outDims);
    ASSERT_OK(zeroc_rt_k_broadcast(x.cpu(), out.cpu()));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_broadcast(x.gpu(), out.gpu()));
    expectClose(out, kExact, "broadcast");
  }
}

TEST_P(KernelParity, SumTo) {
  const Dims outs[] = {{4, 1}, {5}, {6, 1, 5}, {}, {6, 4, 5}};
  for (const Dims &o : outs) {
    SCOPED_TRACE("[6,4,5] -> " + dimsText(o));
    Tensor in = random({6, 4, 5});
    Tensor out = output(o);
    ASSERT_OK(zeroc_rt_k_sum_to(in.cpu(), out.cpu()));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_sum_to(in.gpu(), out.gpu()));
    expectClose(out, tol(true), "sum_to");
  }
}

// Bias-gradient shapes: the reduced dims lead, 32 or more kept elements
// after them (kernels/columns.h: tiles of 32 columns, chunks of rows).
TEST_P(KernelParity, SumToDownColumns) {
  struct Case {
    Dims in, out;
  };
  const Case cases[] = {{{3, 70, 37}, {37}},           // a partial tile
                        {{300, 64}, {1, 64}},          // several chunks of rows
                        {{2, 90, 33}, {2, 1, 33}},     // two matrices (outer 2)
                        {{5, 1, 40, 32}, {40, 32}}};   // rows of one dim of size 1
  for (const Case &c : cases) {
    SCOPED_TRACE(dimsText(c.in) + " -> " + dimsText(c.out));
    Tensor in = random(c.in);
    Tensor out = output(c.out);
    ASSERT_OK(zeroc_rt_k_sum_to(in.cpu(), out.cpu()));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_sum_to(in.gpu(), out.gpu()));
    expectClose(out, tol(true), "sum_to");
  }
}

TEST_P(KernelParity, Dropout) {
  for (double ratio : {0.1, 0.0, 0.5, 1.0})
    for (uint64_t counter : {uint64_t{0}, uint64_t{7}}) {
      SCOPED_TRACE("ratio " + number(ratio) + " counter " + std::to_string(counter));
      Tensor in = random({10, 101});
      Tensor out = output({10, 101});
      const uint64_t seed = 0x1234abcdull;
      ASSERT_OK(zeroc_rt_k_dropout(in.cpu(), ratio, seed, counter, out.cpu()));
      ASSERT_GPU_OK(zeroc_rt_cuda_k_dropout(in.gpu(), ratio, seed, counter, out.gpu()));
      if (dt() == F32 || dt() == F64)
        expectSameBits(out, "dropout");
      else // the CPU rounds double to 16 bits once, the GPU through float
        expectClose(out, tol(), "dropout");
    }
}

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

TEST_P(KernelParity, Matmul) {
  struct Case {
    Dims a, b, out;
  };
  const Case cases[] = {
      {{5, 7}, {7, 3}, {5, 3}},                   // 2D
      {{4, 5, 7}, {4, 7, 3}, {4, 5, 3}},          // batched
      {{2, 3, 4, 5}, {5, 6}, {2, 3, 4, 6}},       // b shared by the batch
      {{5, 6}, {2, 3, 6, 4}, {2, 3, 5, 4}},       // a shared by the batch
      {{3, 1, 4, 5}, {2, 5, 6}, {3, 2, 4, 6}},    // batch dims broadcast
      {{7}, {7, 3}, {3}},                         // rank-1 a
      {{4, 5, 7}, {7}, {4, 5}},                   // rank-1 b
      {{7}, {7}, {}},                             // a dot product
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(dimsText(c.a) + " x " + dimsText(c.b));
    Tensor a = random(c.a), b = random(c.b);
    Tensor out = output(c.out);
    ASSERT_OK(zeroc_rt_k_matmul(a.cpu(), b.cpu(), out.cpu()));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_matmul(a.gpu(), b.gpu(), out.gpu()));
    expectClose(out, tol(true), "matmul");
  }
}

/// matmul_trans reads a flagged operand with its last two dims swapped: the
/// same product as the CPU's, with the batch strided or per element.
TEST_P(KernelParity, MatmulTransposed) {
  struct Case {
    Dims a, b, out;
    int ta, tb;
  };
  const Case cases[] = {
      {{7, 5}, {7, 3}, {5, 3}, 1, 0},                // 2D, a^T
      {{4, 5, 7}, {4, 3, 7}, {4, 5, 3}, 0, 1},       // attention's q k^T
      {{4, 7, 5}, {4, 3, 7}, {4, 5, 3}, 1, 1},       // both
      {{2, 3, 5, 4}, {5, 6}, {2, 3, 4, 6}, 1, 0},    // b shared, a^T
      {{3, 1, 5, 4}, {2, 6, 5}, {3, 2, 4, 6}, 1, 1}, // batch dims broadcast
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(dimsText(c.a) + " x " + dimsText(c.b) + " ta=" + std::to_string(c.ta) +
                 " tb=" + std::to_string(c.tb));
    Tensor a = random(c.a), b = random(c.b);
    Tensor out = output(c.out);
    ASSERT_OK(zeroc_rt_k_matmul_trans(a.cpu(), b.cpu(), c.ta, c.tb, out.cpu()));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_matmul_trans(a.gpu(), b.gpu(), c.ta, c.tb, out.gpu()));
    expectClose(out, tol(true), "matmul_trans");
  }
}

/// matmul_strided reads an operand at strides (graph.strided_view): the
/// product of the view copied dense, as the slices and transposes it
/// replaces copied it. Attention's head split (B=2, T=4, H=2, D=3 out of a
/// [2, 4, 18] QKV projection): q and v row-major with a leading dimension
/// of 18 and one GEMM batch per sequence, k column-major; a slice of rows.
TEST_P(KernelParity, MatmulStrided) {
  struct View {
    Dims dims;
    std::vector<int64_t> strides; // empty: a dense operand
    int64_t offset;
  };
  struct Case {
    const char *what;
    Dims a, b;
    View va, vb;
    int ta, tb;
    Dims out;
    std::vector<int64_t> perm = {}; // out stored transposed (result_perm)
  };
  const View q{{2, 2, 4, 3}, {72, 3, 18, 1}, 0}, k{{2, 2, 3, 4}, {72, 3, 1, 18}, 6},
      v{{2, 2, 4, 3}, {72, 3, 18, 1}, 12};
  const Case cases[] = {
      {"q k", {2, 4, 18}, {2, 4, 18}, q, k, 0, 0, {2, 2, 4, 4}},
      {"p v", {2, 2, 4, 4}, {2, 4, 18}, {{2, 2, 4, 4}, {}, 0}, v, 0, 0, {2, 2, 4, 3}},
      {"g v^T", {2, 2, 4, 3}, {2, 4, 18}, {{2, 2, 4, 3}, {}, 0}, v, 0, 1, {2, 2, 4, 4}},
      {"k^T g", {2, 4, 18}, {2, 2, 3, 5}, k, {{2, 2, 3, 5}, {}, 0}, 1, 0, {2, 2, 4, 5}},
      {"rows", {4, 2}, {2, 5}, {{3, 2}, {2, 1}, 2}, {{2, 5}, {}, 0}, 0, 0, {3, 5}},
      // Products stored transposed: attention's output and the gradients
      // of q and v to [B, T, H, D] (row-major matrices, ld H*D), and k's
      // from [B, H, D, T] (column-major).
      {"p v to BTHD", {2, 2, 4, 4}, {2, 4, 18}, {{2, 2, 4, 4}, {}, 0}, v, 0, 0, {2, 2, 4, 3},
       {0, 2, 1, 3}},
      {"q^T g to BTHD", {2, 4, 18}, {2, 2, 4, 4}, q, {{2, 2, 4, 4}, {}, 0}, 1, 0, {2, 2, 3, 4},
       {0, 3, 1, 2}},
      {"dense to BTHD", {2, 2, 4, 5}, {2, 2, 5, 3}, {{2, 2, 4, 5}, {}, 0},
       {{2, 2, 5, 3}, {}, 0}, 0, 0, {2, 2, 4, 3}, {0, 2, 1, 3}},
  };
  const size_t es = zeroc_rt_dtype_size(dt());
  for (const Case &c : cases) {
    SCOPED_TRACE(c.what);
    Tensor a = random(c.a), b = random(c.b);
    // The CPU's operands: each view copied dense on the host.
    auto dense = [&](const Tensor &src, const View &view) {
      Tensor t(dt(), view.dims);
      for (int64_t i = 0; i < t.size(); ++i) {
        int64_t rest = i, at = view.offset;
        for (size_t d = view.dims.size(); d-- > 0;) {
          at += (rest % view.dims[d]) * view.strides[d];
          rest /= view.dims[d];
        }
        t.set(i, src.get(at));
      }
      return t;
    };
    auto device = [&](Tensor &src, const View &view) {
      zeroc_rt_tensor_t t = *src.gpu();
      t.data = static_cast<char *>(src.deviceData()) + view.offset * es;
      t.rank = static_cast<int32_t>(view.dims.size());
      for (size_t d = 0; d < view.dims.size(); ++d)
        t.dims[d] = view.dims[d];
      return t;
    };
    const bool sa = !c.va.strides.empty(), sb = !c.vb.strides.empty();
    Tensor da = sa ? dense(a, c.va) : Tensor(dt(), {});
    Tensor db = sb ? dense(b, c.vb) : Tensor(dt(), {});
    zeroc_rt_tensor_t ga = sa ? device(a, c.va) : *a.gpu();
    zeroc_rt_tensor_t gb = sb ? device(b, c.vb) : *b.gpu();
    if (c.perm.empty()) {
      Tensor out = output(c.out);
      ASSERT_OK(zeroc_rt_k_matmul_trans(sa ? da.cpu() : a.cpu(), sb ? db.cpu() : b.cpu(),
                                        c.ta, c.tb, out.cpu()));
      ASSERT_GPU_OK(zeroc_rt_cuda_k_matmul_strided(
          &ga, sa ? c.va.strides.data() : nullptr, &gb, sb ? c.vb.strides.data() : nullptr,
          c.ta, c.tb, out.gpu(), nullptr));
      expectClose(out, tol(true), "matmul_strided");
      continue;
    }
    // The CPU's product, transposed by the CPU's kernel, against the
    // product stored transposed at the strides of the transposed tensor.
    Dims stored;
    for (int64_t p : c.perm)
      stored.push_back(c.out[static_cast<size_t>(p)]);
    std::vector<int64_t> strides(c.out.size());
    for (int64_t j = static_cast<int64_t>(stored.size()) - 1, st = 1; j >= 0; --j) {
      strides[static_cast<size_t>(c.perm[static_cast<size_t>(j)])] = st;
      st *= stored[static_cast<size_t>(j)];
    }
    Tensor product = output(c.out), out = output(stored);
    ASSERT_OK(zeroc_rt_k_matmul_trans(sa ? da.cpu() : a.cpu(), sb ? db.cpu() : b.cpu(), c.ta,
                                      c.tb, product.cpu()));
    ASSERT_OK(zeroc_rt_k_transpose(product.cpu(), c.perm.data(), out.cpu()));
    zeroc_rt_tensor_t gout = *out.gpu();
    gout.rank = static_cast<int32_t>(c.out.size());
    for (size_t d = 0; d < c.out.size(); ++d)
      gout.dims[d] = c.out[d];
    ASSERT_GPU_OK(zeroc_rt_cuda_k_matmul_strided(&ga, sa ? c.va.strides.data() : nullptr, &gb,
                                                 sb ? c.vb.strides.data() : nullptr, c.ta, c.tb,
                                                 &gout, strides.data()));
    expectClose(out, tol(true), "matmul_strided (out stored transposed)");
  }
}

/// A strided operand whose last two strides are no matrix's is an error,
/// and so is an out whose strides would leave holes or overlap.
TEST(KernelParityFixed, MatmulStridedNotAMatrix) {
  Rng rng{kSeed};
  Tensor a = randomTensor(F32, {4, 6}, rng), b = randomTensor(F32, {3, 2}, rng);
  Tensor out = outputTensor(F32, {2, 2});
  zeroc_rt_tensor_t ga = *a.gpu();
  ga.dims[0] = 2;
  ga.dims[1] = 3;
  const int64_t strides[] = {6, 2};
  zeroc_rt_status_t status =
      zeroc_rt_cuda_k_matmul_strided(&ga, strides, b.gpu(), nullptr, 0, 0, out.gpu(), nullptr);
  ASSERT_NE(status, nullptr);
  std::string message = takeMessage(status);
  EXPECT_NE(message.find("a's last two strides (6, 2) are not a matrix's"), std::string::npos)
      << message;
  // Two [2, 2] products, the second stored over the first's second row.
  Tensor a2 = randomTensor(F32, {2, 2, 3}, rng), out2 = outputTensor(F32, {2, 2, 2});
  const int64_t overlap[] = {2, 2, 1};
  status = zeroc_rt_cuda_k_matmul_strided(a2.gpu(), nullptr, b.gpu(), nullptr, 0, 0, out2.gpu(),
                                          overlap);
  ASSERT_NE(status, nullptr);
  message = takeMessage(status);
  EXPECT_NE(message.find("out's strides store two elements at one address"), std::string::npos)
      << message;
}

/// A product written with rows padded to a pitch (zero-plan-buffers' row
/// pitch: a language model's logits), and read back as a padded operand,
/// plain and transposed (the head's two gradient GEMMs): the dense
/// products, and the padding untouched.
TEST_P(KernelParity, MatmulPitchedRows) {
  const int64_t m = 6, k = 5, n = 7, pitch = 12;
  Tensor a = random({m, k}), b = random({n, k});
  Tensor want = output({m, n});
  ASSERT_OK(zeroc_rt_k_matmul_trans(a.cpu(), b.cpu(), 0, 1, want.cpu()));
  Tensor padded = output({m, pitch});
  const std::vector<unsigned char> before = padded.deviceCopy();
  zeroc_rt_tensor_t out = *padded.gpu();
  out.dims[1] = n;
  const int64_t rowPitch[] = {pitch, 1};
  ASSERT_GPU_OK(
      zeroc_rt_cuda_k_matmul_strided(a.gpu(), nullptr, b.gpu(), nullptr, 0, 1, &out, rowPitch));
  const std::vector<unsigned char> got = padded.deviceCopy();
  // `dense` holds the GPU's product in both copies (the next products'
  // operand); `want`'s device copy gets it too, against the CPU's.
  Tensor dense(dt(), {m, n});
  const size_t es = zeroc_rt_dtype_size(dt());
  for (int64_t r = 0; r < m; ++r) {
    std::memcpy(static_cast<unsigned char *>(dense.hostData()) + r * n * es,
                got.data() + r * pitch * es, n * es);
    EXPECT_EQ(std::memcmp(got.data() + (r * pitch + n) * es, before.data() + (r * pitch + n) * es,
                          (pitch - n) * es),
              0)
        << "the padding after row " << r << " was written";
  }
  dense.upload();
  ASSERT_GPU_OK(zc::gpuUpload(want.deviceData(), dense.hostData(), dense.bytes()));
  expectClose(want, tol(true), "matmul_strided into padded rows");
  // Read back: [m, n] at the pitch times b ([n, k]), and its transpose
  // times a ([m, k]).
  Tensor back = output({m, k}), backT = output({n, k});
  ASSERT_OK(zeroc_rt_k_matmul_trans(dense.cpu(), b.cpu(), 0, 0, back.cpu()));
  ASSERT_OK(zeroc_rt_k_matmul_trans(dense.cpu(), a.cpu(), 1, 0, backT.cpu()));
  ASSERT_GPU_OK(
      zeroc_rt_cuda_k_matmul_strided(&out, rowPitch, b.gpu(), nullptr, 0, 0, back.gpu(), nullptr));
  ASSERT_GPU_OK(
      zeroc_rt_cuda_k_matmul_strided(&out, rowPitch, a.gpu(), nullptr, 1, 0, backT.gpu(), nullptr));
  expectClose(back, tol(true), "matmul_strided of padded rows");
  expectClose(backT, tol(true), "matmul_strided of padded rows, transposed");
}

TEST_P(KernelParity, Gemm) {
  const int64_t m = 4, k = 6, n = 5;
  struct Case {
    Dims c; // {} with hasC false: no c
    bool hasC;
    double alpha, beta;
  };
  // A bias (c of one row, beta 1; on a GPU in cuBLASLt's epilogue), then
  // other c's broadcast and accumulated.
  const Case cases[] = {{{n}, true, 2.0, 1.0},    {{1, n}, true, 1.0, 1.0},  {{n}, true, 2.0, 0.5},
                        {{m, n}, true, 1.0, 1.0}, {{m, 1}, true, 1.0, -1.0}, {{}, false, 2.0, 0.0}};
  for (int transA = 0; transA < 2; ++transA)
    for (int transB = 0; transB < 2; ++transB)
      for (const Case &c : cases) {
        SCOPED_TRACE("trans_a " + std::to_string(transA) + " trans_b " +
                     std::to_string(transB) + " c " +
                     (c.hasC ? dimsText(c.c) : std::string("none")) + " alpha " +
                     number(c.alpha) + " beta " + number(c.beta));
        Tensor a = random(transA ? Dims{k, m} : Dims{m, k});
        Tensor b = random(transB ? Dims{n, k} : Dims{k, n});
        Tensor cc = random(c.c);
        Tensor out = output({m, n});
        ASSERT_OK(zeroc_rt_k_gemm(a.cpu(), b.cpu(), c.hasC ? cc.cpu() : nullptr, c.alpha,
                                  c.beta, transA, transB, out.cpu()));
        ASSERT_GPU_OK(zeroc_rt_cuda_k_gemm(a.gpu(), b.gpu(), c.hasC ? cc.gpu() : nullptr,
                                           c.alpha, c.beta, transA, transB, out.gpu()));
        expectClose(out, tol(true), "gemm");
      }
}

// A weight gradient's GEMM with its bias gradient: against the CPU's gemm
// and sum_to of the summed operand. On a GPU cuBLASLt's epilogue sums it
// where it has a kernel for the shapes; the emulation runs the two apart.
TEST_P(KernelParity, GemmBiasGrad) {
  struct Case {
    int64_t m, n, k;
    int transA, transB, summed;
    Dims bias;
  };
  const Case cases[] = {{3, 5, 70, 1, 0, 0, {3}},        // gy^T x: a [70, 3] summed
                        {40, 33, 129, 1, 1, 0, {1, 40}}, // with b read transposed
                        {5, 37, 64, 1, 0, 1, {37}},      // x^T gy: b [64, 37] summed
                        {6, 34, 9, 0, 0, 1, {1, 1, 34}}, // a read as stored
                        {4, 7, 0, 1, 0, 0, {4}}};        // k 0: zeros
  for (const Case &c : cases) {
    SCOPED_TRACE("m " + std::to_string(c.m) + " n " + std::to_string(c.n) + " k " +
                 std::to_string(c.k) + " trans_a " + std::to_string(c.transA) + " trans_b " +
                 std::to_string(c.transB) + " summed " + std::to_string(c.summed));
    Tensor a = random(c.transA ? Dims{c.k, c.m} : Dims{c.m, c.k});
    Tensor b = random(c.transB ? Dims{c.n, c.k} : Dims{c.k, c.n});
    Tensor out = output({c.m, c.n}), bias = output(c.bias);
    ASSERT_OK(zeroc_rt_k_gemm(a.cpu(), b.cpu(), nullptr, 1.0, 0.0, c.transA, c.transB, out.cpu()));
    Tensor vector = output({c.summed ? c.n : c.m}); // the CPU's sum_to wants its rank
    ASSERT_OK(zeroc_rt_k_sum_to(c.summed ? b.cpu() : a.cpu(), vector.cpu()));
    std::memcpy(bias.cpu()->data, vector.cpu()->data, bias.bytes());
    ASSERT_GPU_OK(zeroc_rt_cuda_k_gemm_bias_grad(a.gpu(), b.gpu(), c.transA, c.transB, c.summed,
                                                 out.gpu(), bias.gpu()));
    expectClose(out, tol(true), "gemm_bias_grad out");
    expectClose(bias, tol(true), "gemm_bias_grad bias_grad");
  }
  // Whether cuBLASLt had the epilogues (for the Gemm test's biases too):
  // either way the results are checked above; gpu-check.sh shows the line.
  int64_t inEpilogue = 0, apart = 0;
  zc::gemmEpilogueCounts(&inEpilogue, &apart);
  std::printf("gemm epilogues so far (the Gemm and GemmBiasGrad tests, through %s): %lld in "
              "cuBLASLt, %lld apart\n",
              zeroc_rt_dtype_name(dt()), static_cast<long long>(inEpilogue),
              static_cast<long long>(apart));
}

// The bias gradient's operand must be stored [K, L] and the vector have L
// elements: the host checks say which, and nothing runs.
TEST_P(KernelParity, GemmBiasGradErrors) {
  Tensor a = random({8, 3}), rows = random({3, 8}), b = random({8, 5}), out = output({3, 5});
  Tensor bias = output({3}), wrong = output({5}), column = output({3, 1});
  struct Case {
    Tensor *a;
    int transA, summed;
    Tensor *bias;
    const char *message;
  };
  const Case cases[] = {
      {&a, 1, 2, &bias, "gemm_bias_grad: summed must be 0 (a) or 1 (b), got 2"},
      {&rows, 0, 0, &bias,
       "gemm_bias_grad: a is summed over the inner dimension, so it must be "
       "stored [K, L] (a with trans_a, b without trans_b)"},
      {&a, 1, 0, &wrong, "must have the 3 elements of a's columns, in shape [3] or [1, ..., 3]"},
      {&a, 1, 0, &column, "must have the 3 elements of a's columns"}};
  for (const Case &c : cases) {
    zeroc_rt_status_t status = zeroc_rt_cuda_k_gemm_bias_grad(c.a->gpu(), b.gpu(), c.transA, 0,
                                                              c.summed, out.gpu(), c.bias->gpu());
    ASSERT_NE(status, nullptr) << c.message;
    const std::string message = takeMessage(status);
    EXPECT_NE(message.find(c.message), std::string::npos) << message;
  }
}

//===----------------------------------------------------------------------===//
// Reductions and normalizations
//===----------------------------------------------------------------------===//

const std::pair<zeroc_rt_tensor_reduce_op_t, const char *> kReduceOps[] = {
    {ZEROC_RT_REDUCE_OP_SUM, "sum"},
    {ZEROC_RT_REDUCE_OP_MEAN, "mean"},
    {ZEROC_RT_REDUCE_OP_MAX, "max"}};

TEST_P(KernelParity, Reduce) {
  const Dims in{3, 4, 5};
  for (const auto &[op, name] : kReduceOps)
    for (uint32_t mask : {0u, 1u, 2u, 4u, 5u, 6u, 7u})
      for (bool keepdims : {false, true}) {
        Dims outDims;
        for (size_t d = 0; d < in.size(); ++d)
          if (!(mask & (1u << d)))
            outDims.push_back(in[d]);
          else if (keepdims)
            outDims.push_back(1);
        SCOPED_TRACE(std::string(name) + " mask " + std::to_string(mask) + " -> " +
                     dimsText(outDims));
        Tensor x = random(in, -2.0, 2.0);
        Tensor out = output(outDims);
        ASSERT_OK(zeroc_rt_k_reduce(op, x.cpu(), mask, out.cpu()));
        ASSERT_GPU_OK(zeroc_rt_cuda_k_reduce(op, x.gpu(), mask, out.gpu()));
        expectClose(out, tol(true), std::string("reduce ") + name);
      }
}

TEST_P(KernelParity, ReduceDownColumns) {
  const Dims in{4, 130, 35};
  for (const auto &[op, name] : kReduceOps)
    for (uint32_t mask : {1u, 2u, 3u}) {
      Dims outDims;
      for (size_t d = 0; d < in.size(); ++d)
        if (!(mask & (1u << d)))
          outDims.push_back(in[d]);
      SCOPED_TRACE(std::string(name) + " mask " + std::to_string(mask));
      Tensor x = random(in, -2.0, 2.0);
      if (op == ZEROC_RT_REDUCE_OP_MAX) {
        x.set(35 * 77 + 3, kNaN); // a NaN wins its column
        x.upload();
      }
      Tensor out = output(outDims);
      ASSERT_OK(zeroc_rt_k_reduce(op, x.cpu(), mask, out.cpu()));
      ASSERT_GPU_OK(zeroc_rt_cuda_k_reduce(op, x.gpu(), mask, out.gpu()));
      expectClose(out, op == ZEROC_RT_REDUCE_OP_MAX ? kExact : tol(true),
                  std::string("reduce ") + name);
    }
}

TEST_P(KernelParity, ReduceMaxPropagatesNaN) {
  Tensor x = random({3, 4, 5});
  x.set(7, kNaN);
  x.set(30, kNaN);
  x.upload();
  for (uint32_t mask : {1u, 4u, 7u}) {
    SCOPED_TRACE("mask " + std::to_string(mask));
    Dims outDims;
    for (int d = 0; d < 3; ++d)
      if (!(mask & (1u << d)))
        outDims.push_back(x.dims()[d]);
    Tensor out = output(outDims);
    ASSERT_OK(zeroc_rt_k_reduce(ZEROC_RT_REDUCE_OP_MAX, x.cpu(), mask, out.cpu()));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_reduce(ZEROC_RT_REDUCE_OP_MAX, x.gpu(), mask, out.gpu()));
    expectClose(out, kExact, "reduce max");
  }
}

// Rows of 6 and 3 elements, and of 2500: more than the 2048 a block of
// kBlock threads keeps in registers (zeroc_rt_cuda/rows.h's kRowCache), so that both of
// the kernels' paths run with many threads per block (ZEROC_RT_CUDA_EMU_SIMT)
// as with one.
const Dims kSoftmaxShapes[] = {{3, 4, 6}, {2, 2500}};

TEST_P(KernelParity, Softmax) {
  for (const Dims &shape : kSoftmaxShapes) {
    for (int64_t axis : {int64_t{-1}, int64_t{1}, int64_t{0}})
      for (int log : {0, 1}) {
        SCOPED_TRACE(dimsText(shape) + " axis " + std::to_string(axis) +
                     (log ? " log_softmax" : " softmax"));
        Tensor x = random(shape, -5.0, 5.0);
        Tensor y = output(shape);
        ASSERT_OK(zeroc_rt_k_softmax(x.cpu(), axis, log, y.cpu()));
        ASSERT_GPU_OK(zeroc_rt_cuda_k_softmax(x.gpu(), axis, log, y.gpu()));
        expectClose(y, tol(true), "softmax");
      }
  }
}

TEST_P(KernelParity, SoftmaxGrad) {
  for (const Dims &shape : kSoftmaxShapes) {
    for (int64_t axis : {int64_t{-1}, int64_t{1}})
      for (int log : {0, 1}) {
        SCOPED_TRACE(dimsText(shape) + " axis " + std::to_string(axis) +
                     (log ? " log_softmax" : " softmax"));
        Tensor x = random(shape, -3.0, 3.0);
        Tensor y(dt(), shape); // the forward output, from the CPU kernel
        ASSERT_OK(zeroc_rt_k_softmax(x.cpu(), axis, log, y.cpu()));
        y.upload();
        Tensor gy = random(shape);
        Tensor gx = output(shape);
        ASSERT_OK(zeroc_rt_k_softmax_grad(y.cpu(), gy.cpu(), axis, log, gx.cpu()));
        ASSERT_GPU_OK(zeroc_rt_cuda_k_softmax_grad(y.gpu(), gy.gpu(), axis, log, gx.gpu()));
        expectClose(gx, tol(true), "softmax_grad");
      }
  }
}

// [5, 60, 40] at axis 1: rows of 2400, more than a block keeps in registers
// (zeroc_rt_cuda/rows.h's kRowCache); at axis -1 many rows, in several column chunks.
// {2, 4, 768}: GPT-2's rows at axis -1 (96 threads, one 16-byte chunk of
// bf16 or two of f32 each), and at axis 1 rows of 3072, past the cache, in
// chunks. Rows of 6 (axis -1 of {3, 4, 6}) take runs of one element for
// f32, f16 and bf16.
const Dims kLayerNormShapes[] = {{3, 4, 6}, {5, 60, 40}, {2, 4, 768}};

/// The scale's (and bias's) dims of a layer norm of `x` over `axis` (1 or -1).
Dims layerNormParams(const Dims &x, int64_t axis) {
  return axis == 1 ? Dims(x.begin() + 1, x.end()) : Dims{x.back()};
}

TEST_P(KernelParity, LayerNorm) {
  for (const Dims &xDims : kLayerNormShapes) {
    for (int64_t axis : {int64_t{-1}, int64_t{1}})
      for (bool withBias : {true, false}) {
        SCOPED_TRACE(dimsText(xDims) + " axis " + std::to_string(axis) +
                     (withBias ? " bias" : " no bias"));
        const Dims params = layerNormParams(xDims, axis);
        Tensor x = random(xDims, 1.0, 3.0); // a mean far from 0
        Tensor scale = random(params, 0.5, 1.5), bias = random(params);
        Tensor y = output(xDims);
        const double eps = 1e-5;
        ASSERT_OK(zeroc_rt_k_layer_norm(x.cpu(), scale.cpu(), withBias ? bias.cpu() : nullptr,
                                        axis, eps, y.cpu()));
        ASSERT_GPU_OK(zeroc_rt_cuda_k_layer_norm(x.gpu(), scale.gpu(),
                                                 withBias ? bias.gpu() : nullptr, axis, eps,
                                                 y.gpu()));
        expectClose(y, tol(true), "layer_norm");
      }
  }
}

TEST_P(KernelParity, LayerNormGrad) {
  // {1, 520, 8}: more rows than the gradient's blocks (512), so that a
  // block sums two rows into its partials.
  std::vector<Dims> shapes(std::begin(kLayerNormShapes), std::end(kLayerNormShapes));
  shapes.push_back({1, 520, 8});
  for (const Dims &xDims : shapes) {
    // The add's variant on kLayerNormShapes (many-thread emulation is slow).
    const bool withAdd =
        &xDims - shapes.data() < static_cast<std::ptrdiff_t>(std::size(kLayerNormShapes));
    for (int64_t axis : {int64_t{-1}, int64_t{1}})
      for (bool withBias : {true, false}) {
        SCOPED_TRACE(dimsText(xDims) + " axis " + std::to_string(axis) +
                     (withBias ? " grad_bias" : " no grad_bias"));
        const Dims params = layerNormParams(xDims, axis);
        Tensor x = random(xDims, 1.0, 3.0);
        Tensor scale = random(params, 0.5, 1.5);
        Tensor gy = random(xDims);
        Tensor gx = output(xDims), gscale = output(params), gbias = output(params);
        const double eps = 1e-5;
        ASSERT_OK(zeroc_rt_k_layer_norm_grad(x.cpu(), scale.cpu(), axis, eps, gy.cpu(), gx.cpu(),
                                             gscale.cpu(), withBias ? gbias.cpu() : nullptr));
        ASSERT_GPU_OK(zeroc_rt_cuda_k_layer_norm_grad(x.gpu(), scale.gpu(), axis, eps, gy.gpu(),
                                                      gx.gpu(), gscale.gpu(),
                                                      withBias ? gbias.gpu() : nullptr));
        expectClose(gx, tol(true), "layer_norm_grad grad_x");
        expectClose(gscale, tol(true), "layer_norm_grad grad_scale");
        expectClose(gbias, tol(true), "layer_norm_grad grad_bias"); // the sentinel without

        // grad_x added to another gradient as it is written: the bits of
        // layer_norm_grad then binary add, and the same parameter gradients.
        if (!withAdd)
          continue;
        // (Its own generator: the cases after this one keep their inputs.)
        Rng addendRng(kSeed + 1);
        Tensor addend = randomTensor(GetParam(), xDims, addendRng);
        Tensor added = output(xDims), sum = output(xDims);
        Tensor gscale2 = output(params), gbias2 = output(params);
        ASSERT_GPU_OK(zeroc_rt_cuda_k_binary(ZEROC_RT_BINARY_ADD, addend.gpu(), gx.gpu(),
                                             added.gpu()));
        ASSERT_GPU_OK(zeroc_rt_cuda_k_layer_norm_grad_add(
            x.gpu(), scale.gpu(), axis, eps, gy.gpu(), addend.gpu(), sum.gpu(), gscale2.gpu(),
            withBias ? gbias2.gpu() : nullptr));
        EXPECT_TRUE(sum.deviceCopy() == added.deviceCopy())
            << "layer_norm_grad_add: the sum's bits differ from layer_norm_grad then add";
        EXPECT_TRUE(gscale2.deviceCopy() == gscale.deviceCopy())
            << "layer_norm_grad_add: grad_scale differs from layer_norm_grad's";
        if (withBias) {
          EXPECT_TRUE(gbias2.deviceCopy() == gbias.deviceCopy())
              << "layer_norm_grad_add: grad_bias differs from layer_norm_grad's";
        }
      }
  }
}

TEST_P(KernelParity, SoftmaxCrossEntropy) {
  struct Shape {
    Dims scores, labels;
  };
  const Shape shapes[] = {{{6, 5}, {6}}, {{3, 5, 4}, {3, 4}}};
  struct Ignore {
    int has;
    int64_t index;
  };
  const Ignore ignores[] = {{0, 0}, {1, -100}, {1, 2}};
  const std::pair<zeroc_rt_loss_reduction_t, const char *> reductions[] = {
      {ZEROC_RT_LOSS_MEAN, "mean"}, {ZEROC_RT_LOSS_SUM, "sum"}, {ZEROC_RT_LOSS_NONE, "none"}};
  for (const Shape &shape : shapes)
    for (zeroc_rt_dtype_t labelType : {I64, I32})
      for (const Ignore &ignore : ignores)
        for (const auto &[reduction, name] : reductions) {
          SCOPED_TRACE(std::string(name) + " scores " + dimsText(shape.scores) + " labels " +
                       zeroc_rt_dtype_name(labelType) +
                       (ignore.has ? " ignore " + std::to_string(ignore.index)
                                   : std::string(" no ignore")));
          const int64_t classes = shape.scores[1];
          std::uniform_int_distribution<int64_t> label(0, classes - 1);
          std::vector<int64_t> labels(static_cast<size_t>(numel(shape.labels)));
          for (int64_t &l : labels)
            l = label(rng);
          if (ignore.has) // some labels are ignore_index
            labels[1] = labels[labels.size() - 1] = ignore.index;
          Tensor lab = intTensor(labelType, shape.labels, labels);
          Tensor scores = random(shape.scores, -3.0, 3.0);
          const Dims lossDims = reduction == ZEROC_RT_LOSS_NONE ? shape.labels : Dims{};
          Tensor loss = output(lossDims);
          ASSERT_OK(zeroc_rt_k_softmax_cross_entropy(scores.cpu(), lab.cpu(), reduction,
                                                     ignore.has, ignore.index, loss.cpu()));
          ASSERT_GPU_OK(zeroc_rt_cuda_k_softmax_cross_entropy(
              scores.gpu(), lab.gpu(), reduction, ignore.has, ignore.index, loss.gpu()));
          expectClose(loss, tol(true), "softmax_cross_entropy");

          Tensor gout = random(lossDims, 0.5, 2.0);
          Tensor gscores = output(shape.scores);
          ASSERT_OK(zeroc_rt_k_softmax_cross_entropy_grad(scores.cpu(), lab.cpu(), reduction,
                                                          ignore.has, ignore.index, gout.cpu(),
                                                          gscores.cpu()));
          ASSERT_GPU_OK(zeroc_rt_cuda_k_softmax_cross_entropy_grad(
              scores.gpu(), lab.gpu(), reduction, ignore.has, ignore.index, gout.gpu(),
              gscores.gpu()));
          expectClose(gscores, tol(true), "softmax_cross_entropy_grad");

          // Both in one pass: the gradient has the two kernels' bits; the
          // loss is close to the CPU's (its sum's order is the atomics').
          Tensor fusedLoss = output(lossDims), fusedGrad = output(shape.scores);
          ASSERT_OK(zeroc_rt_k_softmax_cross_entropy(scores.cpu(), lab.cpu(), reduction,
                                                     ignore.has, ignore.index, fusedLoss.cpu()));
          ASSERT_GPU_OK(zeroc_rt_cuda_k_softmax_cross_entropy_with_grad(
              scores.gpu(), lab.gpu(), reduction, ignore.has, ignore.index, gout.gpu(),
              fusedLoss.gpu(), fusedGrad.gpu()));
          expectClose(fusedLoss, tol(true), "softmax_cross_entropy_with_grad loss");
          EXPECT_TRUE(fusedGrad.deviceCopy() == gscores.deviceCopy())
              << "softmax_cross_entropy_with_grad: the gradient's bits differ from "
                 "softmax_cross_entropy_grad's";
        }
}

/// Rows stored at a pitch (zero-plan-buffers' row pitch: a language
/// model's logits with rows padded to 16 bytes): the loss and every row of
/// the gradient are close to the dense kernel's, and the
/// elements between a row's end and the next row are neither read (they
/// hold NaN) nor written. Both with the gradient over the scores, as the
/// plan writes it, and into a tensor of its own.
TEST_P(KernelParity, SoftmaxCrossEntropyPitched) {
  Rng rng{kSeed};
  const int64_t rows = 7;
  for (int64_t classes : {5, 61, 133})
    for (int64_t pad : {0, 3, 8}) {
      const int64_t pitch = classes + pad;
      SCOPED_TRACE("classes " + std::to_string(classes) + " pitch " + std::to_string(pitch));
      std::uniform_int_distribution<int64_t> label(0, classes - 1);
      std::vector<int64_t> labels(static_cast<size_t>(rows));
      for (int64_t &l : labels)
        l = label(rng);
      labels[2] = -100; // ignored
      Tensor lab = intTensor(I64, {rows}, labels);
      Tensor scores = random({rows, classes}, -3.0, 3.0);
      Tensor gout = random({}, 0.5, 2.0);
      Tensor loss = output({}), grad = output({rows, classes});
      ASSERT_GPU_OK(zeroc_rt_cuda_k_softmax_cross_entropy_with_grad(
          scores.gpu(), lab.gpu(), ZEROC_RT_LOSS_MEAN, 1, -100, gout.gpu(), loss.gpu(),
          grad.gpu()));
      const std::vector<unsigned char> dense = grad.deviceCopy();
      const size_t es = zeroc_rt_dtype_size(dt()), row = static_cast<size_t>(classes) * es;
      for (bool over : {true, false}) {
        SCOPED_TRACE(over ? "gradient over the scores" : "gradient apart");
        // The pitched scores: each row, then NaN up to the next.
        Tensor stored(dt(), {rows, pitch});
        for (int64_t i = 0; i < stored.size(); ++i)
          stored.set(i, std::nan(""));
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < classes; ++c)
            stored.set(r * pitch + c, scores.get(r * classes + c));
        stored.upload();
        Tensor apart = outputTensor(dt(), {rows, pitch});
        const std::vector<unsigned char> before = (over ? stored : apart).deviceCopy();
        zeroc_rt_tensor_t s = *stored.gpu(), g = *(over ? stored : apart).gpu();
        s.dims[1] = g.dims[1] = classes;
        Tensor pitchedLoss = output({});
        ASSERT_GPU_OK(zeroc_rt_cuda_k_softmax_cross_entropy_pitched(
            &s, lab.gpu(), ZEROC_RT_LOSS_MEAN, 1, -100, gout.gpu(), pitchedLoss.gpu(), &g, pitch));
        const std::vector<unsigned char> got = (over ? stored : apart).deviceCopy(),
                                         lossWant = loss.deviceCopy(),
                                         lossGot = pitchedLoss.deviceCopy();
        // The loss sums its rows by atomics, in any order.
        EXPECT_TRUE(close(decodeElement(dt(), lossGot.data(), 0),
                          decodeElement(dt(), lossWant.data(), 0), tol(true)))
            << "the loss differs from the dense rows'";
        // The loss alone and the gradient alone (the unfused program's two
        // ops), from the same padded scores: the fused call's bits.
        if (!over) {
          Tensor lossAlone = output({}), gradAlone = outputTensor(dt(), {rows, pitch});
          zeroc_rt_tensor_t ga = *gradAlone.gpu();
          ga.dims[1] = classes;
          ASSERT_GPU_OK(zeroc_rt_cuda_k_softmax_cross_entropy_pitched(
              &s, lab.gpu(), ZEROC_RT_LOSS_MEAN, 1, -100, nullptr, lossAlone.gpu(), nullptr,
              pitch));
          ASSERT_GPU_OK(zeroc_rt_cuda_k_softmax_cross_entropy_pitched(
              &s, lab.gpu(), ZEROC_RT_LOSS_MEAN, 1, -100, gout.gpu(), nullptr, &ga, pitch));
          EXPECT_TRUE(gradAlone.deviceCopy() == got)
              << "the gradient alone differs from the fused call's";
          EXPECT_TRUE(close(decodeElement(dt(), lossAlone.deviceCopy().data(), 0),
                            decodeElement(dt(), lossGot.data(), 0), tol(true)))
              << "the loss alone differs from the fused call's";
        }
        for (int64_t r = 0; r < rows; ++r) {
          const size_t at = static_cast<size_t>(r * pitch) * es;
          // Close, not equal: an aligned row is summed in other runs.
          int64_t bad = 0;
          for (int64_t c = 0; c < classes; ++c)
            bad += !close(decodeElement(dt(), got.data(), r * pitch + c),
                          decodeElement(dt(), dense.data(), r * classes + c), tol(true));
          EXPECT_EQ(bad, 0) << "row " << r << " of the gradient differs from the dense rows'";
          if (pad > 0 && r + 1 < rows) {
            EXPECT_EQ(std::memcmp(got.data() + at + row, before.data() + at + row,
                                  static_cast<size_t>(pad) * es),
                      0)
                << "the padding after row " << r << " was written";
          }
        }
      }
    }
  // A pitch shorter than a row, or of scores of another rank, is an error.
  Tensor lab = intTensor(I64, {2}, {0, 1});
  Tensor scores = random({2, 4}), gout = random({}), loss = output({}), grad = output({2, 4});
  zeroc_rt_status_t status = zeroc_rt_cuda_k_softmax_cross_entropy_pitched(
      scores.gpu(), lab.gpu(), ZEROC_RT_LOSS_MEAN, 0, 0, gout.gpu(), loss.gpu(), grad.gpu(), 3);
  ASSERT_NE(status, nullptr);
  const std::string message = takeMessage(status);
  EXPECT_NE(message.find("a row pitch of 3 needs rank-2 scores of at most that many classes"),
            std::string::npos)
      << message;
}

/// Scores of `rows` rows of `cols` with -inf where a causal mask or a
/// padded vocabulary puts it: row 0 masks every element a thread of a
/// kBlock-thread block strides over from 5 (that thread's max stays -inf
/// in the one-pass max and sum, rows.h's rowMaxAndSum), row 1 all but
/// element 7, the rest their second half; row `rows - 1` is all -inf when
/// `allMasked`.
Tensor maskedScores(zeroc_rt_dtype_t dtype, int64_t rows, int64_t cols, Rng &rng,
                    bool allMasked) {
  Tensor x = randomTensor(dtype, {rows, cols}, rng, -5.0, 5.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const bool masked = r == 0   ? c % 256 == 5
                          : r == 1 ? c != 7
                                   : c >= cols / 2 || (allMasked && r == rows - 1);
      if (masked)
        x.set(r * cols + c, -kInf);
    }
  x.upload();
  return x;
}

// Rows of 300 (in the register cache) and 3000 (past it: the one-pass max
// and sum) with masked elements: softmax gives them 0 and the others what
// the CPU kernel gives; an all -inf row is NaN in both.
TEST_P(KernelParity, SoftmaxMaskedRows) {
  for (int64_t cols : {int64_t{300}, int64_t{3000}})
    for (int log : {0, 1}) {
      SCOPED_TRACE(std::to_string(cols) + (log ? " log_softmax" : " softmax"));
      Tensor x = maskedScores(dt(), 4, cols, rng, /*allMasked=*/true);
      Tensor y = output({4, cols});
      ASSERT_OK(zeroc_rt_k_softmax(x.cpu(), -1, log, y.cpu()));
      ASSERT_GPU_OK(zeroc_rt_cuda_k_softmax(x.gpu(), -1, log, y.gpu()));
      expectClose(y, tol(true), "softmax");
    }
}

// A vocabulary of 3000 with masked (-inf) classes, none of them a label:
// the loss and its gradient as the CPU kernels give them.
TEST_P(KernelParity, SoftmaxCrossEntropyMaskedClasses) {
  const int64_t rows = 4, classes = 3000;
  Tensor scores = maskedScores(dt(), rows, classes, rng, /*allMasked=*/false);
  Tensor lab = intTensor(I64, {rows}, {6, 7, 3, 1000});
  Tensor loss = output({rows});
  ASSERT_OK(zeroc_rt_k_softmax_cross_entropy(scores.cpu(), lab.cpu(), ZEROC_RT_LOSS_NONE, 0, 0,
                                             loss.cpu()));
  ASSERT_GPU_OK(zeroc_rt_cuda_k_softmax_cross_entropy(scores.gpu(), lab.gpu(),
                                                      ZEROC_RT_LOSS_NONE, 0, 0, loss.gpu()));
  expectClose(loss, tol(true), "softmax_cross_entropy");
  Tensor gout = random({rows}, 0.5, 2.0);
  Tensor gscores = output({rows, classes});
  ASSERT_OK(zeroc_rt_k_softmax_cross_entropy_grad(scores.cpu(), lab.cpu(), ZEROC_RT_LOSS_NONE, 0,
                                                  0, gout.cpu(), gscores.cpu()));
  ASSERT_GPU_OK(zeroc_rt_cuda_k_softmax_cross_entropy_grad(scores.gpu(), lab.gpu(),
                                                           ZEROC_RT_LOSS_NONE, 0, 0, gout.gpu(),
                                                           gscores.gpu()));
  expectClose(gscores, tol(true), "softmax_cross_entropy_grad");
}

/// `t`'s descriptor from its element `offset` on, as a tensor of `dims`
/// (the CPU's when `cpu`, else the device's).
zeroc_rt_tensor_t viewAt(const Tensor &t, int64_t offset, const Dims &dims, bool cpu) {
  zeroc_rt_tensor_t d = cpu ? *t.cpu() : *t.gpu();
  d.data = static_cast<char *>(d.data) + offset * zeroc_rt_dtype_size(t.dtype());
  d.rank = static_cast<int32_t>(dims.size());
  for (size_t i = 0; i < dims.size(); ++i)
    d.dims[i] = dims[i];
  return d;
}

// Rows of 1003 classes (odd, so each row starts at another offset from a
// 16-byte boundary): the kernel reads each row's first elements one at a
// time, then 16-byte chunks, then the rest. Scores at the start of their
// storage (the gradient's rows then share their boundaries and are
// written a chunk at a time too), and one element in (the gradient is
// then written an element at a time): the CPU kernels' loss and gradient.
// Rows of 40,001 take blocks of 1024 threads (crossEntropyThreads).
TEST_P(KernelParity, SoftmaxCrossEntropyLongRows) {
  struct Case {
    int64_t rows, classes;
    std::vector<int64_t> labels;
  };
  const Case cases[] = {{5, 1003, {0, 1002, 500, 7, 999}}, {2, 40001, {40000, 3}}};
  for (const Case &c : cases) {
    const Dims dims{c.rows, c.classes};
    Tensor lab = intTensor(I64, {c.rows}, c.labels);
    Tensor storage = random({c.rows * c.classes + 1}, -3.0, 3.0);
    for (int64_t offset : {int64_t{0}, int64_t{1}}) {
      SCOPED_TRACE(std::to_string(c.classes) + " classes, scores at element " +
                   std::to_string(offset));
      const zeroc_rt_tensor_t cpuScores = viewAt(storage, offset, dims, true);
      const zeroc_rt_tensor_t gpuScores = viewAt(storage, offset, dims, false);
      Tensor loss = output({}), gout = random({}, 0.5, 2.0), gscores = output(dims);
      ASSERT_OK(zeroc_rt_k_softmax_cross_entropy(&cpuScores, lab.cpu(), ZEROC_RT_LOSS_MEAN, 0, 0,
                                                 loss.cpu()));
      ASSERT_OK(zeroc_rt_k_softmax_cross_entropy_grad(&cpuScores, lab.cpu(), ZEROC_RT_LOSS_MEAN, 0,
                                                      0, gout.cpu(), gscores.cpu()));
      ASSERT_GPU_OK(zeroc_rt_cuda_k_softmax_cross_entropy_with_grad(
          &gpuScores, lab.gpu(), ZEROC_RT_LOSS_MEAN, 0, 0, gout.gpu(), loss.gpu(), gscores.gpu()));
      expectClose(loss, tol(true), "softmax_cross_entropy_with_grad loss");
      expectClose(gscores, tol(true), "softmax_cross_entropy_with_grad gradient");
    }
  }
}

// The gradient written over the scores (zero-plan-buffers does so when
// nothing reads the scores after the fused op): the same loss and gradient
// as the CPU kernels give, the scores at element 0 and 1 of their storage.
TEST_P(KernelParity, SoftmaxCrossEntropyGradientOverScores) {
  const int64_t rows = 5, classes = 1003;
  const Dims dims{rows, classes};
  Tensor lab = intTensor(I64, {rows}, {0, 1002, 500, 7, 999});
  for (int64_t offset : {int64_t{0}, int64_t{1}}) {
    SCOPED_TRACE("scores at element " + std::to_string(offset));
    Tensor storage = random({rows * classes + 1}, -3.0, 3.0);
    const zeroc_rt_tensor_t cpuScores = viewAt(storage, offset, dims, true);
    const zeroc_rt_tensor_t gpuScores = viewAt(storage, offset, dims, false);
    Tensor loss = output({}), gout = random({}, 0.5, 2.0), expected = output(dims);
    ASSERT_OK(zeroc_rt_k_softmax_cross_entropy(&cpuScores, lab.cpu(), ZEROC_RT_LOSS_MEAN, 0, 0,
                                               loss.cpu()));
    ASSERT_OK(zeroc_rt_k_softmax_cross_entropy_grad(&cpuScores, lab.cpu(), ZEROC_RT_LOSS_MEAN, 0, 0,
                                                    gout.cpu(), expected.cpu()));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_softmax_cross_entropy_with_grad(
        &gpuScores, lab.gpu(), ZEROC_RT_LOSS_MEAN, 0, 0, gout.gpu(), loss.gpu(), &gpuScores));
    expectClose(loss, tol(true), "softmax_cross_entropy_with_grad loss");
    // The storage's host side now holds what its device side should.
    std::memcpy(static_cast<char *>(storage.hostData()) + offset * zeroc_rt_dtype_size(dt()),
                expected.hostData(), expected.bytes());
    expectClose(storage, tol(true), "softmax_cross_entropy_with_grad gradient over the scores");
  }
}

// Rows of 768 (a multiple of a chunk) from element 1 of x's storage, which
// is not 16-byte aligned: the layer norm and its gradient then read and
// write single elements (dispatchRuns). Rows of 2501 do for every dtype,
// past the register cache. Both as the CPU kernels give them.
TEST_P(KernelParity, LayerNormSingleElementRuns) {
  struct Case {
    int64_t rows, cols, offset;
  };
  const Case cases[] = {{3, 768, 1}, {2, 2501, 0}};
  for (const Case &c : cases) {
    SCOPED_TRACE(std::to_string(c.cols) + " columns, x at element " + std::to_string(c.offset));
    const Dims dims{c.rows, c.cols}, params{c.cols};
    const double eps = 1e-5;
    Tensor storage = random({c.rows * c.cols + 1}, 1.0, 3.0);
    const zeroc_rt_tensor_t cpuX = viewAt(storage, c.offset, dims, true);
    const zeroc_rt_tensor_t gpuX = viewAt(storage, c.offset, dims, false);
    Tensor scale = random(params, 0.5, 1.5), bias = random(params), y = output(dims);
    ASSERT_OK(zeroc_rt_k_layer_norm(&cpuX, scale.cpu(), bias.cpu(), -1, eps, y.cpu()));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_layer_norm(&gpuX, scale.gpu(), bias.gpu(), -1, eps, y.gpu()));
    expectClose(y, tol(true), "layer_norm");
    Tensor gy = random(dims), gx = output(dims), gscale = output(params), gbias = output(params);
    ASSERT_OK(zeroc_rt_k_layer_norm_grad(&cpuX, scale.cpu(), -1, eps, gy.cpu(), gx.cpu(),
                                         gscale.cpu(), gbias.cpu()));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_layer_norm_grad(&gpuX, scale.gpu(), -1, eps, gy.gpu(), gx.gpu(),
                                                  gscale.gpu(), gbias.gpu()));
    expectClose(gx, tol(true), "layer_norm_grad grad_x");
    expectClose(gscale, tol(true), "layer_norm_grad grad_scale");
    expectClose(gbias, tol(true), "layer_norm_grad grad_bias");
  }
}

TEST_P(KernelParity, SoftmaxCrossEntropyAllIgnored) {
  // A mean over zero labels is 0, and so is its gradient.
  Tensor lab = intTensor(I64, {4}, {-1, -1, -1, -1});
  Tensor scores = random({4, 3});
  Tensor loss = output({});
  ASSERT_OK(zeroc_rt_k_softmax_cross_entropy(scores.cpu(), lab.cpu(), ZEROC_RT_LOSS_MEAN, 1, -1,
                                             loss.cpu()));
  ASSERT_GPU_OK(zeroc_rt_cuda_k_softmax_cross_entropy(scores.gpu(), lab.gpu(),
                                                      ZEROC_RT_LOSS_MEAN, 1, -1, loss.gpu()));
  expectClose(loss, kExact, "softmax_cross_entropy");
  EXPECT_EQ(loss.get(0), 0.0);
  Tensor gout = random({}, 0.5, 2.0);
  Tensor gscores = output({4, 3});
  ASSERT_OK(zeroc_rt_k_softmax_cross_entropy_grad(scores.cpu(), lab.cpu(), ZEROC_RT_LOSS_MEAN, 1,
                                                  -1, gout.cpu(), gscores.cpu()));
  ASSERT_GPU_OK(zeroc_rt_cuda_k_softmax_cross_entropy_grad(
      scores.gpu(), lab.gpu(), ZEROC_RT_LOSS_MEAN, 1, -1, gout.gpu(), gscores.gpu()));
  expectClose(gscores, kExact, "softmax_cross_entropy_grad");
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

TEST_P(KernelParity, CopyAndZero) {
  for (const Dims &to : {Dims{12}, Dims{2, 6}, Dims{3, 4}}) {
    SCOPED_TRACE("copy [3,4] -> " + dimsText(to));
    Tensor in = random({3, 4});
    Tensor out = output(to);
    ASSERT_OK(zeroc_rt_k_copy(in.cpu(), out.cpu()));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_copy(in.gpu(), out.gpu()));
    expectClose(out, kExact, "copy");
  }
  Tensor z = output({5, 7});
  ASSERT_OK(zeroc_rt_k_zero(z.cpu()));
  ASSERT_GPU_OK(zeroc_rt_cuda_k_zero(z.gpu()));
  expectClose(z, kExact, "zero");
}

/// A gather's or gather_grad's data shape, indices and axis.
struct GatherCase {
  Dims data;
  zeroc_rt_dtype_t indexType;
  Dims indexDims;
  std::vector<int64_t> indices;
  int64_t axis;
  Dims out;
};

TEST_P(KernelParity, Gather) {
  const GatherCase cases[] = {
      // Embedding-style rows, negative indices from the end.
      {{10, 4}, I64, {2, 3}, {0, 9, -1, 3, -10, 3}, 0, {2, 3, 4}},
      {{3, 5, 2}, I32, {4}, {4, 0, -2, 1}, 1, {3, 4, 2}},
      {{3, 5}, I64, {}, {2}, -1, {3}}, // a scalar index
  };
  for (const GatherCase &c : cases) {
    SCOPED_TRACE(dimsText(c.data) + " axis " + std::to_string(c.axis));
    Tensor data = random(c.data);
    Tensor idx = intTensor(c.indexType, c.indexDims, c.indices);
    Tensor out = output(c.out);
    ASSERT_OK(zeroc_rt_k_gather(data.cpu(), idx.cpu(), c.axis, out.cpu()));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_gather(data.gpu(), idx.gpu(), c.axis, out.gpu()));
    expectClose(out, kExact, "gather");
  }
}

TEST_P(KernelParity, GatherGrad) {
  const GatherCase cases[] = {
      // Repeated rows (1 three times, 7 as 7 and -3) accumulate.
      {{10, 4}, I64, {2, 3}, {1, 1, 7, -3, 1, 0}, 0, {2, 3, 4}},
      {{3, 4, 2}, I32, {5}, {0, 2, 2, -1, 2}, 1, {3, 5, 2}},
  };
  for (const GatherCase &c : cases) {
    SCOPED_TRACE(dimsText(c.data) + " axis " + std::to_string(c.axis));
    Tensor gout = random(c.out);
    Tensor idx = intTensor(c.indexType, c.indexDims, c.indices);
    Tensor gdata = output(c.data);
    ASSERT_OK(zeroc_rt_k_gather_grad(gout.cpu(), idx.cpu(), c.axis, gdata.cpu()));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_gather_grad(gout.gpu(), idx.gpu(), c.axis, gdata.gpu()));
    expectClose(gdata, tol(true), "gather_grad");
    if (dt() != ZEROC_RT_DTYPE_F16 && dt() != ZEROC_RT_DTYPE_BF16)
      continue;
    // Summed into an f32 grad_data (zero-widen-gather-grad), no scratch.
    Tensor wide = outputTensor(ZEROC_RT_DTYPE_F32, c.data);
    ASSERT_OK(zeroc_rt_k_gather_grad(gout.cpu(), idx.cpu(), c.axis, wide.cpu()));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_gather_grad(gout.gpu(), idx.gpu(), c.axis, wide.gpu()));
    expectClose(wide, tolOf(ZEROC_RT_DTYPE_F32, true), "gather_grad into f32");
    // The dtypes are read after the operands are checked: a missing one is
    // an error, not a crash.
    zeroc_rt_status_t status = zeroc_rt_cuda_k_gather_grad(nullptr, idx.gpu(), c.axis, wide.gpu());
    ASSERT_NE(status, nullptr);
    const std::string message = takeMessage(status);
    EXPECT_NE(message.find("grad_out"), std::string::npos) << message;
  }
}

TEST_P(KernelParity, Transpose) {
  struct Case {
    Dims in;
    std::vector<int64_t> perm;
  };
  const Case cases[] = {{{2, 3, 4}, {2, 0, 1}},
                        {{2, 3, 4}, {0, 1, 2}},
                        {{2, 3, 4, 5}, {3, 1, 0, 2}},
                        {{2, 3, 4, 5}, {0, 2, 1, 3}}};
  for (const Case &c : cases) {
    Dims outDims;
    for (int64_t p : c.perm)
      outDims.push_back(c.in[static_cast<size_t>(p)]);
    SCOPED_TRACE(dimsText(c.in) + " perm " + dimsText(c.perm));
    Tensor in = random(c.in);
    Tensor out = output(outDims);
    ASSERT_OK(zeroc_rt_k_transpose(in.cpu(), c.perm.data(), out.cpu()));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_transpose(in.gpu(), c.perm.data(), out.gpu()));
    expectClose(out, kExact, "transpose");
  }
}

/// Slices of a (5, 6, 4) tensor: starts, steps (some negative) and counts.
struct SliceCase {
  std::vector<int64_t> starts, steps;
  Dims out;
};
const Dims kSliceIn{5, 6, 4};
const SliceCase kSliceCases[] = {
    {{4, 1, 0}, {-2, 2, 1}, {3, 3, 4}},
    {{0, 5, 3}, {1, -1, -3}, {5, 6, 2}},
    {{2, 0, 1}, {1, 3, 2}, {3, 2, 2}},
};

TEST_P(KernelParity, Slice) {
  for (const SliceCase &c : kSliceCases) {
    SCOPED_TRACE("starts " + dimsText(c.starts) + " steps " + dimsText(c.steps));
    Tensor in = random(kSliceIn);
    Tensor out = output(c.out);
    ASSERT_OK(zeroc_rt_k_slice(in.cpu(), c.starts.data(), c.steps.data(), out.cpu()));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_slice(in.gpu(), c.starts.data(), c.steps.data(), out.gpu()));
    expectClose(out, kExact, "slice");
  }
}

TEST_P(KernelParity, SliceGrad) {
  for (const SliceCase &c : kSliceCases) {
    SCOPED_TRACE("starts " + dimsText(c.starts) + " steps " + dimsText(c.steps));
    Tensor gout = random(c.out);
    Tensor gin = output(kSliceIn);
    ASSERT_OK(zeroc_rt_k_slice_grad(gout.cpu(), c.starts.data(), c.steps.data(), gin.cpu()));
    ASSERT_GPU_OK(
        zeroc_rt_cuda_k_slice_grad(gout.gpu(), c.starts.data(), c.steps.data(), gin.gpu()));
    expectClose(gin, kExact, "slice_grad");
  }
}

//===----------------------------------------------------------------------===//
// Flat-buffer kernels of the engine and the optimizer step
//===----------------------------------------------------------------------===//

constexpr int64_t kFlat = 1000;

TEST_P(KernelParity, Accumulate) {
  Tensor x = random({kFlat}), acc = random({kFlat});
  ASSERT_OK(zeroc_rt_k_accumulate(dt(), x.hostData(), acc.hostData(), kFlat));
  ASSERT_GPU_OK(zeroc_rt_cuda_k_accumulate(dt(), x.deviceData(), acc.deviceData(), kFlat));
  expectClose(acc, tol(), "accumulate");
}

TEST(KernelParityFixed, AccumulateWidening) {
  Rng rng(kSeed);
  const std::pair<zeroc_rt_dtype_t, zeroc_rt_dtype_t> pairs[] = {
      {BF16, F32}, {F16, F32}, {F32, F64}, {F16, F16}};
  for (const auto &[from, to] : pairs) {
    SCOPED_TRACE(std::string(zeroc_rt_dtype_name(from)) + " -> " + zeroc_rt_dtype_name(to));
    Tensor x = randomTensor(from, {kFlat}, rng, -4.0, 4.0);
    Tensor acc = randomTensor(to, {kFlat}, rng, -100.0, 100.0);
    ASSERT_OK(zeroc_rt_k_accumulate_widening(from, x.hostData(), to, acc.hostData(), kFlat));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_accumulate_widening(from, x.deviceData(), to,
                                                      acc.deviceData(), kFlat));
    expectClose(acc, tolOf(to), "accumulate_widening");
  }
}

TEST_P(KernelParity, Scale) {
  for (double factor : {0.37, 1.0, -3.0, 0.0}) {
    SCOPED_TRACE("factor " + number(factor));
    Tensor x = random({kFlat}, -2.0, 2.0);
    ASSERT_OK(zeroc_rt_k_scale(dt(), x.hostData(), kFlat, factor));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_scale(dt(), x.deviceData(), kFlat, factor));
    expectClose(x, tol(), "scale");
  }
}

TEST(KernelParityFixed, Convert) {
  Rng rng(kSeed);
  struct Case {
    zeroc_rt_dtype_t from, to;
    double factor;
  };
  const Case cases[] = {{F32, BF16, 0.125},      {F32, BF16, 1.0 / 3.0},
                        {F32, F16, 1.0 / 1024.0}, {F32, F16, 1.0},
                        {BF16, F32, 8.0},         {F16, F32, 1.0 / 65536.0},
                        {F32, F32, 0.3},          {F64, F32, 1.0},
                        {F32, F64, 0.7}};
  for (const Case &c : cases) {
    SCOPED_TRACE(std::string(zeroc_rt_dtype_name(c.from)) + " -> " +
                 zeroc_rt_dtype_name(c.to) + " factor " + number(c.factor));
    Tensor src = randomTensor(c.from, {kFlat}, rng, -4.0, 4.0);
    Tensor dst = outputTensor(c.to, {kFlat});
    ASSERT_OK(zeroc_rt_k_convert(c.from, src.hostData(), c.to, dst.hostData(), kFlat, c.factor));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_convert(c.from, src.deviceData(), c.to, dst.deviceData(),
                                          kFlat, c.factor));
    expectClose(dst, tolOf(c.to), "convert");
  }
}

TEST_P(KernelParity, SumSquares) {
  for (int64_t n : {kFlat, int64_t{1}, int64_t{0}}) {
    SCOPED_TRACE("n " + std::to_string(n));
    Tensor x = random({n}, -3.0, 3.0);
    double cpu = -1.0, gpu = -2.0;
    ASSERT_OK(zeroc_rt_k_sum_squares(dt(), x.hostData(), n, &cpu));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_sum_squares(dt(), x.deviceData(), n, &gpu));
    // Both accumulate in double (in another order).
    EXPECT_TRUE(close(gpu, cpu, {1e-10, 1e-12})) << "cuda " << number(gpu) << ", cpu "
                                                 << number(cpu);
  }
  // From element 1 of the storage: not 16-byte aligned, so no chunks.
  Tensor x = random({kFlat}, -3.0, 3.0);
  const size_t size = zeroc_rt_dtype_size(dt());
  double cpu = -1.0, gpu = -2.0;
  ASSERT_OK(
      zeroc_rt_k_sum_squares(dt(), static_cast<char *>(x.hostData()) + size, kFlat - 1, &cpu));
  ASSERT_GPU_OK(zeroc_rt_cuda_k_sum_squares(dt(), static_cast<char *>(x.deviceData()) + size,
                                            kFlat - 1, &gpu));
  EXPECT_TRUE(close(gpu, cpu, {1e-10, 1e-12}))
      << "misaligned: cuda " << number(gpu) << ", cpu " << number(cpu);
}

TEST_P(KernelParity, HasInfOrNan) {
  struct Case {
    const char *name;
    int64_t at;
    double value;
    int want;
  };
  const Case cases[] = {{"finite", -1, 0.0, 0},
                        {"+inf first", 0, kInf, 1},
                        {"-inf last", kFlat - 1, -kInf, 1},
                        {"NaN inside", 517, kNaN, 1},
                        {"the largest finite value", 3, dt() == F16 ? 65504.0 : 1e38, 0}};
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    Tensor x = random({kFlat}, -1e3, 1e3);
    if (c.at >= 0) {
      x.set(c.at, c.value);
      x.upload();
    }
    int cpu = -1, gpu = -2;
    ASSERT_OK(zeroc_rt_k_has_inf_or_nan(dt(), x.hostData(), kFlat, &cpu));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_has_inf_or_nan(dt(), x.deviceData(), kFlat, &gpu));
    EXPECT_EQ(cpu, c.want);
    EXPECT_EQ(gpu, cpu);
  }
}

TEST(KernelParityFixed, HasInfOrNanF64BeyondFloat) {
  // F64 values past float's range are finite: "reads the bits only".
  Tensor y(F64, {4});
  for (int64_t i = 0; i < 4; ++i)
    y.set(i, (i % 2 ? -1.0 : 1.0) * (i < 2 ? 1e300 : DBL_MAX));
  y.upload();
  int cpu = -1, gpu = -2;
  ASSERT_OK(zeroc_rt_k_has_inf_or_nan(F64, y.hostData(), 4, &cpu));
  ASSERT_GPU_OK(zeroc_rt_cuda_k_has_inf_or_nan(F64, y.deviceData(), 4, &gpu));
  EXPECT_EQ(cpu, 0);
  EXPECT_EQ(gpu, cpu);
}

// The step's checks over every gradient in one call (one read back): the
// CPU's value for mixed dtypes and an empty tensor, and an overflow in the
// last tensor only.
TEST(KernelParityFixed, MultiTensorSumSquaresAndInfOrNan) {
  Rng rng(23);
  const std::vector<zeroc_rt_dtype_t> dtypes = {F16, F32, BF16, F64};
  const std::vector<int64_t> ns = {kFlat, 0, 77, 3};
  std::vector<Tensor> xs;
  std::vector<const void *> host, device;
  xs.reserve(dtypes.size());
  for (size_t t = 0; t < dtypes.size(); ++t) {
    xs.push_back(randomTensor(dtypes[t], {ns[t]}, rng, -3.0, 3.0));
    host.push_back(xs.back().hostData());
    device.push_back(xs.back().deviceData());
  }
  const int64_t count = static_cast<int64_t>(dtypes.size());
  double cpu = -1.0, gpu = -2.0;
  ASSERT_OK(zeroc_rt_k_sum_squares_multi(count, dtypes.data(), host.data(), ns.data(), &cpu));
  ASSERT_GPU_OK(
      zeroc_rt_cuda_k_sum_squares_multi(count, dtypes.data(), device.data(), ns.data(), &gpu));
  EXPECT_TRUE(close(gpu, cpu, {1e-10, 1e-12})) << "cuda " << number(gpu) << ", cpu "
                                               << number(cpu);
  int cpuFound = -1, gpuFound = -2;
  ASSERT_OK(
      zeroc_rt_k_has_inf_or_nan_multi(count, dtypes.data(), host.data(), ns.data(), &cpuFound));
  ASSERT_GPU_OK(zeroc_rt_cuda_k_has_inf_or_nan_multi(count, dtypes.data(), device.data(),
                                                     ns.data(), &gpuFound));
  EXPECT_EQ(cpuFound, 0);
  EXPECT_EQ(gpuFound, 0);
  xs[3].set(2, kNaN);
  xs[3].upload();
  ASSERT_OK(
      zeroc_rt_k_has_inf_or_nan_multi(count, dtypes.data(), host.data(), ns.data(), &cpuFound));
  ASSERT_GPU_OK(zeroc_rt_cuda_k_has_inf_or_nan_multi(count, dtypes.data(), device.data(),
                                                     ns.data(), &gpuFound));
  EXPECT_EQ(cpuFound, 1);
  EXPECT_EQ(gpuFound, 1);
  ASSERT_GPU_OK(zeroc_rt_cuda_k_sum_squares_multi(0, nullptr, nullptr, nullptr, &gpu));
  EXPECT_EQ(gpu, 0.0);
}

TEST_P(OptimizerParity, AdamStep) {
  const double lr = 1e-2, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, wd = 0.01;
  for (int adamW : {1, 0})
    for (int biasCorrection : {1, 0}) {
      Tensor p = random({257}), m = output({257}), v = output({257});
      for (Tensor *t : {&m, &v}) { // fresh moments
        for (int64_t i = 0; i < t->size(); ++i)
          t->set(i, 0.0);
        t->upload();
      }
      for (int64_t step = 1; step <= 3; ++step) {
        SCOPED_TRACE(std::string(adamW ? "adamw" : "adam with L2") +
                     (biasCorrection ? ", bias correction" : ", no bias correction") +
                     ", step " + std::to_string(step));
        Tensor g = random({257});
        ASSERT_OK(zeroc_rt_k_adam_step(dt(), p.hostData(), g.hostData(), m.hostData(),
                                       v.hostData(), p.size(), lr, beta1, beta2, eps, wd,
                                       adamW, biasCorrection, step));
        ASSERT_GPU_OK(zeroc_rt_cuda_k_adam_step(dt(), p.deviceData(), g.deviceData(),
                                                m.deviceData(), v.deviceData(), p.size(), lr,
                                                beta1, beta2, eps, wd, adamW, biasCorrection,
                                                step));
        expectClose(p, tol(), "adam_step param");
        expectClose(m, tol(), "adam_step exp_avg");
        expectClose(v, tol(), "adam_step exp_avg_sq");
      }
    }
}

/// zeroc_rt_cuda_k_adam_step_multi against the engine's per-tensor path
/// (scale or convert, adam_step, convert; checkMultiStep).
TEST_P(OptimizerParity, AdamStepMulti) {
  // 0.3, not a power of two: the scaled gradient's rounding counts.
  const double factor = 0.3, lr = 1e-2, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, wd = 0.01;
  const std::vector<MultiSpec> specs = multiSpecs();
  for (int adamW : {1, 0}) {
    SCOPED_TRACE(adamW ? "adamw" : "adam with L2");
    checkMultiStep(
        factor, {"exp_avg", "exp_avg_sq"},
        [&](bool cpu, MultiSet &set, int64_t i, void *g, int64_t step) {
          auto data = [&](Tensor &t) { return cpu ? t.hostData() : t.deviceData(); };
          return (cpu ? zeroc_rt_k_adam_step : zeroc_rt_cuda_k_adam_step)(
              dt(), data(set.param[i]), g, data(set.state[0][i]), data(set.state[1][i]), specs[i].n,
              lr, beta1, beta2, eps, wd, adamW, 1, step);
        },
        [&](MultiSet &set, int64_t step, int64_t *failed) {
          std::vector<zeroc_rt_cuda_adam_tensor_t> table;
          for (size_t i = 0; i < specs.size(); ++i) {
            const MultiSpec &s = specs[i];
            table.push_back({s.grad, set.grad[i].deviceData(), set.param[i].deviceData(),
                             set.state[0][i].deviceData(), set.state[1][i].deviceData(), s.rounded,
                             s.rounded != BOOL ? set.rounded[i].deviceData() : nullptr, s.n});
          }
          return zeroc_rt_cuda_k_adam_step_multi(dt(), static_cast<int64_t>(table.size()),
                                                 table.data(), factor, lr, beta1, beta2, eps, wd,
                                                 adamW, 1, step, failed);
        });
  }
  // Argument errors name the tensor and change nothing.
  zeroc_rt_cuda_adam_tensor_t bad[] = {{F32, nullptr, nullptr, nullptr, nullptr, F16, nullptr, 0},
                                       {I64, nullptr, nullptr, nullptr, nullptr, F16, nullptr, 0}};
  int64_t failed = -1;
  zeroc_rt_status_t status = zeroc_rt_cuda_k_adam_step_multi(
      dt(), 2, bad, 1.0, lr, beta1, beta2, eps, wd, 1, 1, 1, &failed);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(failed, 1);
  EXPECT_NE(takeMessage(status).find("adam_step_multi: tensor 1: gradient dtype i64"),
            std::string::npos);
  status = zeroc_rt_cuda_k_adam_step_multi(dt(), 1, bad, 1.0, lr, beta1, beta2, eps, wd, 1, 1,
                                           0, &failed);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(failed, -1);
  EXPECT_NE(takeMessage(status).find("bad hyperparameters"), std::string::npos);
}

TEST_P(OptimizerParity, SgdStep) {
  const double lr = 0.1, wd = 0.01;
  for (const SgdCase &c : sgdCases()) {
    Tensor p = random({257}), buf = output({257});
    const bool useBuf = c.momentum != 0.0; // else momentum_buf is NULL
    for (int64_t step = 1; step <= 2; ++step) {
      SCOPED_TRACE(std::string(c.name) + ", step " + std::to_string(step));
      Tensor g = random({257});
      ASSERT_OK(zeroc_rt_k_sgd_step(dt(), p.hostData(), g.hostData(),
                                    useBuf ? buf.hostData() : nullptr, p.size(), lr,
                                    c.momentum, wd, c.dampening, c.nesterov, step));
      ASSERT_GPU_OK(zeroc_rt_cuda_k_sgd_step(dt(), p.deviceData(), g.deviceData(),
                                             useBuf ? buf.deviceData() : nullptr, p.size(), lr,
                                             c.momentum, wd, c.dampening, c.nesterov, step));
      expectClose(p, tol(), "sgd_step param");
      expectClose(buf, tol(), "sgd_step momentum_buf");
    }
  }
}

/// zeroc_rt_cuda_k_sgd_step_multi against the engine's per-tensor path
/// (scale or convert, sgd_step, convert; checkMultiStep), with each of
/// SgdStep's options.
TEST_P(OptimizerParity, SgdStepMulti) {
  const double factor = 0.3, lr = 0.1, wd = 0.01; // 0.3: as AdamStepMulti
  const std::vector<MultiSpec> specs = multiSpecs();
  for (const SgdCase &c : sgdCases()) {
    SCOPED_TRACE(c.name);
    const bool useBuf = c.momentum != 0.0; // else momentum_buf is NULL
    checkMultiStep(
        factor, {"momentum_buf", nullptr},
        [&](bool cpu, MultiSet &set, int64_t i, void *g, int64_t step) {
          auto data = [&](Tensor &t) { return cpu ? t.hostData() : t.deviceData(); };
          return (cpu ? zeroc_rt_k_sgd_step : zeroc_rt_cuda_k_sgd_step)(
              dt(), data(set.param[i]), g, useBuf ? data(set.state[0][i]) : nullptr, specs[i].n, lr,
              c.momentum, wd, c.dampening, c.nesterov, step);
        },
        [&](MultiSet &set, int64_t step, int64_t *failed) {
          std::vector<zeroc_rt_cuda_sgd_tensor_t> table;
          for (size_t i = 0; i < specs.size(); ++i) {
            const MultiSpec &s = specs[i];
            table.push_back({s.grad, set.grad[i].deviceData(), set.param[i].deviceData(),
                             useBuf ? set.state[0][i].deviceData() : nullptr, s.rounded,
                             s.rounded != BOOL ? set.rounded[i].deviceData() : nullptr, s.n});
          }
          return zeroc_rt_cuda_k_sgd_step_multi(dt(), static_cast<int64_t>(table.size()),
                                                table.data(), factor, lr, c.momentum, wd,
                                                c.dampening, c.nesterov, step, failed);
        });
  }
  // Argument errors name the tensor and change nothing.
  Tensor p = random({4});
  zeroc_rt_cuda_sgd_tensor_t bad[] = {
      {F32, p.deviceData(), p.deviceData(), nullptr, F16, nullptr, 4}};
  int64_t failed = -1;
  zeroc_rt_status_t status =
      zeroc_rt_cuda_k_sgd_step_multi(dt(), 1, bad, 1.0, lr, 0.9, wd, 0.0, 0, 1, &failed);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(failed, 0);
  EXPECT_NE(takeMessage(status).find("sgd_step_multi: tensor 0: momentum_buf is NULL"),
            std::string::npos);
  status = zeroc_rt_cuda_k_sgd_step_multi(dt(), 1, bad, 1.0, lr, 0.0, wd, 0.0, 1, 1, &failed);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(failed, -1);
  EXPECT_NE(takeMessage(status).find("bad arguments"), std::string::npos);
  expectClose(p, tol(), "untouched param");
}

/// zeroc_rt_cuda_k_copy_multi against zeroc_rt_k_copy_multi: odd sizes
/// and offsets (byte copies), aligned ones (words), one over the size that
/// runs as a copy of its own, one spanning several chunks, an empty one.
TEST(KernelParityFixed, CopyMulti) {
  Rng rng{kSeed};
  const int64_t total = 3 << 20;
  Tensor src = randomInts(U8, {total}, rng, 0, 255), dst = outputTensor(U8, {total});
  struct Entry {
    int64_t from, to, bytes;
  };
  const Entry entries[] = {{3, 5, 17},         {64, 1000, 4096},      {7, 9000, 1},
                           {100000, 200000, 300000}, {0, 1 << 20, (1 << 20) + 12},
                           {5, 50, 0}};
  std::vector<zeroc_rt_copy_t> host, device;
  auto at = [](void *base, int64_t off) { return static_cast<unsigned char *>(base) + off; };
  for (const Entry &e : entries) {
    host.push_back({at(src.hostData(), e.from), at(dst.hostData(), e.to), e.bytes});
    device.push_back({at(src.deviceData(), e.from), at(dst.deviceData(), e.to), e.bytes});
  }
  ASSERT_OK(zeroc_rt_k_copy_multi(static_cast<int64_t>(host.size()), host.data()));
  ASSERT_GPU_OK(zeroc_rt_cuda_k_copy_multi(static_cast<int64_t>(device.size()), device.data()));
  expectSameBits(dst, "copy_multi");
  const zeroc_rt_copy_t bad[] = {{src.deviceData(), nullptr, 4}};
  zeroc_rt_status_t status = zeroc_rt_cuda_k_copy_multi(1, bad);
  ASSERT_NE(status, nullptr);
  EXPECT_NE(takeMessage(status).find("copy_multi: copy 0: 4 bytes"), std::string::npos);
  ASSERT_GPU_OK(zeroc_rt_cuda_k_copy_multi(0, nullptr));
}

TEST(KernelParityFixed, ClipGradNorm) {
  struct Case {
    double sumSquares, scale;
    int64_t world;
    double maxNorm;
  };
  const Case cases[] = {{4.0, 1.0, 1, 0.0},    {100.0, 2.0, 2, 1.0}, {1e-4, 1024.0, 4, 1.0},
                        {9.0, 1.0, 1, 5.0},    {kInf, 1.0, 1, 1.0},  {kNaN, 65536.0, 8, 1.0}};
  for (const Case &c : cases) {
    SCOPED_TRACE("sum_squares " + number(c.sumSquares) + " scale " + number(c.scale) +
                 " world " + std::to_string(c.world) + " max_norm " + number(c.maxNorm));
    double cpuNorm = 0, cpuFactor = 0, gpuNorm = 0, gpuFactor = 0;
    ASSERT_OK(zeroc_rt_k_clip_grad_norm(c.sumSquares, c.scale, c.world, c.maxNorm, &cpuNorm,
                                        &cpuFactor));
    ASSERT_OK(zeroc_rt_cuda_k_clip_grad_norm(c.sumSquares, c.scale, c.world, c.maxNorm,
                                             &gpuNorm, &gpuFactor));
    expectSameDouble(gpuNorm, cpuNorm, "norm");
    expectSameDouble(gpuFactor, cpuFactor, "factor");
  }
}

//===----------------------------------------------------------------------===//
// Comparisons, logic, integer div/pow, predicates, clip
//===----------------------------------------------------------------------===//

/// Values from {-2, -1, 0, 1, 2} (so that ties are common), with NaN at
/// every `nanEvery`-th element (0: none) of a float tensor.
Tensor smallValues(zeroc_rt_dtype_t dtype, const Dims &dims, Rng &rng, int64_t nanEvery = 0) {
  Tensor t(dtype, dims);
  std::uniform_int_distribution<int> dist(-2, 2);
  for (int64_t i = 0; i < t.size(); ++i)
    t.set(i, nanEvery && i % nanEvery == nanEvery - 1 ? kNaN : dist(rng));
  t.upload();
  return t;
}

const std::pair<zeroc_rt_binary_op_t, const char *> kCompareOps[] = {
    {ZEROC_RT_BINARY_EQUAL, "equal"},       {ZEROC_RT_BINARY_LESS, "less"},
    {ZEROC_RT_BINARY_LESS_EQUAL, "less_equal"}, {ZEROC_RT_BINARY_GREATER, "greater"},
    {ZEROC_RT_BINARY_GREATER_EQUAL, "greater_equal"}};

TEST_P(KernelParity, BinaryCompare) {
  for (const auto &[op, name] : kCompareOps)
    for (const BroadcastCase &c : kBroadcastCases) {
      SCOPED_TRACE(std::string(name) + " " + dimsText(c.a) + " " + dimsText(c.b));
      // NaN in both operands: every comparison with NaN is false.
      Tensor a = smallValues(dt(), c.a, rng, 7), b = smallValues(dt(), c.b, rng, 5);
      if (a.size() > 2) { // signed zeros compare equal
        a.set(0, -0.0);
        a.upload();
      }
      Tensor out = outputTensor(BOOL, c.out);
      ASSERT_OK(zeroc_rt_k_binary(op, a.cpu(), b.cpu(), out.cpu()));
      ASSERT_GPU_OK(zeroc_rt_cuda_k_binary(op, a.gpu(), b.gpu(), out.gpu()));
      expectClose(out, kExact, std::string("binary ") + name);
    }
}

TEST(KernelParityFixed, BinaryCompareIntegersAndBool) {
  Rng rng(kSeed);
  for (zeroc_rt_dtype_t dtype : {I64, I32, U8})
    for (const auto &[op, name] : kCompareOps)
      for (const BroadcastCase &c : kBroadcastCases) {
        SCOPED_TRACE(std::string(zeroc_rt_dtype_name(dtype)) + " " + name + " " +
                     dimsText(c.a) + " " + dimsText(c.b));
        const int64_t lo = dtype == U8 ? 0 : -3;
        Tensor a = randomInts(dtype, c.a, rng, lo, 3), b = randomInts(dtype, c.b, rng, lo, 3);
        if (dtype == I64 && a.size() > 1) { // beyond double's exact integers
          const int64_t big[2] = {(int64_t{1} << 53) + 1, int64_t{1} << 53};
          std::memcpy(a.hostData(), &big[0], 8);
          a.upload();
        }
        Tensor out = outputTensor(BOOL, c.out);
        ASSERT_OK(zeroc_rt_k_binary(op, a.cpu(), b.cpu(), out.cpu()));
        ASSERT_GPU_OK(zeroc_rt_cuda_k_binary(op, a.gpu(), b.gpu(), out.gpu()));
        expectClose(out, kExact, std::string("binary ") + name);
      }
  // BOOL: equal and the logic ops, with non-0/1 bytes read as true.
  const std::pair<zeroc_rt_binary_op_t, const char *> boolOps[] = {
      {ZEROC_RT_BINARY_EQUAL, "equal"},
      {ZEROC_RT_BINARY_AND, "and"},
      {ZEROC_RT_BINARY_OR, "or"},
      {ZEROC_RT_BINARY_XOR, "xor"}};
  for (const auto &[op, name] : boolOps)
    for (const BroadcastCase &c : kBroadcastCases) {
      SCOPED_TRACE(std::string("bool ") + name + " " + dimsText(c.a) + " " + dimsText(c.b));
      Tensor a = randomInts(BOOL, c.a, rng, 0, 2), b = randomInts(BOOL, c.b, rng, 0, 1);
      Tensor out = outputTensor(BOOL, c.out);
      ASSERT_OK(zeroc_rt_k_binary(op, a.cpu(), b.cpu(), out.cpu()));
      ASSERT_GPU_OK(zeroc_rt_cuda_k_binary(op, a.gpu(), b.gpu(), out.gpu()));
      expectClose(out, kExact, std::string("binary ") + name);
    }
}

TEST(KernelParityFixed, IntegerDivPowAndU8) {
  Rng rng(kSeed);
  for (zeroc_rt_dtype_t dtype : {I64, I32, U8})
    for (zeroc_rt_binary_op_t op : {ZEROC_RT_BINARY_DIV, ZEROC_RT_BINARY_POW, ZEROC_RT_BINARY_ADD,
                                    ZEROC_RT_BINARY_SUB, ZEROC_RT_BINARY_MUL, ZEROC_RT_BINARY_MAX,
                                    ZEROC_RT_BINARY_MIN}) {
      if (dtype != U8 && op != ZEROC_RT_BINARY_DIV && op != ZEROC_RT_BINARY_POW)
        continue; // IntegerBinary covers these
      for (const BroadcastCase &c : kBroadcastCases) {
        SCOPED_TRACE(std::string(zeroc_rt_dtype_name(dtype)) + " op " + std::to_string(op) +
                     " " + dimsText(c.a) + " " + dimsText(c.b));
        const bool pow = op == ZEROC_RT_BINARY_POW;
        const int64_t lo = dtype == U8 ? 0 : (pow ? -7 : -1000);
        Tensor a = randomInts(dtype, c.a, rng, lo, pow ? 7 : 250);
        Tensor b(dtype, c.b);
        std::uniform_int_distribution<int64_t> dist(dtype == U8 || pow ? 0 : -9, pow ? 40 : 9);
        for (int64_t i = 0; i < b.size(); ++i) {
          int64_t v = dist(rng);
          if (op == ZEROC_RT_BINARY_DIV && v == 0)
            v = dtype == U8 ? 3 : -1; // also MIN / -1 below
          std::memcpy(static_cast<unsigned char *>(b.hostData()) + i * zeroc_rt_dtype_size(dtype),
                      &v, zeroc_rt_dtype_size(dtype));
        }
        b.upload();
        if (dtype != U8) { // MIN / -1 wraps; MIN ** k wraps
          const int64_t mn = dtype == I64 ? std::numeric_limits<int64_t>::min()
                                          : std::numeric_limits<int32_t>::min();
          std::memcpy(a.hostData(), &mn, zeroc_rt_dtype_size(dtype));
          a.upload();
        }
        Tensor out = intTensor(dtype, c.out, std::vector<int64_t>(numel(c.out), 77));
        ASSERT_OK(zeroc_rt_k_binary(op, a.cpu(), b.cpu(), out.cpu()));
        ASSERT_GPU_OK(zeroc_rt_cuda_k_binary(op, a.gpu(), b.gpu(), out.gpu()));
        expectClose(out, kExact, "integer binary");
      }
    }
}

TEST_P(KernelParity, PowScalarExponent) {
  // One-element exponents 2 and 3 multiply (as the CPU does); others pow.
  for (double e : {2.0, 3.0, 0.5, -1.5}) {
    SCOPED_TRACE("exponent " + number(e));
    Tensor a = random({3, 17}, e == 2.0 || e == 3.0 ? -3.0 : 0.25, 3.0);
    Tensor b(dt(), {});
    b.set(0, e);
    b.upload();
    Tensor out = output({3, 17});
    ASSERT_OK(zeroc_rt_k_binary(ZEROC_RT_BINARY_POW, a.cpu(), b.cpu(), out.cpu()));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_binary(ZEROC_RT_BINARY_POW, a.gpu(), b.gpu(), out.gpu()));
    if (e == 2.0 || e == 3.0)
      expectSameBits(out, "pow by a scalar 2 or 3");
    else
      expectClose(out, tol(), "pow");
  }
}

TEST_P(KernelParity, Predicate) {
  const std::pair<zeroc_rt_predicate_op_t, const char *> ops[] = {
      {ZEROC_RT_PREDICATE_IS_NAN, "is_nan"},
      {ZEROC_RT_PREDICATE_IS_INF, "is_inf"},
      {ZEROC_RT_PREDICATE_IS_POS_INF, "is_pos_inf"},
      {ZEROC_RT_PREDICATE_IS_NEG_INF, "is_neg_inf"}};
  for (const auto &[op, name] : ops) {
    SCOPED_TRACE(name);
    Tensor x = random({4, 9}, -1e3, 1e3);
    const double specials[] = {kNaN, kInf, -kInf, 0.0, -0.0, -kNaN, 65504.0, 1e30};
    for (size_t i = 0; i < sizeof specials / sizeof *specials; ++i)
      x.set(static_cast<int64_t>(i * 4), specials[i]);
    x.upload();
    Tensor out = outputTensor(BOOL, {4, 9});
    ASSERT_OK(zeroc_rt_k_predicate(op, x.cpu(), out.cpu()));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_predicate(op, x.gpu(), out.gpu()));
    expectClose(out, kExact, name);
  }
}

TEST(KernelParityFixed, PredicateNot) {
  Rng rng(kSeed);
  Tensor x = randomInts(BOOL, {5, 7}, rng, 0, 3); // bytes 2 and 3 are true
  Tensor out = intTensor(BOOL, {5, 7}, std::vector<int64_t>(35, 9));
  ASSERT_OK(zeroc_rt_k_predicate(ZEROC_RT_PREDICATE_NOT, x.cpu(), out.cpu()));
  ASSERT_GPU_OK(zeroc_rt_cuda_k_predicate(ZEROC_RT_PREDICATE_NOT, x.gpu(), out.gpu()));
  expectClose(out, kExact, "not");
}

/// Clip bounds: present flags and values (lo > hi, a bound that rounds).
struct ClipCase {
  int hasMin;
  double lo;
  int hasMax;
  double hi;
};
const ClipCase kClipCases[] = {
    {1, -0.5, 1, 0.5}, {1, -0.25, 0, 0.0}, {0, 0.0, 1, 0.3}, {0, 0.0, 0, 0.0},
    {1, 0.7, 1, -0.2}, // lo > hi: hi everywhere
    {1, 0.1, 1, 0.1},  {1, -1e-8, 1, 1.0 / 3.0}};

/// Inputs with elements exactly at the clip bounds and NaN.
Tensor clipInput(zeroc_rt_dtype_t dtype, const ClipCase &c, Rng &rng) {
  Tensor x = randomTensor(dtype, {6, 11}, rng, -1.0, 1.0);
  x.set(0, kNaN);
  x.set(1, c.lo);
  x.set(2, c.hi);
  x.set(3, kInf);
  x.set(4, -kInf);
  x.upload();
  return x;
}

TEST_P(KernelParity, Clip) {
  for (const ClipCase &c : kClipCases) {
    SCOPED_TRACE("min " + std::to_string(c.hasMin) + " " + number(c.lo) + " max " +
                 std::to_string(c.hasMax) + " " + number(c.hi));
    Tensor x = clipInput(dt(), c, rng);
    Tensor out = output({6, 11});
    ASSERT_OK(zeroc_rt_k_clip(x.cpu(), c.hasMin, c.lo, c.hasMax, c.hi, out.cpu()));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_clip(x.gpu(), c.hasMin, c.lo, c.hasMax, c.hi, out.gpu()));
    expectSameBits(out, "clip");
  }
}

TEST_P(KernelParity, ClipGrad) {
  for (const ClipCase &c : kClipCases) {
    SCOPED_TRACE("min " + std::to_string(c.hasMin) + " " + number(c.lo) + " max " +
                 std::to_string(c.hasMax) + " " + number(c.hi));
    Tensor x = clipInput(dt(), c, rng);
    Tensor gy = random({6, 11});
    Tensor gx = output({6, 11});
    ASSERT_OK(zeroc_rt_k_clip_grad(x.cpu(), c.hasMin, c.lo, c.hasMax, c.hi, gy.cpu(), gx.cpu()));
    ASSERT_GPU_OK(
        zeroc_rt_cuda_k_clip_grad(x.gpu(), c.hasMin, c.lo, c.hasMax, c.hi, gy.gpu(), gx.gpu()));
    expectSameBits(gx, "clip_grad");
  }
}

TEST(KernelParityFixed, ClipNaNBoundRejected) {
  Rng rng(kSeed);
  Tensor x = randomTensor(F32, {3}, rng);
  Tensor out = outputTensor(F32, {3});
  zeroc_rt_status_t s = zeroc_rt_cuda_k_clip(x.gpu(), 1, kNaN, 0, 0.0, out.gpu());
  EXPECT_EQ(zeroc_rt_status_code(s), ZEROC_RT_INVALID_ARGUMENT);
  zeroc_rt_status_free(s);
}

//===----------------------------------------------------------------------===//
// Concat, trilu, gather_grad_padded, pad(_grad), scatter_nd, cumsum
//===----------------------------------------------------------------------===//

struct ConcatCase {
  std::vector<Dims> inputs;
  int64_t axis;
  Dims out;
};
const ConcatCase kConcatCases[] = {
    {{{2, 3}, {4, 3}}, 0, {6, 3}},
    {{{2, 3, 4}, {2, 1, 4}, {2, 5, 4}}, 1, {2, 9, 4}},
    {{{2, 3, 4}, {2, 3, 2}}, -1, {2, 3, 6}},
    {{{3, 0, 2}, {3, 4, 2}, {3, 0, 2}}, 1, {3, 4, 2}}, // empty inputs
    {{{5}}, 0, {5}},                                  // one input
};

void runConcat(zeroc_rt_dtype_t dtype, Rng &rng) {
  for (const ConcatCase &c : kConcatCases) {
    SCOPED_TRACE(std::string(zeroc_rt_dtype_name(dtype)) + " axis " + std::to_string(c.axis) +
                 " -> " + dimsText(c.out));
    std::vector<Tensor> ins;
    for (const Dims &d : c.inputs)
      ins.push_back(isFloat(dtype) ? randomTensor(dtype, d, rng) : randomInts(dtype, d, rng, 0, 1));
    std::vector<const zeroc_rt_tensor_t *> cpu, gpu;
    for (const Tensor &t : ins) {
      cpu.push_back(t.cpu());
      gpu.push_back(t.gpu());
    }
    Tensor out = outputTensor(dtype, c.out);
    const int32_t n = static_cast<int32_t>(ins.size());
    ASSERT_OK(zeroc_rt_k_concat(cpu.data(), n, c.axis, out.cpu()));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_concat(gpu.data(), n, c.axis, out.gpu()));
    expectSameBits(out, "concat");
  }
}

TEST_P(KernelParity, Concat) { runConcat(dt(), rng); }

TEST(KernelParityFixed, ConcatOtherDtypesAndErrors) {
  Rng rng(kSeed);
  for (zeroc_rt_dtype_t dtype : {I64, I32, BOOL})
    runConcat(dtype, rng);
  // Axis dims that do not sum to out's.
  Tensor a = randomTensor(F32, {2, 3}, rng), b = randomTensor(F32, {2, 3}, rng);
  Tensor out = outputTensor(F32, {2, 5});
  const zeroc_rt_tensor_t *ins[] = {a.gpu(), b.gpu()};
  zeroc_rt_status_t s = zeroc_rt_cuda_k_concat(ins, 2, 1, out.gpu());
  EXPECT_EQ(zeroc_rt_status_code(s), ZEROC_RT_SHAPE_MISMATCH);
  zeroc_rt_status_free(s);
}

TEST_P(KernelParity, Trilu) {
  for (const Dims &dims : {Dims{2, 3, 5}, Dims{5, 3}, Dims{1, 2, 4, 4}})
    for (int upper : {0, 1})
      for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{-10}, int64_t{10},
                        std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()}) {
        SCOPED_TRACE(dimsText(dims) + " upper " + std::to_string(upper) + " k " +
                     std::to_string(k));
        Tensor in = random(dims);
        Tensor out = output(dims);
        ASSERT_OK(zeroc_rt_k_trilu(in.cpu(), upper, k, out.cpu()));
        ASSERT_GPU_OK(zeroc_rt_cuda_k_trilu(in.gpu(), upper, k, out.gpu()));
        expectSameBits(out, "trilu");
      }
}

TEST_P(KernelParity, GatherGradPadded) {
  struct Case {
    Dims data;
    zeroc_rt_dtype_t indexType;
    Dims indexDims;
    std::vector<int64_t> indices;
    int64_t paddingIdx;
  };
  const Case cases[] = {
      // The padding row 1 is indexed (three times), 7 as 7 and -3.
      {{10, 4}, I64, {2, 3}, {1, 1, 7, -3, 1, 0}, 1},
      {{6, 2, 3}, I32, {5}, {0, 5, 5, -1, 2}, 0}, // the padding row is never indexed
      {{6, 3}, I64, {4}, {5, 5, -1, 2}, 5},       // ... indexed negatively too
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(dimsText(c.data) + " padding_idx " + std::to_string(c.paddingIdx));
    Dims outDims = c.indexDims;
    outDims.insert(outDims.end(), c.data.begin() + 1, c.data.end());
    Tensor gout = random(outDims);
    Tensor idx = intTensor(c.indexType, c.indexDims, c.indices);
    Tensor gdata = output(c.data);
    ASSERT_OK(zeroc_rt_k_gather_grad_padded(gout.cpu(), idx.cpu(), c.paddingIdx, gdata.cpu()));
    ASSERT_GPU_OK(
        zeroc_rt_cuda_k_gather_grad_padded(gout.gpu(), idx.gpu(), c.paddingIdx, gdata.gpu()));
    expectClose(gdata, tol(true), "gather_grad_padded");
  }
  // padding_idx must be a row (not normalized): both kernels reject it.
  for (int64_t bad : {int64_t{-1}, int64_t{10}}) {
    Tensor gout = random({3, 4});
    Tensor idx = intTensor(I64, {3}, {0, 1, 2});
    Tensor gdata = output({10, 4});
    zeroc_rt_status_t cpu = zeroc_rt_k_gather_grad_padded(gout.cpu(), idx.cpu(), bad, gdata.cpu());
    zeroc_rt_status_t gpu =
        zeroc_rt_cuda_k_gather_grad_padded(gout.gpu(), idx.gpu(), bad, gdata.gpu());
    EXPECT_EQ(zeroc_rt_status_code(cpu), ZEROC_RT_INVALID_ARGUMENT);
    EXPECT_EQ(zeroc_rt_status_code(gpu), ZEROC_RT_INVALID_ARGUMENT);
    zeroc_rt_status_free(cpu);
    zeroc_rt_status_free(gpu);
    ASSERT_OK(zc::gpuSynchronize());
  }
}

const std::pair<zeroc_rt_pad_mode_t, const char *> kPadModes[] = {
    {ZEROC_RT_PAD_CONSTANT, "constant"},
    {ZEROC_RT_PAD_REFLECT, "reflect"},
    {ZEROC_RT_PAD_EDGE, "edge"},
    {ZEROC_RT_PAD_WRAP, "wrap"}};

/// An input shape and its pads [b0, ..., e0, ...] (negative ones crop).
struct PadCase {
  Dims in;
  std::vector<int64_t> pads;
};
const PadCase kPadCases[] = {
    {{3, 4}, {1, 2, 2, 0}},
    {{2, 3, 4}, {0, 7, -1, 1, 9, 2}}, // pads beyond one period, a crop
    {{1, 5}, {2, -2, 3, 1}},          // a dim of 1 (reflect repeats it)
    {{4}, {-1, -2}},                  // crops only
    {{2, 3}, {0, 0, 0, 0}},
};

Dims paddedDims(const PadCase &c) {
  Dims out = c.in;
  const size_t r = c.in.size();
  for (size_t d = 0; d < r; ++d)
    out[d] += c.pads[d] + c.pads[d + r];
  return out;
}

TEST_P(KernelParity, Pad) {
  for (const auto &[mode, name] : kPadModes)
    for (const PadCase &c : kPadCases) {
      SCOPED_TRACE(std::string(name) + " " + dimsText(c.in) + " pads " + dimsText(c.pads));
      Tensor in = random(c.in);
      Tensor out = output(paddedDims(c));
      ASSERT_OK(zeroc_rt_k_pad(in.cpu(), c.pads.data(), mode, 0.375, out.cpu()));
      ASSERT_GPU_OK(zeroc_rt_cuda_k_pad(in.gpu(), c.pads.data(), mode, 0.375, out.gpu()));
      expectSameBits(out, std::string("pad ") + name);
    }
}

TEST(KernelParityFixed, PadOtherDtypesAndEmpty) {
  Rng rng(kSeed);
  for (zeroc_rt_dtype_t dtype : {I64, I32, U8, BOOL})
    for (const auto &[mode, name] : kPadModes) {
      SCOPED_TRACE(std::string(zeroc_rt_dtype_name(dtype)) + " " + name);
      const PadCase c{{2, 3, 4}, {0, 7, -1, 1, 9, 2}};
      Tensor in = randomInts(dtype, c.in, rng, 0, 1);
      Tensor out = intTensor(dtype, paddedDims(c), std::vector<int64_t>(numel(paddedDims(c)), 5));
      ASSERT_OK(zeroc_rt_k_pad(in.cpu(), c.pads.data(), mode, -3.0, out.cpu()));
      ASSERT_GPU_OK(zeroc_rt_cuda_k_pad(in.gpu(), c.pads.data(), mode, -3.0, out.gpu()));
      expectSameBits(out, std::string("pad ") + name);
    }
  // Constant padding fills an empty dim; the other modes reject it.
  Tensor in(F32, {0, 3});
  const std::vector<int64_t> pads{2, 0, 1, 0};
  Tensor out = outputTensor(F32, {3, 3});
  ASSERT_OK(zeroc_rt_k_pad(in.cpu(), pads.data(), ZEROC_RT_PAD_CONSTANT, 1.5, out.cpu()));
  ASSERT_GPU_OK(zeroc_rt_cuda_k_pad(in.gpu(), pads.data(), ZEROC_RT_PAD_CONSTANT, 1.5, out.gpu()));
  expectSameBits(out, "pad of an empty dim");
  zeroc_rt_status_t s = zeroc_rt_cuda_k_pad(in.gpu(), pads.data(), ZEROC_RT_PAD_EDGE, 0.0, out.gpu());
  EXPECT_EQ(zeroc_rt_status_code(s), ZEROC_RT_INVALID_ARGUMENT);
  zeroc_rt_status_free(s);
}

TEST_P(KernelParity, PadGrad) {
  for (const auto &[mode, name] : kPadModes)
    for (const PadCase &c : kPadCases) {
      SCOPED_TRACE(std::string(name) + " " + dimsText(c.in) + " pads " + dimsText(c.pads));
      Tensor gout = random(paddedDims(c));
      Tensor gin = output(c.in);
      ASSERT_OK(zeroc_rt_k_pad_grad(gout.cpu(), c.pads.data(), mode, gin.cpu()));
      ASSERT_GPU_OK(zeroc_rt_cuda_k_pad_grad(gout.gpu(), c.pads.data(), mode, gin.gpu()));
      expectClose(gin, tol(true), std::string("pad_grad ") + name);
    }
}

/// data shape, indices (dims, values), updates' shape.
struct ScatterCase {
  Dims data;
  zeroc_rt_dtype_t indexType;
  Dims indexDims;
  std::vector<int64_t> indices;
  Dims updates;
  bool distinct; // no two tuples address one slice
};
const ScatterCase kScatterCases[] = {
    {{5, 3}, I64, {3, 1}, {4, 0, -2}, {3, 3}, true},                  // rows
    {{4, 3, 2}, I32, {2, 2, 2}, {0, 1, 3, 2, -1, 0, 2, 2}, {2, 2, 2}, true}, // (i, j) slices
    {{2, 3}, I64, {4, 2}, {0, 0, 1, 2, 0, 1, 1, 0}, {4}, true},        // single elements
    {{6, 2}, I64, {5, 1}, {1, 3, 1, -5, 1}, {5, 2}, false},            // row 1 four times
    {{3, 4}, I32, {2, 3, 2}, {0, 0, 2, 3, 0, 0, 1, 1, 2, 3, 0, 0}, {2, 3}, false},
};

TEST_P(KernelParity, ScatterNd) {
  for (const ScatterCase &c : kScatterCases)
    for (zeroc_rt_scatter_reduction_t r :
         {ZEROC_RT_SCATTER_NONE, ZEROC_RT_SCATTER_ADD, ZEROC_RT_SCATTER_MUL}) {
      if (r == ZEROC_RT_SCATTER_NONE && !c.distinct)
        continue; // ScatterNdRepeatedSlices
      SCOPED_TRACE(dimsText(c.data) + " indices " + dimsText(c.indexDims) + " reduction " +
                   std::to_string(r));
      Tensor data = random(c.data, -2.0, 2.0);
      Tensor idx = intTensor(c.indexType, c.indexDims, c.indices);
      Tensor upd = random(c.updates, -2.0, 2.0);
      Tensor out = output(c.data);
      ASSERT_OK(zeroc_rt_k_scatter_nd(data.cpu(), idx.cpu(), upd.cpu(), r, out.cpu()));
      ASSERT_GPU_OK(zeroc_rt_cuda_k_scatter_nd(data.gpu(), idx.gpu(), upd.gpu(), r, out.gpu()));
      // Rounded per update: F16/BF16 round through float on the GPU.
      if (dt() == F32 || dt() == F64 || r == ZEROC_RT_SCATTER_NONE)
        expectSameBits(out, "scatter_nd");
      else
        expectClose(out, tol(), "scatter_nd");
    }
}

TEST(KernelParityFixed, ScatterNdIntegersAndBool) {
  Rng rng(kSeed);
  for (zeroc_rt_dtype_t dtype : {I64, I32, U8, BOOL})
    for (const ScatterCase &c : kScatterCases)
      for (zeroc_rt_scatter_reduction_t r :
           {ZEROC_RT_SCATTER_NONE, ZEROC_RT_SCATTER_ADD, ZEROC_RT_SCATTER_MUL}) {
        if ((r == ZEROC_RT_SCATTER_NONE && !c.distinct) ||
            (dtype == BOOL && r != ZEROC_RT_SCATTER_NONE))
          continue;
        SCOPED_TRACE(std::string(zeroc_rt_dtype_name(dtype)) + " " + dimsText(c.data) +
                     " reduction " + std::to_string(r));
        const int64_t hi = dtype == BOOL ? 1 : 200;
        Tensor data = randomInts(dtype, c.data, rng, 0, hi);
        Tensor idx = intTensor(c.indexType, c.indexDims, c.indices);
        Tensor upd = randomInts(dtype, c.updates, rng, 0, hi); // products wrap
        Tensor out = intTensor(dtype, c.data, std::vector<int64_t>(numel(c.data), 1));
        ASSERT_OK(zeroc_rt_k_scatter_nd(data.cpu(), idx.cpu(), upd.cpu(), r, out.cpu()));
        ASSERT_GPU_OK(zeroc_rt_cuda_k_scatter_nd(data.gpu(), idx.gpu(), upd.gpu(), r, out.gpu()));
        expectSameBits(out, "scatter_nd");
      }
}

TEST_P(KernelParity, CumSum) {
  for (const Dims &dims : {Dims{7}, Dims{3, 9}, Dims{2, 5, 4}})
    for (int64_t axis = -static_cast<int64_t>(dims.size()); axis < static_cast<int64_t>(dims.size());
         ++axis)
      for (int exclusive : {0, 1})
        for (int reverse : {0, 1}) {
          SCOPED_TRACE(dimsText(dims) + " axis " + std::to_string(axis) + " exclusive " +
                       std::to_string(exclusive) + " reverse " + std::to_string(reverse));
          Tensor in = random(dims);
          Tensor out = output(dims);
          ASSERT_OK(zeroc_rt_k_cumsum(in.cpu(), axis, exclusive, reverse, out.cpu()));
          ASSERT_GPU_OK(zeroc_rt_cuda_k_cumsum(in.gpu(), axis, exclusive, reverse, out.gpu()));
          // Both sum in double in order; F16/BF16 round through float here.
          if (dt() == F32 || dt() == F64)
            expectSameBits(out, "cumsum");
          else
            expectClose(out, tol(), "cumsum");
        }
}

TEST(KernelParityFixed, CumSumIntegers) {
  Rng rng(kSeed);
  for (zeroc_rt_dtype_t dtype : {I64, I32})
    for (int exclusive : {0, 1})
      for (int reverse : {0, 1}) {
        SCOPED_TRACE(std::string(zeroc_rt_dtype_name(dtype)) + " exclusive " +
                     std::to_string(exclusive) + " reverse " + std::to_string(reverse));
        Tensor in = randomInts(dtype, {3, 6}, rng, -1000, 1000);
        const int64_t hi = dtype == I64 ? std::numeric_limits<int64_t>::max()
                                        : std::numeric_limits<int32_t>::max();
        std::memcpy(in.hostData(), &hi, zeroc_rt_dtype_size(dtype)); // wraps
        in.upload();
        Tensor out = intTensor(dtype, {3, 6}, std::vector<int64_t>(18, 3));
        ASSERT_OK(zeroc_rt_k_cumsum(in.cpu(), 1, exclusive, reverse, out.cpu()));
        ASSERT_GPU_OK(zeroc_rt_cuda_k_cumsum(in.gpu(), 1, exclusive, reverse, out.gpu()));
        expectSameBits(out, "cumsum");
      }
}

//===----------------------------------------------------------------------===//
// Element and ND gathers, scatter_elements
//===----------------------------------------------------------------------===//

/// data's and indices' shapes and the axis; random indices in [-n, n) for
/// the axis' size n.
struct ElementsCase {
  Dims data;
  zeroc_rt_dtype_t indexType;
  Dims indices;
  int64_t axis;
};
const ElementsCase kElementsCases[] = {
    {{5, 4}, I64, {3, 4}, 0},
    {{5, 4}, I32, {5, 2}, 1},
    {{3, 4, 6}, I64, {2, 7, 3}, 1},     // longer than data on the axis: repeats
    {{3, 4, 6}, I32, {3, 4, 5}, -1},
    {{2, 3, 4, 5}, I64, {2, 2, 4, 3}, -3},
    {{3}, I64, {12}, 0},                // rank 1, every element several times
    {{4, 3}, I64, {0, 3}, 0},           // no positions
};

std::string elementsText(const ElementsCase &c) {
  return dimsText(c.data) + " indices " + std::string(zeroc_rt_dtype_name(c.indexType)) +
         dimsText(c.indices) + " axis " + std::to_string(c.axis);
}

int64_t axisOf(const ElementsCase &c) {
  const int64_t rank = static_cast<int64_t>(c.data.size());
  return c.axis < 0 ? c.axis + rank : c.axis;
}

Tensor elementIndices(const ElementsCase &c, Rng &rng) {
  const int64_t n = c.data[static_cast<size_t>(axisOf(c))];
  return randomInts(c.indexType, c.indices, rng, -n, n - 1);
}

/// Indices that address distinct elements (scatter_elements none): each
/// line along the axis a random choice of distinct positions, about half
/// of them written negatively.
Tensor distinctElementIndices(const ElementsCase &c, Rng &rng) {
  const size_t ax = static_cast<size_t>(axisOf(c));
  const int64_t n = c.data[ax], length = c.indices[ax];
  int64_t inner = 1;
  for (size_t d = ax + 1; d < c.indices.size(); ++d)
    inner *= c.indices[d];
  std::vector<int64_t> values(static_cast<size_t>(numel(c.indices)));
  std::vector<int64_t> positions(static_cast<size_t>(n));
  std::bernoulli_distribution negative(0.5);
  for (int64_t l = 0; length && l < numel(c.indices) / length; ++l) {
    for (int64_t v = 0; v < n; ++v)
      positions[static_cast<size_t>(v)] = v;
    std::shuffle(positions.begin(), positions.end(), rng);
    const int64_t first = (l / inner) * length * inner + l % inner;
    for (int64_t j = 0; j < length; ++j) {
      const int64_t v = positions[static_cast<size_t>(j)];
      values[static_cast<size_t>(first + j * inner)] = negative(rng) ? v - n : v;
    }
  }
  return intTensor(c.indexType, c.indices, values);
}

bool distinctPossible(const ElementsCase &c) {
  const size_t ax = static_cast<size_t>(axisOf(c));
  return c.indices[ax] <= c.data[ax];
}

const zeroc_rt_scatter_reduction_t kScatterReductions[] = {
    ZEROC_RT_SCATTER_NONE, ZEROC_RT_SCATTER_ADD, ZEROC_RT_SCATTER_MUL};

TEST_P(KernelParity, GatherElements) {
  for (const ElementsCase &c : kElementsCases) {
    SCOPED_TRACE(elementsText(c));
    Tensor data = random(c.data);
    Tensor idx = elementIndices(c, rng);
    Tensor out = output(c.indices);
    ASSERT_OK(zeroc_rt_k_gather_elements(data.cpu(), idx.cpu(), c.axis, out.cpu()));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_gather_elements(data.gpu(), idx.gpu(), c.axis, out.gpu()));
    expectSameBits(out, "gather_elements");
  }
}

TEST_P(KernelParity, GatherElementsGrad) {
  for (const ElementsCase &c : kElementsCases) {
    SCOPED_TRACE(elementsText(c));
    Tensor gout = random(c.indices);
    Tensor idx = elementIndices(c, rng);
    Tensor gdata = output(c.data);
    ASSERT_OK(zeroc_rt_k_gather_elements_grad(gout.cpu(), idx.cpu(), c.axis, gdata.cpu()));
    ASSERT_GPU_OK(
        zeroc_rt_cuda_k_gather_elements_grad(gout.gpu(), idx.gpu(), c.axis, gdata.gpu()));
    // Repeated positions sum: in float in a parallel order on the GPU.
    expectClose(gdata, tol(true), "gather_elements_grad");
  }
}

/// Runs scatter_elements on both and compares; `exact`: bit for bit.
void runScatterElements(const Tensor &data, const Tensor &idx, const Tensor &upd,
                        const ElementsCase &c, zeroc_rt_scatter_reduction_t r, bool exact,
                        Tol tol) {
  Tensor out = outputTensor(data.dtype(), c.data);
  ASSERT_OK(zeroc_rt_k_scatter_elements(data.cpu(), idx.cpu(), upd.cpu(), c.axis, r, out.cpu()));
  ASSERT_GPU_OK(
      zeroc_rt_cuda_k_scatter_elements(data.gpu(), idx.gpu(), upd.gpu(), c.axis, r, out.gpu()));
  if (exact)
    expectSameBits(out, "scatter_elements");
  else
    expectClose(out, tol, "scatter_elements");
}

TEST_P(KernelParity, ScatterElements) {
  for (const ElementsCase &c : kElementsCases)
    for (zeroc_rt_scatter_reduction_t r : kScatterReductions) {
      const bool none = r == ZEROC_RT_SCATTER_NONE;
      if (none && !distinctPossible(c))
        continue; // ScatterElementsRepeatedElements
      SCOPED_TRACE(elementsText(c) + " reduction " + std::to_string(r));
      Tensor data = random(c.data, -2.0, 2.0);
      Tensor idx = none ? distinctElementIndices(c, rng) : elementIndices(c, rng);
      Tensor upd = random(c.indices, -2.0, 2.0);
      // Repeated targets combine in index order on both, in double, rounded
      // per update: F16/BF16 round through float on the GPU.
      runScatterElements(data, idx, upd, c, r, none || dt() == F32 || dt() == F64, tol());
    }
}

/// data shape and indices (dims, values); out is indices.shape[:-1] +
/// data.shape[k:].
struct NdCase {
  Dims data;
  zeroc_rt_dtype_t indexType;
  Dims indexDims;
  std::vector<int64_t> indices;
};
const NdCase kNdCases[] = {
    {{5, 3}, I64, {3, 1}, {4, 0, -2}},                          // rows
    {{4, 3, 2}, I32, {2, 2, 2}, {0, 1, 3, 2, -1, 0, 2, -3}},   // (i, j) slices
    {{2, 3}, I64, {4, 2}, {0, 0, 1, 2, -2, 1, 1, -3}},         // single elements
    {{2, 3, 4}, I64, {2, 3}, {1, 2, 3, 0, -1, -4}},            // k = rank, out 1-D
    {{6, 2}, I64, {5, 1}, {1, 3, 1, -5, 1}},                   // row 1 four times
    {{3, 4}, I32, {2, 3, 2}, {0, 0, 2, 3, 0, 0, 1, 1, 2, 3, 0, 0}},
    {{3, 0}, I64, {2, 1}, {0, -1}},                            // empty slices
};

Dims ndOutDims(const NdCase &c) {
  Dims out(c.indexDims.begin(), c.indexDims.end() - 1);
  out.insert(out.end(), c.data.begin() + c.indexDims.back(), c.data.end());
  return out;
}

void runGatherNd(zeroc_rt_dtype_t dtype, Rng &rng) {
  for (const NdCase &c : kNdCases) {
    SCOPED_TRACE(std::string(zeroc_rt_dtype_name(dtype)) + " " + dimsText(c.data) +
                 " indices " + dimsText(c.indexDims));
    Tensor data = isFloat(dtype) ? randomTensor(dtype, c.data, rng)
                                 : randomInts(dtype, c.data, rng, 0, dtype == BOOL ? 1 : 200);
    Tensor idx = intTensor(c.indexType, c.indexDims, c.indices);
    Tensor out = outputTensor(dtype, ndOutDims(c));
    ASSERT_OK(zeroc_rt_k_gather_nd(data.cpu(), idx.cpu(), out.cpu()));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_gather_nd(data.gpu(), idx.gpu(), out.gpu()));
    expectSameBits(out, "gather_nd");
  }
}

TEST_P(KernelParity, GatherNd) { runGatherNd(dt(), rng); }

TEST(KernelParityFixed, ElementAndNdGathersOtherDtypes) {
  Rng rng(kSeed);
  for (zeroc_rt_dtype_t dtype : {I64, I32, U8, BOOL}) {
    runGatherNd(dtype, rng);
    for (const ElementsCase &c : kElementsCases) {
      SCOPED_TRACE(std::string(zeroc_rt_dtype_name(dtype)) + " " + elementsText(c));
      Tensor data = randomInts(dtype, c.data, rng, 0, dtype == BOOL ? 1 : 200);
      Tensor idx = elementIndices(c, rng);
      Tensor out = intTensor(dtype, c.indices, std::vector<int64_t>(numel(c.indices), 1));
      ASSERT_OK(zeroc_rt_k_gather_elements(data.cpu(), idx.cpu(), c.axis, out.cpu()));
      ASSERT_GPU_OK(zeroc_rt_cuda_k_gather_elements(data.gpu(), idx.gpu(), c.axis, out.gpu()));
      expectSameBits(out, "gather_elements");
    }
  }
}

TEST(KernelParityFixed, ScatterElementsIntegersAndBool) {
  Rng rng(kSeed);
  for (zeroc_rt_dtype_t dtype : {I64, I32, U8, BOOL})
    for (const ElementsCase &c : kElementsCases)
      for (zeroc_rt_scatter_reduction_t r : kScatterReductions) {
        const bool none = r == ZEROC_RT_SCATTER_NONE;
        if ((none && !distinctPossible(c)) || (dtype == BOOL && !none))
          continue;
        SCOPED_TRACE(std::string(zeroc_rt_dtype_name(dtype)) + " " + elementsText(c) +
                     " reduction " + std::to_string(r));
        const int64_t hi = dtype == BOOL ? 1 : 200;
        Tensor data = randomInts(dtype, c.data, rng, 0, hi);
        Tensor idx = none ? distinctElementIndices(c, rng) : elementIndices(c, rng);
        Tensor upd = randomInts(dtype, c.indices, rng, 0, hi); // products wrap
        runScatterElements(data, idx, upd, c, r, true, kExact);
      }
}

/// A status message without its "file:line: " prefix.
std::string withoutSource(const std::string &message) {
  const size_t colon = message.find(": ");
  return colon == std::string::npos ? message : message.substr(colon + 2);
}

/// Expects both kernels to fail on the host alike: the same code and the
/// same message after the kernel's name (the CPU's is zeroc_rt_k_<name>).
void expectSameError(zeroc_rt_status_t cpu, zeroc_rt_status_t gpu, const std::string &what) {
  ASSERT_TRUE(cpu != nullptr) << what << ": the CPU kernel accepted it";
  ASSERT_TRUE(gpu != nullptr) << what << ": the CUDA kernel accepted it";
  EXPECT_EQ(zeroc_rt_status_code(gpu), zeroc_rt_status_code(cpu)) << what;
  const std::string c = withoutSource(takeMessage(cpu)), g = withoutSource(takeMessage(gpu));
  const std::string prefix = "zeroc_rt_k_";
  ASSERT_EQ(c.rfind(prefix, 0), 0u) << c;
  EXPECT_EQ(c.substr(prefix.size()), g) << what;
}

TEST(KernelParityFixed, ElementAndNdHostErrors) {
  Rng rng(kSeed);
  Tensor data = randomTensor(F32, {3, 4}, rng), other = randomTensor(F64, {3, 4}, rng);
  Tensor idx = intTensor(I64, {3, 2}, {0, 1, 2, 3, -1, -4});
  Tensor flat = intTensor(I64, {3}, {0, 1, 2});
  Tensor wide = intTensor(I64, {4, 2}, {0, 1, 2, 3, 0, 1, 2, 3});
  Tensor floatIdx = randomTensor(F32, {3, 2}, rng);
  Tensor upd = randomTensor(F32, {3, 2}, rng), out32 = outputTensor(F32, {3, 2});
  Tensor full = outputTensor(F32, {3, 4}), small = outputTensor(F32, {2, 2});
  auto elements = [&](const char *what, const Tensor &d, const Tensor &i, int64_t axis,
                      const Tensor &o) {
    SCOPED_TRACE(what);
    expectSameError(zeroc_rt_k_gather_elements(d.cpu(), i.cpu(), axis, o.cpu()),
                    zeroc_rt_cuda_k_gather_elements(d.gpu(), i.gpu(), axis, o.gpu()),
                    std::string("gather_elements ") + what);
    if (isFloat(o.dtype()))
      expectSameError(zeroc_rt_k_gather_elements_grad(o.cpu(), i.cpu(), axis, d.cpu()),
                      zeroc_rt_cuda_k_gather_elements_grad(o.gpu(), i.gpu(), axis, d.gpu()),
                      std::string("gather_elements_grad ") + what);
    for (zeroc_rt_scatter_reduction_t r : kScatterReductions)
      expectSameError(
          zeroc_rt_k_scatter_elements(d.cpu(), i.cpu(), o.cpu(), axis, r, full.cpu()),
          zeroc_rt_cuda_k_scatter_elements(d.gpu(), i.gpu(), o.gpu(), axis, r, full.gpu()),
          std::string("scatter_elements ") + what);
  };
  elements("rank", data, flat, 1, out32);
  elements("axis", data, idx, 2, out32);
  elements("dims off the axis", data, wide, 1, outputTensor(F32, {4, 2}));
  elements("shape of the picked", data, idx, 1, small);
  elements("index dtype", data, floatIdx, 1, out32);
  elements("dtype", other, idx, 1, out32);
  // gather_nd: k beyond the rank, out's shape, the index dtype, out's dtype.
  Tensor ndIdx = intTensor(I64, {2, 1}, {0, 2});
  Tensor rows = outputTensor(F32, {2, 4}), rows64 = outputTensor(F64, {2, 4});
  Tensor deep = intTensor(I64, {1, 3}, {0, 0, 0});
  const std::pair<const char *, std::pair<const Tensor *, const Tensor *>> nd[] = {
      {"k beyond the rank", {&deep, &rows}},
      {"out's shape", {&ndIdx, &small}},
      {"index dtype", {&floatIdx, &rows}},
      {"out's dtype", {&ndIdx, &rows64}}};
  for (const auto &[what, operands] : nd)
    expectSameError(zeroc_rt_k_gather_nd(data.cpu(), operands.first->cpu(), operands.second->cpu()),
                    zeroc_rt_cuda_k_gather_nd(data.gpu(), operands.first->gpu(),
                                              operands.second->gpu()),
                    std::string("gather_nd ") + what);
  // scatter_elements: a bad reduction, add on bool, out aliasing data.
  expectSameError(
      zeroc_rt_k_scatter_elements(data.cpu(), idx.cpu(), upd.cpu(), 1,
                                  static_cast<zeroc_rt_scatter_reduction_t>(7), full.cpu()),
      zeroc_rt_cuda_k_scatter_elements(data.gpu(), idx.gpu(), upd.gpu(), 1,
                                       static_cast<zeroc_rt_scatter_reduction_t>(7), full.gpu()),
      "scatter_elements reduction 7");
  Tensor flags = intTensor(BOOL, {3, 4}, std::vector<int64_t>(12, 1));
  Tensor flagUpd = intTensor(BOOL, {3, 2}, std::vector<int64_t>(6, 0));
  Tensor flagOut = intTensor(BOOL, {3, 4}, std::vector<int64_t>(12, 0));
  expectSameError(zeroc_rt_k_scatter_elements(flags.cpu(), idx.cpu(), flagUpd.cpu(), 1,
                                              ZEROC_RT_SCATTER_ADD, flagOut.cpu()),
                  zeroc_rt_cuda_k_scatter_elements(flags.gpu(), idx.gpu(), flagUpd.gpu(), 1,
                                                   ZEROC_RT_SCATTER_ADD, flagOut.gpu()),
                  "scatter_elements add on bool");
  expectSameError(zeroc_rt_k_scatter_elements(data.cpu(), idx.cpu(), upd.cpu(), 1,
                                              ZEROC_RT_SCATTER_ADD, data.cpu()),
                  zeroc_rt_cuda_k_scatter_elements(data.gpu(), idx.gpu(), upd.gpu(), 1,
                                                   ZEROC_RT_SCATTER_ADD, data.gpu()),
                  "scatter_elements in place");
  ASSERT_OK(zc::gpuSynchronize()); // nothing was launched
}

//===----------------------------------------------------------------------===//
// Errors found on the device
//===----------------------------------------------------------------------===//

/// A kernel's flagged error is reported once, by the next gpuSynchronize.
/// `needle`: what the message says ("out of range" for code 1, "bad data"
/// for the other codes).
void expectFlaggedOnce(const char *what, const char *needle = "out of range") {
  zeroc_rt_status_t flagged = zc::gpuSynchronize();
  ASSERT_TRUE(flagged != nullptr) << what << ": gpuSynchronize reported nothing";
  const std::string message = takeMessage(flagged);
  EXPECT_NE(message.find(needle), std::string::npos) << message;
  ASSERT_OK(zc::gpuSynchronize());
}

TEST(KernelParityFixed, GatherIndexOutOfRange) {
  Rng rng(kSeed);
  for (int64_t bad : {int64_t{10}, int64_t{-11}}) {
    SCOPED_TRACE("index " + std::to_string(bad));
    Tensor data = randomTensor(F32, {10, 4}, rng);
    Tensor idx = intTensor(I64, {3}, {0, bad, 2});
    Tensor out = outputTensor(F32, {3, 4});
    zeroc_rt_status_t cpu = zeroc_rt_k_gather(data.cpu(), idx.cpu(), 0, out.cpu());
    EXPECT_EQ(zeroc_rt_status_code(cpu), ZEROC_RT_INVALID_ARGUMENT);
    zeroc_rt_status_free(cpu);
    // The launch cannot know; the synchronization reports it.
    ASSERT_OK(zeroc_rt_cuda_k_gather(data.gpu(), idx.gpu(), 0, out.gpu()));
    expectFlaggedOnce("gather");
  }
}

TEST(KernelParityFixed, CrossEntropyLabelOutOfRange) {
  Rng rng(kSeed);
  Tensor scores = randomTensor(F32, {4, 5}, rng);
  Tensor lab = intTensor(I64, {4}, {0, 5, 1, 2}); // 5 is not a class
  Tensor loss = outputTensor(F32, {});
  ASSERT_OK(zeroc_rt_cuda_k_softmax_cross_entropy(scores.gpu(), lab.gpu(), ZEROC_RT_LOSS_MEAN,
                                                  0, 0, loss.gpu()));
  expectFlaggedOnce("softmax_cross_entropy");
  Tensor gout = randomTensor(F32, {}, rng), grad = outputTensor(F32, {4, 5});
  ASSERT_OK(zeroc_rt_cuda_k_softmax_cross_entropy_with_grad(
      scores.gpu(), lab.gpu(), ZEROC_RT_LOSS_MEAN, 0, 0, gout.gpu(), loss.gpu(), grad.gpu()));
  expectFlaggedOnce("softmax_cross_entropy_with_grad");
}


TEST(KernelParityFixed, IntegerDivisionByZeroAndNegativeExponent) {
  Rng rng(kSeed);
  for (zeroc_rt_binary_op_t op : {ZEROC_RT_BINARY_DIV, ZEROC_RT_BINARY_POW}) {
    SCOPED_TRACE(op == ZEROC_RT_BINARY_DIV ? "div" : "pow");
    Tensor a = randomInts(I64, {2, 3}, rng, 1, 9);
    Tensor b = intTensor(I64, {3}, {1, op == ZEROC_RT_BINARY_DIV ? 0 : -2, 2});
    Tensor out = outputTensor(I64, {2, 3});
    zeroc_rt_status_t cpu = zeroc_rt_k_binary(op, a.cpu(), b.cpu(), out.cpu());
    EXPECT_EQ(zeroc_rt_status_code(cpu), ZEROC_RT_INVALID_ARGUMENT);
    zeroc_rt_status_free(cpu);
    ASSERT_OK(zeroc_rt_cuda_k_binary(op, a.gpu(), b.gpu(), out.gpu()));
    expectFlaggedOnce("integer binary", op == ZEROC_RT_BINARY_DIV ? "division by zero"
                                                                  : "negative exponent");
  }
}

TEST(KernelParityFixed, ScatterNdIndexOutOfRange) {
  Rng rng(kSeed);
  for (zeroc_rt_scatter_reduction_t r : {ZEROC_RT_SCATTER_NONE, ZEROC_RT_SCATTER_ADD}) {
    for (int64_t bad : {int64_t{5}, int64_t{-6}}) {
      SCOPED_TRACE("reduction " + std::to_string(r) + " index " + std::to_string(bad));
      Tensor data = randomTensor(F32, {5, 3}, rng);
      Tensor idx = intTensor(I64, {2, 1}, {1, bad});
      Tensor upd = randomTensor(F32, {2, 3}, rng);
      Tensor out = outputTensor(F32, {5, 3});
      zeroc_rt_status_t cpu = zeroc_rt_k_scatter_nd(data.cpu(), idx.cpu(), upd.cpu(), r, out.cpu());
      EXPECT_EQ(zeroc_rt_status_code(cpu), ZEROC_RT_INVALID_ARGUMENT);
      zeroc_rt_status_free(cpu);
      ASSERT_OK(zeroc_rt_cuda_k_scatter_nd(data.gpu(), idx.gpu(), upd.gpu(), r, out.gpu()));
      expectFlaggedOnce("scatter_nd");
    }
  }
}

TEST(KernelParityFixed, ScatterNdRepeatedSlices) {
  // Reduction none with two tuples on one slice: the CPU kernel rejects it
  // (ONNX leaves the result undefined); the CUDA kernel flags it.
  Rng rng(kSeed);
  for (const ScatterCase &c : kScatterCases) {
    if (c.distinct)
      continue;
    SCOPED_TRACE(dimsText(c.data) + " indices " + dimsText(c.indexDims));
    Tensor data = randomTensor(F32, c.data, rng);
    Tensor idx = intTensor(c.indexType, c.indexDims, c.indices);
    Tensor upd = randomTensor(F32, c.updates, rng);
    Tensor out = outputTensor(F32, c.data);
    zeroc_rt_status_t cpu =
        zeroc_rt_k_scatter_nd(data.cpu(), idx.cpu(), upd.cpu(), ZEROC_RT_SCATTER_NONE, out.cpu());
    EXPECT_EQ(zeroc_rt_status_code(cpu), ZEROC_RT_INVALID_ARGUMENT);
    zeroc_rt_status_free(cpu);
    ASSERT_OK(zeroc_rt_cuda_k_scatter_nd(data.gpu(), idx.gpu(), upd.gpu(), ZEROC_RT_SCATTER_NONE,
                                         out.gpu()));
    expectFlaggedOnce("scatter_nd", "address one element or slice");
  }
}

TEST(KernelParityFixed, ElementAndNdIndexOutOfRange) {
  Rng rng(kSeed);
  for (int64_t bad : {int64_t{4}, int64_t{-5}}) {
    SCOPED_TRACE("index " + std::to_string(bad));
    // Along axis 1 of a {3, 4} data: one bad index among good ones.
    Tensor data = randomTensor(F32, {3, 4}, rng);
    Tensor idx = intTensor(I64, {3, 2}, {0, 1, bad, 3, -1, -4});
    Tensor upd = randomTensor(F32, {3, 2}, rng);
    Tensor picked = outputTensor(F32, {3, 2}), full = outputTensor(F32, {3, 4});
    zeroc_rt_status_t cpu = zeroc_rt_k_gather_elements(data.cpu(), idx.cpu(), 1, picked.cpu());
    EXPECT_EQ(zeroc_rt_status_code(cpu), ZEROC_RT_INVALID_ARGUMENT);
    zeroc_rt_status_free(cpu);
    ASSERT_OK(zeroc_rt_cuda_k_gather_elements(data.gpu(), idx.gpu(), 1, picked.gpu()));
    expectFlaggedOnce("gather_elements");
    cpu = zeroc_rt_k_gather_elements_grad(upd.cpu(), idx.cpu(), 1, full.cpu());
    EXPECT_EQ(zeroc_rt_status_code(cpu), ZEROC_RT_INVALID_ARGUMENT);
    zeroc_rt_status_free(cpu);
    ASSERT_OK(zeroc_rt_cuda_k_gather_elements_grad(upd.gpu(), idx.gpu(), 1, full.gpu()));
    expectFlaggedOnce("gather_elements_grad");
    for (zeroc_rt_scatter_reduction_t r : kScatterReductions) {
      SCOPED_TRACE("reduction " + std::to_string(r));
      cpu = zeroc_rt_k_scatter_elements(data.cpu(), idx.cpu(), upd.cpu(), 1, r, full.cpu());
      EXPECT_EQ(zeroc_rt_status_code(cpu), ZEROC_RT_INVALID_ARGUMENT);
      zeroc_rt_status_free(cpu);
      ASSERT_OK(
          zeroc_rt_cuda_k_scatter_elements(data.gpu(), idx.gpu(), upd.gpu(), 1, r, full.gpu()));
      expectFlaggedOnce("scatter_elements");
    }
    // gather_nd on (i, j) pairs, the bad one in dim 1; and with empty
    // slices, which copy nothing but whose indices are checked all the same.
    Tensor pairs = intTensor(I32, {2, 2}, {2, bad, -3, 0});
    Tensor elements = outputTensor(F32, {2});
    cpu = zeroc_rt_k_gather_nd(data.cpu(), pairs.cpu(), elements.cpu());
    EXPECT_EQ(zeroc_rt_status_code(cpu), ZEROC_RT_INVALID_ARGUMENT);
    zeroc_rt_status_free(cpu);
    ASSERT_OK(zeroc_rt_cuda_k_gather_nd(data.gpu(), pairs.gpu(), elements.gpu()));
    expectFlaggedOnce("gather_nd");
    Tensor empty(F32, {4, 0});
    Tensor rows = intTensor(I64, {2, 1}, {1, bad}), none = outputTensor(F32, {2, 0});
    cpu = zeroc_rt_k_gather_nd(empty.cpu(), rows.cpu(), none.cpu());
    EXPECT_EQ(zeroc_rt_status_code(cpu), ZEROC_RT_INVALID_ARGUMENT);
    zeroc_rt_status_free(cpu);
    ASSERT_OK(zeroc_rt_cuda_k_gather_nd(empty.gpu(), rows.gpu(), none.gpu()));
    expectFlaggedOnce("gather_nd with empty slices");
  }
}

TEST(KernelParityFixed, ScatterElementsRepeatedElements) {
  // Reduction none with two positions on one element: the CPU kernel
  // rejects it (ONNX leaves the result undefined); the CUDA kernel flags it.
  Rng rng(kSeed);
  for (const ElementsCase &c : kElementsCases) {
    if (distinctPossible(c) || !numel(c.indices))
      continue;
    SCOPED_TRACE(elementsText(c));
    Tensor data = randomTensor(F32, c.data, rng);
    Tensor idx = elementIndices(c, rng); // longer than the axis: a repeat
    Tensor upd = randomTensor(F32, c.indices, rng);
    Tensor out = outputTensor(F32, c.data);
    zeroc_rt_status_t cpu = zeroc_rt_k_scatter_elements(data.cpu(), idx.cpu(), upd.cpu(), c.axis,
                                                        ZEROC_RT_SCATTER_NONE, out.cpu());
    EXPECT_EQ(zeroc_rt_status_code(cpu), ZEROC_RT_INVALID_ARGUMENT);
    zeroc_rt_status_free(cpu);
    ASSERT_OK(zeroc_rt_cuda_k_scatter_elements(data.gpu(), idx.gpu(), upd.gpu(), c.axis,
                                               ZEROC_RT_SCATTER_NONE, out.gpu()));
    expectFlaggedOnce("scatter_elements", "without reduction");
  }
  // Two of four distinct-looking indices name one element (1 and -3 of 4).
  Tensor data = randomTensor(F32, {2, 4}, rng);
  Tensor idx = intTensor(I32, {2, 2}, {0, 2, 1, -3});
  Tensor upd = randomTensor(F32, {2, 2}, rng), out = outputTensor(F32, {2, 4});
  zeroc_rt_status_t cpu = zeroc_rt_k_scatter_elements(data.cpu(), idx.cpu(), upd.cpu(), 1,
                                                      ZEROC_RT_SCATTER_NONE, out.cpu());
  EXPECT_EQ(zeroc_rt_status_code(cpu), ZEROC_RT_INVALID_ARGUMENT);
  zeroc_rt_status_free(cpu);
  ASSERT_OK(zeroc_rt_cuda_k_scatter_elements(data.gpu(), idx.gpu(), upd.gpu(), 1,
                                             ZEROC_RT_SCATTER_NONE, out.gpu()));
  expectFlaggedOnce("scatter_elements", "without reduction");
}

//===----------------------------------------------------------------------===//
// Conv, pool, batch norm
//===----------------------------------------------------------------------===//

/// A conv or pool window: 1-D or 2-D kernel, strides, dilations, pads.
struct WindowCase {
  Dims x;        // (N, C, spatial...)
  Dims kernel;   // spatial kernel dims
  Dims strides, dilations, padsBegin, padsEnd;
  int ceilMode;
};

zeroc_rt_window_t windowOf(const WindowCase &c) {
  zeroc_rt_window_t w{};
  w.spatial_rank = static_cast<int32_t>(c.kernel.size());
  w.ceil_mode = c.ceilMode;
  for (size_t i = 0; i < c.kernel.size(); ++i) {
    w.kernel[i] = c.kernel[i];
    w.strides[i] = c.strides[i];
    w.dilations[i] = c.dilations[i];
    w.pads_begin[i] = c.padsBegin[i];
    w.pads_end[i] = c.padsEnd[i];
  }
  return w;
}

/// The output spatial dims (ONNX's rule, kernels.h).
Dims windowOutDims(const WindowCase &c) {
  Dims out;
  for (size_t i = 0; i < c.kernel.size(); ++i) {
    const int64_t span = c.x[2 + i] + c.padsBegin[i] + c.padsEnd[i] -
                         ((c.kernel[i] - 1) * c.dilations[i] + 1);
    out.push_back((c.ceilMode ? (span + c.strides[i] - 1) / c.strides[i] : span / c.strides[i]) +
                  1);
  }
  return out;
}

std::string windowText(const WindowCase &c) {
  return "x " + dimsText(c.x) + " k " + dimsText(c.kernel) + " s " + dimsText(c.strides) +
         " d " + dimsText(c.dilations) + " pads " + dimsText(c.padsBegin) + "/" +
         dimsText(c.padsEnd) + (c.ceilMode ? " ceil" : "");
}

/// Conv cases: the window (kernel = w's spatial dims) and group; M output channels.
struct ConvCase {
  WindowCase win;
  int64_t group, m;
};
const ConvCase kConvCases[] = {
    {{{2, 3, 9}, {3}, {1}, {1}, {0}, {0}, 0}, 1, 4},               // 1-D plain
    {{{2, 4, 11}, {3}, {2}, {2}, {2}, {1}, 0}, 2, 6},              // 1-D stride, dilation, pads, groups
    {{{2, 3, 7, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 0}, 1, 5}, // 2-D same padding
    {{{1, 4, 9, 8}, {3, 2}, {2, 3}, {1, 2}, {1, 0}, {2, 1}, 0}, 2, 4}, // 2-D asymmetric
    {{{2, 6, 5, 5}, {3, 3}, {1, 2}, {2, 1}, {2, 1}, {0, 1}, 0}, 6, 6}, // depthwise
    {{{2, 3, 8, 8}, {1, 1}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, 0}, 1, 4}, // 1x1 stride 2
};

Dims convOutDims(const ConvCase &c) {
  Dims out{c.win.x[0], c.m};
  for (int64_t d : windowOutDims(c.win))
    out.push_back(d);
  return out;
}
Dims convWeightDims(const ConvCase &c) {
  Dims w{c.m, c.win.x[1] / c.group};
  for (int64_t k : c.win.kernel)
    w.push_back(k);
  return w;
}

TEST_P(KernelParity, Conv) {
  for (const ConvCase &c : kConvCases)
    for (bool withBias : {true, false}) {
      SCOPED_TRACE(windowText(c.win) + " group " + std::to_string(c.group) +
                   (withBias ? " bias" : " no bias"));
      const zeroc_rt_window_t window = windowOf(c.win);
      Tensor x = random(c.win.x), w = random(convWeightDims(c)), bias = random({c.m});
      Tensor y = output(convOutDims(c));
      ASSERT_OK(zeroc_rt_k_conv(x.cpu(), w.cpu(), withBias ? bias.cpu() : nullptr, &window,
                                c.group, y.cpu()));
      ASSERT_GPU_OK(zeroc_rt_cuda_k_conv(x.gpu(), w.gpu(), withBias ? bias.gpu() : nullptr,
                                         &window, c.group, y.gpu()));
      expectClose(y, tol(true), "conv");
    }
}

TEST_P(KernelParity, ConvGradInput) {
  for (const ConvCase &c : kConvCases) {
    SCOPED_TRACE(windowText(c.win) + " group " + std::to_string(c.group));
    const zeroc_rt_window_t window = windowOf(c.win);
    Tensor w = random(convWeightDims(c)), gy = random(convOutDims(c));
    Tensor gx = output(c.win.x);
    ASSERT_OK(zeroc_rt_k_conv_grad_input(w.cpu(), gy.cpu(), &window, c.group, gx.cpu()));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_conv_grad_input(w.gpu(), gy.gpu(), &window, c.group, gx.gpu()));
    expectClose(gx, tol(true), "conv_grad_input");
  }
}

TEST_P(KernelParity, ConvGradWeight) {
  for (const ConvCase &c : kConvCases) {
    SCOPED_TRACE(windowText(c.win) + " group " + std::to_string(c.group));
    const zeroc_rt_window_t window = windowOf(c.win);
    Tensor x = random(c.win.x), gy = random(convOutDims(c));
    Tensor gw = output(convWeightDims(c));
    ASSERT_OK(zeroc_rt_k_conv_grad_weight(x.cpu(), gy.cpu(), &window, c.group, gw.cpu()));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_conv_grad_weight(x.gpu(), gy.gpu(), &window, c.group, gw.gpu()));
    expectClose(gw, tol(true), "conv_grad_weight");
  }
}

TEST_P(KernelParity, ConvRejectsCeilMode) {
  ConvCase c = kConvCases[0];
  c.win.ceilMode = 1;
  const zeroc_rt_window_t window = windowOf(c.win);
  Tensor x = random(c.win.x), w = random(convWeightDims(c));
  Tensor y = output(convOutDims(c));
  zeroc_rt_status_t s = zeroc_rt_cuda_k_conv(x.gpu(), w.gpu(), nullptr, &window, 1, y.gpu());
  ASSERT_TRUE(s != nullptr);
  EXPECT_EQ(zeroc_rt_status_code(s), ZEROC_RT_INVALID_ARGUMENT);
  zeroc_rt_status_free(s);
}

/// Pool windows (pads smaller than the dilated kernel).
const WindowCase kPoolCases[] = {
    {{2, 3, 10}, {3}, {2}, {1}, {1}, {1}, 0},                 // 1-D
    {{2, 3, 10}, {2}, {3}, {2}, {1}, {0}, 1},                 // 1-D dilated, ceil_mode
    {{2, 3, 7, 8}, {2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, 0}, // 2-D plain
    {{2, 2, 9, 7}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, 0}, // resnet's max pool
    {{1, 3, 8, 9}, {3, 2}, {2, 3}, {2, 1}, {2, 1}, {1, 0}, 1}, // ceil, dilation, asymmetric
    {{2, 2, 5, 5}, {3, 3}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, 1}, // ceil: a window of padding edges
};

Dims poolOutDims(const WindowCase &c) {
  Dims out{c.x[0], c.x[1]};
  for (int64_t d : windowOutDims(c))
    out.push_back(d);
  return out;
}

const std::pair<zeroc_rt_pool_kind_t, const char *> kPoolKinds[] = {
    {ZEROC_RT_POOL_MAX, "max"}, {ZEROC_RT_POOL_AVG, "avg"}};

/// x with ties (values on a coarse grid) so that the first maximum matters.
Tensor poolInput(zeroc_rt_dtype_t dtype, const Dims &dims, Rng &rng) {
  Tensor x(dtype, dims);
  std::uniform_int_distribution<int> dist(-4, 4);
  for (int64_t i = 0; i < x.size(); ++i)
    x.set(i, 0.25 * dist(rng));
  x.upload();
  return x;
}

TEST_P(KernelParity, Pool) {
  for (const auto &[kind, name] : kPoolKinds)
    for (const WindowCase &c : kPoolCases)
      for (int includePad : {0, 1}) {
        SCOPED_TRACE(std::string(name) + " " + windowText(c) +
                     (includePad ? " count_include_pad" : ""));
        const zeroc_rt_window_t window = windowOf(c);
        Tensor x = kind == ZEROC_RT_POOL_MAX ? poolInput(dt(), c.x, rng) : random(c.x);
        Tensor y = output(poolOutDims(c));
        ASSERT_OK(zeroc_rt_k_pool(kind, x.cpu(), &window, includePad, y.cpu()));
        ASSERT_GPU_OK(zeroc_rt_cuda_k_pool(kind, x.gpu(), &window, includePad, y.gpu()));
        expectClose(y, tol(kind == ZEROC_RT_POOL_AVG), std::string("pool ") + name);
      }
}

TEST_P(KernelParity, PoolMaxPropagatesNaN) {
  const WindowCase c = kPoolCases[3];
  const zeroc_rt_window_t window = windowOf(c);
  Tensor x = random(c.x);
  x.set(5, kNaN);
  x.set(40, kNaN);
  x.upload();
  Tensor y = output(poolOutDims(c));
  ASSERT_OK(zeroc_rt_k_pool(ZEROC_RT_POOL_MAX, x.cpu(), &window, 0, y.cpu()));
  ASSERT_GPU_OK(zeroc_rt_cuda_k_pool(ZEROC_RT_POOL_MAX, x.gpu(), &window, 0, y.gpu()));
  expectSameBits(y, "pool max with NaN");
}

TEST_P(KernelParity, PoolGrad) {
  for (const auto &[kind, name] : kPoolKinds)
    for (const WindowCase &c : kPoolCases)
      for (int includePad : {0, 1}) {
        SCOPED_TRACE(std::string(name) + " " + windowText(c) +
                     (includePad ? " count_include_pad" : ""));
        const zeroc_rt_window_t window = windowOf(c);
        const bool isMax = kind == ZEROC_RT_POOL_MAX;
        Tensor x = poolInput(dt(), c.x, rng); // ties: the first maximum wins
        Tensor gy = random(poolOutDims(c));
        Tensor gx = output(c.x);
        ASSERT_OK(zeroc_rt_k_pool_grad(kind, isMax ? x.cpu() : nullptr, gy.cpu(), &window,
                                       includePad, gx.cpu()));
        ASSERT_GPU_OK(zeroc_rt_cuda_k_pool_grad(kind, isMax ? x.gpu() : nullptr, gy.gpu(),
                                                &window, includePad, gx.gpu()));
        expectClose(gx, tol(true), std::string("pool_grad ") + name);
      }
}

const Dims kBatchNormShapes[] = {{4, 3}, {2, 3, 7}, {3, 4, 5, 6}};

TEST_P(KernelParity, BatchNorm) {
  for (const Dims &dims : kBatchNormShapes) {
    SCOPED_TRACE(dimsText(dims));
    const Dims params{dims[1]};
    Tensor x = random(dims, 1.0, 3.0); // a mean far from 0
    Tensor scale = random(params, 0.5, 1.5), bias = random(params);
    Tensor y = output(dims);
    const double eps = 1e-5;
    ASSERT_OK(zeroc_rt_k_batch_norm(x.cpu(), scale.cpu(), bias.cpu(), eps, y.cpu()));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_batch_norm(x.gpu(), scale.gpu(), bias.gpu(), eps, y.gpu()));
    expectClose(y, tol(true), "batch_norm");
  }
}

TEST_P(KernelParity, BatchNormGrad) {
  for (const Dims &dims : kBatchNormShapes) {
    SCOPED_TRACE(dimsText(dims));
    const Dims params{dims[1]};
    Tensor x = random(dims, 1.0, 3.0);
    Tensor scale = random(params, 0.5, 1.5), gy = random(dims);
    Tensor gx = output(dims), gscale = output(params), gbias = output(params);
    const double eps = 1e-5;
    ASSERT_OK(zeroc_rt_k_batch_norm_grad(x.cpu(), scale.cpu(), eps, gy.cpu(), gx.cpu(),
                                         gscale.cpu(), gbias.cpu()));
    ASSERT_GPU_OK(zeroc_rt_cuda_k_batch_norm_grad(x.gpu(), scale.gpu(), eps, gy.gpu(), gx.gpu(),
                                                  gscale.gpu(), gbias.gpu()));
    expectClose(gx, tol(true), "batch_norm_grad grad_x");
    expectClose(gscale, tol(true), "batch_norm_grad grad_scale");
    expectClose(gbias, tol(true), "batch_norm_grad grad_bias");
  }
}


} // namespace

/// With no GPU, exit 77 (ctest's SKIP_RETURN_CODE) after one line; else
/// open GPU 0 (the host emulation's one device) and run the tests.
int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
#ifdef GTEST_FLAG_GET
  const bool listing = GTEST_FLAG_GET(list_tests);
#else
  const bool listing = ::testing::GTEST_FLAG(list_tests);
#endif
  if (!listing) { // gtest_discover_tests lists the tests without a device
    if (zc::gpuCount() == 0) {
      std::printf("no GPU: skipped\n");
      return 77;
    }
    int count = 0;
    std::string description;
    if (zeroc_rt_status_t s = zc::gpuOpen(0, &count, &description)) {
      std::fprintf(stderr, "gpuOpen: %s\n", takeMessage(s).c_str());
      return 1;
    }
    std::printf("CUDA kernel parity on %s\n", description.c_str());
  }
  const int rc = RUN_ALL_TESTS();
  if (!listing)
    zc::gpuClose();
  return rc;
}
