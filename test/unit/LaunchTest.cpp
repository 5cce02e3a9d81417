//===- LaunchTest.cpp - zeroc launch: hostfile, filters, mpirun argv ------===//
#include "zeroc/Driver/Launch.h"

#include "zeroc_rt/cpu_list.h"

#include <gtest/gtest.h>

using namespace zeroc::launch;

namespace {

Placement parse(const std::string &text) {
  Placement pool;
  std::string error;
  EXPECT_TRUE(parseHostfile(text, "hf", pool, error)) << error;
  return pool;
}

std::string parseError(const std::string &text) {
  Placement pool;
  std::string error;
  EXPECT_FALSE(parseHostfile(text, "hf", pool, error)) << text;
  EXPECT_TRUE(pool.empty());
  return error;
}

PlacementRequest withHostfile(const std::string &text) {
  PlacementRequest req;
  req.haveHostfile = true;
  req.hostfileText = text;
  req.hostfileName = "hf";
  return req;
}

Placement place(const PlacementRequest &req) {
  Placement p;
  std::string error;
  EXPECT_TRUE(placeRanks(req, p, error)) << error;
  return p;
}

std::string placeError(const PlacementRequest &req) {
  Placement p;
  std::string error;
  EXPECT_FALSE(placeRanks(req, p, error));
  return error;
}

const char *kTwoHosts = "# cluster\n"
                        "node1 slots=2\n"
                        "\n"
                        "  node2\tslots=4   # the big one\n";

} // namespace

TEST(LaunchHostfile, ParsesHostsCommentsAndBlankLines) {
  Placement pool = parse(kTwoHosts);
  ASSERT_EQ(pool.size(), 2u);
  EXPECT_EQ(pool[0], (HostSlots{"node1", {0, 1}}));
  EXPECT_EQ(pool[1], (HostSlots{"node2", {0, 1, 2, 3}}));
  EXPECT_EQ(hostList(pool), "node1:2,node2:4");
  EXPECT_EQ(totalRanks(pool), 6);
  EXPECT_EQ(parse("a slots=1\r\nb slots=1\r\n").size(), 2u);
}

TEST(LaunchHostfile, RejectsBadInput) {
  EXPECT_EQ(parseError("node1 slots=2\nnode2 slot=2\n"),
            "hf:2: bad line 'node2 slot=2' (expected 'HOST slots=N'; '#' "
            "starts a comment)");
  EXPECT_EQ(parseError("node1\n"),
            "hf:1: bad line 'node1' (expected 'HOST slots=N'; '#' starts a "
            "comment)");
  EXPECT_EQ(parseError("node1 slots=2 extra\n"),
            "hf:1: bad line 'node1 slots=2 extra' (expected 'HOST slots=N'; "
            "'#' starts a comment)");
  EXPECT_EQ(parseError("node1 slots=x\n"),
            "hf:1: bad line 'node1 slots=x' (expected 'HOST slots=N'; '#' "
            "starts a comment)");
  EXPECT_EQ(parseError("a slots=1\na slots=2\n"),
            "hf:2: host 'a' is listed twice (give each host one line)");
  EXPECT_EQ(parseError("a slots=0\n"),
            "hf:1: host 'a' has slots=0; slots must be from 1 to 4096");
  EXPECT_EQ(parseError("a slots=99999999999\n"),
            "hf:1: host 'a' has slots=99999999999; slots must be from 1 to "
            "4096");
  EXPECT_EQ(parseError("a,b slots=1\n"),
            "hf:1: host name 'a,b' is not usable (letters, digits, '.', '-' "
            "and '_', at most 253 bytes, not starting with '-' or '.')");
  EXPECT_EQ(parseError("-np slots=1\n").substr(0, 31),
            "hf:1: host name '-np' is not us");
  EXPECT_EQ(parseError("# nothing\n\n"),
            "hf: no hosts (a hostfile has one 'HOST slots=N' line per host)");
  EXPECT_EQ(parseError(""),
            "hf: no hosts (a hostfile has one 'HOST slots=N' line per host)");
}

TEST(LaunchHostfile, BoundsUntrustedInput) {
  std::string longLine(kMaxLineBytes + 1, 'a');
  EXPECT_EQ(parseError("x slots=1\n" + longLine + " slots=1\n"),
            "hf:2: the line is longer than 4096 bytes (a hostfile line is "
            "'HOST slots=N')");
  std::string many;
  for (int i = 0; i <= kMaxHosts; ++i)
    many += "h" + std::to_string(i) + " slots=1\n";
  EXPECT_EQ(parseError(many),
            "hf:257: more than 256 hosts (zeroc launch takes at most 256)");
  // Control characters never reach a message.
  EXPECT_EQ(parseError("a\x1b[31m\n"),
            "hf:1: bad line 'a?[31m' (expected 'HOST slots=N'; '#' starts a "
            "comment)");
}

TEST(LaunchPlacement, NoHostfileIsLocalhost) {
  PlacementRequest req;
  req.localSlots = 2;
  EXPECT_EQ(place(req), (Placement{{"localhost", {0, 1}}}));
  req.numGpus = 3;
  EXPECT_EQ(place(req), (Placement{{"localhost", {0, 1, 2}}}));
  req.numGpus = -1;
  req.exclude = "localhost:0";
  EXPECT_EQ(place(req), (Placement{{"localhost", {1}}}));
  req.exclude = "node1";
  EXPECT_EQ(placeError(req),
            "--exclude 'node1': host 'node1' is not in the local pool "
            "(without --hostfile only 'localhost') (hosts: localhost)");
  req.exclude.clear();
  req.numNodes = 2;
  EXPECT_EQ(placeError(req), "--num_nodes 2 needs a --hostfile that lists the "
                             "nodes (without one, ranks run on localhost)");
}

TEST(LaunchPlacement, IncludeAndExclude) {
  PlacementRequest req = withHostfile(kTwoHosts);
  EXPECT_EQ(place(req),
            (Placement{{"node1", {0, 1}}, {"node2", {0, 1, 2, 3}}}));
  req.include = "node2:3,1@node1";
  EXPECT_EQ(place(req), (Placement{{"node1", {0, 1}}, {"node2", {1, 3}}}));
  req.include = "node2:1,1";
  EXPECT_EQ(place(req), (Placement{{"node2", {1}}}));
  req.include.clear();
  req.exclude = "node1@node2:0,2";
  EXPECT_EQ(place(req), (Placement{{"node2", {1, 3}}}));
}

TEST(LaunchPlacement, FilterErrors) {
  PlacementRequest req = withHostfile(kTwoHosts);
  req.include = "node1";
  req.exclude = "node2";
  EXPECT_EQ(placeError(req),
            "--include and --exclude are mutually exclusive (give one)");
  req.exclude.clear();
  req.include = "node3:0";
  EXPECT_EQ(placeError(req), "--include 'node3:0': host 'node3' is not in hf "
                             "(hosts: node1, node2)");
  req.include = "node1:2";
  EXPECT_EQ(placeError(req),
            "--include 'node1:2': host 'node1' has slots 0-1 in hf, not 2");
  req.include = "node1:a";
  EXPECT_EQ(placeError(req),
            "--include 'node1:a': slot 'a' of host 'node1' is not a number "
            "(the format is HOST[:SLOT,...][@HOST...])");
  req.include = "node1:0:1";
  EXPECT_EQ(placeError(req),
            "--include 'node1:0:1': slot '0:1' of host 'node1' is not a "
            "number (the format is HOST[:SLOT,...][@HOST...])");
  req.include = "node1@";
  EXPECT_EQ(placeError(req), "--include 'node1@': empty host name (the format "
                             "is HOST[:SLOT,...][@HOST...])");
  req.include.clear();
  req.exclude = "node1@node2";
  EXPECT_EQ(placeError(req),
            "--exclude 'node1@node2': no slots are left to run on");
  req.numGpus = 1;
  EXPECT_EQ(placeError(req),
            "--include/--exclude cannot be combined with --num_nodes or "
            "--num_gpus/--num_ranks (as in DeepSpeed): choose the slots with "
            "one or the other");
}

TEST(LaunchPlacement, NumNodesAndNumGpus) {
  PlacementRequest req = withHostfile(kTwoHosts);
  req.numNodes = 1;
  EXPECT_EQ(place(req), (Placement{{"node1", {0, 1}}}));
  req.numNodes = 2;
  req.numGpus = 1;
  EXPECT_EQ(place(req), (Placement{{"node1", {0}}, {"node2", {0}}}));
  req.numGpus = 3;
  EXPECT_EQ(placeError(req), "--num_gpus 3: host 'node1' has slots=2 in hf");
  req.numGpus = -1;
  req.numNodes = 3;
  EXPECT_EQ(placeError(req), "--num_nodes 3: hf lists 2 hosts");
  // A bad hostfile is reported before any flag is applied.
  req = withHostfile("node1 slots=two\n");
  EXPECT_EQ(placeError(req).substr(0, 15), "hf:1: bad line ");
}

// A GPU program's slots are GPU numbers; CUDA_VISIBLE_DEVICES follows
// DeepSpeed's runner.py.
TEST(LaunchPlacement, GpuProgramsChooseAmongTheMachinesGpus) {
  PlacementRequest req;
  req.localSlots = 2;
  req.gpuProgram = true;
  req.localGpus = 8;
  // By default the compiled world size's GPUs, 0 and 1.
  EXPECT_EQ(place(req), (Placement{{"localhost", {0, 1}}}));
  // --include and --exclude choose among the machine's 8.
  req.include = "localhost:4,6";
  EXPECT_EQ(place(req), (Placement{{"localhost", {4, 6}}}));
  req.include = "localhost:8";
  EXPECT_EQ(placeError(req), "--include 'localhost:8': host 'localhost' has slots 0-7 in "
                             "the local pool (without --hostfile only 'localhost'), not 8");
  // A CPU program's pool stays the world size.
  req.gpuProgram = false;
  req.include = "localhost:4,6";
  EXPECT_EQ(placeError(req).substr(0, 60),
            "--include 'localhost:4,6': host 'localhost' has slots 0-1 in");
}

TEST(LaunchPlacement, CudaVisibleDevicesAsDeepSpeedReadsIt) {
  PlacementRequest req;
  req.localSlots = 2;
  req.gpuProgram = true;
  req.visibleDevices = "3, 1";
  PlacementNote note;
  Placement p;
  std::string error;
  // No hostfile and no flag: the GPUs it lists.
  ASSERT_TRUE(placeRanks(req, p, error, &note)) << error;
  EXPECT_EQ(p, (Placement{{"localhost", {1, 3}}}));
  EXPECT_TRUE(note.fromVisibleDevices);
  EXPECT_EQ(note.text, "CUDA_VISIBLE_DEVICES=3, 1: the ranks run on those GPUs (as "
                       "--include localhost:3,1, DeepSpeed's rule)");
  // A flag that chooses slots wins, and the note says so.
  req.numGpus = 2;
  note = {};
  ASSERT_TRUE(placeRanks(req, p, error, &note)) << error;
  EXPECT_EQ(p, (Placement{{"localhost", {0, 1}}}));
  EXPECT_FALSE(note.fromVisibleDevices);
  EXPECT_EQ(note.text, "CUDA_VISIBLE_DEVICES=3, 1 is ignored: --num_gpus/--num_ranks chooses "
                       "the GPUs (as in DeepSpeed; without it the ranks run on the GPUs "
                       "CUDA_VISIBLE_DEVICES lists)");
  // A hostfile's slots replace it on every host.
  req = withHostfile(kTwoHosts);
  req.gpuProgram = true;
  req.visibleDevices = "1";
  note = {};
  ASSERT_TRUE(placeRanks(req, p, error, &note)) << error;
  EXPECT_EQ(p.size(), 2u);
  EXPECT_EQ(note.text, "CUDA_VISIBLE_DEVICES=1 is replaced by each host's slots in hf (as in "
                       "DeepSpeed)");
  // UUIDs and repeated numbers are not slots.
  req = PlacementRequest();
  req.gpuProgram = true;
  for (const char *bad : {"GPU-8e2f", "0,0", "0,", "-1"}) {
    req.visibleDevices = bad;
    EXPECT_EQ(placeError(req), "CUDA_VISIBLE_DEVICES=" + std::string(bad) +
                                   " is not a list of distinct GPU numbers, and zeroc launch "
                                   "chooses GPUs by number (unset it and choose them with "
                                   "--include localhost:0,1,...)");
  }
  // A CPU program does not read it.
  req.gpuProgram = false;
  EXPECT_EQ(place(req), (Placement{{"localhost", {0}}}));
}

TEST(LaunchCommand, BindsCoresWhenTheyFit) {
  CommandOptions opts;
  opts.trainPath = "/o/train";
  opts.trainArgs = {"--data", "d d", "--steps", "2"};
  opts.localCores = 8;
  Command cmd = buildCommand({{"localhost", {0, 1}}}, opts);
  EXPECT_EQ(cmd.threads, 4);
  EXPECT_TRUE(cmd.note.empty());
  EXPECT_TRUE(cmd.env.empty());
  EXPECT_EQ(renderCommand(cmd),
            "mpirun -np 2 --host localhost:2 --tag-output --bind-to core "
            "--map-by slot:PE=4 -x OMP_NUM_THREADS=4 -x OPENBLAS_NUM_THREADS=4 "
            "/o/train --data 'd d' --steps 2");
}

TEST(LaunchCommand, FallsBackToUnboundWhenOversubscribed) {
  CommandOptions opts;
  opts.trainPath = "/o/train";
  opts.localCores = 2;
  opts.threadsPerRank = 2;
  opts.asRoot = true;
  opts.masterAddr = "10.0.0.1";
  opts.masterPort = 29500;
  Command cmd = buildCommand({{"a", {0, 1}}, {"b", {0}}}, opts);
  EXPECT_EQ(cmd.note, "2 ranks per node x 2 threads exceed this machine's 2 "
                      "cores: the ranks run unbound (--bind-to none "
                      "--oversubscribe)");
  EXPECT_EQ(renderCommand(cmd),
            "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun "
            "-np 3 --host a:2,b:1 --tag-output --bind-to none --oversubscribe "
            "-x OMP_NUM_THREADS=2 -x OPENBLAS_NUM_THREADS=2 -x "
            "MASTER_ADDR=10.0.0.1 -x MASTER_PORT=29500 /o/train");
  // More ranks than cores: one thread each, still unbound.
  opts.threadsPerRank = 0;
  opts.localCores = 1;
  cmd = buildCommand({{"localhost", {0, 1}}}, opts);
  EXPECT_EQ(cmd.threads, 1);
  EXPECT_FALSE(cmd.note.empty());
}

TEST(LaunchCommand, GpuProgramsSeeTheirHostsSlots) {
  CommandOptions opts;
  opts.trainPath = "/o/train";
  opts.trainArgs = {"--steps", "2"};
  opts.localCores = 8;
  opts.threadsPerRank = 1;
  opts.gpuProgram = true;
  // One application context per run of hosts with the same slots.
  Command cmd = buildCommand({{"a", {1, 3}}, {"b", {1, 3}}, {"c", {0}}}, opts);
  EXPECT_EQ(renderCommand(cmd),
            "mpirun -np 4 --host a:2,b:2 --tag-output --bind-to core --map-by slot:PE=1 "
            "-x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1 -x CUDA_VISIBLE_DEVICES=1,3 "
            "/o/train --steps 2 : -np 1 --host c:1 -x OMP_NUM_THREADS=1 -x "
            "OPENBLAS_NUM_THREADS=1 -x CUDA_VISIBLE_DEVICES=0 /o/train --steps 2");
  // A CPU program's hosts share one context and no CUDA_VISIBLE_DEVICES.
  opts.gpuProgram = false;
  cmd = buildCommand({{"a", {1, 3}}, {"c", {0}}}, opts);
  EXPECT_EQ(renderCommand(cmd),
            "mpirun -np 3 --host a:2,c:1 --tag-output --bind-to core --map-by slot:PE=1 "
            "-x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1 /o/train --steps 2");
}

TEST(LaunchCommand, SplitsLauncherArgsAsShlexDoes) {
  std::vector<std::string> words;
  std::string error;
  // The words shlex.split gives (DeepSpeed's runner splits them so).
  ASSERT_TRUE(splitShellWords("  --mca btl_tcp_if_include 'eth0 eth1'\t-x \"A=\\\"b c\\\"\" "
                              "d\\ e '' \"$HOME\\n\" f'g'\"h\"\n",
                              words, error))
      << error;
  EXPECT_EQ(words, (std::vector<std::string>{"--mca", "btl_tcp_if_include", "eth0 eth1", "-x",
                                             "A=\"b c\"", "d e", "", "$HOME\\n", "fgh"}));
  ASSERT_TRUE(splitShellWords("", words, error));
  EXPECT_TRUE(words.empty());
  EXPECT_FALSE(splitShellWords("--mca 'btl", words, error));
  EXPECT_EQ(error, "has an unclosed single quote (at character 7)");
  EXPECT_FALSE(splitShellWords("a \"b\\\"", words, error));
  EXPECT_EQ(error, "has an unclosed double quote (at character 3)");
  EXPECT_FALSE(splitShellWords("a\\", words, error));
  EXPECT_EQ(error, "ends with a backslash");
}

TEST(LaunchCommand, LauncherArgsGoFirst) {
  CommandOptions opts;
  opts.trainPath = "/o/train";
  opts.localCores = 2;
  opts.threadsPerRank = 1;
  opts.launcherArgs = {"--mca", "btl_tcp_if_include", "eth0 eth1"};
  opts.gpuProgram = true;
  Command cmd = buildCommand({{"a", {0}}, {"b", {1}}}, opts);
  EXPECT_EQ(renderCommand(cmd),
            "mpirun --mca btl_tcp_if_include 'eth0 eth1' -np 1 --host a:1 --tag-output "
            "--bind-to core --map-by slot:PE=1 -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1 "
            "-x CUDA_VISIBLE_DEVICES=0 /o/train : -np 1 --host b:1 -x OMP_NUM_THREADS=1 -x "
            "OPENBLAS_NUM_THREADS=1 -x CUDA_VISIBLE_DEVICES=1 /o/train");
  EXPECT_TRUE(cmd.note.empty());
  // Arguments that bind or map the ranks (either spelling) replace zeroc
  // launch's binding: mpirun refuses two policies.
  for (const std::vector<std::string> &args : {std::vector<std::string>{"-bind-to", "none"},
                                               {"--map-by=ppr:1:node"},
                                               {"-cpus-per-proc", "2"}}) {
    opts.launcherArgs = args;
    cmd = buildCommand({{"a", {0}}}, opts);
    EXPECT_EQ(cmd.note, "the --launcher_args bind or map the ranks: zeroc launch leaves out its "
                        "own binding (--bind-to core --map-by slot:PE=1)");
    EXPECT_EQ(renderCommand(cmd).find("--bind-to core"), std::string::npos) << args[0];
  }
}

TEST(LaunchCpuList, ReadsDeepSpeedsBindCoreList) {
  std::vector<int> cpus;
  std::string error;
  ASSERT_TRUE(zeroc_rt::parseCpuList("1,3-5,7", cpus, error)) << error;
  EXPECT_EQ(cpus, (std::vector<int>{1, 3, 4, 5, 7}));
  EXPECT_EQ(zeroc_rt::formatCpuList(cpus), "1,3-5,7");
  ASSERT_TRUE(zeroc_rt::parseCpuList("0-3,4-7,65535", cpus, error)) << error;
  EXPECT_EQ(zeroc_rt::formatCpuList(cpus), "0-7,65535");
  // Blanks around items and range ends, as DeepSpeed's int() skips them.
  ASSERT_TRUE(zeroc_rt::parseCpuList(" 0 - 3, 8\t", cpus, error)) << error;
  EXPECT_EQ(zeroc_rt::formatCpuList(cpus), "0-3,8");
  // DeepSpeed's parse_range_list: ascending, without overlaps.
  for (auto [text, why] : std::initializer_list<std::pair<std::string, const char *>>{
           {"", "'' is not a CPU number (0 to 65535) or a range of them such as 0-3; the list "
                "reads like 0-3,8,10-11"},
           {"0,,2", "'' is not a CPU number (0 to 65535) or a range of them such as 0-3; the "
                    "list reads like 0-3,8,10-11"},
           {"0-", "'0-' is not a CPU number (0 to 65535) or a range of them such as 0-3; the "
                  "list reads like 0-3,8,10-11"},
           {"-1", "'-1' is not a CPU number (0 to 65535) or a range of them such as 0-3; the "
                  "list reads like 0-3,8,10-11"},
           {"65536", "'65536' is not a CPU number (0 to 65535) or a range of them such as 0-3; "
                     "the list reads like 0-3,8,10-11"},
           {"5-2", "the range '5-2' is descending; write it as 2-5"},
           {"0-3,2", "'2' is not above the CPUs before it; list them in ascending order, each "
                     "once"},
           {"8,0-3", "'0-3' is not above the CPUs before it; list them in ascending order, each "
                     "once"},
           {"0,1\x1b[2J", "'1?[2J' is not a CPU number (0 to 65535) or a range of them such as "
                          "0-3; the list reads like 0-3,8,10-11"},
           {std::string(50, 'x'), "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...' is not a CPU "
                                  "number (0 to 65535) or a range of them such as 0-3; the list "
                                  "reads like 0-3,8,10-11"}}) {
    EXPECT_FALSE(zeroc_rt::parseCpuList(text, cpus, error)) << text;
    EXPECT_EQ(error, why) << text;
  }
}

TEST(LaunchCpuList, SplitsAsDeepSpeedsNumactlCommand) {
  const std::vector<int> cpus = {0, 1, 2, 3, 8, 9, 10};
  // 7 CPUs for 3 ranks: 2 each, in order, the last one unused.
  EXPECT_EQ(zeroc_rt::cpusOfLocalRank(cpus, 0, 3), (std::vector<int>{0, 1}));
  EXPECT_EQ(zeroc_rt::cpusOfLocalRank(cpus, 1, 3), (std::vector<int>{2, 3}));
  EXPECT_EQ(zeroc_rt::cpusOfLocalRank(cpus, 2, 3), (std::vector<int>{8, 9}));
  EXPECT_TRUE(zeroc_rt::cpusOfLocalRank(cpus, 0, 8).empty());
  EXPECT_TRUE(zeroc_rt::cpusOfLocalRank(cpus, 3, 3).empty());
}

TEST(LaunchCommand, BindCoreListLeavesBindingToTheRanks) {
  CommandOptions opts;
  opts.trainPath = "/o/train";
  opts.trainArgs = {"--steps", "2"};
  opts.localCores = 2;
  opts.bindCores = {0, 1, 2, 3, 8, 9, 10};
  // Threads per rank from the list (DeepSpeed's OMP_NUM_THREADS), not from
  // this machine's cores; mpirun leaves the ranks unbound.
  Command cmd = buildCommand({{"a", {0, 1, 2}}, {"b", {0}}}, opts);
  EXPECT_EQ(cmd.threads, 2);
  EXPECT_TRUE(cmd.note.empty());
  EXPECT_EQ(renderCommand(cmd),
            "mpirun -np 4 --host a:3,b:1 --tag-output --bind-to none -x OMP_NUM_THREADS=2 -x "
            "OPENBLAS_NUM_THREADS=2 /o/train --bind-core-list 0-3,8-10 --steps 2");
  opts.threadsPerRank = 4;
  EXPECT_EQ(buildCommand({{"a", {0, 1, 2}}}, opts).threads, 4);
  EXPECT_EQ(ranksPerHost({{"a", {0, 1, 2}}, {"b", {0}}}), 3);
  EXPECT_EQ(bindCoreListConflict(opts, {"OMP_PROC_BIND=false", "PATH=/bin"}), "");
}

TEST(LaunchCommand, BindCoreListWithLauncherArgsAndOpenMpAffinity) {
  CommandOptions opts;
  opts.trainPath = "/o/train";
  opts.localCores = 2;
  opts.threadsPerRank = 1;
  opts.bindCores = {0, 1};
  // Mapping options stay mpirun's; the ranks still start unbound.
  opts.launcherArgs = {"--map-by", "ppr:2:node"};
  EXPECT_EQ(bindCoreListConflict(opts, {}), "");
  Command cmd = buildCommand({{"a", {0, 1}}}, opts);
  EXPECT_TRUE(cmd.note.empty());
  EXPECT_EQ(renderCommand(cmd),
            "mpirun --map-by ppr:2:node -np 2 --host a:2 --tag-output --bind-to none -x "
            "OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1 /o/train --bind-core-list 0-1");
  // Their own -bind-to none replaces zeroc launch's; any other binding is
  // an error.
  opts.launcherArgs = {"-bind-to", "none"};
  EXPECT_EQ(bindCoreListConflict(opts, {}), "");
  EXPECT_EQ(renderCommand(buildCommand({{"a", {0, 1}}}, opts)).find("--bind-to"),
            std::string::npos);
  for (const std::vector<std::string> &args : {std::vector<std::string>{"--bind-to", "core"},
                                               {"-bind-to=socket"},
                                               {"-cpus-per-proc", "2"},
                                               {"--map-by", "slot:PE=2"},
                                               {"-rf", "ranks.txt"},
                                               {"--cpu-set", "0-3"},
                                               {"--mca", "hwloc_base_binding_policy", "core"}}) {
    CommandOptions binding = opts;
    binding.launcherArgs = args;
    EXPECT_NE(bindCoreListConflict(binding, {}), "") << args[0];
  }
  opts.launcherArgs = {"--bind-to", "core"};
  EXPECT_EQ(bindCoreListConflict(opts, {}),
            "--bind_core_list: the --launcher_args bind the ranks (-bind-to core), and each rank "
            "binds itself to its share of the list; drop that option, or give -bind-to none");
  opts.launcherArgs.clear();
  EXPECT_EQ(bindCoreListConflict(opts, {"KMP_AFFINITY=granularity=fine,compact"}),
            "--bind_core_list: KMP_AFFINITY is set, which makes OpenMP pin each thread to places "
            "of its own and undoes the ranks' binding (DeepSpeed refuses KMP_AFFINITY there too); "
            "unset it");
  EXPECT_NE(bindCoreListConflict(opts, {"OMP_PROC_BIND=close"}), "");
  EXPECT_NE(bindCoreListConflict(opts, {"GOMP_CPU_AFFINITY=0-3"}), "");
  // OMP_PLACES turns binding on unless OMP_PROC_BIND says false; empty
  // values are unset ones.
  EXPECT_NE(bindCoreListConflict(opts, {"OMP_PLACES=cores"}), "");
  EXPECT_EQ(bindCoreListConflict(opts, {"OMP_PLACES=cores", "OMP_PROC_BIND=FALSE"}), "");
  EXPECT_EQ(bindCoreListConflict(opts, {"OMP_PROC_BIND=", "KMP_AFFINITY="}), "");
  // A mapping without processing elements per rank does not bind.
  opts.launcherArgs = {"--map-by", "ppr:1:socket", "--mca", "btl", "self,tcp"};
  EXPECT_EQ(bindCoreListConflict(opts, {}), "");
  opts.launcherArgs.clear();
  // .deepspeed_env's variables reach the ranks too; the message says so.
  opts.fileVariables = {{"KMP_AFFINITY", "compact"}};
  EXPECT_EQ(bindCoreListConflict(opts, {}),
            "--bind_core_list: KMP_AFFINITY is set in .deepspeed_env, which makes OpenMP pin each "
            "thread to places of its own and undoes the ranks' binding (DeepSpeed refuses "
            "KMP_AFFINITY there too); unset it");
  opts.fileVariables.clear();
  // Without --bind_core_list nothing conflicts.
  opts.bindCores.clear();
  EXPECT_EQ(bindCoreListConflict(opts, {"KMP_AFFINITY=compact"}), "");
}

TEST(LaunchEnvironment, ForwardsDeepSpeedsPrefixes) {
  EXPECT_EQ(
      forwardedVariables({"PATH=/bin", "NCCL_DEBUG=INFO", "UCX_TLS=rc", "ZEROC_RT_X=1",
                          "PYTHONPATH=a=b", "NCCL_DEBUG=WARN", "MV2_X=", "HOME=/r", "NCCL BAD=1",
                          "NOVALUE"}),
      (std::vector<std::string>{"MV2_X", "NCCL_DEBUG", "PYTHONPATH", "UCX_TLS", "ZEROC_RT_X"}));
}

TEST(LaunchEnvironment, ParsesDeepSpeedEnvFiles) {
  using Variables = std::vector<std::pair<std::string, std::string>>;
  Variables variables;
  std::vector<std::string> skipped;
  std::string error;
  EXPECT_TRUE(parseEnvFile("# cluster settings\nNCCL_IB_DISABLE=1\r\n\n  \n A_B = x=y, z \n"
                           "EMPTY=\nNCCL_IB_DISABLE=0\n",
                           "e", variables, skipped, error))
      << error;
  // Blanks around KEY and VALUE go, as DeepSpeed strips them; a KEY set
  // again keeps its place and takes the later value.
  EXPECT_EQ(variables, (Variables{{"NCCL_IB_DISABLE", "0"}, {"A_B", "x=y, z"}, {"EMPTY", ""}}));
  for (const char *bad : {"NOEQUALS\n", "1X=2\n", "A B=1\n", "=1\n", "-x=1"}) {
    variables.clear();
    EXPECT_FALSE(parseEnvFile(std::string("OK=1\n") + bad, "e", variables, skipped, error)) << bad;
    EXPECT_EQ(error,
              "e:2: expected KEY=VALUE with KEY a variable's name (letters, digits and '_')");
  }
  variables.clear();
  EXPECT_FALSE(parseEnvFile(llvm::StringRef("OK=1\nX=a\0b\n", 11), "e", variables, skipped, error));
  EXPECT_EQ(error, "e:2: a NUL byte (a .deepspeed_env line is KEY=VALUE text)");
  // The bound is per file: variables already there do not count.
  variables = Variables(300, {"V", "1"});
  std::string many;
  for (int i = 0; i <= kMaxEnvEntries; ++i)
    many += "V" + std::to_string(i) + "=1\n";
  EXPECT_FALSE(parseEnvFile(many, "e", variables, skipped, error));
  EXPECT_EQ(error, "e:257: more than 256 variables");
  EXPECT_TRUE(isLaunchVariable("OMP_NUM_THREADS"));
  EXPECT_FALSE(isLaunchVariable("NCCL_DEBUG"));
  // zeroc launch's own variables are left out, and named.
  variables.clear();
  EXPECT_TRUE(parseEnvFile("OMP_NUM_THREADS=8\nA=1\n", "e", variables, skipped, error));
  EXPECT_EQ(variables, (Variables{{"A", "1"}}));
  EXPECT_EQ(skipped, (std::vector<std::string>{"OMP_NUM_THREADS"}));
}

TEST(LaunchCommand, ExportsByNameBeforeItsOwnVariables) {
  CommandOptions opts;
  opts.trainPath = "/o/train";
  opts.localCores = 2;
  opts.threadsPerRank = 1;
  opts.gpuProgram = true;
  opts.forwarded = {"NCCL_DEBUG"};
  opts.fileVariables = {{"X", "a b"}};
  Command cmd = buildCommand({{"a", {0}}, {"b", {1}}}, opts);
  // The file's values travel in mpirun's environment, not on its command line.
  EXPECT_EQ(renderCommand(cmd),
            "X='a b' mpirun -np 1 --host a:1 --tag-output --bind-to core --map-by slot:PE=1 -x "
            "NCCL_DEBUG -x X -x OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1 -x "
            "CUDA_VISIBLE_DEVICES=0 /o/train : -np 1 --host b:1 -x NCCL_DEBUG -x X -x "
            "OMP_NUM_THREADS=1 -x OPENBLAS_NUM_THREADS=1 -x CUDA_VISIBLE_DEVICES=1 /o/train");
}

TEST(LaunchPlan, WorldSizeTargetAndRecompileHint) {
  PlanInfo plan;
  std::string error;
  EXPECT_TRUE(parsePlan("{\"world_size\": 2, \"stage\": 2}", plan, error));
  EXPECT_EQ(plan.worldSize, 2);
  EXPECT_EQ(plan.target, ""); // older than the key: zeroc launch looks for train.cu
  EXPECT_TRUE(parsePlan("{\"world_size\": 4, \"target\": \"cuda\"}", plan, error));
  EXPECT_EQ(plan.worldSize, 4);
  EXPECT_EQ(plan.target, "cuda");
  EXPECT_FALSE(parsePlan("{\"world_size\": 4, \"target\": \"tpu\"}", plan, error));
  EXPECT_EQ(error, "has an unknown \"target\"; recompile the model");
  EXPECT_FALSE(parsePlan("{\"stage\": 2}", plan, error));
  EXPECT_EQ(error, "has no valid \"world_size\"; recompile the model");
  EXPECT_FALSE(parsePlan("{", plan, error));
  EXPECT_EQ(error.substr(0, 18), "is not valid JSON ");
  EXPECT_EQ(parseRecompileHint("x;\n  program.recompile_hint = \"zeroc "
                               "compile 'a\\\"b' \\303\\251 -o o\";\n"),
            "zeroc compile 'a\"b' \xc3\xa9 -o o");
  EXPECT_EQ(parseRecompileHint("no hint"), "");
}
