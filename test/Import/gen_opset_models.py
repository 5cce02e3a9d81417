#!/usr/bin/env python3
"""Writes the models of opsets.test into OUTDIR: nodes at the op versions
of opsets 18-21 (and IR 9, 10), which Debian's onnx 1.12 has no schemas for
(its helper writes them; its checker is never called on them), sequence ops,
external data with many tensors in one file (one of them past 2^31 bytes, in
a sparse file), and bad inputs that need zeroc's own version checks.

  /usr/bin/python3 test/Import/gen_opset_models.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def vi(name, shape, elem=F):
    return helper.make_tensor_value_info(name, elem, shape)


def i64(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def node(op, ins, outs, name, **attrs):
    return helper.make_node(op, ins, outs, name=name, **attrs)


def loss(src, name="loss_mean"):
    """ReduceSum (unchanged since 13) over every axis to the scalar `loss`."""
    return node("ReduceSum", [src], ["loss"], name, keepdims=0)


def model(nodes, inputs, inits=(), opset=18, ir=9, outputs=None, functions=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs or [vi("loss", [])],
                              initializer=list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="zeroc-gen_opset_models")
    m.ir_version = ir
    m.functions.extend(functions)
    return m


def models():
    X = vi("X", [2, 3])
    X7 = vi("X", [2, 7])
    X6 = vi("X", [2, 6])
    yield "reduce18", model([
        node("ReduceMean", ["X", "axes1"], ["m"], "mean_axes", keepdims=0),
        node("ReduceMax", ["X", "none"], ["same"], "max_noop",
             noop_with_empty_axes=1),
        node("ReduceMax", ["X"], ["all"], "max_all", keepdims=0),
        node("ReduceMean", ["same"], ["m2"], "mean_all", keepdims=1),
        node("Add", ["m2", "all"], ["s"], "add0"),
        node("Add", ["s", "m"], ["t"], "add1"),
        loss("t"),
    ], [X], [i64("axes1", [-1]), i64("none", [])], opset=18, ir=9)
    yield "reduce20", model([
        node("ReduceMax", ["X", "axes0"], ["m"], "max20", keepdims=1),
        loss("m"),
    ], [X], [i64("axes0", [0])], opset=20, ir=10)
    yield "split18", model([
        node("Split", ["X"], ["a", "b", "c"], "split3", axis=1, num_outputs=3),
        node("Split", ["X", "sizes"], ["d", "e"], "split_sizes", axis=1),
        node("Concat", ["c", "a", "b", "e", "d"], ["cat"], "cat", axis=1),
        loss("cat"),
    ], [X7], [i64("sizes", [2, 5])], opset=18, ir=9)
    yield "shape19", model([
        node("Shape", ["X"], ["s"], "shape_tail", start=-1),
        node("Shape", ["X"], ["s0"], "shape_head", end=1),
        node("Concat", ["s", "s0"], ["dims"], "dims", axis=0),
        node("Reshape", ["X", "dims"], ["r"], "reshape19"),
        node("Cast", ["r"], ["h"], "cast19", to=TensorProto.FLOAT16, saturate=1),
        node("Cast", ["h"], ["f"], "cast_back", to=F),
        node("Identity", ["f"], ["i"], "identity19"),
        loss("i"),
    ], [X], opset=19, ir=9)
    yield "squeeze21", model([
        node("Unsqueeze", ["X", "ax0"], ["u"], "unsqueeze21"),
        node("Transpose", ["u"], ["t"], "transpose21", perm=[2, 0, 1]),
        node("Squeeze", ["t", "ax1"], ["sq"], "squeeze21"),
        node("Constant", [], ["k"], "const21",
             value=numpy_helper.from_array(np.float32(2.0).reshape(()), "k")),
        node("ConstantOfShape", ["shape2"], ["ones"], "ones21",
             value=numpy_helper.from_array(np.ones(1, np.float32), "v")),
        node("Mul", ["sq", "k"], ["m"], "mul"),
        node("Add", ["m", "ones"], ["a"], "add"),
        node("Identity", ["a"], ["i"], "identity21"),
        loss("i"),
    ], [X], [i64("ax0", [0]), i64("ax1", [1]), i64("shape2", [3, 2])],
        opset=21, ir=10)
    # Every op here is unchanged since opset 17: libonnx's checker and shape
    # inference run on the whole model (it sees opset 17, IR 8).
    yield "unchanged20", model([
        node("Relu", ["X"], ["r"], "relu"),
        node("Gemm", ["r", "W"], ["g"], "gemm", transB=1),
        loss("g"),
    ], [X], [numpy_helper.from_array(np.ones((4, 3), np.float32), "W")],
        opset=20, ir=10)
    yield "sequences", model([
        node("SplitToSequence", ["X", "two"], ["seq"], "split_seq", axis=1),
        node("SequenceLength", ["seq"], ["n"], "seq_len"),
        node("SequenceAt", ["seq", "minus1"], ["last"], "seq_last"),
        node("SequenceConstruct", ["last", "last"], ["pair"], "construct"),
        node("SequenceAt", ["seq", "zero"], ["first"], "seq_first"),
        node("SequenceInsert", ["pair", "first", "zero"], ["three"], "insert"),
        node("SequenceErase", ["three"], ["erased"], "erase_last"),
        node("Identity", ["erased"], ["two_left"], "identity_of_seq"),
        node("ConcatFromSequence", ["two_left"], ["stacked"], "stack",
             axis=0, new_axis=1),
        node("SplitToSequence", ["X"], ["cols"], "split_cols", axis=1,
             keepdims=0),
        node("ConcatFromSequence", ["cols"], ["joined"], "join", axis=0),
        node("Cast", ["n"], ["nf"], "n_float", to=F),
        node("Mul", ["joined", "nf"], ["scaled"], "scale"),
        node("ReduceSum", ["stacked"], ["s1"], "sum1", keepdims=0),
        node("ReduceSum", ["scaled"], ["s2"], "sum2", keepdims=0),
        node("Add", ["s1", "s2"], ["loss"], "loss_add"),
    ], [X6], [i64("two", 2), i64("minus1", -1), i64("zero", 0)],
        opset=20, ir=10)

    # Bad inputs: each must end in one clear error.
    relu = [node("Relu", ["X"], ["r"], "relu"), loss("r")]
    yield "bad_opset22", model(relu, [X], opset=22, ir=10)
    yield "bad_opset12", model(relu, [X], opset=12, ir=7)
    yield "bad_ir11", model(relu, [X], opset=21, ir=11)
    yield "bad_layernorm13", model([
        node("LayerNormalization", ["X", "g"], ["y"], "ln"), loss("y"),
    ], [X], [numpy_helper.from_array(np.ones(3, np.float32), "g")],
        opset=13, ir=7)
    yield "bad_cast_float8", model([
        node("Cast", ["X"], ["y"], "to_f8", to=17), loss("y"),
    ], [X], opset=19, ir=9)
    yield "bad_input_float8", model(relu, [vi("X", [2, 3], 19)], opset=19, ir=9)
    yield "bad_split_num_outputs_string", model([
        node("Split", ["X"], ["a", "b"], "split_str", axis=1, num_outputs="2"),
        loss("a"),
    ], [X6], opset=18)
    yield "bad_reduce18_axes_attr", model([
        node("ReduceMean", ["X"], ["m"], "mean_attr", axes=[1]), loss("m"),
    ], [X], opset=18)
    yield "bad_reduce13_axes_input", model([
        node("ReduceMean", ["X", "axes1"], ["m"], "mean_input"), loss("m"),
    ], [X], [i64("axes1", [1])], opset=17, ir=8)
    yield "bad_split18_both", model([
        node("Split", ["X", "sizes"], ["a", "b"], "split_both", axis=1,
             num_outputs=2),
        loss("a"),
    ], [X6], [i64("sizes", [3, 3])], opset=18)
    yield "bad_split18_neither", model([
        node("Split", ["X"], ["a", "b"], "split_neither", axis=1), loss("a"),
    ], [X6], opset=18)
    yield "bad_split18_negative_last", model([
        node("Split", ["X"], ["a", "b", "c", "d"], "split_5_by_4", axis=1,
             num_outputs=4),
        loss("a"),
    ], [vi("X", [2, 5])], opset=18)
    yield "bad_split18_count", model([
        node("Split", ["X"], ["a", "b"], "split_count", axis=1, num_outputs=3),
        loss("a"),
    ], [X6], opset=18)
    yield "bad_cast19_no_to", model([
        node("Cast", ["X"], ["y"], "cast_no_to"), loss("y"),
    ], [X], opset=19, ir=9)
    yield "bad_reshape19_arity", model([
        node("Reshape", ["X"], ["y"], "reshape_one_input"), loss("y"),
    ], [X], opset=19, ir=9)
    yield "bad_seq_position", model([
        node("SplitToSequence", ["X"], ["seq"], "split_seq", axis=1),
        node("SequenceAt", ["seq", "nine"], ["y"], "seq_at_9"), loss("y"),
    ], [X], [i64("nine", 9)], opset=20, ir=10)
    yield "bad_seq_as_tensor", model([
        node("SplitToSequence", ["X"], ["seq"], "split_seq", axis=1),
        node("Relu", ["seq"], ["y"], "relu_of_seq"), loss("y"),
    ], [X], opset=20, ir=10)
    yield "bad_seq_too_long", model([
        node("SplitToSequence", ["X"], ["seq"], "split_long", axis=0),
        node("SequenceAt", ["seq", "zero"], ["y"], "seq_at_0"), loss("y"),
    ], [vi("X", [100000])], [i64("zero", 0)], opset=20, ir=10)
    fn = helper.make_function("local.fns", "Double", ["a"], ["b"],
                              [node("Add", ["a", "a"], ["b"], "add")],
                              [helper.make_opsetid("", 18)])
    m = model([node("Double", ["X"], ["y"], "call_double", domain="local.fns"),
               loss("y")], [X], opset=18, ir=9, functions=[fn])
    m.opset_import.append(helper.make_opsetid("local.fns", 1))
    yield "bad_local_function", m


def external_many(out):
    """Three tensors in one model.onnx.data, as torch's exporters write them
    (location/offset/length), the last one past 2^31 bytes (a sparse file)."""
    d = os.path.join(out, "external_many")
    os.makedirs(d, exist_ok=True)
    tensors = [("W1", np.arange(12, dtype=np.float32).reshape(3, 4) / 10, 0),
               ("b1", np.full(4, 0.5, np.float32), 48),
               ("W2", np.arange(8, dtype=np.float32).reshape(4, 2) / 4,
                (1 << 31) + 64)]
    inits = []
    with open(os.path.join(d, "model.onnx.data"), "wb") as f:
        for name, value, offset in tensors:
            f.seek(offset)
            f.write(value.tobytes())
            t = numpy_helper.from_array(value, name)
            t.ClearField("raw_data")
            t.data_location = TensorProto.EXTERNAL
            for k, v in (("location", "model.onnx.data"), ("offset", offset),
                         ("length", value.nbytes)):
                e = t.external_data.add()
                e.key, e.value = k, str(v)
            inits.append(t)
    m = model([node("MatMul", ["X", "W1"], ["h"], "mm1"),
               node("Add", ["h", "b1"], ["hb"], "bias"),
               node("MatMul", ["hb", "W2"], ["y"], "mm2"),
               loss("y")], [vi("X", [2, 3])], inits, opset=20, ir=10)
    onnx.save(m, os.path.join(d, "model.onnx"))
    # The same model with W2's offset one byte past the end of the file.
    bad = os.path.join(out, "external_past_end")
    os.makedirs(bad, exist_ok=True)
    os.link(os.path.join(d, "model.onnx.data"),
            os.path.join(bad, "model.onnx.data")) \
        if not os.path.exists(os.path.join(bad, "model.onnx.data")) else None
    for e in m.graph.initializer[2].external_data:
        if e.key == "offset":
            e.value = str((1 << 31) + 64 + 32 - 31)
    onnx.save(m, os.path.join(bad, "model.onnx"))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, m in models():
        onnx.save(m, os.path.join(out, name + ".onnx"))
    external_many(out)


if __name__ == "__main__":
    main()
