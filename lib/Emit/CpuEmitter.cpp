//===- CpuEmitter.cpp - @train_micro_step to C++ for the CPU runtime ------===//
//
// The CPU target: ProgramPrinter prints the program, CpuTarget the calls of
// the CPU runtime (zeroc_rt, OpenBLAS and Open MPI underneath). Its hooks
// live in CpuKernelCalls.cpp, CpuCollectives.cpp and CpuZeroOps.cpp.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Emit/CpuEmitter.h"

#include "RuntimeTarget.h"

using namespace mlir;

namespace zeroc {

void CpuTarget::printPrologue(raw_ostream &os) {
  os << "#include \"zeroc_rt/train.h\"\n\n";
}

LogicalResult emitCpuProgram(ModuleOp module, const std::string &recompileHint,
                             EmittedProgram &out) {
  CpuTarget target;
  return ProgramPrinter(module, recompileHint, target).print(out);
}

} // namespace zeroc
