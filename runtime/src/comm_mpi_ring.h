//===- comm_mpi_ring.h - reduce-scatter as a ring of messages ---*- C++ -*-===//
//
// Open MPI's reduce-scatter (MPI_Reduce_scatter_block and the nonblocking
// MPI_Ireduce_scatter_block) allocates a temporary as large as the whole
// buffer on every call and pays its page faults: at 2 ranks over shared
// memory it takes 150-170 ms on 38.6 M f32 elements, more than the
// all-reduce of the same buffer (91 ms). A ring of point-to-point messages
// through reused scratch does it in 45-50 ms. docs/Training.md,
// "Collective algorithms", has the measurements.
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_SRC_COMM_MPI_RING_H
#define ZEROC_RT_SRC_COMM_MPI_RING_H

#include "zeroc_rt/comm.h"

#include <cstddef>
#include <memory>
#include <mpi.h>
#include <vector>

namespace zeroc_rt {

/// Buffers that outlive one collective, so that their pages are touched
/// once per run rather than once per call.
class ScratchPool {
public:
  /// A buffer of at least `bytes`; give it back with release().
  std::unique_ptr<char[]> acquire(size_t bytes);
  void release(std::unique_ptr<char[]> buffer, size_t bytes);

private:
  std::vector<std::pair<size_t, std::unique_ptr<char[]>>> free;
};

/// A sum reduce-scatter of `countPerRank` elements per rank, run as a ring:
/// in round s (0 <= s < W-1) rank r sends its running sum of block
/// (r-1-s) mod W to rank r+1 and adds what rank r-1 sends it to its own
/// contribution of block (r-2-s) mod W; after W-1 rounds it holds the sum
/// of block r. Each round moves its block in chunks, so the scratch stays
/// small; the partial sums between rounds (W > 2) take one block. Every
/// rank's block gets the same bits as with MPI at 2 ranks (a + b); above,
/// each element is summed in ring order, the same on every run. Chunk c of
/// round s+1 is posted only after chunk c of round s was added (the window
/// is at most one round), so the reads and writes of one offset stay in
/// order.
/// `send == recv` is in place: the input is recv, the result its first block.
class RingReduceScatter {
public:
  /// Whether the ring handles this reduction (sums of floats, 2+ ranks).
  static bool supports(zeroc_rt_dtype_t dtype, zeroc_rt_reduce_op_t op, int size);

  RingReduceScatter(MPI_Comm comm, int rank, int size, int tag,
                    const void *send, void *recv, size_t countPerRank,
                    zeroc_rt_dtype_t dtype, ScratchPool &pool);
  ~RingReduceScatter();
  RingReduceScatter(const RingReduceScatter &) = delete;
  RingReduceScatter &operator=(const RingReduceScatter &) = delete;

  /// Posts the first chunks' messages.
  zeroc_rt_status_t start();
  /// Tests the oldest chunk in flight; when it has arrived, adds it and
  /// posts the next, as long as chunks keep arriving. *done once the last
  /// is added.
  zeroc_rt_status_t advance(bool *done);
  /// Runs the rest to the end.
  zeroc_rt_status_t finish();
  /// Whether the last chunk has been added.
  bool done() const { return finished; }

private:
  /// Up to this many chunks travel at once (a window over the rounds'
  /// chunks, in order): a link's per-message latency then overlaps the
  /// next chunks' transfer and the adds.
  static constexpr int kWindow = 4;
  /// One chunk in flight: its messages and where its data goes.
  struct Slot {
    std::unique_ptr<char[]> incoming;
    MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    int round = 0;
    size_t offset = 0, chunk = 0; // elements
  };

  zeroc_rt_status_t post(Slot &slot, size_t item);
  void add(const Slot &slot);
  const char *block(const void *base, int b) const;

  MPI_Comm comm;
  const int rank, size, tag;
  const char *send;
  char *recv;
  const size_t count, elementBytes;
  const zeroc_rt_dtype_t dtype;
  ScratchPool &pool;
  std::unique_ptr<char[]> partial;
  size_t incomingBytes = 0, partialBytes = 0;
  size_t chunkElements = 0, chunksPerRound = 0, items = 0;
  /// Items (round * chunksPerRound + chunk) added, and posted: those in
  /// [added, posted) are in flight in slots[item % window].
  size_t added = 0, posted = 0, window = 1;
  Slot slots[kWindow];
  bool finished = false;
};

} // namespace zeroc_rt

#endif // ZEROC_RT_SRC_COMM_MPI_RING_H
