//===- HostFoldingMovement.cpp - folds of Pad, Tile, Range, ... -----------===//
#include "HostFoldingMovement.h"

#include <cmath>
#include <unordered_set>

namespace zeroc::onnximport {

namespace {

void copyElement(HostTensor &out, int64_t o, const HostTensor &in, int64_t i) {
  if (out.isFloat())
    out.floats[o] = in.floats[i];
  else
    out.ints[o] = in.ints[i];
}

/// graph.pad's source position of padded position p (shifted by the begin
/// count), or -1 for constant padding.
int64_t padSource(int64_t p, int64_t n, const std::string &mode) {
  if (p >= 0 && p < n)
    return p;
  if (mode == "edge")
    return p < 0 ? 0 : n - 1;
  if (mode == "reflect") {
    if (n == 1)
      return 0;
    int64_t period = 2 * (n - 1), q = ((p % period) + period) % period;
    return q < n ? q : period - q;
  }
  if (mode == "wrap")
    return ((p % n) + n) % n;
  return -1;
}

/// a + b or a * b of an integer dtype, exactly or an error (as the other
/// integer folds: no silent wrap).
int64_t exactInt(int64_t a, int64_t b, bool multiply, int32_t dtype) {
  int64_t r = 0;
  bool overflow = multiply ? __builtin_mul_overflow(a, b, &r)
                           : __builtin_add_overflow(a, b, &r);
  if (overflow || narrowInt(r, dtype) != r)
    throw ImportError("integer result " + std::to_string(a) +
                      (multiply ? " * " : " + ") + std::to_string(b) +
                      " overflows its type");
  return r;
}

int64_t normIndex(int64_t v, int64_t size) {
  if (v < -size || v >= size)
    throw ImportError("index " + std::to_string(v) +
                      " is out of range for a dim of size " +
                      std::to_string(size));
  return v < 0 ? v + size : v;
}

} // namespace

HostTensor foldPad(const HostTensor &in, const std::vector<int64_t> &pads,
                   const std::string &mode, double value) {
  size_t rank = in.dims.size();
  std::vector<int64_t> dims;
  for (size_t d = 0; d < rank; ++d)
    dims.push_back(pads[d] + in.dims[d] + pads[d + rank]);
  HostTensor out = newFoldedTensor(in.dtype, dims);
  std::vector<int64_t> s = stridesOf(in.dims), idx(rank, 0);
  for (int64_t o = 0; o < out.numElements(); ++o) {
    int64_t pos = 0;
    for (size_t d = 0; d < rank && pos >= 0; ++d) {
      int64_t src = padSource(idx[d] - pads[d], in.dims[d], mode);
      pos = src < 0 ? -1 : pos + src * s[d];
    }
    if (pos < 0)
      out.set(o, value);
    else
      copyElement(out, o, in, pos);
    nextIndex(idx, dims);
  }
  return out;
}

HostTensor foldTile(const HostTensor &in, const std::vector<int64_t> &repeats) {
  size_t rank = in.dims.size();
  std::vector<int64_t> dims;
  for (size_t d = 0; d < rank; ++d)
    dims.push_back(checkedNumElements({in.dims[d], repeats[d]}));
  HostTensor out = newFoldedTensor(in.dtype, dims);
  std::vector<int64_t> s = stridesOf(in.dims), idx(rank, 0);
  for (int64_t o = 0; o < out.numElements(); ++o) {
    int64_t pos = 0;
    for (size_t d = 0; d < rank; ++d)
      pos += (idx[d] % in.dims[d]) * s[d];
    copyElement(out, o, in, pos);
    nextIndex(idx, dims);
  }
  return out;
}

HostTensor foldRange(const HostTensor &start, const HostTensor &limit,
                     const HostTensor &delta) {
  if (start.isFloat()) {
    double a = start.floats[0], b = limit.floats[0], d = delta.floats[0];
    if (!std::isfinite(a) || !std::isfinite(b) || !std::isfinite(d) || d == 0)
      throw ImportError("start, limit and delta must be finite and delta "
                        "non-zero");
    double count = std::max(std::ceil((b - a) / d), 0.0);
    if (count > static_cast<double>(kMaxFoldElements))
      throw ImportError("range of " + std::to_string(count) +
                        " elements is too large to fold at import time");
    HostTensor out = newFoldedTensor(start.dtype, {static_cast<int64_t>(count)});
    for (int64_t i = 0; i < out.numElements(); ++i)
      out.set(i, a + static_cast<double>(i) * d);
    return out;
  }
  int64_t a = start.ints[0], b = limit.ints[0], d = delta.ints[0];
  if (d == 0)
    throw ImportError("delta must not be 0");
  // ceil((b - a) / d) in 128-bit arithmetic: exact for every int64 triple.
  __int128 span = static_cast<__int128>(b) - a, step = d;
  __int128 count = span / step + ((span % step != 0 && (span > 0) == (step > 0)) ? 1 : 0);
  if (count < 0)
    count = 0;
  if (count > kMaxFoldElements)
    throw ImportError("range of more than " + std::to_string(kMaxFoldElements) +
                      " elements is too large to fold at import time");
  HostTensor out = newFoldedTensor(start.dtype, {static_cast<int64_t>(count)});
  for (int64_t i = 0; i < out.numElements(); ++i)
    out.ints[i] = narrowInt(static_cast<int64_t>(a + static_cast<__int128>(i) * d),
                            start.dtype);
  return out;
}

std::vector<int64_t> elementTargets(const std::vector<int64_t> &dataDims,
                                    const HostTensor &indices, int64_t axis,
                                    bool distinct) {
  std::vector<int64_t> s = stridesOf(dataDims), idx(indices.dims.size(), 0);
  std::vector<int64_t> targets(indices.numElements());
  std::unordered_set<int64_t> seen; // sized by the indices, not the data
  for (int64_t o = 0; o < indices.numElements(); ++o) {
    int64_t pos = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      pos += (static_cast<int64_t>(d) == axis
                  ? normIndex(indices.getAsInt(o), dataDims[axis])
                  : idx[d]) *
             s[d];
    if (distinct && !seen.insert(pos).second)
      throw ImportError("element " + std::to_string(o) +
                        " of indices addresses a data element an earlier one "
                        "wrote; reduction 'none' needs distinct indices");
    targets[o] = pos;
    nextIndex(idx, indices.dims);
  }
  return targets;
}

HostTensor foldGatherElements(const HostTensor &data, const HostTensor &indices,
                              int64_t axis) {
  HostTensor out = newFoldedTensor(data.dtype, indices.dims);
  std::vector<int64_t> from = elementTargets(data.dims, indices, axis, false);
  for (int64_t o = 0; o < out.numElements(); ++o)
    copyElement(out, o, data, from[o]);
  return out;
}

namespace {
/// out[o] = u[i] (none) or out[o] op= u[i] (add, mul; integers exactly).
void scatterElement(HostTensor &out, int64_t o, const HostTensor &updates,
                    int64_t u, const std::string &reduction) {
  if (reduction == "none") {
    copyElement(out, o, updates, u);
  } else if (out.isFloat()) {
    double a = out.floats[o], b = updates.floats[u];
    out.floats[o] = reduction == "add" ? a + b : a * b;
  } else {
    out.ints[o] = exactInt(out.ints[o], updates.ints[u], reduction == "mul",
                           out.dtype);
  }
}
} // namespace

HostTensor foldScatterElements(const HostTensor &data, const HostTensor &indices,
                               const HostTensor &updates, int64_t axis,
                               const std::string &reduction) {
  HostTensor out = newFoldedTensor(data.dtype, data.dims);
  out.ints = data.ints;
  out.floats = data.floats;
  std::vector<int64_t> to =
      elementTargets(data.dims, indices, axis, reduction == "none");
  for (int64_t i = 0; i < indices.numElements(); ++i)
    scatterElement(out, to[i], updates, i, reduction);
  return out;
}

namespace {
/// Slice number and size of ND index tuple t (indices (..., k)).
struct NdIndex {
  int64_t k, tuples, sliceSize;
  std::vector<int64_t> sliceStrides;
  NdIndex(const HostTensor &data, const HostTensor &indices) {
    k = indices.dims.back();
    tuples = k ? indices.numElements() / k : 0;
    sliceSize = 1;
    for (size_t d = k; d < data.dims.size(); ++d)
      sliceSize *= data.dims[d];
    sliceStrides.assign(k, 1);
    for (int64_t d = k - 2; d >= 0; --d)
      sliceStrides[d] = sliceStrides[d + 1] * data.dims[d + 1];
  }
  int64_t slice(const HostTensor &data, const HostTensor &indices,
                int64_t t) const {
    int64_t s = 0;
    for (int64_t j = 0; j < k; ++j)
      s += normIndex(indices.getAsInt(t * k + j), data.dims[j]) * sliceStrides[j];
    return s;
  }
};
} // namespace

HostTensor foldGatherND(const HostTensor &data, const HostTensor &indices) {
  NdIndex nd(data, indices);
  std::vector<int64_t> dims(indices.dims.begin(), indices.dims.end() - 1);
  dims.insert(dims.end(), data.dims.begin() + nd.k, data.dims.end());
  HostTensor out = newFoldedTensor(data.dtype, dims);
  for (int64_t t = 0; t < nd.tuples; ++t) {
    int64_t base = nd.slice(data, indices, t) * nd.sliceSize;
    for (int64_t i = 0; i < nd.sliceSize; ++i)
      copyElement(out, t * nd.sliceSize + i, data, base + i);
  }
  return out;
}

HostTensor foldScatterND(const HostTensor &data, const HostTensor &indices,
                         const HostTensor &updates,
                         const std::string &reduction) {
  NdIndex nd(data, indices);
  HostTensor out = newFoldedTensor(data.dtype, data.dims);
  out.ints = data.ints;
  out.floats = data.floats;
  std::vector<bool> seen;
  for (int64_t t = 0; t < nd.tuples; ++t) {
    int64_t slice = nd.slice(data, indices, t);
    if (reduction == "none") {
      if (seen.empty())
        seen.assign(data.numElements() / std::max<int64_t>(nd.sliceSize, 1) + 1,
                    false);
      if (nd.sliceSize > 0 && seen[slice])
        throw ImportError("index tuple " + std::to_string(t) +
                          " addresses a slice an earlier tuple wrote; "
                          "reduction 'none' needs distinct indices");
      seen[slice] = true;
    }
    for (int64_t i = 0; i < nd.sliceSize; ++i)
      scatterElement(out, slice * nd.sliceSize + i, updates,
                     t * nd.sliceSize + i, reduction);
  }
  return out;
}

HostTensor foldCumSum(const HostTensor &in, int64_t axis, bool exclusive,
                      bool reverse) {
  HostTensor out = newFoldedTensor(in.dtype, in.dims);
  int64_t outer = 1, inner = 1, n = in.dims[axis];
  for (int64_t d = 0; d < axis; ++d)
    outer *= in.dims[d];
  for (size_t d = axis + 1; d < in.dims.size(); ++d)
    inner *= in.dims[d];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double facc = 0;
      int64_t iacc = 0;
      for (int64_t s = 0; s < n; ++s) {
        int64_t j = reverse ? n - 1 - s : s;
        int64_t at = (o * n + j) * inner + i;
        if (in.isFloat()) {
          if (!exclusive)
            facc += in.floats[at];
          out.floats[at] = facc;
          if (exclusive)
            facc += in.floats[at];
        } else {
          if (!exclusive)
            iacc = exactInt(iacc, in.ints[at], false, in.dtype);
          out.ints[at] = iacc;
          if (exclusive)
            iacc = exactInt(iacc, in.ints[at], false, in.dtype);
        }
      }
    }
  return out;
}

} // namespace zeroc::onnximport
