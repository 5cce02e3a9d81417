#!/usr/bin/python3
"""End-to-end check of zeroc against the PyTorch reference trainer.

For every model x world size x ZeRO stage: compile the ONNX model with
`zeroc compile`, train it for N steps on W Open MPI ranks, and compare with
tools/reference/onnx_torch_train.py (same data order and optimizer, float64):

  * every step's loss within --rtol (relative) of the reference;
  * the parameters identical on every rank after the final gather, and close
    to the reference's;
  * plan.json's per-rank model-state bytes equal the ZeRO formulas (Adam
    with fp16: 16Ψ, 4Ψ+12Ψ/W, 2Ψ+14Ψ/W, 16Ψ/W; fp32: 16Ψ, 8Ψ+8Ψ/W,
    4Ψ+12Ψ/W, 16Ψ/W; bf16 with its fp32 gradient accumulators: 18Ψ,
    6Ψ+12Ψ/W, 2Ψ+16Ψ/W, 18Ψ/W) up to padding, and its communication volume
    2Ψ (stages 0-2) or 3Ψ (stage 3) per step; stage 3's persistent
    parameters (plan.json's persistent_parameter_elements) count as at
    stage 2.

Prints one line per run and `e2e: N passed, M failed`; exits 1 on failure.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np

from mpirun_isolated import MPIRUN

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join(HERE, "..", "..", "tools", "reference",
                         "onnx_torch_train.py")


def run(cmd, env=None, timeout=600):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env,
                       timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError("%s failed (rc %d): %s" % (
            " ".join(cmd[:3]), p.returncode, (p.stderr or p.stdout)[-800:]))
    return p


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def mpi_env():
    env = dict(os.environ)
    env.update(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    return env


def precision_of(config_path):
    """(mixed, grad_bytes) from the ds_config: mixed is "fp16", "bf16" or
    None (fp32); grad_bytes the gradient accumulators' element size zeroc
    must report (bf16 accumulates in fp32 unless grad_accum_dtype says bf16;
    fp16 in fp16 unless it says fp32), None in fp32."""
    cfg = json.load(open(config_path)) if config_path else {}
    accum = cfg.get("data_types", {}).get("grad_accum_dtype")
    if cfg.get("bf16", {}).get("enabled") is True:
        return "bf16", 2 if accum == "bf16" else 4
    if cfg.get("fp16", {}).get("enabled") is True:
        return "fp16", 4 if accum == "fp32" else 2
    return None, None


def check_plan(plan, psi, stage, w, nparams, mixed, grad_bytes):
    if mixed and plan["dtype_bytes"] != 2:
        return "plan.json: mixed precision with %d-byte parameters" % plan["dtype_bytes"]
    if grad_bytes and plan["grad_dtype_bytes"] != grad_bytes:
        return "plan.json: %d-byte gradients, expected %d" % (
            plan["grad_dtype_bytes"], grad_bytes)
    if mixed and plan["optimizer"].lower() in ("adam", "adamw") and \
            plan["optimizer_state_bytes_per_parameter"] != 12:
        return "plan.json: mixed-precision Adam keeps %d state bytes per " \
               "parameter, not 12" % plan["optimizer_state_bytes_per_parameter"]
    b = plan["model_state_bytes"]
    # The paper's formulas with d bytes per parameter element (2 with mixed
    # precision, 4 in fp32), g per gradient element (d, or 4 with fp32
    # accumulation: bf16's default) and K bytes of optimizer state per
    # parameter (mixed precision with Adam: 12, the fp32 master, m and v;
    # fp32 Adam: 8; fp32 SGD with momentum: 4).
    d = plan["dtype_bytes"]
    g = plan["grad_dtype_bytes"]
    k = plan["optimizer_state_bytes_per_parameter"]
    # With one rank and one micro-step, an fp32 accumulator that would hold
    # one 16-bit gradient is in the training dtype instead (d bytes, not g):
    # plan.json counts those elements.
    narrow = plan["narrow_gradient_elements"]
    if narrow and not (w == 1 and plan["gradient_accumulation_steps"] == 1 and g > d):
        return "plan.json: %d narrow gradient elements with %d ranks, %d micro-steps" % (
            narrow, w, plan["gradient_accumulation_steps"])
    if not narrow and w == 1 and plan["gradient_accumulation_steps"] == 1 and g > d:
        return "plan.json: one rank and one micro-step, yet every accumulator is %d-byte" % g
    # Stage 3's persistent parameters (stage3_param_persistence_threshold)
    # are kept whole on every rank, as at stage 2.
    pp = plan.get("persistent_parameter_elements", 0)
    formulas = {0: (d + g + k) * psi, 1: (d + g) * psi + k * psi / w,
                2: d * psi + (g + k) * psi / w,
                3: (d + g + k) * (psi - pp) / w + d * pp + (g + k) * pp / w}
    slack = 16 * nparams * w  # each parameter pads by fewer than W elements
    # Frozen parameters: stored (sharded at stage 3) but no gradient and no
    # optimizer state; buffers: whole on every rank; the formulas hold for
    # the trainable ones.
    if abs(b["total"] - b.get("frozen_params", 0) - b.get("buffers", 0)
           - formulas[stage] + (g - d) * narrow / w) > slack:
        return "plan.json total %d != ZeRO formula %.0f" % (b["total"], formulas[stage])
    # An embedding's gradient rows (stages 2-3) move instead of its table's
    # reduce-scatter, or, for a tied table, besides its head part's: the
    # formulas count the table's reduce-scatter.
    comm = plan["communication_elements_per_step"]["total"] - \
        plan["communication_elements_per_step"].get("embedding_rows", 0)
    gas = plan["gradient_accumulation_steps"]
    # Paper volume per step (GAS = 1): 2Ψ for stages 0-2, 3Ψ for stage 3.
    # Stages 2-3 reduce-scatter every micro-step, stage 3 also gathers twice.
    # zeroc gathers a parameter in the backward pass only where the backward
    # reads it (a bias's gradient does not), so stage 3 moves between 2Ψ and
    # the paper's 3Ψ per step.
    # A persistent parameter is not gathered in the micro-step but once
    # after the step, as at stage 2.
    terms = {0: 2, 1: 2, 2: gas + 1, 3: 3 * gas}[stage]
    low = high = terms * psi
    if stage == 3:
        low = gas * psi + gas * (psi - pp) + pp
        high = gas * psi + 2 * gas * (psi - pp) + pp
    # Tables whose gradient moves only as rows have no reduce-scatter.
    if stage >= 2:
        low -= gas * plan.get("row_gradient_parameters", 0)
        high -= gas * plan.get("row_gradient_parameters", 0)
    slack = terms * nparams * w
    # Stage 3 also gathers the frozen parameters around their uses.
    if stage == 3:
        slack += 2 * gas * plan.get("frozen_parameter_elements", 0)
    if not low - slack <= comm <= high + slack:
        return "plan.json communication %d elements outside [%d, %d] " \
               "(%dΨ = %d)" % (comm, low, high, terms, terms * psi)
    return None


def frozen_initializers(onnx_path):
    """name -> initial value of every frozen parameter the model marks."""
    import onnx
    from onnx import numpy_helper
    m = onnx.load(onnx_path)
    names = set()
    for prop in m.metadata_props:
        if prop.key == "zeroc.parameters":
            names = set(json.loads(prop.value).get("frozen", []))
    if not names:
        raise RuntimeError("%s marks no frozen parameter" % onnx_path)
    return {t.name: numpy_helper.to_array(t) for t in m.graph.initializer
            if t.name in names}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zeroc", required=True)
    ap.add_argument("--models-dir", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--models", default="mlp,gpt2_nodropout")
    ap.add_argument("--stages", default="0,1,2,3")
    ap.add_argument("--world-sizes", default="1,2,4")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--samples", type=int, default=64)
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--param-rtol", type=float, default=1e-3,
                    help="relative norm difference of the final parameters")
    ap.add_argument("--config", default=None, help="ds_config.json for every run")
    ap.add_argument("--compile-arg", action="append", default=[],
                    help="an extra `zeroc compile` argument (repeatable)")
    ap.add_argument("--reference-model", default=None,
                    help="train the reference on this ONNX model instead (an "
                         "unfolded export of the same weights); only the "
                         "losses are compared")
    ap.add_argument("--check-frozen", action="store_true",
                    help="the model's frozen parameters (zeroc.parameters "
                         "metadata) must come back bitwise unchanged")
    args = ap.parse_args()

    mixed, grad_bytes = precision_of(args.config)
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    env = mpi_env()
    passed = failed = 0
    for model in args.models.split(","):
        onnx_path = os.path.join(args.models_dir, model + ".onnx")
        ref_path = args.reference_model or onnx_path
        data = os.path.join(args.work, model, "data")
        run(["/usr/bin/python3", REFERENCE, ref_path, "--make-data", data,
             "--samples", str(args.samples), "--seed", "0", "-q"])
        frozen = frozen_initializers(onnx_path) if args.check_frozen else {}
        for w in [int(x) for x in args.world_sizes.split(",")]:
            ref = os.path.join(args.work, model, "ref_w%d" % w)
            cmd = ["/usr/bin/python3", REFERENCE, ref_path, "--data", data,
                   "--steps", str(args.steps), "--world-size", str(w),
                   "--dtype", "float64", "--log-jsonl", ref + ".jsonl",
                   "--save-params", ref + "_params", "-q"]
            if args.config:
                cmd += ["--config", args.config]
            run(cmd)
            ref_log = read_jsonl(ref + ".jsonl")
            meta = json.load(open(os.path.join(ref + "_params", "params.json")))
            psi, nparams = meta["psi"], meta["num_params"]
            for stage in [int(x) for x in args.stages.split(",")]:
                name = "%s stage %d world %d" % (model, stage, w)
                out = os.path.join(args.work, model, "s%d_w%d" % (stage, w))
                t0 = time.time()
                try:
                    cmd = [args.zeroc, "compile", onnx_path, "-o", out,
                           "--stage", str(stage), "--world-size", str(w)] + \
                        args.compile_arg
                    if args.config:
                        cmd += ["--config", args.config]
                    run(cmd)
                    t1 = time.time()
                    run(MPIRUN + ["-np", str(w), "--oversubscribe", "--bind-to", "none",
                         os.path.join(out, "train"), "--data", data, "--steps",
                         str(args.steps), "--log-jsonl", out + "/log.jsonl",
                         "--save-params", out + "/params", "--quiet"], env=env)
                    log = read_jsonl(out + "/log.jsonl")
                    problems = []
                    if len(log) != len(ref_log):
                        problems.append("%d log records, reference has %d"
                                        % (len(log), len(ref_log)))
                    worst = 0.0
                    for a, b in zip(log, ref_log):
                        rel = abs(a["loss"] - b["loss"]) / max(abs(b["loss"]), 1e-12)
                        worst = max(worst, rel)
                        if rel > args.rtol:
                            problems.append("step %d loss %.8g vs reference %.8g "
                                            "(rel %.2e)" % (a["step"], a["loss"],
                                                            b["loss"], rel))
                            break
                    for fname, init in frozen.items():
                        got = np.load(os.path.join(out, "params", "rank0",
                                                   fname + ".npy"))
                        if got.dtype != init.dtype or got.tobytes() != init.tobytes():
                            problems.append("frozen param %s changed" % fname)
                    diff2 = ref2 = 0.0
                    for p in ([] if args.reference_model else meta["params"]):
                        mine = [np.load(os.path.join(out, "params", "rank%d" % r,
                                                     p["name"] + ".npy"))
                                for r in range(w)]
                        for r in range(1, w):
                            if not np.array_equal(mine[0], mine[r]):
                                problems.append("param %s differs between rank 0 "
                                                "and rank %d" % (p["name"], r))
                        refp = np.load(os.path.join(ref + "_params", p["file"]))
                        diff2 += float(np.sum((mine[0].astype(np.float64) - refp) ** 2))
                        ref2 += float(np.sum(refp ** 2))
                    # Adam amplifies float32 rounding where gradients are
                    # ~0 (the update is ~lr there whatever the sign), so the
                    # final parameters are compared in norm, not elementwise.
                    pworst = (diff2 / max(ref2, 1e-30)) ** 0.5 if ref2 else 0.0
                    if pworst > args.param_rtol:
                        problems.append("params differ from the reference by "
                                        "%.2e (relative norm)" % pworst)
                    plan_problem = check_plan(json.load(open(out + "/plan.json")),
                                              psi, stage, w, nparams, mixed,
                                              grad_bytes)
                    if plan_problem:
                        problems.append(plan_problem)
                    if problems:
                        raise RuntimeError("; ".join(problems[:3]))
                    passed += 1
                    print("PASS %s: max loss rel diff %.1e, param rel diff %.1e "
                          "(compile %.1fs, train %.1fs)"
                          % (name, worst, pworst, t1 - t0, time.time() - t1))
                except Exception as e:  # noqa: BLE001 - report and go on
                    failed += 1
                    print("FAIL %s: %s" % (name, e))
                sys.stdout.flush()
    print("e2e: %d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
