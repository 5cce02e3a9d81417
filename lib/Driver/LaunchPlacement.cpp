//===- LaunchPlacement.cpp - hostfile, --include/--exclude, --num_* -------===//
//
// DeepSpeed's launcher/runner.py rules (_parse_hostfile,
// parse_resource_filter, the --num_nodes/--num_gpus trimming in main), with
// one error line wherever DeepSpeed raises, and a few more where it would
// go on with a surprise (docs/Launch.md lists them).
//
//===----------------------------------------------------------------------===//

#include "zeroc/Driver/Launch.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

namespace zeroc::launch {
namespace {

/// A piece of untrusted text for a message: printable, one line, short.
std::string shown(llvm::StringRef text) {
  constexpr size_t kShown = 60;
  std::string out;
  for (unsigned char c : text.take_front(kShown))
    out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  if (text.size() > kShown)
    out += "...";
  return out;
}

/// Host names travel in mpirun's "--host h1:2,h2:1" list, so ',' ':' and
/// spaces cannot be in them; a leading '-' would read as an option.
bool validHostName(llvm::StringRef host) {
  if (host.empty() || host.size() > kMaxHostName || host[0] == '-' ||
      host[0] == '.')
    return false;
  return llvm::all_of(host, [](unsigned char c) {
    return llvm::isAlnum(c) || c == '.' || c == '-' || c == '_';
  });
}

/// A decimal count in [lo, hi] (digits only, no sign, no overflow).
bool parseCount(llvm::StringRef text, int lo, int hi, int &out) {
  if (text.empty() || text.size() > 9 || !llvm::all_of(text, llvm::isDigit))
    return false;
  int v = 0;
  for (char c : text)
    v = v * 10 + (c - '0');
  if (v < lo || v > hi)
    return false;
  out = v;
  return true;
}

std::string hostNames(const Placement &pool) {
  std::string out;
  for (size_t i = 0; i < pool.size() && i < 8; ++i)
    out += (i ? ", " : "") + pool[i].host;
  if (pool.size() > 8)
    out += ", ...";
  return out;
}

/// CUDA_VISIBLE_DEVICES's entries as GPU numbers; false when one is not a
/// number (a GPU UUID or MIG name) or is listed twice.
bool parseDeviceNumbers(llvm::StringRef text, std::vector<int> &out) {
  llvm::SmallVector<llvm::StringRef> entries;
  text.split(entries, ',');
  out.clear();
  for (llvm::StringRef e : entries) {
    int n = 0;
    if (!parseCount(e.trim(), 0, kMaxSlots - 1, n) || llvm::is_contained(out, n))
      return false;
    out.push_back(n);
  }
  return true;
}

const HostSlots *findHost(const Placement &pool, llvm::StringRef host) {
  for (const HostSlots &h : pool)
    if (h.host == host)
      return &h;
  return nullptr;
}

} // namespace

bool parseHostfile(llvm::StringRef text, llvm::StringRef name, Placement &pool,
                   std::string &error) {
  pool.clear();
  int lineNo = 0;
  auto fail = [&](const std::string &msg) {
    error = llvm::formatv("{0}:{1}: {2}", name, lineNo, msg).str();
    pool.clear();
    return false;
  };
  while (!text.empty()) {
    ++lineNo;
    auto [raw, rest] = text.split('\n');
    text = rest;
    if (raw.size() > kMaxLineBytes)
      return fail(llvm::formatv("the line is longer than {0} bytes (a "
                                "hostfile line is 'HOST slots=N')",
                                kMaxLineBytes));
    llvm::StringRef line = raw.trim();
    if (line.empty() || line.starts_with("#"))
      continue;
    // HOST, blanks, slots=N, then only blanks or a comment.
    size_t hostEnd = line.find_first_of(" \t\r\v\f");
    llvm::StringRef host = line.take_front(hostEnd);
    llvm::StringRef after =
        hostEnd == llvm::StringRef::npos ? "" : line.drop_front(hostEnd).ltrim();
    llvm::StringRef slotsText;
    if (after.consume_front("slots=")) {
      size_t end = after.find_first_of(" \t\r\v\f#");
      slotsText = after.take_front(end);
      llvm::StringRef tail = after.drop_front(slotsText.size()).ltrim();
      if (!tail.empty() && !tail.starts_with("#"))
        slotsText = "";
    }
    if (host.empty() || slotsText.empty() ||
        !llvm::all_of(slotsText, llvm::isDigit))
      return fail("bad line '" + shown(line) +
                  "' (expected 'HOST slots=N'; '#' starts a comment)");
    if (!validHostName(host))
      return fail(llvm::formatv("host name '{0}' is not usable (letters, "
                                "digits, '.', '-' and '_', at most {1} "
                                "bytes, not starting with '-' or '.')",
                                shown(host), kMaxHostName)
                      .str());
    int slots = 0;
    if (!parseCount(slotsText, 1, kMaxSlots, slots))
      return fail(llvm::formatv("host '{0}' has slots={1}; slots must be "
                                "from 1 to {2}",
                                host, shown(slotsText), kMaxSlots)
                      .str());
    if (findHost(pool, host))
      return fail("host '" + host.str() +
                  "' is listed twice (give each host one line)");
    if (pool.size() >= static_cast<size_t>(kMaxHosts))
      return fail(llvm::formatv("more than {0} hosts (zeroc launch takes at "
                                "most {0})",
                                kMaxHosts)
                      .str());
    HostSlots entry{host.str(), {}};
    for (int s = 0; s < slots; ++s)
      entry.slots.push_back(s);
    pool.push_back(std::move(entry));
  }
  if (pool.empty()) {
    error = name.str() + ": no hosts (a hostfile has one 'HOST slots=N' line "
                         "per host)";
    return false;
  }
  return true;
}

bool filterResources(const Placement &pool, llvm::StringRef spec, bool include,
                     llvm::StringRef poolName, Placement &out,
                     std::string &error) {
  const char *flag = include ? "--include" : "--exclude";
  auto fail = [&](const std::string &msg) {
    error = std::string(flag) + " '" + shown(spec) + "': " + msg;
    return false;
  };
  // The chosen (include) or removed (exclude) slots per pool host.
  std::vector<std::vector<bool>> marked(pool.size());
  for (size_t i = 0; i < pool.size(); ++i)
    marked[i].assign(pool[i].slots.size(), false);
  llvm::SmallVector<llvm::StringRef> nodes;
  spec.split(nodes, '@');
  for (llvm::StringRef node : nodes) {
    auto [host, slotList] = node.split(':');
    bool hasSlots = node.contains(':');
    if (host.empty())
      return fail("empty host name (the format is HOST[:SLOT,...][@HOST...])");
    const HostSlots *h = findHost(pool, host);
    if (!h)
      return fail("host '" + shown(host) + "' is not in " + poolName.str() +
                  " (hosts: " + hostNames(pool) + ")");
    size_t index = h - pool.data();
    int nslots = static_cast<int>(h->slots.size());
    if (!hasSlots) {
      marked[index].assign(nslots, true);
      continue;
    }
    llvm::SmallVector<llvm::StringRef> slots;
    slotList.split(slots, ',');
    for (llvm::StringRef s : slots) {
      int slot = 0;
      if (!parseCount(s, 0, kMaxSlots, slot))
        return fail("slot '" + shown(s) + "' of host '" + host.str() +
                    "' is not a number (the format is "
                    "HOST[:SLOT,...][@HOST...])");
      if (slot >= nslots)
        return fail(llvm::formatv("host '{0}' has slots 0-{1} in {2}, not {3}",
                                  host, nslots - 1, poolName, slot)
                        .str());
      marked[index][slot] = true;
    }
  }
  out.clear();
  for (size_t i = 0; i < pool.size(); ++i) {
    HostSlots kept{pool[i].host, {}};
    for (size_t s = 0; s < pool[i].slots.size(); ++s)
      if (marked[i][s] == include)
        kept.slots.push_back(pool[i].slots[s]);
    if (!kept.slots.empty())
      out.push_back(std::move(kept));
  }
  if (out.empty())
    return fail("no slots are left to run on");
  return true;
}

bool placeRanks(const PlacementRequest &req, Placement &placement, std::string &error,
                PlacementNote *note) {
  placement.clear();
  bool filtered = !req.include.empty() || !req.exclude.empty();
  if (!req.include.empty() && !req.exclude.empty()) {
    error = "--include and --exclude are mutually exclusive (give one)";
    return false;
  }
  if (filtered && (req.numNodes >= 0 || req.numGpus >= 0)) {
    error = "--include/--exclude cannot be combined with --num_nodes or "
            "--num_gpus/--num_ranks (as in DeepSpeed): choose the slots with "
            "one or the other";
    return false;
  }
  auto say = [&](const std::string &text) {
    if (note)
      note->text = text;
  };
  // DeepSpeed's runner.py: without a hostfile, CUDA_VISIBLE_DEVICES stands
  // for --include localhost:THEM unless a flag chooses the slots; its
  // launch.py then sets each host's CUDA_VISIBLE_DEVICES to the slots.
  std::string include = req.include;
  std::vector<int> visible;
  const std::string visibleShown = "CUDA_VISIBLE_DEVICES=" + shown(req.visibleDevices);
  if (req.gpuProgram && !req.visibleDevices.empty()) {
    if (req.haveHostfile)
      say(visibleShown + " is replaced by each host's slots in " + req.hostfileName +
          " (as in DeepSpeed)");
    else if (filtered || req.numGpus >= 0 || req.numNodes > 1)
      say(visibleShown + " is ignored: " +
          (filtered ? (req.include.empty() ? "--exclude" : "--include")
                    : "--num_gpus/--num_ranks") +
          " chooses the GPUs (as in DeepSpeed; without it the ranks run on the "
          "GPUs CUDA_VISIBLE_DEVICES lists)");
    else if (!parseDeviceNumbers(req.visibleDevices, visible)) {
      error = visibleShown + " is not a list of distinct GPU numbers, and zeroc launch "
                             "chooses GPUs by number (unset it and choose them with "
                             "--include localhost:0,1,...)";
      return false;
    } else {
      include = "localhost:" + slotList(visible);
      say(visibleShown + ": the ranks run on those GPUs (as --include " + include +
          ", DeepSpeed's rule)");
      if (note) {
        note->fromVisibleDevices = true;
        note->visibleDevices = slotList(visible);
      }
      filtered = true;
    }
  }
  Placement pool;
  std::string poolName;
  if (req.haveHostfile) {
    if (!parseHostfile(req.hostfileText, req.hostfileName, pool, error))
      return false;
    poolName = req.hostfileName;
  } else {
    if (req.numNodes > 1) {
      error = llvm::formatv("--num_nodes {0} needs a --hostfile that lists "
                            "the nodes (without one, ranks run on localhost)",
                            req.numNodes);
      return false;
    }
    // Slots the flags choose among: a GPU program's are this machine's GPUs
    // (DeepSpeed's pool), at least the world size's.
    int slots = req.numGpus > 0 ? req.numGpus : req.localSlots;
    if (req.gpuProgram && filtered)
      slots = std::max(slots, req.localGpus);
    for (int v : visible)
      slots = std::max(slots, v + 1);
    HostSlots local{"localhost", {}};
    for (int s = 0; s < slots; ++s)
      local.slots.push_back(s);
    pool.push_back(std::move(local));
    poolName = "the local pool (without --hostfile only 'localhost')";
  }
  if (filtered)
    return filterResources(pool, include.empty() ? req.exclude : include, !include.empty(),
                           poolName, placement, error);
  if (req.numNodes >= 0) {
    if (req.numNodes > static_cast<int>(pool.size())) {
      error = llvm::formatv("--num_nodes {0}: {1} lists {2} host{3}",
                            req.numNodes, req.hostfileName, pool.size(),
                            pool.size() == 1 ? "" : "s");
      return false;
    }
    pool.resize(req.numNodes);
  }
  if (req.numGpus >= 0 && req.haveHostfile) {
    for (HostSlots &h : pool) {
      if (req.numGpus > static_cast<int>(h.slots.size())) {
        error = llvm::formatv("--num_gpus {0}: host '{1}' has slots={2} in {3}",
                              req.numGpus, h.host, h.slots.size(),
                              req.hostfileName);
        return false;
      }
      h.slots.resize(req.numGpus);
    }
  }
  placement = std::move(pool);
  return true;
}

int totalRanks(const Placement &placement) {
  int n = 0;
  for (const HostSlots &h : placement)
    n += static_cast<int>(h.slots.size());
  return n;
}

std::string slotList(const std::vector<int> &slots) {
  std::string out;
  for (int s : slots)
    out += (out.empty() ? "" : ",") + std::to_string(s);
  return out;
}

std::string hostList(const Placement &placement) {
  std::string out;
  for (const HostSlots &h : placement)
    out += (out.empty() ? "" : ",") + h.host + ":" +
           std::to_string(h.slots.size());
  return out;
}

} // namespace zeroc::launch
