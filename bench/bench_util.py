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


def trace_comm(path, steps, warmup):
    """From a rank's out/train --trace file: the median over the steps after
    warmup of the time covered by collectives (the union of the
    communication track's spans within the step; zeroc's collectives are
    blocking, so all of it is exposed), and the median seconds per step of
    each kind of collective. None when the file does not have `steps`
    optimizer steps."""
    with open(path) as f:
        ev = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    ends = sorted(e["ts"] + e["dur"] for e in ev if e["name"] == "optimizer_step")
    if len(ends) != steps:
        return None
    comm = sorted((e["ts"], e["ts"] + e["dur"], e["name"])
                  for e in ev if e.get("tid") == 1)
    union, kinds = [], {}
    for k in range(steps):
        lo, hi = (ends[k - 1] if k else float("-inf")), ends[k]
        covered, reach = 0.0, lo
        per_kind = {}
        for a, b, name in comm:
            a, b = max(a, lo), min(b, hi)
            if b <= a:
                continue
            per_kind[name] = per_kind.get(name, 0.0) + (b - a) / 1e6
            if b > reach:
                covered += b - max(a, reach)
                reach = b
        union.append(covered / 1e6)
        for name, v in per_kind.items():
            kinds.setdefault(name, [0.0] * steps)[k] = v
    return dict(exposed_s=median_after(union, warmup),
                by_kind={n: median_after(v, warmup) for n, v in sorted(kinds.items())})


def median_after(values, warmup):
    tail = values[warmup:] or values
    return statistics.median(tail)
