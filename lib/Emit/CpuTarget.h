//===- CpuTarget.h - The CPU target's printer hooks --------------*- C++ -*-===//
//
// The CPU runtime's calls for the ops ProgramPrinter leaves to its target:
// zeroc_rt_k_* kernels for graph ops (CpuKernelCalls.cpp), zeroc_rt_comm_*
// collectives over MPI (CpuCollectives.cpp), and zeroc_rt_engine_* state
// and step calls (CpuZeroOps.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef ZEROC_LIB_EMIT_CPUTARGET_H
#define ZEROC_LIB_EMIT_CPUTARGET_H

#include "zeroc/Emit/ProgramPrinter.h"

namespace zeroc {

class CpuTarget : public TargetPrinter {
public:
  llvm::StringRef name() const override { return "CPU"; }
  void printPrologue(llvm::raw_ostream &os) override;
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

} // namespace zeroc

#endif // ZEROC_LIB_EMIT_CPUTARGET_H
