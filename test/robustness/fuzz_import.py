#!/usr/bin/python3
"""Mutation fuzzer for `zeroc import`.

Usage:
  /usr/bin/python3 test/robustness/fuzz_import.py --zeroc PATH/TO/zeroc \\
      [--count 1000] [--seed 1] [--timeout 10] [--jobs 2] \\
      [--zeroc-args "--flag ..."] [--keep-dir DIR] MODEL.onnx [MODEL.onnx ...]

Generates COUNT mutated variants of the given model files (round-robin over
them), runs `ZEROC import [ZEROC_ARGS] VARIANT` on each and classifies:

  exit 0                          -> accepted
  exit 1 with non-empty stderr    -> rejected (clean diagnostic)
  anything else                   -> FAILURE: killed by a signal / crash,
                                     timeout (hang), any other exit code,
                                     exit 1 with empty stderr, or stderr that
                                     contains "Stack dump", "Assertion" or
                                     "terminate called".

Use the `--zeroc-args=--flag` form (with `=`) when the extra arguments start
with a dash, otherwise argparse may take them for one of its own options.

Exits 0 iff there were no failures.  Only the Python standard library is
used.  The mutations are a deterministic function of --seed.
"""

import argparse
import concurrent.futures
import os
import random
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading

CRASH_MARKERS = ("Stack dump", "Assertion", "terminate called")
MAX_REPORTED = 20


# ---------------------------------------------------------------------------
# Mutations.  Each takes (rng, data) and returns (new_bytes, description).
# ---------------------------------------------------------------------------

def mut_truncate(rng, data):
    r = rng.random()
    if r < 0.1:
        n = 0
    elif r < 0.2:
        n = 1
    else:
        n = rng.randrange(0, max(1, len(data)))
    return data[:n], "truncate to %d/%d bytes" % (n, len(data))


def mut_bitflip(rng, data):
    if not data:
        return data, "bitflip (empty input)"
    buf = bytearray(data)
    k = rng.randint(1, 8)
    flips = []
    for _ in range(k):
        pos = rng.randrange(len(buf))
        bit = rng.randrange(8)
        buf[pos] ^= 1 << bit
        flips.append("%d.%d" % (pos, bit))
    return bytes(buf), "bitflip x%d at %s" % (k, ",".join(flips))


def mut_overwrite(rng, data):
    if not data:
        return data, "overwrite (empty input)"
    buf = bytearray(data)
    pos = rng.randrange(len(buf))
    n = min(rng.randint(1, 64), len(buf) - pos)
    style = rng.choice(("random", "zero", "ff", "const"))
    if style == "random":
        chunk = bytes(rng.randrange(256) for _ in range(n))
    elif style == "zero":
        chunk = b"\x00" * n
    elif style == "ff":
        chunk = b"\xff" * n
    else:
        chunk = bytes([rng.randrange(256)]) * n
    buf[pos:pos + n] = chunk
    return bytes(buf), "overwrite %d bytes (%s) at %d" % (n, style, pos)


def mut_duplicate(rng, data):
    if not data:
        return data, "duplicate (empty input)"
    pos = rng.randrange(len(data))
    n = rng.randint(1, min(256, len(data) - pos))
    dst = rng.randrange(len(data) + 1)
    chunk = data[pos:pos + n]
    return (data[:dst] + chunk + data[dst:],
            "duplicate %d bytes from %d to %d" % (n, pos, dst))


def mut_delete(rng, data):
    if not data:
        return data, "delete (empty input)"
    pos = rng.randrange(len(data))
    n = rng.randint(1, min(256, len(data) - pos))
    return data[:pos] + data[pos + n:], "delete %d bytes at %d" % (n, pos)


MUTATIONS = (mut_truncate, mut_bitflip, mut_overwrite, mut_duplicate,
             mut_delete)


def make_variant(rng, data):
    """Apply one mutation; occasionally stack a second one."""
    out, desc = rng.choice(MUTATIONS)(rng, data)
    if rng.random() < 0.15:
        out, desc2 = rng.choice(MUTATIONS)(rng, out)
        desc = desc + " + " + desc2
    return out, desc


# ---------------------------------------------------------------------------
# Running and classification
# ---------------------------------------------------------------------------

def last_line(text):
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[-1] if lines else "<empty>"


def classify(rc, stderr, timed_out):
    """Returns (kind, reason); kind in {'accepted','rejected','failure'}."""
    if timed_out:
        return "failure", "timeout (hang)"
    for marker in CRASH_MARKERS:
        if marker in stderr:
            return "failure", "stderr contains %r" % marker
    if rc < 0:
        return "failure", "killed by signal %d" % -rc
    if rc == 0:
        return "accepted", ""
    if rc == 1:
        lines = stderr.strip().splitlines()
        if len(lines) == 1 and lines[0].startswith("zeroc: error: "):
            return "rejected", ""
        if not lines:
            return "failure", "exit 1 with empty stderr"
        return "failure", "exit 1 without a one-line 'zeroc: error:' message"
    return "failure", "unexpected exit code %d" % rc


def run_one(cmd_prefix, path, timeout):
    """Returns (rc, stderr_text, timed_out)."""
    cmd = cmd_prefix + [path]
    # Own session so a hang can be killed together with any children.
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         start_new_session=True)
    try:
        _, err = p.communicate(timeout=timeout)
        return p.returncode, err.decode("utf-8", "replace"), False
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            _, err = p.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
            err = b""
            p.wait()
        return None, err.decode("utf-8", "replace"), True


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--zeroc", required=True, help="path to the zeroc binary")
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=10.0,
                    help="seconds per run (default 10)")
    ap.add_argument("--jobs", type=int, default=2,
                    help="parallel workers (default 2)")
    ap.add_argument("--zeroc-args", default="",
                    help="extra arguments after `import`, shell-split")
    ap.add_argument("--keep-dir", default=None,
                    help="copy failing variants into this directory")
    ap.add_argument("models", nargs="+", metavar="MODEL.onnx")
    args = ap.parse_args(argv)

    if args.count < 0:
        ap.error("--count must be >= 0")
    if not (os.path.isfile(args.zeroc) and os.access(args.zeroc, os.X_OK)):
        ap.error("--zeroc %s is not an executable file" % args.zeroc)
    originals = []
    for m in args.models:
        with open(m, "rb") as f:
            originals.append((os.path.basename(m), f.read()))

    cmd_prefix = [args.zeroc, "import"] + shlex.split(args.zeroc_args)
    tmp = tempfile.mkdtemp(prefix="zeroc-fuzz-")
    counts = {"accepted": 0, "rejected": 0, "failure": 0}
    failures = []
    lock = threading.Lock()

    def work(i):
        # Per-variant RNG: variant i depends only on (seed, i), not on
        # thread scheduling, and variants are generated lazily so large
        # models do not fill the temp dir.
        rng = random.Random("%d:%d" % (args.seed, i))
        name, data = originals[i % len(originals)]
        blob, desc = make_variant(rng, data)
        stem = os.path.splitext(name)[0]
        path = os.path.join(tmp, "%05d_%s.onnx" % (i, stem))
        with open(path, "wb") as f:
            f.write(blob)
        rc, err, timed_out = run_one(cmd_prefix, path, args.timeout)
        kind, reason = classify(rc if rc is not None else 0, err, timed_out)
        with lock:
            counts[kind] += 1
            if kind == "failure":
                failures.append((i, name, desc, rc, reason, last_line(err),
                                 path))
        if kind != "failure":
            os.remove(path)

    try:
        with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as ex:
            for fut in [ex.submit(work, i) for i in range(args.count)]:
                fut.result()

        failures.sort()
        if args.keep_dir and failures:
            os.makedirs(args.keep_dir, exist_ok=True)
            for f in failures:
                shutil.copy(f[6], os.path.join(args.keep_dir,
                                               os.path.basename(f[6])))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print("fuzz_import: %d variants: %d rejected, %d accepted, %d failures"
          % (args.count, counts["rejected"], counts["accepted"],
             counts["failure"]))
    for i, name, desc, rc, reason, err, path in failures[:MAX_REPORTED]:
        print("FAILURE #%d [%s] %s: %s (rc=%s); stderr: %s"
              % (i, name, desc, reason, "timeout" if rc is None else rc, err))
    if len(failures) > MAX_REPORTED:
        print("... and %d more failures" % (len(failures) - MAX_REPORTED))
    if failures and args.keep_dir:
        print("failing variants saved in %s" % args.keep_dir)
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
