//===- kernels/batch_norm_check.h - batch norm's operand checks -*- C++ -*-===//
//
// What batch_norm and batch_norm_grad check before they run, in one place
// for the CPU runtime and the CUDA runtime's host side (the same messages).
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_SRC_KERNELS_BATCH_NORM_CHECK_H
#define ZEROC_RT_SRC_KERNELS_BATCH_NORM_CHECK_H

#include "zeroc_rt/kernels.h"

namespace zeroc_rt::kernels {

/// x (N, C, ...) in a float dtype, epsilon finite and > 0, scale and bias
/// (C) and y like x, y overlapping no input.
zeroc_rt_status_t checkBatchNormOperands(const char *kernel,
                                         const zeroc_rt_tensor_t *x,
                                         const zeroc_rt_tensor_t *scale,
                                         const zeroc_rt_tensor_t *bias,
                                         double epsilon,
                                         const zeroc_rt_tensor_t *y);

/// As above for the gradient: grad_y and grad_x like x, grad_scale and
/// grad_bias (C); no output overlaps an input or another output.
zeroc_rt_status_t checkBatchNormGradOperands(
    const char *kernel, const zeroc_rt_tensor_t *x,
    const zeroc_rt_tensor_t *scale, double epsilon,
    const zeroc_rt_tensor_t *gradY, const zeroc_rt_tensor_t *gradX,
    const zeroc_rt_tensor_t *gradScale, const zeroc_rt_tensor_t *gradBias);

} // namespace zeroc_rt::kernels

#endif // ZEROC_RT_SRC_KERNELS_BATCH_NORM_CHECK_H
