//===- timeline_test.cc - --trace's GPU timeline -------------*- C++ -*-===//
//
// gpu_timeline.cc's marks, on the emulation and on a GPU: an op runs from
// its mark to the next compute-stream mark, a wait marked -1 is no op's
// time, a collective runs between its begin and end marks on the
// communication stream, and the spans are on the host's clock (the host
// sleeps between the marks of an idle GPU, so each span lasts as long as
// the sleep, and the collective falls inside the op that issued it).
//
//===----------------------------------------------------------------------===//

#include "gpu.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace zc = zeroc_rt::cuda;
using Clock = std::chrono::steady_clock;
using zeroc_rt::train::DeviceSpan;

std::string statusText(zeroc_rt_status_t s) {
  std::string text = zeroc_rt_status_message(s);
  zeroc_rt_status_free(s);
  return text;
}

double ms(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

void sleepMs(int n) { std::this_thread::sleep_for(std::chrono::milliseconds(n)); }

TEST(GpuTimeline, OpsWaitsAndCollectives) {
  static const char *const names[] = {"op a", "op b"};
  zc::setOpNames(names, 2);
  if (zeroc_rt_status_t s = zc::gpuTimelineStart())
    FAIL() << statusText(s);
  const Clock::time_point start = Clock::now();
  zc::gpuTimelineOp(0);
  sleepMs(20);
  // The communication stream runs its marks as they come, as an idle GPU
  // stream does (the emulation holds them until something waits).
  auto collectiveMark = [](bool begin) {
    zc::gpuTimelineCollective("all_gather", begin);
    zeroc_rt_status_free(zc::gpuStreamSynchronize(zc::commStream(), "a mark"));
  };
  collectiveMark(true);
  sleepMs(10);
  collectiveMark(false);
  zc::gpuTimelineOp(-1); // a wait: no op's time
  sleepMs(10);
  zc::gpuTimelineOp(1);
  sleepMs(10);
  zc::gpuTimelineOp(-1);
  const Clock::time_point end = Clock::now();
  std::vector<DeviceSpan> spans;
  if (zeroc_rt_status_t s = zc::gpuTimelineTake(spans))
    FAIL() << statusText(s);
  ASSERT_EQ(spans.size(), 3u);
  auto named = [&](const char *name) -> const DeviceSpan & {
    for (const DeviceSpan &s : spans)
      if (std::string(s.name) == name)
        return s;
    ADD_FAILURE() << "no span " << name;
    return spans[0];
  };
  const DeviceSpan &a = named("op a"), &gather = named("all_gather"), &b = named("op b");
  EXPECT_EQ(a.stream, 0);
  EXPECT_EQ(gather.stream, 1);
  EXPECT_EQ(b.stream, 0);
  // Durations as slept (the sleeps may overshoot), in the host's window.
  const double slack = 50.0; // a loaded machine may pause the host
  EXPECT_GE(ms(a.begin, a.end), 30.0 - 0.5);
  EXPECT_GE(ms(gather.begin, gather.end), 10.0 - 0.5);
  EXPECT_GE(ms(b.begin, b.end), 10.0 - 0.5);
  EXPECT_GE(ms(a.end, b.begin), 10.0 - 0.5) << "the wait counted as an op's time";
  EXPECT_GE(ms(start, a.begin), -0.5);
  EXPECT_GE(ms(b.end, end), -0.5);
  EXPECT_LE(ms(start, a.begin), slack);
  // The collective within the op that issued it.
  EXPECT_GE(ms(a.begin, gather.begin), 20.0 - 0.5);
  EXPECT_LE(ms(a.end, gather.end), 0.5);
  // Taken marks are gone.
  spans.clear();
  if (zeroc_rt_status_t s = zc::gpuTimelineTake(spans))
    FAIL() << statusText(s);
  EXPECT_TRUE(spans.empty());
}

} // namespace
