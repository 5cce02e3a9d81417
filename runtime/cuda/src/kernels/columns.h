//===- kernels/columns.h - Reductions down a matrix's columns -*- C++ -*-===//
//
// A bias gradient sums a [rows, cols] gradient down its columns. One block
// per column, its threads striding over the rows, reads a column's elements
// one row apart: every load of a warp touches 32 cache lines. Here a block
// takes a tile of 32 columns and a chunk of the rows instead: its threads
// are 32 lanes across the columns (a warp reads 32 neighbouring elements of
// a row) and row groups down the chunk. Each block leaves one partial value
// per column of its tile and chunk; a second kernel combines a column's
// chunks in order. Chunks are sized from the shape alone (about 1024 blocks
// in all), so the order of the sums, and the result, is the same on every
// GPU and on every run.
//
// Callers write two kernels around the device functions below:
// columnPartials (per block) and combineColumn (per output element).
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_CUDA_SRC_KERNELS_COLUMNS_H
#define ZEROC_RT_CUDA_SRC_KERNELS_COLUMNS_H

#include "kernels/common.h"

namespace zeroc_rt::cuda {

/// Columns per block.
constexpr int kColumnTile = 32;

/// A reduction of `outer` matrices of [rows, cols] down their columns:
/// `tiles` tiles of kColumnTile columns, the rows cut into `splits` chunks of
/// `chunk` rows, one block per (tile, chunk).
struct ColumnPlan {
  int64_t outer = 1, rows = 0, cols = 0;
  int64_t tilesPerMatrix = 0, tiles = 0, splits = 1, chunk = 0;
  ZRT_HD int64_t blocks() const { return tiles * splits; }
  ZRT_HD int64_t outputs() const { return outer * cols; }
};

inline ColumnPlan columnPlan(int64_t outer, int64_t rows, int64_t cols) {
  ColumnPlan p;
  p.outer = outer;
  p.rows = rows;
  p.cols = cols;
  p.tilesPerMatrix = (cols + kColumnTile - 1) / kColumnTile;
  p.tiles = outer * p.tilesPerMatrix;
  // About 1024 blocks, each chunk at least 64 rows.
  constexpr int64_t kTargetBlocks = 1024, kMinChunk = 64;
  int64_t splits = p.tiles >= kTargetBlocks ? 1 : kTargetBlocks / p.tiles;
  const int64_t most = (rows + kMinChunk - 1) / kMinChunk;
  splits = splits < most ? splits : most;
  splits = splits < 1 ? 1 : splits;
  p.chunk = (rows + splits - 1) / splits;
  p.splits = p.chunk ? (rows + p.chunk - 1) / p.chunk : 1;
  return p;
}

/// The scratch elements of the partials of N values per column.
inline int64_t columnPartialCount(const ColumnPlan &p, int n) {
  return static_cast<int64_t>(n) * p.splits * p.outputs();
}

/// The block's threads as kColumnTile lanes (fewer in a smaller block, such
/// as the emulation's single thread) times row groups.
struct ColumnLanes {
  int lanes, groups, x, y;
  bool active;
};
ZRT_DEV ColumnLanes columnLanes() {
  ColumnLanes l;
  const int threads = blockThreads(), t = threadIndex();
  l.lanes = threads < kColumnTile ? threads : kColumnTile;
  l.groups = threads / l.lanes;
  if (l.groups > kColumnTile)
    l.groups = kColumnTile;
  l.x = t % l.lanes;
  l.y = t / l.lanes;
  l.active = l.y < l.groups;
  return l;
}

/// Phase 1: for each block's (tile, chunk), v[k] = the combination of
/// value(o, r, c, v) over the chunk's rows r, for the tile's columns c of
/// matrix o, into partials[((k * splits + chunk) * outer + o) * cols + c].
/// `shared` is the caller's __shared__ C[N][kColumnTile][kColumnTile + 1].
template <int N, typename C, typename Value, typename Combine>
ZRT_DEV void columnPartials(const ColumnPlan &p, C init, C (*shared)[kColumnTile][kColumnTile + 1],
                            C *partials, Value value, Combine combine) {
  const ColumnLanes l = columnLanes();
  for (int64_t b = blockIndex(); b < p.blocks(); b += gridBlocks()) {
    const int64_t tile = b % p.tiles, split = b / p.tiles;
    const int64_t o = tile / p.tilesPerMatrix;
    const int64_t c0 = (tile % p.tilesPerMatrix) * kColumnTile;
    const int64_t r0 = split * p.chunk;
    const int64_t r1 = r0 + p.chunk < p.rows ? r0 + p.chunk : p.rows;
    for (int cx = l.x; cx < kColumnTile; cx += l.lanes) {
      const int64_t c = c0 + cx;
      C acc[N];
      for (int k = 0; k < N; ++k)
        acc[k] = init;
      if (l.active && c < p.cols)
        for (int64_t r = r0 + l.y; r < r1; r += l.groups) {
          C v[N];
          value(o, r, c, v);
          for (int k = 0; k < N; ++k)
            acc[k] = combine(acc[k], v[k]);
        }
      if (l.active)
        for (int k = 0; k < N; ++k)
          shared[k][l.y][cx] = acc[k];
    }
    syncBlock();
    if (l.active && l.y == 0)
      for (int cx = l.x; cx < kColumnTile; cx += l.lanes) {
        const int64_t c = c0 + cx;
        if (c >= p.cols)
          continue;
        for (int k = 0; k < N; ++k) {
          C v = shared[k][0][cx];
          for (int g = 1; g < l.groups; ++g)
            v = combine(v, shared[k][g][cx]);
          partials[((k * p.splits + split) * p.outer + o) * p.cols + c] = v;
        }
      }
    syncBlock(); // shared is reused by the block's next tile
  }
}

/// Phase 2: output i (of outer * cols): its N values' chunks combined in
/// order, into v.
template <int N, typename C, typename Combine>
ZRT_DEV void combineColumn(const ColumnPlan &p, const C *partials, int64_t i, C *v,
                           Combine combine) {
  for (int k = 0; k < N; ++k) {
    const C *part = partials + k * p.splits * p.outputs() + i;
    C acc = part[0];
    for (int64_t s = 1; s < p.splits; ++s)
      acc = combine(acc, part[s * p.outputs()]);
    v[k] = acc;
  }
}

} // namespace zeroc_rt::cuda

#endif // ZEROC_RT_CUDA_SRC_KERNELS_COLUMNS_H
