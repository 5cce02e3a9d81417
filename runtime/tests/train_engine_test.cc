//===- train_engine_test.cc - zeroc_rt_train_main in one process -*- C++ -*-===//
//
// Runs the hand-written program of train_test_model.h through
// zeroc_rt_train_main with world size 1 (MPI singleton): every stage against
// the plain C++ reference, the JSONL log, console lines, --save-params, and
// every error path. The test keeps its own MPI communicator alive for the
// whole process so that the engine's communicators never finalize MPI (it
// cannot be re-initialized).
//
//===----------------------------------------------------------------------===//

#include "train_test_model.h"

#include "train/lr_schedule.h"
#include "train/monitor.h"
#include "zeroc_rt/zeroc_rt.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <set>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

using namespace zeroc_rt::test::train;

namespace {

class MpiEnvironment : public ::testing::Environment {
public:
  void SetUp() override {
    zeroc_rt_status_t status = zeroc_rt_comm_init_mpi(nullptr, nullptr, &comm);
    ASSERT_EQ(status, nullptr) << zeroc_rt_status_message(status);
  }
  void TearDown() override { zeroc_rt_status_free(zeroc_rt_comm_finalize(comm)); }

private:
  zeroc_rt_comm_t *comm = nullptr;
};

/// A data directory and a blob for one configuration.
struct Workspace {
  explicit Workspace(const ModelConfig &cfg)
      : dataDir(dir.file("data")), blob(dir.file("model.bin")),
        data(makeData(cfg.samples, cfg.dtype)) {
    ::mkdir(dataDir.c_str(), 0777);
    EXPECT_EQ(writeData(dataDir, data, cfg.dtype), "");
    EXPECT_EQ(writeBlob(blob, cfg.dtype), "");
  }
  ScratchDir dir;
  std::string dataDir, blob;
  Data data;
};

struct Outcome {
  RunResult run;
  std::vector<JsonRecord> log;
  std::vector<double> w, b;
};

Outcome train(const ModelConfig &cfg, Workspace &ws, int64_t steps,
              const std::string &tag) {
  TestProgram program(cfg, ws.blob);
  std::string log = ws.dir.file(tag + ".jsonl");
  std::string params = ws.dir.file(tag + ".params");
  Outcome o;
  o.run = runTrain(program.get(),
                   {"--data", ws.dataDir, "--steps", std::to_string(steps),
                    "--log-jsonl", log, "--save-params", params, "--quiet"});
  o.log = readJsonl(log);
  std::string error;
  o.w = readArray(params + "/rank0/fc.weight.npy", nullptr, nullptr, &error);
  o.b = readArray(params + "/rank0/fc_bias.npy", nullptr, nullptr, &error);
  return o;
}

/// Checks a run against the reference; `tol` relative.
void expectMatchesReference(const Outcome &o, const Reference &ref,
                            const ModelConfig &cfg, double tol,
                            const std::string &what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(o.run.rc, 0) << o.run.err;
  EXPECT_EQ(o.run.err, "");
  EXPECT_EQ(o.run.out, ""); // --quiet
  (void)cfg;
  ASSERT_EQ(o.log.size(), ref.losses.size());
  for (size_t i = 0; i < o.log.size(); ++i) {
    const JsonRecord &r = o.log[i];
    EXPECT_TRUE(r.hasAllKeys) << "step " << i + 1;
    EXPECT_EQ(r.step, static_cast<double>(i + 1));
    EXPECT_EQ(r.lr, ref.lrs[i]) << "step " << i + 1;
    EXPECT_EQ(r.lossScale, ref.lossScales[i]) << "step " << i + 1;
    EXPECT_EQ(r.skipped, ref.skipped[i]) << "step " << i + 1;
    EXPECT_TRUE(near(r.loss, ref.losses[i], tol))
        << "step " << i + 1 << ": loss " << r.loss << " vs " << ref.losses[i];
    EXPECT_TRUE(near(r.gradNorm, ref.gradNorms[i], tol))
        << "step " << i + 1 << ": grad_norm " << r.gradNorm << " vs "
        << ref.gradNorms[i];
    EXPECT_GE(r.timeMs, 0.0);
    EXPECT_GT(r.samplesPerS, 0.0);
  }
  ASSERT_EQ(o.w.size(), 6u);
  ASSERT_EQ(o.b.size(), 2u);
  for (size_t i = 0; i < 6; ++i)
    EXPECT_TRUE(near(o.w[i], ref.w[i], tol)) << "W[" << i << "] " << o.w[i]
                                             << " vs " << ref.w[i];
  for (size_t i = 0; i < 2; ++i)
    EXPECT_TRUE(near(o.b[i], ref.b[i], tol)) << "b[" << i << "] " << o.b[i]
                                             << " vs " << ref.b[i];
}

size_t lineCount(const std::string &text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

/// Expects exactly one "train: error: ..." line containing `needle`.
void expectError(const RunResult &r, const std::string &needle) {
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err.rfind("train: error: ", 0), 0u) << r.err;
  EXPECT_EQ(lineCount(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find(needle), std::string::npos)
      << "error '" << r.err << "' lacks '" << needle << "'";
}

std::vector<std::string> basicArgs(const Workspace &ws, int steps = 2) {
  return {"--data", ws.dataDir, "--steps", std::to_string(steps), "--quiet"};
}

class FaultReset : public ::testing::Test {
protected:
  void SetUp() override { g_faults = Faults(); }
  void TearDown() override { g_faults = Faults(); }
};

using TrainEngine = FaultReset;
using TrainErrors = FaultReset;

//===----------------------------------------------------------------------===//
// Numerics
//===----------------------------------------------------------------------===//

TEST_F(TrainEngine, EveryStageMatchesTheReferenceF64) {
  const int64_t steps = 7;
  struct Named {
    const char *name;
    ModelConfig cfg;
  };
  const Named configs[] = {{"adamw", adamwConfig()},
                           {"adam_l2_clip", adamL2ClipConfig()},
                           {"sgd_clip", sgdClipConfig()}};
  for (const Named &named : configs) {
    for (int gas : {1, 2}) {
      for (int mb : {2, 3}) {
        ModelConfig cfg = named.cfg;
        cfg.gradAccum = gas;
        cfg.microBatch = mb;
        Workspace ws(cfg);
        Reference ref = reference(cfg, ws.data, steps);
        if (cfg.clip > 0) { // the clip configs must actually clip
          EXPECT_GT(*std::max_element(ref.gradNorms.begin(), ref.gradNorms.end()),
                    cfg.clip);
        }
        std::vector<Outcome> outcomes;
        for (int stage = 0; stage <= 3; ++stage) {
          cfg.stage = stage;
          std::string tag = std::string(named.name) + "_gas" +
                            std::to_string(gas) + "_mb" + std::to_string(mb) +
                            "_stage" + std::to_string(stage);
          outcomes.push_back(train(cfg, ws, steps, tag));
          expectMatchesReference(outcomes.back(), ref, cfg, 1e-9, tag);
        }
        // World size 1: every stage does the same arithmetic, bit for bit.
        for (int stage = 1; stage <= 3; ++stage) {
          SCOPED_TRACE(std::string(named.name) + " stage " + std::to_string(stage));
          ASSERT_EQ(outcomes[stage].log.size(), outcomes[0].log.size());
          for (size_t i = 0; i < outcomes[0].log.size(); ++i) {
            EXPECT_EQ(outcomes[stage].log[i].loss, outcomes[0].log[i].loss);
            EXPECT_EQ(outcomes[stage].log[i].gradNorm, outcomes[0].log[i].gradNorm);
          }
          EXPECT_EQ(outcomes[stage].w, outcomes[0].w);
          EXPECT_EQ(outcomes[stage].b, outcomes[0].b);
        }
      }
    }
  }
}

TEST_F(TrainEngine, F32StagesMatchTheReference) {
  for (int stage : {0, 1, 2, 3}) {
    ModelConfig cfg = adamL2ClipConfig();
    cfg.dtype = ZEROC_RT_DTYPE_F32;
    cfg.stage = stage;
    cfg.gradAccum = 2;
    Workspace ws(cfg);
    Reference ref = reference(cfg, ws.data, 6);
    Outcome o = train(cfg, ws, 6, "f32_stage" + std::to_string(stage));
    expectMatchesReference(o, ref, cfg, 1e-4, "f32 stage " + std::to_string(stage));
  }
}

TEST_F(TrainEngine, ZeroStepsSavesTheInitialParameters) {
  ModelConfig cfg = adamwConfig();
  cfg.stage = 3;
  Workspace ws(cfg);
  Outcome o = train(cfg, ws, 0, "zero");
  ASSERT_EQ(o.run.rc, 0) << o.run.err;
  EXPECT_TRUE(o.log.empty());
  EXPECT_TRUE(std::filesystem::exists(ws.dir.file("zero.jsonl")));
  EXPECT_EQ(o.w, initialW(cfg.dtype));
  EXPECT_EQ(o.b, initialB(cfg.dtype));
}

TEST_F(TrainEngine, SaveParamsWritesNpyFilesAndParamsJson) {
  for (zeroc_rt_dtype_t dtype : {ZEROC_RT_DTYPE_F64, ZEROC_RT_DTYPE_F32}) {
    ModelConfig cfg = adamwConfig();
    cfg.dtype = dtype;
    cfg.stage = 2;
    Workspace ws(cfg);
    Outcome o = train(cfg, ws, 2, "save");
    ASSERT_EQ(o.run.rc, 0) << o.run.err;
    zeroc_rt_dtype_t saved;
    std::vector<int64_t> dims;
    std::string error;
    readArray(ws.dir.file("save.params/rank0/fc.weight.npy"), &saved, &dims, &error);
    EXPECT_EQ(error, "");
    EXPECT_EQ(saved, dtype);
    EXPECT_EQ(dims, (std::vector<int64_t>{3, 2}));
    readArray(ws.dir.file("save.params/rank0/fc_bias.npy"), &saved, &dims, &error);
    EXPECT_EQ(saved, dtype);
    EXPECT_EQ(dims, (std::vector<int64_t>{2}));
    std::string type = dtype == ZEROC_RT_DTYPE_F64 ? "float64" : "float32";
    EXPECT_EQ(readFile(ws.dir.file("save.params/params.json")),
              "{\"psi\": 8, \"num_params\": 2, \"params\": [\n"
              "  {\"name\": \"fc.weight\", \"file\": \"fc.weight.npy\", "
              "\"shape\": [3, 2], \"numel\": 6, \"dtype\": \"" + type + "\"},\n"
              "  {\"name\": \"fc/bias\", \"file\": \"fc_bias.npy\", "
              "\"shape\": [2], \"numel\": 2, \"dtype\": \"" + type + "\"}\n"
              "], \"buffers\": [\n]}\n");
  }
}

TEST_F(TrainEngine, DenormalsAreFlushedUnlessKept) {
  // --denormals flush (the default) sets FTZ and DAZ on the compute thread
  // for the run only; keep leaves gradual underflow.
  ModelConfig cfg = adamwConfig();
  Workspace ws(cfg);
  TestProgram program(cfg, ws.blob);
  const bool before = flushingDenormalsHere();
  RunResult r = runTrain(program.get(), {"--data", ws.dataDir, "--steps", "1", "--quiet"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(g_microStepFlushedDenormals);
  EXPECT_EQ(flushingDenormalsHere(), before);
  r = runTrain(program.get(), {"--data", ws.dataDir, "--steps", "1", "--quiet",
                               "--denormals", "keep"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_FALSE(g_microStepFlushedDenormals);
}

TEST_F(TrainEngine, TraceWritesChromeTraceEvents) {
  // --trace DIR: DIR/rank0.trace.json with the micro-step's ops (named by
  // program.op_names) and the engine's phases on the compute track (tid 0)
  // and the collectives, with their bytes, on the communication track.
  ModelConfig cfg = adamwConfig();
  cfg.gradAccum = 2;
  Workspace ws(cfg);
  TestProgram program(cfg, ws.blob);
  const std::string dir = ws.dir.file("trace");
  RunResult r = runTrain(program.get(), {"--data", ws.dataDir, "--steps", "2",
                                         "--quiet", "--trace", dir});
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::string text = readFile(dir + "/rank0.trace.json");
  auto count = [&](const std::string &needle) {
    size_t n = 0;
    for (size_t at = text.find(needle); at != std::string::npos;
         at = text.find(needle, at + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(text.rfind("{\"displayTimeUnit\": \"ms\", \"otherData\": {\"rank\": 0, "
                       "\"dropped_events\": 0}, \"traceEvents\": [", 0), 0u);
  EXPECT_EQ(count("{\"name\": \"test.forward\", \"cat\": \"op\", \"ph\": \"X\", "
                  "\"pid\": 0, \"tid\": 0, "), 4u); // 2 steps x 2 micro-steps
  EXPECT_EQ(count("\"name\": \"test.backward\""), 4u);
  EXPECT_EQ(count("\"name\": \"micro_step\", \"cat\": \"engine\""), 4u);
  EXPECT_EQ(count("\"name\": \"optimizer_step\", \"cat\": \"engine\""), 2u);
  // The loss all-reduce of each step (3 doubles) is in place on one rank:
  // nothing runs, and the communication track has none (test/e2e/trace.test
  // traces two ranks' collectives).
  EXPECT_EQ(count("\"cat\": \"collective\""), 0u);
  EXPECT_EQ(count("\"args\": {\"bytes\": 24}"), 0u);
  EXPECT_EQ(text.substr(text.size() - 4), "\n]}\n");

  // A --trace that is a file is an error before the first step.
  RunResult bad = runTrain(program.get(), {"--data", ws.dataDir, "--steps", "1",
                                           "--quiet", "--trace",
                                           ws.blob});
  EXPECT_EQ(bad.rc, 1);
  expectError(bad, "--trace: ");
}

TEST_F(TrainEngine, BuffersAreUpdatedByEveryMicroStepAndSaved) {
  // Every micro-step adds its micro-batch's mean of x[:, :2] to the buffer;
  // the engine keeps it across micro-steps and steps at every stage, and
  // --save-params writes it next to the parameters.
  for (int stage : {0, 3}) {
    ModelConfig cfg = adamwConfig();
    cfg.stage = stage;
    cfg.gradAccum = 2;
    cfg.buffer = true;
    Workspace ws(cfg);
    Outcome o = train(cfg, ws, 3, "buf");
    ASSERT_EQ(o.run.rc, 0) << o.run.err;
    Data data = makeData(cfg.samples, cfg.dtype);
    std::vector<double> want = initialB(cfg.dtype);
    for (int64_t m = 0; m < 3 * cfg.gradAccum; ++m)
      for (int64_t j = 0; j < kOutFeatures; ++j) {
        double sum = 0;
        for (int64_t i = 0; i < cfg.microBatch; ++i)
          sum += data.x[static_cast<size_t>(((m * cfg.microBatch + i) % cfg.samples) *
                                                kInFeatures + j)];
        want[static_cast<size_t>(j)] += sum / cfg.microBatch;
      }
    zeroc_rt_dtype_t saved;
    std::vector<int64_t> dims;
    std::string error;
    std::vector<double> got = readArray(ws.dir.file("buf.params/rank0/bn.count.npy"),
                                        &saved, &dims, &error);
    ASSERT_EQ(error, "");
    EXPECT_EQ(dims, (std::vector<int64_t>{2}));
    ASSERT_EQ(got.size(), want.size());
    for (size_t j = 0; j < got.size(); ++j)
      EXPECT_NEAR(got[j], want[j], 1e-12) << "stage " << stage << " element " << j;
    EXPECT_NE(readFile(ws.dir.file("buf.params/params.json"))
                  .find("\"buffers\": [\n  {\"name\": \"bn.count\", \"file\": "
                        "\"bn.count.npy\", \"shape\": [2], \"numel\": 2, "
                        "\"dtype\": \"float64\"}\n]}"),
              std::string::npos);
  }
}

TEST_F(TrainEngine, JsonlIsTruncatedAndWellFormed) {
  ModelConfig cfg = adamwConfig();
  Workspace ws(cfg);
  TestProgram program(cfg, ws.blob);
  std::string log = ws.dir.file("log.jsonl");
  {
    std::FILE *f = std::fopen(log.c_str(), "w");
    std::fputs("old line 1\nold line 2\nold line 3\nold line 4\n", f);
    std::fclose(f);
  }
  RunResult r = runTrain(program.get(), {"--data", ws.dataDir, "--steps", "3",
                                         "--quiet", "--log-jsonl=" + log});
  ASSERT_EQ(r.rc, 0) << r.err;
  std::string text = readFile(log);
  EXPECT_EQ(lineCount(text), 3u);
  std::regex line(R"(\{"step": [0-9]+, "loss": [-+0-9.e]+, "lr": [-+0-9.e]+, )"
                  R"("grad_norm": [-+0-9.e]+, "loss_scale": 1\.0, )"
                  R"("skipped": false, "time_ms": [0-9.]+, )"
                  R"("samples_per_s": [0-9.]+, "time_fwd_ms": [0-9.]+, )"
                  R"("time_bwd_ms": [0-9.]+, "time_bwd_inner_ms": [0-9.]+, )"
                  R"("time_bwd_allreduce_ms": [0-9.]+, "time_step_ms": [0-9.]+, )"
                  R"("max_allocated_bytes": [1-9][0-9]*\})");
  size_t start = 0;
  for (int i = 0; i < 3; ++i) {
    size_t end = text.find('\n', start);
    std::string l = text.substr(start, end - start);
    EXPECT_TRUE(std::regex_match(l, line)) << l;
    EXPECT_EQ(l.rfind("{\"step\": " + std::to_string(i + 1) + ",", 0), 0u) << l;
    start = end + 1;
  }
}

TEST_F(TrainEngine, ConsoleHeaderAndStepLines) {
  ModelConfig cfg = adamwConfig();
  cfg.stage = 1;
  cfg.gradAccum = 2;
  cfg.stepsPerPrint = 3;
  Workspace ws(cfg);
  TestProgram program(cfg, ws.blob);
  RunResult r = runTrain(program.get(), {"--data", ws.dataDir, "--steps", "7"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "");
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < r.out.size()) {
    size_t end = r.out.find('\n', start);
    lines.push_back(r.out.substr(start, end - start));
    start = end + 1;
  }
  ASSERT_EQ(lines.size(), 7u) << r.out;
  EXPECT_EQ(lines[0], "zeroc train: stage 1, world size 1, 2 parameters (8 "
                      "elements), micro batch 2, grad accum 2, 10 samples");
  const char *steps[] = {"3", "6", "7"};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(lines[2 * i + 1], "[Rank 0] step=" + std::string(steps[i]) +
                                    ", skipped=0, lr=[0.05], mom=[(0.9, 0.999)]");
    std::regex line("step " + std::string(steps[i]) +
                    R"(/7 \| loss [0-9]+\.[0-9]{6} \| lr 5\.000e-02 \| )"
                    R"(loss_scale 1 \| grad_norm [0-9]+\.[0-9]{4} \| )"
                    R"([0-9]+\.[0-9] ms \| [0-9]+ samples/s)");
    EXPECT_TRUE(std::regex_match(lines[2 * i + 2], line)) << lines[2 * i + 2];
  }
}

TEST_F(TrainEngine, RelativeBlobPathResolvesNextToTheExecutable) {
  ModelConfig cfg = adamwConfig();
  Workspace ws(cfg);
  std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
  std::string name = "train_engine_test_blob_" + std::to_string(::getpid()) + ".bin";
  std::string path = exe.substr(0, exe.rfind('/')) + "/" + name;
  ASSERT_EQ(writeBlob(path, cfg.dtype), "");
  TestProgram program(cfg, name);
  RunResult r = runTrain(program.get(), basicArgs(ws));
  std::remove(path.c_str());
  EXPECT_EQ(r.rc, 0) << r.err;

  TestProgram missing(cfg, "no_such_blob.bin");
  r = runTrain(missing.get(), basicArgs(ws));
  expectError(r, exe.substr(0, exe.rfind('/')) + "/no_such_blob.bin");
}

TEST(TrainEngineCalls, NullEngine) {
  EXPECT_EQ(zeroc_rt_engine_arena(nullptr), nullptr);
  EXPECT_EQ(zeroc_rt_engine_constants(nullptr), nullptr);
  EXPECT_EQ(zeroc_rt_engine_comm(nullptr), nullptr);
  EXPECT_EQ(zeroc_rt_engine_param_replica(nullptr, 0), nullptr);
  EXPECT_EQ(zeroc_rt_engine_param_shard(nullptr, 0), nullptr);
  EXPECT_EQ(zeroc_rt_engine_buffer(nullptr, 0), nullptr);
  EXPECT_EQ(zeroc_rt_engine_dropout_counter(nullptr), 0u);
  EXPECT_EQ(zeroc_rt_engine_loss_scale(nullptr), 1.0);
  double g = 0;
  zeroc_rt_status_t status = zeroc_rt_engine_grad_accumulate(nullptr, 0, &g, 1);
  EXPECT_EQ(zeroc_rt_status_code(status), ZEROC_RT_INVALID_ARGUMENT);
  zeroc_rt_status_free(status);
}

//===----------------------------------------------------------------------===//
// LR schedules, loss scaling, monitors
//===----------------------------------------------------------------------===//

std::vector<std::string> splitLines(const std::string &text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    lines.push_back(line);
  return lines;
}

zeroc_rt_lr_schedule_t warmupLinear(double lo, double hi, int64_t n) {
  zeroc_rt_lr_schedule_t s = {};
  s.type = ZEROC_RT_LR_WARMUP;
  s.warmup_min_lr = lo;
  s.warmup_max_lr = hi;
  s.warmup_num_steps = n;
  return s;
}

zeroc_rt_lr_schedule_t oneCycle() {
  zeroc_rt_lr_schedule_t s = {};
  s.type = ZEROC_RT_LR_ONE_CYCLE;
  s.cycle_min_lr = 0.005;
  s.cycle_max_lr = 0.05;
  s.cycle_first_step_size = 3;
  s.cycle_second_step_size = 2;
  s.decay_lr_rate = 0.5;
  s.decay_step_size = 2;
  s.cycle_momentum = 1;
  s.cycle_min_mom = 0.8;
  s.cycle_max_mom = 0.95;
  s.decay_mom_rate = 0.01;
  return s;
}

TEST_F(TrainEngine, LrSchedulesDriveTheOptimizer) {
  const int64_t steps = 10;
  struct Named {
    const char *name;
    ModelConfig cfg;
    double firstLr;
  };
  std::vector<Named> cases;
  {
    ModelConfig c = adamwConfig();
    c.schedule = warmupLinear(0.001, 0.05, 4);
    c.schedule.warmup_type_log = 1;
    cases.push_back({"warmup_log_adamw", c, 0.001});
  }
  {
    ModelConfig c = sgdClipConfig();
    c.schedule = warmupLinear(0.0, 0.05, 3);
    c.schedule.type = ZEROC_RT_LR_WARMUP_DECAY;
    c.schedule.total_num_steps = 8;
    cases.push_back({"warmup_decay_sgd", c, 0.0});
  }
  {
    ModelConfig c = adamL2ClipConfig();
    c.schedule.type = ZEROC_RT_LR_WARMUP_COSINE;
    c.schedule.warmup_num_steps = 3;
    c.schedule.warmup_type_log = 1;
    c.schedule.total_num_steps = 9;
    c.schedule.warmup_min_ratio = 0.1;
    c.schedule.cos_min_ratio = 0.01;
    cases.push_back({"warmup_cosine_adam_l2", c, 0.0});
  }
  {
    ModelConfig c = adamwConfig();
    c.schedule = oneCycle();
    cases.push_back({"one_cycle_adamw", c, 0.005});
  }
  {
    ModelConfig c = sgdClipConfig();
    c.schedule = oneCycle(); // DeepSpeed does not cycle SGD's momentum
    cases.push_back({"one_cycle_sgd", c, 0.005});
  }
  for (Named &named : cases) {
    named.cfg.gradAccum = 2;
    Workspace ws(named.cfg);
    Reference ref = reference(named.cfg, ws.data, steps);
    ASSERT_EQ(ref.lrs.size(), static_cast<size_t>(steps));
    EXPECT_EQ(ref.lrs[0], named.firstLr) << named.name;
    EXPECT_GE(std::set<double>(ref.lrs.begin(), ref.lrs.end()).size(), 4u)
        << named.name;
    std::vector<Outcome> outcomes;
    for (int stage = 0; stage <= 3; ++stage) {
      ModelConfig cfg = named.cfg;
      cfg.stage = stage;
      std::string tag = std::string(named.name) + "_stage" + std::to_string(stage);
      outcomes.push_back(train(cfg, ws, steps, tag));
      expectMatchesReference(outcomes.back(), ref, cfg, 1e-9, tag);
    }
    for (int stage = 1; stage <= 3; ++stage) {
      EXPECT_EQ(outcomes[stage].w, outcomes[0].w) << named.name;
      EXPECT_EQ(outcomes[stage].b, outcomes[0].b) << named.name;
    }
  }
}

TEST_F(TrainEngine, OneCycleBetasInTheProgressLine) {
  ModelConfig cfg = adamwConfig();
  cfg.schedule = oneCycle();
  Workspace ws(cfg);
  TestProgram program(cfg, ws.blob);
  RunResult r = runTrain(program.get(), {"--data", ws.dataDir, "--steps", "3"});
  ASSERT_EQ(r.rc, 0) << r.err;
  std::vector<std::string> lines = splitLines(r.out);
  ASSERT_EQ(lines.size(), 7u) << r.out;
  for (int step = 1; step <= 3; ++step) {
    // DeepSpeed prints what the optimizer holds after the scheduler step.
    double mom = 0;
    double lr = zeroc_rt_lr_at(&cfg.schedule, cfg.optimizer.lr, step, &mom);
    EXPECT_EQ(lines[2 * step - 1],
              "[Rank 0] step=" + std::to_string(step) + ", skipped=0, lr=[" +
                  zeroc_rt::train::pyFloat(lr) + "], mom=[(" +
                  zeroc_rt::train::pyFloat(mom) + ", 0.99)]");
  }
}

TEST_F(TrainEngine, LossScalingWithoutOverflowIsBitIdentical) {
  for (zeroc_rt_dtype_t dtype : {ZEROC_RT_DTYPE_F64, ZEROC_RT_DTYPE_F32}) {
    for (int stage : {0, 2}) {
      ModelConfig plain = adamL2ClipConfig();
      plain.dtype = dtype;
      plain.stage = stage;
      plain.gradAccum = 3;
      ModelConfig scaled = plain;
      scaled.scaler = dynamicScaler(/*window=*/2);
      scaled.precision = ZEROC_RT_PRECISION_FP16;
      Workspace ws(plain);
      Outcome a = train(plain, ws, 6, "plain");
      Outcome b = train(scaled, ws, 6, "scaled");
      ASSERT_EQ(a.run.rc, 0) << a.run.err;
      ASSERT_EQ(b.run.rc, 0) << b.run.err;
      ASSERT_EQ(b.log.size(), 6u);
      // Doubled after every 2 stable steps (DeepSpeed >= 0.17.1).
      const double scales[] = {65536, 65536, 65536, 131072, 131072, 262144};
      for (size_t i = 0; i < 6; ++i) {
        EXPECT_EQ(a.log[i].lossScale, 1.0);
        EXPECT_EQ(b.log[i].lossScale, scales[i]) << i;
        EXPECT_FALSE(b.log[i].skipped);
        EXPECT_EQ(b.log[i].loss, a.log[i].loss) << i;
        EXPECT_EQ(b.log[i].gradNorm, a.log[i].gradNorm) << i;
      }
      EXPECT_EQ(b.w, a.w);
      EXPECT_EQ(b.b, a.b);
    }
  }
}

TEST_F(TrainEngine, OverflowSkipsTheStepInEveryStage) {
  ModelConfig base = adamwConfig();
  base.gradAccum = 2;
  base.schedule = warmupLinear(0.01, 0.05, 5);
  base.scaler = dynamicScaler(/*window=*/3, /*hysteresis=*/2);
  g_faults.overflowSteps = (1u << 1) | (1u << 2) | (1u << 3) | (1u << 6);
  Workspace ws(base);
  Reference ref = reference(base, ws.data, 9);
  ASSERT_EQ(ref.skipped, (std::vector<bool>{false, true, true, true, false,
                                            false, true, false, false}));
  EXPECT_EQ(ref.lossScales, (std::vector<double>{65536, 65536, 65536, 32768,
                                                 16384, 16384, 16384, 8192,
                                                 8192}));
  // The scheduler does not step on skipped steps: t = 0 1 1 1 1 2 3 3 4.
  const int64_t t[] = {0, 1, 1, 1, 1, 2, 3, 3, 4};
  for (int i = 0; i < 9; ++i)
    EXPECT_EQ(ref.lrs[static_cast<size_t>(i)],
              zeroc_rt_lr_at(&base.schedule, base.optimizer.lr, t[i], nullptr));
  for (int stage = 0; stage <= 3; ++stage) {
    ModelConfig cfg = base;
    cfg.stage = stage;
    Outcome o = train(cfg, ws, 9, "overflow" + std::to_string(stage));
    expectMatchesReference(o, ref, cfg, 1e-9, "stage " + std::to_string(stage));
    for (size_t i = 0; i < o.log.size(); ++i) {
      if (ref.skipped[i]) {
        // DeepSpeed 0.19 logs an overflow step's norm as inf (JSONL:
        // Infinity).
        EXPECT_EQ(o.log[i].gradNorm, std::numeric_limits<double>::infinity());
      }
    }
  }

  // The console: DeepSpeed's OVERFLOW lines and skipped count.
  TestProgram program(base, ws.blob);
  RunResult r = runTrain(program.get(), {"--data", ws.dataDir, "--steps", "9"});
  ASSERT_EQ(r.rc, 0) << r.err;
  std::vector<std::string> overflow;
  for (const std::string &line : splitLines(r.out))
    if (line.rfind("[deepspeed]", 0) == 0)
      overflow.push_back(line);
  const std::string p = "[deepspeed] OVERFLOW! Rank 0 Skipping step. ";
  EXPECT_EQ(overflow,
            (std::vector<std::string>{
                p + "Attempted loss scale: 65536, but hysteresis is 2. "
                    "Reducing hysteresis to 1",
                p + "Attempted loss scale: 65536, reducing to 32768",
                p + "Attempted loss scale: 32768, reducing to 16384",
                p + "Attempted loss scale: 16384, reducing to 8192"}));
  EXPECT_NE(r.out.find("[Rank 0] step=4, skipped=3, lr="), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("[Rank 0] step=9, skipped=4, lr="), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("step 2/9 | loss "), std::string::npos);
  EXPECT_NE(r.out.find("| loss_scale 65536 | grad_norm inf |"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("samples/s | skipped\n"), std::string::npos) << r.out;
  // --quiet silences them too.
  r = runTrain(program.get(), basicArgs(ws, 9));
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out, "");
}

TEST_F(TrainEngine, StaticLossScaleSkipsOverflowsAndNeverChanges) {
  ModelConfig cfg = sgdClipConfig();
  cfg.scaler.enabled = 1;
  cfg.scaler.static_scale = 1000.0;
  g_faults.overflowSteps = 1u << 2;
  Workspace ws(cfg);
  Reference ref = reference(cfg, ws.data, 5);
  EXPECT_EQ(ref.skipped,
            (std::vector<bool>{false, false, true, false, false}));
  for (int stage : {0, 1, 3}) {
    cfg.stage = stage;
    Outcome o = train(cfg, ws, 5, "static" + std::to_string(stage));
    expectMatchesReference(o, ref, cfg, 1e-9, "stage " + std::to_string(stage));
    for (const JsonRecord &rec : o.log)
      EXPECT_EQ(rec.lossScale, 1000.0);
  }
  TestProgram program(cfg, ws.blob);
  RunResult r = runTrain(program.get(), {"--data", ws.dataDir, "--steps", "5"});
  ASSERT_EQ(r.rc, 0) << r.err;
  // The OVERFLOW line with the unchanged static scale, once.
  const std::string line = "[deepspeed] OVERFLOW! Rank 0 Skipping step. "
                           "Attempted loss scale: 1000, reducing to 1000\n";
  EXPECT_NE(r.out.find(line), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("OVERFLOW"), r.out.rfind("OVERFLOW")) << r.out;
  EXPECT_NE(r.out.find("[Rank 0] step=5, skipped=1,"), std::string::npos);
}

TEST_F(TrainEngine, StashedLossesAreTheLossesRead) {
  // A CUDA program's losses stay on the device until the step has run; the
  // log is the same, bit for bit.
  for (int stage : {0, 3}) {
    ModelConfig cfg = adamwConfig();
    cfg.stage = stage;
    cfg.gradAccum = 3;
    Workspace ws(cfg);
    Outcome read = train(cfg, ws, 4, "read");
    cfg.stashLoss = true;
    Outcome stashed = train(cfg, ws, 4, "stashed");
    ASSERT_EQ(read.run.rc, 0) << read.run.err;
    ASSERT_EQ(stashed.run.rc, 0) << stashed.run.err;
    ASSERT_EQ(stashed.log.size(), read.log.size());
    for (size_t i = 0; i < read.log.size(); ++i) {
      EXPECT_EQ(stashed.log[i].loss, read.log[i].loss) << "step " << i + 1;
      EXPECT_EQ(stashed.log[i].gradNorm, read.log[i].gradNorm) << "step " << i + 1;
    }
  }
}

TEST_F(TrainEngine, LossScalingMakesANanLossNonFatal) {
  // As in DeepSpeed only a gradient overflow matters (here the gradients
  // stay finite).
  ModelConfig cfg = adamwConfig();
  cfg.scaler = dynamicScaler();
  g_faults.nanAtStep = 1;
  Workspace ws(cfg);
  Outcome o = train(cfg, ws, 3, "nan");
  ASSERT_EQ(o.run.rc, 0) << o.run.err;
  ASSERT_EQ(o.log.size(), 3u);
  EXPECT_TRUE(std::isnan(o.log[1].loss));
  EXPECT_FALSE(o.log[1].skipped);
  EXPECT_TRUE(std::isfinite(o.log[2].loss));
}

TEST_F(TrainEngine, CsvMonitorWritesDeepSpeedFiles) {
  ModelConfig cfg = adamwConfig();
  cfg.gradAccum = 2; // G = 4
  cfg.scaler = dynamicScaler(/*window=*/2);
  cfg.wallClock = true;
  cfg.csv = true;
  Workspace ws(cfg);
  cfg.csvPath = ws.dir.file("monitor");
  cfg.csvJob = "job1";
  const std::string dir = cfg.csvPath + "/job1/";
  ASSERT_TRUE(std::filesystem::create_directories(dir));
  {
    std::FILE *f = std::fopen((dir + "Train_Samples_lr.csv").c_str(), "w");
    std::fputs("stale\r\nrows\r\n", f);
    std::fclose(f);
  }
  Outcome o = train(cfg, ws, 3, "csv");
  ASSERT_EQ(o.run.rc, 0) << o.run.err;
  ASSERT_EQ(o.log.size(), 3u);
  struct Event {
    const char *file, *header;
  };
  const Event events[] = {
      {"Train_Samples_train_loss.csv", "train_loss"},
      {"Train_Samples_lr.csv", "lr"},
      {"Train_Samples_loss_scale.csv", "loss_scale"},
      {"Train_Samples_elapsed_time_ms_forward.csv", "elapsed_time_ms_forward"},
      {"Train_Samples_elapsed_time_ms_backward.csv", "elapsed_time_ms_backward"},
      {"Train_Samples_elapsed_time_ms_backward_inner.csv",
       "elapsed_time_ms_backward_inner"},
      {"Train_Samples_elapsed_time_ms_backward_allreduce.csv",
       "elapsed_time_ms_backward_allreduce"},
      {"Train_Samples_elapsed_time_ms_step.csv", "elapsed_time_ms_step"},
  };
  for (int e = 0; e < 8; ++e) {
    std::string text = readFile(dir + events[e].file);
    SCOPED_TRACE(events[e].file);
    std::vector<std::string> rows;
    size_t start = 0, end;
    while ((end = text.find("\r\n", start)) != std::string::npos) {
      rows.push_back(text.substr(start, end - start));
      start = end + 2;
    }
    EXPECT_EQ(start, text.size()) << "every line ends with \\r\\n";
    ASSERT_EQ(rows.size(), 4u) << text;
    EXPECT_EQ(rows[0], std::string("step,") + events[e].header);
    for (size_t i = 0; i < 3; ++i) {
      const JsonRecord &rec = o.log[i];
      std::string prefix = std::to_string(4 * (i + 1)) + ",";
      ASSERT_EQ(rows[i + 1].rfind(prefix, 0), 0u) << rows[i + 1];
      std::string value = rows[i + 1].substr(prefix.size());
      double v = std::strtod(value.c_str(), nullptr);
      EXPECT_EQ(value, zeroc_rt::train::pyFloat(v));
      const double want[] = {rec.loss, rec.lr, rec.lossScale};
      if (e < 3) {
        EXPECT_EQ(v, want[e]);
      } else {
        EXPECT_GE(v, 0.0);
      }
    }
  }
  EXPECT_EQ(readFile(dir + "Train_Samples_loss_scale.csv"),
            "step,loss_scale\r\n4,65536.0\r\n8,65536.0\r\n12,65536.0\r\n");

  // Without wall_clock_breakdown: only the three basic events.
  cfg.wallClock = false;
  cfg.csvJob = "job2";
  Outcome o2 = train(cfg, ws, 1, "csv2");
  ASSERT_EQ(o2.run.rc, 0) << o2.run.err;
  size_t files = 0;
  for (const auto &entry :
       std::filesystem::directory_iterator(cfg.csvPath + "/job2"))
    files += entry.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, 3u);

  // An output path below a regular file is a setup error.
  cfg.csvPath = ws.blob;
  TestProgram bad(cfg, ws.blob);
  expectError(runTrain(bad.get(), basicArgs(ws)), "csv_monitor: ");
}

TEST_F(TrainEngine, WallClockBreakdownLinesAndJsonlTimes) {
  ModelConfig cfg = adamwConfig();
  cfg.stage = 2;
  cfg.gradAccum = 2;
  cfg.stepsPerPrint = 2;
  cfg.wallClock = true;
  Workspace ws(cfg);
  TestProgram program(cfg, ws.blob);
  std::string log = ws.dir.file("wc.jsonl");
  RunResult r = runTrain(program.get(), {"--data", ws.dataDir, "--steps", "4",
                                         "--log-jsonl", log});
  ASSERT_EQ(r.rc, 0) << r.err;
  std::vector<std::string> lines = splitLines(r.out);
  // DeepSpeed 0.19: the micro timers after every micro-step, the global
  // timers after every optimizer step, whatever steps_per_print is.
  const std::string n = R"([0-9]+\.[0-9]{2})";
  std::regex micro(R"(\[Rank 0\] time \(ms\) \| fwd_microstep: )" + n +
                   R"( \| bwd_microstep: )" + n + R"( \| bwd_inner_microstep: )" +
                   n + R"( \| bwd_allreduce_microstep: )" + n +
                   R"( \| step_microstep: )" + n);
  std::regex global(R"(\[Rank 0\] time \(ms\) \| fwd: )" + n + R"( \| bwd: )" +
                    n + R"( \| bwd_inner: )" + n + R"( \| bwd_allreduce: )" + n +
                    R"( \| step: )" + n);
  ASSERT_EQ(lines.size(), 17u) << r.out;
  size_t at = 1;
  for (int step = 1; step <= 4; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    EXPECT_TRUE(std::regex_match(lines[at++], micro)) << lines[at - 1];
    if (step % 2 == 0) {
      EXPECT_EQ(lines[at++].rfind("[Rank 0] step=" + std::to_string(step) +
                                      ", skipped=0, lr=[0.05], mom=[(0.9, 0.999)]",
                                  0),
                0u)
          << lines[at - 1];
      EXPECT_EQ(lines[at++].rfind("step " + std::to_string(step) + "/4 |", 0), 0u);
    }
    EXPECT_TRUE(std::regex_match(lines[at++], micro)) << lines[at - 1];
    EXPECT_TRUE(std::regex_match(lines[at++], global)) << lines[at - 1];
  }
  std::vector<JsonRecord> records = readJsonl(log);
  ASSERT_EQ(records.size(), 4u);
  for (const JsonRecord &rec : records) {
    EXPECT_TRUE(rec.hasAllKeys);
    EXPECT_GE(rec.fwdMs, 0.0);
    EXPECT_GE(rec.bwdInnerMs, 0.0);
    EXPECT_GE(rec.bwdAllreduceMs, 0.0);
    EXPECT_GE(rec.stepMs, 0.0);
    EXPECT_NEAR(rec.bwdMs, rec.bwdInnerMs + rec.bwdAllreduceMs, 0.0021);
    EXPECT_LE(rec.fwdMs + rec.bwdMs + rec.stepMs, rec.timeMs + 0.01);
  }

  // steps_per_print <= 0 (DeepSpeed's null): no progress or step lines, the
  // timer lines still every step.
  cfg.stepsPerPrint = 0;
  cfg.gradAccum = 1;
  Workspace ws0(cfg);
  TestProgram quiet(cfg, ws0.blob);
  r = runTrain(quiet.get(), {"--data", ws0.dataDir, "--steps", "3"});
  ASSERT_EQ(r.rc, 0) << r.err;
  lines = splitLines(r.out);
  ASSERT_EQ(lines.size(), 7u) << r.out;
  for (size_t i = 1; i < lines.size(); ++i)
    EXPECT_TRUE(std::regex_match(lines[i], i % 2 ? micro : global)) << lines[i];
}

TEST_F(TrainEngine, NoPerStepLinesWithoutStepsPerPrint) {
  ModelConfig cfg = adamwConfig();
  cfg.stepsPerPrint = 0;
  Workspace ws(cfg);
  TestProgram program(cfg, ws.blob);
  RunResult r = runTrain(program.get(), {"--data", ws.dataDir, "--steps", "3"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(splitLines(r.out).size(), 1u) << r.out; // the header only
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST_F(TrainErrors, WorldSizeMismatch) {
  ModelConfig cfg = adamwConfig();
  cfg.world = 2;
  cfg.recompileHint = "zeroc compile model.onnx --stage 2 -o out";
  Workspace ws(cfg);
  TestProgram program(cfg, ws.blob);
  RunResult r = runTrain(program.get(), basicArgs(ws));
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "train: error: this program was compiled for --world-size 2 "
                   "but was started with 1 rank; run it with mpirun -np 2, or "
                   "recompile: zeroc compile model.onnx --stage 2 -o out "
                   "--world-size 1\n");

  cfg.recompileHint = "";
  TestProgram noHint(cfg, ws.blob);
  r = runTrain(noHint.get(), basicArgs(ws));
  expectError(r, "run it with mpirun -np 2, or recompile with --world-size 1");
}

TEST_F(TrainErrors, MissingNpy) {
  ModelConfig cfg = adamwConfig();
  Workspace ws(cfg);
  std::remove((ws.dataDir + "/y.npy").c_str());
  TestProgram program(cfg, ws.blob);
  RunResult r = runTrain(program.get(), basicArgs(ws));
  expectError(r, "train: error: data: input 'y': '" + ws.dataDir + "/y.npy'");
  expectError(r, "--data needs one <input>.npy per model input (x, y)");
}

TEST_F(TrainErrors, WrongDtypeNpy) {
  ModelConfig cfg = adamwConfig(); // f64
  Workspace ws(cfg);
  ASSERT_EQ(saveArray(ws.dataDir + "/x.npy", ZEROC_RT_DTYPE_F32, {10, 3},
                      std::vector<double>(30, 0.5)),
            "");
  TestProgram program(cfg, ws.blob);
  expectError(runTrain(program.get(), basicArgs(ws)),
              "data: '" + ws.dataDir + "/x.npy' holds f32 values but the model "
              "input 'x' is f64; save it as f64");
}

TEST_F(TrainErrors, WrongShapeNpy) {
  ModelConfig cfg = adamwConfig();
  Workspace ws(cfg);
  TestProgram program(cfg, ws.blob);
  ASSERT_EQ(saveArray(ws.dataDir + "/x.npy", cfg.dtype, {10, 4},
                      std::vector<double>(40, 0.5)),
            "");
  expectError(runTrain(program.get(), basicArgs(ws)),
              "data: '" + ws.dataDir + "/x.npy' has shape (10, 4) but the model "
              "input 'x' has shape (2, 3), so the file needs shape (S, 3): S "
              "samples of (3,)");
  ASSERT_EQ(saveArray(ws.dataDir + "/x.npy", cfg.dtype, {30},
                      std::vector<double>(30, 0.5)),
            "");
  expectError(runTrain(program.get(), basicArgs(ws)),
              "has shape (30,) but the model input 'x' has shape (2, 3)");
  ASSERT_EQ(saveArray(ws.dataDir + "/x.npy", cfg.dtype, {0, 3}, {}), "");
  expectError(runTrain(program.get(), basicArgs(ws)),
              "has shape (0, 3): no samples; it needs shape (S, 3) with S >= 1");
  ASSERT_EQ(saveArray(ws.dataDir + "/x.npy", cfg.dtype, {9, 3},
                      std::vector<double>(27, 0.5)),
            "");
  expectError(runTrain(program.get(), basicArgs(ws)),
              "data: '" + ws.dataDir + "/y.npy' has 10 samples but '" +
                  ws.dataDir + "/x.npy' has 9");
}

TEST_F(TrainErrors, CorruptNpy) {
  ModelConfig cfg = adamwConfig();
  Workspace ws(cfg);
  {
    std::FILE *f = std::fopen((ws.dataDir + "/x.npy").c_str(), "w");
    std::fputs("not an npy file", f);
    std::fclose(f);
  }
  TestProgram program(cfg, ws.blob);
  expectError(runTrain(program.get(), basicArgs(ws)),
              "data: input 'x': '" + ws.dataDir + "/x.npy'");
}

TEST_F(TrainErrors, BlobTooShortOrLongOrMissing) {
  ModelConfig cfg = adamwConfig();
  Workspace ws(cfg);
  TestProgram program(cfg, ws.blob);
  ASSERT_EQ(writeBlob(ws.blob, cfg.dtype, 100), "");
  expectError(runTrain(program.get(), basicArgs(ws)),
              "parameters: the blob '" + ws.blob + "' has 100 bytes but this "
              "program expects 128");
  ASSERT_EQ(writeBlob(ws.blob, cfg.dtype, 129), "");
  expectError(runTrain(program.get(), basicArgs(ws)), "has 129 bytes");
  std::remove(ws.blob.c_str());
  expectError(runTrain(program.get(), basicArgs(ws)),
              "parameters: cannot open the blob '" + ws.blob + "'");
}

TEST_F(TrainErrors, BlobWithAFlippedBitIsRefused) {
  ModelConfig cfg = adamwConfig();
  Workspace ws(cfg);
  TestProgram program(cfg, ws.blob);
  std::string blob = blobBytes(cfg.dtype);
  blob[70] = static_cast<char>(blob[70] ^ 0x10);
  {
    std::ofstream out(ws.blob, std::ios::binary | std::ios::trunc);
    out.write(blob.data(), static_cast<std::streamsize>(blob.size()));
  }
  expectError(runTrain(program.get(), basicArgs(ws)),
              "parameters: the blob '" + ws.blob + "' does not match this "
              "program (checksum");
}

TEST_F(TrainErrors, NanLossStopsTraining) {
  // Also with the losses stashed (a CUDA program's): then checked after the
  // step, the same error and log.
  for (auto [stage, stash] : {std::pair{0, false}, std::pair{3, false}, std::pair{0, true},
                              std::pair{3, true}}) {
    ModelConfig cfg = adamwConfig();
    cfg.stage = stage;
    cfg.stashLoss = stash;
    cfg.gradAccum = 2;
    Workspace ws(cfg);
    TestProgram program(cfg, ws.blob);
    g_faults.nanAtStep = 2;
    std::string log = ws.dir.file("nan.jsonl");
    RunResult r = runTrain(program.get(), {"--data", ws.dataDir, "--steps", "5",
                                           "--quiet", "--log-jsonl", log});
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(r.err, "train: error: loss is NaN/inf at step 3\n");
    EXPECT_EQ(readJsonl(log).size(), 2u);
  }
}

TEST_F(TrainErrors, MinimumLossScaleEndsTheRun) {
  for (int stage : {0, 3}) {
    ModelConfig cfg = adamwConfig();
    cfg.stage = stage;
    cfg.scaler = dynamicScaler(1000, /*hysteresis=*/1, /*minScale=*/1.0);
    cfg.scaler.initial_scale = 2.0;
    g_faults.overflowSteps = 0x3;
    Workspace ws(cfg);
    TestProgram program(cfg, ws.blob);
    std::string log = ws.dir.file("min.jsonl");
    RunResult r = runTrain(program.get(), {"--data", ws.dataDir, "--steps", "5",
                                           "--log-jsonl", log});
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(r.err, "train: error: step 2: Current loss scale already at "
                     "minimum - cannot decrease scale anymore. Exiting run.\n");
    EXPECT_NE(r.out.find("[deepspeed] OVERFLOW! Rank 0 Skipping step. "
                         "Attempted loss scale: 2, reducing to 1\n"),
              std::string::npos)
        << r.out;
    std::vector<JsonRecord> records = readJsonl(log);
    ASSERT_EQ(records.size(), 1u);
    EXPECT_TRUE(records[0].skipped);
  }
}

TEST_F(TrainErrors, OneCycleMomentumOutsideAdamsRange) {
  ModelConfig cfg = adamwConfig();
  cfg.schedule = oneCycle();
  cfg.schedule.cycle_first_step_size = 1;
  cfg.schedule.cycle_second_step_size = 1;
  cfg.schedule.decay_mom_rate = 0.1; // 0.95 * (1 + 0.1 * k / 2) >= 1 at k = 2
  Workspace ws(cfg);
  TestProgram program(cfg, ws.blob);
  // Found in setup, for every step of the run, before the first one.
  const std::string bad = "the OneCycle schedule gives momentum (Adam's "
                          "beta1) 1.045 after 4 scheduler steps, outside "
                          "[0, 1); fix the schedule or run fewer steps";
  for (const char *steps : {"6", "5", "999999999999999999"}) {
    RunResult r = runTrain(program.get(), {"--data", ws.dataDir, "--steps", steps});
    expectError(r, std::string("train: error: --steps ") + steps +
                       ": optimizer step 5 would fail: " + bad);
    EXPECT_EQ(r.out, "");
  }
  EXPECT_EQ(runTrain(program.get(), basicArgs(ws, 4)).rc, 0);

  // The red-team case: good through the cycle (10 steps), bad once the
  // decay lifts the momentum to 0.9 * (1 + 1 * 1).
  cfg.schedule = oneCycle();
  cfg.schedule.cycle_first_step_size = 5;
  cfg.schedule.cycle_second_step_size = 5;
  cfg.schedule.cycle_max_mom = 0.9;
  cfg.schedule.decay_step_size = 1;
  cfg.schedule.decay_mom_rate = 1.0;
  TestProgram decay(cfg, ws.blob);
  expectError(runTrain(decay.get(), basicArgs(ws, 50)),
              "train: error: --steps 50: optimizer step 12 would fail: the "
              "OneCycle schedule gives momentum (Adam's beta1) 1.8 after 11 "
              "scheduler steps, outside [0, 1)");
  EXPECT_EQ(runTrain(decay.get(), basicArgs(ws, 11)).rc, 0);

  // A schedule whose lr overflows to inf late in a long run.
  cfg.schedule = {};
  cfg.schedule.type = ZEROC_RT_LR_RANGE_TEST;
  cfg.schedule.range_min_lr = 1;
  cfg.schedule.range_step_size = 1;
  cfg.schedule.range_step_rate = 1e305;
  TestProgram range(cfg, ws.blob);
  expectError(runTrain(range.get(), basicArgs(ws, 5000)),
              "train: error: --steps 5000: optimizer step 1799 would fail: the "
              "LRRangeTest schedule gives lr inf after 1798 scheduler steps");
}

TEST_F(TrainErrors, MicroStepFailure) {
  ModelConfig cfg = adamwConfig();
  cfg.gradAccum = 3;
  Workspace ws(cfg);
  TestProgram program(cfg, ws.blob);
  g_faults.errorAtStep = 1;
  expectError(runTrain(program.get(), basicArgs(ws, 4)),
              "train: error: step 2: micro-step (accumulation step 1 of 3): "
              "injected micro-step failure");
}

TEST_F(TrainErrors, GradAccumulateCountIsChecked) {
  g_faults.wrongGradCount = true;
  for (int stage : {0, 1, 2, 3}) {
    ModelConfig cfg = adamwConfig();
    cfg.stage = stage;
    Workspace ws(cfg);
    TestProgram program(cfg, ws.blob);
    expectError(runTrain(program.get(), basicArgs(ws)),
                std::string("zeroc_rt_engine_grad_accumulate: parameter "
                            "'fc.weight' (6 elements) got ") +
                    (stage <= 1 ? "5" : "7") +
                    " gradient elements but the micro-step accumulates 6 "
                    "(the full gradient, or this rank's shard)");
  }
}

TEST_F(TrainErrors, AdamMultiRepeatedParameter) {
  g_faults.repeatedParam = true;
  ModelConfig cfg = adamwConfig();
  Workspace ws(cfg);
  TestProgram program(cfg, ws.blob);
  expectError(runTrain(program.get(), basicArgs(ws)),
              "zeroc_rt_engine_adam_update_multi: parameter 'fc.weight' is given twice");
}

TEST_F(TrainErrors, SgdMultiRepeatedParameter) {
  g_faults.repeatedParam = true;
  ModelConfig cfg = sgdClipConfig();
  Workspace ws(cfg);
  TestProgram program(cfg, ws.blob);
  expectError(runTrain(program.get(), basicArgs(ws)),
              "zeroc_rt_engine_sgd_update_multi: parameter 'fc.weight' is given twice");
}

TEST_F(TrainErrors, BadArguments) {
  ModelConfig cfg = adamwConfig();
  Workspace ws(cfg);
  TestProgram program(cfg, ws.blob);
  const std::string usage =
      "usage: train --data DIR --steps N [--log-jsonl FILE] [--save-params "
      "DIR] [--max-skipped-steps N (default 50, 0: no limit)] [--denormals "
      "flush|keep (default flush)] [--trace DIR] [--comm nccl|mpi] [--save-dir "
      "DIR [--save-interval N]] [--load-dir DIR [--load-tag TAG]] "
      "[--collective-timeout S (default 1800, 0: none)] [--bind-core-list CPUS (e.g. "
      "0-15,32-47)] [--quiet]";
  struct Case {
    std::vector<std::string> args;
    std::string needle;
  };
  const Case cases[] = {
      {{}, "missing --data DIR"},
      {{"--data", ws.dataDir}, "missing --steps N"},
      {{"--steps", "3"}, "missing --data DIR"},
      {{"--data"}, "--data needs a value"},
      {{"--data", ws.dataDir, "--steps"}, "--steps needs a value"},
      {{"--data", ws.dataDir, "--steps", "x3"},
       "--steps must be a non-negative integer of at most 999999999999999999, "
       "got 'x3'"},
      {{"--data", ws.dataDir, "--steps", "-1"},
       "--steps must be a non-negative integer of at most 999999999999999999, "
       "got '-1'"},
      {{"--data", ws.dataDir, "--steps", "9223372036854775807"},
       "--steps must be a non-negative integer of at most 999999999999999999, "
       "got '9223372036854775807'"},
      {{"--data", ws.dataDir, "--steps", "1", "--bogus"}, "unknown argument '--bogus'"},
      {{"--data", ws.dataDir, "--steps", "1", "extra"}, "unknown argument 'extra'"},
      {{"--data", ws.dataDir, "--steps", "1", "--quiet=yes"}, "--quiet takes no value"},
      {{"--data=", "--steps", "1"}, "--data needs a non-empty value"},
      {{"--data", ws.dataDir, "--steps", "1", "--max-skipped-steps", "-2"},
       "--max-skipped-steps must be a non-negative integer of at most "
       "999999999999999999 (0: no limit), got '-2'"},
      {{"--data", ws.dataDir, "--steps", "1", "--denormals", "off"},
       "--denormals must be 'flush' or 'keep', got 'off'"},
      {{"--data", ws.dataDir, "--steps", "1", "--bind-core-list", "4-2"},
       "--bind-core-list: the range '4-2' is descending; write it as 2-4"},
  };
  for (const Case &c : cases) {
    RunResult r = runTrain(program.get(), c.args);
    expectError(r, c.needle);
    expectError(r, usage);
  }
  RunResult help = runTrain(program.get(), {"--help"});
  EXPECT_EQ(help.rc, 0);
  EXPECT_EQ(help.out, usage + "\n");
}

TEST_F(TrainErrors, BindCoreListOutsideTheRanksCpus) {
  ModelConfig cfg = adamwConfig();
  Workspace ws(cfg);
  TestProgram program(cfg, ws.blob);
  std::vector<std::string> args = basicArgs(ws);
  args.insert(args.end(), {"--bind-core-list", "65535"});
  // One rank on its host takes the whole list, which names a CPU it may
  // not run on (no machine here has 65536): an error before anything is
  // bound.
  expectError(runTrain(program.get(), args),
              "--bind-core-list: CPU 65535, of local rank 0's share 65535, is not one this rank "
              "may run on");
}

TEST_F(TrainErrors, InvalidProgram) {
  ModelConfig cfg = adamwConfig();
  Workspace ws(cfg);
  {
    TestProgram program(cfg, ws.blob);
    program.program.tf32 = 2;
    expectError(runTrain(program.get(), basicArgs(ws)), "tf32 2 must be 0 or 1");
  }
  {
    TestProgram program(cfg, ws.blob);
    program.program.abi_version = 99;
    expectError(runTrain(program.get(), basicArgs(ws)),
                "invalid program (recompile it with this runtime): program "
                "ABI version 99, this runtime implements " +
                    std::to_string(ZEROC_RT_PROGRAM_ABI_VERSION));
  }
  {
    TestProgram program(cfg, ws.blob);
    program.params[0].dtype = ZEROC_RT_DTYPE_F32;
    program.params[0].master_dtype = ZEROC_RT_DTYPE_F64;
    expectError(runTrain(program.get(), basicArgs(ws)),
                "parameter 'fc.weight' has dtype f32 with master dtype f64; "
                "the engine trains f32 and f64 parameters, and f16 and bf16 "
                "ones with an f32 master");
  }
  {
    TestProgram program(cfg, ws.blob);
    program.params[1].dtype = ZEROC_RT_DTYPE_F16;
    program.params[1].master_dtype = ZEROC_RT_DTYPE_F16;
    expectError(runTrain(program.get(), basicArgs(ws)),
                "parameter 'fc/bias' has dtype f16 with master dtype f16");
  }
  {
    TestProgram program(cfg, ws.blob);
    program.params[0].dtype = ZEROC_RT_DTYPE_F32;
    program.params[0].master_dtype = ZEROC_RT_DTYPE_F32;
    program.params[0].grad_dtype = ZEROC_RT_DTYPE_F64;
    expectError(runTrain(program.get(), basicArgs(ws)),
                "parameter 'fc.weight' has dtype f32 with gradient dtype f64");
  }
  {
    TestProgram program(cfg, ws.blob);
    program.params[0].frozen = 2;
    expectError(runTrain(program.get(), basicArgs(ws)),
                "parameter 'fc.weight' has frozen 2");
  }
  {
    TestProgram program(cfg, ws.blob);
    program.params[1].frozen = 1;
    program.params[1].dtype = ZEROC_RT_DTYPE_F16;
    program.params[1].master_dtype = ZEROC_RT_DTYPE_F32;
    expectError(runTrain(program.get(), basicArgs(ws)),
                "frozen parameter 'fc/bias' has dtype f16 with master dtype "
                "f32 and gradient dtype");
  }
  // The gradient slab (ABI 14): fc.weight's 6 f64 accumulator elements at
  // byte 0, fc/bias's 2 at byte 64, in a slab of 80 bytes.
  {
    TestProgram program(cfg, ws.blob);
    program.program.grad_slab_bytes = -1;
    expectError(runTrain(program.get(), basicArgs(ws)), "grad_slab_bytes -1 must be >= 0");
  }
  {
    TestProgram program(cfg, ws.blob);
    program.program.grad_slab_bytes = 70;
    expectError(runTrain(program.get(), basicArgs(ws)),
                "parameter 'fc/bias' has its 2-element gradient accumulator "
                "at byte 64 of the gradient slab of 70 bytes");
  }
  {
    TestProgram program(cfg, ws.blob);
    program.params[1].grad_offset = 68; // not a multiple of 8
    expectError(runTrain(program.get(), basicArgs(ws)),
                "parameter 'fc/bias' has its 2-element gradient accumulator "
                "at byte 68 of the gradient slab of 80 bytes");
  }
  {
    TestProgram program(cfg, ws.blob);
    program.params[1].grad_offset = 40;
    expectError(runTrain(program.get(), basicArgs(ws)),
                "the gradient accumulators of parameters 'fc.weight' and "
                "'fc/bias' overlap in the gradient slab (bytes 0 and 40)");
  }
  {
    TestProgram program(cfg, ws.blob);
    program.program.blob_bytes = 64; // b at offset 64 no longer fits
    expectError(runTrain(program.get(), basicArgs(ws)),
                "parameter 'fc/bias' (16 bytes at offset 64) lies outside the "
                "64-byte blob");
  }
  {
    TestProgram program(cfg, ws.blob);
    program.program.num_buffers = 1;
    program.buffers[0].name = "fc/bias"; // saves as fc_bias.npy too
    expectError(runTrain(program.get(), basicArgs(ws)),
                "buffer 'fc/bias' saves to the same file name as a parameter "
                "or another buffer");
  }
  {
    TestProgram program(cfg, ws.blob);
    program.program.num_buffers = 1;
    program.buffers[0].dtype = ZEROC_RT_DTYPE_I64;
    expectError(runTrain(program.get(), basicArgs(ws)),
                "buffer 'bn.count' has dtype i64; buffers are float tensors");
  }
  {
    TestProgram program(cfg, ws.blob);
    program.program.num_buffers = 1;
    program.buffers[0].blob_offset = 120;
    expectError(runTrain(program.get(), basicArgs(ws)),
                "buffer 'bn.count' (16 bytes at offset 120) lies outside the "
                "128-byte blob");
  }
  {
    TestProgram program(cfg, ws.blob);
    program.program.op_names = nullptr;
    expectError(runTrain(program.get(), basicArgs(ws)),
                "num_ops 2 with op_names (nil)");
  }
  {
    TestProgram program(cfg, ws.blob);
    program.program.micro_batch = 5;
    expectError(runTrain(program.get(), basicArgs(ws)),
                "input 'x' has batch dim 2 but the micro batch is 5");
  }
  {
    TestProgram program(cfg, ws.blob);
    program.program.optimizer.beta1 = 1.0;
    expectError(runTrain(program.get(), basicArgs(ws)),
                "Adam betas (1, 0.999) must be in [0, 1)");
  }
  {
    TestProgram program(cfg, ws.blob);
    program.program.lr_schedule.type =
        static_cast<zeroc_rt_lr_schedule_type_t>(9);
    expectError(runTrain(program.get(), basicArgs(ws)),
                "invalid program (recompile it with this runtime): unknown lr "
                "schedule type 9");
  }
  {
    TestProgram program(cfg, ws.blob);
    program.program.lr_schedule.type = ZEROC_RT_LR_WARMUP_COSINE;
    program.program.lr_schedule.warmup_num_steps = 1;
    program.program.lr_schedule.total_num_steps = 2;
    expectError(runTrain(program.get(), basicArgs(ws)),
                "lr schedule WarmupCosineLR: total_num_steps 2 equals "
                "max(2, warmup_num_steps)");
  }
  {
    TestProgram program(cfg, ws.blob);
    program.program.lr_schedule.type = ZEROC_RT_LR_ONE_CYCLE;
    expectError(runTrain(program.get(), basicArgs(ws)),
                "lr schedule OneCycle: cycle_first_step_size 0 must be >= 1");
  }
  {
    TestProgram program(cfg, ws.blob);
    program.program.loss_scaler = dynamicScaler(0);
    expectError(runTrain(program.get(), basicArgs(ws)),
                "loss scaler: scale_window 0 and hysteresis 2 must be >= 1");
  }
  {
    TestProgram program(cfg, ws.blob);
    program.program.precision = static_cast<zeroc_rt_precision_t>(7);
    expectError(runTrain(program.get(), basicArgs(ws)), "unknown precision 7");
  }
  expectError(runTrain(nullptr, basicArgs(ws)), "the program is NULL");
}

TEST_F(TrainErrors, UnwritableOutputs) {
  ModelConfig cfg = adamwConfig();
  Workspace ws(cfg);
  TestProgram program(cfg, ws.blob);
  std::vector<std::string> args = basicArgs(ws);
  args.push_back("--log-jsonl");
  args.push_back(ws.dir.file("no/such/dir/log.jsonl"));
  expectError(runTrain(program.get(), args),
              "--log-jsonl: '" + ws.dir.file("no/such/dir/log.jsonl") +
                  "': cannot create");

  args = basicArgs(ws);
  args.push_back("--save-params");
  args.push_back(ws.blob + "/params"); // below a regular file
  expectError(runTrain(program.get(), args), "--save-params: '" + ws.blob);
}

TEST_F(TrainErrors, SkippedStepsEndTheRun) {
  ModelConfig cfg = sgdClipConfig();
  cfg.scaler.enabled = 1;
  cfg.scaler.static_scale = 1024.0;
  g_faults.overflowSteps = ~0ull; // every step overflows
  for (int stage : {0, 3}) {
    cfg.stage = stage;
    Workspace ws(cfg);
    TestProgram program(cfg, ws.blob);
    SCOPED_TRACE("stage " + std::to_string(stage));
    std::string log = ws.dir.file("skip.jsonl");
    // The limit: 3 consecutive skipped steps.
    RunResult r = runTrain(program.get(),
                           {"--data", ws.dataDir, "--steps", "6", "--log-jsonl",
                            log, "--max-skipped-steps", "3"});
    EXPECT_EQ(r.rc, 1);
    EXPECT_EQ(r.err,
              "train: error: step 3: no optimizer step could be taken for 3 "
              "consecutive steps (steps 1-3 were all skipped for an fp16 "
              "gradient overflow at the static loss scale 1024.0 "
              "(fp16.loss_scale); lower fp16.loss_scale, or set it to 0 for "
              "DeepSpeed's dynamic loss scaler; --max-skipped-steps 3, 0: no "
              "limit)\n");
    size_t overflows = 0;
    for (const std::string &line : splitLines(r.out))
      overflows += line == "[deepspeed] OVERFLOW! Rank 0 Skipping step. "
                           "Attempted loss scale: 1024, reducing to 1024";
    EXPECT_EQ(overflows, 3u) << r.out;
    EXPECT_NE(r.out.find("[Rank 0] step=3, skipped=3,"), std::string::npos);
    std::vector<JsonRecord> records = readJsonl(log);
    ASSERT_EQ(records.size(), 3u);
    for (const JsonRecord &rec : records) {
      EXPECT_TRUE(rec.skipped);
      EXPECT_EQ(rec.gradNorm, std::numeric_limits<double>::infinity());
    }
    EXPECT_NE(readFile(log).find("\"grad_norm\": Infinity,"), std::string::npos);
    // Fewer steps than the limit, all skipped: an error at the end, before
    // the save.
    std::string params = ws.dir.file("skip_params");
    r = runTrain(program.get(), {"--data", ws.dataDir, "--steps", "2", "--quiet",
                                 "--save-params", params});
    expectError(r, "no optimizer step was taken: all 2 steps were skipped for "
                   "an fp16 gradient overflow at the static loss scale 1024.0");
    EXPECT_FALSE(std::filesystem::exists(params + "/params.json"));
    // 0: no limit.
    r = runTrain(program.get(), {"--data", ws.dataDir, "--steps", "4", "--quiet",
                                 "--max-skipped-steps", "0"});
    EXPECT_EQ(r.rc, 0) << r.err;
  }
  // A dynamic scaler's message names its keys.
  cfg = adamwConfig();
  cfg.scaler = dynamicScaler(1000, /*hysteresis=*/1, /*minScale=*/1e-30);
  Workspace ws(cfg);
  TestProgram program(cfg, ws.blob);
  RunResult r = runTrain(program.get(), {"--data", ws.dataDir, "--steps", "9",
                                         "--quiet", "--max-skipped-steps", "2"});
  expectError(r, "step 2: no optimizer step could be taken for 2 consecutive "
                 "steps (steps 1-2 were all skipped for an fp16 gradient "
                 "overflow by the dynamic loss scaler (last attempted scale "
                 "32768.0); lower fp16.initial_scale_power or "
                 "fp16.min_loss_scale");
}

TEST_F(TrainErrors, SaveThatCannotSucceedFailsBeforeTheFirstStep) {
  ModelConfig cfg = adamwConfig();
  Workspace ws(cfg);
  TestProgram program(cfg, ws.blob);
  auto run = [&](const std::string &dir) {
    return runTrain(program.get(),
                    {"--data", ws.dataDir, "--steps", "2", "--save-params", dir});
  };
  // A parameter whose file name is longer than NAME_MAX.
  const std::string longName(300, 'w');
  program.params[0].name = longName.c_str();
  std::string dir = ws.dir.file("long");
  RunResult r = run(dir);
  expectError(r, "--save-params: parameter '" + longName.substr(0, 80) +
                     "...' would be saved as '");
  expectError(r, "rename the parameter (its ONNX initializer)");
  EXPECT_EQ(r.out.find("step"), std::string::npos) << r.out; // before any step
  program.params[0].name = "fc.weight";
  // A directory that cannot be created: a component over NAME_MAX.
  r = run(ws.dir.file(std::string(300, 'd')));
  expectError(r, "--save-params: '");
  expectError(r, "File name too long; pass a --save-params DIR that can be "
                 "created");
  EXPECT_EQ(r.out.find("step"), std::string::npos) << r.out;
  // The checks leave nothing behind in a good directory.
  r = run(dir);
  ASSERT_EQ(r.rc, 0) << r.err;
  std::set<std::string> files;
  for (const auto &e : std::filesystem::directory_iterator(dir + "/rank0"))
    files.insert(e.path().filename().string());
  EXPECT_EQ(files, (std::set<std::string>{"fc_bias.npy", "fc.weight.npy"}));
}

} // namespace

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new MpiEnvironment);
  return RUN_ALL_TESTS();
}
