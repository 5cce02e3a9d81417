//===- LaunchRun.cpp - `zeroc launch`: flags, checks, running mpirun ------===//
//
// Every check runs before anything starts: a bad flag, hostfile or OUT is
// one "zeroc: error:" line and exit 1. mpirun is then started with an argv
// (posix_spawn, never a shell: host names and train arguments are passed
// as they are) in a private TMPDIR, and its exit status (the first failed
// rank's) is zeroc's.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Driver/DsConfig.h"
#include "zeroc/Driver/Launch.h"
#include "zeroc/Driver/OutputDir.h"

#include "zeroc_rt/cpu_list.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>

#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace zeroc::launch {
namespace {

int fail(const std::string &msg) {
  llvm::errs() << "zeroc: error: " << msg << "\n";
  return 1;
}

/// Reads at most `limit` bytes; more is an error rather than an allocation
/// the file's size decides.
bool readBounded(const std::string &path, size_t limit, std::string &text,
                 std::string &error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = "cannot open it (" + std::string(std::strerror(errno)) + ")";
    return false;
  }
  text.clear();
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      error = "cannot read it (" + std::string(std::strerror(errno)) + ")";
      ::close(fd);
      return false;
    }
    if (n == 0)
      break;
    if (text.size() + n > limit) {
      error = "is larger than " + std::to_string(limit >> 10) + " KiB";
      ::close(fd);
      return false;
    }
    text.append(buf, n);
  }
  ::close(fd);
  return true;
}

/// The physical cores this process may run on (Open MPI binds to cores,
/// not hardware threads); the CPU count where the topology is unknown.
int localCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0)
    return std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
  std::set<std::pair<std::string, std::string>> cores;
  int cpus = 0;
  bool topology = true;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set))
      continue;
    ++cpus;
    std::string dir =
        "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    std::ifstream core(dir + "core_id"), package(dir + "physical_package_id");
    std::string c, p;
    if (!(core >> c) || !(package >> p))
      topology = false;
    cores.insert({p, c});
  }
  return std::max(1, topology ? static_cast<int>(cores.size()) : cpus);
}

/// The GPUs on this machine for a program of `target`: the NVIDIA driver's
/// entries in /proc (one per GPU; no CUDA library needed), or the host
/// emulation's ZEROC_RT_CUDA_EMU_GPUS (1 when unset); 0 when unknown.
int localGpus(llvm::StringRef target) {
  if (target == "cuda-emu") {
    const char *v = std::getenv("ZEROC_RT_CUDA_EMU_GPUS");
    int n = 1;
    if (v && *v && llvm::StringRef(v).getAsInteger(10, n))
      return 0; // the program reports the bad value
    return n >= 1 && n <= 64 ? n : 0;
  }
  if (target != "cuda")
    return 0;
  std::error_code ec;
  int n = 0;
  for (llvm::sys::fs::directory_iterator it("/proc/driver/nvidia/gpus", ec), end;
       !ec && it != end && n < kMaxSlots; it.increment(ec))
    ++n;
  return n;
}

/// This process's environment, "NAME=VALUE" entries.
std::vector<std::string> environmentEntries() {
  std::vector<std::string> entries;
  for (char **e = environ; e && *e; ++e)
    entries.push_back(*e);
  return entries;
}

/// What the ranks of a job on several hosts (or on one that is not
/// localhost) get exported besides zeroc launch's own variables, as
/// DeepSpeed's runner.py exports them to its nodes: this environment's
/// NCCL*, UCX*, ... variables, then the KEY=VALUE lines of .deepspeed_env
/// (DS_ENV_FILE) in the home folder and in the current one. `notes` says
/// which files were read and what in them was left out.
bool exportsForRanks(CommandOptions &opts, std::vector<std::string> &notes, std::string &error) {
  opts.forwarded = forwardedVariables(environmentEntries());
  const char *fileName = std::getenv("DS_ENV_FILE");
  std::string name = fileName && *fileName ? fileName : ".deepspeed_env";
  std::vector<std::string> paths;
  if (llvm::sys::path::is_absolute(name)) {
    paths.push_back(name);
  } else {
    if (const char *home = std::getenv("HOME"); home && *home)
      paths.push_back(std::string(home) + "/" + name);
    paths.push_back(name);
  }
  std::set<std::pair<dev_t, ino_t>> read;
  std::vector<std::pair<std::string, std::string>> variables;
  for (const std::string &path : paths) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
        !read.insert({st.st_dev, st.st_ino}).second)
      continue;
    std::string text;
    std::vector<std::string> skipped;
    if (!readBounded(path, kMaxEnvFileBytes, text, error)) {
      error = messagePath(path) + ": " + error;
      return false;
    }
    if (!parseEnvFile(text, messagePath(path), variables, skipped, error))
      return false;
    notes.push_back("exporting the variables of " + messagePath(path) +
                    " to every rank (DeepSpeed's .deepspeed_env)" +
                    (skipped.empty() ? std::string()
                                     : "; not " + llvm::join(skipped, ", ") +
                                           ", which zeroc launch sets itself"));
  }
  // A variable of the file replaces the environment's value: both are
  // exported by name from mpirun's environment, which holds the file's.
  opts.fileVariables = std::move(variables);
  llvm::erase_if(opts.forwarded, [&](const std::string &n) {
    return llvm::any_of(opts.fileVariables, [&](const auto &v) { return v.first == n; });
  });
  return true;
}

/// mpirun on PATH, as execvp would find it; "" when there is none.
std::string findOnPath(const std::string &name) {
  const char *path = std::getenv("PATH");
  llvm::SmallVector<llvm::StringRef> dirs;
  llvm::StringRef(path ? path : "/usr/local/bin:/usr/bin:/bin").split(dirs, ':');
  for (llvm::StringRef dir : dirs) {
    std::string candidate = (dir.empty() ? "." : dir.str()) + "/" + name;
    struct stat st;
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  return "";
}

volatile sig_atomic_t childPid = 0;

/// SIGTERM/SIGHUP aimed at zeroc go on to mpirun, which ends the ranks; a
/// terminal's SIGINT reaches mpirun itself (same process group), so zeroc
/// only outlives it to clean up.
void forwardSignal(int sig) {
  if (childPid > 0 && sig != SIGINT)
    ::kill(childPid, sig);
}

struct Flags {
  bool dryRun = false;
  bool forceMulti = false; ///< --force_multi: export as to several hosts
  std::string launcher = "pdsh"; ///< DeepSpeed's default
  /// --launcher_args, split as DeepSpeed splits them.
  std::vector<std::string> launcherArgs;
  std::string hostfile, include, exclude, masterAddr;
  bool haveHostfile = false;
  int numNodes = -1, numGpus = -1, threads = 0, masterPort = 0;
  std::string numGpusFlag; ///< --num_gpus or --num_ranks, as given
  std::vector<int> bindCores; ///< --bind_core_list's CPUs
  std::string outDir;
  std::vector<std::string> trainArgs;
};

/// DeepSpeed spells its flags with '_', zeroc's other commands with '-';
/// both are accepted.
std::string normalizeFlag(llvm::StringRef arg) {
  std::string name = arg.split('=').first.str();
  for (size_t i = 2; i < name.size(); ++i)
    if (name[i] == '-')
      name[i] = '_';
  return name;
}

bool parseNumber(llvm::StringRef flag, llvm::StringRef text, int lo, int hi,
                 int &out, std::string &error) {
  long long v = 0;
  if (text.empty() || text.size() > 9 || !llvm::all_of(text, llvm::isDigit) ||
      text.getAsInteger(10, v) || v < lo || v > hi) {
    error = flag.str() + " '" + text.str() + "' is not a number from " +
            std::to_string(lo) + " to " + std::to_string(hi);
    return false;
  }
  out = static_cast<int>(v);
  return true;
}

/// Returns an exit code when parsing ends the command (help, an error).
std::optional<int> parseFlags(int argc, char **argv, llvm::StringRef usage,
                              Flags &f) {
  std::string error;
  for (int i = 0; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      llvm::outs() << usage;
      return 0;
    }
    if (arg == "--") {
      if (i + 1 >= argc)
        break;
      arg = argv[++i];
    } else if (arg.starts_with("-")) {
      std::string name = normalizeFlag(arg);
      if (name == "--dry_run") {
        f.dryRun = true;
        continue;
      }
      // DeepSpeed's flags for what zeroc launch always does: bind each rank
      // to its cores (to its share of --bind_core_list when given, which
      // DeepSpeed reads only with --bind_cores_to_rank), pass no
      // --local_rank, check no ssh.
      if (name == "--bind_cores_to_rank" || name == "--no_local_rank" || name == "--no_ssh_check")
        continue;
      if (name == "--force_multi") {
        f.forceMulti = true;
        continue;
      }
      static const char *const kValued[] = {
          "--num_gpus",         "--num_ranks", "--num_nodes",     "--hostfile",
          "--include",          "--exclude",   "--master_addr",   "--master_port",
          "--threads_per_rank", "--launcher",  "--launcher_args", "--bind_core_list"};
      if (!llvm::is_contained(kValued, name))
        return fail("launch: unknown option '" + arg.str() +
                    "' (launch options go before OUT; the arguments after "
                    "OUT go to train)");
      llvm::StringRef value;
      if (arg.contains('='))
        value = arg.split('=').second;
      else if (i + 1 < argc)
        value = argv[++i];
      else
        return fail(name + " needs a value");
      if (name == "--num_gpus" || name == "--num_ranks") {
        if (!f.numGpusFlag.empty() && f.numGpusFlag != name)
          return fail("give --num_gpus or --num_ranks, not both (they are "
                      "the same: ranks per node)");
        f.numGpusFlag = name;
        if (!parseNumber(name, value, 1, kMaxSlots, f.numGpus, error))
          return fail(error);
      } else if (name == "--num_nodes") {
        if (!parseNumber(name, value, 1, kMaxHosts, f.numNodes, error))
          return fail(error);
      } else if (name == "--threads_per_rank") {
        if (!parseNumber(name, value, 1, kMaxThreads, f.threads, error))
          return fail(error);
      } else if (name == "--master_port") {
        if (!parseNumber(name, value, 1, 65535, f.masterPort, error))
          return fail(error);
      } else if (name == "--launcher") {
        // DeepSpeed's default (pdsh) and its openmpi backend both start the
        // same ranks; zeroc launch starts them with Open MPI's mpirun.
        std::string launcher = value.lower();
        if (launcher != "pdsh" && launcher != "openmpi")
          return fail("--launcher '" + messagePath(value.str()) +
                      "': zeroc launch starts the ranks with Open MPI's mpirun (pdsh and "
                      "openmpi are accepted for it); for another launcher start OUT/train "
                      "under it yourself, one rank per GPU");
        f.launcher = launcher;
      } else if (name == "--launcher_args") {
        if (!splitShellWords(value, f.launcherArgs, error))
          return fail("--launcher_args '" + messagePath(value.str()) + "' " + error);
      } else if (name == "--bind_core_list") {
        if (!zeroc_rt::parseCpuList(value.str(), f.bindCores, error))
          return fail("--bind_core_list '" + messagePath(value.str()) + "': " + error);
      } else if (name == "--hostfile") {
        if (value.empty())
          return fail("--hostfile needs a file name");
        f.hostfile = value.str();
        f.haveHostfile = true;
      } else if (name == "--master_addr") {
        // It travels as "-x MASTER_ADDR=A": a host name or address.
        if (value.empty() || value.size() > kMaxHostName ||
            !llvm::all_of(value, [](unsigned char c) {
              return llvm::isAlnum(c) || llvm::StringRef(".-_:[]").contains(c);
            }))
          return fail("--master_addr '" + messagePath(value.str()) +
                      "' is not a host name or address");
        f.masterAddr = value.str();
      } else {
        if (value.empty())
          return fail(name + " needs HOST[:SLOT,...][@HOST...]");
        (name == "--include" ? f.include : f.exclude) = value.str();
      }
      continue;
    }
    f.outDir = arg.str();
    for (++i; i < argc; ++i)
      f.trainArgs.push_back(argv[i]);
    break;
  }
  if (f.outDir.empty())
    return fail("launch needs the compiled output directory (zeroc launch "
                "[options] OUT [train args...])");
  // DeepSpeed gives --launcher_args to the launcher it runs: pdsh's (its
  // default) would be wrong words for mpirun. Empty ones (DeepSpeed's
  // default, a wrapper's "$ARGS") say nothing.
  if (!f.launcherArgs.empty() && f.launcher != "openmpi")
    return fail("--launcher_args are the launcher's arguments, and with --launcher " + f.launcher +
                " (DeepSpeed's default) they are pdsh's; zeroc launch runs mpirun: give "
                "--launcher openmpi to pass them to mpirun");
  return std::nullopt;
}

/// The trainer's recompile hint with --world-size W, or a generic one.
std::string recompileHint(const std::string &outDir, int worldSize) {
  std::string text, error;
  for (const char *name : {outfile::kSource, outfile::kCudaSource})
    if (readBounded(outDir + "/" + name, size_t(1) << 30, text, error)) {
      std::string hint = parseRecompileHint(text);
      if (!hint.empty())
        return hint + " --world-size " + std::to_string(worldSize);
    }
  return "zeroc compile MODEL.onnx -o " + messagePath(outDir) +
         " --world-size " + std::to_string(worldSize);
}

int spawnAndWait(const Command &cmd, const std::string &mpirun) {
  const char *base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") +
                     "/zeroc-launch.XXXXXX";
  std::vector<char> dirBuf(tmpl.begin(), tmpl.end());
  dirBuf.push_back('\0');
  if (!::mkdtemp(dirBuf.data()))
    return fail("cannot create a private TMPDIR for Open MPI under '" +
                messagePath(tmpl.substr(0, tmpl.rfind('/'))) +
                "' (" + std::strerror(errno) + "); set TMPDIR to a writable "
                "directory");
  std::string tmpDir = dirBuf.data();

  // Open MPI 4.1 races on a session directory shared between jobs
  // (test/mpirun-isolated); each launch gets its own.
  std::vector<std::string> envStore = {"TMPDIR=" + tmpDir};
  for (const auto &[name, value] : cmd.env)
    envStore.push_back(name + "=" + value);
  for (char **e = environ; *e; ++e) {
    llvm::StringRef name = llvm::StringRef(*e).split('=').first;
    bool replaced = name == "TMPDIR" ||
                    llvm::any_of(cmd.env, [&](const auto &kv) {
                      return kv.first == name;
                    });
    if (!replaced)
      envStore.push_back(*e);
  }
  std::vector<char *> envp, argv;
  for (std::string &s : envStore)
    envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argStore = cmd.argv;
  for (std::string &s : argStore)
    argv.push_back(s.data());
  argv.push_back(nullptr);

  struct sigaction forward = {}, old[3];
  forward.sa_handler = forwardSignal;
  sigemptyset(&forward.sa_mask);
  const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
  for (int k = 0; k < 3; ++k)
    ::sigaction(sigs[k], &forward, &old[k]);

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults, none;
  sigemptyset(&defaults);
  for (int s : sigs)
    sigaddset(&defaults, s);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, mpirun.c_str(), nullptr, &attr, argv.data(),
                         envp.data());
  posix_spawnattr_destroy(&attr);
  int exitCode = 1;
  if (rc != 0) {
    fail("cannot start '" + messagePath(mpirun) + "' (" + std::strerror(rc) +
         ")");
  } else {
    childPid = pid;
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    childPid = 0;
    if (WIFEXITED(status)) {
      exitCode = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
      exitCode = 128 + WTERMSIG(status);
      fail("mpirun was ended by signal " + std::to_string(WTERMSIG(status)));
    }
  }
  for (int k = 0; k < 3; ++k)
    ::sigaction(sigs[k], &old[k], nullptr);
  removeTree(tmpDir);
  return exitCode;
}

} // namespace

int runLaunch(int argc, char **argv, llvm::StringRef usage) {
  Flags f;
  if (std::optional<int> rc = parseFlags(argc, argv, usage, f))
    return *rc;

  std::string out = f.outDir;
  while (out.size() > 1 && out.back() == '/')
    out.pop_back();
  std::string train = out + "/" + outfile::kTrain;
  struct stat st;
  if (::stat(train.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
      ::access(train.c_str(), X_OK) != 0)
    return fail(messagePath(train) + ": no compiled program there (build "
                "one with zeroc compile MODEL.onnx -o " +
                messagePath(f.outDir) + ")");
  std::string text, error;
  std::string planPath = out + "/" + outfile::kPlan;
  PlanInfo plan;
  if (!readBounded(planPath, size_t(16) << 20, text, error) || !parsePlan(text, plan, error))
    return fail(messagePath(planPath) + ": " + error);
  const int worldSize = plan.worldSize;
  // A plan.json older than its "target" key: train.cu is a GPU program's.
  if (plan.target.empty())
    plan.target = ::access((out + "/" + outfile::kCudaSource).c_str(), F_OK) == 0 ? "cuda" : "cpu";
  const bool gpuProgram = plan.target != "cpu";

  PlacementRequest req;
  req.haveHostfile = f.haveHostfile;
  req.hostfileName = messagePath(f.hostfile);
  req.include = f.include;
  req.exclude = f.exclude;
  req.numNodes = f.numNodes;
  req.numGpus = f.numGpus;
  req.localSlots = worldSize;
  req.gpuProgram = gpuProgram;
  req.localGpus = localGpus(plan.target);
  if (const char *visible = std::getenv("CUDA_VISIBLE_DEVICES"))
    req.visibleDevices = visible;
  if (f.haveHostfile &&
      !readBounded(f.hostfile, kMaxHostfileBytes, req.hostfileText, error))
    return fail(req.hostfileName + ": " + error);
  Placement placement;
  PlacementNote placementNote;
  if (!placeRanks(req, placement, error, &placementNote))
    return fail(error);

  int ranks = totalRanks(placement);
  if (ranks != worldSize) {
    std::string hint = recompileHint(out, ranks);
    if (!f.haveHostfile && f.numGpus > 0 && req.include.empty() &&
        req.exclude.empty())
      return fail(f.numGpusFlag + " " + std::to_string(f.numGpus) + ": " +
                  messagePath(train) + " was compiled for --world-size " +
                  std::to_string(worldSize) + "; launch it with " +
                  f.numGpusFlag + " " + std::to_string(worldSize) +
                  ", or recompile: " + hint);
    if (placementNote.fromVisibleDevices)
      return fail("CUDA_VISIBLE_DEVICES=" + placementNote.visibleDevices + " lists " +
                  std::to_string(ranks) + " GPU" + (ranks == 1 ? "" : "s") + " but " +
                  messagePath(train) + " was compiled for --world-size " +
                  std::to_string(worldSize) +
                  " (without --hostfile, --include or "
                  "--num_gpus, zeroc launch runs a rank on each GPU it lists, as "
                  "DeepSpeed does); list " +
                  std::to_string(worldSize) +
                  ", choose them with --include localhost:0,1,..., or recompile: " + hint);
    return fail("the chosen slots make " + std::to_string(ranks) + " rank" +
                (ranks == 1 ? "" : "s") + " (" + hostList(placement) +
                ") but " + messagePath(train) +
                " was compiled for --world-size " + std::to_string(worldSize) +
                "; choose " + std::to_string(worldSize) +
                " slots with --include, --exclude, --num_nodes or --num_gpus, "
                "or "
                "recompile: " + hint);
  }

  // DeepSpeed's get_numactl_cmd asserts a core for each rank.
  if (!f.bindCores.empty() && f.bindCores.size() < static_cast<size_t>(ranksPerHost(placement)))
    return fail("--bind_core_list " + zeroc_rt::formatCpuList(f.bindCores) + " names " +
                std::to_string(f.bindCores.size()) + " CPU" + (f.bindCores.size() == 1 ? "" : "s") +
                " but a host runs " + std::to_string(ranksPerHost(placement)) +
                " ranks; give at least one CPU per rank");

  CommandOptions opts;
  llvm::SmallString<256> abs(train);
  llvm::sys::fs::make_absolute(abs);
  opts.trainPath = abs.str().str();
  opts.launcherArgs = f.launcherArgs;
  opts.trainArgs = f.trainArgs;
  opts.threadsPerRank = f.threads;
  opts.bindCores = f.bindCores;
  opts.localCores = localCores();
  opts.asRoot = ::geteuid() == 0;
  opts.masterAddr = f.masterAddr;
  opts.masterPort = f.masterPort;
  opts.gpuProgram = gpuProgram;
  std::vector<std::string> exportNotes;
  // One node's ranks inherit this environment; DeepSpeed too exports only
  // to the nodes of a multi-node job.
  const bool remote =
      f.forceMulti || placement.size() > 1 ||
      (placement.front().host != "localhost" && placement.front().host != "127.0.0.1");
  if (remote && !exportsForRanks(opts, exportNotes, error))
    return fail(error);
  if (std::string conflict = bindCoreListConflict(opts, environmentEntries()); !conflict.empty())
    return fail(conflict);
  Command cmd = buildCommand(placement, opts);
  for (const std::string &n : exportNotes)
    llvm::errs() << "zeroc: note: " << n << "\n";
  if (!placementNote.text.empty())
    llvm::errs() << "zeroc: note: " << placementNote.text << "\n";
  if (!cmd.note.empty())
    llvm::errs() << "zeroc: note: " << cmd.note << "\n";
  if (f.dryRun) {
    llvm::outs() << renderCommand(cmd) << "\n";
    return 0;
  }
  std::string mpirun = findOnPath("mpirun");
  if (mpirun.empty())
    return fail("mpirun: not found on PATH (install Open MPI, e.g. apt-get "
                "install openmpi-bin, or put its bin directory on PATH)");
  llvm::outs().flush();
  llvm::errs().flush();
  return spawnAndWait(cmd, mpirun);
}

} // namespace zeroc::launch
