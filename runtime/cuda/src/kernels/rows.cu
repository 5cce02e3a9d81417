//===- kernels/rows.cu - Softmax, layer norm, softmax cross-entropy -------===//
//
// One block per row (the elements a softmax or a normalization runs over,
// at a stride when the axis is not the last), its threads striding over
// the row and reducing with blockSum/blockMax. Statistics in float (double
// for F64). The softmax rows are zeroc_rt_cuda/rows.h's, which fused
// softmax kernels share. The layer norm's gradient is one pass over its
// rows, which also sums the parameter gradients' columns per block.
//
//===----------------------------------------------------------------------===//

#include "kernels/columns.h"
#include "kernels/common.h"

#include "zeroc_rt_cuda/rows.h"

namespace zeroc_rt::cuda {
namespace {

Rows rowsOf(const zeroc_rt_tensor_t &t, int axis) {
  Rows g;
  g.count = t.dims[axis];
  g.inner = kernels::product(t.dims, axis + 1, t.rank);
  g.rows = kernels::product(t.dims, 0, axis) * g.inner;
  return g;
}

/// Element k of a tensor of storage type S, in its compute type.
template <typename S> struct Loads {
  const S *p;
  ZRT_DEV typename Compute<S>::type operator()(int64_t k) const { return load(p[k]); }
};
/// Stores element k of a tensor of storage type S.
template <typename S> struct Stores {
  S *p;
  ZRT_DEV void operator()(int64_t k, typename Compute<S>::type v) const { p[k] = storeD<S>(v); }
};

template <typename S>
ZRT_GLOBAL void softmaxKernel(const S *in, S *out, Rows g, int log) {
  softmaxRows<typename Compute<S>::type>(g, log, Loads<S>{in}, Stores<S>{out});
}

template <typename S>
ZRT_GLOBAL void softmaxGradKernel(const S *y, const S *gy, S *gx, Rows g, int log) {
  softmaxGradRows<typename Compute<S>::type>(g, log, Loads<S>{y}, Loads<S>{gy},
                                             Stores<S>{gx});
}

/// A layer norm row's mean and 1/std, in every thread of the block: the
/// row's `cols` elements from `xr` in runs of V (one element, or a 16-byte
/// chunk: rows.h's cachedRun), into the thread's cache `v` when the row
/// fits it (rowFitsCache; zeros past the row's end). The forward kernel
/// and the gradient's compute them with this one function, so the
/// gradient's statistics have the forward pass's bits when both take runs
/// of the same V (dispatchRuns: their pointers equally aligned, as the
/// buffer plan's 64-byte aligned values are) with the same threads
/// (rowThreads); otherwise they differ in the order of the row's sums.
template <int V, typename S, typename C>
ZRT_DEV void layerNormRow(const S *xr, int64_t cols, double epsilon, bool cached, C (&v)[kRowCache],
                          C *scratch, C &mean, C &rstd) {
  C sum = C(0);
  if (cached) {
    for (int i = 0; i < kRowCache; i += V) {
      const int64_t j = cachedRun<V>(i, cols);
      if (j < 0) {
        for (int e = 0; e < V; ++e)
          v[i + e] = C(0);
        continue;
      }
      loadRun<V>(xr + j, v + i);
      for (int e = 0; e < V; ++e)
        sum += v[i + e];
    }
  } else {
    for (int64_t j = threadIndex() * V; j < cols; j += blockThreads() * V) {
      C w[V];
      loadRun<V>(xr + j, w);
      for (int e = 0; e < V; ++e)
        sum += w[e];
    }
  }
  mean = blockSum(sum, scratch) / C(cols);
  C sq = C(0);
  if (cached) {
    for (int i = 0; i < kRowCache; i += V)
      if (cachedRun<V>(i, cols) >= 0)
        for (int e = 0; e < V; ++e) {
          const C d = v[i + e] - mean;
          sq += d * d;
        }
  } else {
    for (int64_t j = threadIndex() * V; j < cols; j += blockThreads() * V) {
      C w[V];
      loadRun<V>(xr + j, w);
      for (int e = 0; e < V; ++e) {
        const C d = w[e] - mean;
        sq += d * d;
      }
    }
  }
  rstd = C(1) / sqrt(blockSum(sq, scratch) / C(cols) + C(epsilon));
}

/// The layer norm's output elements j .. j + V - 1 of row `yr` from x's
/// `xv` (the same elements), the row's statistics, scale and bias.
template <int V, typename S, typename C>
ZRT_DEV void layerNormRun(const C *xv, C mean, C rstd, const S *scale, const S *bias, int64_t j,
                          S *yr) {
  C s[V], b[V], w[V];
  loadRun<V>(scale + j, s);
  if (bias)
    loadRun<V>(bias + j, b);
  for (int e = 0; e < V; ++e) {
    w[e] = (xv[e] - mean) * rstd * s[e];
    if (bias)
      w[e] += b[e];
  }
  storeRun<V>(yr + j, w);
}

/// Layer norm over rows of `cols` contiguous elements, read and written in
/// runs of V (layerNormRow).
template <typename S, int V>
ZRT_GLOBAL void layerNormKernel(const S *x, const S *scale, const S *bias, S *y, int64_t rows,
                                int64_t cols, double epsilon) {
  using C = typename Compute<S>::type;
  __shared__ C scratch[32];
  const bool cached = rowFitsCache(cols);
  for (int64_t r = blockIndex(); r < rows; r += gridBlocks()) {
    const S *xr = x + r * cols;
    C v[kRowCache]; // the row's elements, read once (kRowCache)
    C mean, rstd;
    layerNormRow<V>(xr, cols, epsilon, cached, v, scratch, mean, rstd);
    for (int i = 0; cached && i < kRowCache; i += V) {
      const int64_t j = cachedRun<V>(i, cols);
      if (j >= 0)
        layerNormRun<V>(v + i, mean, rstd, scale, bias, j, y + r * cols);
    }
    for (int64_t j = threadIndex() * V; !cached && j < cols; j += blockThreads() * V) {
      C w[V];
      loadRun<V>(xr + j, w);
      layerNormRun<V>(w, mean, rstd, scale, bias, j, y + r * cols);
    }
  }
}

/// The blocks of a layer norm gradient over `rows` rows: fixed by the
/// shape (so the parameter gradients' order of sums is the same on every
/// GPU and run), few enough that the blocks' partial sums are a small
/// fraction of the rows they sum.
inline int64_t layerNormGradBlocks(int64_t rows) {
  constexpr int64_t kMost = 1024;
  return rows < 1 ? 1 : (rows < kMost ? rows : kMost);
}

/// The layer norm gradient in one pass over x and gy: each block takes rows
/// with the grid's stride, computes a row's statistics as the forward pass
/// does (layerNormRow), writes gx (when set; plus `addend` when set), and adds gy * xhat and gy of
/// each of its columns into its partial sums, which it leaves in
/// `partials[block][col][2]` (when set) for layerNormGradParamsKernel. A
/// thread sums the same columns in every row: its cached elements in
/// registers, or (a row longer than the cache) its columns of the block's
/// partials in memory, which no other thread touches. Every row is read
/// and written in runs of V (layerNormRow).
template <typename S, int V>
ZRT_GLOBAL void layerNormGradKernel(const S *x, const S *scale, const S *gy, const S *addend, S *gx,
                                    int64_t rows, int64_t cols, double epsilon,
                                    typename Compute<S>::type *partials) {
  using C = typename Compute<S>::type;
  __shared__ C scratch[32];
  const bool cached = rowFitsCache(cols);
  C *mine = partials ? partials + blockIndex() * cols * 2 : nullptr;
  C sumXhat[kRowCache], sumG[kRowCache]; // the cached columns' partial sums
  for (int i = 0; i < kRowCache; ++i)
    sumXhat[i] = sumG[i] = C(0);
  for (int64_t j = threadIndex() * V; mine && !cached && j < cols; j += blockThreads() * V)
    for (int e = 0; e < V; ++e) // the thread's own columns, as it adds to them below
      mine[2 * (j + e)] = mine[2 * (j + e) + 1] = C(0);
  // gx's elements j .. j + V - 1 of the row at o, stored; with an addend,
  // rounded as stored and added as an add of the two would.
  auto write = [&](int64_t k, C *v) {
    if (addend) {
      C a[V];
      loadRun<V>(addend + k, a);
      for (int e = 0; e < V; ++e)
        v[e] = a[e] + load(storeD<S>(v[e]));
    }
    storeRun<V>(gx + k, v);
  };
  for (int64_t r = blockIndex(); r < rows; r += gridBlocks()) {
    const int64_t o = r * cols;
    C xmv[kRowCache]; // x, then x - mean, read once (kRowCache)
    C mean, rstd;
    layerNormRow<V>(x + o, cols, epsilon, cached, xmv, scratch, mean, rstd);
    C a = C(0), b = C(0); // sums of gy*s and gy*s*xhat
    C gv[kRowCache], gsv[kRowCache]; // gy and gy*s, read once (kRowCache)
    if (cached) {
      for (int i = 0; i < kRowCache; i += V) {
        const int64_t j = cachedRun<V>(i, cols);
        C s[V];
        if (j >= 0) {
          loadRun<V>(gy + o + j, gv + i);
          loadRun<V>(scale + j, s);
        }
        for (int e = 0; e < V; ++e) {
          gsv[i + e] = j < 0 ? C(0) : gv[i + e] * s[e];
          xmv[i + e] = j < 0 ? C(0) : xmv[i + e] - mean;
          if (j < 0) {
            gv[i + e] = C(0);
            continue;
          }
          a += gsv[i + e];
          b += gsv[i + e] * xmv[i + e] * rstd;
          sumXhat[i + e] += gv[i + e] * xmv[i + e] * rstd;
          sumG[i + e] += gv[i + e];
        }
      }
    } else {
      for (int64_t j = threadIndex() * V; j < cols; j += blockThreads() * V) {
        C g[V], xv[V], s[V];
        loadRun<V>(gy + o + j, g);
        loadRun<V>(x + o + j, xv);
        loadRun<V>(scale + j, s);
        for (int e = 0; e < V; ++e) {
          const C xm = xv[e] - mean;
          const C gs = g[e] * s[e];
          a += gs;
          b += gs * xm * rstd;
          if (mine) {
            mine[2 * (j + e)] += g[e] * xm * rstd;
            mine[2 * (j + e) + 1] += g[e];
          }
        }
      }
    }
    a = blockSum(a, scratch) / C(cols);
    b = blockSum(b, scratch) / C(cols);
    for (int i = 0; gx && cached && i < kRowCache; i += V) {
      const int64_t j = cachedRun<V>(i, cols);
      if (j < 0)
        continue;
      C w[V];
      for (int e = 0; e < V; ++e)
        w[e] = rstd * (gsv[i + e] - a - xmv[i + e] * rstd * b);
      write(o + j, w);
    }
    for (int64_t j = threadIndex() * V; gx && !cached && j < cols; j += blockThreads() * V) {
      C xv[V], g[V], s[V], w[V];
      loadRun<V>(x + o + j, xv);
      loadRun<V>(gy + o + j, g);
      loadRun<V>(scale + j, s);
      for (int e = 0; e < V; ++e) {
        const C xhat = (xv[e] - mean) * rstd;
        const C gs = g[e] * s[e];
        w[e] = rstd * (gs - a - xhat * b);
      }
      write(o + j, w);
    }
  }
  for (int i = 0; mine && cached && i < kRowCache; i += V) {
    const int64_t j = cachedRun<V>(i, cols);
    if (j >= 0)
      for (int e = 0; e < V; ++e) {
        mine[2 * (j + e)] = sumXhat[i + e];
        mine[2 * (j + e) + 1] = sumG[i + e];
      }
  }
}

/// Threads of a layerNormGradParamsKernel block: kColumnTile columns times
/// as many groups of the partial sums' blocks.
constexpr int kParamThreads = kColumnTile * kColumnTile;
static_assert(kParamThreads <= kMaxBlockThreads, "a block has at most 1024 threads");

/// grad_scale[j] and grad_bias[j]: the `blocks` blocks' partial sums of
/// column j (layerNormGradKernel). A block takes a tile of kColumnTile
/// columns (columns.h's lanes: a warp reads neighbouring columns of a
/// block's partials); its row groups sum every groups-th block's partials,
/// from their group's first, and the groups' sums are added in group order.
/// On a GPU (kParamThreads threads: 32 groups) a thread adds blocks / 32
/// values, where a thread per column once added all of them in turn. The
/// order depends on the launch alone, not on the GPU.
template <typename S>
ZRT_GLOBAL void ZRT_MAX_THREADS(kParamThreads)
    layerNormGradParamsKernel(const typename Compute<S>::type *partials, int64_t blocks,
                              int64_t cols, S *gscale, S *gbias) {
  using C = typename Compute<S>::type;
  __shared__ C sums[2][kColumnTile][kColumnTile + 1];
  const ColumnLanes l = columnLanes();
  const int64_t tiles = (cols + kColumnTile - 1) / kColumnTile;
  for (int64_t tile = blockIndex(); tile < tiles; tile += gridBlocks()) {
    for (int cx = l.x; l.active && cx < kColumnTile; cx += l.lanes) {
      const int64_t j = tile * kColumnTile + cx;
      C xhat = C(0), g = C(0);
      for (int64_t b = l.y; j < cols && b < blocks; b += l.groups) {
        xhat += partials[(b * cols + j) * 2];
        g += partials[(b * cols + j) * 2 + 1];
      }
      sums[0][l.y][cx] = xhat;
      sums[1][l.y][cx] = g;
    }
    syncBlock();
    for (int cx = l.x; l.active && l.y == 0 && cx < kColumnTile; cx += l.lanes) {
      const int64_t j = tile * kColumnTile + cx;
      if (j >= cols)
        continue;
      C xhat = sums[0][0][cx], g = sums[1][0][cx];
      for (int y = 1; y < l.groups; ++y) {
        xhat += sums[0][y][cx];
        g += sums[1][y][cx];
      }
      if (gscale)
        gscale[j] = storeD<S>(xhat);
      if (gbias)
        gbias[j] = storeD<S>(g);
    }
    syncBlock(); // sums is reused by the block's next tile
  }
}

/// Sample s's row of the scores: its first element, and whether its label
/// is ignored or out of range. A sample's rows are `rowStride` elements
/// apart: classes * inner, or a row pitch (rank-2 scores only).
template <typename L>
ZRT_DEV int64_t crossEntropyRow(int64_t s, const L *labels, int64_t classes, int64_t inner,
                                int64_t rowStride, int hasIgnore, int64_t ignore, int64_t &label,
                                bool &ignored, bool &outOfRange) {
  label = static_cast<int64_t>(labels[s]);
  ignored = hasIgnore && label == ignore;
  outOfRange = !ignored && (label < 0 || label >= classes);
  return (s / inner) * rowStride + s % inner;
}

/// Thread 0's part of sample s's loss (lse - the label's score
/// `labelScore`, in the compute type, from the row's max and sum of
/// exponentials): into `loss`, and into acc[0] the sum of the losses,
/// acc[1] the count of labels not ignored.
template <typename C>
ZRT_DEV void crossEntropyLoss(C labelScore, int64_t s, bool ignored, C mx, C sum, C *loss,
                              double *acc) {
  if (threadIndex() != 0)
    return;
  const C l = ignored ? C(0) : mx + log_(sum) - labelScore;
  if (loss)
    loss[s] = l;
  if (!ignored) {
    atomicAddDouble(acc, static_cast<double>(l));
    atomicAddDouble(acc + 1, 1.0);
  }
}

/// The factor of sample s's gradient row: the loss's gradient `gout` for
/// the reduction (acc[1] is the mean's count of labels not ignored); 0 for
/// an ignored or out-of-range label.
template <typename C, typename S>
ZRT_DEV C crossEntropyGradScale(const S *gout, int64_t s, bool ignored, int reduction,
                                const double *acc) {
  if (ignored)
    return C(0);
  if (reduction == ZEROC_RT_LOSS_NONE)
    return load(gout[s]);
  if (reduction == ZEROC_RT_LOSS_SUM)
    return load(gout[0]);
  return acc[1] > 0 ? static_cast<C>(static_cast<double>(load(gout[0])) / acc[1]) : C(0);
}

/// Sample s's gradient row: the loss's gradient `gout` times
/// softmax - onehot (zeros for an ignored or out-of-range label); acc[1]
/// is the mean's count of labels not ignored.
template <typename S, typename C>
ZRT_DEV void crossEntropyGradRow(const S *scores, const S *gout, S *gscores, int64_t s,
                                 int64_t base, int64_t label, int64_t classes, int64_t inner,
                                 bool ignored, int reduction, const double *acc, C mx, C sum) {
  const C g = crossEntropyGradScale<C>(gout, s, ignored, reduction, acc);
  for (int64_t c = threadIndex(); c < classes; c += blockThreads()) {
    const int64_t i = base + c * inner;
    const C p = exp(load(scores[i]) - mx) / sum;
    gscores[i] = storeD<S>(ignored ? C(0) : g * (p - (c == label ? C(1) : C(0))));
  }
}

/// crossEntropyGradRow of a contiguous row (inner 1) at `base`, in runs of
/// chunks where `chunks` (forRowRuns; the scores and their gradient then
/// share the row's 16-byte boundaries), with the same value per element.
template <typename S, typename C>
ZRT_DEV void crossEntropyGradRuns(const S *scores, const S *gout, S *gscores, int64_t s,
                                  int64_t base, int64_t label, int64_t classes, bool chunks,
                                  bool ignored, int reduction, const double *acc, C mx, C sum) {
  const C g = crossEntropyGradScale<C>(gout, s, ignored, reduction, acc);
  forRowRuns(scores + base, classes, chunks, [&](int64_t c, auto n) {
    constexpr int V = decltype(n)::value;
    C v[V];
    loadRun<V>(scores + base + c, v);
    for (int e = 0; e < V; ++e) {
      const C p = exp(v[e] - mx) / sum;
      v[e] = ignored ? C(0) : g * (p - (c + e == label ? C(1) : C(0)));
    }
    storeRun<V>(gscores + base + c, v);
  });
}

template <typename S>
ZRT_GLOBAL void lossFinishKernel(const double *acc, S *out, int mean) {
  if (blockIndex() == 0 && threadIndex() == 0)
    out[0] = storeD<S>(mean ? (acc[1] > 0 ? acc[0] / acc[1] : 0.0) : acc[0]);
}

template <typename T, typename S>
ZRT_GLOBAL void lossNoneKernel(const T *loss, S *out, int64_t n) {
  for (int64_t i = gridFirst(); i < n; i += gridStride())
    out[i] = storeD<S>(static_cast<double>(loss[i]));
}

/// Per sample (n, d), from the row's max and sum of exponentials computed
/// once: its loss (crossEntropyLoss, when `acc` is set; an out-of-range
/// label is flagged when `error` is) and its gradient row
/// (crossEntropyGradRow, when `gscores` is; `gradAcc` holds the mean's
/// count). softmax_cross_entropy, its gradient and both in one pass are
/// this kernel, so the fused call has the two calls' bits. Contiguous rows
/// (inner 1) are read in runs of chunks (forRowRuns); the gradient is
/// written so too where `gradChunks` (its rows' 16-byte boundaries are the
/// scores'). The scores and their gradient have rows `rowStride` apart.
template <typename S, typename L>
ZRT_GLOBAL void ZRT_MAX_THREADS(kMaxBlockThreads)
    crossEntropyKernel(const S *scores, const L *labels, int64_t samples, int64_t classes,
                       int64_t inner, int64_t rowStride, int hasIgnore, int64_t ignore,
                       int reduction, typename Compute<S>::type *loss, double *acc, const S *gout,
                       S *gscores, const double *gradAcc, int gradChunks, unsigned *error,
                       int32_t op) {
  using C = typename Compute<S>::type;
  __shared__ C scratch[32];
  for (int64_t s = blockIndex(); s < samples; s += gridBlocks()) {
    int64_t label;
    bool ignored, outOfRange;
    const int64_t base = crossEntropyRow(s, labels, classes, inner, rowStride, hasIgnore, ignore,
                                         label, ignored, outOfRange);
    if (outOfRange && error && threadIndex() == 0)
      flagError(error, kIndexOutOfRange, op);
    // The label's score, read by thread 0 before the row's reductions, whose
    // barriers order the read before any thread writes the row's gradient:
    // `gscores` may be `scores` (zero-plan-buffers writes a fused
    // cross-entropy's gradient over its scores). Every other score is read
    // by the thread that then writes its gradient.
    C labelScore = C(0);
    if (acc && !outOfRange && !ignored && threadIndex() == 0)
      labelScore = load(scores[base + label * inner]);
    C mx, sum;
    if (inner == 1)
      rowMaxAndSumRuns(scores + base, classes, /*chunks=*/true, scratch, mx, sum);
    else
      rowMaxAndSum(Loads<S>{scores}, base, classes, inner, scratch, mx, sum);
    if (acc && !outOfRange)
      crossEntropyLoss(labelScore, s, ignored, mx, sum, loss, acc);
    if (gscores && inner == 1)
      crossEntropyGradRuns(scores, gout, gscores, s, base, label, classes, gradChunks != 0,
                           ignored || outOfRange, reduction, gradAcc, mx, sum);
    else if (gscores)
      crossEntropyGradRow(scores, gout, gscores, s, base, label, classes, inner,
                          ignored || outOfRange, reduction, gradAcc, mx, sum);
  }
}

/// Threads of a cross-entropy block, which takes a row of `classes`: about
/// 32 elements each (two runs of bf16, kRowRun) for contiguous rows, up to
/// kMaxBlockThreads; kBlock for strided ones. A row is read twice (its max
/// and sum, then its gradient), so the fewer rows a multiprocessor holds
/// at once, the likelier the second read finds the row in L2: GPT-2's rows
/// of 50,257 bf16 are 100 KB, and at 256 threads a GPU holds 8 blocks per
/// multiprocessor, about 100 MB of rows in flight, twice an H100's or
/// H200's L2; at 1024, a quarter of that or less.
inline int crossEntropyThreads(int64_t classes, int64_t inner) {
  constexpr int64_t kPerThread = 32;
  return inner != 1 ? kBlock : rowThreadsFor(classes, kPerThread, kMaxBlockThreads);
}

/// Counts the labels not ignored into acc[1] (the mean's denominator).
template <typename L>
ZRT_GLOBAL void countLabelsKernel(const L *labels, int64_t samples, int hasIgnore,
                                  int64_t ignore, double *acc) {
  __shared__ float scratch[32];
  float count = 0.0f;
  for (int64_t s = gridFirst(); s < samples; s += gridStride())
    count += (hasIgnore && static_cast<int64_t>(labels[s]) == ignore) ? 0.0f : 1.0f;
  count = blockSum(count, scratch);
  if (threadIndex() == 0)
    atomicAddDouble(acc + 1, static_cast<double>(count));
}

/// fn(std::integral_constant<int, V>{}) for the runs a row kernel reads
/// and writes (rows.h's cachedRun): whole 16-byte chunks (V =
/// Chunk<S>::kSize) when rows of `cols` elements split into them at every
/// pointer (cols a multiple of the chunk, each pointer 16-byte aligned or
/// null), else single elements.
template <typename S, typename Fn, typename... P>
zeroc_rt_status_t dispatchRuns(int64_t cols, Fn &&fn, const P *...pointers) {
  constexpr int K = Chunk<S>::kSize;
  if (cols % K == 0 && aligned16(pointers...))
    return fn(std::integral_constant<int, K>{});
  return fn(std::integral_constant<int, 1>{});
}

zeroc_rt_status_t axisOf(const char *k, int64_t axis, int rank, int *out) {
  if (axis < -rank || axis >= rank || rank == 0)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: axis %lld is outside [-%d, %d)",
                          k, static_cast<long long>(axis), rank, rank);
  *out = static_cast<int>(axis < 0 ? axis + rank : axis);
  return nullptr;
}

template <typename Fn>
zeroc_rt_status_t dispatchLabels(const char *k, zeroc_rt_dtype_t dtype, Fn &&fn) {
  if (dtype == ZEROC_RT_DTYPE_I64)
    return fn(int64_t{});
  if (dtype == ZEROC_RT_DTYPE_I32)
    return fn(int32_t{});
  return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: labels must be i64 or i32", k);
}

/// Layer norm's rows (the elements before `axis`) and columns (from it),
/// with scale (and bias, when given) of x's dims from the axis.
zeroc_rt_status_t layerNormShape(const char *k, const zeroc_rt_tensor_t *x,
                                 const zeroc_rt_tensor_t *scale, const zeroc_rt_tensor_t *bias,
                                 int64_t axis, int64_t *rows, int64_t *cols) {
  using namespace zeroc_rt::kernels;
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "x", x));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "scale", scale));
  int a = 0;
  ZEROC_RT_RETURN_IF_ERROR(axisOf(k, axis, x->rank, &a));
  *cols = product(x->dims, a, x->rank);
  *rows = product(x->dims, 0, a);
  if (numElements(*scale) != *cols || (bias && numElements(*bias) != *cols))
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                          "%s: scale %s (or bias) is not x's dims from axis %d of %s", k,
                          describe(*scale).c_str(), a, describe(*x).c_str());
  return nullptr;
}

/// Softmax cross-entropy's scores (N, C, d...) and labels (N, d...): the
/// classes C, the trailing elements d and the samples N * d.
zeroc_rt_status_t crossEntropyShape(const char *k, const zeroc_rt_tensor_t *scores,
                                    const zeroc_rt_tensor_t *labels, int64_t *classes,
                                    int64_t *inner, int64_t *samples) {
  using namespace zeroc_rt::kernels;
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "scores", scores));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "labels", labels));
  if (scores->rank < 2)
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH, "%s: scores %s has no class dim", k,
                          describe(*scores).c_str());
  *classes = scores->dims[1];
  *inner = product(scores->dims, 2, scores->rank);
  *samples = numElements(*labels);
  if (*samples * *classes != numElements(*scores))
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH, "%s: labels %s do not match scores %s", k,
                          describe(*labels).c_str(), describe(*scores).c_str());
  return nullptr;
}

/// The loss `out` from the per-sample losses (`loss`, reduction none) or
/// the sum and count in acc[0..1] (mean, sum).
template <typename C>
zeroc_rt_status_t finishLoss(const char *k, zeroc_rt_loss_reduction_t reduction, const C *loss,
                             const double *acc, int64_t samples, zrt_ct out) {
  if (reduction == ZEROC_RT_LOSS_NONE)
    return dispatchFloat(k, out->dtype, [&](auto o) {
      using O = decltype(o);
      return ZRT_LAUNCH(k, lossNoneKernel<C, O>, blocksFor(samples), kBlock, loss,
                        static_cast<O *>(out->data), samples);
    });
  return dispatchFloat(k, out->dtype, [&](auto o) {
    using O = decltype(o);
    return ZRT_LAUNCH(k, lossFinishKernel<O>, 1, 32, acc, static_cast<O *>(out->data),
                      reduction == ZEROC_RT_LOSS_MEAN ? 1 : 0);
  });
}

/// softmax_cross_entropy's loss into `out` (when set) and its gradient for
/// the loss's gradient `grad_out` into `grad_scores` (when set), in one
/// pass over the scores (crossEntropyKernel). The device scalars hold the
/// loss's sum and count (0-1) and the gradient's count (2-3); the kernel
/// scratch the per-sample losses of reduction none. `rowPitch`, when not 0,
/// is how many elements apart the rows of rank-2 scores and of their
/// gradient are stored (at least the classes).
zeroc_rt_status_t crossEntropy(const char *k, zrt_ct scores, zrt_ct labels,
                               zeroc_rt_loss_reduction_t reduction, int has_ignore,
                               int64_t ignore_index, zrt_ct out, zrt_ct grad_out,
                               zrt_ct grad_scores, int64_t rowPitch = 0) {
  using namespace zeroc_rt::kernels;
  int64_t classes = 0, inner = 0, samples = 0;
  ZEROC_RT_RETURN_IF_ERROR(crossEntropyShape(k, scores, labels, &classes, &inner, &samples));
  if (rowPitch != 0 && (scores->rank != 2 || rowPitch < classes))
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                          "%s: a row pitch of %lld needs rank-2 scores of at most that many "
                          "classes, not %s",
                          k, static_cast<long long>(rowPitch), describe(*scores).c_str());
  const int64_t rowStride = rowPitch != 0 ? rowPitch : classes * inner;
  if (out)
    ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  if (grad_scores) {
    ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_out", grad_out));
    ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_scores", grad_scores));
    ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "grad_scores", *grad_scores, "scores", *scores));
  }
  double *acc = deviceScalars();
  ZEROC_RT_RETURN_IF_ERROR(gpuZero(acc, 4 * sizeof(double)));
  // The gradient's rows are read and written in runs of chunks when its
  // storage is the scores' modulo 16 bytes (then so is every row start).
  const bool gradChunks = grad_scores && (reinterpret_cast<uintptr_t>(grad_scores->data) -
                                          reinterpret_cast<uintptr_t>(scores->data)) %
                                                 16u ==
                                             0;
  void *scratch = nullptr;
  if (out && reduction == ZEROC_RT_LOSS_NONE)
    ZEROC_RT_RETURN_IF_ERROR(gpuScratch(static_cast<size_t>(samples) * sizeof(double), &scratch));
  return dispatchFloat(k, scores->dtype, [&](auto s) {
    using S = decltype(s);
    using C = typename Compute<S>::type;
    C *loss = static_cast<C *>(scratch);
    return dispatchLabels(k, labels->dtype, [&](auto l) -> zeroc_rt_status_t {
      using L = decltype(l);
      if (grad_scores && reduction == ZEROC_RT_LOSS_MEAN)
        ZEROC_RT_RETURN_IF_ERROR(ZRT_LAUNCH(k, countLabelsKernel<L>, 64, kBlock,
                                            static_cast<const L *>(labels->data), samples,
                                            has_ignore, ignore_index, acc + 2));
      ZEROC_RT_RETURN_IF_ERROR(ZRT_LAUNCH(
          k, crossEntropyKernel<S, L>, rowBlocks(samples), crossEntropyThreads(classes, inner),
          static_cast<const S *>(scores->data), static_cast<const L *>(labels->data), samples,
          classes, inner, rowStride, has_ignore, ignore_index, int(reduction), loss,
          out ? acc : nullptr, grad_scores ? static_cast<const S *>(grad_out->data) : nullptr,
          grad_scores ? static_cast<S *>(grad_scores->data) : nullptr,
          static_cast<const double *>(acc + 2), gradChunks ? 1 : 0,
          out ? kernelErrorWord() : nullptr, currentOp()));
      if (!out)
        return nullptr;
      return finishLoss(k, reduction, static_cast<const C *>(loss),
                        static_cast<const double *>(acc), samples, out);
    });
  });
}

/// layer_norm_grad, its input gradient plus `addend` when that is set.
zeroc_rt_status_t layerNormGrad(const char *k, zrt_ct x, zrt_ct scale, int64_t axis,
                                double epsilon, zrt_ct grad_y, zrt_ct addend, zrt_ct grad_x,
                                zrt_ct grad_scale, zrt_ct grad_bias) {
  using namespace zeroc_rt::kernels;
  int64_t rows = 0, cols = 0;
  ZEROC_RT_RETURN_IF_ERROR(layerNormShape(k, x, scale, nullptr, axis, &rows, &cols));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_y", grad_y));
  ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "grad_y", *grad_y, "x", *x));
  if (addend) {
    ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "addend", addend));
    ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "addend", *addend, "x", *x));
  }
  // One pass over x and gy (layerNormGradKernel); the scratch holds its
  // blocks' partial sums of the parameter gradients.
  const bool params = grad_scale || grad_bias;
  const int64_t blocks = layerNormGradBlocks(rows);
  void *scratch = nullptr;
  if (params)
    ZEROC_RT_RETURN_IF_ERROR(
        gpuScratch(static_cast<size_t>(blocks) * static_cast<size_t>(cols) * 2 * sizeof(double),
                   &scratch));
  return dispatchFloat(k, x->dtype, [&](auto s) -> zeroc_rt_status_t {
    using S = decltype(s);
    using C = typename Compute<S>::type;
    C *partials = static_cast<C *>(scratch);
    const S *xs = static_cast<const S *>(x->data), *ss = static_cast<const S *>(scale->data);
    const S *gys = static_cast<const S *>(grad_y->data);
    const S *as = addend ? static_cast<const S *>(addend->data) : nullptr;
    S *gxs = grad_x ? static_cast<S *>(grad_x->data) : nullptr;
    ZEROC_RT_RETURN_IF_ERROR(dispatchRuns<S>(
        cols,
        [&](auto v) {
          return ZRT_LAUNCH(k, layerNormGradKernel<S, decltype(v)::value>, blocks, rowThreads(cols),
                            xs, ss, gys, as, gxs, rows, cols, epsilon, partials);
        },
        xs, ss, gys, as, gxs));
    if (!params)
      return nullptr;
    const int64_t tiles = (cols + kColumnTile - 1) / kColumnTile;
    return ZRT_LAUNCH(k, layerNormGradParamsKernel<S>, cappedBlocks(tiles), kParamThreads,
                      static_cast<const C *>(partials), blocks, cols,
                      grad_scale ? static_cast<S *>(grad_scale->data) : nullptr,
                      grad_bias ? static_cast<S *>(grad_bias->data) : nullptr);
  });
}

} // namespace
} // namespace zeroc_rt::cuda

using namespace zeroc_rt::cuda;

extern "C" {

zeroc_rt_status_t zeroc_rt_cuda_k_softmax(zrt_ct in, int64_t axis, int log, zrt_ct out) {
  using namespace zeroc_rt::kernels;
  const char *k = "softmax";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "in", in));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "out", *out, "in", *in));
  int a = 0;
  ZEROC_RT_RETURN_IF_ERROR(axisOf(k, axis, in->rank, &a));
  const Rows g = rowsOf(*in, a);
  return dispatchFloat(k, in->dtype, [&](auto s) {
    using S = decltype(s);
    return ZRT_LAUNCH(k, softmaxKernel<S>, rowBlocks(g.rows), kBlock,
                      static_cast<const S *>(in->data), static_cast<S *>(out->data), g, log);
  });
}

zeroc_rt_status_t zeroc_rt_cuda_k_softmax_grad(zrt_ct y, zrt_ct grad_y, int64_t axis,
                                               int log, zrt_ct grad_x) {
  using namespace zeroc_rt::kernels;
  const char *k = "softmax_grad";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "y", y));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_y", grad_y));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_x", grad_x));
  ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "grad_y", *grad_y, "y", *y));
  ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "grad_x", *grad_x, "y", *y));
  int a = 0;
  ZEROC_RT_RETURN_IF_ERROR(axisOf(k, axis, y->rank, &a));
  const Rows g = rowsOf(*y, a);
  return dispatchFloat(k, y->dtype, [&](auto s) {
    using S = decltype(s);
    return ZRT_LAUNCH(k, softmaxGradKernel<S>, rowBlocks(g.rows), kBlock,
                      static_cast<const S *>(y->data), static_cast<const S *>(grad_y->data),
                      static_cast<S *>(grad_x->data), g, log);
  });
}

zeroc_rt_status_t zeroc_rt_cuda_k_layer_norm(zrt_ct x, zrt_ct scale, zrt_ct bias,
                                             int64_t axis, double epsilon, zrt_ct y) {
  using namespace zeroc_rt::kernels;
  const char *k = "layer_norm";
  int64_t rows = 0, cols = 0;
  ZEROC_RT_RETURN_IF_ERROR(layerNormShape(k, x, scale, bias, axis, &rows, &cols));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "y", y));
  ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "y", *y, "x", *x));
  return dispatchFloat(k, x->dtype, [&](auto s) {
    using S = decltype(s);
    const S *xs = static_cast<const S *>(x->data), *ss = static_cast<const S *>(scale->data);
    const S *bs = bias ? static_cast<const S *>(bias->data) : nullptr;
    S *ys = static_cast<S *>(y->data);
    return dispatchRuns<S>(
        cols,
        [&](auto v) {
          return ZRT_LAUNCH(k, layerNormKernel<S, decltype(v)::value>, rowBlocks(rows),
                            rowThreads(cols), xs, ss, bs, ys, rows, cols, epsilon);
        },
        xs, ss, bs, ys);
  });
}

zeroc_rt_status_t zeroc_rt_cuda_k_layer_norm_grad(zrt_ct x, zrt_ct scale, int64_t axis,
                                                  double epsilon, zrt_ct grad_y,
                                                  zrt_ct grad_x, zrt_ct grad_scale,
                                                  zrt_ct grad_bias) {
  return layerNormGrad("layer_norm_grad", x, scale, axis, epsilon, grad_y, nullptr, grad_x,
                       grad_scale, grad_bias);
}

zeroc_rt_status_t zeroc_rt_cuda_k_layer_norm_grad_add(zrt_ct x, zrt_ct scale, int64_t axis,
                                                      double epsilon, zrt_ct grad_y,
                                                      zrt_ct addend, zrt_ct sum,
                                                      zrt_ct grad_scale, zrt_ct grad_bias) {
  if (!addend || !sum)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "layer_norm_grad_add: needs the addend and the sum");
  return layerNormGrad("layer_norm_grad_add", x, scale, axis, epsilon, grad_y, addend, sum,
                       grad_scale, grad_bias);
}

zeroc_rt_status_t zeroc_rt_cuda_k_softmax_cross_entropy(zrt_ct scores, zrt_ct labels,
                                                        zeroc_rt_loss_reduction_t reduction,
                                                        int has_ignore, int64_t ignore_index,
                                                        zrt_ct out) {
  return crossEntropy("softmax_cross_entropy", scores, labels, reduction, has_ignore,
                      ignore_index, out, nullptr, nullptr);
}

zeroc_rt_status_t zeroc_rt_cuda_k_softmax_cross_entropy_grad(
    zrt_ct scores, zrt_ct labels, zeroc_rt_loss_reduction_t reduction, int has_ignore,
    int64_t ignore_index, zrt_ct grad_out, zrt_ct grad_scores) {
  return crossEntropy("softmax_cross_entropy_grad", scores, labels, reduction, has_ignore,
                      ignore_index, nullptr, grad_out, grad_scores);
}

zeroc_rt_status_t zeroc_rt_cuda_k_softmax_cross_entropy_with_grad(
    zrt_ct scores, zrt_ct labels, zeroc_rt_loss_reduction_t reduction, int has_ignore,
    int64_t ignore_index, zrt_ct grad_out, zrt_ct out, zrt_ct grad_scores) {
  if (!out || !grad_out || !grad_scores)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "softmax_cross_entropy_with_grad: needs the loss, its gradient and "
                          "the scores' gradient");
  return crossEntropy("softmax_cross_entropy_with_grad", scores, labels, reduction, has_ignore,
                      ignore_index, out, grad_out, grad_scores);
}

zeroc_rt_status_t zeroc_rt_cuda_k_softmax_cross_entropy_pitched(
    zrt_ct scores, zrt_ct labels, zeroc_rt_loss_reduction_t reduction, int has_ignore,
    int64_t ignore_index, zrt_ct grad_out, zrt_ct out, zrt_ct grad_scores, int64_t row_pitch) {
  const char *k = "softmax_cross_entropy_pitched";
  if ((!out && !grad_scores) || (!grad_out != !grad_scores))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: needs the loss or the scores' gradient, and the loss's "
                          "gradient exactly with the scores'",
                          k);
  if (row_pitch < 1)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: row pitch %lld is not positive", k,
                          static_cast<long long>(row_pitch));
  return crossEntropy(k, scores, labels, reduction, has_ignore, ignore_index, out, grad_out,
                      grad_scores, row_pitch);
}

} // extern "C"
