//===- kernels_conv_test.cc - conv, pool, batch_norm kernels ----*- C++ -*-===//
//
// Each kernel against a naive double-precision loop written from the ONNX
// definition, in F32/F64 and F16/BF16; gradients against central finite
// differences in F64; and the rejection of bad descriptors and windows.
//
//===----------------------------------------------------------------------===//

#include "kernels_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace zeroc_rt::test {
namespace {

const zeroc_rt_dtype_t kAllFloat[] = {ZEROC_RT_DTYPE_F32, ZEROC_RT_DTYPE_F64,
                                      ZEROC_RT_DTYPE_F16, ZEROC_RT_DTYPE_BF16};

double tolFor(zeroc_rt_dtype_t dt) {
  switch (dt) {
  case ZEROC_RT_DTYPE_F64: return 1e-12;
  case ZEROC_RT_DTYPE_F32: return 2e-5;
  case ZEROC_RT_DTYPE_F16: return 4e-3;
  default: return 3e-2; // BF16
  }
}

struct Win {
  std::vector<int64_t> k, s, d, pb, pe;
  bool ceil = false;
  zeroc_rt_window_t get() const {
    zeroc_rt_window_t w{};
    w.spatial_rank = static_cast<int32_t>(s.size());
    w.ceil_mode = ceil;
    for (size_t i = 0; i < s.size(); ++i) {
      w.kernel[i] = k.empty() ? 0 : k[i];
      w.strides[i] = s[i];
      w.dilations[i] = d[i];
      w.pads_begin[i] = pb[i];
      w.pads_end[i] = pe[i];
    }
    return w;
  }
  int64_t out(size_t i, int64_t in, int64_t kk) const {
    int64_t span = in + pb[i] + pe[i] - ((kk - 1) * d[i] + 1);
    return (ceil ? (span + s[i] - 1) / s[i] : span / s[i]) + 1;
  }
};

/// Naive ONNX Conv in double over the tensors' (rounded) values.
std::vector<double> refConv(const HostTensor &x, const HostTensor &w,
                            const HostTensor *b, const Win &win, int64_t group,
                            Dims *outDims) {
  const Dims &xd = x.dims(), &wd = w.dims();
  size_t r = xd.size() - 2;
  Dims od{xd[0], wd[0]};
  for (size_t i = 0; i < r; ++i)
    od.push_back(win.out(i, xd[2 + i], wd[2 + i]));
  *outDims = od;
  std::vector<double> xv = x.values(), wv = w.values(), y(numel(od), 0.0);
  int64_t cg = wd[1], mg = wd[0] / group;
  Dims kd(wd.begin() + 2, wd.end());
  for (int64_t o = 0; o < numel(od); ++o) {
    Dims oi = unravel(o, od);
    int64_t n = oi[0], m = oi[1], g = m / mg;
    double acc = b ? b->get(m) : 0.0;
    for (int64_t c = 0; c < cg; ++c)
      for (int64_t t = 0; t < numel(kd); ++t) {
        Dims ti = unravel(t, kd);
        Dims xi{n, g * cg + c};
        bool inside = true;
        for (size_t a = 0; a < r; ++a) {
          int64_t p = oi[2 + a] * win.s[a] - win.pb[a] + ti[a] * win.d[a];
          inside = inside && p >= 0 && p < xd[2 + a];
          xi.push_back(p);
        }
        if (!inside)
          continue;
        Dims wi{m, c};
        wi.insert(wi.end(), ti.begin(), ti.end());
        acc += xv[ravel(xi, xd)] * wv[ravel(wi, wd)];
      }
    y[o] = acc;
  }
  return y;
}

/// Naive pooling (MAX: first max; AVG: PyTorch's divisor).
std::vector<double> refPool(const HostTensor &x, const Win &win, bool isMax,
                            bool includePad, Dims *outDims) {
  const Dims &xd = x.dims();
  size_t r = xd.size() - 2;
  Dims od{xd[0], xd[1]};
  for (size_t i = 0; i < r; ++i)
    od.push_back(win.out(i, xd[2 + i], win.k[i]));
  *outDims = od;
  std::vector<double> xv = x.values(), y(numel(od));
  Dims kd(win.k.begin(), win.k.end());
  for (int64_t o = 0; o < numel(od); ++o) {
    Dims oi = unravel(o, od);
    double best = -std::numeric_limits<double>::infinity(), sum = 0, count = 0;
    for (int64_t t = 0; t < numel(kd); ++t) {
      Dims ti = unravel(t, kd);
      Dims xi{oi[0], oi[1]};
      bool inside = true, inPadded = true;
      for (size_t a = 0; a < r; ++a) {
        int64_t p = oi[2 + a] * win.s[a] - win.pb[a] + ti[a] * win.d[a];
        inside = inside && p >= 0 && p < xd[2 + a];
        inPadded = inPadded && p >= -win.pb[a] && p < xd[2 + a] + win.pe[a];
        xi.push_back(p);
      }
      if (includePad ? inPadded : inside)
        count += 1;
      if (!inside)
        continue;
      double v = xv[ravel(xi, xd)];
      best = std::max(best, v);
      sum += v;
    }
    y[o] = isMax ? best : sum / count;
  }
  return y;
}

std::vector<double> refBatchNorm(const HostTensor &x, const HostTensor &s,
                                 const HostTensor &b, double eps) {
  const Dims &xd = x.dims();
  int64_t n = xd[0], c = xd[1], sp = numel(xd) / (n * c);
  std::vector<double> xv = x.values(), y(xv.size());
  for (int64_t ch = 0; ch < c; ++ch) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < sp; ++j)
        mean += xv[(i * c + ch) * sp + j];
    mean /= n * sp;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < sp; ++j)
        var += std::pow(xv[(i * c + ch) * sp + j] - mean, 2);
    var /= n * sp;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < sp; ++j) {
        int64_t at = (i * c + ch) * sp + j;
        y[at] = (xv[at] - mean) / std::sqrt(var + eps) * s.get(ch) + b.get(ch);
      }
  }
  return y;
}

struct ConvCase {
  Dims x, w;
  Win win;
  int64_t group;
  bool bias;
};

std::vector<ConvCase> convCases() {
  return {
      {{2, 3, 7}, {4, 3, 3}, {{}, {1}, {1}, {0}, {0}}, 1, true},
      {{2, 4, 9}, {6, 2, 3}, {{}, {2}, {2}, {1}, {2}}, 2, false},
      {{2, 3, 6, 5}, {4, 3, 3, 2}, {{}, {1, 2}, {1, 1}, {1, 0}, {1, 1}}, 1, true},
      {{1, 4, 5, 6}, {4, 1, 3, 3}, {{}, {2, 1}, {1, 2}, {1, 1}, {0, 1}}, 4, true},
      {{2, 3, 8, 8}, {5, 3, 4, 4}, {{}, {4, 4}, {1, 1}, {0, 0}, {0, 0}}, 1, true},
      {{1, 2, 3, 4, 3}, {3, 2, 2, 2, 2}, {{}, {1, 1, 1}, {1, 1, 1}, {0, 1, 0}, {1, 0, 1}}, 1, true},
  };
}

TEST(KernelsConv, MatchesNaiveLoopEveryDtype) {
  std::mt19937_64 rng(11);
  for (zeroc_rt_dtype_t dt : kAllFloat)
    for (const ConvCase &c : convCases()) {
      HostTensor x = randomTensor(dt, c.x, rng), w = randomTensor(dt, c.w, rng);
      HostTensor b = randomTensor(dt, {c.w[0]}, rng);
      Dims od;
      std::vector<double> want =
          refConv(x, w, c.bias ? &b : nullptr, c.win, c.group, &od);
      HostTensor y(dt, od);
      zeroc_rt_window_t win = c.win.get();
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_conv(x.desc(), w.desc(),
                                         c.bias ? b.desc() : nullptr, &win,
                                         c.group, y.desc()));
      expectClose(y, want, tolFor(dt) * 4, "conv x " + dimsName(c.x));
    }
}

TEST(KernelsConv, GradsMatchFiniteDifferencesF64) {
  std::mt19937_64 rng(12);
  const auto dt = ZEROC_RT_DTYPE_F64;
  for (const ConvCase &c : convCases()) {
    HostTensor x = randomTensor(dt, c.x, rng), w = randomTensor(dt, c.w, rng);
    Dims od;
    refConv(x, w, nullptr, c.win, c.group, &od);
    HostTensor gy = randomTensor(dt, od, rng), gx(dt, c.x), gw(dt, c.w);
    zeroc_rt_window_t win = c.win.get();
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_conv_grad_input(w.desc(), gy.desc(), &win,
                                                  c.group, gx.desc()));
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_conv_grad_weight(x.desc(), gy.desc(), &win,
                                                   c.group, gw.desc()));
    auto convOf = [&](const HostTensor &xx, const HostTensor &ww) {
      HostTensor y(dt, od);
      zeroc_rt_window_t wn = c.win.get();
      EXPECT_EQ(zeroc_rt_k_conv(const_cast<HostTensor &>(xx).desc(),
                                const_cast<HostTensor &>(ww).desc(), nullptr,
                                &wn, c.group, y.desc()),
                nullptr);
      return y.values();
    };
    expectGradient(
        [&](const std::vector<double> &v) {
          HostTensor xp(dt, c.x);
          xp.setValues(v);
          return convOf(xp, w);
        },
        x.values(), gy.values(), gx.values(), "conv dx " + dimsName(c.x));
    expectGradient(
        [&](const std::vector<double> &v) {
          HostTensor wp(dt, c.w);
          wp.setValues(v);
          return convOf(x, wp);
        },
        w.values(), gy.values(), gw.values(), "conv dw " + dimsName(c.w));
  }
}

struct PoolCase {
  Dims x;
  Win win;
};

std::vector<PoolCase> poolCases() {
  return {
      {{2, 3, 6, 6}, {{2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}}},
      {{2, 2, 7, 7}, {{3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}}},
      {{1, 2, 6, 5}, {{3, 2}, {1, 1}, {1, 2}, {1, 0}, {1, 1}}},
      {{2, 3, 7}, {{3}, {2}, {1}, {1}, {1}, true}},
      {{1, 2, 4, 3, 4}, {{2, 2, 2}, {2, 1, 2}, {1, 1, 1}, {0, 0, 1}, {1, 0, 0}}},
  };
}

TEST(KernelsPool, MatchesNaiveLoopEveryDtype) {
  std::mt19937_64 rng(13);
  for (zeroc_rt_dtype_t dt : kAllFloat)
    for (const PoolCase &c : poolCases())
      for (int kind = 0; kind < 3; ++kind) {
        bool isMax = kind == 0, includePad = kind == 2;
        HostTensor x = randomTensor(dt, c.x, rng);
        Dims od;
        std::vector<double> want = refPool(x, c.win, isMax, includePad, &od);
        HostTensor y(dt, od);
        zeroc_rt_window_t win = c.win.get();
        ZEROC_RT_ASSERT_OK(zeroc_rt_k_pool(
            isMax ? ZEROC_RT_POOL_MAX : ZEROC_RT_POOL_AVG, x.desc(), &win,
            includePad, y.desc()));
        expectClose(y, want, tolFor(dt), "pool kind " + std::to_string(kind) +
                                             " x " + dimsName(c.x));
      }
}

TEST(KernelsPool, GradsMatchFiniteDifferencesF64) {
  std::mt19937_64 rng(14);
  const auto dt = ZEROC_RT_DTYPE_F64;
  for (const PoolCase &c : poolCases())
    for (int kind = 0; kind < 3; ++kind) {
      auto pk = kind == 0 ? ZEROC_RT_POOL_MAX : ZEROC_RT_POOL_AVG;
      int includePad = kind == 2;
      HostTensor x = randomTensor(dt, c.x, rng); // continuous: no ties
      Dims od;
      refPool(x, c.win, true, false, &od);
      HostTensor gy = randomTensor(dt, od, rng), gx(dt, c.x);
      zeroc_rt_window_t win = c.win.get();
      ZEROC_RT_ASSERT_OK(zeroc_rt_k_pool_grad(
          pk, kind == 0 ? x.desc() : nullptr, gy.desc(), &win, includePad,
          gx.desc()));
      expectGradient(
          [&](const std::vector<double> &v) {
            HostTensor xp(dt, c.x), y(dt, od);
            xp.setValues(v);
            EXPECT_EQ(zeroc_rt_k_pool(pk, xp.desc(), &win, includePad, y.desc()),
                      nullptr);
            return y.values();
          },
          x.values(), gy.values(), gx.values(),
          "pool grad kind " + std::to_string(kind) + " x " + dimsName(c.x));
    }
}

TEST(KernelsPool, MaxGradGoesToTheFirstMaximumOnTies) {
  HostTensor x(ZEROC_RT_DTYPE_F32, {1, 1, 4}), gy(ZEROC_RT_DTYPE_F32, {1, 1, 1});
  HostTensor gx(ZEROC_RT_DTYPE_F32, {1, 1, 4});
  x.setValues({1, 3, 3, 2});
  gy.fill(5);
  Win w{{4}, {1}, {1}, {0}, {0}};
  zeroc_rt_window_t win = w.get();
  ZEROC_RT_ASSERT_OK(zeroc_rt_k_pool_grad(ZEROC_RT_POOL_MAX, x.desc(), gy.desc(),
                                          &win, 0, gx.desc()));
  expectClose(gx, {0, 5, 0, 0}, 0, "tie");
}

TEST(KernelsBatchNorm, MatchesReferenceAndGradsMatchFiniteDifferences) {
  std::mt19937_64 rng(15);
  const double eps = 1e-5;
  for (const Dims &xd : {Dims{4, 3}, Dims{2, 3, 5}, Dims{2, 2, 3, 4}}) {
    for (zeroc_rt_dtype_t dt : kAllFloat) {
      HostTensor x = randomTensor(dt, xd, rng), s = randomTensor(dt, {xd[1]}, rng);
      HostTensor b = randomTensor(dt, {xd[1]}, rng), y(dt, xd);
      ZEROC_RT_ASSERT_OK(
          zeroc_rt_k_batch_norm(x.desc(), s.desc(), b.desc(), eps, y.desc()));
      expectClose(y, refBatchNorm(x, s, b, eps), tolFor(dt) * 4,
                  "batch_norm " + dimsName(xd));
    }
    const auto dt = ZEROC_RT_DTYPE_F64;
    HostTensor x = randomTensor(dt, xd, rng), s = randomTensor(dt, {xd[1]}, rng);
    HostTensor b = randomTensor(dt, {xd[1]}, rng), gy = randomTensor(dt, xd, rng);
    HostTensor gx(dt, xd), gs(dt, {xd[1]}), gb(dt, {xd[1]});
    ZEROC_RT_ASSERT_OK(zeroc_rt_k_batch_norm_grad(x.desc(), s.desc(), eps,
                                                  gy.desc(), gx.desc(),
                                                  gs.desc(), gb.desc()));
    auto run = [&](HostTensor &xx, HostTensor &ss, HostTensor &bb) {
      HostTensor y(dt, xd);
      EXPECT_EQ(zeroc_rt_k_batch_norm(xx.desc(), ss.desc(), bb.desc(), eps,
                                      y.desc()),
                nullptr);
      return y.values();
    };
    expectGradient([&](const std::vector<double> &v) {
      HostTensor xp(dt, xd);
      xp.setValues(v);
      return run(xp, s, b);
    }, x.values(), gy.values(), gx.values(), "bn dx " + dimsName(xd));
    expectGradient([&](const std::vector<double> &v) {
      HostTensor sp(dt, {xd[1]});
      sp.setValues(v);
      return run(x, sp, b);
    }, s.values(), gy.values(), gs.values(), "bn dscale " + dimsName(xd));
    expectGradient([&](const std::vector<double> &v) {
      HostTensor bp(dt, {xd[1]});
      bp.setValues(v);
      return run(x, s, bp);
    }, b.values(), gy.values(), gb.values(), "bn dbias " + dimsName(xd));
  }
}

TEST(KernelsConv, RejectsBadDescriptorsAndWindows) {
  const auto F = ZEROC_RT_DTYPE_F32;
  const auto INVALID = ZEROC_RT_INVALID_ARGUMENT;
  const auto SHAPE = ZEROC_RT_SHAPE_MISMATCH;
  HostTensor x(F, {2, 4, 8}), w(F, {6, 2, 3}), y(F, {2, 6, 6});
  HostTensor b(F, {6}), wrongB(F, {4}), wrongY(F, {2, 6, 5});
  HostTensor xi(ZEROC_RT_DTYPE_I64, {2, 4, 8}), xd(ZEROC_RT_DTYPE_F64, {2, 4, 8});
  zeroc_rt_window_t win = Win{{}, {1}, {1}, {0}, {0}}.get();
  ZEROC_RT_EXPECT_OK(zeroc_rt_k_conv(x.desc(), w.desc(), b.desc(), &win, 2, y.desc()));
  EXPECT_KERNEL_ERROR(zeroc_rt_k_conv(x.desc(), w.desc(), nullptr, nullptr, 2, y.desc()),
                      INVALID, "zeroc_rt_k_conv", "window is NULL");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_conv(x.desc(), w.desc(), nullptr, &win, 3, y.desc()),
                      SHAPE, "zeroc_rt_k_conv", "group 3 does not fit");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_conv(x.desc(), w.desc(), nullptr, &win, 2, wrongY.desc()),
                      SHAPE, "zeroc_rt_k_conv", "y is f32[2,6,5]");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_conv(x.desc(), w.desc(), wrongB.desc(), &win, 2, y.desc()),
                      SHAPE, "zeroc_rt_k_conv", "bias");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_conv(xi.desc(), w.desc(), nullptr, &win, 2, y.desc()),
                      INVALID, "zeroc_rt_k_conv", "x has dtype i64");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_conv(xd.desc(), w.desc(), nullptr, &win, 2, y.desc()),
                      INVALID, "zeroc_rt_k_conv", "w");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_conv(x.desc(), w.desc(), nullptr, &win, 2, x.desc()),
                      SHAPE, "zeroc_rt_k_conv", "y");
  zeroc_rt_window_t bad = win;
  bad.spatial_rank = 2;
  EXPECT_KERNEL_ERROR(zeroc_rt_k_conv(x.desc(), w.desc(), nullptr, &bad, 2, y.desc()),
                      INVALID, "zeroc_rt_k_conv", "spatial_rank 2");
  bad = win;
  bad.strides[0] = 0;
  EXPECT_KERNEL_ERROR(zeroc_rt_k_conv(x.desc(), w.desc(), nullptr, &bad, 2, y.desc()),
                      INVALID, "zeroc_rt_k_conv", "stride 0");
  bad = win;
  bad.ceil_mode = 1;
  EXPECT_KERNEL_ERROR(zeroc_rt_k_conv(x.desc(), w.desc(), nullptr, &bad, 2, y.desc()),
                      INVALID, "zeroc_rt_k_conv", "ceil_mode");
  bad = win;
  bad.dilations[0] = 5;
  EXPECT_KERNEL_ERROR(zeroc_rt_k_conv(x.desc(), w.desc(), nullptr, &bad, 2, y.desc()),
                      SHAPE, "zeroc_rt_k_conv", "larger than the padded input");
  HostTensor gx(F, {2, 4, 8}), gw(F, {6, 2, 3});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_conv_grad_input(w.desc(), wrongY.desc(), &win, 2, gx.desc()),
                      SHAPE, "zeroc_rt_k_conv_grad_input", "grad_y");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_conv_grad_weight(x.desc(), y.desc(), &win, 2, y.desc()),
                      SHAPE, "zeroc_rt_k_conv_grad_weight", "grad_w");
  ZEROC_RT_EXPECT_OK(zeroc_rt_k_conv_grad_input(w.desc(), y.desc(), &win, 2, gx.desc()));
  ZEROC_RT_EXPECT_OK(zeroc_rt_k_conv_grad_weight(x.desc(), y.desc(), &win, 2, gw.desc()));
  EXPECT_KERNEL_ERROR(zeroc_rt_k_conv_grad_weight(x.desc(), gx.desc(), &win, 2, gw.desc()),
                      SHAPE, "zeroc_rt_k_conv_grad_weight", "grad_y");
}

TEST(KernelsPool, RejectsBadDescriptorsAndWindows) {
  const auto F = ZEROC_RT_DTYPE_F32;
  const auto INVALID = ZEROC_RT_INVALID_ARGUMENT;
  const auto SHAPE = ZEROC_RT_SHAPE_MISMATCH;
  HostTensor x(F, {2, 3, 8}), y(F, {2, 3, 4}), wrongY(F, {2, 3, 5});
  zeroc_rt_window_t win = Win{{2}, {2}, {1}, {0}, {0}}.get();
  ZEROC_RT_EXPECT_OK(zeroc_rt_k_pool(ZEROC_RT_POOL_MAX, x.desc(), &win, 0, y.desc()));
  EXPECT_KERNEL_ERROR(zeroc_rt_k_pool(static_cast<zeroc_rt_pool_kind_t>(7), x.desc(), &win, 0, y.desc()),
                      INVALID, "zeroc_rt_k_pool", "unknown pool kind 7");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_pool(ZEROC_RT_POOL_AVG, x.desc(), &win, 0, wrongY.desc()),
                      SHAPE, "zeroc_rt_k_pool", "y is f32[2,3,5]");
  zeroc_rt_window_t bad = win;
  bad.pads_begin[0] = 2;
  EXPECT_KERNEL_ERROR(zeroc_rt_k_pool(ZEROC_RT_POOL_MAX, x.desc(), &bad, 0, y.desc()),
                      INVALID, "zeroc_rt_k_pool", "smaller than the dilated kernel");
  bad = win;
  bad.kernel[0] = 0;
  EXPECT_KERNEL_ERROR(zeroc_rt_k_pool(ZEROC_RT_POOL_MAX, x.desc(), &bad, 0, y.desc()),
                      INVALID, "zeroc_rt_k_pool", "kernel 0");
  HostTensor gx(F, {2, 3, 8});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_pool_grad(ZEROC_RT_POOL_MAX, nullptr, y.desc(), &win, 0, gx.desc()),
                      INVALID, "zeroc_rt_k_pool_grad", "needs x");
  HostTensor xShort(F, {2, 3, 7});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_pool_grad(ZEROC_RT_POOL_MAX, xShort.desc(), y.desc(), &win, 0, gx.desc()),
                      SHAPE, "zeroc_rt_k_pool_grad", "x");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_pool_grad(ZEROC_RT_POOL_AVG, nullptr, y.desc(), &win, 0, y.desc()),
                      SHAPE, "zeroc_rt_k_pool_grad", "grad_y");
  ZEROC_RT_EXPECT_OK(zeroc_rt_k_pool_grad(ZEROC_RT_POOL_AVG, nullptr, y.desc(), &win, 1, gx.desc()));
}

TEST(KernelsBatchNorm, RejectsBadDescriptors) {
  const auto F = ZEROC_RT_DTYPE_F32;
  const auto INVALID = ZEROC_RT_INVALID_ARGUMENT;
  const auto SHAPE = ZEROC_RT_SHAPE_MISMATCH;
  HostTensor x(F, {2, 3, 4}), s(F, {3}), wrong(F, {4}), y(F, {2, 3, 4});
  HostTensor v(F, {3});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_batch_norm(x.desc(), wrong.desc(), s.desc(), 1e-5, y.desc()),
                      SHAPE, "zeroc_rt_k_batch_norm", "scale");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_batch_norm(x.desc(), s.desc(), s.desc(), 0.0, y.desc()),
                      INVALID, "zeroc_rt_k_batch_norm", "epsilon");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_batch_norm(v.desc(), s.desc(), s.desc(), 1e-5, v.desc()),
                      SHAPE, "zeroc_rt_k_batch_norm", "rank >= 2");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_batch_norm(x.desc(), s.desc(), s.desc(), 1e-5, x.desc()),
                      INVALID, "zeroc_rt_k_batch_norm", "overlaps");
  HostTensor gx(F, {2, 3, 4}), gs(F, {3}), gb(F, {3});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_batch_norm_grad(x.desc(), s.desc(), 1e-5, y.desc(), gx.desc(), gs.desc(), wrong.desc()),
                      SHAPE, "zeroc_rt_k_batch_norm_grad", "grad_bias");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_batch_norm_grad(x.desc(), s.desc(), 1e-5, y.desc(), gx.desc(), gs.desc(), gs.desc()),
                      INVALID, "zeroc_rt_k_batch_norm_grad", "overlaps");
  ZEROC_RT_EXPECT_OK(zeroc_rt_k_batch_norm_grad(x.desc(), s.desc(), 1e-5, y.desc(), gx.desc(), gs.desc(), gb.desc()));
}

} // namespace
} // namespace zeroc_rt::test
