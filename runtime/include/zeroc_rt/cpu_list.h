//===- zeroc_rt/cpu_list.h - DeepSpeed's --bind_core_list ------*- C++ -*-===//
//
// A list of CPUs as DeepSpeed's launcher takes it ("0-3,8,10-11": Linux's
// CPU numbers, as numactl -C and /proc/cpuinfo number them) and the share
// of it each rank on a node binds to. zeroc launch checks the list and
// derives the threads per rank from it; the trainer binds to its share
// (train --bind-core-list): both through these header-only definitions,
// so that they read the list alike (docs/Launch.md).
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_CPU_LIST_H
#define ZEROC_RT_CPU_LIST_H

#include <string>
#include <vector>

namespace zeroc_rt {

/// The largest CPU number a list may name (Linux's NR_CPUS is at most 8192).
inline constexpr int kMaxCpuNumber = 65535;

/// Parses `text`: comma-separated CPU numbers and ranges A-B (A <= B), in
/// ascending order without overlaps, as DeepSpeed's parse_range_list
/// requires (blanks around them allowed, as its int() allows them). False, with `error` (what is
/// wrong, without the flag's name), otherwise.
inline bool parseCpuList(const std::string &text, std::vector<int> &cpus, std::string &error) {
  cpus.clear();
  auto number = [](const std::string &s, int &out) {
    if (s.empty() || s.size() > 5)
      return false;
    out = 0;
    for (char c : s) {
      if (c < '0' || c > '9')
        return false;
      out = out * 10 + (c - '0');
    }
    return out <= kMaxCpuNumber;
  };
  // An item as an error quotes it: printable, at most 40 characters.
  auto shown = [](const std::string &item) {
    std::string out;
    for (char c : item.substr(0, 40))
      out += c >= ' ' && c <= '~' ? c : '?';
    return out + (item.size() > 40 ? "..." : "");
  };
  size_t at = 0;
  while (true) {
    size_t comma = text.find(',', at);
    std::string item = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    // Blanks around an item or a range's ends, as Python's int() skips them.
    auto trim = [](std::string t) {
      const char *blank = " \t\n\r\v\f";
      const size_t b = t.find_first_not_of(blank), e = t.find_last_not_of(blank);
      return b == std::string::npos ? std::string() : t.substr(b, e - b + 1);
    };
    item = trim(item);
    size_t dash = item.find('-');
    int first = 0, last = 0;
    bool ok = dash == std::string::npos ? number(item, first) && number(item, last)
                                        : number(trim(item.substr(0, dash)), first) &&
                                              number(trim(item.substr(dash + 1)), last);
    if (!ok) {
      error = "'" + shown(item) + "' is not a CPU number (0 to " + std::to_string(kMaxCpuNumber) +
              ") or a range of them such as 0-3; the list reads like 0-3,8,10-11";
      return false;
    }
    if (first > last) {
      error = "the range '" + shown(item) + "' is descending; write it as " + std::to_string(last) +
              "-" + std::to_string(first);
      return false;
    }
    if (!cpus.empty() && first <= cpus.back()) {
      error = "'" + shown(item) +
              "' is not above the CPUs before it; list them in ascending order, "
              "each once";
      return false;
    }
    for (int c = first; c <= last; ++c)
      cpus.push_back(c);
    if (comma == std::string::npos)
      return true;
    at = comma + 1;
  }
}

/// The CPUs local rank `localRank` of `localRanks` binds to: as DeepSpeed's
/// get_numactl_cmd splits them, size / localRanks each, in order (the
/// remainder unused). Empty when there are fewer CPUs than ranks.
inline std::vector<int> cpusOfLocalRank(const std::vector<int> &cpus, int localRank,
                                        int localRanks) {
  if (localRanks < 1 || localRank < 0 || localRank >= localRanks)
    return {};
  const size_t each = cpus.size() / static_cast<size_t>(localRanks);
  const size_t first = each * static_cast<size_t>(localRank);
  return std::vector<int>(cpus.begin() + static_cast<long>(first),
                          cpus.begin() + static_cast<long>(first + each));
}

/// `cpus` (ascending) written back as a list: "0-3,8".
inline std::string formatCpuList(const std::vector<int> &cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1)
      ++j;
    out += (out.empty() ? "" : ",") + std::to_string(cpus[i]);
    if (j > i)
      out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

} // namespace zeroc_rt

#endif // ZEROC_RT_CPU_LIST_H
