//===- comm_self_test.cc - The single-process communicator ------*- C++ -*-===//

#include "comm_conformance.h"
#include "test_support.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace zeroc_rt::test;

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

TEST_F(SelfComm, Bf16MovesButDoesNotReduce) {
  uint16_t send[2] = {0x3F80, 0x4000}, recv[2] = {0, 0};
  ZEROC_RT_ASSERT_OK(
      zeroc_rt_comm_all_gather(comm, send, recv, 2, ZEROC_RT_DTYPE_BF16));
  EXPECT_EQ(recv[1], 0x4000);
  ZEROC_RT_EXPECT_ERROR(zeroc_rt_comm_all_reduce(comm, send, recv, 2,
                                                 ZEROC_RT_DTYPE_BF16,
                                                 ZEROC_RT_REDUCE_SUM),
                        ZEROC_RT_INVALID_ARGUMENT, "do not support dtype bf16");
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
  ZEROC_RT_EXPECT_ERROR(zeroc_rt_comm_reduce_scatter(comm, buf, buf, 2,
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
