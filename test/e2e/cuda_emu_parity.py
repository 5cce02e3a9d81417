#!/usr/bin/python3
"""The CUDA target's programs against the CPU target's, on the host emulation.

For each (model, stage, world size, config): compile the model with
`--target cpu` and with `--target cuda-emu` (the same train.cu that
`--target cuda` builds with nvcc, linked against the CUDA runtime's host
emulation: its kernels run on the CPU, one thread per block, "device"
memory is host memory and NCCL is MPI staged through host buffers), train
both for --steps steps on the same data and compare every step's loss and
the saved parameters (up to what Adam's steps can move an element whose
gradient is rounding noise: see the atol below). The CPU target itself is compared with PyTorch by
run_e2e.py; this checks that the CUDA program computes the same training.
Nothing here runs on a GPU (scripts/gpu-check.sh does).

With --simt, a shorter list (SIMT_CASES) runs its cuda-emu programs with
every block's threads as the launch asks (ZEROC_RT_CUDA_EMU_SIMT, in the
order each case names: docs/CudaTarget.md, "The host emulation"): the
fused kernels, the block reductions and the engine's device paths with
many threads.

Prints one line per run and `cuda-emu parity: N passed, M failed`.
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys

import numpy as np

from mpirun_isolated import MPIRUN

# (model, stage, world size, ds_config): every stage on 2 ranks for the
# example models, 1 rank, the 16-bit and accumulation paths, and three of
# the Hugging Face suite's models.
CASES = [
    ("mlp", s, 2, None) for s in range(4)
] + [
    ("gpt2", s, 2, None) for s in range(4)
] + [
    ("gpt2", 0, 1, None),
    ("llama", 3, 2, None),
    ("gpt2", 3, 2, {"fp16": {"enabled": True, "initial_scale_power": 8}}),
    ("gpt2", 2, 2, {"bf16": {"enabled": True}, "gradient_accumulation_steps": 2}),
    ("gpt2", 1, 2, {"optimizer": {"type": "SGD", "params": {"lr": 0.01, "momentum": 0.9}},
                    "gradient_clipping": 0.5}),
    # Hugging Face suite models (test/models/hf, the helper_ts17 export unless
    # @export says): concat, scatter_nd, padded embeddings, comparisons;
    # dynamo's t5 export has scatter_elements.
    ("hf/t5", 3, 2, None),
    ("hf/t5@helper_dynamo", 0, 1, None),
    ("hf/bert_mlm", 2, 2, None),
    ("hf/qwen2", 0, 1, None),
    # Attention in one kernel (zero-fuse-attention: f16/bf16; the 16-bit
    # gpt2 cases above fuse it with its dropout on the probabilities).
    ("gpt2_nodropout", 0, 2, {"bf16": {"enabled": True}}),
    ("gpt2_nodropout", 3, 2, {"fp16": {"enabled": True, "initial_scale_power": 8}}),
    # gpu-check's stage-3 benchmark form: one rank, whose reduce-scatters
    # run in place (zero-plan-buffers).
    ("gpt2_nodropout", 3, 1, {"bf16": {"enabled": True}}),
    # A Hugging Face export's form: k read by rows (transB), an additive
    # attention mask from the data in the prologue.
    ("hf/llama", 0, 1, {"bf16": {"enabled": True}}),
]

# The --simt cases, each with the order its threads run in: the 16-bit
# paths, stage 3's gathers, accumulation, a Hugging Face export.
SIMT_CASES = [
    ("gpt2", 3, 2, {"fp16": {"enabled": True, "initial_scale_power": 8}}, "forward"),
    ("gpt2", 2, 2, {"bf16": {"enabled": True}, "gradient_accumulation_steps": 2}, "reverse"),
    ("llama", 3, 2, None, "reverse"),
    ("hf/bert_mlm", 2, 2, None, "forward"),
    ("gpt2_nodropout", 2, 2, {"bf16": {"enabled": True}}, "reverse"),
]

# Cases whose cuda-emu program runs its collectives over the emulated NCCL
# (comm_nccl.cu itself, nccl_emu.cc beneath it): a GPU per rank
# (ZEROC_RT_CUDA_EMU_GPUS) and --comm nccl. Each collective runs when the
# program waits for it, after the kernels queued meanwhile
# (docs/CudaTarget.md, "The host emulation"): stage 1's and 2's started
# reductions, stage 3's gathers, the 16-bit paths, accumulation and the
# staged host scalars of the optimizer step. (No compiled program
# reduce-scatters in place on 2 ranks: the ctest cuda_emu_comm_nccl_np2
# checks that block move.)
NCCL_CASES = [
    ("gpt2", 1, 2, None),
    ("gpt2", 2, 2, {"bf16": {"enabled": True}, "gradient_accumulation_steps": 2}),
    ("gpt2", 3, 2, {"fp16": {"enabled": True, "initial_scale_power": 8}}),
    ("llama", 3, 2, None),
    ("mlp", 0, 2, None),
]

# Relative tolerances (losses, saved parameters, and Adam's step) of the
# programs that compute an attention in one kernel (their train.cu
# instantiates attentionForward): it rounds where the
# unfused ops round, but it normalizes the probabilities after their
# product with v and takes the softmax gradient's dot product from o
# (docs/CudaTarget.md, "Attention in one kernel"), so a 16-bit result may
# differ from the CPU's in its last place (bf16: 2^-8 relative). The key
# biases' gradient is rounding noise (below), now noise of another sign:
# Adam may step such an element lr one way in one program and the other
# way in the other, 2 lr (2e-3) per step apart. fp16's losses stay
# within 2e-3 (seen: 4.2e-4 without dropout, 0 with), tight enough to
# tell a dropout mask other than the CPU's (4.6e-3 with another seed's).
FUSED_ATTENTION_RTOL = {"fp16": (2e-3, 1e-2, 2e-3), "bf16": (1e-2, 1e-2, 2e-3)}

# The same 16-bit programs with attention as matmuls
# ("cuda-emu-matmul-attention", zeroc.fuse_attention false), against the
# CPU target: the GPU's float sums in a parallel order may round a 16-bit
# value the other way from the CPU's double sums (seen: gpt2_nodropout fp16
# stage 3, 4.2e-4 in a loss; the key biases' Adam noise, 2 lr per step).
MATMUL_TWIN_RTOL = (1e-3, 1e-4, 2e-3)

# Cases whose cuda-emu program also runs unfused (zeroc.fuse_elementwise
# false: one kernel per elementwise op): the fused program must give the
# same bits, losses and saved parameters (docs/CudaTarget.md, "Elementwise
# fusion"): (model, stage, world size), in every config listed for it
# (GPT-2's stage 3 in fp32 and fp16, stage 2 in fp32 and bf16; GPT-2
# without dropout, whose residual adds join the layer norm gradients,
# zero-fuse-layer-norm-grad-add, in bf16). Where the
# cuda-emu program computes an attention in one kernel, which rounds
# differently, the unfused program is compared with a third,
# "cuda-emu-matmul-attention" (zeroc.fuse_attention false), which every
# such case runs and compares with the CPU target (MATMUL_TWIN_RTOL).
UNFUSED = {("gpt2", 0, 2), ("gpt2", 2, 2), ("gpt2", 3, 2), ("llama", 3, 2),
           ("hf/bert_mlm", 2, 2), ("gpt2_nodropout", 0, 2)}

HF = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "hf")


def fuses_attention(out):
    """Whether the program in `out` computes an attention in one kernel."""
    cu = os.path.join(out, "train.cu")
    return os.path.exists(cu) and "z::attentionForward<" in open(cu).read()


def against_cpu(losses, params, target, steps, tolerances):
    """The largest relative loss difference of `target`'s program from the
    CPU target's, and why they differ beyond `tolerances` (losses,
    parameters, Adam's step), or ""."""
    loss_rtol, param_rtol, step_atol = tolerances
    a, b = losses["cpu"], losses[target]
    if None in a + b:  # a loss that was not a number (log.jsonl's null)
        return 1.0, "%s losses are not all numbers: %s vs %s" % (target, a, b)
    worst = max(abs(x - y) / max(abs(x), 1e-12) for x, y in zip(a, b)) if a else 1.0
    if len(a) != steps or len(b) != steps or worst > loss_rtol:
        return worst, "%s losses differ by %.2e: %s vs %s" % (target, worst, a, b)
    if params["cpu"].keys() != params[target].keys() or not params["cpu"]:
        return worst, "%s saved different parameters" % target
    for name, p in params["cpu"].items():
        q = params[target][name]
        # atol: Adam makes rounding noise in a zero gradient (GPT-2's
        # attention key biases, whose exact gradient is 0) into steps of up
        # to about lr (1e-3) each, in a direction the summation order
        # decides: elements may differ by what the steps can move them. The
        # losses above stay tight.
        atol = step_atol * steps
        if p.shape != q.shape or not np.allclose(p, q, rtol=param_rtol, atol=atol):
            return worst, "%s parameter %s differs by %.2e" % (
                target, name, float(np.abs(p - q).max()))
    return worst, ""


def run(cmd, env=None):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, env=env)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zeroc", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--rtol", type=float, default=1e-5)
    ap.add_argument("--simt", action="store_true",
                    help="run SIMT_CASES with many threads per block")
    ap.add_argument("--model", help="run only this model's cases")
    ap.add_argument("--nccl", action="store_true",
                    help="run only NCCL_CASES (part of the default run)")
    args = ap.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    ref = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "reference",
                       "onnx_torch_train.py")
    passed = failed = 0
    if args.simt:
        cases = [c[:4] + (c[4], None) for c in SIMT_CASES]
    else:
        cases = [] if args.nccl else [c + (None, None) for c in CASES]
        cases += [c + (None, "nccl") for c in NCCL_CASES]
    for model, stage, world, config, order, comm in cases:
        if args.model and model != args.model:
            continue
        check_unfused = (model, stage, world) in UNFUSED and not args.simt and not comm
        env = dict(os.environ)
        env.pop("ZEROC_RT_CUDA_EMU_SIMT", None)
        if model.startswith("hf/"):
            name, _, export = model[3:].partition("@")
            onnx = os.path.join(HF, name, export or "helper_ts17", "model.onnx")
        else:
            onnx = os.path.join(args.models, model + ".onnx")
        data = os.path.join(args.work, "data-" + model.replace("/", "-").replace("@", "-"))
        if not os.path.isdir(data):
            r = run([sys.executable, ref, onnx, "--make-data", data, "--samples", "32",
                     "--seed", "0", "-q"])
            if r.returncode:
                print("data for %s failed:\n%s" % (model, r.stdout))
                return 1
        tag = "%s-s%d-w%d%s%s%s" % (model.replace("/", "-").replace("@", "-"), stage, world,
                                    "-cfg" + str(passed + failed) if config else "",
                                    "-simt-" + order if order else "",
                                    "-" + comm if comm else "")
        losses, params, why = {}, {}, ""
        runs = ["cpu", "cuda-emu"] + (["cuda-emu-unfused"] if check_unfused else [])
        fused_attention = False
        for target in runs:
            out = os.path.join(args.work, tag + "-" + target)
            cmd = [args.zeroc, "compile", onnx, "-o", out, "--stage", str(stage),
                   "--world-size", str(world),
                   "--target", "cpu" if target == "cpu" else "cuda-emu"]
            run_config = dict(config or {})
            if target == "cuda-emu-unfused":
                run_config["zeroc"] = {"fuse_elementwise": False}
            elif target == "cuda-emu-matmul-attention":
                run_config["zeroc"] = {"fuse_attention": False}
            if run_config:
                cfg = os.path.join(args.work, tag + "-" + target + ".json")
                with open(cfg, "w") as f:
                    json.dump(run_config, f)
                cmd += ["--config", cfg]
            r = run(cmd)
            if r.returncode:
                why = "%s compile failed: %s" % (target, r.stdout.strip().splitlines()[-1:])
                break
            if target == "cuda-emu":
                fused_attention = fuses_attention(out)
                if fused_attention:
                    runs.append("cuda-emu-matmul-attention")
            log = os.path.join(out, "log.jsonl")
            if order and target != "cpu":
                env["ZEROC_RT_CUDA_EMU_SIMT"] = order
            train = [os.path.join(out, "train"), "--data", data, "--steps", str(args.steps),
                     "--log-jsonl", log, "--save-params", os.path.join(out, "params")]
            if comm and target != "cpu":
                # One emulated GPU per rank; not --quiet, to see which
                # communicator ran.
                env["ZEROC_RT_CUDA_EMU_GPUS"] = str(world)
                env.pop("CUDA_VISIBLE_DEVICES", None)  # the emulation would read it
                train += ["--comm", comm]
            else:
                env.pop("ZEROC_RT_CUDA_EMU_GPUS", None)
                train.append("--quiet")
            r = run(MPIRUN + ["-np", str(world), "--oversubscribe", "--bind-to", "none"] + train,
                    env)
            if r.returncode:
                why = "%s train failed: %s" % (target, r.stdout.strip()[-400:])
                break
            if comm and target != "cpu" and "collectives over %s" % comm not in r.stdout:
                why = "%s did not run its collectives over %s: %s" % (
                    target, comm, r.stdout.strip()[-400:])
                break
            losses[target] = [json.loads(l)["loss"] for l in open(log)]
            params[target] = {os.path.basename(p): np.load(p) for p in
                              glob.glob(os.path.join(out, "params", "rank0", "*.npy"))}
        precision = "fp16" if (config or {}).get("fp16", {}).get("enabled") else "bf16"
        tight = (args.rtol, 1e-4, 1e-3)
        worst = twin = 1.0
        if not why:
            worst, why = against_cpu(losses, params, "cuda-emu", args.steps,
                                     FUSED_ATTENTION_RTOL[precision] if fused_attention
                                     else tight)
        if not why and "cuda-emu-matmul-attention" in losses:
            # The same program with attention as matmuls: every other kernel
            # checked at (nearly) the unfused programs' bounds.
            twin, why = against_cpu(losses, params, "cuda-emu-matmul-attention", args.steps,
                                    MATMUL_TWIN_RTOL)
        if not why and "cuda-emu-unfused" in losses:
            u = params["cuda-emu-unfused"]
            fused = "cuda-emu-matmul-attention" if fused_attention else "cuda-emu"
            if losses["cuda-emu-unfused"] != losses[fused]:
                why = "fused and unfused losses differ: %s vs %s" % (
                    losses[fused], losses["cuda-emu-unfused"])
            elif u.keys() != params[fused].keys() or not all(
                    np.array_equal(u[k], params[fused][k]) for k in u):
                why = "fused and unfused parameters differ"
        if why:
            failed += 1
            print("FAIL %s: %s" % (tag, why))
        else:
            passed += 1
            print("ok   %s: loss max rel diff %.1e%s%s" % (
                tag, worst, ", attention in one kernel (as matmuls: %.1e)" % twin
                if fused_attention else "",
                ", fused = unfused" if check_unfused else ""))
    print("cuda-emu parity: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
