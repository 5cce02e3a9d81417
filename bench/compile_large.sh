#!/usr/bin/env bash
# Compile time and peak memory of zeroc on a GPT-2-XL-shaped export (1.56 B
# parameters, 6.2 GB of external data; bench/gen_large_gpt.py), the figure of
# docs/Import.md "Weights of real models". Needs ~13 GB of disk in WORK.
#   bench/compile_large.sh [BUILD] [WORK]     (defaults: build, /tmp/zeroc-large)
set -euo pipefail
BUILD=${1:-build}
WORK=${2:-/tmp/zeroc-large}
mkdir -p "$WORK"
[ -f "$WORK/model/model.onnx" ] || /usr/bin/python3 bench/gen_large_gpt.py "$WORK/model"
rm -rf "$WORK/out"
/usr/bin/time -f "compile: %e s wall, %M KB peak RSS" \
  "$BUILD/bin/zeroc" compile "$WORK/model/model.onnx" -o "$WORK/out" --stage 3 --world-size 2
ls -l "$WORK/out/model.bin"
