//===- CudaFusedKernels.h - Fused ops as kernels of the program's own -*- C++ -*-===//
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

/// The same for a softmax with an elementwise prologue: a kernel over the
/// softmax's rows (zeroc_rt_cuda/rows.h) whose element reads compute the
/// body.
mlir::LogicalResult printFusedSoftmaxKernel(ProgramPrinter &p,
                                            graph::FusedSoftmaxOp op,
                                            llvm::StringRef name,
                                            std::string &definitions);

/// The same for a softmax gradient with an elementwise epilogue: a kernel
/// over the rows whose element writes compute the body.
mlir::LogicalResult printFusedSoftmaxGradKernel(ProgramPrinter &p,
                                                graph::FusedSoftmaxGradOp op,
                                                llvm::StringRef name,
                                                std::string &definitions);

/// The same for a softmax attention: a kernel that runs
/// zeroc_rt_cuda/attention.h's attentionForward with the prologue.
mlir::LogicalResult printFusedAttentionKernel(ProgramPrinter &p,
                                              graph::FusedAttentionOp op,
                                              llvm::StringRef name,
                                              std::string &definitions);

/// Its gradient: two kernels (name_q: delta and dq; name_kv: dk and dv),
/// launched in that order.
mlir::LogicalResult printFusedAttentionGradKernels(ProgramPrinter &p,
                                                   graph::FusedAttentionGradOp op,
                                                   llvm::StringRef name,
                                                   std::string &definitions);

} // namespace zeroc

#endif // ZEROC_LIB_EMIT_CUDAFUSEDKERNELS_H
