#!/usr/bin/python3
"""Checks the --trace files of a run: DIR/rank<r>.trace.json for each of
--ranks ranks is Chrome trace JSON whose complete events ("ph": "X") put the
micro-step's ops (named "<op> <ONNX node>") on the compute track (tid 0)
inside a micro_step span, the optimizer_step spans there too, and every
collective with its bytes on the communication track (tid 1). With
--device, a GPU program's own timeline too: its ops as the compute stream
ran them (tid 2, "device_op"), each an op of the host's compute track, in
order and not overlapping, and its collectives on tid 3. Prints one line
per rank: ops, collectives and the kinds of collectives seen."""
import argparse
import json
import os
import sys


def check(path, rank, want_collectives, device):
    d = json.load(open(path))
    assert d["otherData"]["rank"] == rank and d["otherData"]["dropped_events"] == 0
    events = [e for e in d["traceEvents"] if e["ph"] == "X"]
    assert all(e["pid"] == rank and e["dur"] >= 0 for e in events)
    micro = [e for e in events if e["name"] == "micro_step"]
    ops = [e for e in events if e["cat"] == "op"]
    steps = [e for e in events if e["name"] == "optimizer_step"]
    comm = [e for e in events if e["tid"] == 1]
    assert micro and ops and steps, "missing micro_step, op or optimizer_step spans"
    assert all(e["tid"] == 0 for e in micro + ops + steps)
    eps = 1.0  # microseconds: the spans share their clock readings
    for op in ops:  # the micro-step's ops and the optimizer step's
        assert any(m["ts"] - eps <= op["ts"] and
                   op["ts"] + op["dur"] <= m["ts"] + m["dur"] + eps
                   for m in micro + steps), \
            "op %s outside every micro_step and optimizer_step" % op["name"]
    assert any(" " in op["name"] for op in ops), "no op carries its ONNX node name"
    assert any(s["ts"] - eps <= op["ts"] and op["ts"] + op["dur"] <= s["ts"] + s["dur"] + eps
               for op in ops for s in steps), "no op of the optimizer step on the compute track"
    assert all(e["cat"] == "collective" and e["args"]["bytes"] >= 0 for e in comm)
    kinds = sorted({e["name"] for e in comm})
    for k in want_collectives:
        assert k in kinds, "no %s on the communication track (%s)" % (k, kinds)
    line = "rank %d: %d op spans, %d collectives (%s)" % (
        rank, len(ops), len(comm), ", ".join(kinds))
    if not device:
        assert not any(e["tid"] in (2, 3) for e in events), "a device timeline on the host"
        return line
    dev = sorted((e for e in events if e["tid"] == 2), key=lambda e: e["ts"])
    assert dev and all(e["cat"] == "device_op" for e in dev), "no device_op spans on tid 2"
    names = {op["name"] for op in ops}
    assert all(e["name"] in names for e in dev), "a device op the host never ran"
    for a, b in zip(dev, dev[1:]):
        assert a["ts"] + a["dur"] <= b["ts"] + eps, "device ops %s and %s overlap" % (
            a["name"], b["name"])
    devcomm = [e for e in events if e["tid"] == 3]
    assert all(e["cat"] == "device_collective" for e in devcomm)
    return line + ", device: %d op spans, %d collectives" % (len(dev), len(devcomm))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--ranks", type=int, default=1)
    ap.add_argument("--collectives", default="", help="comma-separated names")
    ap.add_argument("--device", action="store_true",
                    help="a GPU program's trace: check its device timeline too")
    a = ap.parse_args()
    want = [c for c in a.collectives.split(",") if c]
    for r in range(a.ranks):
        print(check(os.path.join(a.dir, "rank%d.trace.json" % r), r, want, a.device))
    return 0


if __name__ == "__main__":
    sys.exit(main())
