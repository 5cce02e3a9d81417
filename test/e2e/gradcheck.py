#!/usr/bin/python3
"""Finite-difference check, in float64, of every gradient rule through the
whole zeroc pipeline (import, zero-autodiff, the CPU emitter, the runtime's
kernels and the SGD step).

For every case: a tiny float64 ONNX model (opset 17) whose DOUBLE
initializers (the trainable parameters) feed the op under test, directly or
through a float64 data input, followed by

    loss = sum_i ReduceSum(out_i * C_i)

with C_i a fixed random DOUBLE Constant (not an initializer, so not a
parameter) for every float output out_i of the op, so that every output
element matters. The data set holds exactly one micro-batch (S = MB = 2), so
one step of `out/train` with SGD lr 1 (no momentum, no weight decay) gives
zeroc's gradient as `initial - updated` for every parameter. It is compared
with the central finite difference (eps 1e-6) of the loss that
tools/reference/onnx_torch.py computes in float64, element by element:

    |zeroc - fd| <= 1e-6 * max(1, |fd|)

Inputs are chosen away from the kinks and singularities of the op (Relu's 0,
ReduceMax's ties, Sqrt/Log/Reciprocal/Div at 0) so that the finite
difference is the derivative; the one case with ReduceMax ties
(`max_ties_shifted_by_scalar_param`) moves the tied elements together, so
the loss is still differentiable there.

The cases marked ("autograd",) (clip_boundary_matches_reference) sit on a
kink on purpose and compare with the reference's autograd instead of the
finite difference.

Not covered here, with the reason:
  * Cast float64 -> float32 -> float64: the round trip rounds to float32, so
    a 1e-6 finite difference of it is noise; Cast is checked double->double
    (and int64->double, which carries no gradient).
  * Dropout with ratio > 0 in training: the reference does not reproduce
    zeroc's masks, so there is no finite difference; the cases
    `dropout_p*_mask_replay` check instead that the gradient is C x mask /
    (1 - ratio) with a 0/1 mask and that the backward pass replays the
    forward mask (the logged loss recomputed from the mask that the gradient
    reveals).

Prints one line per case (PASS/FAIL, max error) and
`gradcheck: N passed, M failed`; exits 1 on failure. Each case's files stay in
--work/<case>/ (model.onnx, data/, out/, params/) as a reproducer.
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import time
import zlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "reference"))
import torch  # noqa: E402
from onnx_torch import OnnxTorchModel  # noqa: E402

MB = 2          # micro batch = the number of samples (one step sees them all)
EPS = 1e-6      # finite-difference step
TOL = 1e-6      # |zeroc - fd| <= TOL * max(1, |fd|)
D = TensorProto.DOUBLE
I64 = TensorProto.INT64
BOOL = TensorProto.BOOL
INT64_MIN = -2 ** 63
INT64_MAX = 2 ** 63 - 1


class Model(object):
    """Builds one case's ONNX graph: parameters, data inputs, nodes and the
    outputs that the loss weights."""

    def __init__(self, name):
        self.name = name
        self.rng = np.random.default_rng(zlib.crc32(name.encode()))
        self.nodes, self.inits, self.inputs = [], [], []
        self.data = {}
        self.outs = []
        self.n = 0
        self.special = None
        self.opset = 17     # 20 for Gelu (ONNX 1.12's checker stops at 17)

    def _fresh(self, prefix):
        self.n += 1
        return "%s%d" % (prefix, self.n)

    def _values(self, shape, dist):
        r = self.rng
        if dist == "normal":
            return r.standard_normal(shape)
        if dist == "pos":          # well away from 0
            return r.uniform(1.0, 2.0, shape)
        if dist == "small":        # |v| <= 0.2
            return r.uniform(-0.2, 0.2, shape)
        if dist == "sign":         # 0.5 <= |v| <= 1.5
            return r.choice([-1.0, 1.0], shape) * r.uniform(0.5, 1.5, shape)
        if dist == "half":
            return r.uniform(0.3, 0.8, shape)
        raise ValueError(dist)

    def param(self, shape, dist="normal", values=None):
        name = self._fresh("w")
        if values is None:
            values = self._values(shape, dist)
        self.inits.append(numpy_helper.from_array(
            np.asarray(values, dtype=np.float64).reshape(shape), name))
        return name

    def x(self, shape, dist="normal", values=None, elem=D):
        """A data input of shape (MB,) + shape."""
        name = self._fresh("x")
        full = (MB,) + tuple(shape)
        if values is None:
            values = self._values(full, dist)
        arr = np.asarray(values, dtype=onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[elem])
        assert arr.shape == full, (name, arr.shape, full)
        self.data[name] = arr
        self.inputs.append(helper.make_tensor_value_info(name, elem, list(full)))
        return name

    def const(self, values, dtype=np.float64):
        name = self._fresh("k")
        self.nodes.append(helper.make_node(
            "Constant", [], [name],
            value=numpy_helper.from_array(np.asarray(values, dtype=dtype), name)))
        return name

    def ints(self, values):
        return self.const(values, np.int64)

    def op(self, op_type, inputs, n_out=1, **attrs):
        outs = [self._fresh(op_type.lower() + "_") for _ in range(n_out)]
        self.nodes.append(helper.make_node(op_type, list(inputs), outs,
                                           name=outs[0], **attrs))
        return outs[0] if n_out == 1 else outs

    def out(self, *names):
        self.outs.extend(names)

    def build(self):
        """The model with `loss = sum_i ReduceSum(out_i * C_i)`."""
        # Output shapes from the reference interpreter.
        probe = helper.make_model(
            helper.make_graph(self.nodes, self.name, self.inputs,
                              [helper.make_tensor_value_info(o, D, None)
                               for o in self.outs], self.inits),
            opset_imports=[helper.make_opsetid("", self.opset)], ir_version=8)
        ref = OnnxTorchModel(probe, dtype=torch.float64, require_loss=False)
        with torch.no_grad():
            vals = ref.run(self.data, outputs=self.outs)
        terms = []
        for o in self.outs:
            shape = tuple(vals[o].shape)
            c = self.const(self.rng.standard_normal(shape))
            t = self.op("Mul", [o, c])
            if shape:
                t = self.op("ReduceSum", [t], keepdims=0)
            terms.append(t)
        total = terms[0]
        for t in terms[1:]:
            total = self.op("Add", [total, t])
        self.nodes.append(helper.make_node("Identity", [total], ["loss"],
                                           name="loss"))
        g = helper.make_graph(self.nodes, self.name, self.inputs,
                              [helper.make_tensor_value_info("loss", D, [])],
                              self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", self.opset)],
                              ir_version=8)
        if self.opset <= 17:
            onnx.checker.check_model(m)
        return m


# ---------------------------------------------------------------------------
# The cases: name -> function(Model). Each one uses at least one data input
# (the trainer needs the micro-batch dim) and two parameters where the op has
# two differentiable operands.

CASES = []


def case(name):
    def reg(fn):
        CASES.append((name, fn))
        return fn
    return reg


# -- Gemm --------------------------------------------------------------------

def _gemm(m, ta, tb, c_shape, alpha=None, beta=None, a_from_data=True):
    M, K, N = 3, 4, 5
    a_shape = (K, M) if ta else (M, K)
    b_shape = (N, K) if tb else (K, N)
    # The operand that mixes in the data must have MB as its dim 0.
    if a_from_data:
        a_shape = (MB, a_shape[1])
        if ta:
            K = MB
            b_shape = (N, K) if tb else (K, N)
        else:
            M = MB
        a = m.op("Add", [m.x(a_shape[1:]), m.param(a_shape[1:])])
        b = m.param(b_shape)
    else:
        b_shape = (MB, b_shape[1])
        if tb:
            N = MB
        else:
            K = MB
            a_shape = (K, M) if ta else (M, K)
        a = m.param(a_shape)
        b = m.op("Mul", [m.x(b_shape[1:]), m.param(b_shape[1:])])
    ins = [a, b]
    if c_shape is not None:
        c_shape = tuple(N if d == "N" else M if d == "M" else d for d in c_shape)
        ins.append(m.param(c_shape))
    attrs = {}
    if ta:
        attrs["transA"] = 1
    if tb:
        attrs["transB"] = 1
    if alpha is not None:
        attrs["alpha"] = alpha
    if beta is not None:
        attrs["beta"] = beta
    m.out(m.op("Gemm", ins, **attrs))


case("gemm_nn_C_row")(lambda m: _gemm(m, 0, 0, ("N",)))
case("gemm_nn_noC")(lambda m: _gemm(m, 0, 0, None))
case("gemm_tn_C_col_alpha_beta")(lambda m: _gemm(m, 1, 0, ("M", 1), 0.7, 1.3))
case("gemm_nt_noC_alpha")(lambda m: _gemm(m, 0, 1, None, alpha=2.0))
case("gemm_tt_C_full_alpha_beta")(lambda m: _gemm(m, 1, 1, ("M", "N"), -0.5, 0.25))
case("gemm_nt_C_scalar_beta")(lambda m: _gemm(m, 0, 1, (), beta=-1.5,
                                              a_from_data=False))
case("gemm_tn_C_1x1_rhs_data")(lambda m: _gemm(m, 1, 0, (1, 1), 1.25, 0.5,
                                               a_from_data=False))
case("gemm_tt_C_row_rhs_data")(lambda m: _gemm(m, 1, 1, ("N",), 0.5,
                                               a_from_data=False))
# alpha and beta that two decimals do not represent.
case("gemm_nn_C_row_alpha_beta_3digits")(lambda m: _gemm(m, 0, 0, ("N",),
                                                         0.123, 0.333))


# -- MatMul ------------------------------------------------------------------

@case("matmul_2d")
def _(m):
    a = m.op("Add", [m.x((3,)), m.param((3,))])
    m.out(m.op("MatMul", [a, m.param((3, 4))]))


@case("matmul_batched_3d_bcast_rhs")
def _(m):
    a = m.op("Add", [m.x((3, 4)), m.param((3, 4))])
    m.out(m.op("MatMul", [a, m.param((4, 5))]))


@case("matmul_batched_4d_bcast_both")
def _(m):
    # (2,1,3,4) @ (5,4,2) -> (2,5,3,2): both operands broadcast in batch dims.
    a = m.op("Mul", [m.x((1, 3, 4)), m.param((3, 4))])
    m.out(m.op("MatMul", [a, m.param((5, 4, 2))]))


@case("matmul_batched_lhs_param")
def _(m):
    # (1,3,4) param @ (2,4,5) -> (2,3,5): the lhs broadcasts over the batch.
    b = m.op("Add", [m.x((4, 5)), m.param((4, 5))])
    m.out(m.op("MatMul", [m.param((1, 3, 4)), b]))


@case("matmul_rank1_lhs")
def _(m):
    b = m.op("Add", [m.x((3, 4)), m.param((3, 4))])
    m.out(m.op("MatMul", [m.param((3,)), b]))          # (3,) @ (2,3,4)


@case("matmul_rank1_rhs")
def _(m):
    a = m.op("Add", [m.x((3, 4)), m.param((3, 4))])
    m.out(m.op("MatMul", [a, m.param((4,))]))          # (2,3,4) @ (4,)


@case("matmul_rank1_both")
def _(m):
    p, q = m.param((3,)), m.param((3,))
    m.out(m.op("MatMul", [p, q]))                      # dot product
    m.out(m.op("MatMul", [m.x((3,)), q]))              # (2,3) @ (3,)


# -- broadcasting binary ops ---------------------------------------------------

def _binary(op, lhs_dist="normal", rhs_dist="normal", rhs_data_dist=None,
            swap=False):
    def fn(m):
        a = m.param((3, 1), lhs_dist)
        xd = m.x((1, 4), rhs_data_dist or rhs_dist)
        b = m.op("Add" if rhs_data_dist is None else "Mul",
                 [xd, m.param((4,), "half" if rhs_data_dist else rhs_dist)])
        # (3,1) op (2,1,4) -> (2,3,4): both operands broadcast.
        m.out(m.op(op, [b, a] if swap else [a, b]))
        # And a rank-0 parameter against a full tensor.
        s = m.param((), "half" if op in ("Div", "Pow") else "normal")
        full = m.op("Add" if op not in ("Div", "Pow") else "Mul",
                    [m.x((3,), "pos"), m.param((3,), "pos")])
        m.out(m.op(op, [full, s] if not swap else [s, full]))
    return fn


case("add_bcast")(_binary("Add"))
case("sub_bcast")(_binary("Sub"))
case("sub_bcast_swapped")(_binary("Sub", swap=True))
case("mul_bcast")(_binary("Mul"))
case("div_bcast")(_binary("Div", rhs_data_dist="pos"))
case("div_bcast_swapped")(_binary("Div", lhs_dist="pos", rhs_data_dist="pos",
                                  swap=True))
case("pow_bcast")(_binary("Pow", lhs_dist="half", rhs_data_dist="pos"))
case("pow_bcast_swapped")(_binary("Pow", lhs_dist="pos", rhs_data_dist="half",
                                  swap=True))


@case("pow_const_exponent")
def _(m):
    # Negative bases with integer exponents: only the base's gradient.
    b = m.op("Add", [m.x((3,)), m.param((3,))])
    m.out(m.op("Pow", [b, m.const(2.0)]))
    m.out(m.op("Pow", [b, m.const(np.array([3.0, 1.0, 2.0]))]))


@case("self_mul_same_operand")
def _(m):
    b = m.op("Add", [m.x((3,)), m.param((3,))])
    m.out(m.op("Mul", [b, b]))
    m.out(m.op("Sub", [b, b]))                          # gradient 0


# -- unary ---------------------------------------------------------------------

def _unary(op, x_dist, p_dist):
    def fn(m):
        u = m.op("Add", [m.x((3,), x_dist), m.param((3,), p_dist)])
        m.out(m.op(op, [u]))
        # And a full-shape parameter (times positive data) into the op.
        dist = "pos" if x_dist == "pos" else "sign" if op == "Relu" else p_dist
        m.out(m.op(op, [m.op("Mul", [m.param((MB, 3), dist), m.x((3,), "pos")])]))
    return fn


for _op, _xd, _pd in [("Sqrt", "pos", "half"), ("Reciprocal", "pos", "half"),
                      ("Neg", "normal", "normal"), ("Relu", "sign", "small"),
                      ("Tanh", "normal", "normal"), ("Sigmoid", "normal", "normal"),
                      ("Erf", "normal", "normal"), ("Exp", "normal", "half"),
                      ("Log", "pos", "half")]:
    case(_op.lower())(_unary(_op, _xd, _pd))


# -- reductions ----------------------------------------------------------------

def _reduce(op, axes, keepdims):
    def fn(m):
        u = m.op("Mul", [m.x((3, 4)), m.param((3, 4))])
        v = m.op("Add", [u, m.param((4,))])
        ins, attrs = [v], {}
        if op == "ReduceSum":
            if axes is not None:
                ins.append(m.ints(axes))
        elif axes is not None:
            attrs["axes"] = axes
        m.out(m.op(op, ins, keepdims=keepdims, **attrs))
    return fn


for _op in ("ReduceSum", "ReduceMean", "ReduceMax"):
    for _axes, _kd in [([1], 1), ([0, 2], 0), ([-1], 0), ([2, -3], 1), (None, 0),
                       (None, 1), ([0], 0)]:
        _n = "%s_axes%s_keep%d" % (_op[6:].lower(), "all" if _axes is None else
                                   "_".join(str(a) for a in _axes), _kd)
        case(_n)(_reduce(_op, _axes, _kd))


@case("max_ties_shifted_by_scalar_param")
def _(m):
    # max(x + w) over rows with tied maxima (2-way, 3-way): d/dw = 1 per row
    # (differentiable: w shifts the tied elements together). The gradient is
    # 1 per row, not 1 per tied element; PyTorch's amax splits it evenly.
    x = m.x((4,), values=[[0.3, 1.25, 1.25, -0.5], [2.0, 0.1, 2.0, 2.0]])
    u = m.op("Add", [x, m.param((), values=0.375)])
    m.out(m.op("ReduceMax", [u], axes=[1], keepdims=0))


# -- softmax family ----------------------------------------------------------------

def _softmax(op, axis):
    def fn(m):
        u = m.op("Mul", [m.x((3, 4)), m.param((3, 4))])
        u = m.op("Add", [u, m.param((4,))])
        attrs = {} if axis is None else {"axis": axis}
        m.out(m.op(op, [u], **attrs))
    return fn


for _op in ("Softmax", "LogSoftmax"):
    for _axis in (None, 1, 0, -3):
        case("%s_axis%s" % (_op.lower(), "default" if _axis is None else _axis))(
            _softmax(_op, _axis))


# -- LayerNormalization ------------------------------------------------------------

def _layer_norm(axis, bias):
    def fn(m):
        u = m.op("Mul", [m.x((3, 4)), m.param((3, 4))])
        nshape = (4,) if axis in (-1, 2) else (3, 4)
        ins = [u, m.param(nshape)]
        if bias:
            ins.append(m.param(nshape))
        m.out(m.op("LayerNormalization", ins, axis=axis, epsilon=1e-5))
    return fn


case("layernorm_axis-1_bias")(_layer_norm(-1, True))
case("layernorm_axis-1_nobias")(_layer_norm(-1, False))
case("layernorm_axis-2_bias")(_layer_norm(-2, True))
case("layernorm_axis-2_nobias")(_layer_norm(-2, False))
case("layernorm_axis2_bias")(_layer_norm(2, True))


# -- Conv, pooling, BatchNormalization ----------------------------------------
# The op's input is data * param, so the input gradient is checked through
# the param; max pooling sees continuous values (no ties).

def _conv(c, m_out, spatial, kernel, group=1, bias=True, **attrs):
    def fn(m):
        u = m.op("Mul", [m.x((c,) + spatial), m.param((c,) + spatial)])
        ins = [u, m.param((m_out, c // group) + kernel)]
        if bias:
            ins.append(m.param((m_out,)))
        m.out(m.op("Conv", ins, group=group, **attrs))
    return fn


case("conv1d_bias")(_conv(3, 4, (7,), (3,)))
case("conv1d_stride2_pads_dilation2_nobias")(
    _conv(3, 2, (9,), (3,), bias=False, strides=[2], pads=[1, 2],
          dilations=[2]))
case("conv2d_bias_asymmetric_pads")(
    _conv(3, 4, (6, 5), (3, 2), pads=[1, 0, 1, 1]))
case("conv2d_group2_strides_dilations")(
    _conv(4, 6, (7, 6), (3, 2), group=2, strides=[2, 1], dilations=[1, 2],
          pads=[1, 1, 0, 1]))
case("conv2d_depthwise")(_conv(3, 3, (5, 5), (3, 3), group=3, pads=[1, 1, 1, 1]))
case("conv2d_patch_embedding_stride_eq_kernel")(
    _conv(3, 5, (8, 8), (4, 4), strides=[4, 4]))
case("conv2d_auto_pad_same_upper_stride2")(
    _conv(2, 3, (5, 6), (3, 3), strides=[2, 2], auto_pad="SAME_UPPER"))
case("conv2d_auto_pad_same_lower")(
    _conv(2, 3, (5, 4), (2, 3), auto_pad="SAME_LOWER"))
case("conv3d_bias")(_conv(2, 3, (3, 4, 3), (2, 2, 2), pads=[0, 1, 0, 1, 0, 1]))


def _pool(op, c, spatial, **attrs):
    def fn(m):
        u = m.op("Mul", [m.x((c,) + spatial), m.param((c,) + spatial)])
        m.out(m.op(op, [u], **attrs))
    return fn


case("maxpool2d_k2_s2")(_pool("MaxPool", 2, (6, 6), kernel_shape=[2, 2],
                               strides=[2, 2]))
case("maxpool2d_k3_s1_pads_dilation")(
    _pool("MaxPool", 2, (6, 5), kernel_shape=[3, 2], pads=[1, 0, 1, 1],
          dilations=[1, 2]))
case("maxpool1d_ceil_mode")(_pool("MaxPool", 3, (7,), kernel_shape=[2],
                                   strides=[2], ceil_mode=1))
case("maxpool2d_resnet_stem_k3_s2_p1")(
    _pool("MaxPool", 2, (7, 7), kernel_shape=[3, 3], strides=[2, 2],
          pads=[1, 1, 1, 1]))
for _inc in (0, 1):
    case("avgpool2d_pads_count_include_pad%d" % _inc)(
        _pool("AveragePool", 2, (5, 6), kernel_shape=[3, 3], strides=[2, 2],
              pads=[1, 1, 1, 0], count_include_pad=_inc))
    case("avgpool1d_ceil_mode_count_include_pad%d" % _inc)(
        _pool("AveragePool", 2, (7,), kernel_shape=[3], strides=[2],
              pads=[1, 1], ceil_mode=1, count_include_pad=_inc))
case("avgpool3d")(_pool("AveragePool", 2, (4, 3, 4), kernel_shape=[2, 2, 2],
                         strides=[2, 1, 2]))
case("global_average_pool")(_pool("GlobalAveragePool", 3, (4, 5)))
case("global_max_pool")(_pool("GlobalMaxPool", 3, (4, 5)))


def _batch_norm(spatial, training):
    def fn(m):
        c = 3
        u = m.op("Mul", [m.x((c,) + spatial), m.param((c,) + spatial)])
        if training:
            stats = [m.const(np.zeros(c)), m.const(np.ones(c))]
            m.out(m.op("BatchNormalization",
                       [u, m.param((c,)), m.param((c,))] + stats, n_out=3,
                       epsilon=1e-5, momentum=0.9, training_mode=1)[0])
        else:
            stats = [m.param((c,), "small"), m.param((c,), "pos")]
            m.out(m.op("BatchNormalization",
                       [u, m.param((c,)), m.param((c,))] + stats,
                       epsilon=1e-5))
    return fn


case("batchnorm_training_2d")(_batch_norm((4, 3), True))
case("batchnorm_training_1d")(_batch_norm((5,), True))
case("batchnorm_training_0d")(_batch_norm((), True))
case("batchnorm_inference_2d")(_batch_norm((4, 3), False))


# -- Gather ----------------------------------------------------------------

@case("gather_embedding_axis0_repeats")
def _(m):
    table = m.param((5, 3))
    idx = m.x((4,), values=[[1, 3, 1, 4], [3, 3, 0, 1]], elem=I64)
    m.out(m.op("Gather", [table, idx], axis=0))


@case("gather_axis1_repeats")
def _(m):
    table = m.param((3, 5))
    idx = m.x((3,), values=[[4, 0, 4], [2, 4, 4]], elem=I64)
    m.out(m.op("Gather", [table, idx], axis=1))        # (3,2,3)


@case("gather_axis1_const_negative_indices")
def _(m):
    u = m.op("Add", [m.x((4, 3)), m.param((4, 3))])
    m.out(m.op("Gather", [u, m.ints([[0, -1], [2, 0], [-4, 3]])], axis=1))


@case("gather_scalar_index")
def _(m):
    u = m.op("Mul", [m.x((4, 3)), m.param((4, 3))])
    m.out(m.op("Gather", [u, m.ints(2)], axis=-1))     # (2,4)


# -- shape ops ---------------------------------------------------------------

@case("reshape")
def _(m):
    u = m.op("Add", [m.x((3, 4)), m.param((3, 4))])
    m.out(m.op("Reshape", [u, m.ints([0, -1])]))
    m.out(m.op("Reshape", [u, m.ints([4, 6])]))


@case("transpose_perm_201")
def _(m):
    u = m.op("Mul", [m.x((3, 4)), m.param((3, 4))])
    m.out(m.op("Transpose", [u], perm=[2, 0, 1]))
    m.out(m.op("Transpose", [u]))                      # default: reversed


@case("unsqueeze")
def _(m):
    u = m.op("Add", [m.x((3,)), m.param((3,))])
    m.out(m.op("Unsqueeze", [u, m.ints([1, -1])]))


@case("squeeze")
def _(m):
    u = m.op("Mul", [m.x((1, 3, 1)), m.param((1, 3, 1))])
    m.out(m.op("Squeeze", [u, m.ints([1, -1])]))
    m.out(m.op("Squeeze", [u]))


@case("split_sizes_axis1")
def _(m):
    u = m.op("Add", [m.x((6, 2)), m.param((6, 2))])
    a, b, c = m.op("Split", [u, m.ints([1, 2, 3])], n_out=3, axis=1)
    m.out(a, c)                                        # b unused


@case("split_equal_axis-1")
def _(m):
    u = m.op("Mul", [m.x((3, 4)), m.param((3, 4))])
    a, b = m.op("Split", [u], n_out=2, axis=-1)
    m.out(a, b)


@case("concat_axis1")
def _(m):
    u = m.op("Add", [m.x((3,)), m.param((3,))])
    m.out(m.op("Concat", [u, m.param((MB, 2)), u], axis=1))


@case("concat_axis0")
def _(m):
    u = m.op("Mul", [m.x((3,)), m.param((3,))])
    m.out(m.op("Concat", [m.param((1, 3)), u], axis=0))


@case("concat_axis-1_three_params")
def _(m):
    u = m.op("Add", [m.x((2, 1)), m.param((2, 1))])
    m.out(m.op("Concat", [m.param((MB, 2, 2)), u, m.param((MB, 2, 3))], axis=-1))


@case("slice_negative_steps")
def _(m):
    u = m.op("Add", [m.x((5, 6)), m.param((5, 6))])
    m.out(m.op("Slice", [u, m.ints([4, -1]), m.ints([0, INT64_MIN]),
                         m.ints([1, 2]), m.ints([-1, -2])]))


@case("slice_positive_steps_default_axes")
def _(m):
    u = m.op("Mul", [m.x((5, 6)), m.param((5, 6))])
    m.out(m.op("Slice", [u, m.ints([0, 1, -5]), m.ints([INT64_MAX, 5, 6])]))
    m.out(m.op("Slice", [u, m.ints([1]), m.ints([6]), m.ints([-1]),
                         m.ints([3])]))


@case("slice_reverse_all")
def _(m):
    u = m.op("Add", [m.x((4,)), m.param((4,))])
    m.out(m.op("Slice", [u, m.ints([-1]), m.ints([INT64_MIN]), m.ints([1]),
                         m.ints([-1])]))


@case("trilu_upper_k1")
def _(m):
    u = m.op("Add", [m.x((4, 4)), m.param((4, 4))])
    m.out(m.op("Trilu", [u, m.ints(1)], upper=1))


@case("trilu_lower_k-1_rect")
def _(m):
    u = m.op("Mul", [m.x((3, 5)), m.param((3, 5))])
    m.out(m.op("Trilu", [u, m.ints(-1)], upper=0))
    m.out(m.op("Trilu", [u]))                          # upper, k = 0


@case("where_bool_mask_both_params")
def _(m):
    mask = m.x((3, 4), values=m.rng.integers(0, 2, (MB, 3, 4)), elem=BOOL)
    t = m.op("Add", [m.x((3, 4)), m.param((3, 4))])
    m.out(m.op("Where", [mask, t, m.param((4,))]))


@case("where_equal_mask_bcast")
def _(m):
    lab = m.x((1,), values=[[1], [2]], elem=I64)
    cond = m.op("Equal", [lab, m.ints([[0, 1, 2]])])    # (2,3) bool
    f = m.op("Mul", [m.x((3,)), m.param((1, 3))])
    m.out(m.op("Where", [cond, m.param(()), f]))


@case("where_const_mask_scalar_branch")
def _(m):
    cond = m.const(np.array([[True], [False], [True]]), np.bool_)   # (3,1)
    t = m.op("Mul", [m.x((3, 4)), m.param((4,))])
    m.out(m.op("Where", [cond, t, m.param((3, 1))]))


@case("cast_double_to_double")
def _(m):
    u = m.op("Add", [m.x((3,)), m.param((3,))])
    m.out(m.op("Cast", [u], to=D))


@case("cast_int64_to_double")
def _(m):
    idx = m.x((3,), values=[[1, -2, 3], [0, 4, 2]], elem=I64)
    f = m.op("Cast", [idx], to=D)
    m.out(m.op("Mul", [f, m.param((3,))]))


@case("expand")
def _(m):
    e = m.op("Expand", [m.param((3, 1)), m.ints([MB, 3, 4])])
    m.out(m.op("Mul", [e, m.x((3, 4))]))
    m.out(m.op("Expand", [m.op("Add", [m.x((1, 4)), m.param((4,))]),
                          m.ints([3, 1])]))            # (2,1,4) -> (2,3,4)


@case("identity")
def _(m):
    u = m.op("Add", [m.x((3,)), m.param((3,))])
    m.out(m.op("Identity", [u]))


@case("dropout_ratio0_training")
def _(m):
    u = m.op("Mul", [m.x((3,)), m.param((3,))])
    m.out(m.op("Dropout", [u, m.const(0.0), m.const(True, np.bool_)]))


@case("dropout_default_inference")
def _(m):
    u = m.op("Add", [m.x((3,)), m.param((3,))])
    m.out(m.op("Dropout", [u]))


# -- Pad, Tile, Flatten, GatherElements, GatherND, ScatterND, ScatterElements,
# CumSum -----------------------------------------------------------------------
# (Pad's wrap mode needs opset 19, which these opset-17 cases cannot use.)

@case("pad_constant_negative_pads")
def _(m):
    u = m.op("Add", [m.x((3, 5)), m.param((3, 5))])
    m.out(m.op("Pad", [u, m.ints([0, 1, -1, 0, -2, 2]), m.const(0.5)],
               mode="constant"))


@case("pad_reflect")
def _(m):
    u = m.op("Mul", [m.x((3, 5)), m.param((3, 5))])
    m.out(m.op("Pad", [u, m.ints([0, 2, 3, 0, 1, 4])], mode="reflect"))


@case("pad_edge_negative_pads")
def _(m):
    u = m.op("Add", [m.x((3, 5)), m.param((3, 5))])
    m.out(m.op("Pad", [u, m.ints([0, 2, -1, 0, -1, 3])], mode="edge"))


@case("pad_param_default_value")
def _(m):
    p = m.op("Pad", [m.param((2, 3)), m.ints([1, 0, 0, 2])])   # (3,5)
    m.out(m.op("Mul", [m.x((3, 5)), p]))


@case("tile")
def _(m):
    u = m.op("Add", [m.x((2, 3)), m.param((2, 3))])
    m.out(m.op("Tile", [u, m.ints([1, 2, 3])]))
    t = m.op("Tile", [m.param((1, 2)), m.ints([3, 2])])        # (3,4)
    m.out(m.op("Mul", [m.x((3, 4)), t]))


@case("flatten")
def _(m):
    u = m.op("Mul", [m.x((3, 4)), m.param((3, 4))])
    m.out(m.op("Flatten", [u], axis=-1))


@case("gather_elements_repeated_negative")
def _(m):
    u = m.op("Add", [m.x((3, 4)), m.param((3, 4))])
    idx = m.ints(np.array([[[0, 3, 3, -1, 0], [1, 1, 1, 2, -4], [2, 0, 3, 3, 1]],
                           [[3, 3, 3, 3, 0], [0, -2, 2, 1, 1], [1, 0, 0, 0, 2]]]))
    m.out(m.op("GatherElements", [u, idx], axis=2))


@case("gather_elements_axis0_param")
def _(m):
    g = m.op("GatherElements", [m.param((4, 3)),
                                m.ints([[0, 3, 1], [0, 0, -1]])], axis=0)
    m.out(m.op("Mul", [m.x((2, 3)), g]))


@case("scatter_nd_both_operands")
def _(m):
    data = m.op("Add", [m.x((4, 3)), m.param((4, 3))])
    upd = m.op("Mul", [m.param((3, 3)), m.const(np.full((3, 3), 1.5))])
    m.out(m.op("ScatterND", [data, m.ints([[0, 1], [1, 3], [0, 0]]), upd]))


@case("scatter_nd_add_repeated")
def _(m):
    data = m.op("Mul", [m.x((4, 3)), m.param((4, 3))])
    m.out(m.op("ScatterND", [data, m.ints([[1, 2, 0], [1, 2, 0], [0, -1, 1]]),
                             m.param((3,))], reduction="add"))


@case("scatter_elements_both_operands")
def _(m):
    data = m.op("Add", [m.x((4, 3)), m.param((4, 3))])           # (2,4,3)
    upd = m.op("Mul", [m.param((2, 2, 3)), m.const(np.full((2, 2, 3), 1.5))])
    idx = m.ints(np.array([[[0, 3, 1], [2, 1, -1]],
                           [[-1, 0, 2], [1, 2, 0]]]))
    m.out(m.op("ScatterElements", [data, idx, upd], axis=1))


@case("scatter_elements_add_repeated")
def _(m):
    data = m.op("Mul", [m.x((4, 3)), m.param((4, 3))])           # (2,4,3)
    idx = m.ints(np.array([[[2, 2, -1], [0, -3, 1]],
                           [[1, 1, 1], [-1, 0, 2]]]))
    m.out(m.op("ScatterElements", [data, idx, m.param((2, 2, 3))], axis=-1,
               reduction="add"))


@case("gather_nd")
def _(m):
    u = m.op("Add", [m.x((4, 3)), m.param((4, 3))])
    m.out(m.op("GatherND", [u, m.ints([[0, 1], [1, -1], [0, 1]])]))


@case("cumsum_inclusive_forward")
def _(m):
    u = m.op("Add", [m.x((3, 4)), m.param((3, 4))])
    m.out(m.op("CumSum", [u, m.ints(2)]))


@case("cumsum_exclusive")
def _(m):
    u = m.op("Mul", [m.x((3, 4)), m.param((3, 4))])
    m.out(m.op("CumSum", [u, m.ints(-1)], exclusive=1))


@case("cumsum_reverse")
def _(m):
    u = m.op("Add", [m.x((3, 4)), m.param((3, 4))])
    m.out(m.op("CumSum", [u, m.ints([1])], reverse=1))


@case("cumsum_exclusive_reverse")
def _(m):
    u = m.op("Mul", [m.x((3, 4)), m.param((3, 4))])
    m.out(m.op("CumSum", [u, m.ints(-2)], exclusive=1, reverse=1))


# -- SoftmaxCrossEntropyLoss -------------------------------------------------------

def _sce(reduction, ignore, labels, c=4, extra=None):
    def fn(m):
        u = m.op("Mul", [m.x((c,) + (extra or ())), m.param((c,) + (extra or ()))])
        u = m.op("Add", [u, m.param((c,) + tuple(1 for _ in extra or ()))])
        lab = m.x(np.asarray(labels).shape[1:], values=labels, elem=I64)
        attrs = {"reduction": reduction}
        if ignore is not None:
            attrs["ignore_index"] = ignore
        m.out(m.op("SoftmaxCrossEntropyLoss", [u, lab], **attrs))
    return fn


case("sce_mean_2d")(_sce("mean", None, [3, 1]))
case("sce_sum_2d")(_sce("sum", None, [0, 3]))
case("sce_mean_ignore_hit")(_sce("mean", 2, [[2, 0, 3], [1, 2, 2]], extra=(3,)))
case("sce_sum_ignore_hit_negative")(_sce("sum", -1, [[-1, 0, 3], [1, -1, 3]],
                                         extra=(3,)))
case("sce_mean_ignore_hit_4d")(_sce("mean", 0, [[[0, 1], [2, 0]], [[3, 3], [0, 1]]],
                                    extra=(2, 2)))
case("sce_none_ignore_hit")(_sce("none", 1, [[1, 0, 3], [2, 1, 1]], extra=(3,)))


# The integer paths of real exports: the causal-LM labels shift
# (F.pad(labels, (0, 1), value=-100)[:, 1:] into the loss's ignore_index) and
# position ids from a cumulative sum of the attention mask.

@case("pad_int64_labels_shift_sce")
def _(m):
    lab = m.x((4,), values=[[1, 2, 3, 0], [2, 0, 1, 3]], elem=I64)
    shifted = m.op("Pad", [lab, m.ints([0, 0, 0, 1]), m.ints(-100)])
    shifted = m.op("Slice", [shifted, m.ints([1]), m.ints([5]), m.ints([1])])
    scores = m.op("Mul", [m.x((4, 4)), m.param((4, 4))])
    m.out(m.op("SoftmaxCrossEntropyLoss", [scores, shifted], reduction="mean",
               ignore_index=-100))


@case("cumsum_int64_position_ids_gather")
def _(m):
    mask = m.x((5,), values=[[1, 1, 1, 0, 1], [0, 1, 1, 1, 1]], elem=I64)
    pos = m.op("Sub", [m.op("CumSum", [mask, m.ints(-1)]), m.ints(1)])
    emb = m.op("Gather", [m.param((6, 3)), pos])
    m.out(m.op("Mul", [emb, m.x((5, 3))]))
# -- comparisons, logic, float math, Max/Min, Clip, Gelu ----------------------------

for _op, _xd, _pd in [("Cos", "normal", "normal"), ("Sin", "normal", "normal"),
                      ("Abs", "sign", "small")]:
    case(_op.lower())(_unary(_op, _xd, _pd))


@case("sign_floor_ceil_round_zero_gradient")
def _(m):
    # Piecewise constant: zero gradient away from the steps (values stay
    # 0.2 away from integers and half-integers).
    x = m.x((3,), values=[[0.3, 1.7, -2.2], [-0.8, 2.3, 0.1]])
    u = m.op("Add", [x, m.param((3,), values=[0.0, 0.05, -0.05])])
    for op in ("Sign", "Floor", "Ceil", "Round"):
        m.out(m.op(op, [u]))
    m.out(m.op("Mul", [u, m.param((3,))]))     # and a path with a gradient


case("max_bcast")(_binary("Max"))
case("min_bcast_swapped")(_binary("Min", swap=True))


@case("max_min_variadic_three")
def _(m):
    a = m.op("Add", [m.x((3,)), m.param((3,))])
    m.out(m.op("Max", [a, m.param((1,)), m.param((MB, 1))]))
    m.out(m.op("Min", [m.param((3,)), a, m.param(())]))
    m.out(m.op("Max", [a]))                            # one input: identity


@case("max_min_constant_operand")
def _(m):
    # A mask-style Max against a very negative constant, and relu as
    # Max(u, 0): the gradient goes to u where it is selected, none to the
    # constant.
    u = m.op("Mul", [m.x((4,), "sign"), m.param((4,), "pos")])
    m.out(m.op("Max", [u, m.const(-3.4e38)]))
    m.out(m.op("Max", [u, m.const(0.0)]))
    m.out(m.op("Min", [m.const(np.array([0.25, -0.25, 0.5, -0.5])), u]))


@case("max_min_ties_split_half")
def _(m):
    # Equal operands: torch.maximum/minimum give each half the gradient,
    # which is also the central finite difference at the tie.
    t = m.x((3,), values=[[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    a = m.op("Add", [t, m.param((3,), values=[0.5, -1.0, 2.0])])
    b = m.op("Add", [t, m.param((3,), values=[0.5, -1.0, 2.0])])
    m.out(m.op("Max", [a, b]))
    m.out(m.op("Min", [a, b]))
    m.out(m.op("Max", [a, a]))                         # a tie with itself


@case("clip_constant_bounds")
def _(m):
    # Values 0.05 or more away from the bounds (the boundary convention,
    # current torch.clamp's 0 at a bound, is checked by the runtime kernel
    # tests and clip_boundary_matches_reference).
    x = m.x((4,), values=[[-2.0, -0.3, 0.2, 1.5], [0.45, -0.6, 0.7, -0.1]])
    u = m.op("Add", [x, m.param((4,), values=[0.0, 0.05, -0.05, 0.0])])
    m.out(m.op("Clip", [u, m.const(-0.5), m.const(0.5)]))
    m.out(m.op("Clip", [u, "", m.const(0.3)]))
    m.out(m.op("Clip", [u, m.const(0.0)]))
    m.out(m.op("Clip", [u]))


@case("clip_boundary_matches_reference")
def _(m):
    # Elements exactly at the bounds, where the loss has no derivative: the
    # gradient is compared with the reference's autograd instead of a
    # finite difference: 0 at a constant bound (current torch.clamp), half
    # at a computed bound (a max/min tie, torch.clamp with tensor bounds).
    x = m.x((4,), values=[[-0.5, 0.5, 0.25, 2.0], [0.5, -0.5, -2.0, 0.0]])
    u = m.op("Mul", [x, m.param((4,), values=[1.0, 1.0, 1.0, 1.0])])
    m.out(m.op("Clip", [u, m.const(-0.5), m.const(0.5)]))
    m.out(m.op("Clip", [u, m.param((), values=0.25)]))
    m.special = ("autograd",)


@case("clip_computed_bound")
def _(m):
    # A bound that is a parameter lowers to Max/Min: both get a gradient.
    u = m.op("Mul", [m.x((4,), "sign"), m.param((4,), "pos")])
    m.out(m.op("Clip", [u, m.param((), values=-0.25), m.const(0.75)]))


@case("compare_masks_into_where")
def _(m):
    # Masks from comparisons, logic and IsNaN/IsInf carry no gradient; the
    # gradient reaches the Where branches they select.
    u = m.op("Mul", [m.x((4,)), m.param((4,))])
    v = m.op("Add", [m.x((4,)), m.param((4,))])
    lt = m.op("Less", [u, v])
    ge = m.op("GreaterOrEqual", [u, m.const(0.0)])
    both = m.op("And", [lt, m.op("Not", [ge])])
    either = m.op("Or", [m.op("Xor", [lt, ge]), m.op("IsNaN", [u])])
    m.out(m.op("Where", [lt, u, v]))
    m.out(m.op("Where", [both, v, m.const(1.5)]))
    m.out(m.op("Where", [either, u, m.op("Neg", [v])]))
    m.out(m.op("Where", [m.op("IsInf", [v]), m.const(0.0), v]))
    m.out(m.op("Where", [m.op("LessOrEqual", [u, m.const(0.5)]), u, v]))
    m.out(m.op("Where", [m.op("Equal", [lt, ge]), m.param((1,)), u]))  # bools
    idx = m.x((4,), values=[[0, 1, 2, 3], [3, 2, 1, 0]], elem=I64)
    gt = m.op("Greater", [idx, m.ints(1)])
    m.out(m.op("Where", [gt, u, v]))


@case("castlike_double")
def _(m):
    u = m.op("Add", [m.x((3,)), m.param((3,))])
    m.out(m.op("CastLike", [u, m.const(0.0)]))
    idx = m.x((3,), values=[[1, -2, 3], [0, 4, 2]], elem=I64)
    m.out(m.op("Mul", [m.op("CastLike", [idx, u]), m.param((3,))]))


@case("gelu_erf_decomposition")
def _(m):
    # What torch 1.13 exports for nn.GELU() at opset 17.
    u = m.op("Mul", [m.x((4,)), m.param((4,))])
    e = m.op("Erf", [m.op("Div", [u, m.const(1.4142135623730951)])])
    m.out(m.op("Mul", [m.op("Mul", [u, m.op("Add", [e, m.const(1.0)])]),
                       m.const(0.5)]))


def _gelu(approximate):
    def fn(m):
        m.opset = 20
        u = m.op("Mul", [m.x((4,)), m.param((4,))])
        u = m.op("Add", [u, m.param((4,))])
        m.out(m.op("Gelu", [u], approximate=approximate))
    return fn


case("gelu_opset20_none")(_gelu("none"))
case("gelu_opset20_tanh")(_gelu("tanh"))


# -- Dropout's mask replay (no finite difference) ------------------------------------

def _dropout_replay(ratio):
    def fn(m):
        u = m.op("Mul", [m.x((16,), "pos"), m.param((MB, 16), "pos")])
        m.out(m.op("Dropout", [u, m.const(ratio), m.const(True, np.bool_)]))
        m.special = ("dropout", ratio)
    return fn


case("dropout_p0.5_mask_replay")(_dropout_replay(0.5))
case("dropout_p0.125_mask_replay")(_dropout_replay(0.125))


# ---------------------------------------------------------------------------

def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    if p.returncode != 0:
        raise RuntimeError("%s failed (rc %d): %s" % (
            os.path.basename(cmd[0]) + " " + (cmd[1] if len(cmd) > 1 else ""),
            p.returncode, (p.stderr or p.stdout).strip()[-600:]))
    return p


def finite_difference(model, data):
    ref = OnnxTorchModel(model, dtype=torch.float64)
    fd = {}
    with torch.no_grad():
        for name, p in ref.params.items():
            flat = p.data.view(-1)
            g = np.zeros(flat.numel())
            for i in range(flat.numel()):
                v = float(flat[i])
                flat[i] = v + EPS
                lp = float(ref.loss(data))
                flat[i] = v - EPS
                lm = float(ref.loss(data))
                flat[i] = v
                g[i] = (lp - lm) / (2 * EPS)
            fd[name] = g.reshape(tuple(p.shape))
    # Autograd too, only to help diagnose a failure.
    ref.loss(data).backward()
    auto = {n: p.grad.numpy().copy() if p.grad is not None else
            np.zeros(tuple(p.shape)) for n, p in ref.params.items()}
    return fd, auto


def check_dropout(m, model, out, grads, ratio):
    """y = Dropout(x * w, ratio) in training; loss = sum(y * C). The gradient
    reveals the backward mask (dL/dw = C x mask / (1 - ratio)); the loss that
    zeroc logged must equal the one recomputed with that mask, i.e. the
    backward pass replays the forward mask."""
    (x,) = m.data.values()
    (pname,) = grads
    w0 = numpy_helper.to_array([t for t in model.graph.initializer
                                if t.name == pname][0])
    c = [numpy_helper.to_array(n.attribute[0].t) for n in model.graph.node
         if n.op_type == "Constant"][-1]
    scale = 1.0 / (1.0 - ratio)
    r = grads[pname] / (c * x)
    keep = r > 0.5 * scale
    bad = np.abs(np.where(keep, r - scale, r)) / scale
    if bad.max() > TOL:
        raise RuntimeError("gradient / (C x) is not in {0, 1/(1-ratio) = %.10g}: "
                           "max deviation %.2e, e.g. %.10g"
                           % (scale, bad.max(), r.flat[int(np.argmax(bad))]))
    if keep.all() or not keep.any():
        raise RuntimeError("degenerate mask (all kept or all dropped)")
    with open(os.path.join(out, "log.jsonl")) as f:
        logged = json.loads(f.readline())["loss"]
    expect = float(np.sum(x * w0 * keep * scale * c))
    err = max(float(bad.max()), abs(logged - expect) / max(1.0, abs(expect)))
    if err > TOL:
        raise RuntimeError("logged loss %.12g != %.12g recomputed with the "
                           "backward mask: the forward and backward masks differ"
                           % (logged, expect))
    return err, "mask keeps %d/%d" % (keep.sum(), keep.size)


def prepare(name, fn, work):
    """Builds the case's model and data under work/name."""
    d = os.path.join(work, name)
    os.makedirs(os.path.join(d, "data"))
    m = Model(name)
    fn(m)
    model = m.build()
    onnx.save(model, os.path.join(d, "model.onnx"))
    for k, v in m.data.items():
        np.save(os.path.join(d, "data", k + ".npy"), v)
    return d, m, model


def compile_and_train(d, zeroc, sgd, env):
    """zeroc compile + one SGD step; returns (compile s, train s)."""
    out = os.path.join(d, "out")
    t0 = time.time()
    run([zeroc, "compile", os.path.join(d, "model.onnx"), "-o", out,
         "--stage", "0", "--world-size", "1", "--config", sgd])
    t1 = time.time()
    cmd = [os.path.join(out, "train"), "--data", os.path.join(d, "data"),
           "--steps", "1", "--save-params", os.path.join(d, "params"),
           "--log-jsonl", os.path.join(out, "log.jsonl"), "--quiet"]
    for attempt in range(3):
        try:
            run(cmd, env=env)
            break
        except RuntimeError as e:
            # Open MPI's singleton start-up (no mpirun) has been seen to fail
            # rarely when several start at once; retry that, nothing else.
            if attempt == 2 or "MPI_Init" not in str(e):
                raise
    return t1 - t0, time.time() - t1


def check(d, m, model):
    """zeroc's gradient (initial - updated) against the finite difference."""
    grads = {}
    for t in model.graph.initializer:
        w0 = numpy_helper.to_array(t)
        w1 = np.load(os.path.join(d, "params", "rank0", t.name + ".npy"))
        if w1.dtype != np.float64 or w1.shape != w0.shape:
            raise RuntimeError("saved %s is %s%s, expected float64%s"
                               % (t.name, w1.dtype, w1.shape, w0.shape))
        grads[t.name] = w0 - w1
    if m.special and m.special[0] == "dropout":
        return check_dropout(m, model, os.path.join(d, "out"), grads,
                             m.special[1])
    fd, auto = finite_difference(model, m.data)
    if m.special and m.special[0] == "autograd":
        fd = auto     # at a kink: the reference's subgradient, not a slope
    worst, problems = 0.0, []
    for pname, g in grads.items():
        err = np.abs(g - fd[pname]) / np.maximum(1.0, np.abs(fd[pname]))
        if not err.size:
            continue
        worst = max(worst, float(err.max()))
        if err.max() > TOL:
            i = np.unravel_index(int(np.argmax(err)), err.shape)
            problems.append("%s%s: zeroc %.10g, fd %.10g, torch autograd %.10g"
                            % (pname, list(i), g[i], fd[pname][i],
                               auto[pname][i]))
    n = sum(g.size for g in grads.values())
    if problems:
        raise RuntimeError("max error %.2e over %d elements; worst: %s"
                           % (worst, n, "; ".join(problems)))
    return worst, "%d elements" % n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--zeroc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--filter", default="", help="only cases whose name "
                    "contains one of these comma-separated strings")
    ap.add_argument("--jobs", type=int, default=4, help="compile + train runs "
                    "in flight at once (they mostly wait; default 4)")
    ap.add_argument("--list", action="store_true", help="list the cases")
    args = ap.parse_args()
    names = [n for n, _ in CASES]
    assert len(set(names)) == len(names), "duplicate case names"
    if args.list:
        print("\n".join(names))
        return 0
    torch.set_num_threads(1)
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    sgd = os.path.join(args.work, "sgd.json")
    with open(sgd, "w") as f:
        # The update must be the gradient itself: no clipping (DeepSpeed
        # clips at 1.0 when the key is absent).
        json.dump({"optimizer": {"type": "SGD", "params": {"lr": 1.0}},
                   "gradient_clipping": 0.0}, f)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OPENBLAS_NUM_THREADS="1",
               OMP_NUM_THREADS="1")
    filters = [s for s in args.filter.split(",") if s]
    start = time.time()
    # Build every model first (the reference interpreter runs here, in this
    # thread), then compile and train in a pool while the finite differences
    # are computed here, case by case in order.
    jobs = []
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        for name, fn in CASES:
            if filters and not any(f in name for f in filters):
                continue
            try:
                d, m, model = prepare(name, fn, args.work)
                fut = pool.submit(compile_and_train, d, args.zeroc, sgd, env)
                jobs.append((name, None, (d, m, model), fut))
            except Exception as e:  # noqa: BLE001
                jobs.append((name, e, None, None))
        passed = failed = skipped = 0
        for name, err, built, fut in jobs:
            try:
                if err is not None:
                    raise err
                try:
                    tc, tt = fut.result()
                except RuntimeError as e:
                    # Gelu is an opset-20 op; until zeroc imports opsets
                    # 18-21 these cases are reported, not failed.
                    if "opset 20 is not supported" not in str(e):
                        raise
                    skipped += 1
                    print("SKIP %-40s zeroc does not import opset 20 yet"
                          % name)
                    continue
                worst, note = check(*built)
                passed += 1
                print("PASS %-40s max error %.1e (%s; compile %.2fs, train %.2fs)"
                      % (name, worst, note, tc, tt))
            except Exception as e:  # noqa: BLE001 - report and go on
                failed += 1
                print("FAIL %-40s %s" % (name, str(e).replace("\n", " | ")))
            sys.stdout.flush()
    print("gradcheck: %d passed, %d failed, %d skipped (%.1fs)"
          % (passed, failed, skipped, time.time() - start))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
