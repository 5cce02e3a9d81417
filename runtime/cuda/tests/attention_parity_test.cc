//===- attention_parity_test.cc - Attention in one kernel, against the ops -*- C++ -*-===//
//
// zeroc_rt_cuda/mma.h's warp product on small integers (exact in any
// order), and the attention kernels (kernels/attention.h: a scaled,
// optionally causal score) against a reference that computes what the
// unfused ops compute: the product q k^T stored as T, the scaled score
// stored as T, the probabilities stored as T, o = p v; and backward
// dp = dO v^T, the softmax gradient p (dp - sum(p dp)) stored as T, masked
// and scaled, dq, dk, dv, each product summed in float and stored as T.
// k and v are read from one packed [batch, time, 2, heads, dim] tensor
// and q from [batch, time, heads, dim] (the head split of a QKV
// projection), dO from a dense [batch, heads, time, dim]; o, dq, dk and dv
// are written as [batch, time, heads, dim]. With a dropout on the
// probabilities, the reference drops p before o = p v and dv, and dp
// before the softmax gradient, by the mask the CPU runtime's
// zeroc_rt_k_dropout draws over the [batch, heads, tq, tk] scores (what a
// dropout op between the softmax and the product draws). Tolerance: the largest difference within a fraction of the
// largest reference element (1.5e-2 for BF16, 2.5e-3 for F16; seen: 7.4e-3
// and 1.3e-3, about two units in the last place): the kernels
// normalize the probabilities after the product and take the gradient's
// dot product from o, so they round differently from the ops.
//
//===----------------------------------------------------------------------===//

#include "gpu.h"
#include "kernels/attention.h"
#include "zeroc_rt/kernels.h"
#include "zeroc_rt_cuda/compat.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace {

namespace zc = zeroc_rt::cuda;

std::string statusText(zeroc_rt_status_t s) {
  std::string text = zeroc_rt_status_message(s);
  zeroc_rt_status_free(s);
  return text;
}
#define EXPECT_STATUS_OK(expr)                                                 \
  do {                                                                         \
    if (zeroc_rt_status_t s_ = (expr))                                         \
      FAIL() << #expr << ": " << statusText(s_);                               \
  } while (0)

/// Device memory holding `bytes`, freed at scope exit.
struct DeviceBuffer {
  void *p = nullptr;
  explicit DeviceBuffer(size_t bytes) {
    if (zeroc_rt_status_t s = zc::gpuMalloc(bytes ? bytes : 1, "test", &p))
      ADD_FAILURE() << statusText(s);
  }
  ~DeviceBuffer() { zc::gpuFree(p); }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
};

template <typename T> float rounded(float v) { return zc::toFloat(zc::fromFloat<T>(v)); }

//===----------------------------------------------------------------------===//
// The warp product
//===----------------------------------------------------------------------===//

/// c = 1 + a b through warpProduct, a [16, 16] and b [16, 8] of small
/// integers, exact.
template <typename T> void checkMma() {
  std::vector<float> a(256), b(128), c(128), want(128);
  for (int i = 0; i < 256; ++i)
    a[i] = static_cast<float>((i * 7) % 9 - 4);
  for (int i = 0; i < 128; ++i)
    b[i] = static_cast<float>((i * 5) % 7 - 3);
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 8; ++n) {
      float s = 1.f;
      for (int k = 0; k < 16; ++k)
        s += a[m * 16 + k] * b[k * 8 + n];
      want[m * 8 + n] = s;
    }
  DeviceBuffer da(a.size() * 4), db(b.size() * 4), dc(c.size() * 4);
  EXPECT_STATUS_OK(zc::gpuUpload(da.p, a.data(), a.size() * 4));
  EXPECT_STATUS_OK(zc::gpuUpload(db.p, b.data(), b.size() * 4));
  EXPECT_STATUS_OK(zc::warpProduct(std::is_same_v<T, zc::BF16> ? ZEROC_RT_DTYPE_BF16
                                                                : ZEROC_RT_DTYPE_F16,
                                    static_cast<const float *>(da.p),
                                    static_cast<const float *>(db.p),
                                    static_cast<float *>(dc.p)));
  EXPECT_STATUS_OK(zc::gpuDownload(c.data(), dc.p, c.size() * 4));
  for (int i = 0; i < 128; ++i)
    EXPECT_EQ(c[i], want[i]) << "row " << i / 8 << " column " << i % 8;
}

TEST(WarpProduct, Bf16) { checkMma<zc::BF16>(); }
TEST(WarpProduct, F16) { checkMma<zc::F16>(); }

/// ldmatrix.x4 (loadMatrices4): lane l's word j is word l % 4 of row l / 4
/// of matrix j, the rows lanes 8j .. 8j + 7 gave; .trans
/// (loadMatrices4Trans): elements (2 (l % 4), l / 4) and (2 (l % 4) + 1,
/// l / 4) of matrix j. Element e of row r holds r * 8 + e.
TEST(WarpMatrices, Layout) {
  std::vector<uint32_t> out(256, 0u);
  DeviceBuffer d(out.size() * 4);
  EXPECT_STATUS_OK(zc::warpMatrices(static_cast<uint32_t *>(d.p)));
  EXPECT_STATUS_OK(zc::gpuDownload(out.data(), d.p, out.size() * 4));
  auto pair = [](uint32_t lo, uint32_t hi) { return lo | (hi << 16); };
  for (uint32_t lane = 0; lane < 32; ++lane)
    for (uint32_t j = 0; j < 4; ++j) {
      const uint32_t row = 8 * j + lane / 4, first = 8 * j + 2 * (lane % 4), col = lane / 4;
      EXPECT_EQ(out[lane * 4 + j], pair(row * 8 + 2 * (lane % 4), row * 8 + 2 * (lane % 4) + 1))
          << "lane " << lane << " word " << j;
      EXPECT_EQ(out[128 + lane * 4 + j], pair(first * 8 + col, (first + 1) * 8 + col))
          << "transposed: lane " << lane << " word " << j;
    }
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

struct Case {
  int64_t batch, heads, tq, tk, dim;
  int causal;
  /// Elements q, k and v start after their buffer's start: 1 makes their
  /// rows unaligned, so the kernels read them 2 bytes at a time, not 16.
  int64_t shift = 0;
  /// A dropout on the probabilities (0: none).
  double dropout = 0;
  /// Biases of q, k and v ([heads, dim] each, broadcast over batch and
  /// time) that the kernels add as they load (AttnIn's addends): the
  /// results must have the bits of the kernels run on the sums.
  bool bias = false;
};

constexpr uint64_t kDropoutSeed = 0x5eedull, kDropoutCounter = 3;

/// The reference: the unfused ops' arithmetic (module comment), each
/// (batch, head) a dense [t, dim] matrix.
template <typename T> struct Reference {
  const Case &c;
  float scale;
  std::vector<float> q, k, v, dout;                // [b, h, t, d]
  std::vector<float> o, lse, dq, dk, dv;           // [b, h, t, d] / [b, h, tq]
  std::vector<float> kept;                         // [b, h, tq, tk]: 1 or 0

  /// Whether the dropout keeps each score: zeroc_rt_k_dropout (the CPU
  /// runtime's) over ones.
  void drawMask() {
    const int64_t n = c.batch * c.heads * c.tq * c.tk;
    std::vector<float> ones(n, 1.f), out(n);
    zeroc_rt_tensor_t in{ones.data(), ZEROC_RT_DTYPE_F32, 4, {c.batch, c.heads, c.tq, c.tk}};
    zeroc_rt_tensor_t res{out.data(), ZEROC_RT_DTYPE_F32, 4, {c.batch, c.heads, c.tq, c.tk}};
    EXPECT_STATUS_OK(zeroc_rt_k_dropout(&in, c.dropout, kDropoutSeed, kDropoutCounter, &res));
    kept.resize(n);
    for (int64_t i = 0; i < n; ++i)
      kept[i] = out[i] != 0.f ? 1.f : 0.f;
  }
  /// x after the dropout of score (bh, i, j), stored as T.
  float dropped(int64_t bh, int64_t i, int64_t j, float x) const {
    if (c.dropout == 0)
      return x;
    const double keepScale = 1.0 / (1.0 - c.dropout);
    return kept[(bh * c.tq + i) * c.tk + j] != 0.f
               ? rounded<T>(static_cast<float>(static_cast<double>(x) * keepScale))
               : 0.f;
  }

  float score(int64_t bh, int64_t i, int64_t j) const {
    if (c.causal && j > i)
      return -INFINITY;
    float s = 0.f;
    for (int64_t d = 0; d < c.dim; ++d)
      s += q[(bh * c.tq + i) * c.dim + d] * k[(bh * c.tk + j) * c.dim + d];
    return rounded<T>(rounded<T>(s) * scale);
  }

  void run() {
    const int64_t bhs = c.batch * c.heads, D = c.dim;
    o.assign(bhs * c.tq * D, 0.f);
    dq.assign(bhs * c.tq * D, 0.f);
    dk.assign(bhs * c.tk * D, 0.f);
    dv.assign(bhs * c.tk * D, 0.f);
    lse.assign(bhs * c.tq, 0.f);
    drawMask();
    std::vector<float> p(c.tk), pd(c.tk), ds(c.tk);
    std::vector<float> accK(bhs * c.tk * D, 0.f), accV(bhs * c.tk * D, 0.f);
    for (int64_t bh = 0; bh < bhs; ++bh)
      for (int64_t i = 0; i < c.tq; ++i) {
        float mx = -INFINITY, sum = 0.f;
        for (int64_t j = 0; j < c.tk; ++j)
          mx = std::max(mx, p[j] = score(bh, i, j));
        for (int64_t j = 0; j < c.tk; ++j)
          sum += std::exp(p[j] - mx);
        lse[bh * c.tq + i] = mx + std::log(sum);
        for (int64_t j = 0; j < c.tk; ++j) {
          p[j] = rounded<T>(std::exp(p[j] - mx) / sum);
          pd[j] = dropped(bh, i, j, p[j]);
        }
        for (int64_t d = 0; d < D; ++d) {
          float s = 0.f;
          for (int64_t j = 0; j < c.tk; ++j)
            s += pd[j] * v[(bh * c.tk + j) * D + d];
          o[(bh * c.tq + i) * D + d] = rounded<T>(s);
        }
        float dot = 0.f;
        for (int64_t j = 0; j < c.tk; ++j) {
          float s = 0.f;
          for (int64_t d = 0; d < D; ++d)
            s += dout[(bh * c.tq + i) * D + d] * v[(bh * c.tk + j) * D + d];
          ds[j] = dropped(bh, i, j, rounded<T>(s));
          dot += p[j] * ds[j];
        }
        for (int64_t j = 0; j < c.tk; ++j) {
          const float g = rounded<T>(p[j] * (ds[j] - dot));
          ds[j] = c.causal && j > i ? 0.f : rounded<T>(g * scale);
        }
        for (int64_t d = 0; d < D; ++d) {
          float s = 0.f;
          for (int64_t j = 0; j < c.tk; ++j)
            s += ds[j] * k[(bh * c.tk + j) * D + d];
          dq[(bh * c.tq + i) * D + d] = rounded<T>(s);
        }
        for (int64_t j = 0; j < c.tk; ++j)
          for (int64_t d = 0; d < D; ++d) {
            accK[(bh * c.tk + j) * D + d] += ds[j] * q[(bh * c.tq + i) * D + d];
            accV[(bh * c.tk + j) * D + d] += pd[j] * dout[(bh * c.tq + i) * D + d];
          }
      }
    for (size_t n = 0; n < accK.size(); ++n) {
      dk[n] = rounded<T>(accK[n]);
      dv[n] = rounded<T>(accV[n]);
    }
  }
};

/// `got` (in `layout`: element (bh, t, d) at offset(bh, t, d)) against
/// `want` ([b, h, t, d] dense).
template <typename T, typename Offset>
void expectNear(const char *what, const std::vector<T> &got, Offset offset,
                const std::vector<float> &want, int64_t bhs, int64_t t, int64_t dim,
                double tolerance) {
  double worst = 0, largest = 0;
  int64_t at = 0;
  for (int64_t bh = 0; bh < bhs; ++bh)
    for (int64_t i = 0; i < t; ++i)
      for (int64_t d = 0; d < dim; ++d) {
        const float w = want[(bh * t + i) * dim + d];
        const float g = zc::toFloat(got[offset(bh, i, d)]);
        largest = std::max(largest, static_cast<double>(std::fabs(w)));
        const double diff = std::isnan(g) ? INFINITY : std::fabs(g - w);
        if (diff > worst) {
          worst = diff;
          at = (bh * t + i) * dim + d;
        }
      }
  EXPECT_LE(worst, tolerance * largest)
      << what << ": largest difference " << worst << " at element " << at << " (largest "
      << largest << ")";
}

template <typename T>
void checkAttention(const Case &c, zeroc_rt_dtype_t dtype, double tol, int twoWalks) {
  SCOPED_TRACE("batch " + std::to_string(c.batch) + " heads " + std::to_string(c.heads) + " tq " +
               std::to_string(c.tq) + " tk " + std::to_string(c.tk) + " dim " +
               std::to_string(c.dim) + (c.causal ? " causal" : "") +
               (c.dropout ? " dropout " + std::to_string(c.dropout) : "") +
               (c.bias ? " bias" : "") + (twoWalks ? " two walks" : ""));
  const int64_t B = c.batch, H = c.heads, D = c.dim, bhs = B * H;
  std::mt19937_64 rng(20261206 + c.dim + c.tq);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  Reference<T> ref{c, 1.f / std::sqrt(static_cast<float>(D)), {}, {}, {}, {}, {}, {}, {}, {}, {},
                   {}};
  // q, k, v packed as [b, t, 3, h, d] (tq = tk here when causal; else q's
  // own [b, tq, h, d] block follows k and v's [b, tk, 2, h, d]).
  const int64_t kvSize = B * c.tk * 2 * H * D, qSize = B * c.tq * H * D;
  std::vector<T> packed(c.shift + kvSize + qSize), dout(bhs * c.tq * D);
  ref.q.resize(bhs * c.tq * D);
  ref.k.resize(bhs * c.tk * D);
  ref.v.resize(bhs * c.tk * D);
  ref.dout.resize(dout.size());
  zc::AttentionCall call{};
  call.batch = B;
  call.heads = H;
  call.tq = c.tq;
  call.tk = c.tk;
  call.dim = D;
  call.scale = ref.scale;
  call.causal = c.causal;
  call.dropout = c.dropout;
  call.seed = kDropoutSeed;
  call.counter = kDropoutCounter;
  call.twoWalks = twoWalks;
  const int64_t kv[4] = {c.tk * 2 * H * D, D, 2 * H * D, 1};
  const int64_t qs[4] = {c.tq * H * D, D, H * D, 1};
  std::memcpy(call.k, kv, sizeof kv);
  std::memcpy(call.v, kv, sizeof kv);
  std::memcpy(call.q, qs, sizeof qs);
  std::memcpy(call.o, qs, sizeof qs);
  std::memcpy(call.dq, qs, sizeof qs);
  const int64_t dense[4] = {H * c.tq * D, c.tq * D, D, 1};
  std::memcpy(call.dout, dense, sizeof dense);
  const int64_t kvOut[4] = {c.tk * H * D, D, H * D, 1};
  std::memcpy(call.dk, kvOut, sizeof kvOut);
  std::memcpy(call.dv, kvOut, sizeof kvOut);
  // The biases of q, k and v, [3, heads, dim] (zeros without c.bias); the
  // reference and `summed` hold each element plus its bias, rounded to T
  // as the add op stores it.
  std::vector<T> bias(3 * H * D, zc::fromFloat<T>(0.f));
  for (T &b : bias)
    b = c.bias ? zc::fromFloat<T>(0.25f * uniform(rng)) : b;
  std::vector<T> summed(packed.size());
  auto fill = [&](std::vector<float> &r, int64_t t, int which, auto offset) {
    for (int64_t bh = 0; bh < bhs; ++bh)
      for (int64_t i = 0; i < t; ++i)
        for (int64_t d = 0; d < D; ++d) {
          const T x = zc::fromFloat<T>(uniform(rng));
          const T sum =
              zc::fromFloat<T>(zc::toFloat(bias[(which * H + bh % H) * D + d]) + zc::toFloat(x));
          packed[c.shift + offset(bh / H, bh % H, i, d)] = x;
          summed[c.shift + offset(bh / H, bh % H, i, d)] = c.bias ? sum : x;
          r[(bh * t + i) * D + d] = zc::toFloat(c.bias ? sum : x);
        }
  };
  fill(ref.k, c.tk, 1, [&](int64_t b, int64_t h, int64_t t, int64_t d) {
    return b * kv[0] + h * kv[1] + t * kv[2] + d;
  });
  fill(ref.v, c.tk, 2, [&](int64_t b, int64_t h, int64_t t, int64_t d) {
    return H * D + b * kv[0] + h * kv[1] + t * kv[2] + d;
  });
  fill(ref.q, c.tq, 0, [&](int64_t b, int64_t h, int64_t t, int64_t d) {
    return kvSize + b * qs[0] + h * qs[1] + t * qs[2] + d;
  });
  for (size_t n = 0; n < dout.size(); ++n) {
    dout[n] = zc::fromFloat<T>(uniform(rng));
    ref.dout[n] = zc::toFloat(dout[n]);
  }
  ref.run();

  const size_t qBytes = qSize * sizeof(T), kBytes = B * c.tk * H * D * sizeof(T);
  DeviceBuffer dPacked(packed.size() * sizeof(T)), dDout(dout.size() * sizeof(T));
  DeviceBuffer dO(qBytes), dLse(bhs * c.tq * 4), dDelta(bhs * c.tq * 4), dQ(qBytes),
      dK(kBytes), dV(kBytes);
  EXPECT_STATUS_OK(zc::gpuUpload(dPacked.p, packed.data(), packed.size() * sizeof(T)));
  EXPECT_STATUS_OK(zc::gpuUpload(dDout.p, dout.data(), dout.size() * sizeof(T)));
  DeviceBuffer dBias(bias.size() * sizeof(T));
  EXPECT_STATUS_OK(zc::gpuUpload(dBias.p, bias.data(), bias.size() * sizeof(T)));
  if (c.bias)
    for (int k = 0; k < 3; ++k) {
      call.add[k] = static_cast<const T *>(dBias.p) + k * H * D;
      const int64_t strides[4] = {0, D, 0, 1};
      std::memcpy(call.addStrides[k], strides, sizeof strides);
    }
  const T *base = static_cast<const T *>(dPacked.p) + c.shift;
  EXPECT_STATUS_OK(zc::attention(dtype, call, base + kvSize, base, base + H * D, dO.p,
                                 static_cast<float *>(dLse.p)));
  EXPECT_STATUS_OK(zc::attentionGrad(dtype, call, base + kvSize, base, base + H * D, dO.p,
                                     dDout.p, static_cast<const float *>(dLse.p),
                                     static_cast<float *>(dDelta.p), dQ.p, dK.p, dV.p));
  std::vector<T> o(qSize), dq(qSize), dk(B * c.tk * H * D), dv(dk.size());
  std::vector<float> lse(bhs * c.tq);
  EXPECT_STATUS_OK(zc::gpuDownload(o.data(), dO.p, qBytes));
  EXPECT_STATUS_OK(zc::gpuDownload(dq.data(), dQ.p, qBytes));
  EXPECT_STATUS_OK(zc::gpuDownload(dk.data(), dK.p, kBytes));
  EXPECT_STATUS_OK(zc::gpuDownload(dv.data(), dV.p, kBytes));
  EXPECT_STATUS_OK(zc::gpuDownload(lse.data(), dLse.p, lse.size() * 4));
  auto qLayout = [&](int64_t bh, int64_t t, int64_t d) {
    return (bh / H) * qs[0] + (bh % H) * qs[1] + t * qs[2] + d;
  };
  auto kLayout = [&](int64_t bh, int64_t t, int64_t d) {
    return (bh / H) * kvOut[0] + (bh % H) * kvOut[1] + t * kvOut[2] + d;
  };
  expectNear("o", o, qLayout, ref.o, bhs, c.tq, D, tol);
  expectNear("dq", dq, qLayout, ref.dq, bhs, c.tq, D, tol);
  expectNear("dk", dk, kLayout, ref.dk, bhs, c.tk, D, tol);
  expectNear("dv", dv, kLayout, ref.dv, bhs, c.tk, D, tol);
  for (size_t n = 0; n < lse.size(); ++n)
    EXPECT_NEAR(lse[n], ref.lse[n], 1e-3 * std::max(1.f, std::fabs(ref.lse[n])))
        << "lse of row " << n;
  if (!c.bias)
    return;
  // The same kernels on the sums, without addends: the same bits.
  EXPECT_STATUS_OK(zc::gpuUpload(dPacked.p, summed.data(), summed.size() * sizeof(T)));
  call.add[0] = call.add[1] = call.add[2] = nullptr;
  DeviceBuffer sO(qBytes), sLse(bhs * c.tq * 4), sDelta(bhs * c.tq * 4), sQ(qBytes), sK(kBytes),
      sV(kBytes);
  EXPECT_STATUS_OK(zc::attention(dtype, call, base + kvSize, base, base + H * D, sO.p,
                                 static_cast<float *>(sLse.p)));
  EXPECT_STATUS_OK(zc::attentionGrad(dtype, call, base + kvSize, base, base + H * D, sO.p, dDout.p,
                                     static_cast<const float *>(sLse.p),
                                     static_cast<float *>(sDelta.p), sQ.p, sK.p, sV.p));
  auto same = [&](const char *what, const void *device, const std::vector<T> &got, size_t n) {
    std::vector<T> want(n);
    EXPECT_STATUS_OK(zc::gpuDownload(want.data(), device, n * sizeof(T)));
    EXPECT_EQ(0, std::memcmp(want.data(), got.data(), n * sizeof(T)))
        << what << ": the addends give other bits than the sums";
  };
  same("o", sO.p, o, qSize);
  // In one walk the blocks add their shares of dq atomically, in an order
  // that on a GPU depends on their timing: the same within the tolerance.
  if (c.dim > zc::kAttentionOneWalkMaxDim || twoWalks) {
    same("dq", sQ.p, dq, qSize);
  } else {
    std::vector<T> sums(qSize);
    EXPECT_STATUS_OK(zc::gpuDownload(sums.data(), sQ.p, qSize * sizeof(T)));
    std::vector<float> want(ref.dq.size());
    for (int64_t bh = 0; bh < bhs; ++bh)
      for (int64_t t = 0; t < c.tq; ++t)
        for (int64_t d = 0; d < D; ++d)
          want[(bh * c.tq + t) * D + d] = zc::toFloat(sums[qLayout(bh, t, d)]);
    expectNear("dq of the sums", dq, qLayout, want, bhs, c.tq, D, tol);
  }
  same("dk", sK.p, dk, dk.size());
  same("dv", sV.p, dv, dv.size());
}

// Partial tiles (80 rows: one full tile and 16 rows), several heads and
// batches, every head size, keys longer and shorter than the queries;
// causal ones long enough that the kernels skip the tiles above the
// diagonal (200 and 150 rows: several tiles of 64 and 32); one with q, k
// and v unaligned (read 2 bytes at a time; the others 16); dropouts,
// causal and not, with partial tiles and keys longer than the queries;
// biases added as q, k and v load, aligned (16 bytes at a time) and not,
// with a dropout.
const Case kCases[] = {
    {2, 3, 80, 80, 16, 1},
    {1, 2, 64, 64, 64, 1},
    {1, 2, 72, 72, 64, 0},
    {1, 1, 40, 40, 128, 1},
    {1, 2, 24, 96, 32, 0},
    {1, 1, 100, 36, 64, 0},
    {1, 2, 200, 200, 32, 1},
    {1, 1, 150, 150, 128, 1},
    {2, 2, 80, 80, 64, 1, 1},
    {2, 2, 80, 80, 16, 1, 0, 0.1},
    {1, 2, 72, 72, 64, 0, 0, 0.3},
    {1, 1, 24, 96, 128, 0, 0, 0.5},
    {2, 3, 80, 80, 64, 1, 0, 0, true},
    {1, 2, 72, 72, 32, 0, 1, 0.1, true},
};

// Heads of at most 64 in one walk (as a program runs them) and in two (as
// heads of 128 run).
TEST(AttentionParity, Bf16) {
  for (const Case &c : kCases)
    for (int twoWalks = 0; twoWalks <= (c.dim <= zc::kAttentionOneWalkMaxDim); ++twoWalks)
      checkAttention<zc::BF16>(c, ZEROC_RT_DTYPE_BF16, 1.5e-2, twoWalks);
}
TEST(AttentionParity, F16) {
  for (const Case &c : kCases)
    for (int twoWalks = 0; twoWalks <= (c.dim <= zc::kAttentionOneWalkMaxDim); ++twoWalks)
      checkAttention<zc::F16>(c, ZEROC_RT_DTYPE_F16, 2.5e-3, twoWalks);
}

/// *out: the milliseconds of `run` on the device, the median of 5 timed
/// runs after one untimed.
template <typename Run> void medianMs(Run &&run, float *out) {
  void *from = nullptr, *to = nullptr;
  EXPECT_STATUS_OK(zc::gpuTimedEventCreate(&from));
  EXPECT_STATUS_OK(zc::gpuTimedEventCreate(&to));
  run();
  std::vector<float> ms;
  for (int i = 0; i < 5; ++i) {
    EXPECT_STATUS_OK(zc::gpuEventRecord(from, zc::computeStream()));
    run();
    EXPECT_STATUS_OK(zc::gpuEventRecord(to, zc::computeStream()));
    EXPECT_STATUS_OK(zc::gpuEventSynchronize(to));
    float t = 0.f;
    EXPECT_STATUS_OK(zc::gpuEventElapsed(from, to, &t));
    ms.push_back(t);
  }
  zc::gpuEventDestroy(from);
  zc::gpuEventDestroy(to);
  std::sort(ms.begin(), ms.end());
  *out = ms[2];
}

// The gradient of one causal attention with a head of 64 in one walk and
// in two: dk and dv the same bits (the same sums in the same order), dq
// within the tolerance (summed in another order), and each way's time,
// which gpu-check.sh shows. On a GPU the shape is GPT-2-124M's (batch 8,
// 12 heads, 1024 rows), on the emulation a smaller one.
TEST(AttentionParity, OneWalkAgainstTwo) {
  using T = zc::BF16;
  const bool emulated = zc::computeStream() == nullptr;
  const int64_t B = emulated ? 1 : 8, H = emulated ? 2 : 12, Tn = emulated ? 192 : 1024, D = 64;
  const int64_t n = B * H * Tn * D;
  std::mt19937_64 rng(20261207);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::vector<T> host(5 * n);
  for (T &x : host)
    x = zc::fromFloat<T>(uniform(rng));
  DeviceBuffer in(5 * n * sizeof(T)), o(n * sizeof(T)), lse(B * H * Tn * 4), delta(B * H * Tn * 4);
  EXPECT_STATUS_OK(zc::gpuUpload(in.p, host.data(), host.size() * sizeof(T)));
  const T *q = static_cast<const T *>(in.p), *k = q + n, *v = q + 2 * n, *dout = q + 3 * n;
  zc::AttentionCall call{};
  call.batch = B;
  call.heads = H;
  call.tq = call.tk = Tn;
  call.dim = D;
  call.scale = 0.125f;
  call.causal = 1;
  const int64_t dense[4] = {H * Tn * D, Tn * D, D, 1};
  for (int64_t *st : {call.q, call.k, call.v, call.o, call.dout, call.dq, call.dk, call.dv})
    std::memcpy(st, dense, sizeof dense);
  EXPECT_STATUS_OK(
      zc::attention(ZEROC_RT_DTYPE_BF16, call, q, k, v, o.p, static_cast<float *>(lse.p)));
  std::vector<T> grads[2];
  float ms[2];
  for (int twoWalks = 0; twoWalks < 2; ++twoWalks) {
    DeviceBuffer dq(n * sizeof(T)), dk(n * sizeof(T)), dv(n * sizeof(T));
    call.twoWalks = twoWalks;
    medianMs(
        [&] {
          EXPECT_STATUS_OK(zc::attentionGrad(ZEROC_RT_DTYPE_BF16, call, q, k, v, o.p, dout,
                                             static_cast<const float *>(lse.p),
                                             static_cast<float *>(delta.p), dq.p, dk.p, dv.p));
        },
        &ms[twoWalks]);
    grads[twoWalks].resize(3 * n);
    EXPECT_STATUS_OK(zc::gpuDownload(grads[twoWalks].data(), dq.p, n * sizeof(T)));
    EXPECT_STATUS_OK(zc::gpuDownload(grads[twoWalks].data() + n, dk.p, n * sizeof(T)));
    EXPECT_STATUS_OK(zc::gpuDownload(grads[twoWalks].data() + 2 * n, dv.p, n * sizeof(T)));
  }
  EXPECT_EQ(0, std::memcmp(grads[0].data() + n, grads[1].data() + n, 2 * n * sizeof(T)))
      << "dk and dv differ between one walk and two";
  std::vector<float> want(n);
  for (int64_t i = 0; i < n; ++i)
    want[i] = zc::toFloat(grads[1][i]);
  expectNear(
      "dq in one walk against two", grads[0],
      [&](int64_t bh, int64_t t, int64_t d) { return (bh * Tn + t) * D + d; }, want, B * H, Tn, D,
      1.5e-2);
  std::printf("attention gradient timing (bf16, batch %lld, %lld heads, %lld rows, head 64, "
              "causal%s): one walk %.3f ms, two walks %.3f ms\n",
              static_cast<long long>(B), static_cast<long long>(H), static_cast<long long>(Tn),
              emulated ? ", host emulation" : "", ms[0], ms[1]);
}

TEST(AttentionParity, RefusesOtherHeadsAndDtypes) {
  zc::AttentionCall call{};
  call.batch = call.heads = 1;
  call.tq = call.tk = 8;
  call.dim = 24;
  zeroc_rt_status_t s = zc::attention(ZEROC_RT_DTYPE_BF16, call, nullptr, nullptr, nullptr,
                                      nullptr, nullptr);
  ASSERT_NE(s, nullptr);
  EXPECT_NE(statusText(s).find("a head of 24 elements"), std::string::npos);
  call.dim = 64;
  s = zc::attention(ZEROC_RT_DTYPE_F32, call, nullptr, nullptr, nullptr, nullptr, nullptr);
  ASSERT_NE(s, nullptr);
  EXPECT_NE(statusText(s).find("dtype f32 is not f16 or bf16"), std::string::npos);
}

} // namespace
