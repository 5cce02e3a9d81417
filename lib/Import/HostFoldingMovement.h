//===- HostFoldingMovement.h - folds of Pad, Tile, Range, ... ---*- C++ -*-===//
//
// Import-time evaluation of the data-movement and scan ops whose inputs are
// all host constants (position ids, masks, relative-position buckets, shifted
// labels). Arguments are already normalized and checked by the converters in
// ConvertMovementOps.cpp; every fold checks the result size (kMaxFoldElements).
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_LIB_IMPORT_HOSTFOLDINGMOVEMENT_H
#define ZEROC_LIB_IMPORT_HOSTFOLDINGMOVEMENT_H

#include "HostTensor.h"

#include <string>

namespace zeroc::onnximport {

/// `pads` has 2 * rank entries [b0, ..., e0, ...]; mode is constant,
/// reflect, edge or wrap (graph.pad's semantics).
HostTensor foldPad(const HostTensor &in, const std::vector<int64_t> &pads,
                   const std::string &mode, double value);
HostTensor foldTile(const HostTensor &in, const std::vector<int64_t> &repeats);
/// Elements start, start + delta, ... before limit, in `dtype` (integers
/// exactly; delta != 0).
HostTensor foldRange(const HostTensor &start, const HostTensor &limit,
                     const HostTensor &delta);
HostTensor foldGatherElements(const HostTensor &data, const HostTensor &indices,
                              int64_t axis);
HostTensor foldGatherND(const HostTensor &data, const HostTensor &indices);
/// reduction is none, add or mul; none rejects repeated slices.
HostTensor foldScatterND(const HostTensor &data, const HostTensor &indices,
                         const HostTensor &updates, const std::string &reduction);
HostTensor foldCumSum(const HostTensor &in, int64_t axis, bool exclusive,
                      bool reverse);

} // namespace zeroc::onnximport

#endif // ZEROC_LIB_IMPORT_HOSTFOLDINGMOVEMENT_H
