"""Helpers shared by the benches (bench_gpt.py, bench_peers.py, bench_net.py):
one thread per process, process groups, a free TCP port, the CPUs' busy time,
exposed communication from zeroc's --trace."""
import json
import os
import signal
import socket
import statistics
import subprocess
import time


def single_thread_env(extra=None):
    """The environment with every BLAS / OpenMP pool at one thread."""
    env = dict(os.environ)
    env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               MKL_NUM_THREADS="1", PYTHONUNBUFFERED="1")
    env.update(extra or {})
    return env


def kill_group(p):
    """Ends the process group (session) the bench started `p` in."""
    if p.poll() is not None:
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            return
        try:
            p.wait(timeout=10)
            return
        except subprocess.TimeoutExpired:
            pass


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def busy_cpus(seconds=1.0):
    """CPUs' worth of non-idle time over `seconds` (/proc/stat), or None."""
    def sample():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return sum(v), v[3] + v[4]  # total, idle + iowait
    try:
        t0, i0 = sample()
        time.sleep(seconds)
        t1, i1 = sample()
    except (OSError, ValueError, IndexError):
        return None
    if t1 == t0:
        return None
    return (1.0 - (i1 - i0) / (t1 - t0)) * (os.cpu_count() or 1)


# Op spans that are communication, not compute: the blocking collectives
# and the waits for started ones.
COMM_OPS = ("zero.all_gather", "zero.reduce_scatter", "zero.all_reduce",
            "zero.wait", "zero.gather_replica")


def _union(spans):
    """Sorted, merged [a, b) intervals of `spans`."""
    merged = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return merged


def _covered(intervals, lo, hi):
    return sum(max(0.0, min(b, hi) - max(a, lo)) for a, b in intervals)


def trace_comm(path, steps, warmup, device=False):
    """From a rank's out/train --trace file: the median over the steps after
    warmup of the exposed communication, the time covered by collectives
    (the union of the communication track's spans within the step) that no
    compute op covers (a started collective's span runs from its start to
    its wait, and the ops between overlap it; blocking collectives and waits
    are not compute), the median seconds per step of all collectives
    (`total_s`) and of each kind. With `device`, from a GPU program's own
    timeline instead (tid 2: the ops as the compute stream ran them, its
    waits for collectives left out; tid 3: the collectives as the
    communication stream ran them). None when the file does not have
    `steps` optimizer steps."""
    with open(path) as f:
        ev = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    ends = sorted(e["ts"] + e["dur"] for e in ev if e["name"] == "optimizer_step")
    if len(ends) != steps:
        return None
    comm = sorted((e["ts"], e["ts"] + e["dur"], e["name"])
                  for e in ev if e.get("tid") == (3 if device else 1))
    comm_union = _union((a, b) for a, b, _ in comm)
    if device:
        compute = _union((e["ts"], e["ts"] + e["dur"]) for e in ev if e.get("tid") == 2)
    else:
        compute = _union((e["ts"], e["ts"] + e["dur"]) for e in ev
                         if e.get("cat") == "op" and not e["name"].startswith(COMM_OPS))
    exposed, totals, kinds = [], [], {}
    for k in range(steps):
        lo, hi = (ends[k - 1] if k else float("-inf")), ends[k]
        per_kind = {}
        for a, b, name in comm:
            a, b = max(a, lo), min(b, hi)
            if b > a:
                per_kind[name] = per_kind.get(name, 0.0) + (b - a) / 1e6
        total = _covered(comm_union, lo, hi)
        hidden = sum(_covered(compute, max(a, lo), min(b, hi))
                     for a, b in comm_union if min(b, hi) > max(a, lo))
        exposed.append((total - hidden) / 1e6)
        totals.append(total / 1e6)
        for name, v in per_kind.items():
            kinds.setdefault(name, [0.0] * steps)[k] = v
    return dict(exposed_s=median_after(exposed, warmup), total_s=median_after(totals, warmup),
                by_kind={n: median_after(v, warmup) for n, v in sorted(kinds.items())})


def median_after(values, warmup):
    tail = values[warmup:] or values
    return statistics.median(tail)
