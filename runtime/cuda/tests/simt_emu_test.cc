//===- simt_emu_test.cc - The emulation's many-thread blocks -*- C++ -*-===//
//
// simt_emu.cc on kernels written for the test: that a block has the threads
// its launch asked for, that __shared__ memory and barriers behave as on a
// GPU, that the warp reductions sum across lanes, that a missing barrier
// shows as a stale read in one of the two thread orders, and that what
// would hang or be undefined on a GPU fails the launch with what it was.
// ctest runs it with ZEROC_RT_CUDA_EMU_SIMT=forward and =reverse
// (tests/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#include "zeroc_rt_cuda/compat.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

namespace zc = zeroc_rt::cuda;

ZRT_GLOBAL void whoKernel(int *out) {
  out[zc::blockIndex() * zc::blockThreads() + zc::threadIndex()] =
      static_cast<int>(zc::blockIndex() * 10000 + zc::threadIndex());
}

ZRT_GLOBAL void blockSumKernel(const double *in, double *out, int64_t n) {
  __shared__ double scratch[32];
  double v = 0;
  for (int64_t i = zc::threadIndex(); i < n; i += zc::blockThreads())
    v += in[i];
  // Twice in a row: the second reduction must not overwrite scratch before
  // every thread has read the first's.
  const double a = zc::blockSum(v, scratch);
  const double b = zc::blockMax(v, scratch);
  out[2 * zc::threadIndex()] = a;
  out[2 * zc::threadIndex() + 1] = b;
}

/// Each thread writes its slot, then reads its neighbour's: with a barrier
/// between (`barrier`), every read sees this launch's `mark`.
ZRT_GLOBAL void neighbourKernel(int mark, int barrier, int *stale) {
  __shared__ int slots[1024];
  const int t = zc::threadIndex(), n = zc::blockThreads();
  slots[t] = mark + t;
  if (barrier)
    zc::syncBlock();
  if (slots[(t + 1) % n] != mark + (t + 1) % n)
    zc::atomicOr(reinterpret_cast<unsigned *>(stale), 1u);
}

ZRT_GLOBAL void divergentBarrierKernel() {
  if (zc::threadIndex() >= 32)
    return;
  zc::syncBlock();
}

ZRT_GLOBAL void partialWarpSumKernel(float *out) {
  __shared__ float scratch[32];
  out[zc::threadIndex()] = zc::blockSum(1.0f, scratch);
}

/// Each lane gathers its index from the warp's lanes; with `partial`, the
/// upper half of the warp returns first.
ZRT_GLOBAL void gatherKernel(int partial, uint32_t *out) {
  const int lane = zc::threadIndex() & 31;
  if (partial && lane >= 16)
    return;
  uint32_t mine = static_cast<uint32_t>(zc::threadIndex()), all[32];
  zc::emu::warpGather(&mine, 1, all);
  for (int l = 0; l < 32; ++l)
    out[zc::threadIndex() * 32 + l] = all[l];
}

std::string launchError(int code) {
  return code ? std::string(zc::emu::violation()) : std::string("launched");
}

TEST(SimtEmulation, ABlockHasTheThreadsItsLaunchAsked) {
  ASSERT_TRUE(zc::emu::simt()) << "run with ZEROC_RT_CUDA_EMU_SIMT set";
  std::vector<int> out(3 * 96, -1);
  ASSERT_EQ(zc::launch(whoKernel, 3, 96, out.data()), 0);
  for (int b = 0; b < 3; ++b)
    for (int t = 0; t < 96; ++t)
      EXPECT_EQ(out[b * 96 + t], b * 10000 + t);
}

TEST(SimtEmulation, BlockReductionsCombineEveryLane) {
  const int64_t n = 1000;
  std::vector<double> in(n);
  double sum = 0, mx = 0;
  for (int64_t i = 0; i < n; ++i) {
    in[i] = static_cast<double>((i * 37) % 101);
    sum += in[i];
  }
  for (int t = 0; t < 256; ++t) { // thread t's own partial sum
    double v = 0;
    for (int64_t i = t; i < n; i += 256)
      v += in[i];
    mx = v > mx ? v : mx;
  }
  std::vector<double> out(2 * 256, -1);
  ASSERT_EQ(zc::launch(blockSumKernel, 1, 256, in.data(), out.data(), n), 0);
  for (int t = 0; t < 256; ++t) {
    EXPECT_EQ(out[2 * t], sum) << "thread " << t;
    EXPECT_EQ(out[2 * t + 1], mx) << "thread " << t;
  }
}

TEST(SimtEmulation, SharedMemoryWithABarrierIsSeenByEveryThread) {
  int stale = 0;
  ASSERT_EQ(zc::launch(neighbourKernel, 2, 128, 1000, 1, &stale), 0);
  EXPECT_EQ(stale, 0);
}

TEST(SimtEmulation, AMissingBarrierReadsAStaleValue) {
  int stale = 0;
  ASSERT_EQ(zc::launch(neighbourKernel, 1, 128, 5000, 0, &stale), 0);
  EXPECT_EQ(stale, 1) << "a read before the neighbour's write went unseen";
}

TEST(SimtEmulation, ABarrierSomeThreadsReturnedBeforeFailsTheLaunch) {
  const std::string error = launchError(zc::launch(divergentBarrierKernel, 1, 64));
  EXPECT_NE(error.find("a barrier reached by 32 of the block's 64 threads"),
            std::string::npos)
      << error;
}

TEST(SimtEmulation, AShuffleInAPartialWarpFailsTheLaunch) {
  std::vector<float> out(48);
  const std::string error = launchError(zc::launch(partialWarpSumKernel, 1, 48, out.data()));
  EXPECT_NE(error.find("a full-warp shuffle reached by 16 lanes of warp 1"),
            std::string::npos)
      << error;
}

TEST(SimtEmulation, AWarpGatherSeesEveryLane) {
  std::vector<uint32_t> out(64 * 32);
  ASSERT_EQ(zc::launch(gatherKernel, 1, 64, 0, out.data()), 0);
  for (int t = 0; t < 64; ++t)
    for (int l = 0; l < 32; ++l)
      ASSERT_EQ(out[t * 32 + l], static_cast<uint32_t>((t & ~31) + l)) << "thread " << t;
}

TEST(SimtEmulation, AWarpGatherWithLanesMissingFailsTheLaunch) {
  std::vector<uint32_t> out(32 * 32);
  const std::string error = launchError(zc::launch(gatherKernel, 1, 32, 1, out.data()));
  EXPECT_NE(error.find("a full-warp shuffle reached by 16 lanes of warp 0"), std::string::npos)
      << error;
}

TEST(SimtEmulation, MoreThan1024ThreadsFailsTheLaunch) {
  std::vector<int> out(2048);
  const std::string error = launchError(zc::launch(whoKernel, 1, 2048, out.data()));
  EXPECT_NE(error.find("a launch of 2048 threads per block"), std::string::npos) << error;
}

TEST(SimtEmulation, AFailedLaunchLeavesTheNextOneWorking) {
  ASSERT_NE(zc::launch(divergentBarrierKernel, 1, 64), 0);
  std::vector<int> out(64, -1);
  ASSERT_EQ(zc::launch(whoKernel, 1, 64, out.data()), 0);
  EXPECT_EQ(out[63], 63);
}

} // namespace
