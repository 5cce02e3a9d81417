//===- comm_conformance.cc - Collective checks for any backend --*- C++ -*-===//

#include "comm_conformance.h"

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace zeroc_rt::test {
namespace {

template <typename T> struct DtypeOf;
template <> struct DtypeOf<float> {
  static constexpr zeroc_rt_dtype_t value = ZEROC_RT_DTYPE_F32;
};
template <> struct DtypeOf<double> {
  static constexpr zeroc_rt_dtype_t value = ZEROC_RT_DTYPE_F64;
};
template <> struct DtypeOf<int64_t> {
  static constexpr zeroc_rt_dtype_t value = ZEROC_RT_DTYPE_I64;
};
template <> struct DtypeOf<int32_t> {
  static constexpr zeroc_rt_dtype_t value = ZEROC_RT_DTYPE_I32;
};
template <> struct DtypeOf<uint8_t> {
  static constexpr zeroc_rt_dtype_t value = ZEROC_RT_DTYPE_U8;
};

/// Value rank `rank` contributes at index `i`. Small integers, so float sums
/// are exact in any order; not monotonic in rank, so max is non-trivial; i64
/// values use the high bits. u8 values stay small enough that sums over a few
/// ranks do not overflow: u8 overflow is implementation-defined in practice
/// (Open MPI 4.1's AVX reductions saturate, open-mpi/ompi#8045).
template <typename T> T contribution(int rank, size_t i) {
  int64_t base = static_cast<int64_t>((rank * 7 + i * 3) % 13) * 10 + rank +
                 static_cast<int64_t>(i % 7);
  if constexpr (std::is_same_v<T, int64_t>)
    return (base << 33) | rank;
  if constexpr (std::is_same_v<T, uint8_t>)
    return static_cast<T>(base % 64);
  return static_cast<T>(base);
}

template <typename T> T reduceOverRanks(int size, size_t i, bool isMax) {
  T acc = contribution<T>(0, i);
  for (int rank = 1; rank < size; ++rank) {
    T value = contribution<T>(rank, i);
    acc = isMax ? std::max(acc, value) : static_cast<T>(acc + value);
  }
  return acc;
}

/// Never a contribution or a result (those are non-negative and, for u8,
/// below 255 for the rank counts tested).
template <typename T> T sentinel() { return static_cast<T>(-1); }

std::string statusText(zeroc_rt_status_t status) {
  std::string text = zeroc_rt_status_message(status);
  zeroc_rt_status_free(status);
  return text;
}

template <typename T>
std::string firstMismatch(const std::vector<T> &got,
                          const std::vector<T> &want) {
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i]) {
      std::ostringstream out;
      out << "index " << i << ": got " << +got[i] << ", want " << +want[i];
      return out.str();
    }
  return "";
}

template <typename T> class TypedChecks {
public:
  TypedChecks(zeroc_rt_comm_t *comm, CheckCounter &counter, size_t count)
      : comm(comm), counter(counter), count(count),
        rank(zeroc_rt_comm_rank(comm)), size(zeroc_rt_comm_size(comm)) {}

  void runAll() {
    allReduce(/*isMax=*/false, /*inPlace=*/false);
    allReduce(/*isMax=*/true, /*inPlace=*/false);
    allReduce(/*isMax=*/false, /*inPlace=*/true);
    allGather(/*inPlace=*/false);
    allGather(/*inPlace=*/true);
    reduceScatter(/*isMax=*/false);
    reduceScatter(/*isMax=*/true);
    for (int root = 0; root < size; ++root)
      broadcast(root);
  }

private:
  std::string label(const std::string &op) const {
    return op + " " + zeroc_rt_dtype_name(dtype) +
           " count=" + std::to_string(count);
  }

  /// Records a check comparing `got` to `want` after a call returning
  /// `status` (consumed).
  void expect(const std::string &what, zeroc_rt_status_t status,
              const std::vector<T> &got, const std::vector<T> &want) {
    if (status) {
      counter.check(false, what, statusText(status));
      return;
    }
    std::string mismatch = firstMismatch(got, want);
    counter.check(mismatch.empty(), what, mismatch);
  }

  void allReduce(bool isMax, bool inPlace) {
    std::vector<T> send(count), recv(count, sentinel<T>()), want(count);
    for (size_t i = 0; i < count; ++i) {
      send[i] = contribution<T>(rank, i);
      want[i] = reduceOverRanks<T>(size, i, isMax);
    }
    zeroc_rt_reduce_op_t op = isMax ? ZEROC_RT_REDUCE_MAX : ZEROC_RT_REDUCE_SUM;
    std::vector<T> &out = inPlace ? send : recv;
    zeroc_rt_status_t status = zeroc_rt_comm_all_reduce(
        comm, send.data(), out.data(), count, dtype, op);
    expect(label(std::string("all_reduce ") + (isMax ? "max" : "sum") +
                 (inPlace ? " in-place" : "")),
           status, out, want);
  }

  void allGather(bool inPlace) {
    std::vector<T> send(count), recv(count * size, sentinel<T>()),
        want(count * size);
    for (size_t i = 0; i < count; ++i)
      send[i] = contribution<T>(rank, i);
    for (int r = 0; r < size; ++r)
      for (size_t i = 0; i < count; ++i)
        want[r * count + i] = contribution<T>(r, i);
    const T *source = send.data();
    if (inPlace) {
      std::copy(send.begin(), send.end(), recv.begin() + rank * count);
      source = recv.data() + rank * count;
    }
    zeroc_rt_status_t status =
        zeroc_rt_comm_all_gather(comm, source, recv.data(), count, dtype);
    expect(label(std::string("all_gather") + (inPlace ? " in-place" : "")),
           status, recv, want);
  }

  void reduceScatter(bool isMax) {
    std::vector<T> send(count * size), recv(count, sentinel<T>()), want(count);
    for (size_t j = 0; j < count * size; ++j)
      send[j] = contribution<T>(rank, j);
    for (size_t i = 0; i < count; ++i)
      want[i] = reduceOverRanks<T>(size, rank * count + i, isMax);
    zeroc_rt_reduce_op_t op = isMax ? ZEROC_RT_REDUCE_MAX : ZEROC_RT_REDUCE_SUM;
    zeroc_rt_status_t status = zeroc_rt_comm_reduce_scatter(
        comm, send.data(), recv.data(), count, dtype, op);
    expect(label(std::string("reduce_scatter ") + (isMax ? "max" : "sum")),
           status, recv, want);
  }

  void broadcast(int root) {
    std::vector<T> buf(count, sentinel<T>()), want(count);
    for (size_t i = 0; i < count; ++i) {
      want[i] = contribution<T>(root, i);
      if (rank == root)
        buf[i] = want[i];
    }
    zeroc_rt_status_t status =
        zeroc_rt_comm_broadcast(comm, buf.data(), count, dtype, root);
    expect(label("broadcast root=" + std::to_string(root)), status, buf, want);
  }

  zeroc_rt_comm_t *comm;
  CheckCounter &counter;
  size_t count;
  int rank;
  int size;
  static constexpr zeroc_rt_dtype_t dtype = DtypeOf<T>::value;
};

/// f16 and bool have no MPI type and travel as bytes; check the byte path.
void checkByteMovedDtypes(zeroc_rt_comm_t *comm, CheckCounter &counter) {
  int rank = zeroc_rt_comm_rank(comm), size = zeroc_rt_comm_size(comm);
  const size_t count = 5;
  std::vector<uint16_t> halfs(count), gathered(count * size),
      want(count * size);
  for (size_t i = 0; i < count; ++i)
    halfs[i] = static_cast<uint16_t>(0x3C00 + rank * 16 + i); // Bit patterns.
  for (int r = 0; r < size; ++r)
    for (size_t i = 0; i < count; ++i)
      want[r * count + i] = static_cast<uint16_t>(0x3C00 + r * 16 + i);
  zeroc_rt_status_t status = zeroc_rt_comm_all_gather(
      comm, halfs.data(), gathered.data(), count, ZEROC_RT_DTYPE_F16);
  counter.check(!status && gathered == want, "all_gather f16 bit patterns",
                status ? statusText(status) : firstMismatch(gathered, want));

  std::vector<uint8_t> flags(count, rank == 0 ? 1 : 0), wantFlags(count, 1);
  status = zeroc_rt_comm_broadcast(comm, flags.data(), count,
                                   ZEROC_RT_DTYPE_BOOL, 0);
  counter.check(!status && flags == wantFlags, "broadcast bool",
                status ? statusText(status) : firstMismatch(flags, wantFlags));
}

/// Argument validation must behave identically on every backend and fail
/// locally, before any communication.
void checkValidation(zeroc_rt_comm_t *comm, CheckCounter &counter) {
  int size = zeroc_rt_comm_size(comm);
  float buf[4] = {};
  auto expectInvalid = [&](zeroc_rt_status_t status, const char *what) {
    bool ok = zeroc_rt_status_code(status) == ZEROC_RT_INVALID_ARGUMENT;
    counter.check(ok, what, zeroc_rt_status_message(status));
    zeroc_rt_status_free(status);
  };
  expectInvalid(zeroc_rt_comm_broadcast(comm, buf, 1, ZEROC_RT_DTYPE_F32, size),
                "broadcast rejects root == size");
  expectInvalid(zeroc_rt_comm_all_reduce(comm, buf, buf, 2, ZEROC_RT_DTYPE_F16,
                                         ZEROC_RT_REDUCE_SUM),
                "all_reduce rejects f16");
  expectInvalid(zeroc_rt_comm_all_reduce(comm, buf, buf + 1, 2,
                                         ZEROC_RT_DTYPE_F32,
                                         ZEROC_RT_REDUCE_SUM),
                "all_reduce rejects partial overlap");
  expectInvalid(zeroc_rt_comm_all_reduce(comm, buf, nullptr, 1,
                                         ZEROC_RT_DTYPE_F32,
                                         static_cast<zeroc_rt_reduce_op_t>(7)),
                "all_reduce rejects an invalid op");
  zeroc_rt_status_t status = zeroc_rt_comm_all_reduce(
      comm, nullptr, nullptr, 0, ZEROC_RT_DTYPE_F32, ZEROC_RT_REDUCE_SUM);
  counter.check(status == nullptr, "zero-count all_reduce is a no-op",
                zeroc_rt_status_message(status));
  zeroc_rt_status_free(status);
}

} // namespace

void runCommConformance(zeroc_rt_comm_t *comm, CheckCounter &counter) {
  zeroc_rt_status_t status = zeroc_rt_comm_barrier(comm);
  counter.check(status == nullptr, "barrier", zeroc_rt_status_message(status));
  zeroc_rt_status_free(status);
  for (size_t count : {size_t(1), size_t(7), size_t(1000)}) {
    TypedChecks<float>(comm, counter, count).runAll();
    TypedChecks<double>(comm, counter, count).runAll();
    TypedChecks<int64_t>(comm, counter, count).runAll();
    TypedChecks<int32_t>(comm, counter, count).runAll();
    TypedChecks<uint8_t>(comm, counter, count).runAll();
  }
  checkByteMovedDtypes(comm, counter);
  checkValidation(comm, counter);
}

} // namespace zeroc_rt::test
