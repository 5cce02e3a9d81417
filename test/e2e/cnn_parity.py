#!/usr/bin/python3
"""Training parity of a tiny CNN with the original PyTorch module.

TinyCNN (Conv 3x3 + BatchNorm2d in training mode + Relu + MaxPool 2x2 +
AveragePool 3x3 with padding (count_include_pad=False: torch 1.13 exports
the default as Pad + AveragePool) + a grouped, strided Conv + GlobalAveragePool
+ Linear + cross entropy) is exported with Debian's torch 1.13
(torch.onnx.export, TrainingMode.TRAINING, do_constant_folding=False, opset
17), compiled with `zeroc compile` for each requested ZeRO stage at world
size 2, and trained for --steps AdamW steps on 2 Open MPI ranks. The same
module (a float64 copy) is trained with torch.optim.AdamW on the same
micro-batches (docs/Training.md's data contract: step s, global
micro-batch m covers samples (s*G + m*MB + j) mod S, run by rank m % W;
the step's gradient is the mean of the micro-batch gradients). Every step's
loss must agree within --rtol and the final parameters within --param-rtol
(relative norm).

Each micro-batch is normalized with its own statistics, in PyTorch as in
zeroc (PyTorch DDP without SyncBatchNorm does the same per rank). The
running mean and variance are buffers that every rank updates from its own
micro-batches (as under DeepSpeed; rank 0's are what it saves): the
reference keeps one copy of them per rank, swapped in around each
micro-batch's forward pass, and each rank's saved bn1.running_mean /
bn1.running_var must match its copy within --param-rtol. The export has no
parameter marker: the running statistics are buffers because the
training-mode BatchNormalization updates them.

Prints one line per stage and `cnn_parity: N passed, M failed`.
"""
import argparse
import copy
import json
import os
import shutil
import subprocess
import sys
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from mpirun_isolated import MPIRUN

MB, GAS, WORLD, SAMPLES, CLASSES = 4, 2, 2, 24, 5
LR, WD = 1e-2, 0.01


class TinyCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(2)
        self.avg = nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False)
        self.conv2 = nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=2)
        self.fc = nn.Linear(8, CLASSES)

    def forward(self, x, y):
        h = self.pool(torch.relu(self.bn1(self.conv1(x))))
        h = torch.relu(self.conv2(self.avg(h)))
        h = F.adaptive_avg_pool2d(h, 1).reshape(MB, 8)
        return F.cross_entropy(self.fc(h), y)


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env,
                       timeout=600)
    if p.returncode != 0:
        raise RuntimeError("%s failed (rc %d): %s" % (
            " ".join(cmd[:2]), p.returncode, (p.stderr or p.stdout)[-800:]))


def torch_train(module, data, steps):
    mod = copy.deepcopy(module).double().train()
    opt = torch.optim.AdamW(mod.parameters(), lr=LR, weight_decay=WD)
    n, G, losses = GAS * WORLD, MB * GAS * WORLD, []
    stats = ("running_mean", "running_var")
    per_rank = [{k: getattr(mod.bn1, k).clone() for k in stats}
                for _ in range(WORLD)]
    for s in range(steps):
        opt.zero_grad()
        total = 0.0
        for m in range(n):
            idx = [(s * G + m * MB + j) % SAMPLES for j in range(MB)]
            x = torch.from_numpy(data["x"][idx]).double()
            y = torch.from_numpy(data["y"][idx])
            mine = per_rank[m % WORLD]
            for k in stats:
                getattr(mod.bn1, k).copy_(mine[k])
            loss = mod(x, y)
            for k in stats:
                mine[k] = getattr(mod.bn1, k).clone()
            (loss / n).backward()
            total += loss.item()
        opt.step()
        losses.append(total / n)
    buffers = [{"bn1." + k: v.numpy() for k, v in r.items()} for r in per_rank]
    return losses, {k: v.detach().numpy() for k, v in mod.named_parameters()}, buffers


def relative_norm(mine, want):
    diff = float(np.sum((mine.astype(np.float64) - want) ** 2))
    return (diff / float(np.sum(want ** 2))) ** 0.5


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--zeroc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--stages", default="0,3")
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--param-rtol", type=float, default=1e-3)
    args = ap.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    torch.manual_seed(0)
    module = TinyCNN()
    rng = np.random.default_rng(0)
    data = {"x": rng.standard_normal((SAMPLES, 3, 8, 8)).astype(np.float32),
            "y": rng.integers(0, CLASSES, SAMPLES).astype(np.int64)}
    ddir = os.path.join(args.work, "data")
    os.makedirs(ddir)
    for k, v in data.items():
        np.save(os.path.join(ddir, k + ".npy"), v)
    onnx_path = os.path.join(args.work, "cnn.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(copy.deepcopy(module).train(),
                          (torch.from_numpy(data["x"][:MB]),
                           torch.from_numpy(data["y"][:MB])),
                          onnx_path, opset_version=17,
                          training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False, input_names=["x", "y"],
                          output_names=["loss"])
    # torch.onnx.export traces the module in training mode, and that forward
    # pass updates the running statistics it then writes (zeroc_torch.export
    # writes the values from before the trace): the reference starts from
    # the exported ones.
    import onnx
    from onnx import numpy_helper
    for init in onnx.load(onnx_path).graph.initializer:
        if init.name.startswith("bn1.running_"):
            getattr(module.bn1, init.name[len("bn1."):]).copy_(
                torch.from_numpy(numpy_helper.to_array(init).copy()))
    cfg = os.path.join(args.work, "ds.json")
    with open(cfg, "w") as f:
        json.dump({"train_micro_batch_size_per_gpu": MB,
                   "gradient_accumulation_steps": GAS,
                   "gradient_clipping": 0.0,  # torch.optim.AdamW alone
                   "optimizer": {"type": "AdamW",
                                 "params": {"lr": LR, "weight_decay": WD}}}, f)
    ref_losses, ref_params, ref_buffers = torch_train(module, data, args.steps)
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    passed = failed = 0
    for stage in [int(s) for s in args.stages.split(",")]:
        out = os.path.join(args.work, "s%d" % stage)
        try:
            run([args.zeroc, "compile", onnx_path, "-o", out, "--stage",
                 str(stage), "--world-size", str(WORLD), "--config", cfg])
            run(MPIRUN + ["-np", str(WORLD), "--oversubscribe", "--bind-to",
                 "none", os.path.join(out, "train"), "--data", ddir, "--steps",
                 str(args.steps), "--log-jsonl", out + "/log.jsonl",
                 "--save-params", out + "/params", "--quiet"], env=env)
            log = [json.loads(l) for l in open(out + "/log.jsonl") if l.strip()]
            problems = []
            if len(log) != args.steps:
                problems.append("%d log records for %d steps" % (len(log), args.steps))
            worst = 0.0
            for rec, want in zip(log, ref_losses):
                rel = abs(rec["loss"] - want) / max(abs(want), 1e-12)
                worst = max(worst, rel)
                if rel > args.rtol:
                    problems.append("step %d loss %.8g vs torch %.8g (rel %.1e)"
                                    % (rec["step"], rec["loss"], want, rel))
            diff2 = ref2 = 0.0
            for name, want in ref_params.items():
                mine = np.load(os.path.join(out, "params", "rank0", name + ".npy"))
                diff2 += float(np.sum((mine.astype(np.float64) - want) ** 2))
                ref2 += float(np.sum(want ** 2))
            prel = (diff2 / ref2) ** 0.5
            if prel > args.param_rtol:
                problems.append("params differ by %.1e (relative norm)" % prel)
            brel = 0.0
            for rank, want_buffers in enumerate(ref_buffers):
                for name, want in want_buffers.items():
                    mine = np.load(os.path.join(out, "params", "rank%d" % rank,
                                                name + ".npy"))
                    rel = relative_norm(mine, want)
                    brel = max(brel, rel)
                    if rel > args.param_rtol:
                        problems.append("rank %d %s differs by %.1e" % (rank, name, rel))
            if problems:
                raise RuntimeError("; ".join(problems[:3]))
            passed += 1
            print("PASS tiny CNN stage %d world %d: %d steps, loss %.5f -> %.5f, "
                  "max loss rel diff %.1e, param rel diff %.1e, running "
                  "statistics rel diff %.1e"
                  % (stage, WORLD, args.steps, log[0]["loss"], log[-1]["loss"],
                     worst, prel, brel))
        except Exception as e:  # noqa: BLE001 - report and go on
            failed += 1
            print("FAIL tiny CNN stage %d: %s" % (stage, e))
    print("cnn_parity: %d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
