//===- comm_self_test.cc - The single-process communicator ------*- C++ -*-===//
//
// Also the f16/bf16 reduction arithmetic behind the MPI backend's user ops
// (comm_half_ops.h), which needs no MPI to test.
//
//===----------------------------------------------------------------------===//

#include "comm_conformance.h"
#include "test_support.h"

#include "comm_half_ops.h"
#include "comm_internal.h"
#include "kernels/scalar_types.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

using namespace zeroc_rt::test;
namespace zk = zeroc_rt::kernels;

namespace {

class SelfComm : public ::testing::Test {
protected:
  void SetUp() override { ZEROC_RT_ASSERT_OK(zeroc_rt_comm_init_self(&comm)); }
  void TearDown() override { ZEROC_RT_EXPECT_OK(zeroc_rt_comm_finalize(comm)); }
  zeroc_rt_comm_t *comm = nullptr;
};

TEST_F(SelfComm, IsRankZeroOfOne) {
  EXPECT_EQ(zeroc_rt_comm_rank(comm), 0);
  EXPECT_EQ(zeroc_rt_comm_size(comm), 1);
  EXPECT_STREQ(zeroc_rt_comm_backend(comm), "self");
}

TEST_F(SelfComm, PassesSharedConformanceSuite) {
  CheckCounter counter("[self] ");
  runCommConformance(comm, counter);
  EXPECT_EQ(counter.failed(), 0);
  EXPECT_GT(counter.passed(), 100);
}

TEST_F(SelfComm, ReduceScatterTakesBlockZero) {
  double send[3] = {1.5, 2.5, 3.5}, recv[3] = {0, 0, 0};
  ZEROC_RT_ASSERT_OK(zeroc_rt_comm_reduce_scatter(
      comm, send, recv, 3, ZEROC_RT_DTYPE_F64, ZEROC_RT_REDUCE_SUM));
  EXPECT_EQ(std::memcmp(send, recv, sizeof(send)), 0);
}

// On one rank an in-place collective is the identity: it runs nothing
// (no backend call, so nothing for --trace), its request is -1, and the
// buffer keeps its bits. Out of place it still copies.
TEST_F(SelfComm, InPlaceRunsNothing) {
  int ran = 0;
  comm->onCollective = [&](const char *, size_t, std::chrono::steady_clock::time_point,
                           std::chrono::steady_clock::time_point) { ++ran; };
  float x[3] = {1.5f, -2.f, 3.25f};
  const float before[3] = {1.5f, -2.f, 3.25f};
  int64_t request = 7;
  ZEROC_RT_ASSERT_OK(
      zeroc_rt_comm_all_reduce(comm, x, x, 3, ZEROC_RT_DTYPE_F32, ZEROC_RT_REDUCE_SUM));
  ZEROC_RT_ASSERT_OK(zeroc_rt_comm_all_gather(comm, x, x, 3, ZEROC_RT_DTYPE_F32));
  ZEROC_RT_ASSERT_OK(
      zeroc_rt_comm_reduce_scatter(comm, x, x, 3, ZEROC_RT_DTYPE_F32, ZEROC_RT_REDUCE_MAX));
  ZEROC_RT_ASSERT_OK(zeroc_rt_comm_all_reduce_start(comm, x, x, 3, ZEROC_RT_DTYPE_F32,
                                                    ZEROC_RT_REDUCE_SUM, &request));
  EXPECT_EQ(request, -1);
  request = 7;
  ZEROC_RT_ASSERT_OK(zeroc_rt_comm_all_gather_start(comm, x, x, 3, ZEROC_RT_DTYPE_F32, &request));
  EXPECT_EQ(request, -1);
  request = 7;
  ZEROC_RT_ASSERT_OK(zeroc_rt_comm_reduce_scatter_start(comm, x, x, 3, ZEROC_RT_DTYPE_F32,
                                                        ZEROC_RT_REDUCE_SUM, &request));
  EXPECT_EQ(request, -1);
  ZEROC_RT_ASSERT_OK(zeroc_rt_comm_wait(comm, request));
  EXPECT_EQ(std::memcmp(x, before, sizeof(x)), 0);
  EXPECT_EQ(ran, 0);
  float y[3] = {0, 0, 0};
  ZEROC_RT_ASSERT_OK(
      zeroc_rt_comm_all_reduce(comm, x, y, 3, ZEROC_RT_DTYPE_F32, ZEROC_RT_REDUCE_SUM));
  EXPECT_EQ(std::memcmp(y, before, sizeof(y)), 0);
  EXPECT_EQ(ran, 1);
}

TEST_F(SelfComm, Bf16Moves) {
  uint16_t send[2] = {0x3F80, 0x4000}, recv[2] = {0, 0};
  ZEROC_RT_ASSERT_OK(
      zeroc_rt_comm_all_gather(comm, send, recv, 2, ZEROC_RT_DTYPE_BF16));
  EXPECT_EQ(recv[1], 0x4000);
}

// A world of one reduces nothing: every bit is copied, NaN payloads included.
TEST_F(SelfComm, HalfReductionsCopyTheBits) {
  const uint16_t bits[6] = {0x3C00, 0x7E01, 0xFC00, 0x8000, 0x7F7F, 0x0001};
  for (zeroc_rt_dtype_t dtype : {ZEROC_RT_DTYPE_F16, ZEROC_RT_DTYPE_BF16}) {
    for (zeroc_rt_reduce_op_t op : {ZEROC_RT_REDUCE_SUM, ZEROC_RT_REDUCE_MAX}) {
      SCOPED_TRACE(std::string(zeroc_rt_dtype_name(dtype)) +
                   (op == ZEROC_RT_REDUCE_MAX ? " max" : " sum"));
      uint16_t recv[6] = {};
      ZEROC_RT_ASSERT_OK(
          zeroc_rt_comm_all_reduce(comm, bits, recv, 6, dtype, op));
      EXPECT_EQ(std::memcmp(bits, recv, sizeof(bits)), 0);
      uint16_t inPlace[6];
      std::memcpy(inPlace, bits, sizeof(bits));
      ZEROC_RT_ASSERT_OK(
          zeroc_rt_comm_all_reduce(comm, inPlace, inPlace, 6, dtype, op));
      EXPECT_EQ(std::memcmp(bits, inPlace, sizeof(bits)), 0);
      uint16_t block[6] = {};
      ZEROC_RT_ASSERT_OK(
          zeroc_rt_comm_reduce_scatter(comm, bits, block, 6, dtype, op));
      EXPECT_EQ(std::memcmp(bits, block, sizeof(bits)), 0);
    }
  }
}

TEST_F(SelfComm, RejectsReducingBool) {
  uint8_t send[2] = {1, 0}, recv[2] = {0, 0};
  ZEROC_RT_EXPECT_ERROR(
      zeroc_rt_comm_all_reduce(comm, send, recv, 2, ZEROC_RT_DTYPE_BOOL,
                               ZEROC_RT_REDUCE_MAX),
      ZEROC_RT_INVALID_ARGUMENT,
      "do not support dtype bool (supported: f32, f64, f16, bf16, i64, i32, "
      "u8)");
  ZEROC_RT_EXPECT_ERROR(zeroc_rt_comm_reduce_scatter(comm, send, recv, 1,
                                                     ZEROC_RT_DTYPE_BOOL,
                                                     ZEROC_RT_REDUCE_SUM),
                        ZEROC_RT_INVALID_ARGUMENT, "do not support dtype bool");
}

TEST_F(SelfComm, RejectsBadBuffersAndDtypes) {
  float buf[8] = {};
  ZEROC_RT_EXPECT_ERROR(zeroc_rt_comm_all_reduce(comm, buf, nullptr, 2,
                                                 ZEROC_RT_DTYPE_F32,
                                                 ZEROC_RT_REDUCE_SUM),
                        ZEROC_RT_INVALID_ARGUMENT, "receive buffer is NULL");
  ZEROC_RT_EXPECT_ERROR(
      zeroc_rt_comm_all_gather(comm, nullptr, buf, 2, ZEROC_RT_DTYPE_F32),
      ZEROC_RT_INVALID_ARGUMENT, "send buffer is NULL");
  ZEROC_RT_EXPECT_ERROR(
      zeroc_rt_comm_all_gather(comm, buf + 1, buf, 2, ZEROC_RT_DTYPE_F32),
      ZEROC_RT_INVALID_ARGUMENT, "overlaps");
  // The same pointer is the in-place form; a partial overlap is refused.
  ZEROC_RT_EXPECT_ERROR(zeroc_rt_comm_reduce_scatter(comm, buf, buf + 1, 2,
                                                     ZEROC_RT_DTYPE_F32,
                                                     ZEROC_RT_REDUCE_SUM),
                        ZEROC_RT_INVALID_ARGUMENT, "overlap");
  ZEROC_RT_EXPECT_ERROR(
      zeroc_rt_comm_broadcast(comm, buf, 2, ZEROC_RT_DTYPE_F32, -1),
      ZEROC_RT_INVALID_ARGUMENT, "root -1");
  ZEROC_RT_EXPECT_ERROR(
      zeroc_rt_comm_broadcast(comm, nullptr, 2, ZEROC_RT_DTYPE_F32, 0),
      ZEROC_RT_INVALID_ARGUMENT, "NULL");
  ZEROC_RT_EXPECT_ERROR(zeroc_rt_comm_broadcast(
                            comm, buf, 2, static_cast<zeroc_rt_dtype_t>(12), 0),
                        ZEROC_RT_INVALID_ARGUMENT, "invalid dtype 12");
  ZEROC_RT_EXPECT_ERROR(zeroc_rt_comm_all_reduce(comm, buf, buf, SIZE_MAX / 2,
                                                 ZEROC_RT_DTYPE_F32,
                                                 ZEROC_RT_REDUCE_SUM),
                        ZEROC_RT_INVALID_ARGUMENT, "overflow");
}

//===----------------------------------------------------------------------===//
// reduceHalf: the elementwise op of the MPI backend's f16/bf16 reductions
//===----------------------------------------------------------------------===//

struct HalfCase {
  zeroc_rt_dtype_t dtype;
  uint16_t (*encode)(double);
  double (*decode)(uint16_t);
  uint16_t quietNaN;
};
const HalfCase kHalfCases[] = {
    {ZEROC_RT_DTYPE_F16, zk::encodeF16, zk::decodeF16, 0x7E00},
    {ZEROC_RT_DTYPE_BF16, zk::encodeBF16, zk::decodeBF16, 0x7FC0}};

/// x op y by reduceHalf (y is the in-out operand).
uint16_t combine(const HalfCase &c, zeroc_rt_reduce_op_t op, uint16_t x,
                 uint16_t y) {
  zeroc_rt::reduceHalf(c.dtype, op, &x, &y, 1);
  return y;
}

/// Reference: the exact sum (or max) rounded once to nearest even by the
/// frexp-based encoder; any NaN becomes the positive quiet NaN, and max of
/// +0 and -0 is +0. For f16 the double sum is exact; for bf16 a double sum
/// that rounds cannot change the final rounding (53 >= 2 * 8 + 2 bits).
uint16_t reference(const HalfCase &c, zeroc_rt_reduce_op_t op, uint16_t x,
                   uint16_t y) {
  const double a = c.decode(x), b = c.decode(y);
  if (std::isnan(a) || std::isnan(b))
    return c.quietNaN;
  if (op == ZEROC_RT_REDUCE_SUM) {
    const double sum = a + b;
    return std::isnan(sum) ? c.quietNaN : c.encode(sum);
  }
  if (a != b)
    return a > b ? x : y;
  if (a != 0.0)
    return x;
  return std::signbit(a) && std::signbit(b) ? x : c.encode(0.0);
}

// Every x against a strided sample of y (all classes: zeros, subnormals,
// normals, the largest finite, infinities, NaNs), both operand orders, in
// batches as MPI calls it.
TEST(HalfReduceOp, MatchesExactRoundingAndIsBitwiseCommutative) {
  std::vector<uint16_t> ys;
  for (uint32_t y = 0; y < 0x10000; y += 257)
    ys.push_back(static_cast<uint16_t>(y));
  for (uint16_t y : {0x0000, 0x8000, 0x0001, 0x03FF, 0x7BFF, 0x7C00, 0xFC00,
                     0x7E00, 0xFE01, 0x7F7F, 0x7F80, 0xFF80, 0x7FC1})
    ys.push_back(y);
  for (const HalfCase &c : kHalfCases) {
    for (zeroc_rt_reduce_op_t op : {ZEROC_RT_REDUCE_SUM, ZEROC_RT_REDUCE_MAX}) {
      SCOPED_TRACE(std::string(zeroc_rt_dtype_name(c.dtype)) +
                   (op == ZEROC_RT_REDUCE_MAX ? " max" : " sum"));
      int failures = 0;
      std::vector<uint16_t> xs(ys.size()), xy(ys.size()), yx(ys.size());
      for (uint32_t x = 0; x < 0x10000 && failures < 5; ++x) {
        std::fill(xs.begin(), xs.end(), static_cast<uint16_t>(x));
        xy = ys; // x op y
        zeroc_rt::reduceHalf(c.dtype, op, xs.data(), xy.data(), ys.size());
        yx = xs; // y op x
        zeroc_rt::reduceHalf(c.dtype, op, ys.data(), yx.data(), ys.size());
        for (size_t k = 0; k < ys.size() && failures < 5; ++k) {
          uint16_t want = reference(c, op, static_cast<uint16_t>(x), ys[k]);
          if (xy[k] == want && yx[k] == want)
            continue;
          ++failures;
          ADD_FAILURE() << std::hex << "x=0x" << x << " y=0x" << ys[k]
                        << ": got 0x" << xy[k] << " / 0x" << yx[k]
                        << ", want 0x" << want;
        }
      }
    }
  }
}

TEST(HalfReduceOp, RoundsTiesToEvenAndOverflowsToInf) {
  const HalfCase &f16 = kHalfCases[0], &bf16 = kHalfCases[1];
  // 1 + 2^-11 is the tie between 1 and 1 + 2^-10: even is 1.
  EXPECT_EQ(combine(f16, ZEROC_RT_REDUCE_SUM, 0x3C00, f16.encode(0x1p-11)),
            0x3C00);
  // 1 + 2^-10 + 2^-11: the tie goes up to the even 1 + 2^-9.
  EXPECT_EQ(combine(f16, ZEROC_RT_REDUCE_SUM, 0x3C01, f16.encode(0x1p-11)),
            0x3C02);
  EXPECT_EQ(combine(f16, ZEROC_RT_REDUCE_SUM, 0x7BFF, 0x7BFF), 0x7C00);
  EXPECT_EQ(combine(f16, ZEROC_RT_REDUCE_SUM, 0xFBFF, 0xFBFF), 0xFC00);
  // 1e30 is far past f16 but ordinary in bf16.
  const uint16_t big = bf16.encode(1e30);
  EXPECT_EQ(combine(bf16, ZEROC_RT_REDUCE_SUM, big, big),
            bf16.encode(2 * bf16.decode(big)));
  EXPECT_EQ(combine(bf16, ZEROC_RT_REDUCE_SUM, 0x7F7F, 0x7F7F), 0x7F80);
}

TEST(HalfReduceOp, PropagatesNaN) {
  for (const HalfCase &c : kHalfCases) {
    const uint16_t inf = c.encode(INFINITY), negInf = c.encode(-INFINITY);
    const uint16_t negNaN = c.encode(-NAN), one = c.encode(1.0);
    for (zeroc_rt_reduce_op_t op : {ZEROC_RT_REDUCE_SUM, ZEROC_RT_REDUCE_MAX}) {
      EXPECT_EQ(combine(c, op, negNaN, one), c.quietNaN);
      EXPECT_EQ(combine(c, op, one, negNaN), c.quietNaN);
      EXPECT_EQ(combine(c, op, inf, negNaN), c.quietNaN);
      EXPECT_EQ(combine(c, op, negNaN, negInf), c.quietNaN);
    }
    EXPECT_EQ(combine(c, ZEROC_RT_REDUCE_SUM, inf, negInf), c.quietNaN);
    EXPECT_EQ(combine(c, ZEROC_RT_REDUCE_MAX, inf, negInf), inf);
    EXPECT_EQ(combine(c, ZEROC_RT_REDUCE_MAX, 0x8000, 0x0000), 0x0000);
    EXPECT_EQ(combine(c, ZEROC_RT_REDUCE_MAX, 0x0000, 0x8000), 0x0000);
  }
}

// MPI may hand the op segments of internal buffers at any byte offset.
TEST(HalfReduceOp, AcceptsUnalignedBuffers) {
  alignas(2) unsigned char in[7], inout[7];
  const uint16_t two = 0x4000, three = 0x4200, five = 0x4500;
  std::memcpy(in + 1, &two, 2);
  std::memcpy(in + 3, &three, 2);
  std::memcpy(inout + 1, &three, 2);
  std::memcpy(inout + 3, &two, 2);
  zeroc_rt::reduceHalf(ZEROC_RT_DTYPE_F16, ZEROC_RT_REDUCE_SUM, in + 1,
                       inout + 1, 2);
  uint16_t got[2];
  std::memcpy(got, inout + 1, 4);
  EXPECT_EQ(got[0], five);
  EXPECT_EQ(got[1], five);
}

TEST(CommNull, NullHandlesAreRejectedOrTolerated) {
  EXPECT_EQ(zeroc_rt_comm_rank(nullptr), -1);
  EXPECT_EQ(zeroc_rt_comm_size(nullptr), 0);
  EXPECT_STREQ(zeroc_rt_comm_backend(nullptr), "");
  ZEROC_RT_EXPECT_OK(zeroc_rt_comm_finalize(nullptr));
  ZEROC_RT_EXPECT_ERROR(zeroc_rt_comm_barrier(nullptr),
                        ZEROC_RT_INVALID_ARGUMENT, "comm is NULL");
  float x = 0;
  ZEROC_RT_EXPECT_ERROR(zeroc_rt_comm_all_reduce(nullptr, &x, &x, 1,
                                                 ZEROC_RT_DTYPE_F32,
                                                 ZEROC_RT_REDUCE_SUM),
                        ZEROC_RT_INVALID_ARGUMENT, "comm is NULL");
  ZEROC_RT_EXPECT_ERROR(zeroc_rt_comm_init_self(nullptr),
                        ZEROC_RT_INVALID_ARGUMENT, "output pointer is NULL");
  ZEROC_RT_EXPECT_ERROR(zeroc_rt_comm_init_mpi(nullptr, nullptr, nullptr),
                        ZEROC_RT_INVALID_ARGUMENT, "output pointer is NULL");
}

} // namespace
