//===- train_main.cc - zeroc_rt_train_main: the training loop ---*- C++ -*-===//
//
// Flow: parse arguments -> start MPI -> validate the program and the world
// size -> set up (data, blob, ZeRO state, arena, JSONL log) -> optimizer
// steps -> --save-params -> finalize.
//
// Errors: every failing process prints exactly one line
//   [rank R: ]train: error: <message>
// (the prefix when the world has more than one rank) and returns 1. Where a
// failure may be local to one rank, the ranks agree before going on, so they
// fail together instead of leaving someone blocked in a collective:
//  - setup and the final save/log close: an all-reduce of a failure flag
//    (ranks that did not fail name the lowest failing rank);
//  - each optimizer step: the loss all-reduce also carries a micro-step
//    failure count and a deferred rank-0 log-write failure (JSONL or CSV);
//  - a NaN/inf step loss is seen identically by every rank (without loss
//    scaling; with it, as in DeepSpeed, only an overflow in the gradients
//    matters: it skips the step);
//  - invalid scheduled hyperparameters (checked for every step in setup, and
//    again at each step) and a loss scale that cannot decrease any more are
//    seen identically by every rank;
//  - so are skipped steps (the overflow flag is all-reduced): the run fails
//    on every rank after --max-skipped-steps consecutive skipped steps, or at
//    the end when every step was skipped;
//  - --save-params is checked in setup (the directory can be created and
//    written, every file name fits the file system and is free or a regular
//    file, there is room), so that a save that cannot succeed fails before
//    the first step.
//
// Console (rank 0, not with --quiet): the header line; the loss scaler's log
// lines as DeepSpeed prints them ("[deepspeed] OVERFLOW! ...", for a static
// scale too); with steps_per_print > 0, every steps_per_print steps and at
// the last step DeepSpeed's progress line "[Rank 0] step=N, skipped=K,
// lr=[..], mom=[..]" (the lr and momentum the optimizer holds after that
// step's scheduler step, as DeepSpeed prints them) and zeroc's line with
// this step's loss, lr, loss scale, grad norm (inf when skipped) and speed
// (steps_per_print <= 0, DeepSpeed's null: neither); and with
// wall_clock_breakdown, as DeepSpeed 0.19 prints them whatever
// steps_per_print is, after every micro-step "[Rank 0] time (ms) |
// fwd_microstep: .. | bwd_microstep: .. | bwd_inner_microstep: .. |
// bwd_allreduce_microstep: .. | step_microstep: .." and after every
// optimizer step the global timers "[Rank 0] time (ms) | fwd: .. | bwd: .. |
// bwd_inner: .. | bwd_allreduce: .. | step: .." of its micro-steps (see
// StepTimes in train_internal.h).
// A failure that can leave ranks out of step in their collectives (a
// micro-step failure in stages 2-3, whose micro-steps run collectives; any
// error in the optimizer-step boundary; a failed collective) cannot be
// agreed on: that rank reports, skips MPI_Finalize (which would block) and
// returns 1, and the MPI launcher then terminates the job.
//
//===----------------------------------------------------------------------===//

#include "train/checkpoint.h"
#include "train/train_internal.h"

#include "comm_internal.h"
#include "status_internal.h"
#include "train/monitor.h"
#include "train/watchdog.h"
#include "zeroc_rt/checksum.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <limits>
#include <new>

namespace zeroc_rt::train {
namespace {

using Clock = std::chrono::steady_clock;

/// This process's communicator and its one error line.
class Session {
public:
  zeroc_rt_comm_t *comm = nullptr;
  int rank = 0, world = 1;
  /// Set when this rank may be out of step with the others' collectives.
  bool desynced = false;

  void report(const std::string &message) {
    if (reported)
      return;
    reported = true;
    std::fflush(stdout);
    if (world > 1)
      std::fprintf(stderr, "rank %d: train: error: %s\n", rank, message.c_str());
    else
      std::fprintf(stderr, "train: error: %s\n", message.c_str());
    std::fflush(stderr);
  }

  /// Reports `status` (freed) and returns the exit code 1.
  int fail(zeroc_rt_status_t status) {
    report(statusText(status));
    zeroc_rt_status_free(status);
    return 1;
  }

  /// Collective: every rank learns whether any rank failed. Returns 0 when
  /// nobody did; otherwise reports this rank's own error, or that rank F
  /// (the lowest failing one) failed `phase`, and returns 1. Frees `local`.
  int agree(zeroc_rt_status_t local, const char *phase) {
    bool commFailed = false;
    zeroc_rt_status_t status = agreeOnFailures(comm, local, phase, &commFailed);
    desynced = desynced || commFailed;
    return status ? fail(status) : 0;
  }

  /// Finalizes the communicator unless that could block, and returns the
  /// exit code.
  int finish(int rc) {
    if (comm && !(desynced && world > 1)) {
      zeroc_rt_status_t status = zeroc_rt_comm_finalize(comm);
      if (status) {
        if (rc == 0)
          rc = fail(ZEROC_RT_TRAIN_WRAP(status, "finalizing MPI: "));
        else
          zeroc_rt_status_free(status);
      }
    }
    comm = nullptr;
    return rc;
  }

private:
  bool reported = false;
};

std::string worldSizeMessage(const zeroc_rt_program_t &program, int world) {
  std::string hint = recompileHint(program, world);
  return format("this program was compiled for --world-size %d but was started "
                "with %d rank%s; run it with mpirun -np %d, or recompile%s%s",
                program.world_size, world, world == 1 ? "" : "s",
                program.world_size, hint.empty() ? " with --world-size " : ": ",
                hint.empty() ? std::to_string(world).c_str() : hint.c_str());
}

/// Per-process setup; errors may be local to this rank.
zeroc_rt_status_t setUp(zeroc_rt_engine &engine, Dataset &data, JsonlLog &log,
                        CsvMonitor &csv, const Args &args, SaveSpace &space,
                        TrainPosition &resumed) {
  const zeroc_rt_program_t &program = *engine.program;
  ZEROC_RT_RETURN_IF_ERROR(checkSchedule(program, args.steps));
  Device &device = *engine.device;
  ZEROC_RT_RETURN_IF_ERROR(data.load(program, args.data, device));
  // The initial values build the state and are dropped with `blob` at the
  // end of setup; the constants after them are kept where the kernels read
  // them (a model's initial weights are not kept next to its ZeRO state).
  AlignedBuffer blob;
  ZEROC_RT_RETURN_IF_ERROR(loadBlob(program, blob));
  const size_t from = static_cast<size_t>(program.blob_constants_offset);
  const size_t constantBytes = blob.size() - from;
  if (device.hostMemory()) {
    ZEROC_RT_RETURN_IF_ERROR(engine.constants.allocate(constantBytes, "the model's constants"));
    if (constantBytes)
      std::memcpy(engine.constants.data(), blob.bytes() + from, constantBytes);
  } else {
    ZEROC_RT_RETURN_IF_ERROR(
        engine.deviceConstants.allocate(device, constantBytes, "the model's constants"));
    ZEROC_RT_RETURN_IF_ERROR(
        device.upload(engine.deviceConstants.data(), blob.bytes() + from, constantBytes));
  }
  ZEROC_RT_RETURN_IF_ERROR(buildZeroState(program, blob.bytes(), engine.rank,
                                          engine.world, device, engine.state));
  zeroc_rt_loss_scaler_init(&engine.scaler, &program.loss_scaler);
  if (!args.loadDir.empty()) {
    ZEROC_RT_RETURN_IF_ERROR(
        loadCheckpoint(engine, args.loadDir, args.loadTag, resumed));
    data.setOrigin(resumed.globalSamples);
  }
  if (!args.saveParams.empty())
    ZEROC_RT_RETURN_IF_ERROR(
        checkSaveTarget(engine.state, args.saveParams, engine.rank, space));
  if (!args.saveDir.empty())
    ZEROC_RT_RETURN_IF_ERROR(checkCheckpointDir(args.saveDir));
  ZEROC_RT_RETURN_IF_ERROR(engine.arena.allocate(
      device, static_cast<size_t>(program.arena_bytes), "the micro-step arena"));
  ZEROC_RT_RETURN_IF_ERROR(device.synchronize());
  if (engine.rank == 0 && !args.logJsonl.empty())
    ZEROC_RT_RETURN_IF_ERROR(log.open(args.logJsonl));
  if (engine.rank == 0)
    ZEROC_RT_RETURN_IF_ERROR(csv.open(program));
  if (!args.traceDir.empty()) {
    ZEROC_RT_RETURN_IF_ERROR(engine.tracer.open(args.traceDir, engine.rank));
    ZEROC_RT_RETURN_IF_ERROR(device.startTimeline());
  }
  return nullptr;
}

/// --trace: the device's own timeline since the last step (a GPU's
/// streams) onto the device tracks.
zeroc_rt_status_t takeDeviceTimeline(zeroc_rt_engine &engine) {
  std::vector<DeviceSpan> spans;
  if (zeroc_rt_status_t status = engine.device->takeTimeline(spans))
    return ZEROC_RT_TRAIN_WRAP(status, "--trace: the device's timeline: ");
  for (const DeviceSpan &s : spans)
    engine.tracer.span(s.stream ? Tracer::kDeviceComm : Tracer::kDeviceCompute, s.name,
                       s.stream ? "device_collective" : "device_op", s.begin, s.end);
  return nullptr;
}

/// Reports the communicator's collectives to the engine's tracer while it
/// lives (the engine dies before the communicator).
class CollectiveTrace {
public:
  CollectiveTrace(zeroc_rt_comm_t *comm, Tracer &tracer) : comm(comm) {
    if (comm && tracer.enabled())
      comm->onCollective = [&tracer](const char *name, size_t bytes,
                                     Tracer::Clock::time_point start,
                                     Tracer::Clock::time_point end) {
        tracer.span(Tracer::kComm, name, "collective", start, end,
                    static_cast<int64_t>(bytes));
      };
  }
  ~CollectiveTrace() {
    if (comm)
      comm->onCollective = nullptr;
  }
  CollectiveTrace(const CollectiveTrace &) = delete;
  CollectiveTrace &operator=(const CollectiveTrace &) = delete;

private:
  zeroc_rt_comm_t *comm;
};

/// The errno of the first failed flush of the console output, or 0.
int consoleErrno = 0;

/// Flushes stdout, remembering why the first failed flush failed.
void flushConsole() {
  errno = 0;
  if (std::fflush(stdout) != 0 && consoleErrno == 0)
    consoleErrno = errno ? errno : EIO;
}

/// An error when this process's console output could not all be written
/// (stdout on a full disk, a closed pipe with SIGPIPE ignored).
zeroc_rt_status_t checkStdout() {
  flushConsole();
  if (!consoleErrno && !std::ferror(stdout))
    return nullptr;
  return ZEROC_RT_ERROR(ZEROC_RT_IO_ERROR,
                        "writing the console output to stdout failed%s%s",
                        consoleErrno ? ": " : "",
                        consoleErrno ? std::strerror(consoleErrno) : "");
}

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double msBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

/// The timers of one micro-step that ran from `start` to `end`: forward up
/// to the backward marker, and of backward the time its collectives took
/// (comm->collectiveMs since the marker) apart (see StepTimes).
StepTimes microTimes(const zeroc_rt_engine &engine, Clock::time_point start,
                     Clock::time_point end) {
  StepTimes t;
  if (!engine.backwardMarked || engine.backwardStart < start ||
      engine.backwardStart > end) {
    t.fwdMs = msBetween(start, end);
    return t;
  }
  t.fwdMs = msBetween(start, engine.backwardStart);
  const double bwd = msBetween(engine.backwardStart, end);
  const double collectives =
      (engine.comm ? engine.comm->collectiveMs : 0.0) - engine.collectiveMsAtBackward;
  t.bwdAllreduceMs = std::min(std::max(collectives, 0.0), bwd);
  t.bwdInnerMs = bwd - t.bwdAllreduceMs;
  return t;
}

/// What to do about skipped steps, for the error lines.
std::string skippedAdvice(const zeroc_rt_program_t &program, double scale) {
  if (program.loss_scaler.static_scale > 0)
    return format("at the static loss scale %s (fp16.loss_scale); lower "
                  "fp16.loss_scale, or set it to 0 for DeepSpeed's dynamic "
                  "loss scaler",
                  pyFloat(scale).c_str());
  return format("by the dynamic loss scaler (last attempted scale %s); "
                "lower fp16.initial_scale_power or fp16.min_loss_scale, or "
                "look for inf/NaN in the model's gradients",
                pyFloat(scale).c_str());
}

/// The platform's communicator for the generated code's collectives, closed
/// when the training ends (after the engine, whose buffers it may move).
class DeviceComm {
public:
  DeviceComm(Platform &platform, Session &session)
      : platform(platform), session(session) {}
  ~DeviceComm() {
    if (comm && !(session.desynced && session.world > 1))
      platform.closeComm(comm, session.comm);
  }
  DeviceComm(const DeviceComm &) = delete;
  DeviceComm &operator=(const DeviceComm &) = delete;
  zeroc_rt_comm_t *comm = nullptr;

private:
  Platform &platform;
  Session &session;
};

/// Whether every rank resumed from the same checkpoint (each reads
/// DIR/latest itself; on storage that is not shared, or while another job
/// saves there, they may differ). Ranks at different steps would run
/// different numbers of collectives and hang: that always fails. The same
/// step under different tags follows checkpoint.tag_validation: Ignore,
/// Warn (a warning on each rank) or Fail. Returns the exit code, 0 to go on.
int checkSameCheckpoint(Session &session, const TrainPosition &pos,
                        int32_t tagValidation) {
  const int64_t tag =
      static_cast<int64_t>(zeroc_rt_checksum64(pos.tag.data(), pos.tag.size()));
  int64_t mine[4] = {pos.globalSteps, -pos.globalSteps, tag, -tag};
  int64_t out[4] = {};
  zeroc_rt_status_t status = zeroc_rt_comm_all_reduce(
      session.comm, mine, out, 4, ZEROC_RT_DTYPE_I64, ZEROC_RT_REDUCE_MAX);
  if (status) {
    session.desynced = true;
    return session.fail(ZEROC_RT_TRAIN_WRAP(status, "comparing checkpoints: "));
  }
  const std::string where = format(
      "(this rank loaded '%s', step %lld); is --load-dir on storage every "
      "rank sees, and is no other job saving there? pass --load-tag TAG",
      pos.tag.c_str(), static_cast<long long>(pos.globalSteps));
  if (out[0] != -out[1]) {
    session.report("the ranks resumed from checkpoints of different steps " +
                   where);
    return 1;
  }
  if (out[2] == -out[3] || tagValidation == 0)
    return 0;
  const std::string message = "the ranks resumed from different checkpoint tags " + where;
  if (tagValidation == 2) {
    session.report(message + " (checkpoint.tag_validation is Fail)");
    return 1;
  }
  std::fflush(stdout);
  std::fprintf(stderr, "rank %d: train: warning: %s\n", session.rank,
               message.c_str());
  return 0;
}

int train(Session &session, const Args &args, const zeroc_rt_program_t &program,
          Platform &platform) {
  if (!args.bindCores.empty()) {
    std::string bound;
    if (session.agree(bindCores(args.bindCores, session.comm, &bound), "while binding to its CPUs"))
      return 1;
    if (!args.quiet) {
      std::printf("zeroc: %s\n", bound.c_str());
      std::fflush(stdout);
    }
  }
  if (session.agree(platform.open(args, program, session.comm), "while opening its device"))
    return 1;
  // Ends this rank when a collective blocks past --collective-timeout (a
  // peer stopped), from the device communicator's setup on (NCCL's
  // bootstrap waits for every rank outside MPI); stopped when train
  // returns, before MPI_Finalize.
  Watchdog watchdog;
  watchdog.start(session.comm, args.collectiveTimeout);
  DeviceComm deviceComm(platform, session);
  bool peersMayBeStuck = false;
  zeroc_rt_status_t opened =
      platform.openComm(args, session.comm, &deviceComm.comm, &peersMayBeStuck);
  if (opened && peersMayBeStuck) {
    session.desynced = true; // the others may never reach an MPI agreement
    return session.fail(ZEROC_RT_TRAIN_WRAP(opened, "setting up its collectives: "));
  }
  if (session.agree(opened, "while setting up its collectives"))
    return 1;
  zeroc_rt_engine engine;
  engine.program = &program;
  engine.device = &platform.device();
  engine.comm = deviceComm.comm;
  engine.rank = session.rank;
  engine.world = session.world;
  Dataset data;
  JsonlLog log;
  CsvMonitor csv;
  SaveSpace space;
  TrainPosition position;
  if (session.agree(setUp(engine, data, log, csv, args, space, position),
                    args.loadDir.empty()
                        ? "while loading the data and parameters"
                        : "while loading the data and the checkpoint"))
    return 1;
  if (!args.loadDir.empty() && session.world > 1)
    if (int rc = checkSameCheckpoint(session, position,
                                     program.checkpoint.tag_validation))
      return rc;
  if (!args.saveParams.empty() && session.world > 1) {
    bool commFailed = false;
    zeroc_rt_status_t status =
        checkSaveSpace(session.comm, space, args.saveParams, &commFailed);
    if (commFailed) {
      session.desynced = true;
      return session.fail(status);
    }
    if (status)
      return session.fail(status); // every rank has the same verdict
  }

  CollectiveTrace collectiveTrace(session.comm, engine.tracer);
  // The collectives the last optimizer step started for a next micro-step
  // (program.finish) complete on every way out that leaves the ranks in
  // step: after the last step, and on an error they all agree on.
  struct FinishCarries {
    Session &session;
    zeroc_rt_engine &engine;
    bool done = false;
    zeroc_rt_status_t operator()() {
      done = true;
      if (!engine.program->finish || (session.desynced && session.world > 1))
        return nullptr;
      return engine.program->finish(&engine);
    }
    ~FinishCarries() {
      if (!done)
        zeroc_rt_status_free((*this)());
    }
  } finishCarries{session, engine};
  const bool console = session.rank == 0 && !args.quiet;
  if (console) {
    if (std::string note = blasCoreNote(); !note.empty())
      std::printf("%s\n", note.c_str());
    std::printf("%s\n", headerLine(program, engine.state.psi, data.samples()).c_str());
    flushConsole();
  }

  const int world = session.world, gas = program.grad_accum;
  const int64_t globalBatch =
      static_cast<int64_t>(program.micro_batch) * gas * world;
  const bool wallClock = program.monitor.wall_clock_breakdown != 0;
  zeroc_rt_status_t pending = nullptr; // rank-0 log failure, agreed next step
  const int64_t startStep = position.globalSteps;
  int64_t consecutiveSkipped = position.consecutiveSkipped;
  double lastScale = engine.scaler.cur_scale;
  if (console && !args.loadDir.empty()) {
    std::printf("resumed from %s/%s at step %lld%s\n", args.loadDir.c_str(),
                position.tag.c_str(), static_cast<long long>(startStep),
                startStep >= args.steps
                    ? format(": --steps %lld is reached, nothing to train",
                             static_cast<long long>(args.steps))
                          .c_str()
                    : "");
    flushConsole();
  }
  // Without a loss scaler a NaN/inf loss ends the run (with one, only a
  // gradient overflow matters, as in DeepSpeed).
  const auto lossEndsRun = [&](double loss, int64_t step) {
    if (std::isfinite(loss) || program.loss_scaler.enabled)
      return false;
    session.report(format("loss is NaN/inf at step %lld", static_cast<long long>(step + 1)));
    return true;
  };
  for (int64_t step = startStep; step < args.steps; ++step) {
    watchdog.setStep(step + 1);
    const Clock::time_point start = Clock::now();
    engine.times = StepTimes();
    StepTimes lastMicro; // the boundary micro-step's timers
    double localLoss = 0.0;
    engine.stashedLosses = 0;
    zeroc_rt_status_t microError = engine.state.zeroGradientTails();
    for (int a = 0; a < gas && !microError; ++a) {
      const int64_t m = static_cast<int64_t>(a) * world + session.rank;
      if ((microError =
               data.fillMicroBatch(data.firstSample(step - startStep, m))))
        break;
      engine.dropoutCounter = static_cast<uint64_t>(step) *
                                  static_cast<uint64_t>(gas) *
                                  static_cast<uint64_t>(world) +
                              static_cast<uint64_t>(m);
      double loss = std::numeric_limits<double>::quiet_NaN();
      engine.backwardMarked = false;
      engine.firstAccumulation = a == 0;
      ++engine.microStepSerial;
      const Clock::time_point microStart = Clock::now();
      const int stashedBefore = engine.stashedLosses;
      microError = program.micro_step(&engine, data.inputs(), &loss);
      // A device program leaves its loss on the device (stash_loss): read
      // with the step's others after the step.
      if (engine.stashedLosses != stashedBefore)
        loss = 0.0;
      engine.tracer.endOp();
      engine.device->beginOp(-1); // no op runs between micro-steps
      const Clock::time_point microEnd = Clock::now();
      engine.tracer.span(Tracer::kCompute, "micro_step", "engine", microStart,
                         microEnd);
      const StepTimes micro = microTimes(engine, microStart, microEnd);
      engine.times.add(micro);
      if (a + 1 < gas) {
        if (console && wallClock && !microError) {
          std::printf("%s\n", wallClockLine(micro, true).c_str());
          flushConsole();
        }
      } else {
        lastMicro = micro;
      }
      if (microError)
        microError = ZEROC_RT_TRAIN_WRAP(
            microError,
            format("step %lld: micro-step (accumulation step %d of %d): ",
                   static_cast<long long>(step + 1), a + 1, gas));
      else
        localLoss += loss;
    }
    if (microError && program.micro_step_collectives && world > 1) {
      // The other ranks may be blocked in this micro-step's collectives.
      session.desynced = true;
      zeroc_rt_status_free(pending);
      return session.fail(microError);
    }
    // The step's all-reduces of loss sums and flags, timed in bwd_allreduce.
    const auto reduceSums = [&](double *values, int count) {
      const Clock::time_point reduceStart = Clock::now();
      zeroc_rt_status_t reduced = zeroc_rt_comm_all_reduce(
          session.comm, values, values, count, ZEROC_RT_DTYPE_F64, ZEROC_RT_REDUCE_SUM);
      const double reduceMs = msSince(reduceStart);
      engine.times.bwdAllreduceMs += reduceMs;
      lastMicro.bwdAllreduceMs += reduceMs;
      return reduced;
    };
    double sums[3] = {localLoss, microError ? 1.0 : 0.0, pending ? 1.0 : 0.0};
    zeroc_rt_status_t status = reduceSums(sums, 3);
    if (status) {
      session.desynced = true;
      zeroc_rt_status_free(microError);
      zeroc_rt_status_free(pending);
      return session.fail(ZEROC_RT_TRAIN_WRAP(
          status, format("step %lld: loss all-reduce: ",
                         static_cast<long long>(step + 1))));
    }
    if (microError || pending) {
      zeroc_rt_status_free(microError ? pending : nullptr);
      return session.fail(microError ? microError : pending);
    }
    if (sums[1] > 0 || sums[2] > 0) {
      session.report(format("step %lld: %s on another rank (see its error)",
                            static_cast<long long>(step + 1),
                            sums[1] > 0 ? "the micro-step failed"
                                        : "writing the JSONL or CSV log failed"));
      return 1;
    }
    const bool lossStashed = engine.stashedLosses > 0;
    if (lossStashed && engine.stashedLosses != gas) {
      session.desynced = true;
      return session.fail(ZEROC_RT_ERROR(
          ZEROC_RT_INTERNAL, "step %lld: %d of %d micro-steps left their loss on the device",
          static_cast<long long>(step + 1), engine.stashedLosses, gas));
    }
    double loss = sums[0] / (static_cast<double>(gas) * world);
    if (!lossStashed && lossEndsRun(loss, step))
      return 1;

    StepOutcome outcome;
    bool agreed = false;
    const StepTimes beforeStep = engine.times;
    const Clock::time_point stepStart = Clock::now();
    status = runTrainStep(engine, outcome, &agreed);
    if (!status)
      status = engine.device->synchronize();
    engine.tracer.span(Tracer::kCompute, "optimizer_step", "engine", stepStart,
                       Clock::now());
    if (!status && engine.tracer.enabled())
      status = takeDeviceTimeline(engine);
    lastMicro.bwdAllreduceMs +=
        engine.times.bwdAllreduceMs - beforeStep.bwdAllreduceMs;
    lastMicro.stepMs += engine.times.stepMs - beforeStep.stepMs;
    if (status) {
      session.desynced = !agreed;
      zeroc_rt_status_free(pending);
      return session.fail(ZEROC_RT_TRAIN_WRAP(
          status, format("step %lld: ", static_cast<long long>(step + 1))));
    }
    if (lossStashed) {
      // After the step's synchronization the read stalls nothing; every
      // rank takes part in the all-reduce, a failed read included.
      double stashed[2] = {0.0, 0.0};
      zeroc_rt_status_t readError = readStashedLosses(engine, &stashed[0]);
      stashed[1] = readError ? 1.0 : 0.0;
      status = reduceSums(stashed, 2);
      // (No log failure is pending here: the one before the step ended it.)
      if (status) {
        session.desynced = true;
        zeroc_rt_status_free(readError);
        return session.fail(ZEROC_RT_TRAIN_WRAP(
            status, format("step %lld: loss all-reduce: ", static_cast<long long>(step + 1))));
      }
      if (readError)
        return session.fail(ZEROC_RT_TRAIN_WRAP(
            readError, format("step %lld: reading the losses: ", static_cast<long long>(step + 1))));
      if (stashed[1] > 0) {
        session.report(format("step %lld: reading the losses failed on another rank (see its error)",
                              static_cast<long long>(step + 1)));
        return 1;
      }
      loss = stashed[0] / (static_cast<double>(gas) * world);
      if (lossEndsRun(loss, step))
        return 1;
    }
    if (console && !outcome.scalerLog.empty()) {
      std::printf("%s\n", outcome.scalerLog.c_str());
      flushConsole();
    }

    StepRecord record;
    record.step = step + 1;
    record.steps = args.steps;
    record.loss = loss;
    record.lr = outcome.lr;
    // The one place the logged norm is decided: inf for a skipped step (as
    // runTrainStep reports it, DeepSpeed 0.19's), -1 for a non-finite norm
    // of a step that was taken.
    record.gradNorm = outcome.skipped || std::isfinite(outcome.gradNorm)
                          ? outcome.gradNorm
                          : -1.0;
    record.lossScale = outcome.lossScale;
    record.skipped = outcome.skipped;
    record.seconds =
        std::chrono::duration<double>(Clock::now() - start).count();
    record.samples = globalBatch;
    record.times = engine.times;
    record.maxAllocatedBytes = engine.device->maxAllocatedBytes();
    // Samples read since the start of training (a resumed run's included).
    const int64_t samplesDone =
        position.globalSamples + (record.step - startStep) * globalBatch;
    if (session.rank == 0 && !pending)
      pending = log.write(record);
    if (session.rank == 0 && !pending)
      pending = csv.write(record, samplesDone);
    if (console && program.steps_per_print > 0 &&
        (record.step % program.steps_per_print == 0 ||
         record.step == args.steps)) {
      std::printf("%s\n%s\n",
                  dsProgressLine(program, record.step, engine.skippedSteps,
                                 hyperAt(program, engine.optimizerSteps))
                      .c_str(),
                  consoleLine(record).c_str());
      flushConsole();
    }
    if (console && wallClock) {
      std::printf("%s\n%s\n", wallClockLine(lastMicro, true).c_str(),
                  wallClockLine(engine.times, false).c_str());
      flushConsole();
    }

    // Every rank sees the same skips (the overflow flag is all-reduced).
    consecutiveSkipped = outcome.skipped ? consecutiveSkipped + 1 : 0;
    lastScale = outcome.lossScale;
    if (args.maxSkippedSteps > 0 && consecutiveSkipped >= args.maxSkippedSteps) {
      zeroc_rt_status_free(pending);
      session.report(format(
          "step %lld: no optimizer step could be taken for %lld consecutive "
          "steps (steps %lld-%lld were all skipped for an fp16 gradient "
          "overflow %s; --max-skipped-steps %lld, 0: no limit)",
          static_cast<long long>(record.step),
          static_cast<long long>(consecutiveSkipped),
          static_cast<long long>(record.step - consecutiveSkipped + 1),
          static_cast<long long>(record.step),
          skippedAdvice(program, lastScale).c_str(),
          static_cast<long long>(args.maxSkippedSteps)));
      return 1;
    }
    if (!args.saveDir.empty() &&
        ((args.saveInterval > 0 && record.step % args.saveInterval == 0) ||
         record.step == args.steps)) {
      TrainPosition at;
      at.globalSteps = record.step;
      at.globalSamples = samplesDone;
      at.consecutiveSkipped = consecutiveSkipped;
      bool commFailed = false;
      status = saveCheckpoint(engine, session.comm, args.saveDir, at, &commFailed);
      if (status) {
        session.desynced = commFailed;
        zeroc_rt_status_free(pending);
        return session.fail(ZEROC_RT_TRAIN_WRAP(
            status, format("step %lld: ", static_cast<long long>(record.step))));
      }
      if (console) {
        std::printf("saved checkpoint %s/%s\n", args.saveDir.c_str(),
                    checkpointTag(record.step).c_str());
        flushConsole();
      }
    }
  }
  if (args.maxSkippedSteps > 0 && args.steps > 0 &&
      consecutiveSkipped == args.steps) {
    zeroc_rt_status_free(pending);
    session.report(format(
        "no optimizer step was taken: all %lld steps were skipped for an "
        "fp16 gradient overflow %s",
        static_cast<long long>(args.steps),
        skippedAdvice(program, lastScale).c_str()));
    return 1;
  }

  if (zeroc_rt_status_t status = finishCarries()) {
    // A collective failed: the ranks may be out of step.
    session.desynced = true;
    zeroc_rt_status_free(pending);
    return session.fail(ZEROC_RT_TRAIN_WRAP(
        status, "after the last step, waiting for its prefetched gathers: "));
  }

  // Final phase: every rank runs saveParams (stage 3 gathers) even if this
  // rank has a pending error, then all agree.
  zeroc_rt_status_t finalError = pending;
  if (!args.saveParams.empty()) {
    bool desynced = false;
    zeroc_rt_status_t status = saveParams(engine, args.saveParams, &desynced);
    if (desynced) {
      session.desynced = true;
      zeroc_rt_status_free(finalError);
      return session.fail(status);
    }
    if (finalError)
      zeroc_rt_status_free(status);
    else
      finalError = status;
  }
  // The device's timeline since the last step (the loss reads, the saves).
  zeroc_rt_status_t timeline = nullptr;
  if (engine.tracer.enabled() && !finalError)
    timeline = takeDeviceTimeline(engine);
  for (zeroc_rt_status_t closed :
       {timeline, log.close(), csv.close(), engine.tracer.write(), checkStdout()}) {
    if (finalError)
      zeroc_rt_status_free(closed);
    else
      finalError = closed;
  }
  return session.agree(finalError,
                       "while saving the parameters, the log or the console "
                       "output");
}

int run(Session &session, const Args &args, zeroc_rt_status_t argsStatus,
        const zeroc_rt_program_t *program, Platform &platform) {
  if (argsStatus)
    return session.fail(argsStatus);
  if (zeroc_rt_status_t invalid = validateProgram(program))
    return session.fail(invalid);
  if (session.world != program->world_size) {
    session.report(worldSizeMessage(*program, session.world));
    return 1;
  }
  return train(session, args, *program, platform);
}

} // namespace
} // namespace zeroc_rt::train

extern "C" int zeroc_rt_train_process_main(int argc, char **argv,
                                           const zeroc_rt_program_t *program) {
  zeroc_rt::train::reexecWithMatchingBlas(argc, argv);
  return zeroc_rt_train_main(argc, argv, program);
}

extern "C" int zeroc_rt_train_main(int argc, char **argv,
                                   const zeroc_rt_program_t *program) {
  return zeroc_rt::train::trainMain(argc, argv, program,
                                    zeroc_rt::train::hostPlatform());
}

int zeroc_rt::train::trainMain(int argc, char **argv,
                               const zeroc_rt_program_t *program,
                               Platform &platform) {
  using namespace zeroc_rt::train;
  Args args;
  zeroc_rt_status_t argsStatus = nullptr;
  try {
    argsStatus = parseArgs(argc, argv, args);
  } catch (...) {
    std::fprintf(stderr, "train: error: out of memory parsing arguments\n");
    return 1;
  }
  if (!argsStatus && args.help) {
    std::printf("%s\n", usageText(argc > 0 && argv ? argv[0] : nullptr).c_str());
    if (zeroc_rt_status_t status = checkStdout())
      return Session().fail(status);
    return 0;
  }

  // The micro-steps and the optimizer step run on this thread.
  DenormalModeScope denormals(argsStatus ? true : args.flushDenormals);
  Session session;
  zeroc_rt_status_t status = zeroc_rt_comm_init_mpi(nullptr, nullptr, &session.comm);
  if (status) {
    zeroc_rt_status_free(argsStatus);
    session.comm = nullptr;
    return session.fail(ZEROC_RT_TRAIN_WRAP(status, "cannot start MPI: "));
  }
  session.rank = zeroc_rt_comm_rank(session.comm);
  session.world = zeroc_rt_comm_size(session.comm);

  int rc = 1;
  try {
    rc = run(session, args, argsStatus, program, platform);
  } catch (const std::bad_alloc &) {
    session.desynced = true;
    session.report("out of memory");
  } catch (const std::exception &e) {
    session.desynced = true;
    session.report(format("internal error: unexpected exception: %s", e.what()));
  } catch (...) {
    session.desynced = true;
    session.report("internal error: unexpected exception");
  }
  return session.finish(rc);
}
