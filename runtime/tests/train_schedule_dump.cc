//===- train_schedule_dump.cc - Print the engine's schedule tables -------===//
//
// Reads case lines on stdin and prints what the engine computes, for
// lr_schedule_table.py and loss_scaler_table.py to compare with
// tools/reference/ds_schedules.py:
//
//   lr NAME type=T base_lr=X steps=N [field=value ...]
//     -> "lr NAME t lr momentum" for t = 0..N-1 (zeroc_rt_lr_at; %.17g,
//        "nan" for no momentum)
//   scaler NAME [field=value ...] seq=0110...
//     -> per flag i: "scaler NAME i scale_used overflow skipped ok|error
//        LOG" (LOG: the log line, "-" for none), stopping at an error
//   repr NAME X ...
//     -> "repr NAME pyFloat(X)" per value
//
// Field names are those of zeroc_rt_lr_schedule_t and
// zeroc_rt_loss_scaler_config_t. Exit code 2 on malformed input.
//
//===----------------------------------------------------------------------===//

#include "train/loss_scaler.h"
#include "train/lr_schedule.h"
#include "train/monitor.h"

#include "zeroc_rt/zeroc_rt.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

[[noreturn]] void die(const std::string &what) {
  std::fprintf(stderr, "train_schedule_dump: %s\n", what.c_str());
  std::exit(2);
}

double number(const std::string &text) {
  char *end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end)
    die("not a number: '" + text + "'");
  return v;
}

int64_t integer(const std::string &text) {
  char *end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end)
    die("not an integer: '" + text + "'");
  return v;
}

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

void lrCase(const std::string &name, std::map<std::string, std::string> &f) {
  zeroc_rt_lr_schedule_t s = {};
  double baseLr = 0;
  int64_t steps = 0;
  for (const auto &[key, value] : f) {
    if (key == "type")
      s.type = static_cast<zeroc_rt_lr_schedule_type_t>(integer(value));
    else if (key == "base_lr")
      baseLr = number(value);
    else if (key == "steps")
      steps = integer(value);
    else if (key == "warmup_min_lr")
      s.warmup_min_lr = number(value);
    else if (key == "warmup_max_lr")
      s.warmup_max_lr = number(value);
    else if (key == "warmup_num_steps")
      s.warmup_num_steps = integer(value);
    else if (key == "warmup_type_log")
      s.warmup_type_log = static_cast<int32_t>(integer(value));
    else if (key == "total_num_steps")
      s.total_num_steps = integer(value);
    else if (key == "warmup_min_ratio")
      s.warmup_min_ratio = number(value);
    else if (key == "cos_min_ratio")
      s.cos_min_ratio = number(value);
    else if (key == "cycle_min_lr")
      s.cycle_min_lr = number(value);
    else if (key == "cycle_max_lr")
      s.cycle_max_lr = number(value);
    else if (key == "decay_lr_rate")
      s.decay_lr_rate = number(value);
    else if (key == "cycle_first_step_size")
      s.cycle_first_step_size = integer(value);
    else if (key == "cycle_second_step_size")
      s.cycle_second_step_size = integer(value);
    else if (key == "decay_step_size")
      s.decay_step_size = integer(value);
    else if (key == "cycle_momentum")
      s.cycle_momentum = static_cast<int32_t>(integer(value));
    else if (key == "cycle_min_mom")
      s.cycle_min_mom = number(value);
    else if (key == "cycle_max_mom")
      s.cycle_max_mom = number(value);
    else if (key == "decay_mom_rate")
      s.decay_mom_rate = number(value);
    else if (key == "range_min_lr")
      s.range_min_lr = number(value);
    else if (key == "range_step_rate")
      s.range_step_rate = number(value);
    else if (key == "range_step_size")
      s.range_step_size = integer(value);
    else if (key == "range_staircase")
      s.range_staircase = static_cast<int32_t>(integer(value));
    else
      die("unknown lr field '" + key + "'");
  }
  zeroc_rt_status_t bad = zeroc_rt::train::checkLrSchedule(s);
  if (bad) {
    std::string message = zeroc_rt_status_message(bad);
    zeroc_rt_status_free(bad);
    die(name + ": " + message);
  }
  for (int64_t t = 0; t < steps; ++t) {
    double mom = 0;
    double lr = zeroc_rt_lr_at(&s, baseLr, t, &mom);
    std::printf("lr %s %lld %s %s\n", name.c_str(), static_cast<long long>(t),
                num(lr).c_str(), num(mom).c_str());
  }
}

void scalerCase(const std::string &name, std::map<std::string, std::string> &f) {
  zeroc_rt_loss_scaler_config_t c = {};
  std::string seq;
  for (const auto &[key, value] : f) {
    if (key == "enabled")
      c.enabled = static_cast<int32_t>(integer(value));
    else if (key == "static_scale")
      c.static_scale = number(value);
    else if (key == "initial_scale")
      c.initial_scale = number(value);
    else if (key == "scale_window")
      c.scale_window = integer(value);
    else if (key == "hysteresis")
      c.hysteresis = static_cast<int32_t>(integer(value));
    else if (key == "consecutive_hysteresis")
      c.consecutive_hysteresis = static_cast<int32_t>(integer(value));
    else if (key == "min_scale")
      c.min_scale = number(value);
    else if (key == "scale_factor")
      c.scale_factor = number(value);
    else if (key == "seq")
      seq = value;
    else
      die("unknown scaler field '" + key + "'");
  }
  zeroc_rt_status_t bad = zeroc_rt::train::checkLossScaler(c);
  if (bad) {
    std::string message = zeroc_rt_status_message(bad);
    zeroc_rt_status_free(bad);
    die(name + ": " + message);
  }
  zeroc_rt_loss_scaler_state_t state;
  zeroc_rt_loss_scaler_init(&state, &c);
  for (size_t i = 0; i < seq.size(); ++i) {
    if (seq[i] != '0' && seq[i] != '1')
      die(name + ": seq must be 0s and 1s");
    const int overflow = seq[i] == '1';
    const double used = state.cur_scale;
    char log[256];
    zeroc_rt_status_t status =
        zeroc_rt_loss_scaler_update(&state, overflow, log, sizeof log);
    if (status) {
      // The status message without its "file:line: " prefix.
      std::string message = zeroc_rt_status_message(status);
      size_t colon = message.find(": ");
      if (colon != std::string::npos)
        message.erase(0, colon + 2);
      zeroc_rt_status_free(status);
      std::printf("scaler %s %zu %s %d %d error %s\n", name.c_str(), i,
                  num(used).c_str(), overflow, overflow, message.c_str());
      return;
    }
    std::printf("scaler %s %zu %s %d %d ok %s\n", name.c_str(), i,
                num(used).c_str(), overflow, overflow, *log ? log : "-");
  }
}

} // namespace

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string kind, name, word;
    if (!(in >> kind))
      continue;
    if (!(in >> name))
      die("a case needs a name: " + line);
    if (kind == "repr") {
      while (in >> word)
        std::printf("repr %s %s\n", name.c_str(),
                    zeroc_rt::train::pyFloat(number(word)).c_str());
      continue;
    }
    std::map<std::string, std::string> fields;
    while (in >> word) {
      size_t eq = word.find('=');
      if (eq == std::string::npos)
        die("expected field=value, got '" + word + "'");
      fields[word.substr(0, eq)] = word.substr(eq + 1);
    }
    if (kind == "lr")
      lrCase(name, fields);
    else if (kind == "scaler")
      scalerCase(name, fields);
    else
      die("unknown case kind '" + kind + "'");
  }
  return 0;
}
