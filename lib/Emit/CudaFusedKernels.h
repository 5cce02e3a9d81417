//===- CudaFusedKernels.h - graph.fused_elementwise as a kernel -*- C++ -*-===//
#ifndef ZEROC_LIB_EMIT_CUDAFUSEDKERNELS_H
#define ZEROC_LIB_EMIT_CUDAFUSEDKERNELS_H

#include "zeroc/Emit/ProgramPrinter.h"

#include <string>

namespace zeroc {

/// Appends to `definitions` the kernel `name` that computes `op`'s body per
/// element (zeroc_rt_cuda/fused.h), and prints its launch through `p`.
/// Fails with a diagnostic on a body op it cannot print.
mlir::LogicalResult printFusedKernel(ProgramPrinter &p,
                                     graph::FusedElementwiseOp op,
                                     llvm::StringRef name,
                                     std::string &definitions);

} // namespace zeroc

#endif // ZEROC_LIB_EMIT_CUDAFUSEDKERNELS_H
