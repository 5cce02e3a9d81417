#!/usr/bin/python3
"""Benchmark zeroc's ZeRO stages 0-3 against PyTorch on the example GPT.

Usage: /usr/bin/python3 bench/bench_gpt.py [--steps 30] [--warmup 5]
           [--size small|medium] [--precision fp32|fp16|bf16] [--zeroc PATH]
           [--keep]

Exports examples/models.py's GPT (dropout off) with torch.onnx in training
mode, makes data with tools/reference/onnx_torch_train.py, then trains it for
--steps optimizer steps (the first --warmup are not timed) with:

  * zeroc, stages 0-3, 2 Open MPI ranks (each rank wrapped by rss_wrap.py);
  * PyTorch, one process, the whole global batch per step;
  * PyTorch DDP (gloo, 2 processes) + AdamW (the stage-0 analogue) and
    + ZeroRedundancyOptimizer(AdamW) (the stage-1 analogue).

Every run starts from the same initial parameters and reads the same samples
per step (docs/Training.md's data contract: G = micro_batch x 2 samples per
step, rank r gets micro-batch r), AdamW lr 1e-3, weight decay 0 (zeroc's
default optimizer), one thread per process. Prints a table and plan.json's
model-state bytes and communication next to the ZeRO formulas.

--precision fp16|bf16 compiles zeroc with a ds_config turning on that mixed
precision (fp16: dynamic loss scale from 2^12); the PyTorch rows stay fp32,
the baseline the loss column compares against.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_util import busy_cpus, free_port, kill_group, single_thread_env  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
EXAMPLES = os.path.join(ROOT, "examples")
REFERENCE = os.path.join(ROOT, "tools", "reference", "onnx_torch_train.py")
RSS_WRAP = os.path.join(HERE, "rss_wrap.py")

WORLD = 2
STAGES = (0, 1, 2, 3)
# GPT(V, T, C, nh, nl) and the micro batch B (the export's batch dim).
SIZES = {
    "small": None,  # examples/models.py's defaults (GPT_V, GPT_T, ...)
    "medium": dict(V=512, T=64, C=128, nh=4, nl=4, B=8),
}
LR = 1e-3
TORCH_VARIANTS = {"single": "1 process, AdamW", "ddp": "DDP + AdamW",
                  "zero1": "DDP + ZeROptim(AdamW)"}
TIMEOUT_S = 240  # per subprocess


class BenchError(Exception):
    pass


def die(msg):
    sys.stderr.write("bench_gpt: error: %s\n" % msg)
    sys.exit(1)


def mpi_env():
    return single_thread_env(dict(OMPI_ALLOW_RUN_AS_ROOT="1",
                                  OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1"))


def run(cmd, env=None, timeout=TIMEOUT_S, what=None):
    """Runs cmd in its own session; raises BenchError with its stderr tail."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(p)
        p.communicate()
        raise BenchError("%s timed out after %ds" % (what or cmd[0], timeout))
    except BaseException:
        kill_group(p)
        raise
    if p.returncode != 0:
        tail = (err.strip() or out.strip())[-1200:]
        raise BenchError("%s failed (exit %d): %s"
                         % (what or " ".join(cmd[:3]), p.returncode, tail))
    return out


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def model_dims(size):
    sys.path.insert(0, EXAMPLES)
    import models
    if SIZES[size] is None:
        return dict(V=models.GPT_V, T=models.GPT_T, C=models.GPT_C,
                    nh=models.GPT_NH, nl=models.GPT_NL, B=models.GPT_B)
    return dict(SIZES[size])


def build_model(dims):
    sys.path.insert(0, EXAMPLES)
    from models import GPT, without_dropout
    return without_dropout(GPT(V=dims["V"], T=dims["T"], C=dims["C"],
                               nh=dims["nh"], nl=dims["nl"]))


# ---------------------------------------------------------------------------
# Export (the settings of test/Import/gen_models.py's export())
# ---------------------------------------------------------------------------

def export(dims, onnx_path, init_path):
    import warnings
    import numpy as np
    import onnx
    from onnx import TensorProto
    import torch

    torch.manual_seed(0)
    model = build_model(dims)
    torch.save(model.state_dict(), init_path)
    B, T, V = dims["B"], dims["T"], dims["V"]
    idx = torch.randint(0, V, (B, T), dtype=torch.int64)
    tgt = torch.randint(0, V, (B, T), dtype=torch.int64)
    model.train()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (idx, tgt), onnx_path, opset_version=17,
                          training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False,
                          input_names=["idx", "targets"],
                          output_names=["loss"])
    m = onnx.load(onnx_path)
    onnx.checker.check_model(m, full_check=True)
    fl = [t for t in m.graph.initializer if t.data_type == TensorProto.FLOAT]
    n_init = sum(int(np.prod(t.dims)) for t in fl)
    n_par = sum(p.numel() for p in model.parameters())
    if n_init != n_par:
        raise BenchError("export has %d float initializer elements, the model "
                         "%d parameters" % (n_init, n_par))
    return n_par


# ---------------------------------------------------------------------------
# zeroc
# ---------------------------------------------------------------------------

def run_zeroc(args, stage, onnx_path, data, work):
    out = os.path.join(work, "out_s%d" % stage)
    cmd = [args.zeroc, "compile", onnx_path, "-o", out, "--stage", str(stage),
           "--world-size", str(WORLD)]
    # The PyTorch rows do not clip; DeepSpeed's default clips at 1.0.
    cfg = {"optimizer": {"type": "AdamW", "params": {"lr": LR}},
           "gradient_clipping": 0.0}
    if args.precision != "fp32":
        cfg[args.precision] = {"enabled": True}
        if args.precision == "fp16":
            cfg["fp16"]["initial_scale_power"] = 12
    cfg_path = os.path.join(work, "ds_config_%s.json" % args.precision)
    with open(cfg_path, "w") as f:
        json.dump(cfg, f)
    cmd += ["--config", cfg_path]
    t0 = time.perf_counter()
    run(cmd, what="zeroc compile --stage %d" % stage)
    compile_s = time.perf_counter() - t0
    log = os.path.join(out, "log.jsonl")
    rss_dir = os.path.join(out, "rss")
    run(["mpirun", "-np", str(WORLD), "--oversubscribe", "--bind-to", "none",
         sys.executable, RSS_WRAP, "--out", rss_dir, "--",
         os.path.join(out, "train"), "--data", data, "--steps",
         str(args.steps), "--log-jsonl", log, "--quiet"],
        env=mpi_env(), what="mpirun (stage %d)" % stage)
    recs = read_jsonl(log)
    if len(recs) != args.steps:
        raise BenchError("stage %d: %d log records, expected %d"
                         % (stage, len(recs), args.steps))
    rss = []
    for r in range(WORLD):
        with open(os.path.join(rss_dir, "rss.rank%d" % r)) as f:
            rss.append(int(f.read()) / 1024.0)
    with open(os.path.join(out, "plan.json")) as f:
        plan = json.load(f)
    times = [r["time_ms"] for r in recs[args.warmup:]]
    variant = "stage %d" % stage
    if args.precision != "fp32":
        variant += " " + args.precision
    return dict(system="zeroc", variant=variant, ranks=WORLD,
                compile_s=compile_s, step_ms=statistics.median(times),
                rss=rss, state=[plan["model_state_bytes"]["total"]] * WORLD,
                losses=[r["loss"] for r in recs], plan=plan)


# ---------------------------------------------------------------------------
# PyTorch (each process is a fresh `bench_gpt.py --torch-worker CFG`)
# ---------------------------------------------------------------------------

def torch_worker(cfg_path):
    import resource
    with open(cfg_path) as f:
        cfg = json.load(f)
    import numpy as np
    import torch
    torch.set_num_threads(1)
    rss_import = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    rank, world = cfg["rank"], cfg["world"]
    variant = cfg["variant"]
    torch.manual_seed(0)
    model = build_model(cfg["dims"])
    model.load_state_dict(torch.load(cfg["init"]))
    model.train()
    params = list(model.parameters())  # unique: the tied wte weight once
    data = {k: torch.from_numpy(np.load(os.path.join(cfg["data"], k + ".npy")))
            for k in ("idx", "targets")}
    S = data["idx"].shape[0]
    G = cfg["global_batch"]
    # This process's samples of step s: its micro-batch (rank r of W runs
    # global micro-batch r), or all G for the single process.
    n_local = G // world
    offset = rank * n_local

    opt_state_of = None
    if world > 1:
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
        dist.init_process_group("gloo", rank=rank, world_size=world)
        # Buffers (the bool causal mask, the positions) are constants, built
        # identically on every rank: DDP neither broadcasts them at start
        # (gloo cannot broadcast bool) nor before each forward. Gradients
        # live in DDP's buckets (gradient_as_bucket_view: no second copy).
        DDP._set_params_and_buffers_to_ignore_for_model(
            model, [n for n, _ in model.named_buffers()])
        net = DDP(model, broadcast_buffers=False, gradient_as_bucket_view=True)
        if variant == "zero1":
            from torch.distributed.optim import ZeroRedundancyOptimizer
            opt = ZeroRedundancyOptimizer(params, optimizer_class=torch.optim.AdamW,
                                          lr=LR, weight_decay=0.0)
            opt_state_of = lambda: opt.optim.state  # noqa: E731 - this rank's shard
        else:
            opt = torch.optim.AdamW(params, lr=LR, weight_decay=0.0)
    else:
        net = model
        opt = torch.optim.AdamW(params, lr=LR, weight_decay=0.0)
    if opt_state_of is None:
        opt_state_of = lambda: opt.state  # noqa: E731

    losses, times = [], []
    for s in range(cfg["steps"]):
        ix = (torch.arange(n_local) + s * G + offset) % S
        idx, tgt = data["idx"][ix], data["targets"][ix]
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=False)
        loss = net(idx, tgt)
        loss.backward()
        opt.step()
        times.append((time.perf_counter() - t0) * 1e3)
        losses.append(float(loss.detach()))

    def nbytes(t):
        return t.numel() * t.element_size()
    state = dict(params=sum(nbytes(p) for p in params),
                 grads=sum(nbytes(p.grad) for p in params if p.grad is not None),
                 optimizer_state=sum(nbytes(v) for st in opt_state_of().values()
                                     for v in st.values()
                                     if torch.is_tensor(v)))
    state["total"] = sum(state.values())
    res = dict(rank=rank, losses=losses, times=times, state=state,
               rss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
               rss_import=rss_import)
    with open(cfg["out"], "w") as f:
        json.dump(res, f)
    if world > 1:
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()
    return 0


def run_torch(args, variant, world, dims, work, init, data):
    G = dims["B"] * WORLD  # the same global batch as the zeroc runs
    procs, outs = [], []
    port = free_port()
    try:
        for rank in range(world):
            cfg = dict(rank=rank, world=world, variant=variant, dims=dims,
                       init=init, data=data, micro_batch=dims["B"],
                       global_batch=G, steps=args.steps,
                       out=os.path.join(work, "torch_%s_r%d.json" % (variant, rank)))
            cfg_path = cfg["out"] + ".cfg"
            with open(cfg_path, "w") as f:
                json.dump(cfg, f)
            outs.append(cfg["out"])
            env = single_thread_env(dict(
                MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                GLOO_SOCKET_IFNAME="lo"))
            procs.append(subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), "--torch-worker",
                 cfg_path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                text=True, env=env, start_new_session=True))
        deadline = time.time() + TIMEOUT_S
        logs = []
        for p in procs:
            try:
                out, _ = p.communicate(timeout=max(1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                raise BenchError("torch %s timed out after %ds"
                                 % (variant, TIMEOUT_S))
            logs.append(out)
            if p.returncode != 0:
                raise BenchError("torch %s worker failed (exit %d): %s"
                                 % (variant, p.returncode, out.strip()[-1200:]))
    finally:
        for p in procs:
            kill_group(p)
    res = []
    for path in outs:
        with open(path) as f:
            res.append(json.load(f))
    # Step loss = mean of the ranks' micro-batch losses; step time = rank 0's
    # (as zeroc's log, which rank 0 writes).
    losses = [sum(r["losses"][s] for r in res) / world
              for s in range(args.steps)]
    name = TORCH_VARIANTS[variant]
    return dict(system="torch", variant=name, ranks=world, compile_s=None,
                step_ms=statistics.median(res[0]["times"][args.warmup:]),
                rss=[r["rss"] for r in res], state=[r["state"]["total"] for r in res],
                state_detail=[r["state"] for r in res],
                rss_import=[r["rss_import"] for r in res], losses=losses)


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------

def fmt_per_rank(vals, scale=1.0, digits=0):
    vals = [v / scale for v in vals]
    s = ["%.*f" % (digits, v) for v in vals]
    return s[0] if len(set(s)) == 1 else "/".join(s)


def import_rss_range(rows):
    v = [x for r in rows if r["system"] == "torch" and "error" not in r
         for x in r["rss_import"]]
    if not v:
        return "?"
    lo, hi = min(v), max(v)
    return "%.0f" % lo if round(lo) == round(hi) else "%.0f-%.0f" % (lo, hi)


def print_table(rows, global_batch, ref_losses):
    head = ["system", "stage/variant", "ranks", "compile s", "step ms",
            "samples/s", "peak RSS MiB/rank", "model state MiB/rank",
            "final loss", "max rel dloss"]
    table = []
    for r in rows:
        if "error" in r:
            table.append([r["system"], r["variant"], str(r["ranks"]), "-", "FAILED",
                          "-", "-", "-", "-", "-"])
            continue
        dl = max(abs(a - b) / max(abs(b), 1e-12)
                 for a, b in zip(r["losses"], ref_losses)) if ref_losses else None
        table.append([
            r["system"], r["variant"], str(r["ranks"]),
            "-" if r["compile_s"] is None else "%.2f" % r["compile_s"],
            "%.1f" % r["step_ms"],
            "%.1f" % (global_batch / (r["step_ms"] / 1e3)),
            fmt_per_rank(r["rss"]),
            fmt_per_rank(r["state"], 2.0 ** 20, 2),
            "%.6f" % r["losses"][-1],
            "-" if dl is None else "%.1e" % dl])
    widths = [max(len(head[i]), *(len(t[i]) for t in table))
              for i in range(len(head))]
    line = "  ".join("%-*s" % (w, h) for w, h in zip(widths, head))
    print(line)
    print("-" * len(line))
    for t in table:
        print("  ".join(("%-*s" if i < 2 else "%*s") % (w, c)
                        for i, (w, c) in enumerate(zip(widths, t))))


def print_plans(rows, psi, precision):
    W = WORLD
    # Bytes per element of parameters d, gradients g and optimizer state k:
    # fp32 (4, 4, 8), fp16 (2, 2, 12: the paper's mixed precision), bf16
    # (2, 4, 12: zeroc accumulates bf16 gradients in fp32).
    d, g, k = {"fp32": (4, 4, 8), "fp16": (2, 2, 12), "bf16": (2, 4, 12)}[precision]
    formulas = {
        0: ("%dΨ" % (d + g + k), (d + g + k) * psi),
        1: ("%dΨ+%dΨ/2" % (d + g, k), (d + g) * psi + k * psi / W),
        2: ("%dΨ+%dΨ/2" % (d, g + k), d * psi + (g + k) * psi / W),
        3: ("%dΨ/2" % (d + g + k), (d + g + k) * psi / W)}
    print()
    print("Ψ = %d trainable elements; %s AdamW, W = %d; plan.json per rank "
          "(bytes) vs the ZeRO formula:" % (psi, precision, W))
    head = ("stage", "formula", "formula B", "plan total B", "params B",
            "grads B", "optim B", "comm elems/step (AR+RS+AG)", "comm/Ψ",
            "comm B/step")
    body = []
    for r in rows:
        if r["system"] != "zeroc" or "error" in r:
            continue
        stage = r["plan"]["stage"]
        b = r["plan"]["model_state_bytes"]
        c = r["plan"]["communication_elements_per_step"]
        body.append((str(stage), formulas[stage][0], "%.0f" % formulas[stage][1],
                     str(b["total"]), str(b["params"]), str(b["grads"]),
                     str(b["optimizer_state"]),
                     "%d+%d+%d = %d" % (c["all_reduce"], c["reduce_scatter"],
                                        c["all_gather"], c["total"]),
                     "%.3f" % (c["total"] / psi),
                     str(r["plan"]["communication_bytes_per_step"])))
    widths = [max(len(head[i]), *(len(t[i]) for t in body)) if body else len(head[i])
              for i in range(len(head))]
    print("  ".join("%*s" % (w, h) for w, h in zip(widths, head)))
    for t in body:
        print("  ".join("%*s" % (w, c) for w, c in zip(widths, t)))
    for r in rows:
        if r["system"] == "torch" and "error" not in r:
            d = r["state_detail"]
            print("torch %-18s per rank: params %s, grads %s, optimizer state %s B"
                  % (r["variant"] + ":", fmt_per_rank([x["params"] for x in d]),
                     fmt_per_rank([x["grads"] for x in d]),
                     fmt_per_rank([x["optimizer_state"] for x in d])))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--torch-worker":
        return torch_worker(sys.argv[2])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=30,
                    help="optimizer steps per run (default 30)")
    ap.add_argument("--warmup", type=int, default=5,
                    help="first steps left out of the step time (default 5)")
    ap.add_argument("--size", choices=sorted(SIZES), default="medium")
    ap.add_argument("--precision", choices=("fp32", "fp16", "bf16"),
                    default="fp32", help="zeroc's training precision")
    ap.add_argument("--zeroc", default=os.path.join(ROOT, "build", "bin", "zeroc"))
    ap.add_argument("--samples", type=int, default=256,
                    help="samples in the generated data set (default 256)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the temporary directory (printed)")
    args = ap.parse_args()
    if args.steps < 1 or not 0 <= args.warmup < args.steps:
        die("need --steps >= 1 and 0 <= --warmup < --steps")
    args.zeroc = os.path.abspath(args.zeroc)
    if not (os.path.isfile(args.zeroc) and os.access(args.zeroc, os.X_OK)):
        die("zeroc is not built: no executable %s (build it with `make` or "
            "`cmake --build build`, or pass --zeroc PATH)" % args.zeroc)
    if shutil.which("mpirun") is None:
        die("mpirun not found on PATH (Open MPI: scripts/install-deps.sh)")
    try:
        import numpy  # noqa: F401
        import onnx  # noqa: F401
        import torch  # noqa: F401
    except ImportError as e:
        die("%s; run with Debian's /usr/bin/python3 (torch + onnx)" % e)

    # SIGTERM/SIGHUP -> SystemExit, so the finally below cleans up.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda n, _f: sys.exit(128 + n))
    work = tempfile.mkdtemp(prefix="zeroc-bench-", dir="/tmp")
    failed = False
    try:
        t_start = time.time()
        dims = model_dims(args.size)
        onnx_path = os.path.join(work, "gpt.onnx")
        init = os.path.join(work, "init.pt")
        data = os.path.join(work, "data")
        t0 = time.perf_counter()
        psi = export(dims, onnx_path, init)
        export_s = time.perf_counter() - t0
        run([sys.executable, REFERENCE, onnx_path, "--make-data", data,
             "--samples", str(args.samples), "--seed", "0", "-q"],
            what="onnx_torch_train.py --make-data")
        G = dims["B"] * WORLD
        print("GPT --size %s: V=%d T=%d C=%d nh=%d nl=%d, micro batch %d, "
              "global batch %d (W=%d); Ψ=%d; export %.1fs"
              % (args.size, dims["V"], dims["T"], dims["C"], dims["nh"],
                 dims["nl"], dims["B"], G, WORLD, psi, export_s))
        print("%d steps per run, step ms = median of steps %d..%d; data: %d "
              "samples (seed 0); AdamW lr %g wd 0; 1 thread per process; %s"
              % (args.steps, args.warmup + 1, args.steps, args.samples, LR,
                 "kept in " + work if args.keep else "temp " + work))
        busy = busy_cpus()
        if busy is not None and busy > 0.25:
            print("warning: other processes kept %.1f of the %d CPUs busy just "
                  "before the runs: step times will be noisy (zeroc stages 2-3, "
                  "with blocking collectives inside the micro-step, suffer "
                  "most)" % (busy, os.cpu_count() or 0))
        sys.stdout.flush()

        rows = []
        jobs = [("torch", v, w) for v, w in (("single", 1), ("ddp", 2),
                                             ("zero1", 2))]
        jobs += [("zeroc", s, WORLD) for s in STAGES]
        for system, v, w in jobs:
            try:
                if system == "zeroc":
                    rows.append(run_zeroc(args, v, onnx_path, data, work))
                else:
                    rows.append(run_torch(args, v, w, dims, work, init, data))
            except BenchError as e:
                failed = True
                label = ("stage %d" % v if system == "zeroc"
                         else TORCH_VARIANTS[v])
                rows.append(dict(system=system, variant=label, ranks=w,
                                 error=str(e)))
                sys.stdout.flush()
                sys.stderr.write("bench_gpt: %s %s: %s\n" % (system, label, e))
        ref = next((r["losses"] for r in rows
                    if r["system"] == "torch" and r["ranks"] == 1
                    and "error" not in r), None)
        print()
        print_table(rows, G, ref)
        print_plans(rows, psi, args.precision)
        print()
        print("samples/s = global batch %d / median step; peak RSS = ru_maxrss "
              "(zeroc: of out/train under rss_wrap.py; torch: of the process, "
              "of which %s MiB right after `import torch`); max rel dloss = max "
              "over steps of |loss - torch 1-process loss| / loss. Total %.0fs."
              % (G, import_rss_range(rows),
                 time.time() - t_start))
    finally:
        if args.keep:
            print("kept %s" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
