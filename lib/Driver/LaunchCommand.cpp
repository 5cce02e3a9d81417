//===- LaunchCommand.cpp - the mpirun command line of `zeroc launch` ------===//

#include "zeroc/Driver/Compile.h"
#include "zeroc/Driver/Launch.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/JSON.h"

#include "zeroc_rt/cpu_list.h"

#include <algorithm>

namespace zeroc::launch {
namespace {

/// A POSIX environment variable's name: a letter or '_', then letters,
/// digits and '_'.
bool isEnvName(llvm::StringRef name) {
  return !name.empty() && !llvm::isDigit(name[0]) && name.size() <= 256 &&
         llvm::all_of(name, [](unsigned char c) { return llvm::isAlnum(c) || c == '_'; });
}

/// An mpirun option word's name and the value it holds after '=' ("" when
/// none): `-opt`, `--opt` and `--opt=value` alike.
std::pair<llvm::StringRef, llvm::StringRef> optionOf(llvm::StringRef word) {
  return word.drop_while([](char c) { return c == '-'; }).split('=');
}

/// Whether mpirun options among `args` choose the ranks' binding or
/// mapping (DeepSpeed users pass `-bind-to none -map-by slot`), in either
/// spelling (`-opt` or `--opt`, a value after a blank or '=').
bool launcherArgsPlaceRanks(const std::vector<std::string> &args) {
  static const llvm::StringLiteral kPlacing[] = {
      "bind-to", "map-by",   "cpus-per-proc", "cpus-per-rank", "bynode",        "byslot",
      "pernode", "npernode", "npersocket",    "bind-to-core",  "bind-to-socket"};
  return llvm::any_of(args, [](llvm::StringRef word) {
    if (!word.starts_with("-"))
      return false;
    return llvm::is_contained(kPlacing, optionOf(word).first);
  });
}

/// The mpirun options among `args` that bind the ranks, as `name` (without
/// dashes, or "mca NAME") and value ("" for a flag): the value follows
/// after '=' or as the next word. A mapping with processing elements per
/// rank (`--map-by slot:PE=2`, `pe-list=`) binds too.
std::vector<std::pair<std::string, std::string>>
launcherArgsBinding(const std::vector<std::string> &args) {
  static const llvm::StringLiteral kFlags[] = {"bind-to-core", "bind-to-socket"};
  static const llvm::StringLiteral kValued[] = {
      "bind-to", "cpus-per-proc", "cpus-per-rank", "rankfile",
      "rf",      "cpu-set",       "cpu-list",      "map-by"};
  static const llvm::StringLiteral kMca[] = {
      "hwloc_base_binding_policy", "rmaps_base_mapping_policy", "rmaps_base_cpus_per_rank",
      "orte_rankfile", "rmaps_rank_file_path"};
  std::vector<std::pair<std::string, std::string>> found;
  for (size_t i = 0; i < args.size(); ++i) {
    llvm::StringRef word = args[i];
    if (!word.starts_with("-"))
      continue;
    auto [name, inlineValue] = optionOf(word);
    const bool valued = llvm::is_contained(kValued, name);
    if (!valued && !llvm::is_contained(kFlags, name) && name != "mca")
      continue;
    std::string value = inlineValue.str();
    if (valued && !word.contains('=') && i + 1 < args.size())
      value = args[++i];
    if (name == "mca") {
      // --mca NAME VALUE
      if (i + 2 >= args.size() || !llvm::is_contained(kMca, llvm::StringRef(args[i + 1]))) {
        continue;
      }
      found.emplace_back("mca " + args[i + 1], args[i + 2]);
      i += 2;
      continue;
    }
    if (name == "map-by" && !llvm::StringRef(value).contains_insensitive("pe=") &&
        !llvm::StringRef(value).contains_insensitive("pe-list="))
      continue;
    found.emplace_back(name.str(), value);
  }
  return found;
}

} // namespace

bool splitShellWords(llvm::StringRef text, std::vector<std::string> &words, std::string &error) {
  words.clear();
  std::string word;
  bool inWord = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      if (inWord)
        words.push_back(std::move(word));
      word.clear();
      inWord = false;
      continue;
    }
    inWord = true;
    if (c == '\\') {
      if (++i == text.size()) {
        error = "ends with a backslash";
        return false;
      }
      word += text[i];
      continue;
    }
    if (c != '\'' && c != '"') {
      word += c;
      continue;
    }
    const size_t open = i;
    for (++i; i < text.size() && text[i] != c; ++i) {
      if (c == '"' && text[i] == '\\' && i + 1 < text.size() &&
          (text[i + 1] == '"' || text[i + 1] == '\\'))
        ++i;
      word += text[i];
    }
    if (i == text.size()) {
      error = std::string("has an unclosed ") + (c == '"' ? "double" : "single") +
              " quote (at character " + std::to_string(open + 1) + ")";
      return false;
    }
  }
  if (inWord)
    words.push_back(std::move(word));
  return true;
}

int ranksPerHost(const Placement &placement) {
  int perNode = 1;
  for (const HostSlots &h : placement)
    perNode = std::max(perNode, static_cast<int>(h.slots.size()));
  return perNode;
}

std::string bindCoreListConflict(const CommandOptions &opts,
                                 const std::vector<std::string> &environment) {
  if (opts.bindCores.empty())
    return "";
  for (const auto &[name, value] : launcherArgsBinding(opts.launcherArgs))
    if (name != "bind-to" || value != "none")
      return "--bind_core_list: the --launcher_args bind the ranks (-" + name +
             (value.empty() ? "" : " " + value) +
             "), and each rank binds itself to its share of the list; drop that option, or "
             "give -bind-to none";
  // OpenMP pins threads itself with these; OMP_PLACES alone turns it on.
  auto pins = [](llvm::StringRef name, llvm::StringRef value,
                 llvm::function_ref<llvm::StringRef(llvm::StringRef)> lookup) {
    if (value.empty())
      return false;
    if (name == "KMP_AFFINITY" || name == "GOMP_CPU_AFFINITY")
      return true;
    if (name == "OMP_PROC_BIND")
      return !value.equals_insensitive("false");
    if (name == "OMP_PLACES")
      return !lookup("OMP_PROC_BIND").equals_insensitive("false");
    return false;
  };
  auto check = [&](const std::vector<std::pair<std::string, std::string>> &variables,
                   llvm::StringRef where) -> std::string {
    auto lookup = [&](llvm::StringRef name) -> llvm::StringRef {
      for (const auto &[n, v] : variables)
        if (n == name)
          return v;
      return "";
    };
    for (const auto &[name, value] : variables)
      if (pins(name, value, lookup))
        return "--bind_core_list: " + name + " is set" + where.str() +
               ", which makes OpenMP pin each thread to places of its own and undoes the "
               "ranks' binding (DeepSpeed refuses KMP_AFFINITY there too); unset it";
    return "";
  };
  std::vector<std::pair<std::string, std::string>> variables;
  for (llvm::StringRef entry : environment)
    if (auto [name, value] = entry.split('='); entry.contains('='))
      variables.emplace_back(name.str(), value.str());
  std::string conflict = check(variables, "");
  if (conflict.empty())
    conflict = check(opts.fileVariables, " in .deepspeed_env");
  return conflict;
}

Command buildCommand(const Placement &placement, const CommandOptions &opts) {
  Command cmd;
  // Remote nodes' cores are not known here; like DeepSpeed's
  // --bind_cores_to_rank, zeroc assumes every node has this one's (or the
  // --bind_core_list given for all of them).
  const int perNode = ranksPerHost(placement);
  int cores = std::max(1, opts.localCores);
  if (!opts.bindCores.empty())
    cores = static_cast<int>(opts.bindCores.size());
  cmd.threads = opts.threadsPerRank > 0 ? opts.threadsPerRank
                                        : std::max(1, cores / perNode);
  std::string t = std::to_string(cmd.threads);

  // One application context per run of hosts with the same slots: a GPU
  // program's ranks see their host's slots as CUDA_VISIBLE_DEVICES, which
  // Open MPI exports per context (-x belongs to the context it is in).
  std::vector<Placement> contexts;
  for (const HostSlots &h : placement) {
    if (contexts.empty() || (opts.gpuProgram && contexts.back().back().slots != h.slots))
      contexts.emplace_back();
    contexts.back().push_back(h);
  }
  std::vector<std::string> &a = cmd.argv;
  a = {"mpirun"};
  a.insert(a.end(), opts.launcherArgs.begin(), opts.launcherArgs.end());
  for (size_t c = 0; c < contexts.size(); ++c) {
    if (c)
      a.push_back(":");
    a.insert(a.end(),
             {"-np", std::to_string(totalRanks(contexts[c])), "--host", hostList(contexts[c])});
    if (c == 0) {
      // "[JOB,RANK]<stdout>:" on every line: Open MPI's own tagging keeps
      // lines whole and needs no relay process between ranks and terminal.
      a.push_back("--tag-output");
      if (!opts.bindCores.empty()) {
        // Each rank binds itself to its share (train --bind-core-list); the
        // --launcher_args may map the ranks or say -bind-to none
        // (bindCoreListConflict refuses any other binding).
        if (launcherArgsBinding(opts.launcherArgs).empty())
          a.insert(a.end(), {"--bind-to", "none"});
      } else if (launcherArgsPlaceRanks(opts.launcherArgs)) {
        // mpirun refuses two binding or mapping policies.
        cmd.note = "the --launcher_args bind or map the ranks: zeroc launch leaves out its own "
                   "binding (--bind-to core --map-by slot:PE=" +
                   t + ")";
      } else if (static_cast<long>(perNode) * cmd.threads <= cores) {
        a.insert(a.end(), {"--bind-to", "core", "--map-by", "slot:PE=" + t});
      } else {
        a.insert(a.end(), {"--bind-to", "none", "--oversubscribe"});
        cmd.note = std::to_string(perNode) + " ranks per node x " + t + " thread" +
                   (cmd.threads == 1 ? "" : "s") + " exceed this machine's " +
                   std::to_string(cores) + " core" + (cores == 1 ? "" : "s") +
                   ": the ranks run unbound (--bind-to none --oversubscribe)";
      }
    }
    for (const std::string &name : opts.forwarded)
      a.insert(a.end(), {"-x", name});
    for (const auto &variable : opts.fileVariables)
      a.insert(a.end(), {"-x", variable.first});
    a.insert(a.end(), {"-x", "OMP_NUM_THREADS=" + t, "-x", "OPENBLAS_NUM_THREADS=" + t});
    // The trainer talks MPI and reads neither; they are set as DeepSpeed
    // sets them, for scripts that wrap train.
    if (!opts.masterAddr.empty())
      a.insert(a.end(), {"-x", "MASTER_ADDR=" + opts.masterAddr});
    if (opts.masterPort > 0)
      a.insert(a.end(), {"-x", "MASTER_PORT=" + std::to_string(opts.masterPort)});
    if (opts.gpuProgram)
      a.insert(a.end(), {"-x", "CUDA_VISIBLE_DEVICES=" + slotList(contexts[c].front().slots)});
    a.push_back(opts.trainPath);
    if (!opts.bindCores.empty())
      a.insert(a.end(), {"--bind-core-list", zeroc_rt::formatCpuList(opts.bindCores)});
    a.insert(a.end(), opts.trainArgs.begin(), opts.trainArgs.end());
  }
  if (opts.asRoot)
    cmd.env = {{"OMPI_ALLOW_RUN_AS_ROOT", "1"},
               {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"}};
  cmd.env.insert(cmd.env.end(), opts.fileVariables.begin(), opts.fileVariables.end());
  return cmd;
}

std::string renderCommand(const Command &command) {
  std::string out;
  for (const auto &[name, value] : command.env)
    out += name + "=" + shellQuote(value) + " ";
  for (size_t i = 0; i < command.argv.size(); ++i)
    out += (i ? " " : "") + shellQuote(command.argv[i]);
  return out;
}

std::vector<std::string> forwardedVariables(const std::vector<std::string> &environment) {
  static const llvm::StringLiteral kPrefixes[] = {"NCCL",   "UCX",    "MV2",
                                                  "PYTHON", "MLFLOW", "ZEROC_"};
  std::vector<std::string> names;
  for (llvm::StringRef entry : environment) {
    llvm::StringRef name = entry.split('=').first;
    if (!entry.contains('=') || !isEnvName(name))
      continue;
    if (llvm::any_of(kPrefixes, [&](llvm::StringRef p) { return name.starts_with(p); }))
      names.push_back(name.str());
  }
  llvm::sort(names);
  names.erase(std::unique(names.begin(), names.end()), names.end());
  if (names.size() > static_cast<size_t>(kMaxForwarded))
    names.resize(kMaxForwarded);
  return names;
}

bool isLaunchVariable(llvm::StringRef name) {
  return llvm::is_contained({"OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MASTER_ADDR",
                             "MASTER_PORT", "CUDA_VISIBLE_DEVICES"},
                            name);
}

bool parseEnvFile(llvm::StringRef text, llvm::StringRef name,
                  std::vector<std::pair<std::string, std::string>> &variables,
                  std::vector<std::string> &skipped, std::string &error) {
  int lineNo = 0, entries = 0;
  auto fail = [&](const llvm::Twine &why) {
    error = (name + ":" + llvm::Twine(lineNo) + ": " + why).str();
    return false;
  };
  while (!text.empty()) {
    ++lineNo;
    auto [raw, rest] = text.split('\n');
    text = rest;
    llvm::StringRef line = raw.rtrim("\r");
    if (line.trim().empty() || line.ltrim().starts_with("#"))
      continue;
    if (line.contains('\0'))
      return fail("a NUL byte (a .deepspeed_env line is KEY=VALUE text)");
    auto [rawKey, rawValue] = line.split('=');
    llvm::StringRef key = rawKey.trim(" \t"), value = rawValue.trim(" \t");
    if (!line.contains('=') || !isEnvName(key))
      return fail("expected KEY=VALUE with KEY a variable's name (letters, digits and '_')");
    if (++entries > kMaxEnvEntries)
      return fail("more than " + llvm::Twine(kMaxEnvEntries) + " variables");
    if (isLaunchVariable(key)) {
      skipped.push_back(key.str());
      continue;
    }
    auto same = llvm::find_if(variables, [&](const auto &v) { return v.first == key; });
    if (same != variables.end())
      same->second = value.str();
    else
      variables.emplace_back(key.str(), value.str());
  }
  return true;
}

bool parsePlan(llvm::StringRef planText, PlanInfo &info, std::string &error) {
  llvm::Expected<llvm::json::Value> plan = llvm::json::parse(planText);
  if (!plan) {
    error = "is not valid JSON (" + llvm::toString(plan.takeError()) +
            "); recompile the model";
    return false;
  }
  const llvm::json::Object *obj = plan->getAsObject();
  std::optional<int64_t> ws = obj ? obj->getInteger("world_size") : std::nullopt;
  if (!ws || *ws < 1 || *ws > (1 << 20)) {
    error = "has no valid \"world_size\"; recompile the model";
    return false;
  }
  info.worldSize = static_cast<int>(*ws);
  info.target.clear();
  if (const llvm::json::Value *target = obj->get("target")) {
    std::optional<llvm::StringRef> name = target->getAsString();
    if (!name || (*name != "cpu" && *name != "cuda" && *name != "cuda-emu")) {
      error = "has an unknown \"target\"; recompile the model";
      return false;
    }
    info.target = name->str();
  }
  return true;
}

std::string parseRecompileHint(llvm::StringRef programText) {
  // ProgramTable.cpp writes: program.recompile_hint = "<C++ literal>";
  constexpr llvm::StringLiteral kKey = "program.recompile_hint = \"";
  size_t at = programText.find(kKey);
  if (at == llvm::StringRef::npos)
    return "";
  llvm::StringRef s = programText.drop_front(at + kKey.size());
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"')
      return out;
    if (c == '\n')
      return "";
    if (c != '\\' || i + 1 >= s.size()) {
      out += c;
      continue;
    }
    char e = s[++i];
    if (e == 'n')
      out += '\n';
    else if (e == 't')
      out += '\t';
    else if (e == 'r')
      out += '\r';
    else if (e >= '0' && e <= '7') {
      int v = 0, n = 0;
      for (; n < 3 && i < s.size() && s[i] >= '0' && s[i] <= '7'; ++n, ++i)
        v = v * 8 + (s[i] - '0');
      --i;
      out += static_cast<char>(v);
    } else
      out += e; // \" \\ \?
  }
  return "";
}

} // namespace zeroc::launch
