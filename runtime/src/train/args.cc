//===- args.cc - Command line of the training executable --------*- C++ -*-===//
//
//   train --data DIR --steps N [--log-jsonl FILE] [--save-params DIR]
//         [--max-skipped-steps N] [--denormals flush|keep] [--trace DIR]
//         [--comm nccl|mpi] [--save-dir DIR [--save-interval N]]
//         [--load-dir DIR [--load-tag TAG]] [--collective-timeout S]
//         [--bind-core-list CPUS] [--quiet]
//
// --collective-timeout S (default 1800, DeepSpeed's; 0: none) ends a rank
// whose collective has blocked for S seconds (a peer stopped responding),
// naming the collective and the ranks on its node that stopped
// (train/watchdog.h).
//
// --bind-core-list CPUS (DeepSpeed's --bind_core_list, "0-15,32-47": Linux's
// CPU numbers) binds each of a node's ranks, with all its threads, to an
// equal share of CPUS in local-rank order (train/bind_cores.cc).
//
// --save-dir DIR writes a checkpoint (docs/Checkpoints.md) every
// --save-interval steps (0, the default: none in between) and after the last
// step, as DIR/global_step<N>/, and points DIR/latest at it. --load-dir DIR
// resumes from DIR/<--load-tag> (default: the tag DIR/latest names);
// --steps stays the total count, so a run resumed at step k runs steps
// k+1..N.
//
// --max-skipped-steps N (default 50, 0: no limit) ends the run with an error
// once N consecutive steps were skipped for an fp16 gradient overflow (no
// optimizer step taken); a run whose every step was skipped fails too.
// --denormals flush (the default) sets flush-to-zero and denormals-are-zero
// on the compute thread, as GPUs and torch.set_flush_denormal(True) do;
// keep leaves IEEE gradual underflow. --comm picks the backend of a CUDA
// program's collectives (nccl, its default, or mpi: staged through host
// memory, for several ranks on one GPU); a CPU program's are MPI's.
//
// Flags take their value as the next argument or after '='. A repeated flag
// keeps its last value. Every error is one line that ends with the usage.
//
//===----------------------------------------------------------------------===//

#include "train/train_internal.h"

#include "status_internal.h"
#include "zeroc_rt/cpu_list.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace zeroc_rt::train {
namespace {

const char *baseName(const char *path) {
  if (!path || !*path)
    return "train";
  const char *slash = std::strrchr(path, '/');
  return slash && slash[1] ? slash + 1 : path;
}

/// The largest --steps / --max-skipped-steps: 18 decimal digits.
constexpr int64_t kMaxSteps = 999999999999999999;

bool parseSteps(const std::string &text, int64_t &out) {
  if (text.empty() || text.size() > 18)
    return false;
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return false;
    value = value * 10 + (c - '0');
  }
  out = value;
  return true;
}

} // namespace

std::string usageText(const char *argv0) {
  return format("usage: %s --data DIR --steps N [--log-jsonl FILE] "
                "[--save-params DIR] [--max-skipped-steps N (default %lld, 0: "
                "no limit)] [--denormals flush|keep (default flush)] "
                "[--trace DIR] [--comm nccl|mpi] [--save-dir DIR "
                "[--save-interval N]] [--load-dir DIR [--load-tag TAG]] "
                "[--collective-timeout S (default %g, 0: none)] "
                "[--bind-core-list CPUS (e.g. 0-15,32-47)] [--quiet]",
                baseName(argv0), static_cast<long long>(kDefaultMaxSkippedSteps),
                kDefaultCollectiveTimeoutS);
}

zeroc_rt_status_t parseArgs(int argc, char **argv, Args &args) {
  const char *argv0 = argc > 0 && argv ? argv[0] : nullptr;
  std::string usage = usageText(argv0);
  auto fail = [&](const std::string &what) {
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s; %s", what.c_str(),
                          usage.c_str());
  };
  bool haveData = false, haveSteps = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i] ? argv[i] : "";
    if (arg == "--help" || arg == "-h") {
      args.help = true;
      return nullptr;
    }
    if (arg == "--quiet" || arg == "-q") {
      args.quiet = true;
      continue;
    }
    std::string flag = arg, value;
    bool inlineValue = false;
    size_t eq = arg.find('=');
    if (arg.compare(0, 2, "--") == 0 && eq != std::string::npos) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      inlineValue = true;
    }
    if (flag != "--data" && flag != "--steps" && flag != "--log-jsonl" && flag != "--save-params" &&
        flag != "--max-skipped-steps" && flag != "--denormals" && flag != "--trace" &&
        flag != "--comm" && flag != "--save-dir" && flag != "--save-interval" &&
        flag != "--load-dir" && flag != "--load-tag" && flag != "--collective-timeout" &&
        flag != "--bind-core-list") {
      if (flag == "--quiet")
        return fail("--quiet takes no value");
      return fail(format("unknown argument '%s'", arg.c_str()));
    }
    if (!inlineValue) {
      if (i + 1 >= argc || !argv[i + 1])
        return fail(format("%s needs a value", flag.c_str()));
      value = argv[++i];
    }
    if (value.empty())
      return fail(format("%s needs a non-empty value", flag.c_str()));
    if (flag == "--data") {
      args.data = value;
      haveData = true;
    } else if (flag == "--steps") {
      if (!parseSteps(value, args.steps))
        return fail(format("--steps must be a non-negative integer of at most "
                           "%lld, got '%s'",
                           static_cast<long long>(kMaxSteps), value.c_str()));
      haveSteps = true;
    } else if (flag == "--max-skipped-steps") {
      if (!parseSteps(value, args.maxSkippedSteps))
        return fail(format("--max-skipped-steps must be a non-negative integer "
                           "of at most %lld (0: no limit), got '%s'",
                           static_cast<long long>(kMaxSteps), value.c_str()));
    } else if (flag == "--denormals") {
      if (value != "flush" && value != "keep")
        return fail(format("--denormals must be 'flush' or 'keep', got '%s'",
                           value.c_str()));
      args.flushDenormals = value == "flush";
    } else if (flag == "--trace") {
      args.traceDir = value;
    } else if (flag == "--comm") {
      if (value != "nccl" && value != "mpi")
        return fail(format("--comm must be 'nccl' or 'mpi', got '%s'",
                           value.c_str()));
      args.comm = value;
    } else if (flag == "--save-dir") {
      args.saveDir = value;
    } else if (flag == "--save-interval") {
      if (!parseSteps(value, args.saveInterval))
        return fail(format("--save-interval must be a non-negative integer of "
                           "at most %lld (0: save after the last step only), "
                           "got '%s'",
                           static_cast<long long>(kMaxSteps), value.c_str()));
    } else if (flag == "--collective-timeout") {
      char *end = nullptr;
      errno = 0;
      const double v = std::strtod(value.c_str(), &end);
      if (errno || *end || !(v >= 0) || v > 1e9)
        return fail(format("--collective-timeout must be a number of seconds "
                           "from 0 (none) to 1e9, got '%s'",
                           value.c_str()));
      args.collectiveTimeout = v;
    } else if (flag == "--bind-core-list") {
      std::string why;
      if (!parseCpuList(value, args.bindCores, why))
        return fail("--bind-core-list: " + why);
    } else if (flag == "--load-dir") {
      args.loadDir = value;
    } else if (flag == "--load-tag") {
      args.loadTag = value;
    } else if (flag == "--log-jsonl") {
      args.logJsonl = value;
    } else {
      args.saveParams = value;
    }
  }
  if (!haveData)
    return fail("missing --data DIR (the directory with one <input>.npy per "
                "model input)");
  if (!haveSteps)
    return fail("missing --steps N (the number of optimizer steps)");
  if (args.saveInterval > 0 && args.saveDir.empty())
    return fail("--save-interval needs --save-dir DIR");
  if (!args.loadTag.empty() && args.loadDir.empty())
    return fail("--load-tag needs --load-dir DIR");
  return nullptr;
}

} // namespace zeroc_rt::train
