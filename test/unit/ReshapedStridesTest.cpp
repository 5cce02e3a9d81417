//===- ReshapedStridesTest.cpp - a strided tensor's strides through a reshape -===//
#include "zeroc/Support/Strides.h"

#include <gtest/gtest.h>

using zeroc::reshapedStrides;
using Strides = llvm::SmallVector<int64_t>;

TEST(ReshapedStrides, DenseIsRowMajor) {
  auto r = reshapedStrides({6, 4}, {4, 1}, {2, 3, 4});
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, (Strides{12, 4, 1}));
}

TEST(ReshapedStrides, SplitsAColumnBandOfAWiderRow) {
  // [8, 1024, 768] at offset 768 of a [8, 1024, 2304]: the heads' split.
  auto r = reshapedStrides({8, 1024, 768}, {2359296, 2304, 1}, {8, 1024, 12, 64});
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, (Strides{2359296, 2304, 64, 1}));
}

TEST(ReshapedStrides, MergesOnlyContiguousDims) {
  // Rows 2304 apart, 768 wide: merging the rows needs a copy.
  EXPECT_FALSE(reshapedStrides({8, 1024, 768}, {2359296, 2304, 1}, {8, 786432}));
  // Merging the batch and time dims does not: time is contiguous in batch.
  auto r = reshapedStrides({8, 1024, 768}, {2359296, 2304, 1}, {8192, 768});
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, (Strides{2304, 1}));
}

TEST(ReshapedStrides, SizeOneDimsTakeAnyPlace) {
  auto r = reshapedStrides({4, 1, 6}, {12, 99, 2}, {1, 4, 6, 1});
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)[1], 12);
  EXPECT_EQ((*r)[2], 2);
}

TEST(ReshapedStrides, RejectsOtherElementCounts) {
  EXPECT_FALSE(reshapedStrides({2, 3}, {3, 1}, {7}));
}
