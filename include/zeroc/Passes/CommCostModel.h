//===- CommCostModel.h - the alpha-beta cost of a collective ----*- C++ -*-===//
//
// What a collective costs on the link between the ranks, as the passes that
// place communication see it: a fixed cost alpha per message step and a
// bandwidth. The constants come from pass options (zeroc compile
// --comm-alpha-us / --comm-gbps); bench/netprobe measures them for a link.
// See docs/RationaleZero.md, "Overlap".
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_PASSES_COMMCOSTMODEL_H
#define ZEROC_PASSES_COMMCOSTMODEL_H

#include <cstdint>

namespace zeroc {

struct CommCostModel {
  /// Microseconds one message step costs whatever its size: the link's
  /// latency plus the MPI library's per-message work.
  double alphaUs;
  /// The link's bandwidth in gigabits per second.
  double gbps;

  /// Microseconds of a ring reduce-scatter or all-gather over `world`
  /// ranks of a flat buffer of `bytes`: world - 1 steps, each moving one
  /// world-th of the buffer.
  double ringUs(int64_t bytes, int64_t world) const;

  /// The smallest buffer whose ring collective spends at most
  /// `fixedShare` of its time on the fixed costs: alpha * (world - 1) <=
  /// fixedShare * its time. Buckets at least this large lose little to
  /// latency; smaller ones finish sooner and expose less at the end of the
  /// backward pass.
  int64_t efficientBytes(int64_t world, double fixedShare) const;
};

/// Defaults from bench/netprobe on the CI machine (2 ranks, shared memory,
/// Open MPI 4.1): a started 1-float reduce-scatter takes 0.8 us, a 100 MB
/// message 23 Gbit/s.
inline constexpr double kDefaultCommAlphaUs = 1.0;
inline constexpr double kDefaultCommGbps = 25.0;

/// The share of a gradient bucket's reduction that zero-bucket lets go to
/// fixed costs when overlap_comm is on.
inline constexpr double kOverlapFixedShare = 0.02;

} // namespace zeroc

#endif // ZEROC_PASSES_COMMCOSTMODEL_H
