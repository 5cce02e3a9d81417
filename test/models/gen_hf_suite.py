"""Regenerates the Hugging Face model-suite fixtures in test/models/hf/.

    scripts/gen-hf-fixtures.sh            # makes the venvs, runs this twice

or by hand, with a python that has torch, transformers and onnx:

    PY test/models/gen_hf_suite.py --variants helper_ts17,helper_dynamo OUT

For every architecture of hf_suite.py and every variant it writes
OUT/<arch>/<variant>/model.onnx (+ model.onnx.data for the dynamo exporter),
and once per architecture and torch build the data and the reference:
OUT/<arch>/data-<torch>/<input>.npy and OUT/<arch>/expected-<torch>.json,
the losses of the *original PyTorch module* trained with torch.optim.AdamW
for STEPS steps under docs/Training.md's data contract (G = MB x GAS
samples per step, micro-batch losses averaged, in float32) and, for a
module with BatchNorm running statistics, each rank's final running_mean
and running_var at world sizes 1 and 2 (rank m % W runs global micro-batch
m and updates its own copy, as under DeepSpeed).

Variants:
  helper_ts17     zeroc_torch.export, TorchScript exporter, opset 17
  helper_dynamo   zeroc_torch.export, dynamo exporter, opset 20 (torch 2.x)
  raw_ts17_fold   torch.onnx.export(dynamo=False, opset_version=17) with its
                  defaults (eval mode, do_constant_folding=True), no marker
  raw_dynamo      torch.onnx.export(...) with current torch's defaults
                  (dynamo, optimize=True), no marker
The torch tag is "torch2" for torch >= 2 and "torch113" for 1.13; a
1.13 run writes only helper_ts17 (as variant helper_ts17_t113).
"""

import argparse
import json
import os
import shutil
import sys
import warnings

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import hf_suite  # noqa: E402
from zeroc_torch.export import _LossOf, export  # noqa: E402

STEPS, GAS, SAMPLES = 10, 2, 8
ADAMW = dict(lr=1e-2, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)
DS_CONFIG = {
    "train_micro_batch_size_per_gpu": hf_suite.MB,
    "gradient_accumulation_steps": GAS,
    # torch.optim.AdamW alone does not clip (DeepSpeed's default is 1.0).
    "gradient_clipping": 0.0,
    "optimizer": {"type": "AdamW", "params": {
        "lr": ADAMW["lr"], "betas": list(ADAMW["betas"]), "eps": ADAMW["eps"],
        "weight_decay": ADAMW["weight_decay"]}},
    "zero_optimization": {"stage": 0},
}


def torch_tag():
    return "torch2" if int(torch.__version__.split(".")[0]) >= 2 else "torch113"


def samples(name, example):
    """SAMPLES samples per input, drawn like the example inputs: images
    normal, token ids below V, class labels below 3, causal-LM labels equal
    to the input ids, masked-LM labels -100 except at a quarter of the
    positions."""
    g = torch.Generator().manual_seed(1234)
    out = {}
    for k, v in example.items():
        shape = (SAMPLES,) + tuple(v.shape[1:])
        if v.is_floating_point():
            out[k] = torch.randn(shape, generator=g, dtype=v.dtype)
        elif k == "labels" and v.dim() == 1:
            out[k] = torch.randint(0, 3, shape, generator=g, dtype=v.dtype)
        elif k == "labels" and name == "bert_mlm":
            keep = torch.randint(0, 4, shape, generator=g) == 0
            keep[:, 0] = True
            out[k] = torch.where(keep, out["input_ids"],
                                 torch.full(shape, -100, dtype=v.dtype))
        elif k == "labels" and name != "t5":
            out[k] = out["input_ids"].clone()
        else:
            out[k] = torch.randint(0, hf_suite.V, shape, generator=g,
                                   dtype=v.dtype)
    return out


def running_stats(module):
    """name -> buffer of every BatchNorm running mean/variance."""
    return {n: b for n, b in module.named_buffers()
            if n.endswith((".running_mean", ".running_var"))}


def train_reference(module, names, data):
    """Per-step mean micro-batch losses of the original module, and each
    rank's final running statistics for world sizes 1 and 2 ({} without
    any): one copy per rank, swapped in around its micro-batches' forward
    passes (training-mode BatchNorm normalizes with the batch's statistics,
    so the losses do not depend on them)."""
    module.train()
    wrapper = _LossOf(module, names)
    opt = torch.optim.AdamW([p for p in module.parameters() if p.requires_grad],
                            **ADAMW)
    mb, G = hf_suite.MB, hf_suite.MB * GAS
    stats = running_stats(module)
    copies = {w: [{n: b.detach().double() for n, b in stats.items()}
                  for _ in range(w)] for w in (1, 2)}
    losses = []
    for s in range(STEPS):
        opt.zero_grad(set_to_none=True)
        total = 0.0
        for m in range(GAS):
            idx = [(s * G + m * mb + j) % SAMPLES for j in range(mb)]
            before = {n: b.detach().double() for n, b in stats.items()}
            loss = wrapper(*[data[n][idx] for n in names])
            for w, ranks in copies.items():
                mine = ranks[m % w]
                with torch.no_grad():
                    for n, b in stats.items():
                        # This forward's update, applied to the rank's copy:
                        # running = r * (1 - momentum) + batch * momentum.
                        bn = module.get_submodule(n.rsplit(".", 1)[0])
                        batch = (b.double() - before[n] * (1 - bn.momentum)) / bn.momentum
                        mine[n] = mine[n] * (1 - bn.momentum) + batch * bn.momentum
            (loss / GAS).backward()
            total += float(loss.detach())
        opt.step()
        losses.append(total / GAS)
    buffers = {str(w): [{n: v.double().tolist() for n, v in r.items()} for r in ranks]
               for w, ranks in copies.items()} if stats else {}
    return losses, buffers


def strip_node_metadata(path):
    """Drops the dynamo exporter's per-node stack traces (not semantics) so
    that the fixtures stay small."""
    import onnx
    m = onnx.load(path, load_external_data=False)
    for n in m.graph.node:
        if hasattr(n, "metadata_props"):   # onnx >= 1.16
            del n.metadata_props[:]
    onnx.save(m, path)


def raw_export(module, example, path, variant):
    module.train()
    names = list(example)
    w = _LossOf(module, names)
    kw = dict(input_names=names, output_names=["loss"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if variant == "raw_ts17_fold":
            torch.onnx.export(w, tuple(example.values()), path, dynamo=False,
                              opset_version=17, **kw)
        else:
            torch.onnx.export(w, tuple(example.values()), path, **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--variants", default="helper_ts17,helper_dynamo,"
                    "raw_ts17_fold,raw_dynamo")
    ap.add_argument("--models", default=",".join(hf_suite.NAMES))
    a = ap.parse_args()
    tag = torch_tag()
    variants = a.variants.split(",")
    if tag == "torch113":
        variants = ["helper_ts17"]
    status = {}
    for name in a.models.split(","):
        module, example = hf_suite.build(name)
        names = list(example)
        data = samples(name, example)
        adir = os.path.join(a.out, name)
        ddir = os.path.join(adir, "data-" + tag)
        os.makedirs(ddir, exist_ok=True)
        for k, v in data.items():
            np.save(os.path.join(ddir, k + ".npy"), v.numpy())
        with open(os.path.join(adir, "ds_config.json"), "w") as f:
            json.dump(DS_CONFIG, f, indent=1)
        initial = {k: v.clone() for k, v in module.state_dict().items()}
        for variant in variants:
            vname = variant + ("_t113" if tag == "torch113" else "")
            vdir = os.path.join(adir, vname)
            shutil.rmtree(vdir, ignore_errors=True)
            os.makedirs(vdir)
            path = os.path.join(vdir, "model.onnx")
            module.load_state_dict(initial)
            try:
                if variant.startswith("helper_"):
                    dyn = variant == "helper_dynamo"
                    export(module, example, path, opset=20 if dyn else 17,
                           exporter="dynamo" if dyn else "torchscript",
                           quiet=True)
                else:
                    raw_export(module, example, path, variant)
                if os.path.exists(path):
                    strip_node_metadata(path)
                status["%s/%s" % (name, vname)] = "exported"
            except Exception as e:  # recorded: some exports fail upstream
                shutil.rmtree(vdir, ignore_errors=True)
                status["%s/%s" % (name, vname)] = "export failed: %s: %s" % (
                    type(e).__name__, str(e).splitlines()[0][:200])
            print(name, vname, status["%s/%s" % (name, vname)], flush=True)
        module.load_state_dict(initial)
        losses, buffers = train_reference(module, names, data)
        ref = {"torch": torch.__version__, "steps": STEPS, "gas": GAS,
               "micro_batch": hf_suite.MB, "adamw": ADAMW,
               "inputs": names, "losses": losses}
        if buffers:
            ref["buffers_by_world"] = buffers
        import transformers
        ref["transformers"] = transformers.__version__
        with open(os.path.join(adir, "expected-%s.json" % tag), "w") as f:
            json.dump(ref, f, indent=1)
    with open(os.path.join(a.out, "exports-%s.json" % tag), "w") as f:
        json.dump(status, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
