#!/usr/bin/env python3
"""Where a GPU run's step time goes, op by op, from the device's own timeline.

  trace_ops.py DIR/rank0.trace.json [--skip-steps N] [--cost FILE]
               [--micro-steps M] [--top K]

Reads a trainer's --trace file (runtime/src/train/trace.cc): tid 2 is the
ops as the compute stream ran them, each from its start to the next op's
(gpu_timeline.cc), so a span also holds any time the GPU waited for the
host to queue the op's work. Spans belong to the optimizer step whose end
(the host's `optimizer_step` span, tid 0) follows their start; the steps
after the first N (default 1: the warm-up) are averaged, so the rows add
up to the device time of a mean step.

Prints two markdown tables for scripts/gpu-check.sh's log and the closing
note: per op kind (the op name's first word: graph.gemm, ...) the calls and
milliseconds per step and their share, and, with --cost (the output of
`zeroc-opt -zero-print-compute-cost` on the program's --dump-ir, at the
GPU's rates), the cost model's GFLOP, GB and roofline time per step for
that kind, the rates reached (TFLOP/s, GB/s) and the roofline's share of
the measured time; then the K (default 12) op classes (the name with its
first number, the layer's, as N: `graph.gemm /module/h.N/mlp/mlp.0/MatMul`)
that take the most time, with the cost model's numbers for each where the listing
is by node (zero-print-compute-cost's by-node). The last line is one row
for gpu-check's table:

  ok|<ms> ms of device ops per step: <kind> <p>%, <kind> <p>%, <kind> <p>%

"FAIL|..." when the trace cannot be read, has too few steps or no device
timeline (exit 1).
"""
import argparse
import json
import re
import sys


def cost_rows(path, micro_steps):
    """{row name: [gflop, gb, us]} per optimizer step from a
    zero-print-compute-cost listing (per op name, or with by-node per op
    name and ONNX node, as the trace names ops): @train_micro_step's rows
    times the micro-steps, plus @train_step's (@forward, the evaluation, is
    left out)."""
    rows, scale = {}, None
    with open(path) as f:
        for line in f:
            head = re.match(r"^// @(\w+):", line)
            if head:
                scale = {"train_micro_step": micro_steps, "train_step": 1}.get(head.group(1))
                continue
            fields = line[2:].split() if line.startswith("//") else []
            if scale is None or len(fields) < 5 or fields[0] in ("op", "total"):
                continue
            try:
                numbers = [float(x) for x in fields[-3:]]
                int(fields[-4])
            except ValueError:
                continue
            r = rows.setdefault(" ".join(fields[:-4]), [0.0, 0.0, 0.0])
            for i in range(3):
                r[i] += scale * numbers[i]
    return rows


def grouped(rows, key):
    """`rows` summed per key(row name)."""
    out = {}
    for name, values in rows.items():
        g = out.setdefault(key(name), [0.0, 0.0, 0.0])
        for i in range(3):
            g[i] += values[i]
    return out


def kind_of(name):
    return name.split()[0] if name.split() else "?"


def op_class(name):
    """The op's name with its first number (the layer's, in a Hugging Face
    path) as N: one class for the op of every layer."""
    return re.sub(r"\.\d+(?=[./]|$)", ".N", name, count=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--skip-steps", type=int, default=1)
    ap.add_argument("--cost")
    ap.add_argument("--micro-steps", type=int, default=1)
    ap.add_argument("--top", type=int, default=12)
    a = ap.parse_args()
    try:
        events = [e for e in json.load(open(a.trace))["traceEvents"] if e.get("ph") == "X"]
    except (OSError, ValueError, KeyError, TypeError) as err:
        print("FAIL|cannot read %s: %s" % (a.trace, err))
        return 1
    ends = sorted(e["ts"] + e["dur"] for e in events
                  if e.get("tid") == 0 and e.get("name") == "optimizer_step")
    if a.skip_steps < 0 or len(ends) <= a.skip_steps:
        print("FAIL|%d optimizer steps in the trace; need more than --skip-steps %d" % (
            len(ends), a.skip_steps))
        return 1
    ops = [e for e in events if e.get("tid") == 2]
    if not ops:
        print("FAIL|no device timeline (tid 2) in %s" % a.trace)
        return 1
    lo, hi = ends[a.skip_steps - 1] if a.skip_steps else float("-inf"), ends[-1]
    steps = len(ends) - a.skip_steps
    kinds, classes = {}, {}
    for e in ops:
        if not lo < e["ts"] <= hi:
            continue
        name = str(e.get("name", "?"))
        for table, key in ((kinds, kind_of(name)), (classes, op_class(name))):
            t = table.setdefault(key, [0, 0.0])
            t[0] += 1
            t[1] += e["dur"] / 1e3
    total = sum(ms for _, ms in kinds.values()) / steps
    if total <= 0:
        print("FAIL|no device op ran in the %d steps after step %d" % (steps, a.skip_steps))
        return 1
    cost, classCost = {}, {}
    if a.cost:
        try:
            rows = cost_rows(a.cost, a.micro_steps)
        except OSError as err:
            print("FAIL|cannot read %s: %s" % (a.cost, err))
            return 1
        cost = grouped(rows, kind_of)
        classCost = grouped(rows, op_class)
        if not any(name in classCost for name in classes):
            classCost = {}  # a listing per op name: no classes
    print("Device time per optimizer step by op kind (mean of %d steps after %d)%s:" % (
        steps, a.skip_steps, "; cost model per step from " + a.cost if a.cost else ""))
    print()
    head = "| op kind | calls | ms | share |"
    rule = "|---|---:|---:|---:|"
    if a.cost:
        head += " GFLOP | GB | roofline ms | TFLOP/s | GB/s | roofline / measured |"
        rule += "---:|---:|---:|---:|---:|---:|"
    print(head)
    print(rule)
    for kind, (calls, ms) in sorted(kinds.items(), key=lambda kv: -kv[1][1]):
        ms /= steps
        line = "| %s | %d | %.3f | %.1f%% |" % (kind, calls // steps, ms, 100 * ms / total)
        if a.cost:
            if kind in cost:
                gflop, gb, us = cost[kind]
                line += " %.1f | %.3f | %.3f | %.1f | %.0f | %.0f%% |" % (
                    gflop, gb, us / 1e3, gflop / ms if ms else 0.0, 1e3 * gb / ms if ms else 0.0,
                    100 * us / 1e3 / ms if ms else 0.0)
            else:
                line += " | | | | | |"
        print(line)
    print("| total | %d | %.3f | 100%% |%s" % (
        sum(c for c, _ in kinds.values()) // steps, total,
        " %.1f | %.3f | %.3f | | | %.0f%% |" % (
            sum(v[0] for v in cost.values()), sum(v[1] for v in cost.values()),
            sum(v[2] for v in cost.values()) / 1e3,
            100 * sum(v[2] for v in cost.values()) / 1e3 / total) if a.cost else ""))
    print()
    print("The %d op classes that take the most device time per step%s:" % (
        a.top, "; the cost model's by class where its listing is by node" if classCost else ""))
    print()
    print("| op class | calls | ms | share |%s" % (
        " GFLOP | TFLOP/s | GB/s | roofline / measured |" if classCost else ""))
    print("|---|---:|---:|---:|%s" % ("---:|---:|---:|---:|" if classCost else ""))
    for name, (calls, ms) in sorted(classes.items(), key=lambda kv: -kv[1][1])[:a.top]:
        ms /= steps
        line = "| %s | %d | %.3f | %.1f%% |" % (name.replace("|", "/"), calls // steps, ms,
                                                100 * ms / total)
        if classCost:
            c = classCost.get(name)
            line += (" %.1f | %.1f | %.0f | %.0f%% |" % (
                c[0], c[0] / ms if ms else 0.0, 1e3 * c[1] / ms if ms else 0.0,
                100 * c[2] / 1e3 / ms if ms else 0.0) if c else " | | | |")
        print(line)
    print()
    top = sorted(kinds.items(), key=lambda kv: -kv[1][1])[:3]
    print("ok|%.2f ms of device ops per step: %s" % (total, ", ".join(
        "%s %.0f%%" % (k, 100 * ms / steps / total) for k, (_, ms) in top)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
