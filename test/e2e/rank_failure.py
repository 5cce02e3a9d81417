#!/usr/bin/python3
"""A rank that dies or stops responding ends the whole job in bounded time.

Trains a 2-rank job (stage 2, where every micro-step runs collectives) with
--collective-timeout T, then, once it is training, either SIGKILLs rank 1
(Open MPI's launcher ends the job and names the rank) or SIGSTOPs it (rank
0's watchdog gives up after T seconds, naming the collective it waited in
and rank 1 as stopped); and SIGSTOPs rank 1 of the same model's CUDA
program on the host emulation over its emulated NCCL. Checks the exit
code, the bound and the message.

    %system-python rank_failure.py --zeroc zeroc --models-dir DIR --work DIR
"""
import argparse
import os
import signal
import subprocess
import sys
import time

from mpirun_isolated import MPIRUN

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join(HERE, "..", "..", "tools", "reference",
                         "onnx_torch_train.py")


def rank_pid(out, rank):
    """The pid of the process running OUT/train as MPI rank `rank`."""
    exe = os.path.join(out, "train").encode()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = open("/proc/%s/cmdline" % pid, "rb").read().split(b"\0")
            env = open("/proc/%s/environ" % pid, "rb").read().split(b"\0")
        except OSError:
            continue
        if cmd and cmd[0] == exe and b"OMPI_COMM_WORLD_RANK=%d" % rank in env:
            return int(pid)
    return None


def cleanup(out):
    for r in (0, 1):
        pid = rank_pid(out, r)
        if pid:
            for sig in (signal.SIGCONT, signal.SIGKILL):
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass


def label(how, nccl):
    return how + (" (emulated NCCL)" if nccl else "")


def case(args, out, data, how, timeout_s, nccl=False):
    log = os.path.join(args.work, how + ("-nccl" if nccl else "") + ".jsonl")
    cmd = MPIRUN + ["-np", "2", "--oversubscribe", "--bind-to", "none",
                    os.path.join(out, "train"), "--data", data, "--steps",
                    "1000000", "--log-jsonl", log, "--collective-timeout",
                    str(timeout_s), "--quiet"] + (["--comm", "nccl"] if nccl else [])
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    if nccl:
        env["ZEROC_RT_CUDA_EMU_GPUS"] = "2"  # a GPU per rank: NCCL
        env.pop("CUDA_VISIBLE_DEVICES", None)  # the emulation would read it
    p = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    try:
        deadline = time.time() + 60
        while time.time() < deadline and not (
                os.path.exists(log) and os.path.getsize(log) > 3000):
            time.sleep(0.05)
        time.sleep(0.5)  # a few watchdog heartbeats
        pid = rank_pid(out, 1)
        if pid is None:
            p.kill()
            return "rank 1 was not found running: %s" % p.communicate()[0][-800:]
        t0 = time.time()
        os.kill(pid, signal.SIGKILL if how == "kill" else signal.SIGSTOP)
        try:
            output, _ = p.communicate(timeout=timeout_s + 30)
        except subprocess.TimeoutExpired:
            return "the job still runs %d s after rank 1 was %s" % (
                timeout_s + 30, "killed" if how == "kill" else "stopped")
        took = time.time() - t0
    finally:
        cleanup(out)
        if p.poll() is None:
            p.kill()
            p.wait()
    if p.returncode == 0:
        return "the job exited 0"
    if how == "kill":
        want = "process rank 1 with PID"
    else:
        want = "stopped responding"
    if want not in output or (how == "stop" and "past --collective-timeout" not in output):
        return "no line with %r: %s" % (want, output[-600:])
    line = next(l for l in output.splitlines() if want in l)
    print("%s: the job ended %.1f s after rank 1 was %s (exit %d): %s" % (
        label(how, nccl), took, "killed" if how == "kill" else "stopped", p.returncode,
        line.strip()))
    bound = 15 if how == "kill" else timeout_s + 15
    if took > bound:
        return "took %.1f s, more than %d" % (took, bound)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zeroc", required=True)
    ap.add_argument("--models-dir", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--timeout", type=int, default=3)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    model = os.path.join(a.models_dir, "gpt2_nodropout.onnx")
    data, out = os.path.join(a.work, "data"), os.path.join(a.work, "out")
    subprocess.run(["/usr/bin/python3", REFERENCE, model, "--make-data", data,
                    "--samples", "64", "--seed", "0", "-q"], check=True)
    subprocess.run([a.zeroc, "compile", model, "-o", out, "--stage", "2",
                    "--world-size", "2"], check=True, capture_output=True)
    # The CUDA program over the emulated NCCL: rank 0 waits in a drain of
    # the communication stream's held collectives (streams_emu.cc).
    out_nccl = out + "-cuda-emu"
    subprocess.run([a.zeroc, "compile", model, "-o", out_nccl, "--stage", "2",
                    "--world-size", "2", "--target", "cuda-emu"], check=True,
                   capture_output=True)
    failed = 0
    cases = [(out, "kill", False), (out, "stop", False), (out_nccl, "stop", True)]
    for program, how, nccl in cases:
        problem = case(a, program, data, how, a.timeout, nccl)
        if problem:
            failed += 1
            print("FAIL %s: %s" % (label(how, nccl), problem))
    print("rank failures: %d passed, %d failed" % (len(cases) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
