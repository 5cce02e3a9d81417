#!/usr/bin/python3
"""zeroc's step and exposed communication when the 2 ranks talk over a
shaped link (issue 10), against shared memory on one machine.

Usage (root: network namespaces):
    /usr/bin/python3 bench/bench_net.py [--links local,10gbit:100us]
        [--stages 3] [--steps 6] [--warmup 2] [--model gpt2|tiny]
        [--layers L --width C --heads H --vocab V --seq T --batch B]
        [--delay-impl auto|netem|nfqueue] [--no-check] [--zeroc PATH]
        [--timeout S] [--json FILE] [--keep]

The model is bench/gen_large_gpt.py's GPT (numpy + onnx only, no torch):
--model gpt2 (default) is GPT-2 small's shape (12 layers, width 768, 12
heads, vocab 50257, 1024 positions: Psi = 124.4 M, tied head) at sequence
128, micro batch 1, as bench_peers.py's gpt2; --model tiny is 2 layers,
width 64, 2 heads, vocab 256, sequence 32 (a smoke test, seconds); the
--layers ... flags override either. Data: random token ids (seed 0).

Each stage is compiled once (`zeroc compile --stage S --world-size 2
--config ds_config.json`, bench_peers.py's ds_config) and trained --steps
steps on each link of --links:

  * local: `mpirun -np 2 --bind-to core` on this machine, shared memory
    (Open MPI's vader btl), as bench_peers.py runs zeroc;
  * RATE:DELAY (10gbit:100us, 1gbit:0, none:2ms): `bench/netns.sh up --rate
    RATE --delay DELAY`, then `bench/netns.sh run --bind-to core` (rank 0 in
    namespace zc0, rank 1 in zc1, TCP over the shaped veth only), after
    `bench/netns.sh check` proved that the probe's traffic crossed the veth
    and took at least the time the rate and the delay impose (--no-check:
    skip it).

Per run: rank 0's median step time (log.jsonl's time_ms, steps after
--warmup) and its exposed communication (the median per step of the time
covered by its --trace communication track; zeroc's collectives block, so
all of it is exposed; bench_util.trace_comm, as bench_peers.py), the
collectives by kind, and two floors of the link: the bytes each rank must
send per step (plan.json: with 2 ranks, half of every all-gather and
reduce-scatter, all of an all-reduce) over the rate, and the collectives
per step times the one-way delay (with 2 ranks, both send at once: one
DELAY per collective at the very least; Open MPI's rendezvous for messages
over 64 KiB and its algorithms' steps take more).

The namespaces are taken down at the end (also on error, Ctrl-C, SIGTERM).
Work files go to /tmp/zeroc-net-*, removed unless --keep.
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_util import (busy_cpus, kill_group, median_after,  # noqa: E402
                        single_thread_env, trace_comm)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
NETNS = os.path.join(HERE, "netns.sh")
GEN = os.path.join(HERE, "gen_large_gpt.py")
WORLD = 2
MODELS = {
    "gpt2": dict(layers=12, width=768, heads=12, vocab=50257, positions=1024,
                 seq=128, batch=1),
    "tiny": dict(layers=2, width=64, heads=2, vocab=256, positions=32,
                 seq=32, batch=1),
}
# bench_peers.py's ds_config (its ADAMW, micro batch 1, no clipping).
DS_CONFIG = {
    "train_micro_batch_size_per_gpu": 1,
    "gradient_accumulation_steps": 1,
    "gradient_clipping": 0.0,
    "optimizer": {"type": "AdamW", "params": dict(
        lr=1e-4, betas=[0.9, 0.999], eps=1e-8, weight_decay=0.01)},
    "zero_optimization": {"stage": 0},
}


class BenchError(Exception):
    pass


def run(cmd, timeout, what, env=None, log=None):
    """Runs cmd in its own session (killed with its children on timeout);
    returns its stdout + stderr; raises BenchError with the tail on failure."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, env=env, start_new_session=True,
                         stdin=subprocess.DEVNULL)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(p)
        p.communicate()
        raise BenchError("%s: timed out after %d s" % (what, timeout))
    except BaseException:
        kill_group(p)
        raise
    if log:
        with open(log, "w") as f:
            f.write(out)
    if p.returncode != 0:
        raise BenchError("%s: exit %d: %s" % (what, p.returncode,
                                              out.strip()[-800:]))
    return out


def parse_link(spec):
    """'local' or 'RATE:DELAY' -> dict(name, rate, delay, delay_us, rate_bps)."""
    if spec == "local":
        return dict(name="local", rate=None, delay=None)
    m = re.fullmatch(r"([0-9.]+[kmgt]?bit|none):([0-9.]+(?:us|ms|s)|0)", spec.lower())
    if not m:
        raise ValueError("link %r: 'local' or RATE:DELAY (10gbit:100us, "
                         "1gbit:0, none:2ms)" % spec)
    rate, delay = m.groups()
    rate_bps = 0.0
    if rate != "none":
        v, unit = re.fullmatch(r"([0-9.]+)([kmgt]?)bit", rate).groups()
        rate_bps = float(v) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}[unit]
    v, unit = re.fullmatch(r"([0-9.]+)(us|ms|s)?", delay).groups()
    delay_us = float(v) * {"us": 1, "ms": 1e3, "s": 1e6, None: 1}[unit]
    return dict(name=spec, rate=rate, delay=delay, rate_bps=rate_bps,
                delay_us=delay_us)


def make_model(args, work):
    d = os.path.join(work, "model")
    dims = args.dims
    run([sys.executable, GEN, d, "--layers", str(dims["layers"]),
         "--width", str(dims["width"]), "--heads", str(dims["heads"]),
         "--vocab", str(dims["vocab"]), "--positions", str(dims["positions"]),
         "--seq", str(dims["seq"]), "--batch", str(dims["batch"])],
        args.timeout, "gen_large_gpt.py")
    import numpy as np
    rng = np.random.default_rng(0)
    n = max(64, WORLD * dims["batch"] * args.steps)
    ids = rng.integers(0, dims["vocab"], (n, dims["seq"]), dtype=np.int64)
    data = os.path.join(work, "data")
    os.makedirs(data)
    np.save(os.path.join(data, "idx.npy"), ids)
    np.save(os.path.join(data, "targets.npy"), np.roll(ids, -1, axis=1))
    return os.path.join(d, "model.onnx"), data


def compile_stage(args, onnx_path, stage, work):
    out = os.path.join(work, "out_s%d" % stage)
    cfg = json.loads(json.dumps(DS_CONFIG))
    cfg["zero_optimization"]["stage"] = stage
    cfg_path = os.path.join(work, "ds_config_s%d.json" % stage)
    with open(cfg_path, "w") as f:
        json.dump(cfg, f, indent=1)
    t0 = time.perf_counter()
    run([args.zeroc, "compile", onnx_path, "--stage", str(stage),
         "--world-size", str(WORLD), "--config", cfg_path, "-o", out],
        args.timeout, "zeroc compile --stage %d" % stage, env=single_thread_env())
    with open(os.path.join(out, "plan.json")) as f:
        plan = json.load(f)
    return out, plan, time.perf_counter() - t0


def link_up(args, link):
    out = run([NETNS, "up", "--rate", link["rate"], "--delay", link["delay"],
               "--delay-impl", args.delay_impl], 120, "netns.sh up")
    check = None
    if args.check:
        check = run([NETNS, "check"], args.timeout, "netns.sh check")
    return out, check


def train(args, out, data, link, tag, work):
    d = os.path.join(work, tag)
    os.makedirs(d)
    log, trace = os.path.join(d, "log.jsonl"), os.path.join(d, "trace")
    train_cmd = [os.path.join(out, "train"), "--data", data, "--steps",
                 str(args.steps), "--log-jsonl", log, "--trace", trace, "--quiet"]
    env = single_thread_env(dict(OMPI_ALLOW_RUN_AS_ROOT="1",
                                 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1"))
    if link["name"] == "local":
        cmd = ["mpirun", "-np", str(WORLD), "--oversubscribe", "--bind-to",
               "core"] + train_cmd
    else:
        cmd = [NETNS, "run", "--bind-to", "core", "--"] + train_cmd
    busy = busy_cpus(0.5)
    run(cmd, args.timeout, "out/train (%s)" % tag, env=env,
        log=os.path.join(d, "train.log"))
    with open(log) as f:
        recs = [json.loads(ln) for ln in f if ln.strip()]
    if len(recs) != args.steps:
        raise BenchError("%s: log.jsonl has %d records, expected %d"
                         % (tag, len(recs), args.steps))
    comm = trace_comm(os.path.join(trace, "rank0.trace.json"), args.steps,
                      args.warmup)
    if comm is None:
        raise BenchError("%s: rank 0's trace does not have %d steps" % (tag, args.steps))
    with open(os.path.join(trace, "rank0.trace.json")) as f:
        ev = [e for e in json.load(f)["traceEvents"]
              if e.get("ph") == "X" and e.get("tid") == 1]
    return dict(step_s=median_after([r["time_ms"] / 1e3 for r in recs], args.warmup),
                times=[r["time_ms"] / 1e3 for r in recs],
                losses=[r["loss"] for r in recs], comm=comm,
                collectives_per_step=len(ev) / args.steps, busy_before=busy)


def wire_bytes(plan):
    """Bytes each of the 2 ranks sends per step: plan.json's communication
    (full tensor sizes) with half of every all-gather and reduce-scatter
    and all of an all-reduce on the wire."""
    c = plan["communication_elements_per_step"]
    if not c["total"]:
        return 0.0
    per_elem = plan["communication_bytes_per_step"] / c["total"]
    return per_elem * ((c["all_gather"] + c["reduce_scatter"]) / WORLD + c["all_reduce"])


def check_summary(text):
    keys = {}
    for name in ("rtt_us", "oneway_s", "allreduce_s"):
        m = re.search(r"^%s ([0-9.]+)$" % name, text, re.M)
        keys[name] = float(m.group(1)) if m else None
    ok = "ok: the ranks talk over the shaped link" in text
    return keys, ok


def fmt_ms(s):
    return "%.1f" % (s * 1e3) if s < 10 else "%.0f" % (s * 1e3)


def print_report(args, rows, psi, total_s):
    print()
    print("| link | stage | median step ms | exposed comm ms (% of step) | "
          "collectives/step | by kind, ms per step | link floor ms (bytes/rate + "
          "collectives x delay) | first loss |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        if r.get("error"):
            print("| %s | %d | FAILED: %s | - | - | - | - | - |" % (
                r["link"]["name"], r["stage"], r["error"].replace("|", "/")[:200]))
            continue
        res, link = r["res"], r["link"]
        e = res["comm"]["exposed_s"]
        kinds = ", ".join("%s %s" % (k, fmt_ms(v)) for k, v in res["comm"]["by_kind"].items())
        floor = "-"
        if link["name"] != "local" and (link["rate_bps"] or link["delay_us"]):
            b = r["wire_bytes"] * 8 / link["rate_bps"] if link["rate_bps"] else 0.0
            lat = res["collectives_per_step"] * link["delay_us"] / 1e6
            floor = "%s (%s + %s)" % (fmt_ms(b + lat), fmt_ms(b) if link["rate_bps"] else "-",
                                      fmt_ms(lat))
        print("| %s | %d | %s | %s (%.0f%%) | %.0f | %s | %s | %.6f |" % (
            link["name"], r["stage"], fmt_ms(res["step_s"]), fmt_ms(e),
            100.0 * e / res["step_s"], res["collectives_per_step"], kinds, floor,
            res["losses"][0]))
    print()
    d = args.dims
    print("Model: gen_large_gpt.py, %d layers, width %d, %d heads, vocab %d, "
          "sequence %d, micro batch %d (Psi = %d); %d steps per run, median of "
          "steps %d..%d, rank 0's time_ms; 2 ranks x 1 thread, pinned to cores "
          "0 and 1." % (d["layers"], d["width"], d["heads"], d["vocab"], d["seq"],
                        d["batch"], psi, args.steps, min(args.warmup + 1, args.steps),
                        args.steps))
    for r in rows:
        if r.get("check"):
            keys, ok = check_summary(r["check"])
            n = re.search(r"one way ([0-9]+) B", r["check"])
            print("Link %s (netns.sh check, %s): round trip %.0f us, one way %s B in "
                  "%.1f ms, all-reduce in %.1f ms: %s" % (
                      r["link"]["name"], r.get("impl", "?"), keys["rtt_us"] or -1,
                      n.group(1) if n else "?", (keys["oneway_s"] or 0) * 1e3,
                      (keys["allreduce_s"] or 0) * 1e3,
                      "ok, over the shaped veth" if ok else "FAILED"))
        if r.get("delay_stats"):
            print("  netdelay (the delay on this kernel): %s" % r["delay_stats"])
    busy = [r["res"]["busy_before"] for r in rows if r.get("res")
            and r["res"].get("busy_before") is not None]
    if busy:
        print("Other processes kept %.1f-%.1f of the %d CPUs busy just before the "
              "runs (0.5 s samples); compare rows of one quiet run." % (
                  min(busy), max(busy), os.cpu_count() or 0))
    print("Exposed comm: the time covered by rank 0's traced collectives per step "
          "(blocking, so all exposed; waiting for the other rank included); by "
          "kind: the median of each kind's time per step (medians need not add up "
          "to the exposed median). Link floor: the least the link alone can cost "
          "per step for this step's traffic. zeroc: %s. Total %.0f s." % (args.zeroc, total_s))


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--links", default="local,10gbit:100us",
                    help="comma-separated: local, RATE:DELAY (default local,10gbit:100us)")
    ap.add_argument("--stages", default="3")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--model", choices=sorted(MODELS), default="gpt2")
    for k in ("layers", "width", "heads", "vocab", "positions", "seq", "batch"):
        ap.add_argument("--" + k, type=int)
    ap.add_argument("--delay-impl", choices=("auto", "netem", "nfqueue"), default="auto")
    ap.add_argument("--no-check", dest="check", action="store_false",
                    help="skip netns.sh check before each link's runs")
    ap.add_argument("--zeroc", default=os.path.join(ROOT, "build", "bin", "zeroc"))
    ap.add_argument("--timeout", type=int, default=1800)
    ap.add_argument("--json")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    try:
        a.links = [parse_link(s) for s in a.links.split(",") if s]
    except ValueError as e:
        ap.error(str(e))
    if not a.links:
        ap.error("--links: at least one")
    try:
        a.stages = sorted({int(s) for s in a.stages.split(",") if s})
    except ValueError:
        a.stages = [-1]
    if not a.stages or any(s not in (0, 1, 2, 3) for s in a.stages):
        ap.error("--stages: a comma-separated list of 0, 1, 2, 3")
    if a.steps < 1 or not 0 <= a.warmup < a.steps:
        ap.error("need --steps >= 1 and 0 <= --warmup < --steps")
    a.dims = dict(MODELS[a.model])
    for k in list(a.dims):
        if getattr(a, k) is not None:
            a.dims[k] = getattr(a, k)
    a.dims["positions"] = max(a.dims["positions"], a.dims["seq"])
    a.zeroc = os.path.abspath(a.zeroc)
    if not (os.path.isfile(a.zeroc) and os.access(a.zeroc, os.X_OK)):
        ap.error("no zeroc executable at %s (build it or pass --zeroc PATH)" % a.zeroc)
    if shutil.which("mpirun") is None:
        ap.error("mpirun not found on PATH (Open MPI: scripts/install-deps.sh)")
    if any(link["name"] != "local" for link in a.links) and os.geteuid() != 0:
        ap.error("links other than 'local' need root (network namespaces, tc)")
    return a


def main():
    args = parse_args()
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda n, _f: sys.exit(128 + n))
    work = tempfile.mkdtemp(prefix="zeroc-net-", dir="/tmp")
    t_start = time.time()
    rows, netns_used = [], False
    try:
        onnx_path, data = make_model(args, work)
        outs = {}
        for s in args.stages:
            outs[s] = compile_stage(args, onnx_path, s, work)
            print("bench_net: stage %d compiled (%.1f s)" % (s, outs[s][2]),
                  file=sys.stderr)
        psi = outs[args.stages[0]][1]["parameters"]
        for link in args.links:
            info = dict()
            if link["name"] != "local":
                netns_used = True
                try:
                    up, check = link_up(args, link)
                except BenchError as e:
                    for s in args.stages:
                        rows.append(dict(link=link, stage=s, error=str(e)))
                    print("bench_net: link %s: %s" % (link["name"], e), file=sys.stderr)
                    continue
                m = re.search(r"delay [0-9]+ us one way \((\w+)\)", up)
                info = dict(check=check, impl=m.group(1) if m else "?")
            for s in args.stages:
                out, plan, _ = outs[s]
                tag = "%s-s%d" % (re.sub(r"[^a-z0-9]+", "_", link["name"]), s)
                row = dict(link=link, stage=s, wire_bytes=wire_bytes(plan))
                try:
                    row["res"] = train(args, out, data, link, tag, work)
                    print("bench_net: %s stage %d: median step %.1f ms, exposed "
                          "comm %.1f ms" % (link["name"], s, row["res"]["step_s"] * 1e3,
                                            row["res"]["comm"]["exposed_s"] * 1e3),
                          file=sys.stderr)
                except BenchError as e:
                    row["error"] = str(e)
                    print("bench_net: %s stage %d: %s" % (link["name"], s, e),
                          file=sys.stderr)
                rows.append(row)
            if info:
                rows[-1].update(info)
                if info.get("impl") == "nfqueue":
                    st = subprocess.run([NETNS, "status"], stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True).stdout
                    rows[-1]["delay_stats"] = "; ".join(
                        re.sub(r"\s+", " ", m.group(0)) for m in
                        re.finditer(r"packets \d+ .*?late_max_us [0-9.]+", st))
        print_report(args, rows, psi, time.time() - t_start)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(dict(rows=rows, dims=args.dims, steps=args.steps,
                               warmup=args.warmup), f, indent=1)
    finally:
        if netns_used:
            subprocess.run([NETNS, "down"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        if args.keep:
            print("kept %s" % work, file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 1 if any(r.get("error") for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
