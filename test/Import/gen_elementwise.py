#!/usr/bin/python3
"""Writes the node-level models of test/Import/elementwise-ops.test into
OUTDIR: comparisons, logic, IsNaN/IsInf, float math, Max/Min, Clip,
CastLike and Gelu, each once on graph inputs (graph ops) and once on
constants (folded at import). Built with onnx.helper (Debian's onnx 1.12)."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save, shape_inference

F, D, I64, I32, B = (TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.INT64,
                     TensorProto.INT32, TensorProto.BOOL)


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def const(name, values, dtype):
    return helper.make_node("Constant", [], [name], name=name,
                            value=numpy_helper.from_array(
                                np.asarray(values, dtype=dtype), name))


def save_model(out, fname, nodes, inputs, outputs, opset=17, inits=()):
    g = helper.make_graph(nodes, fname, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          ir_version=8)
    if opset <= 17:
        # Output shapes from ONNX's own inference (zeroc's checker wants them).
        im = shape_inference.infer_shapes(m).graph
        inferred = {v.name: v for v in list(im.value_info) + list(im.output)
                    if v.type.tensor_type.HasField("shape")}
        for o in m.graph.output:
            if not o.type.tensor_type.HasField("shape") and o.name in inferred:
                o.type.CopyFrom(inferred[o.name].type)
    save(m, os.path.join(out, fname + ".onnx"))


def n(op, ins, outs, **kw):
    return helper.make_node(op, ins, outs, name=outs[0], **kw)


def main(out):
    os.makedirs(out, exist_ok=True)
    # Comparisons: float with broadcasting, int64, int32.
    save_model(out, "compare", [
        n("Less", ["x", "y"], ["lt"]),
        n("LessOrEqual", ["x", "y"], ["le"]),
        n("Greater", ["i", "j"], ["gt"]),
        n("GreaterOrEqual", ["k", "k"], ["ge"]),
    ], [vi("x", F, [2, 3]), vi("y", F, [3]), vi("i", I64, [2, 1]),
        vi("j", I64, [4]), vi("k", I32, [5])],
        [vi("lt", B, None), vi("le", B, None), vi("gt", B, None),
         vi("ge", B, None)])
    save_model(out, "logic", [
        n("And", ["a", "b"], ["and"]), n("Or", ["a", "b"], ["or"]),
        n("Xor", ["a", "b"], ["xor"]), n("Not", ["a"], ["not"]),
    ], [vi("a", B, [2, 3]), vi("b", B, [3])],
        [vi(o, B, None) for o in ("and", "or", "xor", "not")])
    save_model(out, "isnan_isinf", [
        n("IsNaN", ["x"], ["nan"]), n("IsInf", ["x"], ["inf"]),
        n("IsInf", ["x"], ["pinf"], detect_negative=0),
        n("IsInf", ["x"], ["ninf"], detect_positive=0),
        n("IsInf", ["x"], ["none"], detect_positive=0, detect_negative=0),
    ], [vi("x", F, [2, 3])],
        [vi(o, B, None) for o in ("nan", "inf", "pinf", "ninf", "none")])
    math_ops = ["Cos", "Sin", "Abs", "Sign", "Floor", "Ceil", "Round"]
    save_model(out, "math", [n(op, ["x"], [op.lower()]) for op in math_ops],
               [vi("x", F, [2, 3])], [vi(op.lower(), F, None) for op in math_ops])
    save_model(out, "maxmin", [
        n("Max", ["x"], ["max1"]),
        n("Max", ["x", "y", "z"], ["max3"]),
        const("lo", -1e4, np.float32),
        n("Min", ["x", "lo"], ["minc"]),
        n("Max", ["i", "j"], ["maxi"]),
    ], [vi("x", F, [2, 3]), vi("y", F, [3]), vi("z", F, [2, 1]),
        vi("i", I64, [4]), vi("j", I64, [4])],
        [vi("max1", F, None), vi("max3", F, None), vi("minc", F, None),
         vi("maxi", I64, None)])
    save_model(out, "clip", [
        const("lo", -1.0, np.float32), const("hi", 2.5, np.float32),
        n("Clip", ["x", "lo", "hi"], ["both"]),
        n("Clip", ["x", "", "hi"], ["upper"]),
        n("Clip", ["x"], ["none"]),
        n("Clip", ["x", "m"], ["computed"]),
        n("Clip", ["i", "ilo"], ["ints"]),
    ], [vi("x", F, [2, 3]), vi("m", F, []), vi("i", I64, [4]),
        vi("ilo", I64, [])],
        [vi(o, F, None) for o in ("both", "upper", "none", "computed")] +
        [vi("ints", I64, None)])
    save_model(out, "castlike", [
        n("CastLike", ["i", "x"], ["f"]),
        n("CastLike", ["x", "d"], ["dd"]),
        n("CastLike", ["x", "x"], ["same"]),
    ], [vi("i", I64, [4]), vi("x", F, [4]), vi("d", D, [])],
        [vi("f", F, None), vi("dd", D, None), vi("same", F, None)], opset=15)
    # Everything on constants folds: no graph op remains.
    save_model(out, "fold", [
        const("a", [1.0, -2.5, np.nan, np.inf], np.float32),
        const("b", [0.5, -2.5, 1.0, -np.inf], np.float32),
        const("p", [True, False, True, False], np.bool_),
        const("q", [True, True, False, False], np.bool_),
        const("s", [3, -7, 2, 9007199254740992], np.int64),
        n("Less", ["a", "b"], ["lt"]), n("GreaterOrEqual", ["a", "b"], ["ge"]),
        n("Xor", ["p", "q"], ["xor"]), n("Not", ["p"], ["not"]),
        n("IsNaN", ["a"], ["nan"]), n("IsInf", ["a"], ["ninf"], detect_positive=0),
        n("Abs", ["s"], ["abs"]), n("Sign", ["a"], ["sign"]),
        const("c", [0.5, 1.5, 2.5, -0.5], np.float32),
        n("Round", ["c"], ["round"]),
        n("Max", ["a", "b", "c"], ["max"]), n("Min", ["s", "s"], ["min"]),
        const("lo", 1.0, np.float32), n("Clip", ["c", "lo", ""], ["clip"]),
        n("Cos", ["c"], ["cos"]), n("CastLike", ["s", "a"], ["cl"]),
    ], [], [vi(o, B, None) for o in ("lt", "ge", "xor", "not", "nan", "ninf")] +
        [vi("abs", I64, None), vi("sign", F, None), vi("round", F, None),
         vi("max", F, None), vi("min", I64, None), vi("clip", F, None),
         vi("cos", F, None), vi("cl", F, None)])
    # Gelu exists from opset 20 (Debian's onnx 1.12 has no schema for it).
    for approx in ("none", "tanh"):
        save_model(out, "gelu20_" + approx,
                   [n("Gelu", ["x"], ["y"], approximate=approx)],
                   [vi("x", F, [2, 3])], [vi("y", F, [2, 3])], opset=20)
    save_model(out, "gelu17", [n("Gelu", ["x"], ["y"])],
               [vi("x", F, [2, 3])], [vi("y", F, [2, 3])])
    # Bad inputs.
    save_model(out, "bad_clip_nan", [
        const("lo", np.nan, np.float32), n("Clip", ["x", "lo"], ["y"])],
        [vi("x", F, [2, 3])], [vi("y", F, None)])
    save_model(out, "bad_clip_vector", [
        const("lo", [0.0, 1.0], np.float32), n("Clip", ["x", "lo"], ["y"])],
        [vi("x", F, [2, 3])], [vi("y", F, None)])
    save_model(out, "bad_compare_int8", [n("Less", ["x", "x"], ["y"])],
               [vi("x", TensorProto.INT8, [2])], [vi("y", B, None)])
    save_model(out, "bad_cos_int", [n("Cos", ["x"], ["y"])],
               [vi("x", I64, [2])], [vi("y", I64, None)])


if __name__ == "__main__":
    main(sys.argv[1])
