//===- comm_conformance.cc - Collective checks for any backend --*- C++ -*-===//

#include "comm_conformance.h"

// The reference f16/bf16 conversions; this library gets only the public
// include directory.
#include "../src/kernels/scalar_types.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
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
    for (bool started : {false, true}) {
      allReduce(/*isMax=*/false, /*inPlace=*/false, started);
      allReduce(/*isMax=*/true, /*inPlace=*/false, started);
      allReduce(/*isMax=*/false, /*inPlace=*/true, started);
      allGather(/*inPlace=*/false, started);
      allGather(/*inPlace=*/true, started);
      reduceScatter(/*isMax=*/false, started);
      reduceScatter(/*isMax=*/true, started);
      reduceScatterInPlace(started);
    }
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

  /// The started form's status: its start's, or its wait's (after a
  /// progress call, as the engine makes between ops). `request` is read
  /// after the start has set it.
  zeroc_rt_status_t waitFor(zeroc_rt_status_t startStatus,
                            const int64_t &request) {
    if (startStatus)
      return startStatus;
    zeroc_rt_comm_progress(comm);
    return zeroc_rt_comm_wait(comm, request);
  }

  static std::string startedSuffix(bool started) {
    return started ? " started" : "";
  }

  void allReduce(bool isMax, bool inPlace, bool started) {
    std::vector<T> send(count), recv(count, sentinel<T>()), want(count);
    for (size_t i = 0; i < count; ++i) {
      send[i] = contribution<T>(rank, i);
      want[i] = reduceOverRanks<T>(size, i, isMax);
    }
    zeroc_rt_reduce_op_t op = isMax ? ZEROC_RT_REDUCE_MAX : ZEROC_RT_REDUCE_SUM;
    std::vector<T> &out = inPlace ? send : recv;
    int64_t request = -1;
    zeroc_rt_status_t status =
        started ? waitFor(zeroc_rt_comm_all_reduce_start(comm, send.data(),
                                                         out.data(), count,
                                                         dtype, op, &request),
                          request)
                : zeroc_rt_comm_all_reduce(comm, send.data(), out.data(),
                                           count, dtype, op);
    expect(label(std::string("all_reduce ") + (isMax ? "max" : "sum") +
                 (inPlace ? " in-place" : "") + startedSuffix(started)),
           status, out, want);
  }

  void allGather(bool inPlace, bool started) {
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
    int64_t request = -1;
    zeroc_rt_status_t status =
        started ? waitFor(zeroc_rt_comm_all_gather_start(
                              comm, source, recv.data(), count, dtype, &request),
                          request)
                : zeroc_rt_comm_all_gather(comm, source, recv.data(), count,
                                           dtype);
    expect(label(std::string("all_gather") + (inPlace ? " in-place" : "") +
                 startedSuffix(started)),
           status, recv, want);
  }

  void reduceScatter(bool isMax, bool started) {
    std::vector<T> send(count * size), recv(count, sentinel<T>()), want(count);
    for (size_t j = 0; j < count * size; ++j)
      send[j] = contribution<T>(rank, j);
    for (size_t i = 0; i < count; ++i)
      want[i] = reduceOverRanks<T>(size, rank * count + i, isMax);
    zeroc_rt_reduce_op_t op = isMax ? ZEROC_RT_REDUCE_MAX : ZEROC_RT_REDUCE_SUM;
    int64_t request = -1;
    zeroc_rt_status_t status =
        started ? waitFor(zeroc_rt_comm_reduce_scatter_start(
                              comm, send.data(), recv.data(), count, dtype, op,
                              &request),
                          request)
                : zeroc_rt_comm_reduce_scatter(comm, send.data(), recv.data(),
                                               count, dtype, op);
    expect(label(std::string("reduce_scatter ") + (isMax ? "max" : "sum") +
                 startedSuffix(started)),
           status, recv, want);
  }

  /// In place: the buffer holds the input, and this rank's reduced block
  /// lands in its first `count` elements.
  void reduceScatterInPlace(bool started) {
    std::vector<T> buf(count * size), want(count);
    for (size_t j = 0; j < count * size; ++j)
      buf[j] = contribution<T>(rank, j);
    for (size_t i = 0; i < count; ++i)
      want[i] = reduceOverRanks<T>(size, rank * count + i, /*isMax=*/false);
    int64_t request = -1;
    zeroc_rt_status_t status =
        started ? waitFor(zeroc_rt_comm_reduce_scatter_start(
                              comm, buf.data(), buf.data(), count, dtype,
                              ZEROC_RT_REDUCE_SUM, &request),
                          request)
                : zeroc_rt_comm_reduce_scatter(comm, buf.data(), buf.data(),
                                               count, dtype,
                                               ZEROC_RT_REDUCE_SUM);
    buf.resize(count);
    expect(label(std::string("reduce_scatter sum in-place") +
                 startedSuffix(started)),
           status, buf, want);
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

//===----------------------------------------------------------------------===//
// f16 / bf16 reductions
//===----------------------------------------------------------------------===//

/// A 16-bit float dtype with the reference conversions (round to nearest even
/// and exact decoding) of kernels/scalar_types.h.
struct HalfFormat {
  zeroc_rt_dtype_t dtype;
  uint16_t (*encode)(double);
  double (*decode)(uint16_t);

  double ulpOfOne() const { return decode(encode(1.0) + 1) - 1.0; }
  double maxFinite() const {
    return decode(encode(std::numeric_limits<double>::infinity()) - 1);
  }
};

const HalfFormat kF16 = {ZEROC_RT_DTYPE_F16, kernels::encodeF16,
                         kernels::decodeF16};
const HalfFormat kBF16 = {ZEROC_RT_DTYPE_BF16, kernels::encodeBF16,
                          kernels::decodeBF16};

/// Value (exact in the format) that `rank` contributes at element `i`.
using HalfValues = std::function<double(int rank, size_t i)>;

/// The reduction as defined: operands widened to float, combined, rounded to
/// nearest even; NaN propagates. Folded in rank order; every input below is
/// chosen so that MPI's order cannot change the result.
uint16_t halfReference(const HalfFormat &format, const HalfValues &values,
                       int size, size_t i, bool isMax) {
  double acc = values(0, i);
  for (int rank = 1; rank < size; ++rank) {
    double value = values(rank, i);
    if (std::isnan(acc) || std::isnan(value))
      acc = std::numeric_limits<double>::quiet_NaN();
    else if (isMax)
      acc = std::max(acc, value);
    else
      acc = format.decode(
          format.encode(static_cast<float>(acc) + static_cast<float>(value)));
  }
  return format.encode(acc);
}

/// Halves in [-2, 4]: sums over a few ranks, and all partial sums, are exact
/// in f16 and bf16.
double exactHalves(int rank, size_t i) {
  return static_cast<double>((rank * 7 + i * 3) % 13) * 0.5 - 2.0;
}

/// Only ranks 0 and 1 contribute (the others add +0, which is exact), so the
/// one rounding of a + b happens in any order. a is 1, 1 + ulp, 1 + 2 ulp or
/// 1 + 3 ulp (even and odd last bits); b is 0 to 7/4 ulp in quarter ulps
/// (below, at and above the ties); both are scaled by 2^0, 2^-8 and 2^8 (f16)
/// or 2^100 (bf16: about 1.3e30, beyond the f16 range), and negated in the
/// upper half.
double roundingPair(const HalfFormat &format, int rank, size_t i) {
  const double ulp = format.ulpOfOne();
  const int exponents[] = {0, -8,
                           format.dtype == ZEROC_RT_DTYPE_BF16 ? 100 : 8};
  const double scale =
      std::ldexp((i / 96) % 2 ? -1.0 : 1.0, exponents[(i / 32) % 3]);
  if (rank == 0)
    return (1.0 + static_cast<double>(i % 4) * ulp) * scale;
  if (rank == 1)
    return static_cast<double>((i / 4) % 8) * ulp / 4 * scale;
  return 0.0;
}
constexpr size_t kRoundingCount = 192;

/// Infinities, NaNs and overflow, one situation per element (i % 8).
double specialValue(const HalfFormat &format, int size, int rank, size_t i) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double big = format.maxFinite();
  switch (i % 8) {
  case 0: // inf + finite = inf
    return rank == 0 ? inf : 1.0;
  case 1: // inf + -inf = NaN; max is inf
    return rank == 0 ? -inf : rank == 1 ? inf : 0.0;
  case 2: // a NaN from the last rank
    return rank == size - 1 ? nan : 1.0;
  case 3: // a NaN from rank 0 below larger values: max must keep it
    return rank == 0 ? nan : 2.0;
  case 4: // the sum overflows to inf; max stays finite
    return rank <= 1 ? big : 0.0;
  case 5: // negative overflow
    return rank <= 1 ? -big : 0.0;
  case 6:
    return -inf;
  default: // a negative NaN among infinities
    return rank == 1 ? -nan : -inf;
  }
}
constexpr size_t kSpecialCount = 8;

/// Small integers times 2^100 (about 1.3e30), 2^120, 2^-100 and 2^-120:
/// exact bf16 sums far outside the f16 range.
double wideRange(int rank, size_t i) {
  const int exponents[] = {100, 120, -100, -120, 0};
  const double k = static_cast<double>((rank * 7 + i * 3) % 13) - 6.0;
  return std::ldexp(k, exponents[i % 5]);
}

class HalfChecks {
public:
  HalfChecks(zeroc_rt_comm_t *comm, CheckCounter &counter,
             const HalfFormat &format)
      : comm(comm), counter(counter), format(format),
        rank(zeroc_rt_comm_rank(comm)), size(zeroc_rt_comm_size(comm)) {}

  void runAll() {
    HalfValues exact = exactHalves;
    for (size_t count : {size_t(1), size_t(7), size_t(1000)}) {
      allReduce("exact", exact, count, /*isMax=*/false, /*inPlace=*/false);
      allReduce("exact", exact, count, /*isMax=*/true, /*inPlace=*/false);
      allReduce("exact", exact, count, /*isMax=*/false, /*inPlace=*/true);
      reduceScatter("exact", exact, count, /*isMax=*/false);
      reduceScatter("exact", exact, count, /*isMax=*/true);
      // The started forms use the same user-defined ops.
      reduceScatter("exact", exact, count, /*isMax=*/false, /*started=*/true);
      allReduce("exact", exact, count, /*isMax=*/false, /*inPlace=*/true,
                /*started=*/true);
    }

    const HalfFormat &f = format;
    HalfValues rounding = [f](int r, size_t i) {
      return roundingPair(f, r, i % kRoundingCount);
    };
    allReduce("rounding", rounding, kRoundingCount, false, false);
    allReduce("rounding", rounding, kRoundingCount, false, true);
    reduceScatter("rounding", rounding, kRoundingCount, false);
    checkRoundingIsExercised(rounding);

    int n = size;
    HalfValues special = [f, n](int r, size_t i) {
      return specialValue(f, n, r, i);
    };
    for (bool isMax : {false, true}) {
      allReduce("inf/nan", special, kSpecialCount, isMax, false);
      allReduce("inf/nan", special, kSpecialCount, isMax, true);
      reduceScatter("inf/nan", special, kSpecialCount, isMax);
    }

    if (format.dtype == ZEROC_RT_DTYPE_BF16) {
      HalfValues wide = wideRange;
      allReduce("1e30-range", wide, 100, false, false);
      allReduce("1e30-range", wide, 100, true, false);
      reduceScatter("1e30-range", wide, 100, false);
    }
  }

private:
  std::string label(const std::string &collective, const std::string &name,
                    bool isMax, bool inPlace, size_t count) const {
    return collective + (isMax ? " max " : " sum ") +
           zeroc_rt_dtype_name(format.dtype) + " " + name +
           (inPlace ? " in-place" : "") + " count=" + std::to_string(count);
  }

  /// Bits must match, except that any NaN matches any NaN.
  std::string firstHalfMismatch(const std::vector<uint16_t> &got,
                                const std::vector<uint16_t> &want) const {
    for (size_t i = 0; i < want.size(); ++i) {
      bool bothNaN = std::isnan(format.decode(got[i])) &&
                     std::isnan(format.decode(want[i]));
      if (got[i] != want[i] && !bothNaN) {
        std::ostringstream out;
        out << "index " << i << ": got " << format.decode(got[i]) << " (0x"
            << std::hex << got[i] << "), want " << std::dec
            << format.decode(want[i]) << " (0x" << std::hex << want[i] << ")";
        return out.str();
      }
    }
    return "";
  }

  void expect(const std::string &what, zeroc_rt_status_t status,
              const std::vector<uint16_t> &got,
              const std::vector<uint16_t> &want) {
    if (status) {
      counter.check(false, what, statusText(status));
      return;
    }
    std::string mismatch = firstHalfMismatch(got, want);
    counter.check(mismatch.empty(), what, mismatch);
  }

  void allReduce(const std::string &name, const HalfValues &values,
                 size_t count, bool isMax, bool inPlace, bool started = false) {
    std::vector<uint16_t> send(count), recv(count, 0xFFFF), want(count);
    for (size_t i = 0; i < count; ++i) {
      send[i] = format.encode(values(rank, i));
      want[i] = halfReference(format, values, size, i, isMax);
    }
    std::vector<uint16_t> &out = inPlace ? send : recv;
    const zeroc_rt_reduce_op_t op = isMax ? ZEROC_RT_REDUCE_MAX : ZEROC_RT_REDUCE_SUM;
    int64_t request = -1;
    zeroc_rt_status_t status =
        started ? zeroc_rt_comm_all_reduce_start(comm, send.data(), out.data(),
                                                 count, format.dtype, op,
                                                 &request)
                : zeroc_rt_comm_all_reduce(comm, send.data(), out.data(), count,
                                           format.dtype, op);
    if (started && !status)
      status = zeroc_rt_comm_wait(comm, request);
    std::string what = label(started ? "all_reduce_start" : "all_reduce", name,
                             isMax, inPlace, count);
    bool ok = status == nullptr;
    expect(what, status, out, want);
    if (ok)
      checkSameBitsOnEveryRank(what, out);
  }

  /// Every rank must get the very same bits (NaNs included), whatever order
  /// MPI combined the operands in on each rank.
  void checkSameBitsOnEveryRank(const std::string &what,
                                const std::vector<uint16_t> &mine) {
    const size_t count = mine.size();
    std::vector<uint16_t> all(count * size);
    zeroc_rt_status_t status = zeroc_rt_comm_all_gather(
        comm, mine.data(), all.data(), count, format.dtype);
    if (status) {
      counter.check(false, what + ": same bits on every rank",
                    statusText(status));
      return;
    }
    bool same = true;
    for (int r = 0; r < size; ++r)
      same =
          same && std::equal(mine.begin(), mine.end(), all.begin() + r * count);
    counter.check(same, what + ": same bits on every rank");
  }

  void reduceScatter(const std::string &name, const HalfValues &values,
                     size_t count, bool isMax, bool started = false) {
    std::vector<uint16_t> send(count * size), recv(count, 0xFFFF), want(count);
    for (size_t j = 0; j < count * size; ++j)
      send[j] = format.encode(values(rank, j));
    for (size_t i = 0; i < count; ++i)
      want[i] = halfReference(format, values, size, rank * count + i, isMax);
    const zeroc_rt_reduce_op_t op = isMax ? ZEROC_RT_REDUCE_MAX : ZEROC_RT_REDUCE_SUM;
    int64_t request = -1;
    zeroc_rt_status_t status =
        started ? zeroc_rt_comm_reduce_scatter_start(comm, send.data(),
                                                     recv.data(), count,
                                                     format.dtype, op, &request)
                : zeroc_rt_comm_reduce_scatter(comm, send.data(), recv.data(),
                                               count, format.dtype, op);
    if (started && !status)
      status = zeroc_rt_comm_wait(comm, request);
    expect(label(started ? "reduce_scatter_start" : "reduce_scatter", name,
                 isMax, false, count),
           status, recv, want);
  }

  /// Guards the rounding inputs: with two or more ranks, some expected sums
  /// must differ from the exact a + b, some by rounding up and some down.
  void checkRoundingIsExercised(const HalfValues &values) {
    if (size < 2)
      return;
    int up = 0, down = 0;
    for (size_t i = 0; i < kRoundingCount; ++i) {
      double exact = values(0, i) + values(1, i);
      double rounded = format.decode(halfReference(format, values, size, i,
                                                   /*isMax=*/false));
      up += std::fabs(rounded) > std::fabs(exact);
      down += std::fabs(rounded) < std::fabs(exact);
    }
    counter.check(up > 0 && down > 0,
                  std::string("rounding inputs round both ways for ") +
                      zeroc_rt_dtype_name(format.dtype),
                  std::to_string(up) + " up, " + std::to_string(down) +
                      " down");
  }

  zeroc_rt_comm_t *comm;
  CheckCounter &counter;
  const HalfFormat &format;
  int rank;
  int size;
};

/// f16 travels as MPI_UINT16_T and bool as bytes; both must move unchanged.
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
  expectInvalid(zeroc_rt_comm_all_reduce(comm, buf, buf, 2, ZEROC_RT_DTYPE_BOOL,
                                         ZEROC_RT_REDUCE_SUM),
                "all_reduce rejects bool");
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
  // Several of the ring reduce-scatter's 4 MiB chunks per block (a window
  // of them in flight at once), the last one short.
  TypedChecks<float>(comm, counter, (size_t(5) << 20) + 3).runAll();
  HalfChecks(comm, counter, kF16).runAll();
  HalfChecks(comm, counter, kBF16).runAll();
  checkByteMovedDtypes(comm, counter);
  checkValidation(comm, counter);
}

} // namespace zeroc_rt::test
