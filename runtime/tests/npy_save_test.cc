//===- npy_save_test.cc - Argument checks of the .npy writer ----*- C++ -*-===//

#include "test_support.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

using namespace zeroc_rt::test;

namespace {

class NpySaveReject : public ::testing::Test {
protected:
  std::string path() const { return dir.file("out.npy"); }
  TempDir dir;
  int64_t dims[2] = {2, 2};
  float data[4] = {1, 2, 3, 4};
};

TEST_F(NpySaveReject, Bf16HasNoNpyEncoding) {
  ZEROC_RT_EXPECT_ERROR(
      zeroc_rt_npy_save(path().c_str(), ZEROC_RT_DTYPE_BF16, 2, dims, data),
      ZEROC_RT_INVALID_ARGUMENT, "bf16 has no .npy");
  EXPECT_FALSE(std::filesystem::exists(path()));
}

TEST_F(NpySaveReject, InvalidDtype) {
  ZEROC_RT_EXPECT_ERROR(zeroc_rt_npy_save(path().c_str(),
                                          static_cast<zeroc_rt_dtype_t>(77), 2,
                                          dims, data),
                        ZEROC_RT_INVALID_ARGUMENT, "invalid dtype value 77");
}

TEST_F(NpySaveReject, BadRank) {
  ZEROC_RT_EXPECT_ERROR(
      zeroc_rt_npy_save(path().c_str(), ZEROC_RT_DTYPE_F32, -1, dims, data),
      ZEROC_RT_INVALID_ARGUMENT, "rank -1");
  ZEROC_RT_EXPECT_ERROR(zeroc_rt_npy_save(path().c_str(), ZEROC_RT_DTYPE_F32,
                                          ZEROC_RT_NPY_MAX_RANK + 1, dims,
                                          data),
                        ZEROC_RT_INVALID_ARGUMENT, "rank 33");
}

TEST_F(NpySaveReject, NullPointers) {
  ZEROC_RT_EXPECT_ERROR(
      zeroc_rt_npy_save(path().c_str(), ZEROC_RT_DTYPE_F32, 2, nullptr, data),
      ZEROC_RT_INVALID_ARGUMENT, "dims is NULL");
  ZEROC_RT_EXPECT_ERROR(
      zeroc_rt_npy_save(path().c_str(), ZEROC_RT_DTYPE_F32, 2, dims, nullptr),
      ZEROC_RT_INVALID_ARGUMENT, "data is NULL");
  ZEROC_RT_EXPECT_ERROR(
      zeroc_rt_npy_save(nullptr, ZEROC_RT_DTYPE_F32, 2, dims, data),
      ZEROC_RT_INVALID_ARGUMENT, "path is NULL");
  ZEROC_RT_EXPECT_ERROR(
      zeroc_rt_npy_save("", ZEROC_RT_DTYPE_F32, 2, dims, data),
      ZEROC_RT_INVALID_ARGUMENT, "empty");
}

TEST_F(NpySaveReject, NegativeDimension) {
  int64_t negative[2] = {2, -1};
  ZEROC_RT_EXPECT_ERROR(
      zeroc_rt_npy_save(path().c_str(), ZEROC_RT_DTYPE_F32, 2, negative, data),
      ZEROC_RT_INVALID_ARGUMENT, "negative dimension -1");
}

TEST_F(NpySaveReject, SizeOverflow) {
  int64_t huge[2] = {int64_t(1) << 40, int64_t(1) << 40};
  ZEROC_RT_EXPECT_ERROR(
      zeroc_rt_npy_save(path().c_str(), ZEROC_RT_DTYPE_F32, 2, huge, data),
      ZEROC_RT_INVALID_ARGUMENT, "size overflow");
}

TEST_F(NpySaveReject, MissingDirectoryIsIoErrorNamingPath) {
  std::string target = dir.file("no/such/dir/out.npy");
  ZEROC_RT_EXPECT_ERROR(
      zeroc_rt_npy_save(target.c_str(), ZEROC_RT_DTYPE_F32, 2, dims, data),
      ZEROC_RT_IO_ERROR, target);
}

TEST_F(NpySaveReject, RenameFailureRemovesTemporaryFile) {
  // Renaming a file over a non-empty directory fails after the temporary file
  // was fully written; it must be cleaned up.
  std::string target = dir.file("occupied");
  std::filesystem::create_directories(target + "/child");
  ZEROC_RT_EXPECT_ERROR(
      zeroc_rt_npy_save(target.c_str(), ZEROC_RT_DTYPE_F32, 2, dims, data),
      ZEROC_RT_IO_ERROR, "temporary file");
  size_t entries = 0;
  for (const auto &entry : std::filesystem::directory_iterator(dir.path())) {
    (void)entry;
    ++entries;
  }
  EXPECT_EQ(entries, 1u) << "temporary file left behind";
}

} // namespace
