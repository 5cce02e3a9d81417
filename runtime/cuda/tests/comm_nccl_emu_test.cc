//===- comm_nccl_emu_test.cc - comm_nccl.cu over the emulated NCCL --------===//
//
// Run under mpiexec with 2 or more ranks. Every collective of the NCCL
// communicator (comm_nccl.cu, compiled for the host emulation over
// nccl_emu.cc) on emulated device memory, against values computed here: in
// and out of place, zeroc_rt's in-place reduce-scatter (the rank's block
// moved to the buffer's start), f32, bf16 and i64, sums and maxima, every
// root's broadcast, a host scalar staged through device memory; a started
// collective that has not run before its wait and has after it; the
// barrier; a host buffer refused with NCCL's error; a started collective
// whose operand the compute stream overwrote before its wait, failed.
// Prints "rank R: N passed, M failed" and exits non-zero on any failure.
//
//===----------------------------------------------------------------------===//

#include "comm_cuda.h"
#include "gpu.h"

#include "check_counter.h"
#include "zeroc_rt/zeroc_rt.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace zeroc_rt::cuda;
using zeroc_rt::test::CheckCounter;

namespace {

int rank = 0, size = 0;

bool ok(CheckCounter &counter, zeroc_rt_status_t status, const std::string &what) {
  const bool fine = counter.check(status == nullptr, what, zeroc_rt_status_message(status));
  zeroc_rt_status_free(status);
  return fine;
}

/// Emulated device memory holding `values`.
template <typename T> T *onDevice(const std::vector<T> &values) {
  void *p = nullptr;
  zeroc_rt_status_free(gpuMalloc(values.size() * sizeof(T), "a test buffer", &p));
  std::memcpy(p, values.data(), values.size() * sizeof(T));
  return static_cast<T *>(p);
}

/// The device buffer's contents, read back as the host reads a GPU's.
template <typename T> std::vector<T> read(const T *p, size_t n) {
  std::vector<T> out(n);
  zeroc_rt_status_free(gpuDownload(out.data(), p, n * sizeof(T)));
  return out;
}

uint16_t bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<uint16_t>(bits >> 16); // exact for the small integers used
}

void allReduce(zeroc_rt_comm_t *nc, CheckCounter &c) {
  const size_t n = 7;
  std::vector<float> mine(n), sum(n, 0), max(n, 0);
  for (size_t i = 0; i < n; ++i) {
    mine[i] = static_cast<float>(rank + 1) * static_cast<float>(i + 1);
    for (int r = 0; r < size; ++r) {
      sum[i] += static_cast<float>(r + 1) * static_cast<float>(i + 1);
      max[i] = static_cast<float>(size) * static_cast<float>(i + 1);
    }
  }
  float *send = onDevice(mine), *recv = onDevice(std::vector<float>(n));
  ok(c, zeroc_rt_comm_all_reduce(nc, send, recv, n, ZEROC_RT_DTYPE_F32, ZEROC_RT_REDUCE_SUM),
     "f32 all_reduce");
  c.check(read(recv, n) == sum, "f32 all_reduce sums");
  c.check(read(send, n) == mine, "f32 all_reduce leaves its operand");
  ok(c, zeroc_rt_comm_all_reduce(nc, send, send, n, ZEROC_RT_DTYPE_F32, ZEROC_RT_REDUCE_MAX),
     "f32 all_reduce max in place");
  c.check(read(send, n) == max, "f32 all_reduce maxima in place");

  std::vector<uint16_t> halves(n), halfSums(n);
  for (size_t i = 0; i < n; ++i) {
    halves[i] = bf16(mine[i]);
    halfSums[i] = bf16(sum[i]);
  }
  uint16_t *h = onDevice(halves);
  ok(c, zeroc_rt_comm_all_reduce(nc, h, h, n, ZEROC_RT_DTYPE_BF16, ZEROC_RT_REDUCE_SUM),
     "bf16 all_reduce in place");
  c.check(read(h, n) == halfSums, "bf16 all_reduce sums");

  // A host scalar (the optimizer step's) goes through device memory.
  double host = rank + 1.0;
  ok(c, zeroc_rt_comm_all_reduce(nc, &host, &host, 1, ZEROC_RT_DTYPE_F64, ZEROC_RT_REDUCE_SUM),
     "host f64 all_reduce");
  c.check(host == size * (size + 1) / 2.0, "host f64 all_reduce sums", std::to_string(host));
  gpuFree(send);
  gpuFree(recv);
  gpuFree(h);
}

void gatherAndScatter(zeroc_rt_comm_t *nc, CheckCounter &c) {
  const size_t n = 5, all = n * static_cast<size_t>(size);
  std::vector<int64_t> block(n), gathered(all), blocks(all), reduced(n, 0);
  for (size_t i = 0; i < all; ++i) {
    gathered[i] = static_cast<int64_t>(i / n * 100 + i % n);
    blocks[i] = static_cast<int64_t>(rank * 1000 + i);
  }
  for (size_t i = 0; i < n; ++i) {
    block[i] = gathered[static_cast<size_t>(rank) * n + i];
    for (int r = 0; r < size; ++r)
      reduced[i] += r * 1000 + static_cast<int64_t>(static_cast<size_t>(rank) * n + i);
  }
  int64_t *send = onDevice(block), *recv = onDevice(std::vector<int64_t>(all));
  ok(c, zeroc_rt_comm_all_gather(nc, send, recv, n, ZEROC_RT_DTYPE_I64), "all_gather");
  c.check(read(recv, all) == gathered, "all_gather gathers");
  std::vector<int64_t> inPlace(all, -1);
  std::copy(block.begin(), block.end(), inPlace.begin() + rank * static_cast<long>(n));
  int64_t *buf = onDevice(inPlace);
  ok(c,
     zeroc_rt_comm_all_gather(nc, buf + static_cast<size_t>(rank) * n, buf, n, ZEROC_RT_DTYPE_I64),
     "all_gather in place");
  c.check(read(buf, all) == gathered, "all_gather in place gathers");

  int64_t *b = onDevice(blocks), *shard = onDevice(std::vector<int64_t>(n));
  ok(c, zeroc_rt_comm_reduce_scatter(nc, b, shard, n, ZEROC_RT_DTYPE_I64, ZEROC_RT_REDUCE_SUM),
     "reduce_scatter");
  c.check(read(shard, n) == reduced, "reduce_scatter reduces the rank's block");
  // zeroc_rt's in place: the rank's block at the buffer's start (NCCL's
  // leaves it at the rank's offset; comm_nccl.cu moves it).
  ok(c, zeroc_rt_comm_reduce_scatter(nc, b, b, n, ZEROC_RT_DTYPE_I64, ZEROC_RT_REDUCE_SUM),
     "reduce_scatter in place");
  c.check(read(b, n) == reduced, "reduce_scatter in place leaves the block at the start");

  for (int root = 0; root < size; ++root) {
    std::vector<int64_t> v(n, rank == root ? root + 7 : -1);
    int64_t *d = onDevice(v);
    ok(c, zeroc_rt_comm_broadcast(nc, d, n, ZEROC_RT_DTYPE_I64, root), "broadcast");
    c.check(read(d, n) == std::vector<int64_t>(n, root + 7),
            "broadcast from rank " + std::to_string(root));
    gpuFree(d);
  }
  for (int64_t *p : {send, recv, buf, b, shard})
    gpuFree(p);
}

/// A started collective runs on the communication stream when the program
/// waits for it: before the wait its result is not there.
void started(zeroc_rt_comm_t *nc, CheckCounter &c) {
  float *send = onDevice(std::vector<float>{1.0f}), *recv = onDevice(std::vector<float>{-1.0f});
  int64_t request = -1;
  ok(c,
     zeroc_rt_comm_all_reduce_start(nc, send, recv, 1, ZEROC_RT_DTYPE_F32, ZEROC_RT_REDUCE_SUM,
                                    &request),
     "all_reduce_start");
  c.check(request >= 0, "all_reduce_start returns a request");
  c.check(read(recv, 1)[0] == -1.0f, "a started all_reduce has not run before its wait");
  ok(c, zeroc_rt_comm_wait(nc, request), "wait");
  c.check(read(recv, 1)[0] == static_cast<float>(size), "the wait ran the all_reduce");
  ok(c, zeroc_rt_comm_wait(nc, request), "a second wait for the same request");
  ok(c, zeroc_rt_comm_wait(nc, -1), "a wait for request -1");
  gpuFree(send);
  gpuFree(recv);
}

/// NCCL takes device memory only: a host buffer is its invalid argument.
void hostBuffer(zeroc_rt_comm_t *nc, CheckCounter &c) {
  std::vector<float> host(2 * static_cast<size_t>(size));
  float *d = onDevice(std::vector<float>(2));
  zeroc_rt_status_t s = zeroc_rt_comm_all_gather(nc, d, host.data(), 2, ZEROC_RT_DTYPE_F32);
  const std::string text = s ? zeroc_rt_status_message(s) : "";
  c.check(text.find("NCCL: all_gather: invalid argument") != std::string::npos,
          "a host buffer is refused", text);
  zeroc_rt_status_free(s);
  gpuFree(d);
}

/// The compute stream writes a started collective's operand before waiting
/// for it (a race on a GPU): the collective fails when it runs, and the
/// communication stream stays failed (the communicator's finalize says so).
void race(zeroc_rt_comm_t *nc, CheckCounter &c) {
  float *send = onDevice(std::vector<float>{1.0f, 2.0f}), *recv = onDevice(std::vector<float>(2));
  int64_t request = -1;
  ok(c,
     zeroc_rt_comm_all_reduce_start(nc, send, recv, 2, ZEROC_RT_DTYPE_F32, ZEROC_RT_REDUCE_SUM,
                                    &request),
     "all_reduce_start before the race");
  ok(c, gpuZero(send, 2 * sizeof(float)), "the compute stream's write");
  zeroc_rt_status_t s = zeroc_rt_comm_wait(nc, request);
  const std::string text = s ? zeroc_rt_status_message(s) : "";
  c.check(text.find("the operand of ncclAllReduce changed after the call queued it") !=
              std::string::npos,
          "a write to a started collective's operand before its wait fails it", text);
  zeroc_rt_status_free(s);
  s = zeroc_rt_comm_finalize(nc);
  const std::string after = s ? zeroc_rt_status_message(s) : "";
  c.check(after.find("stopped at an earlier failure") != std::string::npos,
          "finalize reports the failed communication stream", after);
  zeroc_rt_status_free(s);
}

} // namespace

int main(int argc, char **argv) {
  zeroc_rt_comm_t *world = nullptr;
  if (zeroc_rt_status_t s = zeroc_rt_comm_init_mpi(&argc, &argv, &world)) {
    std::fprintf(stderr, "init_mpi failed: %s\n", zeroc_rt_status_message(s));
    return 1;
  }
  rank = zeroc_rt_comm_rank(world);
  size = zeroc_rt_comm_size(world);
  CheckCounter counter("[rank " + std::to_string(rank) + "] ");
  zeroc_rt_comm_t *nc = nullptr;
  bool stuck = false;
  if (ok(counter, openNcclComm(world, &nc, &stuck), "openNcclComm")) {
    counter.check(std::string(zeroc_rt_comm_backend(nc)) == "nccl", "backend");
    allReduce(nc, counter);
    gatherAndScatter(nc, counter);
    started(nc, counter);
    ok(counter, zeroc_rt_comm_barrier(nc), "barrier");
    hostBuffer(nc, counter);
    race(nc, counter); // last: it leaves the communication stream failed, and finalizes
  }
  std::printf("rank %d: %d passed, %d failed\n", rank, counter.passed(), counter.failed());
  zeroc_rt_status_free(zeroc_rt_comm_finalize(world));
  return counter.failed() ? 1 : 0;
}
