//===- BroadcastShapesTest.cpp - numpy broadcasting of static shapes ------===//
#include "zeroc/Dialect/Graph/GraphOps.h"

#include <gtest/gtest.h>

using zeroc::graph::broadcastShapes;

TEST(BroadcastShapes, EqualShapes) {
  auto r = broadcastShapes({2, 3}, {2, 3});
  ASSERT_TRUE(succeeded(r));
  EXPECT_EQ(*r, (llvm::SmallVector<int64_t>{2, 3}));
}

TEST(BroadcastShapes, PrependsMissingDims) {
  auto r = broadcastShapes({4, 1, 3}, {5, 1});
  ASSERT_TRUE(succeeded(r));
  EXPECT_EQ(*r, (llvm::SmallVector<int64_t>{4, 5, 3}));
}

TEST(BroadcastShapes, ScalarBroadcastsToAnything) {
  auto r = broadcastShapes({}, {2, 8, 8});
  ASSERT_TRUE(succeeded(r));
  EXPECT_EQ(*r, (llvm::SmallVector<int64_t>{2, 8, 8}));
}

TEST(BroadcastShapes, RejectsIncompatibleDims) {
  EXPECT_TRUE(failed(broadcastShapes({2, 3}, {4})));
  EXPECT_TRUE(failed(broadcastShapes({2, 3}, {3, 3})));
}

TEST(BroadcastShapes, ZeroSizedDimBroadcastsWithOne) {
  auto r = broadcastShapes({0, 3}, {1, 3});
  ASSERT_TRUE(succeeded(r));
  EXPECT_EQ(*r, (llvm::SmallVector<int64_t>{0, 3}));
}
