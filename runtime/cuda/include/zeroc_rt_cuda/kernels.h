/*===- zeroc_rt_cuda/kernels.h - The CUDA runtime's kernels ------*- C -*-===//
 *
 * zeroc_rt/kernels.h's kernels on device memory: the same names with the
 * prefix zeroc_rt_cuda_k_, the same arguments, dtypes and semantics (the
 * descriptors themselves are host structs; their data pointers are device
 * memory). Each call checks its descriptors on the host and launches on
 * the compute stream; it returns before the kernel ran. Data-dependent
 * errors (an index out of range) cannot be returned by the call: the kernel
 * flags them and the engine's next synchronization reports them with the
 * op that ran. sum_squares and has_inf_or_nan (and their _multi forms,
 * which read back once for all their tensors) write their result to host
 * memory and so wait for the kernel. Differences from the CPU kernels, all
 * within the documented CUDA tolerances: float sums accumulate in float
 * (double for F64) in a parallel order, not in double in a fixed order;
 * F16/BF16 results of F64 arithmetic round through float. Integer binary
 * division by zero, negative integer exponents, scatter_nd's repeated
 * slices and scatter_elements' repeated elements (reduction none) are
 * data-dependent errors as well: flagged by the kernel, reported at the
 * next synchronization.
 *
 * Only the kernels the CUDA emitter calls are here (lib/Emit/CudaEmitter.cpp
 * lists the same names); an op whose kernel is missing is a compile error.
 *
 *===----------------------------------------------------------------------===*/

#ifndef ZEROC_RT_CUDA_KERNELS_H
#define ZEROC_RT_CUDA_KERNELS_H

#include "zeroc_rt/kernels.h"

ZEROC_RT_EXTERN_C_BEGIN

typedef const zeroc_rt_tensor_t *zrt_ct;

ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_unary(zeroc_rt_unary_op_t op, zrt_ct in, zrt_ct out);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_unary_grad(zeroc_rt_unary_op_t op, zrt_ct x, zrt_ct y, zrt_ct grad_out, zrt_ct grad_in);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_binary(zeroc_rt_binary_op_t op, zrt_ct a, zrt_ct b, zrt_ct out);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_predicate(zeroc_rt_predicate_op_t op, zrt_ct in, zrt_ct out);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_clip(zrt_ct in, int has_min, double min_value, int has_max, double max_value, zrt_ct out);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_clip_grad(zrt_ct x, int has_min, double min_value, int has_max, double max_value, zrt_ct grad_out, zrt_ct grad_in);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_where(zrt_ct cond, zrt_ct a, zrt_ct b, zrt_ct out);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_cast(zrt_ct in, zrt_ct out);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_broadcast(zrt_ct in, zrt_ct out);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_sum_to(zrt_ct in, zrt_ct out);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_dropout(zrt_ct in, double ratio, uint64_t seed, uint64_t counter, zrt_ct out);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_matmul(zrt_ct a, zrt_ct b, zrt_ct out);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_matmul_trans(zrt_ct a, zrt_ct b, int trans_a, int trans_b, zrt_ct out);
/// matmul_trans with operands read and the product written at strides
/// (graph.strided_view, graph.matmul's result_perm): a_strides has one
/// element stride per dim of a (likewise b and out, whose dims are the
/// product's), or is NULL for a dense row-major tensor; one of a tensor's
/// last two strides is 1 and the other at least that matrix dim. out's
/// strides are a permutation of a dense tensor's (the product stored
/// transposed, filling its buffer).
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_matmul_strided(zrt_ct a, const int64_t *a_strides, zrt_ct b, const int64_t *b_strides, int trans_a, int trans_b, zrt_ct out, const int64_t *out_strides);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_gemm(zrt_ct a, zrt_ct b, zrt_ct c, double alpha, double beta, int trans_a, int trans_b, zrt_ct out);
/* A weight gradient's GEMM (gemm with alpha 1 and no c) and its bias
   gradient (graph.fused_gemm_bias_grad): out = op(a) op(b), and bias_grad
   the sums down the columns of a (summed 0: a stored [K, M], read
   transposed) or b (summed 1: b stored [K, N], read as stored), as sum_to
   of that operand; bias_grad has M (N) elements, in shape [M] or
   [1, ..., M]. Summed in cuBLASLt's epilogue where it has one for the
   shapes, else the GEMM and then sum_to (the emulation: always). */
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_gemm_bias_grad(zrt_ct a, zrt_ct b, int trans_a, int trans_b, int summed, zrt_ct out, zrt_ct bias_grad);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_reduce(zeroc_rt_tensor_reduce_op_t op, zrt_ct in, uint32_t axes_mask, zrt_ct out);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_softmax(zrt_ct in, int64_t axis, int log, zrt_ct out);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_softmax_grad(zrt_ct y, zrt_ct grad_y, int64_t axis, int log, zrt_ct grad_x);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_layer_norm(zrt_ct x, zrt_ct scale, zrt_ct bias, int64_t axis, double epsilon, zrt_ct y);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_layer_norm_grad(zrt_ct x, zrt_ct scale, int64_t axis, double epsilon, zrt_ct grad_y, zrt_ct grad_x, zrt_ct grad_scale, zrt_ct grad_bias);
/* zeroc_rt_k_layer_norm_grad whose grad_x is added to `addend` as it is
   written (sum = addend + grad_x, grad_x rounded as stored): the two ops'
   bits, without storing grad_x. */
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_layer_norm_grad_add(zrt_ct x, zrt_ct scale, int64_t axis, double epsilon, zrt_ct grad_y, zrt_ct addend, zrt_ct sum, zrt_ct grad_scale, zrt_ct grad_bias);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_softmax_cross_entropy(zrt_ct scores, zrt_ct labels, zeroc_rt_loss_reduction_t reduction, int has_ignore, int64_t ignore_index, zrt_ct out);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_softmax_cross_entropy_grad(zrt_ct scores, zrt_ct labels, zeroc_rt_loss_reduction_t reduction, int has_ignore, int64_t ignore_index, zrt_ct grad_out, zrt_ct grad_scores);
/* zeroc_rt_k_softmax_cross_entropy and zeroc_rt_k_softmax_cross_entropy_grad
   (the loss's gradient grad_out given) in one pass over the scores, with
   their bits. */
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_softmax_cross_entropy_with_grad(zrt_ct scores, zrt_ct labels, zeroc_rt_loss_reduction_t reduction, int has_ignore, int64_t ignore_index, zrt_ct grad_out, zrt_ct out, zrt_ct grad_scores);
/* softmax_cross_entropy (out set), its gradient (grad_out and grad_scores
   set) or both in one pass, of rank-2 scores whose rows, and the
   gradient's, are stored row_pitch elements apart (at least the classes;
   zero-plan-buffers' row pitch). The elements between a row's end and the
   next row are neither read nor written. */
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_softmax_cross_entropy_pitched(
    zrt_ct scores, zrt_ct labels, zeroc_rt_loss_reduction_t reduction, int has_ignore,
    int64_t ignore_index, zrt_ct grad_out, zrt_ct out, zrt_ct grad_scores, int64_t row_pitch);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_copy(zrt_ct in, zrt_ct out);
/* zeroc_rt_k_copy_multi: the small copies in one launch (a table in the
   kernel scratch), large ones as copies of their own. */
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_copy_multi(int64_t count, const zeroc_rt_copy_t *copies);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_zero(zrt_ct out);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_gather(zrt_ct data, zrt_ct indices, int64_t axis, zrt_ct out);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_gather_grad(zrt_ct grad_out, zrt_ct indices, int64_t axis, zrt_ct grad_data);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_transpose(zrt_ct in, const int64_t *perm, zrt_ct out);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_slice(zrt_ct in, const int64_t *starts, const int64_t *steps, zrt_ct out);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_slice_grad(zrt_ct grad_out, const int64_t *starts, const int64_t *steps, zrt_ct grad_in);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_gather_grad_padded(zrt_ct grad_out, zrt_ct indices, int64_t padding_idx, zrt_ct grad_data);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_concat(const zeroc_rt_tensor_t *const *inputs, int32_t n, int64_t axis, zrt_ct out);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_trilu(zrt_ct in, int upper, int64_t k, zrt_ct out);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_pad(zrt_ct in, const int64_t *pads, zeroc_rt_pad_mode_t mode, double value, zrt_ct out);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_pad_grad(zrt_ct grad_out, const int64_t *pads, zeroc_rt_pad_mode_t mode, zrt_ct grad_in);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_scatter_nd(zrt_ct data, zrt_ct indices, zrt_ct updates, zeroc_rt_scatter_reduction_t reduction, zrt_ct out);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_gather_nd(zrt_ct data, zrt_ct indices, zrt_ct out);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_gather_elements(zrt_ct data, zrt_ct indices, int64_t axis, zrt_ct out);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_gather_elements_grad(zrt_ct grad_out, zrt_ct indices, int64_t axis, zrt_ct grad_data);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_scatter_elements(zrt_ct data, zrt_ct indices, zrt_ct updates, int64_t axis, zeroc_rt_scatter_reduction_t reduction, zrt_ct out);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_cumsum(zrt_ct in, int64_t axis, int exclusive, int reverse, zrt_ct out);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_conv(zrt_ct x, zrt_ct w, zrt_ct bias, const zeroc_rt_window_t *window, int64_t group, zrt_ct y);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_conv_grad_input(zrt_ct w, zrt_ct grad_y, const zeroc_rt_window_t *window, int64_t group, zrt_ct grad_x);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_conv_grad_weight(zrt_ct x, zrt_ct grad_y, const zeroc_rt_window_t *window, int64_t group, zrt_ct grad_w);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_pool(zeroc_rt_pool_kind_t kind, zrt_ct x, const zeroc_rt_window_t *window, int count_include_pad, zrt_ct y);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_pool_grad(zeroc_rt_pool_kind_t kind, zrt_ct x, zrt_ct grad_y, const zeroc_rt_window_t *window, int count_include_pad, zrt_ct grad_x);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_batch_norm(zrt_ct x, zrt_ct scale, zrt_ct bias, double epsilon, zrt_ct y);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_batch_norm_grad(zrt_ct x, zrt_ct scale, double epsilon, zrt_ct grad_y, zrt_ct grad_x, zrt_ct grad_scale, zrt_ct grad_bias);

/* The engine's element kernels and the optimizer step's (flat arrays). */
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_accumulate(zeroc_rt_dtype_t dtype, const void *x, void *acc, int64_t n);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_accumulate_widening(zeroc_rt_dtype_t from, const void *x, zeroc_rt_dtype_t to, void *acc, int64_t n);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_scale(zeroc_rt_dtype_t dtype, void *x, int64_t n, double factor);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_convert(zeroc_rt_dtype_t from, const void *src, zeroc_rt_dtype_t to, void *dst, int64_t n, double factor);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_sum_squares(zeroc_rt_dtype_t dtype, const void *x, int64_t n, double *out);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_has_inf_or_nan(zeroc_rt_dtype_t dtype, const void *x, int64_t n, int *out);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_sum_squares_multi(int64_t count, const zeroc_rt_dtype_t *dtypes, const void *const *xs, const int64_t *ns, double *out);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_has_inf_or_nan_multi(int64_t count, const zeroc_rt_dtype_t *dtypes, const void *const *xs, const int64_t *ns, int *out);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_adam_step(zeroc_rt_dtype_t dtype, void *param, const void *grad, void *exp_avg, void *exp_avg_sq, int64_t n, double lr, double beta1, double beta2, double eps, double weight_decay, int adam_w_mode, int bias_correction, int64_t step);
/* One tensor of zeroc_rt_cuda_k_adam_step_multi: Adam on `param` (the
   call's dtype, f32 or f64, with exp_avg and exp_avg_sq) from `grad` (any
   float dtype) times the call's factor; then, when `rounded` is not NULL,
   `param` rounded into it (f16 or bf16), as the engine's master copy is. */
typedef struct zeroc_rt_cuda_adam_tensor {
  zeroc_rt_dtype_t grad_dtype;
  const void *grad;
  void *param;
  void *exp_avg;
  void *exp_avg_sq;
  zeroc_rt_dtype_t rounded_dtype;
  void *rounded;
  int64_t n;
} zeroc_rt_cuda_adam_tensor_t;
/* Every tensor in one launch, with _scale/_convert's, _adam_step's and
   _convert's arithmetic; the gradients are only read. *failed (may be NULL):
   the tensor an argument error is about, else -1. */
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_adam_step_multi(zeroc_rt_dtype_t dtype, int64_t count, const zeroc_rt_cuda_adam_tensor_t *tensors, double factor, double lr, double beta1, double beta2, double eps, double weight_decay, int adam_w_mode, int bias_correction, int64_t step, int64_t *failed);
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_sgd_step(zeroc_rt_dtype_t dtype, void *param, const void *grad, void *momentum_buf, int64_t n, double lr, double momentum, double weight_decay, double dampening, int nesterov, int64_t step);
/* One tensor of zeroc_rt_cuda_k_sgd_step_multi: SGD on `param` (the call's
   dtype, f32 or f64, with momentum_buf, which is ignored and may be NULL
   when the call's momentum is 0) from `grad` (any float dtype) times the
   call's factor;
   then, when `rounded` is not NULL, `param` rounded into it (f16 or bf16). */
typedef struct zeroc_rt_cuda_sgd_tensor {
  zeroc_rt_dtype_t grad_dtype;
  const void *grad;
  void *param;
  void *momentum_buf;
  zeroc_rt_dtype_t rounded_dtype;
  void *rounded;
  int64_t n;
} zeroc_rt_cuda_sgd_tensor_t;
/* Every tensor in one launch, with _scale/_convert's, _sgd_step's and
   _convert's arithmetic; the gradients are only read. *failed (may be NULL):
   the tensor an argument error is about, else -1. */
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_sgd_step_multi(zeroc_rt_dtype_t dtype, int64_t count, const zeroc_rt_cuda_sgd_tensor_t *tensors, double factor, double lr, double momentum, double weight_decay, double dampening, int nesterov, int64_t step, int64_t *failed);
/* Host scalars only: the CPU kernel's arithmetic. */
ZEROC_RT_MUST_USE zeroc_rt_status_t zeroc_rt_cuda_k_clip_grad_norm(double sum_squares, double scale, int64_t world, double max_norm, double *norm, double *factor);

ZEROC_RT_EXTERN_C_END

#endif /* ZEROC_RT_CUDA_KERNELS_H */
