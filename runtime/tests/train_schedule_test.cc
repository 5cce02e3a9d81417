//===- train_schedule_test.cc - The engine's pure schedule pieces -*- C++ -*-===//
//
// Spot checks of zeroc_rt_lr_at, the loss-scaler state machine, Python float
// formatting, JSON strings and the csv_monitor directory, independent of Python (the full
// tables against DeepSpeed's formulas are lr_schedule_table and
// loss_scaler_table).
//
//===----------------------------------------------------------------------===//

#include "train/loss_scaler.h"
#include "train/lr_schedule.h"
#include "train/monitor.h"
#include "train/train_internal.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

using zeroc_rt::train::csvDirectory;
using zeroc_rt::train::jsonString;
using zeroc_rt::train::pyFloat;

namespace {

zeroc_rt_lr_schedule_t warmup(double lo, double hi, int64_t n, bool log) {
  zeroc_rt_lr_schedule_t s = {};
  s.type = ZEROC_RT_LR_WARMUP;
  s.warmup_min_lr = lo;
  s.warmup_max_lr = hi;
  s.warmup_num_steps = n;
  s.warmup_type_log = log ? 1 : 0;
  return s;
}

TEST(LrSchedule, ConstantIsTheOptimizerLr) {
  zeroc_rt_lr_schedule_t s = {};
  double mom = 0;
  for (int64_t t : {0, 1, 7, 100000})
    EXPECT_EQ(zeroc_rt_lr_at(&s, 0.125, t, &mom), 0.125);
  EXPECT_TRUE(std::isnan(mom));
  EXPECT_TRUE(std::isnan(zeroc_rt_lr_at(&s, 0.125, -1, nullptr)));
  EXPECT_TRUE(std::isnan(zeroc_rt_lr_at(nullptr, 0.125, 0, nullptr)));
}

TEST(LrSchedule, WarmupStartsAtMinAndReachesMax) {
  zeroc_rt_lr_schedule_t log = warmup(0.01, 0.11, 10, true);
  // t = 0: the scheduler's initial lr; t = 1: gamma = ln(1)/ln(10) = 0.
  EXPECT_EQ(zeroc_rt_lr_at(&log, 9.0, 0, nullptr), 0.01);
  EXPECT_EQ(zeroc_rt_lr_at(&log, 9.0, 1, nullptr), 0.01);
  EXPECT_DOUBLE_EQ(zeroc_rt_lr_at(&log, 9.0, 2, nullptr),
                   0.01 + 0.1 * std::log(2.0) / std::log(10.0));
  EXPECT_DOUBLE_EQ(zeroc_rt_lr_at(&log, 9.0, 10, nullptr),
                   0.01 + 0.1 * std::log(10.0) / std::log(10.0));
  EXPECT_EQ(zeroc_rt_lr_at(&log, 9.0, 11, nullptr), 0.01 + 0.1 * 1.0);
  zeroc_rt_lr_schedule_t linear = warmup(0.0, 1.0, 4, false);
  const double want[] = {0.0, 0.0, 0.25, 0.5, 0.75, 1.0, 1.0};
  for (int t = 0; t < 7; ++t)
    EXPECT_EQ(zeroc_rt_lr_at(&linear, 9.0, t, nullptr), want[t]) << t;
  // warmup_num_steps below 2 is 2.
  zeroc_rt_lr_schedule_t one = warmup(0.0, 1.0, 1, false);
  EXPECT_EQ(zeroc_rt_lr_at(&one, 9.0, 2, nullptr), 0.5);
}

TEST(LrSchedule, WarmupDecayGoesLinearlyToZero) {
  zeroc_rt_lr_schedule_t s = warmup(0.0, 1.0, 2, false);
  s.type = ZEROC_RT_LR_WARMUP_DECAY;
  s.total_num_steps = 6;
  // i = t - 1: 0, 0.5 in warmup, then (6 - i) / 4.
  const double want[] = {0.0, 0.0, 0.5, 1.0, 0.75, 0.5, 0.25, 0.0, 0.0};
  for (int t = 0; t < 9; ++t)
    EXPECT_EQ(zeroc_rt_lr_at(&s, 9.0, t, nullptr), want[t]) << t;
}

TEST(LrSchedule, WarmupCosineStartsAtZeroAndScalesTheOptimizerLr) {
  zeroc_rt_lr_schedule_t s = {};
  s.type = ZEROC_RT_LR_WARMUP_COSINE;
  s.warmup_num_steps = 2;
  s.warmup_type_log = 0;
  s.total_num_steps = 4;
  s.warmup_min_ratio = 0.5;
  s.cos_min_ratio = 0.0;
  EXPECT_EQ(zeroc_rt_lr_at(&s, 2.0, 0, nullptr), 0.0); // DeepSpeed's quirk
  EXPECT_EQ(zeroc_rt_lr_at(&s, 2.0, 1, nullptr), 2.0 * 0.5);
  EXPECT_EQ(zeroc_rt_lr_at(&s, 2.0, 2, nullptr), 2.0 * 0.75);
  // i = 2: (1 + cos(pi/2))/2; i = 3: (1 + cos(pi))/2 = 0.
  EXPECT_DOUBLE_EQ(zeroc_rt_lr_at(&s, 2.0, 3, nullptr), 1.0);
  EXPECT_EQ(zeroc_rt_lr_at(&s, 2.0, 4, nullptr), 0.0);
}

TEST(LrSchedule, OneCycleMomentumStartsAtTheMinimum) {
  zeroc_rt_lr_schedule_t s = {};
  s.type = ZEROC_RT_LR_ONE_CYCLE;
  s.cycle_min_lr = 0.1;
  s.cycle_max_lr = 0.5;
  s.cycle_first_step_size = 2;
  s.cycle_second_step_size = 2;
  s.cycle_momentum = 1;
  s.cycle_min_mom = 0.8;
  s.cycle_max_mom = 0.9;
  double mom = 0;
  EXPECT_EQ(zeroc_rt_lr_at(&s, 9.0, 0, &mom), 0.1);
  EXPECT_EQ(mom, 0.8);
  // b = i + 1 = 1: half-way up; b = 2: the peak; b = 4: back at the bottom.
  EXPECT_DOUBLE_EQ(zeroc_rt_lr_at(&s, 9.0, 1, &mom), 0.3);
  EXPECT_DOUBLE_EQ(mom, 0.85);
  EXPECT_DOUBLE_EQ(zeroc_rt_lr_at(&s, 9.0, 2, &mom), 0.5);
  EXPECT_DOUBLE_EQ(mom, 0.8);
  EXPECT_DOUBLE_EQ(zeroc_rt_lr_at(&s, 9.0, 4, &mom), 0.1);
  EXPECT_DOUBLE_EQ(mom, 0.9);
  // After the cycle without decay: cycle_min_lr and cycle_max_mom.
  EXPECT_EQ(zeroc_rt_lr_at(&s, 9.0, 50, &mom), 0.1);
  EXPECT_EQ(mom, 0.9);
  s.cycle_momentum = 0;
  zeroc_rt_lr_at(&s, 9.0, 1, &mom);
  EXPECT_TRUE(std::isnan(mom));
}

zeroc_rt_loss_scaler_state_t scaler(double init, int hysteresis,
                                    int64_t window = 1000, double min = 1.0) {
  zeroc_rt_loss_scaler_config_t c = {};
  c.enabled = 1;
  c.initial_scale = init;
  c.hysteresis = hysteresis;
  c.scale_window = window;
  c.min_scale = min;
  zeroc_rt_loss_scaler_state_t s;
  zeroc_rt_loss_scaler_init(&s, &c);
  return s;
}

std::string update(zeroc_rt_loss_scaler_state_t &s, bool overflow) {
  char log[256];
  zeroc_rt_status_t status = zeroc_rt_loss_scaler_update(&s, overflow, log, sizeof log);
  if (status) {
    std::string message = std::string("error: ") + zeroc_rt_status_message(status);
    zeroc_rt_status_free(status);
    return message;
  }
  return log;
}

TEST(LossScaler, DeepSpeedOverflowLines) {
  zeroc_rt_loss_scaler_state_t s = scaler(65536, 2);
  EXPECT_EQ(update(s, true), "[deepspeed] OVERFLOW! Rank 0 Skipping step. "
                             "Attempted loss scale: 65536, but hysteresis is 2. "
                             "Reducing hysteresis to 1");
  EXPECT_EQ(s.cur_scale, 65536);
  EXPECT_EQ(update(s, true), "[deepspeed] OVERFLOW! Rank 0 Skipping step. "
                             "Attempted loss scale: 65536, reducing to 32768");
  EXPECT_EQ(s.cur_scale, 32768);
  EXPECT_EQ(update(s, false), "");
  EXPECT_EQ(s.last_overflow_iter, 1);
  EXPECT_EQ(s.cur_iter, 3);
  zeroc_rt_loss_scaler_state_t big = scaler(4294967296.0, 1);
  EXPECT_EQ(update(big, true), "[deepspeed] OVERFLOW! Rank 0 Skipping step. "
                               "Attempted loss scale: 4294967296, reducing to "
                               "2147483648");
}

TEST(LossScaler, DoublesAfterScaleWindowCleanSteps) {
  zeroc_rt_loss_scaler_state_t s = scaler(8, 1, 3);
  std::vector<double> scales;
  for (int i = 0; i < 7; ++i) {
    scales.push_back(s.cur_scale);
    EXPECT_EQ(update(s, false), "");
  }
  // DeepSpeed >= 0.17.1: stable = cur_iter - last_overflow_iter - 1 is a
  // positive multiple of 3 at cur_iter 3 and 6.
  EXPECT_EQ(scales, (std::vector<double>{8, 8, 8, 8, 16, 16, 16}));
}

TEST(LossScaler, MinimumScaleIsAnError) {
  zeroc_rt_loss_scaler_state_t s = scaler(2, 1);
  EXPECT_EQ(update(s, true), "[deepspeed] OVERFLOW! Rank 0 Skipping step. "
                             "Attempted loss scale: 2, reducing to 1");
  std::string error = update(s, true);
  EXPECT_NE(error.find("Current loss scale already at minimum - cannot "
                       "decrease scale anymore. Exiting run."),
            std::string::npos)
      << error;
  EXPECT_EQ(s.cur_scale, 1);
  EXPECT_EQ(s.cur_iter, 1); // the failing call changes nothing
}

TEST(LossScaler, FractionalScalesPrintAsPythonInt) {
  zeroc_rt_loss_scaler_state_t s = scaler(1, 1, 1000, 0.25);
  EXPECT_EQ(update(s, true), "[deepspeed] OVERFLOW! Rank 0 Skipping step. "
                             "Attempted loss scale: 1, reducing to 0");
  EXPECT_EQ(update(s, true), "[deepspeed] OVERFLOW! Rank 0 Skipping step. "
                             "Attempted loss scale: 0, reducing to 0");
  EXPECT_EQ(s.cur_scale, 0.25);
}

TEST(LossScaler, ConsecutiveHysteresisLogsEveryCleanStep) {
  zeroc_rt_loss_scaler_config_t c = {};
  c.enabled = 1;
  c.initial_scale = 16;
  c.hysteresis = 3;
  c.scale_window = 100;
  c.min_scale = 1;
  c.consecutive_hysteresis = 1;
  zeroc_rt_loss_scaler_state_t s;
  zeroc_rt_loss_scaler_init(&s, &c);
  EXPECT_EQ(update(s, true), "[deepspeed] OVERFLOW! Rank 0 Skipping step. "
                             "Attempted loss scale: 16, but hysteresis is 3. "
                             "Reducing hysteresis to 2");
  EXPECT_EQ(update(s, false),
            "Consecutive hysteresis is enabled. Restoring hysteresis to 3");
  EXPECT_EQ(s.cur_hysteresis, 3);
}

TEST(LossScaler, StaticAndDisabledNeverChange) {
  zeroc_rt_loss_scaler_config_t c = {};
  zeroc_rt_loss_scaler_state_t s;
  zeroc_rt_loss_scaler_init(&s, &c);
  EXPECT_EQ(s.cur_scale, 1.0);
  EXPECT_EQ(update(s, false), "");
  c.enabled = 1;
  c.static_scale = 1000;
  zeroc_rt_loss_scaler_init(&s, &c);
  // A static scale's overflow logs the OVERFLOW line with the unchanged
  // scale (DeepSpeed's ZeRO optimizers are silent there; a run whose every
  // step overflows should not be).
  const std::string line = "[deepspeed] OVERFLOW! Rank 0 Skipping step. "
                           "Attempted loss scale: 1000, reducing to 1000";
  EXPECT_EQ(update(s, true), line);
  EXPECT_EQ(update(s, false), "");
  EXPECT_EQ(update(s, true), line);
  EXPECT_EQ(s.cur_scale, 1000);
  // A short buffer truncates the line.
  zeroc_rt_loss_scaler_state_t d = scaler(65536, 1);
  char small[11];
  zeroc_rt_status_t status = zeroc_rt_loss_scaler_update(&d, 1, small, sizeof small);
  EXPECT_EQ(status, nullptr);
  EXPECT_EQ(std::string(small), "[deepspeed");
  status = zeroc_rt_loss_scaler_update(nullptr, 0, nullptr, 0);
  EXPECT_EQ(zeroc_rt_status_code(status), ZEROC_RT_INVALID_ARGUMENT);
  zeroc_rt_status_free(status);
}

TEST(PyFloat, MatchesPythonRepr) {
  const std::pair<double, const char *> cases[] = {
      {1.0, "1.0"},
      {0.001, "0.001"},
      {1e-05, "1e-05"},
      {0.0001, "0.0001"},
      {65536.0, "65536.0"},
      {4294967296.0, "4294967296.0"},
      {1e16, "1e+16"},
      {1234567890123456.0, "1234567890123456.0"},
      {0.1 + 0.2, "0.30000000000000004"},
      {-2.5, "-2.5"},
      {0.0, "0.0"},
      {-0.0, "-0.0"},
      {5e-324, "5e-324"},
      {1.7976931348623157e308, "1.7976931348623157e+308"},
      {0.99, "0.99"},
      {123.456, "123.456"},
      {INFINITY, "inf"},
      {-INFINITY, "-inf"},
      {NAN, "nan"},
  };
  for (const auto &[value, want] : cases)
    EXPECT_EQ(pyFloat(value), want);
}

TEST(CsvMonitor, DirectoryIsOutputPathJoinedWithJobName) {
  zeroc_rt_monitor_config_t m = {};
  EXPECT_EQ(csvDirectory(m), "DeepSpeedJobName");
  m.csv_output_path = "/tmp/out";
  EXPECT_EQ(csvDirectory(m), "/tmp/out/DeepSpeedJobName");
  m.csv_output_path = "/tmp/out/";
  m.csv_job_name = "run1";
  EXPECT_EQ(csvDirectory(m), "/tmp/out/run1");
  m.csv_job_name = "/abs/job";
  EXPECT_EQ(csvDirectory(m), "/abs/job");
  m.csv_output_path = "";
  m.csv_job_name = "";
  EXPECT_EQ(csvDirectory(m), "DeepSpeedJobName");
}

// params.json and the JSONL log stay valid JSON whatever bytes a name holds:
// valid UTF-8 passes through, each other byte becomes \u00XX.
TEST(JsonString, EscapesControlCharactersAndInvalidUtf8) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"fc1.weight", "\"fc1.weight\""},
      {"a\"b\\c", "\"a\\\"b\\\\c\""},
      {"\n\r\t\x01\x1f\x7f", "\"\\n\\r\\t\\u0001\\u001f\x7f\""},
      {"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", // é € U+1F600
       "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\""},
      {"w\xff", "\"w\\u00ff\""},
      {"\xc3", "\"\\u00c3\""},                 // truncated sequence
      {"\xc3(", "\"\\u00c3(\""},               // bad continuation
      {"\xc0\xaf", "\"\\u00c0\\u00af\""},      // overlong '/'
      {"\xed\xa0\x80", "\"\\u00ed\\u00a0\\u0080\""}, // a surrogate
      {"\xf4\x90\x80\x80", "\"\\u00f4\\u0090\\u0080\\u0080\""}, // > U+10FFFF
      {"\x80\xc3\xa9", "\"\\u0080\xc3\xa9\""},
      {std::string("a\0b", 3), "\"a\\u0000b\""},
  };
  for (const auto &[text, want] : cases)
    EXPECT_EQ(jsonString(text), want);
}

} // namespace

TEST(OpenBlasCore, OnlyAFallbackOnACapableCpuIsReplaced) {
  using zeroc_rt::train::betterOpenBlasCore;
  using zeroc_rt::train::CpuFeatures;
  CpuFeatures avx512{true, true, true}, avx2{true, true, false}, sse{};
  EXPECT_STREQ(betterOpenBlasCore("Prescott", avx512), "SkylakeX");
  EXPECT_STREQ(betterOpenBlasCore("Prescott", avx2), "Haswell");
  EXPECT_STREQ(betterOpenBlasCore("Core2", avx2), "Haswell");
  EXPECT_STREQ(betterOpenBlasCore("Sandybridge", avx512), "SkylakeX");
  EXPECT_STREQ(betterOpenBlasCore("", avx2), "Haswell");
  // OpenBLAS's own choice stands where it knows the CPU, or where nothing
  // better runs on it.
  EXPECT_EQ(betterOpenBlasCore("Cooperlake", avx512), nullptr);
  EXPECT_EQ(betterOpenBlasCore("SkylakeX", avx512), nullptr);
  EXPECT_EQ(betterOpenBlasCore("Haswell", avx512), nullptr);
  EXPECT_EQ(betterOpenBlasCore("Zen", avx2), nullptr);
  EXPECT_EQ(betterOpenBlasCore("Prescott", sse), nullptr);
  EXPECT_EQ(betterOpenBlasCore("Prescott", CpuFeatures{true, false, false}), nullptr);
}
