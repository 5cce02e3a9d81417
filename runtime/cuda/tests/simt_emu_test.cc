//===- simt_emu_test.cc - The emulation's many-thread blocks -*- C++ -*-===//
//
// simt_emu.cc on kernels written for the test: that a block has the threads
// its launch asked for, that __shared__ memory and barriers behave as on a
// GPU, that the warp reductions sum across lanes, that a missing barrier
// shows as a stale read in one of the two thread orders (between warps too,
// however many warp-wide operations apart), that an asynchronous copy lands
// at its thread's wait, and that what would hang or be undefined on a GPU
// fails the launch with what it was.
// ctest runs it with ZEROC_RT_CUDA_EMU_SIMT=forward and =reverse
// (tests/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#include "zeroc_rt_cuda/compat.h"
#include "zeroc_rt_cuda/mma.h"

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

/// Each thread writes its slot; each warp then takes part in `products`
/// warp gathers (as in a kernel's tensor-core products), and then each
/// thread reads the slot of its lane in the other warp (64 threads): with
/// a barrier between (`barrier`), every read sees this launch's `mark`.
ZRT_GLOBAL void otherWarpKernel(int mark, int barrier, int products, int *stale) {
  __shared__ int slots[64];
  const int t = zc::threadIndex();
  slots[t] = mark + t;
  uint32_t mine = static_cast<uint32_t>(t), all[32];
  for (int i = 0; i < products; ++i)
    zc::emu::warpGather(&mine, 1, all);
  if (barrier)
    zc::syncBlock();
  if (slots[t ^ 32] != mark + (t ^ 32))
    zc::atomicOr(reinterpret_cast<unsigned *>(stale), 1u);
}

/// Each lane copies 16 bytes of `from` into shared memory asynchronously,
/// and reads them back before its wait (`before`), after it (`after`) or,
/// with `wait` 0, never waits.
ZRT_GLOBAL void asyncCopyKernel(const uint32_t *from, int wait, uint32_t *before, uint32_t *after) {
  alignas(16) __shared__ uint32_t chunks[32 * 4];
  const int lane = zc::threadIndex();
  chunks[4 * lane] = 0;
  zc::copyAsync16(chunks + 4 * lane, from + 4 * lane);
  zc::commitCopies16();
  before[lane] = chunks[4 * lane];
  if (!wait)
    return;
  zc::waitCopies16();
  after[lane] = chunks[4 * lane];
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

TEST(SimtEmulation, AMissingBarrierBetweenWarpsShowsAcrossTheirProducts) {
  // A warp runs on through its own warp-wide operations before the next
  // warp starts, as a GPU may run it: the other warp's write is not there.
  int stale = 0;
  ASSERT_EQ(zc::launch(otherWarpKernel, 2, 64, 7000, 1, 5, &stale), 0);
  EXPECT_EQ(stale, 0);
  ASSERT_EQ(zc::launch(otherWarpKernel, 1, 64, 9000, 0, 5, &stale), 0);
  EXPECT_EQ(stale, 1) << "a read of the other warp's slot went unseen";
}

TEST(SimtEmulation, AnAsynchronousCopyLandsAtItsWait) {
  std::vector<uint32_t> from(32 * 4), before(32, 1), after(32, 0);
  for (int i = 0; i < 32 * 4; ++i)
    from[i] = static_cast<uint32_t>(100 + i);
  ASSERT_EQ(zc::launchWarps(asyncCopyKernel, 1, 32, from.data(), 1, before.data(), after.data()),
            0);
  for (int lane = 0; lane < 32; ++lane) {
    EXPECT_EQ(before[lane], 0u) << "lane " << lane << " read its copy before waiting";
    EXPECT_EQ(after[lane], from[4 * lane]) << "lane " << lane;
  }
}

TEST(SimtEmulation, AThreadThatNeverWaitsForItsCopiesFailsTheLaunch) {
  std::vector<uint32_t> from(32 * 4), before(32), after(32);
  const std::string error = launchError(
      zc::launchWarps(asyncCopyKernel, 1, 32, from.data(), 0, before.data(), after.data()));
  // Thread 0 returns first in index order, thread 31 in the reverse.
  EXPECT_NE(error.find("block 0: thread "), std::string::npos) << error;
  EXPECT_NE(error.find(" returned without waiting for 1 asynchronous copy"), std::string::npos)
      << error;
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
