#!/usr/bin/python3
"""Run a command and record its peak resident set size.

Usage: rss_wrap.py --out DIR [--] CMD [ARGS...]

Meant to sit between mpirun and a rank's program
(`mpirun -np 2 python3 rss_wrap.py --out DIR -- out/train ...`): it runs CMD
as a child, waits for it, and writes resource.getrusage(RUSAGE_CHILDREN)
.ru_maxrss (KiB on Linux: the child's peak RSS, not this wrapper's) to
DIR/rss.rank<R>, R = $OMPI_COMM_WORLD_RANK (0 outside mpirun). Exits with
the child's exit status (128+N if it died of signal N).
"""
import os
import resource
import signal
import subprocess
import sys


def main(argv):
    if len(argv) < 3 or argv[0] != "--out":
        sys.stderr.write("usage: rss_wrap.py --out DIR [--] CMD [ARGS...]\n")
        return 2
    out_dir, cmd = argv[1], argv[2:]
    if cmd and cmd[0] == "--":
        cmd = cmd[1:]
    if not cmd:
        sys.stderr.write("rss_wrap.py: no command\n")
        return 2
    rank = os.environ.get("OMPI_COMM_WORLD_RANK", "0")
    child = subprocess.Popen(cmd)

    def forward(signum, _frame):
        # mpirun sends SIGTERM to its direct children (this wrapper) on abort.
        if child.poll() is None:
            child.send_signal(signum)

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, forward)
    rc = child.wait()
    kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "rss.rank%s" % rank), "w") as f:
        f.write("%d\n" % kib)
    return rc if rc >= 0 else 128 - rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
