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

#include "zeroc_rt/zeroc_rt.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <sys/stat.h>
#include <unistd.h>

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
  ASSERT_EQ(o.log.size(), ref.losses.size());
  for (size_t i = 0; i < o.log.size(); ++i) {
    const JsonRecord &r = o.log[i];
    EXPECT_TRUE(r.hasAllKeys) << "step " << i + 1;
    EXPECT_EQ(r.step, static_cast<double>(i + 1));
    EXPECT_EQ(r.lr, cfg.optimizer.lr);
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
              "]}\n");
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
                  R"("grad_norm": [-+0-9.e]+, "time_ms": [0-9.]+, )"
                  R"("samples_per_s": [0-9.]+\})");
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
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_EQ(lines[0], "zeroc train: stage 1, world size 1, 2 parameters (8 "
                      "elements), micro batch 2, grad accum 2, 10 samples");
  const char *steps[] = {"3", "6", "7"};
  for (int i = 0; i < 3; ++i) {
    std::regex line("step " + std::string(steps[i]) +
                    R"(/7 \| loss [0-9]+\.[0-9]{6} \| lr 5\.000e-02 \| )"
                    R"(grad_norm [0-9]+\.[0-9]{4} \| [0-9]+\.[0-9] ms \| )"
                    R"([0-9]+ samples/s)");
    EXPECT_TRUE(std::regex_match(lines[i + 1], line)) << lines[i + 1];
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
  EXPECT_EQ(zeroc_rt_engine_blob(nullptr), nullptr);
  EXPECT_EQ(zeroc_rt_engine_comm(nullptr), nullptr);
  EXPECT_EQ(zeroc_rt_engine_param_replica(nullptr, 0), nullptr);
  EXPECT_EQ(zeroc_rt_engine_param_shard(nullptr, 0), nullptr);
  EXPECT_EQ(zeroc_rt_engine_dropout_counter(nullptr), 0u);
  double g = 0;
  zeroc_rt_status_t status = zeroc_rt_engine_grad_accumulate(nullptr, 0, &g, 1);
  EXPECT_EQ(zeroc_rt_status_code(status), ZEROC_RT_INVALID_ARGUMENT);
  zeroc_rt_status_free(status);
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST_F(TrainErrors, WorldSizeMismatch) {
  ModelConfig cfg = adamwConfig();
  cfg.world = 2;
  cfg.recompileHint = "zeroc compile model.onnx --stage 2 --world-size 2 -o out";
  Workspace ws(cfg);
  TestProgram program(cfg, ws.blob);
  RunResult r = runTrain(program.get(), basicArgs(ws));
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "train: error: this program was compiled for --world-size 2 "
                   "but was started with 1 rank; run it with mpirun -np 2, or "
                   "recompile: zeroc compile model.onnx --stage 2 "
                   "--world-size 1 -o out\n");

  cfg.recompileHint = "zeroc compile m.onnx --world-size=2";
  TestProgram equals(cfg, ws.blob);
  r = runTrain(equals.get(), basicArgs(ws));
  expectError(r, "recompile: zeroc compile m.onnx --world-size=1");

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

TEST_F(TrainErrors, NanLossStopsTraining) {
  for (int stage : {0, 3}) {
    ModelConfig cfg = adamwConfig();
    cfg.stage = stage;
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
                stage <= 1 ? "zeroc_rt_engine_grad_accumulate: parameter "
                             "'fc.weight' (6 elements) got 5 gradient elements "
                             "but stage " + std::to_string(stage) +
                                 " accumulates the full gradient: 6"
                           : "zeroc_rt_engine_grad_accumulate: parameter "
                             "'fc.weight' (6 elements) got 7 gradient elements "
                             "but stage " + std::to_string(stage) +
                                 " accumulates this rank's shard: 6");
  }
}

TEST_F(TrainErrors, BadArguments) {
  ModelConfig cfg = adamwConfig();
  Workspace ws(cfg);
  TestProgram program(cfg, ws.blob);
  const std::string usage = "usage: train --data DIR --steps N [--log-jsonl "
                            "FILE] [--save-params DIR] [--quiet]";
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
       "--steps must be a non-negative integer, got 'x3'"},
      {{"--data", ws.dataDir, "--steps", "-1"},
       "--steps must be a non-negative integer, got '-1'"},
      {{"--data", ws.dataDir, "--steps", "1", "--bogus"},
       "unknown argument '--bogus'"},
      {{"--data", ws.dataDir, "--steps", "1", "extra"},
       "unknown argument 'extra'"},
      {{"--data", ws.dataDir, "--steps", "1", "--quiet=yes"},
       "--quiet takes no value"},
      {{"--data=", "--steps", "1"}, "--data needs a non-empty value"},
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

TEST_F(TrainErrors, InvalidProgram) {
  ModelConfig cfg = adamwConfig();
  Workspace ws(cfg);
  {
    TestProgram program(cfg, ws.blob);
    program.program.abi_version = 99;
    expectError(runTrain(program.get(), basicArgs(ws)),
                "invalid program (recompile it with this runtime): program "
                "ABI version 99, this runtime implements 2");
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

} // namespace

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new MpiEnvironment);
  return RUN_ALL_TESTS();
}
