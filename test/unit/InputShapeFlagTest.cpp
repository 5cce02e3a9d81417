//===- InputShapeFlagTest.cpp - parsing --input-shape NAME=D0,D1 ----------===//
#include "zeroc/Import/OnnxImporter.h"

#include <gtest/gtest.h>

TEST(InputShapeFlag, ParsesNameAndDims) {
  std::map<std::string, std::vector<int64_t>> shapes;
  std::string error;
  ASSERT_TRUE(zeroc::parseInputShapeFlag("idx=2,8", shapes, error)) << error;
  EXPECT_EQ(shapes["idx"], (std::vector<int64_t>{2, 8}));
}

TEST(InputShapeFlag, NamesMayContainEqualsAndSlashes) {
  std::map<std::string, std::vector<int64_t>> shapes;
  std::string error;
  ASSERT_TRUE(zeroc::parseInputShapeFlag("a/b=c=4", shapes, error)) << error;
  EXPECT_EQ(shapes["a/b=c"], (std::vector<int64_t>{4}));
}

TEST(InputShapeFlag, RejectsMalformedFlags) {
  std::map<std::string, std::vector<int64_t>> shapes;
  std::string error;
  for (const char *bad : {"idx", "=2,8", "idx=2,,8", "idx=2,-1", "idx=0",
                          "idx=x", "idx=2,", "idx=99999999999999999"}) {
    error.clear();
    EXPECT_FALSE(zeroc::parseInputShapeFlag(bad, shapes, error)) << bad;
    EXPECT_NE(error.find("--input-shape"), std::string::npos) << bad;
  }
}
