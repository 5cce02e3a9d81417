//===- train_optimizer_test.cc - The host's multi-tensor optimizer step ---===//
//
// A 16-bit gradient whose master is f32 is converted into the optimizer's
// scratch a part of ZEROC_RT_OPTIMIZER_CHUNK_ELEMENTS at a time: the parts
// must update the tensor exactly as the whole does (the same bits as an f32
// gradient holding the widened values, scaled in place).
//
//===----------------------------------------------------------------------===//

#include "train/device.h"
#include "zeroc_rt/contract.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace {

using zeroc_rt::train::AdamHyper;
using zeroc_rt::train::AdamTensor;
using zeroc_rt::train::SgdHyper;
using zeroc_rt::train::SgdTensor;

/// Two and a half parts and a few elements more.
constexpr int64_t kCount =
    2 * ZEROC_RT_OPTIMIZER_CHUNK_ELEMENTS + ZEROC_RT_OPTIMIZER_CHUNK_ELEMENTS / 2 + 7;

float widened(uint16_t bf16) {
  uint32_t bits = static_cast<uint32_t>(bf16) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// One parameter's state: its bf16 gradient, the same values in f32, the
/// f32 master, two state buffers and the bf16 parameter.
struct Case {
  std::vector<uint16_t> grad16;
  std::vector<float> grad32, master, a, b;
  std::vector<uint16_t> rounded;

  explicit Case(unsigned seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (int64_t i = 0; i < kCount; ++i) {
      float g = normal(rng);
      uint32_t bits;
      std::memcpy(&bits, &g, sizeof bits);
      grad16.push_back(static_cast<uint16_t>(bits >> 16));
      grad32.push_back(widened(grad16.back()));
      master.push_back(normal(rng));
      a.push_back(0.1f * normal(rng));
      b.push_back(std::abs(0.01f * normal(rng)));
    }
    rounded.assign(kCount, 0);
  }
};

template <typename Tensor> Tensor tensorOf(Case &c, bool sixteen) {
  Tensor t = {};
  t.name = "w";
  t.gradDtype = sixteen ? ZEROC_RT_DTYPE_BF16 : ZEROC_RT_DTYPE_F32;
  t.grad = sixteen ? static_cast<void *>(c.grad16.data()) : c.grad32.data();
  t.dtype = ZEROC_RT_DTYPE_F32;
  t.param = c.master.data();
  t.roundedDtype = ZEROC_RT_DTYPE_BF16;
  t.rounded = c.rounded.data();
  t.count = kCount;
  return t;
}

void expectSame(const Case &x, const Case &y) {
  EXPECT_EQ(0, std::memcmp(x.master.data(), y.master.data(), kCount * sizeof(float)));
  EXPECT_EQ(0, std::memcmp(x.a.data(), y.a.data(), kCount * sizeof(float)));
  EXPECT_EQ(0, std::memcmp(x.b.data(), y.b.data(), kCount * sizeof(float)));
  EXPECT_EQ(0, std::memcmp(x.rounded.data(), y.rounded.data(), kCount * sizeof(uint16_t)));
}

TEST(OptimizerStep, AdamOnConvertedPartsIsAdamOnTheWhole) {
  Case parts(1), whole(1);
  AdamHyper h = {};
  h.factor = 0.37, h.lr = 1e-3, h.beta1 = 0.9, h.beta2 = 0.999, h.eps = 1e-8;
  h.weightDecay = 0.01, h.adamW = 1, h.biasCorrection = 1, h.step = 3;
  std::vector<float> scratch(zeroc_rt_optimizer_scratch_bytes(kCount, sizeof(float)) /
                             sizeof(float));
  ASSERT_EQ(static_cast<int64_t>(scratch.size()), ZEROC_RT_OPTIMIZER_CHUNK_ELEMENTS);
  auto p = tensorOf<AdamTensor>(parts, true);
  p.expAvg = parts.a.data(), p.expAvgSq = parts.b.data();
  auto w = tensorOf<AdamTensor>(whole, false);
  w.expAvg = whole.a.data(), w.expAvgSq = whole.b.data();
  auto &device = zeroc_rt::train::hostDevice();
  ASSERT_EQ(nullptr, device.adamStepMulti(&p, 1, h, scratch.data()));
  ASSERT_EQ(nullptr, device.adamStepMulti(&w, 1, h, nullptr));
  expectSame(parts, whole);
}

TEST(OptimizerStep, SgdOnConvertedPartsIsSgdOnTheWhole) {
  Case parts(2), whole(2);
  SgdHyper h = {};
  h.factor = 0.5, h.lr = 0.01, h.momentum = 0.9, h.weightDecay = 1e-4, h.step = 2;
  std::vector<float> scratch(ZEROC_RT_OPTIMIZER_CHUNK_ELEMENTS);
  auto p = tensorOf<SgdTensor>(parts, true);
  p.momentumBuf = parts.a.data();
  auto w = tensorOf<SgdTensor>(whole, false);
  w.momentumBuf = whole.a.data();
  auto &device = zeroc_rt::train::hostDevice();
  ASSERT_EQ(nullptr, device.sgdStepMulti(&p, 1, h, scratch.data()));
  ASSERT_EQ(nullptr, device.sgdStepMulti(&w, 1, h, nullptr));
  expectSame(parts, whole);
}

} // namespace
