//===- train_test_model.h - A hand-written "generated" program --*- C++ -*-===//
//
// The training-engine tests drive zeroc_rt_train_main with a program written
// the way zeroc's generated code will be:
//
//   loss = mean((x @ W + b - y)^2),  x (MB, 3), y (MB, 2), W (3, 2), b (2)
//
// W has 6 elements (not divisible by 4, so W = 4 pads it) and b is named
// "fc/bias" (saved as fc_bias.npy). The micro-step uses the runtime kernels
// and the engine calls exactly as generated code does: stages 0-2 read
// param_replica, stage 3 all-gathers param_shard into the arena; stages 0-1
// accumulate full gradients, stages 2-3 pad them into a P-buffer,
// reduce-scatter into an S-buffer and accumulate the shard.
//
// `reference()` is an independent plain C++ loop (full-batch gradient of the
// same G samples per step, torch-style Adam/AdamW/SGD, DeepSpeed clipping),
// with the lr (and OneCycle betas) of zeroc_rt_lr_at -- itself checked
// against DeepSpeed's formulas by lr_schedule_table -- and the skipped steps
// of the injected gradient overflows.
//
// Like generated code, the micro-step multiplies the loss gradient by
// zeroc_rt_engine_loss_scale and returns the unscaled loss.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_TESTS_TRAIN_TEST_MODEL_H
#define ZEROC_RT_TESTS_TRAIN_TEST_MODEL_H

#include "zeroc_rt/npy.h"
#include "zeroc_rt/train.h"

#include <cstdint>
#include <string>
#include <vector>

namespace zeroc_rt::test::train {

constexpr int64_t kInFeatures = 3;
constexpr int64_t kOutFeatures = 2;
constexpr int64_t kBiasOffset = 64; ///< blob offset of b (W is at 0)
constexpr int64_t kBlobBytes = 128;

struct ModelConfig {
  zeroc_rt_dtype_t dtype = ZEROC_RT_DTYPE_F64;
  int stage = 0;
  int world = 1;
  int microBatch = 2;
  int gradAccum = 1;
  int64_t samples = 10;
  zeroc_rt_optimizer_config_t optimizer = {ZEROC_RT_OPTIMIZER_ADAM,
                                           0.05,
                                           0.9,
                                           0.999,
                                           1e-8,
                                           0.0,
                                           0.0,
                                           1,
                                           1,
                                           0.0,
                                           0};
  double clip = 0.0;
  int stepsPerPrint = 1;
  std::string recompileHint =
      "zeroc compile model.onnx --stage 0 --world-size 1 -o out";
  // ABI version 2 (zero: constant lr, no loss scaling, no monitors).
  zeroc_rt_lr_schedule_t schedule = {};
  zeroc_rt_loss_scaler_config_t scaler = {};
  zeroc_rt_precision_t precision = ZEROC_RT_PRECISION_FP32;
  bool wallClock = false, csv = false;
  std::string csvPath, csvJob; ///< "" job: NULL (DeepSpeedJobName)
  // ABI version 6: a model buffer "bn.count" (initialized from b's blob
  // bytes) to which every micro-step adds its micro-batch's mean x.
  bool buffer = false;
  /// The micro-step hands its loss over with zeroc_rt_engine_stash_loss
  /// (as CUDA programs do) instead of writing *loss.
  bool stashLoss = false;
};

/// A dynamic loss scaler: 2^16, window `window`, hysteresis `hysteresis`.
zeroc_rt_loss_scaler_config_t dynamicScaler(int64_t window = 1000,
                                            int hysteresis = 2,
                                            double minScale = 1.0);

/// Named optimizer setups used by the tests.
ModelConfig adamwConfig();     ///< AdamW, weight decay 0.01, no clipping
ModelConfig adamL2ClipConfig(); ///< Adam (L2 decay 0.1), clipping at 0.05
ModelConfig sgdClipConfig();   ///< SGD momentum 0.9, decay 0.01, clip 0.2

/// Faults the micro-step injects (process-global; -1 = never / any rank).
struct Faults {
  int64_t nanAtStep = -1; ///< 0-based step whose micro-steps return NaN
  int nanOnRank = -1;
  int64_t errorAtStep = -1; ///< 0-based step whose micro-step fails
  int errorOnRank = -1;
  bool wrongGradCount = false; ///< grad_accumulate with a bad count
  bool repeatedParam = false;  ///< the multi update given parameter 0 twice
  /// Bit s set: at 0-based step s the micro-steps put +inf into dW[0] (on
  /// overflowOnRank, or every rank when -1), a gradient overflow.
  uint64_t overflowSteps = 0;
  int overflowOnRank = -1;
};
extern Faults g_faults;

/// Whether the last micro-step ran with denormals flushed (x86 MXCSR
/// FTZ and DAZ both set; AArch64 FPCR.FZ).
extern bool g_microStepFlushedDenormals;
/// The same for the calling thread now.
bool flushingDenormalsHere();

/// The program for `cfg` (owns the strings and descriptors it points to).
/// Registers `cfg` as the configuration the micro-step reads.
class TestProgram {
public:
  TestProgram(const ModelConfig &cfg, const std::string &blobFile);
  TestProgram(const TestProgram &) = delete;
  TestProgram &operator=(const TestProgram &) = delete;

  zeroc_rt_program_t program;
  zeroc_rt_param_desc_t params[2]; ///< program.params
  zeroc_rt_buffer_desc_t buffers[1]; ///< program.buffers (cfg.buffer)
  const char *opNames[2] = {"test.forward", "test.backward"}; ///< program.op_names
  const zeroc_rt_program_t *get() const { return &program; }

private:
  ModelConfig cfg;
  std::string blobFile, hint, csvPath, csvJob;
  zeroc_rt_input_desc_t inputs[2];
};

struct Data {
  std::vector<double> x; ///< samples x 3
  std::vector<double> y; ///< samples x 2
};
/// Deterministic data, already rounded to `dtype`.
Data makeData(int64_t samples, zeroc_rt_dtype_t dtype);
std::vector<double> initialW(zeroc_rt_dtype_t dtype);
std::vector<double> initialB(zeroc_rt_dtype_t dtype);

/// Writes DIR/x.npy and DIR/y.npy (dtype of cfg). Returns "" or an error.
std::string writeData(const std::string &dir, const Data &data,
                      zeroc_rt_dtype_t dtype);
/// Writes the kBlobBytes blob with W at 0 and b at kBiasOffset.
/// The blob's bytes: the initial W and b in `dtype`, `bytes` long.
std::string blobBytes(zeroc_rt_dtype_t dtype, int64_t bytes = kBlobBytes);
std::string writeBlob(const std::string &path, zeroc_rt_dtype_t dtype,
                      int64_t bytes = kBlobBytes);
/// Saves an arbitrary array (doubles converted to dtype).
std::string saveArray(const std::string &path, zeroc_rt_dtype_t dtype,
                      const std::vector<int64_t> &dims,
                      const std::vector<double> &values);

struct Reference {
  std::vector<double> losses, gradNorms; ///< norm -1 for skipped steps
  std::vector<double> lrs, lossScales;
  std::vector<bool> skipped;
  std::vector<double> w, b; ///< final parameters
};
/// Skips the steps in g_faults.overflowSteps when cfg.scaler is enabled.
Reference reference(const ModelConfig &cfg, const Data &data, int64_t steps);

struct JsonRecord {
  double step = 0, loss = 0, lr = 0, gradNorm = 0, timeMs = -1,
         samplesPerS = -1, lossScale = -1, fwdMs = -1, bwdMs = -1,
         bwdInnerMs = -1, bwdAllreduceMs = -1, stepMs = -1;
  bool skipped = false;
  bool hasAllKeys = false;
};
/// Parses a JSONL log (missing file: empty).
std::vector<JsonRecord> readJsonl(const std::string &path);
/// Loads a .npy as doubles; empty + *error on failure.
std::vector<double> readArray(const std::string &path, zeroc_rt_dtype_t *dtype,
                              std::vector<int64_t> *dims, std::string *error);
std::string readFile(const std::string &path);

/// |a - b| <= tol * max(|a|, |b|, 1e-2); NaNs never match.
bool near(double a, double b, double tol);

struct RunResult {
  int rc = -1;
  std::string out, err;
};
/// Runs zeroc_rt_train_main(["train", args...]) in this process, capturing
/// stdout and stderr.
RunResult runTrain(const zeroc_rt_program_t *program,
                   const std::vector<std::string> &args);

/// mkdtemp'd directory removed with its contents.
class ScratchDir {
public:
  ScratchDir();
  /// Uses (and creates) `fixed` and keeps it afterwards, for runs that may
  /// be killed before they can clean up; an empty `fixed` is a temporary
  /// directory as above.
  explicit ScratchDir(const std::string &fixed);
  ~ScratchDir();
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;
  const std::string &path() const { return root; }
  std::string file(const std::string &name) const { return root + "/" + name; }

private:
  std::string root;
  bool keep = false;
};

} // namespace zeroc_rt::test::train

#endif // ZEROC_RT_TESTS_TRAIN_TEST_MODEL_H
