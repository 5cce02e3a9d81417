//===- ProgramPrinter.h - The target-neutral emission core -------*- C++ -*-===//
//
// ProgramPrinter prints a module that went through the train pipeline as one
// C++ file: it names every value (V[i]) and every started collective's
// request (Q[i]), points each value at its planned arena offset, puts
// constants and initial parameter values into the blob, prints
// @train_micro_step as chunked functions and @train_step as one, and prints
// the program table and main(). It decides nothing about what an op
// computes or moves: for those ops it calls a TargetPrinter, which prints
// the target's kernel calls, collectives and their start/wait pairs, engine
// calls, and the file's #include lines. docs/Emitter.md says what is
// printed where and what a new target implements.
//
//===----------------------------------------------------------------------===//
#ifndef ZEROC_EMIT_PROGRAMPRINTER_H
#define ZEROC_EMIT_PROGRAMPRINTER_H

#include "zeroc/Emit/EmittedProgram.h"

#include "zeroc/Dialect/Graph/GraphOps.h"
#include "zeroc/Dialect/Zero/ZeroOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <string>
#include <vector>

namespace zeroc {

class ProgramPrinter;

/// The hooks of one target (CPU: CpuEmitter.cpp). ProgramPrinter calls one
/// per op it does not print itself, after it has named the op's results
/// (ProgramPrinter::var) and, for an in-place collective or a wait, pointed
/// the result at the storage it shares. A hook prints statements through
/// ProgramPrinter::line and ::call and fails with a diagnostic on an op or
/// attribute the target cannot print (ProgramPrinter::unsupported).
class TargetPrinter {
public:
  virtual ~TargetPrinter();

  /// The target's name in diagnostics: "CPU" prints "... the CPU target
  /// does not support ..." and "... is not supported by the CPU emitter yet".
  virtual llvm::StringRef name() const = 0;

  /// The #include lines that open the file, after the generated-by comment:
  /// the runtime header declaring zeroc_rt_program_t and the engine, and
  /// whatever the target's calls need.
  virtual void printPrologue(llvm::raw_ostream &os) = 0;

  /// Definitions the file needs before its functions, printed after the
  /// program's globals: what printKernelCall made for the ops it printed
  /// (the CUDA target's fused kernels).
  virtual void printDefinitions(llvm::raw_ostream &os) {}

  /// A graph-dialect op that computes, i.e. all but graph.constant,
  /// graph.load_param and graph.reshape: its kernel call.
  virtual mlir::LogicalResult printKernelCall(ProgramPrinter &p,
                                              mlir::Operation *op) = 0;

  /// A blocking collective: zero.all_gather, zero.reduce_scatter,
  /// zero.all_reduce (@train_step) or zero.gather_replica (@train_step).
  virtual mlir::LogicalResult printCollective(ProgramPrinter &p,
                                              mlir::Operation *op) = 0;

  /// A started collective (zero.all_gather_start, zero.reduce_scatter_start,
  /// zero.all_reduce_start): issues it and records its request in `slot`,
  /// the Q[i] that its zero.wait passes to printWait.
  virtual mlir::LogicalResult printStart(ProgramPrinter &p, mlir::Operation *op,
                                         llvm::StringRef slot) = 0;

  /// zero.wait: the compute waits until the request in `slot` completed.
  virtual mlir::LogicalResult printWait(ProgramPrinter &p, zero::WaitOp op,
                                        llvm::StringRef slot) = 0;

  /// The statement `dest = (double)<the cxxType scalar at ptr>;` for a
  /// scalar in the arena (ptr is a char *): the CPU dereferences it, a
  /// device arena copies it to the host.
  virtual std::string loadArenaScalar(llvm::StringRef cxxType,
                                      llvm::StringRef ptr,
                                      llvm::StringRef dest) const;
  /// The statement handing the micro-step's loss (a `cxxType` scalar of
  /// runtime dtype `dtype` at `ptr` in the arena) to the engine: writing
  /// *loss (loadArenaScalar), or, for a device arena, leaving it on the
  /// device (zeroc_rt_engine_stash_loss), read once per step.
  virtual std::string lossOut(llvm::StringRef cxxType, llvm::StringRef dtype,
                              llvm::StringRef ptr) const {
    return loadArenaScalar(cxxType, ptr, "*loss");
  }
  /// The statement storing the host value `value` there.
  virtual std::string storeArenaScalar(llvm::StringRef cxxType,
                                       llvm::StringRef ptr,
                                       llvm::StringRef value) const;
  /// Whether the target's runtime has kernel `name` (a kernel call
  /// zeroc_rt_k_<name>: see ProgramPrinter::call).
  virtual bool hasKernel(llvm::StringRef name) const { return true; }
  /// The prefix of the target's kernels (zeroc_rt/kernels.h's signatures).
  virtual llvm::StringRef kernelPrefix() const { return "zeroc_rt_k_"; }
  /// The runtime's process entry point main() returns through.
  virtual llvm::StringRef processMain() const {
    return "zeroc_rt_train_process_main";
  }

  /// Every other zero op: engine state (parameter replicas and shards,
  /// buffers, gradient accumulation, the loss scale, the step count),
  /// packing into and out of flat buffers, and @train_step's overflow
  /// check, norm, clipping, schedule and optimizer updates.
  virtual mlir::LogicalResult printZeroOp(ProgramPrinter &p,
                                          mlir::Operation *op) = 0;
};

class ProgramPrinter {
public:
  ProgramPrinter(mlir::ModuleOp module, std::string recompileHint,
                 TargetPrinter &target)
      : module(module), hint(std::move(recompileHint)), target(target) {}

  /// Prints the module's program into `out`; fails with a diagnostic on an
  /// op that neither the printer nor the target can print.
  mlir::LogicalResult print(EmittedProgram &out);

  // What the target's hooks print with.

  mlir::ModuleOp getModule() const { return module; }
  llvm::StringRef targetName() const { return target.name(); }
  /// The C++ expression (a char *) of `v`'s storage: V[i] or an input.
  std::string var(mlir::Value v) const { return names.lookup(v); }
  /// `v` as a zeroc_rt_tensor_t: T(ptr, dtype, rank, {dims}).
  std::string desc(mlir::Value v) const { return descOf(var(v), v.getType()); }
  /// The tensor of type `t` at the char * expression `ptr`.
  std::string descOf(const std::string &ptr, mlir::Type t) const;
  /// Appends a statement line to the function being printed.
  void line(const llvm::Twine &text) { body += "  " + text.str() + "\n"; }
  /// Appends a runtime call whose failure status the function returns. A
  /// kernel call, zeroc_rt_k_<name>(...), calls the target's kernel of that
  /// name (TargetPrinter::kernelPrefix). `indent` goes before it inside a
  /// printed block.
  void call(const llvm::Twine &expr, llvm::StringRef indent = "");
  /// The target's kernel `name` ("copy": zeroc_rt_k_copy on the CPU).
  std::string kernel(llvm::StringRef name) const {
    return (target.kernelPrefix() + name).str();
  }
  /// A parameter's index in kParams, a buffer's in kBuffers.
  int paramIndex(llvm::StringRef name) const { return paramIndices.lookup(name); }
  int bufferIndex(llvm::StringRef name) const { return bufferIndices.lookup(name); }
  graph::ParamOp param(llvm::StringRef name) const {
    return params[paramIndex(name)];
  }
  /// The statement storing the host value `value` (of C++ type `cxxType`)
  /// into scalar `v`: a plain store in host memory (zero.host_offsets), the
  /// target's storeArenaScalar in the arena.
  std::string storeScalar(mlir::Value v, llvm::StringRef cxxType,
                          llvm::StringRef value) const;
  /// A number no value name (V[i]) uses, for the target's C++ temporaries.
  int uniqueId() { return nextVar++; }
  /// "is not supported by the <target> emitter yet".
  mlir::LogicalResult unsupported(mlir::Operation *op) const;

private:
  /// Read from @train_step's ops by readStepConfig; the program table
  /// reports it.
  struct StepConfig {
    zero::AdamAttr adam;
    zero::SgdAttr sgd;
    zero::LrScheduleAttr schedule;
    zero::LossScalerAttr scaler;
    double maxNorm = 0.0;
    bool tf32 = false; ///< zero.tf32 on @train_step
    int64_t microSteps = 1;
    zero::MonitorAttr monitor;
    llvm::StringMap<mlir::Type> gradElementType;
  };

  mlir::LogicalResult collectParams();
  mlir::LogicalResult readPlan(mlir::func::FuncOp fn);
  mlir::LogicalResult readStepConfig();
  int64_t blobConstant(mlir::Operation *op, mlir::ElementsAttr value);
  /// A new request slot (Q[i]) for a started collective's token.
  std::string requestSlotOf(mlir::Value token);
  mlir::LogicalResult printOp(mlir::Operation *op);
  mlir::LogicalResult printGraphOp(mlir::Operation *op);
  mlir::LogicalResult printZeroOp(mlir::Operation *op);
  mlir::LogicalResult printMicroStep(mlir::func::FuncOp fn,
                                     std::vector<std::string> &chunks);
  mlir::LogicalResult printTrainStep(std::string &out);
  mlir::LogicalResult printFinishCarries(std::string &out);
  void printHeader(llvm::raw_ostream &os);
  mlir::LogicalResult printTables(llvm::raw_ostream &os, mlir::func::FuncOp fn);
  void printMain(llvm::raw_ostream &os, mlir::func::FuncOp fn);

  mlir::ModuleOp module;
  std::string hint;
  TargetPrinter &target;
  /// The statements of the function being printed.
  std::string body;
  ModelBlob blob;
  /// Where the constants start in the blob (after the initial values):
  /// the generated code's K points there.
  int64_t constantsOffset = 0;
  llvm::StringMap<int> paramIndices;
  llvm::SmallVector<graph::ParamOp> params;
  llvm::StringMap<int> bufferIndices;
  llvm::SmallVector<graph::BufferOp> buffers;
  llvm::DenseMap<mlir::Value, std::string> names;
  /// --trace's name of each traced op, in program order.
  std::vector<std::string> opNames;
  llvm::DenseMap<mlir::Value, int64_t> arenaOffset;
  /// zero-plan-buffers' host-step-scalars: offsets into the host block H.
  llvm::DenseMap<mlir::Value, int64_t> hostOffset;
  int64_t hostBytes = -1; ///< -1: the module has no host block
  /// A kernel call the target has no kernel for (call), reported on the op.
  std::string missingKernel;
  /// The parameter whose accumulator holds a result planned there.
  llvm::DenseMap<mlir::Value, llvm::StringRef> accumulatorOf;
  int64_t arenaBytes = 0;
  /// The runtime's gradient slab (zero.grad_slab_bytes), read with the
  /// parameters' state layouts.
  int64_t gradSlabBytes = 0;
  int nextVar = 0;
  /// The request slot (Q[i]) of each started collective's token.
  llvm::DenseMap<mlir::Value, std::string> requestSlot;
  int nextSlot = 0;
  /// A gather carried across the step boundary: its shared request slot,
  /// and the micro-step's wait for it, which the program's end prints too.
  struct Carry {
    std::string slot;
    zero::AllGatherStartOp carry, carried;
    zero::WaitOp wait;
  };
  std::map<int64_t, Carry> carries;
  StepConfig step;
};

} // namespace zeroc

#endif // ZEROC_EMIT_PROGRAMPRINTER_H
