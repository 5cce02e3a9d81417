//===- kernels/predicate_clip.cc - Not, IsNaN, IsInf, Clip ------*- C++ -*-===//
//
// Unary ops with a BOOL result (logical not and the float classifications of
// ONNX IsNaN/IsInf) and clip with constant bounds plus its gradient. Values
// are classified by their bits' meaning after loading into the compute type,
// which keeps NaN and the infinities of F16/BF16.
//
//===----------------------------------------------------------------------===//

#include "kernels/tensor_check.h"

#include <cmath>

namespace zeroc_rt::kernels {
namespace {

const char *predicateName(zeroc_rt_predicate_op_t op) {
  switch (op) {
  case ZEROC_RT_PREDICATE_NOT:
    return "not";
  case ZEROC_RT_PREDICATE_IS_NAN:
    return "is_nan";
  case ZEROC_RT_PREDICATE_IS_INF:
    return "is_inf";
  case ZEROC_RT_PREDICATE_IS_POS_INF:
    return "is_pos_inf";
  case ZEROC_RT_PREDICATE_IS_NEG_INF:
    return "is_neg_inf";
  }
  return nullptr;
}

template <typename S, typename F>
void classify(const void *in, void *out, int64_t n, F f) {
  const S *x = static_cast<const S *>(in);
  uint8_t *y = static_cast<uint8_t *>(out);
  for (int64_t i = 0; i < n; ++i)
    y[i] = static_cast<uint8_t>(f(loadValue(x[i])));
}

zeroc_rt_status_t kPredicate(zeroc_rt_predicate_op_t op,
                             const zeroc_rt_tensor_t *in,
                             const zeroc_rt_tensor_t *out) {
  const char *k = "zeroc_rt_k_predicate";
  if (!predicateName(op))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: invalid predicate op %d", k,
                          static_cast<int>(op));
  const bool isNot = op == ZEROC_RT_PREDICATE_NOT;
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(
      k, "in", in, isNot ? dtypeBit(ZEROC_RT_DTYPE_BOOL) : kFloatDtypes));
  ZEROC_RT_RETURN_IF_ERROR(
      checkTensor(k, "out", out, dtypeBit(ZEROC_RT_DTYPE_BOOL)));
  ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "out", *out, "in", *in));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "in", *in));
  const int64_t n = numElements(*in);
  if (isNot) {
    const uint8_t *x = static_cast<const uint8_t *>(in->data);
    uint8_t *y = static_cast<uint8_t *>(out->data);
    for (int64_t i = 0; i < n; ++i)
      y[i] = static_cast<uint8_t>(x[i] == 0);
    return nullptr;
  }
  dispatchFloat(in->dtype, [&](auto tag) {
    using S = decltype(tag);
    switch (op) {
    case ZEROC_RT_PREDICATE_IS_NAN:
      return classify<S>(in->data, out->data, n,
                         [](auto v) { return std::isnan(v); });
    case ZEROC_RT_PREDICATE_IS_INF:
      return classify<S>(in->data, out->data, n,
                         [](auto v) { return std::isinf(v); });
    case ZEROC_RT_PREDICATE_IS_POS_INF:
      return classify<S>(in->data, out->data, n,
                         [](auto v) { return std::isinf(v) && v > 0; });
    case ZEROC_RT_PREDICATE_IS_NEG_INF:
      return classify<S>(in->data, out->data, n,
                         [](auto v) { return std::isinf(v) && v < 0; });
    default:
      return;
    }
  });
  return nullptr;
}

zeroc_rt_status_t checkBounds(const char *k, int hasMin, double lo, int hasMax,
                              double hi) {
  if ((hasMin && std::isnan(lo)) || (hasMax && std::isnan(hi)))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: a clip bound is NaN",
                          k);
  return nullptr;
}

/// The bounds in the compute type C; absent ones are -inf / +inf.
template <typename C> struct Bounds {
  C lo, hi;
  Bounds(int hasMin, double l, int hasMax, double h)
      : lo(hasMin ? static_cast<C>(l) : -INFINITY),
        hi(hasMax ? static_cast<C>(h) : INFINITY) {}
};

zeroc_rt_status_t kClip(const zeroc_rt_tensor_t *in, int hasMin, double lo,
                        int hasMax, double hi, const zeroc_rt_tensor_t *out) {
  const char *k = "zeroc_rt_k_clip";
  ZEROC_RT_RETURN_IF_ERROR(checkBounds(k, hasMin, lo, hasMax, hi));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "in", in, kFloatDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "out", *out, "in", *in));
  ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "out", *out, "in", *in));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "in", *in));
  const int64_t n = numElements(*in);
  dispatchFloat(in->dtype, [&](auto tag) {
    using S = decltype(tag);
    using C = ComputeOf<S>;
    const Bounds<C> b(hasMin, lo, hasMax, hi);
    const S *x = static_cast<const S *>(in->data);
    S *y = static_cast<S *>(out->data);
    for (int64_t i = 0; i < n; ++i) {
      C v = loadValue(x[i]);
      if (!std::isnan(v)) {
        v = v < b.lo ? b.lo : v; // max(x, lo), then min(., hi): lo > hi
        v = v > b.hi ? b.hi : v; // gives hi
      }
      y[i] = storeValue<S>(v);
    }
  });
  return nullptr;
}

zeroc_rt_status_t kClipGrad(const zeroc_rt_tensor_t *x, int hasMin, double lo,
                            int hasMax, double hi,
                            const zeroc_rt_tensor_t *gradOut,
                            const zeroc_rt_tensor_t *gradIn) {
  const char *k = "zeroc_rt_k_clip_grad";
  ZEROC_RT_RETURN_IF_ERROR(checkBounds(k, hasMin, lo, hasMax, hi));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "x", x, kFloatDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_out", gradOut));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_in", gradIn));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "grad_out", *gradOut, "x", *x));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "grad_in", *gradIn, "x", *x));
  ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "grad_out", *gradOut, "x", *x));
  ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "grad_in", *gradIn, "x", *x));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "grad_in", *gradIn, "x", *x));
  ZEROC_RT_RETURN_IF_ERROR(
      checkNoOverlap(k, "grad_in", *gradIn, "grad_out", *gradOut));
  const int64_t n = numElements(*x);
  dispatchFloat(x->dtype, [&](auto tag) {
    using S = decltype(tag);
    using C = ComputeOf<S>;
    const Bounds<C> b(hasMin, lo, hasMax, hi);
    const S *xv = static_cast<const S *>(x->data);
    const S *g = static_cast<const S *>(gradOut->data);
    S *gx = static_cast<S *>(gradIn->data);
    // Strictly inside the present bounds (current torch.clamp's
    // minimum-norm subgradient: 0 at a bound); NaN compares false.
    for (int64_t i = 0; i < n; ++i) {
      C v = loadValue(xv[i]);
      bool inside = (!hasMin || v > b.lo) && (!hasMax || v < b.hi);
      gx[i] = inside ? g[i] : storeValue<S>(C(0));
    }
  });
  return nullptr;
}

} // namespace
} // namespace zeroc_rt::kernels

using namespace zeroc_rt::kernels;

extern "C" {

zeroc_rt_status_t zeroc_rt_k_predicate(zeroc_rt_predicate_op_t op,
                                       const zeroc_rt_tensor_t *in,
                                       const zeroc_rt_tensor_t *out) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kPredicate(op, in, out));
}

zeroc_rt_status_t zeroc_rt_k_clip(const zeroc_rt_tensor_t *in, int has_min,
                                  double min_value, int has_max,
                                  double max_value,
                                  const zeroc_rt_tensor_t *out) {
  return ZEROC_RT_GUARD_EXCEPTIONS(
      kClip(in, has_min, min_value, has_max, max_value, out));
}

zeroc_rt_status_t zeroc_rt_k_clip_grad(const zeroc_rt_tensor_t *x, int has_min,
                                       double min_value, int has_max,
                                       double max_value,
                                       const zeroc_rt_tensor_t *grad_out,
                                       const zeroc_rt_tensor_t *grad_in) {
  return ZEROC_RT_GUARD_EXCEPTIONS(
      kClipGrad(x, has_min, min_value, has_max, max_value, grad_out, grad_in));
}

} // extern "C"
