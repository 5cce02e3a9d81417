//===- CudaEmitter.cpp - The program for the CUDA runtime -----------------===//
//
// The CUDA target differs from the CPU's in what it includes, the kernel
// library its calls name (zeroc_rt_cuda_k_*, with zeroc_rt/kernels.h's
// signatures on device memory), how the host reads and writes a scalar of
// the device arena, and the process entry point. Everything else is
// RuntimeTarget's.
//
//===----------------------------------------------------------------------===//

#include "zeroc/Emit/CudaEmitter.h"

#include "CudaFusedKernels.h"
#include "RuntimeTarget.h"

#include "zeroc/Dialect/Zero/BufferPlanning.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace zeroc {
namespace {

class CudaTarget : public RuntimeTarget {
public:
  llvm::StringRef name() const override { return "CUDA"; }
  void printPrologue(raw_ostream &os) override {
    os << "#include \"zeroc_rt_cuda/program.h\"\n"
       << "#include \"zeroc_rt_cuda/fused.h\"\n\n";
  }
  /// A fused op is a kernel of the program's own.
  LogicalResult printKernelCall(ProgramPrinter &p, Operation *op) override {
    if (!llvm::isa<graph::FusedElementwiseOp, graph::FusedSoftmaxOp, graph::FusedSoftmaxGradOp,
                   graph::FusedAttentionOp, graph::FusedAttentionGradOp>(op))
      return RuntimeTarget::printKernelCall(p, op);
    const std::string name = "fused" + std::to_string(numFused++);
    if (auto fused = llvm::dyn_cast<graph::FusedAttentionOp>(op))
      return printFusedAttentionKernel(p, fused, name, kernels);
    if (auto fused = llvm::dyn_cast<graph::FusedAttentionGradOp>(op))
      return printFusedAttentionGradKernels(p, fused, name, kernels);
    if (auto fused = llvm::dyn_cast<graph::FusedSoftmaxOp>(op))
      return printFusedSoftmaxKernel(p, fused, name, kernels);
    if (auto fused = llvm::dyn_cast<graph::FusedSoftmaxGradOp>(op))
      return printFusedSoftmaxGradKernel(p, fused, name, kernels);
    return printFusedKernel(p, llvm::cast<graph::FusedElementwiseOp>(op), name, kernels);
  }
  void printDefinitions(raw_ostream &os) override { os << kernels; }
  llvm::StringRef kernelPrefix() const override { return "zeroc_rt_cuda_k_"; }
  llvm::StringRef processMain() const override {
    return "zeroc_rt_cuda_train_process_main";
  }
  /// The kernels runtime/cuda/include/zeroc_rt_cuda/kernels.h declares.
  bool hasKernel(StringRef kernel) const override {
    static const llvm::StringSet<> kernels = {
        "unary", "unary_grad", "binary", "where", "broadcast", "sum_to",
        "dropout", "matmul", "matmul_trans", "matmul_strided", "gemm", "gemm_bias_grad",
        "reduce", "softmax", "softmax_grad",
        "layer_norm", "layer_norm_grad", "layer_norm_grad_add", "softmax_cross_entropy",
        "softmax_cross_entropy_grad", "softmax_cross_entropy_with_grad",
        "softmax_cross_entropy_pitched", "copy", "copy_multi", "gather", "gather_grad",
        "transpose", "slice", "slice_grad", "zero", "cast",
        "sum_squares", "has_inf_or_nan", "sum_squares_multi",
        "has_inf_or_nan_multi", "clip_grad_norm",
        "gather_grad_padded", "concat", "trilu", "pad", "pad_grad",
        "scatter_nd", "predicate", "clip", "clip_grad", "cumsum", "conv",
        "conv_grad_input", "conv_grad_weight", "pool", "pool_grad",
        "batch_norm", "batch_norm_grad", "gather_elements",
        "gather_elements_grad", "gather_nd", "scatter_elements"};
    return kernels.contains(kernel);
  }
  std::string loadArenaScalar(StringRef cxxType, StringRef ptr,
                              StringRef dest) const override {
    return ("{ " + cxxType + " zrt_v = 0; ZRT_TRY(zeroc_rt_cuda_download(&zrt_v, " +
            ptr + ", sizeof zrt_v)); " + dest + " = (double)zrt_v; }")
        .str();
  }
  std::string lossOut(StringRef, StringRef dtype, StringRef ptr) const override {
    return ("ZRT_TRY(zeroc_rt_engine_stash_loss(e, " + ptr + ", " + dtype + "));").str();
  }
  std::string storeArenaScalar(StringRef cxxType, StringRef ptr,
                               StringRef value) const override {
    return ("{ " + cxxType + " zrt_v = " + value +
            "; ZRT_TRY(zeroc_rt_cuda_upload(" + ptr + ", &zrt_v, sizeof zrt_v)); }")
        .str();
  }

private:
  /// The fused kernels' definitions, printed before the functions.
  std::string kernels;
  int numFused = 0;
};

} // namespace

LogicalResult emitCudaProgram(ModuleOp module, const std::string &recompileHint,
                              EmittedProgram &out) {
  if (!module->hasAttr(zero::kHostBytesAttr))
    return module.emitError("the CUDA target needs @train_step's scalars in "
                            "host memory (run zero-plan-buffers with "
                            "host-step-scalars, i.e. the pipeline's target=cuda)");
  CudaTarget target;
  return ProgramPrinter(module, recompileHint, target).print(out);
}

} // namespace zeroc
