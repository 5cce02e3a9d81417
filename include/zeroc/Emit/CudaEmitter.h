//===- CudaEmitter.h - The program for the CUDA runtime ----------*- C++ -*-===//
#ifndef ZEROC_EMIT_CUDAEMITTER_H
#define ZEROC_EMIT_CUDAEMITTER_H

#include "zeroc/Emit/EmittedProgram.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace zeroc {

/// emitCpuProgram's program for the CUDA runtime (runtime/cuda): the same
/// schedule, its kernels the CUDA runtime's zeroc_rt_cuda_k_* (launches on
/// the compute stream), its collectives on device memory (NCCL, or MPI
/// staged through the host), the arena in device memory and @train_step's
/// scalars in host memory (zero-plan-buffers' host-step-scalars, which the
/// module must have been planned with). Fails on an op whose kernel the CUDA
/// runtime does not have yet, naming it.
mlir::LogicalResult emitCudaProgram(mlir::ModuleOp module,
                                    const std::string &recompileHint,
                                    EmittedProgram &out);

} // namespace zeroc

#endif // ZEROC_EMIT_CUDAEMITTER_H
