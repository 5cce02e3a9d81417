"""Models for zeroc's parameter marking (docs/Import.md, "Parameters").

Called by gen_models.py. Builds
  * params_*.onnx: a tiny onnx.helper graph, y = ((x @ W) + B) * S, loss =
    mean(y), with the `zeroc.parameters` metadata (or training_info) in each
    valid and invalid form;
  * mlp_frozen.onnx: a torch 1.13 export of an MLP with a frozen Linear and a
    float buffer, marked as the export helper marks it (e2e parity);
  * gpt2_folded.onnx: examples/models.py's GPT exported with
    do_constant_folding=True (its tied head becomes `onnx::MatMul_N`, the
    transpose of wte.weight), from the same weights as gpt2_nodropout.onnx.
"""
import json
import os
import warnings

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
import torch
import torch.nn as nn
import torch.nn.functional as F

OPSET = 17
KEY = "zeroc.parameters"


def _marker(trainable, frozen=(), buffers=(), padding_idx=None, fmt=1):
    d = {"format": fmt, "trainable": list(trainable), "frozen": list(frozen),
         "buffers": list(buffers)}
    if padding_idx:
        d["padding_idx"] = padding_idx
    return json.dumps(d)


def _tiny(meta=None, extra_inits=(), w_name="W", transposed_head=False,
          training_info=None):
    """y = ((x @ W) + B) * S [ @ T ]; loss = mean(y)."""
    rng = np.random.RandomState(0)
    W = rng.randn(3, 4).astype(np.float32)
    inits = [numpy_helper.from_array(W, w_name),
             numpy_helper.from_array(np.zeros(4, np.float32), "B"),
             numpy_helper.from_array(np.full(4, 0.5, np.float32), "S"),
             numpy_helper.from_array(np.array([1, 2], np.int64), "K")]
    nodes = [helper.make_node("MatMul", ["x", w_name], ["h"], name="mm"),
             helper.make_node("Add", ["h", "B"], ["a"], name="add"),
             helper.make_node("Mul", ["a", "S"], ["y"], name="mul")]
    last = "y"
    if transposed_head:
        # A folded tied head: WT = W^T as its own initializer.
        inits.append(numpy_helper.from_array(np.ascontiguousarray(W.T), "onnx::MatMul_9"))
        nodes.append(helper.make_node("MatMul", ["y", "onnx::MatMul_9"], ["z"], name="head"))
        last = "z"
    inits += list(extra_inits)
    nodes.append(helper.make_node("ReduceMean", [last], ["loss"], keepdims=0,
                                  name="mean"))
    g = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)],
                          producer_name="zeroc-gen_param_models")
    m.ir_version = 8
    if meta is not None:
        for value in (meta if isinstance(meta, list) else [meta]):
            p = m.metadata_props.add()
            p.key, p.value = KEY, value
    if training_info is not None:
        ti = m.training_info.add()
        ti.algorithm.name = "algo"
        for k in training_info:
            b = ti.update_binding.add()
            b.key, b.value = k, k + "_new"
    return m


def _save(m, path):
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


class FrozenMLP(nn.Module):
    """fc1 frozen (requires_grad=False), fc2 trainable, a float buffer."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 5)
        self.fc2 = nn.Linear(5, 3)
        self.register_buffer("scale", torch.linspace(0.5, 1.5, 5))
        for p in self.fc1.parameters():
            p.requires_grad_(False)

    def forward(self, x, y):
        h = torch.tanh(self.fc1(x)) * self.scale
        return F.cross_entropy(self.fc2(h), y)


def mark(model, path):
    """Adds the metadata the export helper writes."""
    m = onnx.load(path)
    names = {t.name for t in m.graph.initializer}
    trainable = [n for n, p in model.named_parameters() if p.requires_grad and n in names]
    frozen = [n for n, p in model.named_parameters() if not p.requires_grad and n in names]
    buffers = [n for n, _ in model.named_buffers() if n in names]
    p = m.metadata_props.add()
    p.key, p.value = KEY, _marker(trainable, frozen, buffers)
    onnx.save(m, path)


def _export(model, args, path, names, fold):
    model.train()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, path, opset_version=OPSET,
                          training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=fold, input_names=names,
                          output_names=["loss"])


def gen_param_models(out, gpt_nodropout, gpt_args):
    files = []

    def save(m, name):
        _save(m, os.path.join(out, name))
        files.append(name)

    save(_tiny(_marker(["W"], ["B"], ["S"])), "params_marked.onnx")
    save(_tiny(_marker(["W", "B"], buffers=["S", "not_exported"])), "params_buffer_absent.onnx")
    save(_tiny(), "params_unmarked.onnx")
    save(_tiny(training_info=["W"]), "params_training_info.onnx")
    save(_tiny(training_info=["nope"]), "params_training_info_missing.onnx")
    save(_tiny(transposed_head=True), "params_folded_head.onnx")
    save(_tiny(_marker(["W", "B"], buffers=["S"]), transposed_head=True),
         "params_folded_head_marked.onnx")
    save(_tiny(_marker(["W", "B", "S", "onnx::MatMul_9"]), transposed_head=True),
         "params_folded_head_listed.onnx")
    save(_tiny(extra_inits=[numpy_helper.from_array(np.zeros(4, np.float32), "B2")]),
         "params_equal_valued.onnx")
    # Invalid markers.
    save(_tiny("{not json"), "params_bad_json.onnx")
    save(_tiny("[1, 2]"), "params_not_object.onnx")
    save(_tiny(_marker(["W"], fmt=2)), "params_bad_format.onnx")
    save(_tiny(json.dumps({"format": 1, "trainable": ["W"], "extra": 1})),
         "params_unknown_key.onnx")
    save(_tiny(json.dumps({"format": 1, "trainable": "W"})), "params_not_list.onnx")
    save(_tiny(_marker(["W", "W"])), "params_twice.onnx")
    save(_tiny(_marker(["W"], ["W"])), "params_two_lists.onnx")
    save(_tiny(_marker(["W", "fc.weight"])), "params_missing.onnx")
    save(_tiny(_marker(["W", "K"])), "params_non_float.onnx")
    save(_tiny([_marker(["W"]), _marker(["W"])]), "params_marker_twice.onnx")
    save(_tiny(_marker([], ["W", "B"])), "params_all_frozen.onnx")
    save(_tiny(_marker(["W"], padding_idx={"W": 3})), "params_padding_row.onnx")
    save(_tiny(_marker(["W"], padding_idx={"W": 1})), "params_padding.onnx")
    save(_tiny(_marker(["W"], padding_idx={"S": 0})), "params_padding_buffer.onnx")

    torch.manual_seed(1)
    mlp = FrozenMLP()
    path = os.path.join(out, "mlp_frozen.onnx")
    _export(mlp, (torch.randn(8, 6), torch.randint(0, 3, (8,))), path,
            ["x", "y"], fold=False)
    mark(mlp, path)
    files.append("mlp_frozen.onnx")

    _export(gpt_nodropout, gpt_args, os.path.join(out, "gpt2_folded.onnx"),
            ["idx", "targets"], fold=True)
    files.append("gpt2_folded.onnx")
    return files
