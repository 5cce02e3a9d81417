//===- RuntimeTarget.h - Hooks shared by the CPU and CUDA targets -*- C++ -*-===//
//
// Both targets print the same calls: one kernel per graph op with the
// signatures of zeroc_rt/kernels.h (RuntimeKernelCalls.cpp), zeroc_rt_comm_*
// collectives (RuntimeCollectives.cpp; the CUDA runtime's communicators move
// device memory) and zeroc_rt_engine_* state and step calls
// (RuntimeZeroOps.cpp). A kernel call is printed as zeroc_rt_k_<name>(...);
// ProgramPrinter::call gives it the target's kernelPrefix() (the CPU's
// zeroc_rt_k_, the CUDA runtime's zeroc_rt_cuda_k_). What differs between the
// targets is in CpuEmitter.cpp and CudaEmitter.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef ZEROC_LIB_EMIT_RUNTIMETARGET_H
#define ZEROC_LIB_EMIT_RUNTIMETARGET_H

#include "zeroc/Emit/ProgramPrinter.h"

namespace zeroc {

/// The zeroc_rt_unary_op_t enumerator (without ZEROC_RT_UNARY_) of a graph
/// op that is one (graph.erf: "ERF", graph.gelu: "GELU" or "GELU_TANH"),
/// else null.
const char *unaryKind(mlir::Operation *op);
/// The zeroc_rt_binary_op_t enumerator (without ZEROC_RT_BINARY_) of a
/// graph op name that is one ("graph.add": "ADD"), else null.
const char *binaryKind(llvm::StringRef opName);

class RuntimeTarget : public TargetPrinter {
public:
  mlir::LogicalResult printKernelCall(ProgramPrinter &p,
                                      mlir::Operation *op) override;
  mlir::LogicalResult printCollective(ProgramPrinter &p,
                                      mlir::Operation *op) override;
  mlir::LogicalResult printStart(ProgramPrinter &p, mlir::Operation *op,
                                 llvm::StringRef slot) override;
  mlir::LogicalResult printWait(ProgramPrinter &p, zero::WaitOp op,
                                llvm::StringRef slot) override;
  mlir::LogicalResult printZeroOp(ProgramPrinter &p,
                                  mlir::Operation *op) override;
};

class CpuTarget : public RuntimeTarget {
public:
  llvm::StringRef name() const override { return "CPU"; }
  void printPrologue(llvm::raw_ostream &os) override;
  /// zeroc_rt/kernels.h: every kernel but the CUDA runtime's own, which
  /// the CUDA pipeline's passes call for (zero-fold-matmul-views,
  /// zero-fuse-layer-norm-grad-add, zero-fuse-cross-entropy,
  /// zero-fold-gemm-bias-grad).
  bool hasKernel(llvm::StringRef name) const override {
    return !llvm::is_contained({"matmul_strided", "layer_norm_grad_add",
                                "softmax_cross_entropy_with_grad", "gemm_bias_grad"},
                               name);
  }
};

} // namespace zeroc

#endif // ZEROC_LIB_EMIT_RUNTIMETARGET_H
