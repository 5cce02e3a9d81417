#!/usr/bin/python3
"""Hostile ONNX models for `zeroc compile` (issue 8): names that must not
reach the generated C++ unescaped, constants that are not finite or too
big, and models the runtime could never run.

Usage: /usr/bin/python3 test/e2e/hostile_models.py OUTDIR

Writes OUTDIR/<case>.onnx for every case below, and OUTDIR/names-data/ with
the data file of names.onnx (its input is named "x<TAB>y").  Names holding
bytes protobuf's Python API refuses (NUL, invalid UTF-8) are written as
same-length placeholders and patched into the serialized file.
"""

import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

OPSET = 17

# Initializer names of names.onnx: quotes, backslashes, a newline that would
# end a // comment, a block-comment end, a trigraph-like sequence, a '%' and
# braces (format strings), and bytes that are not UTF-8.
HOSTILE_NAMES = [
    'w"q\\',
    'b\n#include <cstdlib>\nstatic int z = std::system("touch PWNED");\n',
    'c*/??/{0}%s',
    'dPLACEHOLDER',  # becomes d\xff\xfe... (not UTF-8)
]
NON_UTF8 = (b'dPLACEHOLDER', b'd\xff\xfe\x80\x01?\x7f??/\\x')


def mlp(input_name, names, x_shape=(2, 3), extra_inputs=(), nodes_before=(),
        loss_extra=None, offset=0.0):
    """loss = sum(tanh(x @ w0) * w1 ...) over chained 3x3 weights."""
    inits = [numpy_helper.from_array(
        (np.arange(9, dtype=np.float32).reshape(3, 3) / 10 + i / 100 +
         np.float32(offset)), n)
        for i, n in enumerate(names)]
    nodes = list(nodes_before)
    cur = input_name
    for i, n in enumerate(names):
        nodes.append(helper.make_node("MatMul", [cur, n], [f"h{i}"],
                                      name=f"matmul{i}"))
        nodes.append(helper.make_node("Tanh", [f"h{i}"], [f"t{i}"],
                                      name=f"tanh{i}"))
        cur = f"t{i}"
    nodes.append(helper.make_node("ReduceSum", [cur], ["s"], keepdims=0,
                                  name="sum"))
    out = "s"
    if loss_extra:
        nodes.extend(loss_extra)
        out = loss_extra[-1].output[0]
    nodes.append(helper.make_node("Identity", [out], ["loss"], name="loss"))
    inputs = [helper.make_tensor_value_info(input_name, TensorProto.FLOAT,
                                            list(x_shape))]
    inputs += list(extra_inputs)
    g = helper.make_graph(nodes, "g", inputs,
                          [helper.make_tensor_value_info(
                              "loss", TensorProto.FLOAT, [])],
                          initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 8
    return m


def save(model, path, patches=()):
    data = model.SerializeToString()
    for old, new in patches:
        assert len(old) == len(new) and data.count(old) >= 1, old
        data = data.replace(old, new)
    with open(path, "wb") as f:
        f.write(data)


def gemm_model(alpha=1.0, beta=1.0):
    w = numpy_helper.from_array(np.ones((3, 3), np.float32), "w")
    c = numpy_helper.from_array(np.ones((3,), np.float32), "c")
    nodes = [helper.make_node("Gemm", ["x", "w", "c"], ["y"], alpha=alpha,
                              beta=beta, name="gemm"),
             helper.make_node("ReduceSum", ["y"], ["loss"], keepdims=0,
                              name="sum")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, [2, 3])], [helper.make_tensor_value_info(
            "loss", TensorProto.FLOAT, [])], initializer=[w, c])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 8
    return m


def layer_norm_model(epsilon):
    s = numpy_helper.from_array(np.ones((3,), np.float32), "scale")
    nodes = [helper.make_node("LayerNormalization", ["x", "scale"], ["y"],
                              epsilon=epsilon, axis=-1, name="ln"),
             helper.make_node("ReduceSum", ["y"], ["loss"], keepdims=0,
                              name="sum")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, [2, 3])], [helper.make_tensor_value_info(
            "loss", TensorProto.FLOAT, [])], initializer=[s])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 8
    return m


def constant_of_shape_model(n, offset=0.0):
    shape = helper.make_node("Constant", [], ["shape"], name="shape",
                             value=helper.make_tensor("v", TensorProto.INT64,
                                                      [1], [n]))
    cos = helper.make_node("ConstantOfShape", ["shape"], ["big"], name="fill",
                           value=helper.make_tensor("f", TensorProto.FLOAT,
                                                    [1], [1.0]))
    big_sum = helper.make_node("ReduceSum", ["big"], ["bs"], keepdims=0,
                               name="big_sum")
    add = helper.make_node("Add", ["s", "bs"], ["total"], name="add")
    return mlp("x", ["w"], nodes_before=[shape, cos, big_sum],
               loss_extra=[add], offset=offset)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)

    save(mlp("x\ty", HOSTILE_NAMES), os.path.join(out, "names.onnx"),
         [NON_UTF8])
    data = os.path.join(out, "names-data")
    os.makedirs(data, exist_ok=True)
    np.save(os.path.join(data, "x\ty.npy"),
            np.linspace(-1, 1, 24, dtype=np.float32).reshape(8, 3))

    save(mlp("x", ["wNUL"]), os.path.join(out, "nul-name.onnx"),
         [(b"wNUL", b"w\0UL")])
    save(mlp("x", ["w/1", "w_1"]), os.path.join(out, "save-collision.onnx"))
    save(mlp("x/y", ["w"]), os.path.join(out, "slash-input.onnx"))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 3])
    add_y = [helper.make_node("ReduceSum", ["y"], ["ys"], keepdims=0,
                              name="y_sum"),
             helper.make_node("Add", ["s", "ys"], ["sy"], name="add_y")]
    save(mlp("x", ["w"], extra_inputs=[y], loss_extra=add_y),
         os.path.join(out, "batch-mismatch.onnx"))

    save(gemm_model(alpha=float("nan")), os.path.join(out, "gemm-nan.onnx"))
    save(gemm_model(beta=float("inf")), os.path.join(out, "gemm-inf.onnx"))
    save(layer_norm_model(float("inf")), os.path.join(out, "ln-inf.onnx"))
    save(constant_of_shape_model(10**9), os.path.join(out, "cos-1e9.onnx"))
    save(constant_of_shape_model(2**32), os.path.join(out, "cos-2p32.onnx"))
    save(constant_of_shape_model(1000), os.path.join(out, "cos-1000.onnx"))
    # 200 unused host-folded constants of 4M elements: 6.4 GB if all kept.
    shape = helper.make_node("Constant", [], ["shape"], name="shape",
                             value=helper.make_tensor("v", TensorProto.INT64,
                                                      [1], [4194304]))
    fills = [helper.make_node("ConstantOfShape", ["shape"], [f"c{i}"],
                              name=f"fill{i}") for i in range(200)]
    save(mlp("x", ["w"], nodes_before=[shape] + fills),
         os.path.join(out, "many-folds.onnx"))
    # int64 shape arithmetic that overflows (numpy would wrap; zeroc folds
    # in doubles, exact only up to 2^53).
    a = numpy_helper.from_array(np.array([2 ** 63 - 1], np.int64), "a")
    b = numpy_helper.from_array(np.array([1], np.int64), "b")
    ovf = [helper.make_node("Add", ["a", "b"], ["ab"], name="overflow"),
           helper.make_node("Cast", ["ab"], ["abf"], to=TensorProto.FLOAT,
                            name="cast_ab"),
           helper.make_node("ReduceSum", ["abf"], ["abs"], keepdims=0,
                            name="ab_sum"),
           helper.make_node("Add", ["s", "abs"], ["sab"], name="add_ab")]
    m = mlp("x", ["w"], loss_extra=ovf)
    m.graph.initializer.extend([a, b])
    save(m, os.path.join(out, "int-overflow.onnx"))
    # The same shapes with other weights: a blob of the same size.
    save(constant_of_shape_model(1000, offset=0.5),
         os.path.join(out, "cos-1000-other.onnx"))
    # A rank-9 parameter (the trainer's tensors have at most 8 dims).
    w9 = numpy_helper.from_array(np.ones([1] * 9, np.float32), "w9")
    g = helper.make_graph(
        [helper.make_node("Mul", ["x9", "w9"], ["y"], name="mul"),
         helper.make_node("ReduceSum", ["y"], ["loss"], keepdims=0,
                          name="sum")], "g",
        [helper.make_tensor_value_info("x9", TensorProto.FLOAT, [2] + [1] * 8)],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        initializer=[w9])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 8
    save(m, os.path.join(out, "rank9.onnx"))
    # A float16 initializer in a float32 model.
    w16 = numpy_helper.from_array(np.ones((3, 3), np.float16), "w16")
    g = helper.make_graph(
        [helper.make_node("Cast", ["w16"], ["w32"], to=TensorProto.FLOAT,
                          name="cast"),
         helper.make_node("MatMul", ["x", "w32"], ["y"], name="matmul"),
         helper.make_node("ReduceSum", ["y"], ["loss"], keepdims=0,
                          name="sum")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        initializer=[w16])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 8
    save(m, os.path.join(out, "f16-param.onnx"))


if __name__ == "__main__":
    main()
