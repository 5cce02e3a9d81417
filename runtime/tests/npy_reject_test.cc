//===- npy_reject_test.cc - Rejected .npy inputs ----------------*- C++ -*-===//
//
// Every rejection must return the documented code, leave *out NULL and name
// the offending path in its message.
//
//===----------------------------------------------------------------------===//

#include "test_support.h"

#include <gtest/gtest.h>

#include <string>
#include <sys/stat.h>

using namespace zeroc_rt::test;

namespace {

const std::string kGoodDict =
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
const std::string kTwoFloats(8, '\0');

class NpyReject : public ::testing::Test {
protected:
  /// Writes `image` to a fresh file and expects loading it to fail with
  /// `code` and a message containing the path and `needle`.
  void expectRejected(const std::string &image, zeroc_rt_status_code_t code,
                      const std::string &needle) {
    std::string path = dir.file("bad.npy");
    writeBytes(path, image);
    expectLoadFails(path, code, needle);
  }

  void expectLoadFails(const std::string &path, zeroc_rt_status_code_t code,
                       const std::string &needle) {
    zeroc_rt_npy_t *array = reinterpret_cast<zeroc_rt_npy_t *>(0x1);
    StatusPtr status(zeroc_rt_npy_load(path.c_str(), &array));
    EXPECT_EQ(array, nullptr);
    ASSERT_NE(status, nullptr) << "unexpectedly loaded " << path;
    std::string message = zeroc_rt_status_message(status.get());
    EXPECT_EQ(zeroc_rt_status_code(status.get()), code) << message;
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find(needle), std::string::npos)
        << "'" << message << "' lacks '" << needle << "'";
  }

  TempDir dir;
};

TEST_F(NpyReject, MissingFile) {
  expectLoadFails(dir.file("does_not_exist.npy"), ZEROC_RT_IO_ERROR,
                  "cannot open");
}

TEST_F(NpyReject, Directory) {
  expectLoadFails(dir.path().string(), ZEROC_RT_IO_ERROR, "not a regular file");
}

TEST_F(NpyReject, EmptyFile) {
  expectRejected("", ZEROC_RT_FORMAT_ERROR, "bad magic");
}

TEST_F(NpyReject, BadMagic) {
  std::string image = paddedNpyImage(1, kGoodDict, kTwoFloats);
  image[1] = 'X';
  expectRejected(image, ZEROC_RT_FORMAT_ERROR, "bad magic");
}

TEST_F(NpyReject, UnsupportedMajorVersion) {
  std::string image = paddedNpyImage(2, kGoodDict, kTwoFloats);
  image[6] = 4;
  expectRejected(image, ZEROC_RT_FORMAT_ERROR,
                 "unsupported .npy format "
                 "version 4.0");
}

TEST_F(NpyReject, UnsupportedMinorVersion) {
  std::string image = paddedNpyImage(1, kGoodDict, kTwoFloats);
  image[7] = 1;
  expectRejected(image, ZEROC_RT_FORMAT_ERROR, "version 1.1");
}

TEST_F(NpyReject, TruncatedLengthField) {
  expectRejected(std::string("\x93NUMPY\x02\x00\x10", 9), ZEROC_RT_FORMAT_ERROR,
                 "truncated");
}

TEST_F(NpyReject, HeaderLongerThanFile) {
  std::string image = npyImage(1, kGoodDict, "");
  image[8] = static_cast<char>(0xFF); // Claims a 0x??FF-byte header.
  expectRejected(image, ZEROC_RT_FORMAT_ERROR, "truncated");
}

TEST_F(NpyReject, HeaderLengthAboveCap) {
  std::string image("\x93NUMPY\x02\x00", 8);
  image += std::string("\x00\x00\x10\x00", 4); // 1 MiB header.
  image += kGoodDict;
  expectRejected(image, ZEROC_RT_FORMAT_ERROR, "exceeds the limit");
}

TEST_F(NpyReject, BigEndian) {
  expectRejected(
      paddedNpyImage(
          1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }",
          kTwoFloats),
      ZEROC_RT_FORMAT_ERROR, "big-endian");
}

TEST_F(NpyReject, FortranOrder) {
  expectRejected(
      paddedNpyImage(
          1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 1), }",
          kTwoFloats),
      ZEROC_RT_FORMAT_ERROR, "fortran_order");
}

TEST_F(NpyReject, UnsupportedDtypes) {
  for (const char *descr : {"<c8", "<U3", "|O", "<i2", "<f16", "|V4", "f4"}) {
    SCOPED_TRACE(descr);
    expectRejected(paddedNpyImage(1,
                                  std::string("{'descr': '") + descr +
                                      "', 'fortran_order': False, 'shape': "
                                      "(2,), }",
                                  kTwoFloats),
                   ZEROC_RT_FORMAT_ERROR, "unsupported dtype");
  }
}

TEST_F(NpyReject, StructuredDtype) {
  expectRejected(
      paddedNpyImage(1,
                     "{'descr': [('a', '<f4')], 'fortran_order': False, "
                     "'shape': (2,), }",
                     kTwoFloats),
      ZEROC_RT_FORMAT_ERROR, "unsupported dtype");
}

TEST_F(NpyReject, MultiByteDtypeWithoutByteOrder) {
  expectRejected(
      paddedNpyImage(
          1, "{'descr': '|f4', 'fortran_order': False, 'shape': (2,), }",
          kTwoFloats),
      ZEROC_RT_FORMAT_ERROR, "lacks a byte order");
}

TEST_F(NpyReject, TruncatedData) {
  expectRejected(paddedNpyImage(1, kGoodDict, kTwoFloats.substr(0, 7)),
                 ZEROC_RT_FORMAT_ERROR, "truncated");
}

TEST_F(NpyReject, TrailingBytes) {
  expectRejected(paddedNpyImage(1, kGoodDict, kTwoFloats + "x"),
                 ZEROC_RT_FORMAT_ERROR, "trailing bytes");
}

TEST_F(NpyReject, SizeOverflow) {
  expectRejected(
      paddedNpyImage(1,
                     "{'descr': '<f4', 'fortran_order': False, 'shape': "
                     "(4294967296, 4294967296), }",
                     kTwoFloats),
      ZEROC_RT_FORMAT_ERROR, "size overflow");
}

TEST_F(NpyReject, NullArguments) {
  ZEROC_RT_EXPECT_ERROR(zeroc_rt_npy_load(dir.file("x.npy").c_str(), nullptr),
                        ZEROC_RT_INVALID_ARGUMENT, "x.npy");
  zeroc_rt_npy_t *array = nullptr;
  ZEROC_RT_EXPECT_ERROR(zeroc_rt_npy_load(nullptr, &array),
                        ZEROC_RT_INVALID_ARGUMENT, "path is NULL");
}

TEST_F(NpyReject, Fifo) {
  std::string path = dir.file("pipe.npy");
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  expectLoadFails(path, ZEROC_RT_IO_ERROR, "not a regular file");
}

/// Robustness sweep over untrusted input: every truncation of a valid file and
/// several corruptions of every preamble/header byte must either load or fail
/// cleanly (ASan/UBSan builds check the "cleanly").
TEST_F(NpyReject, EveryTruncationAndHeaderByteCorruptionIsHandled) {
  std::string valid = paddedNpyImage(
      1, "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 1), }",
      std::string(16, '\x11'));
  std::string path = dir.file("fuzz.npy");
  int loaded = 0, rejected = 0;
  auto tryLoad = [&](const std::string &image) {
    writeBytes(path, image);
    zeroc_rt_npy_t *array = nullptr;
    StatusPtr status(zeroc_rt_npy_load(path.c_str(), &array));
    NpyPtr owned(array);
    EXPECT_EQ(status == nullptr, array != nullptr);
    if (status) {
      ++rejected;
      EXPECT_NE(std::string(zeroc_rt_status_message(status.get())).find(path),
                std::string::npos);
    } else {
      ++loaded;
    }
  };
  for (size_t length = 0; length < valid.size(); ++length)
    tryLoad(valid.substr(0, length));
  size_t headerEnd = valid.size() - 16;
  for (size_t i = 0; i < headerEnd; ++i)
    for (char replacement : {'\0', '\xff', '(', '\'', '9', ','}) {
      std::string corrupted = valid;
      corrupted[i] = replacement;
      tryLoad(corrupted);
    }
  EXPECT_GT(rejected, 0);
  EXPECT_GT(loaded, 0); // Replacements equal to the original byte.
}

/// Header dictionaries the parser must refuse, with a message fragment.
struct BadHeaderCase {
  const char *name;
  const char *dict;
  const char *needle;
};

class NpyRejectHeader : public NpyReject,
                        public ::testing::WithParamInterface<BadHeaderCase> {};

TEST_P(NpyRejectHeader, FailsWithFormatError) {
  expectRejected(paddedNpyImage(1, GetParam().dict, kTwoFloats),
                 ZEROC_RT_FORMAT_ERROR, GetParam().needle);
}

const BadHeaderCase kBadHeaders[] = {
    {"Empty", "", "expected '{'"},
    {"NotADict", "['descr', '<f4']", "expected '{'"},
    {"Unterminated", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)",
     "expected ',' or '}'"},
    {"UnterminatedString", "{'descr: '<f4'}", "expected ':'"},
    {"UnquotedKey", "{descr: '<f4', 'fortran_order': False, 'shape': (2,)}",
     "expected a quoted string"},
    {"EscapeInString",
     "{'des\\cr': '<f4', 'fortran_order': False, 'shape': (2,)}",
     "escape sequences"},
    {"MissingShape", "{'descr': '<f4', 'fortran_order': False}", "missing key"},
    {"MissingDescr", "{'fortran_order': False, 'shape': (2,)}", "missing key"},
    {"UnknownKey",
     "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}",
     "unexpected key"},
    {"DuplicateKey",
     "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}",
     "duplicate key"},
    {"BadBool", "{'descr': '<f4', 'fortran_order': false, 'shape': (2,)}",
     "expected True or False"},
    {"NegativeDim", "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}",
     "negative dimension"},
    {"FloatDim", "{'descr': '<f4', 'fortran_order': False, 'shape': (2.0,)}",
     "expected ',' or ')'"},
    {"ShapeNotTuple", "{'descr': '<f4', 'fortran_order': False, 'shape': 2}",
     "expected '('"},
    {"RankOneWithoutComma",
     "{'descr': '<f4', 'fortran_order': False, 'shape': (2)}", "'(n,)'"},
    {"DimOverflowsInt64",
     "{'descr': '<f4', 'fortran_order': False, 'shape': "
     "(99999999999999999999,)}",
     "overflows int64"},
    {"RankAboveMax",
     "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, "
     "1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, "
     "1, 2)}",
     "more than ZEROC_RT_NPY_MAX_RANK"},
    {"TrailingText",
     "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} extra",
     "unexpected text after"},
    {"ControlCharAfterDict",
     "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}\x01",
     "unexpected text after"},
};

INSTANTIATE_TEST_SUITE_P(
    Malformed, NpyRejectHeader, ::testing::ValuesIn(kBadHeaders),
    [](const ::testing::TestParamInfo<BadHeaderCase> &info) {
      return std::string(info.param.name);
    });

class NpyLoadIntoReject : public NpyReject {
protected:
  void SetUp() override {
    path = dir.file("good.npy");
    ZEROC_RT_ASSERT_OK(
        zeroc_rt_npy_save(path.c_str(), ZEROC_RT_DTYPE_F32, 2, dims, values));
  }
  std::string path;
  int64_t dims[2] = {2, 3};
  float values[6] = {1, 2, 3, 4, 5, 6};
};

TEST_F(NpyLoadIntoReject, ShapeMismatch) {
  int64_t transposed[2] = {3, 2};
  float dst[6];
  ZEROC_RT_EXPECT_ERROR(zeroc_rt_npy_load_into(path.c_str(), ZEROC_RT_DTYPE_F32,
                                               2, transposed, dst, sizeof(dst)),
                        ZEROC_RT_SHAPE_MISMATCH, "expected f32[3,2]");
  ZEROC_RT_EXPECT_ERROR(zeroc_rt_npy_load_into(path.c_str(), ZEROC_RT_DTYPE_F32,
                                               1, transposed, dst, sizeof(dst)),
                        ZEROC_RT_SHAPE_MISMATCH, path);
}

TEST_F(NpyLoadIntoReject, DtypeMismatch) {
  int32_t dst[6];
  ZEROC_RT_EXPECT_ERROR(zeroc_rt_npy_load_into(path.c_str(), ZEROC_RT_DTYPE_I32,
                                               2, dims, dst, sizeof(dst)),
                        ZEROC_RT_SHAPE_MISMATCH, "file holds f32[2,3]");
}

TEST_F(NpyLoadIntoReject, DestinationTooSmallOrNull) {
  float dst[5];
  ZEROC_RT_EXPECT_ERROR(zeroc_rt_npy_load_into(path.c_str(), ZEROC_RT_DTYPE_F32,
                                               2, dims, dst, sizeof(dst)),
                        ZEROC_RT_INVALID_ARGUMENT, path);
  ZEROC_RT_EXPECT_ERROR(zeroc_rt_npy_load_into(path.c_str(), ZEROC_RT_DTYPE_F32,
                                               2, dims, nullptr, 24),
                        ZEROC_RT_INVALID_ARGUMENT, "NULL");
  ZEROC_RT_EXPECT_ERROR(zeroc_rt_npy_load_into(path.c_str(), ZEROC_RT_DTYPE_F32,
                                               -1, dims, dst, sizeof(dst)),
                        ZEROC_RT_INVALID_ARGUMENT, "invalid expected shape");
}

TEST_F(NpyLoadIntoReject, MissingFile) {
  float dst[6];
  std::string missing = dir.file("missing.npy");
  ZEROC_RT_EXPECT_ERROR(zeroc_rt_npy_load_into(missing.c_str(),
                                               ZEROC_RT_DTYPE_F32, 2, dims, dst,
                                               sizeof(dst)),
                        ZEROC_RT_IO_ERROR, missing);
}

} // namespace
