//===- kernels/conv.cc - ONNX Conv and its gradients (im2col + GEMM) -*- C++ -*-===//
//
// Per sample and group, the input patch of every output position is laid
// out as one column (im2col: (C/group * prod(k)) x prod(out)); the
// convolution is then W_g (M/group x C/group*prod(k)) times the columns.
// The weight gradient is grad_y_g times the columns transposed, summed over
// the samples in order; the input gradient is W_g transposed times grad_y_g,
// scattered back (col2im). F16/BF16 compute on float copies (one rounding).
//
//===----------------------------------------------------------------------===//

#include "kernels/blas.h"
#include "kernels/tensor_check.h"
#include "kernels/window.h"

#include <algorithm>
#include <climits>
#include <type_traits>

namespace zeroc_rt::kernels {
namespace {

/// The checked shapes of one conv: x (N, C, in...), w (M, C/g, k...),
/// y (N, M, out...).
struct ConvShape {
  Geometry g;
  int64_t n, c, m, cg, mg, group;
  int64_t colRows() const { return cg * g.kSize(); }
};

/// Checks x, w and y (any of which may be the op's output) and the window.
zeroc_rt_status_t checkConv(const char *k, const char *xName,
                            const zeroc_rt_tensor_t *x, const char *wName,
                            const zeroc_rt_tensor_t *w, const char *yName,
                            const zeroc_rt_tensor_t *y,
                            const zeroc_rt_window_t *window, int64_t group,
                            ConvShape *s) {
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, xName, x, kFloatDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, wName, w));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, yName, y));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, wName, *w, xName, *x));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, yName, *y, xName, *x));
  if (x->rank < 3 || w->rank != x->rank)
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                          "%s: %s %s and %s %s must have the same rank, 3 to 5",
                          k, xName, describe(*x).c_str(), wName,
                          describe(*w).c_str());
  s->n = x->dims[0];
  s->c = x->dims[1];
  s->m = w->dims[0];
  s->cg = w->dims[1];
  s->group = group;
  if (group < 1 || s->m % group != 0 || s->cg * group != s->c)
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                          "%s: group %lld does not fit %s %s and %s %s (need "
                          "C = group * w.dims[1] and M %% group == 0)",
                          k, static_cast<long long>(group), xName,
                          describe(*x).c_str(), wName, describe(*w).c_str());
  s->mg = s->m / group;
  if (window && window->ceil_mode)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: ceil_mode is not defined for conv", k);
  ZEROC_RT_RETURN_IF_ERROR(checkWindow(k, window, *x, w->dims + 2, &s->g));
  int64_t dims[kMaxRank];
  int rank = outDims(s->g, s->n, s->m, dims);
  ZEROC_RT_RETURN_IF_ERROR(
      checkShape(k, yName, *y, rank, dims, "conv of x by w under the window"));
  const int64_t rows = s->colRows(), o = s->g.outSize();
  if (rows > INT_MAX || o > INT_MAX || s->mg > INT_MAX)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: the GEMM dims (%lld x %lld x %lld) exceed the "
                          "32-bit BLAS limit",
                          k, static_cast<long long>(s->mg),
                          static_cast<long long>(o), static_cast<long long>(rows));
  return nullptr;
}

/// Calls fn(x index, or -1 in the padding) for every column element in
/// order: column row (c * K + tap), then output position o, reading
/// x[c][pos(o, tap)]. The one traversal of im2col and its adjoint.
template <typename Fn>
void forEachColumnElement(int64_t channels, const Geometry &g, Fn &&fn) {
  const int64_t inSize = g.inSize();
  for (int64_t c = 0; c < channels; ++c) {
    const int64_t xc = c * inSize;
    for (int64_t t0 = 0; t0 < g.k[0]; ++t0)
      for (int64_t t1 = 0; t1 < g.k[1]; ++t1)
        for (int64_t t2 = 0; t2 < g.k[2]; ++t2)
          for (int64_t o0 = 0; o0 < g.out[0]; ++o0) {
            const int64_t p0 = g.pos(0, o0, t0);
            const bool in0 = p0 >= 0 && p0 < g.in[0];
            for (int64_t o1 = 0; o1 < g.out[1]; ++o1) {
              const int64_t p1 = g.pos(1, o1, t1);
              const bool in01 = in0 && p1 >= 0 && p1 < g.in[1];
              const int64_t row = xc + (p0 * g.in[1] + p1) * g.in[2];
              for (int64_t o2 = 0; o2 < g.out[2]; ++o2) {
                const int64_t p2 = g.pos(2, o2, t2);
                fn(in01 && p2 >= 0 && p2 < g.in[2] ? row + p2 : int64_t(-1));
              }
            }
          }
  }
}

/// cols[(c * K + tap) * O + o] = x[c][pos(o, tap)] or 0 in the padding.
template <typename T>
void im2col(const T *x, int64_t channels, const Geometry &g, T *cols) {
  forEachColumnElement(channels, g,
                       [&](int64_t i) { *cols++ = i >= 0 ? x[i] : T(0); });
}

/// The adjoint of im2col: x[c][pos(o, tap)] += cols[...] (x pre-zeroed).
template <typename T>
void col2im(const T *cols, int64_t channels, const Geometry &g, T *x) {
  forEachColumnElement(channels, g, [&](int64_t i) {
    if (i >= 0)
      x[i] += *cols;
    ++cols;
  });
}

/// A tensor's elements in compute type T: the data itself for float and
/// double, a float copy for F16/BF16. `out` is where results are formed.
template <typename T> struct Operand {
  Scratch<T> copy;
  T *ptr = nullptr;
};

template <typename S, typename T>
zeroc_rt_status_t computeView(const char *k, const zeroc_rt_tensor_t &t,
                              bool load, Operand<T> *op) {
  if constexpr (std::is_same_v<S, T>) {
    op->ptr = static_cast<T *>(t.data);
  } else {
    int64_t n = numElements(t);
    ZEROC_RT_RETURN_IF_ERROR(op->copy.allocate(k, "float copy", n));
    op->ptr = op->copy.data();
    if (load)
      loadRow(static_cast<const S *>(t.data), op->ptr, n);
  }
  return nullptr;
}

template <typename S, typename T>
void storeResult(const Operand<T> &op, const zeroc_rt_tensor_t &t) {
  if constexpr (!std::is_same_v<S, T>)
    storeRow(op.ptr, static_cast<S *>(t.data), numElements(t));
}

enum class ConvPass { Forward, GradInput, GradWeight };

/// One conv pass on checked operands: `a` and `b` are the pass's inputs
/// (Forward: x, w; GradInput: w, grad_y; GradWeight: x, grad_y), `out` its
/// output, all of x's dtype.
template <typename S>
zeroc_rt_status_t runConv(const char *k, ConvPass pass, const ConvShape &s,
                          const zeroc_rt_tensor_t &a, const zeroc_rt_tensor_t &b,
                          const zeroc_rt_tensor_t *bias,
                          const zeroc_rt_tensor_t &out) {
  using T = ComputeOf<S>;
  Operand<T> va, vb, vo;
  ZEROC_RT_RETURN_IF_ERROR((computeView<S, T>(k, a, true, &va)));
  ZEROC_RT_RETURN_IF_ERROR((computeView<S, T>(k, b, true, &vb)));
  ZEROC_RT_RETURN_IF_ERROR((computeView<S, T>(k, out, false, &vo)));
  const int64_t rows = s.colRows(), o = s.g.outSize(), in = s.g.inSize();
  Scratch<T> cols;
  ZEROC_RT_RETURN_IF_ERROR(cols.allocate(k, "im2col", rows * o));
  const int64_t xPer = s.cg * in, yPer = s.mg * o, wPer = s.mg * rows;
  if (pass != ConvPass::Forward)
    std::fill(vo.ptr, vo.ptr + numElements(out), T(0));
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t grp = 0; grp < s.group; ++grp) {
      const int64_t xOff = (n * s.group + grp) * xPer;
      const int64_t yOff = (n * s.group + grp) * yPer;
      const int64_t wOff = grp * wPer;
      switch (pass) {
      case ConvPass::Forward:
        im2col(va.ptr + xOff, s.cg, s.g, cols.data());
        blasGemm<T>(false, false, s.mg, o, rows, T(1), vb.ptr + wOff,
                    cols.data(), T(0), vo.ptr + yOff);
        break;
      case ConvPass::GradInput:
        blasGemm<T>(true, false, rows, o, s.mg, T(1), va.ptr + wOff,
                    vb.ptr + yOff, T(0), cols.data());
        col2im(cols.data(), s.cg, s.g, vo.ptr + xOff);
        break;
      case ConvPass::GradWeight:
        im2col(va.ptr + xOff, s.cg, s.g, cols.data());
        blasGemm<T>(false, true, s.mg, rows, o, T(1), vb.ptr + yOff,
                    cols.data(), T(1), vo.ptr + wOff);
        break;
      }
    }
  if (bias) {
    const S *pb = static_cast<const S *>(bias->data);
    for (int64_t n = 0; n < s.n; ++n)
      for (int64_t m = 0; m < s.m; ++m) {
        const T bv = static_cast<T>(loadValue(pb[m]));
        T *row = vo.ptr + (n * s.m + m) * o;
        for (int64_t i = 0; i < o; ++i)
          row[i] += bv;
      }
  }
  storeResult<S, T>(vo, out);
  return nullptr;
}

zeroc_rt_status_t dispatchConv(const char *k, ConvPass pass, const ConvShape &s,
                               const zeroc_rt_tensor_t &a,
                               const zeroc_rt_tensor_t &b,
                               const zeroc_rt_tensor_t *bias,
                               const zeroc_rt_tensor_t &out) {
  if (numElements(out) == 0)
    return nullptr;
  return dispatchFloat(out.dtype, [&](auto tag) {
    return runConv<decltype(tag)>(k, pass, s, a, b, bias, out);
  });
}

zeroc_rt_status_t kConv(const zeroc_rt_tensor_t *x, const zeroc_rt_tensor_t *w,
                        const zeroc_rt_tensor_t *bias,
                        const zeroc_rt_window_t *window, int64_t group,
                        const zeroc_rt_tensor_t *y) {
  const char *k = "zeroc_rt_k_conv";
  ConvShape s;
  ZEROC_RT_RETURN_IF_ERROR(
      checkConv(k, "x", x, "w", w, "y", y, window, group, &s));
  if (bias) {
    ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "bias", bias));
    ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "bias", *bias, "x", *x));
    ZEROC_RT_RETURN_IF_ERROR(
        checkShape(k, "bias", *bias, 1, &s.m, "(M), the output channels"));
    ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "y", *y, "bias", *bias));
  }
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "y", *y, "x", *x));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "y", *y, "w", *w));
  return dispatchConv(k, ConvPass::Forward, s, *x, *w, bias, *y);
}

zeroc_rt_status_t kConvGradInput(const zeroc_rt_tensor_t *w,
                                 const zeroc_rt_tensor_t *gradY,
                                 const zeroc_rt_window_t *window, int64_t group,
                                 const zeroc_rt_tensor_t *gradX) {
  const char *k = "zeroc_rt_k_conv_grad_input";
  ConvShape s;
  ZEROC_RT_RETURN_IF_ERROR(checkConv(k, "grad_x", gradX, "w", w, "grad_y",
                                     gradY, window, group, &s));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "grad_x", *gradX, "w", *w));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "grad_x", *gradX, "grad_y", *gradY));
  return dispatchConv(k, ConvPass::GradInput, s, *w, *gradY, nullptr, *gradX);
}

zeroc_rt_status_t kConvGradWeight(const zeroc_rt_tensor_t *x,
                                  const zeroc_rt_tensor_t *gradY,
                                  const zeroc_rt_window_t *window,
                                  int64_t group,
                                  const zeroc_rt_tensor_t *gradW) {
  const char *k = "zeroc_rt_k_conv_grad_weight";
  ConvShape s;
  ZEROC_RT_RETURN_IF_ERROR(checkConv(k, "x", x, "grad_w", gradW, "grad_y",
                                     gradY, window, group, &s));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "grad_w", *gradW, "x", *x));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "grad_w", *gradW, "grad_y", *gradY));
  return dispatchConv(k, ConvPass::GradWeight, s, *x, *gradY, nullptr, *gradW);
}

} // namespace
} // namespace zeroc_rt::kernels

using namespace zeroc_rt::kernels;

extern "C" {

zeroc_rt_status_t zeroc_rt_k_conv(const zeroc_rt_tensor_t *x,
                                  const zeroc_rt_tensor_t *w,
                                  const zeroc_rt_tensor_t *bias,
                                  const zeroc_rt_window_t *window, int64_t group,
                                  const zeroc_rt_tensor_t *y) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kConv(x, w, bias, window, group, y));
}

zeroc_rt_status_t zeroc_rt_k_conv_grad_input(const zeroc_rt_tensor_t *w,
                                             const zeroc_rt_tensor_t *grad_y,
                                             const zeroc_rt_window_t *window,
                                             int64_t group,
                                             const zeroc_rt_tensor_t *grad_x) {
  return ZEROC_RT_GUARD_EXCEPTIONS(
      kConvGradInput(w, grad_y, window, group, grad_x));
}

zeroc_rt_status_t zeroc_rt_k_conv_grad_weight(const zeroc_rt_tensor_t *x,
                                              const zeroc_rt_tensor_t *grad_y,
                                              const zeroc_rt_window_t *window,
                                              int64_t group,
                                              const zeroc_rt_tensor_t *grad_w) {
  return ZEROC_RT_GUARD_EXCEPTIONS(
      kConvGradWeight(x, grad_y, window, group, grad_w));
}

} // extern "C"
