//===- status_test.cc - Tests for zeroc_rt_status_t -------------*- C++ -*-===//

#include "status_internal.h"
#include "test_support.h"

#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <string>

using zeroc_rt::test::StatusPtr;

TEST(Status, NullMeansOk) {
  EXPECT_EQ(zeroc_rt_status_code(nullptr), ZEROC_RT_OK);
  EXPECT_STREQ(zeroc_rt_status_message(nullptr), "OK");
  EXPECT_STREQ(zeroc_rt_status_file(nullptr), "");
  EXPECT_EQ(zeroc_rt_status_line(nullptr), 0);
  zeroc_rt_status_free(nullptr);
}

TEST(Status, MakeWithOkCodeReturnsNull) {
  EXPECT_EQ(zeroc_rt_status_make(ZEROC_RT_OK, "x.cc", 1, "ignored"), nullptr);
}

TEST(Status, CarriesCodeFormattedMessageAndLocation) {
  StatusPtr status(zeroc_rt_status_make(ZEROC_RT_IO_ERROR, "/a/b/npy.cc", 42,
                                        "cannot open '%s': %d", "x.npy", 7));
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(zeroc_rt_status_code(status.get()), ZEROC_RT_IO_ERROR);
  EXPECT_STREQ(zeroc_rt_status_message(status.get()),
               "npy.cc:42: cannot open 'x.npy': 7");
  EXPECT_STREQ(zeroc_rt_status_file(status.get()), "npy.cc");
  EXPECT_EQ(zeroc_rt_status_line(status.get()), 42);
}

TEST(Status, InternalMacroStampsThisFileAndLine) {
  int expectedLine = __LINE__ + 1;
  StatusPtr status(ZEROC_RT_ERROR(ZEROC_RT_INTERNAL, "boom %s", "here"));
  std::string expected =
      "status_test.cc:" + std::to_string(expectedLine) + ": boom here";
  EXPECT_EQ(zeroc_rt_status_message(status.get()), expected);
  EXPECT_EQ(zeroc_rt_status_code(status.get()), ZEROC_RT_INTERNAL);
}

TEST(Status, LongMessagesAreNotTruncated) {
  std::string longText(10000, 'x');
  StatusPtr status(zeroc_rt_status_make(ZEROC_RT_FORMAT_ERROR, "f.cc", 1, "%s|",
                                        longText.c_str()));
  EXPECT_EQ(std::strlen(zeroc_rt_status_message(status.get())),
            std::string("f.cc:1: ").size() + longText.size() + 1);
}

TEST(Status, NullFileAndFormatAreTolerated) {
  StatusPtr status(
      zeroc_rt_status_make(ZEROC_RT_INTERNAL, nullptr, 3, nullptr));
  EXPECT_STREQ(zeroc_rt_status_message(status.get()), "<unknown>:3: ");
}

TEST(Status, CodeNamesAreStable) {
  EXPECT_STREQ(zeroc_rt_status_code_name(ZEROC_RT_OK), "OK");
  EXPECT_STREQ(zeroc_rt_status_code_name(ZEROC_RT_INVALID_ARGUMENT),
               "INVALID_ARGUMENT");
  EXPECT_STREQ(zeroc_rt_status_code_name(ZEROC_RT_IO_ERROR), "IO_ERROR");
  EXPECT_STREQ(zeroc_rt_status_code_name(ZEROC_RT_FORMAT_ERROR),
               "FORMAT_ERROR");
  EXPECT_STREQ(zeroc_rt_status_code_name(ZEROC_RT_SHAPE_MISMATCH),
               "SHAPE_MISMATCH");
  EXPECT_STREQ(zeroc_rt_status_code_name(ZEROC_RT_OUT_OF_MEMORY),
               "OUT_OF_MEMORY");
  EXPECT_STREQ(zeroc_rt_status_code_name(ZEROC_RT_COMM_ERROR), "COMM_ERROR");
  EXPECT_STREQ(zeroc_rt_status_code_name(ZEROC_RT_NUMERIC_ERROR),
               "NUMERIC_ERROR");
  EXPECT_STREQ(zeroc_rt_status_code_name(ZEROC_RT_INTERNAL), "INTERNAL");
  EXPECT_STREQ(
      zeroc_rt_status_code_name(static_cast<zeroc_rt_status_code_t>(99)),
      "UNKNOWN");
}

TEST(Status, ReturnIfErrorPropagatesOnlyErrors) {
  auto passThrough = [](zeroc_rt_status_t input) -> zeroc_rt_status_t {
    ZEROC_RT_RETURN_IF_ERROR(input);
    return ZEROC_RT_ERROR(ZEROC_RT_NUMERIC_ERROR, "reached the end");
  };
  StatusPtr fromError(passThrough(ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR, "early")));
  EXPECT_EQ(zeroc_rt_status_code(fromError.get()), ZEROC_RT_IO_ERROR);
  StatusPtr fromOk(passThrough(nullptr));
  EXPECT_EQ(zeroc_rt_status_code(fromOk.get()), ZEROC_RT_NUMERIC_ERROR);
}

TEST(Status, GuardConvertsExceptions) {
  auto throwing = []() -> zeroc_rt_status_t {
    throw std::runtime_error("kaput");
  };
  StatusPtr status(ZEROC_RT_GUARD_EXCEPTIONS(throwing()));
  EXPECT_EQ(zeroc_rt_status_code(status.get()), ZEROC_RT_INTERNAL);
  EXPECT_NE(std::string(zeroc_rt_status_message(status.get())).find("kaput"),
            std::string::npos);
  auto allocating = []() -> zeroc_rt_status_t { throw std::bad_alloc(); };
  StatusPtr oom(ZEROC_RT_GUARD_EXCEPTIONS(allocating()));
  EXPECT_EQ(zeroc_rt_status_code(oom.get()), ZEROC_RT_OUT_OF_MEMORY);
}

TEST(Dtype, SizesAndNames) {
  EXPECT_EQ(zeroc_rt_dtype_size(ZEROC_RT_DTYPE_F32), 4u);
  EXPECT_EQ(zeroc_rt_dtype_size(ZEROC_RT_DTYPE_F64), 8u);
  EXPECT_EQ(zeroc_rt_dtype_size(ZEROC_RT_DTYPE_F16), 2u);
  EXPECT_EQ(zeroc_rt_dtype_size(ZEROC_RT_DTYPE_BF16), 2u);
  EXPECT_EQ(zeroc_rt_dtype_size(ZEROC_RT_DTYPE_I64), 8u);
  EXPECT_EQ(zeroc_rt_dtype_size(ZEROC_RT_DTYPE_I32), 4u);
  EXPECT_EQ(zeroc_rt_dtype_size(ZEROC_RT_DTYPE_U8), 1u);
  EXPECT_EQ(zeroc_rt_dtype_size(ZEROC_RT_DTYPE_BOOL), 1u);
  EXPECT_EQ(zeroc_rt_dtype_size(static_cast<zeroc_rt_dtype_t>(-1)), 0u);
  EXPECT_STREQ(zeroc_rt_dtype_name(ZEROC_RT_DTYPE_BF16), "bf16");
  EXPECT_STREQ(zeroc_rt_dtype_name(static_cast<zeroc_rt_dtype_t>(42)),
               "invalid");
  for (int dtype = 0; dtype < ZEROC_RT_DTYPE_COUNT; ++dtype)
    EXPECT_GT(zeroc_rt_dtype_size(static_cast<zeroc_rt_dtype_t>(dtype)), 0u);
}

extern "C" int zeroc_rt_c_api_smoke(void);

TEST(CApi, HeadersCompileAndRunFromC) { EXPECT_EQ(zeroc_rt_c_api_smoke(), 0); }
