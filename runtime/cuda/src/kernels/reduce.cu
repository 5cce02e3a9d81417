//===- kernels/reduce.cu - Reductions over dims: reduce, sum_to -----------===//
//
// Where the reduced dims are one run with at least kColumnTile contiguous
// kept elements after them (a bias gradient: [B, T, C] -> [C]), the input is
// [outer, rows, cols] reduced down its columns (kernels/columns.h). Else one
// block per output element (grid-stride over the outputs), its threads
// striding over the reduced elements and combining with blockSum/blockMax.
//
//===----------------------------------------------------------------------===//

#include "kernels/columns.h"
#include "kernels/common.h"

namespace zeroc_rt::cuda {
namespace {

/// The kept and the reduced dims of the input, with the input's strides.
struct Split {
  int kept = 0, reduced = 0;
  int64_t keptDims[ZEROC_RT_MAX_RANK] = {}, keptStrides[ZEROC_RT_MAX_RANK] = {};
  int64_t redDims[ZEROC_RT_MAX_RANK] = {}, redStrides[ZEROC_RT_MAX_RANK] = {};
  int64_t outputs = 1, count = 1;
};

ZRT_HD int64_t offsetIn(const int64_t *dims, const int64_t *strides, int n, int64_t i) {
  int64_t o = 0;
  for (int d = n - 1; d >= 0; --d) {
    o += (i % dims[d]) * strides[d];
    i /= dims[d];
  }
  return o;
}

Split splitOf(const zeroc_rt_tensor_t &in, uint32_t mask) {
  Split s;
  int64_t stride = 1;
  int64_t strides[ZEROC_RT_MAX_RANK];
  for (int d = in.rank - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= in.dims[d];
  }
  for (int d = 0; d < in.rank; ++d) {
    if (mask & (1u << d)) {
      s.redDims[s.reduced] = in.dims[d];
      s.redStrides[s.reduced++] = strides[d];
      s.count *= in.dims[d];
    } else {
      s.keptDims[s.kept] = in.dims[d];
      s.keptStrides[s.kept++] = strides[d];
      s.outputs *= in.dims[d];
    }
  }
  return s;
}

template <typename S>
ZRT_GLOBAL void reduceKernel(const S *in, S *out, Split s, int op) {
  using C = typename Compute<S>::type;
  __shared__ C scratch[32];
  for (int64_t o = blockIndex(); o < s.outputs; o += gridBlocks()) {
    const int64_t base = offsetIn(s.keptDims, s.keptStrides, s.kept, o);
    C acc = op == ZEROC_RT_REDUCE_OP_MAX ? C(-INFINITY) : C(0);
    for (int64_t k = threadIndex(); k < s.count; k += blockThreads()) {
      const C v = load(in[base + offsetIn(s.redDims, s.redStrides, s.reduced, k)]);
      if (op == ZEROC_RT_REDUCE_OP_MAX)
        acc = maxNaN(acc, v);
      else
        acc += v;
    }
    acc = op == ZEROC_RT_REDUCE_OP_MAX ? blockMax(acc, scratch) : blockSum(acc, scratch);
    if (threadIndex() == 0)
      out[o] = storeD<S>(op == ZEROC_RT_REDUCE_OP_MEAN ? acc / C(s.count) : acc);
  }
}

/// The NaN-propagating max, or the sum, of two partial values.
template <typename C> ZRT_DEV C combineOp(C a, C b, int op) {
  return op == ZEROC_RT_REDUCE_OP_MAX ? maxNaN(a, b) : a + b;
}

template <typename S>
ZRT_GLOBAL void reduceColumnsKernel(const S *in, ColumnPlan p, int op,
                                    typename Compute<S>::type *partials) {
  using C = typename Compute<S>::type;
  __shared__ C shared[1][kColumnTile][kColumnTile + 1];
  columnPartials<1>(
      p, op == ZEROC_RT_REDUCE_OP_MAX ? C(-INFINITY) : C(0), shared, partials,
      [&](int64_t o, int64_t r, int64_t c, C *v) { v[0] = load(in[(o * p.rows + r) * p.cols + c]); },
      [&](C a, C b) { return combineOp(a, b, op); });
}

template <typename S>
ZRT_GLOBAL void reduceColumnsFinishKernel(const typename Compute<S>::type *partials, S *out,
                                          ColumnPlan p, int op) {
  using C = typename Compute<S>::type;
  for (int64_t i = gridFirst(); i < p.outputs(); i += gridStride()) {
    C v[1];
    combineColumn<1>(p, partials, i, v, [&](C a, C b) { return combineOp(a, b, op); });
    out[i] = storeD<S>(op == ZEROC_RT_REDUCE_OP_MEAN ? v[0] / C(p.rows) : v[0]);
  }
}

/// Whether the dims `mask` reduces are one run (dims of size 1 aside) with
/// at least kColumnTile elements after it: then *plan is the column plan.
bool columnsOf(const zeroc_rt_tensor_t &in, uint32_t mask, ColumnPlan *plan) {
  int first = -1, last = -1;
  for (int d = 0; d < in.rank; ++d)
    if ((mask & (1u << d)) && in.dims[d] != 1) {
      first = first < 0 ? d : first;
      last = d;
    }
  if (first < 0)
    return false;
  for (int d = first; d <= last; ++d)
    if (!(mask & (1u << d)) && in.dims[d] != 1)
      return false;
  const int64_t outer = kernels::product(in.dims, 0, first);
  const int64_t rows = kernels::product(in.dims, first, last + 1);
  const int64_t cols = kernels::product(in.dims, last + 1, in.rank);
  if (cols < kColumnTile)
    return false;
  *plan = columnPlan(outer, rows, cols);
  return true;
}

zeroc_rt_status_t launchReduce(const char *k, const zeroc_rt_tensor_t *in,
                               const zeroc_rt_tensor_t *out, uint32_t mask, int op) {
  using namespace zeroc_rt::kernels;
  const Split s = splitOf(*in, mask);
  if (s.outputs != numElements(*out))
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH, "%s: out %s does not match in %s", k,
                          describe(*out).c_str(), describe(*in).c_str());
  if (s.outputs == 0)
    return nullptr;
  ColumnPlan plan;
  const bool columns = columnsOf(*in, mask, &plan);
  return dispatchFloat(k, in->dtype, [&](auto v) -> zeroc_rt_status_t {
    using S = decltype(v);
    using C = typename Compute<S>::type;
    if (columns) {
      void *scratch = nullptr;
      ZEROC_RT_RETURN_IF_ERROR(
          gpuScratch(columnPartialCount(plan, 1) * sizeof(C), &scratch));
      C *partials = static_cast<C *>(scratch);
      ZEROC_RT_RETURN_IF_ERROR(ZRT_LAUNCH(k, reduceColumnsKernel<S>, cappedBlocks(plan.blocks()),
                                          kBlock, static_cast<const S *>(in->data), plan, op,
                                          partials));
      return ZRT_LAUNCH(k, reduceColumnsFinishKernel<S>, blocksFor(plan.outputs()), kBlock,
                        static_cast<const C *>(partials), static_cast<S *>(out->data), plan,
                        op);
    }
    int64_t blocks = s.outputs > 65535 * 16 ? 65535 * 16 : s.outputs;
    return ZRT_LAUNCH(k, reduceKernel<S>, blocks, kBlock, static_cast<const S *>(in->data),
                      static_cast<S *>(out->data), s, op);
  });
}

} // namespace
} // namespace zeroc_rt::cuda

using namespace zeroc_rt::cuda;

extern "C" {

zeroc_rt_status_t zeroc_rt_cuda_k_reduce(zeroc_rt_tensor_reduce_op_t op, zrt_ct in,
                                         uint32_t axes_mask, zrt_ct out) {
  using namespace zeroc_rt::kernels;
  ZEROC_RT_RETURN_IF_ERROR(checkTensor("reduce", "in", in));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor("reduce", "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype("reduce", "out", *out, "in", *in));
  if (in->rank < 32 && (axes_mask >> in->rank) != 0)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "reduce: axes mask 0x%x has bits past rank %d",
                          axes_mask, in->rank);
  return launchReduce("reduce", in, out, axes_mask, int(op));
}

zeroc_rt_status_t zeroc_rt_cuda_k_sum_to(zrt_ct in, zrt_ct out) {
  using namespace zeroc_rt::kernels;
  ZEROC_RT_RETURN_IF_ERROR(checkTensor("sum_to", "in", in));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor("sum_to", "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype("sum_to", "out", *out, "in", *in));
  if (out->rank > in->rank)
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH, "sum_to: out %s does not broadcast to in %s",
                          describe(*out).c_str(), describe(*in).c_str());
  // The dims broadcasting expanded: the leading ones, and those where out
  // has 1 and in more.
  uint32_t mask = 0;
  const int lead = in->rank - out->rank;
  for (int d = 0; d < in->rank; ++d) {
    if (d < lead) {
      mask |= 1u << d;
      continue;
    }
    const int64_t o = out->dims[d - lead];
    if (o == 1 && in->dims[d] != 1)
      mask |= 1u << d;
    else if (o != in->dims[d])
      return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH,
                            "sum_to: out %s does not broadcast to in %s",
                            describe(*out).c_str(), describe(*in).c_str());
  }
  return launchReduce("sum_to", in, out, mask, ZEROC_RT_REDUCE_OP_SUM);
}

} // extern "C"
