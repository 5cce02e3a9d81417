#!/usr/bin/env python3
"""How much of a GPU run's communication overlapped its computation.

  trace_overlap.py DIR/rank0.trace.json [--skip-steps N]

Reads a trainer's --trace file (runtime/src/train/trace.cc) and, from the
device's own timeline (tid 2: the ops as the compute stream ran them, the
stream's waits for collectives left out; tid 3: the collectives as the
communication stream ran them), takes per optimizer step the time
collectives ran and the part of it no op covered (bench_util.trace_comm,
which bench_net.py and bench_peers.py use on the host's tracks). Prints
one line for scripts/gpu-check.sh's table, medians over the steps after
the first N (default 1: the warm-up):

  ok|<p>% of <c> ms of collectives per step overlapped the compute stream; ...

"n/a|..." when no collective ran on the device, "FAIL|..." when the trace
cannot be read, has too few steps or no device timeline. An op's span
may include the GPU's wait for the host to queue its first kernel.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
from bench_util import trace_comm  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--skip-steps", type=int, default=1)
    a = ap.parse_args()
    try:
        events = [e for e in json.load(open(a.trace))["traceEvents"] if e.get("ph") == "X"]
    except (OSError, ValueError, KeyError) as err:
        print("FAIL|cannot read %s: %s" % (a.trace, err))
        return 1
    steps = sum(1 for e in events if e.get("tid") == 0 and e["name"] == "optimizer_step")
    if a.skip_steps < 0 or steps <= a.skip_steps:
        print("FAIL|%d optimizer steps in the trace; need more than --skip-steps %d" % (
            steps, a.skip_steps))
        return 1
    if not any(e.get("tid") == 2 for e in events):
        print("FAIL|no device timeline (tid 2) in %s" % a.trace)
        return 1
    comm = trace_comm(a.trace, steps, a.skip_steps, device=True)
    if comm["total_s"] <= 0:
        print("n/a|no collective ran on the device's communication stream after step %d "
              "(on one rank every in-place collective runs nothing)" % a.skip_steps)
        return 0
    total, exposed = comm["total_s"], comm["exposed_s"]
    print("ok|%.0f%% of %.2f ms of collectives per step overlapped the compute stream; "
          "%.2f ms/step exposed (medians of %d steps)" % (
              100 * (total - exposed) / total, total * 1e3, exposed * 1e3, steps - a.skip_steps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
