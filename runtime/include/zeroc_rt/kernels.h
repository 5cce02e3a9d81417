//===- zeroc_rt/kernels.h - CPU kernels of graph ops and their grads -*- C -*-===//
//
// One kernel per graph-dialect op (docs/generated/GraphDialect.md) and per
// gradient op the autodiff pass emits, over dense row-major tensors described
// by zeroc_rt_tensor_t. Every kernel checks its descriptors (dtype, rank,
// shapes consistent with the op's shape rule, non-NULL data) and returns a
// status; none allocates except where noted, none calls exit().
//
// Float kernels support F32, F64, F16 and BF16 (F64 exists for
// finite-difference gradient checks and tight parity tests), except the
// optimizer steps (adam_step, sgd_step: F32/F64, as mixed precision keeps
// fp32 master parameters). All float operands of one call share a dtype; only
// index operands (I64 or I32 indices and labels) and masks (BOOL, one byte per
// element) differ. Pure data-movement kernels (copy, broadcast, where, gather,
// transpose, slice(_grad), concat, trilu, zero, pad, gather_elements,
// gather_nd, scatter_nd, scatter_elements) take any dtype.
// Outputs never alias inputs unless a kernel says so; overlapping buffers are
// rejected with ZEROC_RT_INVALID_ARGUMENT.
//
// F16 and BF16 are storage types: every element is loaded into float,
// computed on in float, and rounded once (to nearest even, overflow to +-inf)
// into the output dtype. Whatever F32 accumulates in double (below) is
// accumulated in double for F16/BF16 too and rounded from double directly.
// matmul and gemm convert F16/BF16 operands to float scratch buffers, call
// cblas_sgemm and round the result. Allocating kernels (which can fail with
// ZEROC_RT_OUT_OF_MEMORY): layer_norm_grad, pad_grad,
// gather_elements_grad, scatter_nd and scatter_elements with reduction NONE
// (any dtype), and for F16/BF16 only matmul, gemm and gather_grad.
//
// Errors: ZEROC_RT_INVALID_ARGUMENT for NULL descriptors/data, bad dtypes,
// enums, axes and attributes, out-of-range indices or labels;
// ZEROC_RT_SHAPE_MISMATCH when a shape breaks the op's shape rule. Messages
// start with the kernel's name and show the offending shapes ("f32[2,3]").
// Descriptors need rank <= 8, dims >= 0 and a byte size that fits int64; data
// must be aligned to the element size and may be NULL only for tensors
// without elements.
//
// Determinism: no kernel uses threads (BLAS aside) and every sum runs in a
// fixed order. Reductions, softmax sums, layer-norm statistics and losses
// accumulate in double also for F32.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_KERNELS_H
#define ZEROC_RT_KERNELS_H

#include "zeroc_rt/common.h"
#include "zeroc_rt/dtype.h"
#include "zeroc_rt/status.h"

#include <stdint.h>

ZEROC_RT_EXTERN_C_BEGIN

#define ZEROC_RT_MAX_RANK 8

/// A dense row-major tensor view. Rank 0 is a scalar (one element).
typedef struct zeroc_rt_tensor {
  void *data;
  zeroc_rt_dtype_t dtype;
  int32_t rank;
  int64_t dims[ZEROC_RT_MAX_RANK];
} zeroc_rt_tensor_t;

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

typedef ZEROC_RT_ENUM(zeroc_rt_unary_op){
    ZEROC_RT_UNARY_NEG = 0, ZEROC_RT_UNARY_SQRT,    ZEROC_RT_UNARY_RECIPROCAL,
    ZEROC_RT_UNARY_RELU,    ZEROC_RT_UNARY_TANH,    ZEROC_RT_UNARY_SIGMOID,
    ZEROC_RT_UNARY_ERF,     ZEROC_RT_UNARY_EXP,     ZEROC_RT_UNARY_LOG,
    // Elementwise math of issue 9 (ONNX Cos ... Gelu), appended to keep the
    // values above stable.
    ZEROC_RT_UNARY_COS,     ZEROC_RT_UNARY_SIN,     ZEROC_RT_UNARY_ABS,
    ZEROC_RT_UNARY_SIGN,    ///< -1, 0 or 1; NaN gives 0 (torch.sign)
    ZEROC_RT_UNARY_FLOOR,   ZEROC_RT_UNARY_CEIL,
    ZEROC_RT_UNARY_ROUND,   ///< to nearest, ties to even (ONNX Round, torch.round)
    ZEROC_RT_UNARY_GELU,    ///< x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2))
    ZEROC_RT_UNARY_GELU_TANH, ///< 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
} zeroc_rt_unary_op_t;

typedef ZEROC_RT_ENUM(zeroc_rt_binary_op){
    ZEROC_RT_BINARY_ADD = 0, ZEROC_RT_BINARY_SUB, ZEROC_RT_BINARY_MUL,
    ZEROC_RT_BINARY_DIV,     ZEROC_RT_BINARY_POW,
    ZEROC_RT_BINARY_EQUAL, ///< out is BOOL; inputs any same dtype
    // Comparisons (out BOOL; a, b F32/F64/F16/BF16/I64/I32/U8, compared by
    // value; any comparison with NaN is false), logic (a, b and out BOOL)
    // and max/min (arithmetic dtypes, out the same; NaN propagates, as in
    // torch.maximum/minimum), appended to keep the values above stable.
    ZEROC_RT_BINARY_LESS,    ZEROC_RT_BINARY_LESS_EQUAL,
    ZEROC_RT_BINARY_GREATER, ZEROC_RT_BINARY_GREATER_EQUAL,
    ZEROC_RT_BINARY_AND,     ZEROC_RT_BINARY_OR, ZEROC_RT_BINARY_XOR,
    ZEROC_RT_BINARY_MAX,     ZEROC_RT_BINARY_MIN,
} zeroc_rt_binary_op_t;

/// out = op(in); same shape and float dtype.
ZEROC_RT_MUST_USE zeroc_rt_status_t
zeroc_rt_k_unary(zeroc_rt_unary_op_t op, const zeroc_rt_tensor_t *in,
                 const zeroc_rt_tensor_t *out);

/// Gradient of a unary op: grad_in = grad_out * op'(x), given the forward
/// input `x` and output `y` (each kernel uses whichever is cheaper; relu uses
/// x > 0, tanh 1 - y^2, sigmoid y(1 - y), erf 2/sqrt(pi) exp(-x^2), exp y,
/// log 1/x, sqrt 0.5/y, reciprocal -y^2, neg -1, cos -sin x, sin cos x, abs
/// sign(x) (0 at 0, as torch), gelu Phi(x) + x phi(x), gelu_tanh torch's
/// tanh-form derivative; sign, floor, ceil and round have derivative 0). The
/// operand an op does not read may be NULL (x for tanh/sigmoid/exp/sqrt/
/// reciprocal/neg and the zero-derivative ops, y for relu/erf/log/neg/cos/
/// sin/abs/gelu/gelu_tanh and the zero-derivative ops); a non-NULL one is
/// still checked.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_unary_grad(
    zeroc_rt_unary_op_t op, const zeroc_rt_tensor_t *x,
    const zeroc_rt_tensor_t *y, const zeroc_rt_tensor_t *grad_out,
    const zeroc_rt_tensor_t *grad_in);

/// out = a op b with numpy broadcasting (out has the broadcast shape).
/// a and b share a dtype: F32/F64/F16/BF16/I64/I32/U8 for arithmetic (out
/// the same dtype), any for EQUAL (F16/BF16 compare by value). Float math is
/// IEEE in the operand type (F16/BF16: in float, then rounded; POW is
/// std::pow). Integer ADD/SUB/MUL wrap; integer DIV
/// truncates toward zero (MIN / -1 wraps) and fails on division by zero;
/// integer POW fails on negative exponents.
ZEROC_RT_MUST_USE zeroc_rt_status_t
zeroc_rt_k_binary(zeroc_rt_binary_op_t op, const zeroc_rt_tensor_t *a,
                  const zeroc_rt_tensor_t *b, const zeroc_rt_tensor_t *out);

/// Unary ops with a BOOL result (same shape as in).
typedef ZEROC_RT_ENUM(zeroc_rt_predicate_op){
    ZEROC_RT_PREDICATE_NOT = 0,   ///< in BOOL: logical not
    ZEROC_RT_PREDICATE_IS_NAN,    ///< in float: x is NaN
    ZEROC_RT_PREDICATE_IS_INF,    ///< in float: x is +inf or -inf
    ZEROC_RT_PREDICATE_IS_POS_INF, ///< in float: x is +inf
    ZEROC_RT_PREDICATE_IS_NEG_INF, ///< in float: x is -inf
} zeroc_rt_predicate_op_t;

/// out (BOOL) = op(in); in is BOOL for NOT, F32/F64/F16/BF16 otherwise.
ZEROC_RT_MUST_USE zeroc_rt_status_t
zeroc_rt_k_predicate(zeroc_rt_predicate_op_t op, const zeroc_rt_tensor_t *in,
                     const zeroc_rt_tensor_t *out);

/// ONNX Clip / torch.clamp with constant bounds: out = min(max(x, lo), hi)
/// for the bounds that are present (has_min/has_max non-zero); NaN stays NaN.
/// Bounds are converted to the compute type first (float for F32/F16/BF16)
/// and must not be NaN. lo > hi gives hi everywhere (ONNX's rule). Float
/// dtypes, same shape.
ZEROC_RT_MUST_USE zeroc_rt_status_t
zeroc_rt_k_clip(const zeroc_rt_tensor_t *in, int has_min, double min_value,
                int has_max, double max_value, const zeroc_rt_tensor_t *out);

/// Gradient of clip: grad_in = grad_out where x is strictly inside the
/// present bounds (lo < x < hi; an absent bound imposes nothing), else 0
/// (at a bound, for NaN x, and everywhere when lo >= hi): torch.clamp's
/// backward with scalar bounds since PyTorch 2.x (the minimum-norm
/// subgradient; torch 1.13 passed the gradient at the bounds).
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_clip_grad(
    const zeroc_rt_tensor_t *x, int has_min, double min_value, int has_max,
    double max_value, const zeroc_rt_tensor_t *grad_out,
    const zeroc_rt_tensor_t *grad_in);

/// out = cond ? a : b, all three broadcast to out's shape.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_where(
    const zeroc_rt_tensor_t *cond, const zeroc_rt_tensor_t *a,
    const zeroc_rt_tensor_t *b, const zeroc_rt_tensor_t *out);

/// Elementwise dtype conversion (float<->float, int<->float, bool<->any;
/// float to int truncates toward zero). Same shape. Conversions to F16/BF16
/// round to nearest even; float to int maps NaN to 0 and saturates at the
/// target's bounds; int to int wraps; anything to BOOL is `!= 0` (NaN is
/// true); BOOL reads any non-zero byte as 1.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_cast(const zeroc_rt_tensor_t *in,
                                                    const zeroc_rt_tensor_t *out);

/// out = in broadcast to out's shape (expand); also used to materialize the
/// gradient of a reduction. in's shape must broadcast to out's (numpy rules,
/// one direction).
ZEROC_RT_MUST_USE zeroc_rt_status_t
zeroc_rt_k_broadcast(const zeroc_rt_tensor_t *in, const zeroc_rt_tensor_t *out);

/// out = sum of `in` over the dims that numpy broadcasting expanded from
/// out's shape to in's shape (the adjoint of broadcast). Float dtypes; sums
/// in double.
ZEROC_RT_MUST_USE zeroc_rt_status_t
zeroc_rt_k_sum_to(const zeroc_rt_tensor_t *in, const zeroc_rt_tensor_t *out);

/// Inverted dropout with a counter-based mask: element i (flat row-major
/// index) is kept iff hash(seed, counter, i) / 2^32 >= ratio, and kept values
/// are scaled by 1/(1-ratio) (computed in double); dropped ones become 0.
/// ratio must be in [0, 1] (0 copies, 1 zeroes everything). The same
/// (seed, counter) gives the same mask, so the backward pass calls this
/// kernel on the gradient with the forward's seed and counter. The hash is
/// SplitMix64 (stable, part of the contract), with uint64 wrap-around:
///   gamma    = 0x9E3779B97F4A7C15
///   mix64(z) = z ^= z >> 30; z *= 0xBF58476D1CE4E5B9;
///              z ^= z >> 27; z *= 0x94D049BB133111EB; z ^ (z >> 31)
///   key      = mix64(seed ^ mix64(counter + gamma))
///   hash(seed, counter, i) = (uint32_t)(mix64(key + (i + 1) * gamma) >> 32)
ZEROC_RT_MUST_USE zeroc_rt_status_t
zeroc_rt_k_dropout(const zeroc_rt_tensor_t *in, double ratio, uint64_t seed,
                   uint64_t counter, const zeroc_rt_tensor_t *out);

//===----------------------------------------------------------------------===//
// Contractions
//===----------------------------------------------------------------------===//

/// numpy.matmul: batch dims broadcast; rank-1 operands are promoted and the
/// promoted dim removed (rank 0 is rejected). F32 uses cblas_sgemm, F64
/// cblas_dgemm, one call per batch element (one call in total when b is
/// shared by the whole batch). M, N and K must fit the 32-bit BLAS int.
/// F16/BF16 allocate float copies of a, b and out (4 bytes per element of
/// each), run the F32 path on them and round out once.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_matmul(
    const zeroc_rt_tensor_t *a, const zeroc_rt_tensor_t *b,
    const zeroc_rt_tensor_t *out);

/// zeroc_rt_k_matmul of op(a) and op(b), op(x) swapping x's last two dims
/// when its flag is non-zero (graph.matmul's transA/transB): the BLAS reads
/// the operand transposed, nothing is copied. A transposed operand has
/// rank >= 2.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_matmul_trans(
    const zeroc_rt_tensor_t *a, const zeroc_rt_tensor_t *b, int trans_a,
    int trans_b, const zeroc_rt_tensor_t *out);

/// ONNX Gemm: out = alpha * op(a) * op(b) + beta * c, c optional (NULL) and
/// broadcast to out's (M, N). a and b have rank 2; op(x) is x^T when the
/// trans flag is non-zero. With beta == 0, c is not read (BLAS semantics).
/// alpha and beta are applied in the BLAS type (float for F32/F16/BF16).
/// F16/BF16 allocate float copies of a and b and a float (M, N) result
/// (beta * c, then cblas_sgemm), rounded into out once.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_gemm(
    const zeroc_rt_tensor_t *a, const zeroc_rt_tensor_t *b,
    const zeroc_rt_tensor_t *c, double alpha, double beta, int trans_a,
    int trans_b, const zeroc_rt_tensor_t *out);

//===----------------------------------------------------------------------===//
// Reductions and normalizations
//===----------------------------------------------------------------------===//

typedef ZEROC_RT_ENUM(zeroc_rt_tensor_reduce_op){
    ZEROC_RT_REDUCE_OP_SUM = 0,
    ZEROC_RT_REDUCE_OP_MEAN,
    ZEROC_RT_REDUCE_OP_MAX,
} zeroc_rt_tensor_reduce_op_t;

/// Reduces over the dims whose bit is set in `axes_mask` (bit i = dim i;
/// bits >= rank are rejected; mask 0 reduces nothing, i.e. copies).
/// `out` has either the kept dims only or size-1 reduced dims (keepdims);
/// both have the same element count and layout, so either is accepted.
/// Float dtypes, sums in double (rounded once into out). Over an empty set:
/// SUM 0, MEAN NaN, MAX -inf. MAX propagates NaN.
ZEROC_RT_MUST_USE zeroc_rt_status_t
zeroc_rt_k_reduce(zeroc_rt_tensor_reduce_op_t op, const zeroc_rt_tensor_t *in,
                  uint32_t axes_mask, const zeroc_rt_tensor_t *out);

/// Softmax (log_softmax when `log` != 0) along `axis` (in [-rank, rank)),
/// numerically stable: the max along the axis is subtracted and the sum of
/// exponentials is accumulated in double.
ZEROC_RT_MUST_USE zeroc_rt_status_t
zeroc_rt_k_softmax(const zeroc_rt_tensor_t *in, int64_t axis, int log,
                   const zeroc_rt_tensor_t *out);

/// Gradient of (log_)softmax given its output y: softmax:
/// gx = y * (gy - sum(gy * y)); log_softmax: gx = gy - exp(y) * sum(gy).
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_softmax_grad(
    const zeroc_rt_tensor_t *y, const zeroc_rt_tensor_t *grad_y, int64_t axis,
    int log, const zeroc_rt_tensor_t *grad_x);

/// ONNX LayerNormalization over dims [axis, rank) (axis in [-rank, rank));
/// bias may be NULL. scale and bias have exactly the shape x.dims[axis:].
/// y = (x - mean) / sqrt(var + epsilon) * scale + bias with the biased
/// variance (divided by N), statistics in double.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_layer_norm(
    const zeroc_rt_tensor_t *x, const zeroc_rt_tensor_t *scale,
    const zeroc_rt_tensor_t *bias, int64_t axis, double epsilon,
    const zeroc_rt_tensor_t *y);

/// Gradients of layer_norm w.r.t. x, scale and bias (grad_bias may be NULL;
/// grad_scale/grad_bias are overwritten, not accumulated). Allocates a
/// scratch of 2 doubles per normalized element (the row sums of grad_scale
/// and grad_bias), so it can fail with ZEROC_RT_OUT_OF_MEMORY.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_layer_norm_grad(
    const zeroc_rt_tensor_t *x, const zeroc_rt_tensor_t *scale, int64_t axis,
    double epsilon, const zeroc_rt_tensor_t *grad_y,
    const zeroc_rt_tensor_t *grad_x, const zeroc_rt_tensor_t *grad_scale,
    const zeroc_rt_tensor_t *grad_bias);

typedef ZEROC_RT_ENUM(zeroc_rt_loss_reduction){
    ZEROC_RT_LOSS_MEAN = 0,
    ZEROC_RT_LOSS_SUM,
    ZEROC_RT_LOSS_NONE,
} zeroc_rt_loss_reduction_t;

/// ONNX SoftmaxCrossEntropyLoss without weights: scores (N, C, d...),
/// labels (N, d...); labels equal to ignore_index (when has_ignore) count
/// neither in the sum nor in the mean's denominator; other labels outside
/// [0, C) fail with ZEROC_RT_INVALID_ARGUMENT. A mean over zero labels is 0.
/// out is a rank-0 scalar for mean/sum and has labels' shape for none (0 at
/// ignored positions). Computed in double.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_softmax_cross_entropy(
    const zeroc_rt_tensor_t *scores, const zeroc_rt_tensor_t *labels,
    zeroc_rt_loss_reduction_t reduction, int has_ignore, int64_t ignore_index,
    const zeroc_rt_tensor_t *out);

/// Gradient w.r.t. scores given the gradient of the loss output (scalar for
/// mean/sum, shaped like labels for none).
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_softmax_cross_entropy_grad(
    const zeroc_rt_tensor_t *scores, const zeroc_rt_tensor_t *labels,
    zeroc_rt_loss_reduction_t reduction, int has_ignore, int64_t ignore_index,
    const zeroc_rt_tensor_t *grad_out, const zeroc_rt_tensor_t *grad_scores);

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

/// Copies all elements (reshape is a copy between equal element counts and
/// dtypes; in and out may be the same buffer).
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_copy(const zeroc_rt_tensor_t *in,
                                                    const zeroc_rt_tensor_t *out);

/// One copy of zeroc_rt_k_copy_multi: `bytes` bytes from `src` to `dst`.
typedef struct zeroc_rt_copy {
  const void *src;
  void *dst;
  int64_t bytes;
} zeroc_rt_copy_t;

/// The `count` copies of `copies` (the members of a bucket into or out of
/// it): one call, which a device runtime runs in one launch. No copy's
/// destination may overlap another copy's source or destination.
ZEROC_RT_MUST_USE zeroc_rt_status_t
zeroc_rt_k_copy_multi(int64_t count, const zeroc_rt_copy_t *copies);

/// out[..] = data[.., indices[...], ..] along `axis`; negative indices count
/// from the end; out-of-range indices fail with ZEROC_RT_INVALID_ARGUMENT.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_gather(
    const zeroc_rt_tensor_t *data, const zeroc_rt_tensor_t *indices,
    int64_t axis, const zeroc_rt_tensor_t *out);

/// Adjoint of gather: grad_data = 0, then grad_data[.., indices[...], ..] +=
/// grad_out (repeated indices accumulate in index order: F32/F64 in the
/// buffer's dtype; F16/BF16 in a float scratch of grad_data's element count,
/// allocated, so it can fail with ZEROC_RT_OUT_OF_MEMORY, rounded once at the
/// end; F16/BF16 into an F32 grad_data in grad_data itself, with no scratch:
/// zero-widen-gather-grad's form). Float dtypes.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_gather_grad(
    const zeroc_rt_tensor_t *grad_out, const zeroc_rt_tensor_t *indices,
    int64_t axis, const zeroc_rt_tensor_t *grad_data);

/// gather_grad along axis 0 that leaves row `padding_idx` of grad_data zero:
/// the adjoint of torch.nn.Embedding(padding_idx=...). padding_idx must be a
/// row of grad_data.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_gather_grad_padded(
    const zeroc_rt_tensor_t *grad_out, const zeroc_rt_tensor_t *indices,
    int64_t padding_idx, const zeroc_rt_tensor_t *grad_data);

/// out[i...] = in[perm...]: result dim i is input dim perm[i]. perm has rank
/// entries (may be NULL for rank 0).
ZEROC_RT_MUST_USE zeroc_rt_status_t
zeroc_rt_k_transpose(const zeroc_rt_tensor_t *in, const int64_t *perm,
                     const zeroc_rt_tensor_t *out);

/// Strided slice: out[i] = in[starts + i * steps] per dim (normalized, as
/// in graph.slice; steps may be negative, never 0). starts/steps have rank
/// entries; out's dims are the element counts, and every addressed position
/// must lie inside in (ZEROC_RT_SHAPE_MISMATCH otherwise).
ZEROC_RT_MUST_USE zeroc_rt_status_t
zeroc_rt_k_slice(const zeroc_rt_tensor_t *in, const int64_t *starts,
                 const int64_t *steps, const zeroc_rt_tensor_t *out);

/// Adjoint of slice: grad_in = 0, then the strided positions get grad_out.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_slice_grad(
    const zeroc_rt_tensor_t *grad_out, const int64_t *starts,
    const int64_t *steps, const zeroc_rt_tensor_t *grad_in);

/// Concatenates `n` >= 1 inputs along `axis`: same dtype and rank as out,
/// equal dims off the axis, axis dims summing to out's.
ZEROC_RT_MUST_USE zeroc_rt_status_t
zeroc_rt_k_concat(const zeroc_rt_tensor_t *const *inputs, int32_t n,
                  int64_t axis, const zeroc_rt_tensor_t *out);

/// Keeps the upper (col - row >= k) or lower (col - row <= k) triangle of
/// the last two dims (rank >= 2); zeroes the rest.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_trilu(const zeroc_rt_tensor_t *in,
                                                     int upper, int64_t k,
                                                     const zeroc_rt_tensor_t *out);

/// out = 0 (any dtype).
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_zero(const zeroc_rt_tensor_t *out);

//===----------------------------------------------------------------------===//
// Convolution, pooling and batch normalization (kernels/conv.cc, pool.cc,
// batch_norm.cc). x is (N, C, d1, ...) with 1 to 3 spatial dims.
//===----------------------------------------------------------------------===//

#define ZEROC_RT_MAX_SPATIAL 3

/// The sliding window of a conv or pooling op, per spatial dim: kernel
/// sizes (pooling only; conv takes them from the weight), strides and
/// dilations in [1, 2^31), pads in [0, 2^31). Output dim i is
/// (d_i + pads_begin_i + pads_end_i - ((k_i - 1) * dilations_i + 1)) /
/// strides_i + 1, rounded down, or up when ceil_mode != 0 (ONNX's rule).
typedef struct zeroc_rt_window {
  int32_t spatial_rank; ///< 1 to ZEROC_RT_MAX_SPATIAL, x's rank - 2
  int32_t ceil_mode;
  int64_t kernel[ZEROC_RT_MAX_SPATIAL];
  int64_t strides[ZEROC_RT_MAX_SPATIAL];
  int64_t dilations[ZEROC_RT_MAX_SPATIAL];
  int64_t pads_begin[ZEROC_RT_MAX_SPATIAL];
  int64_t pads_end[ZEROC_RT_MAX_SPATIAL];
} zeroc_rt_window_t;

/// ONNX Conv: w is (M, C / group, k1, ...), bias (M) or NULL, y (N, M, o1,
/// ...). im2col per sample and group, then one GEMM (cblas_sgemm /
/// cblas_dgemm; F16/BF16 through float scratch, rounded once). Allocates
/// the column scratch ((C / group) * prod(k) * prod(o) elements), so it can
/// fail with ZEROC_RT_OUT_OF_MEMORY; ceil_mode must be 0.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_conv(
    const zeroc_rt_tensor_t *x, const zeroc_rt_tensor_t *w,
    const zeroc_rt_tensor_t *bias, const zeroc_rt_window_t *window,
    int64_t group, const zeroc_rt_tensor_t *y);

/// Gradient of conv w.r.t. x (GEMM then col2im; overwrites grad_x).
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_conv_grad_input(
    const zeroc_rt_tensor_t *w, const zeroc_rt_tensor_t *grad_y,
    const zeroc_rt_window_t *window, int64_t group,
    const zeroc_rt_tensor_t *grad_x);

/// Gradient of conv w.r.t. w (im2col then GEMM, samples summed in order;
/// overwrites grad_w).
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_conv_grad_weight(
    const zeroc_rt_tensor_t *x, const zeroc_rt_tensor_t *grad_y,
    const zeroc_rt_window_t *window, int64_t group,
    const zeroc_rt_tensor_t *grad_w);

typedef ZEROC_RT_ENUM(zeroc_rt_pool_kind){
    ZEROC_RT_POOL_MAX = 0,
    ZEROC_RT_POOL_AVG,
} zeroc_rt_pool_kind_t;

/// Max or average pooling; pads must be smaller than the dilated kernel.
/// MAX: padded positions never win (a window of padding only is -inf); NaN
/// propagates. AVG: mean in double over the window's input positions, or
/// over its positions inside [-pads_begin, d + pads_end) when
/// count_include_pad != 0 (PyTorch's divisor).
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_pool(
    zeroc_rt_pool_kind_t kind, const zeroc_rt_tensor_t *x,
    const zeroc_rt_window_t *window, int count_include_pad,
    const zeroc_rt_tensor_t *y);

/// Gradient of pool w.r.t. x: MAX routes each output's gradient to the first
/// maximum of its window (row-major window order, as PyTorch) and needs x;
/// AVG spreads it over the window (x may be NULL). Sums in double; allocates
/// a double scratch of grad_x's size (ZEROC_RT_OUT_OF_MEMORY).
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_pool_grad(
    zeroc_rt_pool_kind_t kind, const zeroc_rt_tensor_t *x,
    const zeroc_rt_tensor_t *grad_y, const zeroc_rt_window_t *window,
    int count_include_pad, const zeroc_rt_tensor_t *grad_x);

/// Training-mode BatchNormalization: per channel c of x (N, C, ...), mean
/// and biased variance over N and the spatial dims (double, two passes);
/// y = (x - mean) / sqrt(var + epsilon) * scale[c] + bias[c].
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_batch_norm(
    const zeroc_rt_tensor_t *x, const zeroc_rt_tensor_t *scale,
    const zeroc_rt_tensor_t *bias, double epsilon, const zeroc_rt_tensor_t *y);

/// Gradients of batch_norm w.r.t. x, scale and bias (through the batch
/// statistics); outputs are overwritten.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_batch_norm_grad(
    const zeroc_rt_tensor_t *x, const zeroc_rt_tensor_t *scale, double epsilon,
    const zeroc_rt_tensor_t *grad_y, const zeroc_rt_tensor_t *grad_x,
    const zeroc_rt_tensor_t *grad_scale, const zeroc_rt_tensor_t *grad_bias);

//===----------------------------------------------------------------------===//
// Padding, element gathers, scatters, cumulative sums (ONNX Pad,
// GatherElements, GatherND, ScatterND, ScatterElements, CumSum; batch_dims 0)
//===----------------------------------------------------------------------===//

typedef ZEROC_RT_ENUM(zeroc_rt_pad_mode){
    ZEROC_RT_PAD_CONSTANT = 0, ZEROC_RT_PAD_REFLECT, ZEROC_RT_PAD_EDGE,
    ZEROC_RT_PAD_WRAP,
} zeroc_rt_pad_mode_t;

/// ONNX Pad: pads has 2 * rank entries [b0, ..., e0, ...] (negative ones
/// crop); out dim d is b_d + in dim d + e_d. Out position o of dim d reads in
/// position p = o - b_d; outside [0, n) CONSTANT writes `value` (converted as
/// zeroc_rt_k_cast converts an F64 scalar), EDGE the nearest border element,
/// REFLECT the mirror image without repeating the border (period 2(n-1)),
/// WRAP position p mod n. Only CONSTANT can fill an empty dim. Any dtype.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_pad(
    const zeroc_rt_tensor_t *in, const int64_t *pads, zeroc_rt_pad_mode_t mode,
    double value, const zeroc_rt_tensor_t *out);

/// Adjoint of pad: grad_in = 0, then every grad_out element is added to the
/// in position it read (none for constant padding), in index order, in a
/// double scratch of grad_in's element count (allocated: it can fail with
/// ZEROC_RT_OUT_OF_MEMORY), rounded once. Float dtypes.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_pad_grad(
    const zeroc_rt_tensor_t *grad_out, const int64_t *pads,
    zeroc_rt_pad_mode_t mode, const zeroc_rt_tensor_t *grad_in);

/// out[i..] = data[i.. with coordinate `axis` replaced by indices[i..]]:
/// indices has data's rank (>= 1) and dims no larger off the axis; out has
/// indices' shape. Negative indices count from the end; out-of-range ones
/// fail with ZEROC_RT_INVALID_ARGUMENT. Any dtype.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_gather_elements(
    const zeroc_rt_tensor_t *data, const zeroc_rt_tensor_t *indices,
    int64_t axis, const zeroc_rt_tensor_t *out);

/// Adjoint of gather_elements: grad_data = 0, then grad_out is added at the
/// picked positions (repeated indices accumulate in index order, in a double
/// scratch of grad_data's element count, allocated, rounded once). Float.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_gather_elements_grad(
    const zeroc_rt_tensor_t *grad_out, const zeroc_rt_tensor_t *indices,
    int64_t axis, const zeroc_rt_tensor_t *grad_data);

/// ONNX GatherND (batch_dims 0): indices (..., k), 1 <= k <= rank(data);
/// out has shape indices.shape[:-1] + data.shape[k:] and holds the slice
/// data[t0, ..., tk-1] of every k-tuple. Negative indices count from the
/// end; out-of-range ones fail with ZEROC_RT_INVALID_ARGUMENT. Any dtype.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_gather_nd(
    const zeroc_rt_tensor_t *data, const zeroc_rt_tensor_t *indices,
    const zeroc_rt_tensor_t *out);

typedef ZEROC_RT_ENUM(zeroc_rt_scatter_reduction){
    ZEROC_RT_SCATTER_NONE = 0, ZEROC_RT_SCATTER_ADD, ZEROC_RT_SCATTER_MUL,
} zeroc_rt_scatter_reduction_t;

/// ONNX ScatterND (batch_dims 0): out = data, then the slice addressed by
/// each k-tuple of indices (as in gather_nd) is replaced by (NONE), added to
/// (ADD) or multiplied by (MUL) the matching slice of updates (shape
/// indices.shape[:-1] + data.shape[k:]), tuples in index order. NONE fails
/// with ZEROC_RT_INVALID_ARGUMENT when two tuples address one slice (ONNX
/// leaves that undefined; the check allocates one byte per slice of data).
/// NONE: any dtype; ADD/MUL: every dtype but BOOL (floats in double,
/// rounded per update; integers wrap).
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_scatter_nd(
    const zeroc_rt_tensor_t *data, const zeroc_rt_tensor_t *indices,
    const zeroc_rt_tensor_t *updates, zeroc_rt_scatter_reduction_t reduction,
    const zeroc_rt_tensor_t *out);

/// ONNX ScatterElements (torch.scatter): out = data, then for every position
/// p of indices the element of data that gather_elements would pick for p
/// (indices[p] replacing coordinate `axis`, in [-rank, rank)) is replaced by
/// (NONE), added to (ADD) or multiplied by (MUL) updates[p], positions in
/// index order. updates has indices' shape; indices has data's rank (>= 1)
/// and dims no larger off the axis. Negative indices count from the end;
/// out-of-range ones fail with ZEROC_RT_INVALID_ARGUMENT, and so does NONE
/// when two positions address one element (the check allocates one byte per
/// element of data). NONE: any dtype; ADD/MUL: every dtype but BOOL (floats
/// in double, rounded per update; integers wrap).
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_scatter_elements(
    const zeroc_rt_tensor_t *data, const zeroc_rt_tensor_t *indices,
    const zeroc_rt_tensor_t *updates, int64_t axis,
    zeroc_rt_scatter_reduction_t reduction, const zeroc_rt_tensor_t *out);

/// Cumulative sum along `axis` (in [-rank, rank), rank >= 1): inclusive, or
/// exclusive (the first element 0) when `exclusive` != 0, from the end when
/// `reverse` != 0. F32/F64/F16/BF16 sum in double and round each element
/// once; I64/I32 wrap.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_cumsum(
    const zeroc_rt_tensor_t *in, int64_t axis, int exclusive, int reverse,
    const zeroc_rt_tensor_t *out);

//===----------------------------------------------------------------------===//
// Flat-buffer math for optimizers (n elements of `dtype`: F32, F64, F16 or
// BF16, except adam_step/sgd_step: F32 or F64; buffers may be NULL when
// n == 0 and must not overlap; scale, adam and sgd compute per element in
// double and store back in the dtype, rounding to nearest even)
//===----------------------------------------------------------------------===//

/// acc[i] += x[i] (in float for F16/BF16, rounded once).
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_accumulate(
    zeroc_rt_dtype_t dtype, const void *x, void *acc, int64_t n);

/// acc[i] += x[i] with acc of x's dtype or a wider one (the 16-bit
/// micro-batch gradient into an f32 accumulator; f16 and bf16 do not hold
/// each other): x widens exactly and the sum is rounded once in acc's
/// compute type.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_accumulate_widening(
    zeroc_rt_dtype_t from, const void *x, zeroc_rt_dtype_t to, void *acc,
    int64_t n);

/// x[i] *= factor (in place).
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_scale(zeroc_rt_dtype_t dtype,
                                                     void *x, int64_t n,
                                                     double factor);

/// dst[i] = src[i] * factor, computed in double and rounded once to the
/// dtype of dst: the fp16/bf16 gradient into the f32 optimizer copy
/// (unscaled and clipped on the way), the updated f32 master back into the
/// 16-bit parameter (factor 1).
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_convert(
    zeroc_rt_dtype_t from, const void *src, zeroc_rt_dtype_t to, void *dst,
    int64_t n, double factor);

/// *out = sum of x[i]^2, accumulated in double.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_sum_squares(
    zeroc_rt_dtype_t dtype, const void *x, int64_t n, double *out);

/// *out = 1 when some x[i] is +inf, -inf or NaN (any NaN encoding), else 0
/// (0 for n == 0); for loss-scaling overflow checks. Reads the bits only.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_has_inf_or_nan(
    zeroc_rt_dtype_t dtype, const void *x, int64_t n, int *out);

/// The two above over `count` tensors at once (tensor t: dtypes[t], xs[t],
/// ns[t] elements): *out = the sum over the tensors of their sum_squares,
/// added in tensor order; has_inf_or_nan_multi: 1 when some tensor has an
/// inf or NaN. The step's gradient-norm and overflow checks use these, so a
/// device runtime reads its result back once per check, not once per
/// gradient.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_sum_squares_multi(
    int64_t count, const zeroc_rt_dtype_t *dtypes, const void *const *xs,
    const int64_t *ns, double *out);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_has_inf_or_nan_multi(
    int64_t count, const zeroc_rt_dtype_t *dtypes, const void *const *xs,
    const int64_t *ns, int *out);

/// AdamW (adam_w_mode != 0: decoupled weight decay, p -= lr*wd*p before the
/// Adam update; == 0: L2, g += wd*p) with torch's bias correction
/// (bias_correction != 0; 0: FusedAdam's bias_correction=False, bc1 = bc2 =
/// 1); `step` is the 1-based count of applied updates. p, g, m, v: n
/// elements. Exactly torch.optim.Adam/AdamW:
///   m = b1*m + (1-b1)*g;  v = b2*v + (1-b2)*g^2
///   denom = sqrt(v) / sqrt(1 - b2^step) + eps
///   p -= lr / (1 - b1^step) * m / denom
/// Requires finite lr, eps, weight_decay >= 0, 0 <= b1, b2 < 1, step >= 1.
/// F32 or F64 only.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_adam_step(
    zeroc_rt_dtype_t dtype, void *param, const void *grad, void *exp_avg,
    void *exp_avg_sq, int64_t n, double lr, double beta1, double beta2,
    double eps, double weight_decay, int adam_w_mode, int bias_correction,
    int64_t step);

/// SGD as torch.optim.SGD: g += wd*p; buf = step == 1 ? g :
/// momentum*buf + (1-dampening)*g; d = nesterov ? g + momentum*buf : buf;
/// p -= lr*d. With momentum == 0 this is p -= lr*g: momentum_buf is neither
/// read nor written and may be NULL. Nesterov needs momentum > 0 and
/// dampening 0 (torch's rule). F32 or F64 only.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_sgd_step(
    zeroc_rt_dtype_t dtype, void *param, const void *grad, void *momentum_buf,
    int64_t n, double lr, double momentum, double weight_decay,
    double dampening, int nesterov, int64_t step);

/// The global gradient norm and the update's factor from the global sum of
/// squares of the summed, loss-scaled gradients: a = 1 / (world * scale),
/// *norm = sqrt(sum_squares) * a; *factor = a, or a / c with
/// c = (norm + 1e-6) / max_norm when max_norm > 0, the norm is finite and
/// c > 1 (DeepSpeed's unscale_and_clip_grads). max_norm 0: no clipping.
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_k_clip_grad_norm(
    double sum_squares, double scale, int64_t world, double max_norm,
    double *norm, double *factor);

ZEROC_RT_EXTERN_C_END

#endif // ZEROC_RT_KERNELS_H
