//===- check_counter.h - Pass/fail tally for plain test drivers -*- C++ -*-===//
//
// Used by test executables that cannot be GoogleTest binaries (MPI jobs,
// fixture-driven cross-checks): failures are printed as they happen and the
// driver prints an "N passed, M failed" summary.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_TESTS_CHECK_COUNTER_H
#define ZEROC_RT_TESTS_CHECK_COUNTER_H

#include <cstdio>
#include <string>

namespace zeroc_rt::test {

class CheckCounter {
public:
  explicit CheckCounter(std::string prefix) : prefix(std::move(prefix)) {}

  /// Records one check; `detail` is printed only when it failed.
  bool check(bool ok, const std::string &what, const std::string &detail = "") {
    if (ok) {
      ++passedCount;
    } else {
      ++failedCount;
      std::fprintf(stderr, "%sFAIL: %s%s%s\n", prefix.c_str(), what.c_str(),
                   detail.empty() ? "" : ": ", detail.c_str());
    }
    return ok;
  }

  int passed() const { return passedCount; }
  int failed() const { return failedCount; }

private:
  std::string prefix;
  int passedCount = 0;
  int failedCount = 0;
};

} // namespace zeroc_rt::test

#endif // ZEROC_RT_TESTS_CHECK_COUNTER_H
