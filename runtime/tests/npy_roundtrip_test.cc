//===- npy_roundtrip_test.cc - .npy write/read round trips ------*- C++ -*-===//
//
// Writes arrays of every .npy dtype and ranks 0..4 with zeroc_rt_npy_save and
// reads them back; also loads hand-crafted headers of versions 1.0/2.0/3.0.
//
//===----------------------------------------------------------------------===//

#include "test_support.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <tuple>
#include <vector>

using namespace zeroc_rt::test;

namespace {

const zeroc_rt_dtype_t kNpyDtypes[] = {
    ZEROC_RT_DTYPE_F32,  ZEROC_RT_DTYPE_F64, ZEROC_RT_DTYPE_F16,
    ZEROC_RT_DTYPE_I64,  ZEROC_RT_DTYPE_I32, ZEROC_RT_DTYPE_U8,
    ZEROC_RT_DTYPE_BOOL,
};

std::vector<int64_t> shapeOfRank(int rank) {
  const std::vector<int64_t> shapes[] = {
      {}, {5}, {3, 4}, {2, 3, 4}, {2, 1, 3, 2}};
  return shapes[rank];
}

/// Deterministic bytes; bools get valid 0/1 values.
std::vector<unsigned char> patternBytes(zeroc_rt_dtype_t dtype, size_t nbytes) {
  std::vector<unsigned char> bytes(nbytes);
  for (size_t i = 0; i < nbytes; ++i)
    bytes[i] = dtype == ZEROC_RT_DTYPE_BOOL
                   ? static_cast<unsigned char>(i % 3 == 0)
                   : static_cast<unsigned char>((i * 131 + 7) & 0xFF);
  return bytes;
}

size_t byteSize(zeroc_rt_dtype_t dtype, const std::vector<int64_t> &dims) {
  size_t count = 1;
  for (int64_t dim : dims)
    count *= static_cast<size_t>(dim);
  return count * zeroc_rt_dtype_size(dtype);
}

void expectArray(const zeroc_rt_npy_t *array, zeroc_rt_dtype_t dtype,
                 const std::vector<int64_t> &dims,
                 const std::vector<unsigned char> &bytes) {
  ASSERT_NE(array, nullptr);
  EXPECT_EQ(zeroc_rt_npy_dtype(array), dtype);
  ASSERT_EQ(zeroc_rt_npy_rank(array), static_cast<int32_t>(dims.size()));
  ASSERT_NE(zeroc_rt_npy_dims(array), nullptr);
  for (size_t i = 0; i < dims.size(); ++i)
    EXPECT_EQ(zeroc_rt_npy_dims(array)[i], dims[i]) << "dim " << i;
  EXPECT_EQ(zeroc_rt_npy_nbytes(array), bytes.size());
  EXPECT_EQ(static_cast<size_t>(zeroc_rt_npy_num_elements(array)),
            bytes.size() / zeroc_rt_dtype_size(dtype));
  void *data = zeroc_rt_npy_data(array);
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % ZEROC_RT_NPY_DATA_ALIGNMENT,
            0u);
  if (!bytes.empty()) {
    EXPECT_EQ(std::memcmp(data, bytes.data(), bytes.size()), 0);
  }
}

class NpyRoundTrip
    : public ::testing::TestWithParam<std::tuple<zeroc_rt_dtype_t, int>> {};

TEST_P(NpyRoundTrip, SaveThenLoadPreservesEverything) {
  auto [dtype, rank] = GetParam();
  std::vector<int64_t> dims = shapeOfRank(rank);
  std::vector<unsigned char> bytes = patternBytes(dtype, byteSize(dtype, dims));
  TempDir dir;
  std::string path = dir.file("array.npy");
  ZEROC_RT_ASSERT_OK(
      zeroc_rt_npy_save(path.c_str(), dtype, rank, dims.data(), bytes.data()));

  zeroc_rt_npy_t *raw = nullptr;
  ZEROC_RT_ASSERT_OK(zeroc_rt_npy_load(path.c_str(), &raw));
  NpyPtr array(raw);
  expectArray(array.get(), dtype, dims, bytes);

  std::vector<unsigned char> into(bytes.size() + 1, 0xEE);
  ZEROC_RT_ASSERT_OK(zeroc_rt_npy_load_into(
      path.c_str(), dtype, rank, dims.data(), into.data(), into.size()));
  EXPECT_EQ(std::memcmp(into.data(), bytes.data(), bytes.size()), 0);
  EXPECT_EQ(into.back(), 0xEE) << "load_into wrote past the data";
}

TEST_P(NpyRoundTrip, WritesAlignedVersion1HeaderAndNoTempFile) {
  auto [dtype, rank] = GetParam();
  std::vector<int64_t> dims = shapeOfRank(rank);
  std::vector<unsigned char> bytes = patternBytes(dtype, byteSize(dtype, dims));
  TempDir dir;
  std::string path = dir.file("array.npy");
  ZEROC_RT_ASSERT_OK(
      zeroc_rt_npy_save(path.c_str(), dtype, rank, dims.data(), bytes.data()));
  std::string image = readBytes(path);
  ASSERT_GE(image.size(), 10u);
  EXPECT_EQ(image.substr(0, 6), std::string("\x93NUMPY", 6));
  EXPECT_EQ(image[6], 1);
  EXPECT_EQ(image[7], 0);
  size_t headerLength = static_cast<unsigned char>(image[8]) |
                        static_cast<unsigned char>(image[9]) << 8;
  size_t dataOffset = 10 + headerLength;
  EXPECT_EQ(dataOffset % 64, 0u);
  ASSERT_EQ(image.size(), dataOffset + bytes.size());
  EXPECT_EQ(image[dataOffset - 1], '\n');
  size_t entries = 0;
  for (const auto &entry : std::filesystem::directory_iterator(dir.path())) {
    (void)entry;
    ++entries;
  }
  EXPECT_EQ(entries, 1u) << "temporary file left behind";
}

std::string roundTripName(
    const ::testing::TestParamInfo<std::tuple<zeroc_rt_dtype_t, int>> &info) {
  return std::string(zeroc_rt_dtype_name(std::get<0>(info.param))) + "_rank" +
         std::to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(AllDtypesAndRanks, NpyRoundTrip,
                         ::testing::Combine(::testing::ValuesIn(kNpyDtypes),
                                            ::testing::Range(0, 5)),
                         roundTripName);

TEST(NpyRoundTripEdge, EmptyArrayWithZeroDimension) {
  TempDir dir;
  std::string path = dir.file("empty.npy");
  int64_t dims[] = {0, 3};
  ZEROC_RT_ASSERT_OK(
      zeroc_rt_npy_save(path.c_str(), ZEROC_RT_DTYPE_F32, 2, dims, nullptr));
  zeroc_rt_npy_t *raw = nullptr;
  ZEROC_RT_ASSERT_OK(zeroc_rt_npy_load(path.c_str(), &raw));
  NpyPtr array(raw);
  expectArray(array.get(), ZEROC_RT_DTYPE_F32, {0, 3}, {});
}

TEST(NpyRoundTripEdge, MaxRankAndOverwrite) {
  TempDir dir;
  std::string path = dir.file("wide.npy");
  std::vector<int64_t> dims(ZEROC_RT_NPY_MAX_RANK, 1);
  dims[7] = 2;
  double values[2] = {1.5, -2.25};
  writeBytes(path, "stale contents");
  ZEROC_RT_ASSERT_OK(zeroc_rt_npy_save(path.c_str(), ZEROC_RT_DTYPE_F64,
                                       ZEROC_RT_NPY_MAX_RANK, dims.data(),
                                       values));
  zeroc_rt_npy_t *raw = nullptr;
  ZEROC_RT_ASSERT_OK(zeroc_rt_npy_load(path.c_str(), &raw));
  NpyPtr array(raw);
  std::vector<unsigned char> bytes(sizeof(values));
  std::memcpy(bytes.data(), values, sizeof(values));
  expectArray(array.get(), ZEROC_RT_DTYPE_F64, dims, bytes);
}

TEST(NpyRoundTripEdge, NullArrayAccessorsAreSafe) {
  EXPECT_EQ(zeroc_rt_npy_rank(nullptr), 0);
  EXPECT_EQ(zeroc_rt_npy_nbytes(nullptr), 0u);
  EXPECT_EQ(zeroc_rt_npy_num_elements(nullptr), 0);
  EXPECT_EQ(zeroc_rt_npy_data(nullptr), nullptr);
  EXPECT_NE(zeroc_rt_npy_dims(nullptr), nullptr);
  zeroc_rt_npy_free(nullptr);
}

/// A header as numpy (or another writer) may spell it, with the array it
/// must decode to: int32 values 0..5 in shape (2, 3) unless stated.
struct HandCraftedCase {
  const char *name;
  int major;
  const char *dict;
  bool pad;
};

class NpyHandCraftedHeader : public ::testing::TestWithParam<HandCraftedCase> {
};

TEST_P(NpyHandCraftedHeader, LoadsInt32TwoByThree) {
  const HandCraftedCase &param = GetParam();
  int32_t values[6] = {0, 1, 2, -3, 2147483647, -2147483647 - 1};
  std::string data(reinterpret_cast<const char *>(values), sizeof(values));
  std::string image = param.pad ? paddedNpyImage(param.major, param.dict, data)
                                : npyImage(param.major, param.dict, data);
  TempDir dir;
  std::string path = dir.file("crafted.npy");
  writeBytes(path, image);
  zeroc_rt_npy_t *raw = nullptr;
  ZEROC_RT_ASSERT_OK(zeroc_rt_npy_load(path.c_str(), &raw));
  NpyPtr array(raw);
  std::vector<unsigned char> bytes(data.begin(), data.end());
  expectArray(array.get(), ZEROC_RT_DTYPE_I32, {2, 3}, bytes);
}

const HandCraftedCase kHandCraftedCases[] = {
    {"Version1", 1,
     "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }", true},
    {"Version2", 2,
     "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }", true},
    {"Version3", 3,
     "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }", true},
    {"Unpadded", 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3)}",
     false},
    {"KeysReorderedDoubleQuoted", 2,
     "{\"shape\": (2,3), \"fortran_order\": False, \"descr\": \"<i4\"}", true},
    {"NativeByteOrderAndLongSuffix", 1,
     "{'descr': '=i4', 'fortran_order': False, 'shape': (2L, 3L), }", true},
    {"ExtraWhitespace", 1,
     "  {\t'descr' : '<i4' ,\n'fortran_order':False,'shape':( 2 , 3 , ) }  ",
     false},
};

INSTANTIATE_TEST_SUITE_P(
    Variants, NpyHandCraftedHeader, ::testing::ValuesIn(kHandCraftedCases),
    [](const ::testing::TestParamInfo<HandCraftedCase> &info) {
      return std::string(info.param.name);
    });

TEST(NpyHandCrafted, Version2ByteStringExactly) {
  // A version 2.0 file spelled out byte by byte: magic, version 2.0, 4-byte
  // little-endian header length 0x74 = 116, so that the 12-byte preamble plus
  // the header is 128 bytes, a multiple of 64 as numpy pads it.
  std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (), }";
  std::string header = dict + std::string(116 - dict.size() - 1, ' ') + "\n";
  ASSERT_EQ(header.size(), 116u);
  std::string image("\x93NUMPY\x02\x00\x74\x00\x00\x00", 12);
  image += header;
  double value = 3.25;
  image.append(reinterpret_cast<const char *>(&value), sizeof(value));
  ASSERT_EQ(image.size(), 128u + 8u);
  TempDir dir;
  std::string path = dir.file("v2.npy");
  writeBytes(path, image);
  zeroc_rt_npy_t *raw = nullptr;
  ZEROC_RT_ASSERT_OK(zeroc_rt_npy_load(path.c_str(), &raw));
  NpyPtr array(raw);
  ASSERT_EQ(zeroc_rt_npy_rank(array.get()), 0);
  ASSERT_EQ(zeroc_rt_npy_dtype(array.get()), ZEROC_RT_DTYPE_F64);
  EXPECT_EQ(zeroc_rt_npy_num_elements(array.get()), 1);
  EXPECT_EQ(*static_cast<double *>(zeroc_rt_npy_data(array.get())), 3.25);
}

} // namespace
