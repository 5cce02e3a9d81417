#!/usr/bin/python3
"""The engine's LR schedules against DeepSpeed's formulas.

Usage: lr_schedule_table.py DUMP_EXE DS_SCHEDULES_DIR

Runs train_schedule_dump (zeroc_rt_lr_at) over 1,000 scheduler steps for
every schedule type and several parameterizations each, and compares every
lr (and OneCycle momentum) with tools/reference/ds_schedules.py -- the
formula module the PyTorch reference trainer uses -- to a relative 1e-12.
Also checks the engine's Python float formatting (pyFloat, used by the
console and csv_monitor) against repr() for 3,000 values.  Prints a summary
and exits 1 on any mismatch.
"""

import math
import random
import subprocess
import sys

STEPS = 1000
RTOL = 1e-12

TYPES = {"constant": 0, "WarmupLR": 1, "WarmupDecayLR": 2,
         "WarmupCosineLR": 3, "OneCycle": 4, "LRRangeTest": 5}

# (name, type, base_lr, ds params) -- the params are DeepSpeed's config keys.
CASES = [
    ("constant", "constant", 0.05, {}),
    # WarmupLR
    ("warmup_log_100", "WarmupLR", 0.1,
     {"warmup_min_lr": 0.0, "warmup_max_lr": 0.01, "warmup_num_steps": 100,
      "warmup_type": "log"}),
    ("warmup_linear_250", "WarmupLR", 0.1,
     {"warmup_min_lr": 1e-5, "warmup_max_lr": 3e-3,
      "warmup_num_steps": 250, "warmup_type": "linear"}),
    ("warmup_log_n1", "WarmupLR", 0.1,
     {"warmup_min_lr": 2e-4, "warmup_max_lr": 2e-3, "warmup_num_steps": 1,
      "warmup_type": "log"}),
    ("warmup_linear_n0", "WarmupLR", 0.1,
     {"warmup_min_lr": 0.0, "warmup_max_lr": 0.5, "warmup_num_steps": 0,
      "warmup_type": "linear"}),
    ("warmup_defaults_1000", "WarmupLR", 0.1,
     {"warmup_min_lr": 0.0, "warmup_max_lr": 0.001,
      "warmup_num_steps": 1000, "warmup_type": "log"}),
    ("warmup_linear_2000", "WarmupLR", 0.1,
     {"warmup_min_lr": 1e-3, "warmup_max_lr": 1e-4,
      "warmup_num_steps": 2000, "warmup_type": "linear"}),
    # WarmupDecayLR
    ("decay_log_100_800", "WarmupDecayLR", 0.1,
     {"warmup_min_lr": 0.0, "warmup_max_lr": 0.01, "warmup_num_steps": 100,
      "total_num_steps": 800, "warmup_type": "log"}),
    ("decay_linear_50_1000", "WarmupDecayLR", 0.1,
     {"warmup_min_lr": 1e-6, "warmup_max_lr": 3e-4, "warmup_num_steps": 50,
      "total_num_steps": 1000, "warmup_type": "linear"}),
    ("decay_total_below_warmup", "WarmupDecayLR", 0.1,
     {"warmup_min_lr": 0.0, "warmup_max_lr": 0.02, "warmup_num_steps": 100,
      "total_num_steps": 30, "warmup_type": "log"}),
    ("decay_total_warmup_plus_1", "WarmupDecayLR", 0.1,
     {"warmup_min_lr": 1e-4, "warmup_max_lr": 1e-2, "warmup_num_steps": 10,
      "total_num_steps": 11, "warmup_type": "linear"}),
    ("decay_n1_600", "WarmupDecayLR", 0.1,
     {"warmup_min_lr": 0.0, "warmup_max_lr": 0.003, "warmup_num_steps": 1,
      "total_num_steps": 600, "warmup_type": "log"}),
    # WarmupCosineLR
    ("cosine_log_100_700", "WarmupCosineLR", 0.01,
     {"warmup_min_ratio": 0.1, "warmup_num_steps": 100,
      "total_num_steps": 700, "cos_min_ratio": 1e-4, "warmup_type": "log"}),
    ("cosine_linear_10_1000", "WarmupCosineLR", 3e-4,
     {"warmup_min_ratio": 0.0, "warmup_num_steps": 10,
      "total_num_steps": 1000, "cos_min_ratio": 0.01,
      "warmup_type": "linear"}),
    ("cosine_total_below_warmup", "WarmupCosineLR", 0.05,
     {"warmup_min_ratio": 0.2, "warmup_num_steps": 200,
      "total_num_steps": 50, "cos_min_ratio": 0.1, "warmup_type": "log"}),
    ("cosine_n1_500", "WarmupCosineLR", 1.0,
     {"warmup_min_ratio": 0.5, "warmup_num_steps": 1,
      "total_num_steps": 500, "cos_min_ratio": 0.0, "warmup_type": "linear"}),
    ("cosine_defaults", "WarmupCosineLR", 1e-3,
     {"total_num_steps": 900}),
    # OneCycle
    ("onecycle_sym_no_decay", "OneCycle", 0.1,
     {"cycle_min_lr": 1e-4, "cycle_max_lr": 1e-2,
      "cycle_first_step_size": 100, "cycle_momentum": True,
      "cycle_min_mom": 0.85, "cycle_max_mom": 0.95}),
    ("onecycle_asym_decay", "OneCycle", 0.1,
     {"cycle_min_lr": 1e-3, "cycle_max_lr": 5e-2,
      "cycle_first_step_size": 150, "cycle_second_step_size": 50,
      "decay_lr_rate": 0.01, "decay_step_size": 10, "cycle_momentum": True,
      "cycle_min_mom": 0.8, "cycle_max_mom": 0.9, "decay_mom_rate": 0.001}),
    ("onecycle_no_momentum", "OneCycle", 0.1,
     {"cycle_min_lr": 0.0, "cycle_max_lr": 1.0,
      "cycle_first_step_size": 333, "cycle_second_step_size": 200,
      "decay_lr_rate": 0.5, "decay_step_size": 7, "cycle_momentum": False}),
    ("onecycle_tiny", "OneCycle", 0.1,
     {"cycle_min_lr": 2e-3, "cycle_max_lr": 4e-3,
      "cycle_first_step_size": 1, "cycle_second_step_size": 1,
      "decay_lr_rate": 0.1, "decay_step_size": 3, "cycle_momentum": True,
      "cycle_min_mom": 0.5, "cycle_max_mom": 0.7, "decay_mom_rate": 0.0}),
    ("onecycle_defaults", "OneCycle", 0.1,
     {"cycle_min_lr": 1e-5, "cycle_max_lr": 1e-3}),
    ("onecycle_second_zero", "OneCycle", 0.1,
     {"cycle_min_lr": 1e-3, "cycle_max_lr": 2e-3,
      "cycle_first_step_size": 40, "cycle_second_step_size": 0,
      "decay_lr_rate": 0.3, "decay_step_size": 5, "cycle_momentum": True,
      "cycle_min_mom": 0.7, "cycle_max_mom": 0.9, "decay_mom_rate": 0.002}),
    ("onecycle_long_first", "OneCycle", 0.1,
     {"cycle_min_lr": 1e-4, "cycle_max_lr": 3e-3,
      "cycle_first_step_size": 700, "cycle_second_step_size": 1,
      "decay_lr_rate": 0.001, "decay_step_size": 1, "cycle_momentum": True,
      "cycle_min_mom": 0.6, "cycle_max_mom": 0.99,
      "decay_mom_rate": -0.0001}),
    # LRRangeTest
    ("range_defaults", "LRRangeTest", 0.1, {}),
    ("range_continuous", "LRRangeTest", 0.1,
     {"lr_range_test_min_lr": 1e-4, "lr_range_test_step_size": 7,
      "lr_range_test_step_rate": 0.5, "lr_range_test_staircase": False}),
    ("range_staircase", "LRRangeTest", 0.1,
     {"lr_range_test_min_lr": 3e-5, "lr_range_test_step_size": 50,
      "lr_range_test_step_rate": 2.0, "lr_range_test_staircase": True}),
    ("range_step_1", "LRRangeTest", 0.1,
     {"lr_range_test_min_lr": 1e-6, "lr_range_test_step_size": 1,
      "lr_range_test_step_rate": 0.01, "lr_range_test_staircase": True}),
]

# DeepSpeed's constructor defaults for the keys a case leaves out, as the
# engine's struct needs every field.
DEFAULTS = {"warmup_min_lr": 0.0, "warmup_max_lr": 0.001,
            "warmup_num_steps": 1000, "warmup_type": "log",
            "warmup_min_ratio": 0.0, "cos_min_ratio": 0.0001,
            "decay_lr_rate": 0.0, "cycle_first_step_size": 2000,
            "cycle_second_step_size": None, "decay_step_size": 0,
            "cycle_momentum": True, "cycle_min_mom": 0.8,
            "cycle_max_mom": 0.9, "decay_mom_rate": 0.0,
            "lr_range_test_min_lr": 1e-3, "lr_range_test_step_size": 2000,
            "lr_range_test_step_rate": 1.0, "lr_range_test_staircase": False}


def engine_fields(typ, base_lr, params):
    p = dict(DEFAULTS)
    p.update(params)
    f = {"type": TYPES[typ], "base_lr": repr(float(base_lr)),
         "steps": STEPS}
    if typ == "constant":
        return f
    for k in ("warmup_min_lr", "warmup_max_lr", "warmup_min_ratio",
              "cos_min_ratio", "cycle_min_lr", "cycle_max_lr",
              "decay_lr_rate", "cycle_min_mom", "cycle_max_mom",
              "decay_mom_rate"):
        if k in p:
            f[k] = repr(float(p[k]))
    for k in ("warmup_num_steps", "total_num_steps",
              "cycle_first_step_size", "decay_step_size"):
        if k in p:
            f[k] = int(p[k])
    second = p["cycle_second_step_size"]   # None: the first size (the
    f["cycle_second_step_size"] = int(     # compiler resolves it)
        p["cycle_first_step_size"] if second is None else second)
    f["warmup_type_log"] = 1 if p["warmup_type"] == "log" else 0
    f["cycle_momentum"] = 1 if p["cycle_momentum"] else 0
    f["range_min_lr"] = repr(float(p["lr_range_test_min_lr"]))
    f["range_step_rate"] = repr(float(p["lr_range_test_step_rate"]))
    f["range_step_size"] = int(p["lr_range_test_step_size"])
    f["range_staircase"] = 1 if p["lr_range_test_staircase"] else 0
    return f


def expected(ds, typ, base_lr, params):
    """[(lr, momentum or nan)] for t = 0..STEPS-1 from ds_schedules."""
    if typ == "constant":
        return [(base_lr, math.nan)] * STEPS
    table = ds.lr_table({"type": typ, "params": params}, base_lr, STEPS,
                        betas=(0.9, 0.999))
    cycles = typ == "OneCycle" and params.get("cycle_momentum", True)
    out = []
    for lr, betas in table:
        if cycles:
            assert betas[1] == 0.99, betas   # ZEROC_RT_ONE_CYCLE_BETA2
            out.append((lr, betas[0]))
        else:
            assert betas == (0.9, 0.999), betas
            out.append((lr, math.nan))
    return out


def same(a, b):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= RTOL * max(abs(a), abs(b))


def repr_values():
    vals = [0.001, 1e-05, 0.0001, 0.00011, 65536.0, 4294967296.0, 1e16,
            1.5e16, 9999999999999998.0, 123456789012345.6, 0.1 + 0.2,
            1 / 3, 2.5e-300, 5e-324, 1.7976931348623157e308, 0.0, -0.0,
            -2.5, 1e22, 0.3, 100.0, 3e-4, 0.99, 0.9, 0.999, 1.0, 2.0 ** 70,
            2.0 ** -30, 123.456, -1e-7]
    rng = random.Random(20250221)
    while len(vals) < 3000:
        e = rng.uniform(-30, 30)
        v = rng.choice((-1, 1)) * 10 ** e
        if rng.random() < 0.2:
            v = float(round(v, rng.randint(0, 6)))
        vals.append(v)
    return vals


def main():
    if len(sys.argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    exe, ds_dir = sys.argv[1], sys.argv[2]
    sys.path.insert(0, ds_dir)
    import ds_schedules as ds

    lines = []
    for name, typ, base_lr, params in CASES:
        f = engine_fields(typ, base_lr, params)
        lines.append("lr %s %s" % (name, " ".join(
            "%s=%s" % kv for kv in sorted(f.items()))))
    vals = repr_values()
    for i in range(0, len(vals), 100):
        lines.append("repr r%d %s" % (i, " ".join(repr(v) for v in
                                                  vals[i:i + 100])))
    r = subprocess.run([exe], input="\n".join(lines) + "\n",
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write("train_schedule_dump failed (%d): %s\n"
                         % (r.returncode, r.stderr))
        return 1
    got = {}
    reprs = []
    for line in r.stdout.splitlines():
        w = line.split(" ")
        if w[0] == "lr":
            got.setdefault(w[1], []).append((float(w[3]), float(w[4])))
        elif w[0] == "repr":
            reprs.append(w[2])

    failures = 0
    checked = exact = 0
    for name, typ, base_lr, params in CASES:
        want = expected(ds, typ, base_lr, params)
        have = got.get(name, [])
        if len(have) != len(want):
            print("FAIL %s: %d values, expected %d"
                  % (name, len(have), len(want)))
            failures += 1
            continue
        bad = [(t, h, w) for t, (h, w) in enumerate(zip(have, want))
               if not (same(h[0], w[0]) and same(h[1], w[1]))]
        checked += 2 * len(want)
        exact += sum((h[0] == w[0]) + (h[1] == w[1] or
                                       (math.isnan(h[1]) and
                                        math.isnan(w[1])))
                     for h, w in zip(have, want))
        if bad:
            failures += 1
            for t, h, w in bad[:5]:
                print("FAIL %s t=%d: engine lr %r mom %r, DeepSpeed lr %r "
                      "mom %r" % (name, t, h[0], h[1], w[0], w[1]))
        else:
            print("PASS %s (%s, %d steps)" % (name, typ, STEPS))
    if len(reprs) != len(vals):
        print("FAIL repr: %d values, expected %d" % (len(reprs), len(vals)))
        failures += 1
    else:
        bad = [(v, h) for v, h in zip(vals, reprs) if repr(v) != h]
        for v, h in bad[:10]:
            print("FAIL repr(%r): engine %r" % (v, h))
        failures += 1 if bad else 0
        if not bad:
            print("PASS repr (%d values)" % len(vals))
    print("%d schedules x %d steps: %d values compared (%d bit-identical), "
          "%d failures" % (len(CASES), STEPS, checked, exact, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
