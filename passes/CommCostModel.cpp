//===- CommCostModel.cpp - the alpha-beta cost of a collective ------------===//
#include "zeroc/Passes/CommCostModel.h"

#include <algorithm>
#include <cmath>

namespace zeroc {

namespace {
/// Bytes per microsecond of `gbps` gigabits per second.
double bytesPerUs(double gbps) { return gbps * 1e3 / 8.0; }
} // namespace

double CommCostModel::ringUs(int64_t bytes, int64_t world) const {
  if (world <= 1 || bytes <= 0)
    return 0.0;
  const double steps = static_cast<double>(world - 1);
  return steps * alphaUs +
         steps / static_cast<double>(world) * static_cast<double>(bytes) /
             bytesPerUs(gbps);
}

int64_t CommCostModel::efficientBytes(int64_t world, double fixedShare) const {
  if (world <= 1 || !(fixedShare > 0.0) || !(fixedShare < 1.0) ||
      !(alphaUs > 0.0) || !(gbps > 0.0))
    return 0;
  // (W-1) a <= s ((W-1) a + (W-1)/W b / B)  <=>  b >= W a B (1 - s) / s.
  const double bytes = static_cast<double>(world) * alphaUs * bytesPerUs(gbps) *
                       (1.0 - fixedShare) / fixedShare;
  return static_cast<int64_t>(std::min(std::ceil(bytes), 9.0e18));
}

} // namespace zeroc
