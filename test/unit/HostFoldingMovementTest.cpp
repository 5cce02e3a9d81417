//===- HostFoldingMovementTest.cpp - folds of Pad, Tile, Range, ... -------===//
#include "HostFoldingMovement.h"

#include "onnx/onnx_pb.h"

#include <gtest/gtest.h>

using namespace zeroc::onnximport;

namespace {
HostTensor ints(std::vector<int64_t> dims, std::vector<int64_t> values,
                int32_t dtype = onnx::TensorProto::INT64) {
  HostTensor h;
  h.dtype = dtype;
  h.dims = std::move(dims);
  h.ints = std::move(values);
  return h;
}
HostTensor scalar(int64_t v) { return ints({}, {v}); }
} // namespace

TEST(HostFoldingMovement, PadModes) {
  HostTensor a = ints({3}, {1, 2, 3});
  EXPECT_EQ(foldPad(a, {2, 1}, "constant", -100).ints,
            (std::vector<int64_t>{-100, -100, 1, 2, 3, -100}));
  EXPECT_EQ(foldPad(a, {2, 2}, "reflect", 0).ints,
            (std::vector<int64_t>{3, 2, 1, 2, 3, 2, 1}));
  EXPECT_EQ(foldPad(a, {2, 1}, "edge", 0).ints,
            (std::vector<int64_t>{1, 1, 1, 2, 3, 3}));
  EXPECT_EQ(foldPad(a, {3, 2}, "wrap", 0).ints,
            (std::vector<int64_t>{1, 2, 3, 1, 2, 3, 1, 2}));
  EXPECT_EQ(foldPad(a, {-1, 1}, "constant", 7).ints,
            (std::vector<int64_t>{2, 3, 7}));
  HostTensor m = ints({2, 2}, {1, 2, 3, 4});
  HostTensor r = foldPad(m, {0, 1, 0, 0}, "edge", 0);
  EXPECT_EQ(r.dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r.ints, (std::vector<int64_t>{1, 1, 2, 3, 3, 4}));
}

TEST(HostFoldingMovement, TileRepeatsBlocks) {
  HostTensor a = ints({1, 2}, {5, 6});
  HostTensor r = foldTile(a, {2, 2});
  EXPECT_EQ(r.dims, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(r.ints, (std::vector<int64_t>{5, 6, 5, 6, 5, 6, 5, 6}));
  EXPECT_EQ(foldTile(a, {0, 3}).ints.size(), 0u);
}

TEST(HostFoldingMovement, RangeIntegersExactly) {
  EXPECT_EQ(foldRange(scalar(0), scalar(5), scalar(2)).ints,
            (std::vector<int64_t>{0, 2, 4}));
  EXPECT_EQ(foldRange(scalar(5), scalar(0), scalar(-2)).ints,
            (std::vector<int64_t>{5, 3, 1}));
  EXPECT_TRUE(foldRange(scalar(5), scalar(0), scalar(1)).ints.empty());
  int64_t big = int64_t(1) << 60;
  EXPECT_EQ(foldRange(scalar(big), scalar(big + 3), scalar(1)).ints,
            (std::vector<int64_t>{big, big + 1, big + 2}));
  EXPECT_THROW(foldRange(scalar(0), scalar(5), scalar(0)), ImportError);
  EXPECT_THROW(foldRange(scalar(INT64_MIN), scalar(INT64_MAX), scalar(1)),
               ImportError);
}

TEST(HostFoldingMovement, GatherElementsAndNd) {
  HostTensor d = ints({2, 3}, {10, 11, 12, 13, 14, 15});
  EXPECT_EQ(foldGatherElements(d, ints({2, 2}, {2, -3, 0, 1}), 1).ints,
            (std::vector<int64_t>{12, 10, 13, 14}));
  EXPECT_THROW(foldGatherElements(d, ints({1, 1}, {3}), 1), ImportError);
  HostTensor r = foldGatherND(d, ints({2, 1}, {1, -2}));
  EXPECT_EQ(r.dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r.ints, (std::vector<int64_t>{13, 14, 15, 10, 11, 12}));
  EXPECT_EQ(foldGatherND(d, ints({1, 2}, {1, 2})).ints, (std::vector<int64_t>{15}));
}

TEST(HostFoldingMovement, ScatterNdReductions) {
  HostTensor d = ints({4}, {1, 2, 3, 4});
  EXPECT_EQ(foldScatterND(d, ints({2, 1}, {3, 0}), ints({2}, {9, 8}), "none").ints,
            (std::vector<int64_t>{8, 2, 3, 9}));
  EXPECT_EQ(foldScatterND(d, ints({2, 1}, {1, 1}), ints({2}, {5, 5}), "add").ints,
            (std::vector<int64_t>{1, 12, 3, 4}));
  EXPECT_EQ(foldScatterND(d, ints({2, 1}, {1, 1}), ints({2}, {5, 5}), "mul").ints,
            (std::vector<int64_t>{1, 50, 3, 4}));
  EXPECT_THROW(foldScatterND(d, ints({2, 1}, {1, -3}), ints({2}, {5, 5}), "none"),
               ImportError);
  HostTensor i32 = ints({1}, {INT32_MAX}, onnx::TensorProto::INT32);
  EXPECT_THROW(foldScatterND(i32, ints({1, 1}, {0}),
                             ints({1}, {1}, onnx::TensorProto::INT32), "add"),
               ImportError);
}

TEST(HostFoldingMovement, ScatterElementsReductions) {
  HostTensor d = ints({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(foldScatterElements(d, ints({2, 2}, {2, -3, 0, 1}),
                                ints({2, 2}, {7, 8, 9, 10}), 1, "none")
                .ints,
            (std::vector<int64_t>{8, 2, 7, 9, 10, 6}));
  EXPECT_EQ(foldScatterElements(d, ints({2, 1}, {1, -1}), ints({2, 1}, {5, 5}),
                                0, "add")
                .ints,
            (std::vector<int64_t>{1, 2, 3, 14, 5, 6}));
  EXPECT_EQ(foldScatterElements(d, ints({1, 3}, {1, 0, 1}),
                                ints({1, 3}, {2, 3, 4}), 0, "mul")
                .ints,
            (std::vector<int64_t>{1, 6, 3, 8, 5, 24}));
  HostTensor f;
  f.dtype = onnx::TensorProto::FLOAT;
  f.dims = {3};
  f.floats = {0.5, 1.0, 2.0};
  HostTensor fu = f;
  fu.dims = {2};
  fu.floats = {0.25, 0.25};
  EXPECT_EQ(foldScatterElements(f, ints({2}, {2, -1}), fu, 0, "add").floats,
            (std::vector<double>{0.5, 1.0, 2.5}));
  // Repeated elements with none, out-of-range indices, integer overflow.
  EXPECT_THROW(foldScatterElements(d, ints({1, 2}, {0, -3}),
                                   ints({1, 2}, {5, 5}), 1, "none"),
               ImportError);
  EXPECT_THROW(foldScatterElements(d, ints({1, 1}, {3}), ints({1, 1}, {5}), 1,
                                   "none"),
               ImportError);
  HostTensor i32 = ints({1}, {INT32_MAX}, onnx::TensorProto::INT32);
  EXPECT_THROW(foldScatterElements(i32, ints({1}, {0}),
                                   ints({1}, {1}, onnx::TensorProto::INT32), 0,
                                   "add"),
               ImportError);
}

TEST(HostFoldingMovement, CumSumFlagsAndOverflow) {
  HostTensor a = ints({4}, {1, 2, 3, 4});
  EXPECT_EQ(foldCumSum(a, 0, false, false).ints, (std::vector<int64_t>{1, 3, 6, 10}));
  EXPECT_EQ(foldCumSum(a, 0, true, false).ints, (std::vector<int64_t>{0, 1, 3, 6}));
  EXPECT_EQ(foldCumSum(a, 0, false, true).ints, (std::vector<int64_t>{10, 9, 7, 4}));
  EXPECT_EQ(foldCumSum(a, 0, true, true).ints, (std::vector<int64_t>{9, 7, 4, 0}));
  EXPECT_THROW(foldCumSum(ints({2}, {INT64_MAX, 1}), 0, false, false), ImportError);
}
