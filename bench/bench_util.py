"""Helpers shared by the benches (bench_gpt.py, bench_peers.py): one thread
per process, process groups, a free TCP port, the CPUs' busy time."""
import os
import signal
import socket
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
