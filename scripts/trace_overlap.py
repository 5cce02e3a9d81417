#!/usr/bin/env python3
"""How much of a GPU run's communication overlapped its computation.

  trace_overlap.py DIR/rank0.trace.json [--skip-steps N]

Reads a trainer's --trace file (Chrome trace events; runtime/src/train/
trace.cc) and, from the device's own timeline (tid 2: the ops as the
compute stream ran them, tid 3: the collectives as the communication
stream ran them), prints one line:

  ok|<p>% of <c> ms of collectives per step ran while the compute stream worked; ...

or "n/a|..." when the device ran no collective, "FAIL|..." when the trace
has no device timeline. The compute stream counts as working during its
ops, not while it waits for a collective (the runtime marks those waits)
nor between micro-steps; an op's span may include the GPU's wait for the
host to queue its first kernel. The first N optimizer steps (default 1: the
warm-up) are left out: only device spans that start after the end of the
N-th "optimizer_step" span (tid 0) count.
"""
import argparse
import json
import sys


def merged(intervals):
    """The union of [begin, end) intervals, as sorted disjoint ones."""
    out = []
    for b, e in sorted(intervals):
        if out and b <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([b, e])
    return out


def overlap(span, union):
    """The length of `span` covered by the sorted disjoint `union`."""
    b, e = span
    return sum(max(0.0, min(e, ue) - max(b, ub)) for ub, ue in union)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--skip-steps", type=int, default=1)
    a = ap.parse_args()
    if a.skip_steps < 0:
        print("FAIL|--skip-steps must be 0 or more, got %d" % a.skip_steps)
        return 1
    try:
        events = [e for e in json.load(open(a.trace))["traceEvents"] if e.get("ph") == "X"]
    except (OSError, ValueError, KeyError) as err:
        print("FAIL|cannot read %s: %s" % (a.trace, err))
        return 1
    steps = sorted(e["ts"] + e["dur"] for e in events
                   if e["tid"] == 0 and e["name"] == "optimizer_step")
    if len(steps) <= a.skip_steps:
        print("FAIL|%d optimizer steps in the trace; need more than %d" % (len(steps), a.skip_steps))
        return 1
    start = steps[a.skip_steps - 1] if a.skip_steps else float("-inf")
    counted = len(steps) - a.skip_steps
    device = [e for e in events if e["tid"] in (2, 3) and e["ts"] >= start]
    compute = [(e["ts"], e["ts"] + e["dur"]) for e in device if e["tid"] == 2]
    comm = [(e["ts"], e["ts"] + e["dur"]) for e in device if e["tid"] == 3]
    if not compute:
        print("FAIL|no device timeline (tid 2) in %s" % a.trace)
        return 1
    busy = sum(e - b for b, e in merged(compute)) / 1000 / counted
    if not comm:
        print("n/a|no collective ran on the device's communication stream; "
              "compute stream busy %.1f ms/step" % busy)
        return 0
    union = merged(compute)
    total = sum(e - b for b, e in comm)
    if total <= 0:
        print("n/a|%d collectives per step, none longer than the clock's resolution; "
              "compute stream busy %.1f ms/step" % (len(comm) // counted, busy))
        return 0
    covered = sum(overlap(s, union) for s in comm)
    print("ok|%.0f%% of %.2f ms of collectives per step ran while the compute stream "
          "worked (%d collectives per step); compute stream busy %.1f ms/step" % (
              100 * covered / total, total / 1000 / counted, len(comm) // counted, busy))
    return 0


if __name__ == "__main__":
    sys.exit(main())
