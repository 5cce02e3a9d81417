#!/usr/bin/python3
"""Writes a GPT-2-shaped ONNX training graph with its weights as external
data, at any size (GPT-2-XL: 48 layers, 1600 wide, 25 heads, 50257 tokens:
1.56 B parameters, 6.2 GB of float32), without torch and without holding the
weights in memory: every tensor is drawn with numpy and appended to
`model.onnx.data` one at a time, as the exporters lay it out (one file,
offsets and lengths per tensor).

    /usr/bin/python3 bench/gen_large_gpt.py OUTDIR [--layers 48 --width 1600
        --heads 25 --vocab 50257 --seq 64 --batch 1]

The graph is what torch's TorchScript exporter writes for a nanoGPT-style
model at opset 17 (the suite's examples/models.py GPT): LayerNormalization,
Gemm-free MatMul + Add linears, a fused qkv Split, a Where causal mask,
Erf GELU, the tied head as Transpose(wte), SoftmaxCrossEntropyLoss; every
weight is a parameter, marked in `zeroc.parameters`.
"""
import argparse
import json
import os

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper


class Writer:
    def __init__(self, out):
        self.dir = out
        self.data_name = "model.onnx.data"
        self.f = open(os.path.join(out, self.data_name), "wb")
        self.offset = 0
        self.inits, self.nodes, self.params = [], [], []
        self.rng = np.random.default_rng(0)
        self.n = 0

    def weight(self, name, shape, std=0.02, value=None):
        if value is None:
            arr = (self.rng.standard_normal(shape, dtype=np.float32) * std)
        else:
            arr = np.full(shape, value, dtype=np.float32)
        raw = arr.tobytes()
        pad = (-self.offset) % 64
        self.f.write(b"\0" * pad)
        self.offset += pad
        t = onnx.TensorProto()
        t.name, t.data_type = name, T.FLOAT
        t.dims.extend(shape)
        t.data_location = T.EXTERNAL
        for k, v in (("location", self.data_name), ("offset", str(self.offset)),
                     ("length", str(len(raw)))):
            e = t.external_data.add()
            e.key, e.value = k, v
        self.f.write(raw)
        self.offset += len(raw)
        self.inits.append(t)
        self.params.append(name)
        return name

    def const(self, arr, dtype):
        """A Constant node, as the exporters write scalars and shapes."""
        name = "c%d" % self.n
        self.n += 1
        self.nodes.append(helper.make_node(
            "Constant", [], [name], name="Constant_%d" % self.n,
            value=helper.make_tensor(name + "_value", dtype, arr.shape,
                                     arr.flatten().tolist())))
        return name

    def node(self, op, ins, **attrs):
        out = "v%d" % self.n
        self.n += 1
        self.nodes.append(helper.make_node(op, ins, [out], name="%s_%d" % (op, self.n), **attrs))
        return out


def build(a):
    os.makedirs(a.out, exist_ok=True)
    w = Writer(a.out)
    B, S, C, H, V, L = a.batch, a.seq, a.width, a.heads, a.vocab, a.layers
    hs = C // H
    i64 = lambda v: w.const(np.array(v, dtype=np.int64), T.INT64)
    f32 = lambda v: w.const(np.array(v, dtype=np.float32), T.FLOAT)
    wte = w.weight("wte.weight", [V, C])
    wpe = w.weight("wpe.weight", [a.positions, C], std=0.01)
    pos = i64(list(range(S)))
    x = w.node("Add", [w.node("Gather", [wte, "idx"]), w.node("Gather", [wpe, pos])])
    mask = w.const(np.tril(np.ones((S, S), dtype=bool)) == 0, T.BOOL)
    ninf, scale = f32(-np.inf), f32(1.0 / np.sqrt(hs))
    half, one, rs2 = f32(0.5), f32(1.0), f32(1.0 / np.sqrt(2.0))
    heads_shape, merge_shape = i64([B, S, H, hs]), i64([B, S, C])
    split = i64([C, C, C])

    def ln(x, p):
        return w.node("LayerNormalization", [x, w.weight(p + ".weight", [C], value=1.0),
                                             w.weight(p + ".bias", [C], value=0.0)],
                      axis=-1, epsilon=1e-5)

    def linear(x, p, i, o):
        y = w.node("MatMul", [x, w.weight(p + ".weight", [i, o])])
        return w.node("Add", [y, w.weight(p + ".bias", [o], value=0.0)])

    for l in range(L):
        p = "h.%d." % l
        h = ln(x, p + "ln_1")
        qkv = linear(h, p + "attn.c_attn", C, 3 * C)
        outs = ["v%d" % (w.n + k) for k in range(3)]
        w.n += 3
        w.nodes.append(helper.make_node("Split", [qkv, split], outs, axis=2,
                                        name="Split_%d" % w.n))
        q, k, v = [w.node("Transpose", [w.node("Reshape", [t, heads_shape])],
                          perm=[0, 2, 1, 3]) for t in outs]
        att = w.node("Mul", [w.node("MatMul", [q, w.node("Transpose", [k], perm=[0, 1, 3, 2])]), scale])
        att = w.node("Softmax", [w.node("Where", [mask, ninf, att])], axis=-1)
        y = w.node("Reshape", [w.node("Transpose", [w.node("MatMul", [att, v])], perm=[0, 2, 1, 3]),
                               merge_shape])
        x = w.node("Add", [x, linear(y, p + "attn.c_proj", C, C)])
        h = linear(ln(x, p + "ln_2"), p + "mlp.c_fc", C, 4 * C)
        g = w.node("Mul", [w.node("Mul", [h, half]),
                           w.node("Add", [w.node("Erf", [w.node("Mul", [h, rs2])]), one])])
        x = w.node("Add", [x, linear(g, p + "mlp.c_proj", 4 * C, C)])
    x = ln(x, "ln_f")
    logits = w.node("MatMul", [x, w.node("Transpose", [wte], perm=[1, 0])])
    flat = w.node("Reshape", [logits, i64([B * S, V])])
    tgt = w.node("Reshape", ["targets", i64([B * S])])
    w.nodes.append(helper.make_node("SoftmaxCrossEntropyLoss", [flat, tgt], ["loss"],
                                    name="loss", reduction="mean"))
    w.f.close()
    g = helper.make_graph(
        w.nodes, "gpt",
        [helper.make_tensor_value_info("idx", T.INT64, [B, S]),
         helper.make_tensor_value_info("targets", T.INT64, [B, S])],
        [helper.make_tensor_value_info("loss", T.FLOAT, [])], w.inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="zeroc bench/gen_large_gpt.py")
    m.ir_version = 8
    e = m.metadata_props.add()
    e.key = "zeroc.parameters"
    e.value = json.dumps({"format": 1, "trainable": w.params, "frozen": [],
                          "buffers": [], "padding_idx": {}, "aliases": {}})
    onnx.save(m, os.path.join(a.out, "model.onnx"))
    n = sum(int(np.prod(t.dims)) for t in w.inits if t.name in set(w.params))
    print("gen_large_gpt: %s: %d layers, width %d: %d parameters (%.2f GB), %d nodes"
          % (a.out, L, C, n, n * 4 / 1e9, len(w.nodes)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=48)
    ap.add_argument("--width", type=int, default=1600)
    ap.add_argument("--heads", type=int, default=25)
    ap.add_argument("--vocab", type=int, default=50257)
    ap.add_argument("--positions", type=int, default=1024)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--batch", type=int, default=1)
    build(ap.parse_args())


if __name__ == "__main__":
    main()
