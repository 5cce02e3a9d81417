//===- ConvertShapeOps.cpp - shape and data-movement ONNX ops -------------===//
//
// Constant, Identity, Shape, ConstantOfShape, Reshape, Unsqueeze, Squeeze,
// Concat, Gather, Slice, Split, Transpose, Expand, Cast, Equal, Where, Trilu.
// When every input is known at compile time the result is folded on the host;
// otherwise a graph op is created.
//
//===----------------------------------------------------------------------===//

#include "NodeConverter.h"
#include "OpVersions.h"

#include "zeroc/Dialect/Graph/GraphOps.h"

#include <cmath>

using namespace mlir;

namespace zeroc::onnximport {

namespace {

using TP = onnx::TensorProto;

std::vector<int64_t> broadcastOrThrow(const std::vector<int64_t> &a,
                                      const std::vector<int64_t> &b) {
  FailureOr<SmallVector<int64_t>> r = graph::broadcastShapes(a, b);
  if (failed(r))
    throw ImportError("shapes are not broadcast-compatible");
  return std::vector<int64_t>(r->begin(), r->end());
}

} // namespace

void reshapeTo(NodeConverter &c, const std::vector<int64_t> &dims) {
  Entry &in = c.input(0);
  if (checkedNumElements(dims) != in.type.getNumElements())
    throw ImportError("cannot reshape " + std::to_string(in.type.getNumElements()) +
                      " elements to the requested shape");
  if (in.constant) {
    HostTensor h = *in.constant;
    h.dims = dims;
    c.setOutput(0, std::move(h));
    return;
  }
  RankedTensorType t = RankedTensorType::get(dims, in.type.getElementType());
  if (t == in.type) {
    c.forward(0, 0);
    return;
  }
  c.setOutput(0, c.create(graph::ReshapeOp::getOperationName(), {c.value(0)},
                          {}, {t})
                     ->getResult(0));
}

namespace {

void convertConstant(NodeConverter &c) {
  HostTensor h;
  if (const auto *a = c.attr("value")) {
    if (a->type() != onnx::AttributeProto::TENSOR)
      throw ImportError("attribute 'value' must be a tensor");
    RankedTensorType t = c.gb.tensorType(
        std::vector<int64_t>(a->t().dims().begin(), a->t().dims().end()),
        a->t().data_type());
    if (t.getNumElements() > kMaxFoldElements) {
      Entry e;
      e.type = t;
      e.attr = c.gb.toAttr(a->t());
      c.gb.valueTable()[c.node.output(0)] = e;
      return;
    }
    h = c.gb.toHost(a->t());
  } else if (c.attr("value_float")) {
    h.dtype = TP::FLOAT;
    h.floats = {c.attrFloatValue("value_float", 0)};
  } else if (const auto *a = c.attr("value_floats")) {
    h.dtype = TP::FLOAT;
    h.floats.assign(a->floats().begin(), a->floats().end());
    h.dims = {static_cast<int64_t>(h.floats.size())};
  } else if (c.attr("value_int")) {
    h.dtype = TP::INT64;
    h.ints = {c.attrInt("value_int", 0)};
  } else if (auto ints = c.attrInts("value_ints")) {
    h.dtype = TP::INT64;
    h.ints = *ints;
    h.dims = {static_cast<int64_t>(h.ints.size())};
  } else {
    throw ImportError("only tensor, float(s) and int(s) constants are supported");
  }
  c.setOutput(0, std::move(h));
}

void convertShape(NodeConverter &c) {
  RankedTensorType t = c.type(0);
  int64_t rank = t.getRank();
  int64_t start = c.attrInt("start", 0), end = c.attrInt("end", rank);
  auto clampDim = [&](int64_t v) {
    v = v < 0 ? v + rank : v;
    return std::max<int64_t>(0, std::min(v, rank));
  };
  start = clampDim(start);
  end = std::max(start, clampDim(end));
  HostTensor h;
  h.dtype = TP::INT64;
  h.ints.assign(t.getShape().begin() + start, t.getShape().begin() + end);
  h.dims = {end - start};
  c.setOutput(0, std::move(h));
}

void convertConstantOfShape(NodeConverter &c) {
  std::vector<int64_t> dims = c.constInts(0, "shape");
  HostTensor fill;
  fill.dtype = TP::FLOAT;
  fill.floats = {0.0};
  if (const auto *a = c.attr("value")) {
    if (a->type() != onnx::AttributeProto::TENSOR)
      throw ImportError("attribute 'value' must be a tensor");
    fill = c.gb.toHost(a->t());
    if (fill.numElements() != 1)
      throw ImportError("attribute 'value' must hold exactly one element");
  }
  RankedTensorType t = c.typeWith(dims, fill.dtype);
  if (t.getNumElements() > kMaxFoldElements) {
    Entry e;
    e.type = t;
    HostTensor one = fill;
    one.dims = {};
    e.attr = DenseElementsAttr::get(
        t, one.toAttr(RankedTensorType::get({}, t.getElementType()))
               .getSplatValue<Attribute>());
    c.gb.valueTable()[c.node.output(0)] = e;
    return;
  }
  HostTensor h = fill;
  h.dims = dims;
  h.resize(t.getNumElements());
  for (int64_t i = 0; i < t.getNumElements(); ++i)
    h.set(i, fill.getAsDouble(0));
  if (!h.isFloat())
    for (auto &v : h.ints)
      v = fill.ints[0];
  c.setOutput(0, std::move(h));
}

void convertReshape(NodeConverter &c) {
  std::vector<int64_t> in = shapeVector(c.type(0));
  std::vector<int64_t> target = c.constInts(1, "shape");
  bool allowZero = c.attrInt("allowzero", 0) != 0;
  int64_t known = 1, inferAt = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == 0 && !allowZero) {
      if (i >= in.size())
        throw ImportError("shape entry 0 at position " + std::to_string(i) +
                          " has no input dim to copy");
      target[i] = in[i];
    }
    if (target[i] == -1) {
      if (inferAt >= 0)
        throw ImportError("shape has more than one -1");
      inferAt = i;
      continue;
    }
    if (target[i] < 0)
      throw ImportError("shape entry " + std::to_string(target[i]) + " is invalid");
    known *= target[i];
    checkedNumElements({known});
  }
  int64_t total = c.type(0).getNumElements();
  if (inferAt >= 0) {
    if (known == 0 || total % known != 0)
      throw ImportError("cannot infer the -1 entry of the shape");
    target[inferAt] = total / known;
  }
  reshapeTo(c, target);
}

std::vector<int64_t> axesInput(NodeConverter &c, const char *attrName) {
  if (c.hasInput(1))
    return c.constInts(1, "axes");
  if (auto a = c.attrInts(attrName))
    return *a;
  return {};
}

void convertUnsqueeze(NodeConverter &c) {
  std::vector<int64_t> in = shapeVector(c.type(0));
  std::vector<int64_t> axes = axesInput(c, "axes");
  int64_t outRank = in.size() + axes.size();
  std::vector<bool> inserted(outRank, false);
  for (int64_t a : axes) {
    int64_t n = c.normAxis(a, outRank);
    if (inserted[n])
      throw ImportError("axes repeat " + std::to_string(a));
    inserted[n] = true;
  }
  std::vector<int64_t> out;
  size_t next = 0;
  for (int64_t i = 0; i < outRank; ++i)
    out.push_back(inserted[i] ? 1 : in[next++]);
  reshapeTo(c, out);
}

void convertSqueeze(NodeConverter &c) {
  std::vector<int64_t> in = shapeVector(c.type(0));
  std::vector<int64_t> axes = axesInput(c, "axes");
  std::vector<bool> drop(in.size(), false);
  if (axes.empty())
    for (size_t i = 0; i < in.size(); ++i)
      drop[i] = in[i] == 1;
  for (int64_t a : axes) {
    int64_t n = c.normAxis(a, in.size());
    if (in[n] != 1)
      throw ImportError("cannot squeeze dim " + std::to_string(a) + " of size " +
                        std::to_string(in[n]));
    drop[n] = true;
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < in.size(); ++i)
    if (!drop[i])
      out.push_back(in[i]);
  reshapeTo(c, out);
}

void convertConcat(NodeConverter &c) {
  int n = c.node.input_size();
  if (n == 0)
    throw ImportError("needs at least one input");
  int64_t axis = c.normAxis(c.attrInt("axis", 0), c.type(0).getRank());
  if (c.allConst()) {
    std::vector<const HostTensor *> ins;
    for (int i = 0; i < n; ++i) {
      if (c.type(i).getRank() != c.type(0).getRank())
        throw ImportError("inputs differ in rank");
      for (int64_t d = 0; d < c.type(0).getRank(); ++d)
        if (d != axis && c.type(i).getDimSize(d) != c.type(0).getDimSize(d))
          throw ImportError("inputs differ outside the concat axis");
      ins.push_back(c.input(i).constant.get());
    }
    c.setOutput(0, foldConcat(ins, axis));
    return;
  }
  SmallVector<Value> values;
  for (int i = 0; i < n; ++i)
    values.push_back(c.value(i));
  c.setOutput(0, c.create(graph::ConcatOp::getOperationName(), values,
                          {c.named("axis", c.gb.builder().getI64IntegerAttr(axis))})
                     ->getResult(0));
}

void convertGather(NodeConverter &c) {
  RankedTensorType data = c.type(0);
  int64_t axis = c.normAxis(c.attrInt("axis", 0), data.getRank());
  if (c.isConst(1)) {
    const HostTensor &idx = *c.input(1).constant;
    if (idx.isFloat())
      throw ImportError("indices must be integers");
    for (int64_t v : idx.ints)
      if (v < -data.getDimSize(axis) || v >= data.getDimSize(axis))
        throw ImportError("index " + std::to_string(v) +
                          " is out of range for a dim of size " +
                          std::to_string(data.getDimSize(axis)));
  }
  if (c.allConst()) {
    c.setOutput(0, foldGather(*c.input(0).constant, *c.input(1).constant, axis));
    return;
  }
  SmallVector<NamedAttribute> attrs{
      c.named("axis", c.gb.builder().getI64IntegerAttr(axis))};
  // An nn.Embedding(padding_idx=p) weight looked up directly: that row gets
  // no gradient from this lookup (the marker's padding_idx).
  if (std::optional<int64_t> pad = c.gb.paddingIdxOf(c.node.input(0)); pad && axis == 0)
    attrs.push_back(c.named("padding_idx", c.gb.builder().getI64IntegerAttr(*pad)));
  c.setOutput(0, c.create(graph::GatherOp::getOperationName(),
                          {c.value(0), c.value(1)}, attrs)
                     ->getResult(0));
}

/// Emits (or folds) a slice of input 0 with normalized per-dim triples into
/// output `out`.
void emitSlice(NodeConverter &c, int out, const std::vector<int64_t> &starts,
               const std::vector<int64_t> &ends,
               const std::vector<int64_t> &steps) {
  std::vector<int64_t> dims;
  for (size_t d = 0; d < starts.size(); ++d) {
    dims.push_back(graph::sliceSize(starts[d], ends[d], steps[d]));
  }
  if (c.isConst(0)) {
    c.setOutput(out, foldSlice(*c.input(0).constant, starts, steps, dims));
    return;
  }
  c.setOutput(out, c.create(graph::SliceOp::getOperationName(), {c.value(0)},
                            {c.named("starts", c.i64Array(starts)),
                             c.named("ends", c.i64Array(ends)),
                             c.named("steps", c.i64Array(steps))})
                       ->getResult(0));
}

void convertSlice(NodeConverter &c) {
  std::vector<int64_t> in = shapeVector(c.type(0));
  int64_t rank = in.size();
  std::vector<int64_t> starts = c.constInts(1, "starts");
  std::vector<int64_t> ends = c.constInts(2, "ends");
  std::vector<int64_t> axes, steps;
  if (c.hasInput(3))
    axes = c.constInts(3, "axes");
  else
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(i);
  if (c.hasInput(4))
    steps = c.constInts(4, "steps");
  else
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    throw ImportError("starts, ends, axes and steps differ in length");
  std::vector<int64_t> s(rank, 0), e(in), st(rank, 1);
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = c.normAxis(axes[i], rank);
    if (seen[a])
      throw ImportError("axes repeat " + std::to_string(axes[i]));
    seen[a] = true;
    int64_t dim = in[a], step = steps[i];
    if (step == 0)
      throw ImportError("step must not be 0");
    auto clamp = [](int64_t v, int64_t lo, int64_t hi) {
      return std::max(lo, std::min(v, hi));
    };
    // ONNX semantics: negative values count from the end (with sentinels
    // like INT64_MIN/MAX), then clamp to the valid range for the step's sign.
    auto wrap = [&](int64_t v) { return v < -dim ? -dim - 1 : (v < 0 ? v + dim : v); };
    int64_t start = wrap(starts[i]), end = wrap(ends[i]);
    if (step > 0) {
      start = clamp(start, 0, dim);
      end = std::max(start, clamp(end, 0, dim));
    } else {
      start = clamp(start, 0, dim - 1);
      end = std::min(start, clamp(end, -1, dim - 1));
      if (dim == 0) {
        start = 0; end = 0; step = 1;
      }
    }
    s[a] = start; e[a] = end; st[a] = step;
  }
  emitSlice(c, 0, s, e, st);
}

void convertSplit(NodeConverter &c) {
  std::vector<int64_t> in = shapeVector(c.type(0));
  int64_t axis = c.normAxis(c.attrInt("axis", 0), in.size());
  int n = c.node.output_size();
  std::vector<int64_t> sizes;
  // Split-18 takes either the split input or num_outputs; without either,
  // earlier versions split into equal parts.
  bool hasNumOutputs = c.attr("num_outputs") != nullptr;
  if (hasNumOutputs && c.hasInput(1))
    throw ImportError("has both the split input and the num_outputs "
                      "attribute; Split takes one of them");
  if (!hasNumOutputs && !c.hasInput(1) && !c.attr("split") &&
      resolveOpVersion("Split", c.gb.opsetVersion()).since >= 18)
    throw ImportError("has neither the split input nor the num_outputs "
                      "attribute; Split-18 needs one of them");
  if (c.hasInput(1))
    sizes = c.constInts(1, "split");
  else if (auto a = c.attrInts("split"))
    sizes = *a;
  else {
    int64_t parts = c.attrInt("num_outputs", n);
    if (parts != n)
      throw ImportError("num_outputs is " + std::to_string(parts) +
                        " but the node has " + std::to_string(n) + " outputs");
    // ONNX: chunks of ceil(dim / parts), the last one smaller.
    int64_t chunk = (in[axis] + parts - 1) / parts;
    int64_t last = in[axis] - chunk * (parts - 1);
    if (last < 0)
      throw ImportError("cannot split a dim of size " + std::to_string(in[axis]) +
                        " into " + std::to_string(parts) + " chunks of " +
                        std::to_string(chunk) + " (the last would be negative)");
    sizes.assign(parts - 1, chunk);
    sizes.push_back(last);
  }
  if (static_cast<int>(sizes.size()) != n)
    throw ImportError("split has " + std::to_string(sizes.size()) +
                      " sizes for " + std::to_string(n) + " outputs");
  int64_t total = 0;
  for (int64_t v : sizes) {
    if (v < 0)
      throw ImportError("split sizes must be non-negative");
    total += v;
  }
  if (total != in[axis])
    throw ImportError("split sizes add up to " + std::to_string(total) +
                      ", not the axis size " + std::to_string(in[axis]));
  int64_t offset = 0;
  for (int i = 0; i < n; ++i) {
    std::vector<int64_t> s(in.size(), 0), e(in), st(in.size(), 1);
    s[axis] = offset;
    e[axis] = offset + sizes[i];
    offset += sizes[i];
    emitSlice(c, i, s, e, st);
  }
}

void convertTranspose(NodeConverter &c) {
  int64_t rank = c.type(0).getRank();
  std::vector<int64_t> perm;
  if (auto p = c.attrInts("perm"))
    perm = *p;
  else
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  if (static_cast<int64_t>(perm.size()) != rank)
    throw ImportError("perm has " + std::to_string(perm.size()) +
                      " entries for rank " + std::to_string(rank));
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      throw ImportError("perm is not a permutation");
    seen[p] = true;
  }
  if (c.isConst(0)) {
    c.setOutput(0, foldTranspose(*c.input(0).constant, perm));
    return;
  }
  c.setOutput(0, c.create(graph::TransposeOp::getOperationName(), {c.value(0)},
                          {c.named("perm", c.i64Array(perm))})
                     ->getResult(0));
}

void convertExpand(NodeConverter &c) {
  std::vector<int64_t> in = shapeVector(c.type(0));
  std::vector<int64_t> out = broadcastOrThrow(in, c.constInts(1, "shape"));
  if (c.isConst(0) && checkedNumElements(out) <= kMaxFoldElements) {
    c.setOutput(0, foldElementwise({c.input(0).constant.get()}, out,
                                   c.input(0).constant->dtype,
                                   [](const double *a) { return a[0]; }));
    return;
  }
  if (out == in) {
    c.forward(0, 0);
    return;
  }
  c.setOutput(0, c.create(graph::ExpandOp::getOperationName(), {c.value(0)}, {},
                          {RankedTensorType::get(out, c.type(0).getElementType())})
                     ->getResult(0));
}

} // namespace

void convertCastTo(NodeConverter &c, int64_t to) {
  if (isSubByteOrFloat8Type(static_cast<int32_t>(to)))
    throw ImportError("casts to " + onnxTypeName(static_cast<int32_t>(to)) +
                      ", which zeroc does not support (no float8, 4-bit or "
                      "2-bit types); export the model in float, float16 or "
                      "bfloat16");
  Type elem = c.gb.elementType(static_cast<int32_t>(to));
  if (c.isConst(0)) {
    const HostTensor &in = *c.input(0).constant;
    HostTensor h;
    h.dtype = static_cast<int32_t>(to);
    h.dims = in.dims;
    h.resize(in.numElements());
    for (int64_t i = 0; i < in.numElements(); ++i) {
      if (!in.isFloat() && !h.isFloat())
        h.ints[i] = narrowInt(in.ints[i], h.dtype);
      else
        h.set(i, in.getAsDouble(i));
    }
    c.setOutput(0, std::move(h));
    return;
  }
  if (c.type(0).getElementType() == elem) {
    c.forward(0, 0);
    return;
  }
  c.setOutput(0, c.create(graph::CastOp::getOperationName(), {c.value(0)}, {},
                          {RankedTensorType::get(c.type(0).getShape(), elem)})
                     ->getResult(0));
}

namespace {

void convertCast(NodeConverter &c) { convertCastTo(c, c.attrInt("to", -1)); }

void convertEqual(NodeConverter &c) {
  if (c.type(0).getElementType() != c.type(1).getElementType())
    throw ImportError("operands have different element types");
  if (c.allConst()) {
    std::vector<int64_t> out = broadcastOrThrow(shapeVector(c.type(0)), shapeVector(c.type(1)));
    const HostTensor &a = *c.input(0).constant, &b = *c.input(1).constant;
    c.setOutput(0, foldElementwise({&a, &b}, out, TP::BOOL,
                                   [](const double *v) { return v[0] == v[1]; }));
    return;
  }
  c.setOutput(0, c.create(graph::EqualOp::getOperationName(),
                          {c.value(0), c.value(1)}, {})
                     ->getResult(0));
}

void convertWhere(NodeConverter &c) {
  if (c.type(0).getElementType() != c.gb.builder().getI1Type())
    throw ImportError("condition must be a bool tensor");
  if (c.type(1).getElementType() != c.type(2).getElementType())
    throw ImportError("the two branches have different element types");
  if (c.allConst()) {
    std::vector<int64_t> out = broadcastOrThrow(
        broadcastOrThrow(shapeVector(c.type(0)), shapeVector(c.type(1))), shapeVector(c.type(2)));
    c.setOutput(0, foldElementwise(
                       {c.input(0).constant.get(), c.input(1).constant.get(),
                        c.input(2).constant.get()},
                       out, c.input(1).constant->dtype,
                       [](const double *v) { return v[0] != 0 ? v[1] : v[2]; }));
    return;
  }
  c.setOutput(0, c.create(graph::WhereOp::getOperationName(),
                          {c.value(0), c.value(1), c.value(2)}, {})
                     ->getResult(0));
}

void convertTrilu(NodeConverter &c) {
  bool upper = c.attrInt("upper", 1) != 0;
  int64_t k = 0;
  if (c.hasInput(1)) {
    const HostTensor &kt = c.constInput(1, "k");
    if (kt.numElements() != 1 || kt.isFloat())
      throw ImportError("k must be an integer scalar");
    k = kt.getAsInt(0);
  }
  if (c.type(0).getRank() < 2)
    throw ImportError("input must have rank >= 2");
  if (c.isConst(0)) {
    c.setOutput(0, foldTrilu(*c.input(0).constant, upper, k));
    return;
  }
  c.setOutput(0, c.create(graph::TriluOp::getOperationName(), {c.value(0)},
                          {c.named("upper", c.gb.builder().getBoolAttr(upper)),
                           c.named("k", c.gb.builder().getI64IntegerAttr(k))},
                          {c.type(0)})
                     ->getResult(0));
}

} // namespace

bool convertShapeOp(NodeConverter &c) {
  const std::string &op = c.node.op_type();
  if (op == "Constant") convertConstant(c);
  else if (op == "Identity") c.forward(0, 0);
  else if (op == "Shape") convertShape(c);
  else if (op == "ConstantOfShape") convertConstantOfShape(c);
  else if (op == "Reshape") convertReshape(c);
  else if (op == "Unsqueeze") convertUnsqueeze(c);
  else if (op == "Squeeze") convertSqueeze(c);
  else if (op == "Concat") convertConcat(c);
  else if (op == "Gather") convertGather(c);
  else if (op == "Slice") convertSlice(c);
  else if (op == "Split") convertSplit(c);
  else if (op == "Transpose") convertTranspose(c);
  else if (op == "Expand") convertExpand(c);
  else if (op == "Cast") convertCast(c);
  else if (op == "Equal") convertEqual(c);
  else if (op == "Where") convertWhere(c);
  else if (op == "Trilu") convertTrilu(c);
  else return false;
  return true;
}

} // namespace zeroc::onnximport
