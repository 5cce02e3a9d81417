#!/usr/bin/env python3
"""Export tiny GPT-2 and Llama training graphs with current PyTorch and list
what they contain (ops per domain, opset, IR version, local functions,
external data).  Not part of `make test`; run with the export venv:

  /work/venv-export/bin/python test/Import/inventory_exports.py OUTDIR

Writes OUTDIR/<model>_<exporter>/model.onnx (+ model.onnx.data) and prints
a markdown inventory (also written to OUTDIR/inventory.md).
"""
import collections
import os
import sys
import traceback

import onnx
import torch
import transformers


class LossOnly(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids):
        return self.model(input_ids=ids, labels=ids).loss


def gpt2():
    cfg = transformers.GPT2Config(n_layer=2, n_head=2, n_embd=32, vocab_size=61,
                                  n_positions=16, resid_pdrop=0, embd_pdrop=0,
                                  attn_pdrop=0)
    return transformers.GPT2LMHeadModel(cfg)


def llama(eager=False):
    cfg = transformers.LlamaConfig(hidden_size=32, intermediate_size=64,
                                   num_hidden_layers=2, num_attention_heads=2,
                                   num_key_value_heads=1, vocab_size=61,
                                   max_position_embeddings=16)
    if eager:
        # The TorchScript exporter cannot convert SDPA with enable_gqa
        # (num_key_value_heads < num_attention_heads): use eager attention.
        cfg._attn_implementation = "eager"
    return transformers.LlamaForCausalLM(cfg)


EXPORTERS = {
    "dynamo": dict(dynamo=True),
    "dynamo_noopt": dict(dynamo=True, optimize=False),
    "ts17": dict(dynamo=False, opset_version=17),
    "ts17_nofold": dict(dynamo=False, opset_version=17, do_constant_folding=False),
    "ts18": dict(dynamo=False, opset_version=18),
    "ts18_nofold": dict(dynamo=False, opset_version=18, do_constant_folding=False),
    "ts20": dict(dynamo=False, opset_version=20),
    "ts20_nofold": dict(dynamo=False, opset_version=20, do_constant_folding=False),
}


def ops_of(graph, counter):
    for n in graph.node:
        counter[(n.domain or "ai.onnx", n.op_type)] += 1
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                ops_of(a.g, counter)
            for g in a.graphs:
                ops_of(g, counter)


def describe(path):
    m = onnx.load(path, load_external_data=False)
    c = collections.Counter()
    ops_of(m.graph, c)
    funcs = [(f.domain, f.name, len(f.node)) for f in m.functions]
    ext = sum(1 for t in m.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL)
    files = sorted(os.listdir(os.path.dirname(path)))
    return dict(ir=m.ir_version,
                opsets={(o.domain or "ai.onnx"): o.version for o in m.opset_import},
                ops=c, functions=funcs, initializers=len(m.graph.initializer),
                external=ext, files=files,
                inputs=[(i.name, i.type.tensor_type.elem_type) for i in m.graph.input])


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    results = {}
    only = sys.argv[2:]  # optional "model/exporter" filters
    models = (("gpt2", gpt2), ("llama", llama),
              ("llama_eager", lambda: llama(eager=True)))
    for mname, make in models:
        for ename, kw in EXPORTERS.items():
            if only and f"{mname}/{ename}" not in only:
                continue
            torch.manual_seed(0)
            model = LossOnly(make())
            model.train()
            ids = torch.randint(0, 61, (2, 8))
            d = os.path.join(out, f"{mname}_{ename}")
            os.makedirs(d, exist_ok=True)
            path = os.path.join(d, "model.onnx")
            try:
                torch.onnx.export(model, (ids,), path, **kw)
                results[(mname, ename)] = describe(path)
            except Exception as e:  # record the failure, go on
                results[(mname, ename)] = dict(error=f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
                traceback.print_exc()
    lines = ["# Op inventory of current-PyTorch exports", "",
             f"torch {torch.__version__}, transformers {transformers.__version__}, onnx {onnx.__version__}", ""]
    allops = collections.defaultdict(dict)
    for (mname, ename), r in results.items():
        lines.append(f"## {mname} / {ename}")
        if "error" in r:
            lines += [f"export failed: {r['error']}", ""]
            continue
        lines.append(f"IR {r['ir']}, opsets {r['opsets']}, {r['initializers']} initializers "
                     f"({r['external']} external), files {r['files']}, functions {r['functions']}, inputs {r['inputs']}")
        lines.append("")
        lines.append(", ".join(f"{op if d == 'ai.onnx' else d + '::' + op} {n}"
                               for (d, op), n in sorted(r["ops"].items())))
        lines.append("")
        for k, n in r["ops"].items():
            allops[k][f"{mname}/{ename}"] = n
    lines += ["## All ops", "", "| op | count per model/exporter |", "|---|---|"]
    for (d, op), per in sorted(allops.items()):
        name = op if d == "ai.onnx" else d + "::" + op
        lines.append(f"| {name} | " + ", ".join(f"{k} {v}" for k, v in sorted(per.items())) + " |")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "inventory.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
