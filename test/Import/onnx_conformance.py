#!/usr/bin/python3
"""Imports ONNX's own backend node tests (Debian's libonnx-testdata) with zeroc
and checks the result types against the expected outputs.

Usage: onnx_conformance.py --zeroc BIN [--data DIR] [--min-matched N] [-v]

For every node test whose ops are all ones zeroc supports, runs
`zeroc import model.onnx --allow-no-loss` and classifies it:
  matched    imported; every output's shape and element type equal the
             expected output_*.pb of test_data_set_0
  rejected   exit 1 with one 'zeroc: error:' line (e.g. a Reshape target that
             is a graph input, not a constant: zeroc needs static shapes)
  MISMATCH   imported, but an output type differs from ONNX's expectation
  FAILURE    crash, hang, other exit code, or a malformed error
Exits non-zero on any MISMATCH or FAILURE, or when fewer than --min-matched
tests matched. Numerics are checked once zeroc can execute graphs.
"""
import argparse
import collections
import glob
import os
import re
import subprocess
import sys

import onnx
from onnx import TensorProto

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_models import SUPPORTED_OPS  # noqa: E402  (one list of zeroc's ops)

MLIR_ELEM = {
    TensorProto.FLOAT: "f32", TensorProto.DOUBLE: "f64",
    TensorProto.FLOAT16: "f16", TensorProto.BFLOAT16: "bf16",
    TensorProto.INT64: "i64", TensorProto.INT32: "i32",
    TensorProto.INT8: "i8", TensorProto.BOOL: "i1",
}


def expected_types(test_dir, model):
    """MLIR type strings of the expected outputs, or None if not comparable."""
    data = os.path.join(test_dir, "test_data_set_0")
    types = []
    for i, _ in enumerate(model.graph.output):
        path = os.path.join(data, "output_%d.pb" % i)
        if not os.path.exists(path):
            return None
        t = TensorProto()
        with open(path, "rb") as f:
            t.ParseFromString(f.read())
        if t.data_type not in MLIR_ELEM:
            return None
        dims = "x".join(str(d) for d in t.dims)
        types.append("tensor<%s%s>" % (dims + "x" if dims else "",
                                      MLIR_ELEM[t.data_type]))
    return types


def result_types(ir):
    m = re.search(r"func\.func @forward\(.*?\) -> (.*) \{\n", ir)
    if not m:
        return None
    return re.findall(r"tensor<[^>]*>", m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zeroc", required=True)
    ap.add_argument("--data", default="/usr/share/libonnx-testdata/data/node")
    ap.add_argument("--min-matched", type=int, default=0)
    ap.add_argument("-v", action="store_true")
    args = ap.parse_args()

    counts = collections.Counter()
    reasons = collections.Counter()
    bad = []
    for model_path in sorted(glob.glob(os.path.join(args.data, "*/model.onnx"))):
        test_dir = os.path.dirname(model_path)
        name = os.path.basename(test_dir)
        model = onnx.load(model_path)
        opset = max((o.version for o in model.opset_import
                     if o.domain in ("", "ai.onnx")), default=0)
        ops = {n.op_type for n in model.graph.node}
        if not ops <= SUPPORTED_OPS or not 13 <= opset <= 18:
            counts["skipped"] += 1
            continue
        expect = expected_types(test_dir, model)
        try:
            p = subprocess.run([args.zeroc, "import", model_path, "--allow-no-loss"],
                               capture_output=True, text=True, timeout=30)
        except subprocess.TimeoutExpired:
            bad.append((name, "FAILURE", "timeout"))
            continue
        err = p.stderr.strip().splitlines()
        if p.returncode == 1 and len(err) == 1 and err[0].startswith("zeroc: error: "):
            counts["rejected"] += 1
            msg = err[0].split(": ", 3)[-1]
            msg = re.sub(r"'[^']*'", "'…'", msg)
            reasons[msg[:90]] += 1
            if args.v:
                print("rejected %s: %s" % (name, err[0]))
            continue
        if p.returncode != 0:
            bad.append((name, "FAILURE", "rc=%d %s" % (p.returncode, p.stderr[-300:])))
            continue
        got = result_types(p.stdout)
        if expect is None:
            counts["imported (no comparable expectation)"] += 1
        elif got != expect:
            bad.append((name, "MISMATCH", "zeroc %s, ONNX expects %s" % (got, expect)))
        else:
            counts["matched"] += 1
            if args.v:
                print("matched  %s: %s" % (name, got))

    for name, kind, why in bad:
        print("%s %s: %s" % (kind, name, why))
    print("rejections by reason:")
    for msg, n in reasons.most_common():
        print("  %4d  %s" % (n, msg))
    mism = sum(1 for b in bad if b[1] == "MISMATCH")
    fail = sum(1 for b in bad if b[1] == "FAILURE")
    print("onnx_conformance: %d matched, %d rejected, %d skipped (unsupported ops "
          "or opset), %d mismatched, %d failures"
          % (counts["matched"], counts["rejected"], counts["skipped"], mism, fail))
    ok = not bad and counts["matched"] >= args.min_matched
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
