//===- kernels/elementwise.cc - Unary, binary, where, cast ------*- C++ -*-===//

#include "kernels/scalar_types.h"
#include "kernels/tensor_check.h"
#include "kernels/vector_math.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

namespace zeroc_rt::kernels {
namespace {


const char *unaryName(zeroc_rt_unary_op_t op) {
  switch (op) {
  case ZEROC_RT_UNARY_NEG:
    return "neg";
  case ZEROC_RT_UNARY_SQRT:
    return "sqrt";
  case ZEROC_RT_UNARY_RECIPROCAL:
    return "reciprocal";
  case ZEROC_RT_UNARY_RELU:
    return "relu";
  case ZEROC_RT_UNARY_TANH:
    return "tanh";
  case ZEROC_RT_UNARY_SIGMOID:
    return "sigmoid";
  case ZEROC_RT_UNARY_ERF:
    return "erf";
  case ZEROC_RT_UNARY_EXP:
    return "exp";
  case ZEROC_RT_UNARY_LOG:
    return "log";
  case ZEROC_RT_UNARY_COS:
    return "cos";
  case ZEROC_RT_UNARY_SIN:
    return "sin";
  case ZEROC_RT_UNARY_ABS:
    return "abs";
  case ZEROC_RT_UNARY_SIGN:
    return "sign";
  case ZEROC_RT_UNARY_FLOOR:
    return "floor";
  case ZEROC_RT_UNARY_CEIL:
    return "ceil";
  case ZEROC_RT_UNARY_ROUND:
    return "round";
  case ZEROC_RT_UNARY_GELU:
    return "gelu";
  case ZEROC_RT_UNARY_GELU_TANH:
    return "gelu_tanh";
  }
  return nullptr;
}

/// GELU's constants: 1/sqrt(2), 1/sqrt(2 pi), sqrt(2/pi) and the cubic
/// coefficient of the tanh form (torch's kAlpha, kBeta, kKappa).
template <typename T> struct GeluConstants {
  static constexpr T kInvSqrt2 = static_cast<T>(0.70710678118654752440);
  static constexpr T kInvSqrt2Pi = static_cast<T>(0.39894228040143267794);
  static constexpr T kSqrt2OverPi = static_cast<T>(0.79788456080286535588);
  static constexpr T kKappa = static_cast<T>(0.044715);
};

template <typename T> T gelu(T x) {
  using K = GeluConstants<T>;
  return T(0.5) * x * (T(1) + std::erf(x * K::kInvSqrt2));
}
template <typename T> T geluTanh(T x) {
  using K = GeluConstants<T>;
  return T(0.5) * x *
         (T(1) + std::tanh(K::kSqrt2OverPi * (x + K::kKappa * x * x * x)));
}
template <typename T> T geluDerivative(T x) {
  using K = GeluConstants<T>;
  T cdf = T(0.5) * (T(1) + std::erf(x * K::kInvSqrt2));
  T pdf = K::kInvSqrt2Pi * std::exp(T(-0.5) * x * x);
  return cdf + x * pdf;
}
/// As torch's GeluBackward with approximate='tanh'.
template <typename T> T geluTanhDerivative(T x) {
  using K = GeluConstants<T>;
  T x2 = x * x;
  T t = std::tanh(K::kSqrt2OverPi * (x + K::kKappa * x2 * x));
  T left = T(0.5) * x, right = T(1) + t;
  return T(0.5) * right +
         left * (T(1) - t * t) * K::kSqrt2OverPi * (T(1) + T(3) * K::kKappa * x2);
}
/// (0 < x) - (x < 0): NaN gives 0, as torch.sign.
template <typename T> T signOf(T x) {
  return static_cast<T>(T(0) < x) - static_cast<T>(x < T(0));
}

/// y[i] = f(x[i]) with f on the compute type C of storage type S (float for
/// F16/BF16/F32, double for F64), rounded once into S.
template <typename S, typename F>
void map1(const void *in, void *out, int64_t n, F f) {
  const S *x = static_cast<const S *>(in);
  S *y = static_cast<S *>(out);
  if constexpr (kIsNarrowFloat<S>) {
    float buf[kChunk];
    forEachChunk(n, [&](int64_t i, int64_t m) {
      loadRow(x + i, buf, m);
      for (int64_t j = 0; j < m; ++j)
        buf[j] = f(buf[j]);
      storeRow(buf, y + i, m);
    });
  } else {
    for (int64_t i = 0; i < n; ++i)
      y[i] = storeValue<S>(f(loadValue(x[i])));
  }
}

template <typename S>
void unary(zeroc_rt_unary_op_t op, const void *in, void *out, int64_t n) {
  using T = ComputeOf<S>;
  switch (op) {
  case ZEROC_RT_UNARY_NEG:
    return map1<S>(in, out, n, [](T x) { return -x; });
  case ZEROC_RT_UNARY_SQRT:
    return map1<S>(in, out, n, [](T x) { return std::sqrt(x); });
  case ZEROC_RT_UNARY_RECIPROCAL:
    return map1<S>(in, out, n, [](T x) { return T(1) / x; });
  case ZEROC_RT_UNARY_RELU: // NaN propagates, as in torch.relu
    return map1<S>(in, out, n,
                   [](T x) { return x > T(0) || std::isnan(x) ? x : T(0); });
  case ZEROC_RT_UNARY_TANH:
    if constexpr (std::is_same_v<S, float>)
      return tanhRow(static_cast<const float *>(in), static_cast<float *>(out), n);
    else
      return map1<S>(in, out, n, [](T x) { return std::tanh(x); });
  case ZEROC_RT_UNARY_SIGMOID:
    return map1<S>(in, out, n,
                   [](T x) { return T(1) / (T(1) + std::exp(-x)); });
  case ZEROC_RT_UNARY_ERF:
    return map1<S>(in, out, n, [](T x) { return std::erf(x); });
  case ZEROC_RT_UNARY_EXP:
    return map1<S>(in, out, n, [](T x) { return std::exp(x); });
  case ZEROC_RT_UNARY_LOG:
    return map1<S>(in, out, n, [](T x) { return std::log(x); });
  case ZEROC_RT_UNARY_COS:
    return map1<S>(in, out, n, [](T x) { return std::cos(x); });
  case ZEROC_RT_UNARY_SIN:
    return map1<S>(in, out, n, [](T x) { return std::sin(x); });
  case ZEROC_RT_UNARY_ABS:
    return map1<S>(in, out, n, [](T x) { return std::fabs(x); });
  case ZEROC_RT_UNARY_SIGN:
    return map1<S>(in, out, n, [](T x) { return signOf(x); });
  case ZEROC_RT_UNARY_FLOOR:
    return map1<S>(in, out, n, [](T x) { return std::floor(x); });
  case ZEROC_RT_UNARY_CEIL:
    return map1<S>(in, out, n, [](T x) { return std::ceil(x); });
  case ZEROC_RT_UNARY_ROUND: // default rounding mode: ties to even
    return map1<S>(in, out, n, [](T x) { return std::nearbyint(x); });
  case ZEROC_RT_UNARY_GELU:
    return map1<S>(in, out, n, [](T x) { return gelu(x); });
  case ZEROC_RT_UNARY_GELU_TANH:
    return map1<S>(in, out, n, [](T x) { return geluTanh(x); });
  }
}

/// grad_in[i] = f(grad_out[i], v[i]) where v is x or y (or unused), on the
/// compute type, rounded once into S.
template <typename S, typename F>
void map2(const void *g, const void *v, void *out, int64_t n, F f) {
  using T = ComputeOf<S>;
  const S *gy = static_cast<const S *>(g);
  const S *a = static_cast<const S *>(v);
  S *gx = static_cast<S *>(out);
  if constexpr (kIsNarrowFloat<S>) {
    float bg[kChunk], bv[kChunk];
    forEachChunk(n, [&](int64_t i, int64_t m) {
      loadRow(gy + i, bg, m);
      if (a)
        loadRow(a + i, bv, m);
      else
        std::fill_n(bv, m, 0.0f);
      for (int64_t j = 0; j < m; ++j)
        bg[j] = f(bg[j], bv[j]);
      storeRow(bg, gx + i, m);
    });
  } else {
    for (int64_t i = 0; i < n; ++i)
      gx[i] = storeValue<S>(f(loadValue(gy[i]), a ? loadValue(a[i]) : T(0)));
  }
}

template <typename S>
void unaryGrad(zeroc_rt_unary_op_t op, const void *x, const void *y,
               const void *gy, void *gx, int64_t n) {
  using T = ComputeOf<S>;
  switch (op) {
  case ZEROC_RT_UNARY_NEG:
    return map2<S>(gy, nullptr, gx, n, [](T g, T) { return -g; });
  case ZEROC_RT_UNARY_SQRT:
    return map2<S>(gy, y, gx, n, [](T g, T v) { return g / (T(2) * v); });
  case ZEROC_RT_UNARY_RECIPROCAL:
    return map2<S>(gy, y, gx, n, [](T g, T v) { return -g * (v * v); });
  case ZEROC_RT_UNARY_RELU:
    return map2<S>(gy, x, gx, n, [](T g, T v) { return v > T(0) ? g : T(0); });
  case ZEROC_RT_UNARY_TANH:
    return map2<S>(gy, y, gx, n, [](T g, T v) { return g * (T(1) - v * v); });
  case ZEROC_RT_UNARY_SIGMOID:
    return map2<S>(gy, y, gx, n, [](T g, T v) { return g * (T(1) - v) * v; });
  case ZEROC_RT_UNARY_ERF: {
    const T twoOverSqrtPi = static_cast<T>(1.12837916709551257389615890312);
    return map2<S>(gy, x, gx, n, [twoOverSqrtPi](T g, T v) {
      return g * twoOverSqrtPi * std::exp(-v * v);
    });
  }
  case ZEROC_RT_UNARY_EXP:
    return map2<S>(gy, y, gx, n, [](T g, T v) { return g * v; });
  case ZEROC_RT_UNARY_LOG:
    return map2<S>(gy, x, gx, n, [](T g, T v) { return g / v; });
  case ZEROC_RT_UNARY_COS:
    return map2<S>(gy, x, gx, n, [](T g, T v) { return -g * std::sin(v); });
  case ZEROC_RT_UNARY_SIN:
    return map2<S>(gy, x, gx, n, [](T g, T v) { return g * std::cos(v); });
  case ZEROC_RT_UNARY_ABS:
    return map2<S>(gy, x, gx, n, [](T g, T v) { return g * signOf(v); });
  case ZEROC_RT_UNARY_SIGN:
  case ZEROC_RT_UNARY_FLOOR:
  case ZEROC_RT_UNARY_CEIL:
  case ZEROC_RT_UNARY_ROUND:
    return map2<S>(gy, nullptr, gx, n, [](T, T) { return T(0); });
  case ZEROC_RT_UNARY_GELU:
    return map2<S>(gy, x, gx, n,
                   [](T g, T v) { return g * geluDerivative(v); });
  case ZEROC_RT_UNARY_GELU_TANH:
    return map2<S>(gy, x, gx, n,
                   [](T g, T v) { return g * geluTanhDerivative(v); });
  }
}

/// Which forward value the gradient of `op` reads: 'x', 'y' or 0 (none).
char gradOperand(zeroc_rt_unary_op_t op) {
  switch (op) {
  case ZEROC_RT_UNARY_RELU:
  case ZEROC_RT_UNARY_ERF:
  case ZEROC_RT_UNARY_LOG:
  case ZEROC_RT_UNARY_COS:
  case ZEROC_RT_UNARY_SIN:
  case ZEROC_RT_UNARY_ABS:
  case ZEROC_RT_UNARY_GELU:
  case ZEROC_RT_UNARY_GELU_TANH:
    return 'x';
  case ZEROC_RT_UNARY_NEG:
  case ZEROC_RT_UNARY_SIGN:
  case ZEROC_RT_UNARY_FLOOR:
  case ZEROC_RT_UNARY_CEIL:
  case ZEROC_RT_UNARY_ROUND:
    return 0;
  default:
    return 'y';
  }
}

zeroc_rt_status_t kUnary(zeroc_rt_unary_op_t op, const zeroc_rt_tensor_t *in,
                         const zeroc_rt_tensor_t *out) {
  const char *k = "zeroc_rt_k_unary";
  if (!unaryName(op))
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: invalid unary op %d",
                          k, static_cast<int>(op));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "in", in, kFloatDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "out", *out, "in", *in));
  ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "out", *out, "in", *in));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "in", *in));
  int64_t n = numElements(*in);
  dispatchFloat(in->dtype, [&](auto tag) {
    unary<decltype(tag)>(op, in->data, out->data, n);
  });
  return nullptr;
}

zeroc_rt_status_t kUnaryGrad(zeroc_rt_unary_op_t op,
                             const zeroc_rt_tensor_t *x,
                             const zeroc_rt_tensor_t *y,
                             const zeroc_rt_tensor_t *gradOut,
                             const zeroc_rt_tensor_t *gradIn) {
  const char *k = "zeroc_rt_k_unary_grad";
  const char *name = unaryName(op);
  if (!name)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT, "%s: invalid unary op %d",
                          k, static_cast<int>(op));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_out", gradOut, kFloatDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "grad_in", gradIn));
  ZEROC_RT_RETURN_IF_ERROR(
      checkSameDtype(k, "grad_in", *gradIn, "grad_out", *gradOut));
  ZEROC_RT_RETURN_IF_ERROR(
      checkSameShape(k, "grad_in", *gradIn, "grad_out", *gradOut));
  ZEROC_RT_RETURN_IF_ERROR(
      checkNoOverlap(k, "grad_in", *gradIn, "grad_out", *gradOut));
  char needed = gradOperand(op);
  const zeroc_rt_tensor_t *forward[2] = {x, y};
  const char *forwardNames[2] = {"x", "y"};
  for (int i = 0; i < 2; ++i) {
    const zeroc_rt_tensor_t *t = forward[i];
    bool isNeeded = needed == forwardNames[i][0];
    if (!t && !isNeeded)
      continue; // the operand this op does not read may be NULL
    if (!t)
      return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                            "%s: %s is NULL but the gradient of %s reads it",
                            k, forwardNames[i], name);
    ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, forwardNames[i], t));
    ZEROC_RT_RETURN_IF_ERROR(
        checkSameDtype(k, forwardNames[i], *t, "grad_out", *gradOut));
    ZEROC_RT_RETURN_IF_ERROR(
        checkSameShape(k, forwardNames[i], *t, "grad_out", *gradOut));
    ZEROC_RT_RETURN_IF_ERROR(
        checkNoOverlap(k, "grad_in", *gradIn, forwardNames[i], *t));
  }
  int64_t n = numElements(*gradOut);
  dispatchFloat(gradOut->dtype, [&](auto tag) {
    unaryGrad<decltype(tag)>(op, x ? x->data : nullptr,
                             y ? y->data : nullptr, gradOut->data,
                             gradIn->data, n);
  });
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

const char *binaryName(zeroc_rt_binary_op_t op) {
  switch (op) {
  case ZEROC_RT_BINARY_ADD:
    return "add";
  case ZEROC_RT_BINARY_SUB:
    return "sub";
  case ZEROC_RT_BINARY_MUL:
    return "mul";
  case ZEROC_RT_BINARY_DIV:
    return "div";
  case ZEROC_RT_BINARY_POW:
    return "pow";
  case ZEROC_RT_BINARY_EQUAL:
    return "equal";
  case ZEROC_RT_BINARY_LESS:
    return "less";
  case ZEROC_RT_BINARY_LESS_EQUAL:
    return "less_equal";
  case ZEROC_RT_BINARY_GREATER:
    return "greater";
  case ZEROC_RT_BINARY_GREATER_EQUAL:
    return "greater_equal";
  case ZEROC_RT_BINARY_AND:
    return "and";
  case ZEROC_RT_BINARY_OR:
    return "or";
  case ZEROC_RT_BINARY_XOR:
    return "xor";
  case ZEROC_RT_BINARY_MAX:
    return "max";
  case ZEROC_RT_BINARY_MIN:
    return "min";
  }
  return nullptr;
}

enum class BinaryKind { Arithmetic, Equal, Compare, Logic };

BinaryKind binaryKind(zeroc_rt_binary_op_t op) {
  switch (op) {
  case ZEROC_RT_BINARY_EQUAL:
    return BinaryKind::Equal;
  case ZEROC_RT_BINARY_LESS:
  case ZEROC_RT_BINARY_LESS_EQUAL:
  case ZEROC_RT_BINARY_GREATER:
  case ZEROC_RT_BINARY_GREATER_EQUAL:
    return BinaryKind::Compare;
  case ZEROC_RT_BINARY_AND:
  case ZEROC_RT_BINARY_OR:
  case ZEROC_RT_BINARY_XOR:
    return BinaryKind::Logic;
  default:
    return BinaryKind::Arithmetic;
  }
}

/// max/min on the compute type; NaN in either operand gives NaN.
template <typename C> C maxValue(C x, C y) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(x) || std::isnan(y))
      return std::isnan(x) ? x : y;
  }
  return x < y ? y : x;
}
template <typename C> C minValue(C x, C y) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(x) || std::isnan(y))
      return std::isnan(x) ? x : y;
  }
  return y < x ? y : x;
}

template <typename T> constexpr bool kIsFloat = kIsFloatStorage<T>;

/// Lifts f on the compute type to a function on storage values (F16/BF16
/// load into float and round the result once; F32/F64 unchanged).
template <typename S, typename F> auto lifted(F f) {
  return [f](S x, S y) { return storeValue<S>(f(loadValue(x), loadValue(y))); };
}

/// Integer arithmetic wraps modulo 2^bits (no signed-overflow UB).
template <typename T> T wrapAdd(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}
template <typename T> T wrapSub(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
}
template <typename T> T wrapMul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  // uint8/16 promote to int: multiply as uint64 to stay unsigned.
  return static_cast<T>(static_cast<U>(static_cast<uint64_t>(static_cast<U>(a)) *
                                       static_cast<uint64_t>(static_cast<U>(b))));
}
/// Truncating division; b != 0 was checked. MIN / -1 wraps to MIN.
template <typename T> T intDiv(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == -1)
      return wrapSub(T(0), a);
  }
  return static_cast<T>(a / b);
}
/// a^b by squaring for b >= 0 (checked), wrapping.
template <typename T> T intPow(T a, T b) {
  T result = 1;
  uint64_t e = static_cast<uint64_t>(b);
  while (e) {
    if (e & 1u)
      result = wrapMul(result, a);
    a = wrapMul(a, a);
    e >>= 1;
  }
  return result;
}

template <typename T> bool equalValues(T a, T b) { return a == b; }
inline bool equalValues(F16 a, F16 b) {
  return decodeF16(a.bits) == decodeF16(b.bits);
}
inline bool equalValues(BF16 a, BF16 b) {
  return decodeBF16(a.bits) == decodeBF16(b.bits);
}
inline bool equalValues(Bool8 a, Bool8 b) {
  return (a.byte != 0) == (b.byte != 0);
}

/// o[i] = f(x[i * SX], y[i * SY]) for i < n, with the strides known at
/// compile time: 1 (contiguous) or 0 (broadcast) operands make loops the
/// compiler vectorizes.
template <int SX, int SY, typename Out, typename In, typename F>
void mapRow(Out *o, const In *x, const In *y, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i)
    o[i] = f(x[i * SX], y[i * SY]);
}

template <typename Out, typename In, typename F>
void broadcastMap(const Loop<3> &loop, void *out, const void *a, const void *b,
                  F f) {
  Out *o = static_cast<Out *>(out);
  const In *x = static_cast<const In *>(a);
  const In *y = static_cast<const In *>(b);
  // out is contiguous, so its innermost stride is 1 (rank > 0).
  const int64_t so = loop.innerStride(0);
  const int64_t sx = loop.innerStride(1), sy = loop.innerStride(2);
  auto row = [&](const std::array<int64_t, 3> &off, int64_t n) {
    Out *po = o + off[0];
    const In *px = x + off[1], *py = y + off[2];
    if (so == 1 && sx == 1 && sy == 1)
      return mapRow<1, 1>(po, px, py, n, f);
    if (so == 1 && sx == 0 && sy == 1)
      return mapRow<0, 1>(po, px, py, n, f);
    if (so == 1 && sx == 1 && sy == 0)
      return mapRow<1, 0>(po, px, py, n, f);
    for (int64_t i = 0; i < n; ++i)
      po[i * so] = f(px[i * sx], py[i * sy]);
  };
  forEachRow(loop, {0, 0, 0}, row);
}

/// Loads `count` operand elements at `stride` 1 (contiguous) or 0
/// (broadcast) into a float buffer.
template <typename S>
void loadOperand(const S *p, int64_t stride, float *buf, int64_t count) {
  if (stride)
    loadRow(p, buf, count);
  else
    std::fill_n(buf, count, loadValue(*p));
}

/// broadcastMap for F16/BF16 with f on float: rows whose operands are
/// contiguous or broadcast run in chunks through float buffers.
template <typename S, typename F>
void broadcastMapNarrow(const Loop<3> &loop, void *out, const void *a,
                        const void *b, F f) {
  S *o = static_cast<S *>(out);
  const S *x = static_cast<const S *>(a);
  const S *y = static_cast<const S *>(b);
  const int64_t so = loop.innerStride(0);
  const int64_t sx = loop.innerStride(1), sy = loop.innerStride(2);
  const bool chunked = so == 1 && (sx == 0 || sx == 1) && (sy == 0 || sy == 1);
  auto row = [&](const std::array<int64_t, 3> &off, int64_t n) {
    S *po = o + off[0];
    const S *px = x + off[1], *py = y + off[2];
    if (!chunked) {
      for (int64_t i = 0; i < n; ++i)
        po[i * so] =
            storeValue<S>(f(loadValue(px[i * sx]), loadValue(py[i * sy])));
      return;
    }
    float bx[kChunk], by[kChunk];
    forEachChunk(n, [&](int64_t i, int64_t m) {
      loadOperand(px + i * sx, sx, bx, m);
      loadOperand(py + i * sy, sy, by, m);
      for (int64_t j = 0; j < m; ++j)
        bx[j] = f(bx[j], by[j]);
      storeRow(bx, po + i, m);
    });
  };
  forEachRow(loop, {0, 0, 0}, row);
}

/// out = f(a, b) elementwise with f on the compute type of float storage T.
template <typename T, typename F>
void floatMap(const Loop<3> &loop, void *out, const void *a, const void *b,
              F f) {
  if constexpr (kIsNarrowFloat<T>)
    broadcastMapNarrow<T>(loop, out, a, b, f);
  else
    broadcastMap<T, T>(loop, out, a, b, lifted<T>(f));
}

template <typename T>
void arithmetic(zeroc_rt_binary_op_t op, const Loop<3> &loop, void *out,
                const void *a, const void *b) {
  if constexpr (kIsFloat<T>) {
    using C = ComputeOf<T>;
    switch (op) {
    case ZEROC_RT_BINARY_ADD:
      return floatMap<T>(loop, out, a, b, [](C x, C y) { return x + y; });
    case ZEROC_RT_BINARY_SUB:
      return floatMap<T>(loop, out, a, b, [](C x, C y) { return x - y; });
    case ZEROC_RT_BINARY_MUL:
      return floatMap<T>(loop, out, a, b, [](C x, C y) { return x * y; });
    case ZEROC_RT_BINARY_DIV:
      return floatMap<T>(loop, out, a, b, [](C x, C y) { return x / y; });
    case ZEROC_RT_BINARY_POW:
      return floatMap<T>(loop, out, a, b,
                         [](C x, C y) { return std::pow(x, y); });
    case ZEROC_RT_BINARY_MAX:
      return floatMap<T>(loop, out, a, b, maxValue<C>);
    case ZEROC_RT_BINARY_MIN:
      return floatMap<T>(loop, out, a, b, minValue<C>);
    default:
      break;
    }
  } else {
    switch (op) {
    case ZEROC_RT_BINARY_ADD:
      return broadcastMap<T, T>(loop, out, a, b, wrapAdd<T>);
    case ZEROC_RT_BINARY_SUB:
      return broadcastMap<T, T>(loop, out, a, b, wrapSub<T>);
    case ZEROC_RT_BINARY_MUL:
      return broadcastMap<T, T>(loop, out, a, b, wrapMul<T>);
    case ZEROC_RT_BINARY_DIV:
      return broadcastMap<T, T>(loop, out, a, b, intDiv<T>);
    case ZEROC_RT_BINARY_POW:
      return broadcastMap<T, T>(loop, out, a, b, intPow<T>);
    case ZEROC_RT_BINARY_MAX:
      return broadcastMap<T, T>(loop, out, a, b, maxValue<T>);
    case ZEROC_RT_BINARY_MIN:
      return broadcastMap<T, T>(loop, out, a, b, minValue<T>);
    default:
      break;
    }
  }
}

/// Float pow by a one-element exponent of 2 or 3 as products, as PyTorch's
/// pow_tensor_scalar does (x * x, x * x * x): GELU's tanh form cubes every
/// activation, and std::pow costs ten times a multiply. Returns false for
/// other exponents.
template <typename T>
bool powBySquaring(const Loop<3> &loop, void *out, const void *a,
                   const zeroc_rt_tensor_t &b) {
  using C = ComputeOf<T>;
  const C e = static_cast<C>(loadValue(*static_cast<const T *>(b.data)));
  if (e == C(2))
    floatMap<T>(loop, out, a, b.data, [](C x, C) { return x * x; });
  else if (e == C(3))
    floatMap<T>(loop, out, a, b.data, [](C x, C) { return x * x * x; });
  else
    return false;
  return true;
}

constexpr unsigned kArithmeticDtypes =
    kFloatDtypes | kIndexDtypes | dtypeBit(ZEROC_RT_DTYPE_U8);

/// Integer DIV and POW need every element of b checked first (b's elements
/// are all read when out is non-empty).
zeroc_rt_status_t checkIntegerDivisor(const char *k, zeroc_rt_binary_op_t op,
                                      const zeroc_rt_tensor_t &b) {
  int64_t n = numElements(b);
  return dispatchAny(b.dtype, [&](auto tag) -> zeroc_rt_status_t {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      const T *v = static_cast<const T *>(b.data);
      for (int64_t i = 0; i < n; ++i) {
        if (op == ZEROC_RT_BINARY_DIV && v[i] == 0)
          return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                                "%s: integer division by zero (b element "
                                "%lld of %s)",
                                k, static_cast<long long>(i),
                                describe(b).c_str());
        if (op == ZEROC_RT_BINARY_POW && v[i] < 0)
          return ZEROC_RT_ERROR(
              ZEROC_RT_INVALID_ARGUMENT,
              "%s: integer pow with negative exponent %lld (b element %lld "
              "of %s)",
              k, static_cast<long long>(v[i]), static_cast<long long>(i),
              describe(b).c_str());
      }
    }
    return nullptr;
  });
}

zeroc_rt_status_t kBinary(zeroc_rt_binary_op_t op, const zeroc_rt_tensor_t *a,
                          const zeroc_rt_tensor_t *b,
                          const zeroc_rt_tensor_t *out) {
  const char *k = "zeroc_rt_k_binary";
  const char *name = binaryName(op);
  if (!name)
    return ZEROC_RT_ERROR(ZEROC_RT_INVALID_ARGUMENT,
                          "%s: invalid binary op %d", k, static_cast<int>(op));
  const BinaryKind kind = binaryKind(op);
  const bool boolOut = kind != BinaryKind::Arithmetic;
  unsigned inputDtypes = kind == BinaryKind::Equal  ? kAnyDtype
                         : kind == BinaryKind::Logic ? dtypeBit(ZEROC_RT_DTYPE_BOOL)
                                                     : kArithmeticDtypes;
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "a", a, inputDtypes));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "b", b));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "b", *b, "a", *a));
  if (boolOut) {
    ZEROC_RT_RETURN_IF_ERROR(
        checkTensor(k, "out", out, dtypeBit(ZEROC_RT_DTYPE_BOOL)));
  } else {
    ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
    ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "out", *out, "a", *a));
  }
  const zeroc_rt_tensor_t *operands[2] = {a, b};
  const char *names[2] = {"a", "b"};
  int rank = 0;
  int64_t dims[kMaxRank];
  ZEROC_RT_RETURN_IF_ERROR(broadcastShapes(k, 2, operands, names, &rank, dims));
  ZEROC_RT_RETURN_IF_ERROR(
      checkShape(k, "out", *out, rank, dims, "the broadcast of a and b"));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "a", *a));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "b", *b));
  if (numElements(*out) == 0)
    return nullptr;
  if (op == ZEROC_RT_BINARY_DIV || op == ZEROC_RT_BINARY_POW)
    ZEROC_RT_RETURN_IF_ERROR(checkIntegerDivisor(k, op, *b));

  Loop<3> loop;
  loop.rank = rank;
  for (int d = 0; d < rank; ++d)
    loop.dims[d] = dims[d];
  contiguousStrides(dims, rank, loop.strides[0]);
  broadcastStrides(*a, rank, dims, loop.strides[1]);
  broadcastStrides(*b, rank, dims, loop.strides[2]);
  loop.coalesce();

  if (kind == BinaryKind::Equal) {
    dispatchAny(a->dtype, [&](auto tag) {
      using T = decltype(tag);
      broadcastMap<Bool8, T>(loop, out->data, a->data, b->data, [](T x, T y) {
        return Bool8{static_cast<uint8_t>(equalValues(x, y))};
      });
    });
    return nullptr;
  }
  if (kind == BinaryKind::Compare || kind == BinaryKind::Logic) {
    dispatchAny(a->dtype, [&](auto tag) {
      using T = decltype(tag);
      // widen() is exact for every dtype (F16/BF16 by value, BOOL as 0/1).
      auto run = [&](auto pred) {
        broadcastMap<Bool8, T>(loop, out->data, a->data, b->data,
                               [pred](T x, T y) {
                                 return Bool8{static_cast<uint8_t>(
                                     pred(widen(x), widen(y)))};
                               });
      };
      switch (op) {
      case ZEROC_RT_BINARY_LESS:
        return run([](auto x, auto y) { return x < y; });
      case ZEROC_RT_BINARY_LESS_EQUAL:
        return run([](auto x, auto y) { return x <= y; });
      case ZEROC_RT_BINARY_GREATER:
        return run([](auto x, auto y) { return x > y; });
      case ZEROC_RT_BINARY_GREATER_EQUAL:
        return run([](auto x, auto y) { return x >= y; });
      case ZEROC_RT_BINARY_AND:
        return run([](auto x, auto y) { return x != 0 && y != 0; });
      case ZEROC_RT_BINARY_OR:
        return run([](auto x, auto y) { return x != 0 || y != 0; });
      case ZEROC_RT_BINARY_XOR:
        return run([](auto x, auto y) { return (x != 0) != (y != 0); });
      default:
        return;
      }
    });
    return nullptr;
  }
  dispatchAny(a->dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kIsFloat<T>)
      if (op == ZEROC_RT_BINARY_POW && numElements(*b) == 1 &&
          powBySquaring<T>(loop, out->data, a->data, *b))
        return;
    if constexpr (std::is_arithmetic_v<T> || kIsFloat<T>)
      arithmetic<T>(op, loop, out->data, a->data, b->data);
  });
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Where, cast
//===----------------------------------------------------------------------===//

/// o[i] = c[i * SC] ? x[i * SX] : y[i * SY] for i < n (strides 0 or 1).
template <int SC, int SX, int SY, typename U>
void selectRow(U *o, const uint8_t *c, const U *x, const U *y, int64_t n) {
  // Both operands are loaded (they are valid at every index) so that the
  // select has no control flow.
  for (int64_t i = 0; i < n; ++i) {
    const U a = x[i * SX], b = y[i * SY];
    o[i] = c[i * SC] ? a : b;
  }
}

/// The rows of where's loop (0: out, 1: cond, 2: a, 3: b), with the common
/// cases of a contiguous out and contiguous or broadcast operands spelled
/// out for the vectorizer.
template <typename U>
void selectRows(const Loop<4> &loop, U *o, const uint8_t *c, const U *x,
                const U *y) {
  int64_t s[4];
  bool unit = true;
  for (size_t k = 0; k < 4; ++k) {
    s[k] = loop.innerStride(k);
    unit = unit && (s[k] == 0 || s[k] == 1);
  }
  unit = unit && s[0] == 1;
  // One instantiation per (cond, a, b) pattern of unit strides.
  using RowFn = void (*)(U *, const uint8_t *, const U *, const U *, int64_t);
  static constexpr RowFn rows[8] = {
      selectRow<0, 0, 0, U>, selectRow<0, 0, 1, U>, selectRow<0, 1, 0, U>,
      selectRow<0, 1, 1, U>, selectRow<1, 0, 0, U>, selectRow<1, 0, 1, U>,
      selectRow<1, 1, 0, U>, selectRow<1, 1, 1, U>};
  const RowFn unitRow = unit ? rows[s[1] * 4 + s[2] * 2 + s[3]] : nullptr;
  auto row = [&](const std::array<int64_t, 4> &off, int64_t n) {
    if (unitRow)
      return unitRow(o + off[0], c + off[1], x + off[2], y + off[3], n);
    for (int64_t i = 0; i < n; ++i)
      o[off[0] + i * s[0]] =
          c[off[1] + i * s[1]] ? x[off[2] + i * s[2]] : y[off[3] + i * s[3]];
  };
  forEachRow(loop, {0, 0, 0, 0}, row);
}

zeroc_rt_status_t kWhere(const zeroc_rt_tensor_t *cond,
                         const zeroc_rt_tensor_t *a,
                         const zeroc_rt_tensor_t *b,
                         const zeroc_rt_tensor_t *out) {
  const char *k = "zeroc_rt_k_where";
  ZEROC_RT_RETURN_IF_ERROR(
      checkTensor(k, "cond", cond, dtypeBit(ZEROC_RT_DTYPE_BOOL)));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "a", a));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "b", b));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "b", *b, "a", *a));
  ZEROC_RT_RETURN_IF_ERROR(checkSameDtype(k, "out", *out, "a", *a));
  const zeroc_rt_tensor_t *operands[3] = {cond, a, b};
  const char *names[3] = {"cond", "a", "b"};
  int rank = 0;
  int64_t dims[kMaxRank];
  ZEROC_RT_RETURN_IF_ERROR(broadcastShapes(k, 3, operands, names, &rank, dims));
  ZEROC_RT_RETURN_IF_ERROR(checkShape(k, "out", *out, rank, dims,
                                      "the broadcast of cond, a and b"));
  for (int i = 0; i < 3; ++i)
    ZEROC_RT_RETURN_IF_ERROR(
        checkNoOverlap(k, "out", *out, names[i], *operands[i]));

  Loop<4> loop;
  loop.rank = rank;
  for (int d = 0; d < rank; ++d)
    loop.dims[d] = dims[d];
  contiguousStrides(dims, rank, loop.strides[0]);
  for (int i = 0; i < 3; ++i)
    broadcastStrides(*operands[i], rank, dims, loop.strides[i + 1]);
  loop.coalesce();
  const uint8_t *c = static_cast<const uint8_t *>(cond->data);
  dispatchBySize(zeroc_rt_dtype_size(out->dtype), [&](auto tag) {
    using U = decltype(tag);
    selectRows<U>(loop, static_cast<U *>(out->data), c,
                  static_cast<const U *>(a->data),
                  static_cast<const U *>(b->data));
  });
  return nullptr;
}

/// dst[i] = narrow<D>(widen(src[i])) for i < n. Between float, F16 and
/// BF16 the values go through float rows instead of doubles: widening to
/// float is exact like widening to double, and rounding a float gives the
/// bits of rounding the same value as a double, so only the cost changes.
template <typename S, typename D>
void castElements(const S *src, D *dst, int64_t n) {
  if constexpr (std::is_same_v<S, float> && kIsNarrowFloat<D>) {
    storeRow(src, dst, n);
  } else if constexpr (kIsNarrowFloat<S> && std::is_same_v<D, float>) {
    loadRow(src, dst, n);
  } else if constexpr (kIsNarrowFloat<S> && kIsNarrowFloat<D>) {
    float buf[kChunk];
    forEachChunk(n, [&](int64_t i, int64_t m) {
      loadRow(src + i, buf, m);
      storeRow(buf, dst + i, m);
    });
  } else {
    for (int64_t i = 0; i < n; ++i)
      dst[i] = narrow<D>(widen(src[i]));
  }
}

zeroc_rt_status_t kCast(const zeroc_rt_tensor_t *in,
                        const zeroc_rt_tensor_t *out) {
  const char *k = "zeroc_rt_k_cast";
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "in", in));
  ZEROC_RT_RETURN_IF_ERROR(checkTensor(k, "out", out));
  ZEROC_RT_RETURN_IF_ERROR(checkSameShape(k, "out", *out, "in", *in));
  ZEROC_RT_RETURN_IF_ERROR(checkNoOverlap(k, "out", *out, "in", *in));
  int64_t n = numElements(*in);
  dispatchAny(in->dtype, [&](auto srcTag) {
    using S = decltype(srcTag);
    dispatchAny(out->dtype, [&](auto dstTag) {
      using D = decltype(dstTag);
      castElements(static_cast<const S *>(in->data),
                   static_cast<D *>(out->data), n);
    });
  });
  return nullptr;
}

} // namespace
} // namespace zeroc_rt::kernels

using namespace zeroc_rt::kernels;

extern "C" {

zeroc_rt_status_t zeroc_rt_k_unary(zeroc_rt_unary_op_t op,
                                   const zeroc_rt_tensor_t *in,
                                   const zeroc_rt_tensor_t *out) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kUnary(op, in, out));
}

zeroc_rt_status_t zeroc_rt_k_unary_grad(zeroc_rt_unary_op_t op,
                                        const zeroc_rt_tensor_t *x,
                                        const zeroc_rt_tensor_t *y,
                                        const zeroc_rt_tensor_t *grad_out,
                                        const zeroc_rt_tensor_t *grad_in) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kUnaryGrad(op, x, y, grad_out, grad_in));
}

zeroc_rt_status_t zeroc_rt_k_binary(zeroc_rt_binary_op_t op,
                                    const zeroc_rt_tensor_t *a,
                                    const zeroc_rt_tensor_t *b,
                                    const zeroc_rt_tensor_t *out) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kBinary(op, a, b, out));
}

zeroc_rt_status_t zeroc_rt_k_where(const zeroc_rt_tensor_t *cond,
                                   const zeroc_rt_tensor_t *a,
                                   const zeroc_rt_tensor_t *b,
                                   const zeroc_rt_tensor_t *out) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kWhere(cond, a, b, out));
}

zeroc_rt_status_t zeroc_rt_k_cast(const zeroc_rt_tensor_t *in,
                                  const zeroc_rt_tensor_t *out) {
  return ZEROC_RT_GUARD_EXCEPTIONS(kCast(in, out));
}

} // extern "C"
