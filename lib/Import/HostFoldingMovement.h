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
/// The flat position in data (of `dataDims`) that each element of `indices`
/// addresses, its index replacing coordinate `axis` (gather_elements' and
/// scatter_elements' rule; negative indices count from the end, out-of-range
/// ones are an error). With `distinct`, a position addressed twice is an
/// error (scatter_elements' reduction none).
std::vector<int64_t> elementTargets(const std::vector<int64_t> &dataDims,
                                    const HostTensor &indices, int64_t axis,
                                    bool distinct);
HostTensor foldGatherElements(const HostTensor &data, const HostTensor &indices,
                              int64_t axis);
HostTensor foldGatherND(const HostTensor &data, const HostTensor &indices);
/// reduction is none, add or mul; none rejects repeated slices.
HostTensor foldScatterND(const HostTensor &data, const HostTensor &indices,
                         const HostTensor &updates, const std::string &reduction);
/// indices and updates have one shape; reduction is none (which rejects
/// repeated elements), add or mul.
HostTensor foldScatterElements(const HostTensor &data, const HostTensor &indices,
                               const HostTensor &updates, int64_t axis,
                               const std::string &reduction);
HostTensor foldCumSum(const HostTensor &in, int64_t axis, bool exclusive,
                      bool reverse);

} // namespace zeroc::onnximport

#endif // ZEROC_LIB_IMPORT_HOSTFOLDINGMOVEMENT_H
