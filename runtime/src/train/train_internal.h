//===- train_internal.h - Pieces of the training engine ---------*- C++ -*-===//
//
// Internal to the runtime: the engine object behind zeroc_rt_engine_t and the
// helpers train_main.cc strings together (argument parsing, data loading and
// micro-batch assembly, the ZeRO state, the optimizer-step boundary, metrics
// and parameter dumps). See zeroc_rt/train.h for the contract.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_SRC_TRAIN_TRAIN_INTERNAL_H
#define ZEROC_RT_SRC_TRAIN_TRAIN_INTERNAL_H

#include "train/device.h"
#include "train/loss_scaler.h"
#include "zeroc_rt/npy.h"
#include "zeroc_rt/train.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace zeroc_rt::train {

//===----------------------------------------------------------------------===//
// Small utilities (util.cc)
//===----------------------------------------------------------------------===//

constexpr size_t kAlignment = 64;

/// A zero-initialized, 64-byte aligned block of memory (never NULL once
/// allocated, even for 0 bytes).
class AlignedBuffer {
public:
  ZEROC_RT_MUST_USE zeroc_rt_status_t allocate(size_t bytes, const char *what);
  void *data() const { return ptr.get(); }
  char *bytes() const { return static_cast<char *>(ptr.get()); }
  size_t size() const { return sizeBytes; }
  /// Hands the memory (std::free it) to the caller.
  void *release() {
    sizeBytes = 0;
    return ptr.release();
  }

private:
  struct Free {
    void operator()(void *p) const { std::free(p); }
  };
  std::unique_ptr<void, Free> ptr;
  size_t sizeBytes = 0;
};

inline size_t roundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

/// The status message without its "file:line: " prefix (kept for INTERNAL
/// errors, which are runtime bugs worth locating).
std::string statusText(zeroc_rt_status_t status);

/// NULL for a NULL `inner`; otherwise a new status with the code of `inner`
/// and the message "<prefix><statusText(inner)><suffix>" (frees `inner`).
ZEROC_RT_MUST_USE zeroc_rt_status_t wrapStatus(const char *file, int line,
                                               zeroc_rt_status_t inner,
                                               const std::string &prefix,
                                               const std::string &suffix = "");
#define ZEROC_RT_TRAIN_WRAP(inner, ...)                                        \
  ::zeroc_rt::train::wrapStatus(__FILE__, __LINE__, (inner), __VA_ARGS__)

/// Collective over `comm`: every rank learns whether any rank failed. Returns
/// `local` (taking it) when this rank failed; otherwise, when another did,
/// an error "rank F failed <phase> (see its error)" naming the lowest failing
/// rank; NULL when none did. *commFailed is set when the all-reduce itself
/// failed (the ranks may be out of step).
ZEROC_RT_MUST_USE zeroc_rt_status_t agreeOnFailures(zeroc_rt_comm_t *comm,
                                                    zeroc_rt_status_t local,
                                                    const char *phase,
                                                    bool *commFailed);

/// printf into a std::string.
std::string format(const char *fmt, ...) ZEROC_RT_PRINTF(1, 2);

/// "(10, 3)" / "(S, 3)" / "()" / "(S,)" in numpy's tuple style. With
/// `sampleDim`, dim 0 is printed as "S".
std::string shapeString(int32_t rank, const int64_t *dims,
                        bool sampleDim = false);

/// Product of dims, or -1 on overflow of int64 / a negative dim.
int64_t elementCount(int32_t rank, const int64_t *dims);

/// A hash of this machine's host name (0 when it has none), which ranks
/// compare to tell which of them share a machine.
uint64_t hostHash();

/// The value of the first of environment variables `names` that is set, a
/// decimal number from 0 to 2^20 - 1 (a launcher's rank or local rank);
/// `fallback` when none is set, or the first that is set is not such a
/// number.
int envInt(std::initializer_list<const char *> names, int fallback);

/// A JSON string literal (quotes included) for `text`.
std::string jsonString(const std::string &text);

/// The file name a parameter is saved under: '/' becomes '_', and "." / ".."
/// get a leading '_' (as tools/reference/onnx_torch_train.py does), + ".npy".
std::string paramFileName(const std::string &name);

/// fopen(path, "w") that never blocks: a FIFO no process reads is
/// ENXIO instead of a hang. NULL with errno set on failure.
std::FILE *openForWriting(const std::string &path);

/// mkdir -p; an existing directory is fine.
ZEROC_RT_MUST_USE zeroc_rt_status_t makeDirectories(const std::string &path);

/// Sets (or clears) flush-to-zero and denormals-are-zero for the calling
/// thread while it lives (x86's MXCSR FTZ/DAZ bits, AArch64's FPCR.FZ), and
/// restores the thread's previous mode after. Denormal operands and results
/// make every float op on them many times slower on CPUs; GPUs flush them,
/// as torch.set_flush_denormal(True) does on CPUs.
class DenormalModeScope {
public:
  explicit DenormalModeScope(bool flush);
  ~DenormalModeScope();
  DenormalModeScope(const DenormalModeScope &) = delete;
  DenormalModeScope &operator=(const DenormalModeScope &) = delete;

private:
  uint64_t saved = 0;
};

/// Directory of the running executable (/proc/self/exe), without the slash.
ZEROC_RT_MUST_USE zeroc_rt_status_t executableDirectory(std::string &out);

//===----------------------------------------------------------------------===//
// Command line (args.cc)
//===----------------------------------------------------------------------===//

constexpr int64_t kDefaultMaxSkippedSteps = 50;
/// --collective-timeout's default, DeepSpeed's (torch.distributed's
/// default_pg_timeout): 30 minutes.
constexpr double kDefaultCollectiveTimeoutS = 1800;

struct Args {
  std::string data;
  int64_t steps = -1;
  std::string logJsonl;   ///< empty: no JSONL log
  std::string saveParams; ///< empty: no parameter dump
  /// Fail when this many consecutive steps in a row were skipped for a
  /// gradient overflow (no optimizer step taken); 0: no limit.
  int64_t maxSkippedSteps = kDefaultMaxSkippedSteps;
  /// Flush-to-zero and denormals-are-zero on the compute thread.
  bool flushDenormals = true;
  std::string traceDir; ///< empty: no trace
  /// --comm: the collectives' backend ("nccl" or "mpi"; empty: the
  /// platform's default).
  std::string comm;
  /// --save-dir / --save-interval (0: after the last step only).
  std::string saveDir;
  int64_t saveInterval = 0;
  /// --load-dir / --load-tag (empty: the tag DIR/latest names).
  std::string loadDir, loadTag;
  /// --collective-timeout: seconds a collective may block before the rank
  /// gives up (0: never; watchdog.h).
  double collectiveTimeout = kDefaultCollectiveTimeoutS;
  /// --bind-core-list: the CPUs this node's ranks share out (empty: the
  /// binding the launcher gave; bind_cores.cc).
  std::vector<int> bindCores;
  bool quiet = false;
  bool help = false;
};

/// --bind-core-list (bind_cores.cc): binds every thread of this process to
/// its local rank's share of `cpus` among the ranks on its host, and says
/// so in `summary`. Collective over `comm`.
ZEROC_RT_MUST_USE zeroc_rt_status_t bindCores(const std::vector<int> &cpus, zeroc_rt_comm_t *comm,
                                              std::string *summary);

/// The one-line usage text ("usage: train --data DIR --steps N ...").
std::string usageText(const char *argv0);

/// Parses argv[1..argc). Errors are INVALID_ARGUMENT statuses whose message
/// ends with the usage text.
ZEROC_RT_MUST_USE zeroc_rt_status_t parseArgs(int argc, char **argv,
                                              Args &args);

//===----------------------------------------------------------------------===//
// Program validation and blob (program.cc)
//===----------------------------------------------------------------------===//

/// Checks every field the engine relies on; messages start with
/// "invalid program".
ZEROC_RT_MUST_USE zeroc_rt_status_t
validateProgram(const zeroc_rt_program_t *program);

/// `recompile_hint` (zeroc's command line without its --world-size) with
/// `--world-size worldSize` appended; "" without a hint.
std::string recompileHint(const zeroc_rt_program_t &program, int worldSize);

/// Reads the blob file (relative paths resolve against the executable's
/// directory) into `blob`; the file must have exactly blob_bytes bytes.
ZEROC_RT_MUST_USE zeroc_rt_status_t loadBlob(const zeroc_rt_program_t &program,
                                             AlignedBuffer &blob);

//===----------------------------------------------------------------------===//
// Data (data.cc)
//===----------------------------------------------------------------------===//

struct NpyFree {
  void operator()(zeroc_rt_npy_t *array) const { zeroc_rt_npy_free(array); }
};

class Dataset {
public:
  /// Loads and checks DIR/<input>.npy for every input of the program; the
  /// micro-batches the micro-step reads are in `device`'s memory.
  ZEROC_RT_MUST_USE zeroc_rt_status_t load(const zeroc_rt_program_t &program,
                                           const std::string &dir,
                                           Device &device);
  /// Copies samples (first + j) mod S, j in [0, MB), of every input into the
  /// micro-batch buffers (and uploads them to the device's).
  ZEROC_RT_MUST_USE zeroc_rt_status_t fillMicroBatch(int64_t first);
  /// First sample of global micro-batch m of this run's optimizer step s:
  /// (origin + s*G + m*MB) mod S, without overflow.
  int64_t firstSample(int64_t step, int64_t microBatch) const;
  /// A resumed run continues after the `samplesConsumed` samples its
  /// checkpoint's steps read (origin = samplesConsumed mod S).
  void setOrigin(int64_t samplesConsumed);

  int64_t samples() const { return numSamples; }
  const void *const *inputs() const { return pointers.data(); }

private:
  const zeroc_rt_program_t *program = nullptr;
  int64_t numSamples = 0;
  int64_t globalBatch = 0; ///< G = MB * GAS * W
  int64_t origin = 0;      ///< in [0, S)
  std::vector<std::unique_ptr<zeroc_rt_npy_t, NpyFree>> arrays;
  std::vector<size_t> sampleBytes;
  std::vector<AlignedBuffer> batches;
  Device *device = nullptr;
  std::vector<DeviceBuffer> deviceBatches; ///< unless the device is the host
  std::vector<const void *> pointers;
};

//===----------------------------------------------------------------------===//
// ZeRO state (state.cc)
//===----------------------------------------------------------------------===//

/// One parameter's buffers; see the layout comment in train.h. A frozen
/// one has only replica / shardParam.
struct ParamState {
  const zeroc_rt_param_desc_t *desc = nullptr;
  bool frozen = false; ///< desc->frozen: no gradient, never updated
  zeroc_rt_dtype_t dtype = ZEROC_RT_DTYPE_F32;
  size_t elemSize = 0;
  int64_t numel = 0;  ///< n
  int64_t padded = 0; ///< P = ceil(n / W) * W
  int64_t shard = 0;  ///< S = P / W

  /// The optimizer's copy (desc->master_dtype); == dtype: none, the
  /// optimizer updates the parameter itself.
  zeroc_rt_dtype_t masterDtype = ZEROC_RT_DTYPE_F32;
  size_t masterElemSize = 0;
  /// The gradient accumulators' dtype (desc->grad_dtype): dtype, or f32.
  zeroc_rt_dtype_t gradDtype = ZEROC_RT_DTYPE_F32;
  size_t gradElemSize = 0;

  void *replica = nullptr;    ///< param_stride 0: all P elements
  void *shardParam = nullptr; ///< otherwise: the rank's slice
  /// With a master dtype: the f32 copy of the update elements (updateCount,
  /// the rank's partition in stages 1-3); NULL otherwise.
  void *master = nullptr;
  /// Gradient accumulator (gradDtype): stage 0: n; stage 1: P (first n
  /// accumulated, the padding stays zero for the reduce-scatter); stages
  /// 2-3: S.
  void *grad = nullptr;
  void *expAvg = nullptr;    ///< Adam m (update count elements, master dtype)
  void *expAvgSq = nullptr;  ///< Adam v
  void *momentum = nullptr;  ///< SGD momentum buffer (when momentum != 0)

  // From the descriptor's layout (zero.state_layout), for this rank.
  int64_t keptFirst = 0, keptCount = 0;      ///< kept parameter elements
  int64_t gradCount = 0;                     ///< accumulator elements
  int64_t updateFirst = 0, updateCount = 0;  ///< updated elements
  void *updateParam = nullptr; ///< the kept storage at element updateFirst
  int64_t accumulateCount = 0; ///< what grad_accumulate expects: n or S
  /// zeroc_rt_engine::microStepSerial of the micro-step that last
  /// accumulated into grad (its gradient or its rows).
  uint64_t accumulatedInMicroStep = 0;

  bool hasMaster() const { return masterDtype != dtype; }
};

/// A model buffer (zeroc_rt_buffer_desc_t): whole on every rank.
struct BufferState {
  const zeroc_rt_buffer_desc_t *desc = nullptr;
  void *data = nullptr; ///< numel elements of desc->dtype
};

struct ZeroState {
  int rank = 0, world = 1;
  int64_t psi = 0;    ///< total elements of the trainable parameters
  int64_t frozen = 0; ///< total elements of the frozen parameters
  std::vector<ParamState> params;
  std::vector<BufferState> buffers;
  /// Where every buffer below lives.
  Device *device = nullptr;
  DeviceBuffer paramStorage, gradStorage, optimStorage, bufferStorage;
  /// The largest update of a parameter with a master copy, in the master
  /// dtype: its 16-bit gradient converted for the optimizer (DeepSpeed's
  /// transient fp32 partition gradient, one parameter at a time here).
  DeviceBuffer masterGrad;

  /// Zeroes each accumulator's elements past those the micro-step
  /// accumulates (a padded accumulator's padding), which the step's first
  /// accumulation, a write (zeroc_rt_engine::firstAccumulation), leaves.
  ZEROC_RT_MUST_USE zeroc_rt_status_t zeroGradientTails();
};

/// Lays out the buffers of every parameter for the stage in `device`'s
/// memory and copies the initial values out of the (host) blob.
ZEROC_RT_MUST_USE zeroc_rt_status_t
buildZeroState(const zeroc_rt_program_t &program, const char *blob, int rank,
               int world, Device &device, ZeroState &state);

//===----------------------------------------------------------------------===//
// Metrics (metrics.cc)
//===----------------------------------------------------------------------===//

/// Wall-clock time (this rank's own clock, in milliseconds) of DeepSpeed's
/// wall_clock_breakdown timers, for one micro-step or, summed, one optimizer
/// step:
///  - fwd: the micro-step up to the end of its forward pass (the generated
///    zeroc_rt_engine_mark_backward call), stage 3's parameter gathers there
///    included (DeepSpeed's fwd timer also holds them);
///  - bwd_inner: the rest of the micro-step, less the time spent in
///    collectives there;
///  - bwd_allreduce: the collectives of the backward pass (stage 2-3
///    reduce-scatters, stage 3's re-gathers), and for the last micro-step of
///    an optimizer step the step-boundary gradient reduction (stage 0's
///    all-reduce, stage 1's reduce-scatter, which DeepSpeed runs in the
///    boundary's backward) and the loss all-reduce;
///  - bwd = bwd_inner + bwd_allreduce;
///  - step: the rest of the optimizer step (overflow check and its
///    all-reduce, norm, clipping, the update, the stage 1-2 parameter
///    all-gather).
/// Without a backward marker (a program emitted before it existed) the whole
/// micro-step counts as fwd.
struct StepTimes {
  double fwdMs = 0, bwdInnerMs = 0, bwdAllreduceMs = 0, stepMs = 0;
  double bwdMs() const { return bwdInnerMs + bwdAllreduceMs; }
  void add(const StepTimes &t) {
    fwdMs += t.fwdMs;
    bwdInnerMs += t.bwdInnerMs;
    bwdAllreduceMs += t.bwdAllreduceMs;
    stepMs += t.stepMs;
  }
};

struct StepRecord {
  int64_t step = 0;   ///< 1-based
  int64_t steps = 0;  ///< total steps of the run
  double loss = 0;    ///< unscaled
  double lr = 0;      ///< the lr of this step (also when it was skipped)
  double gradNorm = 0; ///< inf for a skipped step (as DeepSpeed 0.19 logs it)
  double lossScale = 1; ///< the scale this step's backward used
  bool skipped = false; ///< skipped for a gradient overflow
  double seconds = 0;
  int64_t samples = 0; ///< G
  StepTimes times;
  /// This rank's device allocations at their peak so far (Device).
  size_t maxAllocatedBytes = 0;
};

/// JSONL writer (rank 0 only): one object per optimizer step, flushed per
/// line.
class JsonlLog {
public:
  ~JsonlLog();
  ZEROC_RT_MUST_USE zeroc_rt_status_t open(const std::string &path);
  ZEROC_RT_MUST_USE zeroc_rt_status_t write(const StepRecord &record);
  ZEROC_RT_MUST_USE zeroc_rt_status_t close();
  bool isOpen() const { return file != nullptr; }

private:
  std::string path;
  std::FILE *file = nullptr;
};

std::string headerLine(const zeroc_rt_program_t &program, int64_t psi,
                       int64_t samples);
/// zeroc's per-step console line:
///   step 3/7 | loss 0.123456 | lr 5.000e-02 | loss_scale 65536 |
///   grad_norm 0.1234 | 1.2 ms | 6482 samples/s[ | skipped]
/// (grad_norm inf for a skipped step).
std::string consoleLine(const StepRecord &record);

/// Setup check of --save-params DIR before any step (per rank): creates
/// DIR/rank<r>, checks that a file can be created there, that every
/// parameter's file name (and the temporary name it is written under) fits
/// the file system's NAME_MAX and PATH_MAX, and that the file system has
/// room for the bytes the save will write. Messages start with
/// "--save-params".
/// What a rank's save needs of its file system, for checkSaveSpace.
struct SaveSpace {
  int64_t fsKey = 0; ///< identifies (host, file system); 0: unknown
  int64_t need = 0;  ///< bytes this rank writes
  int64_t avail = 0; ///< bytes free there
};
ZEROC_RT_MUST_USE zeroc_rt_status_t checkSaveTarget(const ZeroState &state,
                                                    const std::string &dir,
                                                    int rank, SaveSpace &space);

/// Collective, after every rank's checkSaveTarget succeeded: the ranks that
/// save to one file system on one host must fit in its free space together
/// (the usual mpirun -np W on one machine writes W rank folders to one
/// disk). Every rank gets the same verdict. *commFailed is set when the
/// all-gather itself failed.
ZEROC_RT_MUST_USE zeroc_rt_status_t checkSaveSpace(zeroc_rt_comm_t *comm,
                                                   const SaveSpace &mine,
                                                   const std::string &dir,
                                                   bool *commFailed);

//===----------------------------------------------------------------------===//
// OpenBLAS kernels that match the CPU (blas_core.cc)
//===----------------------------------------------------------------------===//

struct CpuFeatures {
  bool avx2 = false, fma = false;
  bool avx512 = false; ///< AVX-512 F, BW, DQ and VL
};

/// The OpenBLAS core type (OPENBLAS_CORETYPE) to use instead of `chosen`,
/// OpenBLAS's own choice, on a CPU with `cpu`'s features; NULL when its
/// choice is fine (or nothing better is possible).
const char *betterOpenBlasCore(const std::string &chosen, const CpuFeatures &cpu);

/// Before MPI starts: re-executes this program (/proc/self/exe, the same
/// argv and environment) with OPENBLAS_CORETYPE set when OpenBLAS chose
/// kernels older than the CPU allows; returns when it does not (the user
/// set OPENBLAS_CORETYPE, it already re-executed once, or exec failed).
void reexecWithMatchingBlas(int argc, char **argv);

/// The console note of a re-executed run ("" otherwise).
std::string blasCoreNote();

//===----------------------------------------------------------------------===//
// --trace (trace.cc)
//===----------------------------------------------------------------------===//

/// Chrome / Perfetto trace events of one rank, written as
/// DIR/rank<r>.trace.json: the micro-step's ops on the compute track
/// (tid 0), every collective on the communication track (tid 1), and the
/// engine's own phases (micro-step, optimizer step) on the compute track,
/// as the host ran or queued them; a device that runs its work later (a
/// GPU's streams) adds its own timeline: the ops as its compute stream ran
/// them (tid 2) and the collectives as its communication stream did
/// (tid 3).
/// Names point at static strings or the program's op names (never copied).
/// At most kMaxEvents events are kept; the rest are counted as dropped.
class Tracer {
public:
  using Clock = std::chrono::steady_clock;
  static constexpr size_t kMaxEvents = 1 << 20;
  enum Track { kCompute = 0, kComm = 1, kDeviceCompute = 2, kDeviceComm = 3 };

  /// Creates DIR and checks that DIR/rank<r>.trace.json can be written.
  ZEROC_RT_MUST_USE zeroc_rt_status_t open(const std::string &dir, int rank);
  bool enabled() const { return on; }
  void span(Track track, const char *name, const char *category,
            Clock::time_point begin, Clock::time_point end, int64_t bytes = -1);
  /// Ends the current op (if any) and starts op `name` now.
  void beginOp(const char *name);
  /// Ends the current op, if any.
  void endOp();
  /// Writes the file (atomically: a temporary file, then a rename).
  ZEROC_RT_MUST_USE zeroc_rt_status_t write() const;

private:
  struct Event {
    const char *name, *category;
    Track track;
    Clock::time_point begin, end;
    int64_t bytes;
  };
  bool on = false;
  int rank = 0;
  std::string path;
  Clock::time_point origin;
  std::vector<Event> events;
  size_t dropped = 0;
  const char *opName = nullptr;
  Clock::time_point opBegin;
};

//===----------------------------------------------------------------------===//
// Optimizer hyperparameters and the optimizer step (step.cc)
//===----------------------------------------------------------------------===//

/// What the optimizer kernels get at an update taken after `t` scheduler
/// steps: the scheduled lr and, for Adam, the betas (OneCycle with
/// cycle_momentum: (cycled momentum, 0.99), as DeepSpeed writes them into
/// the optimizer's param group) or, for SGD, the momentum (DeepSpeed's
/// OneCycle does not cycle SGD's momentum: SGD has no betas).
struct StepHyper {
  double lr = 0, beta1 = 0, beta2 = 0, momentum = 0;
};
StepHyper hyperAt(const zeroc_rt_program_t &program, int64_t t);

/// In setup: the error the optimizer step would give at the first of
/// optimizer steps 1..`steps` whose scheduled hyperparameters are invalid
/// (a non-finite lr, a cycled beta1 outside [0, 1)), naming the step; NULL
/// when all are valid.
ZEROC_RT_MUST_USE zeroc_rt_status_t
checkSchedule(const zeroc_rt_program_t &program, int64_t steps);

} // namespace zeroc_rt::train

/// The engine handed to the generated micro-step.
struct zeroc_rt_engine {
  const zeroc_rt_program_t *program = nullptr;
  zeroc_rt_comm_t *comm = nullptr;
  int rank = 0, world = 1;
  /// Where the state, the arena and the micro-batches live.
  zeroc_rt::train::Device *device = &zeroc_rt::train::hostDevice();
  zeroc_rt::train::DeviceBuffer arena;
  /// The blob's constants (from blob_constants_offset on), which the
  /// generated code reads (zeroc_rt_engine_constants): in host memory when
  /// the device is the host, else in the device's memory. The initial
  /// values before them are read once, in setup, and not kept.
  zeroc_rt::train::AlignedBuffer constants;
  zeroc_rt::train::DeviceBuffer deviceConstants;
  zeroc_rt::train::ZeroState state;
  uint64_t dropoutCounter = 0;
  /// The micro-step is its optimizer step's first: grad_accumulate writes
  /// the accumulator (as adding to a zeroed one would, without the memset
  /// and the read) instead of adding to it: the parameter's first
  /// accumulation of the micro-step does (microStepSerial), which covers
  /// all of it: every trainable parameter is accumulated once per
  /// micro-step, or its rows and at most once densely (zero-verify-
  /// partition checks it); false outside the training loop (add).
  bool firstAccumulation = false;
  /// Counts the micro-steps run (the first is 1): an accumulation in the
  /// first micro-step writes only if no other accumulation of the same
  /// parameter (its gradient and its rows, zero.grad_accumulate_rows) came
  /// first in it.
  uint64_t microStepSerial = 0;
  /// zeroc_rt_engine_grad_accumulate_rows's all-gathered indices and rows,
  /// kept from call to call.
  std::vector<int64_t> rowIndices;
  zeroc_rt::train::DeviceBuffer rowIndicesOnDevice, rowValues;
  /// Updates applied so far: Adam's step count and the LR scheduler's step
  /// count (both advance only on steps that were not skipped).
  int64_t optimizerSteps = 0;
  int64_t skippedSteps = 0;
  /// DeepSpeed's loss scaler; scaler.cur_scale is what
  /// zeroc_rt_engine_loss_scale returns (1 without loss scaling).
  zeroc_rt_loss_scaler_state_t scaler = {};
  /// Set by the generated train_step's engine calls: the loss scaler's log
  /// line, whether an error it returns is one every rank returns, and when
  /// its gradient reduction ended.
  std::string scalerLog;
  bool stepErrorAgreed = false;
  bool reducedMarked = false;
  std::chrono::steady_clock::time_point reducedAt;
  zeroc_rt::train::StepTimes times; ///< of the current optimizer step
  /// Set by zeroc_rt_engine_mark_backward during the current micro-step:
  /// when its backward pass started, and comm->collectiveMs then.
  bool backwardMarked = false;
  zeroc_rt::train::Tracer tracer;
  std::chrono::steady_clock::time_point backwardStart;
  double collectiveMsAtBackward = 0;
  /// zeroc_rt_engine_stash_loss: the current step's micro-step losses, left
  /// in the device's memory (8 bytes a slot), until the step reads them.
  zeroc_rt::train::DeviceBuffer lossSlots;
  int stashedLosses = 0;
  zeroc_rt_dtype_t stashedDtype = ZEROC_RT_DTYPE_F32;
};

namespace zeroc_rt::train {

/// The sum of the losses the step's micro-steps stashed (one read of the
/// device's memory); forgets them.
ZEROC_RT_MUST_USE zeroc_rt_status_t readStashedLosses(zeroc_rt_engine_t &engine,
                                                      double *sum);

struct StepOutcome {
  double gradNorm = 0;  ///< pre-clipping norm (inf when skipped; may be inf or NaN)
  double lr = 0;        ///< the lr of this step
  double lossScale = 1; ///< the scale this step's backward used
  bool skipped = false; ///< gradient overflow: no update
  std::string scalerLog; ///< the loss scaler's log line ("" for none)
};

/// Runs the program's train_step after the micro-steps of one step and
/// fills `out`: its lr and norm (inf when skipped), the scale its backward
/// used and the loss scaler's log line. Adds the time up to the end of the
/// gradient reduction to engine.times.bwdAllreduceMs and the rest to its
/// stepMs. On an error, *agreed tells whether every rank returns the same
/// error at the same point (the loss scale is already at its minimum), so
/// that the ranks are still in step; any other error may leave the ranks
/// out of step.
ZEROC_RT_MUST_USE zeroc_rt_status_t runTrainStep(zeroc_rt_engine &engine,
                                                 StepOutcome &out, bool *agreed);

/// Writes DIR/rank<r>/<param>.npy on every rank (stage 3 all-gathers the
/// shards; a write error does not skip the remaining collectives) and
/// DIR/params.json on rank 0. *desynced is set when the error left this rank
/// out of step with the others' collectives.
ZEROC_RT_MUST_USE zeroc_rt_status_t saveParams(zeroc_rt_engine &engine,
                                               const std::string &dir,
                                               bool *desynced);

} // namespace zeroc_rt::train

#endif // ZEROC_RT_SRC_TRAIN_TRAIN_INTERNAL_H
