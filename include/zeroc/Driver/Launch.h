//===- Launch.h - `zeroc launch`: DeepSpeed's launcher over mpirun -*- C++ -*-===//
//
// `zeroc launch [options] OUT [train args...]` starts OUT/train on the ranks
// DeepSpeed's `deepspeed` launcher would choose: a hostfile of `HOST slots=N`
// lines, narrowed by --include/--exclude (`HOST[:SLOT,...][@HOST...]`) or by
// --num_nodes/--num_gpus, and runs it under Open MPI's mpirun (docs/Launch.md).
//
// The parsing and the mpirun command line are pure functions (text in,
// placement or argv out) so that unit tests cover every rule and error
// message; runLaunch() adds the file reading, the checks against OUT, and
// the process handling.
//
//===----------------------------------------------------------------------===//
#ifndef ZEROC_DRIVER_LAUNCH_H
#define ZEROC_DRIVER_LAUNCH_H

#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace zeroc::launch {

/// Bounds on untrusted hostfile contents. With at most kMaxHosts names of at
/// most kMaxHostName bytes, mpirun's --host list stays far below Linux's
/// 128 KiB limit on one argument.
inline constexpr size_t kMaxHostfileBytes = size_t(1) << 20;
inline constexpr size_t kMaxLineBytes = 4096;
inline constexpr size_t kMaxHostName = 253;
inline constexpr int kMaxHosts = 256;
inline constexpr int kMaxSlots = 4096; ///< per host
inline constexpr int kMaxThreads = 1024;

/// One host and the slot ids (0-based, ascending) used on it.
struct HostSlots {
  std::string host;
  std::vector<int> slots;
  bool operator==(const HostSlots &o) const {
    return host == o.host && slots == o.slots;
  }
};
/// Hosts in hostfile order: the order ranks are numbered in.
using Placement = std::vector<HostSlots>;

/// Parses a DeepSpeed hostfile: `HOST slots=N` per line, blank lines and
/// `#` comments (whole lines or after the slots) ignored. `name` starts
/// each error ("NAME:LINE: ..."). Fails on a bad line, a duplicate host, an
/// unusable host name, slots outside 1..kMaxSlots, a line longer than
/// kMaxLineBytes, more than kMaxHosts hosts, or no host at all.
bool parseHostfile(llvm::StringRef text, llvm::StringRef name,
                   Placement &pool, std::string &error);

/// What decides the ranks, as the launcher's flags give it.
struct PlacementRequest {
  bool haveHostfile = false;
  std::string hostfileText, hostfileName;
  std::string include, exclude; ///< empty: not given
  int numNodes = -1;            ///< -1: not given
  int numGpus = -1;             ///< --num_gpus / --num_ranks; -1: not given
  /// Without a hostfile, localhost's slots (the compiled world size).
  int localSlots = 1;
  /// A program that runs a rank per GPU (--target cuda or cuda-emu): its
  /// slots are GPU numbers, and CUDA_VISIBLE_DEVICES is DeepSpeed's.
  bool gpuProgram = false;
  /// This machine's GPUs (0: unknown). Without a hostfile, --include and
  /// --exclude of a GPU program choose among max(localSlots, localGpus).
  int localGpus = 0;
  /// CUDA_VISIBLE_DEVICES as zeroc launch found it (unset or empty: "").
  std::string visibleDevices;
};

/// DeepSpeed's rules (launcher/runner.py): the hostfile's pool (or
/// localhost with localSlots slots), then --include/--exclude, or
/// --num_nodes (the first K hosts) and --num_gpus (slots 0..N-1 of each).
/// Where DeepSpeed is silent or lenient zeroc fails with one clear line:
/// --num_nodes beyond the hosts, --num_gpus beyond a host's slots, and
/// nothing left after --exclude are errors.
///
/// For a GPU program without a hostfile, a CUDA_VISIBLE_DEVICES of device
/// numbers stands for --include localhost:THEM when no flag chooses slots
/// (DeepSpeed's rule) and is ignored otherwise; `note` then says which.
struct PlacementNote {
  std::string text;                ///< one line, "" when there is nothing to say
  bool fromVisibleDevices = false; ///< CUDA_VISIBLE_DEVICES chose the slots
  std::string visibleDevices;      ///< then its GPU numbers, "3,1"
};
bool placeRanks(const PlacementRequest &request, Placement &placement, std::string &error,
                PlacementNote *note = nullptr);

/// Applies an --include (`include`) or --exclude value to `pool`;
/// `poolName` (the hostfile's name) appears in errors. placeRanks() calls
/// it after its checks of which flags go together.
bool filterResources(const Placement &pool, llvm::StringRef spec,
                     bool include, llvm::StringRef poolName,
                     Placement &out, std::string &error);

int totalRanks(const Placement &placement);
/// "h1:2,h2:1": mpirun's --host syntax.
std::string hostList(const Placement &placement);
/// "1,3": slots as CUDA_VISIBLE_DEVICES and --include write them.
std::string slotList(const std::vector<int> &slots);

/// `text` split into words as Python's shlex.split splits it (DeepSpeed's
/// runner splits --launcher_args so): blanks separate words; single quotes
/// keep everything up to the next one; double quotes keep everything but a
/// backslash before `"` or `\`; a backslash outside quotes keeps the next
/// character. Nothing is expanded. False, with `error`, on an unclosed
/// quote or a trailing backslash.
bool splitShellWords(llvm::StringRef text, std::vector<std::string> &words, std::string &error);

struct CommandOptions {
  std::string trainPath; ///< absolute OUT/train
  /// Given to mpirun before anything else (--launcher openmpi's
  /// --launcher_args); when they bind or map the ranks, the command leaves
  /// out its own binding and says so in its note.
  std::vector<std::string> launcherArgs;
  std::vector<std::string> trainArgs;
  /// 0: this machine's cores / ranks per node, or with bindCores its
  /// CPUs / ranks per node (DeepSpeed's OMP_NUM_THREADS).
  int threadsPerRank = 0;
  /// --bind_core_list's CPUs (Linux's numbers, ascending): mpirun starts
  /// the ranks unbound and each binds itself to its share (train
  /// --bind-core-list). Empty: mpirun binds each rank to T cores.
  std::vector<int> bindCores;
  int localCores = 1;
  bool asRoot = false;
  std::string masterAddr; ///< empty: not given
  int masterPort = 0;     ///< 0: not given
  /// Each host's ranks see its slots as CUDA_VISIBLE_DEVICES, so local rank
  /// i runs on GPU slots[i] (DeepSpeed's launch.py sets it so).
  bool gpuProgram = false;
  /// Exported to every rank on every host by name (`-x NAME`), before
  /// zeroc launch's own variables: this environment's (forwardedVariables).
  std::vector<std::string> forwarded;
  /// Set in mpirun's environment and exported by name too, so that values
  /// stay off the command line: .deepspeed_env's (EnvFileVariables).
  std::vector<std::pair<std::string, std::string>> fileVariables;
};

struct Command {
  std::vector<std::string> argv; ///< argv[0] is "mpirun"
  /// Set in mpirun's environment (Open MPI's root guards).
  std::vector<std::pair<std::string, std::string>> env;
  int threads = 1;
  /// Non-empty when the ranks run unbound: one line saying why.
  std::string note;
};

/// The most ranks `placement` puts on one host.
int ranksPerHost(const Placement &placement);

/// Why `opts` cannot start ranks that bind themselves to --bind_core_list
/// (opts.bindCores), "" when they can: --launcher_args that bind the ranks
/// (all but `--bind-to none`, which mpirun would apply before the ranks
/// bind themselves: a binding, a mapping with PE=, a rankfile, a CPU set
/// or list, their --mca parameters), or a variable of `environment`
/// ("NAME=VALUE" entries) or of opts.fileVariables (.deepspeed_env's) that
/// makes OpenMP pin threads itself (KMP_AFFINITY, which DeepSpeed refuses
/// there too; GOMP_CPU_AFFINITY; OMP_PROC_BIND other than false; OMP_PLACES
/// unless OMP_PROC_BIND is false).
std::string bindCoreListConflict(const CommandOptions &opts,
                                 const std::vector<std::string> &environment);

/// The mpirun command for `placement`: the launcher arguments, -np, --host,
/// --tag-output (each
/// line prefixed "[JOB,RANK]<stdout>:"), core binding of T cores per rank
/// when ranks per node x T fit in localCores (else --bind-to none
/// --oversubscribe and a note; with bindCores --bind-to none and train's
/// --bind-core-list), OMP/OpenBLAS thread counts, then train.
/// For a GPU program, consecutive hosts with the same slots share an
/// application context (`:` between them) that exports them as
/// CUDA_VISIBLE_DEVICES.
Command buildCommand(const Placement &placement, const CommandOptions &opts);

/// The command as one shell line, every word quoted as needed (--dry-run).
std::string renderCommand(const Command &command);

/// Bounds on an untrusted .deepspeed_env file.
inline constexpr size_t kMaxEnvFileBytes = size_t(64) << 10;
inline constexpr int kMaxEnvEntries = 256; ///< per file
/// Bound on the variables forwarded from the environment.
inline constexpr int kMaxForwarded = 1024;

/// The variables of this environment (`environ` entries) that every rank
/// gets, as DeepSpeed's runner.py exports them to its nodes: names starting
/// with NCCL, UCX, MV2, PYTHON or MLFLOW, and zeroc's own ZEROC_; sorted,
/// at most kMaxForwarded.
std::vector<std::string> forwardedVariables(const std::vector<std::string> &environment);

/// The variables zeroc launch sets itself (OMP_NUM_THREADS, ...), which a
/// .deepspeed_env cannot set.
bool isLaunchVariable(llvm::StringRef name);

/// A .deepspeed_env file's KEY=VALUE lines, added to `variables` (a KEY set
/// again replaces its value where it first appeared); a KEY zeroc launch
/// sets itself (isLaunchVariable) goes to `skipped` instead. As DeepSpeed
/// reads it: blanks around KEY and VALUE are dropped; zeroc also skips
/// blank lines and '#' comments and drops a line's CR. `name` starts each
/// error ("NAME:LINE: ..."): a line without '=', a KEY that is not a
/// variable's name, a NUL byte, more than kMaxEnvEntries lines.
bool parseEnvFile(llvm::StringRef text, llvm::StringRef name,
                  std::vector<std::pair<std::string, std::string>> &variables,
                  std::vector<std::string> &skipped, std::string &error);

/// What zeroc launch needs from plan.json.
struct PlanInfo {
  int worldSize = 0;
  /// "cpu", "cuda" or "cuda-emu"; "" when plan.json predates the key.
  std::string target;
};
bool parsePlan(llvm::StringRef planText, PlanInfo &info, std::string &error);

/// The recompile hint (`zeroc compile ... ` without --world-size) from the
/// generated program's text, "" when it has none.
std::string parseRecompileHint(llvm::StringRef programText);

/// `zeroc launch ARGS...` (ARGS after "launch"): the process exit code.
/// `usage` is printed for -h/--help.
int runLaunch(int argc, char **argv, llvm::StringRef usage);

} // namespace zeroc::launch

#endif // ZEROC_DRIVER_LAUNCH_H
