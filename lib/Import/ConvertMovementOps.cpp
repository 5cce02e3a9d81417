//===- ConvertMovementOps.cpp - Pad, Tile, Range, Flatten, scatters, scans ===//
//
// Pad, Tile, Flatten, GatherElements, GatherND, ScatterND, ScatterElements,
// CumSum. Every one folds on the host when all its inputs are host constants
// (real exports build position ids, masks and shifted labels this way);
// otherwise it becomes a graph op (Tile: reshape + expand + reshape; Flatten:
// reshape).
// The inputs that determine a shape or an axis (Pad's pads and axes, Tile's
// repeats, CumSum's axis) must be compile-time constants. Range, which only
// folds, is in ConvertFoldOnlyOps.cpp.
//
//===----------------------------------------------------------------------===//

#include "HostFoldingMovement.h"
#include "NodeConverter.h"

#include "zeroc/Dialect/Graph/GraphOps.h"

#include <cmath>
#include <set>

using namespace mlir;

namespace zeroc::onnximport {

namespace {

using TP = onnx::TensorProto;

/// The single value of a constant scalar (or one-element) input.
const HostTensor &constScalar(NodeConverter &c, int i, const char *what) {
  const HostTensor &h = c.constInput(i, what);
  if (h.numElements() != 1)
    throw ImportError(std::string("input '") + c.node.input(i) + "' (" + what +
                      ") must hold exactly one element");
  return h;
}

/// Checks constant indices against a dim of `size` (negative ones count from
/// the end).
void checkIndices(const HostTensor &idx, int64_t size, const char *what) {
  if (idx.isFloat())
    throw ImportError(std::string(what) + " must be integers");
  for (int64_t v : idx.ints)
    if (v < -size || v >= size)
      throw ImportError(std::string(what) + " " + std::to_string(v) +
                        " is out of range for a dim of size " +
                        std::to_string(size));
}

//===----------------------------------------------------------------------===//
// Pad
//===----------------------------------------------------------------------===//

void convertPad(NodeConverter &c) {
  int64_t opset = c.gb.opsetVersion();
  std::vector<int64_t> in = shapeVector(c.type(0));
  int64_t rank = in.size();
  std::string mode = c.attrString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    throw ImportError("mode '" + mode +
                      "' is not one of constant, reflect, edge, wrap");
  if (mode == "wrap" && opset < 19)
    throw ImportError("mode 'wrap' needs opset 19 or later (the model "
                      "imports opset " + std::to_string(opset) + ")");
  std::vector<int64_t> given = c.constInts(1, "pads");
  std::vector<int64_t> axes;
  if (c.hasInput(3)) {
    if (opset < 18)
      throw ImportError("input 'axes' needs opset 18 or later (the model "
                        "imports opset " + std::to_string(opset) + ")");
    axes = c.constInts(3, "axes");
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  if (given.size() != 2 * axes.size())
    throw ImportError("pads has " + std::to_string(given.size()) +
                      " entries; expected 2 per padded axis (" +
                      std::to_string(2 * axes.size()) + ")");
  std::vector<int64_t> pads(2 * rank, 0);
  std::vector<bool> seen(rank, false);
  int64_t n = axes.size();
  for (int64_t i = 0; i < n; ++i) {
    int64_t a = c.normAxis(axes[i], rank);
    if (seen[a])
      throw ImportError("axes repeat " + std::to_string(axes[i]));
    seen[a] = true;
    pads[a] = given[i];
    pads[a + rank] = given[i + n];
  }
  for (int64_t d = 0; d < rank; ++d) {
    int64_t lo = pads[d], hi = pads[d + rank];
    if ((lo < 0 || hi < 0) && mode != "constant" && mode != "edge")
      // Whether a crop happens before the mirror or wrap changes the result;
      // ONNX does not say, so zeroc does not guess.
      throw ImportError("negative pads (cropping) of dim " + std::to_string(d) +
                        " are supported in constant and edge mode only, not '" +
                        mode + "'");
  }
  double value = 0.0;
  if (c.hasInput(2)) {
    const HostTensor &v = constScalar(c, 2, "constant_value");
    if (v.dtype != c.dtype(0))
      throw ImportError("constant_value has a different element type than "
                        "the data");
    value = v.getAsDouble(0);
    if (!v.isFloat() && std::fabs(value) > 9007199254740992.0)
      throw ImportError("constant_value " + std::to_string(v.ints[0]) +
                        " is beyond 2^53, which zeroc cannot hold exactly");
  }
  bool noop = true;
  for (int64_t p : pads)
    noop = noop && p == 0;
  if (noop) {
    c.forward(0, 0);
    return;
  }
  std::string why;
  if (failed(graph::padShape(in, pads, mode, why)))
    throw ImportError(why);
  if (c.isConst(0)) {
    c.setOutput(0, foldPad(*c.input(0).constant, pads, mode, value));
    return;
  }
  SmallVector<NamedAttribute> attrs = {
      c.named("pads", c.i64Array(pads)),
      c.named("mode", c.gb.builder().getStringAttr(mode)),
      c.named("value", c.gb.builder().getF64FloatAttr(value))};
  c.setOutput(0, c.create(graph::PadOp::getOperationName(), {c.value(0)}, attrs)
                     ->getResult(0));
}

//===----------------------------------------------------------------------===//
// Tile, Flatten
//===----------------------------------------------------------------------===//

void convertTile(NodeConverter &c) {
  std::vector<int64_t> in = shapeVector(c.type(0));
  std::vector<int64_t> repeats = c.constInts(1, "repeats");
  if (repeats.size() != in.size())
    throw ImportError("repeats has " + std::to_string(repeats.size()) +
                      " entries for rank " + std::to_string(in.size()));
  std::vector<int64_t> out, split, expanded;
  for (size_t d = 0; d < in.size(); ++d) {
    if (repeats[d] < 0)
      throw ImportError("repeats must be non-negative, got " +
                        std::to_string(repeats[d]));
    out.push_back(checkedNumElements({in[d], repeats[d]}));
    // x (.., n, ..) tiled r times is x (.., 1, n, ..) broadcast to (.., r, n,
    // ..), read row-major: copy j of dim d is the block j * n + i.
    if (repeats[d] != 1) {
      split.push_back(1);
      expanded.push_back(repeats[d]);
    }
    split.push_back(in[d]);
    expanded.push_back(in[d]);
  }
  checkedNumElements(out);
  if (out == in) {
    c.forward(0, 0);
    return;
  }
  if (c.isConst(0)) {
    c.setOutput(0, foldTile(*c.input(0).constant, repeats));
    return;
  }
  if (split.size() > 8)
    throw ImportError("tiling " + std::to_string(split.size() - in.size()) +
                      " dims of a rank-" + std::to_string(in.size()) +
                      " tensor needs rank " + std::to_string(split.size()) +
                      ", more than zeroc's 8");
  Type elem = c.type(0).getElementType();
  Value v = c.value(0);
  if (split != in)
    v = c.create(graph::ReshapeOp::getOperationName(), {v}, {},
                 {RankedTensorType::get(split, elem)})
            ->getResult(0);
  v = c.create(graph::ExpandOp::getOperationName(), {v}, {},
               {RankedTensorType::get(expanded, elem)})
          ->getResult(0);
  v = c.create(graph::ReshapeOp::getOperationName(), {v}, {},
               {RankedTensorType::get(out, elem)})
          ->getResult(0);
  c.setOutput(0, v);
}

void convertFlatten(NodeConverter &c) {
  std::vector<int64_t> in = shapeVector(c.type(0));
  int64_t rank = in.size(), axis = c.attrInt("axis", 1);
  if (axis < -rank || axis > rank)
    throw ImportError("axis " + std::to_string(axis) +
                      " is out of range [-rank, rank] for rank " +
                      std::to_string(rank));
  if (axis < 0)
    axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d)
    (d < axis ? outer : inner) *= in[d];
  reshapeTo(c, {outer, inner});
}

//===----------------------------------------------------------------------===//
// GatherElements, GatherND, ScatterND, ScatterElements
//===----------------------------------------------------------------------===//

/// GatherElements' and ScatterElements' axis (normalized) and indices (input
/// 1): data's rank, dims no larger off the axis, constant ones in range.
int64_t elementAxis(NodeConverter &c) {
  RankedTensorType data = c.type(0);
  int64_t axis = c.normAxis(c.attrInt("axis", 0), data.getRank());
  if (c.type(1).getRank() != data.getRank())
    throw ImportError("indices must have the rank of data");
  for (int64_t d = 0; d < data.getRank(); ++d)
    if (d != axis && c.type(1).getDimSize(d) > data.getDimSize(d))
      throw ImportError("indices dim " + std::to_string(d) +
                        " exceeds the data's");
  if (c.isConst(1))
    checkIndices(*c.input(1).constant, data.getDimSize(axis), "index");
  return axis;
}

void convertGatherElements(NodeConverter &c) {
  int64_t axis = elementAxis(c);
  if (c.allConst()) {
    c.setOutput(0, foldGatherElements(*c.input(0).constant,
                                      *c.input(1).constant, axis));
    return;
  }
  c.setOutput(0, c.create(graph::GatherElementsOp::getOperationName(),
                          {c.value(0), c.value(1)},
                          {c.named("axis", c.gb.builder().getI64IntegerAttr(axis))})
                     ->getResult(0));
}

/// Checks (..., k) constant indices against data's leading dims.
void checkTupleIndices(NodeConverter &c, int dataInput, int indexInput) {
  RankedTensorType data = c.type(dataInput), idx = c.type(indexInput);
  if (idx.getRank() < 1 || idx.getShape().back() < 1 ||
      idx.getShape().back() > data.getRank())
    throw ImportError("indices must have shape (..., k) with 1 <= k <= the "
                      "data rank");
  if (!c.isConst(indexInput))
    return;
  const HostTensor &h = *c.input(indexInput).constant;
  if (h.isFloat())
    throw ImportError("indices must be integers");
  int64_t k = idx.getShape().back();
  for (int64_t i = 0; i < h.numElements(); ++i) {
    int64_t size = data.getDimSize(i % k), v = h.ints[i];
    if (v < -size || v >= size)
      throw ImportError("index " + std::to_string(v) + " (entry " +
                        std::to_string(i % k) + " of a tuple) is out of range "
                        "for a dim of size " + std::to_string(size));
  }
}

void convertGatherND(NodeConverter &c) {
  if (c.attrInt("batch_dims", 0) != 0)
    throw ImportError("batch_dims other than 0 are not supported");
  checkTupleIndices(c, 0, 1);
  if (c.allConst()) {
    c.setOutput(0, foldGatherND(*c.input(0).constant, *c.input(1).constant));
    return;
  }
  c.setOutput(0, c.create(graph::GatherNDOp::getOperationName(),
                          {c.value(0), c.value(1)}, {})
                     ->getResult(0));
}

/// The scatters' reduction attribute (none, add or mul; add and mul from
/// opset 16, of numeric data) and updates' element type.
std::string scatterReduction(NodeConverter &c) {
  std::string reduction = c.attrString("reduction", "none");
  if (reduction != "none" && reduction != "add" && reduction != "mul")
    throw ImportError("reduction '" + reduction +
                      "' is not supported (none, add, mul are)");
  if (reduction != "none" && c.gb.opsetVersion() < 16)
    throw ImportError("attribute 'reduction' needs opset 16 or later");
  if (reduction != "none" && c.dtype(0) == TP::BOOL)
    throw ImportError("reduction '" + reduction + "' needs numeric data, not bool");
  if (c.type(0).getElementType() != c.type(2).getElementType())
    throw ImportError("updates has a different element type than data");
  return reduction;
}

void convertScatterND(NodeConverter &c) {
  std::string reduction = scatterReduction(c);
  checkTupleIndices(c, 0, 1);
  if (c.allConst()) {
    c.setOutput(0, foldScatterND(*c.input(0).constant, *c.input(1).constant,
                                 *c.input(2).constant, reduction));
    return;
  }
  c.setOutput(0, c.create(graph::ScatterNDOp::getOperationName(),
                          {c.value(0), c.value(1), c.value(2)},
                          {c.named("reduction",
                                   c.gb.builder().getStringAttr(reduction))},
                          {c.type(0)})
                     ->getResult(0));
}

void convertScatterElements(NodeConverter &c) {
  std::string reduction = scatterReduction(c);
  int64_t axis = elementAxis(c);
  if (c.type(2).getShape() != c.type(1).getShape())
    throw ImportError("updates must have the shape of indices");
  if (c.isConst(1) && reduction == "none")
    elementTargets(shapeVector(c.type(0)), *c.input(1).constant, axis, true);
  if (c.allConst()) {
    c.setOutput(0, foldScatterElements(*c.input(0).constant,
                                       *c.input(1).constant,
                                       *c.input(2).constant, axis, reduction));
    return;
  }
  auto &b = c.gb.builder();
  c.setOutput(0, c.create(graph::ScatterElementsOp::getOperationName(),
                          {c.value(0), c.value(1), c.value(2)},
                          {c.named("axis", b.getI64IntegerAttr(axis)),
                           c.named("reduction", b.getStringAttr(reduction))},
                          {c.type(0)})
                     ->getResult(0));
}

//===----------------------------------------------------------------------===//
// CumSum
//===----------------------------------------------------------------------===//

void convertCumSum(NodeConverter &c) {
  RankedTensorType t = c.type(0);
  const HostTensor &a = constScalar(c, 1, "axis");
  if (a.isFloat())
    throw ImportError("axis must be an integer");
  if (t.getRank() == 0)
    throw ImportError("input must have rank >= 1");
  int64_t axis = c.normAxis(a.ints[0], t.getRank());
  int32_t dt = c.dtype(0);
  if (dt == TP::BOOL || dt == TP::INT8)
    throw ImportError("CumSum of " + std::string(dt == TP::BOOL ? "bool" : "int8") +
                      " is not supported");
  bool exclusive = c.attrInt("exclusive", 0) != 0;
  bool reverse = c.attrInt("reverse", 0) != 0;
  if (c.isConst(0)) {
    c.setOutput(0, foldCumSum(*c.input(0).constant, axis, exclusive, reverse));
    return;
  }
  auto &b = c.gb.builder();
  c.setOutput(0, c.create(graph::CumSumOp::getOperationName(), {c.value(0)},
                          {c.named("axis", b.getI64IntegerAttr(axis)),
                           c.named("exclusive", b.getBoolAttr(exclusive)),
                           c.named("reverse", b.getBoolAttr(reverse))},
                          {t})
                     ->getResult(0));
}

} // namespace

bool convertMovementOp(NodeConverter &c) {
  const std::string &op = c.node.op_type();
  if (op == "Pad") convertPad(c);
  else if (op == "Tile") convertTile(c);
  else if (op == "Flatten") convertFlatten(c);
  else if (op == "GatherElements") convertGatherElements(c);
  else if (op == "GatherND") convertGatherND(c);
  else if (op == "ScatterND") convertScatterND(c);
  else if (op == "ScatterElements") convertScatterElements(c);
  else if (op == "CumSum") convertCumSum(c);
  else return false;
  return true;
}

} // namespace zeroc::onnximport
