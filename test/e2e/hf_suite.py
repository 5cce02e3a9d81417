#!/usr/bin/python3
"""The Hugging Face model suite: every committed export in test/models/hf
(tiny random-init architectures, several exporters; gen_hf_suite.py) is
compiled by zeroc and trained for the reference's steps, and each step's
loss is compared with the *original PyTorch module* trained with
torch.optim.AdamW on the same samples (expected-<torch>.json). Where the
reference records BatchNorm running statistics (buffers_by_world), each
rank's saved running_mean/running_var must match its PyTorch copy within
--rtol (relative norm) too.

test/models/hf/status.json says, per ARCH/VARIANT, what zeroc must do:
  "train"            compile and train within --rtol at every run of the
                     matrix below;
  "refuse: TEXT"     `zeroc compile` exits 1 with one error line that
                     contains TEXT (a documented limit or a graph zeroc
                     cannot trust), and writes no output.
An export that trains although it is listed as refused, or is refused
although it is listed to train, fails the test: the list is kept true.

Matrix (what `make test` runs): helper_ts17 exports at stage 0 on 1 rank
and stages 0-3 on 2 ranks, the other exports at stage 0 on 1 rank and
stage 3 on 2 ranks; --full (`make test-hf-suite`): every export at stages
0-3 on 1 and 2 ranks. The global batch is MB x GAS x (ranks) per the data
contract: gradient_accumulation_steps is GAS / W, so that every run sees
the same samples per step as the reference.

Prints one line per run and `hf-suite: N passed, M failed`; exits 1 on a
failure.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

from mpirun_isolated import MPIRUN

HERE = os.path.dirname(os.path.abspath(__file__))
SUITE = os.path.join(HERE, "..", "models", "hf")


def mpi_env():
    env = dict(os.environ)
    env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    return env


def matrix(variant, full):
    if full:
        return [(s, w) for w in (1, 2) for s in (0, 1, 2, 3)]
    if variant == "helper_ts17":
        return [(0, 1)] + [(s, 2) for s in (0, 1, 2, 3)]
    return [(0, 1), (3, 2)]


def compile_cmd(zeroc, model, out, stage, w, config):
    return [zeroc, "compile", model, "-o", out, "--stage", str(stage),
            "--world-size", str(w), "--config", config]


def run_one(args, arch, variant, expect, stage, w):
    adir = os.path.join(args.suite, arch)
    tag = "torch113" if variant.endswith("_t113") else "torch2"
    ref = json.load(open(os.path.join(adir, "expected-%s.json" % tag)))
    work = os.path.join(args.work, arch, variant, "s%d_w%d" % (stage, w))
    os.makedirs(os.path.dirname(work), exist_ok=True)
    shutil.rmtree(work, ignore_errors=True)
    cfg = json.load(open(os.path.join(adir, "ds_config.json")))
    cfg["gradient_accumulation_steps"] = ref["gas"] // w
    cfg["zero_optimization"] = {"stage": stage}
    cfg_path = work + ".ds_config.json"
    with open(cfg_path, "w") as f:
        json.dump(cfg, f)
    model = os.path.join(adir, variant, "model.onnx")
    p = subprocess.run(compile_cmd(args.zeroc, model, work, stage, w, cfg_path),
                       capture_output=True, text=True, timeout=900)
    err = [l for l in p.stderr.splitlines() if "error:" in l]
    if expect.startswith("refuse:"):
        want = expect[len("refuse:"):].strip()
        if p.returncode == 1 and len(err) == 1 and want in err[0] and \
                not os.path.exists(work):
            return True, "refused as listed"
        if p.returncode == 0:
            return False, "listed as refused (%s) but it compiled" % want
        return False, "refused, but not as listed (%r): rc %d: %s" % (
            want, p.returncode, p.stderr.strip()[-300:])
    if p.returncode != 0:
        return False, "compile failed (rc %d): %s" % (
            p.returncode, (err or p.stderr.strip().splitlines() or [""])[-1][:300])
    log = work + ".log.jsonl"
    buffers = ref.get("buffers_by_world", {}).get(str(w))
    save = ["--save-params", work + ".params"] if buffers else []
    t = subprocess.run(MPIRUN + ["-np", str(w), "--oversubscribe",
                        "--bind-to", "none", os.path.join(work, "train"),
                        "--data", os.path.join(adir, "data-" + tag),
                        "--steps", str(ref["steps"]), "--log-jsonl", log,
                        "--quiet"] + save, capture_output=True, text=True,
                       env=mpi_env(), timeout=900)
    if t.returncode != 0:
        return False, "train failed (rc %d): %s" % (t.returncode,
                                                   t.stderr.strip()[-300:])
    got = [json.loads(l)["loss"] for l in open(log) if l.strip()]
    want = ref["losses"]
    if len(got) != len(want):
        return False, "%d losses, reference has %d" % (len(got), len(want))
    worst = 0.0
    for i, (a, b) in enumerate(zip(got, want)):
        rel = abs(a - b) / max(abs(b), 1e-12)
        worst = max(worst, rel)
        if rel > args.rtol:
            return False, "step %d loss %.8g vs PyTorch %.8g (rel %.2e)" % (
                i + 1, a, b, rel)
    worst_buffer = buffer_error(work + ".params", buffers) if buffers else None
    if isinstance(worst_buffer, str):
        return False, worst_buffer
    if worst_buffer is not None and worst_buffer > args.rtol:
        return False, "running statistics differ from PyTorch's by %.2e" % worst_buffer
    return True, "max rel %.1e over %d steps%s" % (
        worst, len(got), "" if worst_buffer is None else
        ", running statistics %.1e" % worst_buffer)


def buffer_error(params_dir, want_by_rank):
    """The largest relative norm between each rank's saved running
    statistics and PyTorch's (one copy per rank), or an error string."""
    import numpy as np
    worst = 0.0
    for rank, want in enumerate(want_by_rank):
        for name, values in want.items():
            path = os.path.join(params_dir, "rank%d" % rank, name + ".npy")
            if not os.path.exists(path):
                return "rank %d did not save buffer %s" % (rank, name)
            mine = np.load(path).astype(np.float64)
            ref = np.asarray(values, np.float64)
            if mine.shape != ref.shape:
                return "buffer %s has shape %s, PyTorch's %s" % (
                    name, mine.shape, ref.shape)
            worst = max(worst, float(np.linalg.norm(mine - ref) /
                                     max(np.linalg.norm(ref), 1e-30)))
    return worst


def record(args, arch, variant):
    """What zeroc does with one export now, as a status.json entry."""
    for stage, w in matrix(variant, args.full):
        ok, why = run_one(args, arch, variant, "train", stage, w)
        if ok:
            continue
        if why.startswith("compile failed (rc 1): ") and "error:" in why:
            msg = why.split("error:", 1)[1].strip()
            # The part after the file name, which names the cause.
            if ": " in msg:
                msg = msg.split(": ", 1)[1]
            return "refuse: " + msg[:120]
        return "wrong: stage %d world %d: %s" % (stage, w, why)
    return "train"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zeroc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--suite", default=SUITE)
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--only", default="", help="comma-separated ARCH or "
                    "ARCH/VARIANT")
    ap.add_argument("--record", action="store_true",
                    help="rewrite status.json from what zeroc does now: "
                    "'train' where every run matches PyTorch, 'refuse: "
                    "<error>' where compile refuses; anything else is "
                    "recorded as 'wrong: ...', which always fails")
    args = ap.parse_args()
    status = json.load(open(os.path.join(args.suite, "status.json")))
    only = [x for x in args.only.split(",") if x]
    passed = failed = 0
    for key in sorted(status):
        arch, variant = key.split("/")
        if only and key not in only and arch not in only:
            continue
        expect = status[key]
        if args.record:
            status[key] = record(args, arch, variant)
            print("%s: %s" % (key, status[key]), flush=True)
            continue
        if expect.startswith("wrong:"):
            print("FAIL %s: listed as training wrong: %s" % (key, expect))
            failed += 1
            continue
        runs = matrix(variant, args.full)
        if expect.startswith("refuse:"):
            runs = runs[:1]
        for stage, w in runs:
            try:
                ok, why = run_one(args, arch, variant, expect, stage, w)
            except subprocess.TimeoutExpired as e:
                ok, why = False, "timed out: %s" % " ".join(e.cmd[:2])
            print("%s %s stage %d world %d: %s" % (
                "PASS" if ok else "FAIL", key, stage, w, why), flush=True)
            passed += ok
            failed += not ok
    if args.record:
        with open(os.path.join(args.suite, "status.json"), "w") as f:
            json.dump(status, f, indent=1, sort_keys=True)
            f.write("\n")
        return 0
    print("hf-suite: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
