//===- kernels_reject_test.cc - Argument validation of every kernel -------===//
//
// Each rejection asserts the status code and that the message names the
// kernel (and, where useful, the offending operand or dims).
//
//===----------------------------------------------------------------------===//

#include "kernels_test_util.h"

#include <gtest/gtest.h>

#include <cstdint>

using namespace zeroc_rt::test;

namespace {

constexpr auto INVALID = ZEROC_RT_INVALID_ARGUMENT;
constexpr auto SHAPE = ZEROC_RT_SHAPE_MISMATCH;

HostTensor f32(Dims d) { return HostTensor(ZEROC_RT_DTYPE_F32, std::move(d)); }

TEST(KernelsReject, MalformedDescriptors) {
  HostTensor x = f32({2, 3}), y = f32({2, 3});
  const char *k = "zeroc_rt_k_unary";
  auto relu = ZEROC_RT_UNARY_RELU;
  EXPECT_KERNEL_ERROR(zeroc_rt_k_unary(relu, nullptr, y.desc()), INVALID, k,
                      "in is NULL");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_unary(relu, x.desc(), nullptr), INVALID, k,
                      "out is NULL");
  zeroc_rt_tensor_t bad = *x.desc();
  bad.rank = 9;
  EXPECT_KERNEL_ERROR(zeroc_rt_k_unary(relu, &bad, y.desc()), INVALID, k,
                      "in has rank 9");
  bad.rank = -1;
  EXPECT_KERNEL_ERROR(zeroc_rt_k_unary(relu, &bad, y.desc()), INVALID, k,
                      "in has rank -1");
  bad = *x.desc();
  bad.dims[1] = -3;
  EXPECT_KERNEL_ERROR(zeroc_rt_k_unary(relu, x.desc(), &bad), INVALID, k,
                      "out dim 1 is -3");
  bad = *x.desc();
  bad.dtype = static_cast<zeroc_rt_dtype_t>(42);
  EXPECT_KERNEL_ERROR(zeroc_rt_k_unary(relu, &bad, y.desc()), INVALID, k,
                      "in has invalid dtype 42");
  bad = *x.desc();
  bad.data = nullptr;
  EXPECT_KERNEL_ERROR(zeroc_rt_k_unary(relu, &bad, y.desc()), INVALID, k,
                      "in data is NULL for f32[2,3]");
  bad = *x.desc();
  bad.data = static_cast<char *>(x.data()) + 2;
  EXPECT_KERNEL_ERROR(zeroc_rt_k_unary(relu, &bad, y.desc()), INVALID, k,
                      "is not aligned to its 4-byte f32 elements");
  bad = *x.desc();
  bad.dims[0] = int64_t(1) << 40;
  bad.dims[1] = int64_t(1) << 30;
  EXPECT_KERNEL_ERROR(zeroc_rt_k_unary(relu, &bad, y.desc()), INVALID, k,
                      "more bytes than int64");
  bad.dims[0] = 0; // empty, but the other dims still must be countable
  bad.rank = 3;
  bad.dims[2] = int64_t(1) << 40;
  EXPECT_KERNEL_ERROR(zeroc_rt_k_unary(relu, &bad, y.desc()), INVALID, k,
                      "more bytes than int64");
  // Empty tensors may have NULL data.
  HostTensor e = f32({0, 3}), f = f32({0, 3});
  ZEROC_RT_EXPECT_OK(zeroc_rt_k_unary(relu, e.desc(), f.desc()));
}

TEST(KernelsReject, BadEnumsDtypesAndAliasing) {
  HostTensor x = f32({2, 3}), y = f32({2, 3});
  HostTensor i = HostTensor(ZEROC_RT_DTYPE_I64, {2, 3});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_unary(static_cast<zeroc_rt_unary_op_t>(99),
                                       x.desc(), y.desc()),
                      INVALID, "zeroc_rt_k_unary", "invalid unary op 99");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_unary_grad(
                          static_cast<zeroc_rt_unary_op_t>(-1), x.desc(),
                          x.desc(), x.desc(), y.desc()),
                      INVALID, "zeroc_rt_k_unary_grad", "invalid unary op -1");
  // The first value past the last op (ZEROC_RT_BINARY_MIN).
  EXPECT_KERNEL_ERROR(zeroc_rt_k_binary(static_cast<zeroc_rt_binary_op_t>(15),
                                        x.desc(), x.desc(), y.desc()),
                      INVALID, "zeroc_rt_k_binary", "invalid binary op 15");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_unary(ZEROC_RT_UNARY_EXP, i.desc(), y.desc()),
                      INVALID, "zeroc_rt_k_unary",
                      "in has dtype i64; expected f32, f64, f16 or bf16");
  HostTensor d = HostTensor(ZEROC_RT_DTYPE_F64, {2, 3});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_unary(ZEROC_RT_UNARY_EXP, x.desc(), d.desc()),
                      INVALID, "zeroc_rt_k_unary",
                      "out has dtype f64 but in has f32");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_unary(ZEROC_RT_UNARY_EXP, x.desc(), x.desc()),
                      INVALID, "zeroc_rt_k_unary", "out overlaps in");
  HostTensor h = HostTensor(ZEROC_RT_DTYPE_F16, {2, 3});
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_binary(ZEROC_RT_BINARY_ADD, h.desc(), h.desc(), y.desc()),
      INVALID, "zeroc_rt_k_binary", "out has dtype f32 but a has f16");
  HostTensor bool6 = HostTensor(ZEROC_RT_DTYPE_BOOL, {2, 3});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_binary(ZEROC_RT_BINARY_ADD, bool6.desc(),
                                        bool6.desc(), y.desc()),
                      INVALID, "zeroc_rt_k_binary",
                      "a has dtype bool; expected f32, f64, f16, bf16, i64, "
                      "i32 or u8");
  HostTensor b = HostTensor(ZEROC_RT_DTYPE_BOOL, {2, 3});
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_binary(ZEROC_RT_BINARY_EQUAL, x.desc(), x.desc(), y.desc()),
      INVALID, "zeroc_rt_k_binary", "out has dtype f32; expected bool");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_binary(ZEROC_RT_BINARY_ADD, x.desc(), d.desc(), y.desc()),
      INVALID, "zeroc_rt_k_binary", "b has dtype f64 but a has f32");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_where(x.desc(), x.desc(), x.desc(), y.desc()),
                      INVALID, "zeroc_rt_k_where",
                      "cond has dtype f32; expected bool");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_sum_to(i.desc(), i.desc()), INVALID,
                      "zeroc_rt_k_sum_to", "in has dtype i64");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_dropout(i.desc(), 0.5, 1, 2, i.desc()),
                      INVALID, "zeroc_rt_k_dropout", "in has dtype i64");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_dropout(x.desc(), 1.5, 1, 2, y.desc()),
                      INVALID, "zeroc_rt_k_dropout", "ratio 1.5");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_dropout(x.desc(), NAN, 1, 2, y.desc()),
                      INVALID, "zeroc_rt_k_dropout", "ratio nan");
  HostTensor r = HostTensor(ZEROC_RT_DTYPE_I64, {2});
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_reduce(ZEROC_RT_REDUCE_OP_SUM, i.desc(), 2, r.desc()), INVALID,
      "zeroc_rt_k_reduce", "in has dtype i64");
  HostTensor s = f32({3});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_layer_norm(i.desc(), s.desc(), nullptr, 1,
                                            1e-5, i.desc()),
                      INVALID, "zeroc_rt_k_layer_norm", "x has dtype i64");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_softmax(i.desc(), 1, 0, i.desc()), INVALID,
                      "zeroc_rt_k_softmax", "in has dtype i64");
  HostTensor v = f32({3});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_trilu(v.desc(), 1, 0, s.desc()), INVALID,
                      "zeroc_rt_k_trilu", "rank >= 2");
}

TEST(KernelsReject, WrongOutputShapes) {
  HostTensor x = f32({2, 3}), wrong = f32({3, 2}), row = f32({3}),
             cond = HostTensor(ZEROC_RT_DTYPE_BOOL, {2, 3});
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_unary(ZEROC_RT_UNARY_TANH, x.desc(), wrong.desc()), SHAPE,
      "zeroc_rt_k_unary", "out is f32[3,2] but must have the shape of in "
                          "f32[2,3]");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_unary_grad(ZEROC_RT_UNARY_TANH, nullptr,
                                            wrong.desc(), x.desc(), row.desc()),
                      SHAPE, "zeroc_rt_k_unary_grad", "grad_in is f32[3]");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_unary_grad(ZEROC_RT_UNARY_TANH, nullptr,
                                            wrong.desc(), x.desc(),
                                            f32({2, 3}).desc()),
                      SHAPE, "zeroc_rt_k_unary_grad", "y is f32[3,2]");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_binary(ZEROC_RT_BINARY_ADD, x.desc(), row.desc(), row.desc()),
      SHAPE, "zeroc_rt_k_binary",
      "out is f32[3] but the broadcast of a and b is [2,3]");
  HostTensor four = f32({4});
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_binary(ZEROC_RT_BINARY_MUL, x.desc(), four.desc(), x.desc()),
      SHAPE, "zeroc_rt_k_binary",
      "a f32[2,3] and b f32[4] do not broadcast (dim 3 vs 4)");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_where(cond.desc(), x.desc(), row.desc(), wrong.desc()), SHAPE,
      "zeroc_rt_k_where", "out is f32[3,2]");
  HostTensor castOut = HostTensor(ZEROC_RT_DTYPE_I32, {6});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_cast(x.desc(), castOut.desc()), SHAPE,
                      "zeroc_rt_k_cast", "out is i32[6]");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_broadcast(x.desc(), wrong.desc()), SHAPE,
                      "zeroc_rt_k_broadcast",
                      "in f32[2,3] does not broadcast to out f32[3,2]");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_sum_to(x.desc(), four.desc()), SHAPE,
                      "zeroc_rt_k_sum_to",
                      "out f32[4] does not broadcast to in f32[2,3]");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_dropout(x.desc(), 0.1, 1, 1, wrong.desc()),
                      SHAPE, "zeroc_rt_k_dropout", "out is f32[3,2]");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_copy(x.desc(), four.desc()), SHAPE,
                      "zeroc_rt_k_copy", "out f32[4] has 4 elements");
  const int64_t perm[2] = {1, 0}, badPerm[2] = {0, 0};
  EXPECT_KERNEL_ERROR(zeroc_rt_k_transpose(x.desc(), perm, x.desc()), SHAPE,
                      "zeroc_rt_k_transpose",
                      "out is f32[2,3] but in permuted by perm is [3,2]");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_transpose(x.desc(), badPerm, wrong.desc()),
                      INVALID, "zeroc_rt_k_transpose",
                      "perm [0,0] is not a permutation");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_transpose(x.desc(), nullptr, wrong.desc()),
                      INVALID, "zeroc_rt_k_transpose", "perm is NULL");
  const int64_t starts[2] = {0, 0}, steps[2] = {1, 1};
  EXPECT_KERNEL_ERROR(zeroc_rt_k_slice(x.desc(), starts, steps, row.desc()),
                      SHAPE, "zeroc_rt_k_slice",
                      "out f32[3] must have the rank of in f32[2,3]");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_trilu(x.desc(), 1, 0, wrong.desc()), SHAPE,
                      "zeroc_rt_k_trilu", "out is f32[3,2]");
  HostTensor y = f32({2, 3}), gy = f32({2, 3});
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_softmax_grad(y.desc(), gy.desc(), 1, 0, wrong.desc()), SHAPE,
      "zeroc_rt_k_softmax_grad", "grad_x is f32[3,2]");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_softmax(x.desc(), 1, 1, wrong.desc()), SHAPE,
                      "zeroc_rt_k_softmax", "out is f32[3,2]");
  HostTensor gs = f32({3});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_layer_norm_grad(x.desc(), row.desc(), 1, 1e-5,
                                                 gy.desc(), wrong.desc(),
                                                 gs.desc(), nullptr),
                      SHAPE, "zeroc_rt_k_layer_norm_grad", "grad_x is f32[3,2]");
  EXPECT_KERNEL_ERROR(zeroc_rt_k_layer_norm(x.desc(), row.desc(), nullptr, 1,
                                            1e-5, wrong.desc()),
                      SHAPE, "zeroc_rt_k_layer_norm", "y is f32[3,2]");
}

TEST(KernelsReject, GatherIndicesOutOfRangeAndWrongShapes) {
  HostTensor data = f32({5, 3});
  HostTensor idx = HostTensor(ZEROC_RT_DTYPE_I64, {2});
  HostTensor out = f32({2, 3});
  idx.setValues({1, 5});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_gather(data.desc(), idx.desc(), 0, out.desc()),
                      INVALID, "zeroc_rt_k_gather",
                      "index 5 (element 1 of indices i64[2]) is out of range "
                      "for axis 0 of size 5");
  idx.setValues({-6, 0});
  EXPECT_KERNEL_ERROR(zeroc_rt_k_gather(data.desc(), idx.desc(), 0, out.desc()),
                      INVALID, "zeroc_rt_k_gather", "index -6");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_gather_grad(out.desc(), idx.desc(), 0, data.desc()), INVALID,
      "zeroc_rt_k_gather_grad", "index -6");
  idx.setValues({-5, 4});
  ZEROC_RT_EXPECT_OK(
      zeroc_rt_k_gather(data.desc(), idx.desc(), 0, out.desc()));
  HostTensor wrong = f32({3, 2});
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_gather(data.desc(), idx.desc(), 0, wrong.desc()), SHAPE,
      "zeroc_rt_k_gather",
      "out is f32[3,2] but data[:axis] + indices + data[axis+1:] with axis 0 "
      "is [2,3]");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_gather(data.desc(), idx.desc(), 2, out.desc()), INVALID,
      "zeroc_rt_k_gather", "axis 2 is out of range for rank 2");
  HostTensor fidx = f32({2});
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_gather(data.desc(), fidx.desc(), 0, out.desc()), INVALID,
      "zeroc_rt_k_gather", "indices has dtype f32; expected i64 or i32");
  HostTensor i64data = HostTensor(ZEROC_RT_DTYPE_I64, {5, 3});
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_gather_grad(out.desc(), idx.desc(), 0, i64data.desc()),
      INVALID, "zeroc_rt_k_gather_grad",
      "grad_out has dtype f32 but grad_data has i64");
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_gather_grad(wrong.desc(), idx.desc(), 0, data.desc()), SHAPE,
      "zeroc_rt_k_gather_grad", "grad_out is f32[3,2]");
  HostTensor scalar = f32({});
  EXPECT_KERNEL_ERROR(
      zeroc_rt_k_gather(scalar.desc(), idx.desc(), 0, out.desc()), INVALID,
      "zeroc_rt_k_gather", "data must have rank >= 1");
}

} // namespace
