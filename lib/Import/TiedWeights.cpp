//===- TiedWeights.cpp - undo an exporter's folded tied weights -----------===//
//
// A constant-folding exporter turns `x @ wte.weight.t()` (a tied output
// head) into a new initializer holding the transpose of wte.weight. Trained
// as it is, that initializer would be a second, untied parameter. This file
// finds such initializers: bitwise copies or transposes (last two dims
// swapped) of an original. Hashes keep it linear in the model's bytes: one
// hash of every tensor, and one of the transpose of every original that has
// a candidate of its element count; a hash match is confirmed byte by byte.
//
//===----------------------------------------------------------------------===//
#include "ParameterMarker.h"

#include "zeroc/Dialect/Graph/ElementsData.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/xxhash.h"

#include <cstring>
#include <unordered_set>

using namespace mlir;

namespace zeroc::onnximport {

namespace {

struct Tensor {
  ArrayRef<char> bytes;
  RankedTensorType type;
  size_t width = 0;
  bool uniform = false;
};

Tensor describe(ElementsAttr value) {
  Tensor t;
  t.type = llvm::cast<RankedTensorType>(value.getShapedType());
  t.bytes = zeroc::graph::storedBytes(value);
  int64_t n = t.type.getNumElements();
  t.width = n ? t.bytes.size() / (zeroc::graph::isSplatElements(value) ? 1 : n) : 0;
  t.uniform = isUniform(value);
  return t;
}

/// The tensor with its last two dims swapped, as packed bytes.
std::vector<char> transposed(const Tensor &t) {
  ArrayRef<int64_t> shape = t.type.getShape();
  int64_t rows = shape[shape.size() - 2], cols = shape.back();
  int64_t batches = rows * cols ? t.type.getNumElements() / (rows * cols) : 0;
  std::vector<char> out(t.bytes.size());
  const size_t w = t.width;
  for (int64_t b = 0; b < batches; ++b) {
    const char *in = t.bytes.data() + b * rows * cols * w;
    char *o = out.data() + b * rows * cols * w;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        std::memcpy(o + (j * rows + i) * w, in + (i * cols + j) * w, w);
  }
  return out;
}

uint64_t hashOf(ArrayRef<char> bytes) {
  return llvm::xxh3_64bits(
      ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()));
}

} // namespace

bool isUniform(ElementsAttr value) {
  if (zeroc::graph::isSplatElements(value))
    return true;
  ArrayRef<char> bytes = zeroc::graph::storedBytes(value);
  int64_t n = value.getNumElements();
  if (n <= 1)
    return true;
  size_t w = bytes.size() / n;
  for (int64_t i = 1; i < n; ++i)
    if (std::memcmp(bytes.data(), bytes.data() + i * w, w))
      return false;
  return true;
}

std::vector<std::pair<std::string, TiedInit>> findTiedInitializers(
    const std::vector<std::pair<std::string, ElementsAttr>> &inits,
    const std::vector<size_t> &order, const std::vector<bool> &isOriginal,
    const std::vector<bool> &isCandidate) {
  std::vector<Tensor> tensors;
  tensors.reserve(inits.size());
  std::unordered_set<int64_t> candidateSizes;
  for (size_t i = 0; i < inits.size(); ++i) {
    tensors.push_back(describe(inits[i].second));
    if (isCandidate[i] && !tensors[i].uniform)
      candidateSizes.insert(tensors[i].type.getNumElements());
  }
  std::vector<std::pair<std::string, TiedInit>> ties;
  if (candidateSizes.empty())
    return ties;

  // Originals seen so far, by the hash of their bytes and of their transpose.
  std::unordered_multimap<uint64_t, size_t> copies, transposes;
  auto sameType = [&](const Tensor &a, const Tensor &b) {
    return a.type.getElementType() == b.type.getElementType() &&
           a.bytes.size() == b.bytes.size();
  };
  for (size_t i : order) {
    const Tensor &t = tensors[i];
    if (t.uniform)
      continue;
    uint64_t h = hashOf(t.bytes);
    if (isCandidate[i]) {
      std::optional<TiedInit> tie;
      auto [b, e] = copies.equal_range(h);
      for (auto it = b; it != e && !tie; ++it) {
        const Tensor &o = tensors[it->second];
        if (sameType(o, t) && o.type.getShape() == t.type.getShape() &&
            !std::memcmp(o.bytes.data(), t.bytes.data(), t.bytes.size()))
          tie = TiedInit{inits[it->second].first, false};
      }
      std::tie(b, e) = transposes.equal_range(h);
      for (auto it = b; it != e && !tie; ++it) {
        const Tensor &o = tensors[it->second];
        SmallVector<int64_t> swapped(o.type.getShape());
        std::swap(swapped[swapped.size() - 1], swapped[swapped.size() - 2]);
        if (!sameType(o, t) || ArrayRef<int64_t>(swapped) != t.type.getShape())
          continue;
        std::vector<char> ot = transposed(o);
        if (!std::memcmp(ot.data(), t.bytes.data(), t.bytes.size()))
          tie = TiedInit{inits[it->second].first, true};
      }
      if (tie) {
        ties.emplace_back(inits[i].first, *tie);
        continue;
      }
    }
    if (!isOriginal[i])
      continue;
    copies.emplace(h, i);
    if (t.type.getRank() >= 2 && candidateSizes.count(t.type.getNumElements()))
      transposes.emplace(hashOf(transposed(t)), i);
  }
  return ties;
}

} // namespace zeroc::onnximport
