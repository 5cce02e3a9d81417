#!/usr/bin/python3
"""zeroc to-fp32 back into the original PyTorch module.

A small language model with a tied head (nn.Embedding weight shared with the
output Linear) and a LayerNorm, exported with zeroc_torch.export, trained 3
steps at ZeRO stage 3 on 2 ranks with a checkpoint, consolidated with
`zeroc to-fp32` and loaded into a fresh module with a strict
load_state_dict (zeroc_torch.weights.load_fp32). Checks that:
  * every state_dict tensor equals the trainer's own --save-params value,
    bit for bit, and the tied names share one tensor again;
  * the module's loss on step 4's global batch equals the loss the trainer
    logs for step 4 when it resumes from the same checkpoint.

    %system-python to_fp32_torch.py --zeroc zeroc --work DIR
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from zeroc_torch.export import export  # noqa: E402
from zeroc_torch.weights import load_fp32  # noqa: E402
from mpirun_isolated import MPIRUN  # noqa: E402

V, T, MB, W, S = 17, 6, 4, 2, 64


class TiedLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, 8)
        self.fc = nn.Linear(8, 8)
        self.ln = nn.LayerNorm(8)
        self.head = nn.Linear(8, V, bias=False)
        self.head.weight = self.emb.weight

    def forward(self, input_ids, labels):
        h = self.ln(torch.tanh(self.fc(self.emb(input_ids))))
        return F.cross_entropy(self.head(h).reshape(-1, V), labels.reshape(-1))


def run(cmd):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    p = subprocess.run(cmd, capture_output=True, text=True, env=env,
                       stdin=subprocess.DEVNULL)
    if p.returncode:
        sys.exit("%s failed: %s" % (" ".join(cmd[:3]), p.stderr[-800:]))
    return p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zeroc", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    torch.manual_seed(0)
    model = TiedLM()
    ids = torch.zeros(MB, T, dtype=torch.int64)
    onnx_path = os.path.join(a.work, "model.onnx")
    export(model, {"input_ids": ids, "labels": ids}, onnx_path)
    gen = torch.Generator().manual_seed(3)
    data = {"input_ids": torch.randint(0, V, (S, T), generator=gen)}
    data["labels"] = torch.roll(data["input_ids"], 1, dims=1)
    ddir = os.path.join(a.work, "data")
    os.makedirs(ddir, exist_ok=True)
    for k, v in data.items():
        np.save(os.path.join(ddir, k + ".npy"), v.numpy())
    out, ck = os.path.join(a.work, "out"), os.path.join(a.work, "ck")
    run([a.zeroc, "compile", onnx_path, "-o", out, "--stage", "3",
         "--world-size", str(W)])
    train = MPIRUN + ["-np", str(W), "--oversubscribe", "--bind-to", "none",
                      os.path.join(out, "train"), "--data", ddir, "--quiet"]
    run(train + ["--steps", "3", "--save-dir", ck, "--save-params",
                 os.path.join(a.work, "params")])
    run(train + ["--steps", "4", "--load-dir", ck, "--log-jsonl",
                 os.path.join(a.work, "step4.jsonl")])
    weights = os.path.join(a.work, "weights.safetensors")
    print(run([a.zeroc, "to-fp32", ck, weights]).stdout.strip())

    fresh = TiedLM()
    result = load_fp32(fresh, weights)
    assert not result.missing_keys and not result.unexpected_keys, result
    meta = json.load(open(os.path.join(a.work, "params", "params.json")))
    files = {p["name"]: p["file"] for p in meta["params"]}
    state = fresh.state_dict()
    for name, value in state.items():
        canonical = "emb.weight" if name == "head.weight" else name
        saved = np.load(os.path.join(a.work, "params", "rank0", files[canonical]))
        assert value.numpy().tobytes() == saved.tobytes(), name
    assert fresh.head.weight is fresh.emb.weight, "the tie is lost"
    step = 3  # 0-based: the 4th step's global batch, samples [3G, 4G)
    g = MB * W
    batch = {k: v[step * g:(step + 1) * g] for k, v in data.items()}
    with torch.no_grad():
        mine = float(fresh(**batch))
    logged = json.loads(open(os.path.join(a.work, "step4.jsonl")).readline())
    assert logged["step"] == 4, logged
    rel = abs(mine - logged["loss"]) / abs(logged["loss"])
    assert rel < 1e-5, (mine, logged["loss"])
    print("to-fp32: %d state_dict tensors loaded strictly into the PyTorch "
          "module, equal to the trained values; step-4 loss %.6f vs the "
          "trainer's %.6f (rel %.1e)" % (len(state), mine, logged["loss"], rel))

    # export-onnx: the trained initializers in the model, run by onnxruntime
    # where it is installed and always by zeroc's reference interpreter.
    trained = os.path.join(a.work, "trained.onnx")
    print(run([a.zeroc, "export-onnx", ck, onnx_path, "-o", trained]).stdout.strip())
    # The model's batch is the micro-batch: the step's loss is the mean of
    # its W micro-batches' losses (equal token counts).
    feeds = [{k: v[i * MB:(i + 1) * MB].numpy() for k, v in batch.items()}
             for i in range(W)]
    try:
        import onnxruntime as ort
        sess = ort.InferenceSession(trained, providers=["CPUExecutionProvider"])
        run_one = lambda f: float(sess.run(None, f)[0])
        runner = "onnxruntime %s" % ort.__version__
    except ImportError:
        sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "reference"))
        from onnx_torch import OnnxTorchModel
        m = OnnxTorchModel(trained, dtype=torch.float32)

        def run_one(f):
            with torch.no_grad():
                return float(m.loss({k: torch.from_numpy(v) for k, v in f.items()}))
        runner = "zeroc's reference interpreter (no onnxruntime here)"
    got = sum(run_one(f) for f in feeds) / W
    rel = abs(got - logged["loss"]) / abs(logged["loss"])
    assert rel < 1e-5, (got, logged["loss"])
    print("export-onnx: %s gives the step-4 loss %.6f, the trainer's %.6f "
          "(rel %.1e)" % (runner, got, logged["loss"], rel))


if __name__ == "__main__":
    main()
