//===- kernels_pad_scatter_test.cc - pad, gathers, scatters, cumsum -------===//
//
// Each kernel against a naive reference loop (several dtypes), each gradient
// kernel by finite differences in F64, and the rejections: bad descriptors,
// shapes, modes and out-of-range or repeated indices.
//
//===----------------------------------------------------------------------===//

#include "kernels_test_util.h"

#include <gtest/gtest.h>

using namespace zeroc_rt::test;

namespace {

constexpr auto INVALID = ZEROC_RT_INVALID_ARGUMENT;
constexpr auto SHAPE = ZEROC_RT_SHAPE_MISMATCH;

const zeroc_rt_dtype_t kDtypes[] = {ZEROC_RT_DTYPE_F32, ZEROC_RT_DTYPE_F64,
                                    ZEROC_RT_DTYPE_I64, ZEROC_RT_DTYPE_I32,
                                    ZEROC_RT_DTYPE_U8, ZEROC_RT_DTYPE_BOOL};

HostTensor randomOf(zeroc_rt_dtype_t dt, const Dims &dims, std::mt19937_64 &rng) {
  if (dt == ZEROC_RT_DTYPE_BOOL)
    return randomTensor(dt, dims, rng, 0, 1);
  if (dt == ZEROC_RT_DTYPE_U8)
    return randomTensor(dt, dims, rng, 0, 255);
  return randomTensor(dt, dims, rng, -100, 100);
}

//===----------------------------------------------------------------------===//
// Pad
//===----------------------------------------------------------------------===//

int64_t padSource(int64_t p, int64_t n, zeroc_rt_pad_mode_t mode) {
  if (p >= 0 && p < n)
    return p;
  switch (mode) {
  case ZEROC_RT_PAD_EDGE:
    return p < 0 ? 0 : n - 1;
  case ZEROC_RT_PAD_REFLECT: // numpy.pad(mode="reflect"), pads below n
    return p < 0 ? -p : 2 * (n - 1) - p;
  case ZEROC_RT_PAD_WRAP:
    return p < 0 ? p + n : p - n;
  default:
    return -1;
  }
}

struct PadCase {
  Dims dims;
  std::vector<int64_t> pads;
  zeroc_rt_pad_mode_t mode;
};

const PadCase kPadCases[] = {
    {{2, 8}, {0, 0, 0, 1}, ZEROC_RT_PAD_CONSTANT}, // the labels shift
    {{3, 5}, {1, -2, -1, 3}, ZEROC_RT_PAD_CONSTANT},
    {{3, 5}, {2, 4, 1, 3}, ZEROC_RT_PAD_REFLECT},
    {{3, 5}, {-1, 2, 2, -3}, ZEROC_RT_PAD_EDGE},
    {{2, 3, 4}, {1, 3, 0, 2, 0, 4}, ZEROC_RT_PAD_WRAP},
    {{4}, {0, 0}, ZEROC_RT_PAD_REFLECT},
    {{}, {}, ZEROC_RT_PAD_CONSTANT},
    {{0, 2}, {1, 0, 1, 1}, ZEROC_RT_PAD_CONSTANT},
};

Dims paddedDims(const PadCase &c) {
  Dims out;
  size_t r = c.dims.size();
  for (size_t d = 0; d < r; ++d)
    out.push_back(c.pads[d] + c.dims[d] + c.pads[d + r]);
  return out;
}

/// Linear input index that padded element `o` reads, or -1.
int64_t padReads(const PadCase &c, const Dims &outDims, int64_t o) {
  Dims idx = unravel(o, outDims), in(c.dims.size());
  for (size_t d = 0; d < c.dims.size(); ++d) {
    in[d] = padSource(idx[d] - c.pads[d], c.dims[d], c.mode);
    if (in[d] < 0)
      return -1;
  }
  return ravel(in, c.dims);
}

TEST(KernelsPad, MatchesReferenceForEveryModeAndDtype) {
  std::mt19937_64 rng(1);
  for (zeroc_rt_dtype_t dt : kDtypes)
    for (const PadCase &c : kPadCases) {
      HostTensor x = randomOf(dt, c.dims, rng);
      Dims outDims = paddedDims(c);
      HostTensor y(dt, outDims);
      double value = dt == ZEROC_RT_DTYPE_BOOL ? 1 : (dt == ZEROC_RT_DTYPE_U8 ? 7 : -100);
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_pad(x.desc(), c.pads.data(), c.mode, value,
                                        y.desc()));
      std::vector<double> want(y.size());
      for (int64_t o = 0; o < y.size(); ++o) {
        int64_t s = padReads(c, outDims, o);
        want[o] = s < 0 ? value : x.get(s);
      }
      EXPECT_EQ(y.values(), want) << dimsName(c.dims) << " mode " << c.mode
                                  << " " << zeroc_rt_dtype_name(dt);
    }
}

TEST(KernelsPad, GradFiniteDifferencesF64) {
  std::mt19937_64 rng(2);
  for (const PadCase &c : kPadCases) {
    Dims outDims = paddedDims(c);
    HostTensor x = randomTensor(ZEROC_RT_DTYPE_F64, c.dims, rng);
    HostTensor w = randomTensor(ZEROC_RT_DTYPE_F64, outDims, rng);
    HostTensor g(ZEROC_RT_DTYPE_F64, c.dims);
    g.fill(3); // overwritten
    ZEROC_RT_ASSERT_OK(
        zeroc_rt_k_pad_grad(w.desc(), c.pads.data(), c.mode, g.desc()));
    auto forward = [&](const std::vector<double> &p) {
      HostTensor xp(ZEROC_RT_DTYPE_F64, c.dims), yp(ZEROC_RT_DTYPE_F64, outDims);
      xp.setValues(p);
      ZEROC_RT_EXPECT_OK(
          zeroc_rt_k_pad(xp.desc(), c.pads.data(), c.mode, 0.25, yp.desc()));
      return yp.values();
    };
    expectGradient(forward, x.values(), w.values(), g.values(),
                   "pad_grad " + dimsName(c.dims));
  }
}

TEST(KernelsPad, GradSumsInDoubleForHalfTypes) {
  // Edge padding of one element 300 times: the sum 301 * 1.0 is exact in
  // double, not in bf16 accumulation (256 + 1 == 256).
  for (zeroc_rt_dtype_t dt : {ZEROC_RT_DTYPE_F16, ZEROC_RT_DTYPE_BF16}) {
    HostTensor g(dt, {301}), gi(dt, {1});
    g.fill(1);
    int64_t pads[] = {150, 150};
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_pad_grad(g.desc(), pads, ZEROC_RT_PAD_EDGE, gi.desc()));
    EXPECT_NEAR(gi.get(0), 301, dt == ZEROC_RT_DTYPE_BF16 ? 2 : 0.5);
  }
}

TEST(KernelsPad, Rejects) {
  HostTensor x(ZEROC_RT_DTYPE_F32, {2, 3}), y(ZEROC_RT_DTYPE_F32, {2, 5});
  int64_t pads[] = {0, 1, 0, 1};
  const char *k = "zeroc_rt_k_pad";
  EXPECT_KERNEL_ERROR(zeroc_rt_k_pad(x.desc(), nullptr, ZEROC_RT_PAD_CONSTANT, 0, y.desc()),
                      INVALID, k, "pads is NULL");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_pad(x.desc(), pads, static_cast<zeroc_rt_pad_mode_t>(9), 0, y.desc()),
                      INVALID, k, "invalid mode 9");
  int64_t wrong[] = {0, 1, 0, 2};
  EXPECT_KERNEL_ERROR(zeroc_rt_k_pad(x.desc(), wrong, ZEROC_RT_PAD_CONSTANT, 0, y.desc()),
                      SHAPE, k, "dim 1: in f32[2,3] padded by 1, 2 is not out f32[2,5]");
  int64_t huge[] = {0, INT64_MAX, 0, 1};
  EXPECT_KERNEL_ERROR(zeroc_rt_k_pad(x.desc(), huge, ZEROC_RT_PAD_CONSTANT, 0, y.desc()),
                      SHAPE, k, "is not out");
  HostTensor e(ZEROC_RT_DTYPE_F32, {0}), e2(ZEROC_RT_DTYPE_F32, {2});
  int64_t one[] = {1, 1};
  EXPECT_KERNEL_ERROR(zeroc_rt_k_pad(e.desc(), one, ZEROC_RT_PAD_REFLECT, 0, e2.desc()),
                      INVALID, k, "only constant padding can fill it");
  HostTensor yi(ZEROC_RT_DTYPE_I64, {2, 5});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_pad(x.desc(), pads, ZEROC_RT_PAD_CONSTANT, 0, yi.desc()),
                      INVALID, k, "out has dtype i64 but in has f32");
  HostTensor gi(ZEROC_RT_DTYPE_I64, {2, 3});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_pad_grad(yi.desc(), pads, ZEROC_RT_PAD_CONSTANT, gi.desc()),
                      INVALID, "zeroc_rt_k_pad_grad", "grad_out has dtype i64");
}

//===----------------------------------------------------------------------===//
// GatherElements
//===----------------------------------------------------------------------===//

struct ElementsCase {
  Dims data, index;
  std::vector<double> indices;
  int64_t axis;
};

const ElementsCase kElementsCases[] = {
    {{2, 5}, {2, 3}, {0, -1, 2, 4, 4, 0}, 1},
    {{3, 2}, {2, 2}, {2, 0, -3, 1}, 0},
    {{2, 3, 4}, {2, 2, 6}, {0, 1, 2, 3, 3, 3, -1, -2, 0, 0, 1, 1,
                            2, 2, 2, 2, 0, 1, 3, 0, 1, 2, -4, 0}, -1},
    {{4}, {0}, {}, 0},
};

int64_t elementsSource(const ElementsCase &c, int64_t i) {
  int64_t axis = c.axis < 0 ? c.axis + int64_t(c.data.size()) : c.axis;
  Dims at = unravel(i, c.index);
  int64_t v = static_cast<int64_t>(c.indices[i]);
  at[axis] = v < 0 ? v + c.data[axis] : v;
  return ravel(at, c.data);
}

TEST(KernelsGatherElements, MatchesReferenceForAnyDtype) {
  std::mt19937_64 rng(3);
  for (zeroc_rt_dtype_t dt : kDtypes)
    for (zeroc_rt_dtype_t it : {ZEROC_RT_DTYPE_I64, ZEROC_RT_DTYPE_I32})
      for (const ElementsCase &c : kElementsCases) {
        HostTensor x = randomOf(dt, c.data, rng), idx(it, c.index), y(dt, c.index);
        idx.setValues(c.indices);
        ZEROC_RT_ASSERT_OK(
            zeroc_rt_k_gather_elements(x.desc(), idx.desc(), c.axis, y.desc()));
        std::vector<double> want(y.size());
        for (int64_t i = 0; i < y.size(); ++i)
          want[i] = x.get(elementsSource(c, i));
        EXPECT_EQ(y.values(), want) << dimsName(c.data);
      }
}

TEST(KernelsGatherElements, GradAccumulatesAndMatchesFiniteDifferences) {
  std::mt19937_64 rng(4);
  for (const ElementsCase &c : kElementsCases) {
    HostTensor idx(ZEROC_RT_DTYPE_I64, c.index);
    idx.setValues(c.indices);
    HostTensor x = randomTensor(ZEROC_RT_DTYPE_F64, c.data, rng);
    HostTensor w = randomTensor(ZEROC_RT_DTYPE_F64, c.index, rng);
    HostTensor g(ZEROC_RT_DTYPE_F64, c.data);
    ZEROC_RT_ASSERT_OK(
        zeroc_rt_k_gather_elements_grad(w.desc(), idx.desc(), c.axis, g.desc()));
    std::vector<double> want(g.size(), 0.0);
    for (int64_t i = 0; i < w.size(); ++i)
      want[elementsSource(c, i)] += w.get(i);
    expectClose(g, want, 1e-12, dimsName(c.data));
    auto forward = [&](const std::vector<double> &p) {
      HostTensor xp(ZEROC_RT_DTYPE_F64, c.data), yp(ZEROC_RT_DTYPE_F64, c.index);
      xp.setValues(p);
      ZEROC_RT_EXPECT_OK(
          zeroc_rt_k_gather_elements(xp.desc(), idx.desc(), c.axis, yp.desc()));
      return yp.values();
    };
    expectGradient(forward, x.values(), w.values(), g.values(),
                   "gather_elements_grad " + dimsName(c.data));
  }
}

TEST(KernelsGatherElements, Rejects) {
  HostTensor x(ZEROC_RT_DTYPE_F32, {2, 5}), idx(ZEROC_RT_DTYPE_I64, {2, 3}),
      y(ZEROC_RT_DTYPE_F32, {2, 3});
  const char *k = "zeroc_rt_k_gather_elements";
  idx.setValues({0, 1, 5, 0, 0, 0});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_gather_elements(x.desc(), idx.desc(), 1, y.desc()),
                      INVALID, k, "index 5 (element 2 of indices i64[2,3]) is out of range for dim 1 of size 5");
  idx.setValues({0, 1, -6, 0, 0, 0});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_gather_elements(x.desc(), idx.desc(), 1, y.desc()),
                      INVALID, k, "index -6");
  idx.fill(0);
  EXPECT_KERNEL_ERROR(zeroc_rt_k_gather_elements(x.desc(), idx.desc(), 2, y.desc()),
                      INVALID, k, "axis 2 is out of range for rank 2");
  HostTensor big(ZEROC_RT_DTYPE_I64, {3, 3}), ybig(ZEROC_RT_DTYPE_F32, {3, 3});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_gather_elements(x.desc(), big.desc(), 1, ybig.desc()),
                      SHAPE, k, "exceeds data f32[2,5] in dim 0");
  HostTensor y2(ZEROC_RT_DTYPE_F32, {2, 2});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_gather_elements(x.desc(), idx.desc(), 1, y2.desc()),
                      SHAPE, k, "must have the shape of indices");
  HostTensor fidx(ZEROC_RT_DTYPE_F32, {2, 3});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_gather_elements(x.desc(), fidx.desc(), 1, y.desc()),
                      INVALID, k, "indices has dtype f32");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_gather_elements_grad(y.desc(), idx.desc(), 1, nullptr),
                      INVALID, "zeroc_rt_k_gather_elements_grad", "grad_data is NULL");
}

//===----------------------------------------------------------------------===//
// GatherND and ScatterND
//===----------------------------------------------------------------------===//

TEST(KernelsGatherNd, MatchesReference) {
  std::mt19937_64 rng(5);
  for (zeroc_rt_dtype_t dt : kDtypes) {
    HostTensor x = randomOf(dt, {3, 4, 2}, rng);
    HostTensor idx(ZEROC_RT_DTYPE_I64, {2, 2}), y(dt, {2, 2});
    idx.setValues({0, 1, 2, -1});
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_gather_nd(x.desc(), idx.desc(), y.desc()));
    EXPECT_EQ(y.values(), (std::vector<double>{x.get(2), x.get(3), x.get(22), x.get(23)}));
    HostTensor idx3(ZEROC_RT_DTYPE_I32, {1, 3}), y3(dt, {1});
    idx3.setValues({1, 2, 1});
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_gather_nd(x.desc(), idx3.desc(), y3.desc()));
    EXPECT_EQ(y3.get(0), x.get(8 + 4 + 1));
  }
  HostTensor x(ZEROC_RT_DTYPE_F32, {3, 4}), idx(ZEROC_RT_DTYPE_I64, {1, 1}),
      y(ZEROC_RT_DTYPE_F32, {1, 4});
  idx.setValues({3});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_gather_nd(x.desc(), idx.desc(), y.desc()), INVALID,
                      "zeroc_rt_k_gather_nd", "index 3 (element 0 of indices i64[1,1]) is out of range for dim 0 of size 3");
  HostTensor idx5(ZEROC_RT_DTYPE_I64, {1, 3});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_gather_nd(x.desc(), idx5.desc(), y.desc()), SHAPE,
                      "zeroc_rt_k_gather_nd", "1 <= k <= the rank of data");
}

TEST(KernelsScatterNd, NoneAddMulMatchReference) {
  std::mt19937_64 rng(6);
  for (zeroc_rt_dtype_t dt : kDtypes)
    for (auto red : {ZEROC_RT_SCATTER_NONE, ZEROC_RT_SCATTER_ADD, ZEROC_RT_SCATTER_MUL}) {
      if (dt == ZEROC_RT_DTYPE_BOOL && red != ZEROC_RT_SCATTER_NONE)
        continue;
      HostTensor x = randomTensor(dt, {4, 3}, rng, 0, 5);
      HostTensor u = randomTensor(dt, {2, 3}, rng, 0, 5);
      HostTensor idx(ZEROC_RT_DTYPE_I64, {2, 1}), y(dt, {4, 3});
      // Rows 3 and 1 (-3); add and mul also see row 1 twice.
      idx.setValues({3, red == ZEROC_RT_SCATTER_NONE ? -3.0 : 3.0});
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_scatter_nd(x.desc(), idx.desc(), u.desc(), red, y.desc()));
      std::vector<double> want = x.values();
      for (int t = 0; t < 2; ++t) {
        int64_t row = red == ZEROC_RT_SCATTER_NONE ? (t == 0 ? 3 : 1) : 3;
        for (int j = 0; j < 3; ++j) {
          double &w = want[row * 3 + j];
          double v = u.get(t * 3 + j);
          w = red == ZEROC_RT_SCATTER_NONE ? v : (red == ZEROC_RT_SCATTER_ADD ? w + v : w * v);
        }
      }
      HostTensor ref(dt, {4, 3});
      ref.setValues(want); // rounds/wraps into the dtype as the kernel does
      if (dt == ZEROC_RT_DTYPE_F32)
        expectClose(y, ref.values(), 1e-6, "scatter_nd f32");
      else
        EXPECT_EQ(y.values(), ref.values()) << zeroc_rt_dtype_name(dt) << " " << red;
    }
}

TEST(KernelsScatterNd, Rejects) {
  HostTensor x(ZEROC_RT_DTYPE_F32, {4, 3}), u(ZEROC_RT_DTYPE_F32, {2, 3}),
      idx(ZEROC_RT_DTYPE_I64, {2, 1}), y(ZEROC_RT_DTYPE_F32, {4, 3});
  const char *k = "zeroc_rt_k_scatter_nd";
  idx.setValues({1, -3});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_scatter_nd(x.desc(), idx.desc(), u.desc(), ZEROC_RT_SCATTER_NONE, y.desc()),
                      INVALID, k, "index tuple 1 of indices i64[2,1] addresses a slice an earlier tuple wrote");
  idx.setValues({1, 4});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_scatter_nd(x.desc(), idx.desc(), u.desc(), ZEROC_RT_SCATTER_ADD, y.desc()),
                      INVALID, k, "index 4 (element 1 of indices i64[2,1]) is out of range for dim 0 of size 4");
  idx.setValues({1, 2});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_scatter_nd(x.desc(), idx.desc(), u.desc(),
                                            static_cast<zeroc_rt_scatter_reduction_t>(5), y.desc()),
                      INVALID, k, "invalid reduction 5");
  HostTensor u2(ZEROC_RT_DTYPE_F32, {2, 2});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_scatter_nd(x.desc(), idx.desc(), u2.desc(), ZEROC_RT_SCATTER_NONE, y.desc()),
                      SHAPE, k, "updates is f32[2,2] but indices.shape[:-1] + data.shape[k:] is [2,3]");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_scatter_nd(x.desc(), idx.desc(), u.desc(), ZEROC_RT_SCATTER_NONE, x.desc()),
                      INVALID, k, "out overlaps data");
  HostTensor b(ZEROC_RT_DTYPE_BOOL, {4, 3}), ub(ZEROC_RT_DTYPE_BOOL, {2, 3}), yb(ZEROC_RT_DTYPE_BOOL, {4, 3});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_scatter_nd(b.desc(), idx.desc(), ub.desc(), ZEROC_RT_SCATTER_ADD, yb.desc()),
                      INVALID, k, "add and mul need a numeric dtype, not bool");
}

//===----------------------------------------------------------------------===//
// ScatterElements
//===----------------------------------------------------------------------===//

/// Cases without repeated targets (reduction none needs them distinct); the
/// add and mul tests also use kElementsCases, which repeat.
const ElementsCase kDistinctElementsCases[] = {
    {{2, 5}, {2, 3}, {0, -1, 2, 4, 1, 0}, 1},
    {{3, 2}, {2, 2}, {2, 0, -3, 1}, 0},
    {{2, 3, 4}, {1, 2, 3}, {3, 0, -2, 1, 2, 0}, -1},
    {{4}, {0}, {}, 0},
};

/// data with updates scattered at the targets of elementsSource.
std::vector<double> scatterElementsRef(const ElementsCase &c,
                                       const HostTensor &x, const HostTensor &u,
                                       zeroc_rt_scatter_reduction_t red) {
  std::vector<double> want = x.values();
  for (int64_t i = 0; i < u.size(); ++i) {
    double &w = want[elementsSource(c, i)];
    double v = u.get(i);
    w = red == ZEROC_RT_SCATTER_NONE ? v
        : red == ZEROC_RT_SCATTER_ADD ? w + v
                                      : w * v;
  }
  return want;
}

void checkScatterElements(const ElementsCase &c, zeroc_rt_dtype_t dt,
                          zeroc_rt_dtype_t it,
                          zeroc_rt_scatter_reduction_t red,
                          std::mt19937_64 &rng) {
  // Values in [0, 3]: 3^5 still fits u8, so mul's products wrap nowhere.
  HostTensor x = randomTensor(dt, c.data, rng, 0, 3);
  HostTensor u = randomTensor(dt, c.index, rng, 0, 3);
  HostTensor idx(it, c.index), y(dt, c.data);
  idx.setValues(c.indices);
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_scatter_elements(x.desc(), idx.desc(), u.desc(),
                                                 c.axis, red, y.desc()));
  HostTensor ref(dt, c.data);
  ref.setValues(scatterElementsRef(c, x, u, red));
  std::string what = std::string(zeroc_rt_dtype_name(dt)) + " " +
                     dimsName(c.data) + " reduction " + std::to_string(red);
  if (dt == ZEROC_RT_DTYPE_F32)
    expectClose(y, ref.values(), 1e-6, what);
  else
    EXPECT_EQ(y.values(), ref.values()) << what;
}

TEST(KernelsScatterElements, NoneAddMulMatchReference) {
  std::mt19937_64 rng(8);
  for (zeroc_rt_dtype_t dt : kDtypes)
    for (zeroc_rt_dtype_t it : {ZEROC_RT_DTYPE_I64, ZEROC_RT_DTYPE_I32}) {
      for (const ElementsCase &c : kDistinctElementsCases)
        checkScatterElements(c, dt, it, ZEROC_RT_SCATTER_NONE, rng);
      if (dt == ZEROC_RT_DTYPE_BOOL)
        continue;
      for (const ElementsCase &c : kElementsCases)
        for (auto red : {ZEROC_RT_SCATTER_ADD, ZEROC_RT_SCATTER_MUL})
          checkScatterElements(c, dt, it, red, rng);
    }
}

// The gradient rule of graph.scatter_elements (none): data gets the output
// gradient with the written elements zeroed (a scatter of zeros), updates its
// gather_elements.
TEST(KernelsScatterElements, GradientRuleMatchesFiniteDifferencesF64) {
  std::mt19937_64 rng(9);
  const auto f64 = ZEROC_RT_DTYPE_F64;
  for (const ElementsCase &c : kDistinctElementsCases) {
    HostTensor idx(ZEROC_RT_DTYPE_I64, c.index);
    idx.setValues(c.indices);
    HostTensor x = randomTensor(f64, c.data, rng), u = randomTensor(f64, c.index, rng);
    HostTensor w = randomTensor(f64, c.data, rng), zeros(f64, c.index);
    HostTensor gx(f64, c.data), gu(f64, c.index);
    zeros.fill(0.0);
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_scatter_elements(w.desc(), idx.desc(), zeros.desc(),
                                                   c.axis, ZEROC_RT_SCATTER_NONE, gx.desc()));
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_gather_elements(w.desc(), idx.desc(), c.axis, gu.desc()));
    auto scatter = [&](const std::vector<double> &xv, const std::vector<double> &uv) {
      HostTensor xp(f64, c.data), up(f64, c.index), yp(f64, c.data);
      xp.setValues(xv);
      up.setValues(uv);
      ZEROC_RT_EXPECT_OK(zeroc_rt_k_scatter_elements(xp.desc(), idx.desc(), up.desc(),
                                                     c.axis, ZEROC_RT_SCATTER_NONE, yp.desc()));
      return yp.values();
    };
    std::string what = "scatter_elements " + dimsName(c.data);
    expectGradient([&](const std::vector<double> &p) { return scatter(p, u.values()); },
                   x.values(), w.values(), gx.values(), what + " d data");
    expectGradient([&](const std::vector<double> &p) { return scatter(x.values(), p); },
                   u.values(), w.values(), gu.values(), what + " d updates");
  }
}

TEST(KernelsScatterElements, Rejects) {
  HostTensor x(ZEROC_RT_DTYPE_F32, {2, 5}), u(ZEROC_RT_DTYPE_F32, {1, 3}),
      idx(ZEROC_RT_DTYPE_I64, {1, 3}), y(ZEROC_RT_DTYPE_F32, {2, 5});
  const char *k = "zeroc_rt_k_scatter_elements";
  auto scatter = [&](HostTensor &i, HostTensor &up,
                     zeroc_rt_scatter_reduction_t red, int64_t axis = 1) {
    return zeroc_rt_k_scatter_elements(x.desc(), i.desc(), up.desc(), axis, red,
                                       y.desc());
  };
  idx.setValues({1, 0, -4});
  EXPECT_KERNEL_ERROR(scatter(idx, u, ZEROC_RT_SCATTER_NONE), INVALID, k,
                      "element 2 of indices i64[1,3] addresses a data element an earlier one wrote");
  ZEROC_RT_EXPECT_OK(scatter(idx, u, ZEROC_RT_SCATTER_ADD)); // repeats accumulate
  idx.setValues({1, 5, 0});
  EXPECT_KERNEL_ERROR(scatter(idx, u, ZEROC_RT_SCATTER_ADD), INVALID, k,
                      "index 5 (element 1 of indices i64[1,3]) is out of range for dim 1 of size 5");
  idx.setValues({1, -6, 0});
  EXPECT_KERNEL_ERROR(scatter(idx, u, ZEROC_RT_SCATTER_NONE), INVALID, k, "index -6");
  idx.setValues({1, 2, 3});
  EXPECT_KERNEL_ERROR(scatter(idx, u, static_cast<zeroc_rt_scatter_reduction_t>(5)),
                      INVALID, k, "invalid reduction 5");
  EXPECT_KERNEL_ERROR(scatter(idx, u, ZEROC_RT_SCATTER_NONE, 2), INVALID, k,
                      "axis 2 is out of range for rank 2");
  HostTensor u2(ZEROC_RT_DTYPE_F32, {1, 2});
  EXPECT_KERNEL_ERROR(scatter(idx, u2, ZEROC_RT_SCATTER_NONE), SHAPE, k,
                      "must have the shape of indices");
  HostTensor big(ZEROC_RT_DTYPE_I64, {3, 1}), ubig(ZEROC_RT_DTYPE_F32, {3, 1});
  EXPECT_KERNEL_ERROR(scatter(big, ubig, ZEROC_RT_SCATTER_NONE), SHAPE, k,
                      "exceeds data f32[2,5] in dim 0");
  HostTensor flat(ZEROC_RT_DTYPE_I64, {3}), uflat(ZEROC_RT_DTYPE_F32, {3});
  EXPECT_KERNEL_ERROR(scatter(flat, uflat, ZEROC_RT_SCATTER_NONE), SHAPE, k,
                      "must have the rank of data f32[2,5]");
  HostTensor ud(ZEROC_RT_DTYPE_F64, {1, 3});
  EXPECT_KERNEL_ERROR(scatter(idx, ud, ZEROC_RT_SCATTER_NONE), INVALID, k,
                      "updates has dtype f64 but data has f32");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_scatter_elements(x.desc(), idx.desc(), u.desc(), 1,
                                                  ZEROC_RT_SCATTER_NONE, x.desc()),
                      INVALID, k, "out overlaps data");
  HostTensor b(ZEROC_RT_DTYPE_BOOL, {2, 5}), ub(ZEROC_RT_DTYPE_BOOL, {1, 3}),
      yb(ZEROC_RT_DTYPE_BOOL, {2, 5});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_scatter_elements(b.desc(), idx.desc(), ub.desc(), 1,
                                                  ZEROC_RT_SCATTER_MUL, yb.desc()),
                      INVALID, k, "add and mul need a numeric dtype, not bool");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_scatter_elements(x.desc(), idx.desc(), nullptr, 1,
                                                  ZEROC_RT_SCATTER_NONE, y.desc()),
                      INVALID, k, "updates is NULL");
}

//===----------------------------------------------------------------------===//
// CumSum
//===----------------------------------------------------------------------===//

std::vector<double> cumsumRef(const HostTensor &x, int64_t axis, bool excl, bool rev) {
  const Dims &dims = x.dims();
  std::vector<double> out(x.size());
  for (int64_t i = 0; i < x.size(); ++i) {
    Dims at = unravel(i, dims);
    double s = 0;
    for (int64_t j = 0; j < dims[axis]; ++j) {
      bool in = rev ? (excl ? j > at[axis] : j >= at[axis])
                    : (excl ? j < at[axis] : j <= at[axis]);
      if (in) {
        Dims src = at;
        src[axis] = j;
        s += x.get(ravel(src, dims));
      }
    }
    out[i] = s;
  }
  return out;
}

TEST(KernelsCumSum, EveryFlagCombinationAndDtype) {
  std::mt19937_64 rng(7);
  for (zeroc_rt_dtype_t dt : {ZEROC_RT_DTYPE_F64, ZEROC_RT_DTYPE_F32, ZEROC_RT_DTYPE_I64, ZEROC_RT_DTYPE_I32})
    for (int64_t axis : {0, 1, -1})
      for (bool excl : {false, true})
        for (bool rev : {false, true}) {
          HostTensor x = randomTensor(dt, {3, 4, 2}, rng, -10, 10), y(dt, {3, 4, 2});
          ZEROC_RT_ASSERT_OK(zeroc_rt_k_cumsum(x.desc(), axis, excl, rev, y.desc()));
          std::vector<double> want = cumsumRef(x, axis < 0 ? axis + 3 : axis, excl, rev);
          expectClose(y, want, 1e-6, "cumsum");
        }
}

TEST(KernelsCumSum, ReverseIsTheAdjointF64) {
  // <w, cumsum(x)> == <cumsum_reverse(w), x>, exclusive or not.
  std::mt19937_64 rng(8);
  for (bool excl : {false, true}) {
    HostTensor x = randomTensor(ZEROC_RT_DTYPE_F64, {5, 3}, rng);
    HostTensor w = randomTensor(ZEROC_RT_DTYPE_F64, {5, 3}, rng);
    HostTensor g(ZEROC_RT_DTYPE_F64, {5, 3});
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_cumsum(w.desc(), 0, excl, 1, g.desc()));
    auto forward = [&](const std::vector<double> &p) {
      HostTensor xp(ZEROC_RT_DTYPE_F64, {5, 3}), yp(ZEROC_RT_DTYPE_F64, {5, 3});
      xp.setValues(p);
      ZEROC_RT_EXPECT_OK(zeroc_rt_k_cumsum(xp.desc(), 0, excl, 0, yp.desc()));
      return yp.values();
    };
    expectGradient(forward, x.values(), w.values(), g.values(), "cumsum adjoint");
  }
}

TEST(KernelsCumSum, IntegersWrap) {
  HostTensor x(ZEROC_RT_DTYPE_I64, {2}), y(ZEROC_RT_DTYPE_I64, {2});
  x.as<int64_t>()[0] = INT64_MAX;
  x.as<int64_t>()[1] = 1;
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_cumsum(x.desc(), 0, 0, 0, y.desc()));
  EXPECT_EQ(y.as<int64_t>()[1], INT64_MIN);
}

TEST(KernelsCumSum, Rejects) {
  const char *k = "zeroc_rt_k_cumsum";
  HostTensor b(ZEROC_RT_DTYPE_BOOL, {3}), yb(ZEROC_RT_DTYPE_BOOL, {3});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_cumsum(b.desc(), 0, 0, 0, yb.desc()), INVALID, k,
                      "in has dtype bool");
  HostTensor s(ZEROC_RT_DTYPE_F32, {}), ys(ZEROC_RT_DTYPE_F32, {});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_cumsum(s.desc(), 0, 0, 0, ys.desc()), INVALID, k,
                      "in must have rank >= 1");
  HostTensor x(ZEROC_RT_DTYPE_F32, {3}), y(ZEROC_RT_DTYPE_F32, {4});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_cumsum(x.desc(), 1, 0, 0, x.desc()), INVALID, k,
                      "axis 1 is out of range for rank 1");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_cumsum(x.desc(), 0, 0, 0, y.desc()), SHAPE, k,
                      "must have the shape of in");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_cumsum(x.desc(), 0, 0, 0, x.desc()), INVALID, k,
                      "out overlaps in");
}

} // namespace
