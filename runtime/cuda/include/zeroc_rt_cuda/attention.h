//===- zeroc_rt_cuda/attention.h - Attention in one kernel -*- C++ -*-===//
//
// A softmax attention o = softmax(score(q k^T)) v, and its gradient, without
// the [batch, heads, tq, tk] scores or probabilities in memory (a flash
// attention: docs/CudaTarget.md, "Attention in one kernel"). q and o are
// [batch, heads, tq, D], k and v [batch, heads, tk, D], each at element
// strides of its own (Strides4), so the kernels read q, k and v where the
// QKV projection put them and write o, dq, dk and dv where their readers
// want them; q, k and v may each carry an addend (a bias the kernels add as
// they load, AttnIn). `score(i, s)` is the prologue a graph.fused_attention carries:
// s is a product of q's and k's rows in float, i its element's index in the
// [batch, heads, tq, tk] scores; it returns the softmax's input (the
// scale, the mask: -inf drops a key). The gradient's `epilogue(i, g)` takes
// the softmax's input gradient, as softmax_grad would store it, and returns
// the gradient of the product q k^T. `drop` is a dropout on the
// probabilities (between the softmax and the product with v), its mask
// drawn per score as the dropout op draws it; backward, the same mask
// applies to dO v^T. o is still the sum of the dropped p times v, so the
// softmax gradient's dot product is still dO . o.
//
// Products on tensor cores (zeroc_rt_cuda/mma.h, f16 or bf16), the
// softmax in float. A block has kAttnWarps warps of 16 rows each:
//  - attentionForward: a block per 64 query rows of one (batch, head); it
//    walks k and v in tiles through shared memory, keeps its rows' running
//    max and sum (an online softmax) and its o in registers, and writes o
//    and each row's log-sum-exp (lse, float [batch, heads, tq]).
//  - attentionGradQ: a block per 64 query rows; first each row's
//    delta = sum(dO * o) (the softmax gradient's dot product, float
//    [batch, heads, tq]), then dq over the key tiles.
//  - attentionGradKV: a block per 64 keys, after attentionGradQ (it reads
//    delta); dk and dv over the query tiles.
// For heads of at most 64 (kAttnOneWalkMaxDim) the gradient walks the
// scores once, as FlashAttention-2 does: attentionGradDelta (delta, and a
// float dq accumulator zeroed), then attentionGradKV with that accumulator,
// which also adds each key block's share of dq into it (dS K, atomic adds),
// then attentionGradStoreQ (dq rounded to T). That computes q k^T and
// dO v^T once per tile pair instead of twice (5 products instead of 7);
// the order of dq's float sums then depends on the blocks' timing.
// Each walks its tiles through two buffers of shared memory, the next
// tile's loads (cp.async where rows are 16 bytes wide) in flight while it
// computes on this one (attn::issueRows, finishRows). The gradient
// kernels recompute the probabilities from lse. Every value
// the unfused ops would store is rounded to the storage type T where they
// would store it (the product q k^T before the prologue, the
// probabilities, dO v^T, the softmax gradient), so the fused program
// follows the unfused one's rounding; what differs is the order of sums,
// the probabilities' normalization (o is divided by the row's sum at the
// end) and delta (from o, where softmax_grad sums p * dp).
//
//===----------------------------------------------------------------------===//

#ifndef ZEROC_RT_CUDA_ATTENTION_H
#define ZEROC_RT_CUDA_ATTENTION_H

#include "zeroc_rt_cuda/compat.h"
#include "zeroc_rt_cuda/mma.h"
#include "zeroc_rt_cuda/scalar_ops.h"

namespace zeroc_rt::cuda {

constexpr int kAttnWarps = 4;
/// The largest head whose gradient walks the scores once (attentionGradKV
/// with a dq accumulator): its key tile and the scores' gradient need
/// shared memory beside the query tiles, within the 48 KB of a block's
/// static shared memory.
constexpr int kAttnOneWalkMaxDim = 64;
constexpr int kAttnThreads = 32 * kAttnWarps;
/// Rows a block owns: query rows, or keys in attentionGradKV.
constexpr int kAttnRows = 16 * kAttnWarps;

/// Element strides of a [batch, heads, time, dim] operand, in that order.
struct Strides4 {
  int64_t b, h, t, d;
};

/// An operand the kernels read, q, k or v: `x` at strides `s`, plus, when
/// `add` is set, `add` at strides `as` (a bias broadcast over batch and
/// time: strides 0 there), which the kernels add as they load x, each sum
/// rounded to T as the graph.add that zero-fuse-attention-bias folded in
/// stores it (bias + x in float, then T).
template <typename T> struct AttnIn {
  const T *x;
  Strides4 s;
  const T *add = nullptr;
  Strides4 as{0, 0, 0, 0};
};

/// An attention's batch, heads, query rows and keys (the head dimension is
/// the kernels' template parameter D). `causal`: the kernels mask every key
/// after its query (masked): its score is -inf whatever the prologue
/// gives, and its gradient enters the epilogue as +0, which the epilogue
/// keeps zero (zero-fuse-attention proves that the graph's mask does this
/// and takes the mask's where out of both), so those scores add exactly
/// nothing, forward or backward: the kernels skip the tiles that hold no
/// other score. (A row masked entirely is NaN either way; the skipped tiles
/// then spread the NaN to fewer of dk, dv.)
struct AttentionShape {
  int64_t batch, heads, tq, tk;
  int causal;
};

/// A dropout on the probabilities: zeroc_rt_k_dropout's mask under `key`
/// (dropoutKey of the op's seed and the micro-step's counter), element i
/// the score's flat index in [batch, heads, tq, tk], as the dropout op of
/// the [batch, heads, tq, tk] probabilities indexes it; the kept ones'
/// scale and the mask's threshold follow from the ratio. Ratio 0 (the
/// default): none.
struct AttentionDropout {
  double ratio = 0.0, keepScale = 1.0;
  uint64_t key = 0, threshold = 0;
  AttentionDropout() = default;
  ZRT_HD AttentionDropout(double ratio, uint64_t key)
      : ratio(ratio), keepScale(dropoutKeepScale(ratio)), key(key),
        threshold(dropoutThreshold(ratio)) {}
  ZRT_HD bool keeps(int64_t i) const { return dropoutKeeps(i, threshold, key); }
};

/// Whether the score of `key` for query `row` is masked: a key after its
/// query in a causal attention.
ZRT_HD bool masked(const AttentionShape &g, int64_t row, int64_t key) {
  return g.causal && key > row;
}

/// The keys a block of query rows [row0, row0 + kAttnRows) reads: all, or
/// up to its last row's when causal.
ZRT_HD int64_t keysFor(const AttentionShape &g, int64_t row0) {
  const int64_t last = row0 + kAttnRows < g.tq ? row0 + kAttnRows : g.tq;
  return g.causal && last < g.tk ? last : g.tk;
}
/// The first query row whose tile (of R rows) a block of keys from `key0`
/// reads: 0, or the tile of key0's own row when causal.
ZRT_HD int64_t firstQueryFor(const AttentionShape &g, int64_t key0, int64_t r) {
  return g.causal ? key0 / r * r : 0;
}

/// Words of padding after each row of a tile in shared memory, so that the
/// fragment reads of a warp's 8 row groups fall in different banks.
constexpr int kAttnPad = 4;
/// The rows of the other operand a block walks in one tile: 64, or 32 for
/// heads over 64 (shared memory).
template <int D> constexpr int kAttnTile = D <= 64 ? 64 : 32;

/// A block's (batch, head) and first row (of `rows` rows per (batch,
/// head), kAttnRows a block): the grid-stride loop over a launch's blocks
/// is `for (blk = blockIndex(); blk < attnBlockCount(g, rows); ...)`.
struct AttnBlock {
  int64_t bh, b, h, row0;
};
ZRT_HD int64_t attnRowTiles(int64_t rows) { return (rows + kAttnRows - 1) / kAttnRows; }
ZRT_HD int64_t attnBlockCount(const AttentionShape &g, int64_t rows) {
  return g.batch * g.heads * attnRowTiles(rows);
}
ZRT_HD AttnBlock attnBlock(const AttentionShape &g, int64_t blk, int64_t rows) {
  const int64_t tiles = attnRowTiles(rows), bh = blk / tiles;
  return AttnBlock{bh, bh / g.heads, bh % g.heads, (blk % tiles) * kAttnRows};
}

/// Blocks for a launch over `rows` rows of each (batch, head).
inline int64_t attentionBlocks(const AttentionShape &s, int64_t rows) {
  return cappedBlocks(attnBlockCount(s, rows));
}

namespace attn {

ZRT_HD int64_t at(const Strides4 &s, int64_t b, int64_t h) { return b * s.b + h * s.h; }

/// Where operand `in`'s (b, h) matrix starts: in x and in its addend.
struct AttnBase {
  int64_t x, add;
};
template <typename T> ZRT_HD AttnBase baseOf(const AttnIn<T> &in, int64_t b, int64_t h) {
  return AttnBase{at(in.s, b, h), at(in.as, b, h)};
}

/// An addend plus an element, in float and rounded to T: what the
/// graph.add that zero-fuse-attention-bias folded in stores.
template <typename T> ZRT_DEV T added(T add, T x) { return store<T>(load(add) + load(x)); }

/// Element (t, d) of `in`'s matrix at `base`: x's, plus the addend's.
template <typename T>
ZRT_DEV T element(const AttnIn<T> &in, const AttnBase &base, int64_t t, int64_t d) {
  const T x = in.x[base.x + t * in.s.t + d * in.s.d];
  return in.add ? added(in.add[base.add + t * in.as.t + d * in.as.d], x) : x;
}

/// Whether a matrix at `p` with strides `s` can be read 8 elements, 16
/// bytes, at a time: unit stride along d and every row 16-byte aligned.
template <typename T> ZRT_DEV bool wide(const T *p, const Strides4 &s) {
  return s.d == 1 && s.t % 8 == 0 && (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}
/// Whether `in`'s (b, h) matrix at `base` can, x and the addend both (the
/// same for all of a block's threads).
template <typename T> ZRT_DEV bool wideRows(const AttnIn<T> &in, const AttnBase &base) {
  return wide(in.x + base.x, in.s) && (!in.add || wide(in.add + base.add, in.as));
}

/// The 8 sums (added) of two 16-byte chunks.
template <typename T> ZRT_DEV Words4 addChunks(const Words4 &x, const Words4 &add) {
  Words4 out;
  ZRT_UNROLL
  for (int k = 0; k < 4; ++k) {
    const T xLo{static_cast<uint16_t>(x.w[k] & 0xffffu)};
    const T xHi{static_cast<uint16_t>(x.w[k] >> 16)};
    const T aLo{static_cast<uint16_t>(add.w[k] & 0xffffu)};
    const T aHi{static_cast<uint16_t>(add.w[k] >> 16)};
    out.w[k] = packPair(added(aLo, xLo), added(aHi, xHi));
  }
  return out;
}

/// Elements 8c .. 8c + 7 of row t of `in`'s matrix as 4 words (zeros past
/// `end`); wideRows holds.
template <typename T>
ZRT_DEV Words4 rowChunk(const AttnIn<T> &in, const AttnBase &base, int64_t t, int c, int64_t end) {
  if (t >= end)
    return Words4{{0u, 0u, 0u, 0u}};
  const Words4 x = load16(in.x + base.x + t * in.s.t + 8 * c);
  return in.add ? addChunks<T>(x, load16(in.add + base.add + t * in.as.t + 8 * c)) : x;
}

/// Rows [t0, t0 + R) of `in`'s (b, h) matrix (base: its offsets), into
/// `tile` as pairs along d: word w of row r at r * (D / 2 + kAttnPad) + w;
/// rows at or past `end` are zeros.
template <typename T, int R, int D>
ZRT_DEV void loadRows(uint32_t *tile, const AttnIn<T> &in, const AttnBase &base, int64_t t0,
                      int64_t end) {
  constexpr int W = D / 2 + kAttnPad;
  if (wideRows(in, base)) {
    for (int i = threadIndex(); i < R * (D / 8); i += blockThreads()) {
      const int r = i / (D / 8), c = i % (D / 8);
      store16(tile + r * W + 4 * c, rowChunk(in, base, t0 + r, c, end));
    }
    return;
  }
  for (int i = threadIndex(); i < R * (D / 2); i += blockThreads()) {
    const int r = i / (D / 2), w = i % (D / 2);
    uint32_t word = 0;
    if (t0 + r < end)
      word = packPair(element(in, base, t0 + r, 2 * w), element(in, base, t0 + r, 2 * w + 1));
    tile[r * W + w] = word;
  }
}

/// Starts loadRows' load of rows [t0, t0 + R) into `tile`, so that the
/// block can compute on another tile meanwhile (double buffering): where
/// wideRows holds, each of x's 16-byte chunks by copyAsync16 (finishRows
/// adds the addend once they have arrived) and zeros for rows at or past
/// `end`; elsewhere every word at once, as loadRows stores it. The caller
/// commits the copies (commitCopies16). A thread takes the chunks
/// threadIndex() + k * blockThreads(), in both functions.
template <typename T, int R, int D>
ZRT_DEV void issueRows(uint32_t *tile, const AttnIn<T> &in, const AttnBase &base, int64_t t0,
                       int64_t end) {
  constexpr int W = D / 2 + kAttnPad;
  if (!wideRows(in, base)) {
    loadRows<T, R, D>(tile, in, base, t0, end);
    return;
  }
  for (int i = threadIndex(); i < R * (D / 8); i += blockThreads()) {
    const int r = i / (D / 8), c = i % (D / 8);
    uint32_t *chunk = tile + r * W + 4 * c;
    if (t0 + r < end)
      copyAsync16(chunk, in.x + base.x + (t0 + r) * in.s.t + 8 * c);
    else
      store16(chunk, Words4{{0u, 0u, 0u, 0u}});
  }
}

/// Completes issueRows for this thread's chunks after waitCopies16: adds
/// the addend to each, as rowChunk does (the same bits as loadRows). A
/// barrier after it shows the whole tile to the block.
template <typename T, int R, int D>
ZRT_DEV void finishRows(uint32_t *tile, const AttnIn<T> &in, const AttnBase &base, int64_t t0,
                        int64_t end) {
  constexpr int W = D / 2 + kAttnPad;
  if (!in.add || !wideRows(in, base))
    return;
  for (int i = threadIndex(); i < R * (D / 8); i += blockThreads()) {
    const int r = i / (D / 8), c = i % (D / 8);
    if (t0 + r >= end)
      continue;
    uint32_t *chunk = tile + r * W + 4 * c;
    store16(chunk,
            addChunks<T>(load16(chunk), load16(in.add + base.add + (t0 + r) * in.as.t + 8 * c)));
  }
}

/// Buffers 0 and 1 of a tile of R rows of D elements (loadRows' layout).
template <int R, int D> using AttnTiles = uint32_t[2][R * (D / 2 + kAttnPad)];

/// Starts a walk over the tiles of two operands (rows `t0`, `t0` + R, ..
/// below `stop`; rows at or past `end` are zeros): after a barrier (the
/// previous walk's tiles are read), the first tile of each into buffer 0.
template <typename T, int R, int D>
ZRT_DEV void firstTiles(AttnTiles<R, D> &aTiles, const AttnIn<T> &a, const AttnBase &aBase,
                        AttnTiles<R, D> &bTiles, const AttnIn<T> &b, const AttnBase &bBase,
                        int64_t t0, int64_t stop, int64_t end) {
  syncBlock();
  if (t0 >= stop)
    return;
  issueRows<T, R, D>(aTiles[0], a, aBase, t0, end);
  issueRows<T, R, D>(bTiles[0], b, bBase, t0, end);
  commitCopies16();
}

/// The walk's step to the tiles from `t0`, in buffer `buf`: completes them
/// (finishRows), then a barrier (they are whole, and every warp is done
/// with the other buffer), then starts the next ones into the other buffer
/// when they are below `stop`. Returns whether it did.
template <typename T, int R, int D>
ZRT_DEV bool nextTiles(AttnTiles<R, D> &aTiles, const AttnIn<T> &a, const AttnBase &aBase,
                       AttnTiles<R, D> &bTiles, const AttnIn<T> &b, const AttnBase &bBase,
                       int buf, int64_t t0, int64_t stop, int64_t end) {
  waitCopies16();
  finishRows<T, R, D>(aTiles[buf], a, aBase, t0, end);
  finishRows<T, R, D>(bTiles[buf], b, bBase, t0, end);
  syncBlock();
  if (t0 + R >= stop)
    return false;
  issueRows<T, R, D>(aTiles[buf ^ 1], a, aBase, t0 + R, end);
  issueRows<T, R, D>(bTiles[buf ^ 1], b, bBase, t0 + R, end);
  commitCopies16();
  return true;
}

/// A's fragments of a warp's 16 rows from `row0` of `in`'s (b, h) matrix,
/// for each 16-wide step of d; rows at or past `end` are zeros.
template <typename T, int D>
ZRT_DEV void loadA(uint32_t (&a)[D / 16][4], const AttnIn<T> &in, const AttnBase &base,
                   int64_t row0, int64_t end, int lane) {
  ZRT_UNROLL
  for (int kk = 0; kk < D / 16; ++kk)
    ZRT_UNROLL
    for (int r = 0; r < 4; ++r) {
      const int64_t row = row0 + mmaRowA(lane, r);
      const int col = kk * 16 + mmaColA(lane, r);
      a[kk][r] =
          row < end ? packPair(element(in, base, row, col), element(in, base, row, col + 1)) : 0u;
    }
}

/// B's fragments for n-tiles `nt` and `nt` + 1 (8 rows each of a tile as
/// B's columns) and k step `kk` (16 elements along the rows) of a tile W
/// words wide: word r of n-tile n is word kk * 8 + 4r + lane % 4 of its row
/// lane / 4, in one ldmatrix.x4 (matrix m: n-tile nt + m / 2, words
/// kk * 8 + 4 (m % 2) ..).
ZRT_DEV void fragB2(uint32_t (&b0)[2], uint32_t (&b1)[2], const uint32_t *tile, int W, int nt,
                    int kk, int lane) {
  const int m = lane >> 3;
  uint32_t x[4];
  loadMatrices4(x, tile + ((nt + (m >> 1)) * 8 + (lane & 7)) * W + kk * 8 + 4 * (m & 1));
  b0[0] = x[0];
  b0[1] = x[1];
  b1[0] = x[2];
  b1[1] = x[3];
}

/// A's fragment for k step `kk` from accumulators c (n-tiles of 8 columns):
/// the product's 16 columns 16kk.. as the next product's left operand,
/// rounded to T.
template <typename T, int N>
ZRT_DEV void accumulatorAsA(uint32_t (&a)[4], const float (&c)[N][4], int kk) {
  a[0] = packFloats<T>(c[2 * kk][0], c[2 * kk][1]);
  a[1] = packFloats<T>(c[2 * kk][2], c[2 * kk][3]);
  a[2] = packFloats<T>(c[2 * kk + 1][0], c[2 * kk + 1][1]);
  a[3] = packFloats<T>(c[2 * kk + 1][2], c[2 * kk + 1][3]);
}

/// c = a * tile^T over D (N n-tiles of the tile's rows).
template <typename T, int N, int D>
ZRT_DEV void productWithRows(float (&c)[N][4], const uint32_t (&a)[D / 16][4],
                             const uint32_t *tile, int lane) {
  static_assert(N % 2 == 0, "n-tiles in pairs");
  ZRT_UNROLL
  for (int nt = 0; nt < N; nt += 2) {
    ZRT_UNROLL
    for (int i = 0; i < 4; ++i)
      c[nt][i] = c[nt + 1][i] = 0.f;
    ZRT_UNROLL
    for (int kk = 0; kk < D / 16; ++kk) {
      uint32_t b0[2], b1[2];
      fragB2(b0, b1, tile, D / 2 + kAttnPad, nt, kk, lane);
      mma16816<T>(c[nt], a[kk], b0);
      mma16816<T>(c[nt + 1], a[kk], b1);
    }
  }
}

/// B's fragments for n-tiles `nd` and `nd` + 1 (8 of the tile's columns
/// each) and k step `kk` (16 of its rows) of a tile W words wide that is B
/// itself, its rows B's rows: word r of n-tile n holds rows kk * 16 + 8r +
/// 2 (lane % 4) + {0, 1} of its column lane / 4, in one ldmatrix.x4.trans
/// (matrix m: rows kk * 16 + 8 (m % 2) .., words 4 (nd + m / 2) ..).
ZRT_DEV void fragBT2(uint32_t (&b0)[2], uint32_t (&b1)[2], const uint32_t *tile, int W, int nd,
                     int kk, int lane) {
  const int m = lane >> 3;
  uint32_t x[4];
  loadMatrices4Trans(x, tile + (kk * 16 + 8 * (m & 1) + (lane & 7)) * W + 4 * (nd + (m >> 1)));
  b0[0] = x[0];
  b0[1] = x[1];
  b1[0] = x[2];
  b1[1] = x[3];
}

/// acc += p * tile over the tile's R rows (p's R columns), the tile's rows
/// in shared memory as loadRows stores them.
template <typename T, int R, int D>
ZRT_DEV void accumulateRows(float (&acc)[D / 8][4], const float (&p)[R / 8][4],
                            const uint32_t *tile, int lane) {
  ZRT_UNROLL
  for (int kk = 0; kk < R / 16; ++kk) {
    uint32_t a[4];
    accumulatorAsA<T>(a, p, kk);
    ZRT_UNROLL
    for (int nd = 0; nd < D / 8; nd += 2) {
      uint32_t b0[2], b1[2];
      fragBT2(b0, b1, tile, D / 2 + kAttnPad, nd, kk, lane);
      mma16816<T>(acc[nd], a, b0);
      mma16816<T>(acc[nd + 1], a, b1);
    }
  }
}

/// Over the 4 lanes that share an accumulator row.
ZRT_DEV float quadMax(float v) {
  v = maxNaN(v, shuffleXor(v, 1));
  return maxNaN(v, shuffleXor(v, 2));
}
ZRT_DEV float quadSum(float v) {
  v += shuffleXor(v, 1);
  return v + shuffleXor(v, 2);
}

/// fn(row, column, nd, i) for each of the lane's accumulators acc[nd][i]
/// of a warp's rows row0 + 0..15 (D columns) that lie below `end`.
template <int D, typename Fn>
ZRT_DEV void forAccumulators(int64_t row0, int64_t end, int lane, Fn &&fn) {
  ZRT_UNROLL
  for (int nd = 0; nd < D / 8; ++nd)
    ZRT_UNROLL
    for (int i = 0; i < 4; ++i) {
      const int64_t row = row0 + mmaRowC(lane, i);
      if (row < end)
        fn(row, nd * 8 + mmaColC(lane, i), nd, i);
    }
}

/// Writes rows row0 + 0..15 of a warp's accumulators (divided by
/// divisor[0] for the lane's first row, divisor[1] for its row 8 below) to
/// x's (b, h) matrix, rounded to T.
template <typename T, int D>
ZRT_DEV void storeRows(T *x, const Strides4 &s, int64_t base, int64_t row0, int64_t end,
                       const float (&acc)[D / 8][4], const float (&divisor)[2], int lane) {
  forAccumulators<D>(row0, end, lane, [&](int64_t row, int col, int nd, int i) {
    x[base + row * s.t + col * s.d] = fromFloat<T>(acc[nd][i] / divisor[i >> 1]);
  });
}

/// A score's probability, recomputed from its row's log-sum-exp, and the
/// gradient of its product q k^T, from dp (do v^T) and the row's delta:
/// each rounded to T where the unfused ops store (the probability, dp, the
/// dropped probability and dp, the softmax gradient before the epilogue).
/// e: its index in the scores; p: the probability as the product with dO
/// reads it (after the dropout).
/// `masked`: a key after its query in a causal attention (masked), whose
/// score is -inf whatever the prologue gives and whose gradient enters the
/// epilogue as +0.
template <typename T, typename Score, typename Epilogue>
ZRT_DEV void probabilityAndGrad(Score &score, Epilogue &epilogue, const AttentionDropout &drop,
                                int64_t e, bool masked, float s, float dp, float lse, float delta,
                                float &p, float &ds) {
  const float prob = roundTo<T>(exp((masked ? -INFINITY : score(e, s)) - lse));
  float grad = roundTo<T>(dp);
  p = prob;
  if (drop.ratio > 0.0) {
    const bool keep = drop.keeps(e);
    p = keep ? load(dropoutKept<T>(prob, drop.keepScale)) : 0.f;
    grad = keep ? load(dropoutKept<T>(grad, drop.keepScale)) : 0.f;
  }
  ds = epilogue(e, masked ? 0.f : roundTo<T>(prob * (grad - delta)));
}

/// Each of a warp's 16 rows' delta, sum(dO * o) over d, stored at
/// delta[bh * tq + row]; rowDelta gets the lane's two accumulator rows'
/// (rows lane / 4 and 8 below).
template <typename T, int D>
ZRT_DEV void warpDeltas(const AttentionShape &g, int64_t bh, int64_t b, int64_t h, int64_t row0,
                        const T *o, const Strides4 &os, const T *dout, const Strides4 &dos,
                        float *delta, float (&rowDelta)[2], int lane) {
  ZRT_UNROLL
  for (int r = 0; r < 16; ++r) {
    const int64_t row = row0 + r;
    float part = 0.f;
    if (row < g.tq)
      for (int d = lane; d < D; d += 32)
        part += toFloat(dout[at(dos, b, h) + row * dos.t + d * dos.d]) *
                toFloat(o[at(os, b, h) + row * os.t + d * os.d]);
    const float sum = warpSum(part);
    if (row < g.tq && lane == 0)
      delta[bh * g.tq + row] = sum;
    if (r == (lane >> 2) || r == (lane >> 2) + 8)
      rowDelta[r >= 8] = sum;
  }
}

/// The words of a tile of the scores' gradient in shared memory: a row
/// per query, a block's kAttnRows keys along it, and the padding.
constexpr int kAttnDsWords = kAttnRows / 2 + kAttnPad;

/// Stores accumulators c (rows: keys row0.., columns: N n-tiles of
/// queries) rounded to T into `tile` transposed: key r of query q at
/// 16-bit element q * 2 kAttnDsWords + r.
template <typename T, int N>
ZRT_DEV void storeTransposed(uint32_t *tile, const float (&c)[N][4], int row0, int lane) {
  uint16_t *half = reinterpret_cast<uint16_t *>(tile);
  ZRT_UNROLL
  for (int nt = 0; nt < N; ++nt)
    ZRT_UNROLL
    for (int i = 0; i < 4; ++i)
      half[(nt * 8 + mmaColC(lane, i)) * 2 * kAttnDsWords + row0 + mmaRowC(lane, i)] =
          fromFloat<T>(c[nt][i]).bits;
}

/// A's fragments of 16 rows of K 16-bit elements in shared memory, from
/// `rows`, each W words after the last, by ldmatrix.x4 for each 16-wide k
/// step (matrix m: rows 8 (m % 2) .., words 8 kk + 4 (m / 2) ..), as
/// loadA lays them out.
template <int K>
ZRT_DEV void fragmentsA(uint32_t (&a)[K / 16][4], const uint32_t *rows, int W, int lane) {
  const int m = lane >> 3;
  ZRT_UNROLL
  for (int kk = 0; kk < K / 16; ++kk)
    loadMatrices4(a[kk], rows + (8 * (m & 1) + (lane & 7)) * W + kk * 8 + 4 * (m >> 1));
}

/// acc += a * tile, a the 16 rows at `rows` of a storeTransposed tile (its
/// kAttnRows columns), the tile's kAttnRows rows as loadRows stores them.
template <typename T, int D>
ZRT_DEV void accumulateFromShared(float (&acc)[D / 8][4], const uint32_t *rows,
                                  const uint32_t *tile, int lane) {
  uint32_t a[kAttnRows / 16][4];
  fragmentsA<kAttnRows>(a, rows, kAttnDsWords, lane);
  ZRT_UNROLL
  for (int kk = 0; kk < kAttnRows / 16; ++kk)
    ZRT_UNROLL
    for (int nd = 0; nd < D / 8; nd += 2) {
      uint32_t b0[2], b1[2];
      fragBT2(b0, b1, tile, D / 2 + kAttnPad, nd, kk, lane);
      mma16816<T>(acc[nd], a[kk], b0);
      mma16816<T>(acc[nd + 1], a[kk], b1);
    }
}

/// Adds a warp's accumulators of rows row0 + 0..15 (those below `end`)
/// into the dense float matrix `to` of D columns, atomically.
template <int D>
ZRT_DEV void addRows(float *to, int64_t row0, int64_t end, const float (&acc)[D / 8][4], int lane) {
  forAccumulators<D>(row0, end, lane, [&](int64_t row, int col, int nd, int i) {
    atomicAddFloat(to + row * D + col, acc[nd][i]);
  });
}

} // namespace attn

/// o and lse (module comment). Launch: attentionBlocks(g, g.tq) blocks of
/// kAttnThreads, with launchWarps.
template <typename T, int D, typename Score>
ZRT_DEV void attentionForward(const AttentionShape &g, const AttentionDropout &drop, AttnIn<T> q,
                              AttnIn<T> k, AttnIn<T> v, T *o, Strides4 os, float *lse,
                              Score score) {
  static_assert(D % 16 == 0 && D <= 128, "a head of 16, 32, .., 128 elements");
  constexpr int BK = kAttnTile<D>;
  // Two tiles of each, double buffered (attn::issueRows).
  alignas(16) __shared__ attn::AttnTiles<BK, D> kTiles, vTiles;
  const int lane = threadIndex() & 31, warp = threadIndex() >> 5;
  for (int64_t blk = blockIndex(); blk < attnBlockCount(g, g.tq); blk += gridBlocks()) {
    const AttnBlock at = attnBlock(g, blk, g.tq);
    const int64_t bh = at.bh, b = at.b, h = at.h, row0 = at.row0 + 16 * warp;
    const int64_t keys = keysFor(g, at.row0);
    uint32_t qa[D / 16][4];
    attn::loadA<T, D>(qa, q, attn::baseOf(q, b, h), row0, g.tq, lane);
    const attn::AttnBase kBase = attn::baseOf(k, b, h), vBase = attn::baseOf(v, b, h);
    float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
    float acc[D / 8][4] = {};
    attn::firstTiles<T, BK, D>(kTiles, k, kBase, vTiles, v, vBase, 0, keys, g.tk);
    int buf = 0;
    for (int64_t key0 = 0; key0 < keys; key0 += BK, buf ^= 1) {
      const uint32_t *kTile = kTiles[buf], *vTile = vTiles[buf];
      attn::nextTiles<T, BK, D>(kTiles, k, kBase, vTiles, v, vBase, buf, key0, keys, g.tk);
      float s[BK / 8][4];
      attn::productWithRows<T, BK / 8, D>(s, qa, kTile, lane);
      ZRT_UNROLL
      for (int nt = 0; nt < BK / 8; ++nt)
        ZRT_UNROLL
        for (int i = 0; i < 4; ++i) {
          const int64_t row = row0 + mmaRowC(lane, i), key = key0 + nt * 8 + mmaColC(lane, i);
          s[nt][i] = row < g.tq && key < g.tk && !masked(g, row, key)
                         ? score((bh * g.tq + row) * g.tk + key, s[nt][i])
                         : -INFINITY;
        }
      ZRT_UNROLL
      for (int half = 0; half < 2; ++half) {
        float mx = -INFINITY;
        ZRT_UNROLL
        for (int nt = 0; nt < BK / 8; ++nt)
          mx = maxNaN(maxNaN(mx, s[nt][2 * half]), s[nt][2 * half + 1]);
        const float mNew = maxNaN(m[half], attn::quadMax(mx));
        const float base = mNew == -INFINITY ? 0.f : mNew;
        const float alpha = exp(m[half] - base);
        float sum = 0.f;
        ZRT_UNROLL
        for (int nt = 0; nt < BK / 8; ++nt)
          ZRT_UNROLL
          for (int j = 2 * half; j < 2 * half + 2; ++j) {
            s[nt][j] = exp(s[nt][j] - base);
            sum += s[nt][j];
          }
        l[half] = l[half] * alpha + attn::quadSum(sum);
        m[half] = mNew;
        ZRT_UNROLL
        for (int nd = 0; nd < D / 8; ++nd) {
          acc[nd][2 * half] *= alpha;
          acc[nd][2 * half + 1] *= alpha;
        }
      }
      // The dropout: the row's sum counts every key, the product only the
      // kept ones (scaled at the end).
      if (drop.ratio > 0.0)
        ZRT_UNROLL
        for (int nt = 0; nt < BK / 8; ++nt)
          ZRT_UNROLL
          for (int i = 0; i < 4; ++i) {
            const int64_t row = row0 + mmaRowC(lane, i), key = key0 + nt * 8 + mmaColC(lane, i);
            if (row < g.tq && key < g.tk && !drop.keeps((bh * g.tq + row) * g.tk + key))
              s[nt][i] = 0.f;
          }
      attn::accumulateRows<T, BK, D>(acc, s, vTile, lane);
    }
    const float keepScale = static_cast<float>(drop.keepScale);
    const float divisor[2] = {l[0] / keepScale, l[1] / keepScale};
    attn::storeRows<T, D>(o, os, attn::at(os, b, h), row0, g.tq, acc, divisor, lane);
    if ((lane & 3) == 0)
      ZRT_UNROLL
      for (int half = 0; half < 2; ++half) {
        const int64_t row = row0 + (lane >> 2) + 8 * half;
        if (row < g.tq)
          lse[bh * g.tq + row] = m[half] + log(l[half]);
      }
  }
}

/// delta and dq (module comment). Launch: attentionBlocks(g, g.tq) blocks
/// of kAttnThreads, with launchWarps, before attentionGradKV.
template <typename T, int D, typename Score, typename Epilogue>
ZRT_DEV void attentionGradQ(const AttentionShape &g, const AttentionDropout &drop, AttnIn<T> q,
                            AttnIn<T> k, AttnIn<T> v, const T *o, Strides4 os, const T *dout,
                            Strides4 dos, const float *lse, float *delta, T *dq, Strides4 dqs,
                            Score score, Epilogue epilogue) {
  static_assert(D % 16 == 0 && D <= 128, "a head of 16, 32, .., 128 elements");
  constexpr int BK = kAttnTile<D>;
  // Two tiles of each, double buffered (attn::issueRows).
  alignas(16) __shared__ attn::AttnTiles<BK, D> kTiles, vTiles;
  const int lane = threadIndex() & 31, warp = threadIndex() >> 5;
  for (int64_t blk = blockIndex(); blk < attnBlockCount(g, g.tq); blk += gridBlocks()) {
    const AttnBlock at = attnBlock(g, blk, g.tq);
    const int64_t bh = at.bh, b = at.b, h = at.h, row0 = at.row0 + 16 * warp;
    const int64_t keys = keysFor(g, at.row0);
    // delta of the warp's rows, each a warp-wide sum over d.
    float rowDelta[2] = {0.f, 0.f}, rowLse[2] = {0.f, 0.f};
    attn::warpDeltas<T, D>(g, bh, b, h, row0, o, os, dout, dos, delta, rowDelta, lane);
    ZRT_UNROLL
    for (int half = 0; half < 2; ++half) {
      const int64_t row = row0 + (lane >> 2) + 8 * half;
      rowLse[half] = row < g.tq ? lse[bh * g.tq + row] : 0.f;
    }
    uint32_t qa[D / 16][4], da[D / 16][4];
    const AttnIn<T> dO{dout, dos};
    attn::loadA<T, D>(qa, q, attn::baseOf(q, b, h), row0, g.tq, lane);
    attn::loadA<T, D>(da, dO, attn::baseOf(dO, b, h), row0, g.tq, lane);
    const attn::AttnBase kBase = attn::baseOf(k, b, h), vBase = attn::baseOf(v, b, h);
    float acc[D / 8][4] = {};
    attn::firstTiles<T, BK, D>(kTiles, k, kBase, vTiles, v, vBase, 0, keys, g.tk);
    int buf = 0;
    for (int64_t key0 = 0; key0 < keys; key0 += BK, buf ^= 1) {
      const uint32_t *kTile = kTiles[buf], *vTile = vTiles[buf];
      attn::nextTiles<T, BK, D>(kTiles, k, kBase, vTiles, v, vBase, buf, key0, keys, g.tk);
      float s[BK / 8][4], dp[BK / 8][4];
      attn::productWithRows<T, BK / 8, D>(s, qa, kTile, lane);
      attn::productWithRows<T, BK / 8, D>(dp, da, vTile, lane);
      ZRT_UNROLL
      for (int nt = 0; nt < BK / 8; ++nt)
        ZRT_UNROLL
        for (int i = 0; i < 4; ++i) {
          const int64_t row = row0 + mmaRowC(lane, i), key = key0 + nt * 8 + mmaColC(lane, i);
          float p = 0.f, ds = 0.f;
          if (row < g.tq && key < g.tk)
            attn::probabilityAndGrad<T>(score, epilogue, drop, (bh * g.tq + row) * g.tk + key,
                                        masked(g, row, key), s[nt][i], dp[nt][i],
                                        rowLse[i >> 1], rowDelta[i >> 1], p, ds);
          s[nt][i] = ds;
        }
      attn::accumulateRows<T, BK, D>(acc, s, kTile, lane);
    }
    const float one[2] = {1.f, 1.f};
    attn::storeRows<T, D>(dq, dqs, attn::at(dqs, b, h), row0, g.tq, acc, one, lane);
  }
}

/// The one-walk gradient's first kernel (module comment): delta, and the
/// dq accumulator dqAcc (float [batch, heads, tq, D], dense) zeroed.
/// Launch: attentionBlocks(g, g.tq) blocks of kAttnThreads, with
/// launchWarps.
template <typename T, int D>
ZRT_DEV void attentionGradDelta(const AttentionShape &g, const T *o, Strides4 os, const T *dout,
                                Strides4 dos, float *delta, float *dqAcc) {
  const int lane = threadIndex() & 31, warp = threadIndex() >> 5;
  for (int64_t blk = blockIndex(); blk < attnBlockCount(g, g.tq); blk += gridBlocks()) {
    const AttnBlock at = attnBlock(g, blk, g.tq);
    const int64_t row0 = at.row0 + 16 * warp;
    float rowDelta[2];
    attn::warpDeltas<T, D>(g, at.bh, at.b, at.h, row0, o, os, dout, dos, delta, rowDelta, lane);
    for (int r = 0; r < 16; ++r)
      if (row0 + r < g.tq)
        for (int d = lane; d < D; d += 32)
          dqAcc[(at.bh * g.tq + row0 + r) * D + d] = 0.f;
  }
}

/// The one-walk gradient's last kernel: dq, dqAcc rounded to T. Launch:
/// attentionBlocks(g, g.tq) blocks of kAttnThreads, with launchWarps.
template <typename T, int D>
ZRT_DEV void attentionGradStoreQ(const AttentionShape &g, const float *dqAcc, T *dq, Strides4 dqs) {
  const int lane = threadIndex() & 31, warp = threadIndex() >> 5;
  for (int64_t blk = blockIndex(); blk < attnBlockCount(g, g.tq); blk += gridBlocks()) {
    const AttnBlock at = attnBlock(g, blk, g.tq);
    const int64_t row0 = at.row0 + 16 * warp;
    for (int r = 0; r < 16; ++r)
      if (row0 + r < g.tq)
        for (int d = lane; d < D; d += 32)
          dq[attn::at(dqs, at.b, at.h) + (row0 + r) * dqs.t + d * dqs.d] =
              fromFloat<T>(dqAcc[(at.bh * g.tq + row0 + r) * D + d]);
  }
}

namespace attn {

/// attentionGradKV, and with OneWalk attentionGradKVQ (dqAcc).
template <typename T, int D, bool OneWalk, typename Score, typename Epilogue>
ZRT_DEV void gradKV(const AttentionShape &g, const AttentionDropout &drop, AttnIn<T> q, AttnIn<T> k,
                    AttnIn<T> v, const T *dout, Strides4 dos, const float *lse, const float *delta,
                    T *dk, Strides4 dks, T *dv, Strides4 dvs, float *dqAcc, Score &score,
                    Epilogue &epilogue) {
  static_assert(D % 16 == 0 && D <= 128, "a head of 16, 32, .., 128 elements");
  constexpr int BQ = kAttnTile<D>;
  // Two tiles of each, double buffered (attn::issueRows), and of the
  // tile's rows' lse and delta.
  alignas(16) __shared__ attn::AttnTiles<BQ, D> qTiles, dTiles;
  __shared__ float lseTiles[2][BQ], deltaTiles[2][BQ];
  // In one walk: the block's keys as loadRows stores them (the warps'
  // A fragments of k too), and the scores' gradient (storeTransposed), in
  // dTiles' current buffer when its rows are as wide (heads of 64; dv has
  // read it by then).
  static_assert(!OneWalk || D <= kAttnOneWalkMaxDim, "one walk for heads of at most 64");
  constexpr int W = D / 2 + kAttnPad;
  constexpr bool kDsInTiles = D / 2 >= kAttnRows / 2;
  alignas(16) __shared__ uint32_t kTile[OneWalk ? kAttnRows * W : 1],
      dsOwn[OneWalk && !kDsInTiles ? BQ * kAttnDsWords : 1];
  const int lane = threadIndex() & 31, warp = threadIndex() >> 5;
  for (int64_t blk = blockIndex(); blk < attnBlockCount(g, g.tk); blk += gridBlocks()) {
    const AttnBlock at = attnBlock(g, blk, g.tk);
    const int64_t bh = at.bh, b = at.b, h = at.h, blockKey0 = at.row0,
                  key0 = blockKey0 + 16 * warp;
    uint32_t ka[D / 16][4], va[D / 16][4];
    const AttnIn<T> dO{dout, dos};
    const attn::AttnBase qBase = attn::baseOf(q, b, h), dBase = attn::baseOf(dO, b, h);
    if (!OneWalk)
      attn::loadA<T, D>(ka, k, attn::baseOf(k, b, h), key0, g.tk, lane);
    attn::loadA<T, D>(va, v, attn::baseOf(v, b, h), key0, g.tk, lane);
    float dkAcc[D / 8][4] = {}, dvAcc[D / 8][4] = {};
    // Thread i < BQ reads row i's lse and delta of a query tile (the
    // next one's while the block computes on this one, stored after it).
    static_assert(BQ <= kAttnThreads, "a thread for each row's lse and delta");
    const int statRow = threadIndex();
    float nextLse = 0.f, nextDelta = 0.f;
    auto readStats = [&](int64_t q0) {
      const bool in = statRow < BQ && q0 + statRow < g.tq;
      nextLse = in ? lse[bh * g.tq + q0 + statRow] : 0.f;
      nextDelta = in ? delta[bh * g.tq + q0 + statRow] : 0.f;
    };
    auto storeStats = [&](int to) {
      if (statRow < BQ) {
        lseTiles[to][statRow] = nextLse;
        deltaTiles[to][statRow] = nextDelta;
      }
    };
    const int64_t firstQuery = firstQueryFor(g, blockKey0, BQ);
    attn::firstTiles<T, BQ, D>(qTiles, q, qBase, dTiles, dO, dBase, firstQuery, g.tq, g.tq);
    // After firstTiles' barrier: the last block's dq products are done.
    if (OneWalk)
      attn::loadRows<T, kAttnRows, D>(kTile, k, attn::baseOf(k, b, h), blockKey0, g.tk);
    if (firstQuery < g.tq) {
      readStats(firstQuery);
      storeStats(0);
    }
    int buf = 0;
    for (int64_t q0 = firstQuery; q0 < g.tq; q0 += BQ, buf ^= 1) {
      const uint32_t *qTile = qTiles[buf], *dTile = dTiles[buf];
      const float *lseTile = lseTiles[buf], *deltaTile = deltaTiles[buf];
      const bool next =
          attn::nextTiles<T, BQ, D>(qTiles, q, qBase, dTiles, dO, dBase, buf, q0, g.tq, g.tq);
      if (next)
        readStats(q0 + BQ);
      // Transposed: rows are the warp's keys, columns the tile's queries.
      float p[BQ / 8][4], ds[BQ / 8][4];
      if (OneWalk) // k's fragments from the block's tile: fewer live registers
        attn::fragmentsA<D>(ka, kTile + 16 * warp * W, W, lane);
      attn::productWithRows<T, BQ / 8, D>(p, ka, qTile, lane);
      attn::productWithRows<T, BQ / 8, D>(ds, va, dTile, lane);
      ZRT_UNROLL
      for (int nt = 0; nt < BQ / 8; ++nt)
        ZRT_UNROLL
        for (int i = 0; i < 4; ++i) {
          const int key = static_cast<int>(mmaRowC(lane, i)), col = nt * 8 + mmaColC(lane, i);
          const int64_t query = q0 + col;
          float pv = 0.f, dsv = 0.f;
          if (query < g.tq && key0 + key < g.tk)
            attn::probabilityAndGrad<T>(score, epilogue, drop,
                                        (bh * g.tq + query) * g.tk + key0 + key,
                                        masked(g, query, key0 + key), p[nt][i], ds[nt][i],
                                        lseTile[col], deltaTile[col], pv, dsv);
          p[nt][i] = pv;
          ds[nt][i] = dsv;
        }
      attn::accumulateRows<T, BQ, D>(dvAcc, p, dTile, lane);
      attn::accumulateRows<T, BQ, D>(dkAcc, ds, qTile, lane);
      if constexpr (OneWalk) {
        // dq of the tile's queries += dS K over the block's keys: the
        // warps' dS through shared memory, then warp w's 16 queries.
        static_assert(BQ == 16 * kAttnWarps, "a warp per 16 queries of the tile");
        uint32_t *dsTile = kDsInTiles ? dTiles[buf] : dsOwn;
        syncBlock(); // every warp is done with dTiles[buf]
        attn::storeTransposed<T, BQ / 8>(dsTile, ds, 16 * warp, lane);
        syncBlock();
        float dqPart[D / 8][4] = {};
        attn::accumulateFromShared<T, D>(dqPart, dsTile + 16 * warp * kAttnDsWords, kTile, lane);
        attn::addRows<D>(dqAcc + bh * g.tq * D, q0 + 16 * warp, g.tq, dqPart, lane);
      }
      // Nothing reads the other buffer's stats before the next barrier.
      if (next)
        storeStats(buf ^ 1);
    }
    const float one[2] = {1.f, 1.f};
    attn::storeRows<T, D>(dk, dks, attn::at(dks, b, h), key0, g.tk, dkAcc, one, lane);
    attn::storeRows<T, D>(dv, dvs, attn::at(dvs, b, h), key0, g.tk, dvAcc, one, lane);
  }
}

} // namespace attn

/// dk and dv (module comment). Launch: attentionBlocks(g, g.tk) blocks of
/// kAttnThreads, with launchWarps, after attentionGradQ.
template <typename T, int D, typename Score, typename Epilogue>
ZRT_DEV void attentionGradKV(const AttentionShape &g, const AttentionDropout &drop, AttnIn<T> q,
                             AttnIn<T> k, AttnIn<T> v, const T *dout, Strides4 dos,
                             const float *lse, const float *delta, T *dk, Strides4 dks, T *dv,
                             Strides4 dvs, Score score, Epilogue epilogue) {
  attn::gradKV<T, D, false>(g, drop, q, k, v, dout, dos, lse, delta, dk, dks, dv, dvs, nullptr,
                            score, epilogue);
}

/// dk and dv, and each key block's share of dq, dS K, added into dqAcc
/// (the one walk, module comment; heads of at most kAttnOneWalkMaxDim).
/// Launch: attentionBlocks(g, g.tk) blocks of kAttnThreads, with
/// launchWarps, after attentionGradDelta and before attentionGradStoreQ.
template <typename T, int D, typename Score, typename Epilogue>
ZRT_DEV void attentionGradKVQ(const AttentionShape &g, const AttentionDropout &drop, AttnIn<T> q,
                              AttnIn<T> k, AttnIn<T> v, const T *dout, Strides4 dos,
                              const float *lse, const float *delta, T *dk, Strides4 dks, T *dv,
                              Strides4 dvs, float *dqAcc, Score score, Epilogue epilogue) {
  attn::gradKV<T, D, true>(g, drop, q, k, v, dout, dos, lse, delta, dk, dks, dv, dvs, dqAcc, score,
                           epilogue);
}

} // namespace zeroc_rt::cuda

#endif // ZEROC_RT_CUDA_ATTENTION_H
