//===- kernels_movement_test.cc - copy, gather, slice, concat, ... --------===//

#include "kernels_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

using namespace zeroc_rt::test;

namespace {

const zeroc_rt_dtype_t kMoveDtypes[] = {ZEROC_RT_DTYPE_F32, ZEROC_RT_DTYPE_F64,
                                        ZEROC_RT_DTYPE_I64, ZEROC_RT_DTYPE_I32,
                                        ZEROC_RT_DTYPE_U8, ZEROC_RT_DTYPE_BOOL};

HostTensor randomOf(zeroc_rt_dtype_t dt, const Dims &dims,
                    std::mt19937_64 &rng) {
  if (dt == ZEROC_RT_DTYPE_BOOL)
    return randomTensor(dt, dims, rng, 0, 1);
  if (dt == ZEROC_RT_DTYPE_U8)
    return randomTensor(dt, dims, rng, 0, 255);
  return randomTensor(dt, dims, rng, -100, 100);
}

TEST(KernelsCopy, ReshapesAnyDtypeAndAllowsTheSameBuffer) {
  std::mt19937_64 rng(1);
  for (zeroc_rt_dtype_t dt : kMoveDtypes) {
    HostTensor x = randomOf(dt, {2, 3}, rng);
    HostTensor y(dt, {3, 1, 2});
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_copy(x.desc(), y.desc()));
    EXPECT_EQ(y.values(), x.values());
    zeroc_rt_tensor_t flat = *x.desc();
    flat.rank = 1;
    flat.dims[0] = 6;
    std::vector<double> before = x.values();
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_copy(x.desc(), &flat)); // in == out
    EXPECT_EQ(x.values(), before);
  }
  HostTensor s(ZEROC_RT_DTYPE_F32, {}), t(ZEROC_RT_DTYPE_F32, {1, 1});
  s.set(0, 4.5);
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_copy(s.desc(), t.desc()));
  EXPECT_EQ(t.get(0), 4.5);
  HostTensor e(ZEROC_RT_DTYPE_F32, {0, 3}), f(ZEROC_RT_DTYPE_F32, {3, 0});
  ZEROC_RT_EXPECT_OK(zeroc_rt_k_copy(e.desc(), f.desc()));
}

TEST(KernelsCopyMulti, CopiesEveryEntryAndChecksThem) {
  std::vector<unsigned char> src(100), dst(100, 0);
  std::iota(src.begin(), src.end(), 1);
  const zeroc_rt_copy_t copies[] = {{src.data(), dst.data() + 50, 7},
                                    {src.data() + 10, dst.data(), 33},
                                    {nullptr, nullptr, 0}};
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_copy_multi(3, copies));
  for (int i = 0; i < 100; ++i) {
    const int want = i < 33 ? 11 + i : (i >= 50 && i < 57 ? i - 49 : 0);
    EXPECT_EQ(dst[i], want) << "byte " << i;
  }
  ZEROC_RT_EXPECT_OK(zeroc_rt_k_copy_multi(0, nullptr));
  EXPECT_KERNEL_ERROR(zeroc_rt_k_copy_multi(1, nullptr), ZEROC_RT_INVALID_ARGUMENT,
                      "zeroc_rt_k_copy_multi", "copies NULL");
  const zeroc_rt_copy_t bad[] = {{src.data(), dst.data(), 1}, {src.data(), nullptr, 4}};
  dst[0] = 0;
  EXPECT_KERNEL_ERROR(zeroc_rt_k_copy_multi(2, bad), ZEROC_RT_INVALID_ARGUMENT,
                      "zeroc_rt_k_copy_multi", "copy 1: 4 bytes");
  EXPECT_EQ(dst[0], 0) << "nothing is copied when an entry is bad";
}

TEST(KernelsZero, ClearsEveryDtype) {
  std::mt19937_64 rng(2);
  for (zeroc_rt_dtype_t dt : kMoveDtypes)
    for (const Dims &dims : {Dims{}, Dims{3, 4}, Dims{0}}) {
      HostTensor x = randomOf(dt, dims, rng);
      x.fill(1);
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_zero(x.desc()));
      EXPECT_EQ(x.values(), std::vector<double>(x.size(), 0.0));
    }
  HostTensor h(ZEROC_RT_DTYPE_F16, {3});
  std::fill(h.as<uint16_t>(), h.as<uint16_t>() + 3, 0x3C00);
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_zero(h.desc()));
  EXPECT_EQ(h.as<uint16_t>()[2], 0);
}

//===----------------------------------------------------------------------===//
// Broadcast / sum_to
//===----------------------------------------------------------------------===//

/// (small, big): small broadcasts to big.
const std::pair<Dims, Dims> kExpandPairs[] = {
    {{3}, {2, 3}},       {{}, {2, 2}},         {{2, 1, 4}, {3, 2, 5, 4}},
    {{1}, {0}},          {{1, 1}, {1, 1}},     {{2, 3}, {2, 3}},
    {{}, {}},            {{4, 1}, {4, 0}},     {{1, 3, 1}, {2, 2, 3, 2}},
    {{5, 1, 1, 2}, {2, 1, 5, 3, 2, 2}}};

template <typename T> class KernelsBroadcast : public ::testing::Test {};
TYPED_TEST_SUITE(KernelsBroadcast, FloatTypes, FloatTypeNames);

TYPED_TEST(KernelsBroadcast, ExpandMatchesReference) {
  constexpr zeroc_rt_dtype_t dt = dtypeOf<TypeParam>();
  std::mt19937_64 rng(3);
  for (const auto &[small, big] : kExpandPairs) {
    HostTensor x = randomTensor(dt, small, rng);
    HostTensor y(dt, big);
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_broadcast(x.desc(), y.desc()));
    std::vector<double> want(y.size());
    for (int64_t i = 0; i < y.size(); ++i)
      want[i] = x.get(broadcastSource(unravel(i, big), small));
    EXPECT_EQ(y.values(), want) << dimsName(small) << " -> " << dimsName(big);
  }
}

TYPED_TEST(KernelsBroadcast, SumToMatchesReference) {
  constexpr zeroc_rt_dtype_t dt = dtypeOf<TypeParam>();
  std::mt19937_64 rng(4);
  for (const auto &[small, big] : kExpandPairs) {
    HostTensor x = randomTensor(dt, big, rng);
    HostTensor y(dt, small);
    y.fill(123); // overwritten, not accumulated
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_sum_to(x.desc(), y.desc()));
    std::vector<double> want(y.size(), 0.0);
    for (int64_t i = 0; i < x.size(); ++i)
      want[broadcastSource(unravel(i, big), small)] += x.get(i);
    expectClose(y, want, tolOf<TypeParam>(),
                dimsName(big) + " -> " + dimsName(small));
  }
}

TEST(KernelsBroadcast, AnyDtype) {
  std::mt19937_64 rng(5);
  for (zeroc_rt_dtype_t dt : kMoveDtypes) {
    HostTensor x = randomOf(dt, {3, 1}, rng);
    HostTensor y(dt, {2, 3, 4});
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_broadcast(x.desc(), y.desc()));
    for (int64_t i = 0; i < y.size(); ++i)
      ASSERT_EQ(y.get(i), x.get(unravel(i, {2, 3, 4})[1]));
  }
}

TEST(KernelsBroadcast, SumToIsTheAdjointOfBroadcastF64) {
  std::mt19937_64 rng(6);
  for (const auto &[small, big] : kExpandPairs) {
    HostTensor x = randomTensor(ZEROC_RT_DTYPE_F64, small, rng);
    HostTensor w = randomTensor(ZEROC_RT_DTYPE_F64, big, rng);
    HostTensor g(ZEROC_RT_DTYPE_F64, small);
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_sum_to(w.desc(), g.desc()));
    auto forward = [&, big = big, small = small](const std::vector<double> &p) {
      HostTensor xp(ZEROC_RT_DTYPE_F64, small), yp(ZEROC_RT_DTYPE_F64, big);
      xp.setValues(p);
      ZEROC_RT_EXPECT_OK(zeroc_rt_k_broadcast(xp.desc(), yp.desc()));
      return yp.values();
    };
    expectGradient(forward, x.values(), w.values(), g.values(),
                   "sum_to " + dimsName(big) + " -> " + dimsName(small));
  }
}

//===----------------------------------------------------------------------===//
// Gather
//===----------------------------------------------------------------------===//

struct GatherCase {
  Dims data;
  int64_t axis;
  Dims indexDims;
  std::vector<double> indices;
};

const GatherCase kGatherCases[] = {
    {{5, 3}, 0, {2, 4}, {0, 4, -1, 2, 1, 1, -5, 3}},
    {{2, 5, 3}, 1, {}, {-2}},
    {{2, 5, 3}, -1, {4}, {2, 0, -3, 2}},
    {{4}, 0, {2, 3}, {3, 0, 1, 1, -1, 2}},
    {{5, 3}, 0, {0}, {}},
    {{3, 0}, 0, {2}, {2, 0}},
    {{4, 2}, 1, {3, 2}, {0, 1, 1, -1, -2, 0}},
};

Dims gatherOutDims(const Dims &data, int64_t axis, const Dims &indexDims) {
  Dims out(data.begin(), data.begin() + axis);
  out.insert(out.end(), indexDims.begin(), indexDims.end());
  out.insert(out.end(), data.begin() + axis + 1, data.end());
  return out;
}

/// Linear index into data for output element `outLinear`.
int64_t gatherSource(const GatherCase &c, int64_t axis, const Dims &outDims,
                     int64_t outLinear) {
  Dims o = unravel(outLinear, outDims);
  int64_t r = static_cast<int64_t>(c.indexDims.size());
  Dims idx(o.begin() + axis, o.begin() + axis + r);
  int64_t v = static_cast<int64_t>(c.indices[ravel(idx, c.indexDims)]);
  if (v < 0)
    v += c.data[axis];
  Dims d(o.begin(), o.begin() + axis);
  d.push_back(v);
  d.insert(d.end(), o.begin() + axis + r, o.end());
  return ravel(d, c.data);
}

TEST(KernelsGather, MatchesReferenceForAnyDtypeAndBothIndexTypes) {
  std::mt19937_64 rng(7);
  for (zeroc_rt_dtype_t dt : kMoveDtypes)
    for (zeroc_rt_dtype_t it : {ZEROC_RT_DTYPE_I64, ZEROC_RT_DTYPE_I32})
      for (const GatherCase &c : kGatherCases) {
        int64_t axis = c.axis < 0 ? c.axis + int64_t(c.data.size()) : c.axis;
        HostTensor data = randomOf(dt, c.data, rng);
        HostTensor indices(it, c.indexDims);
        indices.setValues(c.indices);
        Dims outDims = gatherOutDims(c.data, axis, c.indexDims);
        HostTensor out(dt, outDims);
        ZEROC_RT_ASSERT_OK(
            zeroc_rt_k_gather(data.desc(), indices.desc(), c.axis, out.desc()));
        std::vector<double> want(out.size());
        for (int64_t i = 0; i < out.size(); ++i)
          want[i] = data.get(gatherSource(c, axis, outDims, i));
        EXPECT_EQ(out.values(), want)
            << dimsName(c.data) << " axis " << c.axis << " "
            << zeroc_rt_dtype_name(dt);
      }
}

template <typename T> class KernelsGatherGrad : public ::testing::Test {};
TYPED_TEST_SUITE(KernelsGatherGrad, FloatTypes, FloatTypeNames);

TYPED_TEST(KernelsGatherGrad, AccumulatesRepeatedIndices) {
  constexpr zeroc_rt_dtype_t dt = dtypeOf<TypeParam>();
  std::mt19937_64 rng(8);
  for (const GatherCase &c : kGatherCases) {
    int64_t axis = c.axis < 0 ? c.axis + int64_t(c.data.size()) : c.axis;
    Dims outDims = gatherOutDims(c.data, axis, c.indexDims);
    HostTensor indices(ZEROC_RT_DTYPE_I64, c.indexDims);
    indices.setValues(c.indices);
    HostTensor gy = randomTensor(dt, outDims, rng);
    HostTensor gd(dt, c.data);
    gd.fill(7); // overwritten
    ZEROC_RT_ASSERT_OK(
        zeroc_rt_k_gather_grad(gy.desc(), indices.desc(), c.axis, gd.desc()));
    std::vector<double> want(gd.size(), 0.0);
    for (int64_t i = 0; i < gy.size(); ++i)
      want[gatherSource(c, axis, outDims, i)] += gy.get(i);
    expectClose(gd, want, tolOf<TypeParam>(), dimsName(c.data));
  }
}

TEST(KernelsGatherGrad, FiniteDifferencesF64) {
  std::mt19937_64 rng(9);
  for (const GatherCase &c : kGatherCases) {
    int64_t axis = c.axis < 0 ? c.axis + int64_t(c.data.size()) : c.axis;
    Dims outDims = gatherOutDims(c.data, axis, c.indexDims);
    HostTensor indices(ZEROC_RT_DTYPE_I32, c.indexDims);
    indices.setValues(c.indices);
    HostTensor x = randomTensor(ZEROC_RT_DTYPE_F64, c.data, rng);
    HostTensor w = randomTensor(ZEROC_RT_DTYPE_F64, outDims, rng);
    HostTensor g(ZEROC_RT_DTYPE_F64, c.data);
    ZEROC_RT_ASSERT_OK(
        zeroc_rt_k_gather_grad(w.desc(), indices.desc(), c.axis, g.desc()));
    auto forward = [&](const std::vector<double> &p) {
      HostTensor xp(ZEROC_RT_DTYPE_F64, c.data), yp(ZEROC_RT_DTYPE_F64, outDims);
      xp.setValues(p);
      ZEROC_RT_EXPECT_OK(
          zeroc_rt_k_gather(xp.desc(), indices.desc(), c.axis, yp.desc()));
      return yp.values();
    };
    expectGradient(forward, x.values(), w.values(), g.values(),
                   "gather_grad " + dimsName(c.data));
  }
}

//===----------------------------------------------------------------------===//
// Transpose
//===----------------------------------------------------------------------===//

void checkTranspose(zeroc_rt_dtype_t dt, const Dims &dims, const Dims &perm,
                    std::mt19937_64 &rng) {
  HostTensor x = randomOf(dt, dims, rng);
  Dims outDims(dims.size());
  for (size_t i = 0; i < dims.size(); ++i)
    outDims[i] = dims[perm[i]];
  HostTensor y(dt, outDims);
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_transpose(
      x.desc(), perm.empty() ? nullptr : perm.data(), y.desc()));
  std::vector<double> want(y.size());
  for (int64_t i = 0; i < y.size(); ++i) {
    Dims o = unravel(i, outDims);
    Dims in(dims.size());
    for (size_t d = 0; d < dims.size(); ++d)
      in[perm[d]] = o[d];
    want[i] = x.get(ravel(in, dims));
  }
  EXPECT_EQ(y.values(), want) << dimsName(dims) << " perm " << dimsName(perm)
                              << " " << zeroc_rt_dtype_name(dt);
}

TEST(KernelsTranspose, EveryPermutationOfRank3AndOthers) {
  std::mt19937_64 rng(10);
  for (zeroc_rt_dtype_t dt : kMoveDtypes) {
    Dims perm = {0, 1, 2};
    do
      checkTranspose(dt, {2, 3, 4}, perm, rng);
    while (std::next_permutation(perm.begin(), perm.end()));
    checkTranspose(dt, {}, {}, rng);
    checkTranspose(dt, {5}, {0}, rng);
    checkTranspose(dt, {2, 1, 3, 4}, {3, 1, 0, 2}, rng);
    checkTranspose(dt, {3, 0, 2}, {2, 0, 1}, rng);
    checkTranspose(dt, {1, 2, 1, 3, 1, 2, 1, 2}, {7, 6, 5, 4, 3, 2, 1, 0}, rng);
  }
}

//===----------------------------------------------------------------------===//
// Slice
//===----------------------------------------------------------------------===//

struct SliceCase {
  Dims in;
  Dims starts, steps, out;
};

const SliceCase kSliceCases[] = {
    {{6}, {1}, {2}, {3}},
    {{6}, {5}, {-2}, {3}},
    {{5}, {4}, {-3}, {2}},
    {{4, 5}, {3, 0}, {-1, 2}, {4, 3}},
    {{4, 5}, {0, 1}, {1, 1}, {0, 2}},
    {{}, {}, {}, {}},
    {{3, 4, 2}, {2, 3, 1}, {-1, -2, -1}, {2, 2, 2}},
    {{7}, {6}, {-1}, {7}},
    {{2, 3}, {1, 2}, {5, -5}, {1, 1}},
};

int64_t sliceSource(const SliceCase &c, int64_t outLinear) {
  Dims o = unravel(outLinear, c.out);
  Dims in(c.in.size());
  for (size_t d = 0; d < c.in.size(); ++d)
    in[d] = c.starts[d] + o[d] * c.steps[d];
  return ravel(in, c.in);
}

template <typename T> class KernelsSlice : public ::testing::Test {};
TYPED_TEST_SUITE(KernelsSlice, FloatTypes, FloatTypeNames);

TYPED_TEST(KernelsSlice, MatchesReferenceIncludingNegativeSteps) {
  constexpr zeroc_rt_dtype_t dt = dtypeOf<TypeParam>();
  std::mt19937_64 rng(11);
  for (const SliceCase &c : kSliceCases) {
    HostTensor x = randomTensor(dt, c.in, rng);
    HostTensor y(dt, c.out);
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_slice(
        x.desc(), c.in.empty() ? nullptr : c.starts.data(),
        c.in.empty() ? nullptr : c.steps.data(), y.desc()));
    std::vector<double> want(y.size());
    for (int64_t i = 0; i < y.size(); ++i)
      want[i] = x.get(sliceSource(c, i));
    EXPECT_EQ(y.values(), want) << dimsName(c.in) << " -> " << dimsName(c.out);
  }
}

TYPED_TEST(KernelsSlice, GradScattersIntoZeros) {
  constexpr zeroc_rt_dtype_t dt = dtypeOf<TypeParam>();
  std::mt19937_64 rng(12);
  for (const SliceCase &c : kSliceCases) {
    HostTensor gy = randomTensor(dt, c.out, rng);
    HostTensor gx(dt, c.in);
    gx.fill(5);
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_slice_grad(gy.desc(), c.starts.data(),
                                             c.steps.data(), gx.desc()));
    std::vector<double> want(gx.size(), 0.0);
    for (int64_t i = 0; i < gy.size(); ++i)
      want[sliceSource(c, i)] += gy.get(i);
    EXPECT_EQ(gx.values(), want) << dimsName(c.in);
  }
}

TEST(KernelsSlice, GradFiniteDifferencesF64) {
  std::mt19937_64 rng(13);
  for (const SliceCase &c : kSliceCases) {
    HostTensor x = randomTensor(ZEROC_RT_DTYPE_F64, c.in, rng);
    HostTensor w = randomTensor(ZEROC_RT_DTYPE_F64, c.out, rng);
    HostTensor g(ZEROC_RT_DTYPE_F64, c.in);
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_slice_grad(w.desc(), c.starts.data(),
                                             c.steps.data(), g.desc()));
    auto forward = [&](const std::vector<double> &p) {
      HostTensor xp(ZEROC_RT_DTYPE_F64, c.in), yp(ZEROC_RT_DTYPE_F64, c.out);
      xp.setValues(p);
      ZEROC_RT_EXPECT_OK(
          zeroc_rt_k_slice(xp.desc(), c.starts.data(), c.steps.data(), yp.desc()));
      return yp.values();
    };
    expectGradient(forward, x.values(), w.values(), g.values(),
                   "slice_grad " + dimsName(c.in) + " -> " + dimsName(c.out));
  }
}

TEST(KernelsSlice, RejectsPositionsOutsideTheInput) {
  HostTensor x(ZEROC_RT_DTYPE_F32, {6}), y(ZEROC_RT_DTYPE_F32, {4});
  int64_t start = 1, step = 2, negStart = 2, negStep = -1, zero = 0;
  EXPECT_KERNEL_ERROR(zeroc_rt_k_slice(x.desc(), &start, &step, y.desc()),
                      ZEROC_RT_SHAPE_MISMATCH, "zeroc_rt_k_slice",
                      "4 elements from start 1 with step 2");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_slice(x.desc(), &negStart, &negStep, y.desc()),
                      ZEROC_RT_SHAPE_MISMATCH, "zeroc_rt_k_slice", "step -1");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_slice(x.desc(), &start, &zero, y.desc()),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_slice",
                      "step of dim 0 is 0");
  int64_t farStart = 6, hugeStep = INT64_MIN;
  HostTensor one(ZEROC_RT_DTYPE_F32, {1}), two(ZEROC_RT_DTYPE_F32, {2});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_slice(x.desc(), &farStart, &step, one.desc()),
                      ZEROC_RT_SHAPE_MISMATCH, "zeroc_rt_k_slice", "start 6");
  ZEROC_RT_EXPECT_OK(zeroc_rt_k_slice(x.desc(), &start, &hugeStep, one.desc()));
  EXPECT_KERNEL_ERROR(zeroc_rt_k_slice(x.desc(), &start, &hugeStep, two.desc()),
                      ZEROC_RT_SHAPE_MISMATCH, "zeroc_rt_k_slice", "start 1");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_slice_grad(y.desc(), &start, &step, x.desc()),
      ZEROC_RT_SHAPE_MISMATCH, "zeroc_rt_k_slice_grad", "grad_in");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_slice(x.desc(), nullptr, &step, y.desc()),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_slice",
                      "starts is NULL");
}

//===----------------------------------------------------------------------===//
// Concat
//===----------------------------------------------------------------------===//

TEST(KernelsConcat, MatchesReferenceOnEveryAxis) {
  std::mt19937_64 rng(14);
  struct Case {
    std::vector<Dims> inputs;
    int64_t axis;
  };
  const Case cases[] = {
      {{{2, 3}, {2, 5}}, 1},
      {{{1, 3}, {0, 3}, {4, 3}}, 0},
      {{{2, 2, 1}, {2, 2, 3}, {2, 2, 2}}, -1},
      {{{4}}, 0},
      {{{2, 0}, {2, 0}}, 0},
      {{{3, 2, 4}, {3, 1, 4}}, -2},
  };
  for (zeroc_rt_dtype_t dt : kMoveDtypes)
    for (const Case &c : cases) {
      int64_t rank = static_cast<int64_t>(c.inputs[0].size());
      int64_t axis = c.axis < 0 ? c.axis + rank : c.axis;
      std::vector<HostTensor> inputs;
      Dims outDims = c.inputs[0];
      outDims[axis] = 0;
      for (const Dims &d : c.inputs) {
        inputs.push_back(randomOf(dt, d, rng));
        outDims[axis] += d[axis];
      }
      std::vector<const zeroc_rt_tensor_t *> descs;
      for (HostTensor &t : inputs)
        descs.push_back(t.desc());
      HostTensor out(dt, outDims);
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_concat(descs.data(),
                                           static_cast<int32_t>(descs.size()),
                                           c.axis, out.desc()));
      std::vector<double> want(out.size());
      for (int64_t i = 0; i < out.size(); ++i) {
        Dims o = unravel(i, outDims);
        size_t which = 0;
        while (o[axis] >= c.inputs[which][axis])
          o[axis] -= c.inputs[which++][axis];
        want[i] = inputs[which].get(ravel(o, c.inputs[which]));
      }
      EXPECT_EQ(out.values(), want)
          << dimsName(outDims) << " " << zeroc_rt_dtype_name(dt);
    }
}

TEST(KernelsConcat, RejectsMismatchedInputs) {
  HostTensor a(ZEROC_RT_DTYPE_F32, {2, 3}), b(ZEROC_RT_DTYPE_F32, {3, 3}),
      c(ZEROC_RT_DTYPE_F64, {2, 3}), out(ZEROC_RT_DTYPE_F32, {2, 6});
  const zeroc_rt_tensor_t *ab[2] = {a.desc(), b.desc()};
  EXPECT_KERNEL_ERROR(zeroc_rt_k_concat(ab, 2, 1, out.desc()),
                      ZEROC_RT_SHAPE_MISMATCH, "zeroc_rt_k_concat",
                      "inputs[1] f32[3,3]");
  const zeroc_rt_tensor_t *ac[2] = {a.desc(), c.desc()};
  EXPECT_KERNEL_ERROR(zeroc_rt_k_concat(ac, 2, 1, out.desc()),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_concat",
                      "inputs[1] has dtype f64");
  const zeroc_rt_tensor_t *aa[2] = {a.desc(), a.desc()};
  HostTensor small(ZEROC_RT_DTYPE_F32, {2, 5});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_concat(aa, 2, 1, small.desc()),
                      ZEROC_RT_SHAPE_MISMATCH, "zeroc_rt_k_concat",
                      "axis-1 dims sum");
  HostTensor big(ZEROC_RT_DTYPE_F32, {2, 7});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_concat(aa, 2, 1, big.desc()),
                      ZEROC_RT_SHAPE_MISMATCH, "zeroc_rt_k_concat",
                      "sum to 6");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_concat(aa, 0, 1, out.desc()),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_concat",
                      "at least one input");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_concat(nullptr, 2, 1, out.desc()),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_concat",
                      "inputs is NULL");
  const zeroc_rt_tensor_t *an[2] = {a.desc(), nullptr};
  EXPECT_KERNEL_ERROR(zeroc_rt_k_concat(an, 2, 1, out.desc()),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_concat",
                      "inputs[1] is NULL");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_concat(aa, 2, 2, out.desc()),
                      ZEROC_RT_INVALID_ARGUMENT, "zeroc_rt_k_concat",
                      "axis 2 is out of range");
}

//===----------------------------------------------------------------------===//
// Trilu
//===----------------------------------------------------------------------===//

TEST(KernelsTrilu, MatchesReference) {
  std::mt19937_64 rng(15);
  const Dims shapes[] = {{4, 4}, {3, 5}, {5, 3}, {2, 3, 4}, {0, 3}, {2, 1, 1}};
  for (zeroc_rt_dtype_t dt : {ZEROC_RT_DTYPE_F32, ZEROC_RT_DTYPE_F64,
                              ZEROC_RT_DTYPE_I64, ZEROC_RT_DTYPE_BOOL})
    for (const Dims &dims : shapes)
      for (int upper : {0, 1})
        for (int64_t k : {int64_t(-100), int64_t(-2), int64_t(-1), int64_t(0),
                          int64_t(1), int64_t(3), int64_t(100), INT64_MAX,
                          INT64_MIN}) {
          HostTensor x = randomOf(dt, dims, rng);
          HostTensor y(dt, dims);
          ZEROC_RT_ASSERT_OK(zeroc_rt_k_trilu(x.desc(), upper, k, y.desc()));
          std::vector<double> want(y.size());
          for (int64_t i = 0; i < y.size(); ++i) {
            Dims o = unravel(i, dims);
            int64_t diff = o[o.size() - 1] - o[o.size() - 2];
            bool keep = upper ? diff >= k : diff <= k;
            want[i] = keep ? x.get(i) : 0.0;
          }
          EXPECT_EQ(y.values(), want) << dimsName(dims) << " upper " << upper
                                      << " k " << k;
        }
}

} // namespace
