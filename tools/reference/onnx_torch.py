#!/usr/bin/python3
"""A small ONNX -> PyTorch interpreter for zeroc's training reference.

Loads an ONNX training graph (as exported by torch.onnx, opsets 13-21) and
evaluates it node by node with torch ops, so that autograd gives the gradients
of the loss with respect to the model's float initializers.

    from onnx_torch import OnnxTorchModel
    m = OnnxTorchModel("model.onnx", dtype=torch.float64)
    loss = m.loss({"x": x, "y": y})      # scalar tensor, differentiable
    loss.backward()                      # grads in m.params[name].grad

Rules (see README.md next to this file):
  * FLOAT / DOUBLE / FLOAT16 initializers are the parameters
    (`torch.nn.Parameter`, one per initializer name, so a tied weight used by
    several nodes is one parameter and accumulates the gradients of all uses).
    Every other initializer is a constant tensor. With the export helper's
    `zeroc.parameters` metadata (zeroc's docs/Import.md), only the listed
    "trainable" ones train, "frozen" ones are parameters with
    requires_grad=False, and every other float initializer (the "buffers")
    is a constant.
  * All floating-point values (parameters, float graph inputs, float constants,
    Cast/ConstantOfShape to a float type) are computed in ONE compute dtype,
    float32 (default) or float64.
  * Only the ops in SUPPORTED_OPS are implemented, with ONNX semantics; any
    other op (or a non-default domain) raises OnnxTorchError naming the node.
  * Nodes whose inputs are all constants (not parameters, not graph inputs)
    are evaluated once at load time (except Dropout).
"""

import os
from collections import OrderedDict as _OrderedDict

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
import torch
import torch.nn.functional as F

__all__ = ["OnnxTorchModel", "OnnxTorchError", "SUPPORTED_OPS", "InputSpec",
           "FLOAT_ELEMS", "np_dtype_of_elem"]


class OnnxTorchError(Exception):
    pass


FLOAT_ELEMS = (TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16)

_INT_TORCH = {
    TensorProto.INT64: torch.int64,
    TensorProto.INT32: torch.int32,
    TensorProto.INT16: torch.int16,
    TensorProto.INT8: torch.int8,
    TensorProto.UINT8: torch.uint8,
    TensorProto.BOOL: torch.bool,
}

_NP_OF_ELEM = {
    TensorProto.FLOAT: np.float32,
    TensorProto.DOUBLE: np.float64,
    TensorProto.FLOAT16: np.float16,
    TensorProto.INT64: np.int64,
    TensorProto.INT32: np.int32,
    TensorProto.INT16: np.int16,
    TensorProto.INT8: np.int8,
    TensorProto.UINT8: np.uint8,
    TensorProto.BOOL: np.bool_,
}


def np_dtype_of_elem(elem):
    if elem not in _NP_OF_ELEM:
        raise OnnxTorchError("unsupported element type %s"
                             % TensorProto.DataType.Name(elem))
    return np.dtype(_NP_OF_ELEM[elem])


INT64_MAX = 2 ** 63 - 1

SUPPORTED_OPS = (
    "Gemm", "MatMul", "Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Reciprocal",
    "Neg", "Relu", "Tanh", "Sigmoid", "Erf", "Exp", "Log", "ReduceMean",
    "ReduceSum", "ReduceMax", "Softmax", "LogSoftmax", "LayerNormalization",
    "Gather", "Reshape", "Transpose", "Unsqueeze", "Squeeze", "Split",
    "Concat",
    "Slice", "Trilu", "Equal", "Where", "Cast", "Constant", "ConstantOfShape",
    "Shape", "Expand", "Identity", "Dropout", "SoftmaxCrossEntropyLoss",
    # comparisons, logic, float math, Max/Min, Clip, Gelu, CastLike
    "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or", "Xor",
    "Not", "IsNaN", "IsInf", "Cos", "Sin", "Abs", "Sign", "Floor", "Ceil",
    "Round", "Max", "Min", "Clip", "Gelu", "CastLike",
    "SplitToSequence", "SequenceAt", "SequenceConstruct", "SequenceEmpty",
    "SequenceLength", "SequenceInsert", "SequenceErase", "ConcatFromSequence",
    # convolution, pooling, batch norm
    "Conv", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool",
    "BatchNormalization",
    # data movement and scans (op_pad ... op_cumsum)
    "Pad", "Tile", "Range", "Flatten", "GatherElements", "GatherND",
    "ScatterND", "ScatterElements", "CumSum", "NonZero", "OneHot",
    "ReduceMin", "ReduceProd",
)


class InputSpec(object):
    """A graph input that is not an initializer (i.e. data)."""

    def __init__(self, name, elem, shape):
        self.name = name
        self.elem = elem            # TensorProto elem type
        self.shape = shape   # list of int (static) or str/None (symbolic)

    @property
    def np_dtype(self):
        return np_dtype_of_elem(self.elem)

    @property
    def is_float(self):
        return self.elem in FLOAT_ELEMS

    def __repr__(self):
        return "InputSpec(%r, %s, %r)" % (
            self.name, TensorProto.DataType.Name(self.elem), self.shape)


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

def _ints(t):
    """A shape-like tensor (or None) as a list of python ints."""
    if t is None:
        return None
    if isinstance(t, torch.Tensor):
        return [int(v) for v in t.detach().reshape(-1).tolist()]
    return [int(v) for v in np.asarray(t).reshape(-1).tolist()]


def _scalar(t):
    if isinstance(t, torch.Tensor):
        return t.detach().reshape(-1)[0].item()
    return np.asarray(t).reshape(-1)[0].item()


def _norm_axis(a, rank, node, what="axis"):
    if rank == 0 and a in (0, -1):
        return 0
    if not -rank <= a < rank:
        raise OnnxTorchError("%s: %s %d out of range for rank %d"
                             % (_nd(node), what, a, rank))
    return a + rank if a < 0 else a


def _nd(node):
    return "node '%s' (%s)" % (node.name or "?", node.op_type)


def _opt(ins, i):
    return ins[i] if i < len(ins) else None


# ---------------------------------------------------------------------------
# op implementations: fn(ctx, node, ins, attrs) -> list of outputs
# ---------------------------------------------------------------------------

def _binary(fn):
    def op(ctx, node, ins, attrs):
        return [fn(ins[0], ins[1])]
    return op


def _div(a, b):
    if a.is_floating_point() or b.is_floating_point():
        return torch.div(a, b)
    return torch.div(a, b, rounding_mode="trunc")


def _pow(a, b):
    if a.is_floating_point():
        return [torch.pow(a, b.to(a.dtype))]
    # integer base: ONNX output type is the base type
    return [torch.pow(a.to(torch.float64), b.to(torch.float64)).to(a.dtype)]


def _unary(fn):
    def op(ctx, node, ins, attrs):
        return [fn(ins[0])]
    return op


def op_gemm(ctx, node, ins, attrs):
    a, b = ins[0], ins[1]
    c = _opt(ins, 2)
    if attrs.get("transA", 0):
        a = a.t()
    if attrs.get("transB", 0):
        b = b.t()
    alpha = attrs.get("alpha", 1.0)
    beta = attrs.get("beta", 1.0)
    y = torch.matmul(a, b)
    if alpha != 1.0:
        y = y * alpha
    if c is not None:
        y = y + (c if beta == 1.0 else c * beta)
    return [y]


def op_pow(ctx, node, ins, attrs):
    return _pow(ins[0], ins[1])


def _reduce_axes(ctx, node, ins, attrs):
    if "axes" in attrs:
        axes = list(attrs["axes"])
    else:
        axes = _ints(_opt(ins, 1))
    return axes


def _reduce(kind):
    def op(ctx, node, ins, attrs):
        x = ins[0]
        axes = _reduce_axes(ctx, node, ins, attrs)
        keep = bool(attrs.get("keepdims", 1))
        if not axes:
            if attrs.get("noop_with_empty_axes", 0):
                return [x]
            axes = list(range(x.dim()))
        if x.dim() == 0:
            return [x]
        axes = sorted({_norm_axis(a, x.dim(), node, "axes") for a in axes})
        if kind == "sum":
            return [torch.sum(x, dim=axes, keepdim=keep)]
        if kind == "mean":
            if x.is_floating_point():
                return [torch.mean(x, dim=axes, keepdim=keep)]
            return [torch.mean(x.to(torch.float64), dim=axes,
                               keepdim=keep).to(x.dtype)]
        if kind == "max":
            return [torch.amax(x, dim=axes, keepdim=keep)]
        if kind == "min":
            return [torch.amin(x, dim=axes, keepdim=keep)]
        if kind == "prod":   # torch.prod reduces one dim at a time
            for a in reversed(axes):
                x = torch.prod(x, dim=a, keepdim=keep)
            return [x]
        raise AssertionError(kind)
    return op


def _softmax(log):
    def op(ctx, node, ins, attrs):
        x = ins[0]
        f = torch.log_softmax if log else torch.softmax
        if ctx.opset >= 13:
            axis = _norm_axis(attrs.get("axis", -1), x.dim(), node)
            return [f(x, dim=axis)]
        # opset < 13: coerce to 2-D at `axis` (default 1)
        axis = _norm_axis(attrs.get("axis", 1), x.dim(), node)
        shp = x.shape
        lead = int(np.prod(shp[:axis])) if axis > 0 else 1
        return [f(x.reshape(lead, -1), dim=1).reshape(shp)]
    return op


def op_layer_norm(ctx, node, ins, attrs):
    x, scale = ins[0], ins[1]
    bias = _opt(ins, 2)
    axis = _norm_axis(attrs.get("axis", -1), x.dim(), node)
    eps = float(attrs.get("epsilon", 1e-5))
    nshape = tuple(x.shape[axis:])
    want_stats = len(node.output) > 1 and any(node.output[1:])
    if (not want_stats and tuple(scale.shape) == nshape
            and (bias is None or tuple(bias.shape) == nshape)):
        return [F.layer_norm(x, nshape, scale, bias, eps)]
    dims = list(range(axis, x.dim()))
    mean = x.mean(dim=dims, keepdim=True)
    d = x - mean
    var = (d * d).mean(dim=dims, keepdim=True)
    inv = torch.rsqrt(var + eps)
    y = d * inv * scale
    if bias is not None:
        y = y + bias
    return [y, mean, inv]


def op_gather(ctx, node, ins, attrs):
    data, idx = ins[0], ins[1]
    axis = _norm_axis(attrs.get("axis", 0), data.dim(), node)
    n = data.shape[axis]
    idx = idx.to(torch.int64)
    idx = torch.where(idx < 0, idx + n, idx)
    flat = idx.reshape(-1)
    if flat.numel() and (int(flat.min()) < 0 or int(flat.max()) >= n):
        raise OnnxTorchError("%s: index out of range [%d, %d)"
                             % (_nd(node), -n, n))
    y = torch.index_select(data, axis, flat)
    shp = tuple(data.shape[:axis]) + tuple(idx.shape) + \
        tuple(data.shape[axis + 1:])
    return [y.reshape(shp)]


def op_reshape(ctx, node, ins, attrs):
    x = ins[0]
    shape = _ints(ins[1])
    allowzero = attrs.get("allowzero", 0)
    out = []
    for i, d in enumerate(shape):
        if d == 0 and not allowzero:
            if i >= x.dim():
                raise OnnxTorchError("%s: shape[%d]=0 copies a missing dim"
                                     % (_nd(node), i))
            out.append(x.shape[i])
        else:
            out.append(d)
    return [x.reshape(out)]


def op_transpose(ctx, node, ins, attrs):
    x = ins[0]
    perm = attrs.get("perm")
    if perm is None:
        perm = list(range(x.dim()))[::-1]
    return [x.permute(*perm) if x.dim() else x]


def op_unsqueeze(ctx, node, ins, attrs):
    x = ins[0]
    axes = list(attrs["axes"]) if "axes" in attrs else _ints(ins[1])
    r = x.dim() + len(axes)
    axes = sorted(_norm_axis(a, r, node, "axes") for a in axes)
    if len(set(axes)) != len(axes):
        raise OnnxTorchError("%s: duplicate axes" % _nd(node))
    for a in axes:
        x = x.unsqueeze(a)
    return [x]


def op_squeeze(ctx, node, ins, attrs):
    x = ins[0]
    if "axes" in attrs:
        axes = list(attrs["axes"])
    else:
        axes = _ints(_opt(ins, 1))
    if axes is None:
        axes = [i for i in range(x.dim()) if x.shape[i] == 1]
    axes = sorted({_norm_axis(a, x.dim(), node, "axes") for a in axes},
                  reverse=True)
    for a in axes:
        if x.shape[a] != 1:
            raise OnnxTorchError("%s: cannot squeeze dim %d of size %d"
                                 % (_nd(node), a, x.shape[a]))
        x = x.squeeze(a)
    return [x]


def op_split(ctx, node, ins, attrs):
    x = ins[0]
    axis = _norm_axis(attrs.get("axis", 0), x.dim(), node)
    dim = x.shape[axis]
    split = _ints(_opt(ins, 1))
    if split is None and "split" in attrs:
        split = list(attrs["split"])
    nout = len(node.output)
    if split is None:
        n = attrs.get("num_outputs", nout)
        if n != nout or n < 1:
            raise OnnxTorchError("%s: num_outputs %d for %d outputs"
                                 % (_nd(node), n, nout))
        chunk = -(-dim // n)
        if ctx.opset < 18 and dim % n:
            raise OnnxTorchError("%s: dim %d not divisible into %d outputs"
                                 % (_nd(node), dim, n))
        # Split-18: chunks of ceil(dim / n), the last one smaller.
        split = [chunk] * (n - 1) + [dim - chunk * (n - 1)]
        if split[-1] < 0:
            raise OnnxTorchError("%s: dim %d cannot be split into %d chunks"
                                 % (_nd(node), dim, n))
    if sum(split) != dim:
        raise OnnxTorchError("%s: split %s does not sum to dim %d"
                             % (_nd(node), split, dim))
    return list(torch.split(x, split, dim=axis))


# Sequences (opset 11 forms) are python lists of tensors.

def _seq_position(node, pos, n, allow_end):
    p = int(_scalar(pos))
    at = p + n if p < 0 else p
    if at < 0 or at > n or (at == n and not allow_end):
        raise OnnxTorchError("%s: position %d out of range for %d tensors"
                             % (_nd(node), p, n))
    return at


def op_split_to_sequence(ctx, node, ins, attrs):
    x = ins[0]
    axis = _norm_axis(attrs.get("axis", 0), x.dim(), node)
    dim = x.shape[axis]
    split = _opt(ins, 1)
    if split is None:
        parts = list(torch.split(x, 1, dim=axis))
        if not attrs.get("keepdims", 1):
            parts = [p.squeeze(axis) for p in parts]
        return [parts]
    if split.dim() == 0:
        n = int(_scalar(split))
        sizes = [min(n, dim - at) for at in range(0, dim, n)]
    else:
        sizes = _ints(split)
    return [list(torch.split(x, sizes, dim=axis))]


def op_sequence_insert(ctx, node, ins, attrs):
    seq = list(ins[0])
    pos = _opt(ins, 2)
    at = len(seq) if pos is None else _seq_position(node, pos, len(seq), True)
    seq.insert(at, ins[1])
    return [seq]


def op_sequence_erase(ctx, node, ins, attrs):
    seq = list(ins[0])
    pos = _opt(ins, 1)
    at = len(seq) - 1 if pos is None else _seq_position(node, pos, len(seq),
                                                         False)
    del seq[at]
    return [seq]


def op_concat_from_sequence(ctx, node, ins, attrs):
    seq = ins[0]
    if attrs.get("new_axis", 0):
        axis = _norm_axis(attrs["axis"], seq[0].dim() + 1, node)
        return [torch.stack(list(seq), dim=axis)]
    axis = _norm_axis(attrs["axis"], seq[0].dim(), node)
    return [torch.cat(list(seq), dim=axis)]


SEQUENCE_OPS = {
    "SplitToSequence": op_split_to_sequence,
    "SequenceAt": lambda ctx, node, ins, attrs: [
        ins[0][_seq_position(node, ins[1], len(ins[0]), False)]],
    "SequenceConstruct": lambda ctx, node, ins, attrs: [list(ins)],
    "SequenceEmpty": lambda ctx, node, ins, attrs: [[]],
    "SequenceLength": lambda ctx, node, ins, attrs: [
        torch.tensor(len(ins[0]), dtype=torch.int64)],
    "SequenceInsert": op_sequence_insert,
    "SequenceErase": op_sequence_erase,
    "ConcatFromSequence": op_concat_from_sequence,
}


def op_concat(ctx, node, ins, attrs):
    xs = [t for t in ins if t is not None]
    axis = _norm_axis(attrs["axis"], xs[0].dim(), node)
    return [torch.cat(xs, dim=axis)]


def _slice_params(dim, start, end, step):
    """ONNX Slice clamping; returns python (start, end, step) for range()."""
    if step == 0:
        raise OnnxTorchError("Slice step 0")
    if start < 0:
        start += dim
    if end < 0:
        end += dim
    if step > 0:
        start = min(max(start, 0), dim)
        end = min(max(end, 0), dim)
    else:
        start = min(max(start, 0), dim - 1)
        end = min(max(end, -1), dim - 1)
    return start, end, step


def op_slice(ctx, node, ins, attrs):
    x = ins[0]
    if "starts" in attrs:  # opset < 10
        starts, ends = list(attrs["starts"]), list(attrs["ends"])
        axes = list(attrs["axes"]) if "axes" in attrs else None
        steps = None
    else:
        starts, ends = _ints(ins[1]), _ints(ins[2])
        axes, steps = _ints(_opt(ins, 3)), _ints(_opt(ins, 4))
    if axes is None:
        axes = list(range(len(starts)))
    if steps is None:
        steps = [1] * len(starts)
    if not (len(starts) == len(ends) == len(axes) == len(steps)):
        raise OnnxTorchError("%s: starts/ends/axes/steps lengths differ"
                             % _nd(node))
    for a, s, e, st in zip(axes, starts, ends, steps):
        a = _norm_axis(a, x.dim(), node, "axes")
        s, e, st = _slice_params(x.shape[a], s, e, st)
        if st > 0:
            idx = [slice(None)] * a + [slice(s, max(s, e), st)]
            x = x[tuple(idx)]
        else:
            sel = list(range(s, e, st))
            x = torch.index_select(
                x, a, torch.tensor(sel, dtype=torch.int64, device=x.device))
    return [x]


def op_trilu(ctx, node, ins, attrs):
    x = ins[0]
    k = _opt(ins, 1)
    k = int(_scalar(k)) if k is not None else 0
    upper = attrs.get("upper", 1)
    if x.dtype == torch.bool:
        y = (torch.triu if upper else torch.tril)(x.to(torch.uint8), k)
        return [y.to(torch.bool)]
    return [(torch.triu if upper else torch.tril)(x, k)]


def op_where(ctx, node, ins, attrs):
    c, a, b = ins
    return [torch.where(c.to(torch.bool), a, b)]


def op_cast(ctx, node, ins, attrs):
    to = attrs["to"]
    y = ins[0].to(ctx.torch_dtype(to, node))
    if to == TensorProto.FLOAT16:
        # round to half precision, keep the compute dtype
        y = ins[0].to(torch.float16).to(ctx.dtype)
    return [y]


def op_constant(ctx, node, ins, attrs):
    if "value" in attrs:
        return [ctx.tensor_from_proto(attrs["value"], node)]
    if "value_float" in attrs:
        return [torch.tensor(attrs["value_float"], dtype=ctx.dtype)]
    if "value_floats" in attrs:
        return [torch.tensor(list(attrs["value_floats"]), dtype=ctx.dtype)]
    if "value_int" in attrs:
        return [torch.tensor(attrs["value_int"], dtype=torch.int64)]
    if "value_ints" in attrs:
        return [torch.tensor(list(attrs["value_ints"]), dtype=torch.int64)]
    raise OnnxTorchError("%s: unsupported Constant attribute(s) %s"
                         % (_nd(node), sorted(attrs)))


def op_constant_of_shape(ctx, node, ins, attrs):
    shape = _ints(ins[0])
    if "value" in attrs:
        v = ctx.tensor_from_proto(attrs["value"], node).reshape(-1)
        return [torch.full(shape, v[0].item(), dtype=v.dtype)]
    return [torch.zeros(shape, dtype=ctx.dtype)]


def op_shape(ctx, node, ins, attrs):
    shp = list(ins[0].shape)
    r = len(shp)
    start = attrs.get("start", 0)
    end = attrs.get("end", r)
    start = min(max(start + r if start < 0 else start, 0), r)
    end = min(max(end + r if end < 0 else end, 0), r)
    return [torch.tensor(shp[start:end], dtype=torch.int64)]


def op_expand(ctx, node, ins, attrs):
    x = ins[0]
    shape = _ints(ins[1])
    out = torch.broadcast_shapes(tuple(x.shape), tuple(shape))
    return [x.expand(out)]


def op_identity(ctx, node, ins, attrs):
    return [ins[0]]


def op_dropout(ctx, node, ins, attrs):
    x = ins[0]
    r = _opt(ins, 1)
    ratio = float(_scalar(r)) if r is not None else \
        float(attrs.get("ratio", 0.5))
    t = _opt(ins, 2)
    training = bool(_scalar(t)) if t is not None else False
    if ctx.no_dropout or not training or ratio == 0.0:
        outs = [x]
        if len(node.output) > 1 and node.output[1]:
            outs.append(torch.ones(x.shape, dtype=torch.bool))
        return outs
    if ratio >= 1.0:
        mask = torch.zeros(x.shape, dtype=torch.bool)
        return [x * 0, mask]
    mask = torch.rand(x.shape, generator=ctx.generator,
                      dtype=torch.float64) >= ratio
    y = x * mask.to(x.dtype) * (1.0 / (1.0 - ratio))
    return [y, mask]


# -- convolution, pooling, batch norm ---------------------------------------
#
# Written from the ONNX spec: explicit (possibly asymmetric) pads are applied
# with F.pad, then torch's op runs unpadded; auto_pad follows ONNX's
# SAME_UPPER / SAME_LOWER rule (output ceil(in / stride)).

def _window(node, attrs, x, kernel):
    n = x.dim() - 2
    if n < 1 or n > 3:
        raise OnnxTorchError("%s: input must have 1 to 3 spatial dims"
                             % _nd(node))
    strides = list(attrs.get("strides", [1] * n))
    dilations = list(attrs.get("dilations", [1] * n))
    auto_pad = attrs.get("auto_pad", "NOTSET")
    if auto_pad in ("NOTSET", ""):
        pads = list(attrs.get("pads", [0] * (2 * n)))
    elif auto_pad == "VALID":
        pads = [0] * (2 * n)
    elif auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        pads = [0] * (2 * n)
        for i in range(n):
            size = x.shape[2 + i]
            out = -(-size // strides[i])
            ek = (kernel[i] - 1) * dilations[i] + 1
            total = max(0, (out - 1) * strides[i] + ek - size)
            small, big = total // 2, total - total // 2
            upper = auto_pad == "SAME_UPPER"
            pads[i], pads[i + n] = (small, big) if upper else (big, small)
    else:
        raise OnnxTorchError("%s: bad auto_pad %r" % (_nd(node), auto_pad))
    return strides, dilations, pads


def _pad_spatial(x, pads, value):
    n = x.dim() - 2
    spec = []
    for i in reversed(range(n)):       # F.pad lists the last dim first
        spec += [pads[i], pads[i + n]]
    if not any(spec):
        return x
    return F.pad(x, spec, value=value)


def op_conv(ctx, node, ins, attrs):
    x, w = ins[0], ins[1]
    b = _opt(ins, 2)
    kernel = list(w.shape[2:])
    strides, dilations, pads = _window(node, attrs, x, kernel)
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[x.dim() - 2]
    return [conv(_pad_spatial(x, pads, 0.0), w, b, stride=strides,
                 dilation=dilations, groups=int(attrs.get("group", 1)))]


def op_max_pool(ctx, node, ins, attrs):
    x = ins[0]
    if len(node.output) > 1 and node.output[1]:
        raise OnnxTorchError("%s: MaxPool's Indices output is not supported"
                             % _nd(node))
    kernel = list(attrs["kernel_shape"])
    strides, dilations, pads = _window(node, attrs, x, kernel)
    pool = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[x.dim() - 2]
    dtype = x.dtype   # integer inputs (int8/uint8) pool exactly in double
    y = pool(_pad_spatial(x.double() if not x.is_floating_point() else x,
                          pads, float("-inf")), kernel, strides, 0,
             dilations, ceil_mode=bool(attrs.get("ceil_mode", 0)))
    return [y.to(dtype)]


def op_avg_pool(ctx, node, ins, attrs):
    x = ins[0]
    kernel = list(attrs["kernel_shape"])
    strides, dilations, pads = _window(node, attrs, x, kernel)
    if any(d != 1 for d in dilations):
        raise OnnxTorchError("%s: AveragePool dilations are not supported"
                             % _nd(node))
    pool = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}[x.dim() - 2]
    ceil = bool(attrs.get("ceil_mode", 0))
    # The window sum over the zero-padded input, divided by the count of the
    # positions that count (padding included or not).
    include = bool(attrs.get("count_include_pad", 0))
    ones = torch.ones((1, 1) + tuple(x.shape[2:]), dtype=x.dtype)

    def window_sum(t, v):
        t = _pad_spatial(t, pads, v)
        if x.dim() == 3:   # avg_pool1d has no divisor_override: as 2-D
            return F.avg_pool2d(t.unsqueeze(2), [1] + kernel, [1] + strides,
                                0, ceil_mode=ceil, count_include_pad=True,
                                divisor_override=1).squeeze(2)
        return pool(t, kernel, strides, 0, ceil_mode=ceil,
                    count_include_pad=True, divisor_override=1)
    total = window_sum(x, 0.0)
    count = window_sum(ones, 1.0 if include else 0.0)
    return [total / count]


def op_global_pool(kind):
    def op(ctx, node, ins, attrs):
        x = ins[0]
        dims = list(range(2, x.dim()))
        if kind == "mean":
            return [x.mean(dim=dims, keepdim=True)]
        return [torch.amax(x, dim=dims, keepdim=True)]
    return op


def op_batch_norm(ctx, node, ins, attrs):
    x, scale, bias, mean, var = ins[:5]
    eps = float(attrs.get("epsilon", 1e-5))
    momentum = float(attrs.get("momentum", 0.9))
    if ctx.opset >= 14:
        training = bool(attrs.get("training_mode", 0))
    else:
        training = len(node.output) > 1
    shape = (1, -1) + (1,) * (x.dim() - 2)
    dims = [0] + list(range(2, x.dim()))
    if not training:
        y = (x - mean.reshape(shape)) / torch.sqrt(var.reshape(shape) + eps)
        return [y * scale.reshape(shape) + bias.reshape(shape)]
    bmean = x.mean(dim=dims, keepdim=True)
    bvar = ((x - bmean) ** 2).mean(dim=dims, keepdim=True)
    y = (x - bmean) / torch.sqrt(bvar + eps)
    y = y * scale.reshape(shape) + bias.reshape(shape)
    # ONNX's running statistics use the biased batch variance (PyTorch's
    # running_var uses the unbiased one); zeroc does not model them.
    return [y, mean * momentum + bmean.reshape(-1) * (1 - momentum),
            var * momentum + bvar.reshape(-1) * (1 - momentum)]


def op_sce(ctx, node, ins, attrs):
    scores, labels = ins[0], ins[1]
    weights = _opt(ins, 2)
    reduction = attrs.get("reduction", "mean")
    if reduction not in ("mean", "sum", "none"):
        raise OnnxTorchError("%s: unsupported reduction %r"
                             % (_nd(node), reduction))
    if scores.dim() < 2:
        raise OnnxTorchError("%s: scores must have rank >= 2" % _nd(node))
    labels = labels.to(torch.int64)
    lp = torch.log_softmax(scores, dim=1)
    if "ignore_index" in attrs:
        keep = labels != int(attrs["ignore_index"])
        safe = torch.where(keep, labels, torch.zeros_like(labels))
    else:
        keep = None
        safe = labels
    C = scores.shape[1]
    if safe.numel() and (int(safe.min()) < 0 or int(safe.max()) >= C):
        raise OnnxTorchError("%s: label out of range [0, %d)"
                             % (_nd(node), C))
    nll = -lp.gather(1, safe.unsqueeze(1)).squeeze(1)
    w = None
    if weights is not None:
        w = weights[safe]
    if keep is not None:
        kf = keep.to(nll.dtype)
        w = kf if w is None else w * kf
    loss = nll if w is None else nll * w
    if reduction == "none":
        out = loss
    elif reduction == "sum":
        out = loss.sum()
    else:
        denom = w.sum() if w is not None else float(loss.numel())
        out = loss.sum() / denom
    return [out, lp]



# -- data movement and scans: Pad, Tile, Range, Flatten, GatherElements,
# -- GatherND, ScatterND, CumSum

def _pad_source(o, n, mode):
    """Input position that padded position o (shifted by the begin count)
    reads, or -1 for constant padding (graph.pad's semantics)."""
    if 0 <= o < n:
        return o
    if mode == "edge":
        return 0 if o < 0 else n - 1
    if mode == "reflect":
        if n == 1:
            return 0
        period = 2 * (n - 1)
        q = o % period
        return q if q < n else period - q
    if mode == "wrap":
        return o % n
    return -1


def op_pad(ctx, node, ins, attrs):
    x = ins[0]
    mode = attrs.get("mode", b"constant")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    pads = _ints(ins[1])
    value = _opt(ins, 2)
    value = _scalar(value) if value is not None else 0
    axes = _ints(_opt(ins, 3))
    r = x.dim()
    if axes is None:
        axes = list(range(r))
    axes = [_norm_axis(a, r, node, "axes") for a in axes]
    if len(pads) != 2 * len(axes):
        raise OnnxTorchError("%s: pads has %d entries for %d axes"
                             % (_nd(node), len(pads), len(axes)))
    n = len(axes)
    for i, a in enumerate(axes):
        lo, hi = pads[i], pads[i + n]
        size = x.shape[a]
        src = [_pad_source(o - lo, size, mode) for o in range(lo + size + hi)]
        idx = torch.tensor([max(s, 0) for s in src], dtype=torch.int64)
        y = torch.index_select(x, a, idx) if size else \
            torch.zeros(x.shape[:a] + (len(src),) + x.shape[a + 1:],
                        dtype=x.dtype)
        if any(s < 0 for s in src):
            keep = torch.tensor([s >= 0 for s in src])
            shape = [1] * r
            shape[a] = len(src)
            fill = torch.full((), value, dtype=x.dtype)
            y = torch.where(keep.reshape(shape), y, fill)
        x = y
    return [x]


def op_tile(ctx, node, ins, attrs):
    reps = _ints(ins[1])
    if len(reps) != ins[0].dim():
        raise OnnxTorchError("%s: repeats has %d entries for rank %d"
                             % (_nd(node), len(reps), ins[0].dim()))
    return [ins[0].repeat(*reps) if reps else ins[0]]


def op_range(ctx, node, ins, attrs):
    start, limit, delta = (_scalar(t) for t in ins)
    return [torch.arange(start, limit, delta, dtype=ins[0].dtype)]


def op_flatten(ctx, node, ins, attrs):
    x = ins[0]
    r = x.dim()
    axis = attrs.get("axis", 1)
    if not -r <= axis <= r:
        raise OnnxTorchError("%s: axis %d out of range" % (_nd(node), axis))
    axis = axis + r if axis < 0 else axis
    outer = int(np.prod(x.shape[:axis])) if axis else 1
    return [x.reshape(outer, -1) if x.numel() else
            x.reshape(outer, int(np.prod(x.shape[axis:])))]


def _norm_indices(idx, size, node):
    idx = idx.to(torch.int64)
    if idx.numel() and (int(idx.min()) < -size or int(idx.max()) >= size):
        raise OnnxTorchError("%s: index out of range [%d, %d)"
                             % (_nd(node), -size, size))
    return torch.where(idx < 0, idx + size, idx)


def op_gather_elements(ctx, node, ins, attrs):
    x, idx = ins
    axis = _norm_axis(attrs.get("axis", 0), x.dim(), node)
    return [torch.gather(x, axis, _norm_indices(idx, x.shape[axis], node))]


def _nd_index(x, idx, node):
    k = idx.shape[-1]
    return tuple(_norm_indices(idx[..., j], x.shape[j], node)
                 for j in range(k))


def op_gather_nd(ctx, node, ins, attrs):
    x, idx = ins
    b = attrs.get("batch_dims", 0)
    if b == 0:
        return [x[_nd_index(x, idx, node)]]
    # batch_dims b: the leading b dims of data and indices pair up.
    lead = tuple(x.shape[:b])
    xs = x.reshape((-1,) + tuple(x.shape[b:]))
    ids = idx.reshape((-1,) + tuple(idx.shape[b:]))
    outs = [xs[i][_nd_index(xs[i], ids[i], node)] for i in range(xs.shape[0])]
    y = torch.stack(outs) if outs else xs[:0]
    return [y.reshape(lead + tuple(y.shape[1:]))]


def op_scatter_nd(ctx, node, ins, attrs):
    x, idx, upd = ins
    red = attrs.get("reduction", b"none")
    red = red.decode() if isinstance(red, bytes) else red
    where = _nd_index(x, idx, node)
    if red == "none":
        return [x.index_put(where, upd)]
    if red == "add":
        return [x.index_put(where, upd, accumulate=True)]
    if red == "mul":
        y = x.clone()
        flat = [w.reshape(-1) for w in where]
        u = upd.reshape((-1,) + tuple(upd.shape[idx.dim() - 1:]))
        for t in range(u.shape[0]):
            at = tuple(int(w[t]) for w in flat)
            y[at] = y[at] * u[t]
        return [y]
    raise OnnxTorchError("%s: unsupported reduction %r" % (_nd(node), red))


_SCATTER_REDUCE = {"mul": "prod", "max": "amax", "min": "amin"}


def op_scatter_elements(ctx, node, ins, attrs):
    x, idx, upd = ins
    axis = _norm_axis(attrs.get("axis", 0), x.dim(), node)
    red = attrs.get("reduction", b"none")
    red = red.decode() if isinstance(red, bytes) else red
    where = _norm_indices(idx, x.shape[axis], node)
    if red == "none":
        return [x.scatter(axis, where, upd)]
    if red == "add":
        return [x.scatter_add(axis, where, upd)]
    if red in _SCATTER_REDUCE:
        return [x.scatter_reduce(axis, where, upd, _SCATTER_REDUCE[red])]
    raise OnnxTorchError("%s: unsupported reduction %r" % (_nd(node), red))


def op_cumsum(ctx, node, ins, attrs):
    x = ins[0]
    axis = _norm_axis(int(_scalar(ins[1])), x.dim(), node)
    if attrs.get("reverse", 0):
        x = x.flip(axis)
    y = torch.cumsum(x, axis, dtype=x.dtype)
    if attrs.get("exclusive", 0):
        zero = torch.zeros_like(y.narrow(axis, 0, 1))
        y = torch.cat([zero, y.narrow(axis, 0, y.shape[axis] - 1)], axis)
    if attrs.get("reverse", 0):
        y = y.flip(axis)
    return [y]


def op_nonzero(ctx, node, ins, attrs):
    x = ins[0]
    if x.dim() == 0:
        x = x.reshape(1)
    return [torch.nonzero(x, as_tuple=False).t().contiguous().to(torch.int64)]


def op_one_hot(ctx, node, ins, attrs):
    idx, depth, values = ins
    depth = int(_scalar(depth))
    axis = attrs.get("axis", -1)
    r = idx.dim() + 1
    if not -r <= axis < r:
        raise OnnxTorchError("%s: axis %d out of range" % (_nd(node), axis))
    axis = axis + r if axis < 0 else axis
    i = torch.trunc(idx.to(torch.float64)).to(torch.int64)
    i = torch.where(i < 0, i + depth, i)
    hot = i.unsqueeze(axis) == torch.arange(depth).reshape(
        [depth if d == axis else 1 for d in range(r)])
    return [torch.where(hot, values[1], values[0])]


_MOVEMENT_OPS = {
    "Pad": op_pad,
    "Tile": op_tile,
    "Range": op_range,
    "Flatten": op_flatten,
    "GatherElements": op_gather_elements,
    "GatherND": op_gather_nd,
    "ScatterND": op_scatter_nd,
    "ScatterElements": op_scatter_elements,
    "CumSum": op_cumsum,
    "NonZero": op_nonzero,
    "OneHot": op_one_hot,
    "ReduceMin": _reduce("min"),
    "ReduceProd": _reduce("prod"),
}
def _variadic(fn):
    def op(ctx, node, ins, attrs):
        out = ins[0]
        for t in ins[1:]:          # left to right, as zeroc chains them
            out = fn(out, t)
        return [out]
    return op


def op_is_inf(ctx, node, ins, attrs):
    x = ins[0]
    pos = bool(attrs.get("detect_positive", 1))
    neg = bool(attrs.get("detect_negative", 1))
    return [(torch.isinf(x) & ((x > 0) & pos | (x < 0) & neg))]


def op_clip(ctx, node, ins, attrs):
    x, lo, hi = ins[0], _opt(ins, 1), _opt(ins, 2)
    if lo is None and hi is None:
        return [x]

    def constant(b):
        return b is None or (b.numel() == 1 and not b.requires_grad)
    if constant(lo) and constant(hi):
        # torch.clamp with scalar bounds as PyTorch 2.x differentiates it
        # (0 at a bound; torch 1.13 gave 1 there): the gradient passes only
        # strictly inside the bounds.
        lo_v = None if lo is None else lo.reshape(()).item()
        hi_v = None if hi is None else hi.reshape(()).item()
        inside = torch.ones_like(x, dtype=torch.bool)
        if lo_v is not None:
            inside = inside & (x > lo_v)
        if hi_v is not None:
            inside = inside & (x < hi_v)
        return [torch.where(inside, x, torch.clamp(x.detach(), min=lo_v,
                                                   max=hi_v))]
    # Computed bounds: max/min (zeroc's lowering; a tie splits the gradient).
    if lo is not None:
        x = torch.maximum(x, lo.reshape(()))
    if hi is not None:
        x = torch.minimum(x, hi.reshape(()))
    return [x]


def op_gelu(ctx, node, ins, attrs):
    return [torch.nn.functional.gelu(
        ins[0], approximate=attrs.get("approximate", "none"))]


def op_cast_like(ctx, node, ins, attrs):
    elem = ctx.elem_types.get(node.input[1])
    if elem:
        return op_cast(ctx, node, ins[:1], {"to": elem})
    return [ins[0].to(ins[1].dtype)]


OPS = {
    "Gemm": op_gemm,
    "MatMul": _binary(torch.matmul),
    "Add": _binary(torch.add),
    "Sub": _binary(torch.sub),
    "Mul": _binary(torch.mul),
    "Div": _binary(_div),
    "Pow": op_pow,
    "Sqrt": _unary(torch.sqrt),
    "Reciprocal": _unary(torch.reciprocal),
    "Neg": _unary(torch.neg),
    "Relu": _unary(torch.relu),
    "Tanh": _unary(torch.tanh),
    "Sigmoid": _unary(torch.sigmoid),
    "Erf": _unary(torch.erf),
    "Exp": _unary(torch.exp),
    "Log": _unary(torch.log),
    "ReduceMean": _reduce("mean"),
    "ReduceSum": _reduce("sum"),
    "ReduceMax": _reduce("max"),
    "Softmax": _softmax(False),
    "LogSoftmax": _softmax(True),
    "LayerNormalization": op_layer_norm,
    "Gather": op_gather,
    "Reshape": op_reshape,
    "Transpose": op_transpose,
    "Unsqueeze": op_unsqueeze,
    "Squeeze": op_squeeze,
    "Split": op_split,
    "Concat": op_concat,
    "Slice": op_slice,
    "Trilu": op_trilu,
    "Equal": _binary(torch.eq),
    "Where": op_where,
    "Cast": op_cast,
    "Constant": op_constant,
    "ConstantOfShape": op_constant_of_shape,
    "Shape": op_shape,
    "Expand": op_expand,
    "Identity": op_identity,
    "Dropout": op_dropout,
    "SoftmaxCrossEntropyLoss": op_sce,
    "Less": _binary(torch.lt),
    "LessOrEqual": _binary(torch.le),
    "Greater": _binary(torch.gt),
    "GreaterOrEqual": _binary(torch.ge),
    "And": _binary(torch.logical_and),
    "Or": _binary(torch.logical_or),
    "Xor": _binary(torch.logical_xor),
    "Not": _unary(torch.logical_not),
    "IsNaN": _unary(torch.isnan),
    "IsInf": op_is_inf,
    "Cos": _unary(torch.cos),
    "Sin": _unary(torch.sin),
    "Abs": _unary(torch.abs),
    "Sign": _unary(torch.sign),
    "Floor": _unary(torch.floor),
    "Ceil": _unary(torch.ceil),
    "Round": _unary(torch.round),
    "Max": _variadic(torch.maximum),
    "Min": _variadic(torch.minimum),
    "Clip": op_clip,
    "Gelu": op_gelu,
    "CastLike": op_cast_like,
    "Conv": op_conv,
    "MaxPool": op_max_pool,
    "AveragePool": op_avg_pool,
    "GlobalAveragePool": op_global_pool("mean"),
    "GlobalMaxPool": op_global_pool("max"),
    "BatchNormalization": op_batch_norm,
}
OPS.update(SEQUENCE_OPS)
OPS.update(_MOVEMENT_OPS)
assert set(OPS) == set(SUPPORTED_OPS)

# Never folded at load time (random).
_NO_FOLD = {"Dropout"}


def _attrs(node):
    out = {}
    for a in node.attribute:
        v = helper.get_attribute_value(a)
        if isinstance(v, bytes):
            v = v.decode("utf-8")
        out[a.name] = v
    return out


# ---------------------------------------------------------------------------
# the model
# ---------------------------------------------------------------------------

class OnnxTorchModel(object):
    """Evaluates an ONNX graph with torch ops (autograd-friendly).

    Attributes:
      params       OrderedDict name -> torch.nn.Parameter, in initializer order
      inputs       list of InputSpec (graph inputs that are not initializers)
      loss_name    name of the loss output (first scalar float output)
      dtype        the float compute dtype
    """

    def __init__(self, model, dtype=torch.float32, no_dropout=False,
                 dropout_seed=0, fold_constants=True, require_loss=True):
        if isinstance(model, (str, os.PathLike)):
            self.path = str(model)
            model = onnx.load(self.path)
        else:
            self.path = None
        if dtype not in (torch.float32, torch.float64):
            raise OnnxTorchError("dtype must be torch.float32 or float64")
        self.model = model
        self.dtype = dtype
        self.no_dropout = no_dropout
        self.generator = torch.Generator()
        self.generator.manual_seed(dropout_seed)
        self.opset = 0
        for imp in model.opset_import:
            if imp.domain in ("", "ai.onnx"):
                self.opset = imp.version
        g = model.graph

        # Check ops first so that the error lists every unsupported node.
        bad = ["'%s' (%s%s)" % (n.name or "?",
                                (n.domain + "::") if n.domain not in
                                ("", "ai.onnx") else "", n.op_type)
               for n in g.node
               if n.domain not in ("", "ai.onnx") or n.op_type not in OPS]
        if bad:
            raise OnnxTorchError(
                "%d unsupported op(s): %s; supported: %s"
                % (len(bad), ", ".join(bad), ", ".join(SUPPORTED_OPS)))

        self.params = _OrderedDict()
        self.constants = {}
        self.frozen = set()
        marker = None
        for prop in model.metadata_props:
            if prop.key == "zeroc.parameters":
                import json
                marker = json.loads(prop.value)
        if marker is not None:
            self.frozen = set(marker.get("frozen", []))
            listed = set(marker.get("trainable", [])) | self.frozen
        for t in g.initializer:
            if t.data_location == TensorProto.EXTERNAL and self.path is None:
                raise OnnxTorchError("initializer '%s' has external data; "
                                     "load the model from its path" % t.name)
            arr = numpy_helper.to_array(
                t, base_dir=os.path.dirname(self.path) if self.path else "")
            if t.data_type in FLOAT_ELEMS and (marker is None
                                               or t.name in listed):
                p = torch.nn.Parameter(
                    torch.tensor(np.array(arr), dtype=dtype),
                    requires_grad=t.name not in self.frozen)
                self.params[t.name] = p
            elif t.data_type in FLOAT_ELEMS:
                self.constants[t.name] = torch.tensor(np.array(arr),
                                                      dtype=dtype)
            else:
                self.constants[t.name] = self._np_to_torch(arr, t.data_type,
                                                           t.name)
        init_names = set(self.params) | set(self.constants)
        self.inputs = []
        for vi in g.input:
            if vi.name in init_names:
                continue
            tt = vi.type.tensor_type
            shape = []
            for d in tt.shape.dim:
                if d.HasField("dim_value"):
                    shape.append(int(d.dim_value))
                else:
                    shape.append(d.dim_param or None)
            if (tt.elem_type not in FLOAT_ELEMS
                    and tt.elem_type not in _INT_TORCH):
                raise OnnxTorchError(
                    "graph input '%s' has unsupported element type %s"
                    % (vi.name, TensorProto.DataType.Name(tt.elem_type)))
            self.inputs.append(InputSpec(vi.name, tt.elem_type, shape))
        self.outputs = [o.name for o in g.output]
        # ONNX element types of the values that declare one (CastLike needs
        # its target's: a float16 target rounds, as Cast does).
        self.elem_types = {t.name: t.data_type for t in g.initializer}
        for vi in list(g.input) + list(g.value_info) + list(g.output):
            if vi.type.HasField("tensor_type"):
                self.elem_types[vi.name] = vi.type.tensor_type.elem_type
        for n in g.node:
            if n.op_type == "Constant":
                for a in n.attribute:
                    if a.name == "value":
                        self.elem_types[n.output[0]] = a.t.data_type

        self.loss_name = None
        for o in g.output:
            tt = o.type.tensor_type
            if tt.elem_type in FLOAT_ELEMS and (
                    not tt.HasField("shape") or len(tt.shape.dim) == 0):
                self.loss_name = o.name
                break
        if self.loss_name is None and require_loss:
            raise OnnxTorchError(
                "the model has no scalar float output to use as the loss "
                "(outputs: %s)" % ", ".join(self.outputs))

        self._plan = [(n, OPS[n.op_type], _attrs(n)) for n in g.node]
        for n, _, attrs in self._plan:
            if n.op_type == "Cast":
                self.torch_dtype(attrs["to"], n)
            if n.op_type == "MaxPool" and len(n.output) > 1 and n.output[1]:
                raise OnnxTorchError("%s: MaxPool's Indices output is not "
                                     "supported" % _nd(n))
        self._folded = set()
        if fold_constants:
            self._fold()

    # -- dtype handling ------------------------------------------------------

    def torch_dtype(self, elem, node=None):
        if elem in FLOAT_ELEMS:
            return self.dtype
        if elem in _INT_TORCH:
            return _INT_TORCH[elem]
        raise OnnxTorchError("%sunsupported element type %s"
                             % ((_nd(node) + ": ") if node else "",
                                TensorProto.DataType.Name(elem)))

    def _np_to_torch(self, arr, elem, what):
        dt = self.torch_dtype(elem)
        arr = np.array(arr)
        if arr.dtype == np.uint16 or arr.dtype.kind not in "biuf":
            raise OnnxTorchError("%s: unsupported element type %s"
                                 % (what, TensorProto.DataType.Name(elem)))
        # (not np.ascontiguousarray: it turns 0-d arrays into 1-d ones)
        return torch.from_numpy(np.array(arr, order="C")).to(dt)

    def tensor_from_proto(self, t, node):
        if t.data_type not in FLOAT_ELEMS and t.data_type not in _INT_TORCH:
            raise OnnxTorchError("%s: unsupported element type %s"
                                 % (_nd(node),
                                    TensorProto.DataType.Name(t.data_type)))
        return self._np_to_torch(numpy_helper.to_array(t), t.data_type,
                                 _nd(node))

    def as_input(self, spec, value):
        """Converts a feed (numpy array or tensor) to the compute tensor."""
        if isinstance(value, np.ndarray) or np.isscalar(value):
            value = np.asarray(value)
            if value.dtype.kind not in "biuf" or value.dtype == np.uint16:
                raise OnnxTorchError("input '%s': unsupported numpy dtype %s"
                                     % (spec.name, value.dtype))
            if not value.flags.writeable or not value.flags.c_contiguous:
                value = np.array(value)
            value = torch.from_numpy(value)
        return value.to(self.torch_dtype(spec.elem))

    # -- evaluation ----------------------------------------------------------

    def _fold(self):
        static = dict(self.constants)
        for node, fn, attrs in self._plan:
            if node.op_type in _NO_FOLD:
                continue
            names = [n for n in node.input if n]
            if not all(n in static for n in names):
                continue
            ins = [static[n] if n else None for n in node.input]
            with torch.no_grad():
                outs = fn(self, node, ins, attrs)
            for name, v in zip(node.output, outs):
                if name:
                    static[name] = v
            self._folded.add(id(node))
        self.constants = static

    def parameters(self):
        """The trainable parameters (frozen ones are in `params` too)."""
        return [p for n, p in self.params.items() if n not in self.frozen]

    def named_parameters(self):
        return list(self.params.items())

    def run(self, feeds, outputs=None, trace=None):
        """Evaluates the graph.  feeds: name -> numpy array or tensor for
        every data input.  Returns a dict name -> tensor for `outputs`
        (default: the graph outputs).  trace(node, ins, outs) is called after
        every evaluated node (folded nodes are not traced)."""
        env = dict(self.constants)
        env.update(self.params)
        for spec in self.inputs:
            if spec.name not in feeds:
                raise OnnxTorchError("missing feed for input '%s'"
                                     % spec.name)
            env[spec.name] = self.as_input(spec, feeds[spec.name])
        for node, fn, attrs in self._plan:
            if id(node) in self._folded:
                continue
            try:
                ins = [env[n] if n else None for n in node.input]
            except KeyError as e:
                raise OnnxTorchError("%s: input %s is not defined (graph not "
                                     "topologically sorted?)" % (_nd(node), e))
            try:
                outs = fn(self, node, ins, attrs)
            except OnnxTorchError:
                raise
            except Exception as e:  # annotate torch errors with the node
                raise OnnxTorchError("%s: %s: %s" % (_nd(node),
                                                     type(e).__name__, e))
            for name, v in zip(node.output, outs):
                if name:
                    env[name] = v
            if trace is not None:
                trace(node, ins, outs)
        want = self.outputs if outputs is None else outputs
        return {n: env[n] for n in want}

    def loss(self, feeds):
        """The scalar loss tensor (differentiable w.r.t. self.params)."""
        v = self.run(feeds, outputs=[self.loss_name])[self.loss_name]
        if v.numel() != 1:
            raise OnnxTorchError("loss output '%s' has shape %s, not a scalar"
                                 % (self.loss_name, tuple(v.shape)))
        return v.reshape(())
