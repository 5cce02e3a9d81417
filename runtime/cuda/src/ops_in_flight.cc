//===- ops_in_flight.cc - Which op a kernel error belongs to --------------===//
//
// The generated code marks each op (zeroc_rt_engine_trace_op); kernels that
// can find bad data get the running op's index and store it with their
// error code, which gpuSynchronize turns into one message.
//
//===----------------------------------------------------------------------===//

#include "gpu.h"

namespace zeroc_rt::cuda {
namespace {
const char *const *opNames = nullptr;
int32_t numOps = 0, runningOp = -1;
} // namespace

void setOpNames(const char *const *names, int32_t count) {
  opNames = names;
  numOps = count;
}
void setCurrentOp(int32_t op) { runningOp = op; }
int32_t currentOp() { return runningOp; }

std::string kernelErrorText(unsigned code, unsigned op) {
  std::string what = code == 1 ? "an index is out of range"
                               : "a kernel found bad data (code " +
                                     std::to_string(code) + ")";
  if (opNames && op < static_cast<unsigned>(numOps) && opNames[op])
    return what + " in op " + opNames[op];
  return what;
}

} // namespace zeroc_rt::cuda
