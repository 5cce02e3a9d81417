//===- ConvertSequenceOps.cpp - ONNX sequence ops as lists of values ------===//
//
// zeroc has no sequence type: a sequence value is resolved at import into the
// list of its tensors (GraphBuilder::sequenceTable), which needs every
// position and split size to be a compile-time constant. SplitToSequence
// becomes slices, SequenceAt picks an element, ConcatFromSequence a concat;
// SequenceConstruct, SequenceEmpty, SequenceInsert, SequenceErase and
// SequenceLength only edit or measure the list. A sequence never reaches
// the IR, and a graph output that is a sequence is rejected earlier.
//
//===----------------------------------------------------------------------===//

#include "NodeConverter.h"

#include "zeroc/Dialect/Graph/GraphOps.h"

using namespace mlir;

namespace zeroc::onnximport {

namespace {

using Sequence = std::vector<Entry>;

/// Each element of a resolved sequence becomes its own ops: a bound keeps
/// a hostile SplitToSequence of a long axis from creating millions of them.
constexpr size_t kMaxSequenceLength = size_t(1) << 14;

Sequence &inputSequence(NodeConverter &c, int i) {
  if (!c.hasInput(i))
    throw ImportError("missing required input #" + std::to_string(i));
  auto &seqs = c.gb.sequenceTable();
  auto it = seqs.find(c.node.input(i));
  if (it == seqs.end())
    throw ImportError("input '" + c.node.input(i) + "' is not a sequence");
  return it->second;
}

void setSequence(NodeConverter &c, Sequence seq) {
  if (seq.size() > kMaxSequenceLength)
    throw ImportError("the sequence would hold " + std::to_string(seq.size()) +
                      " tensors; zeroc resolves sequences of at most " +
                      std::to_string(kMaxSequenceLength));
  for (size_t i = 1; i < seq.size(); ++i)
    if (seq[i].type.getElementType() != seq[0].type.getElementType())
      throw ImportError("sequence elements have different element types");
  c.gb.sequenceTable()[c.node.output(0)] = std::move(seq);
}

/// A constant scalar position into a list of `size` (ONNX: negative counts
/// from the end; `allowEnd` admits `size` itself, for inserting).
size_t position(NodeConverter &c, int i, size_t size, bool allowEnd) {
  const HostTensor &p = c.constInput(i, "position");
  if (p.isFloat() || p.numElements() != 1 || !p.dims.empty())
    throw ImportError("position must be an integer scalar");
  int64_t n = static_cast<int64_t>(size), v = p.ints[0];
  int64_t at = v < 0 ? v + n : v;
  if (at < 0 || at > n || (at == n && !allowEnd))
    throw ImportError("position " + std::to_string(v) +
                      " is out of range for a sequence of " +
                      std::to_string(size) + " tensors");
  return static_cast<size_t>(at);
}

Entry hostEntry(NodeConverter &c, HostTensor h) {
  Entry e;
  e.type = c.gb.tensorType(h.dims, h.dtype);
  c.gb.chargeConstant(c.node.output(0), h.numElements(), 8);
  e.constant = std::make_shared<HostTensor>(std::move(h));
  return e;
}

Entry valueEntry(Value v) {
  Entry e;
  e.value = v;
  e.type = llvm::cast<RankedTensorType>(v.getType());
  return e;
}

/// `e` re-typed to `dims` (same elements): folded or graph.reshape.
Entry reshaped(NodeConverter &c, Entry &e, const std::vector<int64_t> &dims) {
  if (e.constant) {
    HostTensor h = *e.constant;
    h.dims = dims;
    return hostEntry(c, std::move(h));
  }
  RankedTensorType t = RankedTensorType::get(dims, e.type.getElementType());
  Value v = c.gb.materialize(e, c.loc, c.node.input(0));
  return valueEntry(
      c.create(graph::ReshapeOp::getOperationName(), {v}, {}, {t})->getResult(0));
}

void convertSplitToSequence(NodeConverter &c) {
  std::vector<int64_t> in = shapeVector(c.type(0));
  int64_t axis = c.normAxis(c.attrInt("axis", 0), in.size());
  bool keepdims = c.attrInt("keepdims", 1) != 0;
  int64_t dim = in[axis];
  std::vector<int64_t> sizes;
  bool squeeze = false;
  auto checkCount = [](int64_t n) {
    if (n > static_cast<int64_t>(kMaxSequenceLength))
      throw ImportError("the sequence would hold " + std::to_string(n) +
                        " tensors; zeroc resolves sequences of at most " +
                        std::to_string(kMaxSequenceLength));
  };
  if (!c.hasInput(1)) {
    checkCount(dim);
    sizes.assign(dim, 1); // one element per index; keepdims=0 drops the axis
    squeeze = !keepdims;
  } else {
    const HostTensor &s = c.constInput(1, "split");
    if (s.isFloat() || s.dims.size() > 1)
      throw ImportError("split must be an integer scalar or 1-D tensor");
    if (s.dims.empty()) {
      int64_t len = s.ints[0];
      if (len <= 0)
        throw ImportError("split length " + std::to_string(len) +
                          " must be positive");
      checkCount((dim + len - 1) / len);
      for (int64_t at = 0; at < dim; at += len)
        sizes.push_back(std::min(len, dim - at));
    } else {
      sizes = s.ints;
      int64_t total = 0;
      for (int64_t v : sizes) {
        if (v < 0)
          throw ImportError("split sizes must be non-negative");
        total += v;
      }
      if (total != dim)
        throw ImportError("split sizes add up to " + std::to_string(total) +
                          ", not the axis size " + std::to_string(dim));
    }
  }
  Sequence seq;
  int64_t offset = 0;
  for (int64_t size : sizes) {
    std::vector<int64_t> starts(in.size(), 0), ends(in), steps(in.size(), 1),
        dims(in);
    starts[axis] = offset;
    ends[axis] = offset + size;
    dims[axis] = size;
    offset += size;
    Entry part;
    if (c.isConst(0)) {
      part = hostEntry(c, foldSlice(*c.input(0).constant, starts, steps, dims));
    } else {
      part = valueEntry(c.create(graph::SliceOp::getOperationName(), {c.value(0)},
                                 {c.named("starts", c.i64Array(starts)),
                                  c.named("ends", c.i64Array(ends)),
                                  c.named("steps", c.i64Array(steps))})
                            ->getResult(0));
    }
    if (squeeze) {
      std::vector<int64_t> out(in);
      out.erase(out.begin() + axis);
      part = reshaped(c, part, out);
    }
    seq.push_back(std::move(part));
  }
  setSequence(c, std::move(seq));
}

void convertConcatFromSequence(NodeConverter &c) {
  Sequence &seq = inputSequence(c, 0);
  if (!c.attr("axis"))
    throw ImportError("required attribute 'axis' is missing");
  if (seq.empty())
    throw ImportError("the sequence is empty; there is nothing to concatenate");
  bool newAxis = c.attrInt("new_axis", 0) != 0;
  int64_t rank = seq[0].type.getRank();
  int64_t axis = c.normAxis(c.attrInt("axis", 0), rank + (newAxis ? 1 : 0));
  Sequence parts;
  for (Entry &e : seq) {
    if (e.type.getRank() != rank)
      throw ImportError("sequence elements differ in rank");
    for (int64_t d = 0; d < rank; ++d)
      if ((newAxis || d != axis) &&
          e.type.getDimSize(d) != seq[0].type.getDimSize(d))
        throw ImportError("sequence elements differ in shape outside the "
                          "concat axis");
    if (!newAxis) {
      parts.push_back(e);
      continue;
    }
    std::vector<int64_t> dims = shapeVector(e.type);
    dims.insert(dims.begin() + axis, 1);
    parts.push_back(reshaped(c, e, dims));
  }
  bool allConst = true;
  for (const Entry &e : parts)
    allConst = allConst && e.constant;
  if (allConst) {
    std::vector<const HostTensor *> ins;
    for (const Entry &e : parts)
      ins.push_back(e.constant.get());
    c.setOutput(0, foldConcat(ins, axis));
    return;
  }
  SmallVector<Value> values;
  for (Entry &e : parts)
    values.push_back(c.gb.materialize(e, c.loc, c.node.input(0)));
  c.setOutput(0, c.create(graph::ConcatOp::getOperationName(), values,
                          {c.named("axis", c.gb.builder().getI64IntegerAttr(axis))})
                     ->getResult(0));
}

} // namespace

bool convertSequenceOp(NodeConverter &c) {
  const std::string &op = c.node.op_type();
  if (op == "SplitToSequence") {
    convertSplitToSequence(c);
  } else if (op == "SequenceConstruct") {
    Sequence seq;
    for (int i = 0; i < c.node.input_size(); ++i)
      seq.push_back(c.input(i));
    setSequence(c, std::move(seq));
  } else if (op == "Identity" && c.hasInput(0) &&
             c.gb.sequenceTable().count(c.node.input(0))) {
    setSequence(c, inputSequence(c, 0)); // Identity-14+ of a sequence
  } else if (op == "SequenceEmpty") {
    setSequence(c, {});
  } else if (op == "SequenceAt") {
    Sequence &seq = inputSequence(c, 0);
    c.gb.valueTable()[c.node.output(0)] = seq[position(c, 1, seq.size(), false)];
  } else if (op == "SequenceLength") {
    HostTensor h;
    h.dtype = onnx::TensorProto::INT64;
    h.ints = {static_cast<int64_t>(inputSequence(c, 0).size())};
    c.setOutput(0, std::move(h));
  } else if (op == "SequenceInsert") {
    Sequence seq = inputSequence(c, 0);
    size_t at = c.hasInput(2) ? position(c, 2, seq.size(), true) : seq.size();
    seq.insert(seq.begin() + at, c.input(1));
    setSequence(c, std::move(seq));
  } else if (op == "SequenceErase") {
    Sequence seq = inputSequence(c, 0);
    if (seq.empty())
      throw ImportError("the sequence is empty; there is nothing to erase");
    size_t at = c.hasInput(1) ? position(c, 1, seq.size(), false) : seq.size() - 1;
    seq.erase(seq.begin() + at);
    setSequence(c, std::move(seq));
  } else if (op == "ConcatFromSequence") {
    convertConcatFromSequence(c);
  } else {
    return false;
  }
  return true;
}

} // namespace zeroc::onnximport
