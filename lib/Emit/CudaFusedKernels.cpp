//===- CudaFusedKernels.cpp - Fused ops as kernels of the program's own ---===//
//
// docs/CudaTarget.md, "Elementwise fusion" and "Softmax fusion". A fused
// body is printed as code for one element i: it loads each input at its
// broadcast offset, computes the body's ops in order with the runtime's
// element arithmetic (zeroc_rt_cuda/scalar_ops.h), and rounds every value
// to the storage type as the op's own kernel stores it. Shapes are
// static, so the offsets are printed as constants. graph.fused_elementwise
// runs it over the elements (grid-stride, zeroc_rt_cuda/compat.h) and
// stores the yielded values; graph.fused_softmax runs it where the
// softmax reads an element, and graph.fused_softmax_grad where the
// gradient writes one (zeroc_rt_cuda/rows.h).
//
//===----------------------------------------------------------------------===//

#include "CudaFusedKernels.h"

#include "RuntimeTarget.h"

#include "zeroc/Dialect/Zero/BufferPlanning.h"
#include "zeroc/Emit/CxxText.h"
#include "zeroc/Emit/EmitTypes.h"
#include "zeroc/Support/Strides.h"

#include "llvm/ADT/StringExtras.h"
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

/// The offset of element `i` (the variable named `index`) of a tensor of
/// shape `out` in an input of shape `in` broadcast to it (numpy rules,
/// aligned at the right).
std::string broadcastOffset(ArrayRef<int64_t> in, ArrayRef<int64_t> out,
                            StringRef index = "i") {
  if (in == out)
    return index.str();
  if (llvm::is_contained(out, 0)) // no element: the loop never runs
    return "0";
  const int64_t rank = out.size(), lead = rank - in.size();
  std::string expr;
  int64_t outStride = 1, inStride = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    const int64_t n = d >= lead ? in[d - lead] : 1;
    if (n != 1) {
      // *, / and % associate left to right: "i / 6 % 4" is (i / 6) % 4.
      std::string coord =
          outStride == 1 ? index.str() : llvm::formatv("{0} / {1}", index, outStride).str();
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

/// How many consecutive elements of a tensor of shape `out` an input of
/// shape `in` broadcast to it has at consecutive offsets, from any element
/// whose index is a multiple of it: the product of the trailing dims the
/// two share (all of them when equal), 1 when there are none.
int64_t contiguousRun(ArrayRef<int64_t> in, ArrayRef<int64_t> out) {
  int64_t run = 1;
  for (size_t k = 1; k <= out.size(); ++k) {
    const int64_t n = k <= in.size() ? in[in.size() - k] : 1;
    if (n != out[out.size() - k])
      break;
    run *= n;
  }
  return run;
}

/// The launch's argument for the key of a dropout with `seed`: the key
/// zeroc_rt_k_dropout makes of it and the micro-step's counter.
std::string dropoutKeyArg(int64_t seed) {
  return llvm::formatv(", {0}dropoutKey({1}ull, zeroc_rt_engine_dropout_counter(e))", kNs, seed)
      .str();
}

/// A fused op's body as kernel code for element `i`.
struct PrintedBody {
  /// The kernel's parameters for the inputs and dropout keys, each followed
  /// by ", ", and the launch's arguments for them (inputs, then keys), each
  /// preceded by ", ".
  std::string params, launchArgs, keyArgs;
  /// Statements that load the inputs at element i and compute the ops,
  /// every value rounded to the storage type.
  std::string code;
  /// Statements for the kernel's top that read each input of one element
  /// for all (a scalar: the scale, a where's constant) once, as
  /// <prefix><k>_0, which `code` reads instead of memory.
  std::string hoisted;
  /// The names of the values the body yields.
  SmallVector<std::string> yielded;
};

/// Prints `body`, whose first `leading` arguments are values of element i
/// the kernel already has (`leadingValues`, rounded to the storage type as
/// the op that made them stores them) and whose others are `inputs`, for
/// the elements of a result of `type`; `indent` starts each statement.
/// Argument k with fromChunks[k] set is element j of chunk r<k>, which the
/// kernel loaded (printFusedKernel); the others are read at their offsets.
FailureOr<PrintedBody> printBody(ProgramPrinter &p, Block &body, ValueRange inputs,
                                 ArrayRef<std::string> leadingValues,
                                 RankedTensorType type, StringRef indent,
                                 StringRef prefix = "in", ArrayRef<bool> fromChunks = {}) {
  const std::string s = storageType(type.getElementType());
  const size_t leading = leadingValues.size();
  PrintedBody out;
  llvm::DenseMap<Value, std::string> names;
  for (auto [k, arg] : llvm::enumerate(body.getArguments())) {
    names[arg] = "a" + std::to_string(k);
    if (k < leading) {
      out.code += llvm::formatv("{0}const zc a{1} = z::roundTo<{2}>({3});\n", indent, k, s,
                                leadingValues[k])
                      .str();
      continue;
    }
    auto t = llvm::cast<RankedTensorType>(arg.getType());
    const std::string at = broadcastOffset(t.getShape(), type.getShape());
    // A where's condition: the runtime's bools are bytes.
    const bool condition = t.getElementType().isInteger(1);
    const std::string in = condition ? "unsigned char" : s;
    out.params += llvm::formatv("const {0} *{2}{1}, ", in, k, prefix).str();
    // (A result without elements reads nothing, not even a scalar.)
    if (at == "0" && type.getNumElements() > 0) {
      const char *value = condition ? "bool" : "zc";
      out.hoisted += condition
                         ? llvm::formatv("  const bool {0}{1}_0 = {0}{1}[0] != 0;\n", prefix, k)
                         : llvm::formatv("  const zc {0}{1}_0 = z::load({0}{1}[0]);\n", prefix, k);
      out.code += llvm::formatv("{0}const {1} a{2} = {3}{2}_0;\n", indent, value, k, prefix);
    } else if (condition)
      out.code +=
          llvm::formatv("{0}const bool a{1} = {3}{1}[{2}] != 0;\n", indent, k, at, prefix);
    else if (k < fromChunks.size() && fromChunks[k])
      out.code += llvm::formatv("{0}const zc a{1} = z::load(r{1}.e[j]);\n", indent, k);
    else
      out.code +=
          llvm::formatv("{0}const zc a{1} = z::load({3}{1}[{2}]);\n", indent, k, at, prefix);
    out.launchArgs +=
        llvm::formatv(", (const {0} *)({1})", in, p.var(inputs[k - leading])).str();
  }
  int v = 0, numKeys = 0;
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
      out.params += "uint64_t " + key + ", ";
      out.keyArgs += dropoutKeyArg(dropout.getSeed());
      expr = llvm::formatv("z::load(z::dropoutOf<{0}>({1}, i, {2}, z::dropoutKeepScale({2}), {3}))",
                           s, arg(0), ratio, key);
    } else
      return p.unsupported(&inner);
    const std::string value = "v" + std::to_string(v++);
    names[inner.getResult(0)] = value;
    out.code += llvm::formatv("{0}const zc {1} = z::roundTo<{2}>({3});\n", indent, value, s,
                              expr)
                    .str();
  }
  for (Value yielded : body.getTerminator()->getOperands())
    out.yielded.push_back(names.lookup(yielded));
  return out;
}

/// The opening of a fused kernel named `name` of storage type `s`: a
/// comment, the signature with `params`, the aliases its code uses and the
/// reads of its bodies' scalar inputs (`hoisted`, PrintedBody).
std::string kernelHead(Operation *op, StringRef summary, StringRef name, StringRef params,
                       StringRef s, StringRef hoisted) {
  return llvm::formatv("// {0}: {1}\n"
                       "ZRT_GLOBAL void {2}({3}) {{\n"
                       "  namespace z = zeroc_rt::cuda;\n"
                       "  using zc = z::Compute<{4}>::type;\n"
                       "{5}",
                       op->getName().getStringRef(), summary, name, params, s, hoisted)
      .str();
}

/// The rows a softmax along `axis` of a tensor of `type` runs over: how
/// many, and zeroc_rt_cuda/rows.h's Rows for them.
struct RowsText {
  int64_t rows;
  std::string text;
};
RowsText rowsOf(RankedTensorType type, int64_t axis) {
  ArrayRef<int64_t> shape = type.getShape();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (int64_t d = axis + 1; d < type.getRank(); ++d)
    inner *= shape[d];
  return {outer * inner,
          llvm::formatv("z::Rows{{{0}, {1}, {2}}", outer * inner, shape[axis], inner).str()};
}

/// The launch of row kernel `name` over `rows` rows with `args`.
void printRowLaunch(ProgramPrinter &p, StringRef name, int64_t rows, StringRef args) {
  p.call(llvm::formatv("zeroc_rt_cuda_launch_status((int){0}launch({1}, "
                       "{0}rowBlocks({2}), {0}kBlock{3}), \"{1}\")",
                       kNs, name, rows, args));
}

/// zeroc_rt_cuda/attention.h's Strides4 of a rank-4 tensor's `strides`, in
/// (b, h, t, d) order: its last two swapped when it is stored [B, H, D, T].
std::string strides4(SmallVector<int64_t> strides, bool transposed) {
  if (transposed)
    std::swap(strides[2], strides[3]);
  return llvm::formatv("z::Strides4{{{0}, {1}, {2}, {3}}", strides[0], strides[1], strides[2],
                       strides[3]);
}

/// The element strides, in (b, h, t, d) order, at which an attention
/// kernel reads operand `v` ([B, H, T, D], or [B, H, D, T] when
/// `transposed`): its graph.strided_view's, or a dense tensor's.
std::string operandStrides(Value v, bool transposed) {
  SmallVector<int64_t> strides =
      rowMajorStrides(llvm::cast<RankedTensorType>(v.getType()).getShape());
  if (auto view = v.getDefiningOp<graph::StridedViewOp>())
    strides.assign(view.getStrides().begin(), view.getStrides().end());
  return strides4(strides, transposed);
}

/// The same for `result`, of logical shape `logical` stored transposed by
/// `perm` (graph.matmul's result_perm: stored dim j is logical dim
/// perm[j]): dense, or at the strides zero-plan-buffers recorded for it
/// (written in place into a concat's storage).
std::string resultStrides(Value result, RankedTensorType logical,
                          std::optional<ArrayRef<int64_t>> perm, bool transposed) {
  SmallVector<int64_t> stored = zero::recordedResultStrides(result);
  if (stored.empty())
    return strides4(permutedStrides(logical.getShape(), perm), transposed);
  SmallVector<int64_t> strides(stored.size(), 0);
  for (auto [j, stride] : llvm::enumerate(stored))
    strides[perm ? (*perm)[j] : static_cast<int64_t>(j)] = stride;
  return strides4(strides, transposed);
}

/// An attention's storage type, head size and zeroc_rt_cuda/attention.h
/// AttentionShape.
struct AttentionText {
  std::string s, shape;
  int64_t dim, tq, tk;
};
AttentionText attentionOf(Value q, Value kt, bool causal) {
  auto qt = llvm::cast<RankedTensorType>(q.getType());
  auto ktt = llvm::cast<RankedTensorType>(kt.getType());
  AttentionText a;
  a.s = storageType(qt.getElementType());
  a.dim = qt.getDimSize(3);
  a.tq = qt.getDimSize(2);
  a.tk = ktt.getDimSize(3);
  a.shape = llvm::formatv("AttentionShape{{{0}, {1}, {2}, {3}, {4}}", qt.getDimSize(0),
                          qt.getDimSize(1), a.tq, a.tk, causal ? 1 : 0);
  return a;
}

/// An attention's dropout in its kernels: the kernel's parameter for the
/// mask's key (followed by ", "), the zeroc_rt_cuda/attention.h
/// AttentionDropout the kernel passes, and the launch's argument for the
/// key (preceded by ", "); none: no parameter, a dropout of ratio 0.
struct DropoutText {
  std::string param, value, launchArg;
};
DropoutText dropoutText(std::optional<APFloat> ratio, std::optional<uint64_t> seed) {
  if (!ratio)
    return {"", "z::AttentionDropout{}", ""};
  return {"uint64_t dropKey, ",
          llvm::formatv("z::AttentionDropout{{{0}, dropKey}",
                        cxxDouble(ratio->convertToDouble())),
          dropoutKeyArg(static_cast<int64_t>(*seed))};
}

/// A body as the lambda an attention kernel calls per score element:
/// (i, value) -> value.
std::string bodyLambda(const PrintedBody &body, StringRef arg) {
  return llvm::formatv("      [&](int64_t i, zc {0}) -> zc {{\n"
                       "{1}"
                       "        return {2};\n"
                       "      }",
                       arg, body.code, body.yielded[0]);
}

/// The launch of attention kernel `name` over `rows` rows of each (batch,
/// head) with `args`.
void printAttentionLaunch(ProgramPrinter &p, StringRef name, const AttentionText &a,
                          int64_t rows, StringRef args) {
  p.call(llvm::formatv("zeroc_rt_cuda_launch_status((int){0}launchWarps({1}, "
                       "{0}attentionBlocks({0}{2}, {3}), {0}kAttnThreads{4}), \"{1}\")",
                       kNs, name, a.shape, rows, args));
}

/// The elements of type `type` in a Chunk (zeroc_rt_cuda/chunk.h): 16
/// bytes' worth.
int64_t chunkSize(RankedTensorType type) {
  return 16 / zero::elementBytes(type.getElementType());
}

/// The loop of a fused elementwise kernel over chunks, which returns when
/// it ran; empty when the result's elements are not whole chunks. Each
/// thread takes the chunk at an index that is a multiple of its size, and
/// accesses the results and every input that has those elements at
/// consecutive offsets 16 bytes at a time, when all those are 16-byte
/// aligned (checked at run time: an input may be a view into another
/// tensor); else the element loop after it runs. The other inputs (a
/// scalar, a bias of fewer elements, a where's bytes) are read element by
/// element. Every element is computed by the same code either way.
FailureOr<std::string> printChunkLoop(ProgramPrinter &p, graph::FusedElementwiseOp op) {
  RankedTensorType type = op.getResultType();
  const int64_t n = type.getNumElements(), width = chunkSize(type);
  if (n < width || n % width)
    return std::string();
  const std::string s = storageType(type.getElementType());
  Block &block = op.getBody().front();
  SmallVector<bool> fromChunks(block.getNumArguments(), false);
  SmallVector<std::string> aligned;
  std::string loads, chunks, stores, writes;
  for (auto [k, arg] : llvm::enumerate(block.getArguments())) {
    auto t = llvm::cast<RankedTensorType>(arg.getType());
    if (t.getElementType().isInteger(1) || contiguousRun(t.getShape(), type.getShape()) % width)
      continue;
    fromChunks[k] = true;
    std::string at = broadcastOffset(t.getShape(), type.getShape(), "i0");
    if (at != "i0")
      at = "(" + at + ")";
    loads += llvm::formatv("      const z::Chunk<{0}> r{1} = z::loadChunk(in{1} + {2});\n", s,
                           k, at);
    aligned.push_back("in" + std::to_string(k));
  }
  FailureOr<PrintedBody> body =
      printBody(p, block, op.getInputs(), {}, type, "        ", "in", fromChunks);
  if (failed(body))
    return failure();
  for (auto [k, yielded] : llvm::enumerate(body->yielded)) {
    chunks += llvm::formatv("{0}w{1}", k ? ", " : "", k).str();
    aligned.push_back("out" + std::to_string(k));
    stores += llvm::formatv("        w{0}.e[j] = z::storeD<{1}>({2});\n", k, s, yielded);
    writes += llvm::formatv("      z::storeChunk(out{0} + i0, w{0});\n", k);
  }
  return llvm::formatv("  if (z::aligned16({0})) {{\n"
                       "    for (int64_t c = z::gridFirst(); c < n / {1}; c += z::gridStride()) {{\n"
                       "      const int64_t i0 = c * {1};\n"
                       "{2}"
                       "      z::Chunk<{3}> {4};\n"
                       "      ZRT_UNROLL\n"
                       "      for (int j = 0; j < {1}; ++j) {{\n"
                       "        [[maybe_unused]] const int64_t i = i0 + j;\n"
                       "{5}{6}"
                       "      }\n"
                       "{7}"
                       "    }\n"
                       "    return;\n"
                       "  }\n",
                       llvm::join(aligned, ", "), width, loads, s, chunks, body->code, stores,
                       writes)
      .str();
}

} // namespace

LogicalResult printFusedKernel(ProgramPrinter &p, graph::FusedElementwiseOp op,
                               StringRef name, std::string &definitions) {
  RankedTensorType type = op.getResultType();
  const std::string s = storageType(type.getElementType());
  Block &block = op.getBody().front();
  FailureOr<PrintedBody> body = printBody(p, block, op.getInputs(), {}, type, "    ");
  FailureOr<std::string> chunkLoop = printChunkLoop(p, op);
  if (failed(body) || failed(chunkLoop))
    return failure();
  // Rounding is idempotent: storing the rounded value stores the bits the
  // op's own kernel stores.
  std::string outParams, outArgs, stores;
  for (auto [k, yielded] : llvm::enumerate(body->yielded)) {
    outParams += llvm::formatv("{0}{1} *out{2}", k ? ", " : "", s, k).str();
    outArgs += llvm::formatv(", ({0} *)({1})", s, p.var(op.getResult(k))).str();
    stores += llvm::formatv("    out{0}[i] = z::storeD<{1}>({2});\n", k, s, yielded).str();
  }
  const int64_t n = type.getNumElements();
  const int64_t numOps =
      std::distance(block.without_terminator().begin(), block.without_terminator().end());
  definitions += kernelHead(op, llvm::formatv("{0} ops, {1} elements, yields {2}", numOps, n,
                                              op.getNumResults())
                                    .str(),
                            name, body->params + outParams + ", int64_t n", s, body->hoisted);
  definitions += *chunkLoop;
  definitions += llvm::formatv("  for (int64_t i = z::gridFirst(); i < n; i += z::gridStride()) {{\n"
                               "{0}{1}  }\n}\n\n",
                               body->code, stores)
                     .str();
  // A thread per chunk when there is a chunk loop, else per element.
  const int64_t threads = chunkLoop->empty() ? n : n / chunkSize(type);
  p.call(llvm::formatv("zeroc_rt_cuda_launch_status((int){0}launch({1}, "
                       "{0}blocksFor({2}), {0}kBlock{3}{5}{4}, (int64_t){6}), \"{1}\")",
                       kNs, name, threads, body->launchArgs, outArgs, body->keyArgs, n));
  return success();
}

LogicalResult printFusedSoftmaxKernel(ProgramPrinter &p, graph::FusedSoftmaxOp op,
                                      StringRef name, std::string &definitions) {
  auto type = llvm::cast<RankedTensorType>(op.getType());
  const std::string s = storageType(type.getElementType());
  FailureOr<PrintedBody> body =
      printBody(p, op.getBody().front(), op.getInputs(), {}, type, "        ");
  if (failed(body))
    return failure();
  // The prologue runs where the softmax reads an element (once per element
  // when the row fits the register cache, else at each of its reads: the
  // same bits each time).
  const RowsText rows = rowsOf(type, op.getAxis());
  definitions += kernelHead(op, "a softmax with an elementwise prologue", name,
                            body->params + s + " *out", s, body->hoisted);
  definitions += llvm::formatv(
      "  z::softmaxRows<zc>({0}, {1},\n"
      "      [&](int64_t i) -> zc {{\n"
      "{2}"
      "        return {3};\n"
      "      },\n"
      "      [&](int64_t i, zc v) {{ out[i] = z::storeD<{4}>(v); });\n"
      "}\n\n",
      rows.text, op.getLog() ? 1 : 0, body->code, body->yielded[0], s);
  printRowLaunch(p, name, rows.rows,
                 body->launchArgs + body->keyArgs +
                     llvm::formatv(", ({0} *)({1})", s, p.var(op.getResult())).str());
  return success();
}

LogicalResult printFusedSoftmaxGradKernel(ProgramPrinter &p, graph::FusedSoftmaxGradOp op,
                                          StringRef name, std::string &definitions) {
  auto type = llvm::cast<RankedTensorType>(op.getType());
  const std::string s = storageType(type.getElementType());
  // The gradient, rounded as graph.softmax_grad stores it, is the body's
  // first argument.
  FailureOr<PrintedBody> body =
      printBody(p, op.getBody().front(), op.getInputs(), {"gx"}, type, "        ");
  if (failed(body))
    return failure();
  const RowsText rows = rowsOf(type, op.getAxis());
  definitions += kernelHead(op, "a softmax gradient with an elementwise epilogue", name,
                            llvm::formatv("const {0} *y, const {0} *gy, {1}{0} *out", s,
                                          body->params)
                                .str(),
                            s, body->hoisted);
  definitions += llvm::formatv(
      "  z::softmaxGradRows<zc>({0}, {1},\n"
      "      [&](int64_t i) -> zc {{ return z::load(y[i]); },\n"
      "      [&](int64_t i) -> zc {{ return z::load(gy[i]); },\n"
      "      [&](int64_t i, zc gx) {{\n"
      "{2}"
      "        out[i] = z::storeD<{3}>({4});\n"
      "      });\n"
      "}\n\n",
      rows.text, op.getLog() ? 1 : 0, body->code, s, body->yielded[0]);
  printRowLaunch(p, name, rows.rows,
                 llvm::formatv(", (const {0} *)({1}), (const {0} *)({2})", s,
                               p.var(op.getY()), p.var(op.getGrad()))
                         .str() +
                     body->launchArgs + body->keyArgs +
                     llvm::formatv(", ({0} *)({1})", s, p.var(op.getResult())).str());
  return success();
}

} // namespace zeroc

namespace zeroc {

/// An attention kernel's q, kt and v as zeroc_rt_cuda/attention.h's AttnIn
/// (the kernel's parameters q, kt and v, and qb, ktb and vb for the
/// biases it has), the bias parameters (each followed by ", ") and the
/// launch's bias arguments (each after ", ").
struct AttentionInputs {
  std::string ins, biasParams, biasArgs;
};
AttentionInputs attentionInputs(ProgramPrinter &p, StringRef s, ValueRange operands,
                                ArrayRef<Value> biases) {
  static constexpr const char *kNames[] = {"q", "kt", "v"};
  AttentionInputs r;
  for (auto [k, x] : llvm::enumerate(operands)) {
    const bool transposed = k == 1; // kt: [B, H, D, Tk]
    r.ins += llvm::formatv("{0}z::AttnIn<{1}>{{{2}, {3}", k ? ", " : "", s, kNames[k],
                           operandStrides(x, transposed));
    if (Value bias = biases[k]) {
      r.ins += llvm::formatv(", {0}b, {1}", kNames[k], operandStrides(bias, transposed));
      r.biasParams += llvm::formatv("const {0} *{1}b, ", s, kNames[k]);
      r.biasArgs += llvm::formatv(", (const {0} *)({1})", s, p.var(bias));
    }
    r.ins += "}";
  }
  return r;
}

LogicalResult printFusedAttentionKernel(ProgramPrinter &p, graph::FusedAttentionOp op,
                                        StringRef name, std::string &definitions) {
  const AttentionText a = attentionOf(op.getQ(), op.getKt(), op.getCausal());
  RankedTensorType scores = op.getScoresType();
  FailureOr<PrintedBody> body =
      printBody(p, op.getPrologue().front(), op.getInputs(), {"s"}, scores, "        ");
  if (failed(body))
    return failure();
  if (!body->keyArgs.empty())
    return op.emitOpError("has a dropout in its prologue, which the CUDA emitter cannot print");
  auto q = llvm::cast<RankedTensorType>(op.getQ().getType());
  const DropoutText drop = dropoutText(op.getDropoutRatio(), op.getDropoutSeed());
  const AttentionInputs ins = attentionInputs(p, a.s, {op.getQ(), op.getKt(), op.getV()},
                                              {op.getQBias(), op.getKtBias(), op.getVBias()});
  definitions +=
      kernelHead(op,
                 llvm::formatv("softmax(prologue(q kt)) v, scores [{0}]",
                               llvm::make_range(scores.getShape().begin(), scores.getShape().end()))
                     .str(),
                 name,
                 llvm::formatv("const {0} *q, const {0} *kt, const {0} *v, {1}{2}{0} "
                               "*out, float *lse",
                               a.s, ins.biasParams + body->params, drop.param)
                     .str(),
                 a.s, body->hoisted);
  definitions += llvm::formatv("  z::attentionForward<{0}, {1}>(z::{2}, {6}, {3}, out, {4}, lse,\n"
                               "{5});\n"
                               "}\n\n",
                               a.s, a.dim, a.shape, ins.ins,
                               resultStrides(op.getOut(), q, op.getOutPerm(), false),
                               bodyLambda(*body, "s"), drop.value);
  printAttentionLaunch(
      p, name, a, a.tq,
      llvm::formatv(", (const {0} *)({1}), (const {0} *)({2}), (const {0} *)({3}){4}{7}, "
                    "({0} *)({5}), (float *)({6})",
                    a.s, p.var(op.getQ()), p.var(op.getKt()), p.var(op.getV()),
                    ins.biasArgs + body->launchArgs, p.var(op.getOut()), p.var(op.getLse()),
                    drop.launchArg)
          .str());
  return success();
}

namespace {

/// What a graph.fused_attention_grad's kernels and launches print: the
/// prologue and epilogue lambdas, q, kt and v's AttnIn arguments, the
/// kernels' extra parameters (biases, body inputs, the dropout key), the
/// hoisted loads, the dropout, the launches' q, kt and v and extra
/// arguments, and each tensor's strides.
struct AttentionGradText {
  std::string lambdas, ins, inputs, hoisted, drop, operands, extraArgs;
  std::string out, grad, gradQ, gradKt, gradV;
};

/// The dk/dv kernel `name`'s definition; with `dqAcc` (one walk), the one
/// that also adds dq into the accumulator.
std::string kvKernel(graph::FusedAttentionGradOp op, const AttentionText &a, StringRef name,
                     const AttentionGradText &t, bool dqAcc) {
  return kernelHead(op, dqAcc ? "dk and dv, dq added into its accumulator" : "dk and dv", name,
                    llvm::formatv("const {0} *q, const {0} *kt, const {0} *v, const "
                                  "{0} *dout, const float *lse, const float *delta, "
                                  "{1}{0} *dkt, {0} *dv{2}",
                                  a.s, t.inputs, dqAcc ? ", float *dqacc" : "")
                        .str(),
                    a.s, t.hoisted) +
         llvm::formatv("  z::{9}<{0}, {1}>(z::{2}, {8}, {3}, dout, {4}, lse, delta, dkt, {5}, "
                       "dv, {6},{10}\n"
                       "{7});\n"
                       "}\n\n",
                       a.s, a.dim, a.shape, t.ins, t.grad, t.gradKt, t.gradV, t.lambdas, t.drop,
                       dqAcc ? "attentionGradKVQ" : "attentionGradKV", dqAcc ? " dqacc," : "")
             .str();
}

/// The dk/dv kernel's launch (passing `dqacc` in one walk).
void printKVLaunch(ProgramPrinter &p, graph::FusedAttentionGradOp op, const AttentionText &a,
                   StringRef name, const AttentionGradText &t, bool dqAcc) {
  printAttentionLaunch(
      p, name, a, a.tk,
      llvm::formatv("{0}, (const {1} *)({2}), (const float *)({3}), (const float *)({4}){5}, "
                    "({1} *)({6}), ({1} *)({7}){8}",
                    t.operands, a.s, p.var(op.getGrad()), p.var(op.getLse()), p.var(op.getDelta()),
                    t.extraArgs, p.var(op.getGradKt()), p.var(op.getGradV()),
                    dqAcc ? ", dqacc" : "")
          .str());
}

/// A gradient whose kernels walk the scores once (walksScoresOnce;
/// docs/CudaTarget.md, "Attention in one kernel"): delta and a zeroed
/// float dq accumulator in the kernels' scratch, then dk and dv with dq
/// added into it, then dq rounded to the element type.
void printOneWalk(ProgramPrinter &p, graph::FusedAttentionGradOp op, const AttentionText &a,
                  StringRef name, const AttentionGradText &t, std::string &definitions) {
  const std::string nameDelta = (name + "_delta").str(), nameKV = (name + "_kv").str(),
                    nameQ = (name + "_q").str();
  definitions += kernelHead(op, "delta, and dq's accumulator zeroed", nameDelta,
                            llvm::formatv("const {0} *o, const {0} *dout, float *delta, "
                                          "float *dqacc",
                                          a.s)
                                .str(),
                            a.s, "");
  definitions += llvm::formatv("  z::attentionGradDelta<{0}, {1}>(z::{2}, o, {3}, dout, {4}, "
                               "delta, dqacc);\n"
                               "}\n\n",
                               a.s, a.dim, a.shape, t.out, t.grad);
  definitions += kvKernel(op, a, nameKV, t, true);
  definitions += kernelHead(op, "dq from its accumulator", nameQ,
                            llvm::formatv("const float *dqacc, {0} *dq", a.s).str(), a.s, "");
  definitions += llvm::formatv("  z::attentionGradStoreQ<{0}, {1}>(z::{2}, dqacc, dq, {3});\n"
                               "}\n\n",
                               a.s, a.dim, a.shape, t.gradQ);
  auto q = llvm::cast<RankedTensorType>(op.getQ().getType());
  p.line("{ float *dqacc = nullptr;");
  p.call(llvm::formatv("zeroc_rt_cuda_kernel_scratch({0}ull * sizeof(float), (void **)&dqacc)",
                       q.getNumElements()));
  printAttentionLaunch(p, nameDelta, a, a.tq,
                       llvm::formatv(", (const {0} *)({1}), (const {0} *)({2}), (float *)({3}), "
                                     "dqacc",
                                     a.s, p.var(op.getOut()), p.var(op.getGrad()),
                                     p.var(op.getDelta()))
                           .str());
  printKVLaunch(p, op, a, nameKV, t, true);
  printAttentionLaunch(p, nameQ, a, a.tq,
                       llvm::formatv(", dqacc, ({0} *)({1})", a.s, p.var(op.getGradQ())).str());
  p.line("}");
}

} // namespace

LogicalResult printFusedAttentionGradKernels(ProgramPrinter &p,
                                             graph::FusedAttentionGradOp op, StringRef name,
                                             std::string &definitions) {
  const AttentionText a = attentionOf(op.getQ(), op.getKt(), op.getCausal());
  auto q = llvm::cast<RankedTensorType>(op.getQ().getType());
  auto kt = llvm::cast<RankedTensorType>(op.getKt().getType());
  auto v = llvm::cast<RankedTensorType>(op.getV().getType());
  RankedTensorType scores = op.getScoresType();
  FailureOr<PrintedBody> prologue = printBody(p, op.getPrologue().front(),
                                              op.getPrologueInputs(), {"s"}, scores,
                                              "        ");
  if (failed(prologue))
    return failure();
  FailureOr<PrintedBody> epilogue = printBody(p, op.getEpilogue().front(),
                                              op.getEpilogueInputs(), {"g"}, scores,
                                              "        ", "ep");
  if (failed(epilogue))
    return failure();
  if (!prologue->keyArgs.empty() || !epilogue->keyArgs.empty())
    return op.emitOpError("has a dropout in its prologue or epilogue, which the CUDA "
                          "emitter cannot print");
  const AttentionInputs ins = attentionInputs(p, a.s, {op.getQ(), op.getKt(), op.getV()},
                                              {op.getQBias(), op.getKtBias(), op.getVBias()});
  const DropoutText drop = dropoutText(op.getDropoutRatio(), op.getDropoutSeed());
  AttentionGradText t;
  t.lambdas = bodyLambda(*prologue, "s") + ",\n" + bodyLambda(*epilogue, "g");
  t.ins = ins.ins;
  t.inputs = ins.biasParams + prologue->params + epilogue->params + drop.param;
  t.hoisted = prologue->hoisted + epilogue->hoisted;
  t.drop = drop.value;
  t.operands = llvm::formatv(", (const {0} *)({1}), (const {0} *)({2}), (const {0} *)({3})", a.s,
                             p.var(op.getQ()), p.var(op.getKt()), p.var(op.getV()));
  t.extraArgs = ins.biasArgs + prologue->launchArgs + epilogue->launchArgs + drop.launchArg;
  t.out = resultStrides(op.getOut(), q, op.getOutPerm(), false);
  t.grad = operandStrides(op.getGrad(), false);
  t.gradQ = resultStrides(op.getGradQ(), q, op.getGradQPerm(), false);
  t.gradKt = resultStrides(op.getGradKt(), kt, op.getGradKtPerm(), true);
  t.gradV = resultStrides(op.getGradV(), v, op.getGradVPerm(), false);
  if (op.walksScoresOnce()) {
    printOneWalk(p, op, a, name, t, definitions);
    return success();
  }
  // Two walks: dq first, its kernel writes delta, which the dk/dv kernel
  // reads.
  const std::string nameQ = (name + "_q").str(), nameKV = (name + "_kv").str();
  definitions += kernelHead(op, "dq and delta", nameQ,
                            llvm::formatv("const {0} *q, const {0} *kt, const {0} *v, const "
                                          "{0} *o, const {0} *dout, const float *lse, float "
                                          "*delta, {1}{0} *dq",
                                          a.s, t.inputs)
                                .str(),
                            a.s, t.hoisted);
  definitions += llvm::formatv(
      "  z::attentionGradQ<{0}, {1}>(z::{2}, {8}, {3}, o, {4}, dout, {5}, lse, delta, dq, {6},\n"
      "{7});\n"
      "}\n\n",
      a.s, a.dim, a.shape, t.ins, t.out, t.grad, t.gradQ, t.lambdas, t.drop);
  definitions += kvKernel(op, a, nameKV, t, false);
  printAttentionLaunch(
      p, nameQ, a, a.tq,
      llvm::formatv("{0}, (const {1} *)({2}), (const {1} *)({3}), (const float *)({4}), "
                    "(float *)({5}){6}, ({1} *)({7})",
                    t.operands, a.s, p.var(op.getOut()), p.var(op.getGrad()), p.var(op.getLse()),
                    p.var(op.getDelta()), t.extraArgs, p.var(op.getGradQ()))
          .str());
  printKVLaunch(p, op, a, nameKV, t, false);
  return success();
}

} // namespace zeroc
