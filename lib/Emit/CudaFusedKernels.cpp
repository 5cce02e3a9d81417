//===- CudaFusedKernels.cpp - graph.fused_elementwise as a kernel ---------===//
//
// docs/CudaTarget.md, "Elementwise fusion". The kernel loops over the
// result's elements (grid-stride, zeroc_rt_cuda/compat.h); per element it
// loads each input at its broadcast offset, computes the body's ops in
// order with the runtime's element arithmetic (zeroc_rt_cuda/scalar_ops.h),
// rounds every value to the storage type as the op's own kernel stores it,
// and stores the yielded one. Shapes are static, so the offsets
// are printed as constants.
//
//===----------------------------------------------------------------------===//

#include "CudaFusedKernels.h"

#include "RuntimeTarget.h"

#include "zeroc/Emit/CxxText.h"
#include "zeroc/Emit/EmitTypes.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace zeroc {
namespace {

constexpr llvm::StringLiteral kNs = "zeroc_rt::cuda::";

/// The storage type of a float element type in a CUDA kernel.
std::string storageType(Type elem) {
  if (elem.isF32())
    return "float";
  if (elem.isF64())
    return "double";
  return (kNs + (elem.isF16() ? "F16" : "BF16")).str();
}

/// The offset of element `i` of a tensor of shape `out` in an input of
/// shape `in` broadcast to it (numpy rules, aligned at the right).
std::string broadcastOffset(ArrayRef<int64_t> in, ArrayRef<int64_t> out) {
  if (in == out)
    return "i";
  if (llvm::is_contained(out, 0)) // no element: the loop never runs
    return "0";
  const int64_t rank = out.size(), lead = rank - in.size();
  std::string expr;
  int64_t outStride = 1, inStride = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    const int64_t n = d >= lead ? in[d - lead] : 1;
    if (n != 1) {
      // *, / and % associate left to right: "i / 6 % 4" is (i / 6) % 4.
      std::string coord = outStride == 1 ? "i" : llvm::formatv("i / {0}", outStride).str();
      if (d > 0)
        coord = llvm::formatv("{0} % {1}", coord, out[d]).str();
      std::string term =
          inStride == 1 ? coord : llvm::formatv("({0}) * {1}", coord, inStride).str();
      expr = expr.empty() ? term : term + " + " + expr;
    }
    inStride *= n;
    outStride *= out[d];
  }
  return expr.empty() ? "0" : expr;
}

} // namespace

LogicalResult printFusedKernel(ProgramPrinter &p, graph::FusedElementwiseOp op,
                               StringRef name, std::string &definitions) {
  RankedTensorType type = op.getResultType();
  const std::string s = storageType(type.getElementType());
  Block &body = op.getBody().front();
  llvm::DenseMap<Value, std::string> names;
  std::string params, loads, math, launchArgs;
  for (auto [k, arg] : llvm::enumerate(body.getArguments())) {
    auto t = llvm::cast<RankedTensorType>(arg.getType());
    names[arg] = "a" + std::to_string(k);
    const std::string at = broadcastOffset(t.getShape(), type.getShape());
    // A where's condition: the runtime's bools are bytes.
    const bool condition = t.getElementType().isInteger(1);
    const std::string in = condition ? "unsigned char" : s;
    params += llvm::formatv("const {0} *in{1}, ", in, k).str();
    loads += condition
                 ? llvm::formatv("    const bool a{0} = in{0}[{1}] != 0;\n", k, at).str()
                 : llvm::formatv("    const zc a{0} = z::load(in{0}[{1}]);\n", k, at).str();
    launchArgs += llvm::formatv(", (const {0} *)({1})", in, p.var(op.getInputs()[k])).str();
  }
  int v = 0, numKeys = 0;
  std::string keyArgs;
  for (Operation &inner : body.without_terminator()) {
    auto arg = [&](unsigned i) { return names.lookup(inner.getOperand(i)); };
    std::string expr;
    if (const char *kind = unaryKind(&inner))
      expr = llvm::formatv("z::unaryOf(ZEROC_RT_UNARY_{0}, {1})", kind, arg(0));
    else if (const char *kind = binaryKind(inner.getName().getStringRef()))
      expr = llvm::formatv("z::binaryOf(ZEROC_RT_BINARY_{0}, {1}, {2})", kind, arg(0),
                           arg(1));
    else if (auto ug = llvm::dyn_cast<graph::UnaryGradOp>(inner)) {
      // An absent forward value is one the derivative does not read: 0, as
      // the runtime's kernel passes for a NULL operand.
      auto forward = [&](Value v) { return v ? names.lookup(v) : std::string("zc(0)"); };
      expr = llvm::formatv("{0} * z::derivativeOf(ZEROC_RT_UNARY_{1}, {2}, {3})",
                           names.lookup(ug.getGrad()), ug.getOp().upper(),
                           forward(ug.getX()), forward(ug.getY()));
    } else if (auto where = llvm::dyn_cast<graph::WhereOp>(inner)) {
      expr = llvm::formatv("{0} ? {1} : {2}", names.lookup(where.getCondition()),
                           names.lookup(where.getOnTrue()), names.lookup(where.getOnFalse()));
    } else if (auto dropout = llvm::dyn_cast<graph::DropoutOp>(inner)) {
      // The mask's key is the call's (zeroc_rt_k_dropout), made at the launch.
      const std::string ratio = cxxDouble(dropout.getRatio().convertToDouble());
      const std::string key = "key" + std::to_string(numKeys++);
      params += "uint64_t " + key + ", ";
      keyArgs += llvm::formatv(", {0}dropoutKey({1}ull, zeroc_rt_engine_dropout_counter(e))",
                               kNs, dropout.getSeed())
                     .str();
      expr = llvm::formatv("z::load(z::dropoutOf<{0}>({1}, i, {2}, z::dropoutKeepScale({2}), {3}))",
                           s, arg(0), ratio, key);
    } else
      return p.unsupported(&inner);
    const std::string value = "v" + std::to_string(v++);
    names[inner.getResult(0)] = value;
    math += llvm::formatv("    const zc {0} = z::roundTo<{1}>({2});\n", value, s, expr)
                .str();
  }
  // Rounding is idempotent: storing the rounded value stores the bits the
  // op's own kernel stores.
  std::string outParams, outArgs;
  for (auto [k, yielded] : llvm::enumerate(op.getYielded())) {
    outParams += llvm::formatv("{0}{1} *out{2}", k ? ", " : "", s, k).str();
    outArgs += llvm::formatv(", ({0} *)({1})", s, p.var(op.getResult(k))).str();
    math += llvm::formatv("    out{0}[i] = z::storeD<{1}>({2});\n", k, s,
                          names.lookup(yielded))
                .str();
  }
  const int64_t n = type.getNumElements();
  definitions += llvm::formatv(
      "// {0}: {1} ops, {3} elements, yields {2}\n"
      "ZRT_GLOBAL void {4}({5}{6}, int64_t n) {{\n"
      "  namespace z = zeroc_rt::cuda;\n"
      "  using zc = z::Compute<{7}>::type;\n"
      "  for (int64_t i = z::gridFirst(); i < n; i += z::gridStride()) {{\n"
      "{8}{9}  }\n}\n\n",
      op->getName().getStringRef(), v, op.getNumResults(), n, name, params,
      outParams, s, loads, math);
  p.call(llvm::formatv("zeroc_rt_cuda_launch_status((int){0}launch({1}, "
                       "{0}blocksFor({2}), {0}kBlock{3}{5}{4}, (int64_t){2}), \"{1}\")",
                       kNs, name, n, launchArgs, outArgs, keyArgs));
  return success();
}

} // namespace zeroc
