#!/usr/bin/python3
"""Writes the node-level import tests of Pad, Tile, Range, Flatten,
GatherElements, GatherND, ScatterND, ScatterElements and CumSum
(movement-ops.test) into OUTDIR: one small model per case, built with
onnx.helper, at opset 17 unless the case names another (ScatterElements'
versions 13, 16 and 18; ONNX 1.12's checker stops at 17). Each has a scalar
float loss so it imports without --allow-no-loss; the op's result feeds it
(float results through ReduceSum, integer ones through Cast)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64


def const(name, values, dtype=np.int64):
    return helper.make_node("Constant", [], [name], name=name,
                            value=numpy_helper.from_array(
                                np.asarray(values, dtype=dtype), name))


def model(nodes, inputs, out, out_elem=F, opset=17, check=True):
    """`out` is the op's result; the loss is ReduceSum(Cast(out))."""
    nodes = list(nodes)
    src = out
    if out_elem != F:
        nodes.append(helper.make_node("Cast", [out], ["outf"], name="tofloat",
                                      to=F))
        src = "outf"
    nodes.append(helper.make_node("ReduceSum", [src], ["loss"], name="loss",
                                  keepdims=0))
    g = helper.make_graph(nodes, "g", inputs,
                          [helper.make_tensor_value_info("loss", F, [])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          ir_version=8)
    if check:
        onnx.checker.check_model(m)
    return m


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


@case
def pad_labels_int64():
    # transformers' labels shift: F.pad(labels, (0, 1), value=-100).
    return model([const("pads", [0, 0, 0, 1]), const("v", -100),
                  helper.make_node("Pad", ["labels", "pads", "v"], ["out"],
                                   name="shift", mode="constant")],
                 [vi("labels", I64, [2, 8])], "out", I64)


@case
def pad_reflect_float():
    return model([const("pads", [0, 2, 0, 1]),
                  helper.make_node("Pad", ["x", "pads"], ["out"], name="p",
                                   mode="reflect")],
                 [vi("x", F, [2, 5])], "out")


@case
def pad_edge_negative():
    return model([const("pads", [-1, 2, 1, -2]),
                  helper.make_node("Pad", ["x", "pads"], ["out"], name="p",
                                   mode="edge")],
                 [vi("x", F, [3, 5])], "out")


@case
def pad_folded():
    return model([const("c", [[1, 2, 3]]), const("pads", [0, 1, 0, 2]),
                  helper.make_node("Pad", ["c", "pads"], ["pc"], name="p",
                                   mode="reflect"),
                  helper.make_node("Cast", ["pc"], ["pf"], name="cast", to=F),
                  helper.make_node("Mul", ["x", "pf"], ["out"], name="mul")],
                 [vi("x", F, [1, 6])], "out")


@case
def pad_reflect_too_far():
    return model([const("pads", [0, 5, 0, 0]),
                  helper.make_node("Pad", ["x", "pads"], ["out"], name="far",
                                   mode="reflect")],
                 [vi("x", F, [2, 5])], "out", check=False)


@case
def pad_reflect_negative():
    return model([const("pads", [0, -1, 0, 2]),
                  helper.make_node("Pad", ["x", "pads"], ["out"], name="crop",
                                   mode="reflect")],
                 [vi("x", F, [2, 5])], "out")


@case
def pad_dynamic_pads():
    return model([helper.make_node("Pad", ["x", "pads"], ["out"], name="dyn")],
                 [vi("x", F, [2, 5]), vi("pads", I64, [4])], "out", check=False)


@case
def tile():
    return model([const("r", [2, 1, 3]),
                  helper.make_node("Tile", ["x", "r"], ["out"], name="tile")],
                 [vi("x", F, [2, 3, 4])], "out")


@case
def tile_folded():
    return model([const("c", [[0, 1]]), const("r", [3, 2]),
                  helper.make_node("Tile", ["c", "r"], ["out"], name="tile")],
                 [vi("x", F, [1])], "out", I64)


@case
def range_position_ids():
    return model([const("s", 0), const("l", 8), const("d", 1),
                  helper.make_node("Range", ["s", "l", "d"], ["pos"],
                                   name="range"),
                  helper.make_node("Cast", ["pos"], ["pf"], name="c", to=F),
                  helper.make_node("Mul", ["x", "pf"], ["out"], name="mul")],
                 [vi("x", F, [2, 8])], "out")


@case
def range_float_negative_delta():
    return model([const("s", 1.0, np.float32), const("l", -1.0, np.float32),
                  const("d", -0.5, np.float32),
                  helper.make_node("Range", ["s", "l", "d"], ["r"],
                                   name="range"),
                  helper.make_node("Mul", ["x", "r"], ["out"], name="mul")],
                 [vi("x", F, [4])], "out")


@case
def range_dynamic():
    return model([const("s", 0), const("d", 1),
                  helper.make_node("Range", ["s", "n", "d"], ["out"],
                                   name="range")],
                 [vi("n", I64, [])], "out", I64, check=False)


@case
def flatten():
    return model([helper.make_node("Flatten", ["x"], ["out"], name="flat",
                                   axis=-2)],
                 [vi("x", F, [2, 3, 4, 5])], "out")


@case
def gather_elements():
    return model([const("i", [[0, -1, 2], [4, 4, 0]]),
                  helper.make_node("GatherElements", ["x", "i"], ["out"],
                                   name="ge", axis=1)],
                 [vi("x", F, [2, 5])], "out")


@case
def gather_elements_out_of_range():
    return model([const("i", [[0, 5]]),
                  helper.make_node("GatherElements", ["x", "i"], ["out"],
                                   name="ge", axis=-1)],
                 [vi("x", F, [2, 5])], "out", check=False)


@case
def gather_elements_folded():
    return model([const("c", [[10, 11, 12], [13, 14, 15]]),
                  const("i", [[1, 0], [0, 1]]),
                  helper.make_node("GatherElements", ["c", "i"], ["out"],
                                   name="ge", axis=0)],
                 [vi("x", F, [1])], "out", I64)


@case
def scatter_nd():
    return model([const("i", [[1], [3]]),
                  helper.make_node("ScatterND", ["x", "i", "u"], ["out"],
                                   name="snd")],
                 [vi("x", F, [4, 3]), vi("u", F, [2, 3])], "out")


@case
def scatter_nd_add():
    return model([const("i", [[1, 2], [1, 2]]),
                  helper.make_node("ScatterND", ["x", "i", "u"], ["out"],
                                   name="snd", reduction="add")],
                 [vi("x", F, [4, 3]), vi("u", F, [2])], "out")


@case
def scatter_nd_duplicate():
    return model([const("c", [1, 2, 3, 4]), const("i", [[1], [1]]),
                  const("u", [7, 8]),
                  helper.make_node("ScatterND", ["c", "i", "u"], ["out"],
                                   name="dup")],
                 [vi("x", F, [1])], "out", I64)


@case
def scatter_nd_folded():
    return model([const("c", [1, 2, 3, 4]), const("i", [[3], [-4]]),
                  const("u", [7, 8]),
                  helper.make_node("ScatterND", ["c", "i", "u"], ["out"],
                                   name="snd")],
                 [vi("x", F, [1])], "out", I64)


@case
def scatter_elements_opset13():
    return model([const("i", [[1, 3], [0, -1]]),
                  helper.make_node("ScatterElements", ["x", "i", "u"], ["out"],
                                   name="se", axis=1)],
                 [vi("x", F, [2, 5]), vi("u", F, [2, 2])], "out", opset=13)


@case
def scatter_elements_add_opset16():
    return model([const("i", [[0, 1], [0, -3]]),
                  helper.make_node("ScatterElements", ["x", "i", "u"], ["out"],
                                   name="se", axis=-2, reduction="add")],
                 [vi("x", F, [3, 2]), vi("u", F, [2, 2])], "out", opset=16)


@case
def scatter_elements_mul_opset18():
    return model([const("i", [[2], [2]]),
                  helper.make_node("ScatterElements", ["x", "i", "u"], ["out"],
                                   name="se", axis=0, reduction="mul")],
                 [vi("x", F, [3, 4]), vi("u", F, [2, 1])], "out", opset=18,
                 check=False)


@case
def scatter_elements_max_opset18():
    return model([const("i", [[2]]),
                  helper.make_node("ScatterElements", ["x", "i", "u"], ["out"],
                                   name="se", reduction="max")],
                 [vi("x", F, [3, 4]), vi("u", F, [1, 1])], "out", opset=18,
                 check=False)


@case
def scatter_elements_dynamic_indices():
    # T5's shift of the labels: the indices are data, checked at run time.
    return model([helper.make_node("ScatterElements", ["x", "i", "u"], ["out"],
                                   name="se", axis=1)],
                 [vi("x", I64, [2, 8]), vi("i", I64, [2, 1]),
                  vi("u", I64, [2, 1])], "out", I64)


@case
def scatter_elements_duplicate():
    return model([const("i", [[1, 0, -4]]),
                  helper.make_node("ScatterElements", ["x", "i", "u"], ["out"],
                                   name="dup", axis=1)],
                 [vi("x", F, [2, 4]), vi("u", F, [1, 3])], "out")


@case
def scatter_elements_out_of_range():
    return model([const("i", [[0], [-6]]),
                  helper.make_node("ScatterElements", ["x", "i", "u"], ["out"],
                                   name="se", axis=1)],
                 [vi("x", F, [2, 5]), vi("u", F, [2, 1])], "out")


@case
def scatter_elements_folded():
    return model([const("c", [[1, 2, 3], [4, 5, 6]]), const("i", [[2], [-3]]),
                  const("u", [[7], [8]]),
                  helper.make_node("ScatterElements", ["c", "i", "u"], ["out"],
                                   name="se", axis=1)],
                 [vi("x", F, [1])], "out", I64)


@case
def gather_nd():
    return model([const("i", [[0, 1], [2, -1]]),
                  helper.make_node("GatherND", ["x", "i"], ["out"], name="gnd")],
                 [vi("x", F, [3, 4, 2])], "out")


@case
def cumsum_mask():
    # position_ids = attention_mask.cumsum(-1) - 1, with a data mask.
    return model([const("a", -1),
                  helper.make_node("CumSum", ["m", "a"], ["out"], name="cs")],
                 [vi("m", I64, [2, 8])], "out", I64)


@case
def cumsum_float_exclusive_reverse():
    return model([const("a", 0),
                  helper.make_node("CumSum", ["x", "a"], ["out"], name="cs",
                                   exclusive=1, reverse=1)],
                 [vi("x", F, [3, 2])], "out")


@case
def cumsum_folded():
    return model([const("c", [[1, 2, 3], [4, 5, 6]]), const("a", 1),
                  helper.make_node("CumSum", ["c", "a"], ["out"], name="cs",
                                   exclusive=1)],
                 [vi("x", F, [1])], "out", I64)


@case
def cumsum_dynamic_axis():
    return model([helper.make_node("CumSum", ["x", "a"], ["out"], name="cs")],
                 [vi("x", F, [3]), vi("a", I64, [])], "out", check=False)


@case
def nonzero_folded():
    return model([const("c", [[0, 3], [5, 0]]),
                  helper.make_node("NonZero", ["c"], ["out"], name="nz")],
                 [vi("x", F, [1])], "out", I64)


@case
def onehot_folded():
    return model([const("i", [1, -1, 5]), const("d", 3),
                  const("v", [0.5, 2.0], np.float32),
                  helper.make_node("OneHot", ["i", "d", "v"], ["out"],
                                   name="oh", axis=0)],
                 [vi("x", F, [1])], "out")


@case
def reduce_min_prod_folded():
    return model([const("c", [[4, -2, 3], [1, 5, 6]]),
                  helper.make_node("ReduceMin", ["c"], ["mn"], name="rmin",
                                   axes=[1], keepdims=0),
                  helper.make_node("ReduceProd", ["c"], ["pr"], name="rprod",
                                   axes=[-1], keepdims=1),
                  helper.make_node("Cast", ["mn"], ["mnf"], name="c1", to=F),
                  helper.make_node("Cast", ["pr"], ["prf"], name="c2", to=F),
                  helper.make_node("Mul", ["mnf", "x"], ["a"], name="m1"),
                  helper.make_node("Mul", ["prf", "x"], ["out"], name="m2"),
                  helper.make_node("Add", ["a", "out"], ["out2"], name="add")],
                 [vi("x", F, [1])], "out2")


@case
def reduce_min_dynamic():
    return model([helper.make_node("ReduceMin", ["x"], ["out"], name="rmin",
                                   keepdims=0)],
                 [vi("x", F, [3])], "out")


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, fn in CASES.items():
        onnx.save(fn(), os.path.join(out, name + ".onnx"))


if __name__ == "__main__":
    main()
