//===- streams_emu.h - The host emulation's streams --------------*- C++ -*-===//
//
// On a GPU the communication stream runs beside the compute stream: a
// collective runs whenever its stream gets to it, and the program sees its
// result only after an event says it completed. The host emulation runs the
// compute stream's work (kernels, copies) at once, as it is queued, and
// holds the communication stream's work (the emulated NCCL's collectives,
// the copies queued there, its events) until the program must have it
// done: a stream or the host waits for one of its events, or the host
// synchronizes with it or frees device memory. It runs then, in order. So
// a collective runs as late as the program's events let it, after every
// kernel the compute stream queued meanwhile, and a kernel that reads a
// collective's result without waiting for it, or overwrites its operand
// before it ran, computes with the wrong data in every emulated run
// (docs/CudaTarget.md, "The host emulation"). The other way round, the
// compute stream never lags, so a collective queued without waiting for
// the compute stream's work would see that work done: the emulated NCCL
// refuses such a collective instead (emuCheckCommAfterCompute).
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_CUDA_SRC_STREAMS_EMU_H
#define ZEROC_RT_CUDA_SRC_STREAMS_EMU_H

#include "zeroc_rt/status.h"

#include <cstddef>
#include <functional>

namespace zeroc_rt::cuda {

using StreamWork = std::function<zeroc_rt_status_t()>;

/// Whether `stream` holds its work (the communication stream) rather than
/// running it at once (the compute stream).
bool emuHolds(const void *stream);

/// Runs `work` on `stream` (computeStream() or commStream()): at once on the
/// compute stream, whose status it returns; held on the communication
/// stream, whose failure a later wait for it reports.
ZEROC_RT_MUST_USE zeroc_rt_status_t emuStreamRun(void *stream, StreamWork work);

/// The compute stream ran (at once) one more kernel, copy or GEMM.
void emuNoteComputeWork();

/// Fails when the communication stream has not waited for every piece of
/// compute-stream work queued so far (an event recorded after it): a
/// collective queued then could run on a GPU before the kernels that made
/// its operands (comm_nccl.cu makes each collective wait for them). `what`
/// names the collective.
ZEROC_RT_MUST_USE zeroc_rt_status_t emuCheckCommAfterCompute(const char *what);

/// Runs everything the communication stream holds (a host wait for it, or
/// for the whole device); its first failure, if any.
ZEROC_RT_MUST_USE zeroc_rt_status_t emuDrainCommStream();

/// Whether [p, p + bytes) lies in one block of emulated device memory.
bool emuOnDevice(const void *p, size_t bytes);

} // namespace zeroc_rt::cuda

#endif // ZEROC_RT_CUDA_SRC_STREAMS_EMU_H
