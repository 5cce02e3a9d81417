//===- checkpoint_format_test.cc - safetensors rank files ---------*- C++ -*-===//
//
// The writer round-trips through the reader; the streamed checksum is the
// checksum of the file whatever the chunking; and the reader rejects every
// malformed header (with no checksum to hide behind) with one FORMAT_ERROR.
//
//===----------------------------------------------------------------------===//

#include "test_support.h"
#include "zeroc_rt/checkpoint_format.h"
#include "zeroc_rt/checksum.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>
#include <unistd.h>

using namespace zeroc_rt::test;
using namespace zeroc_rt::checkpoint;

namespace {

std::string readAll(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void writeAll(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

/// A hand-made file: the 8-byte length, `header`, `data`.
std::string fileWith(const std::string &header, const std::string &data) {
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int b = 0; b < 8; ++b)
    out[b] = static_cast<char>(n >> (8 * b));
  return out + header + data;
}

TensorSource fromVector(const std::string &name, const std::vector<float> &v) {
  TensorSource t;
  t.name = name;
  t.dtype = ZEROC_RT_DTYPE_F32;
  t.count = static_cast<int64_t>(v.size());
  t.read = [&v](void *dst, size_t offset, size_t bytes) -> zeroc_rt_status_t {
    std::memcpy(dst, reinterpret_cast<const char *>(v.data()) + offset, bytes);
    return nullptr;
  };
  return t;
}

TEST(CheckpointFormat, RoundTripAndChecksum) {
  TempDir dir;
  std::vector<float> a(3), b(1000003); // b spans chunks of the writer
  std::iota(a.begin(), a.end(), 1.0f);
  std::iota(b.begin(), b.end(), -5.0f);
  WrittenFile written;
  const std::string path = dir.file("rank0.safetensors");
  ASSERT_EQ(writeSafetensors(path, {fromVector("param.a", a), fromVector("master.b", b)},
                             {{"format", "zeroc-checkpoint-rank"}}, written),
            nullptr);
  const std::string bytes = readAll(path);
  EXPECT_EQ(written.bytes, bytes.size());
  EXPECT_EQ(written.checksum, zeroc_rt_checksum64(bytes.data(), bytes.size()));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp." + std::to_string(getpid())));

  SafetensorsReader reader;
  ASSERT_EQ(reader.open(path, &written), nullptr);
  EXPECT_EQ(reader.metadata().at("format"), "zeroc-checkpoint-rank");
  const TensorInfo *tb = reader.find("master.b");
  ASSERT_NE(tb, nullptr);
  EXPECT_EQ(tb->count, 1000003);
  std::vector<float> got(10);
  ASSERT_EQ(reader.read(*tb, 999993, 10, got.data()), nullptr);
  EXPECT_EQ(got[9], b[1000002]);
  ZEROC_RT_EXPECT_ERROR(reader.read(*tb, 999994, 10, got.data()),
                        ZEROC_RT_FORMAT_ERROR, "outside a tensor");

  WrittenFile wrong = written;
  wrong.checksum ^= 1;
  SafetensorsReader other;
  ZEROC_RT_EXPECT_ERROR(other.open(path, &wrong), ZEROC_RT_FORMAT_ERROR,
                        "checksum");
}

TEST(CheckpointFormat, WriterErrorLeavesNoFile) {
  TempDir dir;
  const std::string path = dir.file("x.safetensors");
  TensorSource t;
  t.name = "t";
  t.count = 4;
  t.read = [](void *, size_t, size_t) {
    return zeroc_rt_status_make(ZEROC_RT_IO_ERROR, __FILE__, __LINE__,
                                "device read failed");
  };
  WrittenFile written;
  ZEROC_RT_EXPECT_ERROR(writeSafetensors(path, {t}, {}, written),
                        ZEROC_RT_IO_ERROR, "device read failed");
  EXPECT_TRUE(std::filesystem::is_empty(dir.file("")));
}

struct BadHeader {
  const char *header;
  std::string data;
  const char *needle;
};

class CheckpointFormatReject : public ::testing::TestWithParam<BadHeader> {};

TEST_P(CheckpointFormatReject, OneFormatError) {
  TempDir dir;
  const std::string path = dir.file("bad.safetensors");
  writeAll(path, fileWith(GetParam().header, GetParam().data));
  SafetensorsReader reader;
  ZEROC_RT_EXPECT_ERROR(reader.open(path, nullptr), ZEROC_RT_FORMAT_ERROR,
                        GetParam().needle);
}

INSTANTIATE_TEST_SUITE_P(
    Headers, CheckpointFormatReject,
    ::testing::Values(
        BadHeader{"[1, 2]", "", "not a JSON object"},
        BadHeader{"{\"t\": 3}", "", "missing or unsupported dtype"},
        BadHeader{"{\"t\": {\"dtype\": \"C64\", \"shape\": [1], \"data_offsets\": [0, 8]}}",
                  std::string(8, '\0'), "unsupported dtype"},
        BadHeader{"{\"t\": {\"dtype\": \"F32\", \"shape\": [-1], \"data_offsets\": [0, 4]}}",
                  std::string(4, '\0'), "negative"},
        BadHeader{"{\"t\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 4]}}",
                  std::string(4, '\0'), "does not match"},
        BadHeader{"{\"t\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 400]}}",
                  std::string(4, '\0'), "outside the file"},
        BadHeader{"{\"t\": {\"dtype\": \"F32\", \"shape\": [4611686018427387904, 4], "
                  "\"data_offsets\": [0, 4]}}",
                  std::string(4, '\0'), "does not match"},
        BadHeader{"{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]},"
                  " \"b\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}}",
                  std::string(8, '\0'), "overlap"},
        BadHeader{"{\"t\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}}",
                  std::string(12, '\0'), "after the last tensor"},
        BadHeader{"{\"__metadata__\": {\"k\": 1}}", "", "not a string"}));

TEST(CheckpointFormat, RejectsHugeHeaderLengthWithoutAllocating) {
  TempDir dir;
  const std::string path = dir.file("huge.safetensors");
  std::string bytes = fileWith("{}", "");
  bytes[7] = 0x10; // a header length of 2^60
  writeAll(path, bytes);
  SafetensorsReader reader;
  ZEROC_RT_EXPECT_ERROR(reader.open(path, nullptr), ZEROC_RT_FORMAT_ERROR,
                        "exceeds the file");
  writeAll(path, "abc");
  ZEROC_RT_EXPECT_ERROR(reader.open(path, nullptr), ZEROC_RT_FORMAT_ERROR,
                        "too short");
}

} // namespace
