//===- test_support.h - Shared unit-test helpers ----------------*- C++ -*-===//
//
// RAII ownership of statuses, temporary directories, raw file I/O and
// hand-built .npy byte strings.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_TESTS_TEST_SUPPORT_H
#define ZEROC_RT_TESTS_TEST_SUPPORT_H

#include "zeroc_rt/zeroc_rt.h"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace zeroc_rt::test {

struct StatusDeleter {
  void operator()(zeroc_rt_status *status) const {
    zeroc_rt_status_free(status);
  }
};
using StatusPtr = std::unique_ptr<zeroc_rt_status, StatusDeleter>;

struct NpyDeleter {
  void operator()(zeroc_rt_npy_t *array) const { zeroc_rt_npy_free(array); }
};
using NpyPtr = std::unique_ptr<zeroc_rt_npy_t, NpyDeleter>;

/// A fresh directory under $TMPDIR (or /tmp), removed with its contents.
class TempDir {
public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  const std::filesystem::path &path() const { return root; }
  std::string file(const std::string &name) const {
    return (root / name).string();
  }

private:
  std::filesystem::path root;
};

void writeBytes(const std::string &path, const std::string &bytes);
std::string readBytes(const std::string &path);

/// Builds a .npy file image: magic, version major.0, little-endian header
/// length (2 bytes for version 1, else 4), `header` verbatim, then `data`.
std::string npyImage(int major, const std::string &header,
                     const std::string &data);

/// Like npyImage, but pads `dict` with spaces and '\n' to a 64-byte boundary.
std::string paddedNpyImage(int major, const std::string &dict,
                           const std::string &data);

} // namespace zeroc_rt::test

/// Asserts that a status expression is OK, printing its message otherwise.
#define ZEROC_RT_ASSERT_OK(expr)                                               \
  do {                                                                         \
    ::zeroc_rt::test::StatusPtr assertOkStatus_(expr);                         \
    ASSERT_EQ(assertOkStatus_, nullptr)                                        \
        << zeroc_rt_status_message(assertOkStatus_.get());                     \
  } while (0)

#define ZEROC_RT_EXPECT_OK(expr)                                               \
  do {                                                                         \
    ::zeroc_rt::test::StatusPtr expectOkStatus_(expr);                         \
    EXPECT_EQ(expectOkStatus_, nullptr)                                        \
        << zeroc_rt_status_message(expectOkStatus_.get());                     \
  } while (0)

/// Expects `expr` to fail with `code` and a message containing `needle`.
#define ZEROC_RT_EXPECT_ERROR(expr, code, needle)                              \
  do {                                                                         \
    ::zeroc_rt::test::StatusPtr expectErrStatus_(expr);                        \
    EXPECT_EQ(zeroc_rt_status_code(expectErrStatus_.get()), (code))            \
        << zeroc_rt_status_message(expectErrStatus_.get());                    \
    EXPECT_NE(std::string(zeroc_rt_status_message(expectErrStatus_.get()))     \
                  .find(needle),                                               \
              std::string::npos)                                               \
        << "message '" << zeroc_rt_status_message(expectErrStatus_.get())      \
        << "' lacks '" << (needle) << "'";                                     \
  } while (0)

#endif // ZEROC_RT_TESTS_TEST_SUPPORT_H
