#!/usr/bin/python3
"""Checkpoints of out/train end to end (docs/Checkpoints.md).

  resume   for every model x stage x world size: a run saved at step K and
           resumed to N writes the same JSONL records (loss, lr, grad norm,
           loss scale, skipped) and the same final parameters, bit for bit,
           as the uninterrupted run, which itself saved every K steps.
  reshard  a global batch fixed by the config (train_batch_size) trained at
           stage 3 on 2 ranks to step K1, resumed at stage 1 on 4 ranks to
           K2, then at stage 0 on 1 rank to N: every step's loss within
           --rtol of the uninterrupted 2-rank run, and the final parameters
           too; `zeroc to-fp32` of the last checkpoint equals that run's
           --save-params bit for bit.
  frozen16 to-fp32 of frozen fp16/bf16 parameters (widened from the saved
           16-bit values) equals --save-params bit for bit.
  errors   corrupt, truncated, mismatched and hostile checkpoints: one error
           line naming the file, exit 1, and nothing trained.
  kill     kill -9 at random points of runs that save every step, then a
           resume from `latest` that must load and finish.

Prints one line per case and `checkpoint: N passed, M failed`.
"""
import argparse
import json
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import time

import numpy as np

from mpirun_isolated import MPIRUN

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join(HERE, "..", "..", "tools", "reference",
                         "onnx_torch_train.py")


class Failure(Exception):
    pass


def run(cmd, expect_rc=0, timeout=600):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    p = subprocess.run(cmd, capture_output=True, text=True, env=env,
                       timeout=timeout, stdin=subprocess.DEVNULL)
    if expect_rc is not None and p.returncode != expect_rc:
        raise Failure("%s: rc %d (expected %d): %s" % (
            " ".join(os.path.basename(c) for c in cmd[:4]), p.returncode,
            expect_rc, (p.stderr or p.stdout)[-600:]))
    return p


TRAIN_ARGS = []


def train(out, w, *args, expect_rc=0):
    cmd = MPIRUN + ["-np", str(w), "--oversubscribe", "--bind-to", "none",
                    os.path.join(out, "train")] + list(args) + TRAIN_ARGS + \
        ["--quiet"]
    return run(cmd, expect_rc)


def records(path):
    keys = ("step", "loss", "lr", "grad_norm", "loss_scale", "skipped")
    with open(path) as f:
        return [tuple(json.loads(l)[k] for k in keys) for l in f if l.strip()]


def kill_job(proc, marker):
    """kill -9 of every rank of a job at once (Open MPI starts the ranks in
    process groups of their own), then of its launcher."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        if marker.encode() in args and args[0].endswith(b"/train"):
            try:
                os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def same_params(a, b, w):
    for r in range(w):
        da, db = os.path.join(a, "rank%d" % r), os.path.join(b, "rank%d" % r)
        names = sorted(f for f in os.listdir(da) if f.endswith(".npy"))
        if names != sorted(f for f in os.listdir(db) if f.endswith(".npy")):
            return "rank %d saved other parameter files" % r
        for n in names:
            if open(os.path.join(da, n), "rb").read() != open(os.path.join(db, n), "rb").read():
                return "rank %d: %s differs" % (r, n)
    return None


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__", {})
    kinds = {"F32": np.float32, "F64": np.float64}
    out = {}
    for name, t in header.items():
        b, e = t["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + b:8 + n + e],
                                  kinds[t["dtype"]]).reshape(t["shape"])
    return out, meta


class Cases:
    def __init__(self, args):
        self.a = args
        self.passed = self.failed = 0
        self.data = {}

    def check(self, name, fn):
        t0 = time.time()
        try:
            fn()
            self.passed += 1
            print("PASS %s (%.1fs)" % (name, time.time() - t0), flush=True)
        except (Failure, subprocess.TimeoutExpired, OSError, ValueError,
                KeyError) as e:
            self.failed += 1
            print("FAIL %s: %s" % (name, e), flush=True)

    def model(self, name):
        return os.path.join(self.a.models_dir, name + ".onnx")

    def dataset(self, model):
        if model not in self.data:
            d = os.path.join(self.a.work, model + "_data")
            run(["/usr/bin/python3", REFERENCE, self.model(model), "--make-data",
                 d, "--samples", "64", "--seed", "0", "-q"])
            self.data[model] = d
        return self.data[model]

    def compile(self, model, stage, w, out, config=None):
        cmd = [self.a.zeroc, "compile", self.model(model), "-o", out,
               "--stage", str(stage), "--world-size", str(w)]
        if config:
            cmd += ["--config", config]
        run(cmd + self.a.compile_arg)

    # -- resume ------------------------------------------------------------
    def resume_case(self, model, stage, w, config):
        tag = "%s_s%d_w%d_%s" % (model, stage, w,
                                 os.path.basename(config or "fp32.json")[:-5])
        base = os.path.join(self.a.work, tag)
        out = base + "/out"
        self.compile(model, stage, w, out, config)
        data = self.dataset(model)
        n, k = self.a.steps, self.a.at
        train(out, w, "--data", data, "--steps", str(n), "--log-jsonl",
              base + "/full.jsonl", "--save-params", base + "/full_params",
              "--save-dir", base + "/every", "--save-interval", str(k))
        train(out, w, "--data", data, "--steps", str(k), "--save-dir",
              base + "/ck", "--log-jsonl", base + "/head.jsonl")
        train(out, w, "--data", data, "--steps", str(n), "--load-dir",
              base + "/ck", "--log-jsonl", base + "/tail.jsonl",
              "--save-params", base + "/resumed_params")
        full = records(base + "/full.jsonl")
        got = records(base + "/head.jsonl") + records(base + "/tail.jsonl")
        if full != got:
            diff = next(i for i, (x, y) in enumerate(zip(full, got)) if x != y) \
                if len(full) == len(got) else -1
            raise Failure("resumed records differ from the uninterrupted run "
                          "(first at record %d: %s vs %s)" % (
                              diff, full[diff] if diff >= 0 else len(full),
                              got[diff] if diff >= 0 else len(got)))
        problem = same_params(base + "/full_params", base + "/resumed_params", w)
        if problem:
            raise Failure("final parameters: " + problem)
        if open(base + "/every/latest").read().strip() != "global_step%d" % n:
            raise Failure("every/latest does not name global_step%d" % n)

    def resume(self):
        configs = [None] + [c for c in self.a.config if c]
        for model in self.a.models.split(","):
            for config in configs:
                for w in [int(x) for x in self.a.world_sizes.split(",")]:
                    for stage in [int(x) for x in self.a.stages.split(",")]:
                        name = "resume %s stage %d world %d %s" % (
                            model, stage, w, os.path.basename(config or "fp32"))
                        self.check(name, lambda: self.resume_case(model, stage, w, config))

    # -- reshard -----------------------------------------------------------
    def reshard_case(self):
        model = self.a.models.split(",")[0]
        base = os.path.join(self.a.work, "reshard_" + model)
        os.makedirs(base, exist_ok=True)
        cfg = base + "/ds_config.json"
        config = {"train_batch_size": 32, "train_micro_batch_size_per_gpu":
                  self.a.micro_batch, "optimizer": {"type": "AdamW",
                                                    "params": {"lr": 0.01}}}
        if self.a.precision != "fp32":
            config[self.a.precision] = {"enabled": True}
        with open(cfg, "w") as f:
            json.dump(config, f)
        plan = [(3, 2), (1, 4), (0, 1)]
        for s, w in plan:
            self.compile(model, s, w, "%s/s%d_w%d" % (base, s, w), cfg)
        data = self.dataset(model)
        n, k1, k2 = self.a.steps, self.a.at, (self.a.at + self.a.steps) // 2
        train(base + "/s3_w2", 2, "--data", data, "--steps", str(n),
              "--log-jsonl", base + "/full.jsonl", "--save-params", base + "/full_params")
        ck = base + "/ck"
        train(base + "/s3_w2", 2, "--data", data, "--steps", str(k1), "--save-dir", ck)
        # B runs one step past its save at k2, so that the step after C's
        # load has a reference: the run that saved it.
        train(base + "/s1_w4", 4, "--data", data, "--steps", str(k2 + 1),
              "--load-dir", ck, "--save-dir", ck, "--save-interval", str(k2),
              "--log-jsonl", base + "/b.jsonl")
        train(base + "/s0_w1", 1, "--data", data, "--steps", str(n), "--load-dir",
              ck, "--load-tag", "global_step%d" % k2, "--save-dir", ck,
              "--log-jsonl", base + "/c.jsonl", "--save-params",
              base + "/final_params")
        full = records(base + "/full.jsonl")[k1:]
        b, c = records(base + "/b.jsonl"), records(base + "/c.jsonl")
        for saver, loader in ((full[0], b[0]), (b[-1], c[0])):
            rel = abs(saver[1] - loader[1]) / abs(saver[1])
            if saver[0] != loader[0] or rel > 1e-6:
                raise Failure("step %d after a load: loss %.9g, the saving "
                              "run's %.9g (rel %.1e > 1e-6)" % (
                                  loader[0], loader[1], saver[1], rel))
        got = b[:-1] + c
        if [r[0] for r in full] != [r[0] for r in got]:
            raise Failure("resumed runs logged steps %s, expected %s" % (
                [r[0] for r in got], [r[0] for r in full]))
        # The first step after each load runs on exactly the saved weights
        # (checked above against the run that saved them). Later steps drift
        # from the uninterrupted run by the summation order of the new world
        # size's reductions (in 16-bit gradients, more): --rtol.
        worst = 0.0
        for x, y in zip(full, got):
            rel = abs(x[1] - y[1]) / abs(x[1])
            worst = max(worst, rel)
            if rel > self.a.rtol:
                raise Failure("step %d: loss %.9g after resharding, %.9g "
                              "uninterrupted (rel %.1e > %.0e)" % (
                                  x[0], y[1], x[1], rel, self.a.rtol))
        print("reshard %s: the step after each load equals the saving run's "
              "within 1e-6; every step within %.1e of the uninterrupted run"
              % (self.a.precision, worst))
        meta = json.load(open(base + "/full_params/params.json"))
        run([self.a.zeroc, "to-fp32", ck, base + "/w.safetensors"])
        weights, _ = read_safetensors(base + "/w.safetensors")
        if sorted(weights) != sorted(p["name"] for p in meta["params"]):
            raise Failure("to-fp32 wrote %s" % sorted(weights))
        for p in meta["params"]:
            mine = np.load(os.path.join(base, "final_params", "rank0", p["file"]))
            ref = np.load(os.path.join(base, "full_params", "rank0", p["file"]))
            if weights[p["name"]].tobytes() != mine.astype(np.float32).tobytes():
                raise Failure("to-fp32's '%s' is not the trained value" % p["name"])
            rel = np.linalg.norm(mine - ref) / max(np.linalg.norm(ref), 1e-30)
            if rel > self.a.param_rtol:
                raise Failure("'%s' differs from the uninterrupted run by %.2e"
                              % (p["name"], rel))

    def setup(self, name, stage, w):
        """(model, base dir, out dir, data dir) of the first model compiled
        for `stage` on `w` ranks into WORK/name/out."""
        model = self.a.models.split(",")[0]
        base = os.path.join(self.a.work, name)
        os.makedirs(base, exist_ok=True)
        self.compile(model, stage, w, base + "/out")
        return model, base, base + "/out", self.dataset(model)

    # -- frozen16 ----------------------------------------------------------
    def frozen16(self):
        """to-fp32 of frozen 16-bit parameters (no master: their saved
        fp16/bf16 values, widened) equals --save-params, bit for bit."""
        model = "mlp_frozen"
        data = self.dataset(model)
        for precision in ("fp16", "bf16"):
            def case():
                base = os.path.join(self.a.work, "frozen_" + precision)
                os.makedirs(base, exist_ok=True)
                cfg = base + "/ds_config.json"
                with open(cfg, "w") as f:
                    json.dump({precision: {"enabled": True}}, f)
                self.compile(model, 3, 2, base + "/out", cfg)
                train(base + "/out", 2, "--data", data, "--steps", "3",
                      "--save-dir", base + "/ck", "--save-params", base + "/params")
                run([self.a.zeroc, "to-fp32", base + "/ck", base + "/w.safetensors"])
                weights, _ = read_safetensors(base + "/w.safetensors")
                meta = json.load(open(base + "/params/params.json"))
                for p in meta["params"]:
                    want = np.load(os.path.join(base, "params", "rank0", p["file"]))
                    if weights[p["name"]].tobytes() != want.astype(np.float32).tobytes():
                        raise Failure("to-fp32's '%s' is not the saved value" % p["name"])
                ck = json.load(open(base + "/ck/global_step3/checkpoint.json"))
                if not any(q["frozen"] and q["dtype"] != "F32" for q in ck["params"]):
                    raise Failure("no frozen 16-bit parameter was saved")
            self.check("to-fp32 of frozen %s parameters" % precision, case)

    # -- errors ------------------------------------------------------------
    def errors(self):
        model, base, out, data = self.setup("errors", 2, 2)
        good = base + "/good"
        train(out, 2, "--data", data, "--steps", "2", "--save-dir", good)
        tagdir = good + "/global_step2"

        def broken(name, mutate, expect, target=out, w=2):
            def case():
                d = os.path.join(base, name)
                shutil.rmtree(d, ignore_errors=True)
                shutil.copytree(good, d)
                mutate(d, d + "/global_step2")
                p = train(target, w, "--data", data, "--steps", "4", "--load-dir",
                          d, expect_rc=1)
                lines = [l for l in p.stderr.splitlines() if "error" in l]
                if not lines or expect not in p.stderr:
                    raise Failure("expected an error with %r, got: %s" % (
                        expect, p.stderr[-400:]))
                if "Traceback" in p.stderr or "Segmentation" in p.stderr:
                    raise Failure("crashed: " + p.stderr[-300:])
            self.check("error " + name, case)

        def truncate(d, t):
            f = t + "/rank1.safetensors"
            os.truncate(f, os.path.getsize(f) - 5)

        def flip(d, t):
            f = t + "/rank0.safetensors"
            b = bytearray(open(f, "rb").read())
            b[-3] ^= 0x40
            open(f, "wb").write(bytes(b))

        def edit_json(fn):
            def m(d, t):
                j = json.load(open(t + "/checkpoint.json"))
                fn(j)
                json.dump(j, open(t + "/checkpoint.json", "w"))
            return m

        def shape(j):
            j["params"][0]["shape"] = [1, j["params"][0]["numel"]]

        broken("truncated", truncate, "has ")
        broken("corrupt", flip, "checksum")
        broken("version", edit_json(lambda j: j.update(version=99)), "format version 99")
        broken("other-model", edit_json(lambda j: j["params"][0].update(name="other.weight")),
               "has no parameter")
        broken("dtype", edit_json(lambda j: j["params"][0].update(dtype="F16")),
               "compile with the precision")
        broken("shape", edit_json(shape), "has shape")
        broken("not-json", lambda d, t: open(t + "/checkpoint.json", "w").write("{"),
               "not the JSON")
        broken("tag-traversal", lambda d, t: open(d + "/latest", "w").write("../../etc\n"),
               "not usable")
        broken("no-latest", lambda d, t: os.remove(d + "/latest"), "latest")
        broken("missing-file", lambda d, t: os.remove(t + "/rank1.safetensors"),
               "rank1.safetensors")
        broken("fifo-file", lambda d, t: (os.remove(t + "/rank1.safetensors"),
                                          os.mkfifo(t + "/rank1.safetensors")),
               "not a regular file")
        broken("huge-header", lambda d, t: open(t + "/rank0.safetensors", "r+b").write(
            struct.pack("<Q", 1 << 60)), "checksum")
        sgd = base + "/sgd.json"
        json.dump({"optimizer": {"type": "SGD", "params": {"lr": 0.1}}}, open(sgd, "w"))
        self.compile(model, 2, 2, base + "/sgd_out", sgd)
        broken("optimizer", lambda d, t: None, "adam state", target=base + "/sgd_out")

    # -- kill --------------------------------------------------------------
    def kill(self):
        _, base, out, data = self.setup("kill", 3, 2)
        ref = base + "/ref"
        train(out, 2, "--data", data, "--steps", str(self.a.steps), "--log-jsonl",
              ref + ".jsonl", "--save-params", ref + "_params")
        rng = random.Random(self.a.seed)
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
        # When the first save completes and how long the whole run takes,
        # to spread the kills over the run's saves.
        probe = base + "/probe"
        cmd = lambda ck: MPIRUN + [
            "-np", "2", "--oversubscribe", "--bind-to", "none",
            os.path.join(out, "train"), "--data", data, "--steps",
            str(self.a.steps), "--save-dir", ck, "--save-interval", "1", "--quiet"]
        t0 = time.time()
        p = subprocess.Popen(cmd(probe), env=env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        first = None
        while p.poll() is None:
            if first is None and os.path.exists(probe + "/latest"):
                first = time.time() - t0
            time.sleep(0.002)
        span = time.time() - t0
        first = first if first is not None else 0.5 * span
        stats = {"resumed": 0, "partial": 0, "none": 0}
        for trial in range(self.a.kill_trials):
            def case():
                ck = base + "/ck%d" % trial
                shutil.rmtree(ck, ignore_errors=True)
                p = subprocess.Popen(cmd(ck), env=env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL,
                                     start_new_session=True)
                time.sleep(rng.uniform(0.8 * first, span))
                kill_job(p, ck)
                if not os.path.exists(ck + "/latest"):
                    stats["none"] += 1
                    return  # killed before the first save completed
                if any(n.endswith(".partial") for n in os.listdir(ck)):
                    stats["partial"] += 1
                stats["resumed"] += 1
                resumed = base + "/resumed%d" % trial
                train(out, 2, "--data", data, "--steps", str(self.a.steps),
                      "--load-dir", ck, "--log-jsonl", resumed + ".jsonl",
                      "--save-params", resumed + "_params")
                problem = same_params(ref + "_params", resumed + "_params", 2)
                if problem:
                    raise Failure("after resuming: " + problem)
            self.check("kill -9 trial %d" % trial, case)
        print("kill -9: %d trials resumed from latest and finished bitwise "
              "equal, %d of them killed inside a save (a .partial left), %d "
              "killed before the first save" % (stats["resumed"],
                                                stats["partial"], stats["none"]))

        def enough():
            if stats["resumed"] < self.a.kill_trials // 2:
                raise Failure("only %d of %d trials had a checkpoint to resume"
                              % (stats["resumed"], self.a.kill_trials))
        self.check("kill -9 trials mostly after a first save", enough)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=["resume", "reshard", "frozen16", "errors",
                                     "kill"])
    ap.add_argument("--zeroc", required=True)
    ap.add_argument("--models-dir", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--models", default="mlp")
    ap.add_argument("--stages", default="0,1,2,3")
    ap.add_argument("--world-sizes", default="1,2")
    ap.add_argument("--config", action="append", default=[])
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--at", type=int, default=3)
    ap.add_argument("--micro-batch", type=int, default=8)
    ap.add_argument("--rtol", type=float, default=1e-5)
    ap.add_argument("--param-rtol", type=float, default=1e-5,
                    help="reshard: the final parameters' relative norm")
    ap.add_argument("--precision", choices=["fp32", "fp16", "bf16"],
                    default="fp32", help="reshard: the training precision")
    ap.add_argument("--kill-trials", type=int, default=12)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--compile-arg", action="append", default=[],
                    help="an argument for every zeroc compile")
    ap.add_argument("--train-arg", action="append", default=[],
                    help="an argument for every out/train run")
    args = ap.parse_args()
    TRAIN_ARGS.extend(args.train_arg)
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    cases = Cases(args)
    if args.mode == "reshard":
        cases.check("reshard stage 3 w2 -> stage 1 w4 -> stage 0 w1, to-fp32",
                    cases.reshard_case)
    else:
        getattr(cases, args.mode)()
    print("checkpoint: %d passed, %d failed" % (cases.passed, cases.failed))
    return 1 if cases.failed else 0


if __name__ == "__main__":
    sys.exit(main())
