//===- kernels/attention.h - The attention kernels with a plain prologue -*- C++ -*-===//
//
// zeroc_rt_cuda/attention.h's kernels with the prologue of a scaled dot
// product, optionally with a causal mask (a key after the query is -inf;
// the kernels then skip the tiles above the diagonal), and its epilogue
// (masked to 0, then scaled), with or without a dropout on the
// probabilities: what the kernel tests check
// on the emulation and on a GPU. A generated program instantiates the same
// templates with its graph.fused_attention's own prologue and epilogue.
// Each product is rounded to the storage type before it is scaled, and the
// scaled score again, as the unfused matmul and mul would store them.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_CUDA_SRC_KERNELS_ATTENTION_H
#define ZEROC_RT_CUDA_SRC_KERNELS_ATTENTION_H

#include "zeroc_rt/status.h"
#include "zeroc_rt/dtype.h"

#include <cstdint>

namespace zeroc_rt::cuda {

/// An attention's sizes (dim: the head's, 16, 32, 64 or 128), each
/// operand's element strides in (batch, head, time, dim) order, and a
/// dropout on the probabilities (ratio 0: none) with zeroc_rt_k_dropout's
/// seed and counter.
struct AttentionCall {
  int64_t batch, heads, tq, tk, dim;
  int64_t q[4], k[4], v[4], o[4], dout[4], dq[4], dk[4], dv[4];
  float scale;
  int causal;
  double dropout;
  uint64_t seed, counter;
  /// Addends of q, k and v (null: none), each at element strides of its
  /// own (zeroc_rt_cuda/attention.h's AttnIn: a bias broadcast with strides
  /// 0), which the kernels add as they load them.
  const void *add[3] = {nullptr, nullptr, nullptr};
  int64_t addStrides[3][4] = {};
  /// attentionGrad for heads of at most 64: 0, in one walk over the scores
  /// (attentionGradBegin, the dk/dv kernel adding dq, attentionGradEnd), as
  /// a program runs it; 1, the dq kernel and the dk/dv kernel apart, as
  /// heads of 128 run.
  int twoWalks = 0;
};

/// o and lse (float [batch, heads, tq]); q, k, v, o of `dtype` (F16 or
/// BF16), device memory.
ZEROC_RT_MUST_USE zeroc_rt_status_t attention(zeroc_rt_dtype_t dtype, const AttentionCall &c,
                                              const void *q, const void *k, const void *v,
                                              void *o, float *lse);
/// dq, dk, dv from o, lse and dout; delta: float [batch, heads, tq] scratch.
ZEROC_RT_MUST_USE zeroc_rt_status_t attentionGrad(zeroc_rt_dtype_t dtype, const AttentionCall &c,
                                                  const void *q, const void *k, const void *v,
                                                  const void *o, const void *dout,
                                                  const float *lse, float *delta, void *dq,
                                                  void *dk, void *dv);

struct AttentionShape;

/// zeroc_rt_cuda/attention.h's kAttnOneWalkMaxDim, for host code (the
/// tests): heads up to this walk the scores once in attentionGrad.
constexpr int kAttentionOneWalkMaxDim = 64;

/// The one-walk gradient's first step (heads of 16, 32 or 64): delta
/// (float [batch, heads, tq]) from o and dout at element strides `os` and
/// `dos` (batch, head, time, dim order), and *dqAcc set to a zeroed float
/// [batch, heads, tq, dim] accumulator in the kernel scratch.
ZEROC_RT_MUST_USE zeroc_rt_status_t attentionGradBegin(zeroc_rt_dtype_t dtype,
                                                       const AttentionShape &g, int64_t dim,
                                                       const void *o, const int64_t *os,
                                                       const void *dout, const int64_t *dos,
                                                       float *delta, float **dqAcc);
/// Its last step: dq (at element strides `dqs`), dqAcc rounded to dtype.
ZEROC_RT_MUST_USE zeroc_rt_status_t attentionGradEnd(zeroc_rt_dtype_t dtype,
                                                     const AttentionShape &g, int64_t dim,
                                                     const float *dqAcc, void *dq,
                                                     const int64_t *dqs);

/// c = 1 + a b by one warp's mma16816 (zeroc_rt_cuda/mma.h): a [16, 16]
/// and b [16, 8] row-major floats rounded to `dtype` (F16 or BF16), c
/// [16, 8]; device memory. The fragments are loaded as mma.h lays them out,
/// so the test checks that layout against the GPU's instruction.
ZEROC_RT_MUST_USE zeroc_rt_status_t warpProduct(zeroc_rt_dtype_t dtype, const float *a,
                                                const float *b, float *c);
/// One warp's loadMatrices4 and loadMatrices4Trans (zeroc_rt_cuda/mma.h,
/// ldmatrix.x4 and .trans) of 32 rows of 8 16-bit elements in shared
/// memory, 8 words apart, element e of row r holding r * 8 + e, lane l
/// giving row l: out[l * 4 + j] is lane l's word j, out[128 + l * 4 + j]
/// the transposed load's (device memory, 256 words), which the test checks
/// against the layout the attention kernels' B fragments assume.
ZEROC_RT_MUST_USE zeroc_rt_status_t warpMatrices(uint32_t *out);

} // namespace zeroc_rt::cuda

#endif // ZEROC_RT_CUDA_SRC_KERNELS_ATTENTION_H
