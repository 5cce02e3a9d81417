//===- ConvertFoldOnlyOps.cpp - ops zeroc evaluates only at import --------===//
//
// Range, NonZero, OneHot, ReduceMin and ReduceProd. Real exports apply them
// to compile-time values (position ids, constant masks, relative-position
// buckets); zeroc folds them on the host and has no graph op for them, so an
// input that is not a compile-time constant is an error naming the node.
//
//===----------------------------------------------------------------------===//

#include "HostFoldingMovement.h"
#include "NodeConverter.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cmath>

namespace zeroc::onnximport {

namespace {

using TP = onnx::TensorProto;

const HostTensor &foldInput(NodeConverter &c, int i, const char *what) {
  if (!c.isConst(i))
    throw ImportError(std::string("input '") + c.node.input(i) + "' (" + what +
                      ") must be a compile-time constant; zeroc evaluates " +
                      c.node.op_type() + " only at import");
  return *c.input(i).constant;
}

const HostTensor &foldScalar(NodeConverter &c, int i, const char *what) {
  const HostTensor &h = foldInput(c, i, what);
  if (h.numElements() != 1)
    throw ImportError(std::string("input '") + c.node.input(i) + "' (" + what +
                      ") must hold exactly one element");
  return h;
}

void convertRange(NodeConverter &c) {
  const HostTensor &start = foldScalar(c, 0, "start");
  const HostTensor &limit = foldScalar(c, 1, "limit");
  const HostTensor &delta = foldScalar(c, 2, "delta");
  if (start.dtype != limit.dtype || start.dtype != delta.dtype)
    throw ImportError("start, limit and delta differ in element type");
  if (start.dtype == TP::BOOL)
    throw ImportError("Range of bool is not defined");
  c.setOutput(0, foldRange(start, limit, delta));
}

void convertNonZero(NodeConverter &c) {
  const HostTensor &x = foldInput(c, 0, "X");
  int64_t rank = x.dims.size(), n = x.numElements();
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < n; ++i)
    if (x.getAsDouble(i) != 0.0 || (!x.isFloat() && x.ints[i] != 0))
      hits.push_back(i);
  HostTensor out;
  out.dtype = TP::INT64;
  // A scalar counts as one dim of size 1 (numpy's nonzero of a 0-d array).
  int64_t r = std::max<int64_t>(rank, 1);
  out.dims = {r, static_cast<int64_t>(hits.size())};
  if (checkedNumElements(out.dims) > kMaxFoldElements)
    throw ImportError("NonZero result is too large to fold at import time");
  out.ints.assign(r * hits.size(), 0);
  for (size_t h = 0; h < hits.size(); ++h) {
    int64_t rest = hits[h];
    for (int64_t d = rank - 1; d >= 0; --d) {
      out.ints[d * hits.size() + h] = rest % x.dims[d];
      rest /= x.dims[d];
    }
  }
  c.setOutput(0, std::move(out));
}

void convertOneHot(NodeConverter &c) {
  const HostTensor &idx = foldInput(c, 0, "indices");
  const HostTensor &depthT = foldScalar(c, 1, "depth");
  const HostTensor &values = foldInput(c, 2, "values");
  if (values.numElements() != 2)
    throw ImportError("values must hold [off_value, on_value]");
  double d = depthT.getAsDouble(0);
  if (!std::isfinite(d) || d < 1 || d > double(kMaxFoldElements))
    throw ImportError("depth must be a positive element count");
  int64_t depth = static_cast<int64_t>(d);
  int64_t rank = idx.dims.size();
  int64_t axis = c.attrInt("axis", -1);
  if (axis < -(rank + 1) || axis > rank)
    throw ImportError("axis " + std::to_string(axis) + " is out of range for "
                      "the result rank " + std::to_string(rank + 1));
  if (axis < 0)
    axis += rank + 1;
  std::vector<int64_t> dims = idx.dims;
  dims.insert(dims.begin() + axis, depth);
  HostTensor out;
  out.dtype = values.dtype;
  out.dims = dims;
  if (checkedNumElements(dims) > kMaxFoldElements)
    throw ImportError("OneHot result is too large to fold at import time");
  out.resize(checkedNumElements(dims));
  int64_t inner = 1;
  for (int64_t k = axis; k < rank; ++k)
    inner *= idx.dims[k];
  for (int64_t o = 0; o < out.numElements(); ++o) {
    int64_t in = o % inner, j = (o / inner) % depth, outer = o / (inner * depth);
    double v = idx.getAsDouble(outer * inner + in);
    int64_t want = static_cast<int64_t>(std::trunc(v));
    if (want < 0)
      want += depth;
    bool on = std::isfinite(v) && want == j;
    if (values.isFloat())
      out.floats[o] = values.floats[on ? 1 : 0];
    else
      out.ints[o] = values.ints[on ? 1 : 0];
  }
  c.setOutput(0, std::move(out));
}

/// ReduceMin / ReduceProd of a constant, with ONNX's axes rules.
void convertFoldReduce(NodeConverter &c, bool isMin) {
  const HostTensor &x = foldInput(c, 0, "data");
  int64_t rank = x.dims.size();
  std::vector<int64_t> axes;
  if (c.gb.opsetVersion() >= 18 && c.hasInput(1))
    axes = c.constInts(1, "axes");
  else if (auto a = c.attrInts("axes"))
    axes = *a;
  bool keep = c.attrInt("keepdims", 1) != 0;
  if (axes.empty()) {
    if (c.attrInt("noop_with_empty_axes", 0) != 0) {
      c.forward(0, 0);
      return;
    }
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  }
  std::vector<bool> reduced(rank, false);
  for (int64_t a : axes) {
    int64_t n = c.normAxis(a, rank);
    if (reduced[n])
      throw ImportError("axes repeat");
    reduced[n] = true;
  }
  std::vector<int64_t> outDims, keptDims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d])
      keptDims.push_back(x.dims[d]);
    if (!reduced[d] || keep)
      outDims.push_back(reduced[d] ? 1 : x.dims[d]);
    if (reduced[d] && x.dims[d] == 0 && isMin)
      throw ImportError("ReduceMin over an empty dim has no value");
  }
  HostTensor out;
  out.dtype = x.dtype;
  out.dims = outDims;
  out.resize(checkedNumElements(outDims));
  std::vector<bool> started(out.numElements(), false);
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < x.numElements(); ++i) {
    int64_t o = 0;
    for (int64_t d = 0; d < rank; ++d)
      if (!reduced[d])
        o = o * x.dims[d] + idx[d];
    if (x.isFloat()) {
      double v = x.floats[i], &acc = out.floats[o];
      acc = !started[o] ? v
            : isMin     ? (std::isnan(v) || std::isnan(acc) ? NAN : std::min(acc, v))
                        : acc * v;
    } else {
      int64_t v = x.ints[i], &acc = out.ints[o];
      if (!started[o]) {
        acc = v;
      } else if (isMin) {
        acc = std::min(acc, v);
      } else {
        int64_t r = 0;
        if (__builtin_mul_overflow(acc, v, &r) || narrowInt(r, x.dtype) != r)
          throw ImportError("integer product overflows its type");
        acc = r;
      }
    }
    started[o] = true;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < x.dims[d])
        break;
      idx[d] = 0;
    }
  }
  // Products over an empty set are 1.
  for (int64_t o = 0; o < out.numElements(); ++o)
    if (!started[o])
      out.set(o, 1.0);
  c.setOutput(0, std::move(out));
}

} // namespace

bool convertFoldOnlyOp(NodeConverter &c) {
  const std::string &op = c.node.op_type();
  if (op == "Range") convertRange(c);
  else if (op == "NonZero") convertNonZero(c);
  else if (op == "OneHot") convertOneHot(c);
  else if (op == "ReduceMin") convertFoldReduce(c, true);
  else if (op == "ReduceProd") convertFoldReduce(c, false);
  else return false;
  return true;
}

} // namespace zeroc::onnximport
