//===- zeroc_rt/train.h - the training engine behind out/train ---*- C -*-===//
//
// `zeroc compile` emits a C++ file that defines one zeroc_rt_program_t and
//   int main(int argc, char **argv) { return zeroc_rt_train_process_main(argc, argv, &kProgram); }
// The engine owns everything outside one micro-step: MPI, the .npy data and
// its per-rank micro-batches, the ZeRO state (parameter replicas or shards,
// gradient accumulators, optimizer state), the optimizer step with the
// stage's collectives, metrics and logging. The generated micro_step runs
// forward and backward for one micro-batch and talks to the engine through
// the zeroc_rt_engine_* calls below.
//
// Layout (planned by the compiler, see zeroc_rt_param_desc_t; per parameter
// p with n elements, world size W; a frozen one has
// only the parameter column, no gradient or optimizer state): the flat
// buffer of p is its n elements zero-padded to P = ceil(n / W) * W; rank r
// owns the contiguous shard [r*S, (r+1)*S), S = P / W.
//   stage 0: full replica (P), full grads (n), full optimizer state (n).
//   stage 1: full replica, full grads; optimizer state and the update only
//            for the shard; grads reduce-scattered and params all-gathered
//            at each optimizer step.
//   stage 2: full replica; grads accumulated per shard by the micro-step
//            (it reduce-scatters them); optimizer on the shard; all-gather.
//   stage 3: only the shard of params, grads and optimizer state; the
//            micro-step all-gathers parameters around their uses.
// The micro-step differentiates loss / grad_accum (times the loss scale,
// with loss scaling), as DeepSpeed's engine.backward does; the engine sums
// the gradients over micro-batches and ranks and divides once by W (times
// the loss scale) at the optimizer step.
//
// Mixed precision (a parameter whose master_dtype differs from its dtype):
// as DeepSpeed's fp16/bf16 optimizers, the parameter, its gradient
// accumulator and every collective on them use the 16-bit dtype, and the
// optimizer keeps an f32 master copy of the elements it updates (all n in
// stage 0, the rank's S in stages 1-3) with its state (Adam's m and v) in
// f32. At the step the rank's reduced 16-bit gradient is converted to f32
// (unscaled and clipped on the way), the master updated, and the master
// rounded back into the 16-bit parameter before the stage 1-2 all-gather.
// With an f32 grad_dtype (bf16's default) the gradient accumulators are f32
// instead: micro-batch gradients are added into them in f32.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_TRAIN_H
#define ZEROC_RT_TRAIN_H

#include "zeroc_rt/comm.h"
#include "zeroc_rt/common.h"
#include "zeroc_rt/dtype.h"
#include "zeroc_rt/kernels.h"
#include "zeroc_rt/status.h"

#include <stdint.h>

ZEROC_RT_EXTERN_C_BEGIN

#define ZEROC_RT_PROGRAM_ABI_VERSION 14

typedef struct zeroc_rt_param_desc {
  const char *name;
  zeroc_rt_dtype_t dtype; ///< of the parameter, its gradient, collectives
  int32_t rank;
  int64_t dims[ZEROC_RT_MAX_RANK];
  int64_t numel;
  int64_t blob_offset; ///< byte offset of the initial value in the blob file
  // ABI version 3:
  /// The dtype the optimizer updates: equal to dtype (F32 or F64: no
  /// separate copy), or F32 for an F16/BF16 parameter (an f32 master copy,
  /// initialized from the 16-bit initial value).
  zeroc_rt_dtype_t master_dtype;
  /// The gradient accumulator's dtype (DeepSpeed's grad_accum_dtype): equal
  /// to dtype, or F32 for an F16/BF16 parameter. The micro-step hands
  /// gradients (or reduce-scattered shards) in dtype; the engine adds them
  /// into the accumulator, and the step-boundary reductions of stages 0-1
  /// move the accumulator's dtype.
  zeroc_rt_dtype_t grad_dtype;
  // ABI version 5:
  /// 1: a frozen parameter (requires_grad=False): stored and partitioned
  /// like the others (stage 3: a shard, all-gathered by the micro-step),
  /// but it has no gradient, no optimizer state and is never updated;
  /// master_dtype and grad_dtype equal dtype. 0: trainable.
  int32_t frozen;
  // ABI version 9: what this rank keeps, as the compiler planned it
  // (zero.state_layout). In the parameter's flat buffer, zero-padded to
  // P = ceil(numel / W) * W elements, rank r keeps elements
  // [r * param_stride, r * param_stride + param_elements) of the parameter,
  // a gradient accumulator of grad_elements (0 when frozen), and updates
  // elements [r * update_stride, r * update_stride + update_elements), for
  // which it keeps the optimizer state (and the f32 master).
  int64_t param_elements;
  int64_t param_stride;
  int64_t grad_elements;
  int64_t update_elements;
  int64_t update_stride;
  // ABI version 14: where the gradient accumulator lies, as the compiler
  // planned it (zero.state_layout's grad_offset): its byte offset in the
  // rank's gradient slab of program.grad_slab_bytes, a multiple of the
  // gradient dtype's size. A stage-0 bucket's accumulators lie end to end,
  // where its flat buffer holds them, so that the bucket is the slab and is
  // all-reduced there (zero.in_grad_slab). 0 when frozen.
  int64_t grad_offset;
} zeroc_rt_param_desc_t;

/// ABI version 6: a model buffer the micro-step updates (a
/// BatchNormalization's running mean or variance). Never partitioned: every
/// rank holds all numel elements, initialized from the blob, and the
/// micro-step reads it (zeroc_rt_engine_buffer) and stores its new value at
/// its end, from the rank's own micro-batches (DeepSpeed keeps module
/// buffers whole on every rank). No gradient, no optimizer state;
/// --save-params writes each rank's.
typedef struct zeroc_rt_buffer_desc {
  const char *name;
  zeroc_rt_dtype_t dtype; ///< F32 or F64
  int32_t rank;
  int64_t dims[ZEROC_RT_MAX_RANK];
  int64_t numel;
  int64_t blob_offset; ///< byte offset of the initial value in the blob file
} zeroc_rt_buffer_desc_t;

/// A data input of the model; dims[0] is the micro-batch size. The file
/// DATA/<name>.npy holds (S, dims[1], ...) samples of the same dtype.
typedef struct zeroc_rt_input_desc {
  const char *name;
  zeroc_rt_dtype_t dtype;
  int32_t rank;
  int64_t dims[ZEROC_RT_MAX_RANK];
} zeroc_rt_input_desc_t;

typedef ZEROC_RT_ENUM(zeroc_rt_optimizer_type){
    ZEROC_RT_OPTIMIZER_ADAM = 0, ///< Adam/AdamW (adam_w_mode picks which)
    ZEROC_RT_OPTIMIZER_SGD = 1,
} zeroc_rt_optimizer_type_t;

typedef struct zeroc_rt_optimizer_config {
  zeroc_rt_optimizer_type_t type;
  double lr, beta1, beta2, eps, weight_decay, momentum;
  int32_t adam_w_mode; ///< 1: decoupled weight decay (AdamW); 0: L2
  // ABI version 3 (zero-initialized, bias_correction is 0: set it to 1 for
  // FusedAdam's default):
  int32_t bias_correction; ///< Adam: 1 (FusedAdam's default) or 0
  double dampening;        ///< SGD (torch.optim.SGD's)
  int32_t nesterov;        ///< SGD: needs momentum > 0 and dampening 0
} zeroc_rt_optimizer_config_t;

/// DeepSpeed's LR schedulers (runtime/lr_schedules.py). The scheduler steps
/// once per optimizer step that was not skipped for overflow; step t of the
/// formulas is the number of scheduler steps taken before this one, so the
/// first optimizer step runs at the scheduler's initial lr: warmup_min_lr
/// (WarmupLR, WarmupDecayLR), 0 (WarmupCosineLR, whose get_lr() returns 0
/// before its first step), cycle_min_lr with momentum cycle_min_mom
/// (OneCycle), lr_range_test_min_lr (LRRangeTest, which needs a step size
/// >= 1). Fields as DeepSpeed's: warmup_num_steps below 2 counts as 2;
/// WarmupCosineLR needs total_num_steps != max(2, warmup_num_steps);
/// OneCycle needs cycle_first_step_size >= 1 and cycle_second_step_size >= 0
/// (DeepSpeed's None, "same as the first", is resolved by the compiler);
/// decay_step_size 0 means no post-cycle decay. With
/// cycle_momentum and Adam, OneCycle sets Adam's betas to (momentum, 0.99)
/// each step, beta2 included, as DeepSpeed does; SGD's momentum is not
/// cycled (DeepSpeed turns cycle_momentum off for optimizers without
/// betas). The engine's zeroc_rt_lr_at (src/train/lr_schedule.h) evaluates
/// the schedule.
typedef ZEROC_RT_ENUM(zeroc_rt_lr_schedule_type){
    ZEROC_RT_LR_CONSTANT = 0,
    ZEROC_RT_LR_WARMUP = 1,        ///< WarmupLR
    ZEROC_RT_LR_WARMUP_DECAY = 2,  ///< WarmupDecayLR
    ZEROC_RT_LR_WARMUP_COSINE = 3, ///< WarmupCosineLR
    ZEROC_RT_LR_ONE_CYCLE = 4,     ///< OneCycle
    ZEROC_RT_LR_RANGE_TEST = 5,    ///< LRRangeTest (ABI version 3)
} zeroc_rt_lr_schedule_type_t;

typedef struct zeroc_rt_lr_schedule {
  zeroc_rt_lr_schedule_type_t type;
  // WarmupLR, WarmupDecayLR
  double warmup_min_lr, warmup_max_lr;
  int64_t warmup_num_steps;
  int32_t warmup_type_log; ///< 1: "log" warmup, 0: "linear"
  int64_t total_num_steps; ///< WarmupDecayLR, WarmupCosineLR
  // WarmupCosineLR (ratios of the optimizer's lr)
  double warmup_min_ratio, cos_min_ratio;
  // OneCycle
  double cycle_min_lr, cycle_max_lr, decay_lr_rate;
  int64_t cycle_first_step_size, cycle_second_step_size, decay_step_size;
  int32_t cycle_momentum;
  double cycle_min_mom, cycle_max_mom, decay_mom_rate;
  // LRRangeTest (ABI version 3): lr = min_lr * (1 + step_rate * x),
  // x = t / step_size (floor'ed with staircase) after t scheduler steps.
  double range_min_lr, range_step_rate;
  int64_t range_step_size;
  int32_t range_staircase;
} zeroc_rt_lr_schedule_t;

/// DeepSpeed's loss scaler (runtime/fp16/loss_scaler.py). With `enabled`,
/// the micro-step's loss gradient is scaled by the current scale
/// (zeroc_rt_engine_loss_scale), gradients are unscaled at the optimizer
/// step, and an inf/NaN in any rank's gradients skips the step (no update,
/// Adam's step count and the LR scheduler unchanged) and updates the scale as
/// DynamicLossScaler.update_scale does; rank 0 prints its "[deepspeed]
/// OVERFLOW! ..." lines, and an overflow at a scale already equal to
/// min_scale ends the run on every rank ("Current loss scale already at
/// minimum - cannot decrease scale anymore. Exiting run."). A static scale
/// never changes but overflows still skip steps (and print the OVERFLOW
/// line with the unchanged scale). --max-skipped-steps consecutive skipped
/// steps (default 50), or a run whose every step was skipped, end the run
/// with exit 1. With loss scaling a NaN/inf
/// loss alone does not end the run (DeepSpeed checks only the gradients).
/// Mapping DeepSpeed's fp16 section onto this struct (initial_scale =
/// 2^initial_scale_power, and DeepSpeed's default of 2^32 with hysteresis 1
/// when the section has none of the dynamic keys) is the compiler's job.
typedef struct zeroc_rt_loss_scaler_config {
  int32_t enabled;
  double static_scale; ///< > 0: a static scale (fp16.loss_scale)
  double initial_scale; ///< 2^initial_scale_power
  int64_t scale_window;
  int32_t hysteresis;   ///< delayed_shift
  int32_t consecutive_hysteresis;
  double min_scale;
  double scale_factor;  ///< 2 (0 also means 2)
} zeroc_rt_loss_scaler_config_t;

typedef ZEROC_RT_ENUM(zeroc_rt_precision){
    ZEROC_RT_PRECISION_FP32 = 0,
    ZEROC_RT_PRECISION_FP16 = 1,
    ZEROC_RT_PRECISION_BF16 = 2,
} zeroc_rt_precision_t;

/// Monitoring as DeepSpeed's wall_clock_breakdown and csv_monitor (rank 0).
/// wall_clock_breakdown prints DeepSpeed 0.19's timer lines "[Rank 0] time
/// (ms) | fwd_microstep: .. | bwd_microstep: .. | bwd_inner_microstep: .. |
/// bwd_allreduce_microstep: .. | step_microstep: .." after every micro-step
/// and "[Rank 0] time (ms) | fwd: .. | bwd: .. | bwd_inner: .. |
/// bwd_allreduce: .. | step: .." after every optimizer step, whatever
/// steps_per_print is; the JSONL log always has the per-step times.
/// csv_monitor writes
/// <csv_output_path>/<csv_job_name>/Train_Samples_{train_loss,lr,loss_scale}
/// .csv (plus Train_Samples_elapsed_time_ms_{forward,backward,
/// backward_inner,backward_allreduce,step}.csv with wall_clock_breakdown): header "step,<name>", then one row per optimizer
/// step "<samples seen after the step>,<this step's value>" (Python float
/// formatting, "\r\n" line ends as Python's csv module writes them); the
/// files are truncated when training starts.
typedef struct zeroc_rt_monitor_config {
  int32_t wall_clock_breakdown;
  int32_t csv_enabled;
  const char *csv_output_path; ///< "" = the current directory
  const char *csv_job_name;    ///< "DeepSpeedJobName" by default
} zeroc_rt_monitor_config_t;

/// The ds_config's checkpoint settings (docs/Checkpoints.md); all zero is
/// DeepSpeed's defaults but tag_validation's.
typedef struct zeroc_rt_checkpoint_config {
  /// checkpoint.tag_validation: 0 Ignore, 1 Warn (DeepSpeed's default), 2
  /// Fail: whether every rank loads the same checkpoint tag.
  int32_t tag_validation;
  /// 1: zero_optimization.load_from_fp32_weights is false: a resumed run's
  /// fp32 masters restart from the saved 16-bit parameters.
  int32_t masters_from_params;
  /// The resolved ds_config as JSON, saved with every checkpoint (NULL or
  /// "": none).
  const char *ds_config;
  /// The model's tied weights as JSON {"<other state_dict name>":
  /// "<parameter>", ...} (NULL or "": none), saved for zeroc to-fp32.
  const char *aliases;
} zeroc_rt_checkpoint_config_t;

typedef struct zeroc_rt_engine zeroc_rt_engine_t;

/// Runs forward and backward of one micro-batch. `inputs[i]` points at the
/// micro-batch of input i (dims as in its descriptor); writes the
/// micro-batch loss to *loss, or leaves it in the device's memory with
/// zeroc_rt_engine_stash_loss (then *loss is not read).
typedef zeroc_rt_status_t (*zeroc_rt_micro_step_fn)(zeroc_rt_engine_t *engine,
                                                     const void *const *inputs,
                                                     double *loss);

/// ABI version 8: what the optimizer step reports.
typedef struct zeroc_rt_step_result {
  /// The global L2 norm of the averaged, unscaled gradients before
  /// clipping (may be inf or NaN; computed on overflow steps too).
  double grad_norm;
  double lr;        ///< the scheduled lr of this step
  int32_t overflow; ///< 1: some rank's gradients overflowed, no update
} zeroc_rt_step_result_t;

/// ABI version 8: the optimizer step (zeroc's @train_step), run once after
/// the grad_accum micro-steps of each optimizer step: the stage's gradient
/// reduction, overflow check and loss-scaler update, global norm and
/// clipping, the updates and the stage 1-2 all-gathers, all decided by the
/// compiler. The engine zeroes the gradient accumulators before the next
/// step's micro-steps.
typedef zeroc_rt_status_t (*zeroc_rt_train_step_fn)(
    zeroc_rt_engine_t *engine, zeroc_rt_step_result_t *result);

typedef struct zeroc_rt_program {
  int32_t abi_version; ///< ZEROC_RT_PROGRAM_ABI_VERSION
  int32_t stage;       ///< 0-3
  int32_t world_size;
  int32_t num_params;
  const zeroc_rt_param_desc_t *params;
  int32_t num_inputs;
  const zeroc_rt_input_desc_t *inputs;
  const char *blob_file; ///< initial values + constants, next to the executable
  int64_t blob_bytes;
  int64_t arena_bytes; ///< scratch memory of one micro-step
  int32_t micro_batch;
  int32_t grad_accum;
  double gradient_clipping; ///< max global L2 norm; 0 disables clipping
  int32_t steps_per_print;
  zeroc_rt_optimizer_config_t optimizer;
  zeroc_rt_micro_step_fn micro_step;
  /// The zeroc command line that made this program, shell-quoted on one
  /// line and without its --world-size (the trainer appends the right one).
  const char *recompile_hint;
  // ABI version 2:
  zeroc_rt_lr_schedule_t lr_schedule;
  zeroc_rt_loss_scaler_config_t loss_scaler;
  zeroc_rt_precision_t precision; ///< of the micro-step's compute
  zeroc_rt_monitor_config_t monitor;
  // ABI version 4:
  /// zeroc_rt_checksum64 of the blob file (zeroc_rt/checksum.h), verified
  /// when the blob is loaded.
  uint64_t blob_checksum;
  // ABI version 6:
  int32_t num_buffers;
  const zeroc_rt_buffer_desc_t *buffers;
  // ABI version 7:
  /// One name per op of the micro-step and then of the optimizer step (ABI
  /// version 10), in program order ("graph.matmul /h.0/attn/MatMul": the op
  /// and its ONNX node), for --trace; the generated code calls
  /// zeroc_rt_engine_trace_op(e, i) before op i.
  int32_t num_ops;
  const char *const *op_names;
  // ABI version 8:
  zeroc_rt_train_step_fn train_step;
  // ABI version 9:
  /// 1: the micro-step runs collectives (a rank failing in it may leave the
  /// others waiting in one), 0: it runs none.
  int32_t micro_step_collectives;
  // ABI version 10:
  /// Waits for the collectives the last optimizer step started for a next
  /// micro-step (stage 3 prefetches the first parameters' gathers across the
  /// step boundary). The trainer calls it once after the last step, on
  /// every rank, before --save-params and MPI_Finalize.
  zeroc_rt_status_t (*finish)(zeroc_rt_engine_t *engine);
  // ABI version 11:
  /// 1: f32 matmuls may run on TF32 tensor cores (the config's zeroc.tf32,
  /// recorded as zero.tf32). The CUDA runtime honours it; the CPU has no
  /// TF32 and ignores it.
  int32_t tf32;
  // ABI version 12:
  zeroc_rt_checkpoint_config_t checkpoint;
  // ABI version 13:
  /// Where the blob's constants start (64-byte aligned, at most
  /// blob_bytes): the micro-step and the optimizer step read only them
  /// (zeroc_rt_engine_constants), and the initial values before them are
  /// read once, by the host. A GPU holds the constants only.
  int64_t blob_constants_offset;
  // ABI version 14:
  /// The gradient slab's bytes (zero.grad_slab_bytes): every trainable
  /// parameter's accumulator lies inside it (grad_offset), no two overlap;
  /// the bytes between them are zero.
  int64_t grad_slab_bytes;
} zeroc_rt_program_t;

/// The whole executable: parses
///   --data DIR --steps N [--log-jsonl FILE] [--save-params DIR]
///   [--max-skipped-steps N] [--quiet]
/// runs the training loop and returns the process exit code (0 on success,
/// 1 on any error, usage errors included, after printing one
/// "train: error: ..." line to stderr, prefixed with "rank R: " when the
/// world has more than one rank; --help prints the usage and returns 0).
/// Never exits or aborts. Errors that every rank can see (data, blob, world
/// size, NaN/inf loss without loss scaling, a loss scale at its minimum, a
/// rank that failed during setup or, in stages 0-1, in a micro-step) make all
/// ranks fail together. A failure that may leave the
/// ranks out of step in their collectives (a micro-step failure in stages
/// 2-3, an error in the optimizer step's collectives) skips MPI_Finalize on
/// that rank, so that the MPI launcher terminates the job instead of hanging.
int zeroc_rt_train_main(int argc, char **argv, const zeroc_rt_program_t *program);

/// The generated executable's main: zeroc_rt_train_main after one process
/// level step that a library call must not take. When OpenBLAS chose
/// kernels older than the CPU's features allow (its Prescott fallback on a
/// CPU model it does not know) and OPENBLAS_CORETYPE is unset, the process
/// re-executes itself (/proc/self/exe, same argv and environment) with
/// OPENBLAS_CORETYPE set (SkylakeX for AVX-512, Haswell for AVX2 + FMA),
/// once, before MPI starts; rank 0 prints a note saying so.
int zeroc_rt_train_process_main(int argc, char **argv,
                                const zeroc_rt_program_t *program);

// Calls available to the generated micro-step. With a NULL engine, an
// out-of-range `param` or a buffer the stage does not have, the pointer
// calls return NULL.

/// arena_bytes of scratch memory, 64-byte aligned, zeroed once at start and
/// kept across micro-steps (never NULL).
void *zeroc_rt_engine_arena(zeroc_rt_engine_t *engine);
/// The blob's constants (from blob_constants_offset on) where the program's
/// kernels read them, host or device memory, 64-byte aligned (never NULL,
/// even when empty). ABI version 13; it replaces zeroc_rt_engine_blob: the
/// initial values before the constants are not kept after setup.
const void *zeroc_rt_engine_constants(zeroc_rt_engine_t *engine);
zeroc_rt_comm_t *zeroc_rt_engine_comm(zeroc_rt_engine_t *engine);
/// Stages 0-2: the full current value of parameter `param` (numel elements
/// of its dtype; the buffer holds the zero-padded P elements). NULL in
/// stage 3.
void *zeroc_rt_engine_param_replica(zeroc_rt_engine_t *engine, int32_t param);
/// Stage 3: this rank's shard of the parameter's padded flat buffer (S
/// elements). NULL in stages 0-2.
void *zeroc_rt_engine_param_shard(zeroc_rt_engine_t *engine, int32_t param);
/// This rank's buffer `buffer` (numel elements of its dtype), read and
/// written by the micro-step. NULL for an out-of-range index.
void *zeroc_rt_engine_buffer(zeroc_rt_engine_t *engine, int32_t buffer);
/// Adds `count` elements of the parameter's dtype to its gradient
/// accumulator (of grad_dtype: widened into f32 when that is wider): the full
/// gradient (numel) in stages 0-1, this rank's shard (S) in stages 2-3.
/// Another count (or a bad index) is ZEROC_RT_INVALID_ARGUMENT naming the
/// parameter. The accumulators are zeroed at the start of each optimizer
/// step.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_engine_grad_accumulate(
    zeroc_rt_engine_t *engine, int32_t param, const void *grad, int64_t count);
/// Stages 2-3: adds the embedding rows of every rank to this rank's shard
/// of the parameter's gradient accumulator. `rows` holds `num_indices` rows
/// of the parameter's dtype (numel / dims[0] elements each) for `indices`
/// (I64 or I32; negative ones count from the end); the call all-gathers
/// both (a collective: every rank calls it with the same num_indices) and
/// adds, in rank order, each row's elements that fall into this rank's
/// shard, skipping rows at padding_idx when has_padding_idx. The result is
/// the shard the reduce-scatter of the dense gradient would give, up to the
/// order of the additions. An index out of range is
/// ZEROC_RT_INVALID_ARGUMENT (every rank sees it).
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_engine_grad_accumulate_rows(
    zeroc_rt_engine_t *engine, int32_t param, const void *rows,
    const void *indices, zeroc_rt_dtype_t index_dtype, int64_t num_indices,
    int32_t has_padding_idx, int64_t padding_idx);
/// A value unique to the current (optimizer step, micro-batch), for dropout:
/// s * grad_accum * W + m for global micro-batch m = a * W + rank of
/// optimizer step s (0-based) at accumulation step a.
uint64_t zeroc_rt_engine_dropout_counter(zeroc_rt_engine_t *engine);
/// The loss scale of the current optimizer step (DeepSpeed's cur_scale): the
/// micro-step seeds backward with scale / grad_accum (1 / grad_accum without
/// loss scaling), and still returns the unscaled loss. 1 without loss scaling (and for a NULL
/// engine); a static scale never changes; a dynamic one changes only between
/// optimizer steps.
double zeroc_rt_engine_loss_scale(zeroc_rt_engine_t *engine);
/// Marks the start of op `op` of the micro-step (an index into
/// program.op_names), which ends the previous op: with --trace each op
/// becomes a span on the rank's compute track. Ignored without --trace, for
/// a NULL engine and for an out-of-range index.
void zeroc_rt_engine_trace_op(zeroc_rt_engine_t *engine, int32_t op);
/// A program whose arena is device memory hands the micro-step's loss (a
/// scalar of `dtype`, f32 or f64, at `loss` in the device's memory) to the
/// engine instead of reading it: the engine copies it into its slot of the
/// step, and reads a step's slots at once after the step, when reading
/// stalls nothing (docs/CudaTarget.md, "Host reads"). At most once per
/// micro-step; every micro-step of a step, or none.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_engine_stash_loss(
    zeroc_rt_engine_t *engine, const void *loss, zeroc_rt_dtype_t dtype);
/// Marks the end of the micro-step's forward pass: the generated code calls
/// it once per micro-step, right after the op that computes the loss (the
/// last forward op, `zero.forward_end` in the IR). The engine splits
/// wall_clock_breakdown's fwd and bwd timers there; without the call the
/// whole micro-step counts as forward. A NULL engine is ignored.
void zeroc_rt_engine_mark_backward(zeroc_rt_engine_t *engine);

// Calls available to the generated optimizer step (ABI version 8).

/// The gradient accumulator of trainable parameter `param` (grad_dtype
/// elements: numel in stage 0, the padded P in stage 1, the shard S in
/// stages 2-3); NULL for a frozen or out-of-range parameter.
void *zeroc_rt_engine_grad_accumulator(zeroc_rt_engine_t *engine, int32_t param);
/// Updates taken so far (skipped steps do not count); advance_step adds one.
int64_t zeroc_rt_engine_step_count(zeroc_rt_engine_t *engine);
void zeroc_rt_engine_advance_step(zeroc_rt_engine_t *engine);
/// The program's LR schedule after `t` scheduler steps with the optimizer's
/// `base_lr`: *lr, and *momentum the cycled momentum (OneCycle with
/// cycle_momentum) or `base_momentum`.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_engine_lr_schedule(
    zeroc_rt_engine_t *engine, int64_t t, double base_lr, double base_momentum,
    double *lr, double *momentum);
/// One loss-scaler update (zeroc_rt_loss_scaler_update) from the global
/// overflow flag; the engine logs its line. An overflow at the minimum scale
/// is an error every rank returns.
ZEROC_RT_MUST_USE zeroc_rt_status_t
zeroc_rt_engine_update_loss_scale(zeroc_rt_engine_t *engine, int overflow);
/// `count` gradient elements (grad_dtype) of `param` times `factor` (in the
/// master dtype: converted when they differ, else scaled in place in
/// `grad` on the host; a GPU's Adam only reads `grad`, so its contents
/// after the call are unspecified), then Adam (or SGD) on the elements of
/// the parameter this rank
/// owns (all of them in stage 0, its slice of the replica in stages 1-2, its
/// shard in stage 3) or on their f32 master, which is then rounded back into
/// the parameter. `step` is the 1-based update count. `count` must be what
/// the stage's layout gives the rank.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_engine_adam_update(
    zeroc_rt_engine_t *engine, int32_t param, void *grad, int64_t count,
    double factor, double lr, double beta1, double beta2, double eps,
    double weight_decay, int adam_w_mode, int bias_correction, int64_t step);
/// zeroc_rt_engine_adam_update of `count` parameters with one factor,
/// learning rate, betas, options and step (`zero.adam_update_multi`):
/// params[i]'s update from grads[i] (counts[i] elements). A parameter may
/// appear once. The device may run them in one pass (on a GPU, one
/// launch; the gradients are then read, not scaled in place); the results
/// are those of the calls one by one.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_engine_adam_update_multi(
    zeroc_rt_engine_t *engine, int32_t count, const int32_t *params,
    void *const *grads, const int64_t *counts, double factor, double lr,
    double beta1, double beta2, double eps, double weight_decay,
    int adam_w_mode, int bias_correction, int64_t step);
/// As zeroc_rt_engine_adam_update, with torch.optim.SGD's rule (the
/// momentum buffer is the parameter's state when `momentum` is not 0).
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_engine_sgd_update(
    zeroc_rt_engine_t *engine, int32_t param, void *grad, int64_t count,
    double factor, double lr, double momentum, double dampening,
    double weight_decay, int nesterov, int64_t step);
/// zeroc_rt_engine_sgd_update of `count` parameters with one factor,
/// learning rate, options and step (`zero.sgd_update_multi`), as
/// zeroc_rt_engine_adam_update_multi is Adam's.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_engine_sgd_update_multi(
    zeroc_rt_engine_t *engine, int32_t count, const int32_t *params, void *const *grads,
    const int64_t *counts, double factor, double lr, double momentum, double dampening,
    double weight_decay, int nesterov, int64_t step);
/// Marks the end of the step's gradient reduction (`zero.reduction_end`):
/// wall_clock_breakdown's bwd_allreduce timer ends there.
void zeroc_rt_engine_mark_reduced(zeroc_rt_engine_t *engine);

ZEROC_RT_EXTERN_C_END

#endif // ZEROC_RT_TRAIN_H
