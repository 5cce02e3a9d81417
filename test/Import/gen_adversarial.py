#!/usr/bin/python3
"""Hostile and edge-case ONNX models for `zeroc import`.

Usage:
  /usr/bin/python3 test/Import/gen_adversarial.py OUTDIR
  /usr/bin/python3 test/Import/gen_adversarial.py OUTDIR --check ZEROC [--only NAME,...]

The first form writes OUTDIR/adv_<name>.onnx for every case in CASES.  The
models are built directly with onnx.helper and are deliberately NOT passed
through onnx.checker: many of them are invalid on purpose.  Every file pins
ir_version 8 and (unless the case is about the opset) default-domain opset 17.

With --check, each model is then imported with `ZEROC import MODEL` (20 s
timeout, address space capped at 4 GiB so a corrupt size field cannot eat the
machine) and the result is compared with the case's expectation:

  "accept"          exit 0, nothing on stderr.
  "accept:TEXT"     the same, and the printed IR contains TEXT.
  "reject:TEXT"     exit 1, nothing on stdout, exactly one stderr line, which
                    starts with "zeroc: error: <model path>: " and contains
                    TEXT (usually "node 'NAME' (OpType)", the ONNX node,
                    input or initializer at fault).  "A && B" requires both.

Any signal, timeout, other exit code or crash marker fails the case.  One
line per model is printed, then `adversarial: N passed, M failed`; the exit
code is 1 when M > 0.  Only onnx, numpy and the standard library are used;
the output is byte-for-byte deterministic.
"""

import argparse
import os
import resource
import subprocess
import sys
import time

import numpy as np
from onnx import AttributeProto, TensorProto, helper, numpy_helper

OPSET = 17
INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
TIMEOUT_S = 20
MEMORY_LIMIT = 4 << 30          # RLIMIT_AS for each zeroc run
CRASH_MARKERS = ("Stack dump", "Assertion", "terminate called",
                 "PLEASE submit a bug report", "Segmentation fault")

# name -> (builder, expectation, extra zeroc args, max seconds or None)
CASES = {}


def case(expect, args=(), max_seconds=None):
    def register(fn):
        name = fn.__name__[len("gen_"):]
        assert name not in CASES, name
        CASES[name] = (fn, expect, list(args), max_seconds)
        return fn
    return register


def node_ref(name, op):
    return "node '%s' (%s)" % (name, op)


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------

def model(nodes, inputs, outputs, inits=(), opset=OPSET, opsets=None,
          value_info=()):
    graph = helper.make_graph(nodes, "adv", inputs, outputs,
                              initializer=list(inits),
                              value_info=list(value_info))
    if opsets is None:
        opsets = [helper.make_opsetid("", opset)]
    m = helper.make_model(graph, opset_imports=opsets,
                          producer_name="zeroc-gen_adversarial")
    m.ir_version = 8
    return m


def vi(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def X(shape=(2, 3), name="X", elem=TensorProto.FLOAT):
    return vi(name, list(shape), elem)


def LOSS():
    return vi("loss", [])


def mean(src, name="loss_mean", out="loss"):
    """ReduceMean over every axis to the scalar float output `loss`."""
    return helper.make_node("ReduceMean", [src], [out], name=name, keepdims=0)


def i64(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def f32(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.float32), name)


def const_node(out, tensor, name=None):
    return helper.make_node("Constant", [], [out], name=name or "c_" + out,
                            value=tensor)


def simple(nodes, inits=(), inputs=None, src=None):
    """X f32[2,3] -> nodes -> ReduceMean(src) -> loss."""
    nodes = list(nodes)
    src = src or nodes[-1].output[0]
    return model(nodes + [mean(src)], inputs or [X()], [LOSS()], inits)


# ---------------------------------------------------------------------------
# Reshape
# ---------------------------------------------------------------------------

@case("reject:" + node_ref("reshape0", "Reshape"))
def gen_reshape_two_minus_one():
    return simple([helper.make_node("Reshape", ["X", "shape"], ["r"], name="reshape0")],
                  [i64("shape", [-1, -1])])


@case("reject:" + node_ref("reshape0", "Reshape"))
def gen_reshape_negative_dim():
    return simple([helper.make_node("Reshape", ["X", "shape"], ["r"], name="reshape0")],
                  [i64("shape", [-2, 3])])


@case("reject:" + node_ref("reshape0", "Reshape"))
def gen_reshape_count_mismatch():
    return simple([helper.make_node("Reshape", ["X", "shape"], ["r"], name="reshape0")],
                  [i64("shape", [4, 2])])


@case("reject:" + node_ref("reshape0", "Reshape"))
def gen_reshape_nonconst_shape():
    return simple([helper.make_node("Reshape", ["X", "S"], ["r"], name="reshape0")],
                  inputs=[X(), X((2,), "S", TensorProto.INT64)])


@case("reject:" + node_ref("reshape0", "Reshape"))
def gen_reshape_zero_past_rank():
    # 0 copies the input dim, but X has no dim 2.
    return simple([helper.make_node("Reshape", ["X", "shape"], ["r"], name="reshape0")],
                  [i64("shape", [2, 3, 0])])


@case("reject:" + node_ref("reshape0", "Reshape"))
def gen_reshape_overflowing_dims():
    # 2^32 * 2^32 * 2^32 wraps int64 to 0 on the way.
    return simple([helper.make_node("Reshape", ["X", "shape"], ["r"], name="reshape0")],
                  [i64("shape", [1 << 32, 1 << 32, 1 << 32, -1])])


# ---------------------------------------------------------------------------
# Gather
# ---------------------------------------------------------------------------

@case("reject:" + node_ref("gather0", "Gather"))
def gen_gather_index_out_of_range():
    return simple([helper.make_node("Gather", ["X", "idx"], ["g"], name="gather0", axis=1)],
                  [i64("idx", [0, 3])])


@case("reject:" + node_ref("gather0", "Gather"))
def gen_gather_negative_index_out_of_range():
    return simple([helper.make_node("Gather", ["X", "idx"], ["g"], name="gather0", axis=1)],
                  [i64("idx", [-4])])


@case("reject:" + node_ref("gather0", "Gather"))
def gen_gather_axis_out_of_range():
    return simple([helper.make_node("Gather", ["X", "idx"], ["g"], name="gather0", axis=2)],
                  [i64("idx", [0])])


@case("reject:" + node_ref("gather0", "Gather"))
def gen_gather_const_data_index_out_of_range():
    # Folded on the host: data and indices are both constants.
    nodes = [helper.make_node("Gather", ["D", "idx"], ["g"], name="gather0", axis=0),
             helper.make_node("Cast", ["g"], ["f"], name="cast0", to=TensorProto.FLOAT)]
    return simple(nodes, [i64("D", [1, 2, 3]), i64("idx", [INT64_MIN])])


# ---------------------------------------------------------------------------
# Split / Slice
# ---------------------------------------------------------------------------

@case("reject:" + node_ref("split0", "Split"))
def gen_split_sizes_dont_sum():
    nodes = [helper.make_node("Split", ["X", "split"], ["a", "b"], name="split0", axis=1),
             helper.make_node("Add", ["a", "b"], ["s"], name="add0")]
    return simple(nodes, [i64("split", [1, 1])])


@case("reject:" + node_ref("split0", "Split"))
def gen_split_negative_size():
    nodes = [helper.make_node("Split", ["X", "split"], ["a", "b"], name="split0", axis=1),
             helper.make_node("ReduceSum", ["b"], ["s"], name="sum0", keepdims=0)]
    return simple(nodes, [i64("split", [4, -1])])


def _slice(starts, ends, axes=None, steps=None, data="X"):
    names = [data, "starts", "ends"]
    inits = [i64("starts", starts), i64("ends", ends)]
    if axes is not None:
        names.append("axes")
        inits.append(i64("axes", axes))
    if steps is not None:
        if axes is None:
            names.append("")
        names.append("steps")
        inits.append(i64("steps", steps))
    return helper.make_node("Slice", names, ["s"], name="slice0"), inits


@case("reject:" + node_ref("slice0", "Slice"))
def gen_slice_step_zero():
    n, inits = _slice([0], [3], [1], [0])
    return simple([n], inits)


def _const_c():
    """C = [[1,2,3],[4,5,6]] as a Constant node, so that Slice folds on the host
    (float initializers are trainable parameters, never folded)."""
    return const_node("C", helper.make_tensor("c", TensorProto.FLOAT, [2, 3],
                                              [1, 2, 3, 4, 5, 6]))


@case("accept")
def gen_slice_int64_extremes():
    n, inits = _slice([INT64_MIN, INT64_MIN], [INT64_MAX, INT64_MAX], [0, 1])
    return simple([n], inits)


@case("accept")
def gen_slice_reverse_int64_extremes():
    n, inits = _slice([INT64_MAX], [INT64_MIN], [1], [-1])
    return simple([n], inits)


@case("accept:dense<[[3.000000e+00, 2.000000e+00, 1.000000e+00], [6.000000e+00, 5.000000e+00, 4.000000e+00]]>")
def gen_slice_const_reverse_int64_extremes():
    n, inits = _slice([INT64_MAX], [INT64_MIN], [1], [-1], data="C")
    return simple([_const_c(), n], inits)


@case("accept")
def gen_slice_step_int64_max():
    # One element (index 0) per ONNX; (span + step - 1) must not overflow.
    n, inits = _slice([0], [3], [1], [INT64_MAX])
    return simple([n], inits)


@case("accept")
def gen_slice_step_int64_min():
    # One element (index 2) per ONNX; std::abs(INT64_MIN) must not be used.
    n, inits = _slice([INT64_MAX], [INT64_MIN], [1], [INT64_MIN])
    return simple([n], inits)


@case("accept:dense<[[1.000000e+00], [4.000000e+00]]>")
def gen_slice_const_step_int64_max():
    n, inits = _slice([0], [3], [1], [INT64_MAX], data="C")
    return simple([_const_c(), n], inits)


@case("accept:dense<[[3.000000e+00], [6.000000e+00]]>")
def gen_slice_const_step_int64_min():
    n, inits = _slice([INT64_MAX], [INT64_MIN], [1], [INT64_MIN], data="C")
    return simple([_const_c(), n], inits)


@case("reject:" + node_ref("slice0", "Slice"))
def gen_slice_axes_repeat():
    n, inits = _slice([0, 1], [1, 2], [1, 1])
    return simple([n], inits)


@case("reject:" + node_ref("slice0", "Slice"))
def gen_slice_axis_out_of_range():
    n, inits = _slice([0], [1], [2])
    return simple([n], inits)


# ---------------------------------------------------------------------------
# Transpose / Concat / Unsqueeze / Squeeze / Expand
# ---------------------------------------------------------------------------

@case("reject:" + node_ref("transpose0", "Transpose"))
def gen_transpose_perm_repeats():
    return simple([helper.make_node("Transpose", ["X"], ["t"], name="transpose0", perm=[0, 0])])


@case("reject:" + node_ref("transpose0", "Transpose"))
def gen_transpose_perm_wrong_length():
    return simple([helper.make_node("Transpose", ["X"], ["t"], name="transpose0", perm=[1, 0, 2])])


@case("reject:" + node_ref("transpose0", "Transpose"))
def gen_transpose_perm_out_of_range():
    return simple([helper.make_node("Transpose", ["X"], ["t"], name="transpose0", perm=[0, 5])])


@case("reject:" + node_ref("concat0", "Concat"))
def gen_concat_rank_mismatch():
    return simple([helper.make_node("Concat", ["X", "Y"], ["c"], name="concat0", axis=0)],
                  inputs=[X(), X((3,), "Y")])


@case("reject:" + node_ref("concat0", "Concat"))
def gen_concat_const_rank_mismatch():
    return simple([helper.make_node("Concat", ["A", "B"], ["c"], name="concat0", axis=0)],
                  [f32("A", [[1, 2]]), f32("B", [3, 4])])


@case("reject:" + node_ref("concat0", "Concat"))
def gen_concat_axis_out_of_range():
    return simple([helper.make_node("Concat", ["X", "X"], ["c"], name="concat0", axis=2)])


@case("reject:" + node_ref("concat0", "Concat"))
def gen_concat_no_inputs():
    return simple([helper.make_node("Concat", [], ["c"], name="concat0", axis=0)])


@case("reject:" + node_ref("unsqueeze0", "Unsqueeze"))
def gen_unsqueeze_duplicate_axes():
    return simple([helper.make_node("Unsqueeze", ["X", "axes"], ["u"], name="unsqueeze0")],
                  [i64("axes", [0, 0])])


@case("reject:" + node_ref("unsqueeze0", "Unsqueeze"))
def gen_unsqueeze_axis_out_of_range():
    return simple([helper.make_node("Unsqueeze", ["X", "axes"], ["u"], name="unsqueeze0")],
                  [i64("axes", [5])])


@case("reject:" + node_ref("squeeze0", "Squeeze"))
def gen_squeeze_non_one_dim():
    return simple([helper.make_node("Squeeze", ["X", "axes"], ["q"], name="squeeze0")],
                  [i64("axes", [0])])


@case("reject:" + node_ref("squeeze0", "Squeeze"))
def gen_squeeze_axis_out_of_range():
    return simple([helper.make_node("Squeeze", ["X", "axes"], ["q"], name="squeeze0")],
                  [i64("axes", [7])])


@case("reject:" + node_ref("expand0", "Expand"))
def gen_expand_incompatible():
    return simple([helper.make_node("Expand", ["X", "shape"], ["e"], name="expand0")],
                  [i64("shape", [2, 4])])


@case("reject:" + node_ref("expand0", "Expand"))
def gen_expand_huge():
    # 2^20 * 2^20 * 3 elements: past the importer's 2^32-element cap.
    return simple([helper.make_node("Expand", ["X", "shape"], ["e"], name="expand0")],
                  [i64("shape", [1 << 20, 1 << 20, 1, 3])])


@case("accept")
def gen_expand_const_large():
    # A valid model: a constant scalar broadcast to 4096x4096 (16M elements).
    # The Constant makes it a host-folding candidate.
    one = helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])
    return simple([const_node("one", one),
                   helper.make_node("Expand", ["one", "shape"], ["e"], name="expand0")],
                  [i64("shape", [4096, 4096])])


# ---------------------------------------------------------------------------
# Constant / ConstantOfShape / initializers
# ---------------------------------------------------------------------------

@case("reject:" + node_ref("cos0", "ConstantOfShape"))
def gen_constant_of_shape_huge():
    return simple([helper.make_node("ConstantOfShape", ["shape"], ["z"], name="cos0")],
                  [i64("shape", [1 << 20, 1 << 20])])


@case("reject:" + node_ref("cos0", "ConstantOfShape"))
def gen_constant_of_shape_negative():
    return simple([helper.make_node("ConstantOfShape", ["shape"], ["z"], name="cos0")],
                  [i64("shape", [-1, 3])])


@case("reject:" + node_ref("cos0", "ConstantOfShape"))
def gen_constant_of_shape_nonconst():
    return simple([helper.make_node("ConstantOfShape", ["S"], ["z"], name="cos0")],
                  inputs=[X((2,), "S", TensorProto.INT64)])


@case("reject:" + node_ref("const0", "Constant"))
def gen_constant_raw_data_mismatch():
    t = TensorProto(name="v", data_type=TensorProto.FLOAT, dims=[2, 3],
                    raw_data=b"\0" * 8)
    return simple([const_node("c", t, "const0"),
                   helper.make_node("Add", ["X", "c"], ["a"], name="add0")])


@case("reject:" + node_ref("const0", "Constant"))
def gen_constant_dims_overflow_int64():
    t = TensorProto(name="v", data_type=TensorProto.FLOAT,
                    dims=[1 << 40, 1 << 40, 1 << 40])
    return simple([const_node("c", t, "const0"),
                   helper.make_node("ReduceSum", ["c"], ["s"], name="sum0", keepdims=0),
                   helper.make_node("Add", ["X", "s"], ["a"], name="add0")])


@case("reject:" + node_ref("const0", "Constant"))
def gen_constant_no_value():
    return simple([helper.make_node("Constant", [], ["c"], name="const0"),
                   helper.make_node("Add", ["X", "c"], ["a"], name="add0")])


@case("reject:" + node_ref("const0", "Constant"))
def gen_constant_string_tensor():
    t = helper.make_tensor("v", TensorProto.STRING, [1], [b"hi"])
    return simple([const_node("c", t, "const0"),
                   helper.make_node("Cast", ["c"], ["cf"], name="cast0", to=TensorProto.FLOAT),
                   helper.make_node("Add", ["X", "cf"], ["a"], name="add0")])


@case("reject:initializer 'W'")
def gen_initializer_negative_dim():
    w = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[-1, 3])
    return simple([helper.make_node("Add", ["X", "W"], ["a"], name="add0")], [w])


@case("reject:initializer 'W'")
def gen_initializer_negative_dim_with_data():
    w = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[-1, 3],
                    raw_data=b"\0" * 12)
    return simple([helper.make_node("Add", ["X", "W"], ["a"], name="add0")], [w])


@case("reject:initializer 'W'")
def gen_initializer_negative_dim_reduced():
    # As above, but nothing downstream lets ONNX shape inference notice.
    w = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[-1, 3],
                    raw_data=b"\0" * 12)
    return simple([helper.make_node("ReduceSum", ["W"], ["s"], name="sum0", keepdims=0),
                   helper.make_node("Add", ["X", "s"], ["a"], name="add0")], [w])


@case("reject:initializer 'W'")
def gen_initializer_dims_overflow_with_data():
    w = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[1 << 40, 1 << 40],
                    raw_data=b"\0" * 4)
    return simple([helper.make_node("ReduceSum", ["W"], ["s"], name="sum0", keepdims=0),
                   helper.make_node("Add", ["X", "s"], ["a"], name="add0")], [w])


@case("reject:initializer 'W'")
def gen_initializer_2g_elements_one_value():
    # 2^31 floats declared, one given: must be rejected before 8 GiB is allocated.
    w = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[1 << 31],
                    float_data=[1.0])
    return simple([helper.make_node("ReduceSum", ["W"], ["s"], name="sum0", keepdims=0),
                   helper.make_node("Add", ["X", "s"], ["a"], name="add0")], [w])


@case("reject:initializer 'I'")
def gen_initializer_int_4g_elements_one_value():
    # Non-float initializers are buffers, not graph.param: a different path.
    w = TensorProto(name="I", data_type=TensorProto.INT64, dims=[1 << 16, 1 << 16],
                    int64_data=[7])
    return simple([helper.make_node("Cast", ["I"], ["f"], name="cast0", to=TensorProto.FLOAT)],
                  [w])


@case("reject:initializer 'W'")
def gen_initializer_2g_elements_no_data():
    w = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[1 << 31])
    return simple([helper.make_node("ReduceSum", ["W"], ["s"], name="sum0", keepdims=0),
                   helper.make_node("Add", ["X", "s"], ["a"], name="add0")], [w])


@case("reject:initializer 'I'")
def gen_initializer_int_4g_elements_no_data():
    # Integer initializers take the "buffer" path (not graph.param).
    w = TensorProto(name="I", data_type=TensorProto.INT64, dims=[1 << 16, 1 << 16])
    return simple([helper.make_node("Cast", ["I"], ["f"], name="cast0", to=TensorProto.FLOAT)],
                  [w])


@case("reject:initializer 'W'")
def gen_initializer_float_data_count_mismatch():
    w = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[2, 3],
                    float_data=[1, 2, 3, 4, 5])
    return simple([helper.make_node("Add", ["X", "W"], ["a"], name="add0")], [w])


@case("reject:initializer 'W'")
def gen_duplicate_initializer():
    return simple([helper.make_node("Add", ["X", "W"], ["a"], name="add0")],
                  [f32("W", np.ones((2, 3))), f32("W", np.zeros((2, 3)))])


@case("reject:initializer 'U'")
def gen_initializer_dtype_undefined():
    u = TensorProto(name="U", data_type=0, dims=[2, 3], raw_data=b"\0" * 24)
    return simple([helper.make_node("Add", ["X", "U"], ["a"], name="add0")], [u])


@case("reject:initializer 'S'")
def gen_initializer_string():
    s = helper.make_tensor("S", TensorProto.STRING, [1], [b"hello"])
    nodes = [helper.make_node("Identity", ["S"], ["s"], name="id0"),
             helper.make_node("Relu", ["X"], ["r"], name="relu0")]
    return simple(nodes, [s])


@case("reject:sparse initializer 'S'")
def gen_sparse_initializer():
    vals = helper.make_tensor("S", TensorProto.FLOAT, [1], [5.0])
    idx = helper.make_tensor("S_idx", TensorProto.INT64, [1], [4])
    sp = helper.make_sparse_tensor(vals, idx, [2, 3])
    m = simple([helper.make_node("Add", ["X", "S"], ["a"], name="add0")])
    m.graph.sparse_initializer.extend([sp])
    return m


# ---------------------------------------------------------------------------
# Attributes
# ---------------------------------------------------------------------------

def _float_attr(name, v):
    return helper.make_attribute(name, float(v))


@case("reject:" + node_ref("softmax0", "Softmax"))
def gen_softmax_axis_is_float():
    n = helper.make_node("Softmax", ["X"], ["s"], name="softmax0")
    n.attribute.extend([_float_attr("axis", 1.0)])
    return simple([n])


@case("reject:" + node_ref("gemm0", "Gemm"))
def gen_gemm_transb_is_string():
    n = helper.make_node("Gemm", ["X", "W"], ["y"], name="gemm0", transB="yes")
    return simple([n], [f32("W", np.ones((4, 3)))])


@case("reject:" + node_ref("softmax0", "Softmax"))
def gen_softmax_axis_out_of_range():
    return simple([helper.make_node("Softmax", ["X"], ["s"], name="softmax0", axis=5)])


@case("reject:" + node_ref("logsoftmax0", "LogSoftmax"))
def gen_logsoftmax_axis_int64_min():
    return simple([helper.make_node("LogSoftmax", ["X"], ["s"], name="logsoftmax0",
                                    axis=INT64_MIN)])


@case("reject:" + node_ref("ln0", "LayerNormalization"))
def gen_layernorm_axis_out_of_range():
    return simple([helper.make_node("LayerNormalization", ["X", "g"], ["y"], name="ln0",
                                    axis=3)],
                  [f32("g", [1, 1, 1])])


@case("reject:" + node_ref("ln0", "LayerNormalization"))
def gen_layernorm_scale_wrong_shape():
    return simple([helper.make_node("LayerNormalization", ["X", "g"], ["y"], name="ln0",
                                    axis=-1)],
                  [f32("g", [1, 1, 1, 1])])


@case("reject:" + node_ref("mean0", "ReduceMean"))
def gen_reduce_axes_repeat():
    return model([helper.make_node("ReduceMean", ["X"], ["loss"], name="mean0",
                                   axes=[1, -1], keepdims=0)],
                 [X()], [LOSS()])


@case("reject:" + node_ref("mean0", "ReduceMean"))
def gen_reduce_axis_out_of_range():
    return model([helper.make_node("ReduceMean", ["X"], ["loss"], name="mean0",
                                   axes=[0, 4], keepdims=0)],
                 [X()], [LOSS()])


# ---------------------------------------------------------------------------
# Contractions and the loss
# ---------------------------------------------------------------------------

@case("reject:" + node_ref("matmul0", "MatMul"))
def gen_matmul_contracting_mismatch():
    return simple([helper.make_node("MatMul", ["X", "W"], ["y"], name="matmul0")],
                  [f32("W", np.ones((4, 5)))])


@case("reject:" + node_ref("gemm0", "Gemm"))
def gen_gemm_rank3_input():
    return simple([helper.make_node("Gemm", ["X", "W"], ["y"], name="gemm0")],
                  [f32("W", np.ones((4, 5)))], inputs=[X((2, 3, 4))])


@case("reject:" + node_ref("gemm0", "Gemm"))
def gen_gemm_bias_incompatible():
    return simple([helper.make_node("Gemm", ["X", "W", "B"], ["y"], name="gemm0")],
                  [f32("W", np.ones((3, 5))), f32("B", np.ones((7,)))])


def _sce(labels_vi, extra_inputs=(), inits=(), **attrs):
    n = helper.make_node("SoftmaxCrossEntropyLoss", ["S", "L"] + list(extra_inputs),
                         ["loss"], name="sce0", **attrs)
    return model([n], [X((2, 5), "S"), labels_vi], [LOSS()], inits)


@case("reject:" + node_ref("sce0", "SoftmaxCrossEntropyLoss"))
def gen_sce_float_labels():
    return _sce(X((2,), "L"))


@case("reject:" + node_ref("sce0", "SoftmaxCrossEntropyLoss"))
def gen_sce_weights_input():
    return _sce(X((2,), "L", TensorProto.INT64), ["w"], [f32("w", np.ones(5))])


@case("reject:" + node_ref("sce0", "SoftmaxCrossEntropyLoss"))
def gen_sce_label_shape_mismatch():
    return _sce(X((3,), "L", TensorProto.INT64))


@case("reject:" + node_ref("sce0", "SoftmaxCrossEntropyLoss"))
def gen_sce_bogus_reduction():
    return _sce(X((2,), "L", TensorProto.INT64), reduction="bogus")


@case("reject:" + node_ref("sce0", "SoftmaxCrossEntropyLoss"))
def gen_sce_log_prob_consumed():
    n = helper.make_node("SoftmaxCrossEntropyLoss", ["S", "L"], ["l", "lp"], name="sce0")
    return model([n, mean("lp")], [X((2, 5), "S"), X((2,), "L", TensorProto.INT64)],
                 [LOSS()])


# ---------------------------------------------------------------------------
# Dropout / LayerNorm extra outputs
# ---------------------------------------------------------------------------

def _dropout(ratio, outputs=("d",)):
    """Training-mode Dropout of X; `ratio` is a float (made a Constant node,
    as torch exports it) or the name of a graph input."""
    nodes = []
    if not isinstance(ratio, str):
        nodes.append(helper.make_node(
            "Constant", [], ["ratio"], name="c_ratio",
            value=helper.make_tensor("r", TensorProto.FLOAT, [], [ratio])))
        ratio = "ratio"
    nodes.append(helper.make_node("Dropout", ["X", ratio, "train"], list(outputs),
                                  name="drop0"))
    return nodes, [numpy_helper.from_array(np.array(True), "train")]


@case("reject:" + node_ref("drop0", "Dropout"))
def gen_dropout_ratio_1_5():
    nodes, inits = _dropout(1.5)
    return simple(nodes, inits)


@case("reject:" + node_ref("drop0", "Dropout"))
def gen_dropout_ratio_nan():
    nodes, inits = _dropout(float("nan"))
    return simple(nodes, inits)


@case("reject:" + node_ref("drop0", "Dropout"))
def gen_dropout_nonconst_ratio():
    nodes, inits = _dropout("R")
    return simple(nodes, inits, inputs=[X(), X((), "R")])


@case("reject:output #1 of " + node_ref("drop0", "Dropout"))
def gen_dropout_mask_consumed():
    nodes, inits = _dropout(0.25, outputs=("d", "mask"))
    cast = helper.make_node("Cast", ["mask"], ["mf"], name="cast0", to=TensorProto.FLOAT)
    add = helper.make_node("Add", ["d", "mf"], ["s"], name="add0")
    return simple(nodes + [cast, add], inits)


@case("reject:output #1 of " + node_ref("ln0", "LayerNormalization"))
def gen_layernorm_mean_consumed():
    n = helper.make_node("LayerNormalization", ["X", "g"], ["y", "mu"], name="ln0",
                         axis=-1)
    return model([n, mean("mu")], [X()], [LOSS()], [f32("g", [1, 1, 1])])


# ---------------------------------------------------------------------------
# Where / Cast / Equal / Trilu / Div
# ---------------------------------------------------------------------------

@case("reject:" + node_ref("where0", "Where"))
def gen_where_nonbool_condition():
    return simple([helper.make_node("Where", ["X", "X", "X"], ["w"], name="where0")])


@case("reject:" + node_ref("cast0", "Cast"))
def gen_cast_to_string():
    return simple([helper.make_node("Cast", ["X"], ["s"], name="cast0", to=TensorProto.STRING),
                   helper.make_node("Cast", ["s"], ["f"], name="cast1", to=TensorProto.FLOAT)])


@case("reject:" + node_ref("cast0", "Cast"))
def gen_cast_to_999():
    return simple([helper.make_node("Cast", ["X"], ["s"], name="cast0", to=999),
                   helper.make_node("Cast", ["s"], ["f"], name="cast1", to=TensorProto.FLOAT)])


@case("reject:" + node_ref("cast0", "Cast"))
def gen_cast_const_to_999():
    # The folding path (constant input) must check `to` as well.
    return simple([helper.make_node("Cast", ["C"], ["s"], name="cast0", to=999),
                   helper.make_node("Cast", ["s"], ["f"], name="cast1", to=TensorProto.FLOAT)],
                  [f32("C", [1.0, 2.0])])


@case("accept:dense<[4.400000e+01, 5.600000e+01, 5.000000e+00]>")
def gen_cast_const_int8_wraps():
    # Folded Cast int64 -> int8 -> float must wrap like ONNX: 300 -> 44, -200 -> 56.
    nodes = [helper.make_node("Cast", ["A"], ["a8"], name="cast0", to=TensorProto.INT8),
             helper.make_node("Cast", ["a8"], ["af"], name="cast1", to=TensorProto.FLOAT),
             helper.make_node("Add", ["X", "af"], ["s"], name="add0")]
    return simple(nodes, [i64("A", [300, -200, 5])], inputs=[X((3,))])


@case("reject:" + node_ref("eq0", "Equal"))
def gen_equal_mismatched_types():
    nodes = [helper.make_node("Equal", ["X", "I"], ["e"], name="eq0"),
             helper.make_node("Cast", ["e"], ["f"], name="cast0", to=TensorProto.FLOAT)]
    return simple(nodes, inputs=[X(), X((2, 3), "I", TensorProto.INT64)])


@case("reject:" + node_ref("trilu0", "Trilu"))
def gen_trilu_rank1():
    return simple([helper.make_node("Trilu", ["X"], ["t"], name="trilu0")],
                  inputs=[X((3,))])


@case("reject:" + node_ref("div0", "Div"))
def gen_div_const_int_by_zero():
    nodes = [helper.make_node("Div", ["A", "B"], ["q"], name="div0"),
             helper.make_node("Cast", ["q"], ["f"], name="cast0", to=TensorProto.FLOAT),
             helper.make_node("Add", ["X", "f"], ["s"], name="add0")]
    return simple(nodes, [i64("A", [6, 7, 8]), i64("B", [1, 0, 2])])


@case("accept")
def gen_shape_extreme_start_end():
    nodes = [helper.make_node("Shape", ["X"], ["sh"], name="shape0",
                              start=INT64_MIN, end=INT64_MAX),
             helper.make_node("Cast", ["sh"], ["f"], name="cast0", to=TensorProto.FLOAT)]
    return simple(nodes)


# ---------------------------------------------------------------------------
# Graph structure
# ---------------------------------------------------------------------------

@case("reject:" + node_ref("relu0", "Relu"))
def gen_node_zero_outputs():
    return model([helper.make_node("Relu", ["X"], [], name="relu0"), mean("X")],
                 [X()], [LOSS()])


@case("reject:graph output 'ghost'")
def gen_output_produced_by_no_node():
    return model([helper.make_node("Relu", ["X"], ["r"], name="relu0"), mean("r")],
                 [X()], [LOSS(), vi("ghost", [])])


@case("reject:" + node_ref("relu1", "Relu"))
def gen_two_nodes_same_output():
    nodes = [helper.make_node("Relu", ["X"], ["r"], name="relu0"),
             helper.make_node("Relu", ["X"], ["r"], name="relu1")]
    return simple(nodes)


@case("reject:" + node_ref("relu0", "Relu"))
def gen_node_overwrites_graph_input():
    return simple([helper.make_node("Relu", ["X"], ["X"], name="relu0")])


@case("reject:" + node_ref("relu0", "Relu"))
def gen_node_overwrites_initializer():
    nodes = [helper.make_node("Relu", ["X"], ["W"], name="relu0"),
             helper.make_node("Add", ["X", "W"], ["a"], name="add0")]
    return simple(nodes, [f32("W", np.ones((2, 3)))])


@case("reject:graph input 'X'")
def gen_duplicate_graph_input():
    return simple([helper.make_node("Relu", ["X"], ["r"], name="relu0")],
                  inputs=[X(), X((4,))])


@case("reject:" + node_ref("add0", "Add"))
def gen_empty_required_input():
    return simple([helper.make_node("Add", ["X", ""], ["a"], name="add0")])


@case("reject:" + node_ref("id0", "Identity"))
def gen_identity_no_inputs():
    return simple([helper.make_node("Identity", [], ["i"], name="id0")])


@case("reject:graph input 'X' && -3")
def gen_graph_input_negative_dim():
    return simple([helper.make_node("Relu", ["X"], ["r"], name="relu0")],
                  inputs=[X((-3, 3))])


@case("accept", max_seconds=10)
def gen_chain_10000_relu():
    nodes = [helper.make_node("Relu", ["X" if i == 0 else "r%d" % (i - 1)],
                              ["r%d" % i], name="relu%d" % i) for i in range(10000)]
    return simple(nodes)


@case("reject:opset 99")
def gen_opset_99():
    return model([helper.make_node("Relu", ["X"], ["r"], name="relu0"), mean("r")],
                 [X()], [LOSS()], opset=99)


@case("reject:opset 7")
def gen_opset_7():
    return model([helper.make_node("Relu", ["X"], ["r"], name="relu0"), mean("r")],
                 [X()], [LOSS()], opset=7)


@case("reject:no default-domain opset")
def gen_no_opset_import():
    return model([helper.make_node("Relu", ["X"], ["r"], name="relu0"), mean("r")],
                 [X()], [LOSS()], opsets=[])


@case("accept:graph.reduce_mean")
def gen_opset18_reduce_axes_input():
    # Debian's ONNX 1.12 has no opset-18 schemas: zeroc checks ReduceMean-18
    # (axes as an input) itself (lib/Import/OpVersions.cpp).
    n = helper.make_node("ReduceMean", ["X", "axes"], ["loss"], name="mean0", keepdims=0)
    return model([n], [X()], [LOSS()], [i64("axes", [0, 1])], opset=18)


@case("reject:no graph nodes")
def gen_no_nodes():
    return model([], [vi("loss", [])], [LOSS()])


@case("reject:unsupported op: 'if0' (If)")
def gen_if_subgraph():
    then_g = helper.make_graph([helper.make_node("Identity", ["X"], ["t"], name="then_id")],
                               "then", [], [vi("t", [2, 3])])
    else_g = helper.make_graph([helper.make_node("Neg", ["X"], ["e"], name="else_neg")],
                               "else", [], [vi("e", [2, 3])])
    n = helper.make_node("If", ["cond"], ["y"], name="if0",
                         then_branch=then_g, else_branch=else_g)
    return simple([n], inputs=[X(), X((), "cond", TensorProto.BOOL)])


@case("reject:" + node_ref("relu0", "Relu"))
def gen_subgraph_attr_on_supported_op():
    g = helper.make_graph([helper.make_node("Identity", ["X"], ["t"], name="inner")],
                          "body", [], [vi("t", [2, 3])])
    return simple([helper.make_node("Relu", ["X"], ["r"], name="relu0", body=g)])


@case("reject:" + node_ref("relu0", "Relu"))
def gen_unknown_attribute_type():
    n = helper.make_node("Relu", ["X"], ["r"], name="relu0")
    a = n.attribute.add()
    a.name = "weird"
    a.type = AttributeProto.UNDEFINED
    a.i = 3
    return simple([n])


# ---------------------------------------------------------------------------
# Sizes past the importer's 2^32-element cap, NaN attributes, odd metadata
# ---------------------------------------------------------------------------

@case("reject:graph input 'X'")
def gen_graph_input_huge():
    return simple([helper.make_node("Relu", ["X"], ["r"], name="relu0")],
                  inputs=[X((1 << 40, 1 << 40))])


@case("reject:graph input 'X'", args=["--input-shape", "X=999999999999,3"])
def gen_input_shape_binds_huge():
    return simple([helper.make_node("Relu", ["X"], ["r"], name="relu0")],
                  inputs=[X(("N", 3))])


@case("reject:" + node_ref("matmul0", "MatMul"))
def gen_matmul_outer_product_huge():
    # [2^17,1] x [1,2^17] = 2^34 elements.
    return simple([helper.make_node("MatMul", ["X", "Y"], ["y"], name="matmul0")],
                  inputs=[X((1 << 17, 1)), X((1, 1 << 17), "Y")])


@case("reject:" + node_ref("add0", "Add"))
def gen_add_broadcast_huge():
    return simple([helper.make_node("Add", ["X", "Y"], ["y"], name="add0")],
                  inputs=[X((1 << 17, 1)), X((1, 1 << 17), "Y")])


@case("accept")
def gen_constant_of_shape_bool_large():
    # 16M bools as a splat: valid, must not be folded element by element.
    value = helper.make_tensor("v", TensorProto.BOOL, [1], [True])
    nodes = [helper.make_node("ConstantOfShape", ["shape"], ["z"], name="cos0", value=value),
             helper.make_node("Cast", ["z"], ["f"], name="cast0", to=TensorProto.FLOAT)]
    return simple(nodes, [i64("shape", [4096, 4096])])


@case("reject:" + node_ref("ln0", "LayerNormalization"))
def gen_layernorm_epsilon_nan():
    return simple([helper.make_node("LayerNormalization", ["X", "g"], ["y"], name="ln0",
                                    axis=-1, epsilon=float("nan"))],
                  [f32("g", [1, 1, 1])])


@case("reject:" + node_ref("ln0", "LayerNormalization"))
def gen_layernorm_negative_epsilon():
    return simple([helper.make_node("LayerNormalization", ["X", "g"], ["y"], name="ln0",
                                    axis=-1, epsilon=-1.0)],
                  [f32("g", [1, 1, 1])])


@case("reject:" + node_ref("bad\\nname", "Reshape"))
def gen_node_name_with_newline():
    # The one-line guarantee must survive a newline inside a node name,
    # which the error shows escaped.
    return simple([helper.make_node("Reshape", ["X", "shape"], ["r"], name="bad\nname")],
                  [i64("shape", [4, 2])])


@case("reject:" + node_ref("relu0", "Relu"))
def gen_value_info_wrong_shape():
    # The model's own value_info contradicts what Relu produces.
    return model([helper.make_node("Relu", ["X"], ["r"], name="relu0"), mean("r")],
                 [X()], [LOSS()], value_info=[vi("r", [5, 5])])


@case("accept")
def gen_output_is_initializer():
    # Valid: a graph output may name an initializer directly.
    nodes = [helper.make_node("Relu", ["X"], ["r"], name="relu0"), mean("r")]
    return model(nodes, [X()], [LOSS(), vi("W", [2, 3])], [f32("W", np.ones((2, 3)))])


@case("accept")
def gen_output_is_graph_input():
    nodes = [helper.make_node("Relu", ["X"], ["r"], name="relu0"), mean("r")]
    return model(nodes, [X()], [LOSS(), X()])


@case("reject:'X'")
def gen_initializer_shadows_input_other_shape():
    # Legacy "initializer listed as input", but the shapes disagree.
    return simple([helper.make_node("Relu", ["X"], ["r"], name="relu0")],
                  [f32("X", [1, 2, 3, 4])])


@case("reject:opset")
def gen_opset_duplicate_default_domain():
    return model([helper.make_node("Relu", ["X"], ["r"], name="relu0"), mean("r")],
                 [X()], [LOSS()],
                 opsets=[helper.make_opsetid("", 17), helper.make_opsetid("", 13)])


@case("accept")
def gen_ai_onnx_domain_alias():
    n = helper.make_node("Relu", ["X"], ["r"], name="relu0", domain="ai.onnx")
    return model([n, mean("r")], [X()], [LOSS()],
                 opsets=[helper.make_opsetid("ai.onnx", 17)])


@case("reject:initializer")
def gen_initializer_empty_name():
    return simple([helper.make_node("Relu", ["X"], ["r"], name="relu0")],
                  [f32("", [1.0])])


@case("reject:graph input 'X'")
def gen_graph_input_sequence():
    seq = helper.make_tensor_sequence_value_info("X", TensorProto.FLOAT, [2, 3])
    nodes = [helper.make_node("Relu", ["Y"], ["r"], name="relu0")]
    return simple(nodes, inputs=[seq, X((2, 3), "Y")])


@case("reject:" + node_ref("softmax0", "Softmax"))
def gen_duplicate_attribute():
    n = helper.make_node("Softmax", ["X"], ["s"], name="softmax0", axis=1)
    n.attribute.extend([helper.make_attribute("axis", 0)])
    return simple([n])


@case("reject:graph output 'loss' && type")
def gen_graph_output_no_type():
    # onnx.checker requires a type on main-graph outputs; the message must
    # say that, not "is not a tensor (sequences, maps ...)".
    nodes = [helper.make_node("Relu", ["X"], ["r"], name="relu0"), mean("r")]
    out = helper.make_empty_tensor_value_info("loss")
    return model(nodes, [X()], [out])


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------

def generate(out, names):
    os.makedirs(out, exist_ok=True)
    paths = {}
    for name in names:
        m = CASES[name][0]()
        path = os.path.join(out, "adv_%s.onnx" % name)
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        paths[name] = path
    return paths


def _limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def check_one(zeroc, path, expect, args, max_seconds):
    """Returns (ok, detail)."""
    cmd = [zeroc, "import", path] + args
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, timeout=TIMEOUT_S,
                              preexec_fn=_limit_memory)
    except subprocess.TimeoutExpired:
        return False, "HANG: no exit after %d s" % TIMEOUT_S
    elapsed = time.monotonic() - t0
    rc = proc.returncode
    err = proc.stderr.decode(errors="replace")
    lines = err.splitlines()
    first = lines[0] if lines else ""
    if rc < 0:
        return False, "CRASH: signal %d; stderr: %s" % (-rc, first[:300])
    if any(mark in err for mark in CRASH_MARKERS):
        return False, "CRASH marker in stderr (rc %d): %s" % (rc, first[:300])
    if max_seconds is not None and elapsed > max_seconds:
        return False, "SLOW: %.1f s (limit %d s)" % (elapsed, max_seconds)
    if expect == "accept" or expect.startswith("accept:"):
        if rc != 0:
            return False, "expected accept, got rc %d: %s" % (rc, first[:300])
        if err:
            return False, "accepted but printed to stderr: %s" % first[:300]
        want = expect[len("accept:"):]
        if want and want not in proc.stdout.decode(errors="replace"):
            return False, "accepted, but the IR lacks '%s'" % want
        return True, "accepted (%.2f s)" % elapsed
    assert expect.startswith("reject:"), expect
    wants = expect[len("reject:"):].split(" && ")
    want = " && ".join(wants)
    if rc == 0:
        return False, "ACCEPTED a model that should be rejected (want '%s')" % want
    if rc != 1:
        return False, "rc %d (want 1): %s" % (rc, first[:300])
    if proc.stdout:
        return False, "rejected but printed %d bytes to stdout" % len(proc.stdout)
    if len(lines) != 1:
        return False, "stderr has %d lines (want 1): %s" % (len(lines), first[:300])
    prefix = "zeroc: error: %s: " % path
    if not first.startswith(prefix):
        return False, "stderr does not start with '%s': %s" % (prefix, first[:300])
    message = first[len(prefix):]
    if not all(w in message for w in wants):
        return False, "message lacks '%s': %s" % (want, message[:300])
    return True, "rejected: %s" % message[:200]


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("outdir")
    p.add_argument("--check", metavar="ZEROC", help="import every model with ZEROC")
    p.add_argument("--only", help="comma-separated case names")
    p.add_argument("--list", action="store_true", help="print the expectation table")
    a = p.parse_args(argv[1:])
    names = sorted(CASES)
    if a.only:
        names = [n for n in a.only.split(",") if n]
        for n in names:
            if n not in CASES:
                p.error("unknown case '%s'" % n)
    if a.list:
        for n in names:
            print("%-45s %s" % (n, CASES[n][1]))
        return 0
    paths = generate(a.outdir, names)
    if not a.check:
        print("generated %d models in %s" % (len(paths), a.outdir))
        return 0
    passed = failed = 0
    for n in names:
        _, expect, args, max_seconds = CASES[n]
        ok, detail = check_one(a.check, paths[n], expect, args, max_seconds)
        print("%s adv_%s: %s" % ("PASS" if ok else "FAIL", n, detail))
        if ok:
            passed += 1
        else:
            failed += 1
    print("adversarial: %d passed, %d failed" % (passed, failed))
    sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
