//===- HostFoldingTest.cpp - import-time folding of shape arithmetic ------===//
#include "HostTensor.h"

#include "onnx/onnx_pb.h"

#include <gtest/gtest.h>

using namespace zeroc::onnximport;

namespace {
HostTensor ints(std::vector<int64_t> dims, std::vector<int64_t> values) {
  HostTensor h;
  h.dtype = onnx::TensorProto::INT64;
  h.dims = std::move(dims);
  h.ints = std::move(values);
  return h;
}
} // namespace

TEST(HostFolding, ElementwiseBroadcasts) {
  HostTensor a = ints({2, 1}, {10, 20}), b = ints({3}, {1, 2, 3});
  HostTensor r = foldElementwise({&a, &b}, {2, 3}, a.dtype,
                                 [](const double *v) { return v[0] + v[1]; });
  EXPECT_EQ(r.ints, (std::vector<int64_t>{11, 12, 13, 21, 22, 23}));
}

TEST(HostFolding, GatherOnAShape) {
  HostTensor shape = ints({3}, {2, 8, 32}), idx = ints({}, {-1});
  HostTensor r = foldGather(shape, idx, 0);
  EXPECT_TRUE(r.dims.empty());
  EXPECT_EQ(r.ints, (std::vector<int64_t>{32}));
}

TEST(HostFolding, GatherRejectsOutOfRangeIndex) {
  HostTensor shape = ints({3}, {2, 8, 32}), idx = ints({1}, {3});
  EXPECT_THROW(foldGather(shape, idx, 0), ImportError);
}

TEST(HostFolding, ConcatAlongAxis1) {
  HostTensor a = ints({2, 1}, {1, 2}), b = ints({2, 2}, {3, 4, 5, 6});
  HostTensor r = foldConcat({&a, &b}, 1);
  EXPECT_EQ(r.dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r.ints, (std::vector<int64_t>{1, 3, 4, 2, 5, 6}));
}

TEST(HostFolding, NegativeStepSlice) {
  HostTensor a = ints({5}, {0, 1, 2, 3, 4});
  HostTensor r = foldSlice(a, {4}, {-2}, {3});
  EXPECT_EQ(r.ints, (std::vector<int64_t>{4, 2, 0}));
}

TEST(HostFolding, TransposeSwapsDims) {
  HostTensor a = ints({2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor r = foldTranspose(a, {1, 0});
  EXPECT_EQ(r.dims, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(r.ints, (std::vector<int64_t>{1, 4, 2, 5, 3, 6}));
}

TEST(HostFolding, TriluLowerAndUpper) {
  HostTensor a = ints({3, 3}, {1, 1, 1, 1, 1, 1, 1, 1, 1});
  EXPECT_EQ(foldTrilu(a, false, 0).ints,
            (std::vector<int64_t>{1, 0, 0, 1, 1, 0, 1, 1, 1}));
  EXPECT_EQ(foldTrilu(a, true, 1).ints,
            (std::vector<int64_t>{0, 1, 1, 0, 0, 1, 0, 0, 0}));
}

TEST(HostFolding, RefusesHugeConstants) {
  HostTensor a = ints({1}, {1});
  EXPECT_THROW(foldElementwise({&a}, {int64_t(1) << 40}, a.dtype,
                               [](const double *v) { return v[0]; }),
               ImportError);
  EXPECT_THROW(checkedNumElements({int64_t(1) << 40, int64_t(1) << 40}),
               ImportError);
}
