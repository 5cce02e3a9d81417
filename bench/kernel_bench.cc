//===- bench/kernel_bench.cc - Per-kernel timings on the GPT's shapes -----===//
//
// Times the runtime kernels that dominate a training step of
// bench_gpt.py's medium GPT (micro batch 8, T 64, C 128, 4 heads, V 512), in
// F32, F16 and BF16, and prints nanoseconds per output element (median of
// the repetitions). It links against a built runtime library; the build
// and run commands are in bench/README.md.
//
// Only the kernels' speed is measured: inputs are normal(0, 1) values
// rounded to the dtype (positive ones where the op needs them).
//
//===----------------------------------------------------------------------===//

#include "zeroc_rt/kernels.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

namespace {

/// Round to nearest even of a float's bit pattern into binary16 / bfloat16
/// (inputs here are finite normal values in the 16-bit ranges).
uint16_t toF16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7FFFFFFFu;
  if (a < 0x38800000u) // |f| < 2^-14: flush (speed only, values irrelevant)
    return static_cast<uint16_t>(sign);
  a -= 0x38000000u;
  return static_cast<uint16_t>(sign | ((a + 0xFFFu + ((a >> 13) & 1u)) >> 13));
}
uint16_t toBF16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

/// A tensor owning its buffer, filled with normal(0, 1) (or |.| + 0.5).
struct Buffer {
  std::vector<unsigned char> bytes;
  zeroc_rt_tensor_t t{};

  Buffer(zeroc_rt_dtype_t dtype, std::initializer_list<int64_t> dims,
         std::mt19937 &rng, bool positive = false) {
    t.dtype = dtype;
    t.rank = static_cast<int32_t>(dims.size());
    int64_t n = 1;
    int d = 0;
    for (int64_t v : dims) {
      t.dims[d++] = v;
      n *= v;
    }
    size_t size = zeroc_rt_dtype_size(dtype);
    bytes.assign(static_cast<size_t>(n) * size + 64, 0);
    t.data = bytes.data();
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (int64_t i = 0; i < n; ++i) {
      float v = normal(rng);
      if (positive)
        v = std::fabs(v) + 0.5f;
      unsigned char *p = bytes.data() + i * size;
      if (dtype == ZEROC_RT_DTYPE_F32) {
        std::memcpy(p, &v, 4);
      } else if (dtype == ZEROC_RT_DTYPE_F16 || dtype == ZEROC_RT_DTYPE_BF16) {
        uint16_t h = dtype == ZEROC_RT_DTYPE_F16 ? toF16(v) : toBF16(v);
        std::memcpy(p, &h, 2);
      } else if (dtype == ZEROC_RT_DTYPE_BOOL) {
        *p = static_cast<unsigned char>(v > 0.0f);
      } else if (dtype == ZEROC_RT_DTYPE_I64) {
        int64_t label = static_cast<int64_t>(std::fabs(v) * 100.0f) % 512;
        std::memcpy(p, &label, 8);
      }
    }
  }
  const zeroc_rt_tensor_t *operator&() const { return &t; }
  int64_t elements() const {
    int64_t n = 1;
    for (int d = 0; d < t.rank; ++d)
      n *= t.dims[d];
    return n;
  }
};

const char *dtypeName(zeroc_rt_dtype_t d) {
  return d == ZEROC_RT_DTYPE_F32   ? "f32"
         : d == ZEROC_RT_DTYPE_F16 ? "f16"
                                   : "bf16";
}

/// Runs `fn` until ~50 ms have passed (at least 5 times) and prints the
/// median time per call divided by `elements`.
void timeIt(const std::string &name, zeroc_rt_dtype_t dtype, int64_t elements,
            const std::function<zeroc_rt_status_t()> &fn) {
  using Clock = std::chrono::steady_clock;
  std::vector<double> ns;
  auto start = Clock::now();
  while (ns.size() < 5 ||
         (Clock::now() - start < std::chrono::milliseconds(50) &&
          ns.size() < 1000)) {
    auto t0 = Clock::now();
    zeroc_rt_status_t st = fn();
    auto t1 = Clock::now();
    if (st) {
      std::printf("%-40s %-4s FAILED: %s\n", name.c_str(), dtypeName(dtype),
                  zeroc_rt_status_message(st));
      zeroc_rt_status_free(st);
      return;
    }
    ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
  }
  std::nth_element(ns.begin(), ns.begin() + ns.size() / 2, ns.end());
  double med = ns[ns.size() / 2];
  std::printf("%-40s %-4s %9.1f us  %6.2f ns/elt\n", name.c_str(),
              dtypeName(dtype), med / 1e3, med / static_cast<double>(elements));
}

} // namespace

int main(int argc, char **argv) {
  const char *filter = argc > 1 ? argv[1] : "";
  std::mt19937 rng(1);
  auto want = [&](const std::string &name) {
    return name.find(filter) != std::string::npos;
  };
  for (zeroc_rt_dtype_t dt :
       {ZEROC_RT_DTYPE_F32, ZEROC_RT_DTYPE_F16, ZEROC_RT_DTYPE_BF16}) {
    Buffer x(dt, {8, 64, 128}, rng), y(dt, {8, 64, 128}, rng),
        o(dt, {8, 64, 128}, rng);
    Buffer x4(dt, {8, 64, 512}, rng), y4(dt, {8, 64, 512}, rng),
        o4(dt, {8, 64, 512}, rng), o4b(dt, {8, 64, 512}, rng);
    Buffer row(dt, {128}, rng), scalar(dt, {}, rng, true);
    Buffer att(dt, {8, 4, 64, 64}, rng), attOut(dt, {8, 4, 64, 64}, rng),
        attGrad(dt, {8, 4, 64, 64}, rng);
    Buffer mask(ZEROC_RT_DTYPE_BOOL, {1, 1, 64, 64}, rng);
    auto bin = [&](const char *name, zeroc_rt_binary_op_t op, const Buffer &a,
                   const Buffer &b, const Buffer &out) {
      if (want(name))
        timeIt(name, dt, out.elements(),
               [&] { return zeroc_rt_k_binary(op, &a, &b, &out); });
    };
    bin("binary add [8,64,128]", ZEROC_RT_BINARY_ADD, x, y, o);
    bin("binary mul [8,64,512]", ZEROC_RT_BINARY_MUL, x4, y4, o4);
    bin("binary add row [128]+[8,64,128]", ZEROC_RT_BINARY_ADD, row, x, o);
    bin("binary div scalar [8,64,512]/[]", ZEROC_RT_BINARY_DIV, x4, scalar, o4);
    if (want("unary erf"))
      timeIt("unary erf [8,64,512]", dt, o4.elements(),
             [&] { return zeroc_rt_k_unary(ZEROC_RT_UNARY_ERF, &x4, &o4); });
    if (want("unary_grad erf"))
      timeIt("unary_grad erf [8,64,512]", dt, o4.elements(), [&] {
        return zeroc_rt_k_unary_grad(ZEROC_RT_UNARY_ERF, &x4, nullptr, &y4,
                                     &o4);
      });
    if (want("where"))
      timeIt("where [1,1,64,64] ? [] : [8,4,64,64]", dt, att.elements(),
             [&] { return zeroc_rt_k_where(&mask, &scalar, &att, &attOut); });
    if (want("softmax")) {
      timeIt("softmax [8,4,64,64] axis 3", dt, att.elements(),
             [&] { return zeroc_rt_k_softmax(&att, 3, 0, &attOut); });
      timeIt("softmax_grad [8,4,64,64] axis 3", dt, att.elements(), [&] {
        return zeroc_rt_k_softmax_grad(&attOut, &att, 3, 0, &attGrad);
      });
    }
    Buffer ln(dt, {512, 128}, rng), lnOut(dt, {512, 128}, rng),
        lnGrad(dt, {512, 128}, rng), gamma(dt, {128}, rng),
        beta(dt, {128}, rng), gGamma(dt, {128}, rng), gBeta(dt, {128}, rng);
    if (want("layer_norm")) {
      timeIt("layer_norm [512,128]", dt, ln.elements(), [&] {
        return zeroc_rt_k_layer_norm(&ln, &gamma, &beta, -1, 1e-5, &lnOut);
      });
      timeIt("layer_norm_grad [512,128]", dt, ln.elements(), [&] {
        return zeroc_rt_k_layer_norm_grad(&ln, &gamma, -1, 1e-5, &lnOut,
                                          &lnGrad, &gGamma, &gBeta);
      });
    }
    Buffer sumRow(dt, {512}, rng), big(dt, {8, 128, 512}, rng),
        sumMat(dt, {128, 512}, rng);
    if (want("sum_to")) {
      timeIt("sum_to [8,64,512]->[512]", dt, x4.elements(),
             [&] { return zeroc_rt_k_sum_to(&x4, &sumRow); });
      timeIt("sum_to [8,128,512]->[128,512]", dt, big.elements(),
             [&] { return zeroc_rt_k_sum_to(&big, &sumMat); });
    }
    Buffer w(dt, {128, 512}, rng), wt(dt, {512, 128}, rng);
    Buffer h4(dt, {8, 64, 4, 32}, rng), h4t(dt, {8, 4, 64, 32}, rng),
        h4tt(dt, {8, 4, 32, 64}, rng);
    if (want("transpose")) {
      static const int64_t p10[] = {1, 0}, p0213[] = {0, 2, 1, 3},
                           p0231[] = {0, 2, 3, 1};
      timeIt("transpose [128,512] perm 1,0", dt, w.elements(),
             [&] { return zeroc_rt_k_transpose(&w, p10, &wt); });
      timeIt("transpose [8,64,4,32] perm 0,2,1,3", dt, h4.elements(),
             [&] { return zeroc_rt_k_transpose(&h4, p0213, &h4t); });
      timeIt("transpose [8,64,4,32] perm 0,2,3,1", dt, h4.elements(),
             [&] { return zeroc_rt_k_transpose(&h4, p0231, &h4tt); });
      static const int64_t p021[] = {0, 2, 1}, p0132[] = {0, 1, 3, 2};
      Buffer h3t(dt, {8, 128, 64}, rng), h4u(dt, {8, 4, 32, 64}, rng);
      timeIt("transpose [8,64,128] perm 0,2,1", dt, x.elements(),
             [&] { return zeroc_rt_k_transpose(&x, p021, &h3t); });
      timeIt("transpose [8,4,64,32] perm 0,1,3,2", dt, h4t.elements(),
             [&] { return zeroc_rt_k_transpose(&h4t, p0132, &h4u); });
    }
    Buffer wq(dt, {128, 512}, rng);
    if (want("matmul"))
      timeIt("matmul [8,64,128]x[128,512]", dt, o4.elements(),
             [&] { return zeroc_rt_k_matmul(&x, &wq, &o4b); });
    Buffer logits(dt, {512, 512}, rng), logitsGrad(dt, {512, 512}, rng),
        loss(dt, {}, rng), lossGrad(dt, {}, rng, true);
    Buffer labels(ZEROC_RT_DTYPE_I64, {512}, rng);
    if (want("cross_entropy")) {
      timeIt("cross_entropy [512,512]", dt, logits.elements(), [&] {
        return zeroc_rt_k_softmax_cross_entropy(
            &logits, &labels, ZEROC_RT_LOSS_MEAN, 0, -100, &loss);
      });
      timeIt("cross_entropy_grad [512,512]", dt, logits.elements(), [&] {
        return zeroc_rt_k_softmax_cross_entropy_grad(
            &logits, &labels, ZEROC_RT_LOSS_MEAN, 0, -100, &lossGrad,
            &logitsGrad);
      });
    }
    if (dt != ZEROC_RT_DTYPE_F32 && want("cast")) {
      Buffer f32(ZEROC_RT_DTYPE_F32, {8, 64, 512}, rng);
      timeIt("cast f32 -> dtype [8,64,512]", dt, o4.elements(),
             [&] { return zeroc_rt_k_cast(&f32, &o4); });
      timeIt("cast dtype -> f32 [8,64,512]", dt, o4.elements(),
             [&] { return zeroc_rt_k_cast(&x4, &f32); });
    }
  }
  return 0;
}
