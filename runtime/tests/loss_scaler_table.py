#!/usr/bin/python3
"""The engine's loss scaler against DeepSpeed's DynamicLossScaler.

Usage: loss_scaler_table.py DUMP_EXE DS_SCHEDULES_DIR

Runs scripted overflow sequences through train_schedule_dump
(zeroc_rt_loss_scaler_update) and through the Python re-implementation of
DynamicLossScaler.update_scale in tools/reference/ds_schedules.py, and
requires identical tables: the scale each step used, the skip flag, the log
line rank 0 prints, and the error that stops the run at the minimum scale.
Exits 1 on any difference.
"""

import random
import subprocess
import sys


def seq(text):
    return "".join(c for c in text if c in "01")


def random_seq(seed, n, p):
    rng = random.Random(seed)
    return "".join("1" if rng.random() < p else "0" for _ in range(n))


# (name, engine config, overflow flags).  The engine config uses the fields
# of zeroc_rt_loss_scaler_config_t.
CASES = [
    ("hyst2_window1000", dict(initial_scale=65536, scale_window=1000,
                              hysteresis=2, min_scale=1),
     seq("0001 1 0 1 1 1 000 1 1 1")),
    ("hyst1_window3", dict(initial_scale=1024, scale_window=3, hysteresis=1,
                           min_scale=1),
     seq("1 000 000 1 00 1 0000000 1 1")),
    ("hyst3_window5", dict(initial_scale=2 ** 20, scale_window=5,
                           hysteresis=3, min_scale=1),
     seq("1 1 0 1 1 00000 1 00000 1 1 1 1 0")),
    ("hyst3_consecutive_window5", dict(initial_scale=2 ** 20, scale_window=5,
                                       hysteresis=3, min_scale=1,
                                       consecutive_hysteresis=1),
     seq("1 1 0 1 1 0 1 1 1 00000 1 1 0 11 1 00000000")),
    ("hyst2_consecutive_window1", dict(initial_scale=8, scale_window=1,
                                       hysteresis=2, min_scale=1,
                                       consecutive_hysteresis=1),
     seq("0 0 1 0 1 1 0 1 1 1 1 0 0")),
    ("window1_doubles_every_clean_step", dict(initial_scale=1, scale_window=1,
                                              hysteresis=1, min_scale=0.5),
     seq("0000 1 000 1 1 0")),
    ("window1000_long_clean", dict(initial_scale=65536, scale_window=1000,
                                   hysteresis=2, min_scale=1),
     "0" * 999 + "1" + "0" * 1500),
    ("min_scale_error", dict(initial_scale=4, scale_window=1000,
                             hysteresis=1, min_scale=1),
     seq("1 1 1 0 0")),
    ("min_scale_fractional", dict(initial_scale=3, scale_window=100,
                                  hysteresis=1, min_scale=0.5),
     seq("1 1 1 1")),
    ("min_scale_after_hysteresis", dict(initial_scale=2, scale_window=10,
                                        hysteresis=2, min_scale=1),
     seq("1 1 0 1 1 1")),
    ("quarter_min_hyst2", dict(initial_scale=1, scale_window=4, hysteresis=2,
                               min_scale=0.25),
     seq("1 1 1 1 0000 1 0 1 1")),
    ("static_1024", dict(static_scale=1024.0),
     seq("0 1 1 0 1 1 1 1 0 1")),
    ("disabled", dict(enabled=0), seq("0 1 0 1 1")),
    ("deepspeed_class_defaults", dict(initial_scale=2 ** 32,
                                      scale_window=1000, hysteresis=1,
                                      min_scale=1),
     random_seq(1, 3000, 0.01)),
    ("random_hyst2_w20", dict(initial_scale=2 ** 16, scale_window=20,
                              hysteresis=2, min_scale=1),
     random_seq(2, 400, 0.2)),
    ("random_hyst4_consecutive_w7", dict(initial_scale=2 ** 24,
                                         scale_window=7, hysteresis=4,
                                         min_scale=1,
                                         consecutive_hysteresis=1),
     random_seq(3, 400, 0.35)),
    ("random_hyst1_w2_factor2", dict(initial_scale=2 ** 10, scale_window=2,
                                     hysteresis=1, min_scale=2 ** -6,
                                     scale_factor=2.0),
     random_seq(4, 400, 0.45)),
]


def engine_line(name, cfg, flags):
    c = {"enabled": 1, "static_scale": 0.0, "initial_scale": 0.0,
         "scale_window": 0, "hysteresis": 0, "consecutive_hysteresis": 0,
         "min_scale": 0.0, "scale_factor": 0.0}
    c.update(cfg)
    fields = " ".join("%s=%s" % (k, repr(v) if isinstance(v, float) else v)
                      for k, v in sorted(c.items()))
    return "scaler %s %s seq=%s" % (name, fields, flags)


def python_scaler(ds, cfg):
    if cfg.get("enabled", 1) == 0:
        return ds.StaticLossScaler(1.0)
    if cfg.get("static_scale", 0):
        return ds.StaticLossScaler(cfg["static_scale"])
    s = ds.DynamicLossScaler(
        init_scale=cfg["initial_scale"], scale_window=cfg["scale_window"],
        min_scale=cfg["min_scale"], delayed_shift=cfg["hysteresis"],
        consecutive_hysteresis=bool(cfg.get("consecutive_hysteresis", 0)))
    return s


def expected_lines(ds, name, cfg, flags):
    rows, error = ds.scaler_table(python_scaler(ds, cfg),
                                  [c == "1" for c in flags])
    out = ["scaler %s %d %s %d %d ok %s"
           % (name, i, "%.17g" % float(used), o, sk, log or "-")
           for i, (used, o, sk, log) in enumerate(rows)]
    if error is not None:
        used, message = error
        out.append("scaler %s %d %s 1 1 error %s"
                   % (name, len(rows), "%.17g" % float(used), message))
    return out


def main():
    if len(sys.argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    exe, ds_dir = sys.argv[1], sys.argv[2]
    sys.path.insert(0, ds_dir)
    import ds_schedules as ds

    text = "\n".join(engine_line(n, c, f) for n, c, f in CASES) + "\n"
    r = subprocess.run([exe], input=text, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write("train_schedule_dump failed (%d): %s\n"
                         % (r.returncode, r.stderr))
        return 1
    got = {}
    for line in r.stdout.splitlines():
        got.setdefault(line.split(" ")[1], []).append(line)
    failures = 0
    logs = errors = 0
    for name, cfg, flags in CASES:
        want = expected_lines(ds, name, cfg, flags)
        have = got.get(name, [])
        if have != want:
            failures += 1
            print("FAIL %s" % name)
            for i, (h, w) in enumerate(zip(have, want)):
                if h != w:
                    print("  step %d:\n    engine:    %s\n    DeepSpeed: %s"
                          % (i, h, w))
                    break
            else:
                print("  engine %d rows, DeepSpeed %d rows"
                      % (len(have), len(want)))
        else:
            n_logs = sum(1 for w in want if not w.endswith(" -"))
            err = want and " error " in want[-1]
            logs += n_logs
            errors += 1 if err else 0
            print("PASS %s (%d steps, %d log lines%s)"
                  % (name, len(want), n_logs,
                     ", stops at the minimum scale" if err else ""))
    print("%d sequences: %d log lines, %d minimum-scale errors, %d failures"
          % (len(CASES), logs, errors, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
