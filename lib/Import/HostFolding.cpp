//===- HostFolding.cpp - import-time evaluation of shape arithmetic -------===//
#include "HostTensor.h"

namespace zeroc::onnximport {

HostTensor newFoldedTensor(int32_t dtype, std::vector<int64_t> dims) {
  HostTensor out;
  out.dtype = dtype;
  out.dims = std::move(dims);
  int64_t n = checkedNumElements(out.dims);
  if (n > kMaxFoldElements)
    throw ImportError("constant of " + std::to_string(n) +
                      " elements is too large to fold at import time");
  out.resize(n);
  return out;
}

HostTensor foldElementwise(const std::vector<const HostTensor *> &ins,
                           const std::vector<int64_t> &outDims,
                           int32_t outDtype,
                           const std::function<double(const double *)> &fn) {
  HostTensor out = newFoldedTensor(outDtype, outDims);
  size_t rank = outDims.size();
  std::vector<std::vector<int64_t>> inStrides;
  for (const HostTensor *in : ins) {
    // Broadcast strides: 0 where the input dim is 1 or missing.
    std::vector<int64_t> s = stridesOf(in->dims), b(rank, 0);
    size_t off = rank - in->dims.size();
    for (size_t d = 0; d < in->dims.size(); ++d)
      b[off + d] = in->dims[d] == 1 ? 0 : s[d];
    inStrides.push_back(b);
  }
  std::vector<int64_t> idx(rank, 0);
  std::vector<double> args(ins.size());
  for (int64_t flat = 0; flat < out.numElements(); ++flat) {
    for (size_t k = 0; k < ins.size(); ++k) {
      int64_t pos = 0;
      for (size_t d = 0; d < rank; ++d)
        pos += idx[d] * inStrides[k][d];
      args[k] = ins[k]->getAsDouble(pos);
    }
    out.set(flat, fn(args.data()));
    nextIndex(idx, outDims);
  }
  return out;
}

HostTensor foldSlice(const HostTensor &in, const std::vector<int64_t> &starts,
                     const std::vector<int64_t> &steps,
                     const std::vector<int64_t> &outDims) {
  HostTensor out = newFoldedTensor(in.dtype, outDims);
  std::vector<int64_t> s = stridesOf(in.dims), idx(outDims.size(), 0);
  for (int64_t flat = 0; flat < out.numElements(); ++flat) {
    int64_t pos = 0;
    for (size_t d = 0; d < outDims.size(); ++d)
      pos += (starts[d] + idx[d] * steps[d]) * s[d];
    if (in.isFloat())
      out.floats[flat] = in.floats[pos];
    else
      out.ints[flat] = in.ints[pos];
    nextIndex(idx, outDims);
  }
  return out;
}

HostTensor foldGather(const HostTensor &data, const HostTensor &indices,
                      int64_t axis) {
  std::vector<int64_t> dims(data.dims.begin(), data.dims.begin() + axis);
  dims.insert(dims.end(), indices.dims.begin(), indices.dims.end());
  dims.insert(dims.end(), data.dims.begin() + axis + 1, data.dims.end());
  HostTensor out = newFoldedTensor(data.dtype, dims);
  int64_t outer = 1, inner = 1, axisDim = data.dims[axis];
  for (int64_t d = 0; d < axis; ++d)
    outer *= data.dims[d];
  for (size_t d = axis + 1; d < data.dims.size(); ++d)
    inner *= data.dims[d];
  int64_t n = indices.numElements(), flat = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < n; ++j) {
      int64_t i = indices.getAsInt(j);
      if (i < 0)
        i += axisDim;
      if (i < 0 || i >= axisDim)
        throw ImportError("gather index " + std::to_string(indices.getAsInt(j)) +
                          " is out of range for a dim of size " +
                          std::to_string(axisDim));
      for (int64_t k = 0; k < inner; ++k, ++flat) {
        int64_t pos = (o * axisDim + i) * inner + k;
        if (data.isFloat())
          out.floats[flat] = data.floats[pos];
        else
          out.ints[flat] = data.ints[pos];
      }
    }
  return out;
}

HostTensor foldConcat(const std::vector<const HostTensor *> &ins, int64_t axis) {
  std::vector<int64_t> dims = ins[0]->dims;
  dims[axis] = 0;
  for (const HostTensor *in : ins)
    dims[axis] += in->dims[axis];
  HostTensor out = newFoldedTensor(ins[0]->dtype, dims);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= dims[d];
  for (size_t d = axis + 1; d < dims.size(); ++d)
    inner *= dims[d];
  int64_t flat = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (const HostTensor *in : ins) {
      int64_t chunk = in->dims[axis] * inner;
      for (int64_t k = 0; k < chunk; ++k, ++flat) {
        if (out.isFloat())
          out.floats[flat] = in->getAsDouble(o * chunk + k);
        else
          out.ints[flat] = in->getAsInt(o * chunk + k);
      }
    }
  return out;
}

HostTensor foldTranspose(const HostTensor &in, const std::vector<int64_t> &perm) {
  std::vector<int64_t> dims;
  for (int64_t p : perm)
    dims.push_back(in.dims[p]);
  HostTensor out = newFoldedTensor(in.dtype, dims);
  std::vector<int64_t> s = stridesOf(in.dims), idx(dims.size(), 0);
  for (int64_t flat = 0; flat < out.numElements(); ++flat) {
    int64_t pos = 0;
    for (size_t d = 0; d < dims.size(); ++d)
      pos += idx[d] * s[perm[d]];
    if (out.isFloat())
      out.floats[flat] = in.floats[pos];
    else
      out.ints[flat] = in.ints[pos];
    nextIndex(idx, dims);
  }
  return out;
}

HostTensor foldTrilu(const HostTensor &in, bool upper, int64_t k) {
  HostTensor out = in;
  size_t r = in.dims.size();
  int64_t rows = in.dims[r - 2], cols = in.dims[r - 1];
  for (int64_t flat = 0; flat < in.numElements(); ++flat) {
    int64_t col = flat % cols, row = (flat / cols) % rows;
    bool keep = upper ? col - row >= k : col - row <= k;
    if (!keep)
      out.set(flat, 0.0);
  }
  return out;
}

} // namespace zeroc::onnximport
