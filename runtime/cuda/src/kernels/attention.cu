//===- kernels/attention.cu - The attention kernels with a plain prologue -===//
//
// kernels/attention.h: zeroc_rt_cuda/attention.h instantiated with a scaled,
// optionally causal, score, an optional dropout and optional addends of q,
// k and v, for heads of 16, 32, 64 and 128 in F16 and BF16.
//
//===----------------------------------------------------------------------===//

#include "kernels/attention.h"
#include "kernels/common.h"

#include "zeroc_rt_cuda/attention.h"

namespace zeroc_rt::cuda {
static_assert(kAttentionOneWalkMaxDim == kAttnOneWalkMaxDim, "one limit");

namespace {

ZRT_HD Strides4 strides4(const int64_t *s) { return Strides4{s[0], s[1], s[2], s[3]}; }

/// Operand i (q, k, v) of the call at `x`, with its addend.
template <typename T> ZRT_HD AttnIn<T> input(const AttentionCall &c, int i, const T *x) {
  const int64_t(&s)[4] = i == 0 ? c.q : i == 1 ? c.k : c.v;
  return AttnIn<T>{x, strides4(s), static_cast<const T *>(c.add[i]), strides4(c.addStrides[i])};
}

ZRT_HD AttentionShape shapeOf(const AttentionCall &c) {
  return AttentionShape{c.batch, c.heads, c.tq, c.tk, c.causal};
}
ZRT_HD AttentionDropout dropoutFor(const AttentionCall &c) {
  return AttentionDropout{c.dropout, dropoutKey(c.seed, c.counter)};
}

/// The score: the product rounded to T, scaled and rounded again. When
/// causal, the kernels mask the keys after each query themselves (-inf).
template <typename T> struct ScaledScore {
  float scale;
  ZRT_DEV float operator()(int64_t, float s) const { return roundTo<T>(roundTo<T>(s) * scale); }
};
/// The score's gradient, scaled (rounded to T); a masked score's is +0
/// (the kernels'), which stays 0.
template <typename T> struct ScaledGrad {
  float scale;
  ZRT_DEV float operator()(int64_t, float g) const { return roundTo<T>(g * scale); }
};

template <typename T, int D>
ZRT_GLOBAL void forwardKernel(AttentionCall c, const T *q, const T *k, const T *v, T *o,
                              float *lse) {
  attentionForward<T, D>(shapeOf(c), dropoutFor(c), input(c, 0, q), input(c, 1, k), input(c, 2, v),
                         o, strides4(c.o), lse, ScaledScore<T>{c.scale});
}

template <typename T, int D>
ZRT_GLOBAL void gradQKernel(AttentionCall c, const T *q, const T *k, const T *v, const T *o,
                            const T *dout, const float *lse, float *delta, T *dq) {
  attentionGradQ<T, D>(shapeOf(c), dropoutFor(c), input(c, 0, q), input(c, 1, k), input(c, 2, v), o,
                       strides4(c.o), dout, strides4(c.dout), lse, delta, dq, strides4(c.dq),
                       ScaledScore<T>{c.scale},
                       ScaledGrad<T>{c.scale});
}

template <typename T, int D>
ZRT_GLOBAL void gradKVKernel(AttentionCall c, const T *q, const T *k, const T *v,
                             const T *dout, const float *lse, const float *delta, T *dk,
                             T *dv) {
  attentionGradKV<T, D>(shapeOf(c), dropoutFor(c), input(c, 0, q), input(c, 1, k), input(c, 2, v),
                        dout, strides4(c.dout), lse, delta, dk, strides4(c.dk), dv, strides4(c.dv),
                        ScaledScore<T>{c.scale}, ScaledGrad<T>{c.scale});
}

template <typename T, int D>
ZRT_GLOBAL void gradKVQKernel(AttentionCall c, const T *q, const T *k, const T *v, const T *dout,
                              const float *lse, const float *delta, T *dk, T *dv, float *dqAcc) {
  attentionGradKVQ<T, D>(shapeOf(c), dropoutFor(c), input(c, 0, q), input(c, 1, k), input(c, 2, v),
                         dout, strides4(c.dout), lse, delta, dk, strides4(c.dk), dv, strides4(c.dv),
                         dqAcc, ScaledScore<T>{c.scale}, ScaledGrad<T>{c.scale});
}

template <typename T, int D>
ZRT_GLOBAL void gradDeltaKernel(AttentionShape g, const T *o, Strides4 os, const T *dout,
                                Strides4 dos, float *delta, float *dqAcc) {
  attentionGradDelta<T, D>(g, o, os, dout, dos, delta, dqAcc);
}

template <typename T, int D>
ZRT_GLOBAL void storeQKernel(AttentionShape g, const float *dqAcc, T *dq, Strides4 dqs) {
  attentionGradStoreQ<T, D>(g, dqAcc, dq, dqs);
}

/// fn(T{}, std::integral_constant<int, D>{}) for `dtype` (F16 or BF16)
/// and a head of `dim` elements: 16, 32, 64, and 128 up to MaxDim.
template <int MaxDim, typename Fn>
zeroc_rt_status_t dispatchHead(const char *kernel, zeroc_rt_dtype_t dtype, int64_t dim, Fn &&fn) {
  auto heads = [&](auto t) -> zeroc_rt_status_t {
    switch (dim) {
    case 16:
      return fn(t, std::integral_constant<int, 16>{});
    case 32:
      return fn(t, std::integral_constant<int, 32>{});
    case 64:
      return fn(t, std::integral_constant<int, 64>{});
    case 128:
      if constexpr (MaxDim >= 128)
        return fn(t, std::integral_constant<int, 128>{});
      [[fallthrough]];
    default:
      return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: a head of %lld elements (%s)", kernel,
                            static_cast<long long>(dim),
                            MaxDim >= 128 ? "16, 32, 64 or 128" : "16, 32 or 64");
    }
  };
  switch (dtype) {
  case ZEROC_RT_DTYPE_F16: return heads(F16{});
  case ZEROC_RT_DTYPE_BF16: return heads(BF16{});
  default:
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: dtype %s is not f16 or bf16",
                          kernel, zeroc_rt_dtype_name(dtype));
  }
}

/// dispatchHead for the call's dtype and head (any the kernels take).
template <typename Fn>
zeroc_rt_status_t dispatch(const char *kernel, zeroc_rt_dtype_t dtype, const AttentionCall &c,
                           Fn &&fn) {
  if (c.batch < 0 || c.heads < 0 || c.tq < 0 || c.tk < 0)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: a negative size", kernel);
  return dispatchHead<128>(kernel, dtype, c.dim, fn);
}

template <typename T> ZRT_GLOBAL void warpProductKernel(const float *a, const float *b, float *c) {
  const int lane = threadIndex() & 31;
  uint32_t fa[4], fb[2];
  for (int r = 0; r < 4; ++r) {
    const int row = mmaRowA(lane, r), col = mmaColA(lane, r);
    fa[r] = packFloats<T>(a[row * 16 + col], a[row * 16 + col + 1]);
  }
  for (int r = 0; r < 2; ++r) { // B(k, n) at b[k * 8 + n]: rows 2t + 8r + {0, 1} of column g
    const int k = 2 * (lane & 3) + 8 * r, n = lane >> 2;
    fb[r] = packFloats<T>(b[k * 8 + n], b[(k + 1) * 8 + n]);
  }
  float acc[4] = {1.f, 1.f, 1.f, 1.f};
  mma16816<T>(acc, fa, fb);
  for (int i = 0; i < 4; ++i)
    c[mmaRowC(lane, i) * 8 + mmaColC(lane, i)] = acc[i];
}

ZRT_GLOBAL void warpMatricesKernel(uint32_t *out) {
  // 32 rows of 8 16-bit elements each 8 words apart, element e of row r
  // holding r * 8 + e.
  alignas(16) __shared__ uint32_t rows[32 * 8];
  const int lane = threadIndex() & 31;
  for (int w = 0; w < 8; ++w)
    rows[lane * 8 + w] = w < 4 ? static_cast<uint32_t>(lane * 8 + 2 * w) |
                                     (static_cast<uint32_t>(lane * 8 + 2 * w + 1) << 16)
                               : 0xffffffffu;
  syncBlock();
  uint32_t r[4], t[4];
  loadMatrices4(r, rows + lane * 8);
  loadMatrices4Trans(t, rows + lane * 8);
  for (int j = 0; j < 4; ++j) {
    out[lane * 4 + j] = r[j];
    out[128 + lane * 4 + j] = t[j];
  }
}

} // namespace

zeroc_rt_status_t warpMatrices(uint32_t *out) {
  return launchStatus(static_cast<int>(launchWarps(warpMatricesKernel, 1, 32, out)),
                      "warp_matrices");
}

zeroc_rt_status_t warpProduct(zeroc_rt_dtype_t dtype, const float *a, const float *b, float *c) {
  if (dtype == ZEROC_RT_DTYPE_BF16)
    return launchStatus(static_cast<int>(launchWarps(warpProductKernel<BF16>, 1, 32, a, b, c)),
                        "warp_product");
  if (dtype == ZEROC_RT_DTYPE_F16)
    return launchStatus(static_cast<int>(launchWarps(warpProductKernel<F16>, 1, 32, a, b, c)),
                        "warp_product");
  return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "warp_product: dtype %s is not f16 or bf16",
                        zeroc_rt_dtype_name(dtype));
}

zeroc_rt_status_t attention(zeroc_rt_dtype_t dtype, const AttentionCall &c, const void *q,
                            const void *k, const void *v, void *o, float *lse) {
  return dispatch("attention", dtype, c, [&](auto t, auto d) {
    using T = decltype(t);
    constexpr int D = decltype(d)::value;
    return launchStatus(
        static_cast<int>(launchWarps(forwardKernel<T, D>, attentionBlocks(shapeOf(c), c.tq),
                                     kAttnThreads, c, static_cast<const T *>(q),
                                     static_cast<const T *>(k), static_cast<const T *>(v),
                                     static_cast<T *>(o), lse)),
        "attention");
  });
}

zeroc_rt_status_t attentionGrad(zeroc_rt_dtype_t dtype, const AttentionCall &c, const void *q,
                                const void *k, const void *v, const void *o, const void *dout,
                                const float *lse, float *delta, void *dq, void *dk, void *dv) {
  return dispatch("attention_grad", dtype, c, [&](auto t, auto d) -> zeroc_rt_status_t {
    using T = decltype(t);
    constexpr int D = decltype(d)::value;
    const AttentionShape g = shapeOf(c);
    auto gradKV = [&](auto kernel, auto... dqAcc) {
      return launchStatus(
          static_cast<int>(launchWarps(kernel, attentionBlocks(g, c.tk), kAttnThreads, c,
                                       static_cast<const T *>(q), static_cast<const T *>(k),
                                       static_cast<const T *>(v), static_cast<const T *>(dout), lse,
                                       static_cast<const float *>(delta), static_cast<T *>(dk),
                                       static_cast<T *>(dv), dqAcc...)),
          "attention_grad_kv");
    };
    if constexpr (D <= kAttnOneWalkMaxDim) {
      if (!c.twoWalks) {
        float *dqAcc = nullptr;
        ZEROC_RT_RETURN_IF_ERROR(
            attentionGradBegin(dtype, g, D, o, c.o, dout, c.dout, delta, &dqAcc));
        ZEROC_RT_RETURN_IF_ERROR(gradKV(gradKVQKernel<T, D>, dqAcc));
        return attentionGradEnd(dtype, g, D, dqAcc, dq, c.dq);
      }
    }
    ZEROC_RT_RETURN_IF_ERROR(launchStatus(
        static_cast<int>(launchWarps(gradQKernel<T, D>, attentionBlocks(g, c.tq), kAttnThreads,
                                     c, static_cast<const T *>(q), static_cast<const T *>(k),
                                     static_cast<const T *>(v), static_cast<const T *>(o),
                                     static_cast<const T *>(dout), lse, delta,
                                     static_cast<T *>(dq))),
        "attention_grad_q"));
    return gradKV(gradKVKernel<T, D>);
  });
}

/// dispatchHead for a one-walk gradient's dtype and head (16, 32 or 64).
template <typename Fn>
zeroc_rt_status_t dispatchOneWalk(const char *kernel, zeroc_rt_dtype_t dtype,
                                  const AttentionShape &g, int64_t dim, Fn &&fn) {
  if (g.batch < 0 || g.heads < 0 || g.tq < 0)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: a negative size", kernel);
  return dispatchHead<kAttnOneWalkMaxDim>(kernel, dtype, dim, fn);
}

zeroc_rt_status_t attentionGradBegin(zeroc_rt_dtype_t dtype, const AttentionShape &g, int64_t dim,
                                     const void *o, const int64_t *os, const void *dout,
                                     const int64_t *dos, float *delta, float **dqAcc) {
  const char *kernel = "attention_grad_begin";
  return dispatchOneWalk(kernel, dtype, g, dim, [&](auto t, auto d) -> zeroc_rt_status_t {
    using T = decltype(t);
    constexpr int D = decltype(d)::value;
    void *scratch = nullptr;
    const size_t bytes = static_cast<size_t>(g.batch * g.heads * g.tq) * D * sizeof(float);
    ZEROC_RT_RETURN_IF_ERROR(gpuScratch(bytes ? bytes : sizeof(float), &scratch));
    *dqAcc = static_cast<float *>(scratch);
    return launchStatus(
        static_cast<int>(launchWarps(gradDeltaKernel<T, D>, attentionBlocks(g, g.tq), kAttnThreads,
                                     g, static_cast<const T *>(o), strides4(os),
                                     static_cast<const T *>(dout), strides4(dos), delta, *dqAcc)),
        kernel);
  });
}

zeroc_rt_status_t attentionGradEnd(zeroc_rt_dtype_t dtype, const AttentionShape &g, int64_t dim,
                                   const float *dqAcc, void *dq, const int64_t *dqs) {
  const char *kernel = "attention_grad_end";
  return dispatchOneWalk(kernel, dtype, g, dim, [&](auto t, auto d) -> zeroc_rt_status_t {
    using T = decltype(t);
    constexpr int D = decltype(d)::value;
    return launchStatus(
        static_cast<int>(launchWarps(storeQKernel<T, D>, attentionBlocks(g, g.tq), kAttnThreads, g,
                                     dqAcc, static_cast<T *>(dq), strides4(dqs))),
        kernel);
  });
}

} // namespace zeroc_rt::cuda
