#!/usr/bin/python3
"""Writes the node-level ONNX models (opset 17, onnx.helper) of
conv-pool-bn.test into OUTDIR: one model per Conv / MaxPool / AveragePool /
GlobalAveragePool / BatchNormalization case, each with a scalar `loss`
(ReduceSum of the op's output) so it imports without --allow-no-loss."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def save(out, name, nodes, x_shape, inits=(), opset=17, outputs=None,
         producer=""):
    nodes = list(nodes) + [helper.make_node(
        "ReduceSum", [nodes[-1].output[0]], ["loss"], name="sum", keepdims=0)]
    g = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", F, x_shape)],
        [helper.make_tensor_value_info("loss", F, [])] + list(outputs or []),
        [numpy_helper.from_array(np.asarray(v, np.float32), n)
         for n, v in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          ir_version=8, producer_name=producer)
    with open(os.path.join(out, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())


def main(out):
    os.makedirs(out, exist_ok=True)
    ones = np.ones
    save(out, "conv2d_same_upper", [helper.make_node(
        "Conv", ["x", "w", "b"], ["y"], name="conv", strides=[2, 2],
        auto_pad="SAME_UPPER")], [2, 3, 7, 6],
        [("w", ones((4, 3, 3, 2))), ("b", ones(4))])
    save(out, "conv1d_group", [helper.make_node(
        "Conv", ["x", "w"], ["y"], name="conv", group=2, dilations=[2],
        pads=[1, 0])], [2, 4, 9], [("w", ones((6, 2, 3)))])
    save(out, "conv_bad_group", [helper.make_node(
        "Conv", ["x", "w"], ["y"], name="conv", group=3)], [2, 4, 9],
        [("w", ones((6, 2, 3)))])
    save(out, "maxpool_ceil", [helper.make_node(
        "MaxPool", ["x"], ["y"], name="pool", kernel_shape=[3, 3],
        strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1)], [2, 3, 8, 8])
    save(out, "maxpool_ceil_window_in_pad", [helper.make_node(
        "MaxPool", ["x"], ["y"], name="pool", kernel_shape=[2],
        strides=[2], pads=[0, 1], ceil_mode=1)], [1, 1, 4])
    save(out, "maxpool_indices_used", [
        helper.make_node("MaxPool", ["x"], ["y", "idx"], name="pool",
                         kernel_shape=[2, 2]),
        helper.make_node("Cast", ["idx"], ["idxf"], name="cast", to=F)],
        [2, 3, 4, 4])
    save(out, "avgpool_include_pad", [helper.make_node(
        "AveragePool", ["x"], ["y"], name="pool", kernel_shape=[3],
        pads=[1, 1], count_include_pad=1)], [2, 3, 5])
    save(out, "global_avgpool", [helper.make_node(
        "GlobalAveragePool", ["x"], ["y"], name="gap")], [2, 3, 4, 5])
    bn_inits = [("s", ones(3)), ("b", ones(3)), ("m", np.zeros(3)),
                ("v", ones(3))]
    save(out, "bn_training", [helper.make_node(
        "BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv"],
        name="bn", training_mode=1, epsilon=1e-3)], [2, 3, 4, 4], bn_inits)
    save(out, "bn_training_pytorch", [helper.make_node(
        "BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv"],
        name="bn", training_mode=1, momentum=0.75)], [2, 3, 4, 4], bn_inits,
        producer="pytorch")
    save(out, "bn_training_one_value", [helper.make_node(
        "BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv"],
        name="bn", training_mode=1)], [1, 3], bn_inits, producer="pytorch")
    save(out, "bn_running_mean_read", [helper.make_node(
        "BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv"],
        name="bn", training_mode=1)], [2, 3, 4, 4], bn_inits,
        outputs=[helper.make_tensor_value_info("rm", F, [3])])
    save(out, "bn_shared_statistics", [
        helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"],
                         ["y1", "rm1", "rv1"], name="bn1", training_mode=1),
        helper.make_node("BatchNormalization", ["y1", "s", "b", "m", "v"],
                         ["y", "rm2", "rv2"], name="bn2", training_mode=1)],
        [2, 3, 4, 4], bn_inits)
    save(out, "bn_opset13_saved_mean", [helper.make_node(
        "BatchNormalization", ["x", "s", "b", "m", "v"],
        ["y", "rm", "rv", "sm", "sv"], name="bn")], [2, 3, 4, 4], bn_inits,
        opset=13, outputs=[helper.make_tensor_value_info("sm", F, [3])])
    # Opset 19's Identity is newer than libonnx's schemas, so shape
    # inference does not run and zeroc's own check sees the mismatch.
    save(out, "bn_bad_statistics", [
        helper.make_node("Identity", ["x"], ["x1"], name="id"),
        helper.make_node("BatchNormalization", ["x1", "s", "b", "m", "v"],
                         ["y", "rm", "rv"], name="bn", training_mode=1)],
        [2, 3, 4, 4],
        [("s", ones(3)), ("b", ones(3)), ("m", np.zeros(4)), ("v", ones(3))],
        opset=19)
    save(out, "bn_inference", [helper.make_node(
        "BatchNormalization", ["x", "s", "b", "bn.running_mean",
                               "bn.running_var"], ["y"], name="bn")],
        [2, 3, 4], [("s", ones(3)), ("b", ones(3)),
                    ("bn.running_mean", np.zeros(3)),
                    ("bn.running_var", ones(3))])


if __name__ == "__main__":
    main(sys.argv[1])
