//===- train_engine_mpi.cc - zeroc_rt_train_main on 2+ MPI ranks -*- C++ -*-===//
//
// Run under mpiexec with any number of ranks W. For ZeRO stages 0-3 x grad
// accumulation 1 and 2 x three optimizer setups (AdamW; Adam with L2 decay
// and clipping; SGD with momentum, decay and clipping) it trains the program
// of train_test_model.h in-process with the engine, then every rank checks:
//   - the exit code (all ranks),
//   - rank 0: the JSONL losses and grad norms against the plain C++
//     reference (1e-6 relative) and against stage 0 of the same setup,
//   - all ranks: its --save-params files against the reference, and that
//     every rank saved bit-identical parameters (all-gather).
// Then LR schedules with loss scaling and a gradient overflow injected on the
// last rank only (every rank must skip the same steps; stages 0-3 against
// the reference with skips), and the error paths that must fail on all ranks
// together: world-size mismatch, missing data everywhere, a file missing on
// one rank only, a NaN loss on one rank, a micro-step failure on one rank
// (stages 0-1), a bad grad_accumulate count everywhere (stage 1) and the
// loss scale reaching its minimum after overflows on one rank (stage 2). (A micro-step failure in
// stages 2-3 with W > 1 deliberately skips MPI_Finalize so that the launcher
// ends the job; that cannot run inside this one job.)
// Prints "rank R: N passed, M failed" per rank and the total on rank 0; exits
// non-zero on any failure.
//
//===----------------------------------------------------------------------===//

#include "check_counter.h"
#include "train_test_model.h"

#include "zeroc_rt/zeroc_rt.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sys/stat.h>
#include <unistd.h>

using namespace zeroc_rt::test::train;
using zeroc_rt::test::CheckCounter;

namespace {

zeroc_rt_comm_t *g_comm = nullptr;
int g_rank = 0, g_world = 1;

struct Workspace {
  explicit Workspace(const ModelConfig &cfg, const std::string &fixedDir = "")
      : dir(fixedDir), dataDir(dir.file("data")), blob(dir.file("model.bin")),
        data(makeData(cfg.samples, cfg.dtype)) {
    ::mkdir(dataDir.c_str(), 0777);
    ok = writeData(dataDir, data, cfg.dtype).empty() &&
         writeBlob(blob, cfg.dtype).empty();
  }
  ScratchDir dir;
  std::string dataDir, blob;
  Data data;
  bool ok = false;
};

std::string str(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

void checkError(CheckCounter &c, const RunResult &r, const std::string &needle,
                const std::string &what) {
  const std::string prefix = "rank " + std::to_string(g_rank) + ": train: error: ";
  c.check(r.rc == 1, what + ": exit code 1", "rc " + std::to_string(r.rc));
  c.check(r.err.rfind(prefix, 0) == 0 &&
              std::count(r.err.begin(), r.err.end(), '\n') == 1,
          what + ": one '" + prefix + "' line", r.err);
  c.check(r.err.find(needle) != std::string::npos,
          what + ": message has '" + needle + "'", r.err);
}

std::map<std::string, std::vector<double>> g_stage0Losses;

void trainAndCheck(CheckCounter &c, const char *name, ModelConfig cfg, int stage,
                   int gas) {
  const int64_t steps = 6;
  cfg.world = g_world;
  cfg.stage = stage;
  cfg.gradAccum = gas;
  const std::string what = std::string(name) + " stage " + std::to_string(stage) +
                           " gas " + std::to_string(gas);
  Workspace ws(cfg);
  c.check(ws.ok, what + ": fixtures written");
  Reference ref = reference(cfg, ws.data, steps);
  TestProgram program(cfg, ws.blob);
  const std::string log = ws.dir.file("log.jsonl");
  const std::string params = ws.dir.file("params");
  RunResult r = runTrain(program.get(),
                         {"--data", ws.dataDir, "--steps", std::to_string(steps),
                          "--log-jsonl", log, "--save-params", params, "--quiet"});
  c.check(r.rc == 0 && r.err.empty() && r.out.empty(), what + ": runs cleanly",
          "rc " + std::to_string(r.rc) + ": " + r.err + r.out);

  if (g_rank == 0) {
    std::vector<JsonRecord> records = readJsonl(log);
    bool sizeOk = c.check(records.size() == static_cast<size_t>(steps),
                          what + ": JSONL lines",
                          std::to_string(records.size()));
    const std::string key = std::string(name) + "/" + std::to_string(gas);
    std::vector<double> losses;
    for (size_t i = 0; sizeOk && i < records.size(); ++i) {
      const JsonRecord &rec = records[i];
      std::string at = what + " step " + std::to_string(i + 1);
      c.check(rec.hasAllKeys && rec.step == static_cast<double>(i + 1) &&
                  rec.lr == cfg.optimizer.lr,
              at + ": record fields");
      c.check(near(rec.loss, ref.losses[i], 1e-6), at + ": loss",
              str(rec.loss) + " vs reference " + str(ref.losses[i]));
      c.check(near(rec.gradNorm, ref.gradNorms[i], 1e-6), at + ": grad_norm",
              str(rec.gradNorm) + " vs reference " + str(ref.gradNorms[i]));
      losses.push_back(rec.loss);
    }
    if (stage == 0) {
      g_stage0Losses[key] = losses;
    } else {
      const std::vector<double> &base = g_stage0Losses[key];
      bool same = base.size() == losses.size();
      for (size_t i = 0; same && i < losses.size(); ++i)
        same = near(losses[i], base[i], 1e-9);
      c.check(same, what + ": losses equal stage 0's");
    }
    std::string json = readFile(params + "/params.json");
    c.check(json.rfind("{\"psi\": 8, \"num_params\": 2, \"params\": [", 0) == 0,
            what + ": params.json", json);
  }

  std::string rankDir = params + "/rank" + std::to_string(g_rank);
  std::string error;
  std::vector<double> mine = readArray(rankDir + "/fc.weight.npy", nullptr, nullptr, &error);
  std::vector<double> b = readArray(rankDir + "/fc_bias.npy", nullptr, nullptr, &error);
  mine.insert(mine.end(), b.begin(), b.end());
  bool loaded = c.check(mine.size() == 8, what + ": saved parameters", error);
  if (!loaded)
    mine.assign(8, 0.0);
  for (size_t i = 0; loaded && i < 8; ++i) {
    double want = i < 6 ? ref.w[i] : ref.b[i - 6];
    c.check(near(mine[i], want, 1e-6), what + ": parameter " + std::to_string(i),
            str(mine[i]) + " vs reference " + str(want));
  }
  std::vector<double> all(8 * static_cast<size_t>(g_world));
  zeroc_rt_status_t status =
      zeroc_rt_comm_all_gather(g_comm, mine.data(), all.data(), 8, ZEROC_RT_DTYPE_F64);
  c.check(status == nullptr, what + ": all_gather", zeroc_rt_status_message(status));
  zeroc_rt_status_free(status);
  bool identical = true;
  for (int r2 = 1; r2 < g_world; ++r2)
    identical = identical && std::memcmp(all.data(), all.data() + 8 * r2,
                                         8 * sizeof(double)) == 0;
  c.check(identical, what + ": every rank saved identical parameters");
}

/// LR schedule + dynamic loss scaling, overflows on the last rank only.
void scheduledAndScaled(CheckCounter &c, int stage) {
  const int64_t steps = 8;
  ModelConfig cfg = stage % 2 ? adamwConfig() : sgdClipConfig();
  cfg.world = g_world;
  cfg.stage = stage;
  cfg.gradAccum = 2;
  if (stage % 2) {
    cfg.schedule.type = ZEROC_RT_LR_ONE_CYCLE;
    cfg.schedule.cycle_min_lr = 0.005;
    cfg.schedule.cycle_max_lr = 0.05;
    cfg.schedule.cycle_first_step_size = 2;
    cfg.schedule.cycle_second_step_size = 3;
    cfg.schedule.decay_lr_rate = 0.2;
    cfg.schedule.decay_step_size = 1;
    cfg.schedule.cycle_momentum = 1;
    cfg.schedule.cycle_min_mom = 0.85;
    cfg.schedule.cycle_max_mom = 0.95;
  } else {
    cfg.schedule.type = ZEROC_RT_LR_WARMUP_DECAY;
    cfg.schedule.warmup_min_lr = 0.01;
    cfg.schedule.warmup_max_lr = 0.1;
    cfg.schedule.warmup_num_steps = 3;
    cfg.schedule.total_num_steps = 10;
  }
  cfg.scaler = dynamicScaler(/*window=*/2, /*hysteresis=*/2);
  g_faults = Faults();
  g_faults.overflowSteps = (1u << 1) | (1u << 2) | (1u << 5);
  g_faults.overflowOnRank = g_world - 1;
  const std::string what = "scheduled+scaled stage " + std::to_string(stage);
  Workspace ws(cfg);
  c.check(ws.ok, what + ": fixtures written");
  Reference ref = reference(cfg, ws.data, steps);
  TestProgram program(cfg, ws.blob);
  const std::string log = ws.dir.file("log.jsonl");
  const std::string params = ws.dir.file("params");
  RunResult r = runTrain(program.get(),
                         {"--data", ws.dataDir, "--steps", std::to_string(steps),
                          "--log-jsonl", log, "--save-params", params, "--quiet"});
  g_faults = Faults();
  c.check(r.rc == 0 && r.err.empty() && r.out.empty(), what + ": runs cleanly",
          "rc " + std::to_string(r.rc) + ": " + r.err + r.out);
  if (g_rank == 0) {
    std::vector<JsonRecord> records = readJsonl(log);
    bool sizeOk = c.check(records.size() == static_cast<size_t>(steps),
                          what + ": JSONL lines", std::to_string(records.size()));
    for (size_t i = 0; sizeOk && i < records.size(); ++i) {
      const JsonRecord &rec = records[i];
      std::string at = what + " step " + std::to_string(i + 1);
      c.check(rec.hasAllKeys && rec.lr == ref.lrs[i] &&
                  rec.skipped == ref.skipped[i] &&
                  rec.lossScale == ref.lossScales[i],
              at + ": lr, skipped, loss_scale",
              str(rec.lr) + " " + std::to_string(rec.skipped) + " " +
                  str(rec.lossScale) + " vs reference " + str(ref.lrs[i]) + " " +
                  std::to_string(ref.skipped[i]) + " " + str(ref.lossScales[i]));
      c.check(near(rec.loss, ref.losses[i], 1e-6), at + ": loss",
              str(rec.loss) + " vs reference " + str(ref.losses[i]));
      c.check(near(rec.gradNorm, ref.gradNorms[i], 1e-6), at + ": grad_norm",
              str(rec.gradNorm) + " vs reference " + str(ref.gradNorms[i]));
    }
  }
  std::string rankDir = params + "/rank" + std::to_string(g_rank);
  std::string error;
  std::vector<double> mine = readArray(rankDir + "/fc.weight.npy", nullptr, nullptr, &error);
  std::vector<double> b = readArray(rankDir + "/fc_bias.npy", nullptr, nullptr, &error);
  mine.insert(mine.end(), b.begin(), b.end());
  bool loaded = c.check(mine.size() == 8, what + ": saved parameters", error);
  for (size_t i = 0; loaded && i < 8; ++i) {
    double want = i < 6 ? ref.w[i] : ref.b[i - 6];
    c.check(near(mine[i], want, 1e-6), what + ": parameter " + std::to_string(i),
            str(mine[i]) + " vs reference " + str(want));
  }
}

void errorScenarios(CheckCounter &c) {
  g_faults = Faults();
  ModelConfig cfg = adamwConfig();
  cfg.world = g_world;
  {
    ModelConfig wrong = cfg;
    wrong.world = g_world + 1;
    wrong.recompileHint = "zeroc compile m.onnx --stage 1";
    Workspace ws(wrong);
    TestProgram program(wrong, ws.blob);
    RunResult r = runTrain(program.get(), {"--data", ws.dataDir, "--steps", "2"});
    checkError(c, r,
               "this program was compiled for --world-size " +
                   std::to_string(g_world + 1) + " but was started with " +
                   std::to_string(g_world) + " ranks; run it with mpirun -np " +
                   std::to_string(g_world + 1) +
                   ", or recompile: zeroc compile m.onnx --stage 1 "
                   "--world-size " + std::to_string(g_world),
               "world-size mismatch");
  }
  {
    Workspace ws(cfg);
    std::remove((ws.dataDir + "/x.npy").c_str());
    TestProgram program(cfg, ws.blob);
    RunResult r = runTrain(program.get(), {"--data", ws.dataDir, "--steps", "2"});
    checkError(c, r, "data: input 'x': '" + ws.dataDir + "/x.npy'",
               "missing data on every rank");
  }
  {
    Workspace ws(cfg);
    if (g_rank == 1)
      std::remove((ws.dataDir + "/y.npy").c_str());
    TestProgram program(cfg, ws.blob);
    RunResult r = runTrain(program.get(), {"--data", ws.dataDir, "--steps", "2"});
    checkError(c, r,
               g_rank == 1 ? "data: input 'y': '" + ws.dataDir + "/y.npy'"
                           : std::string("rank 1 failed while loading the data "
                                         "and parameters (see its error)"),
               "missing data on rank 1 only");
  }
  for (int stage : {0, 3}) {
    ModelConfig nanCfg = cfg;
    nanCfg.stage = stage;
    Workspace ws(nanCfg);
    TestProgram program(nanCfg, ws.blob);
    g_faults.nanAtStep = 1;
    g_faults.nanOnRank = g_world - 1;
    RunResult r = runTrain(program.get(), {"--data", ws.dataDir, "--steps", "4",
                                           "--quiet"});
    g_faults = Faults();
    checkError(c, r, "loss is NaN/inf at step 2",
               "NaN loss on the last rank, stage " + std::to_string(stage));
  }
  for (int stage : {0, 1}) {
    ModelConfig failCfg = cfg;
    failCfg.stage = stage;
    failCfg.gradAccum = 2;
    Workspace ws(failCfg);
    TestProgram program(failCfg, ws.blob);
    g_faults.errorAtStep = 1;
    g_faults.errorOnRank = 1;
    RunResult r = runTrain(program.get(), {"--data", ws.dataDir, "--steps", "4",
                                           "--quiet"});
    g_faults = Faults();
    checkError(c, r,
               g_rank == 1 ? std::string("step 2: micro-step (accumulation step "
                                         "1 of 2): injected micro-step failure")
                           : std::string("step 2: the micro-step failed on "
                                         "another rank (see its error)"),
               "micro-step failure on rank 1, stage " + std::to_string(stage));
  }
  {
    ModelConfig countCfg = cfg;
    countCfg.stage = 1;
    Workspace ws(countCfg);
    TestProgram program(countCfg, ws.blob);
    g_faults.wrongGradCount = true;
    RunResult r = runTrain(program.get(), {"--data", ws.dataDir, "--steps", "2",
                                           "--quiet"});
    g_faults = Faults();
    checkError(c, r, "zeroc_rt_engine_grad_accumulate: parameter 'fc.weight'",
               "bad grad_accumulate count on every rank, stage 1");
  }
  {
    // Every rank sees the same all-reduced overflow flags and fails at the
    // same step, still in step with the others (MPI is finalized normally).
    ModelConfig minCfg = cfg;
    minCfg.stage = 2;
    minCfg.scaler = dynamicScaler(1000, /*hysteresis=*/1);
    minCfg.scaler.initial_scale = 2.0;
    Workspace ws(minCfg);
    TestProgram program(minCfg, ws.blob);
    g_faults.overflowSteps = 0x3;
    g_faults.overflowOnRank = 1;
    RunResult r = runTrain(program.get(), {"--data", ws.dataDir, "--steps", "4",
                                           "--quiet"});
    g_faults = Faults();
    checkError(c, r,
               "step 2: Current loss scale already at minimum - cannot "
               "decrease scale anymore. Exiting run.",
               "loss scale at its minimum after overflows on rank 1, stage 2");
  }
}

} // namespace

/// `--desync STAGE`: a real executable's main, `return
/// zeroc_rt_train_main(...)`, with the engine owning MPI and a micro-step
/// failure on rank 1 only. In stages 2-3 the other ranks are then blocked in
/// the micro-step's collectives; rank 1 must report and return without
/// MPI_Finalize so that mpiexec ends the job (the ctest checks for rank 1's
/// error line and a bounded run time).
int desyncMain(int stage) {
  ModelConfig cfg = adamwConfig();
  cfg.stage = stage;
  // The world size is only known once MPI runs: read it from the launcher.
  const char *size = std::getenv("OMPI_COMM_WORLD_SIZE");
  cfg.world = size ? std::atoi(size) : 2;
  // Rank 0 is killed by the launcher: a fixed directory (under the working
  // directory, reused by every run) instead of a temporary one it cannot
  // remove.
  const char *rank = std::getenv("OMPI_COMM_WORLD_RANK");
  Workspace ws(cfg, "train_engine_mpi_desync.rank" +
                        std::string(rank ? rank : std::to_string(::getpid())));
  if (!ws.ok)
    return 2;
  TestProgram program(cfg, ws.blob);
  g_faults.errorAtStep = 1;
  g_faults.errorOnRank = 1;
  std::string steps = "4";
  std::vector<std::string> storage = {"train", "--data", ws.dataDir, "--steps",
                                      steps, "--quiet"};
  std::vector<char *> argv;
  for (std::string &s : storage)
    argv.push_back(s.data());
  argv.push_back(nullptr);
  return zeroc_rt_train_main(static_cast<int>(storage.size()), argv.data(),
                             program.get());
}

int main(int argc, char **argv) {
  if (argc == 3 && std::strcmp(argv[1], "--desync") == 0)
    return desyncMain(std::atoi(argv[2]));
  zeroc_rt_status_t status = zeroc_rt_comm_init_mpi(&argc, &argv, &g_comm);
  if (status) {
    std::fprintf(stderr, "init_mpi failed: %s\n", zeroc_rt_status_message(status));
    zeroc_rt_status_free(status);
    return 1;
  }
  g_rank = zeroc_rt_comm_rank(g_comm);
  g_world = zeroc_rt_comm_size(g_comm);
  CheckCounter counter("[rank " + std::to_string(g_rank) + "] ");
  counter.check(g_world >= 2, "run this test with at least 2 ranks");

  struct Named {
    const char *name;
    ModelConfig cfg;
  };
  const Named configs[] = {{"adamw", adamwConfig()},
                           {"adam_l2_clip", adamL2ClipConfig()},
                           {"sgd_clip", sgdClipConfig()}};
  for (const Named &named : configs)
    for (int gas : {1, 2})
      for (int stage = 0; stage <= 3; ++stage)
        trainAndCheck(counter, named.name, named.cfg, stage, gas);
  for (int stage = 0; stage <= 3; ++stage)
    scheduledAndScaled(counter, stage);
  if (g_world >= 2)
    errorScenarios(counter);

  int64_t local[2] = {counter.passed(), counter.failed()}, total[2] = {0, 0};
  status = zeroc_rt_comm_all_reduce(g_comm, local, total, 2, ZEROC_RT_DTYPE_I64,
                                    ZEROC_RT_REDUCE_SUM);
  bool tallied = status == nullptr;
  zeroc_rt_status_free(status);
  std::printf("rank %d: %d passed, %d failed\n", g_rank, counter.passed(),
              counter.failed());
  if (g_rank == 0 && tallied)
    std::printf("all ranks: %lld passed, %lld failed\n",
                static_cast<long long>(total[0]), static_cast<long long>(total[1]));
  std::fflush(stdout);
  zeroc_rt_status_free(zeroc_rt_comm_finalize(g_comm));
  if (!tallied)
    return 1;
  return total[1] == 0 ? 0 : 1;
}
