//===- kernels/elementwise.cu - Unary, binary, where, cast, copies --------===//
//
// One thread per output element (grid-stride), operands read through
// broadcast strides; float math in the compute type (float, double for
// F64) as the CPU kernels do. Also binary's comparisons and logic ops
// (BOOL out), the predicates (NOT, IS_NAN, IS_INF, ...), clip(_grad) and
// cast between any two dtypes.
// Integer division by zero and negative integer exponents are data the
// launch cannot see: the kernel flags them (kernelErrorWord).
//
//===----------------------------------------------------------------------===//

#include "kernels/common.h"
#include "zeroc_rt_cuda/scalar_ops.h"

#include <type_traits>

namespace zeroc_rt::cuda {
namespace {

bool readsX(int op) {
  switch (op) {
  case ZEROC_RT_UNARY_RELU: case ZEROC_RT_UNARY_ERF: case ZEROC_RT_UNARY_LOG:
  case ZEROC_RT_UNARY_COS: case ZEROC_RT_UNARY_SIN: case ZEROC_RT_UNARY_ABS:
  case ZEROC_RT_UNARY_GELU: case ZEROC_RT_UNARY_GELU_TANH:
    return true;
  default:
    return false;
  }
}
bool readsY(int op) {
  switch (op) {
  case ZEROC_RT_UNARY_SQRT: case ZEROC_RT_UNARY_RECIPROCAL: case ZEROC_RT_UNARY_TANH:
  case ZEROC_RT_UNARY_SIGMOID: case ZEROC_RT_UNARY_EXP:
    return true;
  default:
    return false;
  }
}

template <typename S>
ZRT_GLOBAL void unaryKernel(int op, const S *in, S *out, int64_t n) {
  for (int64_t i = gridFirst(); i < n; i += gridStride())
    out[i] = storeD<S>(unaryOf(op, load(in[i])));
}

template <typename S>
ZRT_GLOBAL void unaryGradKernel(int op, const S *x, const S *y, const S *g,
                                S *gi, int64_t n) {
  using C = typename Compute<S>::type;
  for (int64_t i = gridFirst(); i < n; i += gridStride()) {
    C xv = x ? load(x[i]) : C(0), yv = y ? load(y[i]) : C(0);
    gi[i] = storeD<S>(load(g[i]) * derivativeOf(op, xv, yv));
  }
}

/// `scalarB`: b has one element, and pow by 2 or 3 multiplies (x * x,
/// x * x * x) as the CPU kernel and PyTorch's pow_tensor_scalar do.
template <typename S>
ZRT_GLOBAL void binaryKernel(int op, const S *a, const S *b, S *out, Strides s,
                             int64_t n, int sameShape, int scalarB) {
  using C = typename Compute<S>::type;
  for (int64_t i = gridFirst(); i < n; i += gridStride()) {
    int64_t ia = i, ib = i, unused;
    if (!sameShape)
      offsetsOf(s, i, &ia, &ib, &unused);
    const C x = load(a[ia]), y = load(b[ib]);
    C r;
    if (op == ZEROC_RT_BINARY_POW && scalarB && y == C(2))
      r = x * x;
    else if (op == ZEROC_RT_BINARY_POW && scalarB && y == C(3))
      r = x * x * x;
    else
      r = binaryOf(op, x, y);
    out[i] = storeD<S>(r);
  }
}

/// Integer arithmetic (I64, I32, U8): add/sub/mul/pow wrap; div truncates
/// toward zero (MIN / -1 wraps); division by zero and negative exponents
/// are flagged (the element becomes 0).
template <typename I>
ZRT_GLOBAL void intBinaryKernel(int op, const I *a, const I *b, I *out,
                                Strides s, int64_t n, unsigned *error, int32_t opIndex) {
  constexpr bool kSigned = static_cast<I>(-1) < static_cast<I>(0);
  for (int64_t i = gridFirst(); i < n; i += gridStride()) {
    int64_t ia, ib, unused;
    offsetsOf(s, i, &ia, &ib, &unused);
    using U = unsigned long long;
    const I x = a[ia], y = b[ib];
    I r = x;
    switch (op) {
    case ZEROC_RT_BINARY_ADD: r = static_cast<I>(static_cast<U>(x) + static_cast<U>(y)); break;
    case ZEROC_RT_BINARY_SUB: r = static_cast<I>(static_cast<U>(x) - static_cast<U>(y)); break;
    case ZEROC_RT_BINARY_MUL: r = static_cast<I>(static_cast<U>(x) * static_cast<U>(y)); break;
    case ZEROC_RT_BINARY_DIV:
      if (y == I(0)) {
        flagError(error, kDivisionByZero, opIndex);
        r = I(0);
      } else if (kSigned && y == I(-1)) { // -x, wrapping
        r = static_cast<I>(U(0) - static_cast<U>(x));
      } else {
        r = static_cast<I>(x / y);
      }
      break;
    case ZEROC_RT_BINARY_POW:
      if (kSigned && static_cast<int64_t>(y) < 0) {
        flagError(error, kNegativeExponent, opIndex);
        r = I(0);
      } else { // by squaring; the product's low bits are the wrapped result
        U result = 1, base = static_cast<U>(x), e = static_cast<U>(y);
        while (e) {
          if (e & 1u)
            result *= base;
          base *= base;
          e >>= 1;
        }
        r = static_cast<I>(result);
      }
      break;
    case ZEROC_RT_BINARY_MAX: r = x > y ? x : y; break;
    case ZEROC_RT_BINARY_MIN: r = x < y ? x : y; break;
    }
    out[i] = r;
  }
}

/// A BOOL element (any non-zero byte is true).
struct Bool8 {
  uint8_t byte;
};

/// What comparisons compare, widened exactly: F16/BF16 by value, integers
/// as int64, BOOL as 0/1.
ZRT_HD float valueOf(float v) { return v; }
ZRT_HD double valueOf(double v) { return v; }
ZRT_HD float valueOf(F16 v) { return toFloat(v); }
ZRT_HD float valueOf(BF16 v) { return toFloat(v); }
ZRT_HD int64_t valueOf(int64_t v) { return v; }
ZRT_HD int64_t valueOf(int32_t v) { return v; }
ZRT_HD int64_t valueOf(uint8_t v) { return v; }
ZRT_HD int64_t valueOf(Bool8 v) { return v.byte != 0; }

/// Comparisons and logic ops (any comparison with NaN is false).
template <typename V> ZRT_HD bool predicateOf(int op, V x, V y) {
  switch (op) {
  case ZEROC_RT_BINARY_EQUAL: return x == y;
  case ZEROC_RT_BINARY_LESS: return x < y;
  case ZEROC_RT_BINARY_LESS_EQUAL: return x <= y;
  case ZEROC_RT_BINARY_GREATER: return x > y;
  case ZEROC_RT_BINARY_GREATER_EQUAL: return x >= y;
  case ZEROC_RT_BINARY_AND: return x != V(0) && y != V(0);
  case ZEROC_RT_BINARY_OR: return x != V(0) || y != V(0);
  case ZEROC_RT_BINARY_XOR: return (x != V(0)) != (y != V(0));
  }
  return false;
}

template <typename S>
ZRT_GLOBAL void compareKernel(int op, const S *a, const S *b, uint8_t *out, Strides s,
                              int64_t n, int sameShape) {
  for (int64_t i = gridFirst(); i < n; i += gridStride()) {
    int64_t ia = i, ib = i, unused;
    if (!sameShape)
      offsetsOf(s, i, &ia, &ib, &unused);
    out[i] = predicateOf(op, valueOf(a[ia]), valueOf(b[ib])) ? 1 : 0;
  }
}

/// fn(S{}) for the storage type S of any dtype (BOOL as Bool8).
template <typename Fn>
zeroc_rt_status_t dispatchAny(const char *kernel, zeroc_rt_dtype_t dtype, Fn &&fn) {
  switch (dtype) {
  case ZEROC_RT_DTYPE_I64: return fn(int64_t{});
  case ZEROC_RT_DTYPE_I32: return fn(int32_t{});
  case ZEROC_RT_DTYPE_U8: return fn(uint8_t{});
  case ZEROC_RT_DTYPE_BOOL: return fn(Bool8{});
  default: return dispatchFloat(kernel, dtype, fn);
  }
}

enum class BinaryKind { Arithmetic, Equal, Compare, Logic };

BinaryKind binaryKind(int op) {
  switch (op) {
  case ZEROC_RT_BINARY_EQUAL: return BinaryKind::Equal;
  case ZEROC_RT_BINARY_LESS: case ZEROC_RT_BINARY_LESS_EQUAL:
  case ZEROC_RT_BINARY_GREATER: case ZEROC_RT_BINARY_GREATER_EQUAL:
    return BinaryKind::Compare;
  case ZEROC_RT_BINARY_AND: case ZEROC_RT_BINARY_OR: case ZEROC_RT_BINARY_XOR:
    return BinaryKind::Logic;
  default: return BinaryKind::Arithmetic;
  }
}

/// The predicate kernels: out (BOOL) = op(in).
template <typename S>
ZRT_GLOBAL void predicateKernel(int op, const S *in, uint8_t *out, int64_t n) {
  for (int64_t i = gridFirst(); i < n; i += gridStride()) {
    const auto v = load(in[i]);
    bool r = false;
    switch (op) {
    case ZEROC_RT_PREDICATE_IS_NAN: r = v != v; break;
    case ZEROC_RT_PREDICATE_IS_INF: r = v == INFINITY || v == -INFINITY; break;
    case ZEROC_RT_PREDICATE_IS_POS_INF: r = v == INFINITY; break;
    case ZEROC_RT_PREDICATE_IS_NEG_INF: r = v == -INFINITY; break;
    }
    out[i] = r ? 1 : 0;
  }
}

ZRT_GLOBAL void notKernel(const uint8_t *in, uint8_t *out, int64_t n) {
  for (int64_t i = gridFirst(); i < n; i += gridStride())
    out[i] = in[i] == 0 ? 1 : 0;
}

/// clip: bounds converted to the compute type (absent ones +-inf); NaN
/// stays; max(x, lo) then min(., hi), so lo > hi gives hi.
template <typename S>
ZRT_GLOBAL void clipKernel(const S *in, S *out, int64_t n, int hasMin, double lo,
                           int hasMax, double hi) {
  using C = typename Compute<S>::type;
  const C l = hasMin ? static_cast<C>(lo) : C(-INFINITY);
  const C h = hasMax ? static_cast<C>(hi) : C(INFINITY);
  for (int64_t i = gridFirst(); i < n; i += gridStride()) {
    C v = load(in[i]);
    if (v == v) {
      v = v < l ? l : v;
      v = v > h ? h : v;
    }
    out[i] = storeD<S>(v);
  }
}

/// clip_grad: grad_out where lo < x < hi (present bounds only), else 0.
template <typename S>
ZRT_GLOBAL void clipGradKernel(const S *x, const S *g, S *gi, int64_t n, int hasMin,
                               double lo, int hasMax, double hi) {
  using C = typename Compute<S>::type;
  const C l = hasMin ? static_cast<C>(lo) : C(-INFINITY);
  const C h = hasMax ? static_cast<C>(hi) : C(INFINITY);
  for (int64_t i = gridFirst(); i < n; i += gridStride()) {
    const C v = load(x[i]);
    const bool inside = (!hasMin || v > l) && (!hasMax || v < h);
    gi[i] = inside ? g[i] : storeD<S>(0.0);
  }
}

template <typename S>
ZRT_GLOBAL void whereKernel(const unsigned char *cond, const S *a, const S *b,
                            S *out, Strides s, int64_t n) {
  for (int64_t i = gridFirst(); i < n; i += gridStride()) {
    int64_t ic, ia, ib;
    offsetsOf(s, i, &ic, &ia, &ib);
    out[i] = cond[ic] ? a[ia] : b[ib];
  }
}

/// Copies elements of `bytes` bytes through broadcast strides (slot 0).
template <typename U>
ZRT_GLOBAL void broadcastKernel(const U *in, U *out, Strides s, int64_t n) {
  for (int64_t i = gridFirst(); i < n; i += gridStride()) {
    int64_t ii, u1, u2;
    offsetsOf(s, i, &ii, &u1, &u2);
    out[i] = in[ii];
  }
}

template <typename S>
ZRT_GLOBAL void dropoutKernel(const S *in, S *out, int64_t n, double ratio,
                              double keepScale, uint64_t key) {
  for (int64_t i = gridFirst(); i < n; i += gridStride())
    out[i] = dropoutOf<S>(load(in[i]), i, ratio, keepScale, key);
}

template <typename S>
constexpr bool kIntLike = std::is_integral_v<S> || std::is_same_v<S, Bool8>;

/// An integer or BOOL element as int64 (BOOL: any non-zero byte is 1).
template <typename S> ZRT_HD int64_t intOf(S v) {
  if constexpr (std::is_same_v<S, Bool8>)
    return v.byte != 0;
  else
    return static_cast<int64_t>(v);
}

/// The CPU's narrow<D>(int64): integers wrap, BOOL is != 0, floats round
/// once (F16/BF16 through double, here through float: exact below 2^24).
template <typename D> ZRT_HD D fromInt(int64_t v) {
  if constexpr (std::is_same_v<D, Bool8>)
    return Bool8{static_cast<uint8_t>(v != 0)};
  else if constexpr (std::is_integral_v<D>)
    return static_cast<D>(static_cast<std::make_unsigned_t<D>>(static_cast<uint64_t>(v)));
  else if constexpr (std::is_same_v<D, float> || std::is_same_v<D, double>)
    return static_cast<D>(v);
  else
    return storeD<D>(static_cast<double>(v));
}

/// The CPU's narrow<D>(double): to integers truncation toward zero, NaN 0,
/// saturating at D's bounds; to BOOL != 0 (NaN is true); floats round once.
template <typename D> ZRT_HD D fromDouble(double v) {
  if constexpr (std::is_same_v<D, Bool8>) {
    return Bool8{static_cast<uint8_t>(v != 0.0)};
  } else if constexpr (std::is_integral_v<D>) {
    if (v != v)
      return D(0);
    const double t = trunc(v);
    // max + 1 and min, exact in double.
    double upper, lower;
    D hi, lo;
    if constexpr (sizeof(D) == 8) {
      upper = 9223372036854775808.0, lower = -9223372036854775808.0;
      hi = static_cast<D>(INT64_MAX), lo = static_cast<D>(INT64_MIN);
    } else if constexpr (sizeof(D) == 4) {
      upper = 2147483648.0, lower = -2147483648.0;
      hi = static_cast<D>(INT32_MAX), lo = static_cast<D>(INT32_MIN);
    } else {
      upper = 256.0, lower = 0.0;
      hi = static_cast<D>(255), lo = D(0);
    }
    if (t >= upper)
      return hi;
    if (t < lower)
      return lo;
    return static_cast<D>(t);
  } else {
    return storeD<D>(v);
  }
}

/// zeroc_rt_k_cast's conversions between any two dtypes (F64 to F16/BF16
/// rounds through float, as all of this runtime's F64 to 16-bit stores).
template <typename From, typename To>
ZRT_GLOBAL void castKernel(const From *in, To *out, int64_t n) {
  for (int64_t i = gridFirst(); i < n; i += gridStride()) {
    if constexpr (kIntLike<From>)
      out[i] = fromInt<To>(intOf(in[i]));
    else
      out[i] = fromDouble<To>(static_cast<double>(load(in[i])));
  }
}

zeroc_rt_status_t checkFloatSame(const char *k, const zeroc_rt_tensor_t *in,
                                 const zeroc_rt_tensor_t *out) {
  using namespace kernels;
  const unsigned floats = dtypeBit(ZEROC_RT_DTYPE_F32) | dtypeBit(ZEROC_RT_DTYPE_F64) |
                          dtypeBit(ZEROC_RT_DTYPE_F16) | dtypeBit(ZEROC_RT_DTYPE_BF16);
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "in", in, floats));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out, floats));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "out", *out, "in", *in));
  return checkSameShape(k, "out", *out, "in", *in);
}

/// Strides for `out` with up to three operands broadcast to it.
Strides broadcastTo(const zeroc_rt_tensor_t &out, const zeroc_rt_tensor_t *a,
                    const zeroc_rt_tensor_t *b = nullptr,
                    const zeroc_rt_tensor_t *c = nullptr) {
  Strides s;
  setBroadcast(s, 0, *a, out);
  if (b)
    setBroadcast(s, 1, *b, out);
  if (c)
    setBroadcast(s, 2, *c, out);
  return s;
}

bool sameDims(const zeroc_rt_tensor_t &a, const zeroc_rt_tensor_t &b) {
  if (a.rank != b.rank)
    return false;
  for (int d = 0; d < a.rank; ++d)
    if (a.dims[d] != b.dims[d])
      return false;
  return true;
}

} // namespace
} // namespace zeroc_rt::cuda

using namespace zeroc_rt::cuda;

extern "C" {

zeroc_rt_status_t zeroc_rt_cuda_k_unary(zeroc_rt_unary_op_t op, zrt_ct in, zrt_ct out) {
  ZEROC_RT_RETURN_IF_ERROR(checkFloatSame("unary", in, out));
  const int64_t n = numElements(*out);
  return dispatchFloat("unary", out->dtype, [&](auto s) {
    using S = decltype(s);
    return ZRT_LAUNCH("unary", unaryKernel<S>, blocksFor(n), kBlock, int(op),
                      static_cast<const S *>(in->data), static_cast<S *>(out->data), n);
  });
}

zeroc_rt_status_t zeroc_rt_cuda_k_unary_grad(zeroc_rt_unary_op_t op, zrt_ct x, zrt_ct y,
                                             zrt_ct grad_out, zrt_ct grad_in) {
  ZEROC_RT_RETURN_IF_ERROR(checkFloatSame("unary_grad", grad_out, grad_in));
  const zeroc_rt_tensor_t *xs = readsX(op) ? x : nullptr, *ys = readsY(op) ? y : nullptr;
  if ((readsX(op) && !x) || (readsY(op) && !y))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "unary_grad: op %d needs its forward %s", int(op),
                          readsX(op) ? "input x" : "output y");
  if (xs)
    ZEROC_RT_RETURN_IF_ERROR(checkFloatSame("unary_grad", xs, grad_in));
  if (ys)
    ZEROC_RT_RETURN_IF_ERROR(checkFloatSame("unary_grad", ys, grad_in));
  const int64_t n = numElements(*grad_in);
  return dispatchFloat("unary_grad", grad_in->dtype, [&](auto s) {
    using S = decltype(s);
    return ZRT_LAUNCH("unary_grad", unaryGradKernel<S>, blocksFor(n), kBlock, int(op),
                      xs ? static_cast<const S *>(xs->data) : nullptr,
                      ys ? static_cast<const S *>(ys->data) : nullptr,
                      static_cast<const S *>(grad_out->data),
                      static_cast<S *>(grad_in->data), n);
  });
}

zeroc_rt_status_t zeroc_rt_cuda_k_binary(zeroc_rt_binary_op_t op, zrt_ct a, zrt_ct b,
                                         zrt_ct out) {
  using namespace zeroc_rt::kernels;
  const char *k = "binary";
  if (op < ZEROC_RT_BINARY_ADD || op > ZEROC_RT_BINARY_MIN)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: invalid binary op %d", k, int(op));
  const BinaryKind kind = binaryKind(op);
  const unsigned arithmetic = kFloatDtypes | kIndexDtypes | dtypeBit(ZEROC_RT_DTYPE_U8);
  const unsigned inputs = kind == BinaryKind::Equal   ? kAnyDtype
                          : kind == BinaryKind::Logic ? dtypeBit(ZEROC_RT_DTYPE_BOOL)
                                                      : arithmetic;
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "a", a, inputs));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "b", b));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "b", *b, "a", *a));
  if (kind != BinaryKind::Arithmetic) {
    ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out, dtypeBit(ZEROC_RT_DTYPE_BOOL)));
  } else {
    ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
    ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "out", *out, "a", *a));
  }
  const zeroc_rt_tensor_t *operands[2] = {a, b};
  const char *names[2] = {"a", "b"};
  int rank = 0;
  int64_t dims[ZEROC_RT_MAX_RANK];
  ZEROC_RT_RETURN_IF_ERROR(broadcastShapes(k, 2, operands, names, &rank, dims));
  ZEROC_RT_RETURN_IF_ERROR(checkShape(k, "out", *out, rank, dims, "the broadcast of a and b"));
  const int64_t n = numElements(*out);
  if (!n)
    return nullptr;
  const Strides s = broadcastTo(*out, a, b);
  const int same = sameDims(*a, *out) && sameDims(*b, *out);
  if (kind != BinaryKind::Arithmetic)
    return dispatchAny(k, a->dtype, [&](auto v) {
      using S = decltype(v);
      return ZRT_LAUNCH(k, compareKernel<S>, blocksFor(n), kBlock, int(op),
                        static_cast<const S *>(a->data), static_cast<const S *>(b->data),
                        static_cast<uint8_t *>(out->data), s, n, same);
    });
  auto integer = [&](auto v) {
    using I = decltype(v);
    return ZRT_LAUNCH(k, intBinaryKernel<I>, blocksFor(n), kBlock, int(op),
                      static_cast<const I *>(a->data), static_cast<const I *>(b->data),
                      static_cast<I *>(out->data), s, n, kernelErrorWord(), currentOp());
  };
  switch (out->dtype) {
  case ZEROC_RT_DTYPE_I64: return integer(int64_t{});
  case ZEROC_RT_DTYPE_I32: return integer(int32_t{});
  case ZEROC_RT_DTYPE_U8: return integer(uint8_t{});
  default: break;
  }
  const int scalarB = numElements(*b) == 1;
  return dispatchFloat(k, out->dtype, [&](auto v) {
    using S = decltype(v);
    return ZRT_LAUNCH(k, binaryKernel<S>, blocksFor(n), kBlock, int(op),
                      static_cast<const S *>(a->data), static_cast<const S *>(b->data),
                      static_cast<S *>(out->data), s, n, same, scalarB);
  });
}

zeroc_rt_status_t zeroc_rt_cuda_k_predicate(zeroc_rt_predicate_op_t op, zrt_ct in, zrt_ct out) {
  using namespace zeroc_rt::kernels;
  const char *k = "predicate";
  if (op < ZEROC_RT_PREDICATE_NOT || op > ZEROC_RT_PREDICATE_IS_NEG_INF)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: invalid predicate op %d", k, int(op));
  const bool isNot = op == ZEROC_RT_PREDICATE_NOT;
  ZEROC_RT_RETURN_IF_ERROR(
      checkTensor(k, "in", in, isNot ? dtypeBit(ZEROC_RT_DTYPE_BOOL) : kFloatDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out, dtypeBit(ZEROC_RT_DTYPE_BOOL)));
  ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "out", *out, "in", *in));
  const int64_t n = numElements(*out);
  if (!n)
    return nullptr;
  if (isNot)
    return ZRT_LAUNCH(k, notKernel, blocksFor(n), kBlock, static_cast<const uint8_t *>(in->data),
                      static_cast<uint8_t *>(out->data), n);
  return dispatchFloat(k, in->dtype, [&](auto v) {
    using S = decltype(v);
    return ZRT_LAUNCH(k, predicateKernel<S>, blocksFor(n), kBlock, int(op),
                      static_cast<const S *>(in->data), static_cast<uint8_t *>(out->data), n);
  });
}

zeroc_rt_status_t zeroc_rt_cuda_k_clip(zrt_ct in, int has_min, double min_value, int has_max,
                                       double max_value, zrt_ct out) {
  const char *k = "clip";
  if ((has_min && std::isnan(min_value)) || (has_max && std::isnan(max_value)))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: a clip bound is NaN", k);
  ZEROC_RT_RETURN_IF_ERROR(checkFloatSame(k, in, out));
  const int64_t n = numElements(*out);
  if (!n)
    return nullptr;
  return dispatchFloat(k, out->dtype, [&](auto v) {
    using S = decltype(v);
    return ZRT_LAUNCH(k, clipKernel<S>, blocksFor(n), kBlock, static_cast<const S *>(in->data),
                      static_cast<S *>(out->data), n, has_min ? 1 : 0, min_value,
                      has_max ? 1 : 0, max_value);
  });
}

zeroc_rt_status_t zeroc_rt_cuda_k_clip_grad(zrt_ct x, int has_min, double min_value,
                                            int has_max, double max_value, zrt_ct grad_out,
                                            zrt_ct grad_in) {
  const char *k = "clip_grad";
  if ((has_min && std::isnan(min_value)) || (has_max && std::isnan(max_value)))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: a clip bound is NaN", k);
  ZEROC_RT_RETURN_IF_ERROR(checkFloatSame(k, x, grad_out));
  ZEROC_RT_RETURN_IF_ERROR(checkFloatSame(k, x, grad_in));
  const int64_t n = numElements(*grad_in);
  if (!n)
    return nullptr;
  return dispatchFloat(k, x->dtype, [&](auto v) {
    using S = decltype(v);
    return ZRT_LAUNCH(k, clipGradKernel<S>, blocksFor(n), kBlock,
                      static_cast<const S *>(x->data), static_cast<const S *>(grad_out->data),
                      static_cast<S *>(grad_in->data), n, has_min ? 1 : 0, min_value,
                      has_max ? 1 : 0, max_value);
  });
}

zeroc_rt_status_t zeroc_rt_cuda_k_where(zrt_ct cond, zrt_ct a, zrt_ct b, zrt_ct out) {
  using namespace zeroc_rt::kernels;
  const char *k = "where";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "cond", cond, dtypeBit(ZEROC_RT_DTYPE_BOOL)));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "a", a));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "b", b));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "a", *a, "out", *out));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "b", *b, "out", *out));
  const int64_t n = numElements(*out);
  const Strides s = broadcastTo(*out, cond, a, b);
  const unsigned char *c = static_cast<const unsigned char *>(cond->data);
  switch (zeroc_rt_dtype_size(out->dtype)) {
  case 8:
    return ZRT_LAUNCH(k, whereKernel<uint64_t>, blocksFor(n), kBlock, c,
                      static_cast<const uint64_t *>(a->data),
                      static_cast<const uint64_t *>(b->data),
                      static_cast<uint64_t *>(out->data), s, n);
  case 4:
    return ZRT_LAUNCH(k, whereKernel<uint32_t>, blocksFor(n), kBlock, c,
                      static_cast<const uint32_t *>(a->data),
                      static_cast<const uint32_t *>(b->data),
                      static_cast<uint32_t *>(out->data), s, n);
  case 2:
    return ZRT_LAUNCH(k, whereKernel<uint16_t>, blocksFor(n), kBlock, c,
                      static_cast<const uint16_t *>(a->data),
                      static_cast<const uint16_t *>(b->data),
                      static_cast<uint16_t *>(out->data), s, n);
  default:
    return ZRT_LAUNCH(k, whereKernel<uint8_t>, blocksFor(n), kBlock, c,
                      static_cast<const uint8_t *>(a->data),
                      static_cast<const uint8_t *>(b->data),
                      static_cast<uint8_t *>(out->data), s, n);
  }
}

zeroc_rt_status_t zeroc_rt_cuda_k_broadcast(zrt_ct in, zrt_ct out) {
  using namespace zeroc_rt::kernels;
  const char *k = "broadcast";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "in", in));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "out", *out, "in", *in));
  const int64_t n = numElements(*out);
  const Strides s = broadcastTo(*out, in);
  switch (zeroc_rt_dtype_size(out->dtype)) {
  case 8:
    return ZRT_LAUNCH(k, broadcastKernel<uint64_t>, blocksFor(n), kBlock,
                      static_cast<const uint64_t *>(in->data), static_cast<uint64_t *>(out->data), s, n);
  case 4:
    return ZRT_LAUNCH(k, broadcastKernel<uint32_t>, blocksFor(n), kBlock,
                      static_cast<const uint32_t *>(in->data), static_cast<uint32_t *>(out->data), s, n);
  case 2:
    return ZRT_LAUNCH(k, broadcastKernel<uint16_t>, blocksFor(n), kBlock,
                      static_cast<const uint16_t *>(in->data), static_cast<uint16_t *>(out->data), s, n);
  default:
    return ZRT_LAUNCH(k, broadcastKernel<uint8_t>, blocksFor(n), kBlock,
                      static_cast<const uint8_t *>(in->data), static_cast<uint8_t *>(out->data), s, n);
  }
}

zeroc_rt_status_t zeroc_rt_cuda_k_cast(zrt_ct in, zrt_ct out) {
  using namespace zeroc_rt::kernels;
  ZEROC_RT_RETURN_IF_ERROR(checkTensor("cast", "in", in));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor("cast", "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkSameShape("cast", "out", *out, "in", *in));
  const int64_t n = numElements(*out);
  if (!n)
    return nullptr;
  return dispatchAny("cast", in->dtype, [&](auto f) {
    return dispatchAny("cast", out->dtype, [&](auto t) {
      using From = decltype(f);
      using To = decltype(t);
      return ZRT_LAUNCH("cast", castKernel<From, To>, blocksFor(n), kBlock,
                        static_cast<const From *>(in->data), static_cast<To *>(out->data), n);
    });
  });
}

zeroc_rt_status_t zeroc_rt_cuda_k_dropout(zrt_ct in, double ratio, uint64_t seed,
                                          uint64_t counter, zrt_ct out) {
  ZEROC_RT_RETURN_IF_ERROR(checkFloatSame("dropout", in, out));
  if (!(ratio >= 0.0 && ratio <= 1.0))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "dropout: ratio %g is outside [0, 1]", ratio);
  const int64_t n = numElements(*out);
  const uint64_t key = dropoutKey(seed, counter);
  const double keepScale = dropoutKeepScale(ratio);
  return dispatchFloat("dropout", out->dtype, [&](auto v) {
    using S = decltype(v);
    return ZRT_LAUNCH("dropout", dropoutKernel<S>, blocksFor(n), kBlock,
                      static_cast<const S *>(in->data), static_cast<S *>(out->data), n,
                      ratio, keepScale, key);
  });
}

zeroc_rt_status_t zeroc_rt_cuda_k_copy(zrt_ct in, zrt_ct out) {
  using namespace zeroc_rt::kernels;
  ZEROC_RT_RETURN_IF_ERROR(checkTensor("copy", "in", in));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor("copy", "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype("copy", "out", *out, "in", *in));
  if (numElements(*in) != numElements(*out))
    return ZEROC_RT_ERROR(ZEROC_RT_SHAPE_MISMATCH, "copy: in %s and out %s differ in size",
                          describe(*in).c_str(), describe(*out).c_str());
  return gpuCopy(out->data, in->data, numBytes(*out));
}

zeroc_rt_status_t zeroc_rt_cuda_k_zero(zrt_ct out) {
  ZEROC_RT_RETURN_IF_ERROR(zeroc_rt::kernels::checkTensor("zero", "out", out));
  return gpuZero(out->data, zeroc_rt::kernels::numBytes(*out));
}

} // extern "C"
