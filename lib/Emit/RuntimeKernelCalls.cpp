//===- RuntimeKernelCalls.cpp - Graph ops as runtime kernel calls ---------===//
//
// One zeroc_rt_k_* call per graph op (zeroc_rt/kernels.h), its operands and
// results as tensor descriptors, its attributes as the call's arguments or
// a static initializer in a block around it.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTarget.h"

#include "zeroc/Dialect/Zero/BufferPlanning.h"
#include "zeroc/Emit/CxxText.h"
#include "zeroc/Emit/EmitTypes.h"
#include "zeroc/Support/Strides.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace zeroc {
namespace {

std::string i64Array(ArrayAttr a) {
  SmallVector<int64_t> v;
  for (Attribute x : a)
    v.push_back(llvm::cast<IntegerAttr>(x).getInt());
  return dimsInit(v);
}

/// A zeroc_rt_window_t initializer for a conv or pooling op's window
/// attributes (kernel empty for conv: the runtime reads the weight's dims).
std::string windowInit(ArrayAttr kernel, ArrayAttr strides, ArrayAttr pads,
                       ArrayAttr dilations, bool ceilMode) {
  auto ints = [](ArrayAttr a, size_t from, size_t n) {
    SmallVector<int64_t> v;
    for (size_t i = from; i < from + n; ++i)
      v.push_back(llvm::cast<IntegerAttr>(a[i]).getInt());
    return dimsInit(v);
  };
  size_t r = strides.size();
  return llvm::formatv("{{{0}, {1}, {2}, {3}, {4}, {5}, {6}}", r, int(ceilMode),
                       kernel ? ints(kernel, 0, r) : std::string("{0}"),
                       ints(strides, 0, r), ints(dilations, 0, r),
                       ints(pads, 0, r), ints(pads, r, r))
      .str();
}

/// zeroc_rt_k_matmul_strided of descriptors `a`, `b` and `out`, each read
/// or written at its strides (none: dense), in a block that declares them.
void printStridedMatmul(ProgramPrinter &p, const std::string &a, ArrayRef<int64_t> aStrides,
                        const std::string &b, ArrayRef<int64_t> bStrides, bool transA, bool transB,
                        const std::string &out, ArrayRef<int64_t> outStrides) {
  std::string decls;
  auto declare = [&](StringRef name, ArrayRef<int64_t> strides) -> std::string {
    if (strides.empty())
      return "nullptr";
    decls += (decls.empty() ? "" : ", ") + name.str() + "[] = " + dimsInit(strides);
    return name.str();
  };
  const std::string as = declare("lhs_strides", aStrides), bs = declare("rhs_strides", bStrides),
                    os = declare("out_strides", outStrides);
  p.line("{ static const int64_t " + decls + ";");
  p.call(llvm::formatv("zeroc_rt_k_matmul_strided({0}, {1}, {2}, {3}, {4}, {5}, {6}, {7})", a, as,
                       b, bs, int(transA), int(transB), out, os));
  p.line("}");
}

} // namespace

const char *unaryKind(Operation *op) {
  static const llvm::StringMap<const char *> unary = {
      {"graph.neg", "NEG"},   {"graph.sqrt", "SQRT"},
      {"graph.reciprocal", "RECIPROCAL"}, {"graph.relu", "RELU"},
      {"graph.tanh", "TANH"}, {"graph.sigmoid", "SIGMOID"},
      {"graph.erf", "ERF"},   {"graph.exp", "EXP"},
      {"graph.log", "LOG"},   {"graph.cos", "COS"},
      {"graph.sin", "SIN"},   {"graph.abs", "ABS"},
      {"graph.sign", "SIGN"}, {"graph.floor", "FLOOR"},
      {"graph.ceil", "CEIL"}, {"graph.round", "ROUND"}};
  if (auto g = llvm::dyn_cast<graph::GeluOp>(op))
    return g.getApproximate() == "tanh" ? "GELU_TANH" : "GELU";
  return unary.lookup(op->getName().getStringRef());
}

const char *binaryKind(StringRef opName) {
  static const llvm::StringMap<const char *> binary = {
      {"graph.add", "ADD"}, {"graph.sub", "SUB"}, {"graph.mul", "MUL"},
      {"graph.div", "DIV"}, {"graph.pow", "POW"}, {"graph.equal", "EQUAL"},
      {"graph.max", "MAX"}, {"graph.min", "MIN"}};
  return binary.lookup(opName);
}

LogicalResult RuntimeTarget::printKernelCall(ProgramPrinter &p, Operation *op) {
  auto d = [&](Value v) { return "P(" + p.desc(v) + ")"; };
  auto out = [&](unsigned i = 0) { return "P(" + p.desc(op->getResult(i)) + ")"; };
  StringRef name = op->getName().getStringRef();
  if (const char *kind = unaryKind(op)) {
    p.call(llvm::formatv("zeroc_rt_k_unary(ZEROC_RT_UNARY_{0}, {1}, {2})", kind,
                         d(op->getOperand(0)), out()));
    return success();
  }
  if (const char *kind = binaryKind(name)) {
    p.call(llvm::formatv("zeroc_rt_k_binary(ZEROC_RT_BINARY_{0}, {1}, {2}, {3})",
                         kind, d(op->getOperand(0)), d(op->getOperand(1)), out()));
    return success();
  }
  // Masks and clip (GraphElementwiseOps.td): attributes name the
  // runtime enum or the bounds.
  if (auto c = llvm::dyn_cast<graph::CompareOp>(op)) {
    static const llvm::StringMap<const char *> preds = {
        {"lt", "LESS"}, {"le", "LESS_EQUAL"}, {"gt", "GREATER"},
        {"ge", "GREATER_EQUAL"}};
    p.call(llvm::formatv("zeroc_rt_k_binary(ZEROC_RT_BINARY_{0}, {1}, {2}, {3})",
                         preds.lookup(c.getPredicate()), d(c.getLhs()),
                         d(c.getRhs()), out()));
    return success();
  }
  if (auto l = llvm::dyn_cast<graph::LogicalOp>(op)) {
    p.call(llvm::formatv("zeroc_rt_k_binary(ZEROC_RT_BINARY_{0}, {1}, {2}, {3})",
                         l.getOp().upper(), d(l.getLhs()), d(l.getRhs()), out()));
    return success();
  }
  if (llvm::isa<graph::NotOp, graph::IsNaNOp, graph::IsInfOp>(op)) {
    const char *kind = "NOT";
    if (llvm::isa<graph::IsNaNOp>(op))
      kind = "IS_NAN";
    if (auto inf = llvm::dyn_cast<graph::IsInfOp>(op))
      kind = !inf.getDetectNegative()   ? "IS_POS_INF"
             : !inf.getDetectPositive() ? "IS_NEG_INF"
                                        : "IS_INF";
    p.call(llvm::formatv("zeroc_rt_k_predicate(ZEROC_RT_PREDICATE_{0}, {1}, {2})",
                         kind, d(op->getOperand(0)), out()));
    return success();
  }
  auto bounds = [&](std::optional<APFloat> lo, std::optional<APFloat> hi) {
    return llvm::formatv("{0}, {1}, {2}, {3}", int(lo.has_value()),
                         cxxDouble(lo ? lo->convertToDouble() : 0.0),
                         int(hi.has_value()),
                         cxxDouble(hi ? hi->convertToDouble() : 0.0))
        .str();
  };
  if (auto c = llvm::dyn_cast<graph::ClipOp>(op)) {
    p.call(llvm::formatv("zeroc_rt_k_clip({0}, {1}, {2})", d(c.getInput()),
                         bounds(c.getMin(), c.getMax()), out()));
    return success();
  }
  if (auto c = llvm::dyn_cast<graph::ClipGradOp>(op)) {
    p.call(llvm::formatv("zeroc_rt_k_clip_grad({0}, {1}, {2}, {3})", d(c.getX()),
                         bounds(c.getMin(), c.getMax()), d(c.getGrad()), out()));
    return success();
  }
  if (auto ug = llvm::dyn_cast<graph::UnaryGradOp>(op)) {
    // The forward value the derivative does not read is absent: NULL.
    auto forward = [&](Value v) { return v ? d(v) : std::string("nullptr"); };
    p.call(llvm::formatv("zeroc_rt_k_unary_grad(ZEROC_RT_UNARY_{0}, {1}, {2}, {3}, {4})",
                         ug.getOp().upper(), forward(ug.getX()), forward(ug.getY()),
                         d(ug.getGrad()), out()));
    return success();
  }
  if (auto w = llvm::dyn_cast<graph::WhereOp>(op)) {
    p.call(llvm::formatv("zeroc_rt_k_where({0}, {1}, {2}, {3})", d(w.getCondition()),
                         d(w.getOnTrue()), d(w.getOnFalse()), out()));
    return success();
  }
  if (llvm::isa<graph::CastOp>(op)) {
    p.call("zeroc_rt_k_cast(" + d(op->getOperand(0)) + ", " + out() + ")");
    return success();
  }
  if (llvm::isa<graph::ExpandOp>(op)) {
    p.call("zeroc_rt_k_broadcast(" + d(op->getOperand(0)) + ", " + out() + ")");
    return success();
  }
  if (llvm::isa<graph::SumToOp>(op)) {
    p.call("zeroc_rt_k_sum_to(" + d(op->getOperand(0)) + ", " + out() + ")");
    return success();
  }
  if (auto dr = llvm::dyn_cast<graph::DropoutOp>(op)) {
    p.call(llvm::formatv("zeroc_rt_k_dropout({0}, {1}, {2}ull, "
                         "zeroc_rt_engine_dropout_counter(e), {3})",
                         d(dr.getInput()), cxxDouble(dr.getRatio().convertToDouble()),
                         dr.getSeed(), out()));
    return success();
  }
  if (auto mm = llvm::dyn_cast<graph::MatMulOp>(op)) {
    auto lhsView = mm.getLhs().getDefiningOp<graph::StridedViewOp>();
    auto rhsView = mm.getRhs().getDefiningOp<graph::StridedViewOp>();
    std::optional<ArrayRef<int64_t>> perm = mm.getResultPerm();
    if (lhsView || rhsView || perm) {
      // A view's pointer is its input's plus the offset; the call takes its
      // strides. A product stored transposed is described by its own dims
      // (the product's) at the strides of the stored tensor.
      std::string outDesc = out();
      SmallVector<int64_t> outStrides;
      if (perm) {
        auto stored = llvm::cast<RankedTensorType>(mm.getType());
        SmallVector<int64_t> dims(perm->size());
        for (size_t j = 0; j < perm->size(); ++j)
          dims[(*perm)[j]] = stored.getDimSize(j);
        outStrides = permutedStrides(dims, perm);
        outDesc = "P(" +
                  p.descOf(p.var(mm.getResult()),
                           RankedTensorType::get(dims, stored.getElementType())) +
                  ")";
      }
      printStridedMatmul(p, d(mm.getLhs()), lhsView ? lhsView.getStrides() : ArrayRef<int64_t>(),
                         d(mm.getRhs()), rhsView ? rhsView.getStrides() : ArrayRef<int64_t>(),
                         mm.getTransA(), mm.getTransB(), outDesc, outStrides);
      return success();
    }
    if (mm.getTransA() || mm.getTransB())
      p.call(llvm::formatv("zeroc_rt_k_matmul_trans({0}, {1}, {2}, {3}, {4})",
                           d(mm.getLhs()), d(mm.getRhs()), int(mm.getTransA()),
                           int(mm.getTransB()), out()));
    else
      p.call("zeroc_rt_k_matmul(" + d(mm.getLhs()) + ", " + d(mm.getRhs()) + ", " +
             out() + ")");
    return success();
  }
  if (auto g = llvm::dyn_cast<graph::GemmOp>(op)) {
    // Rows at a pitch (zero-plan-buffers' row-pitch-alignment): the plain
    // product, read and written at the recorded strides.
    SmallVector<int64_t> sa = zero::recordedResultStrides(g.getA()),
                         sb = zero::recordedResultStrides(g.getB()),
                         so = zero::recordedResultStrides(g.getResult());
    if (!sa.empty() || !sb.empty() || !so.empty()) {
      if (!zero::isPlainGemmProduct(g))
        return op->emitOpError("reads or writes rows at a pitch but scales or adds to its "
                               "product (zero-plan-buffers pads only plain products)");
      printStridedMatmul(p, d(g.getA()), sa, d(g.getB()), sb, g.getTransA(), g.getTransB(), out(),
                         so);
      return success();
    }
    p.call(llvm::formatv("zeroc_rt_k_gemm({0}, {1}, {2}, {3}, {4}, {5}, {6}, {7})",
                         d(g.getA()), d(g.getB()), g.getC() ? d(g.getC()) : "nullptr",
                         cxxDouble(g.getAlpha().convertToDouble()), cxxDouble(g.getBeta().convertToDouble()),
                         int(g.getTransA()), int(g.getTransB()), out()));
    return success();
  }
  if (auto g = llvm::dyn_cast<graph::FusedGemmBiasGradOp>(op)) {
    p.call(llvm::formatv("zeroc_rt_k_gemm_bias_grad({0}, {1}, {2}, {3}, {4}, {5}, {6})",
                         d(g.getA()), d(g.getB()), int(g.getTransA()), int(g.getTransB()),
                         g.getSummed(), out(0), out(1)));
    return success();
  }
  auto reduce = [&](const char *kind, Value in, ArrayAttr axes) {
    uint32_t mask = 0;
    for (Attribute a : axes)
      mask |= 1u << llvm::cast<IntegerAttr>(a).getInt();
    p.call(llvm::formatv("zeroc_rt_k_reduce(ZEROC_RT_REDUCE_OP_{0}, {1}, {2}u, {3})",
                         kind, d(in), mask, out()));
    return success();
  };
  if (auto rs = llvm::dyn_cast<graph::ReduceSumOp>(op))
    return reduce("SUM", rs.getInput(), rs.getAxes());
  if (auto rm = llvm::dyn_cast<graph::ReduceMeanOp>(op))
    return reduce("MEAN", rm.getInput(), rm.getAxes());
  if (auto rx = llvm::dyn_cast<graph::ReduceMaxOp>(op))
    return reduce("MAX", rx.getInput(), rx.getAxes());
  if (auto sm = llvm::dyn_cast<graph::SoftmaxOp>(op)) {
    p.call(llvm::formatv("zeroc_rt_k_softmax({0}, {1}, 0, {2})", d(sm.getInput()),
                         sm.getAxis(), out()));
    return success();
  }
  if (auto sm = llvm::dyn_cast<graph::LogSoftmaxOp>(op)) {
    p.call(llvm::formatv("zeroc_rt_k_softmax({0}, {1}, 1, {2})", d(sm.getInput()),
                         sm.getAxis(), out()));
    return success();
  }
  if (auto sg = llvm::dyn_cast<graph::SoftmaxGradOp>(op)) {
    p.call(llvm::formatv("zeroc_rt_k_softmax_grad({0}, {1}, {2}, {3}, {4})",
                         d(sg.getY()), d(sg.getGrad()), sg.getAxis(),
                         int(sg.getLog()), out()));
    return success();
  }
  if (auto ln = llvm::dyn_cast<graph::LayerNormOp>(op)) {
    p.call(llvm::formatv("zeroc_rt_k_layer_norm({0}, {1}, {2}, {3}, {4}, {5})",
                         d(ln.getInput()), d(ln.getScale()),
                         ln.getBias() ? d(ln.getBias()) : "nullptr", ln.getAxis(),
                         cxxDouble(ln.getEpsilon().convertToDouble()), out()));
    return success();
  }
  if (auto lg = llvm::dyn_cast<graph::LayerNormGradOp>(op)) {
    p.call(llvm::formatv("zeroc_rt_k_layer_norm_grad({0}, {1}, {2}, {3}, {4}, {5}, {6}, {7})",
                         d(lg.getInput()), d(lg.getScale()), lg.getAxis(),
                         cxxDouble(lg.getEpsilon().convertToDouble()), d(lg.getGrad()), out(0),
                         out(1), out(2)));
    return success();
  }
  if (auto lg = llvm::dyn_cast<graph::FusedLayerNormGradAddOp>(op)) {
    p.call(llvm::formatv("zeroc_rt_k_layer_norm_grad_add({0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}, "
                         "{8})",
                         d(lg.getInput()), d(lg.getScale()), lg.getAxis(),
                         cxxDouble(lg.getEpsilon().convertToDouble()), d(lg.getGrad()),
                         d(lg.getAddend()), out(0), out(1), out(2)));
    return success();
  }
  // A cross-entropy's scores, labels, reduction and ignored index (the
  // attribute's getter is unsigned: the index is printed signed), the
  // arguments all three of its runtime calls start with.
  auto lossArgs = [&](Value scores, Value labels, StringRef reduction,
                      std::optional<uint64_t> ignore) {
    const char *r = reduction == "sum"    ? "ZEROC_RT_LOSS_SUM"
                    : reduction == "none" ? "ZEROC_RT_LOSS_NONE"
                                          : "ZEROC_RT_LOSS_MEAN";
    return llvm::formatv("{0}, {1}, {2}, {3}, {4}", d(scores), d(labels), r,
                         int(ignore.has_value()),
                         cxxInt64(static_cast<int64_t>(ignore.value_or(0))))
        .str();
  };
  // Rows at a pitch (zero-plan-buffers' row-pitch-alignment): the scores'
  // and their gradient's, the same; any of the three ops is one call.
  auto pitched = [&](Value scores, Value grad) -> std::optional<int64_t> {
    SmallVector<int64_t> rows = zero::recordedResultStrides(scores),
                         gradRows = grad ? zero::recordedResultStrides(grad) : rows;
    if (rows.empty() && gradRows.empty())
      return std::nullopt;
    if (rows.size() != 2 || rows != gradRows || rows[1] != 1)
      return -1;
    return rows[0];
  };
  auto printPitched = [&](Value scores, Value labels, StringRef reduction,
                          std::optional<uint64_t> ignore, Value gradOut, Value loss, Value grad,
                          int64_t pitch) -> LogicalResult {
    if (pitch < 0)
      return op->emitOpError("has scores and a gradient stored at different strides; only one "
                             "row pitch for both is supported");
    auto arg = [&](Value v) { return v ? d(v) : std::string("nullptr"); };
    p.call(llvm::formatv("zeroc_rt_k_softmax_cross_entropy_pitched({0}, {1}, {2}, {3}, {4})",
                         lossArgs(scores, labels, reduction, ignore), arg(gradOut), arg(loss),
                         arg(grad), cxxInt64(pitch)));
    return success();
  };
  if (auto l = llvm::dyn_cast<graph::SoftmaxCrossEntropyLossOp>(op)) {
    if (std::optional<int64_t> pitch = pitched(l.getScores(), Value()))
      return printPitched(l.getScores(), l.getLabels(), l.getReduction(), l.getIgnoreIndex(),
                          Value(), l.getResult(), Value(), *pitch);
    p.call(llvm::formatv(
        "zeroc_rt_k_softmax_cross_entropy({0}, {1})",
        lossArgs(l.getScores(), l.getLabels(), l.getReduction(), l.getIgnoreIndex()), out()));
    return success();
  }
  if (auto l = llvm::dyn_cast<graph::SoftmaxCrossEntropyLossGradOp>(op)) {
    if (std::optional<int64_t> pitch = pitched(l.getScores(), l.getResult()))
      return printPitched(l.getScores(), l.getLabels(), l.getReduction(), l.getIgnoreIndex(),
                          l.getGrad(), Value(), l.getResult(), *pitch);
    p.call(
        llvm::formatv("zeroc_rt_k_softmax_cross_entropy_grad({0}, {1}, {2})",
                      lossArgs(l.getScores(), l.getLabels(), l.getReduction(), l.getIgnoreIndex()),
                      d(l.getGrad()), out()));
    return success();
  }
  if (auto l = llvm::dyn_cast<graph::FusedSoftmaxCrossEntropyOp>(op)) {
    if (std::optional<int64_t> pitch = pitched(l.getScores(), l.getGradScores()))
      return printPitched(l.getScores(), l.getLabels(), l.getReduction(), l.getIgnoreIndex(),
                          l.getGrad(), l.getLoss(), l.getGradScores(), *pitch);
    p.call(
        llvm::formatv("zeroc_rt_k_softmax_cross_entropy_with_grad({0}, {1}, {2}, {3})",
                      lossArgs(l.getScores(), l.getLabels(), l.getReduction(), l.getIgnoreIndex()),
                      d(l.getGrad()), out(0), out(1)));
    return success();
  }
  if (auto g = llvm::dyn_cast<graph::GatherOp>(op)) {
    p.call(llvm::formatv("zeroc_rt_k_gather({0}, {1}, {2}, {3})", d(g.getData()),
                         d(g.getIndices()), g.getAxis(), out()));
    return success();
  }
  if (auto g = llvm::dyn_cast<graph::GatherGradOp>(op)) {
    if (auto pad = g.getPaddingIdx()) {
      p.call(llvm::formatv("zeroc_rt_k_gather_grad_padded({0}, {1}, {2}ll, {3})",
                           d(g.getGrad()), d(g.getIndices()), *pad, out()));
      return success();
    }
    p.call(llvm::formatv("zeroc_rt_k_gather_grad({0}, {1}, {2}, {3})", d(g.getGrad()),
                         d(g.getIndices()), g.getAxis(), out()));
    return success();
  }
  if (auto t = llvm::dyn_cast<graph::TransposeOp>(op)) {
    p.line("{ static const int64_t perm[] = " + i64Array(t.getPerm()) + ";");
    p.call("zeroc_rt_k_transpose(" + d(t.getInput()) + ", perm, " + out() + ")");
    p.line("}");
    return success();
  }
  if (auto s = llvm::dyn_cast<graph::SliceOp>(op)) {
    p.line("{ static const int64_t starts[] = " + i64Array(s.getStarts()) +
           ", steps[] = " + i64Array(s.getSteps()) + ";");
    p.call("zeroc_rt_k_slice(" + d(s.getInput()) + ", starts, steps, " + out() + ")");
    p.line("}");
    return success();
  }
  if (auto s = llvm::dyn_cast<graph::SliceGradOp>(op)) {
    p.line("{ static const int64_t starts[] = " + i64Array(s.getStarts()) +
           ", steps[] = " + i64Array(s.getSteps()) + ";");
    p.call("zeroc_rt_k_slice_grad(" + d(s.getGrad()) + ", starts, steps, " + out() + ")");
    p.line("}");
    return success();
  }
  if (auto c = llvm::dyn_cast<graph::ConcatOp>(op)) {
    // zero-plan-buffers had the operands' producers write them here.
    if (c->hasAttr(zero::kOperandsInPlaceAttr)) {
      p.line("// graph.concat: its operands were written in place");
      return success();
    }
    // The input descriptors as named temporaries: cat<id>_<i>.
    int id = p.uniqueId();
    std::string list;
    for (auto [i, in] : llvm::enumerate(c.getInputs())) {
      p.line(llvm::formatv("zeroc_rt_tensor_t cat{0}_{1} = {2};", id, i, p.desc(in)));
      list += llvm::formatv("{0}&cat{1}_{2}", i ? ", " : "", id, i).str();
    }
    p.line(llvm::formatv("{ const zeroc_rt_tensor_t *cats[] = {{{0}};", list));
    p.call(llvm::formatv("zeroc_rt_k_concat(cats, {0}, {1}, {2})",
                         c.getInputs().size(), c.getAxis(), out()));
    p.line("}");
    return success();
  }
  if (auto t = llvm::dyn_cast<graph::TriluOp>(op)) {
    p.call(llvm::formatv("zeroc_rt_k_trilu({0}, {1}, {2}, {3})", d(t.getInput()),
                         int(t.getUpper()), t.getK(), out()));
    return success();
  }
  // Convolution, pooling, batch norm: one runtime call each, the window
  // as a static zeroc_rt_window_t.
  auto windowCall = [&](const std::string &init, const std::string &callText) {
    p.line("{ static const zeroc_rt_window_t win = " + init + ";");
    p.call(callText);
    p.line("}");
    return success();
  };
  if (auto c = llvm::dyn_cast<graph::ConvOp>(op))
    return windowCall(
        windowInit({}, c.getStrides(), c.getPads(), c.getDilations(), false),
        llvm::formatv("zeroc_rt_k_conv({0}, {1}, {2}, &win, {3}, {4})",
                      d(c.getInput()), d(c.getWeight()),
                      c.getBias() ? d(c.getBias()) : "nullptr", c.getGroup(), out()));
  if (auto c = llvm::dyn_cast<graph::ConvGradInputOp>(op))
    return windowCall(
        windowInit({}, c.getStrides(), c.getPads(), c.getDilations(), false),
        llvm::formatv("zeroc_rt_k_conv_grad_input({0}, {1}, &win, {2}, {3})",
                      d(c.getWeight()), d(c.getGrad()), c.getGroup(), out()));
  if (auto c = llvm::dyn_cast<graph::ConvGradWeightOp>(op))
    return windowCall(
        windowInit({}, c.getStrides(), c.getPads(), c.getDilations(), false),
        llvm::formatv("zeroc_rt_k_conv_grad_weight({0}, {1}, &win, {2}, {3})",
                      d(c.getInput()), d(c.getGrad()), c.getGroup(), out()));
  if (auto pool = llvm::dyn_cast<graph::MaxPoolOp>(op))
    return windowCall(windowInit(pool.getKernelShape(), pool.getStrides(), pool.getPads(),
                                 pool.getDilations(), pool.getCeilMode()),
                      "zeroc_rt_k_pool(ZEROC_RT_POOL_MAX, " + d(pool.getInput()) +
                          ", &win, 0, " + out() + ")");
  if (auto pool = llvm::dyn_cast<graph::AvgPoolOp>(op))
    return windowCall(windowInit(pool.getKernelShape(), pool.getStrides(), pool.getPads(),
                                 pool.getDilations(), pool.getCeilMode()),
                      llvm::formatv("zeroc_rt_k_pool(ZEROC_RT_POOL_AVG, {0}, &win, {1}, {2})",
                                    d(pool.getInput()), int(pool.getCountIncludePad()), out()));
  if (auto pool = llvm::dyn_cast<graph::MaxPoolGradOp>(op))
    return windowCall(windowInit(pool.getKernelShape(), pool.getStrides(), pool.getPads(),
                                 pool.getDilations(), pool.getCeilMode()),
                      llvm::formatv("zeroc_rt_k_pool_grad(ZEROC_RT_POOL_MAX, {0}, {1}, &win, 0, {2})",
                                    d(pool.getInput()), d(pool.getGrad()), out()));
  if (auto pool = llvm::dyn_cast<graph::AvgPoolGradOp>(op))
    return windowCall(windowInit(pool.getKernelShape(), pool.getStrides(), pool.getPads(),
                                 pool.getDilations(), pool.getCeilMode()),
                      llvm::formatv("zeroc_rt_k_pool_grad(ZEROC_RT_POOL_AVG, nullptr, {0}, &win, {1}, {2})",
                                    d(pool.getGrad()), int(pool.getCountIncludePad()), out()));
  if (auto bn = llvm::dyn_cast<graph::BatchNormOp>(op)) {
    p.call(llvm::formatv("zeroc_rt_k_batch_norm({0}, {1}, {2}, {3}, {4})",
                         d(bn.getInput()), d(bn.getScale()), d(bn.getBias()),
                         cxxDouble(bn.getEpsilon().convertToDouble()), out()));
    return success();
  }
  if (auto bg = llvm::dyn_cast<graph::BatchNormGradOp>(op)) {
    p.call(llvm::formatv("zeroc_rt_k_batch_norm_grad({0}, {1}, {2}, {3}, {4}, {5}, {6})",
                         d(bg.getInput()), d(bg.getScale()),
                         cxxDouble(bg.getEpsilon().convertToDouble()), d(bg.getGrad()),
                         out(0), out(1), out(2)));
    return success();
  }
  // Pad, element gathers, scatters, cumsum (GraphMovementOps.td).
  auto padMode = [](StringRef m) {
    return m == "reflect" ? "ZEROC_RT_PAD_REFLECT"
           : m == "edge"  ? "ZEROC_RT_PAD_EDGE"
           : m == "wrap"  ? "ZEROC_RT_PAD_WRAP"
                          : "ZEROC_RT_PAD_CONSTANT";
  };
  if (auto pad = llvm::dyn_cast<graph::PadOp>(op)) {
    p.line("{ static const int64_t pads[] = " + i64Array(pad.getPads()) + ";");
    p.call(llvm::formatv("zeroc_rt_k_pad({0}, pads, {1}, {2}, {3})",
                         d(pad.getInput()), padMode(pad.getMode()),
                         cxxDouble(pad.getValue().convertToDouble()), out()));
    p.line("}");
    return success();
  }
  if (auto pad = llvm::dyn_cast<graph::PadGradOp>(op)) {
    p.line("{ static const int64_t pads[] = " + i64Array(pad.getPads()) + ";");
    p.call(llvm::formatv("zeroc_rt_k_pad_grad({0}, pads, {1}, {2})",
                         d(pad.getGrad()), padMode(pad.getMode()), out()));
    p.line("}");
    return success();
  }
  if (auto g = llvm::dyn_cast<graph::GatherElementsOp>(op)) {
    p.call(llvm::formatv("zeroc_rt_k_gather_elements({0}, {1}, {2}, {3})",
                         d(g.getData()), d(g.getIndices()), g.getAxis(), out()));
    return success();
  }
  if (auto g = llvm::dyn_cast<graph::GatherElementsGradOp>(op)) {
    p.call(llvm::formatv("zeroc_rt_k_gather_elements_grad({0}, {1}, {2}, {3})",
                         d(g.getGrad()), d(g.getIndices()), g.getAxis(), out()));
    return success();
  }
  if (auto g = llvm::dyn_cast<graph::GatherNDOp>(op)) {
    p.call(llvm::formatv("zeroc_rt_k_gather_nd({0}, {1}, {2})", d(g.getData()),
                         d(g.getIndices()), out()));
    return success();
  }
  auto scatterReduction = [](StringRef r) {
    return r == "add"   ? "ZEROC_RT_SCATTER_ADD"
           : r == "mul" ? "ZEROC_RT_SCATTER_MUL"
                        : "ZEROC_RT_SCATTER_NONE";
  };
  if (auto s = llvm::dyn_cast<graph::ScatterNDOp>(op)) {
    p.call(llvm::formatv("zeroc_rt_k_scatter_nd({0}, {1}, {2}, {3}, {4})",
                         d(s.getData()), d(s.getIndices()), d(s.getUpdates()),
                         scatterReduction(s.getReduction()), out()));
    return success();
  }
  if (auto s = llvm::dyn_cast<graph::ScatterElementsOp>(op)) {
    p.call(llvm::formatv("zeroc_rt_k_scatter_elements({0}, {1}, {2}, {3}, {4}, {5})",
                         d(s.getData()), d(s.getIndices()), d(s.getUpdates()),
                         s.getAxis(), scatterReduction(s.getReduction()), out()));
    return success();
  }
  if (auto c = llvm::dyn_cast<graph::CumSumOp>(op)) {
    p.call(llvm::formatv("zeroc_rt_k_cumsum({0}, {1}, {2}, {3}, {4})",
                         d(c.getInput()), c.getAxis(), int(c.getExclusive()),
                         int(c.getReverse()), out()));
    return success();
  }
  return p.unsupported(op);
}
} // namespace zeroc
