#!/usr/bin/python3
"""zeroc vs PyTorch (DDP, FSDP2) and DeepSpeed on CPU, side by side in one run.

Usage: python3 bench/bench_peers.py [--models gpt2,llama] [--stages 0,1,2,3]
           [--steps 6] [--warmup 2] [--quick] [--python .venv-bench/bin/python]
           [--zeroc PATH] [--timeout S] [--json FILE] [--keep]
           [--netns [--link 10gbit:100us] [--delay-impl auto|netem|nfqueue]]

For each model (a GPT-2-small-shaped GPT2LMHeadModel and a Llama-shaped
LlamaForCausalLM of similar size, random init, sequence 128, micro batch 1,
dropout 0) and each ZeRO stage, 2 ranks with one thread each, it trains
--steps optimizer steps with

  * zeroc: the model exported once with zeroc_torch.export (TorchScript,
    opset 17), `zeroc compile --stage S --world-size 2 --config
    ds_config.json`, `mpirun -np 2 --bind-to core out/train`;
  * PyTorch DDP (gloo) + torch.optim.AdamW: the stage 0-2 peer;
  * PyTorch FSDP2 (fully_shard per transformer block and at the root, gloo,
    CPU) + AdamW: the stage-3 peer;
  * both again with torch.set_flush_denormal(True) (zeroc flushes denormals
    by default; PyTorch does not);
  * DeepSpeed (DS_ACCELERATOR=cpu, gloo, the same ds_config.json, torch's
    AdamW via "torch_adam": true), stages 0-3;

all from the same state_dict, each step reading the same samples (the data
contract of docs/Training.md: step s, rank r runs sample (2s + r) mod S).
Prints one markdown table (compile time, median step time after --warmup,
peak RSS per rank, first-step loss, zeroc / fastest peer) and a summary.

--netns (root): every rank runs in a network namespace of its own (rank r
in zc<r>, bench/netns.sh), the two joined by a veth shaped to --link
RATE:DELAY on both ends: zeroc through `bench/netns.sh run` (Open MPI over
TCP on that veth only, no shared memory), the peers with `ip netns exec
zc<r>`, MASTER_ADDR 10.77.0.1 (zc0) and GLOO_SOCKET_IFNAME zcv. The link is
set up and checked (`bench/netns.sh check`) before the first run and taken
down at the end.

This file is both the driver (standard library only; any python3) and the
workers (`--worker prepare|ddp|fsdp2|deepspeed CFG.json`, run with --python:
torch, transformers, deepspeed, onnx, onnxruntime; scripts/make-bench-venv.sh).
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_util import (busy_cpus, free_port, kill_group, median_after,  # noqa: E402
                        single_thread_env, trace_comm)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RSS_WRAP = os.path.join(HERE, "rss_wrap.py")
NETNS = os.path.join(HERE, "netns.sh")
# bench/netns.sh's namespaces, rank 0's address on the veth, the veth's name.
NETNS_NS = ("zc0", "zc1")
NETNS_MASTER = "10.77.0.1"
NETNS_DEV = "zcv"

WORLD = 2
SEQ = 128
MICRO_BATCH = 1
ADAMW = dict(lr=1e-4, betas=[0.9, 0.999], eps=1e-8, weight_decay=0.01)
COMM_NA = "n/a (zeroc has no --trace yet)"   # an out/train without --trace
PEER_COMM = "not traced"

# Model shapes. --quick: 2 layers, width 64, vocab 1000.
MODELS = {
    "gpt2": dict(arch="gpt2", layers=12, width=768, heads=12, vocab=50257,
                 positions=1024),
    "llama": dict(arch="llama", layers=12, width=768, heads=12, vocab=32000,
                  intermediate=2048, positions=1024),
}
QUICK = dict(layers=2, width=64, heads=2, vocab=1000, intermediate=172)
PEER_NAMES = {"ddp": "PyTorch DDP", "fsdp2": "PyTorch FSDP2",
              "ddp-ftz": "PyTorch DDP, denormals flushed",
              "fsdp2-ftz": "PyTorch FSDP2, denormals flushed",
              "deepspeed": "DeepSpeed"}
# A "-ftz" peer is the same run with torch.set_flush_denormal(True), as
# zeroc's runtime flushes denormals by default (docs/Training.md): the
# fastest a PyTorch user can get on these CPUs.
FTZ = "-ftz"


class BenchError(Exception):
    pass


# ---------------------------------------------------------------------------
# Workers (run with --python; import torch and friends only here)
# ---------------------------------------------------------------------------

def _rss_mib():
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _build_model(spec):
    """The Hugging Face model of `spec`, eager attention, dropout 0."""
    import transformers as tf
    if spec["arch"] == "gpt2":
        cfg = tf.GPT2Config(
            n_layer=spec["layers"], n_embd=spec["width"], n_head=spec["heads"],
            vocab_size=spec["vocab"], n_positions=spec["positions"],
            resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
            bos_token_id=0, eos_token_id=0, attn_implementation="eager")
        return tf.GPT2LMHeadModel(cfg)
    cfg = tf.LlamaConfig(
        hidden_size=spec["width"], intermediate_size=spec["intermediate"],
        num_hidden_layers=spec["layers"], num_attention_heads=spec["heads"],
        num_key_value_heads=spec["heads"], vocab_size=spec["vocab"],
        max_position_embeddings=spec["positions"], attention_dropout=0.0,
        bos_token_id=0, eos_token_id=0, pad_token_id=None,
        tie_word_embeddings=False, attn_implementation="eager")
    return tf.LlamaForCausalLM(cfg)


def _blocks(model, spec):
    return model.transformer.h if spec["arch"] == "gpt2" else model.model.layers


def worker_prepare(cfg):
    """Seeded model -> init.pt (state_dict), data/*.npy, model.onnx (export
    with the repo's helper) and the reference first-step loss."""
    import numpy as np
    import torch
    torch.set_num_threads(1)
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from zeroc_torch.export import export
    spec = cfg["spec"]
    torch.manual_seed(0)
    model = _build_model(spec)
    model.train()
    torch.save(model.state_dict(), cfg["init"])
    g = torch.Generator().manual_seed(1234)
    ids = torch.randint(0, spec["vocab"], (cfg["samples"], SEQ), generator=g)
    os.makedirs(cfg["data"], exist_ok=True)
    # Causal LM: the labels are the input ids (the model shifts them).
    np.save(os.path.join(cfg["data"], "input_ids.npy"), ids.numpy())
    np.save(os.path.join(cfg["data"], "labels.npy"), ids.numpy())
    with torch.no_grad():
        first = [float(model(input_ids=ids[r:r + 1], labels=ids[r:r + 1]).loss)
                 for r in range(WORLD)]
    t0 = time.perf_counter()
    rep = export(model, {"input_ids": ids[:1], "labels": ids[:1]},
                 cfg["onnx"], opset=17, exporter="torchscript")
    export_s = time.perf_counter() - t0
    psi = sum(p.numel() for p in model.parameters() if p.requires_grad)
    import transformers
    res = dict(psi=psi, export_s=export_s, ref_first_loss=sum(first) / WORLD,
               checked_by=rep.get("checked_by"), torch=torch.__version__,
               transformers=transformers.__version__)
    with open(cfg["out"], "w") as f:
        json.dump(res, f)
    return 0


def worker_train(cfg):
    """One rank of a PyTorch DDP, FSDP2 or DeepSpeed run (env RANK,
    WORLD_SIZE, MASTER_ADDR, MASTER_PORT); writes its losses, step times
    and peak RSS to cfg["out"] + .rank<R>."""
    system = cfg["system"]
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    # As mpirun --bind-to core for zeroc: rank r on core r.
    try:
        cpus = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpus[rank % len(cpus)]})
    except (AttributeError, OSError):
        pass
    import numpy as np
    import torch
    import torch.distributed as dist
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    if cfg.get("flush_denormal"):
        torch.set_flush_denormal(True)
    import transformers  # noqa: F401
    if system == "deepspeed":
        import deepspeed
        import deepspeed.ops
        # DeepSpeed's CPU comm backend JIT-compiles a shared-memory C++ op
        # (deepspeed_shm_comm, used for inference all-reduce) at
        # init_distributed; keep to gloo and compile nothing.
        deepspeed.ops.__compatible_ops__["deepspeed_shm_comm"] = False
    rss_import = _rss_mib()
    spec = cfg["spec"]
    data = {k: torch.from_numpy(np.load(os.path.join(cfg["data"], k + ".npy")))
            for k in ("input_ids", "labels")}
    S = data["input_ids"].shape[0]
    model = _build_model(spec)
    model.load_state_dict(torch.load(cfg["init"]))
    model.train()

    if system == "deepspeed":
        deepspeed.init_distributed(dist_backend="gloo")
        with open(cfg["ds_config"]) as f:
            ds_cfg = json.load(f)
        ds_cfg["zero_optimization"]["stage"] = cfg["stage"]
        engine, _, _, _ = deepspeed.initialize(
            model=model, model_parameters=model.parameters(), config=ds_cfg)

        def step(ids, labels):
            loss = engine(input_ids=ids, labels=labels).loss
            engine.backward(loss)
            engine.step()
            return loss
    else:
        dist.init_process_group("gloo", rank=rank, world_size=world)
        if system == "ddp":
            from torch.nn.parallel import DistributedDataParallel as DDP
            # The buffers (causal mask, rotary frequencies) are constants,
            # equal on every rank: no broadcasts (gloo cannot broadcast bool).
            DDP._set_params_and_buffers_to_ignore_for_model(
                model, [n for n, _ in model.named_buffers()])
            net = DDP(model, broadcast_buffers=False,
                      gradient_as_bucket_view=True)
        else:
            from torch.distributed.device_mesh import init_device_mesh
            from torch.distributed.fsdp import fully_shard
            mesh = init_device_mesh("cpu", (world,))
            for block in _blocks(model, spec):
                fully_shard(block, mesh=mesh)
            fully_shard(model, mesh=mesh)
            net = model
        opt = torch.optim.AdamW(net.parameters(), lr=ADAMW["lr"],
                                betas=tuple(ADAMW["betas"]), eps=ADAMW["eps"],
                                weight_decay=ADAMW["weight_decay"])

        def step(ids, labels):
            opt.zero_grad(set_to_none=True)
            loss = net(input_ids=ids, labels=labels).loss
            loss.backward()
            opt.step()
            return loss

    losses, times = [], []
    G = MICRO_BATCH * world
    for s in range(cfg["steps"]):
        # docs/Training.md: rank r runs global micro-batch r of step s.
        ix = (torch.arange(MICRO_BATCH) + s * G + rank * MICRO_BATCH) % S
        ids, labels = data["input_ids"][ix], data["labels"][ix]
        t0 = time.perf_counter()
        loss = step(ids, labels)
        times.append(time.perf_counter() - t0)
        losses.append(float(loss.detach()))
    ext = os.environ.get("TORCH_EXTENSIONS_DIR")
    jit = sorted(os.listdir(ext)) if ext and os.path.isdir(ext) else []
    res = dict(rank=rank, losses=losses, times=times, rss=_rss_mib(),
               rss_import=rss_import, jit_ops=jit)
    with open("%s.rank%d" % (cfg["out"], rank), "w") as f:
        json.dump(res, f)
    dist.barrier()
    dist.destroy_process_group()
    return 0


# ---------------------------------------------------------------------------
# Driver helpers (standard library only)
# ---------------------------------------------------------------------------

def reason_of(log_paths, limit=160):
    """A one-line reason from the tail of the logs: the last line that looks
    like an error, else the last non-empty line."""
    lines = []
    for path in log_paths:
        try:
            with open(path, errors="replace") as f:
                lines += [ln.strip() for ln in f.read().splitlines()[-200:]]
        except OSError:
            pass
    lines = [ln for ln in lines if ln]
    pick = None
    for keys in (("error:", "Error", "Exception"), ("Killed", "Aborted", "signal")):
        pick = pick or next((ln for ln in reversed(lines)
                             if any(k in ln for k in keys)), None)
    pick = pick or (lines[-1] if lines else "no output")
    pick = pick.replace("|", "/")
    return pick if len(pick) <= limit else pick[:limit - 3] + "..."


def run_logged(cmds, envs, logs, timeout, what):
    """Starts every command (one per rank) in its own session with its
    output in its log; waits for all of them. Raises BenchError with a
    reason on a timeout or a non-zero exit."""
    procs = []
    t0 = time.perf_counter()
    try:
        for cmd, env, log in zip(cmds, envs, logs):
            with open(log, "w") as f:
                procs.append(subprocess.Popen(
                    cmd, stdout=f, stderr=subprocess.STDOUT, env=env,
                    start_new_session=True, stdin=subprocess.DEVNULL))
        deadline = time.time() + timeout
        for p in procs:
            try:
                p.wait(timeout=max(1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                raise BenchError("%s: timed out after %d s" % (what, timeout))
        bad = [p.returncode for p in procs if p.returncode != 0]
        if bad:
            raise BenchError("%s: exit %d: %s" % (what, bad[0], reason_of(logs)))
    finally:
        for p in procs:
            kill_group(p)
    return time.perf_counter() - t0


# ---------------------------------------------------------------------------
# Systems
# ---------------------------------------------------------------------------

def prepare(args, name, spec, work):
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    cfg = dict(spec=spec, samples=max(64, WORLD * args.steps),
               init=os.path.join(d, "init.pt"), data=os.path.join(d, "data"),
               onnx=os.path.join(d, "model.onnx"),
               out=os.path.join(d, "prepare.json"))
    with open(os.path.join(d, "prepare.cfg"), "w") as f:
        json.dump(cfg, f)
    run_logged([[args.python, os.path.abspath(__file__), "--worker", "prepare",
                 os.path.join(d, "prepare.cfg")]],
               [single_thread_env()], [os.path.join(d, "prepare.log")],
               args.timeout, "%s export" % name)
    with open(cfg["out"]) as f:
        prep = json.load(f)
    # gradient_clipping spelled out: DeepSpeed 0.19's code default is 1.0
    # (constants.py GRADIENT_CLIPPING_DEFAULT), zeroc resolves a missing key
    # as 0.0, and DDP/FSDP2 do not clip. 0.0: every system trains the same.
    # overlap_comm true at every stage, as a user tuning for speed sets it:
    # DDP and FSDP2 overlap by default, DeepSpeed honours it at stages 1-3,
    # zeroc at stages 0 (one micro-step), 2 and 3.
    ds_config = {
        "train_micro_batch_size_per_gpu": MICRO_BATCH,
        "gradient_accumulation_steps": 1,
        "gradient_clipping": 0.0,
        "optimizer": {"type": "AdamW", "params": dict(ADAMW, torch_adam=True)},
        "zero_optimization": {"stage": 0, "overlap_comm": True},
    }
    prep.update(cfg, dir=d, ds_config=os.path.join(d, "ds_config.json"))
    with open(prep["ds_config"], "w") as f:
        json.dump(ds_config, f, indent=1)
    return prep


def run_zeroc(args, prep, stage):
    d = os.path.join(prep["dir"], "zeroc-s%d" % stage)
    os.makedirs(d, exist_ok=True)
    out = os.path.join(d, "out")
    compile_s = run_logged(
        [[args.zeroc, "compile", prep["onnx"], "--stage", str(stage),
          "--world-size", str(WORLD), "--config", prep["ds_config"], "-o", out]
         + getattr(args, "zeroc_link_flags", [])],
        [single_thread_env()], [os.path.join(d, "compile.log")], args.timeout,
        "zeroc compile")
    log = os.path.join(d, "log.jsonl")
    train = os.path.join(out, "train")
    usage = subprocess.run([train, "--help"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True).stdout
    trace = os.path.join(d, "trace") if "--trace" in usage else None
    env = single_thread_env(dict(OMPI_ALLOW_RUN_AS_ROOT="1",
                                 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1"))
    # --netns: rank r in namespace zc<r>, TCP over the shaped veth, each
    # rank on core r (netns.sh's rankfile), as mpirun --bind-to core here.
    launch = ([NETNS, "run", "--bind-to", "core", "--"] if args.netns else
              ["mpirun", "-np", str(WORLD), "--oversubscribe", "--bind-to", "core"])
    run_logged([launch + [sys.executable, RSS_WRAP, "--out", d, "--", train,
                          "--data", prep["data"], "--steps", str(args.steps),
                          "--log-jsonl", log, "--quiet"] +
                (["--trace", trace] if trace else [])],
               [env], [os.path.join(d, "train.log")], args.timeout,
               "zeroc out/train")
    with open(log) as f:
        recs = [json.loads(ln) for ln in f if ln.strip()]
    if len(recs) != args.steps:
        raise BenchError("log.jsonl has %d records, expected %d"
                         % (len(recs), args.steps))
    rss = []
    for r in range(WORLD):
        with open(os.path.join(d, "rss.rank%d" % r)) as f:
            rss.append(int(f.read()) / 1024.0)
    phases = {k: median_after([x[k] / 1e3 for x in recs], args.warmup)
              for k in ("time_fwd_ms", "time_bwd_inner_ms",
                        "time_bwd_allreduce_ms", "time_step_ms")}
    comm = None
    if trace:
        comm = trace_comm(os.path.join(trace, "rank0.trace.json"), args.steps,
                          args.warmup)
    if not args.keep:
        shutil.rmtree(out, ignore_errors=True)  # model.bin: ~4 bytes/param
    return dict(compile_s=compile_s, comm=comm, traced=bool(trace), losses=[x["loss"] for x in recs],
                step_s=median_after([x["time_ms"] / 1e3 for x in recs],
                                    args.warmup),
                times=[x["time_ms"] / 1e3 for x in recs], rss=rss,
                phases=phases)


def netns_up(args):
    """bench/netns.sh up + check: the link every run of this bench uses.
    Returns the check's report; exits on failure (no run would mean much)."""
    def sh(cmd):
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=600)
        if p.returncode != 0:
            sys.exit("bench_peers: %s failed:\n%s" % (" ".join(cmd[1:2]), p.stdout))
        return p.stdout
    up = sh([NETNS, "up", "--rate", args.link_rate, "--delay", args.link_delay,
             "--delay-impl", args.delay_impl])
    check = sh([NETNS, "check"])
    print(up + check, file=sys.stderr, end="")
    lines = [ln for ln in (up + check).splitlines()
             if ln.startswith(("netns.sh: up:", "round trip", "one way", "all-reduce",
                               "zcv sent", "ok:", "netdelay ", "zeroc_flags "))]
    # netprobe's cost model of the link, as a user passes it to zeroc compile.
    args.zeroc_link_flags = next((ln.split()[1:] for ln in lines
                                  if ln.startswith("zeroc_flags ")), [])
    return lines


def run_peer(args, prep, system, stage):
    tag = "%s-s%d" % (system, stage) if system == "deepspeed" else system
    d = os.path.join(prep["dir"], tag)
    os.makedirs(d, exist_ok=True)
    cfg = dict(system=system.replace(FTZ, ""), flush_denormal=system.endswith(FTZ),
               stage=stage, spec=prep["spec"], init=prep["init"],
               data=prep["data"], ds_config=prep["ds_config"], steps=args.steps,
               out=os.path.join(d, "result"))
    cfg_path = os.path.join(d, "worker.cfg")
    with open(cfg_path, "w") as f:
        json.dump(cfg, f)
    ext = os.path.join(d, "torch_extensions")
    port = str(free_port())
    master, ifname = (NETNS_MASTER, NETNS_DEV) if args.netns else ("127.0.0.1", "lo")
    envs = [single_thread_env(dict(
        RANK=str(r), WORLD_SIZE=str(WORLD), LOCAL_RANK=str(r),
        LOCAL_SIZE=str(WORLD), MASTER_ADDR=master, MASTER_PORT=port,
        GLOO_SOCKET_IFNAME=ifname, DS_ACCELERATOR="cpu",
        TORCH_EXTENSIONS_DIR=ext)) for r in range(WORLD)]
    cmd = [args.python, os.path.abspath(__file__), "--worker", "train", cfg_path]
    cmds = [(["ip", "netns", "exec", NETNS_NS[r]] if args.netns else []) + cmd
            for r in range(WORLD)]
    run_logged(cmds, envs,
               [os.path.join(d, "rank%d.log" % r) for r in range(WORLD)],
               args.timeout, PEER_NAMES[system])
    res = []
    for r in range(WORLD):
        with open("%s.rank%d" % (cfg["out"], r)) as f:
            res.append(json.load(f))
    jit = sorted({j for x in res for j in x["jit_ops"]})
    losses = [sum(x["losses"][s] for x in res) / WORLD for s in range(args.steps)]
    return dict(compile_s=None, losses=losses, times=res[0]["times"],
                step_s=median_after(res[0]["times"], args.warmup),
                rss=[x["rss"] for x in res],
                rss_import=[x["rss_import"] for x in res], jit_ops=jit)


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------

def fmt_rss(vals):
    s = ["%.0f" % v for v in vals]
    return s[0] if len(set(s)) == 1 else " / ".join(s)


def comm_cell(r):
    res = r["res"]
    if r["system"] != "zeroc":
        return PEER_COMM
    if not res.get("traced"):
        return COMM_NA
    if not res.get("comm"):
        return "trace unreadable"
    e = res["comm"]["exposed_s"]
    return "%.3f s (%.0f%%)" % (e, 100.0 * e / res["step_s"])


def print_table(rows):
    head = ["model", "stage", "system", "compile s", "median step s",
            "peak RSS MiB/rank", "first loss", "zeroc / fastest peer",
            "exposed comm"]
    body = []
    for r in rows:
        res = r.get("res")
        if res is None:
            body.append([r["model"], str(r["stage"]), r["label"], "-",
                         "FAILED: " + r["error"], "-", "-", "-", "-"])
            continue
        body.append([
            r["model"], str(r["stage"]), r["label"],
            "%.1f" % res["compile_s"] if res["compile_s"] is not None else "-",
            "%.3f" % res["step_s"], fmt_rss(res["rss"]),
            "%.6f" % res["losses"][0], r.get("ratio", "-"), comm_cell(r)])
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---" for _ in head) + "|")
    for b in body:
        print("| " + " | ".join(b) + " |")


def add_ratios(rows):
    """zeroc / fastest successful peer, per (model, stage), on zeroc's row."""
    for r in rows:
        if r["system"] != "zeroc" or r.get("res") is None:
            continue
        peers = [p for p in rows if p["model"] == r["model"] and
                 p["stage"] == r["stage"] and p["system"] != "zeroc" and
                 p.get("res") is not None]
        if not peers:
            r["ratio"] = "no peer ran"
            continue
        best = min(peers, key=lambda p: p["res"]["step_s"])
        r["ratio"] = "%.2f (vs %s)" % (r["res"]["step_s"] / best["res"]["step_s"],
                                       best["short"])


def print_summary(rows, preps, args, loads, total_s):
    print()
    for name, prep in preps.items():
        if "error" in prep:
            print("* %s: export FAILED: %s" % (name, prep["error"]))
            continue
        ok = [r for r in rows if r["model"] == name and r.get("res")]
        diffs = [abs(r["res"]["losses"][0] - prep["ref_first_loss"]) for r in ok]
        print("* %s: Ψ = %d trainable parameters; export %.0f s (forward "
              "checked by %s); reference first-step loss %.6f (PyTorch "
              "forward, no step), max |first loss - reference| over the %d "
              "runs %.1e" % (name, prep["psi"], prep["export_s"],
                             prep["checked_by"], prep["ref_first_loss"],
                             len(ok), max(diffs) if diffs else float("nan")))
        ref = next((r for r in ok if r["system"] == "ddp"), ok[0] if ok else None)
        if ref is not None:
            worst = max(ok, key=lambda r: max(
                abs(a - b) for a, b in zip(r["res"]["losses"], ref["res"]["losses"])))
            d = max(abs(a - b) for a, b in
                    zip(worst["res"]["losses"], ref["res"]["losses"]))
            print("  all %d steps' losses vs %s: largest difference %.1e "
                  "(%s, stage %d); last-step loss %.6f"
                  % (len(ref["res"]["losses"]), ref["label"], d, worst["label"],
                     worst["stage"], ref["res"]["losses"][-1]))
    zr = [r for r in rows if r["system"] == "zeroc" and r.get("res")]
    if zr:
        print()
        print("zeroc's own phase times (medians after warmup, seconds, of "
              "rank 0's log.jsonl: DeepSpeed's wall_clock_breakdown timers; "
              "bwd_allreduce = the backward's collectives and the stage 0-1 "
              "step-boundary reduction) and its collectives by kind from "
              "--trace (time inside them, waiting for the other rank "
              "included; a started gather counts from its start to its wait):")
        print()
        print("| model | stage | fwd | bwd_inner | bwd_allreduce | step (optimizer) "
              "| collectives per step (rank 0's --trace) |")
        print("|---|---|---|---|---|---|---|")
        for r in zr:
            p, c = r["res"]["phases"], r["res"].get("comm")
            kinds = ", ".join("%s %.3f" % kv for kv in c["by_kind"].items()) \
                if c else "-"
            print("| %s | %d | %.3f | %.3f | %.3f | %.3f | %s |" % (
                r["model"], r["stage"], p["time_fwd_ms"], p["time_bwd_inner_ms"],
                p["time_bwd_allreduce_ms"], p["time_step_ms"], kinds))
    imp = [x for r in rows if r.get("res") and r["res"].get("rss_import")
           for x in r["res"]["rss_import"]]
    jit = sorted({j for r in rows if r.get("res") for j in r["res"].get("jit_ops", [])})
    print()
    print("Steps: %d per run, median of steps %d..%d (rank 0's time: zeroc's "
          "time_ms, PyTorch/DeepSpeed zero_grad+forward+backward+step). Peak RSS: "
          "zeroc out/train under rss_wrap.py; peers their process's ru_maxrss, "
          "of which %s MiB right after importing torch/transformers/deepspeed. "
          "DDP is one run listed under stages 0-2. 2 ranks x 1 thread, "
          "pinned to cores 0 and 1. Exposed comm (zeroc): median per step of "
          "the time covered by rank 0's traced collectives that no compute op "
          "overlaps (%% of its step); "
          "the peers are not traced. zeroc: %s." % (
              args.steps, min(args.warmup + 1, args.steps), args.steps,
              ("%.0f-%.0f" % (min(imp), max(imp))) if imp else "?", args.zeroc))
    if args.link_report:
        print("Network (--netns, --link %s): rank r in namespace zc<r>, TCP over a "
              "veth shaped on both ends (bench/netns.sh); zeroc: Open MPI tcp btl on "
              "it only, the peers: gloo on it. Before the runs, bench/netns.sh check:"
              % args.link)
        for ln in args.link_report:
            print("  " + ln)
    if jit:
        print("WARNING: DeepSpeed JIT-compiled ops: %s" % ", ".join(jit))
    busy = [r["res"]["busy_before"] for r in rows if r.get("res") and
            r["res"].get("busy_before") is not None]
    print("Load average (1 min) before/after: %.2f / %.2f; other processes "
          "kept %s CPUs busy just before the first run and %s of the %d "
          "just before each run (0.5 s samples). Total %.0f s."
          % (loads[0], os.getloadavg()[0],
             "?" if loads[1] is None else "%.1f" % loads[1],
             "%.1f-%.1f" % (min(busy), max(busy)) if busy else "?",
             os.cpu_count() or 0, total_s))


# ---------------------------------------------------------------------------

def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="gpt2,llama")
    ap.add_argument("--stages", default="0,1,2,3")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--quick", action="store_true",
                    help="tiny dims (2 layers, width 64, vocab 1000): a smoke test")
    ap.add_argument("--python", default=os.path.join(ROOT, ".venv-bench", "bin", "python"),
                    help="the peers' and the export's python (torch, transformers, "
                    "deepspeed, onnx, onnxruntime; scripts/make-bench-venv.sh)")
    ap.add_argument("--zeroc", default=os.path.join(ROOT, "build", "bin", "zeroc"))
    ap.add_argument("--timeout", type=int, default=1800,
                    help="seconds per export, compile or training run (default 1800)")
    ap.add_argument("--json", help="also write every run's results to this file")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--netns", action="store_true",
                    help="run the 2 ranks in network namespaces joined by a shaped "
                    "veth (bench/netns.sh; root)")
    ap.add_argument("--link", default="10gbit:100us",
                    help="--netns: RATE:DELAY of the veth, each direction "
                    "(default 10gbit:100us; none:0 for an unshaped veth)")
    ap.add_argument("--delay-impl", choices=("auto", "netem", "nfqueue"), default="auto",
                    help="--netns: how the delay is made (bench/netns.sh up)")
    a = ap.parse_args()
    if a.netns:
        if os.geteuid() != 0:
            ap.error("--netns needs root (network namespaces, tc)")
        if ":" not in a.link:
            ap.error("--link: RATE:DELAY, e.g. 10gbit:100us")
        a.link_rate, a.link_delay = a.link.split(":", 1)
    a.models = [m for m in a.models.split(",") if m]
    bad = [m for m in a.models if m not in MODELS]
    if bad or not a.models:
        ap.error("--models: choose from %s" % ",".join(MODELS))
    try:
        a.stages = sorted({int(s) for s in a.stages.split(",") if s})
    except ValueError:
        a.stages = [-1]
    if not a.stages or any(s not in (0, 1, 2, 3) for s in a.stages):
        ap.error("--stages: a comma-separated list of 0, 1, 2, 3")
    if a.steps < 1 or not 0 <= a.warmup < a.steps:
        ap.error("need --steps >= 1 and 0 <= --warmup < --steps")
    a.zeroc = os.path.abspath(a.zeroc)
    if not (os.path.isfile(a.zeroc) and os.access(a.zeroc, os.X_OK)):
        ap.error("no zeroc executable at %s (build it or pass --zeroc PATH)" % a.zeroc)
    if shutil.which("mpirun") is None:
        ap.error("mpirun not found on PATH (Open MPI: scripts/install-deps.sh)")
    if not os.access(a.python, os.X_OK):
        ap.error("no python at %s (make it with scripts/make-bench-venv.sh or "
                 "pass --python PATH)" % a.python)
    return a


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        with open(sys.argv[3]) as f:
            cfg = json.load(f)
        return worker_prepare(cfg) if sys.argv[2] == "prepare" else worker_train(cfg)
    args = parse_args()
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda n, _f: sys.exit(128 + n))
    work = tempfile.mkdtemp(prefix="zeroc-peers-")
    t_start = time.time()
    loads = (os.getloadavg()[0], busy_cpus())
    rows, preps = [], {}
    args.link_report = None
    try:
        if args.netns:
            args.link_report = netns_up(args)
        print("bench_peers: work dir %s; %d steps, warmup %d%s" % (
            work, args.steps, args.warmup, "; --quick dims" if args.quick else ""),
            file=sys.stderr)
        for name in args.models:
            spec = dict(MODELS[name], **(QUICK if args.quick else {}))
            if spec["arch"] == "gpt2":
                spec.pop("intermediate", None)
            try:
                prep = preps[name] = prepare(args, name, spec, work)
            except BenchError as e:
                preps[name] = dict(error=str(e))
                print("bench_peers: %s" % e, file=sys.stderr)
                continue
            print("bench_peers: %s exported (Ψ = %d, %.0f s)" % (
                name, prep["psi"], prep["export_s"]), file=sys.stderr)
            jobs = []
            if any(s <= 2 for s in args.stages):
                jobs += [("ddp", 0), ("ddp" + FTZ, 0)]
            if 3 in args.stages:
                jobs += [("fsdp2", 3), ("fsdp2" + FTZ, 3)]
            for s in args.stages:
                jobs += [("zeroc", s), ("deepspeed", s)]
            done = {}
            for system, stage in jobs:
                label = "zeroc" if system == "zeroc" else PEER_NAMES[system]
                busy = busy_cpus(0.5)
                t0 = time.time()
                try:
                    res = (run_zeroc(args, prep, stage) if system == "zeroc"
                           else run_peer(args, prep, system, stage))
                    err = None
                except BenchError as e:
                    res, err = None, str(e)
                if res is not None:
                    res["busy_before"] = busy
                done[(system, stage)] = (res, err)
                print("bench_peers: %s stage %d %s: %s (%.0f s)" % (
                    name, stage, label,
                    err or "median step %.3f s, first loss %.6f" % (
                        res["step_s"], res["losses"][0]),
                    time.time() - t0), file=sys.stderr)
            for s in args.stages:
                peer = "ddp" if s <= 2 else "fsdp2"
                pstage = 0 if peer == "ddp" else 3
                for system, stage, short in (("zeroc", s, "zeroc"),
                                             (peer, pstage, peer.upper()),
                                             (peer + FTZ, pstage, peer.upper() + FTZ.upper()),
                                             ("deepspeed", s, "DeepSpeed")):
                    res, err = done[(system, stage)]
                    label = "zeroc" if system == "zeroc" else PEER_NAMES[system]
                    if system.startswith("ddp") and s > 0:
                        label += " (the stage-0 run)"
                    rows.append(dict(model=name, stage=s, system=system,
                                     label=label, short=short, res=res,
                                     error=err))
        add_ratios(rows)
        print()
        print_table(rows)
        print_summary(rows, preps, args, loads, time.time() - t_start)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(dict(rows=rows, models=preps,
                               args=dict(steps=args.steps, warmup=args.warmup,
                                         quick=args.quick)), f, indent=1)
    finally:
        if args.netns:
            subprocess.run([NETNS, "down"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        if args.keep:
            print("kept %s" % work, file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    failed = any(r.get("res") is None for r in rows) or \
        any("error" in p for p in preps.values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
