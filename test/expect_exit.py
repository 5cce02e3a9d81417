#!/usr/bin/env python3
"""Runs a command and checks its exact exit code (lit's `not` only checks
non-zero). Usage: expect_exit.py CODE [--no-stdout] [--one-line-stderr] -- CMD...

Forwards the command's stderr to stdout so FileCheck can read it."""
import subprocess
import sys


def main():
    args = sys.argv[1:]
    code = int(args.pop(0))
    no_stdout = one_line = False
    while args and args[0] != "--":
        flag = args.pop(0)
        if flag == "--no-stdout":
            no_stdout = True
        elif flag == "--one-line-stderr":
            one_line = True
        else:
            sys.exit("expect_exit: unknown flag " + flag)
    cmd = args[1:]
    proc = subprocess.run(cmd, capture_output=True, timeout=120)
    sys.stdout.write(proc.stderr.decode(errors="replace"))
    if proc.returncode != code:
        sys.exit("expect_exit: exit code %d, expected %d" % (proc.returncode, code))
    if no_stdout and proc.stdout:
        sys.exit("expect_exit: the command printed %d bytes to stdout"
                 % len(proc.stdout))
    lines = proc.stderr.decode(errors="replace").splitlines()
    if one_line and len(lines) != 1:
        sys.exit("expect_exit: stderr has %d lines, expected one" % len(lines))


if __name__ == "__main__":
    main()
