"""Writes a one-model suite (test/e2e/hf_suite.py's layout) for an
nn.Embedding(padding_idx=0) model whose data uses token 0 often, exported by
the helper with this python's torch, with the original module's AdamW
losses. Checks that padding_idx matters: the same training without it gives
different losses (so the suite run is a real test of zeroc's handling).

    %system-python padding_idx_case.py OUTDIR
"""
import json
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "models"))
import gen_hf_suite as g  # noqa: E402
import hf_suite  # noqa: E402

V, T = 13, 6


class PadLM(nn.Module):
    def __init__(self, pad):
        super().__init__()
        self.emb = nn.Embedding(V, 8, padding_idx=pad)
        self.fc = nn.Linear(8, 8)
        self.head = nn.Linear(8, V, bias=False)
        self.head.weight = self.emb.weight   # tied: the pad row still learns from the head

    def forward(self, input_ids, labels):
        h = torch.tanh(self.fc(self.emb(input_ids)))
        return F.cross_entropy(self.head(h).reshape(-1, V), labels.reshape(-1))


def build(pad):
    torch.manual_seed(0)
    m = PadLM(pad)
    ids = torch.zeros(hf_suite.MB, T, dtype=torch.int64)
    return m, {"input_ids": ids, "labels": ids}


def main(out):
    tag = g.torch_tag()
    adir = os.path.join(out, "padlm")
    vdir = os.path.join(adir, "helper_ts17" + ("_t113" if tag == "torch113" else ""))
    os.makedirs(vdir, exist_ok=True)
    gen = torch.Generator().manual_seed(5)
    ids = torch.randint(0, V, (g.SAMPLES, T), generator=gen)
    ids[:, ::2] = 0                       # the padding token, often
    data = {"input_ids": ids, "labels": torch.roll(ids, 1, dims=1)}
    ddir = os.path.join(adir, "data-" + tag)
    os.makedirs(ddir, exist_ok=True)
    import numpy as np
    for k, v in data.items():
        np.save(os.path.join(ddir, k + ".npy"), v.numpy())
    with open(os.path.join(adir, "ds_config.json"), "w") as f:
        json.dump(g.DS_CONFIG, f)
    m, ex = build(0)
    g.export(m, ex, os.path.join(vdir, "model.onnx"), quiet=True)
    m, ex = build(0)
    losses, _ = g.train_reference(m, list(ex), data)
    m, ex = build(None)
    without, _ = g.train_reference(m, list(ex), data)
    worst = max(abs(a - b) / abs(b) for a, b in zip(losses, without))
    assert worst > 1e-4, "padding_idx does not change training (%.1e)" % worst
    ref = {"torch": torch.__version__, "steps": g.STEPS, "gas": g.GAS,
           "micro_batch": hf_suite.MB, "adamw": g.ADAMW, "inputs": list(ex),
           "losses": losses}
    with open(os.path.join(adir, "expected-%s.json" % tag), "w") as f:
        json.dump(ref, f)
    with open(os.path.join(out, "status.json"), "w") as f:
        json.dump({"padlm/" + os.path.basename(vdir): "train"}, f)
    print("padding_idx case: losses differ from training without it by "
          "up to %.1e" % worst)


if __name__ == "__main__":
    main(sys.argv[1])
