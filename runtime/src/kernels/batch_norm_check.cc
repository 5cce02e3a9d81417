//===- kernels/batch_norm_check.cc - batch norm's operand checks -*- C++ -*-===//

#include "kernels/batch_norm_check.h"

#include "kernels/tensor_check.h"

#include <cmath>

namespace zeroc_rt::kernels {
namespace {

zeroc_rt_status_t checkCommon(const char *k, const zeroc_rt_tensor_t *x,
                              double epsilon) {
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "x", x, kFloatDtypes));
  if (x->rank < 2)
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                          "%s: x %s must have rank >= 2 (N, C, ...)", k,
                          describe(*x).c_str());
  if (!(epsilon > 0.0) || std::isinf(epsilon))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: epsilon %g must be finite and > 0", k, epsilon);
  return nullptr;
}

zeroc_rt_status_t checkChannelParam(const char *k, const char *name,
                                    const zeroc_rt_tensor_t *p,
                                    const zeroc_rt_tensor_t &x) {
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, name, p));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, name, *p, "x", x));
  return checkShape(k, name, *p, 1, x.dims + 1, "(C), the channels of x");
}

zeroc_rt_status_t checkLike(const char *k, const char *name,
                            const zeroc_rt_tensor_t *t,
                            const zeroc_rt_tensor_t &x) {
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, name, t));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, name, *t, "x", x));
  return checkSameShape(k, name, *t, "x", x);
}

} // namespace

zeroc_rt_status_t checkBatchNormOperands(const char *k,
                                         const zeroc_rt_tensor_t *x,
                                         const zeroc_rt_tensor_t *scale,
                                         const zeroc_rt_tensor_t *bias,
                                         double epsilon,
                                         const zeroc_rt_tensor_t *y) {
  ZEROC_RT_RETURN_IF_ERROR(checkCommon(k, x, epsilon));
  ZEROC_RT_RETURN_IF_ERROR(checkChannelParam(k, "scale", scale, *x));
  ZEROC_RT_RETURN_IF_ERROR(checkChannelParam(k, "bias", bias, *x));
  ZEROC_RT_RETURN_IF_ERROR(checkLike(k, "y", y, *x));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "y", *y, "x", *x));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "y", *y, "scale", *scale));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "y", *y, "bias", *bias));
  return nullptr;
}

zeroc_rt_status_t checkBatchNormGradOperands(
    const char *k, const zeroc_rt_tensor_t *x, const zeroc_rt_tensor_t *scale,
    double epsilon, const zeroc_rt_tensor_t *gradY,
    const zeroc_rt_tensor_t *gradX, const zeroc_rt_tensor_t *gradScale,
    const zeroc_rt_tensor_t *gradBias) {
  ZEROC_RT_RETURN_IF_ERROR(checkCommon(k, x, epsilon));
  ZEROC_RT_RETURN_IF_ERROR(checkChannelParam(k, "scale", scale, *x));
  ZEROC_RT_RETURN_IF_ERROR(checkLike(k, "grad_y", gradY, *x));
  ZEROC_RT_RETURN_IF_ERROR(checkLike(k, "grad_x", gradX, *x));
  ZEROC_RT_RETURN_IF_ERROR(checkChannelParam(k, "grad_scale", gradScale, *x));
  ZEROC_RT_RETURN_IF_ERROR(checkChannelParam(k, "grad_bias", gradBias, *x));
  const zeroc_rt_tensor_t *inputs[3] = {x, scale, gradY};
  const char *inputNames[3] = {"x", "scale", "grad_y"};
  const zeroc_rt_tensor_t *outputs[3] = {gradX, gradScale, gradBias};
  const char *outputNames[3] = {"grad_x", "grad_scale", "grad_bias"};
  for (int o = 0; o < 3; ++o) {
    for (int i = 0; i < 3; ++i)
      ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, outputNames[o], *outputs[o],
                                              inputNames[i], *inputs[i]));
    for (int p = 0; p < o; ++p)
      ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, outputNames[o], *outputs[o],
                                              outputNames[p], *outputs[p]));
  }
  return nullptr;
}

} // namespace zeroc_rt::kernels
